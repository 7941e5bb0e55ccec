"""torch.optim.RMSprop: a moving average of squared gradients divides each step, optionally
centred (minus the squared mean gradient) and with momentum, on the per-parameter and
multi-tensor paths (complex parameters through real views, as torch's ``view_as_real``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember import core
from ember.core import Tensor

from .optimizer import Optimizer, use_grad_for_differentiable
from .paths import (
    as_real,
    as_real_lists,
    check_capturable,
    get_value,
    group_tensors_by_device_and_dtype,
    pick_path,
    run_one_pass,
    step_tensor,
    steps_to_tensors,
    to_scalar,
)

__all__ = ["RMSprop", "rmsprop"]


def check_state_steps(state_steps: list[Any]) -> None:
    """The functional APIs take the ``step`` counters as singleton tensors."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")


class RMSprop(Optimizer):
    """torch.optim.RMSprop."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
        steps_to_tensors(self, "capturable")

    def _init_group(self, group: dict[str, Any], params: list[Tensor], grads: list[Tensor],
                    square_avgs: list[Tensor], momentum_buffer_list: list[Tensor],
                    grad_avgs: list[Tensor], state_steps: list[Tensor]) -> bool:
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params.append(p)
            if p.grad.is_sparse:
                raise RuntimeError("RMSprop does not support sparse gradients")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = step_tensor(p, 0.0, group["capturable"])
                state["square_avg"] = core.zeros_like(p)
                if group["momentum"] > 0:
                    state["momentum_buffer"] = core.zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = core.zeros_like(p)
            square_avgs.append(state["square_avg"])
            state_steps.append(state["step"])
            if group["momentum"] > 0:
                momentum_buffer_list.append(state["momentum_buffer"])
            if group["centered"]:
                grad_avgs.append(state["grad_avg"])
        return has_complex

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            square_avgs: list[Tensor] = []
            grad_avgs: list[Tensor] = []
            momentum_buffer_list: list[Tensor] = []
            state_steps: list[Tensor] = []
            has_complex = self._init_group(group, params, grads, square_avgs,
                                           momentum_buffer_list, grad_avgs, state_steps)
            rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps,
                    lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                    weight_decay=group["weight_decay"], momentum=group["momentum"],
                    centered=group["centered"], foreach=group["foreach"],
                    maximize=group["maximize"], differentiable=group["differentiable"],
                    capturable=group["capturable"], has_complex=has_complex)
        return loss


def rmsprop(params: list[Tensor], grads: list[Tensor], square_avgs: list[Tensor],
            grad_avgs: list[Tensor], momentum_buffer_list: list[Tensor],
            state_steps: list[Tensor], foreach: bool | None = None, maximize: bool = False,
            differentiable: bool = False, capturable: bool = False,
            has_complex: bool = False, *, lr: float | Tensor, alpha: float, eps: float,
            weight_decay: float, momentum: float, centered: bool) -> None:
    """torch.optim.rmsprop.rmsprop: the RMSprop update of the lists."""
    check_state_steps(state_steps)
    func = pick_path(foreach, params, differentiable, single=_single_tensor_rmsprop,
                     multi=_multi_tensor_rmsprop, one_pass=_one_pass_rmsprop,
                     capturable=capturable, has_complex=has_complex)
    func(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, lr=lr,
         alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
         centered=centered, maximize=maximize, capturable=capturable,
         differentiable=differentiable, has_complex=has_complex)


def _one_pass_rmsprop(params: list[Tensor], grads: list[Tensor], square_avgs: list[Tensor],
                      grad_avgs: list[Tensor], momentum_buffer_list: list[Tensor],
                      state_steps: list[Tensor], *, lr: Any, alpha: float, eps: float,
                      weight_decay: float, momentum: float, centered: bool, maximize: bool,
                      **_: Any) -> None:
    if not params:
        return
    core._foreach_add_(state_steps, 1)
    run_one_pass(core._fused_rmsprop_, [params, grads, square_avgs,
                                        grad_avgs if centered else [],
                                        momentum_buffer_list if momentum > 0 else []], [],
                 lr=float(lr), alpha=alpha, eps=eps, weight_decay=weight_decay,
                 momentum=momentum, centered=centered, maximize=maximize)


def _single_tensor_rmsprop(params: list[Tensor], grads: list[Tensor],
                           square_avgs: list[Tensor], grad_avgs: list[Tensor],
                           momentum_buffer_list: list[Tensor], state_steps: list[Tensor], *,
                           lr: Any, alpha: float, eps: float, weight_decay: float,
                           momentum: float, centered: bool, maximize: bool,
                           differentiable: bool, capturable: bool, has_complex: bool) -> None:
    lr = to_scalar(lr)
    for i, param in enumerate(params):
        step = state_steps[i]
        if capturable:
            check_capturable([param], [step])
        grad = grads[i] if not maximize else -grads[i]
        square_avg = square_avgs[i]
        step += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        is_complex = param.is_complex()
        if is_complex:
            param, grad, square_avg = as_real(param), as_real(grad), as_real(square_avg)
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            grad_avg = as_real(grad_avgs[i]) if is_complex else grad_avgs[i]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add(eps) if differentiable else avg.add_(eps)
        if momentum > 0:
            buf = as_real(momentum_buffer_list[i]) if is_complex else momentum_buffer_list[i]
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)


def _multi_tensor_rmsprop(params: list[Tensor], grads: list[Tensor],
                          square_avgs: list[Tensor], grad_avgs: list[Tensor],
                          momentum_buffer_list: list[Tensor], state_steps: list[Tensor], *,
                          lr: Any, alpha: float, eps: float, weight_decay: float,
                          momentum: float, centered: bool, maximize: bool,
                          differentiable: bool, capturable: bool, has_complex: bool) -> None:
    if not params:
        return
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    if capturable:
        check_capturable(params, state_steps)
    lr = to_scalar(lr)
    groups = group_tensors_by_device_and_dtype(
        [params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps])
    for (device_params, device_grads, device_square_avgs, device_grad_avgs, device_bufs,
         device_steps), _ in groups.values():
        if has_complex:
            as_real_lists(device_params, device_grads, device_square_avgs,
                          *([device_bufs] if momentum > 0 else []),
                          *([device_grad_avgs] if centered else []))
        if maximize:
            device_grads = core._foreach_neg(device_grads)
        core._foreach_add_(device_steps, 1)
        if weight_decay != 0:
            if maximize:
                core._foreach_add_(device_grads, device_params, alpha=weight_decay)
            else:
                device_grads = core._foreach_add(device_grads, device_params,
                                                 alpha=weight_decay)
        core._foreach_mul_(device_square_avgs, alpha)
        core._foreach_addcmul_(device_square_avgs, device_grads, device_grads,
                               value=1 - alpha)
        if centered:
            core._foreach_lerp_(device_grad_avgs, device_grads, 1 - alpha)
            avg = core._foreach_addcmul(device_square_avgs, device_grad_avgs,
                                        device_grad_avgs, value=-1)
            core._foreach_sqrt_(avg)
        else:
            avg = core._foreach_sqrt(device_square_avgs)
        core._foreach_add_(avg, eps)
        tensor_lr = capturable and isinstance(lr, Tensor)
        if momentum > 0:
            core._foreach_mul_(device_bufs, momentum)
            core._foreach_addcdiv_(device_bufs, device_grads, avg)
            if tensor_lr:
                core._foreach_add_(device_params, core._foreach_mul(device_bufs, -lr))
            else:
                core._foreach_add_(device_params, device_bufs, alpha=-lr)
        elif tensor_lr:
            core._foreach_div_(avg, -lr)
            core._foreach_addcdiv_(device_params, device_grads, avg)
        else:
            core._foreach_addcdiv_(device_params, device_grads, avg, value=-get_value(lr))
