"""VJPs of indexing (getitem's advanced part, index_put, masked ops) and of the ops that
index along one dim (gather/scatter, index_*, take/put).

Index tensors and masks are operands that get no gradient: each formula declares them
saved (torch saves them too) and reads them with ``n.saved(i)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import ember.core as E
from ember.core.dispatch import dispatch, grad_mode
from ember.core.ops.embedding import EMBEDDING_BACKWARD
from ember.core.tensor import Tensor

from .formula import Formula, R
from .vjp_elementwise import needs
from .vjp_reduction import input_shape

Grads = tuple[Any, ...]


def _zeros(shape: tuple[int, ...], like: Tensor) -> Tensor:
    return E.zeros(shape, dtype=like.dtype, device=like.device)


def _key(indices: tuple[Any, ...]) -> tuple[Any, ...]:
    """``aten.index``'s entries as a getitem key: None (a whole dim) becomes ``:``."""
    return tuple(slice(None) if e is None else e for e in indices)


def _from(start: int) -> Any:
    """A ``saved`` declaration: the operands from ``start`` on (the index entries)."""

    def saved(edges: tuple[Any, ...]) -> tuple[int, ...]:
        return tuple(range(start, len(edges)))

    return saved


def _entries(n: Any, start: int) -> tuple[Any, ...]:
    """The index entries (tensors or None) from operand ``start`` on."""
    return tuple(n.saved(i) for i in range(start, len(n.metas)))


_INDEX = (1,)  # the index (or mask) right after the input


def _for_source(edges: tuple[Any, ...]) -> tuple[int, ...]:
    """The index, read only for the gradient of the source (operand 2)."""
    return _INDEX if edges[2] is not None else ()


# ----------------------------------------------------------------------------- indexing

def index(n: Any, g: Tensor) -> Grads:
    entries = _entries(n, 1)
    out = _zeros(input_shape(n), g).index_put(entries, g, accumulate=True)
    return (out,) + (None,) * len(entries)


def index_put(n: Any, g: Tensor) -> Grads:
    entries = _entries(n, 2)
    gx = gv = None
    if needs(n, 0):
        gx = g if n.params["accumulate"] else g.index_put(entries, _zeros((), g))
    if needs(n, 1):
        gv = g[_key(entries)]
    return (gx, gv) + (None,) * len(entries)


def masked_fill(n: Any, g: Tensor) -> Grads:
    mask = n.saved(1)
    gx = E.where(mask, 0.0, g) if needs(n, 0) else None
    gv = E.where(mask, g, 0.0).sum() if needs(n, 2) else None
    return gx, None, gv


def masked_select(n: Any, g: Tensor) -> Grads:
    mask = n.saved(1)
    shape = tuple(np.broadcast_shapes(input_shape(n), input_shape(n, 1)))
    return _zeros(shape, g).masked_scatter(mask, g), None


def masked_scatter(n: Any, g: Tensor) -> Grads:
    mask = n.saved(1)
    gx = gs = None
    if needs(n, 0):
        gx = E.where(mask, 0.0, g)
    if needs(n, 2):
        shape = input_shape(n, 2)
        picked = g.masked_select(mask)
        missing = math.prod(shape) - picked.numel()
        if missing > 0:
            picked = E.cat([picked, _zeros((missing,), g)])
        gs = picked.reshape(shape)
    return gx, None, gs


# ----------------------------------------------------------------------------- gather, scatter

def gather(n: Any, g: Tensor) -> Grads:
    return _zeros(input_shape(n), g).scatter_add(n.params["dim"], n.saved(1), g), None


def scatter(n: Any, g: Tensor) -> Grads:
    p = n.params
    if p["reduce"] == "multiply":
        raise NotImplementedError("the derivative for 'scatter' with reduce='multiply' is not "
                                  "implemented.")
    idx = n.saved(1)
    gx = gs = None
    if needs(n, 0):
        gx = g if p["reduce"] == "add" else g.scatter(p["dim"], idx, 0)
    if needs(n, 2):
        gs = g.gather(p["dim"], idx)
    return gx, None, gs


def scatter_add(n: Any, g: Tensor) -> Grads:
    gs = g.gather(n.params["dim"], n.saved(1)) if needs(n, 2) else None
    return g, None, gs


def scatter_reduce(n: Any, g: Tensor) -> Grads:
    """torch's scatter_reduce_backward, reduction by reduction."""
    p = n.params
    dim, reduce, include_self = p["dim"], p["reduce"], p["include_self"]
    x, idx, src = n.saved(0), n.saved(1), n.saved(2)
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
    return gx if needs(n, 0) else None, None, gs if needs(n, 2) else None


