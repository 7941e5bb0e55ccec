"""Ops that index along one dimension: gather/scatter, ``index_*``, take/put, select.

The index tensor is an operand (never differentiated), after the input: "gather"
``(x, index)`` {dim}; "scatter" ``(x, index, src or number)`` {dim, reduce};
"scatter_add" ``(x, index, src)`` {dim}; "scatter_reduce" ``(x, index, src)`` {dim,
reduce, include_self}; "index_select" ``(x, index)`` {dim}; "index_add" ``(x, index,
source)`` {dim, alpha}; "index_copy" ``(x, index, source)`` {dim}; "index_fill" ``(x,
index, value)`` {dim}; "take" ``(x, index)``; "take_along_dim" ``(x, index)`` {dim (None:
both flattened)}; "put" ``(x, index, source)`` {accumulate}. ``dim`` is non-negative.
``select`` is ``x[..., i]`` (a "getitem" view).

The wrappers check dtypes, devices and shapes; the kernels check the index values against
the bounds (before anything is written) and never modify their operands: ``scatter`` and
friends return an updated copy, which their in-place forms write back with
``assign_inplace``.
"""

from __future__ import annotations

import math
import operator
import warnings
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import xp_of
from ..dispatch import register
from ..dtypes import scalar_type_name
from ..tensor import Tensor, wrap_dim
from .copying import write_out
from .index_checks import (
    INT_OR_LONG,
    LONG,
    along,
    as_dim,
    at_least_1d,
    check_along_sizes,
    check_bounds,
    check_index_add,
    check_index_copy,
    check_index_select,
    fill_number,
    fill_operand,
    first_outside,
    index_tensor,
    no_dimensions,
    same_dtype,
    tensor_arg,
    ufunc_at,
    written_value,
)
from .inplace import inplace
from .operands import broadcast_shape, device_mismatch, not_implemented

FUNCTIONS = ["gather", "scatter", "scatter_add", "scatter_reduce", "index_select", "index_add",
             "index_copy", "index_fill", "take", "take_along_dim", "put", "select"]


def _row_major(x: Any, *operands: Any, **params: Any) -> meta.MetaArray:
    """The meta rule of an op whose result is a fresh row-major tensor shaped like ``x``."""
    return meta.empty(x.shape, x.dtype)


def _like_x(x: Any, *operands: Any, **params: Any) -> meta.MetaArray:
    """The meta rule of an op whose result is a copy of ``x`` laid out like it."""
    return meta.like(x)


def _size(x: Any, dim: int) -> int:
    """The size of ``dim`` (a 0-d array counts as 1-D of size 1)."""
    return x.shape[dim] if x.ndim else 1


# ----------------------------------------------------------------------------- gather

def _gather(x: Any, index: Any, *, dim: int) -> Any:
    check_bounds("gather", index, _size(x, dim), dim, False)
    if x.ndim == 0:
        return x.reshape(1)[at_least_1d(index)].reshape(index.shape)
    return x[along(index, dim)]


GATHER = register("gather", _gather, lambda x, index, *, dim: meta.empty(index.shape, x.dtype),
                  "library", arg_names=("self", "index"))


def _along_index(op: str, input: Tensor, dim: Any, index: Any) -> tuple[int, Tensor]:
    """The dim (non-negative) and the checked index of the gather/scatter family."""
    idx = index_tensor(op, index, INT_OR_LONG, f"{op}(): Expected dtype int32/int64 for index",
                       input.device)
    return wrap_dim(as_dim(dim), input._data.ndim, op), idx


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False,
           out: Tensor | None = None) -> Tensor:
    """torch.gather: ``out[i][j] = input[index[i][j]][j]`` for dim 0 (and likewise)."""
    d, idx = _along_index("gather", input, dim, index)
    check_along_sizes("gather", input, idx, d)
    res = GATHER.door((input, idx), {"dim": d})
    return res if out is None else write_out("gather", out, res, (input,), False)  # type: ignore[no-any-return]


# ----------------------------------------------------------------------------- scatter

