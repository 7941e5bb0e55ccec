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
from ..dispatch import Op, register
from ..tensor import Tensor
from .inplace import inplace
from .operands import not_implemented
from .reduction import (
    _HALF,
    _NP_F32,
    _NP_I64,
    _check_not_complex,
    _finish,
    _finish_pair,
    _one_dim,
    _target,
)


def _rule_scan(result: str) -> Callable[..., Any]:
    def rule(x: meta.Spec, dim: int, dtype: Any = None) -> Any:
        if result == "pair":
            return meta.Spec(x.shape, x.dtype), meta.Spec(x.shape, _dt.int64)
        dt = dtype or (_dt.int64 if result == "sum" and x.dtype.category < 2 else x.dtype)
        return meta.Spec(x.shape, dt)

    return rule


def _scan_0d(x: Any, accumulate: Callable[..., Any], dim: int, **kw: Any) -> Any:
    # numpy cannot accumulate along the one dim a 0-d tensor has to torch
    if x.ndim == 0:
        return accumulate(x.reshape(1), axis=0, **kw).reshape(())
    return accumulate(x, axis=dim, **kw)


def _cumsum_forward(x: Any, dim: int, dtype: _dt.dtype | None = None) -> Any:
    x, target, acc = _target(x, dtype, True)
    return _scan_0d(x, np.add.accumulate, dim, dtype=acc).astype(target, copy=False)


def _cumprod_forward(x: Any, dim: int, dtype: _dt.dtype | None = None) -> Any:
    x, target, acc = _target(x, dtype, True)
    return _scan_0d(x, np.multiply.accumulate, dim, dtype=acc).astype(target, copy=False)


def _cum_extreme_forward(ufunc: Any) -> Callable[..., tuple[Any, Any]]:
    def forward(x: Any, dim: int) -> tuple[Any, Any]:
        if x.ndim == 0:
            return x.copy(), np.zeros_like(x, dtype=_NP_I64)
        values = ufunc.accumulate(x, axis=dim)
        # torch's index is the latest position holding the running extreme (or a NaN, which
        # then stays the extreme): a running maximum of the positions where x attains it.
        hit = x == values
        if x.dtype.kind == "f" or x.dtype in _HALF:
            hit |= np.isnan(x)
        shape = [1] * x.ndim
        shape[dim] = x.shape[dim]
        position = xp_of(x).arange(x.shape[dim], dtype=_NP_I64).reshape(shape)
        indices = np.maximum.accumulate(np.where(hit, position, 0), axis=dim)
        return values, indices

    return forward


def _logcumsumexp_forward(x: Any, dim: int) -> Any:
    w = x.astype(_NP_F32) if x.dtype in _HALF else x
    if w.dtype.kind != "c":
        with np.errstate(invalid="ignore"):  # -inf + -inf along the way is fine
            return _scan_0d(w, np.logaddexp.accumulate, dim).astype(x.dtype, copy=False)
    # numpy's logaddexp is real only: complex inputs step along dim (vectorized across it)
    moved = np.moveaxis(w.reshape(1) if w.ndim == 0 else w, dim if w.ndim else 0, 0)
    out = np.empty_like(moved)
    if moved.shape[0]:
        acc = out[0] = moved[0]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for i in range(1, moved.shape[0]):
            m = np.maximum(acc.real, moved[i].real)
            m = np.where(np.isfinite(m), m, np.zeros((), m.dtype))
            acc = out[i] = np.log(np.exp(acc - m) + np.exp(moved[i] - m)) + m
    r = np.moveaxis(out, 0, dim if w.ndim else 0)
    return (r.reshape(()) if w.ndim == 0 else r).astype(x.dtype, copy=False)


CUMSUM = register("cumsum", _cumsum_forward, _rule_scan("sum"), "scan")
CUMPROD = register("cumprod", _cumprod_forward, _rule_scan("sum"), "scan")
CUMMAX = register("cummax", _cum_extreme_forward(np.maximum), _rule_scan("pair"), "scan")
CUMMIN = register("cummin", _cum_extreme_forward(np.minimum), _rule_scan("pair"), "scan")
LOGCUMSUMEXP = register("logcumsumexp", _logcumsumexp_forward, _rule_scan("same"), "scan")


def _cumulative(op: Op, name: str, input: Tensor, dim: Any, dtype: Any,
                out: Tensor | None) -> Tensor:
    d = _one_dim(name, dim, input._data.ndim)
    if dtype is not None:
        dtype = _dt.to_dtype(dtype)
    r = op.forward(input._data, d, dtype)
    return _finish(op, name, input, r, out, {"dim": d, "dtype": dtype})


def cumsum(input: Tensor, dim: Any, *, dtype: Any = None, out: Tensor | None = None) -> Tensor:
    """torch.cumsum: running sums along ``dim``; bool and integer inputs give int64."""
    return _cumulative(CUMSUM, "cumsum", input, dim, dtype, out)


def cumprod(input: Tensor, dim: Any, *, dtype: Any = None, out: Tensor | None = None) -> Tensor:
    """torch.cumprod: running products along ``dim``; bool and integer inputs give int64."""
    return _cumulative(CUMPROD, "cumprod", input, dim, dtype, out)


def _cum_extreme(op: Op, name: str, input: Tensor, dim: Any, out: Any) -> Any:
    d = _one_dim(name, dim, input._data.ndim)
    if input._data.ndim and input._data.size:  # torch copies 0-d and empty inputs unchecked
        _check_not_complex(f"{name}_cpu", input)
    pair = op.forward(input._data, d)
    kind = rt.cummax if op is CUMMAX else rt.cummin
    return _finish_pair(op, name, input, pair, kind, out, {"dim": d})


def cummax(input: Tensor, dim: Any, *, out: Any = None) -> Any:
    """torch.cummax: running maxima along ``dim`` and the index where each was attained."""
    return _cum_extreme(CUMMAX, "cummax", input, dim, out)


def cummin(input: Tensor, dim: Any, *, out: Any = None) -> Any:
    """torch.cummin: running minima along ``dim`` and the index where each was attained."""
    return _cum_extreme(CUMMIN, "cummin", input, dim, out)


def logcumsumexp(input: Tensor, dim: Any, *, out: Tensor | None = None) -> Tensor:
    """torch.logcumsumexp: ``log(cumsum(exp(input)))`` along ``dim``, without overflow."""
    if input.dtype.category < 2:
        raise not_implemented("logcumsumexp_out_cpu", input.dtype)
    d = _one_dim("logcumsumexp", dim, input._data.ndim)
    r = LOGCUMSUMEXP.forward(input._data, d)
    return _finish(LOGCUMSUMEXP, "logcumsumexp", input, r, out, {"dim": d})


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
