"""Ops that index along one dimension: gather/scatter, ``index_*``, take/put, select.

Index tensors are not differentiable: they travel in ``params`` (as Tensors, under
"index"), the differentiable operands in ``inputs``; ``dim`` is recorded normalized
(non-negative). Records: "gather" ``(x,)`` {dim, index}; "scatter" ``(x, src or number)``
{dim, index, reduce}; "scatter_add" ``(x, src)`` {dim, index}; "scatter_reduce"
``(x, src)`` {dim, index, reduce, include_self}; "index_select" ``(x,)`` {dim, index};
"index_add" ``(x, source)`` {dim, index, alpha}; "index_copy" ``(x, source)`` {dim,
index}; "index_fill" ``(x, value)`` {dim, index}; "take" ``(x,)`` {index};
"take_along_dim" ``(x,)`` {index, dim (None: both flattened)}; "put" ``(x, source)``
{index, accumulate}. ``select`` is ``x[..., i]`` (a "getitem" view).

Forwards take backend arrays (the ``_data`` of those Tensors) and never modify their
operands: ``scatter`` and friends return an updated copy, and their in-place forms write
it back with ``assign_inplace``.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..dispatch import register
from ..dtypes import scalar_type_name
from ..tensor import Tensor, make, wrap_dim
from .index_checks import (
    INT_OR_LONG,
    LONG,
    along,
    as_dim,
    at_least_1d,
    check_bounds,
    fill_value,
    index_data,
    like_index,
    like_input,
    min_max,
    same_dtype,
    tensor_arg,
    ufunc_at,
    xp_of,
)
from .inplace import inplace
from .operands import broadcast_shape, device_mismatch, record, write_out

# ----------------------------------------------------------------------------- gather

def _leading(shape: tuple[int, ...]) -> tuple[slice, ...]:
    return tuple(slice(0, n) for n in shape)


def _gather(x: Any, *, dim: int, index: Any) -> Any:
    if x.ndim == 0:
        return x.reshape(1)[at_least_1d(index)].reshape(index.shape)
    return x[along(index, dim)]


GATHER = register("gather", _gather, like_index, "library")


def _check_dim_sizes(op: str, x: Tensor, index: Any, dim: int, src: Tensor | None = None
                     ) -> None:
    """index must have x's ndim and be no larger than x (except along dim) and than src."""
    nd = max(x._data.ndim, 1)
    if max(index.ndim, 1) != nd:
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as "
                           f"input tensor ({nd}), got {max(index.ndim, 1)}")
    if src is not None and max(src._data.ndim, 1) != nd:
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as "
                           f"src tensor ({max(src._data.ndim, 1)}), got {nd}")
    ishape = index.shape or (1,)
    xshape = x._data.shape or (1,)
    sshape = None if src is None else (src._data.shape or (1,))
    for d, n in enumerate(ishape):
        if (d != dim and n > xshape[d]) or (sshape is not None and n > sshape[d]):
            extra = "" if sshape is None else f" and to be no larger than src {list(sshape)}"
            raise RuntimeError(f"{op}(): Expected index {list(ishape)} to be no larger than self "
                               f"{list(xshape)} apart from dimension {dim}{extra}")


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False,
           out: Tensor | None = None) -> Tensor:
    """torch.gather: ``out[i][j] = input[index[i][j]][j]`` for dim 0 (and likewise)."""
    idx = index_data("gather", index, INT_OR_LONG, "gather(): Expected dtype int32/int64 for "
                     "index", input.device)
    x = input._data
    d = wrap_dim(as_dim(dim), x.ndim, "gather")
    _check_dim_sizes("gather", input, idx, d)
    check_bounds("gather", idx, (x.shape or (1,))[d], d, False)
    res = make(_gather(x, dim=d, index=idx), input.dtype, input.device)
    if input._requires_grad:
        record(GATHER, (input,), {"dim": d, "index": index}, res)
    return res if out is None else write_out("gather", out, res)


# ----------------------------------------------------------------------------- scatter

# The ufunc each reduction accumulates with (by name: NumPy's ufunc.at does not dispatch to
# CuPy's).
_UFUNC_AT = {"add": "add", "multiply": "multiply", "sum": "add", "mean": "add",
             "prod": "multiply", "amax": "maximum", "amin": "minimum"}


def _scatter(x: Any, src: Any, *, dim: int, index: Any, reduce: str | None) -> Any:
    out = x.copy()
    where = along(at_least_1d(index), dim)
    if src.ndim:
        src = src[_leading(index.shape or (1,))]
    if reduce is None:
        at_least_1d(out)[where] = src
    else:
        ufunc_at(_UFUNC_AT[reduce], at_least_1d(out), where, src)
    return out


