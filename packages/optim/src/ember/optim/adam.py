"""torch.optim.Adam: adaptive moment estimation with AMSGrad, L2 or decoupled weight decay,
maximization, tensor hyperparameters and capturable steps, on the per-parameter,
multi-tensor and fused paths. Also the helpers the Adam family shares (step counters,
option checks)."""

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
    check_fused_device_dtype,
    default_to_fused_or_foreach,
    get_value,
    group_tensors_by_device_and_dtype,
    step_tensor,
    to_scalar,
)

__all__ = ["Adam", "adam"]

def check_betas(betas: Any) -> None:
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def check_common(lr: Any, eps: Any, betas: Any, weight_decay: Any) -> None:
    """torch's checks of the options every Adam-like optimizer has, in its order."""
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    check_betas(betas)
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    """torch.optim.Adam."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-3,
                 betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and "
                                 "foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        check_common(lr, eps, betas, weight_decay)
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, beta in enumerate(betas):
            if isinstance(beta, Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for "
                                     "capturable=False and foreach=True")
                if beta.numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = (to_scalar(betas[0]), to_scalar(betas[1]))
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable,
                    "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            self._step_supports_amp_scaling = True
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            fused = group.setdefault("fused", None)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = step_tensor(p, float(p_state["step"]),
                                                  group["capturable"] or bool(fused), fused)

    def _init_group(self, group: dict[str, Any], params: list[Tensor], grads: list[Tensor],
                    exp_avgs: list[Tensor], exp_avg_sqs: list[Tensor],
                    max_exp_avg_sqs: list[Tensor], state_steps: list[Tensor]) -> bool:
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params.append(p)
            if p.grad.is_sparse:
                raise RuntimeError("Adam does not support sparse gradients, please consider "
                                   "SparseAdam instead")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                if group["fused"]:
                    check_fused_device_dtype(p)
                on_device = bool(group["capturable"] or group["fused"])
                state["step"] = step_tensor(p, 0.0, on_device, group["fused"])
                state["exp_avg"] = core.zeros_like(p)
                state["exp_avg_sq"] = core.zeros_like(p)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = core.zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            if group["amsgrad"]:
                max_exp_avg_sqs.append(state["max_exp_avg_sq"])
            if group["differentiable"] and state["step"].requires_grad:
                raise RuntimeError("`requires_grad` is not supported for `step` in "
                                   "differentiable mode")
            if group["foreach"] and isinstance(group["lr"], Tensor) and \
                    not group["capturable"]:
                raise RuntimeError("lr as a Tensor is not supported for capturable=False and "
                                   "foreach=True")
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
            max_exp_avg_sqs: list[Tensor] = []
            state_steps: list[Tensor] = []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params, grads, exp_avgs, exp_avg_sqs,
                                           max_exp_avg_sqs, state_steps)
            adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                 amsgrad=group["amsgrad"], has_complex=has_complex, beta1=beta1, beta2=beta2,
                 lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
                 maximize=group["maximize"], foreach=group["foreach"],
                 capturable=group["capturable"], differentiable=group["differentiable"],
                 fused=group["fused"], grad_scale=getattr(self, "grad_scale", None),
                 found_inf=getattr(self, "found_inf", None),
                 decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def adam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
         exp_avg_sqs: list[Tensor], max_exp_avg_sqs: list[Tensor], state_steps: list[Tensor],
         foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
         fused: bool | None = None, grad_scale: Tensor | None = None,
         found_inf: Tensor | None = None, has_complex: bool = False,
         decoupled_weight_decay: bool = False, *, amsgrad: bool, beta1: float | Tensor,
         beta2: float | Tensor, lr: float | Tensor, weight_decay: float, eps: float,
         maximize: bool) -> None:
    """torch.optim.adam.adam: the Adam update of the lists, on the path asked for (by
    default the fastest: fused on the CPU)."""
    if fused is None and foreach is None:
        fused, foreach = default_to_fused_or_foreach(params, differentiable,
                                                     use_fused=True)
        if fused and capturable:  # keep capturable's checks and counters on the device
            fused, foreach = False, True
        if foreach and not capturable and any(isinstance(x, Tensor)
                                              for x in (lr, beta1, beta2)):
            foreach = False
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    if fused:
        func = _fused_adam
    elif foreach:
        func = _multi_tensor_adam
    else:
        func = _single_tensor_adam
    func(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, grad_scale,
         found_inf, amsgrad=amsgrad, has_complex=has_complex, beta1=beta1, beta2=beta2, lr=lr,
         weight_decay=weight_decay, eps=eps, maximize=maximize, capturable=capturable,
         differentiable=differentiable, decoupled_weight_decay=decoupled_weight_decay)


def _single_tensor_adam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                        exp_avg_sqs: list[Tensor], max_exp_avg_sqs: list[Tensor],
                        state_steps: list[Tensor], grad_scale: Tensor | None,
                        found_inf: Tensor | None, *, amsgrad: bool, has_complex: bool,
                        beta1: Any, beta2: Any, lr: Any, weight_decay: Any, eps: float,
                        maximize: bool, capturable: bool, differentiable: bool,
                        decoupled_weight_decay: bool) -> None:
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    lr, beta1, beta2 = to_scalar(lr), to_scalar(beta1), to_scalar(beta2)
    beta1s: dict[Any, Any] = {}
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        if capturable:
            check_capturable([param], [step_t])
        step_t += 1
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            elif differentiable and isinstance(weight_decay, Tensor) and \
                    weight_decay.requires_grad:
                grad = grad.addcmul_(param.clone(), weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        max_sq = max_exp_avg_sqs[i] if amsgrad else None
        if param.is_complex():
            grad, exp_avg, exp_avg_sq, param = (as_real(grad), as_real(exp_avg),
                                                as_real(exp_avg_sq), as_real(param))
            max_sq = as_real(max_sq) if max_sq is not None else None
        device_beta1 = beta1
        if isinstance(beta1, Tensor):
            key = (param.device, param.dtype)
            if key not in beta1s:
                beta1s[key] = beta1.to(device=param.device, dtype=param.dtype)
            device_beta1 = beta1s[key]
        exp_avg.lerp_(grad, 1 - device_beta1)
        if differentiable and isinstance(beta2, Tensor) and beta2.requires_grad:
            exp_avg_sq.lerp_(core.square(grad), weight=1 - beta2)
        else:
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        if capturable or differentiable:
            _capturable_update(param, exp_avg, exp_avg_sq, max_sq, step_t, beta1=beta1,
                               beta2=beta2, lr=lr, eps=eps, differentiable=differentiable)
        else:
            step = get_value(step_t)
            step_size = lr / (1 - beta1 ** step)
            bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
            if max_sq is not None:
                core.maximum(max_sq, exp_avg_sq, out=max_sq)
                denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            else:
                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            param.addcdiv_(exp_avg, denom, value=-step_size)


def _capturable_update(param: Tensor, exp_avg: Tensor, exp_avg_sq: Tensor,
                       max_sq: Tensor | None, step: Tensor, *, beta1: Any, beta2: Any,
                       lr: Any, eps: float, differentiable: bool) -> None:
    """The per-parameter step with the step count kept a tensor (no host read)."""
    def power(beta: Any) -> Any:
        if differentiable and isinstance(beta, Tensor) and beta.requires_grad:
            return beta ** step.clone()
        return beta ** step

    step_size_neg = (lr / (1 - power(beta1))).neg()
    bias_correction2_sqrt = (1 - power(beta2)).sqrt()
    if max_sq is not None:
        source = max_sq.clone() if differentiable else max_sq
        max_sq.copy_(core.maximum(source, exp_avg_sq))
        sq = max_sq
    else:
        sq = exp_avg_sq
    denom = (sq.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(eps / step_size_neg)
    param.addcdiv_(exp_avg.clone() if differentiable else exp_avg, denom)


def _check_tensor_options(lr: Any, beta1: Any, beta2: Any, capturable: bool) -> None:
    if isinstance(lr, Tensor):
        if not capturable:
            raise RuntimeError("lr as a Tensor is not supported for capturable=False and "
                               "foreach=True")
        if lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
    for name, beta in (("beta1", beta1), ("beta2", beta2)):
        if isinstance(beta, Tensor):
            if not capturable:
                raise ValueError(f"{name} as a Tensor is not supported for capturable=False "
                                 "and foreach=True")
            if beta.numel() != 1:
                raise ValueError(f"Tensor {name} must be 1-element")


def _multi_tensor_adam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                       exp_avg_sqs: list[Tensor], max_exp_avg_sqs: list[Tensor],
                       state_steps: list[Tensor], grad_scale: Tensor | None,
                       found_inf: Tensor | None, *, amsgrad: bool, has_complex: bool,
                       beta1: Any, beta2: Any, lr: Any, weight_decay: Any, eps: float,
                       maximize: bool, capturable: bool, differentiable: bool,
                       decoupled_weight_decay: bool) -> None:
    if not params:
        return
    _check_tensor_options(lr, beta1, beta2, capturable)
    if capturable:
        check_capturable(params, state_steps, supports_xla=False)
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    lr, beta1, beta2 = to_scalar(lr), to_scalar(beta1), to_scalar(beta2)
    groups = group_tensors_by_device_and_dtype(
        [params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps])
    beta1s: dict[Any, Any] = {}
    for (d_params, d_grads, d_exp_avgs, d_exp_avg_sqs, d_max, d_steps), _ in groups.values():
        device = d_params[0].device
        d_beta1 = beta1
        if isinstance(beta1, Tensor) and beta1.device.type != "cpu":
            d_beta1 = beta1s.setdefault(device, beta1.to(device=device))
        if has_complex:
            as_real_lists(d_params, d_grads, d_exp_avgs, d_exp_avg_sqs,
                          *([d_max] if amsgrad else []))
        if maximize:
            d_grads = core._foreach_neg(d_grads)
        core._foreach_add_(d_steps, 1)
        if weight_decay != 0:
            if decoupled_weight_decay:
                core._foreach_mul_(d_params, 1 - lr * weight_decay)
            elif maximize:
                core._foreach_add_(d_grads, d_params, alpha=weight_decay)
            else:
                d_grads = core._foreach_add(d_grads, d_params, alpha=weight_decay)
        core._foreach_lerp_(d_exp_avgs, d_grads, 1 - d_beta1)
        core._foreach_mul_(d_exp_avg_sqs, beta2)
        if isinstance(beta2, Tensor):
            core._foreach_addcmul_(d_exp_avg_sqs, core._foreach_mul(d_grads, 1 - beta2),
                                   d_grads, 1.0)
        else:
            core._foreach_addcmul_(d_exp_avg_sqs, d_grads, d_grads, 1 - beta2)
        del d_grads
        if amsgrad:
            core._foreach_maximum_(d_max, d_exp_avg_sqs)
            sq_sqrt = core._foreach_sqrt(d_max)
        else:
            sq_sqrt = core._foreach_sqrt(d_exp_avg_sqs)
        if capturable:
            step_size = core._foreach_pow(beta1, d_steps)
            bias_correction2 = core._foreach_pow(beta2, d_steps)
            core._foreach_sub_(step_size, 1)
            core._foreach_sub_(bias_correction2, 1)
            core._foreach_neg_(bias_correction2)
            core._foreach_div_(step_size, lr)
            core._foreach_reciprocal_(step_size)  # -lr / (1 - beta1**t)
            core._foreach_sqrt_(bias_correction2)
            core._foreach_div_(sq_sqrt, bias_correction2)
            core._foreach_add_(sq_sqrt, eps)
            core._foreach_div_(sq_sqrt, step_size)
            core._foreach_addcdiv_(d_params, d_exp_avgs, sq_sqrt)
        else:
            steps = [get_value(s) for s in d_steps]
            sizes = [(lr / (1 - beta1 ** s)) * -1 for s in steps]
            core._foreach_div_(sq_sqrt, [(1 - beta2 ** s) ** 0.5 for s in steps])
            core._foreach_add_(sq_sqrt, eps)
            core._foreach_addcdiv_(d_params, d_exp_avgs, sq_sqrt, sizes)


def _fused_adam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                exp_avg_sqs: list[Tensor], max_exp_avg_sqs: list[Tensor],
                state_steps: list[Tensor], grad_scale: Tensor | None,
                found_inf: Tensor | None, *, amsgrad: bool, has_complex: bool, beta1: Any,
                beta2: Any, lr: Any, weight_decay: Any, eps: float, maximize: bool,
                capturable: bool, differentiable: bool, decoupled_weight_decay: bool) -> None:
    if not params:
        return
    if differentiable:
        raise RuntimeError("Adam with fused=True does not support differentiable=True")
    beta1, beta2 = to_scalar(beta1), to_scalar(beta2)
    scales: dict[Any, Tensor] = {}
    infs: dict[Any, Tensor] = {}
    lrs: dict[Any, Tensor] = {}
    groups = group_tensors_by_device_and_dtype(
        [params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps])
    func = core._fused_adamw_ if decoupled_weight_decay else core._fused_adam_
    for (device, _), ((d_params, d_grads, d_exp_avgs, d_exp_avg_sqs, d_max, d_steps),
                      _) in groups.items():
        d_scale = None if grad_scale is None else \
            scales.setdefault(device, grad_scale.to(device))
        d_inf = None if found_inf is None else infs.setdefault(device, found_inf.to(device))
        if isinstance(lr, Tensor) and lr.device.type != "cpu" and lr.device != device:
            lr = lrs.setdefault(device, lr.to(device=device))
        core._foreach_add_(d_steps, 1)
        func(d_params, d_grads, d_exp_avgs, d_exp_avg_sqs, d_max if amsgrad else [], d_steps,
             amsgrad=amsgrad, lr=lr, beta1=beta1, beta2=beta2, weight_decay=weight_decay,
             eps=eps, maximize=maximize, grad_scale=d_scale, found_inf=d_inf)
        if d_inf is not None:
            core._foreach_sub_(d_steps, [d_inf] * len(d_steps))
