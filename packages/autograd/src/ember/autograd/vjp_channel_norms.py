"""VJPs of batch and group normalization.

A first-order backward runs the fused backward primitive from the statistics the forward
saved; where a graph is built, the gradients are written with Ember ops that recompute
the statistics from the input, so that they differentiate again.
"""

from __future__ import annotations

from typing import Any

from ember.core.dispatch import dispatch, grad_mode
from ember.core.ops.channel_norms import BATCH_NORM_BACKWARD, GROUP_NORM_BACKWARD
from ember.core.tensor import Tensor

from .formula import Formula
from .vjp_normalization import _computed

Grads = tuple[Any, ...]


def _per_channel(p: Tensor, ndim: int) -> Tensor:
    return p.reshape((1, -1) + (1,) * (ndim - 2))


def batch_norm(n: Any, g: Any) -> Grads:
    """Of training (the batch's statistics) or of evaluation (the running ones)."""
    g = g[0]
    if g is None:
        return (None,) * 5
    p = n.params
    training = "momentum" in p
    x, w = n.saved(0), n.saved(1)
    rm: Any = None if training else n.saved(3)
    rv: Any = None if training else n.saved(4)
    mask = (n.needs(0), n.needs(1), n.needs(2))
    if not grad_mode.enabled:
        grads = dispatch(BATCH_NORM_BACKWARD, (g, x, w, rm, rv, n.result(1), n.result(2)),
                         {"train": training, "eps": p["eps"], "output_mask": mask})
        return (*grads, None, None)
    z, gz = _computed(x), _computed(g)
    axes = (0, *range(2, x.ndim))
    if training:
        mean = z.mean(axes, keepdim=True)
        scale = ((z - mean) ** 2).mean(axes, keepdim=True).add(p["eps"]).rsqrt()
    else:
        mean = _per_channel(_computed(rm), x.ndim)
        scale = _per_channel(_computed(rv), x.ndim).add(p["eps"]).rsqrt()
    xhat = (z - mean) * scale
    weight = 1.0 if w is None else _per_channel(_computed(w), x.ndim)
    dx = dw = db = None
    if mask[0]:
        if training:
            dx = weight * scale * (gz - gz.mean(axes, keepdim=True)
                                   - xhat * (gz * xhat).mean(axes, keepdim=True))
        else:
            dx = gz * weight * scale
        dx = dx.to(x.dtype)
    if mask[1]:
        dw = (gz * xhat).sum(axes).to(w.dtype)
    if mask[2]:
        db = gz.sum(axes).to(n.inputs[2].dtype)
    return dx, dw, db, None, None


def group_norm(n: Any, g: Any) -> Grads:
    g = g[0]
    if g is None:
        return (None,) * 3
    x, w = n.saved(0), n.saved(1)
    group = n.params["group"]
    mask = (n.needs(0), n.needs(1), n.needs(2))
    if not grad_mode.enabled:
        return dispatch(GROUP_NORM_BACKWARD,  # type: ignore[no-any-return]
                        (g, x, n.result(1), n.result(2), w),
                        {"group": group, "output_mask": mask})
    z, gz = _computed(x), _computed(g)
    grouped = z.reshape(x.shape[0], group, -1)
    mean = grouped.mean(-1, keepdim=True)
    rstd = ((grouped - mean) ** 2).mean(-1, keepdim=True).add(n.params["eps"]).rsqrt()
    xhat = ((grouped - mean) * rstd).reshape(x.shape)
    gw = gz if w is None else gz * _per_channel(_computed(w), x.ndim)
    gg, xg = gw.reshape(grouped.shape), xhat.reshape(grouped.shape)
    axes = (0, *range(2, x.ndim))
    dx = dw = db = None
    if mask[0]:
        dx = (rstd * (gg - gg.mean(-1, keepdim=True)
                      - xg * (gg * xg).mean(-1, keepdim=True))).reshape(x.shape).to(x.dtype)
    if mask[1]:
        dw = (gz * xhat).sum(axes).to(w.dtype)
    if mask[2]:
        db = gz.sum(axes).to(n.inputs[2].dtype)
    return dx, dw, db


FORMULAS: dict[str, Formula] = {
    "_native_batch_norm_legit_functional": Formula(
        batch_norm, (0, 1), (1, 2), name="NativeBatchNormBackward0", outputs=(0,)),
    "_native_batch_norm_legit_no_training": Formula(
        batch_norm, (0, 1, 3, 4), (1, 2), name="NativeBatchNormBackward0", outputs=(0,)),
    "native_group_norm": Formula(group_norm, (0, 1), (1, 2), outputs=(0,)),
}