def _scatter_reduce(x: Any, src: Any, *, dim: int, index: Any, reduce: str,
                    include_self: bool) -> Any:
    out = x.copy()
    o = at_least_1d(out)
    where = along(at_least_1d(index), dim)
    src = at_least_1d(src)[_leading(index.shape or (1,))]
    if not include_self:
        o[where] = _identity(reduce, x.dtype)
    ufunc_at(_UFUNC_AT[reduce], o, where, src)
    if reduce == "mean":
        xp = xp_of(x)
        count = (xp.ones if include_self else xp.zeros)(o.shape, np.int64)
        xp.add.at(count, where, 1)
        count[count == 0] = 1
        if x.dtype.kind in "fc" or x.dtype == _dt.bfloat16.np:
            # divide in the input's dtype, as torch does, so rounding matches
            o[...] = o / count.astype(x.dtype)
        else:
            o[...] = np.floor_divide(o, count)
    return out


def _identity(reduce: str, npdt: np.dtype) -> Any:
    """What a scattered-to slot starts from when ``include_self=False``."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if npdt.kind == "b":
        return reduce == "amin"
    if npdt.kind in "iu":
        info = np.iinfo(npdt)
        return info.min if reduce == "amax" else info.max
    return -np.inf if reduce == "amax" else np.inf


SCATTER = register("scatter", _scatter, like_input, "library")
SCATTER_ADD = register("scatter_add", lambda x, src, *, dim, index: _scatter(
    x, src, dim=dim, index=index, reduce="add"), like_input, "library")
SCATTER_REDUCE = register("scatter_reduce", _scatter_reduce, like_input, "library")


def _scatter_operands(op: str, input: Tensor, dim: Any, index: Any, src: Any
                      ) -> tuple[int, Any, Any]:
    idx = index_data(op, index, INT_OR_LONG, op + "(): Expected dtype int32/int64 for index",
                     input.device)
    x = input._data
    d = wrap_dim(as_dim(dim), x.ndim, op)
    if isinstance(src, Tensor):
        same_dtype(op, input, src)
        if src.device is not input.device:
            raise device_mismatch(op, input.device, src.device)
        _check_dim_sizes(op, input, idx, d, src)
        value = src._data
    else:
        _check_dim_sizes(op, input, idx, d)
        value = fill_value(op, src, input.dtype, input.device)
    check_bounds(op, idx, (x.shape or (1,))[d], d, False)
    return d, idx, value


def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
            reduce: str | None = None) -> Tensor:
    """torch.scatter: a copy of ``input`` with ``src`` (a Tensor or a number) written at
    ``index`` along ``dim``; ``reduce='add'``/``'multiply'`` combines instead of writing."""
    if src is None:
        src = value
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("scatter(): reduce argument must be either add or multiply.")
        if isinstance(src, Tensor):
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated "
                          "and will be removed in a future PyTorch release. Use "
                          "torch.scatter_reduce instead for more reduction options.",
                          UserWarning, stacklevel=2)
    d, idx, data = _scatter_operands("scatter", input, dim, index, src)
    res = make(_scatter(input._data, data, dim=d, index=idx, reduce=reduce), input.dtype,
               input.device)
    if input._requires_grad or (isinstance(src, Tensor) and src._requires_grad):
        record(SCATTER, (input, src), {"dim": d, "index": index, "reduce": reduce}, res)
    return res


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """torch.scatter_add: adds ``src`` into a copy of ``input`` at ``index`` along ``dim``
    (duplicates accumulate)."""
    tensor_arg("scatter_add", src, "src")
    d, idx, data = _scatter_operands("scatter_add", input, dim, index, src)
    res = make(_scatter(input._data, data, dim=d, index=idx, reduce="add"), input.dtype,
               input.device)
    if input._requires_grad or src._requires_grad:
        record(SCATTER_ADD, (input, src), {"dim": d, "index": index}, res)
    return res


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """torch.scatter_reduce: reduces ``src`` into a copy of ``input`` at ``index`` with
    'sum', 'prod', 'mean', 'amax' or 'amin' (``include_self``: whether ``input``'s values
    take part)."""
    if reduce not in _REDUCTIONS:
        raise RuntimeError("scatter_reduce(): reduce argument must be either sum, prod, mean, "
                           f"amax or amin, got {reduce}")
    tensor_arg("scatter_reduce", src, "src")
    if reduce == "mean" and input.dtype is _dt.bool:
        raise NotImplementedError("\"scatter_reduce\" with reduce='mean' not implemented for "
                                  "'Bool'")
    d, idx, data = _scatter_operands("scatter_reduce", input, dim, index, src)
    res = make(_scatter_reduce(input._data, data, dim=d, index=idx, reduce=reduce,
                               include_self=bool(include_self)), input.dtype, input.device)
    if input._requires_grad or src._requires_grad:
        record(SCATTER_REDUCE, (input, src), {"dim": d, "index": index, "reduce": reduce,
                                              "include_self": bool(include_self)}, res)
    return res


# ----------------------------------------------------------------------------- index_*

def _index_select(x: Any, *, dim: int, index: Any) -> Any:
    if x.ndim == 0:
        return x.reshape(1)[index.reshape(-1)].reshape(())
    return np.take(x, index.reshape(-1), axis=dim)


def _index_select_meta(x: Any, *, dim: int, index: Any) -> meta.Spec:
    shape = list(x.shape)
    if shape:
        shape[dim] = int(np.prod(index.shape, dtype=np.int64))
    return meta.Spec(tuple(shape), x.dtype)


INDEX_SELECT = register("index_select", _index_select, _index_select_meta, "library")


def _vector_index(op: str, index: Tensor, idx: Any, x: Tensor, d: int, negative: bool,
                  exc: type[Exception]) -> None:
    """An index of ``index_*``: a vector (or a scalar), in range along ``d``."""
    if idx.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector, but got dim: {idx.ndim} "
                         f"with type: {scalar_type_name(index.dtype)} and size: {list(idx.shape)}")
    size = x._data.shape[d] if x._data.ndim else 1
    check_bounds(op, idx, size, d, negative, exc)


def index_select(input: Tensor, dim: int, index: Tensor, *, out: Tensor | None = None
                 ) -> Tensor:
    """torch.index_select: the slices of ``input`` along ``dim`` at the positions ``index``."""
    idx = index_data("index_select", index, INT_OR_LONG, "index_select(): Expected dtype "
                     "int32 or int64 for index", input.device)
    x = input._data
    d = wrap_dim(as_dim(dim), x.ndim, "index_select")
    if x.ndim == 0 and idx.size != 1:
        raise IndexError(f"index_select(): Index to scalar can have only 1 value, got "
                         f"{idx.size} value(s)")
    _vector_index("index_select", index, idx, input, d, False, IndexError)
    res = make(_index_select(x, dim=d, index=idx), input.dtype, input.device)
    if input._requires_grad:
        record(INDEX_SELECT, (input,), {"dim": d, "index": index}, res)
    return res if out is None else write_out("index_select", out, res)


def _moved(a: Any, dim: int) -> Any:
    return np.moveaxis(at_least_1d(a), dim, 0)


def _index_add(x: Any, source: Any, *, dim: int, index: Any, alpha: Any) -> Any:
    out = x.copy()
    src = _moved(source, dim)
    if alpha != 1:
        src = src * x.dtype.type(alpha)  # alpha in x's dtype: 1.5 adds once to ints, as torch
    xp_of(x).add.at(_moved(out, dim), index.reshape(-1), src)
    return out


def _index_copy(x: Any, source: Any, *, dim: int, index: Any) -> Any:
    out = x.copy()
    _moved(out, dim)[index.reshape(-1)] = _moved(source, dim)
    return out


def _index_fill(x: Any, value: Any, *, dim: int, index: Any) -> Any:
    out = x.copy()
    _moved(out, dim)[index.reshape(-1)] = value
    return out


INDEX_ADD = register("index_add", _index_add, like_input, "library")
INDEX_COPY = register("index_copy", _index_copy, like_input, "library")
INDEX_FILL = register("index_fill", _index_fill, like_input, "library")


def _check_source(op: str, input: Tensor, source: Any, idx: Any, d: int) -> Any:
    """source: input's dtype and shape, except ``numel(index)`` slices along ``d``."""
    tensor_arg(op, source, "source")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{op}(): self ({scalar_type_name(input.dtype)}) and source "
                           f"({scalar_type_name(source.dtype)}) must have the same scalar type")
    if source.device is not input.device:
        raise device_mismatch(op, input.device, source.device)
    xs, ss = input._data.shape or (1,), source._data.shape or (1,)
    if len(ss) != len(xs) or any(a != b for i, (a, b) in enumerate(zip(xs, ss)) if i != d):
        raise RuntimeError(f"{op}(): source tensor shape must match self tensor shape, "
                           f"excluding the specified dimension. Got self.shape = {list(xs)} "
                           f"source.shape = {list(ss)}")
    if ss[d] != idx.size:
        raise RuntimeError(f"{op}(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({ss[d]}), for dim: {d}")
    return source._data


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1
              ) -> Tensor:
    """torch.index_add: a copy of ``input`` with ``alpha * source`` added at the slices
    ``index`` along ``dim`` (duplicates accumulate)."""
    idx = index_data("index_add", index, INT_OR_LONG, "index_add(): Expected dtype "
                     "int32/int64 for index but got: {got}", input.device)
    d = wrap_dim(as_dim(dim), input._data.ndim, "index_add")
    _vector_index("index_add", index, idx, input, d, False, RuntimeError)
    src = _check_source("index_add", input, source, idx, d)
    res = make(_index_add(input._data, src, dim=d, index=idx, alpha=alpha), input.dtype,
               input.device)
    if input._requires_grad or source._requires_grad:
        record(INDEX_ADD, (input, source), {"dim": d, "index": index, "alpha": alpha}, res)
    return res


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """torch.index_copy: a copy of ``input`` with the slices ``index`` along ``dim``
    replaced by ``source``'s."""
    idx = index_data("index_copy", index, LONG, "index_copy(): Expected a long tensor for "
                     "index, but got {got}", input.device)
    d = wrap_dim(as_dim(dim), input._data.ndim, "index_copy")
    _vector_index("index_copy", index, idx, input, d, False, IndexError)
    src = _check_source("index_copy", input, source, idx, d)
    res = make(_index_copy(input._data, src, dim=d, index=idx), input.dtype, input.device)
    if input._requires_grad or source._requires_grad:
        record(INDEX_COPY, (input, source), {"dim": d, "index": index}, res)
    return res


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """torch.index_fill: a copy of ``input`` with the slices ``index`` along ``dim`` set to
    ``value`` (a number or a 0-d tensor; negative indices count from the end)."""
    idx = index_data("index_fill", index, LONG, "index_fill(): Expected dtype int64 for "
                     "index.", input.device, IndexError)
    d = wrap_dim(as_dim(dim), input._data.ndim, "index_fill")
    if idx.ndim > 1:
        raise RuntimeError(f"index_fill(): Index has to be a vector/scalar, got shape "
                           f"{list(idx.shape)}")
    size = input._data.shape[d] if input._data.ndim else 1
    check_bounds("index_fill", idx, size, d, True, IndexError)
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(f"index_fill(): only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")
    fill = fill_value("index_fill", value, input.dtype, input.device)
    res = make(_index_fill(input._data, fill, dim=d, index=idx), input.dtype, input.device)
    if input._requires_grad or (isinstance(value, Tensor) and value._requires_grad):
        record(INDEX_FILL, (input, value), {"dim": d, "index": index}, res)
    return res


