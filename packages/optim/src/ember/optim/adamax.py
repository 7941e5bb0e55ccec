"""torch.optim.Adamax: Adam with the infinity norm in place of the second moment, on the
per-parameter and multi-tensor paths."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember import core
from ember.core import Tensor

from .adam import check_common
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

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    """torch.optim.Adamax."""

    def __init__(self, params: Any, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        check_common(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
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
                    exp_avgs: list[Tensor], exp_infs: list[Tensor],
                    state_steps: list[Tensor]) -> bool:
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params.append(p)
            if p.grad.is_sparse:
                raise RuntimeError("Adamax does not support sparse gradients")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = step_tensor(p, 0.0, group["capturable"])
                state["exp_avg"] = core.zeros_like(p)
                state["exp_inf"] = core.zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_infs.append(state["exp_inf"])
            state_steps.append(state["step"])
        return has_complex

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            exp_avgs: list[Tensor] = []
            exp_infs: list[Tensor] = []
            state_steps: list[Tensor] = []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params, grads, exp_avgs, exp_infs,
                                           state_steps)
            adamax(params, grads, exp_avgs, exp_infs, state_steps, eps=group["eps"],
                   beta1=beta1, beta2=beta2, lr=group["lr"],
                   weight_decay=group["weight_decay"], foreach=group["foreach"],
                   maximize=group["maximize"], differentiable=group["differentiable"],
                   capturable=group["capturable"], has_complex=has_complex)
        return loss


def adamax(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
           exp_infs: list[Tensor], state_steps: list[Tensor], foreach: bool | None = None,
           maximize: bool = False, differentiable: bool = False, capturable: bool = False,
           has_complex: bool = False, *, eps: float, beta1: float, beta2: float,
           lr: float | Tensor, weight_decay: float) -> None:
    """torch.optim.adamax.adamax: the Adamax update of the lists, on the path asked for (by
    default the multi-tensor one)."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    func = pick_path(foreach, params, differentiable, single=_single_tensor_adamax,
                     multi=_multi_tensor_adamax, one_pass=_one_pass_adamax,
                     capturable=capturable, has_complex=has_complex)
    func(params, grads, exp_avgs, exp_infs, state_steps, eps=eps, beta1=beta1, beta2=beta2,
         lr=lr, weight_decay=weight_decay, maximize=maximize, differentiable=differentiable,
         capturable=capturable, has_complex=has_complex)


def _one_pass_adamax(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                     exp_infs: list[Tensor], state_steps: list[Tensor], *, eps: float,
                     beta1: float, beta2: float, lr: Any, weight_decay: float, maximize: bool,
                     **_: Any) -> None:
    if not params:
        return
    core._foreach_add_(state_steps, 1)
    run_one_pass(core._fused_adamax_, [params, grads, exp_avgs, exp_infs], [state_steps],
                 lr=float(lr), beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
                 maximize=maximize)


def _single_tensor_adamax(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                          exp_infs: list[Tensor], state_steps: list[Tensor], *, eps: float,
                          beta1: float, beta2: float, lr: Any, weight_decay: float,
                          maximize: bool, differentiable: bool, capturable: bool,
                          has_complex: bool) -> None:
    lr = to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_inf, step_t = exp_avgs[i], exp_infs[i], state_steps[i]
        if capturable:
            check_capturable([param], [step_t])
        step_t += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if param.is_complex():
            param, grad, exp_avg, exp_inf = (as_real(param), as_real(grad), as_real(exp_avg),
                                             as_real(exp_inf))
        exp_avg.lerp_(grad, 1 - beta1)
        if not differentiable:
            core.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
        else:
            norm_buf = core.cat([exp_inf.mul_(beta2).unsqueeze(0),
                                 grad.abs().add_(eps).unsqueeze_(0)], 0)
            exp_inf.copy_(core.amax(norm_buf, 0, keepdim=False))
        if capturable:
            neg_bias_correction = beta1 ** step_t - 1
            neg_bias_correction.div_(lr)
            param.addcdiv_(exp_avg, exp_inf * neg_bias_correction)
        else:
            clr = lr / (1 - beta1 ** get_value(step_t))
            param.addcdiv_(exp_avg, exp_inf, value=-clr)


def _multi_tensor_adamax(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                         exp_infs: list[Tensor], state_steps: list[Tensor], *, eps: float,
                         beta1: float, beta2: float, lr: Any, weight_decay: float,
                         maximize: bool, differentiable: bool, capturable: bool,
                         has_complex: bool) -> None:
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    if not params:
        return
    if capturable:
        check_capturable(params, state_steps, supports_xla=False)
    lr = to_scalar(lr)
    groups = group_tensors_by_device_and_dtype([params, grads, exp_avgs, exp_infs,
                                                state_steps])
    for (g_params, g_grads, g_exp_avgs, g_exp_infs, g_steps), _ in groups.values():
        if has_complex:
            as_real_lists(g_params, g_grads, g_exp_avgs, g_exp_infs)
        if maximize:
            g_grads = core._foreach_neg(g_grads)
        core._foreach_add_(g_steps, 1)
        if weight_decay != 0:
            if maximize:
                core._foreach_add_(g_grads, g_params, alpha=weight_decay)
            else:
                g_grads = core._foreach_add(g_grads, g_params, alpha=weight_decay)
        core._foreach_lerp_(g_exp_avgs, g_grads, 1 - beta1)
        core._foreach_mul_(g_exp_infs, beta2)
        if not maximize and weight_decay == 0:  # the gradients are still the caller's
            g_grads = core._foreach_abs(g_grads)
        else:
            core._foreach_abs_(g_grads)
        core._foreach_add_(g_grads, eps)
        core._foreach_maximum_(g_exp_infs, g_grads)
        if capturable:
            bias_corrections = core._foreach_pow(beta1, g_steps)
            core._foreach_sub_(bias_corrections, 1)
            core._foreach_div_(bias_corrections, lr)
            denom = core._foreach_mul(g_exp_infs, bias_corrections)
            core._foreach_addcdiv_(g_params, g_exp_avgs, denom)
        else:
            sizes = [(get_value(lr) / (1 - beta1 ** get_value(s))) * -1 for s in g_steps]
            core._foreach_addcdiv_(g_params, g_exp_avgs, g_exp_infs, sizes)
