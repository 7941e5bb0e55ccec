"""Searching and counting: unique, unique_consecutive, searchsorted, bucketize, bincount,
histc, isin.

Like the sorts in ``sorting`` (whose comparison keys these share), they compare bfloat16
through float32, and ``unique`` sorts stably. Forwards take backend arrays and the params
that ``record`` hands autograd, so the compiler can replay them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import array_module, xp_of
from ..dispatch import register
from ..dtypes import scalar_type_name
from ..meta import Spec
from ..tensor import Tensor, make, wrap_dim
from .operands import as_array, common_device, scalar_result, write_out
from .sorting import _I64, _check_input, _keys

__all__: list[str] = []


# ----------------------------------------------------------------------------- forwards

def _run_outputs(values: Any, start: Any, order: Any, inverse_shape: tuple[int, ...],
                 return_inverse: bool, return_counts: bool) -> Any:
    """unique's outputs from the run starts of its (sorted or consecutive) sequence."""
    if not (return_inverse or return_counts):
        return values
    outputs = [values]
    if return_inverse:
        inverse = np.cumsum(start) - 1
        if order is not None:
            unsorted = xp_of(inverse).empty_like(inverse)
            unsorted[order] = inverse
            inverse = unsorted
        outputs.append(inverse.reshape(inverse_shape))
    if return_counts:
        outputs.append(np.diff(np.flatnonzero(start), append=start.shape[0]))
    return tuple(outputs)


def _run_starts(s: Any) -> Any:
    """True where a new value starts in ``s`` (rows of a 2-D ``s`` compare whole)."""
    start = xp_of(s).ones(s.shape[:1], bool)
    if s.ndim == 1:
        np.not_equal(s[1:], s[:-1], out=start[1:])
    else:
        np.any(s[1:] != s[:-1], axis=1, out=start[1:])
    return start


def _as_rows(x: Any, dim: int) -> tuple[Any, Any]:
    """``x`` with ``dim`` first, and its comparison keys as one row per index of ``dim``."""
    moved = np.moveaxis(x, dim, 0)
    return moved, _keys(moved).reshape(moved.shape[0], math.prod(moved.shape[1:]))


def _unique(x: Any, sorted: bool, return_inverse: bool, return_counts: bool,
            dim: int | None) -> Any:
    # Always sorted, as torch's CPU unique is for sorted=False too.
    if dim is None:
        flat = x.reshape(-1)
        order = np.argsort(_keys(flat), kind="stable")
        s = flat[order]
        start = _run_starts(_keys(s))
        return _run_outputs(s[start], start, order, x.shape, return_inverse, return_counts)
    moved, rows = _as_rows(x, dim)
    order = np.lexsort(rows.T[::-1]) if rows.shape[0] else xp_of(x).zeros(0, np.int64)
    start = _run_starts(rows[order])
    values = np.moveaxis(moved[order[start]], 0, dim)
    return _run_outputs(values, start, order, (x.shape[dim],), return_inverse, return_counts)


def _unique_consecutive(x: Any, return_inverse: bool, return_counts: bool,
                        dim: int | None) -> Any:
    if dim is None:
        flat = x.reshape(-1)
        start = _run_starts(_keys(flat))
        return _run_outputs(flat[start], start, None, x.shape, return_inverse, return_counts)
    moved, rows = _as_rows(x, dim)
    start = _run_starts(rows)
    values = np.moveaxis(moved[start], 0, dim)
    return _run_outputs(values, start, None, (x.shape[dim],), return_inverse, return_counts)


def _searchsorted(sorted_sequence: Any, input: Any, right: bool, sorter: Any,
                  out_int32: bool) -> Any:
    b, v = _keys(sorted_sequence), _keys(input)
    side: Literal["left", "right"] = "right" if right else "left"
    if b.ndim == 1:
        out = np.searchsorted(b, v.reshape(-1), side=side, sorter=sorter).reshape(v.shape)
    else:
        if sorter is not None:
            b = np.take_along_axis(b, sorter, -1)
        rows = math.prod(b.shape[:-1])
        out = _batched_searchsorted(b.reshape(rows, b.shape[-1]), v.reshape(rows, v.shape[-1]),
                                    right).reshape(v.shape)
    return out.astype(np.int32 if out_int32 else np.int64, copy=False)


