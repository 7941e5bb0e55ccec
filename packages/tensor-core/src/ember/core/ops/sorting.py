"""Sorting and selection: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode.

Every sort here is stable: ties keep their input order and NaN sorts as the largest value,
which is torch's ``stable=True`` result and one valid result of its unstable sort. bfloat16
sorts and compares through float32 (exact), because ml_dtypes' bfloat16 has no working
``argsort`` or ``searchsorted``.

Primitives (operand: the input; the selecting ones return ``(values, indices)``):

    sort argsort          {"dim", "descending"}    laid out like the input, as torch's
    topk                  {"k", "dim", "largest", "sorted"}
    kthvalue              {"k", "dim", "keepdim"}
    median_dim nanmedian_dim mode   {"dim", "keepdim"}
    median nanmedian      no params: the 0-d median of every element

Their other results are new row-major tensors, as torch's are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from .. import return_types as rt
from ..device import xp_of
from ..dispatch import dispatch, grad_mode, register
from ..dtypes import scalar_type_name
from ..tensor import Tensor, wrap_dim
from .copying import write_out
from .operands import not_implemented
from .reduction_args import named, reduction_rule

__all__: list[str] = []

_BF16 = _dt.bfloat16.np
_I64 = np.dtype(np.int64)
_SELF = ("self",)


def _keys(x: Any) -> Any:
    """``x`` in a dtype whose sort and comparisons are exact and fast."""
    return x.astype(np.float32) if x.dtype == _BF16 else x


def _reversed(dim: int) -> tuple[slice, ...]:
    return (slice(None),) * dim + (slice(None, None, -1),)


def _upto(dim: int, start: int, stop: int) -> tuple[slice, ...]:
    """The index of entries ``start:stop`` along ``dim``."""
    return (slice(None),) * dim + (slice(start, stop),)


def _argsort(x: Any, dim: int, descending: bool) -> Any:
    xp = xp_of(x)
    keys = _keys(x)
    if not descending:
        return xp.argsort(keys, axis=dim, kind="stable")
    # A stable ascending sort of the reversed input, reversed back, is a stable descending
    # sort: ties keep their input order and NaN (sorted last) comes first, as in torch.
    rev = _reversed(dim)
    return (keys.shape[dim] - 1) - xp.argsort(keys[rev], axis=dim, kind="stable")[rev]


# Below this size sorting values a second time beats numpy's take_along_axis overhead.
_SMALL = 1024


def _sorted_values(x: Any, idx: Any, dim: int, descending: bool) -> Any:
    """``x`` gathered at the sort indices ``idx``."""
    xp = xp_of(x)
    if x.size > _SMALL:
        return x[idx] if x.ndim == 1 else xp.take_along_axis(x, idx, axis=dim)
    # Any stable sort orders equal keys alike, so this equals the gather bit for bit
    # (-0.0 beside 0.0, NaN payloads).
    keys = _keys(x)
    if not descending:
        return xp.sort(keys, axis=dim, kind="stable").astype(x.dtype, copy=False)
    rev = _reversed(dim)
    return xp.sort(keys[rev], axis=dim, kind="stable")[rev].astype(x.dtype)


def _fresh(a: Any) -> Any:
    """``a`` as a new row-major array (gathers from a transposed input come out transposed;
    index slices are views)."""
    return a if a.base is None and a.flags.c_contiguous else a.copy()


def _no_index(x: Any) -> Any:
    return xp_of(x).zeros((), _I64)


# ----------------------------------------------------------------------------- forwards

def _sort(x: Any, *, dim: int, descending: bool = False) -> tuple[Any, Any]:
    if x.ndim == 0:
        return x.copy(), _no_index(x)
    idx = _argsort(x, dim, descending)
    return _sorted_values(x, idx, dim, descending), idx


def _argsort_forward(x: Any, *, dim: int, descending: bool = False) -> Any:
    return _no_index(x) if x.ndim == 0 else _argsort(x, dim, descending)


def _topk(x: Any, *, k: int, dim: int, largest: bool = True, sorted: bool = True
          ) -> tuple[Any, Any]:
    if x.ndim == 0:  # torch returns the element itself, for k=0 too
        return x.copy(), _no_index(x)
    xp = xp_of(x)
    n = x.shape[dim]
    if 0 < k and 4 * k < n and n > 256:
        # Select in O(n), then sort only the k winners (in index order first, so that
        # ties keep their input order as in the full sort).
        keys = _keys(x)
        part = xp.argpartition(keys, n - k if largest else k - 1, axis=dim)
        part = xp.sort(part[_upto(dim, n - k, n) if largest else _upto(dim, 0, k)], axis=dim)
        order = _argsort(xp.take_along_axis(keys, part, dim), dim, largest)
        idx = xp.take_along_axis(part, order, dim)
        return _fresh(xp.take_along_axis(x, idx, dim)), _fresh(idx)
    values, idx = _sort(x, dim=dim, descending=largest)
    return values[_upto(dim, 0, k)].copy(), idx[_upto(dim, 0, k)].copy()


def _keep(values: Any, indices: Any, dim: int, keepdim: bool) -> tuple[Any, Any]:
    """Results computed with ``dim`` kept as size 1, dropped unless ``keepdim``, as new
    row-major arrays."""
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return _fresh(values), _fresh(indices)


def _kthvalue(x: Any, *, k: int, dim: int, keepdim: bool = False) -> tuple[Any, Any]:
    if x.ndim == 0:
        return x.copy(), _no_index(x)
    xp = xp_of(x)
    idx = xp.argpartition(_keys(x), k - 1, axis=dim)[_upto(dim, k - 1, k)]
    return _keep(xp.take_along_axis(x, idx, dim), idx, dim, keepdim)


def _median_dim(x: Any, dim: int, keepdim: bool, ignore_nan: bool) -> tuple[Any, Any]:
    """torch's index is the median's position in a stable sort; with NaN present, median
    returns the first NaN and nanmedian the lower median of the rest."""
    if x.ndim == 0:
        return x.copy(), _no_index(x)
    xp = xp_of(x)
    keys = _keys(x)
    n = x.shape[dim]
    order = xp.argsort(keys, axis=dim, kind="stable")
    if keys.dtype.kind == "f":
        nans = np.isnan(keys).sum(axis=dim, keepdims=True)
        pos = (np.maximum(n - nans - 1, 0) // 2 if ignore_nan
               else xp.where(nans > 0, n - nans, (n - 1) // 2))
        idx = xp.take_along_axis(order, pos, dim)
    else:
        idx = order[_upto(dim, (n - 1) // 2, (n + 1) // 2)]
    return _keep(xp.take_along_axis(x, idx, dim), idx, dim, keepdim)


def _median_dim_forward(x: Any, *, dim: int, keepdim: bool = False) -> tuple[Any, Any]:
    return _median_dim(x, dim, keepdim, False)


def _nanmedian_dim_forward(x: Any, *, dim: int, keepdim: bool = False) -> tuple[Any, Any]:
    return _median_dim(x, dim, keepdim, True)


def _median_all(x: Any, ignore_nan: bool) -> Any:
    xp = xp_of(x)
    flat = _keys(x).reshape(-1)
    if flat.dtype.kind == "f":
        nan = np.isnan(flat)
        if ignore_nan:
            flat = flat[~nan]
        elif nan.any():
            return xp.full((), np.nan, x.dtype)
    if flat.size == 0:
        # NaN in the dtype, as torch fills it (True for bool, nan+0j for complex); an integer
        # dtype gets the processor's conversion of NaN, as in torch (on x86: the lowest
        # int64 and int32, and 0 for the narrower types, whose conversion goes through int32)
        with np.errstate(invalid="ignore"):
            return xp.full((), np.nan).astype(x.dtype)
    m = (flat.size - 1) // 2
    return xp.partition(flat, m)[m:m + 1].reshape(()).astype(x.dtype)


def _median_forward(x: Any) -> Any:
    return _median_all(x, False)


def _nanmedian_forward(x: Any) -> Any:
    return _median_all(x, True)


def _mode(x: Any, *, dim: int, keepdim: bool = False) -> tuple[Any, Any]:
    """The smallest most frequent value along ``dim``, and the index of its last occurrence."""
    if x.ndim == 0:
        return x.copy(), _no_index(x)
    xp = xp_of(x)
    rows = xp.moveaxis(x, dim, -1)
    keys = _keys(rows)
    order = xp.argsort(keys, axis=-1, kind="stable")
    s = xp.take_along_axis(keys, order, -1)
    starts = xp.ones(s.shape, bool)
    np.not_equal(s[..., 1:], s[..., :-1], out=starts[..., 1:])
    ends = xp.ones(s.shape, bool)
    ends[..., :-1] = starts[..., 1:]
    # Runs are numbered across all rows at once; a row's first entry always starts a run.
    run = xp.cumsum(starts.reshape(-1)) - 1
    length = xp.bincount(run)[run].reshape(s.shape)
    # The first run end reaching the longest length closes the smallest most frequent value.
    end = xp.argmax(xp.where(ends, length, 0), axis=-1)[..., None]
    idx = xp.take_along_axis(order, end, -1)
    values = xp.moveaxis(xp.take_along_axis(rows, idx, -1), -1, dim)
    return _keep(values, xp.moveaxis(idx, -1, dim), dim, keepdim)


# ----------------------------------------------------------------------------- meta rules

def _sort_rule(x: Any, *, dim: int, descending: bool = False) -> tuple[Any, Any]:
    strides = meta.like_strides(x.shape, meta.element_strides(x))
    return meta.strided(x.shape, x.dtype, strides), meta.strided(x.shape, _I64, strides)


def _argsort_rule(x: Any, *, dim: int, descending: bool = False) -> Any:
    return _sort_rule(x, dim=dim)[1]


def _topk_rule(x: Any, *, k: int, dim: int, largest: bool = True, sorted: bool = True
               ) -> tuple[Any, Any]:
    shape = list(x.shape)
    if shape:
        shape[dim] = k
    return meta.empty(shape, x.dtype), meta.empty(shape, _I64)


_reduced = reduction_rule("same")


def _selected_rule(x: Any, *, dim: int, keepdim: bool = False, k: int = 1) -> tuple[Any, Any]:
    """kthvalue, median and mode along ``dim``: the value and its int64 index."""
    values = _reduced(x, dim, keepdim)
    return values, meta.empty(values.shape, _I64)


SORT = register("sort", _sort, _sort_rule, arg_names=_SELF)
ARGSORT = register("argsort", _argsort_forward, _argsort_rule, differentiable=False,
                   arg_names=_SELF)
TOPK = register("topk", _topk, _topk_rule, arg_names=_SELF)
KTHVALUE = register("kthvalue", _kthvalue, _selected_rule, arg_names=_SELF)
MEDIAN = register("median", _median_forward, _reduced, arg_names=_SELF)
NANMEDIAN = register("nanmedian", _nanmedian_forward, _reduced, arg_names=_SELF)
MEDIAN_DIM = register("median_dim", _median_dim_forward, _selected_rule, arg_names=_SELF)
NANMEDIAN_DIM = register("nanmedian_dim", _nanmedian_dim_forward, _selected_rule,
                         arg_names=_SELF)
MODE = register("mode", _mode, _selected_rule, arg_names=_SELF)


# ----------------------------------------------------------------------------- public API

def _check_input(op: str, input: Any, refuse: str = "complex", error: type = RuntimeError
                 ) -> None:
    """``input`` must be a Tensor whose dtype category is not refused (bool and/or complex)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    cat = input.dtype.category
    if cat == 3 or (cat == 0 and refuse == "bool+complex"):
        raise error(f"{op}(): not implemented for '{scalar_type_name(input.dtype)}' tensors")


