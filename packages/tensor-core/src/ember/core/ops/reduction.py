"""Reductions: sum, mean, prod, var/std, logsumexp, all/any.

Max/min live in ``minmax.py``, norms in ``norms.py`` and scans (cumsum...) in ``scan.py``,
the arguments they share in ``reduction_args.py``. Each public function checks its
arguments, resolves ``dim`` and dispatches one primitive, whose operand is the input and
whose params are static.
``dim`` is a tuple of non-negative dims, or None for all of them (also for every
reduction of a 0-d tensor), except where torch takes a single int:

    sum nansum mean nanmean prod   {"dim", "keepdim", "dtype"}   dtype: ember dtype or None
    var std                        {"dim", "keepdim", "correction"}
    amax amin logsumexp all any    {"dim", "keepdim"}            all/any: dim=() is no-op
    aminmax                        {"dim": int or None, "keepdim"}   out: (min, max)
    norm                           {"dim", "keepdim", "p"}       the vector p-norm, p a float
    nuclear_norm                   {"dim", "keepdim"}            dim: the two matrix dims
    count_nonzero                  {"dim"}
    max min (with dim)             {"dim": int, "keepdim"}       out: (values, indices)
    argmax argmin                  {"dim": int or None, "keepdim"}
    cumsum cumprod                 {"dim": int, "dtype"}
    cummax cummin                  {"dim": int}                  out: (values, indices)
    logcumsumexp                   {"dim": int}

The sum family (sum, nansum, mean, nanmean, prod, amax, amin) reducing every element with
the default options dispatches no params (None, the forward's defaults): that is the hot
path of a tiny reduction, which passing keyword arguments to the kernel would slow
measurably; ``sum`` has a CPU kernel for it besides. Results are row-major, as torch's
are. float16 and bfloat16 accumulate in float32 and round once, as torch does.
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import xp_of
from ..dispatch import Op, dispatch, register
from ..dtypes import scalar_type_name
from ..function_modes import checks_itself, engaged, handle, overriding, spec_of
from ..tensor import Tensor
from .conversion import cast
from .operands import not_implemented
from .reduction_args import (
    HALF,
    NP_F32,
    NP_I64,
    REAL_RULE,
    SELF,
    Dims,
    add_reduce,
    check_input,
    count_of,
    keepdim_of,
    one_dim,
    real_dtype,
    reduced_dims,
    reduction_rule,
    row_major,
    target_dtypes,
    with_out,
)
from .reduction_native import LARGE, row_sums

_F32, _F64 = _dt.float32, _dt.float64
# dtypes that sum in themselves: numpy's pairwise summation, no accumulation dtype
_WIDE = frozenset(np.dtype(d) for d in (np.float32, np.float64, np.complex64, np.complex128))
_mul_reduce: Any = np.multiply.reduce
_empty = np.empty


def _logical_rule(x: Any, dim: Any = None, keepdim: bool = False) -> meta.MetaArray:
    shape = meta.reduced_shape(x.shape, dim, keepdim)
    return meta.empty(shape, np.uint8 if x.dtype == np.uint8 else np.bool_)


# ----------------------------------------------------------------------------- sums

def _sum_forward(x: Any, dim: Dims = None, keepdim: bool = False,
                 dtype: _dt.dtype | None = None) -> Any:
    x, target, acc = target_dtypes(x, dtype, True)
    r = add_reduce(x, dim, acc, None, keepdim)
    return row_major(r if acc is target else r.astype(target))


def _sum_cpu(x: Any, dim: Dims = None, keepdim: bool = False,
             dtype: _dt.dtype | None = None) -> Any:
    """sum's CPU kernel: a float array summed whole goes straight into a 0-d array (numpy
    would return a scalar for the dispatcher to wrap: the hot path of a tiny sum); a large
    one, whole or over its last dims, to the threaded native loop."""
    if x.size >= LARGE and dtype is None:
        r = row_sums(x, dim, keepdim, mean=False)
        if r is not None:
            return r
    if dim is None and dtype is None and not keepdim:
        dt = x.dtype
        if dt in _WIDE:
            return add_reduce(x, None, None, _empty((), dt))
    return _sum_forward(x, dim, keepdim, dtype)


def _nansum_forward(x: Any, dim: Dims = None, keepdim: bool = False,
                    dtype: _dt.dtype | None = None) -> Any:
    if x.dtype.kind == "f" or x.dtype in HALF:
        x = xp_of(x).where(np.isnan(x), x.dtype.type(0), x)
    return _sum_forward(x, dim, keepdim, dtype)


def _mean_forward(x: Any, dim: Dims = None, keepdim: bool = False,
                  dtype: _dt.dtype | None = None) -> Any:
    if dtype is None and x.dtype in _WIDE:  # the hot path
        if x.size >= LARGE:
            r = row_sums(x, dim, keepdim, mean=True)
            if r is not None:
                return r
        n = x.size if dim is None else count_of(x.shape, dim)
        if n:
            if dim is None and not keepdim:
                return add_reduce(x, None) / n
            return row_major(add_reduce(x, dim, None, None, keepdim) / n)
    x, target, acc = target_dtypes(x, dtype, False)
    total = add_reduce(x, dim, acc, None, keepdim)
    # the mean of nothing is the nan torch returns (0 / 0: numpy's warning is filtered)
    r = np.true_divide(total, count_of(x.shape, dim))
    return row_major(r.astype(target, copy=False))


def _nanmean_forward(x: Any, dim: Dims = None, keepdim: bool = False,
                     dtype: _dt.dtype | None = None) -> Any:
    x, target, acc = target_dtypes(x, dtype, False)
    nan = np.isnan(x)
    n = add_reduce(~nan, dim, None, None, keepdim)
    total = add_reduce(xp_of(x).where(nan, x.dtype.type(0), x), dim, acc, None, keepdim)
    # torch's nanmean is nansum(...) / count: the sum is rounded to the result dtype first
    total = total.astype(target, copy=False).astype(total.dtype, copy=False)
    r = np.true_divide(total, n)
    return row_major(r.astype(target, copy=False))


def _prod_forward(x: Any, dim: Dims = None, keepdim: bool = False,
                  dtype: _dt.dtype | None = None) -> Any:
    x, target, acc = target_dtypes(x, dtype, True)
    r = _mul_reduce(x, dim, acc, None, keepdim)
    return row_major(r if acc is target else r.astype(target))


_SUMMED, _SAME = reduction_rule("sum"), reduction_rule("same")
SUM = register("sum", _sum_forward, _SUMMED, "reduction", arg_names=SELF)
NANSUM = register("nansum", _nansum_forward, _SUMMED, "reduction", arg_names=SELF)
MEAN = register("mean", _mean_forward, _SAME, "reduction", arg_names=SELF)
NANMEAN = register("nanmean", _nanmean_forward, _SAME, "reduction", arg_names=SELF)
PROD = register("prod", _prod_forward, _SUMMED, "reduction", arg_names=SELF)
SUM.register_kernel("cpu", _sum_cpu)


def _sum_like(op: Op, input: Tensor, dim: Any, keepdim: bool, dtype: Any,
              out: Tensor | None, refusal: Exception | None = None) -> Tensor:
    """``op`` reduced over ``dim``; ``refusal``: the kernel's error, raised after the check
    of the dims."""
    ndim = input._data.ndim
    dims, keepdim = reduced_dims(op.name, dim, ndim), keepdim_of(keepdim, ndim)
    if refusal is not None:
        raise refusal
    if dims is None and not keepdim and dtype is None:
        return with_out(op.door((input,), None), op.name, out)
    params = {"dim": dims, "keepdim": keepdim, "dtype": None if dtype is None else
              _dt.to_dtype(dtype)}
    return with_out(op.door((input,), params), op.name, out)


# sum and mean check for __torch_function__ overrides themselves, to keep their hot paths
# (a tiny tensor reduced whole, or over one dim) free of the generic wrapper's repacking
@checks_itself
def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
        out: Tensor | None = None) -> Tensor:
    """torch.sum: the sum over ``dim`` (all dims by default); bool and integer inputs sum
    to int64 unless ``dtype`` says otherwise."""
    if engaged.count and overriding():
        return handle(sum, _SUM_SPEC, (input, dim, keepdim),  # type: ignore[no-any-return]
                      {"dtype": dtype, "out": out})
    if dim is None and dtype is None and out is None and not keepdim and \
            input.__class__ is Tensor:  # the hot path: everything summed
        return SUM.door((input,), None)  # type: ignore[no-any-return]
    check_input("sum", input)
    return _sum_like(SUM, input, dim, keepdim, dtype, out)


_SUM_SPEC = spec_of(sum)


def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
           out: Tensor | None = None) -> Tensor:
    """torch.nansum: sum treating NaN as zero."""
    check_input("nansum", input)
    if input.dtype.category == 3:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    return _sum_like(NANSUM, input, dim, keepdim, dtype, out, _nansum_refusal(input, dtype))


def _nansum_refusal(input: Tensor, dtype: Any) -> NotImplementedError | None:
    """torch's error for a floating input summed into a complex ``dtype``, which its nansum
    kernel has no loop for (integers sum as ``sum`` does; an empty input runs no loop)."""
    if dtype is None or input.dtype.category != 2 or not input._data.size:
        return None
    dt = _dt.to_dtype(dtype)
    return not_implemented("nansum_cpu", dt) if dt.category == 3 else None


@checks_itself
def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
         out: Tensor | None = None) -> Tensor:
    """torch.mean: floating or complex input (or ``dtype``) only; the mean of nothing is nan."""
    if engaged.count and overriding():
        return handle(mean, _MEAN_SPEC, (input, dim, keepdim),  # type: ignore[no-any-return]
                      {"dtype": dtype, "out": out})
    if dtype is None and out is None and input.__class__ is Tensor and (
            input.dtype is _F32 or input.dtype is _F64):  # the hot paths
        if dim is None and not keepdim:
            return MEAN.door((input,), None)  # type: ignore[no-any-return]
        ndim = input._data.ndim
        if dim.__class__ is int and -ndim <= dim < ndim:
            return MEAN.door((input,), {  # type: ignore[no-any-return]
                "dim": (dim + ndim if dim < 0 else dim,), "keepdim": bool(keepdim),
                "dtype": None})
    check_input("mean", input)
    if dtype is not None:
        dtype = _float_dtype("mean", dtype)
    elif input.dtype.category < 2:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {scalar_type_name(input.dtype)}")
    return _sum_like(MEAN, input, dim, keepdim, dtype, out)


_MEAN_SPEC = spec_of(mean)


def _float_dtype(name: str, dtype: Any) -> _dt.dtype:
    """The ``dtype`` a mean is asked for: floating or complex only, as in torch."""
    dt = _dt.to_dtype(dtype)
    if dt.category < 2:
        raise RuntimeError(f"{name}(): could not infer output dtype. Optional dtype must be "
                           f"either a floating point or complex dtype. Got: "
                           f"{scalar_type_name(dt)}")
    return dt


def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
            out: Tensor | None = None) -> Tensor:
    """torch.nanmean: the mean of the non-NaN elements."""
    check_input("nanmean", input)
    if input.dtype.category < 2:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {scalar_type_name(input.dtype)}")
    if dtype is not None:
        dtype = _float_dtype("nanmean", dtype)
    if input.dtype.category == 3:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    return _sum_like(NANMEAN, input, dim, keepdim, dtype, out, _nansum_refusal(input, dtype))


def prod(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
         out: Tensor | None = None) -> Tensor:
    """torch.prod: the product over one ``dim`` or all elements; ints give int64."""
    check_input("prod", input)
    if dim is not None:
        dim = one_dim("prod", dim, input._data.ndim)
    return _sum_like(PROD, input, dim, keepdim, dtype, out)


# ----------------------------------------------------------------------------- var, std

def _var_forward(x: Any, dim: Dims = None, keepdim: bool = False,
                 correction: float = 1.0) -> Any:
    if x.dtype.kind == "c":
        # torch's: the parts' variances, each in the real dtype, added (with no degrees of
        # freedom left, a part that does not vary gives 0 / 0: NaN, not inf)
        real = _var_forward(x.real, dim, keepdim, correction)
        return real + _var_forward(x.imag, dim, keepdim, correction)
    return row_major(_var_wide(x, dim, keepdim, correction).astype(real_dtype(x.dtype),
                                                                    copy=False))


def _var_wide(x: Any, dim: Dims, keepdim: bool, correction: float) -> Any:
    """The variance in double precision, as torch's CPU kernels accumulate it (float32
    deviations of 1e20 square to inf; torch's std of them is finite)."""
    w = x.astype(_DOUBLE[x.dtype.kind], copy=False) if x.dtype.kind in _DOUBLE else x
    n = count_of(x.shape, dim)
    if n > correction and n > 0:
        return _var(w, dim, keepdim, n, n - correction)
    with np.errstate(invalid="ignore", divide="ignore"):  # torch's inf and nan, silently
        return _var(w, dim, keepdim, n, builtins.max(0.0, n - correction))


