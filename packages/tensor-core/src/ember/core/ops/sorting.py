"""Sorting, selection and uniqueness: sort, topk, kthvalue, median, mode, unique, searchsorted,
bucketize, bincount, histc, isin.

Every sort here is stable: ties keep their input order and NaN sorts as the largest value,
which is torch's ``stable=True`` result and one valid result of its unstable sort. bfloat16
sorts and compares through float32 (exact), because ml_dtypes' bfloat16 has no working
``argsort`` or ``searchsorted``. Forwards take backend arrays and the params that ``record``
hands autograd, so the compiler can replay them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from .. import dtypes as _dt
from .. import meta
from .. import return_types as rt
from ..device import array_module, xp_of
from ..dispatch import register
from ..meta import Spec
from ..tensor import Tensor, make, wrap_dim
from .operands import _pretty, as_array, common_device, record, scalar_result, write_out

__all__: list[str] = []

_BF16 = _dt.bfloat16.np
_I64 = _dt.int64
_tuple_new = tuple.__new__


def _keys(x: Any) -> Any:
    """``x`` in a dtype whose sort and comparisons are exact and fast."""
    return x.astype(np.float32) if x.dtype == _BF16 else x


def _reversed(dim: int) -> tuple[slice, ...]:
    return (slice(None),) * dim + (slice(None, None, -1),)


def _argsort(x: Any, dim: int, descending: bool) -> Any:
    keys = _keys(x)
    if not descending:
        return np.argsort(keys, axis=dim, kind="stable")
    # A stable ascending sort of the reversed input, reversed back, is a stable descending
    # sort: ties keep their input order and NaN (sorted last) comes first, as in torch.
    rev = _reversed(dim)
    return (keys.shape[dim] - 1) - np.argsort(keys[rev], axis=dim, kind="stable")[rev]


# Below this size sorting values a second time beats numpy's take_along_axis overhead.
_SMALL = 1024


def _sorted_values(x: Any, idx: Any, dim: int, descending: bool) -> Any:
    """``x`` gathered at the sort indices ``idx``."""
    if x.size > _SMALL:
        return x[idx] if x.ndim == 1 else np.take_along_axis(x, idx, axis=dim)
    # Any stable sort orders equal keys alike, so this equals the gather bit for bit
    # (-0.0 beside 0.0, NaN payloads).
    keys = _keys(x)
    if not descending:
        return np.sort(keys, axis=dim, kind="stable").astype(x.dtype, copy=False)
    rev = _reversed(dim)
    return np.sort(keys[rev], axis=dim, kind="stable")[rev].astype(x.dtype)


def _first(x: Any, dim: int, k: int) -> Any:
    """The first ``k`` entries of ``x`` along ``dim``, as a new contiguous array."""
    return x[(slice(None),) * dim + (slice(0, k),)].copy()


# ----------------------------------------------------------------------------- forwards

def _sort(x: Any, dim: int, descending: bool) -> tuple[Any, Any]:
    if x.ndim == 0:
        return x.copy(), xp_of(x).zeros((), np.int64)
    idx = _argsort(x, dim, descending)
    return _sorted_values(x, idx, dim, descending), idx


def _argsort_forward(x: Any, dim: int, descending: bool) -> Any:
    return xp_of(x).zeros((), np.int64) if x.ndim == 0 else _argsort(x, dim, descending)


def _topk(x: Any, k: int, dim: int, largest: bool, sorted: bool) -> tuple[Any, Any]:
    if x.ndim == 0:  # torch returns the element itself, for k=0 too
        return x.copy(), xp_of(x).zeros((), np.int64)
    n = x.shape[dim]
    if 0 < k and 4 * k < n and n > 256:
        # Select in O(n), then sort only the k winners (in index order first, so that
        # ties keep their input order as in the full sort).
        keys = _keys(x)
        part = np.argpartition(keys, n - k if largest else k - 1, axis=dim)
        part = np.sort(part[(slice(None),) * dim + (slice(n - k, n) if largest else slice(0, k),)],
                       axis=dim)
        idx = np.take_along_axis(part, _argsort(np.take_along_axis(keys, part, dim), dim, largest),
                                 dim)
        return np.take_along_axis(x, idx, dim), idx
    values, idx = _sort(x, dim, largest)
    return _first(values, dim, k), _first(idx, dim, k)


def _keep(arrays: tuple[Any, Any], dim: int, keepdim: bool) -> tuple[Any, Any]:
    """Results computed with ``dim`` kept as size 1, dropped unless ``keepdim``, as new C-order
    arrays (gathers from a transposed input come out transposed; index slices are views)."""
    if not keepdim:
        arrays = arrays[0].squeeze(dim), arrays[1].squeeze(dim)
    return tuple(a if a.base is None and a.flags.c_contiguous else a.copy()  # type: ignore
                 for a in arrays)


def _kthvalue(x: Any, k: int, dim: int, keepdim: bool) -> tuple[Any, Any]:
    if x.ndim == 0:
        return x.copy(), xp_of(x).zeros((), np.int64)
    idx = np.argpartition(_keys(x), k - 1, axis=dim)[(slice(None),) * dim + (slice(k - 1, k),)]
    return _keep((np.take_along_axis(x, idx, dim), idx), dim, keepdim)


def _median_dim(x: Any, dim: int, keepdim: bool, ignore_nan: bool) -> tuple[Any, Any]:
    """torch's index is the median's position in a stable sort; with NaN present, median
    returns the first NaN and nanmedian the lower median of the rest."""
    if x.ndim == 0:
        return x.copy(), xp_of(x).zeros((), np.int64)
    keys = _keys(x)
    n = x.shape[dim]
    order = np.argsort(keys, axis=dim, kind="stable")
    if keys.dtype.kind == "f":
        nans = np.isnan(keys).sum(axis=dim, keepdims=True)
        pos = (np.maximum(n - nans - 1, 0) // 2 if ignore_nan
               else np.where(nans > 0, n - nans, (n - 1) // 2))
        idx = np.take_along_axis(order, pos, dim)
    else:
        idx = order[(slice(None),) * dim + (slice((n - 1) // 2, (n + 1) // 2),)]
    return _keep((np.take_along_axis(x, idx, dim), idx), dim, keepdim)


def _median_all(x: Any, ignore_nan: bool) -> Any:
    flat = _keys(x).reshape(-1)
    if flat.dtype.kind == "f":
        nan = np.isnan(flat)
        if ignore_nan:
            flat = flat[~nan]
        elif nan.any():
            return xp_of(x).full((), np.nan, x.dtype)
    if flat.size == 0:
        if x.dtype.kind != "f" and x.dtype != _BF16:
            raise RuntimeError(f"median(): cannot take the median of an empty tensor of dtype "
                               f"{_dt.from_numpy_dtype(x.dtype)}")
        return xp_of(x).full((), np.nan, x.dtype)
    m = (flat.size - 1) // 2
    return np.partition(flat, m)[m:m + 1].reshape(()).astype(x.dtype, copy=False)


def _mode(x: Any, dim: int, keepdim: bool) -> tuple[Any, Any]:
    """The smallest most frequent value along ``dim``, and the index of its last occurrence."""
    if x.ndim == 0:
        return x.copy(), xp_of(x).zeros((), np.int64)
    xp = xp_of(x)
    rows = np.moveaxis(x, dim, -1)
    keys = _keys(rows)
    order = np.argsort(keys, axis=-1, kind="stable")
    s = np.take_along_axis(keys, order, -1)
    starts = xp.ones(s.shape, bool)
    np.not_equal(s[..., 1:], s[..., :-1], out=starts[..., 1:])
    ends = xp.ones(s.shape, bool)
    ends[..., :-1] = starts[..., 1:]
    # Runs are numbered across all rows at once; a row's first entry always starts a run.
    run = np.cumsum(starts.reshape(-1)) - 1
    length = np.bincount(run)[run].reshape(s.shape)
    # The first run end reaching the longest length closes the smallest most frequent value.
    end = np.argmax(np.where(ends, length, 0), axis=-1)[..., None]
    idx = np.take_along_axis(order, end, -1)
    values = np.moveaxis(np.take_along_axis(rows, idx, -1), -1, dim)
    return _keep((values, np.moveaxis(idx, -1, dim)), dim, keepdim)


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

def _with_indices(values_rule: Callable[..., Spec]) -> Callable[..., tuple[Spec, Spec]]:
    def rule(x: Spec, *args: Any, **params: Any) -> tuple[Spec, Spec]:
        values = values_rule(x, *args, **params)
        return values, Spec(values.shape, _I64)

    return rule


def _same(x: Spec, *args: Any, **params: Any) -> Spec:
    return x


def _topk_shape(x: Spec, k: int, dim: int, **params: Any) -> Spec:
    shape = list(x.shape)
    if shape:
        shape[dim] = k
    return Spec(tuple(shape), x.dtype)


def _search_rule(values_at: int) -> Callable[..., Spec]:
    def rule(*args: Any, out_int32: bool = False, **params: Any) -> Spec:
        values = args[values_at]
        return Spec(values.shape if isinstance(values, Spec) else (),
                    _dt.int32 if out_int32 else _I64)

    return rule


SORT = register("sort", _sort, _with_indices(_same))
ARGSORT = register("argsort", _argsort_forward, lambda x, **p: Spec(x.shape, _I64),
                   differentiable=False)
TOPK = register("topk", _topk, _with_indices(_topk_shape))
KTHVALUE = register("kthvalue", _kthvalue, _with_indices(meta.reduction("same")))
MEDIAN = register("median", lambda x: _median_all(x, False), meta.reduction("same"))
NANMEDIAN = register("nanmedian", lambda x: _median_all(x, True), meta.reduction("same"))
MEDIAN_DIM = register("median_dim", lambda x, dim, keepdim: _median_dim(x, dim, keepdim, False),
                      _with_indices(meta.reduction("same")))
NANMEDIAN_DIM = register("nanmedian_dim",
                         lambda x, dim, keepdim: _median_dim(x, dim, keepdim, True),
                         _with_indices(meta.reduction("same")))
MODE = register("mode", _mode, _with_indices(meta.reduction("same")))
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

def _check_input(op: str, input: Any, refuse: str = "complex", error: type = RuntimeError
                 ) -> None:
    """``input`` must be a Tensor whose dtype category is not refused (bool and/or complex)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    cat = input.dtype.category
    if cat == 3 or (cat == 0 and refuse == "bool+complex"):
        raise error(f"{op}(): not implemented for '{_pretty(input.dtype)}' tensors")


