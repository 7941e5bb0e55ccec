"""Searching and counting: unique, unique_consecutive, searchsorted, bucketize, bincount,
histc, isin.

Like the sorts in ``sorting`` (whose comparison keys these share), they compare bfloat16
through float32, and ``unique`` sorts stably. Tensors the ops read besides the input are
operands (boundaries, values, sorter, weights, test elements); a Python number among
them joins as it is and becomes an array of the promoted dtype in the forward:

    unique                (x; sorted, return_inverse, return_counts, dim)     data-dependent
    unique_consecutive    (x; return_inverse, return_counts, dim)             data-dependent
    searchsorted          (sorted_sequence, input, sorter; right, out_int32)
    bucketize             (input, boundaries; right, out_int32)
    bincount              (x, weights; minlength)                             data-dependent
    histc                 (x; bins, min, max)
    isin                  (elements, test_elements; invert)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import xp_of
from ..dispatch import dispatch, register
from ..dtypes import scalar_type_name
from ..tensor import Tensor, wrap_dim
from .copying import write_out
from .geometry import view_strides
from .introsort import std_sort
from .operands import common_device, not_implemented, overflow_error, promote
from .sorting import _I64, _SELF, _check_input, _keys

__all__: list[str] = []


def _array(value: Any, like: Any) -> Any:
    """An operand as an array: a Python number (already converted for the promoted dtype)
    becomes a 0-d array of ``like``'s dtype, on its device."""
    if hasattr(value, "dtype"):
        return value
    return xp_of(like).asarray(value, like.dtype)


# ----------------------------------------------------------------------------- forwards

def _run_outputs(values: Any, start: Any, order: Any, inverse_shape: tuple[int, ...],
                 return_inverse: bool, return_counts: bool) -> Any:
    """unique's outputs from the run starts of its (sorted or consecutive) sequence."""
    if not (return_inverse or return_counts):
        return values
    xp = xp_of(start)
    outputs = [values]
    if return_inverse:
        inverse = xp.cumsum(start, dtype=_I64) - 1
        if order is not None:
            unsorted = xp.empty_like(inverse)
            unsorted[order] = inverse
            inverse = unsorted
        outputs.append(inverse.reshape(inverse_shape))
    if return_counts:
        outputs.append(xp.diff(xp.flatnonzero(start), append=start.shape[0]).astype(_I64))
    return tuple(outputs)


def _run_starts(s: Any) -> Any:
    """True where a new value starts in ``s`` (rows of a 2-D ``s`` compare whole)."""
    xp = xp_of(s)
    start = xp.ones(s.shape[:1], bool)
    if s.ndim == 1:
        np.not_equal(s[1:], s[:-1], out=start[1:])
    else:
        xp.any(s[1:] != s[:-1], axis=1, out=start[1:])
    return start


def _as_rows(x: Any, dim: int) -> tuple[Any, Any]:
    """``x`` with ``dim`` first, and its comparison keys as one row per index of ``dim``."""
    moved = xp_of(x).moveaxis(x, dim, 0)
    return moved, _keys(moved).reshape(moved.shape[0], math.prod(moved.shape[1:]))


def _row_order(rows: Any) -> Any:
    """The order torch's unique(dim) sorts ``rows`` in: ``std::sort`` by a lexicographic
    ``<``. Where NaN breaks that order, or more than 16 rows (``std::sort`` is stable on
    fewer) hold zeros of both signs, which equal rows can differ in, the result is the
    algorithm's (``introsort``); else it is any stable sort's."""
    xp = xp_of(rows)
    n = rows.shape[0]
    if not n:
        return xp.zeros(0, _I64)
    if rows.dtype.kind == "f" and (xp.isnan(rows).any() or n > 16 and _signed_zeros(rows)):
        keys = [tuple(r) for r in rows.tolist()]
        order = std_sort(list(range(n)), lambda a, b: _row_less(keys[a], keys[b]))
        return xp.asarray(order, _I64)
    return xp.lexsort(rows.T[::-1])


def _signed_zeros(a: Any) -> bool:
    """Whether ``a`` holds zeros of both signs."""
    zeros = a[a == 0]
    return 0 < int(xp_of(a).signbit(zeros).sum()) < zeros.size


