"""Reductions: sum, mean, prod, var/std, logsumexp, all/any; the helpers of the family.

Max/min live in ``minmax.py``, norms in ``norms.py`` and scans (cumsum...) in ``scan.py``;
this module installs them all. Each is one primitive whose xp forward takes the recorded
params as keywords. ``dim`` is a tuple of non-negative dims, or None for all of them (also
for every reduction of a 0-d tensor), except where torch takes a single int:

    sum nansum mean nanmean prod   {"dim", "keepdim", "dtype"}   dtype: ember dtype or None
    var std                        {"dim", "keepdim", "correction"}
    amax amin logsumexp all any    {"dim", "keepdim"}            all/any: dim=() is no-op
    norm                           {"dim", "keepdim", "p"}       the vector p-norm, p a float
    nuclear_norm                   {"dim", "keepdim"}            dim: the two matrix dims
    count_nonzero                  {"dim"}
    max min (with dim)             {"dim": int, "keepdim"}       out: (values, indices)
    argmax argmin                  {"dim": int or None, "keepdim"}
    cumsum cumprod                 {"dim": int, "dtype"}
    cummax cummin                  {"dim": int}                  out: (values, indices)
    logcumsumexp                   {"dim": int}

float16 and bfloat16 accumulate in float32 and round once, as torch does.
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from .. import return_types as rt
from ..device import xp_of
from ..dispatch import Op, register
from ..dtypes import scalar_type_name
from ..tensor import Tensor, make, wrap_dim
from .operands import not_implemented, record, write_out

_F32, _F64 = _dt.float32, _dt.float64
_NP_F32 = np.dtype(np.float32)
_NP_I64 = np.dtype(np.int64)
_HALF = {_dt.float16.np, _dt.bfloat16.np}
# Typed Any: numpy's stubs cannot follow reductions whose keepdims is a runtime bool.
_add_reduce: Any = np.add.reduce
_mul_reduce: Any = np.multiply.reduce


def _by_method(ufunc_reduce: Any, method: str) -> Any:
    """numpy's ufunc reduction for numpy arrays (the fastest entry), the array method for
    CuPy arrays, whose ``maximum``/``minimum``/``logical_*`` ufuncs have no ``reduce``."""

    def reduce(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        if x.__class__ is np.ndarray:
            return ufunc_reduce(x, axis=axis, keepdims=keepdims)
        return getattr(x, method)(axis=axis, keepdims=keepdims)

    return reduce


_max_reduce = _by_method(np.maximum.reduce, "max")
_min_reduce = _by_method(np.minimum.reduce, "min")
_all_reduce = _by_method(np.logical_and.reduce, "all")
_any_reduce = _by_method(np.logical_or.reduce, "any")
_generic = np.generic
_Dims = tuple[int, ...] | None


# ----------------------------------------------------------------------------- helpers

def _array(r: Any) -> Any:
    """numpy reductions over everything return scalars; tensors hold 0-d arrays."""
    return np.asarray(r) if isinstance(r, _generic) else r


def _index(op: str, d: Any) -> int:
    try:
        return operator.index(d)
    except TypeError:
        raise TypeError(f"{op}(): argument 'dim' must be int or tuple of ints, not "
                        f"{type(d).__name__}") from None


def _dims(op: str, dim: Any, ndim: int, empty_is_all: bool = True) -> _Dims:
    """``dim`` (None, an int or a sequence) as a tuple of unique non-negative dims, or None
    for all dims (also for a 0-d input, which has nothing to reduce)."""
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        if not dim and empty_is_all:
            return None
        dims = tuple(wrap_dim(_index(op, d), ndim, op) for d in dim)
        for i, d in enumerate(dims):
            if d in dims[:i]:
                raise RuntimeError(f"{op}(): dim {d} appears multiple times in the list of dims")
    else:
        dims = (wrap_dim(_index(op, dim), ndim, op),)
    return None if ndim == 0 else dims


def _one_dim(op: str, dim: Any, ndim: int) -> int:
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
    return wrap_dim(_index(op, dim), ndim, op)


def _count(shape: tuple[int, ...], dims: _Dims) -> int:
    if dims is None:
        return math.prod(shape)
    return math.prod(shape[d] for d in dims)


def _squeeze(r: Any, dims: _Dims) -> Any:
    return r.reshape(()) if dims is None else np.squeeze(r, axis=dims)


def _real(np_dtype: np.dtype) -> np.dtype:
    return np_dtype if np_dtype.kind != "c" else np.dtype(np_dtype.char.lower())


def _finish(op: Op, name: str, input: Tensor, r: Any, out: Tensor | None, params: Any) -> Tensor:
    r = _array(r)
    res = make(r, _dt.from_numpy_dtype(r.dtype), input.device)
    if input._requires_grad:
        record(op, (input,), params, res)
    return res if out is None else write_out(name, out, res)


def _named(kind: Any, *items: Tensor) -> Any:
    """A torch.return_types tuple (typed Any: the generated classes confuse type checkers)."""
    return kind(*items)


def _finish_pair(op: Op, name: str, input: Tensor, pair: tuple[Any, Any], kind: Any,
                 out: Any, params: Any) -> Any:
    values = make(_array(pair[0]), input.dtype, input.device)
    indices = make(_array(pair[1]), _dt.int64, input.device)
    if input._requires_grad:
        record(op, (input,), params, (values, indices))
    if out is not None:
        values, indices = write_out(name, out[0], values), write_out(name, out[1], indices)
    return kind(values, indices)


def _rule(result: str, real: bool = False) -> Callable[..., meta.Spec]:
    """meta.reduction, honouring an explicit ``dtype`` and complex -> real results."""
    base = meta.reduction(result)

    def rule(x: meta.Spec, dim: Any = None, keepdim: bool = False, dtype: Any = None,
             **params: Any) -> meta.Spec:
        spec = base(x, dim, keepdim)
        if dtype is not None:
            return meta.Spec(spec.shape, dtype)
        if real and spec.dtype.category == 3:
            return meta.Spec(spec.shape, spec.dtype.to_real())
        return spec

    return rule


_bool_rule = meta.reduction("bool")


def _rule_logical(x: meta.Spec, dim: Any = None, keepdim: bool = False) -> meta.Spec:
    spec = _bool_rule(x, dim, keepdim)
    return meta.Spec(spec.shape, _dt.uint8) if x.dtype is _dt.uint8 else spec


def _target(x: Any, dtype: _dt.dtype | None, integers_widen: bool) -> tuple[Any, np.dtype, Any]:
    """(input cast as torch casts it, result numpy dtype, accumulation dtype)."""
    target = x.dtype
    if dtype is not None:
        target = dtype.np
        if x.dtype != target:
            x = x.astype(target)
    elif integers_widen and target.kind in "biu":
        target = _NP_I64
    return x, target, (_NP_F32 if target in _HALF else target)


def _check_not_complex(kernel: str, input: Tensor) -> None:
    """Where torch has no complex kernel it raises NotImplementedError naming the kernel."""
    if input.dtype.category == 3:
        raise not_implemented(kernel, input.dtype)


# ----------------------------------------------------------------------------- sums

def _sum_forward(x: Any, dim: _Dims = None, keepdim: bool = False,
                 dtype: _dt.dtype | None = None) -> Any:
    x, target, acc = _target(x, dtype, True)
    r = _add_reduce(x, axis=dim, dtype=acc, keepdims=keepdim)
    return r if acc is target else r.astype(target)


def _nansum_forward(x: Any, dim: _Dims = None, keepdim: bool = False,
                    dtype: _dt.dtype | None = None) -> Any:
    if x.dtype.kind == "f" or x.dtype in _HALF:
        x = np.where(np.isnan(x), np.zeros((), x.dtype), x)
    return _sum_forward(x, dim, keepdim, dtype)


def _mean_forward(x: Any, dim: _Dims = None, keepdim: bool = False,
                  dtype: _dt.dtype | None = None, skip_nan: bool = False) -> Any:
    x, target, acc = _target(x, dtype, False)
    if skip_nan:
        nan = np.isnan(x)
        n = _add_reduce(~nan, axis=dim, keepdims=keepdim)
        x = np.where(nan, np.zeros((), x.dtype), x)
    else:
        n = _count(x.shape, dim)
    total = _add_reduce(x, axis=dim, dtype=acc, keepdims=keepdim)
    if skip_nan or n == 0:  # 0 / 0 is the nan torch returns; numpy would warn about it
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.true_divide(total, n).astype(target, copy=False)
    return np.true_divide(total, n).astype(target, copy=False)


def _nanmean_forward(x: Any, dim: _Dims = None, keepdim: bool = False,
                     dtype: _dt.dtype | None = None) -> Any:
    return _mean_forward(x, dim, keepdim, dtype, skip_nan=True)


def _prod_forward(x: Any, dim: _Dims = None, keepdim: bool = False,
                  dtype: _dt.dtype | None = None) -> Any:
    x, target, acc = _target(x, dtype, True)
    r = _mul_reduce(x, axis=dim, dtype=acc, keepdims=keepdim)
    return r if acc is target else r.astype(target)


SUM = register("sum", _sum_forward, _rule("sum"), "reduction")
NANSUM = register("nansum", _nansum_forward, _rule("sum"), "reduction")
MEAN = register("mean", _mean_forward, _rule("same"), "reduction")
NANMEAN = register("nanmean", _nanmean_forward, _rule("same"), "reduction")
PROD = register("prod", _prod_forward, _rule("sum"), "reduction")


def _sum_like(op: Op, name: str, input: Tensor, dim: Any, keepdim: bool, dtype: Any,
              out: Tensor | None) -> Tensor:
    dims = _dims(name, dim, input._data.ndim)
    keepdim = bool(keepdim) and input._data.ndim > 0
    if dtype is not None:
        dtype = _dt.to_dtype(dtype)
    r = op.forward(input._data, dims, keepdim, dtype)
    return _finish(op, name, input, r, out, {"dim": dims, "keepdim": keepdim, "dtype": dtype})


def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
        out: Tensor | None = None) -> Tensor:
    """torch.sum: the sum over ``dim`` (all dims by default); bool and integer inputs sum
    to int64 unless ``dtype`` says otherwise."""
    if dim is None and dtype is None and out is None:
        dt = input.dtype
        if dt is _F32 or dt is _F64:  # the hot path: a float tensor summed to a scalar
            r = _add_reduce(input._data, None)
            res = make(np.asarray(r) if isinstance(r, _generic) else r, dt, input.device)
            if input._requires_grad:
                record(SUM, (input,), {"dim": None, "keepdim": False, "dtype": None}, res)
            return res
    return _sum_like(SUM, "sum", input, dim, keepdim, dtype, out)


def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
           out: Tensor | None = None) -> Tensor:
    """torch.nansum: sum treating NaN as zero."""
    if input.dtype.category == 3:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    return _sum_like(NANSUM, "nansum", input, dim, keepdim, dtype, out)


def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
         out: Tensor | None = None) -> Tensor:
    """torch.mean: floating or complex input (or ``dtype``) only; the mean of nothing is nan."""
    if dtype is not None:
        dtype = _dt.to_dtype(dtype)
        if dtype.category < 2:
            raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be "
                               "either a floating point or complex dtype. Got: "
                               f"{scalar_type_name(dtype)}")
    elif input.dtype.category < 2:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {scalar_type_name(input.dtype)}")
    elif dim is None and out is None and (input.dtype is _F32 or input.dtype is _F64):
        data = input._data
        if data.size:  # the common case, kept flat
            r = _add_reduce(data, None) / data.size
            res = make(np.asarray(r) if isinstance(r, _generic) else r, input.dtype,
                       input.device)
            if input._requires_grad:
                record(MEAN, (input,), {"dim": None, "keepdim": False, "dtype": None}, res)
            return res
    return _sum_like(MEAN, "mean", input, dim, keepdim, dtype, out)


def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
            out: Tensor | None = None) -> Tensor:
    """torch.nanmean: the mean of the non-NaN elements."""
    if input.dtype.category < 2:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {scalar_type_name(input.dtype)}")
    if input.dtype.category == 3:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    return _sum_like(NANMEAN, "nanmean", input, dim, keepdim, dtype, out)


def prod(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
         out: Tensor | None = None) -> Tensor:
    """torch.prod: the product over one ``dim`` or all elements; ints give int64."""
    if dim is not None:
        dim = _one_dim("prod", dim, input._data.ndim)
    return _sum_like(PROD, "prod", input, dim, keepdim, dtype, out)


# ----------------------------------------------------------------------------- var, std

def _var_forward(x: Any, dim: _Dims = None, keepdim: bool = False,
                 correction: float = 1.0) -> Any:
    w = x.astype(_NP_F32) if x.dtype in _HALF else x
    n = _count(x.shape, dim)
    if n > correction and n > 0:
        return _var(w, dim, keepdim, n, n - correction).astype(_real(x.dtype), copy=False)
    with np.errstate(invalid="ignore", divide="ignore"):  # torch's inf and nan, silently
        r = _var(w, dim, keepdim, n, builtins.max(0.0, n - correction))
    return r.astype(_real(x.dtype), copy=False)


def _var(w: Any, dim: _Dims, keepdim: bool, n: int, dof: float) -> Any:
    # Two passes: the deviations from the mean are squared, not the raw values.
    dev = w - np.true_divide(_add_reduce(w, axis=dim, keepdims=True), n)
    sq = dev.real * dev.real + dev.imag * dev.imag if dev.dtype.kind == "c" else dev * dev
    return np.true_divide(_add_reduce(sq, axis=dim, keepdims=keepdim), dof)


def _std_forward(x: Any, dim: _Dims = None, keepdim: bool = False,
                 correction: float = 1.0) -> Any:
    target = _real(x.dtype)
    w = x.astype(_NP_F32) if x.dtype in _HALF else x
    return np.sqrt(_var_forward(w, dim, keepdim, correction)).astype(target, copy=False)


VAR = register("var", _var_forward, _rule("same", real=True), "reduction")
STD = register("std", _std_forward, _rule("same", real=True), "reduction")


def _var_like(op: Op, name: str, input: Tensor, dim: Any, unbiased: Any, keepdim: bool,
              correction: Any, out: Tensor | None) -> Tensor:
    if isinstance(dim, bool):  # the legacy form std(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}(): pass either 'unbiased' or 'correction', not both")
    if correction is None:
        correction = 0.0 if unbiased is False else 1.0
    if input.dtype.category < 2:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = _dims(name, dim, input._data.ndim)
    keepdim = bool(keepdim) and input._data.ndim > 0
    r = op.forward(input._data, dims, keepdim, float(correction))
    return _finish(op, name, input, r, out,
                   {"dim": dims, "keepdim": keepdim, "correction": float(correction)})


def var(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: Any = None, out: Tensor | None = None) -> Tensor:
    """torch.var: sum of squared deviations over ``N - correction`` (default correction 1)."""
    return _var_like(VAR, "var", input, dim, unbiased, keepdim, correction, out)


def std(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: Any = None, out: Tensor | None = None) -> Tensor:
    """torch.std: the square root of ``var`` with the same arguments."""
    return _var_like(STD, "std", input, dim, unbiased, keepdim, correction, out)


def var_mean(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
             *, correction: Any = None) -> Any:
    """torch.var_mean: ``(var, mean)`` over the same dims."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    v = var(input, dim, unbiased, keepdim, correction=correction)
    return _named(rt.var_mean, v, mean(input, dim, keepdim))