def _nonempty_dim(op: str, input: Tensor, dim: int) -> int:
    d = wrap_dim(dim, input._data.ndim, op)
    if input._data.ndim and input._data.shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
    return d


def _out(op: str, out: Any, result: tuple[Tensor, ...]) -> Any:
    """Implements ``out=(values, indices)`` for ops returning a torch.return_types tuple."""
    if not isinstance(out, (tuple, list)) or len(out) != len(result):
        raise TypeError(f"{op}(): argument 'out' must be tuple of {len(result)} Tensors")
    return _tuple_new(type(result), [write_out(op, o, r) for o, r in zip(out, result)])


def _pair(kind: type, values: Any, indices: Any, input: Tensor) -> Any:
    dev = input.device
    return _tuple_new(kind, (make(values, input.dtype, dev), make(indices, _I64, dev)))


def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool | None = False,
         out: Any = None) -> Any:
    """torch.sort: ``(values, indices)`` sorted along ``dim``; always stable (ties keep their
    order), NaN sorts as the largest value."""
    _check_input("sort", input)
    d = wrap_dim(dim, input._data.ndim, "sort")
    res = _pair(rt.sort, *_sort(input._data, d, descending), input)
    if input._requires_grad:
        record(SORT, (input,), {"dim": d, "descending": descending}, res)
    return res if out is None else _out("sort", out, res)


