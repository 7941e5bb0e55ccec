"""torch.optim.RAdam: Adam with the variance of its adaptive learning rate rectified (plain
momentum steps while too few steps are in), L2 or decoupled weight decay, on the
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

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    """torch.optim.RAdam."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        check_common(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("capturable", False)
        steps_to_tensors(self, "capturable")

    def _init_group(self, group: dict[str, Any], params: list[Tensor], grads: list[Tensor],
                    exp_avgs: list[Tensor], exp_avg_sqs: list[Tensor],
                    state_steps: list[Tensor]) -> bool:
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params.append(p)
            if p.grad.is_sparse:
                raise RuntimeError("RAdam does not support sparse gradients")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = step_tensor(p, 0.0, group["capturable"])
                state["exp_avg"] = core.zeros_like(p)
                state["exp_avg_sq"] = core.zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
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
            exp_avg_sqs: list[Tensor] = []
            state_steps: list[Tensor] = []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params, grads, exp_avgs, exp_avg_sqs,
                                           state_steps)
            radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, beta1=beta1, beta2=beta2,
                  lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
                  maximize=group["maximize"], foreach=group["foreach"],
                  capturable=group["capturable"], differentiable=group["differentiable"],
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  has_complex=has_complex)
        return loss


def radam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
          exp_avg_sqs: list[Tensor], state_steps: list[Tensor],
          decoupled_weight_decay: bool = False, foreach: bool | None = None,
          differentiable: bool = False, capturable: bool = False, has_complex: bool = False,
          maximize: bool = False, *, beta1: float, beta2: float, lr: float | Tensor,
          weight_decay: float, eps: float) -> None:
    """torch.optim.radam.radam: the RAdam update of the lists, on the path asked for (by
    default the multi-tensor one)."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    func = pick_path(foreach, params, differentiable, single=_single_tensor_radam,
                     multi=_multi_tensor_radam, one_pass=_one_pass_radam,
                     capturable=capturable, has_complex=has_complex)
    func(params, grads, exp_avgs, exp_avg_sqs, state_steps, beta1=beta1, beta2=beta2, lr=lr,
         weight_decay=weight_decay, eps=eps, maximize=maximize,
         decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable,
         capturable=capturable, has_complex=has_complex)


def _one_pass_radam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                    exp_avg_sqs: list[Tensor], state_steps: list[Tensor], *, beta1: float,
                    beta2: float, lr: Any, weight_decay: float, eps: float,
                    decoupled_weight_decay: bool, maximize: bool, **_: Any) -> None:
    if not params:
        return
    core._foreach_add_(state_steps, 1)
    run_one_pass(core._fused_radam_, [params, grads, exp_avgs, exp_avg_sqs], [state_steps],
                 lr=float(lr), beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
                 decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)


def _single_tensor_radam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                         exp_avg_sqs: list[Tensor], state_steps: list[Tensor], *,
                         beta1: float, beta2: float, lr: Any, weight_decay: float,
                         eps: float, decoupled_weight_decay: bool, differentiable: bool,
                         maximize: bool, capturable: bool, has_complex: bool) -> None:
    lr = to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        if capturable:
            check_capturable([param], [step_t])
        if param.is_complex():
            param, grad, exp_avg, exp_avg_sq = (as_real(param), as_real(grad),
                                                as_real(exp_avg), as_real(exp_avg_sq))
        step_t += 1
        step = step_t if capturable else get_value(step_t)
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if capturable:
            update = core.where(rho_t > 5.0, _rect(rho_t, rho_inf) * _adaptive_lr(
                exp_avg_sq, bias_correction2, eps, differentiable), 1.0)
            param.add_(bias_corrected_exp_avg * lr * update, alpha=-1.0)
        elif rho_t > 5.0:
            param.add_(bias_corrected_exp_avg * lr * _adaptive_lr(
                exp_avg_sq, bias_correction2, eps, differentiable) * _rect(rho_t, rho_inf),
                alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)


def _rect(rho_t: Any, rho_inf: float) -> Any:
    """The rectification of the adaptive step at ``rho_t`` (real where ``rho_t > 4``)."""
    return ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5


def _adaptive_lr(exp_avg_sq: Tensor, bias_correction2: Any, eps: float,
                 differentiable: bool) -> Tensor:
    sq_sqrt = exp_avg_sq.sqrt()
    sq_sqrt = sq_sqrt.add(eps) if differentiable else sq_sqrt.add_(eps)
    return (bias_correction2 ** 0.5) / sq_sqrt


def _multi_tensor_radam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                        exp_avg_sqs: list[Tensor], state_steps: list[Tensor], *,
                        beta1: float, beta2: float, lr: Any, weight_decay: float,
                        eps: float, decoupled_weight_decay: bool, differentiable: bool,
                        maximize: bool, capturable: bool, has_complex: bool) -> None:
    if not params:
        return
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    if capturable:
        check_capturable(params, state_steps, supports_xla=False)
    lr = to_scalar(lr)
    groups = group_tensors_by_device_and_dtype([params, grads, exp_avgs, exp_avg_sqs,
                                                state_steps])
    for (g_params, g_grads, g_exp_avgs, g_exp_avg_sqs, g_steps), _ in groups.values():
        core._foreach_add_(g_steps, 1)
        if has_complex:
            as_real_lists(g_params, g_grads, g_exp_avgs, g_exp_avg_sqs)
        if maximize:
            g_grads = core._foreach_neg(g_grads)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t_list: Any
        if capturable:
            rho_t_list = _foreach_rho_t(g_steps, beta2, rho_inf)
        else:
            rho_t_list = [rho_inf - 2 * get_value(s) * (beta2 ** get_value(s))
                          / (1 - beta2 ** get_value(s)) for s in g_steps]
        if weight_decay != 0:
            if decoupled_weight_decay:
                core._foreach_mul_(g_params, 1 - lr * weight_decay)
            elif maximize:
                core._foreach_add_(g_grads, g_params, alpha=weight_decay)
            else:
                g_grads = core._foreach_add(g_grads, g_params, alpha=weight_decay)
        core._foreach_lerp_(g_exp_avgs, g_grads, 1 - beta1)
        core._foreach_mul_(g_exp_avg_sqs, beta2)
        core._foreach_addcmul_(g_exp_avg_sqs, g_grads, g_grads, 1 - beta2)
        del g_grads
        if capturable:
            unrect_step_size, adaptive_size = _foreach_step_sizes(g_steps, rho_t_list, beta1,
                                                                  beta2, rho_inf, lr)
        else:
            unrect_step_size, adaptive_size = _step_sizes(g_steps, rho_t_list, beta1, beta2,
                                                          rho_inf, lr)
        buffer = core._foreach_sqrt(g_exp_avg_sqs)
        core._foreach_add_(buffer, eps)
        core._foreach_div_(buffer, adaptive_size)
        core._foreach_reciprocal_(buffer)
        core._foreach_add_(buffer, unrect_step_size)
        core._foreach_addcmul_(g_params, g_exp_avgs, buffer)


def _step_sizes(steps: list[Tensor], rho_ts: list[float], beta1: float, beta2: float,
                rho_inf: float, lr: Any) -> tuple[list[Any], list[Any]]:
    """Each tensor's step size while unrectified (``-lr / bc1``, else 0) and the factor of
    its adaptive step (``-sqrt(bc2) * lr * rect / bc1``), as numbers."""
    rects = [_rect(rho_t, rho_inf) if rho_t > 5 else 0 for rho_t in rho_ts]
    unrectified = [0 if rect > 0 else 1.0 for rect in rects]
    bias_correction1 = [1 - beta1 ** get_value(s) for s in steps]
    unrect = [(lr * u / bc) * -1 for u, bc in zip(unrectified, bias_correction1)]
    adaptive = [((1 - beta2 ** get_value(s)) ** 0.5) * (lr * rect / bc) * -1
                for s, rect, bc in zip(steps, rects, bias_correction1)]
    return unrect, adaptive


def _foreach_rho_t(steps: list[Tensor], beta2: float, rho_inf: float) -> list[Tensor]:
    """``rho_inf - 2 t beta2**t / (1 - beta2**t)`` of each step tensor."""
    bias_correction2 = core._foreach_pow(beta2, steps)
    core._foreach_neg_(bias_correction2)
    core._foreach_add_(bias_correction2, 1)
    rho_t = core._foreach_pow(beta2, steps)
    core._foreach_mul_(rho_t, steps)
    core._foreach_mul_(rho_t, 2)
    core._foreach_div_(rho_t, bias_correction2)
    core._foreach_neg_(rho_t)
    core._foreach_add_(rho_t, rho_inf)
    return rho_t


def _foreach_step_sizes(steps: list[Tensor], rho_ts: list[Tensor], beta1: float,
                        beta2: float, rho_inf: float, lr: Any
                        ) -> tuple[list[Tensor], list[Tensor]]:
    """``_step_sizes`` as tensors, the step counts never read on the host."""
    num = core._foreach_sub(rho_ts, 4)
    sub2 = core._foreach_sub(rho_ts, 2)
    core._foreach_mul_(num, sub2)
    core._foreach_mul_(num, rho_inf)
    denom = core._foreach_mul(rho_ts, (rho_inf - 4) * (rho_inf - 2))
    core._foreach_div_(num, denom)
    core._foreach_sqrt_(num)
    rects = [core.where(rho_t > 5.0, n, 0.0) for n, rho_t in zip(num, rho_ts)]
    unrect = [core.where(rect > 0, 0.0, 1.0) for rect in rects]
    core._foreach_mul_(unrect, lr)
    bias_correction1 = core._foreach_pow(beta1, steps)
    core._foreach_neg_(bias_correction1)
    core._foreach_add_(bias_correction1, 1)
    core._foreach_div_(unrect, bias_correction1)
    core._foreach_neg_(unrect)
    adaptive = core._foreach_pow(beta2, steps)
    core._foreach_neg_(adaptive)
    core._foreach_add_(adaptive, 1)
    core._foreach_sqrt_(adaptive)
    core._foreach_mul_(adaptive, lr)
    core._foreach_mul_(adaptive, rects)
    core._foreach_neg_(adaptive)
    core._foreach_div_(adaptive, bias_correction1)
    return unrect, adaptive