# The ufunc each reduction accumulates with (by name: NumPy's ufunc.at does not dispatch to
# CuPy's).
_UFUNC_AT = {"add": "add", "multiply": "multiply", "sum": "add", "mean": "add",
             "prod": "multiply", "amax": "maximum", "amin": "minimum"}


def _scattered(x: Any, index: Any, src: Any, dim: int, op: str) -> tuple[Any, Any, Any]:
    """A row-major copy of ``x`` (1-D when x is 0-d, a view of the copy), the positions
    ``index`` stands for along ``dim``, and the part of ``src`` they take."""
    check_bounds(op, index, _size(x, dim), dim, False)
    out = x.copy()
    src = written_value(x, src)
    if not index.size:  # it writes nothing, whatever its shape (torch does not check it)
        nothing = xp_of(x).zeros((0,) * max(x.ndim, 1), index.dtype)
        return out, along(nothing, dim), src.reshape(-1)[:0]
    if src.ndim:
        src = at_least_1d(src)[tuple(slice(0, n) for n in index.shape or (1,))]
    return out, along(at_least_1d(index), dim), src


def _scatter(x: Any, index: Any, src: Any, *, dim: int, reduce: str | None) -> Any:
    out, where, src = _scattered(x, index, src, dim, "scatter")
    if reduce is None:
        at_least_1d(out)[where] = src
    else:
        ufunc_at(_UFUNC_AT[reduce], at_least_1d(out), where, src)
    return out


def _scatter_add(x: Any, index: Any, src: Any, *, dim: int) -> Any:
    out, where, src = _scattered(x, index, src, dim, "scatter_add")
    ufunc_at("add", at_least_1d(out), where, src)
    return out


def _scatter_reduce(x: Any, index: Any, src: Any, *, dim: int, reduce: str,
                    include_self: bool) -> Any:
    out, where, src = _scattered(x, index, src, dim, "scatter_reduce")
    o = at_least_1d(out)
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
            o[...] = xp.floor_divide(o, count)
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


_SCATTER_NAMES = ("self", "index", "src")
SCATTER = register("scatter", _scatter, _row_major, "library", arg_names=_SCATTER_NAMES)
SCATTER_ADD = register("scatter_add", _scatter_add, _row_major, "library",
                       arg_names=_SCATTER_NAMES)
SCATTER_REDUCE = register("scatter_reduce", _scatter_reduce, _row_major, "library",
                          arg_names=_SCATTER_NAMES)


def _scatter_operands(op: str, input: Tensor, dim: Any, index: Any, src: Any
                      ) -> tuple[int, Tensor, Any]:
    """The dim, the index and the source (a Tensor of input's dtype, or a checked number).
    torch checks the shapes and converts a number only for an index with elements: one
    without writes nothing."""
    d, idx = _along_index(op, input, dim, index)
    writes = idx._data.size != 0
    if isinstance(src, Tensor):
        same_dtype(op, input, src)
        if src.device is not input.device:
            raise device_mismatch(op, input.device, src.device)
        if writes:
            check_along_sizes(op, input, idx, d, src)
        return d, idx, src
    if not writes:
        fill_number(op, src, _dt.complex128)  # only checked to be a number: it is not written
        return d, idx, 0
    check_along_sizes(op, input, idx, d)
    return d, idx, fill_number(op, src, input.dtype)


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
    d, idx, source = _scatter_operands("scatter", input, dim, index, src)
    return SCATTER.door((input, idx, source),  # type: ignore[no-any-return]
                        {"dim": d, "reduce": reduce})


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """torch.scatter_add: adds ``src`` into a copy of ``input`` at ``index`` along ``dim``
    (duplicates accumulate)."""
    tensor_arg("scatter_add", src, "src")
    d, idx, source = _scatter_operands("scatter_add", input, dim, index, src)
    return SCATTER_ADD.door((input, idx, source), {"dim": d})  # type: ignore[no-any-return]


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
    d, idx, source = _scatter_operands("scatter_reduce", input, dim, index, src)
    if reduce in ("amax", "amin") and input.dtype.category == 3 and idx._data.size:
        raise not_implemented(f"scatter_gather_tensor_cpu_reduce_{reduce}", input.dtype)
    return SCATTER_REDUCE.door((input, idx, source),  # type: ignore[no-any-return]
                               {"dim": d, "reduce": reduce, "include_self": bool(include_self)})