# by dtype kind; "V" is ml_dtypes' bfloat16
_DOUBLE = {"f": np.dtype(np.float64), "V": np.dtype(np.float64)}


def _var(w: Any, dim: Dims, keepdim: bool, n: int, dof: float) -> Any:
    # Two passes: the deviations from the mean are squared, not the raw values.
    dev = w - np.true_divide(add_reduce(w, dim, None, None, True), n)
    return np.true_divide(add_reduce(dev * dev, dim, None, None, keepdim), dof)


def _std_forward(x: Any, dim: Dims = None, keepdim: bool = False,
                 correction: float = 1.0) -> Any:
    if x.dtype.kind == "c":  # torch adds the parts' variances in the real dtype, then roots
        return np.sqrt(_var_forward(x, dim, keepdim, correction))
    # the square root is taken before rounding to the input's precision, as torch does
    return row_major(np.sqrt(_var_wide(x, dim, keepdim, correction)).astype(
        real_dtype(x.dtype), copy=False))


def _welford_mean(x: Any, dim: Dims, keepdim: bool) -> Any:
    """The mean torch's var_mean and std_mean give beside the spread: a running mean
    (Welford's update), which an infinity turns NaN unless it comes last (``inf - inf``
    in the next update), and the plain mean otherwise (the same but for rounding); of
    complex inputs, the parts' means, as torch's kernel computes them apart."""
    xp = xp_of(x)
    if x.dtype.kind == "c":
        real, imag = _welford_mean(x.real, dim, keepdim), _welford_mean(x.imag, dim, keepdim)
        m = xp.empty(real.shape, x.dtype)
        m.real, m.imag = real, imag
        return m
    m = _mean_forward(x, dim, keepdim)
    infinite = np.isinf(x)
    if x.ndim == 0 or not infinite.any():
        return m
    # torch reduces in memory order, which for its layouts ends at the last index of every
    # reduced dim: an infinity anywhere else spoils the mean
    infinite[tuple(-1 if dim is None or d in dim else slice(None) for d in range(x.ndim))] = False
    return xp.where(infinite.any(axis=dim, keepdims=keepdim), m.dtype.type(np.nan), m)


