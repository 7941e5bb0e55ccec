"""Gradient clipping: ``clip_grad_norm_`` (and its two halves, ``get_total_norm`` and
``clip_grads_with_norm_``) and ``clip_grad_value_``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import ember.autograd as ag
import ember.core as E

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _tensors(values: Any) -> list[Any]:
    return [values] if isinstance(values, E.Tensor) else list(values)


def get_total_norm(tensors: Any, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> E.Tensor:
    """The ``norm_type`` norm of all ``tensors`` together, as if concatenated."""
    tensors = _tensors(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return E.tensor(0.0)
    with ag.no_grad():
        norms = E.stack([t.norm(norm_type).to(tensors[0].device) for t in tensors])
        total = norms.norm(norm_type)
    if error_if_nonfinite and not bool(total.isfinite()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: Any, max_norm: float, total_norm: E.Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the gradients of ``parameters`` by ``max_norm / (total_norm + 1e-6)`` where
    that is below 1."""
    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    if not grads:
        return
    with ag.no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device))


def clip_grad_norm_(parameters: Any, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> E.Tensor:
    """torch.nn.utils.clip_grad_norm_: scale the gradients in place so that their total
    norm is at most ``max_norm``; returns the total norm before clipping."""
    parameters = _tensors(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters: Any, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> E.Tensor:
    """The deprecated spelling of ``clip_grad_norm_``."""
    import warnings

    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Iterable[Any] | E.Tensor, clip_value: float,
                     foreach: bool | None = None) -> None:
    """torch.nn.utils.clip_grad_value_: clamp every gradient to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    with ag.no_grad():
        for p in _tensors(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