# ----------------------------------------------------------------------------- index_*

def _select_bounds(x: Any, index: Any, dim: int) -> None:
    """torch's CPU bounds check of index_select: a RuntimeError from the paths that check
    the whole index first (an input of 2 or more dims that is empty, or selected along dim
    1), an IndexError ("index out of range in self") from the others."""
    size = _size(x, dim)
    if x.ndim > 1 and x.size == 0:
        if index.size and size == 0:
            raise RuntimeError("index_select(): self indexing axis dim should be positive")
    bad = first_outside(index, 0, size)
    if bad is None:
        return
    if x.ndim > 1 and (x.size == 0 or dim == 1):
        raise RuntimeError(f"index_select(): INDICES element is out of DATA bounds, id={bad} "
                           f"axis_dim={size}")
    raise IndexError(f"index_select(): index out of range in self (index {bad}, dimension "
                     f"{dim} of size {size})")


def _index_select(x: Any, index: Any, *, dim: int) -> Any:
    _select_bounds(x, index, dim)
    flat = index.reshape(-1)
    if x.ndim == 0:
        return x.reshape(1)[flat].reshape(())
    return xp_of(x).take(x, flat, axis=dim)


def _index_select_meta(x: Any, index: Any, *, dim: int) -> meta.MetaArray:
    shape = list(x.shape)
    if shape:
        shape[dim] = math.prod(index.shape)
    return meta.empty(shape, x.dtype)


INDEX_SELECT = register("index_select", _index_select, _index_select_meta, "library",
                        arg_names=("self", "index"))


def index_select(input: Tensor, dim: int, index: Tensor, *, out: Tensor | None = None
                 ) -> Tensor:
    """torch.index_select: the slices of ``input`` along ``dim`` at the positions ``index``."""
    d = wrap_dim(as_dim(dim), input._data.ndim, "index_select")
    idx = check_index_select("index_select", input, index)
    res = INDEX_SELECT.door((input, idx), {"dim": d})
    return res if out is None else write_out("index_select", out, res,
                                                  (input,), False)  # type: ignore[no-any-return]


def _moved(a: Any, dim: int) -> Any:
    return xp_of(a).moveaxis(at_least_1d(a), dim, 0)


def _index_add(x: Any, index: Any, source: Any, *, dim: int, alpha: Any) -> Any:
    check_bounds("index_add", index, _size(x, dim), dim, False)
    out = x.copy()
    src = _moved(source, dim)
    if alpha != 1:
        src = src * x.dtype.type(alpha)  # alpha in x's dtype: 1.5 adds once to ints, as torch
    xp_of(x).add.at(_moved(out, dim), index.reshape(-1), src)
    return out


def _index_copy(x: Any, index: Any, source: Any, *, dim: int) -> Any:
    check_bounds("index_copy", index, _size(x, dim), dim, False, IndexError)
    out = x.copy()
    _moved(out, dim)[index.reshape(-1)] = _moved(source, dim)
    return out


def _index_fill(x: Any, index: Any, value: Any, *, dim: int) -> Any:
    check_bounds("index_fill", index, _size(x, dim), dim, True, IndexError)
    out = x.copy(order="K")
    _moved(out, dim)[index.reshape(-1)] = value
    return out