def argsort(input: Tensor, dim: int = -1, descending: bool = False, *,
            stable: bool = False) -> Tensor:
    """torch.argsort: the indices that sort ``input`` along ``dim`` (stable)."""
    _check_input("argsort", input)
    d = wrap_dim(dim, input._data.ndim, "argsort")
    return make(_argsort_forward(input._data, d, descending), _I64, input.device)


def msort(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.msort: ``input`` sorted along its first dimension (``sort(input, 0).values``)."""
    values = sort(input, 0).values
    return values if out is None else write_out("msort", out, values)


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True, *,
         out: Any = None) -> Any:
    """torch.topk: the ``k`` largest (or smallest) entries along ``dim`` and their indices,
    returned in sorted order."""
    _check_input("topk", input, "bool+complex")
    x = input._data
    d = wrap_dim(dim, x.ndim, "topk")
    if not 0 <= k <= (x.shape[d] if x.ndim else 1):
        raise RuntimeError(f"topk(): selected index k out of range (k={k}, size of dim {d} is "
                           f"{x.shape[d] if x.ndim else 1})")
    res = _pair(rt.topk, *_topk(x, k, d, largest, sorted), input)
    if input._requires_grad:
        record(TOPK, (input,), {"k": k, "dim": d, "largest": largest, "sorted": sorted}, res)
    return res if out is None else _out("topk", out, res)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False, *,
             out: Any = None) -> Any:
    """torch.kthvalue: the ``k``-th smallest entry (1-based) along ``dim`` and its index."""
    _check_input("kthvalue", input, "bool+complex", NotImplementedError)
    d = _nonempty_dim("kthvalue", input, dim)
    x = input._data
    if not 1 <= k <= (x.shape[d] if x.ndim else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d} "
                           f"(k={k}, size {x.shape[d] if x.ndim else 1})")
    res = _pair(rt.kthvalue, *_kthvalue(x, k, d, keepdim), input)
    if input._requires_grad:
        record(KTHVALUE, (input,), {"k": k, "dim": d, "keepdim": keepdim}, res)
    return res if out is None else _out("kthvalue", out, res)


def _median(op: str, full: Any, by_dim: Any, kind: type, ignore_nan: bool) -> Any:
    def fn(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
           out: Any = None) -> Any:
        _check_input(op, input, "bool+complex", NotImplementedError)
        if dim is None:
            if keepdim:
                raise TypeError(f'{op}() missing 1 required positional arguments: "dim"')
            res = make(_median_all(input._data, ignore_nan), input.dtype, input.device)
            if input._requires_grad:
                record(full, (input,), None, res)
            return res if out is None else write_out(op, out, res)
        d = _nonempty_dim("median", input, dim)
        pair = _pair(kind, *_median_dim(input._data, d, keepdim, ignore_nan), input)
        if input._requires_grad:
            record(by_dim, (input,), {"dim": d, "keepdim": keepdim}, pair)
        return pair if out is None else _out(op, out, pair)

    fn.__name__ = fn.__qualname__ = op
    return fn


median = _median("median", MEDIAN, MEDIAN_DIM, rt.median, False)
median.__doc__ = """torch.median: without ``dim`` the lower median of all elements (NaN if any is
NaN); with ``dim``, ``(values, indices)`` of the lower median along it."""
nanmedian = _median("nanmedian", NANMEDIAN, NANMEDIAN_DIM, rt.nanmedian, True)
nanmedian.__doc__ = """torch.nanmedian: ``median`` ignoring NaN (NaN only where all are NaN)."""


def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *, out: Any = None) -> Any:
    """torch.mode: the most frequent value along ``dim`` (the smallest among equally frequent
    ones) and the index of its last occurrence."""
    _check_input("mode", input, "complex", NotImplementedError)
    d = _nonempty_dim("mode", input, dim)
    res = _pair(rt.mode, *_mode(input._data, d, keepdim), input)
    if input._requires_grad:
        record(MODE, (input,), {"dim": d, "keepdim": keepdim}, res)
    return res if out is None else _out("mode", out, res)


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
        raise NotImplementedError(f'{op}(): "searchsorted" not implemented for {_pretty(dt)}')
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
                           f"{_pretty(sorter.dtype)}")
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
        raise NotImplementedError(f"bincount(): not implemented for '{_pretty(input.dtype)}'")
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
        raise NotImplementedError(f"histc(): not implemented for '{_pretty(input.dtype)}'")
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
            raise RuntimeError(f"Unsupported input type encountered for isin(): {_pretty(t.dtype)}")
    a, b, dev = _search_operands("isin", e_t, t_t)
    if e_t is not elements:
        a, b = b, a
    res = make(_isin(a, b, invert), _dt.bool, dev)
    return res if out is None else write_out("isin", out, res)


FUNCTIONS = [
    "sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode", "unique",
    "unique_consecutive", "searchsorted", "bucketize", "bincount", "histc", "isin",
]

METHODS: dict[str, Callable[..., Any]] = {
    name: globals()[name] for name in FUNCTIONS
    if name not in ("searchsorted", "bucketize", "isin")
}