def _tensor_input(op: str, input: Any) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input


def _check_kernel(kernel: str, input: Tensor, refuse: str) -> None:
    """torch's dtype dispatch of a selecting kernel, which runs after its shape checks:
    complex (and bool where ``refuse`` says so) is not built."""
    cat = input.dtype.category
    if cat == 3 or (cat == 0 and refuse == "bool+complex"):
        raise not_implemented(kernel, input.dtype)


def _nonempty_dim(op: str, input: Tensor, dim: int) -> int:
    d = wrap_dim(dim, input._data.ndim, op)
    if input._data.ndim and input._data.shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
    return d


def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool | None = False,
         out: Any = None) -> Any:
    """torch.sort: ``(values, indices)`` sorted along ``dim``; always stable (ties keep their
    order), NaN sorts as the largest value."""
    _check_input("sort", input)
    params = {"dim": wrap_dim(dim, input._data.ndim, "sort"), "descending": bool(descending)}
    return named(rt.sort, "sort", dispatch(SORT, (input,), params), out)


def argsort(input: Tensor, dim: int = -1, descending: bool = False, *,
            stable: bool = False) -> Tensor:
    """torch.argsort: the indices that sort ``input`` along ``dim`` (stable)."""
    _check_input("argsort", input)
    params = {"dim": wrap_dim(dim, input._data.ndim, "argsort"), "descending": bool(descending)}
    if input._requires_grad and input.dtype.category < 2 and grad_mode.enabled:
        # torch's argsort is sort's indices: its values of an integer tensor with a history
        # (an in-place comparison's) are refused a history of their own
        raise RuntimeError(f"Autograd not support dtype: {scalar_type_name(input.dtype)}")
    return dispatch(ARGSORT, (input,), params)  # type: ignore[no-any-return]