_SOURCE_NAMES = ("self", "index", "source")
INDEX_ADD = register("index_add", _index_add, _row_major, "library", arg_names=_SOURCE_NAMES)
INDEX_COPY = register("index_copy", _index_copy, _row_major, "library", arg_names=_SOURCE_NAMES)
INDEX_FILL = register("index_fill", _index_fill, _like_x, "library",
                      arg_names=("self", "index", "value"))


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1
              ) -> Tensor:
    """torch.index_add: a copy of ``input`` with ``alpha * source`` added at the slices
    ``index`` along ``dim`` (duplicates accumulate)."""
    d = wrap_dim(as_dim(dim), input._data.ndim, "index_add")
    idx = check_index_add("index_add", input, d, index, source)
    return INDEX_ADD.door((input, idx, source),  # type: ignore[no-any-return]
                          {"dim": d, "alpha": alpha})


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """torch.index_copy: a copy of ``input`` with the slices ``index`` along ``dim``
    replaced by ``source``'s."""
    d = wrap_dim(as_dim(dim), input._data.ndim, "index_copy")
    idx = check_index_copy("index_copy", input, d, index, source)
    return INDEX_COPY.door((input, idx, source), {"dim": d})  # type: ignore[no-any-return]


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """torch.index_fill: a copy of ``input`` with the slices ``index`` along ``dim`` set to
    ``value`` (a number or a 0-d tensor; negative indices count from the end)."""
    idx = index_tensor("index_fill", index, LONG, "index_fill_(): Expected dtype int64 for "
                       "index.", input.device, IndexError)
    if input.dtype.category != 3 and (value.__class__ is complex or (
            isinstance(value, Tensor) and value.dtype.category == 3)):
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is "
                           "not supported")
    d = wrap_dim(as_dim(dim), input._data.ndim, "index_fill")
    if idx._data.ndim > 1:
        raise RuntimeError(f"index_fill(): Index has to be a vector/scalar, got shape "
                           f"{list(idx._data.shape)}")
    fill = fill_operand("index_fill", value, input)
    return INDEX_FILL.door((input, idx, fill), {"dim": d})  # type: ignore[no-any-return]


# ----------------------------------------------------------------------------- take / put

def _flat_bounds(op: str, index: Any, n: int) -> None:
    bad = first_outside(index, -n, n)
    if bad is not None:
        raise IndexError(f"{op}(): out of range: tried to access index {bad} on a tensor of "
                         f"{n} elements.")


def _take(x: Any, index: Any) -> Any:
    _flat_bounds("take", index, x.size)
    return x.reshape(-1)[index.reshape(-1)].reshape(index.shape)


def _without(shape: tuple[int, ...], dim: int) -> tuple[int, ...]:
    return shape[:dim] + (1,) + shape[dim + 1:]