# ----------------------------------------------------------------------------- take / put

def _take(x: Any, *, index: Any) -> Any:
    return np.take(x.reshape(-1), index.reshape(-1)).reshape(index.shape)


def _take_along_dim(x: Any, *, index: Any, dim: int | None) -> Any:
    if dim is None:
        return _gather(x.reshape(-1), dim=0, index=index.reshape(-1))
    if x.ndim == 0:
        return _gather(x, dim=0, index=index)
    return np.take_along_axis(x, index, axis=dim)


def _put(x: Any, source: Any, *, index: Any, accumulate: bool) -> Any:
    out = x.copy()
    flat = out.reshape(-1)
    if accumulate:
        xp_of(x).add.at(flat, index.reshape(-1), source.reshape(-1))
    else:
        flat[index.reshape(-1)] = source.reshape(-1)
    return out


def _take_along_dim_meta(x: Any, *, index: Any, dim: int | None) -> meta.Spec:
    if dim is None:
        return meta.Spec((int(np.prod(index.shape, dtype=np.int64)),), x.dtype)
    return meta.Spec(tuple(index.shape), x.dtype)


TAKE = register("take", _take, like_index, "library")

TAKE_ALONG_DIM = register("take_along_dim", _take_along_dim, _take_along_dim_meta, "library")

