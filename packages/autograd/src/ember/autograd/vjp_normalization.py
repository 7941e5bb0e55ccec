"""VJPs of layer and RMS normalization.

A first-order backward (no graph being built) runs the fused backward primitive from the
statistics the forward saved. Where a graph is built (grad of grad, forward mode through
the double VJP), the same gradient is written with Ember ops that recompute the
statistics from the input, so that its own derivative is right: the saved mean and rstd
are outputs without a history.
"""

from __future__ import annotations

from typing import Any

import ember.core as E
from ember.core.dispatch import dispatch, grad_mode
from ember.core.ops.normalization import (
    FUSED_RMS_NORM_BACKWARD,
    NATIVE_LAYER_NORM_BACKWARD,
)
from ember.core.tensor import Tensor

from .formula import Formula

Grads = tuple[Any, ...]


def _dims(x: Tensor, k: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The normalized dims and the leading ones."""
    return tuple(range(x.ndim - k, x.ndim)), tuple(range(x.ndim - k))


def _computed(t: Tensor) -> Tensor:
    return t.float() if t.dtype in (E.float16, E.bfloat16) else t


def _param_grad(t: Tensor, lead: tuple[int, ...], like: Tensor) -> Tensor:
    return (t.sum(lead) if lead else t).to(like.dtype)


def native_layer_norm(n: Any, g: Any) -> Grads:
    g = g[0]
    if g is None:
        return (None, None, None)
    x, w = n.saved(0), n.saved(1)
    ns = n.params["normalized_shape"]
    mask = (n.needs(0), n.needs(1), n.needs(2))
    if not grad_mode.enabled:
        return dispatch(NATIVE_LAYER_NORM_BACKWARD,  # type: ignore[no-any-return]
                        (g, x, n.result(1), n.result(2), w),
                        {"normalized_shape": ns, "output_mask": mask})
    dims, lead = _dims(x, len(ns))
    z, gz = _computed(x), _computed(g)
    centered = z - z.mean(dims, keepdim=True)
    rstd = ((centered * centered).mean(dims, keepdim=True) + n.params["eps"]).rsqrt()
    xhat = centered * rstd
    gw = gz if w is None else gz * w
    dx = dw = db = None
    if mask[0]:
        dx = (rstd * (gw - gw.mean(dims, keepdim=True)
                      - xhat * (gw * xhat).mean(dims, keepdim=True))).to(x.dtype)
    if mask[1]:
        dw = _param_grad(gz * xhat, lead, w)
    if mask[2]:
        db = _param_grad(gz, lead, n.inputs[2])
    return dx, dw, db


def fused_rms_norm(n: Any, g: Any) -> Grads:
    g = g[0]
    if g is None:
        return (None, None)
    x, w = n.saved(0), n.saved(1)
    ns = n.params["normalized_shape"]
    mask = (n.needs(0), n.needs(1))
    if not grad_mode.enabled:
        return dispatch(FUSED_RMS_NORM_BACKWARD,  # type: ignore[no-any-return]
                        (g, x, n.result(1), w),
                        {"normalized_shape": ns, "output_mask": mask})
    dims, lead = _dims(x, len(ns))
    z, gz = _computed(x), _computed(g)
    rstd = ((z * z).mean(dims, keepdim=True) + n.params["eps"]).rsqrt()
    xhat = z * rstd
    gw = gz if w is None else gz * w
    dx = dw = None
    if mask[0]:
        dx = (rstd * (gw - xhat * (gw * xhat).mean(dims, keepdim=True))).to(x.dtype)
    if mask[1]:
        dw = _param_grad(gz * xhat, lead, w)
    return dx, dw


FORMULAS: dict[str, Formula] = {
    "native_layer_norm": Formula(native_layer_norm, (0, 1), (1, 2), outputs=(0,)),
    "_fused_rms_norm": Formula(fused_rms_norm, (0, 1), (1,), outputs=(0,)),
}