def _along_shapes(xshape: tuple[int, ...], ishape: tuple[int, ...], dim: int
                  ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The shapes input and index broadcast to in every dim but ``dim``."""
    common = np.broadcast_shapes(_without(xshape, dim), _without(ishape, dim))
    return (common[:dim] + (xshape[dim],) + common[dim + 1:],
            common[:dim] + (ishape[dim],) + common[dim + 1:])


def _take_along_dim(x: Any, index: Any, *, dim: int | None) -> Any:
    if dim is None:
        check_bounds("take_along_dim", index, x.size, 0, False)
        return x.reshape(-1)[index.reshape(-1)]
    check_bounds("take_along_dim", index, _size(x, dim), dim, True)
    if x.ndim == 0:
        return x.reshape(1)[index.reshape(-1)].reshape(index.shape)
    xs, js = _along_shapes(x.shape, index.shape, dim)
    xp = xp_of(x)
    return xp.take_along_axis(xp.broadcast_to(x, xs), xp.broadcast_to(index, js), axis=dim)


def _take_along_dim_meta(x: Any, index: Any, *, dim: int | None) -> meta.MetaArray:
    if dim is None:
        return meta.empty((math.prod(index.shape),), x.dtype)
    if x.ndim == 0:
        return meta.empty(index.shape, x.dtype)
    return meta.empty(_along_shapes(x.shape, index.shape, dim)[1], x.dtype)


def _put(x: Any, index: Any, source: Any, *, accumulate: bool) -> Any:
    n = x.size
    _flat_bounds("put", index, n)
    xp = xp_of(x)
    flat = index.reshape(-1)
    out = x.copy(order="K")
    o = at_least_1d(out)
    # positions in the row-major order torch reads them in, whatever out's layout
    where = xp.unravel_index(xp.where(flat < 0, flat + n, flat), o.shape)
    if accumulate:
        xp.add.at(o, where, source.reshape(-1))
    else:
        o[where] = source.reshape(-1)
    return out


TAKE = register("take", _take, lambda x, index: meta.empty(index.shape, x.dtype), "library",
                arg_names=("self", "index"))
TAKE_ALONG_DIM = register("take_along_dim", _take_along_dim, _take_along_dim_meta, "library",
                          arg_names=("self", "indices"))
PUT = register("put", _put, _like_x, "library", arg_names=_SOURCE_NAMES)


def take(input: Tensor, index: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.take: ``input`` read as 1-D at ``index`` (negative counts from the end); the
    result has ``index``'s shape."""
    idx = index_tensor("take", index, LONG, "take(): Expected a long tensor for index, but got "
                       "{got}", input.device)
    if input._data.size == 0 and idx._data.size:
        raise IndexError("take(): tried to take from an empty tensor")
    res = TAKE.door((input, idx), None)
    return res if out is None else write_out("take", out, res)  # type: ignore[no-any-return]


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None, *,
                   out: Tensor | None = None) -> Tensor:
    """torch.take_along_dim: ``gather`` after broadcasting ``input`` and ``indices`` in every
    dim but ``dim``; with ``dim=None`` both are flattened first."""
    op = "take_along_dim"
    idx = index_tensor(op, indices, LONG, "torch.take_along_dim(): dtype of indices should be "
                       "Long but got {got}", input.device, arg="indices")
    d = None
    if dim is not None:
        nd, ni = input._data.ndim, idx._data.ndim
        d = wrap_dim(as_dim(dim), nd, op)
        if ni != nd:
            raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                               f"number of dimensions, but got {nd} dimensions for input, "
                               f"and {ni} dimensions for indices")
        if not nd:  # torch reads the size of dim d of the 0-d input
            raise no_dimensions(op, d)
        broadcast_shape(op, _without(input._data.shape, d), _without(idx._data.shape, d))
    res = TAKE_ALONG_DIM.door((input, idx), {"dim": d})
    return res if out is None else write_out(op, out, res)  # type: ignore[no-any-return]


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """torch.put: a copy of ``input`` (read as 1-D) with ``source`` written at ``index``;
    ``accumulate=True`` adds instead, duplicates included."""
    idx = index_tensor("put", index, LONG, "put(): Expected a long tensor for index, but got "
                       "{got}", input.device)
    tensor_arg("put", source, "source")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {scalar_type_name(input.dtype)} and source.dtype = "
                           f"{scalar_type_name(source.dtype)}")
    n = idx._data.size
    if source._data.size != n:
        raise IndexError(f"put(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source._data.size}, "
                         f"index.numel() = {n}")
    if input._data.size == 0 and n:
        raise IndexError("put(): tried to put into an empty tensor")
    return PUT.door((input, idx, source),  # type: ignore[no-any-return]
                    {"accumulate": bool(accumulate)})


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """torch.select: the view of ``input`` at ``index`` along ``dim`` (that dim removed)."""
    nd = input._data.ndim
    d = wrap_dim(as_dim(dim), nd, "select")
    if nd == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    return input[(slice(None),) * d + (operator.index(index),)]  # type: ignore[index]


METHODS: dict[str, Any] = {name: globals()[name] for name in FUNCTIONS}

METHODS.update({
    "scatter_": inplace(scatter, "scatter_", "any"),
    "scatter_add_": inplace(scatter_add, "scatter_add_", "any"),
    "scatter_reduce_": inplace(scatter_reduce, "scatter_reduce_", "any"),
    "index_add_": inplace(index_add, "index_add_", "any"),
    "index_copy_": inplace(index_copy, "index_copy_", "any"),
    "index_fill_": inplace(index_fill, "index_fill_"),
    "put_": inplace(put, "put_", "any"),
})