def index_select(n: Any, g: Tensor) -> Grads:
    shape = input_shape(n)
    if not shape:
        return g.sum(), None
    return _zeros(shape, g).index_add(n.params["dim"], n.saved(1).reshape(-1), g), None


def _select(g: Tensor, dim: int, index: Tensor, shape: tuple[int, ...]) -> Tensor:
    if not g.ndim:
        return g.reshape(shape)
    return g.index_select(dim, index.reshape(-1)).reshape(shape)


def index_add(n: Any, g: Tensor) -> Grads:
    p = n.params
    gs = None
    if needs(n, 2):
        gs = _select(g, p["dim"], n.saved(1), input_shape(n, 2))
        if p["alpha"] != 1:
            gs = gs * p["alpha"]
    return g, None, gs


def index_copy(n: Any, g: Tensor) -> Grads:
    dim, idx = n.params["dim"], n.saved(1)
    gx = g.index_fill(dim, idx, 0) if needs(n, 0) else None
    gs = _select(g, dim, idx, input_shape(n, 2)) if needs(n, 2) else None
    return gx, None, gs


def index_fill(n: Any, g: Tensor) -> Grads:
    dim, idx = n.params["dim"], n.saved(1)
    gx = g.index_fill(dim, idx, 0) if needs(n, 0) else None
    gv = None
    if needs(n, 2):
        gv = g.sum() if not g.ndim else g.index_select(dim, idx.reshape(-1)).sum()
    return gx, None, gv


def take(n: Any, g: Tensor) -> Grads:
    return _zeros(input_shape(n), g).put(n.saved(1), g, accumulate=True), None


def take_along_dim(n: Any, g: Tensor) -> Grads:
    shape, d, idx = input_shape(n), n.params["dim"], n.saved(1)
    if d is None or not shape:
        return _zeros(shape, g).put(idx, g.reshape(idx.shape), accumulate=True), None
    full = g.shape[:d] + (shape[d],) + g.shape[d + 1:]
    return _zeros(full, g).scatter_add(d, idx.expand(g.shape), g), None


def put(n: Any, g: Tensor) -> Grads:
    idx = n.saved(1)
    gx = gs = None
    if needs(n, 0):
        gx = g if n.params["accumulate"] else g.put(idx, _zeros(idx.shape, g))
    if needs(n, 2):
        gs = g.take(idx).reshape(input_shape(n, 2))
    return gx, None, gs


F = Formula
def embedding(n: Any, g: Tensor) -> Grads:
    """torch's embedding_dense_backward: each index's gradient rows added into its row."""
    indices = n.saved(1)
    p = n.params
    num = input_shape(n)[0]
    if not grad_mode.enabled:  # no graph to build: the fused backward
        return (dispatch(EMBEDDING_BACKWARD, (g, indices),
                         {"num_weights": num, **p}), None)
    flat = indices.reshape(-1).long()
    rows = g.reshape(flat.numel(), g.shape[-1])
    if p["scale_grad_by_freq"]:
        # torch's double backward (embedding_dense_double_backward) leaves the scaling out:
        # the value is scaled, its derivative with respect to ``g`` is not
        counts = E.bincount(flat, minlength=num).to(g.dtype)
        rows = rows + (rows / counts[flat].unsqueeze(1) - rows).detach()
    if p["padding_idx"] >= 0:
        rows = rows * (flat != p["padding_idx"]).unsqueeze(1)
    return (_zeros((num, g.shape[-1]), g).index_add(0, flat, rows), None)


FORMULAS: dict[str, Formula] = {
    "embedding": F(embedding, (1,)),
    # ------------------------------------------------------------------ indexing
    "index": F(index, _from(1)),
    "index_put": F(index_put, _from(2)),
    "masked_fill": F(masked_fill, _INDEX),
    "masked_select": F(masked_select, _INDEX),
    "masked_scatter": F(masked_scatter, _INDEX),
    # ------------------------------------------------------------------ along one dim
    "gather": F(gather, _INDEX),
    "scatter": F(scatter, _INDEX),
    "scatter_add": F(scatter_add, _for_source),
    "scatter_reduce": F(scatter_reduce, (0, 1, 2), R),
    "index_select": F(index_select, _INDEX),
    "index_add": F(index_add, _for_source),
    "index_copy": F(index_copy, _INDEX),
    "index_fill": F(index_fill, _INDEX),
    "take": F(take, _INDEX),
    "take_along_dim": F(take_along_dim, _INDEX),
    "put": F(put, _INDEX),
}