def _var_mean_forward(x: Any, dim: Dims = None, keepdim: bool = False,
                      correction: float = 1.0) -> tuple[Any, Any]:
    return _var_forward(x, dim, keepdim, correction), _welford_mean(x, dim, keepdim)


def _std_mean_forward(x: Any, dim: Dims = None, keepdim: bool = False,
                      correction: float = 1.0) -> tuple[Any, Any]:
    return _std_forward(x, dim, keepdim, correction), _welford_mean(x, dim, keepdim)


def _spread_mean_rule(x: Any, dim: Dims = None, keepdim: bool = False,
                      correction: float = 1.0) -> tuple[Any, Any]:
    return REAL_RULE(x, dim, keepdim), _SAME(x, dim, keepdim)


VAR = register("var", _var_forward, REAL_RULE, "reduction", arg_names=SELF)
STD = register("std", _std_forward, REAL_RULE, "reduction", arg_names=SELF)
VAR_MEAN = register("var_mean", _var_mean_forward, _spread_mean_rule, "reduction",
                    arg_names=SELF)
STD_MEAN = register("std_mean", _std_mean_forward, _spread_mean_rule, "reduction",
                    arg_names=SELF)


def _var_like(op: Op, input: Tensor, dim: Any, unbiased: Any, keepdim: bool,
              correction: Any, out: Tensor | None) -> Any:
    """var, std, var_mean or std_mean, by ``op``."""
    name = op.name
    check_input(name, input)
    if isinstance(dim, bool):  # the legacy form std(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}(): pass either 'unbiased' or 'correction', not both")
    if correction is None:
        correction = 0.0 if unbiased is False else 1.0
    if input.dtype.category < 2:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    ndim = input._data.ndim
    dims = reduced_dims(name, dim, ndim)
    if correction >= count_of(input._data.shape, dims):
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                      "less than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    params = {"dim": dims, "keepdim": keepdim_of(keepdim, ndim), "correction": float(correction)}
    return with_out(dispatch(op, (input,), params), name, out)


