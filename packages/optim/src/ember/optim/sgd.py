"""torch.optim.SGD: stochastic gradient descent with momentum, dampening, Nesterov momentum,
weight decay and maximization, on the per-parameter, multi-tensor and fused paths."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember import core
from ember.core import Tensor

from .optimizer import Optimizer, use_grad_for_differentiable
from .paths import (
    check_fused_device_dtype,
    default_to_fused_or_foreach,
    group_tensors_by_device_and_dtype,
    to_scalar,
)

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """torch.optim.SGD."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float | Tensor = 0, nesterov: bool = False,
                 *, maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        if fused:
            self._step_supports_amp_scaling = True
            self._need_device_dtype_check_for_fused = True
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def _init_group(self, group: dict[str, Any], params: list[Tensor], grads: list[Tensor],
                    momentum_buffer_list: list[Tensor | None]) -> None:
        for p in group["params"]:
            if p.grad is None:
                continue
            if group["fused"] and getattr(self, "_need_device_dtype_check_for_fused", True):
                check_fused_device_dtype(p)
                self._need_device_dtype_check_for_fused = False
            params.append(p)
            grads.append(p.grad)
            if group["momentum"] != 0:
                momentum_buffer_list.append(self.state[p].get("momentum_buffer"))

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            momentum_buffer_list: list[Tensor | None] = []
            self._init_group(group, params, grads, momentum_buffer_list)
            sgd(params, grads, momentum_buffer_list, foreach=group["foreach"],
                fused=group["fused"], grad_scale=getattr(self, "grad_scale", None),
                found_inf=getattr(self, "found_inf", None),
                weight_decay=group["weight_decay"], momentum=group["momentum"],
                lr=group["lr"], dampening=group["dampening"], nesterov=group["nesterov"],
                maximize=group["maximize"])
            if group["momentum"] != 0:
                for p, buf in zip(params, momentum_buffer_list):
                    self.state[p]["momentum_buffer"] = buf
        return loss


def sgd(params: list[Tensor], d_p_list: list[Tensor], momentum_buffer_list: list[Tensor | None],
        has_sparse_grad: bool = False, foreach: bool | None = None, fused: bool | None = None,
        grad_scale: Tensor | None = None, found_inf: Tensor | None = None, *,
        weight_decay: float, momentum: float, lr: float, dampening: float, nesterov: bool,
        maximize: bool) -> None:
    """torch.optim.sgd.sgd: the SGD update of the lists, on the path asked for (by default
    the fastest)."""
    if foreach is None and fused is None:
        fused, foreach = default_to_fused_or_foreach(params, differentiable=False,
                                                     use_fused=True)
    if foreach:
        func = _multi_tensor_sgd
    elif fused:
        func = _fused_sgd
    else:
        func = _single_tensor_sgd
    func(params, d_p_list, momentum_buffer_list, grad_scale, found_inf,
         weight_decay=weight_decay, momentum=momentum, lr=lr, dampening=dampening,
         nesterov=nesterov, maximize=maximize)


def _single_tensor_sgd(params: list[Tensor], grads: list[Tensor],
                       momentum_buffer_list: list[Tensor | None], grad_scale: Tensor | None,
                       found_inf: Tensor | None, *, weight_decay: Any, momentum: float,
                       lr: Any, dampening: float, nesterov: bool, maximize: bool) -> None:
    if grad_scale is not None or found_inf is not None:
        raise RuntimeError("SGD's per-parameter path takes no grad_scale or found_inf")
    lr = to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        if weight_decay != 0:
            if isinstance(weight_decay, Tensor) and weight_decay.requires_grad:
                grad = grad.addcmul_(param.clone(), weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = momentum_buffer_list[i] = grad.detach().clone()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        if isinstance(lr, Tensor) and lr.requires_grad:
            param.addcmul_(grad, lr, value=-1)
        else:
            param.add_(grad, alpha=-lr)


def _multi_tensor_sgd(params: list[Tensor], grads: list[Tensor],
                      momentum_buffer_list: list[Tensor | None], grad_scale: Tensor | None,
                      found_inf: Tensor | None, *, weight_decay: Any, momentum: float,
                      lr: Any, dampening: float, nesterov: bool, maximize: bool) -> None:
    if grad_scale is not None or found_inf is not None:
        raise RuntimeError("SGD's multi-tensor path takes no grad_scale or found_inf")
    if not params:
        return
    lr = to_scalar(lr)
    groups = group_tensors_by_device_and_dtype([params, grads, momentum_buffer_list],
                                               with_indices=True)
    for (device_params, device_grads, device_bufs), indices in groups.values():
        if maximize:
            device_grads = core._foreach_neg(device_grads)
        if weight_decay != 0:
            if maximize:
                core._foreach_add_(device_grads, device_params, alpha=weight_decay)
            else:
                device_grads = core._foreach_add(device_grads, device_params,
                                                 alpha=weight_decay)
        if momentum != 0:
            if all(b is not None for b in device_bufs):
                bufs = device_bufs
                core._foreach_mul_(bufs, momentum)
                core._foreach_add_(bufs, device_grads, alpha=1 - dampening)
            else:
                bufs = []
                for i, buf in enumerate(device_bufs):
                    if buf is None:
                        buf = device_bufs[i] = momentum_buffer_list[indices[i]] = \
                            device_grads[i].detach().clone()
                    else:
                        buf.mul_(momentum).add_(device_grads[i], alpha=1 - dampening)
                    bufs.append(buf)
            if nesterov:
                core._foreach_add_(device_grads, bufs, alpha=momentum)
            else:
                device_grads = bufs
        core._foreach_add_(device_params, device_grads, alpha=-lr)


def _fused_sgd(params: list[Tensor], grads: list[Tensor],
               momentum_buffer_list: list[Tensor | None], grad_scale: Tensor | None,
               found_inf: Tensor | None, *, weight_decay: Any, momentum: float, lr: Any,
               dampening: float, nesterov: bool, maximize: bool) -> None:
    if not params:
        return
    no_momentum_buffer = momentum == 0
    is_first_step = all(t is None for t in momentum_buffer_list) and not no_momentum_buffer
    if is_first_step:
        for i, g in enumerate(grads):
            momentum_buffer_list[i] = core.empty_like(g)
    groups = group_tensors_by_device_and_dtype([params, grads, momentum_buffer_list])
    scales: dict[Any, Tensor] = {}
    infs: dict[Any, Tensor] = {}
    for (device, _), ((device_params, device_grads, device_bufs), _) in groups.items():
        device_scale = None if grad_scale is None else \
            scales.setdefault(device, grad_scale.to(device))
        device_inf = None if found_inf is None else infs.setdefault(device, found_inf.to(device))
        core._fused_sgd_(device_params, device_grads, [] if no_momentum_buffer else device_bufs,
                         weight_decay=weight_decay, momentum=momentum, lr=lr,
                         dampening=dampening, nesterov=nesterov, maximize=maximize,
                         is_first_step=is_first_step, grad_scale=device_scale,
                         found_inf=device_inf)
