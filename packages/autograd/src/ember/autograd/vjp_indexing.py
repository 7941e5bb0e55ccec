"""VJPs of indexing (getitem's advanced part, setitem, index_put, masked ops) and of the
ops that index along one dim (gather/scatter, index_*, take/put).

Index tensors travel in ``params``; they are never differentiated.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import ember.core as E
from ember.core.tensor import Tensor

from .vjp_elementwise import needs
from .vjp_reduction import input_shape

Grads = tuple[Any, ...]


def _zeros(shape: tuple[int, ...], like: Tensor) -> Tensor:
    return E.zeros(shape, dtype=like.dtype, device=like.device)


def _key(indices: tuple[Any, ...]) -> tuple[Any, ...]:
    """``aten.index``'s entries as a getitem key: None (a whole dim) becomes ``:``."""
    return tuple(slice(None) if e is None else e for e in indices)


# ----------------------------------------------------------------------------- indexing

def index(n: Any, g: Tensor) -> Grads:
    out = _zeros(input_shape(n), g)
    return (out.index_put(n.params["indices"], g, accumulate=True),)


def setitem(n: Any, g: Tensor) -> Grads:
    p = n.params
    basic, indices = p["index"], p["indices"]
    gx = gv = None
    if needs(n, 0):
        gx = g.clone()
        region = gx[basic] if basic else gx
        if indices is None:
            region.fill_(0)
        else:
            region[_key(indices)] = 0
    if needs(n, 1):
        gv = g[basic] if basic else g
        if indices is not None:
            gv = gv[_key(indices)]
    return gx, gv


def index_put(n: Any, g: Tensor) -> Grads:
    p = n.params
    gx = gv = None
    if needs(n, 0):
        gx = g if p["accumulate"] else g.index_put(p["indices"], _zeros((), g))
    if needs(n, 1):
        gv = g[_key(p["indices"])]
    return gx, gv


def masked_fill(n: Any, g: Tensor) -> Grads:
    mask = n.params["mask"]
    gx = E.where(mask, 0.0, g) if needs(n, 0) else None
    gv = E.where(mask, g, 0.0).sum() if needs(n, 1) else None
    return gx, gv


def masked_select(n: Any, g: Tensor) -> Grads:
    mask = n.params["mask"]
    shape = tuple(np.broadcast_shapes(input_shape(n), tuple(mask.shape)))
    return (_zeros(shape, g).masked_scatter(mask, g),)


def masked_scatter(n: Any, g: Tensor) -> Grads:
    mask = n.params["mask"]
    gx = gs = None
    if needs(n, 0):
        gx = E.where(mask, 0.0, g)
    if needs(n, 1):
        shape = input_shape(n, 1)
        picked = g.masked_select(mask)
        missing = math.prod(shape) - picked.numel()
        if missing > 0:
            picked = E.cat([picked, _zeros((missing,), g)])
        gs = picked.reshape(shape)
    return gx, gs


# ----------------------------------------------------------------------------- gather, scatter

def gather(n: Any, g: Tensor) -> Grads:
    p = n.params
    return (_zeros(input_shape(n), g).scatter_add(p["dim"], p["index"], g),)


def scatter(n: Any, g: Tensor) -> Grads:
    p = n.params
    if p["reduce"] == "multiply":
        raise NotImplementedError("the derivative for 'scatter' with reduce='multiply' is not "
                                  "implemented.")
    gx = gs = None
    if needs(n, 0):
        gx = g if p["reduce"] == "add" else g.scatter(p["dim"], p["index"], 0)
    if needs(n, 1):
        gs = g.gather(p["dim"], p["index"])
    return gx, gs


def scatter_add(n: Any, g: Tensor) -> Grads:
    p = n.params
    return g, g.gather(p["dim"], p["index"]) if needs(n, 1) else None