def var(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: Any = None, out: Tensor | None = None) -> Tensor:
    """torch.var: sum of squared deviations over ``N - correction`` (default correction 1)."""
    return _var_like(VAR, input, dim, unbiased, keepdim, correction, out)


def std(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: Any = None, out: Tensor | None = None) -> Tensor:
    """torch.std: the square root of ``var`` with the same arguments."""
    return _var_like(STD, input, dim, unbiased, keepdim, correction, out)


def var_mean(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
             *, correction: Any = None) -> tuple[Tensor, Tensor]:
    """torch.var_mean: the tuple ``(var, mean)`` over the same dims, computed together as
    torch computes them (its mean is NaN where an infinity comes before the last element)."""
    var, mean = _var_like(VAR_MEAN, input, dim, unbiased, keepdim, correction, None)
    return var, mean


def std_mean(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
             *, correction: Any = None) -> tuple[Tensor, Tensor]:
    """torch.std_mean: the tuple ``(std, mean)``, computed together as ``var_mean``."""
    std, mean = _var_like(STD_MEAN, input, dim, unbiased, keepdim, correction, None)
    return std, mean


# ----------------------------------------------------------------------------- logsumexp

def _logsumexp_forward(x: Any, dim: Dims = None, keepdim: bool = False) -> Any:
    w = x.astype(NP_F32) if x.dtype in HALF else x
    xp = xp_of(w)
    with np.errstate(invalid="ignore", divide="ignore"):
        # Shift by the largest real part; an infinite or empty maximum shifts by 0 instead,
        # so rows of -inf give -inf and a +inf element gives +inf.
        m = (w.real.max(axis=dim, keepdims=True) if w.size
             else xp.zeros(meta.reduced_shape(w.shape, dim, True), w.real.dtype))
        m = xp.where(np.isfinite(m), m, m.dtype.type(0))
        r = np.log(add_reduce(np.exp(w - m), dim, None, None, True)) + m
    if not keepdim:
        r = r.reshape(meta.reduced_shape(r.shape, dim, False))
    return row_major(r.astype(x.dtype, copy=False))