def _batched_searchsorted(b: Any, v: Any, right: bool) -> Any:
    """Row-wise searchsorted by one stable sort of each row of boundaries and values merged.

    A value's answer is how many boundaries precede it in the merged order; putting the
    values first (left) or last (right) decides where they land among equal boundaries.
    """
    xp = xp_of(b)
    rows, n, m = b.shape[0], b.shape[1], v.shape[1]
    merged = xp.concatenate((b, v) if right else (v, b), axis=1)
    order = np.argsort(merged, axis=1, kind="stable")
    is_value = order >= n if right else order < m
    boundaries_before = np.cumsum(~is_value, axis=1)
    # Each row holds m values: scatter their counts to row * m + their index in the row.
    which = order[is_value] - (n if right else 0) + xp.repeat(xp.arange(0, rows * m, m), m)
    out = xp.empty(rows * m, np.int64)
    out[which] = boundaries_before[is_value]
    return out.reshape(rows, m)


def _bucketize(input: Any, boundaries: Any, right: bool, out_int32: bool) -> Any:
    return _searchsorted(boundaries, input, right, None, out_int32)


def _bincount(x: Any, weights: Any, minlength: int) -> Any:
    xp = xp_of(x)
    if x.size == 0:
        return xp.zeros(minlength, np.int64)  # torch: int64 even when weights are given
    if weights is None:
        return np.bincount(x, minlength=minlength).astype(np.int64, copy=False)
    out_dtype = np.float32 if weights.dtype == np.float32 else np.float64
    return np.bincount(x, weights.astype(np.float64), minlength).astype(out_dtype)


