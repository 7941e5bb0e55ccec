"""torch.optim.Adadelta: steps scaled by the ratio of running root-mean-squares of past
updates and of gradients, on the per-parameter and multi-tensor paths (complex parameters
through real views, as torch's ``view_as_real``)."""

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
    group_tensors_by_device_and_dtype,
    pick_path,
    run_one_pass,
    step_tensor,
    steps_to_tensors,
    to_scalar,
)
from .rmsprop import check_state_steps

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    """torch.optim.Adadelta."""

    def __init__(self, params: Any, lr: float | Tensor = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
        steps_to_tensors(self, "capturable")

    def _init_group(self, group: dict[str, Any], params: list[Tensor], grads: list[Tensor],
                    square_avgs: list[Tensor], acc_deltas: list[Tensor],
                    state_steps: list[Tensor]) -> bool:
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params.append(p)
            if p.grad.is_sparse:
                raise RuntimeError("Adadelta does not support sparse gradients")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = step_tensor(p, 0.0, group["capturable"])
                state["square_avg"] = core.zeros_like(p)
                state["acc_delta"] = core.zeros_like(p)
            square_avgs.append(state["square_avg"])
            acc_deltas.append(state["acc_delta"])
            state_steps.append(state["step"])
        return has_complex

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            square_avgs: list[Tensor] = []
            acc_deltas: list[Tensor] = []
            state_steps: list[Tensor] = []
            has_complex = self._init_group(group, params, grads, square_avgs, acc_deltas,
                                           state_steps)
            adadelta(params, grads, square_avgs, acc_deltas, state_steps, lr=group["lr"],
                     rho=group["rho"], eps=group["eps"], weight_decay=group["weight_decay"],
                     foreach=group["foreach"], maximize=group["maximize"],
                     differentiable=group["differentiable"], capturable=group["capturable"],
                     has_complex=has_complex)
        return loss


def adadelta(params: list[Tensor], grads: list[Tensor], square_avgs: list[Tensor],
             acc_deltas: list[Tensor], state_steps: list[Tensor], capturable: bool = False,
             foreach: bool | None = None, differentiable: bool = False,
             has_complex: bool = False, *, lr: float | Tensor, rho: float, eps: float,
             weight_decay: float, maximize: bool) -> None:
    """torch.optim.adadelta.adadelta: the Adadelta update of the lists."""
    check_state_steps(state_steps)
    func = pick_path(foreach, params, differentiable, single=_single_tensor_adadelta,
                     multi=_multi_tensor_adadelta, one_pass=_one_pass_adadelta,
                     capturable=capturable, has_complex=has_complex)
    func(params, grads, square_avgs, acc_deltas, state_steps, lr=lr, rho=rho, eps=eps,
         weight_decay=weight_decay, maximize=maximize, differentiable=differentiable,
         capturable=capturable, has_complex=has_complex)


def _one_pass_adadelta(params: list[Tensor], grads: list[Tensor], square_avgs: list[Tensor],
                       acc_deltas: list[Tensor], state_steps: list[Tensor], *, lr: Any,
                       rho: float, eps: float, weight_decay: float, maximize: bool,
                       **_: Any) -> None:
    if not params:
        return
    core._foreach_add_(state_steps, 1)
    run_one_pass(core._fused_adadelta_, [params, grads, square_avgs, acc_deltas], [],
                 lr=float(lr), rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)


def _single_tensor_adadelta(params: list[Tensor], grads: list[Tensor],
                            square_avgs: list[Tensor], acc_deltas: list[Tensor],
                            state_steps: list[Tensor], *, lr: Any, rho: float, eps: float,
                            weight_decay: float, maximize: bool, differentiable: bool,
                            capturable: bool, has_complex: bool) -> None:
    if capturable:
        check_capturable(params, state_steps, supports_xla=False)
    lr = to_scalar(lr)
    for param, grad, square_avg, acc_delta, step in zip(params, grads, square_avgs,
                                                        acc_deltas, state_steps):
        step += 1
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if param.is_complex():
            param, grad = as_real(param), as_real(grad)
            square_avg, acc_delta = as_real(square_avg), as_real(acc_delta)
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        if differentiable:
            delta = delta.clone()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        param.add_(delta, alpha=-lr)


def _multi_tensor_adadelta(params: list[Tensor], grads: list[Tensor],
                           square_avgs: list[Tensor], acc_deltas: list[Tensor],
                           state_steps: list[Tensor], *, lr: Any, rho: float, eps: float,
                           weight_decay: float, maximize: bool, differentiable: bool,
                           capturable: bool, has_complex: bool) -> None:
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    if capturable:
        check_capturable(params, state_steps, supports_xla=False)
    if not params:
        return
    lr = to_scalar(lr)
    groups = group_tensors_by_device_and_dtype(
        [params, grads, square_avgs, acc_deltas, state_steps])
    for (device_params, device_grads, device_square_avgs, device_acc_deltas,
         device_steps), _ in groups.values():
        if has_complex:
            as_real_lists(device_params, device_grads, device_square_avgs, device_acc_deltas)
        core._foreach_add_(device_steps, 1)
        if maximize:
            device_grads = core._foreach_neg(device_grads)
        if weight_decay != 0:
            if maximize:
                core._foreach_add_(device_grads, device_params, alpha=weight_decay)
            else:
                device_grads = core._foreach_add(device_grads, device_params,
                                                 alpha=weight_decay)
        core._foreach_mul_(device_square_avgs, rho)
        core._foreach_addcmul_(device_square_avgs, device_grads, device_grads, value=1 - rho)
        std = core._foreach_add(device_square_avgs, eps)
        core._foreach_sqrt_(std)
        deltas = core._foreach_add(device_acc_deltas, eps)
        core._foreach_sqrt_(deltas)
        core._foreach_div_(deltas, std)
        core._foreach_mul_(deltas, device_grads)
        core._foreach_mul_(device_acc_deltas, rho)
        core._foreach_addcmul_(device_acc_deltas, deltas, deltas, value=1 - rho)
        if capturable and isinstance(lr, Tensor):
            core._foreach_mul_(deltas, -lr)
            core._foreach_add_(device_params, deltas)
        else:
            core._foreach_add_(device_params, deltas, alpha=-lr)
