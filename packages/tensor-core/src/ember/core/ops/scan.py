"""Scans along one dim: ``cumsum``, ``cumprod`` (and their in-place forms), ``cummax``,
``cummin`` and ``logcumsumexp``.

Installed through ``reduction.py``, whose helpers these build on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from .. import return_types as rt
from ..device import xp_of
from ..dispatch import Op, dispatch, register
from ..tensor import Tensor
from .inplace import inplace
from .operands import not_implemented
from .reduction_args import (
    HALF,
    NP_F32,
    NP_I64,
    SELF,
    check_input,
    check_not_complex,
    named,
    one_dim,
    row_major,
    target_dtypes,
    with_out,
)


def _scan_rule(x: Any, dim: int, dtype: _dt.dtype | None = None) -> Any:
    """cumsum and cumprod: bool and integers give int64 unless ``dtype`` says; torch's
    scans are row-major whatever the input's layout."""
    if dtype is not None:
        return meta.empty(x.shape, dtype)
    return meta.empty(x.shape, NP_I64 if x.dtype.kind in "biu" else x.dtype)


def _same_rule(x: Any, dim: int) -> Any:
    return meta.empty(x.shape, x.dtype)


def _pair_rule(x: Any, dim: int) -> Any:
    return meta.empty(x.shape, x.dtype), meta.empty(x.shape, NP_I64)


def _along(x: Any, accumulate: Callable[..., Any], dim: int, **kw: Any) -> Any:
    """``accumulate`` along ``dim``, row-major (numpy cannot accumulate along the one dim
    a 0-d tensor has to torch)."""
    if x.ndim == 0:
        return accumulate(x.reshape(1), axis=0, **kw).reshape(())
    return row_major(accumulate(x, axis=dim, **kw))


def _cumsum_forward(x: Any, dim: int, dtype: _dt.dtype | None = None) -> Any:
    x, target, acc = target_dtypes(x, dtype, True)
    sums = _along(x, np.add.accumulate, dim, dtype=acc)
    if sums.dtype.kind in "fc":
        # torch's running sum starts from +0: a leading run of -0.0 sums to +0.0 there,
        # where numpy starts from the first element (0.0 added turns only -0.0 into +0.0)
        sums += 0
    return sums.astype(target, copy=False)


def _cumprod_forward(x: Any, dim: int, dtype: _dt.dtype | None = None) -> Any:
    x, target, acc = target_dtypes(x, dtype, True)
    return _along(x, np.multiply.accumulate, dim, dtype=acc).astype(target, copy=False)


def _cum_extreme_forward(ufunc: Any) -> Callable[..., tuple[Any, Any]]:
    def forward(x: Any, dim: int) -> tuple[Any, Any]:
        xp = xp_of(x)
        if x.ndim == 0:
            return x.copy(), xp.zeros((), NP_I64)
        values = row_major(ufunc.accumulate(x, axis=dim))
        # torch's index is the latest position holding the running extreme (or a NaN, which
        # then stays the extreme): a running maximum of the positions where x attains it.
        hit = x == values
        if x.dtype.kind == "f" or x.dtype in HALF:
            hit |= np.isnan(x)
        shape = [1] * x.ndim
        shape[dim] = x.shape[dim]
        position = xp.arange(x.shape[dim], dtype=NP_I64).reshape(shape)
        indices = np.maximum.accumulate(xp.where(hit, position, 0), axis=dim)
        return values, row_major(indices)

    return forward


def _logcumsumexp_forward(x: Any, dim: int) -> Any:
    w = x.astype(NP_F32) if x.dtype in HALF else x
    if w.dtype.kind != "c":
        with np.errstate(invalid="ignore"):  # -inf + -inf along the way is fine
            return _along(w, np.logaddexp.accumulate, dim).astype(x.dtype, copy=False)
    # numpy's logaddexp is real only: complex inputs step along dim (vectorized across it)
    # from torch's start, -inf; the imaginary parts add up unwrapped, as in torch
    xp = xp_of(w)
    moved = xp.moveaxis(w.reshape(1) if w.ndim == 0 else w, dim if w.ndim else 0, 0)
    out = xp.empty_like(moved)
    acc = xp.full(moved.shape[1:], -np.inf, w.dtype)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for i in range(moved.shape[0]):
            acc = out[i] = _complex_log_add_exp(moved[i], acc)
    r = xp.moveaxis(out, 0, dim if w.ndim else 0)
    return row_major((r.reshape(()) if w.ndim == 0 else r).astype(x.dtype, copy=False))


def _complex_log_add_exp(x: Any, y: Any) -> Any:
    """torch's step of a complex logcumsumexp: ``max + log1p(exp(min - max))``, the operands
    ordered by real part; a NaN part anywhere gives nan + nanj, two infinite real parts of
    one sign -inf's operand (``min``) or ``log(exp(min) + exp(max))``."""
    xp = xp_of(x)
    x_first = x.real < y.real
    low, high = xp.where(x_first, x, y), xp.where(x_first, y, x)
    r = _complex_log1p(np.exp(low - high)) + high
    infinite = ~np.isfinite(low.real) & (low.real == high.real)
    if infinite.any():
        r = xp.where(infinite, xp.where(low.real < 0, low, np.log(np.exp(low) + np.exp(high))), r)
    nan = np.isnan(x.real) | np.isnan(x.imag) | np.isnan(y.real) | np.isnan(y.imag)
    return xp.where(nan, x.dtype.type(complex(np.nan, np.nan)), r)


