"""Sorting and selection: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode.

Every sort here is stable: ties keep their input order and NaN sorts as the largest value,
which is torch's ``stable=True`` result and one valid result of its unstable sort. bfloat16
sorts and compares through float32 (exact), because ml_dtypes' bfloat16 has no working
``argsort`` or ``searchsorted``. Forwards take backend arrays and the params that ``record``
hands autograd, so the compiler can replay them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from .. import return_types as rt
from ..device import xp_of
from ..dispatch import register
from ..dtypes import scalar_type_name
from ..meta import Spec
from ..tensor import Tensor, make, wrap_dim
from .operands import record, write_out

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


# ----------------------------------------------------------------------------- public API

def _check_input(op: str, input: Any, refuse: str = "complex", error: type = RuntimeError
                 ) -> None:
    """``input`` must be a Tensor whose dtype category is not refused (bool and/or complex)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    cat = input.dtype.category
    if cat == 3 or (cat == 0 and refuse == "bool+complex"):
        raise error(f"{op}(): not implemented for '{scalar_type_name(input.dtype)}' tensors")


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


FUNCTIONS = [
    "sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode",
]

METHODS: dict[str, Callable[..., Any]] = {name: globals()[name] for name in FUNCTIONS}