def _histc(x: Any, bins: int, min: float, max: float) -> Any:
    flat = _keys(x).reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and flat.size:
        lo, hi = float(flat.min()), float(flat.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    if lo > hi:
        raise RuntimeError(f"torch.histc: max must be larger than min (got min={lo}, max={hi})")
    # torch bins each element with arithmetic in the input's dtype, from edges in that dtype.
    scalar = x.dtype.type
    lo_t, hi_t = scalar(lo), scalar(hi)
    inside = x.reshape(-1)[(flat >= lo_t) & (flat <= hi_t)]
    pos = ((inside - lo_t) * scalar(bins) / (hi_t - lo_t)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)  # the last bin is closed on the right
    return np.bincount(pos, minlength=bins).astype(x.dtype)


def _isin(elements: Any, test_elements: Any, invert: bool) -> Any:
    return np.isin(_keys(elements), _keys(test_elements), invert=invert)


# ----------------------------------------------------------------------------- shape rules

def _search_rule(values_at: int) -> Callable[..., Spec]:
    def rule(*args: Any, out_int32: bool = False, **params: Any) -> Spec:
        values = args[values_at]
        return Spec(values.shape if isinstance(values, Spec) else (),
                    _dt.int32 if out_int32 else _I64)

    return rule


UNIQUE = register("unique", _unique, meta.DYNAMIC, differentiable=False)
UNIQUE_CONSECUTIVE = register("unique_consecutive", _unique_consecutive, meta.DYNAMIC,
                              differentiable=False)
SEARCHSORTED = register("searchsorted", _searchsorted, _search_rule(1), differentiable=False)
BUCKETIZE = register("bucketize", _bucketize, _search_rule(0), differentiable=False)
BINCOUNT = register("bincount", _bincount, meta.DYNAMIC, differentiable=False)
HISTC = register("histc", _histc, lambda x, bins, **p: Spec((bins,), x.dtype),
                 differentiable=False)
ISIN = register("isin", _isin,
                lambda e, t, **p: Spec(e.shape if isinstance(e, Spec) else (), _dt.bool),
                differentiable=False)


# ----------------------------------------------------------------------------- public API

def _unique_dim(op: str, input: Tensor, dim: int | None) -> int | None:
    _check_input(op, input, "complex", NotImplementedError)
    if dim is None:
        return None
    shape = input._data.shape
    if not shape:
        raise IndexError(f"{op}(): Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, len(shape), op)
    if input._data.size == 0 and shape[d] != 0:
        raise RuntimeError(f"{op}(): There are 0 sized dimensions, and they aren't selected, so "
                           f"unique cannot be applied (shape {list(shape)}, dim {d})")
    return d


def _wrap_unique(input: Tensor, result: Any) -> Any:
    dev = input.device
    if not isinstance(result, tuple):
        return make(result, input.dtype, dev)
    return (make(result[0], input.dtype, dev),) + tuple(make(r, _I64, dev) for r in result[1:])


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None) -> Any:
    """torch.unique: the distinct elements (or slices along ``dim``) in ascending order, with
    optional inverse indices and counts. NaNs are all distinct, as in torch."""
    d = _unique_dim("unique", input, dim)
    return _wrap_unique(input, _unique(input._data, sorted, return_inverse, return_counts, d))


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:
    """torch.unique_consecutive: collapse each run of equal consecutive elements (or slices
    along ``dim``) to one, with optional inverse indices and run lengths."""
    d = _unique_dim("unique_consecutive", input, dim)
    return _wrap_unique(input, _unique_consecutive(input._data, return_inverse, return_counts, d))


def _search_operands(op: str, boundaries: Tensor, values: Any) -> tuple[Any, Any, Any]:
    """Promote boundaries and values (a Tensor or a number) as torch does; returns both arrays
    and the device."""
    if isinstance(values, Tensor):
        dev = common_device(op, boundaries, values)
        dt = _dt.result_type(boundaries, values)
        v = as_array(values, dt, dev)
    else:
        if type(values) not in (int, float, bool):
            raise TypeError(f"{op}(): expected a Tensor or a number, got {type(values).__name__}")
        dev, dt = boundaries.device, scalar_result(boundaries.dtype, values)
        v = array_module(dev).asarray(values, dt.np)
    if dt.category in (0, 3):
        raise NotImplementedError(
            f'{op}(): "searchsorted" not implemented for {scalar_type_name(dt)}')
    return as_array(boundaries, dt, dev), v, dev


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, sorter: Tensor | None = None,
                 out: Tensor | None = None) -> Tensor:
    """torch.searchsorted: for each value, the index in ``sorted_sequence`` (innermost dim)
    where inserting it keeps the order; ``right``/``side='right'`` puts it after equal ones."""
    op = "torch.searchsorted()"
    if not isinstance(sorted_sequence, Tensor):
        raise TypeError(f"{op}: argument 'sorted_sequence' must be Tensor, not "
                        f"{type(sorted_sequence).__name__}")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{op}: side can only be 'left' or 'right' but got {side}")
        if side == "left" and right:
            raise RuntimeError(f"{op}: side and right can't be set to opposites, got side of "
                               "left while right was True")
        right = side == "right"
    bshape = sorted_sequence._data.shape
    if not bshape:
        raise RuntimeError(f"{op}: boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    vshape = input._data.shape if isinstance(input, Tensor) else ()
    if len(bshape) > 1:
        if not vshape:
            raise RuntimeError(f"{op}: input value can be a scalar only when boundaries tensor "
                               f"dimension is 1, but we got boundaries tensor dim({len(bshape)})")
        if len(vshape) != len(bshape) or vshape[:-1] != bshape[:-1]:
            raise RuntimeError(f"{op}: boundaries tensor should be 1 dimension or the first N-1 "
                               "dimensions of boundaries tensor and input value tensor must match, "
                               f"but we got boundaries tensor {list(bshape)} and input value "
                               f"tensor {list(vshape)}")
    sorter_data = None if sorter is None else _check_sorter(op, sorter, sorted_sequence)
    b, v, dev = _search_operands("searchsorted", sorted_sequence, input)
    res = make(_searchsorted(b, v, right, sorter_data, out_int32),
               _dt.int32 if out_int32 else _I64, dev)
    return res if out is None else write_out("searchsorted", out, res)


def _check_sorter(op: str, sorter: Tensor, boundaries: Tensor) -> Any:
    if sorter.dtype is not _I64:
        raise RuntimeError(f"{op}: sorter must be a tensor of long dtype but got dtype "
                           f"{scalar_type_name(sorter.dtype)}")
    if sorter._data.shape != boundaries._data.shape:
        raise RuntimeError(f"{op}: boundary and sorter must have the same size, but got boundary "
                           f"tensor {list(boundaries._data.shape)} and got sorter tensor "
                           f"{list(sorter._data.shape)}")
    data = sorter._data
    if data.size and (int(data.min()) < 0 or int(data.max()) >= boundaries._data.shape[-1]):
        raise RuntimeError(f"{op}: sorter index out of range")
    return data


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False,
              out: Tensor | None = None) -> Tensor:
    """torch.bucketize: the bucket of each value among 1-D ``boundaries``; ``right=False`` means
    ``boundaries[i-1] < x <= boundaries[i]``."""
    if not isinstance(boundaries, Tensor):
        raise TypeError("bucketize(): argument 'boundaries' must be Tensor, not "
                        f"{type(boundaries).__name__}")
    if boundaries._data.ndim != 1:
        raise RuntimeError("bucketize(): boundaries tensor must be 1 dimension, but got "
                           f"dim({boundaries._data.ndim})")
    b, v, dev = _search_operands("bucketize", boundaries, input)
    res = make(_bucketize(v, b, right, out_int32), _dt.int32 if out_int32 else _I64, dev)
    return res if out is None else write_out("bucketize", out, res)


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """torch.bincount: how often each value of a 1-D non-negative integer tensor occurs
    (or the sum of its ``weights``), with at least ``minlength`` bins."""
    _check_input("bincount", input, "bool+complex", NotImplementedError)
    if input.dtype.category != 1:
        raise NotImplementedError(
            f"bincount(): not implemented for '{scalar_type_name(input.dtype)}'")
    if isinstance(minlength, bool) or not hasattr(minlength, "__index__"):
        raise TypeError(f"bincount(): argument 'minlength' must be int, not "
                        f"{type(minlength).__name__}")
    minlength = minlength.__index__()
    if minlength < 0:
        raise RuntimeError(f"bincount(): minlength should be >= 0, got {minlength}")
    x = input._data
    if x.ndim != 1 or (x.size and int(x.min()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs "
                           f"(got shape {list(x.shape)})")
    w = None
    if weights is not None:
        if weights._data.shape != x.shape:
            raise RuntimeError("bincount(): weights should be 1-d and have the same length as "
                               f"input (got {list(weights._data.shape)} for input {list(x.shape)})")
        w = as_array(weights, weights.dtype, common_device("bincount", input, weights))
    counts = _bincount(x, w, minlength)
    return make(counts, _dt.from_numpy_dtype(counts.dtype), input.device)


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0, *,
          out: Tensor | None = None) -> Tensor:
    """torch.histc: counts of ``input`` in ``bins`` equal-width bins over ``[min, max]``
    (the data's range when both are equal); elements outside are ignored."""
    _check_input("histc", input, "bool+complex", NotImplementedError)
    if input.dtype.category != 2:
        raise NotImplementedError(f"histc(): not implemented for '{scalar_type_name(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histc(): bins must be > 0, but got {bins}")
    res = make(_histc(input._data, bins, min, max), input.dtype, input.device)
    return res if out is None else write_out("histc", out, res)


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False, out: Tensor | None = None) -> Tensor:
    """torch.isin: whether each of ``elements`` is in ``test_elements`` (compared in their
    promoted dtype); either may be a number."""
    if isinstance(elements, Tensor):
        e_t, t_t = elements, test_elements
    elif isinstance(test_elements, Tensor):
        e_t, t_t = test_elements, elements
    else:
        raise TypeError("isin(): expected at least one Tensor argument, got "
                        f"{type(elements).__name__} and {type(test_elements).__name__}")
    for t in (elements, test_elements):
        if isinstance(t, Tensor) and t.dtype.category in (0, 3):
            raise RuntimeError("Unsupported input type encountered for isin(): "
                               f"{scalar_type_name(t.dtype)}")
    a, b, dev = _search_operands("isin", e_t, t_t)
    if e_t is not elements:
        a, b = b, a
    res = make(_isin(a, b, invert), _dt.bool, dev)
    return res if out is None else write_out("isin", out, res)


FUNCTIONS = [
    "unique", "unique_consecutive", "searchsorted", "bucketize", "bincount", "histc", "isin",
]

METHODS: dict[str, Callable[..., Any]] = {
    name: globals()[name] for name in FUNCTIONS
    if name not in ("searchsorted", "bucketize", "isin")
}