def _row_less(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    """torch's comparison of two rows: the first element that is less or greater decides
    (NaN is neither)."""
    for u, v in zip(a, b):
        if u < v:
            return True
        if u > v:
            return False
    return False


def _rows_back(rows: Any, dim: int) -> Any:
    """The kept rows (``dim`` first) as the result: torch stacks them row-major and moves
    ``dim`` back, a view of that block."""
    xp = xp_of(rows)
    return xp.moveaxis(xp.ascontiguousarray(rows), 0, dim)


def _unique(x: Any, *, sorted: bool = True, return_inverse: bool = False,
            return_counts: bool = False, dim: int | None = None) -> Any:
    # Always sorted, as torch's CPU unique is for sorted=False too.
    xp = xp_of(x)
    if dim is None:
        flat = x.reshape(-1)
        order = xp.argsort(_keys(flat), kind="stable")
        s = flat[order]
        start = _run_starts(_keys(s))
        return _run_outputs(s[start], start, order, x.shape, return_inverse, return_counts)
    moved, rows = _as_rows(x, dim)
    order = _row_order(rows)
    start = _run_starts(rows[order])
    values = _rows_back(moved[order[start]], dim)
    return _run_outputs(values, start, order, (x.shape[dim],), return_inverse, return_counts)


def _unique_consecutive(x: Any, *, return_inverse: bool = False, return_counts: bool = False,
                        dim: int | None = None) -> Any:
    if dim is None:
        flat = x.reshape(-1)
        start = _run_starts(_keys(flat))
        return _run_outputs(flat[start], start, None, x.shape, return_inverse, return_counts)
    moved, rows = _as_rows(x, dim)
    start = _run_starts(rows)
    values = _rows_back(moved[start], dim)
    return _run_outputs(values, start, None, (x.shape[dim],), return_inverse, return_counts)


def _searchsorted(sorted_sequence: Any, input: Any, sorter: Any = None, *, right: bool = False,
                  out_int32: bool = False) -> Any:
    xp = xp_of(sorted_sequence)
    b, v = _keys(sorted_sequence), _keys(_array(input, sorted_sequence))
    if sorter is not None and sorter.size and (
            int(sorter.min()) < 0 or int(sorter.max()) >= b.shape[-1]):
        raise RuntimeError("torch.searchsorted(): sorter index out of range")
    side: Literal["left", "right"] = "right" if right else "left"
    if b.ndim == 1:
        out = xp.searchsorted(b, v.reshape(-1), side=side, sorter=sorter).reshape(v.shape)
    else:
        if sorter is not None:
            b = xp.take_along_axis(b, sorter, -1)
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
    if not m:
        return xp.empty((rows, 0), np.int64)  # no values: nothing to merge
    merged = xp.concatenate((b, v) if right else (v, b), axis=1)
    order = xp.argsort(merged, axis=1, kind="stable")
    is_value = order >= n if right else order < m
    boundaries_before = xp.cumsum(~is_value, axis=1)
    # Each row holds m values: scatter their counts to row * m + their index in the row.
    which = order[is_value] - (n if right else 0) + xp.repeat(xp.arange(0, rows * m, m), m)
    out = xp.empty(rows * m, np.int64)
    out[which] = boundaries_before[is_value]
    return out.reshape(rows, m)


def _bucketize(input: Any, boundaries: Any, *, right: bool = False,
               out_int32: bool = False) -> Any:
    return _searchsorted(boundaries, input, right=right, out_int32=out_int32)


def _bincount(x: Any, weights: Any = None, *, minlength: int = 0) -> Any:
    xp = xp_of(x)
    if x.size == 0:
        return xp.zeros(minlength, np.int64)  # torch: int64 even when weights are given
    if int(x.min()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs "
                           f"(got shape {list(x.shape)})")
    if weights is None:
        return xp.bincount(x, minlength=minlength).astype(np.int64, copy=False)
    out_dtype = np.float32 if weights.dtype == np.float32 else np.float64
    return xp.bincount(x, weights.astype(np.float64), minlength).astype(out_dtype)


def _outer_edges(flat: Any, min: float, max: float, dt: _dt.dtype) -> tuple[float, float]:
    """histc's outer bin edges as torch selects them: ``[min, max]``, the range of the
    elements ``flat`` where both are equal, one wider each way where that is empty;
    checked finite and ordered, then (as the edges are laid out in the input's dtype
    ``dt``) checked to fit it."""
    lo, hi = float(min), float(max)
    if lo == hi and flat.size:
        lo, hi = float(flat.min()), float(flat.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    # strict for integer inputs; torch's float kernel bins a range that vanishes in double
    # (3e38 +- 1) in its middle bin
    if lo > hi or lo == hi and dt.category < 2:
        raise RuntimeError(f"torch.histc: max must be larger than min (got min={lo}, max={hi})")
    least, most = _dt.LIMITS[dt]
    if not (float(least) <= lo and hi <= float(most)):  # compared in double, as torch
        raise overflow_error(dt)
    return lo, hi


def _histc(x: Any, *, bins: int, min: float, max: float) -> Any:
    xp = xp_of(x)
    flat = _keys(x).reshape(-1)
    lo, hi = _outer_edges(flat, min, max, _dt.from_numpy_dtype(x.dtype))
    # torch bins each element with arithmetic in the input's dtype, from edges in that dtype.
    scalar, values = x.dtype.type, x.reshape(-1)
    lo_t, hi_t = scalar(lo), scalar(hi)
    if lo_t == hi_t:  # a range that vanishes in the dtype (1e8 +- 1 in float32): bin in double
        scalar = np.float64
        lo_t, hi_t = scalar(lo), scalar(hi)
        values = flat = flat.astype(np.float64)
    inside = values[(flat >= lo_t) & (flat <= hi_t)]
    if lo_t == hi_t:  # not even double separates the edges (3e38 +- 1): torch's middle bin
        return xp.bincount(xp.full(inside.shape, bins // 2), minlength=bins).astype(x.dtype)
    pos = ((inside - lo_t) * scalar(bins) / (hi_t - lo_t)).astype(np.int64)
    pos = xp.minimum(pos, bins - 1)  # the last bin is closed on the right
    return xp.bincount(pos, minlength=bins).astype(x.dtype)


def _isin(elements: Any, test_elements: Any, *, invert: bool = False) -> Any:
    like = elements if hasattr(elements, "dtype") else test_elements
    a, b = _array(elements, like), _array(test_elements, like)
    return xp_of(like).isin(_keys(a), _keys(b), invert=invert)


# ----------------------------------------------------------------------------- meta rules

def _search_rule(values_at: int) -> Callable[..., Any]:
    """The indices take the values' shape (a number's is ``()``), row-major."""

    def rule(*operands: Any, out_int32: bool = False, **params: Any) -> Any:
        values = operands[values_at]
        shape = values.shape if hasattr(values, "shape") else ()
        return meta.empty(shape, np.int32 if out_int32 else np.int64)

    return rule


def _histc_rule(x: Any, *, bins: int, **params: Any) -> Any:
    return meta.empty((bins,), x.dtype)


def _isin_rule(elements: Any, test_elements: Any, *, invert: bool = False) -> Any:
    """A row-major mask of the elements' shape (a number's is 0-d)."""
    return meta.empty(elements.shape if hasattr(elements, "shape") else (), np.bool_)


# torch records unique and bincount (their backward raises: no derivative is implemented)
UNIQUE = register("unique", _unique, meta.DYNAMIC, arg_names=_SELF)
UNIQUE_CONSECUTIVE = register("unique_consecutive", _unique_consecutive, meta.DYNAMIC,
                              arg_names=_SELF)
SEARCHSORTED = register("searchsorted", _searchsorted, _search_rule(1), differentiable=False,
                        arg_names=("sorted_sequence", "self", "sorter"))
BUCKETIZE = register("bucketize", _bucketize, _search_rule(0), differentiable=False,
                     arg_names=("self", "boundaries"))
BINCOUNT = register("bincount", _bincount, meta.DYNAMIC, arg_names=("self", "weights"))
HISTC = register("histc", _histc, _histc_rule, differentiable=False, arg_names=_SELF)
ISIN = register("isin", _isin, _isin_rule, differentiable=False,
                arg_names=("elements", "test_elements"))


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
    if input._data.size == 0 and shape.count(0) > 1:
        raise RuntimeError(f"{op}(): Number of zero sized dimensions is more than one, so unique "
                           f"cannot be applied (shape {list(shape)})")
    return d


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None) -> Any:
    """torch.unique: the distinct elements (or slices along ``dim``) in ascending order, with
    optional inverse indices and counts. NaNs are all distinct, as in torch."""
    params = {"sorted": bool(sorted), "return_inverse": bool(return_inverse),
              "return_counts": bool(return_counts), "dim": _unique_dim("unique", input, dim)}
    return dispatch(UNIQUE, (input,), params)


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:
    """torch.unique_consecutive: collapse each run of equal consecutive elements (or slices
    along ``dim``) to one, with optional inverse indices and run lengths."""
    params = {"return_inverse": bool(return_inverse), "return_counts": bool(return_counts),
              "dim": _unique_dim("unique_consecutive", input, dim)}
    return dispatch(UNIQUE_CONSECUTIVE, (input,), params)


def _search_operands(op: str, tensor: Tensor, other: Any, also: list[Tensor] | None = None
                     ) -> list[Any]:
    """``tensor`` and ``other`` (a Tensor or a number) promoted as torch promotes them, on
    the device they share with ``also``. torch's kernel has no bool or complex loop; it
    returns before choosing one where there is no value to look up."""
    if not isinstance(other, (Tensor, int, float, bool, complex)):
        raise TypeError(f"{op}(): expected a Tensor or a number, got {type(other).__name__}")
    operands, dt, _ = promote(op, (tensor, other), also)
    if dt.category in (0, 3) and (not isinstance(other, Tensor) or other._data.size):
        raise not_implemented("searchsorted_out_cpu", dt)
    return operands


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
    if sorter is not None:
        _check_sorter(op, sorter, sorted_sequence)
    b, v = _search_operands("searchsorted", sorted_sequence, input,
                            None if sorter is None else [sorter])
    res = dispatch(SEARCHSORTED, (b, v, sorter), {"right": bool(right),
                                                  "out_int32": bool(out_int32)})
    return res if out is None else write_out("searchsorted", out, res)


def _check_sorter(op: str, sorter: Tensor, boundaries: Tensor) -> None:
    """What torch checks of ``sorter`` before searching (its range is checked on the data)."""
    if sorter.dtype is not _dt.int64:
        raise RuntimeError(f"{op}: sorter must be a tensor of long dtype but got dtype "
                           f"{scalar_type_name(sorter.dtype)}")
    if sorter._data.shape != boundaries._data.shape:
        raise RuntimeError(f"{op}: boundary and sorter must have the same size, but got boundary "
                           f"tensor {list(boundaries._data.shape)} and got sorter tensor "
                           f"{list(sorter._data.shape)}")


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
    b, v = _search_operands("bucketize", boundaries, input)
    res = dispatch(BUCKETIZE, (v, b), {"right": bool(right), "out_int32": bool(out_int32)})
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
    shape = input._data.shape
    if len(shape) != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs "
                           f"(got shape {list(shape)})")
    if weights is not None:
        if weights._data.shape != shape:
            raise RuntimeError("bincount(): weights should be 1-d and have the same length as "
                               f"input (got {list(weights._data.shape)} for input {list(shape)})")
        common_device("bincount", input, weights)
    return dispatch(BINCOUNT, (input, weights),  # type: ignore[no-any-return]
                    {"minlength": minlength})


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0, *,
          out: Tensor | None = None) -> Tensor:
    """torch.histc: counts of ``input`` in ``bins`` equal-width bins over ``[min, max]``
    (the data's range when both are equal); elements outside are ignored."""
    _check_input("histc", input, "bool+complex", NotImplementedError)
    if bins <= 0:
        raise RuntimeError(f"torch.histc(): bins must be > 0, but got {bins}")
    if input.dtype.category != 2 and input.device.type != "meta":  # torch's meta takes ints
        _outer_edges(input._data.reshape(-1), min, max, input.dtype)  # torch selects them first
        raise not_implemented("histogram_cpu", input.dtype)
    res = dispatch(HISTC, (input,), {"bins": int(bins), "min": float(min), "max": float(max)})
    return res if out is None else write_out("histc", out, res)


def _check_flat_view(elements: Any, test: Tensor, promoted: Any) -> None:
    """torch's CPU isin compares few test elements one by one, after ``view(-1)`` of them
    in the promoted dtype: where their layout has no flat view, and no cast copies them
    row-major (a cast keeps the strides of a dense layout: a permuted one's), that view
    fails (a RuntimeError), as in torch."""
    n_elements = elements._data.size if isinstance(elements, Tensor) else 1
    n_test = test._data.size
    if not n_elements or n_test >= int(10.0 * n_elements ** 0.145):
        return  # torch returns early, or sorts (which flattens with a copy)
    shape, strides = tuple(test._data.shape), tuple(test.stride())
    if isinstance(promoted, Tensor) and promoted.dtype is not test.dtype and \
            not meta.is_non_overlapping_and_dense(shape, strides):
        return
    if view_strides(shape, strides, (n_test,), 1) is None:
        raise RuntimeError("isin(): view size is not compatible with input tensor's size and "
                           "stride (at least one dimension spans across two contiguous "
                           "subspaces). Use .reshape(...) instead.")


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False, out: Tensor | None = None) -> Tensor:
    """torch.isin: whether each of ``elements`` is in ``test_elements`` (compared in their
    promoted dtype); either may be a number."""
    if isinstance(elements, Tensor):
        tensor, other = elements, test_elements
    elif isinstance(test_elements, Tensor):
        tensor, other = test_elements, elements
    else:
        raise TypeError("isin(): expected at least one Tensor argument, got "
                        f"{type(elements).__name__} and {type(test_elements).__name__}")
    for t in (elements, test_elements):
        if isinstance(t, Tensor) and t.dtype.category in (0, 3):
            raise RuntimeError("Unsupported input type encountered for isin(): "
                               f"{scalar_type_name(t.dtype)}")
    a, b = _search_operands("isin", tensor, other)
    if tensor is not elements:
        a, b = b, a
    if isinstance(test_elements, Tensor):
        _check_flat_view(elements, test_elements, b)
    res = dispatch(ISIN, (a, b), {"invert": bool(invert)})
    return res if out is None else write_out("isin", out, res)


FUNCTIONS = [
    "unique", "unique_consecutive", "searchsorted", "bucketize", "bincount", "histc", "isin",
]

METHODS: dict[str, Callable[..., Any]] = {
    name: globals()[name] for name in FUNCTIONS
    if name not in ("searchsorted", "bucketize", "isin")
}