def std_mean(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
             *, correction: Any = None) -> Any:
    """torch.std_mean: ``(std, mean)`` over the same dims."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    s = std(input, dim, unbiased, keepdim, correction=correction)
    return _named(rt.std_mean, s, mean(input, dim, keepdim))


# ----------------------------------------------------------------------------- logsumexp

def _logsumexp_forward(x: Any, dim: _Dims = None, keepdim: bool = False) -> Any:
    if x.dtype.kind in "biu":
        x = x.astype(_dt.get_default_dtype().np)
    w = x.astype(_NP_F32) if x.dtype in _HALF else x
    with np.errstate(invalid="ignore", divide="ignore"):
        # Shift by the largest real part; an infinite or empty maximum shifts by 0 instead,
        # so rows of -inf give -inf and a +inf element gives +inf.
        # (no ``initial=``: CuPy's reductions lack it; an empty reduction shifts by 0)
        m = (_max_reduce(w.real, axis=dim, keepdims=True) if w.size
             else xp_of(w).zeros(_reduced_shape(w.shape, dim), w.real.dtype))
        m = np.where(np.isfinite(m), m, np.zeros((), m.dtype))
        r = np.log(_add_reduce(np.exp(w - m), axis=dim, keepdims=True)) + m
    if not keepdim:
        r = _squeeze(r, dim)
    return r.astype(x.dtype, copy=False)


def _reduced_shape(shape: tuple[int, ...], dim: _Dims) -> tuple[int, ...]:
    dims = range(len(shape)) if dim is None else (dim,) if isinstance(dim, int) else dim
    return tuple(1 if i in dims else n for i, n in enumerate(shape))


LOGSUMEXP = register("logsumexp", _logsumexp_forward, _rule("float"), "reduction")


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False, *,
              out: Tensor | None = None) -> Tensor:
    """torch.logsumexp: ``log(sum(exp(input)))`` over ``dim``, computed without overflow."""
    ndim = input._data.ndim
    if isinstance(dim, (tuple, list)) and not dim and ndim:
        raise RuntimeError("logsumexp(): expected at least one dim to reduce, got dim=()")
    dims = _dims("logsumexp", dim, ndim)
    keepdim = bool(keepdim) and ndim > 0
    r = LOGSUMEXP.forward(input._data, dims, keepdim)
    return _finish(LOGSUMEXP, "logsumexp", input, r, out, {"dim": dims, "keepdim": keepdim})


# ----------------------------------------------------------------------------- all, any

def _all_forward(x: Any, dim: _Dims = None, keepdim: bool = False) -> Any:
    r = _all_reduce(x != 0, axis=dim, keepdims=keepdim)
    return r.astype(np.uint8) if x.dtype == np.uint8 else r


def _any_forward(x: Any, dim: _Dims = None, keepdim: bool = False) -> Any:
    r = _any_reduce(x != 0, axis=dim, keepdims=keepdim)
    return r.astype(np.uint8) if x.dtype == np.uint8 else r


def _count_nonzero_forward(x: Any, dim: _Dims = None) -> Any:
    return _add_reduce(x != 0, axis=dim, dtype=_NP_I64)


ALL = register("all", _all_forward, _rule_logical, "reduction", False)
ANY = register("any", _any_forward, _rule_logical, "reduction", False)
COUNT_NONZERO = register("count_nonzero", _count_nonzero_forward, _rule("index"), "reduction",
                         False)


def _logical(op: Op, name: str, input: Tensor, dim: Any, keepdim: bool,
             out: Tensor | None) -> Tensor:
    dims = _dims(name, dim, input._data.ndim, empty_is_all=False)
    keepdim = bool(keepdim) and input._data.ndim > 0
    r = op.forward(input._data, dims, keepdim)
    return _finish(op, name, input, r, out, {"dim": dims, "keepdim": keepdim})


def all(input: Tensor, dim: Any = None, keepdim: bool = False, *,
        out: Tensor | None = None) -> Tensor:
    """torch.all: whether every element over ``dim`` is non-zero (uint8 input gives uint8)."""
    return _logical(ALL, "all", input, dim, keepdim, out)


def any(input: Tensor, dim: Any = None, keepdim: bool = False, *,
        out: Tensor | None = None) -> Tensor:
    """torch.any: whether some element over ``dim`` is non-zero (uint8 input gives uint8)."""
    return _logical(ANY, "any", input, dim, keepdim, out)


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """torch.count_nonzero: the number of non-zero elements over ``dim``, as int64."""
    dims = _dims("count_nonzero", dim, input._data.ndim)
    r = COUNT_NONZERO.forward(input._data, dims)
    return _finish(COUNT_NONZERO, "count_nonzero", input, r, None, {"dim": dims})


# The rest of the family builds on the helpers above, so it is imported last.
from . import minmax, norms, scan  # noqa: E402

max, min, amax, amin, aminmax = minmax.max, minmax.min, minmax.amax, minmax.amin, minmax.aminmax
argmax, argmin = minmax.argmax, minmax.argmin
norm, dist = norms.norm, norms.dist
cumsum, cumprod, cummax, cummin = scan.cumsum, scan.cumprod, scan.cummax, scan.cummin
logcumsumexp = scan.logcumsumexp

FUNCTIONS = [
    "sum", "nansum", "mean", "nanmean", "prod", "var", "std", "var_mean", "std_mean", "max",
    "min", "amax", "amin", "aminmax", "argmax", "argmin", "logsumexp", "norm", "dist", "all",
    "any", "count_nonzero", "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp",
]

METHODS: dict[str, Callable[..., Any]] = {name: globals()[name] for name in FUNCTIONS
                                          if name not in ("var_mean", "std_mean")}
METHODS.update(scan.INPLACE_SCANS)