def _complex_log1p(z: Any) -> Any:
    """c10's complex log1p: the angle of ``1 + z``, its log modulus through log1p near 0."""
    xp = xp_of(z)
    a, b = z.real, z.imag
    near = np.abs(z) < 0.5
    r = a * (2 + a) + b * b
    out = xp.empty_like(z)  # its parts set apart: ``modulus + 1j * angle`` would lose -0.0
    out.real = xp.where(near, xp.where(r == 0, a, 0.5 * np.log1p(r)), np.log(np.hypot(a + 1, b)))
    out.imag = np.arctan2(b, a + 1)
    return out


CUMSUM = register("cumsum", _cumsum_forward, _scan_rule, "scan", arg_names=SELF)
CUMPROD = register("cumprod", _cumprod_forward, _scan_rule, "scan", arg_names=SELF)
CUMMAX = register("cummax", _cum_extreme_forward(np.maximum), _pair_rule, "scan",
                  arg_names=SELF)
CUMMIN = register("cummin", _cum_extreme_forward(np.minimum), _pair_rule, "scan",
                  arg_names=SELF)
LOGCUMSUMEXP = register("logcumsumexp", _logcumsumexp_forward, _same_rule, "scan",
                        arg_names=SELF)


def _cumulative(op: Op, input: Tensor, dim: Any, dtype: Any, out: Tensor | None) -> Tensor:
    check_input(op.name, input)
    params = {"dim": one_dim(op.name, dim, input._data.ndim),
              "dtype": None if dtype is None else _dt.to_dtype(dtype)}
    # torch has no bool kernel: a bool result (``dtype``, ``out`` or in place) refuses
    computes_in = params["dtype"] or (None if out is None else getattr(out, "dtype", None))
    if computes_in is _dt.bool and input._data.ndim and input._data.size:  # 0-d, empty: copied
        raise not_implemented(f"{op.name}_out_cpu", _dt.bool)
    return with_out(dispatch(op, (input,), params), op.name, out)


def cumsum(input: Tensor, dim: Any, *, dtype: Any = None, out: Tensor | None = None) -> Tensor:
    """torch.cumsum: running sums along ``dim``; bool and integer inputs give int64."""
    return _cumulative(CUMSUM, input, dim, dtype, out)


def cumprod(input: Tensor, dim: Any, *, dtype: Any = None, out: Tensor | None = None) -> Tensor:
    """torch.cumprod: running products along ``dim``; bool and integer inputs give int64."""
    return _cumulative(CUMPROD, input, dim, dtype, out)


def _cum_extreme(op: Op, kind: Any, input: Tensor, dim: Any, out: Any) -> Any:
    name = op.name
    check_input(name, input)
    d = one_dim(name, dim, input._data.ndim)
    if input._data.ndim and input._data.size:  # torch copies 0-d and empty inputs unchecked
        check_not_complex(f"{name}_cpu", input)
    return named(kind, name, dispatch(op, (input,), {"dim": d}), out)


def cummax(input: Tensor, dim: Any, *, out: Any = None) -> Any:
    """torch.cummax: running maxima along ``dim`` and the index where each was attained."""
    return _cum_extreme(CUMMAX, rt.cummax, input, dim, out)


def cummin(input: Tensor, dim: Any, *, out: Any = None) -> Any:
    """torch.cummin: running minima along ``dim`` and the index where each was attained."""
    return _cum_extreme(CUMMIN, rt.cummin, input, dim, out)


def logcumsumexp(input: Tensor, dim: Any, *, out: Tensor | None = None) -> Tensor:
    """torch.logcumsumexp: ``log(cumsum(exp(input)))`` along ``dim``, without overflow."""
    check_input("logcumsumexp", input)
    if input.dtype.category < 2:
        raise not_implemented("logcumsumexp_out_cpu", input.dtype)
    params = {"dim": one_dim("logcumsumexp", dim, input._data.ndim)}
    return with_out(dispatch(LOGCUMSUMEXP, (input,), params), "logcumsumexp", out)


def _same_dtype_scan(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    """``cumsum_``/``cumprod_`` keep ``self``'s dtype; torch refuses any other ``dtype``."""

    def scan(input: Tensor, dim: Any, *, dtype: Any = None) -> Tensor:
        if dtype is not None and _dt.to_dtype(dtype) is not input.dtype:
            raise RuntimeError(f"Bad in-place call: input tensor dtype {input.dtype} and output "
                               f"tensor dtype {_dt.to_dtype(dtype)} should match")
        return fn(input, dim, dtype=input.dtype)

    scan.__name__ = name
    return scan


INPLACE_SCANS: dict[str, Callable[..., Tensor]] = {
    "cumsum_": inplace(_same_dtype_scan(cumsum, "cumsum"), "cumsum_"),
    "cumprod_": inplace(_same_dtype_scan(cumprod, "cumprod"), "cumprod_"),
}

FUNCTIONS = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]
METHODS: dict[str, Callable[..., Any]] = {name: globals()[name] for name in FUNCTIONS}
METHODS.update(INPLACE_SCANS)
