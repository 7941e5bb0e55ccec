"""VJPs of convolution and pooling.

With no graph to build, each runs its op's fused backward primitive (torch's
``convolution_backward``, ``max_pool2d_with_indices_backward``...). Where a graph is built
(grad of grad), the same gradients are written with Ember ops whose own derivatives are
known: a convolution's input gradient is a transposed convolution of the gradient, its
weight gradient a convolution of the input with the gradient (batch and channels
swapped, stride and dilation exchanged); a max pool's gradient is a ``scatter_add`` at its
indices, an average pool's a transposed convolution with a kernel of ones, an adaptive
average pool's products with its averaging matrices.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import ember.core as E
from ember.core.dispatch import dispatch, grad_mode
from ember.core.ops import adaptive_pooling as AP
from ember.core.ops import pooling as P
from ember.core.ops.convolution import CONVOLUTION_BACKWARD, convolution
from ember.core.tensor import Tensor

from .formula import Formula

Grads = tuple[Any, ...]
Ints = tuple[int, ...]


# ----------------------------------------------------------------------------- convolution

def _narrow_to(t: Tensor, size: Ints, first: int = 2) -> Tensor:
    for i, s in enumerate(size):
        if t.shape[first + i] != s:
            t = t.narrow(first + i, 0, s)
    return t


def _weight_grad(a: Tensor, b: Tensor, kernel: Ints, stride: Ints, padding: Ints,
                 dilation: Ints, groups: int) -> Tensor:
    """The gradient of a correlation's weight (O, C/groups, *kernel) from its input ``a``
    (N, C, *S) and its output's gradient ``b`` (N, O, *out), as one grouped correlation of
    ``a`` with ``b`` over the batch."""
    n, c = a.shape[0], a.shape[1]
    o = b.shape[1]
    nd = len(kernel)
    sp = tuple(range(3, 3 + nd))
    a2 = a.reshape(n, groups, c // groups, *a.shape[2:]).permute(2, 1, 0, *sp)
    a2 = a2.reshape(c // groups, groups * n, *a.shape[2:])
    b2 = b.reshape(n, groups, o // groups, *b.shape[2:]).permute(1, 2, 0, *sp)
    b2 = b2.reshape(o, n, *b.shape[2:])
    gw = convolution(a2, b2, None, dilation, padding, stride, False, (0,) * nd, groups)
    return _narrow_to(gw, kernel).transpose(0, 1)


def convolution_vjp(n: Any, g: Tensor) -> Grads:
    x, w = n.saved(0), n.saved(1)
    p = n.params
    mask = (n.needs(0), n.needs(1), n.needs(2))
    if not grad_mode.enabled:
        return dispatch(CONVOLUTION_BACKWARD, (g, x, w),  # type: ignore[no-any-return]
                        {**p, "output_mask": mask})
    stride, padding, dilation, groups = p["stride"], p["padding"], p["dilation"], p["groups"]
    kernel = tuple(w.shape[2:])
    nd = len(kernel)
    dx = dw = db = None
    if not p["transposed"]:
        if mask[0]:
            reach = tuple((o - 1) * s - 2 * q + d * (k - 1) + 1 for o, s, q, d, k in
                          zip(g.shape[2:], stride, padding, dilation, kernel))
            extra = tuple(i - r for i, r in zip(x.shape[2:], reach))
            dx = convolution(g, w, None, stride, padding, dilation, True, extra, groups)
        if mask[1]:
            dw = _weight_grad(x, g, kernel, stride, padding, dilation, groups)
    else:
        if mask[0]:
            dx = _narrow_to(convolution(g, w, None, stride, padding, dilation, False,
                                        (0,) * nd, groups), tuple(x.shape[2:]))
        if mask[1]:
            dw = _weight_grad(g, x, kernel, stride, padding, dilation, groups)
    if mask[2]:
        db = g.sum((0, *range(2, g.ndim)))
    return dx, dw, db


# ----------------------------------------------------------------------------- pooling

def _lead(x: Tensor, nd: int) -> Ints:
    return tuple(x.shape[:x.ndim - nd])


def _scatter(g: Tensor, indices: Tensor, shape: Ints, nd: int) -> Tensor:
    lead = tuple(shape[:len(shape) - nd])
    flat = E.zeros(lead + (math.prod(shape[len(shape) - nd:]),), dtype=g.dtype,
                   device=g.device)
    return flat.scatter_add(-1, indices.reshape(*lead, -1),  # type: ignore[no-any-return]
                            g.reshape(*lead, -1)).reshape(shape)


def _max_pool(backward: Any, nd: int) -> Any:
    def vjp(n: Any, grads: Any) -> Grads:
        g = grads[0]
        if g is None:
            return (None,)
        x, idx = n.saved(0), n.result(1)
        if not grad_mode.enabled:
            return (dispatch(backward, (g, x, idx), n.params),)
        return (_scatter(g, idx, tuple(x.shape), nd),)

    return vjp


def _avg_pool(backward: Any, nd: int) -> Any:
    def vjp(n: Any, g: Tensor) -> Grads:
        x = n.saved(0)
        p = n.params
        if not grad_mode.enabled:
            return (dispatch(backward, (g, x), p),)
        size = tuple(x.shape[x.ndim - nd:])
        out = tuple(g.shape[g.ndim - nd:])
        div = P.avg_divisor(size, out, p["kernel_size"], p["stride"], p["padding"],
                            p["count_include_pad"], p["divisor_override"])
        share = g / E.from_numpy(np.ascontiguousarray(div, np.float64)).to(g.dtype)
        lead = _lead(x, nd)
        ones = E.ones((1, 1) + tuple(p["kernel_size"]), dtype=g.dtype, device=g.device)
        k, st, pad = p["kernel_size"], p["stride"], p["padding"]
        # the last input elements a floor-mode pool reaches come back as output padding
        # (fewer than a stride); a ceil-mode pool's windows past the input are cut off
        reach = tuple((o - 1) * s - 2 * q + kk for o, s, q, kk in zip(out, st, pad, k))
        extra = tuple(max(s - r, 0) for s, r in zip(size, reach))
        gi = convolution(share.reshape(-1, 1, *out), ones, None, st, pad, (1,) * nd, True,
                         extra, 1)
        gi = _narrow_to(gi, size)
        return (gi.reshape(*lead, *size),)

    return vjp


def _matrix(size: int, out: int, like: Tensor) -> Tensor:
    return E.from_numpy(AP.adaptive_matrix(size, out, np.float64)).to(like.dtype)


def adaptive_avg_pool2d(n: Any, g: Tensor) -> Grads:
    x = n.saved(0)
    if not grad_mode.enabled:
        return (dispatch(AP.ADAPTIVE_AVG_POOL2D_BACKWARD, (g, x), None),)
    (h, w), (oh, ow) = x.shape[-2:], g.shape[-2:]
    return (_matrix(h, oh, g).T @ g @ _matrix(w, ow, g),)


def adaptive_avg_pool3d(n: Any, g: Tensor) -> Grads:
    x = n.saved(0)
    if not grad_mode.enabled:
        return (dispatch(AP.ADAPTIVE_AVG_POOL3D_BACKWARD, (g, x), None),)
    (d, h, w), (od, oh, ow) = x.shape[-3:], g.shape[-3:]
    gi = (_matrix(h, oh, g).T @ g @ _matrix(w, ow, g)).transpose(-3, -1)
    return ((gi @ _matrix(d, od, g)).transpose(-3, -1),)


def adaptive_max_pool2d(n: Any, grads: Any) -> Grads:
    g = grads[0]
    if g is None:
        return (None,)
    x, idx = n.saved(0), n.result(1)
    if not grad_mode.enabled:
        return (dispatch(AP.ADAPTIVE_MAX_POOL2D_BACKWARD, (g, x, idx), None),)
    return (_scatter(g, idx, tuple(x.shape), 2),)


FORMULAS: dict[str, Formula] = {
    "convolution": Formula(convolution_vjp, (0, 1)),
    "max_pool2d_with_indices": Formula(_max_pool(P.MAX_POOL2D_BACKWARD, 2), (0,), (1,),
                                       name="MaxPool2DWithIndicesBackward0", outputs=(0,)),
    "max_pool3d_with_indices": Formula(_max_pool(P.MAX_POOL3D_BACKWARD, 3), (0,), (1,),
                                       name="MaxPool3DWithIndicesBackward0", outputs=(0,)),
    "avg_pool2d": Formula(_avg_pool(P.AVG_POOL2D_BACKWARD, 2), (0,),
                          name="AvgPool2DBackward0"),
    "avg_pool3d": Formula(_avg_pool(P.AVG_POOL3D_BACKWARD, 3), (0,),
                          name="AvgPool3DBackward0"),
    "_adaptive_avg_pool2d": Formula(adaptive_avg_pool2d, (0,),
                                    name="AdaptiveAvgPool2DBackward0"),
    "_adaptive_avg_pool3d": Formula(adaptive_avg_pool3d, (0,),
                                    name="AdaptiveAvgPool3DBackward0"),
    "adaptive_max_pool2d": Formula(adaptive_max_pool2d, (0,), (1,),
                                   name="AdaptiveMaxPool2DBackward0", outputs=(0,)),
}