def scatter_reduce(n: Any, g: Tensor) -> Grads:
    """torch's scatter_reduce_backward, reduction by reduction."""
    p = n.params
    dim, idx, reduce, include_self = p["dim"], p["index"], p["reduce"], p["include_self"]
    x, src = n.saved(0), n.saved(1)
    if reduce == "sum":
        gx, gs = g, g.gather(dim, idx)
    elif reduce == "mean":
        start = E.ones_like(g) if include_self else E.zeros_like(g)
        count = start.scatter_add(dim, idx, E.ones_like(src))
        count = E.where(count == 0, 1.0, count)
        gx = g / count
        gs = g.gather(dim, idx) / count.gather(dim, idx)
    elif reduce == "prod":
        out = n.result()
        x_nonzero = E.where(x == 0, 1.0, x)
        x_nonzero_result = x_nonzero.scatter_reduce(dim, idx, src, reduce,
                                                    include_self=include_self)
        gx = g * x_nonzero_result / x_nonzero
        src_zero = src == 0
        zeros_per_slot = E.zeros_like(x).scatter_add(dim, idx, src_zero.to(x.dtype))
        src_zeros = zeros_per_slot.gather(dim, idx)
        single_zero = src_zero & (src_zeros == 1)
        src_nonzero_result = x.scatter_reduce(dim, idx, E.where(single_zero, 1.0, src), reduce,
                                              include_self=include_self)
        gs = E.where(single_zero, (g * src_nonzero_result).gather(dim, idx),
                     (g * out).gather(dim, idx) / E.where(src_zero, 1.0, src))
    else:  # amax, amin: shared evenly among the entries equal to the result
        out = n.result()
        value = out.gather(dim, idx)
        x_hit = (x == out).to(x.dtype)
        src_hit = (src == value).to(x.dtype)
        spread = g / x_hit.scatter_add(dim, idx, src_hit)
        gx = x_hit * spread
        gs = src_hit * spread.gather(dim, idx)
    if not include_self:
        gx = gx.scatter(dim, idx, 0)
    return gx if needs(n, 0) else None, gs if needs(n, 1) else None


def index_select(n: Any, g: Tensor) -> Grads:
    p = n.params
    shape = input_shape(n)
    if not shape:
        return (g.sum(),)
    return (_zeros(shape, g).index_add(p["dim"], p["index"].reshape(-1), g),)


def index_add(n: Any, g: Tensor) -> Grads:
    p = n.params
    gs = None
    if needs(n, 1):
        gs = _select(g, p["dim"], p["index"], input_shape(n, 1))
        if p["alpha"] != 1:
            gs = gs * p["alpha"]
    return g, gs


def _select(g: Tensor, dim: int, index: Tensor, shape: tuple[int, ...]) -> Tensor:
    if not g.ndim:
        return g.reshape(shape)
    return g.index_select(dim, index.reshape(-1)).reshape(shape)


def index_copy(n: Any, g: Tensor) -> Grads:
    p = n.params
    gx = g.index_fill(p["dim"], p["index"], 0) if needs(n, 0) else None
    gs = _select(g, p["dim"], p["index"], input_shape(n, 1)) if needs(n, 1) else None
    return gx, gs


def index_fill(n: Any, g: Tensor) -> Grads:
    p = n.params
    gx = g.index_fill(p["dim"], p["index"], 0) if needs(n, 0) else None
    gv = None
    if needs(n, 1):
        gv = g.sum() if not g.ndim else g.index_select(p["dim"], p["index"].reshape(-1)).sum()
    return gx, gv


def take(n: Any, g: Tensor) -> Grads:
    return (_zeros(input_shape(n), g).put(n.params["index"], g, accumulate=True),)


def take_along_dim(n: Any, g: Tensor) -> Grads:
    p = n.params
    shape, d, idx = input_shape(n), p["dim"], p["index"]
    if d is None or not shape:
        return (_zeros(shape, g).put(idx, g.reshape(idx.shape), accumulate=True),)
    full = g.shape[:d] + (shape[d],) + g.shape[d + 1:]
    return (_zeros(full, g).scatter_add(d, idx.expand(g.shape), g),)


def put(n: Any, g: Tensor) -> Grads:
    p = n.params
    gx = gs = None
    if needs(n, 0):
        gx = g if p["accumulate"] else g.put(p["index"], _zeros(p["index"].shape, g))
    if needs(n, 1):
        gs = g.take(p["index"]).reshape(input_shape(n, 1))
    return gx, gs
