"""torch.optim.Adagrad: each step divided by the root of the summed squared gradients, with
a decaying learning rate, on the per-parameter, multi-tensor and fused paths (complex
parameters through real views, as torch's ``view_as_real``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember import core
from ember.core import Tensor

from .optimizer import Optimizer, scalar_dtype, use_grad_for_differentiable
from .paths import (
    as_real,
    as_real_lists,
    check_fused_device_dtype,
    default_to_fused_or_foreach,
    get_value,
    group_tensors_by_device_and_dtype,
    step_tensor,
    to_scalar,
)
from .rmsprop import check_state_steps

__all__ = ["Adagrad", "adagrad"]


def _initial_sum(p: Tensor, value: float) -> float | complex:
    """The sums' starting value: ``value`` in both components of a complex parameter."""
    return complex(value, value) if p.is_complex() else value


class Adagrad(Optimizer):
    """torch.optim.Adagrad."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
            self._need_device_dtype_check_for_fused = True
            self._step_supports_amp_scaling = True
        # torch fills every group's sums from the constructor's value, not the group's
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = step_tensor(p, 0.0, bool(group["fused"]), group["fused"])
                state["sum"] = core.full_like(p, _initial_sum(p, initial_accumulator_value))

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        fused = None
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            fused = group.setdefault("fused", None)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = core.tensor(
                        float(p_state["step"]), dtype=scalar_dtype(is_fused=group["fused"]),
                        device=p.device if group["fused"] else None)
        values = list(self.state.values())
        if values and not isinstance(values[0]["step"], Tensor):
            for s in values:
                s["step"] = core.tensor(float(s["step"]), dtype=scalar_dtype(is_fused=fused))

    def share_memory(self) -> None:
        """Put every sum in shared memory (for multiprocess training)."""
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    def _init_group(self, group: dict[str, Any], params: list[Tensor], grads: list[Tensor],
                    state_sums: list[Tensor], state_steps: list[Tensor]) -> tuple[bool, bool]:
        has_sparse_grad = has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            if group["fused"] and getattr(self, "_need_device_dtype_check_for_fused", True):
                check_fused_device_dtype(p)
                self._need_device_dtype_check_for_fused = False
            has_sparse_grad |= p.grad.is_sparse
            has_complex |= p.is_complex()
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                if group["fused"]:
                    check_fused_device_dtype(p)
                state["step"] = step_tensor(p, 0.0, bool(group["fused"]), group["fused"])
                state["sum"] = core.full_like(
                    p, _initial_sum(p, self.defaults["initial_accumulator_value"]))
            state_sums.append(state["sum"])
            state_steps.append(state["step"])
        return has_sparse_grad, has_complex

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            state_sums: list[Tensor] = []
            state_steps: list[Tensor] = []
            has_sparse_grad, has_complex = self._init_group(group, params, grads, state_sums,
                                                            state_steps)
            adagrad(params, grads, state_sums, state_steps, lr=group["lr"],
                    weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                    eps=group["eps"], has_sparse_grad=has_sparse_grad,
                    foreach=group["foreach"], maximize=group["maximize"],
                    differentiable=group["differentiable"], has_complex=has_complex,
                    fused=group["fused"], grad_scale=getattr(self, "grad_scale", None),
                    found_inf=getattr(self, "found_inf", None))
        return loss


def adagrad(params: list[Tensor], grads: list[Tensor], state_sums: list[Tensor],
            state_steps: list[Tensor], fused: bool | None = None,
            grad_scale: Tensor | None = None, found_inf: Tensor | None = None,
            has_sparse_grad: bool = False, foreach: bool | None = None,
            differentiable: bool = False, has_complex: bool = False, *, lr: float | Tensor,
            weight_decay: float, lr_decay: float, eps: float, maximize: bool) -> None:
    """torch.optim.adagrad.adagrad: the Adagrad update of the lists."""
    check_state_steps(state_steps)
    if fused is None and foreach is None:
        fused, foreach = default_to_fused_or_foreach(
            params, differentiable, use_fused=not has_complex and not has_sparse_grad)
    if fused:
        func = _fused_adagrad
    elif foreach:
        func = _multi_tensor_adagrad
    else:
        func = _single_tensor_adagrad
    func(params, grads, state_sums, state_steps, grad_scale, found_inf, lr=lr,
         weight_decay=weight_decay, lr_decay=lr_decay, eps=eps,
         has_sparse_grad=has_sparse_grad, maximize=maximize, differentiable=differentiable,
         has_complex=has_complex)


def _check_dense(has_sparse_grad: bool) -> None:
    if has_sparse_grad:
        raise RuntimeError("Adagrad: sparse gradients are not supported in Ember")


def _single_tensor_adagrad(params: list[Tensor], grads: list[Tensor],
                           state_sums: list[Tensor], state_steps: list[Tensor],
                           grad_scale: Tensor | None, found_inf: Tensor | None, *, lr: Any,
                           weight_decay: float, lr_decay: float, eps: float,
                           has_sparse_grad: bool, maximize: bool, differentiable: bool,
                           has_complex: bool) -> None:
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    _check_dense(has_sparse_grad)
    lr = to_scalar(lr)
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t += 1
        step = get_value(step_t)
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        if param.is_complex():
            grad, state_sum, param = as_real(grad), as_real(state_sum), as_real(param)
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt() + eps if differentiable else state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)


def _multi_tensor_adagrad(params: list[Tensor], grads: list[Tensor],
                          state_sums: list[Tensor], state_steps: list[Tensor],
                          grad_scale: Tensor | None, found_inf: Tensor | None, *, lr: Any,
                          weight_decay: float, lr_decay: float, eps: float,
                          has_sparse_grad: bool, maximize: bool, differentiable: bool,
                          has_complex: bool) -> None:
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    if not params:
        return
    _check_dense(has_sparse_grad)
    lr = to_scalar(lr)
    groups = group_tensors_by_device_and_dtype([params, grads, state_sums, state_steps])
    for (device_params, device_grads, device_sums, device_steps), _ in groups.values():
        if has_complex:
            as_real_lists(device_params, device_grads, device_sums)
        if maximize:
            device_grads = core._foreach_neg(device_grads)
        core._foreach_add_(device_steps, 1)
        if weight_decay != 0:
            if maximize:
                core._foreach_add_(device_grads, device_params, alpha=weight_decay)
            else:
                device_grads = core._foreach_add(device_grads, device_params,
                                                 alpha=weight_decay)
        minus_clr = [-lr / (1 + (get_value(step) - 1) * lr_decay) for step in device_steps]
        core._foreach_addcmul_(device_sums, device_grads, device_grads, value=1)
        std = core._foreach_sqrt(device_sums)
        core._foreach_add_(std, eps)
        if weight_decay != 0 or maximize:
            core._foreach_mul_(device_grads, minus_clr)
            numerator = device_grads
        else:
            numerator = core._foreach_mul(device_grads, minus_clr)
        core._foreach_addcdiv_(device_params, numerator, std)


def _fused_adagrad(params: list[Tensor], grads: list[Tensor], state_sums: list[Tensor],
                   state_steps: list[Tensor], grad_scale: Tensor | None,
                   found_inf: Tensor | None, *, lr: Any, weight_decay: float, lr_decay: float,
                   eps: float, has_sparse_grad: bool, maximize: bool, differentiable: bool,
                   has_complex: bool) -> None:
    if not params:
        return
    if has_sparse_grad or has_complex:
        raise RuntimeError("`fused` does not support sparse grad or complex param")
    if differentiable:
        raise RuntimeError("adagrad with fused=True does not support differentiable=True")
    scales: dict[Any, Tensor] = {}
    infs: dict[Any, Tensor] = {}
    lrs: dict[Any, Tensor] | None = (
        {lr.device: lr} if isinstance(lr, Tensor) and lr.device.type != "cpu" else None)
    groups = group_tensors_by_device_and_dtype([params, grads, state_sums, state_steps])
    for (device, _), ((device_params, device_grads, device_sums, device_steps), _) in \
            groups.items():
        device_scale = None if grad_scale is None else \
            scales.setdefault(device, grad_scale.to(device))
        device_inf = None if found_inf is None else infs.setdefault(device, found_inf.to(device))
        if lrs is not None and device not in lrs:
            lr = lrs[device] = lr.to(device=device)
        core._foreach_add_(device_steps, 1)
        core._fused_adagrad_(device_params, device_grads, device_sums, device_steps, lr=lr,
                             lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
                             maximize=maximize, grad_scale=device_scale, found_inf=device_inf)
        if device_inf is not None:
            core._foreach_sub_(device_steps, [device_inf] * len(device_steps))