LOGSUMEXP = register("logsumexp", _logsumexp_forward, _SAME, "reduction", arg_names=SELF)


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False, *,
              out: Tensor | None = None) -> Tensor:
    """torch.logsumexp: ``log(sum(exp(input)))`` over ``dim``, computed without overflow;
    integer inputs compute in the default float dtype."""
    check_input("logsumexp", input)
    ndim = input._data.ndim
    if isinstance(dim, (tuple, list)) and not dim and ndim:
        raise RuntimeError("logsumexp(): expected at least one dim to reduce, got dim=()")
    params = {"dim": reduced_dims("logsumexp", dim, ndim), "keepdim": keepdim_of(keepdim, ndim)}
    if input.dtype.category < 2:
        input = cast(input, _dt.get_default_dtype())
    return with_out(dispatch(LOGSUMEXP, (input,), params), "logsumexp", out)


# ----------------------------------------------------------------------------- all, any

def _all_forward(x: Any, dim: Dims = None, keepdim: bool = False) -> Any:
    r = row_major((x != 0).all(axis=dim, keepdims=keepdim))
    return r.astype(np.uint8) if x.dtype == np.uint8 else r


def _any_forward(x: Any, dim: Dims = None, keepdim: bool = False) -> Any:
    r = row_major((x != 0).any(axis=dim, keepdims=keepdim))
    return r.astype(np.uint8) if x.dtype == np.uint8 else r


def _count_nonzero_forward(x: Any, dim: Dims = None) -> Any:
    return row_major(add_reduce(x != 0, dim, NP_I64))


ALL = register("all", _all_forward, _logical_rule, "reduction", False, arg_names=SELF)
ANY = register("any", _any_forward, _logical_rule, "reduction", False, arg_names=SELF)
COUNT_NONZERO = register("count_nonzero", _count_nonzero_forward, reduction_rule("index"),
                         "reduction", False, arg_names=SELF)


def _logical(op: Op, input: Tensor, dim: Any, keepdim: bool, out: Tensor | None) -> Tensor:
    check_input(op.name, input)
    ndim = input._data.ndim
    params = {"dim": reduced_dims(op.name, dim, ndim, empty_is_all=False),
              "keepdim": keepdim_of(keepdim, ndim)}
    return with_out(dispatch(op, (input,), params), op.name, out)


def all(input: Tensor, dim: Any = None, keepdim: bool = False, *,
        out: Tensor | None = None) -> Tensor:
    """torch.all: whether every element over ``dim`` is non-zero (uint8 input gives uint8)."""
    return _logical(ALL, input, dim, keepdim, out)


def any(input: Tensor, dim: Any = None, keepdim: bool = False, *,
        out: Tensor | None = None) -> Tensor:
    """torch.any: whether some element over ``dim`` is non-zero (uint8 input gives uint8)."""
    return _logical(ANY, input, dim, keepdim, out)


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """torch.count_nonzero: the number of non-zero elements over ``dim``, as int64."""
    check_input("count_nonzero", input)
    params = {"dim": reduced_dims("count_nonzero", dim, input._data.ndim)}
    return dispatch(COUNT_NONZERO, (input,), params)  # type: ignore[no-any-return]


FUNCTIONS = [
    "sum", "nansum", "mean", "nanmean", "prod", "var", "std", "var_mean", "std_mean",
    "logsumexp", "all", "any", "count_nonzero",
]

METHODS: dict[str, Callable[..., Any]] = {name: globals()[name] for name in FUNCTIONS
                                          if name not in ("var_mean", "std_mean")}