def msort(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.msort: ``input`` sorted along its first dimension (``sort(input, 0).values``)."""
    values = sort(input, 0).values
    return values if out is None else write_out("msort", out, values)


def _size(input: Tensor, d: int) -> int:
    """The length of dim ``d`` (1 for a 0-d tensor, as torch counts it)."""
    return input._data.shape[d] if input._data.ndim else 1


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True, *,
         out: Any = None) -> Any:
    """torch.topk: the ``k`` largest (or smallest) entries along ``dim`` and their indices,
    returned in sorted order."""
    _check_input("topk", input, "bool+complex")
    d = wrap_dim(dim, input._data.ndim, "topk")
    if not 0 <= k <= _size(input, d):
        raise RuntimeError(f"topk(): selected index k out of range (k={k}, size of dim {d} is "
                           f"{_size(input, d)})")
    params = {"k": k, "dim": d, "largest": bool(largest), "sorted": bool(sorted)}
    return named(rt.topk, "topk", dispatch(TOPK, (input,), params), out)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False, *,
             out: Any = None) -> Any:
    """torch.kthvalue: the ``k``-th smallest entry (1-based) along ``dim`` and its index.

    torch's order: the dim, its size, ``k``, then the dtype (a 0-d tensor, copied, takes
    any dtype)."""
    _tensor_input("kthvalue", input)
    d = _nonempty_dim("kthvalue", input, dim)
    if not 1 <= k <= _size(input, d):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d} "
                           f"(k={k}, size {_size(input, d)})")
    if input._data.ndim:
        _check_kernel("kthvalue_cpu", input, "bool+complex")
    params = {"k": k, "dim": d, "keepdim": bool(keepdim)}
    return named(rt.kthvalue, "kthvalue", dispatch(KTHVALUE, (input,), params), out)


def _median(op: str, full: Any, by_dim: Any, kind: type) -> Any:
    def fn(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
           out: Any = None) -> Any:
        # torch's order: without dim an empty input gives NaN in its dtype before the dtype
        # dispatch; with dim, the dim and its size come before the dtype
        _tensor_input(op, input)
        if dim is None:
            if keepdim:
                raise TypeError(f'{op}() missing 1 required positional arguments: "dim"')
            if input._data.size:
                _check_kernel("median_cpu", input, "bool+complex")
            res = dispatch(full, (input,), None)
            return res if out is None else write_out(op, out, res)
        params = {"dim": _nonempty_dim("median", input, dim), "keepdim": bool(keepdim)}
        _check_kernel("median_out", input, "bool+complex")
        return named(kind, op, dispatch(by_dim, (input,), params), out)

    fn.__name__ = fn.__qualname__ = op
    return fn


median = _median("median", MEDIAN, MEDIAN_DIM, rt.median)
median.__doc__ = """torch.median: without ``dim`` the lower median of all elements (NaN if any is
NaN); with ``dim``, ``(values, indices)`` of the lower median along it."""
nanmedian = _median("nanmedian", NANMEDIAN, NANMEDIAN_DIM, rt.nanmedian)
nanmedian.__doc__ = """torch.nanmedian: ``median`` ignoring NaN (NaN only where all are NaN)."""


def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *, out: Any = None) -> Any:
    """torch.mode: the most frequent value along ``dim`` (the smallest among equally frequent
    ones) and the index of its last occurrence."""
    _tensor_input("mode", input)
    params = {"dim": _nonempty_dim("mode", input, dim), "keepdim": bool(keepdim)}
    if input._data.ndim and input._data.size:  # torch returns empty and 0-d inputs first
        _check_kernel("mode_cpu", input, "complex")
    return named(rt.mode, "mode", dispatch(MODE, (input,), params), out)


FUNCTIONS = [
    "sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode",
]

METHODS: dict[str, Callable[..., Any]] = {name: globals()[name] for name in FUNCTIONS}