PUT = register("put", _put, like_input, "library")


def _flat_bounds(op: str, idx: Any, n: int) -> None:
    if idx.size and (min_max(idx)[0] < -n or min_max(idx)[1] >= n):
        flat = idx.reshape(-1)
        bad = int(flat[((flat < -n) | (flat >= n)).nonzero()[0][0]])
        raise IndexError(f"{op}(): out of range: tried to access index {bad} on a tensor of "
                         f"{n} elements.")


def take(input: Tensor, index: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.take: ``input`` read as 1-D at ``index`` (negative counts from the end); the
    result has ``index``'s shape."""
    idx = index_data("take", index, LONG, "take(): Expected a long tensor for index, but got "
                     "{got}", input.device)
    n = input._data.size
    if n == 0 and idx.size:
        raise IndexError("take(): tried to take from an empty tensor")
    _flat_bounds("take", idx, n)
    res = make(_take(input._data, index=idx), input.dtype, input.device)
    if input._requires_grad:
        record(TAKE, (input,), {"index": index}, res)
    return res if out is None else write_out("take", out, res)


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None, *,
                   out: Tensor | None = None) -> Tensor:
    """torch.take_along_dim: ``gather`` after broadcasting ``input`` and ``indices`` in every
    dim but ``dim``; with ``dim=None`` both are flattened first."""
    op = "take_along_dim"
    idx = index_data(op, indices, LONG, "torch.take_along_dim(): dtype of indices should be "
                     "Long but got {got}", input.device, arg="indices")
    x = input._data
    if dim is None:
        check_bounds(op, idx, x.size, 0, False)
        d = None
    else:
        d = wrap_dim(as_dim(dim), x.ndim, op)
        if idx.ndim != x.ndim:
            raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                               f"number of dimensions, but got {x.ndim} dimensions for input, "
                               f"and {idx.ndim} dimensions for indices")
        if x.ndim:
            check_bounds(op, idx, x.shape[d], d, True)
            xs, js = list(x.shape), list(idx.shape)
            xs[d] = js[d] = 1
            common = list(broadcast_shape(op, tuple(xs), tuple(js)))
            xp = xp_of(x)
            x = xp.broadcast_to(x, tuple(common[:d] + [x.shape[d]] + common[d + 1:]))
            idx = xp.broadcast_to(idx, tuple(common[:d] + [idx.shape[d]] + common[d + 1:]))
        else:
            check_bounds(op, idx, 1, 0, True)
    res = make(_take_along_dim(x, index=idx, dim=d), input.dtype, input.device)
    if input._requires_grad:
        record(TAKE_ALONG_DIM, (input,), {"index": indices, "dim": d}, res)
    return res if out is None else write_out(op, out, res)


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """torch.put: a copy of ``input`` (read as 1-D) with ``source`` written at ``index``;
    ``accumulate=True`` adds instead, duplicates included."""
    idx = index_data("put", index, LONG, "put(): Expected a long tensor for index, but got "
                     "{got}", input.device)
    tensor_arg("put", source, "source")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {scalar_type_name(input.dtype)} and source.dtype = "
                           f"{scalar_type_name(source.dtype)}")
    if source._data.size != idx.size:
        raise IndexError(f"put(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source._data.size}, "
                         f"index.numel() = {idx.size}")
    n = input._data.size
    if n == 0 and idx.size:
        raise IndexError("put(): tried to put into an empty tensor")
    _flat_bounds("put", idx, n)
    res = make(_put(input._data, source._data, index=idx, accumulate=bool(accumulate)),
               input.dtype, input.device)
    if input._requires_grad or source._requires_grad:
        record(PUT, (input, source), {"index": index, "accumulate": bool(accumulate)}, res)
    return res


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """torch.select: the view of ``input`` at ``index`` along ``dim`` (that dim removed)."""
    x = input._data
    d = wrap_dim(as_dim(dim), x.ndim, "select")
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    return input[(slice(None),) * d + (operator.index(index),)]  # type: ignore[index]


FUNCTIONS = ["gather", "scatter", "scatter_add", "scatter_reduce", "index_select", "index_add",
             "index_copy", "index_fill", "take", "take_along_dim", "put", "select"]

METHODS: dict[str, Any] = {name: globals()[name] for name in FUNCTIONS}

METHODS.update({
    "scatter_": inplace(scatter, "scatter_"),
    "scatter_add_": inplace(scatter_add, "scatter_add_"),
    "scatter_reduce_": inplace(scatter_reduce, "scatter_reduce_"),
    "index_add_": inplace(index_add, "index_add_"),
    "index_copy_": inplace(index_copy, "index_copy_"),
    "index_fill_": inplace(index_fill, "index_fill_"),
    "put_": inplace(put, "put_"),
})
