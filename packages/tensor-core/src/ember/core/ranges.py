"""Ranges: ``arange``, ``range``, ``linspace`` and ``logspace``, rounded exactly as torch's CPU
kernels round them (fused multiply-adds, blocked vector loops, both ends exact)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from . import dtypes as _dt
from .device import CPU
from .dtypes import LIMITS
from .factory_args import _is_index, _number, finish, target
from .ops.operands import checked_scalar, not_implemented
from .tensor import Tensor, make

__all__ = ["arange", "range", "linspace", "logspace"]


def _fma(step: float, index: np.ndarray, c: Any) -> np.ndarray:
    """``step * index + c`` (float64, ``index`` holding integers below 2**26) rounded once,
    as the fused multiply-add of torch's compiled kernels; plain numpy rounds twice and can
    be an ulp away."""
    p = step * index
    big = step * 134217729.0  # Veltkamp: split step into two 26-bit halves, so that
    hi = big - (big - step)  # hi * index and lo * index are exact
    p_err = (hi * index - p) + (step - hi) * index  # step * index == p + p_err exactly
    if not p_err.any():
        return p + c  # exact products (integer steps): one rounding already
    s, s_err = _two_sum(p, c)
    u, v = _two_sum(s_err, p_err)
    r, w = _two_sum(s, u)  # step * index + c == r + w + v exactly
    # r is s + u rounded; the tiny v only decides the ties of that rounding.
    toward = np.nextafter(r, np.copysign(np.inf, w))
    tie = (w != 0) & (w == (toward - r) / 2) & (v * w > 0)
    return np.where(tie, toward, r)  # type: ignore[no-any-return]


def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _arange_values(start: float, step: float, n: int, dt: _dt.dtype) -> np.ndarray:
    """torch's CPU arange of a float dtype: ``start + step * i`` in double, except that
    full blocks of two 32-byte vectors compute ``base + k * step`` from each vector's first
    element ``base`` (rounded to ``dt``)."""
    i = np.arange(n, dtype=np.float64)
    if dt.itemsize < 4:  # half types accumulate in float
        return (np.float32(start) + np.float32(step) * i.astype(np.float32)).astype(dt.np)
    lanes = 32 // dt.itemsize
    blocked = n // (2 * lanes) * 2 * lanes
    tail = _fma(step, i[blocked:], start)
    if not blocked:
        return tail.astype(dt.np)
    first = i[:blocked] // lanes * lanes
    base = _fma(step, first, start).astype(dt.np).astype(np.float64)
    head = _fma(step, i[:blocked] - first, base)
    return np.concatenate([head, tail]).astype(dt.np)


def _range_args(op: str, start: Any, end: Any, step: Any) -> tuple[Any, Any, Any, bool]:
    start, end, step = (_number(op, "start", start), _number(op, "end", end),
                        _number(op, "step", step))
    if any(type(v) is complex for v in (start, end, step)):
        raise RuntimeError("value cannot be converted to type double without overflow")
    is_int = not any(type(v) is float for v in (start, end, step))
    return start, end, step, is_int


def _check_range(start: Any, end: Any, step: Any) -> None:
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def arange(start: Any = 0, end: Any = None, step: Any = 1, *, out: Tensor | None = None,
           dtype: Any = None, layout: Any = None, device: Any = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """torch.arange: ``[start, end)`` by ``step``; int64 when all three are integers, else
    the default float dtype."""
    if end is None:
        start, end = 0, start
    if (type(start) is int and type(end) is int and type(step) is int and dtype is None
            and device is None and out is None and not requires_grad
            and ((step > 0 and end >= start) or (step < 0 and end <= start))):
        return make(np.arange(start, end, step, dtype=np.int64), _dt.int64, CPU)
    start, end, step, is_int = _range_args("arange", start, end, step)
    dt, d, xp = target(dtype, device, _dt.int64 if is_int else None)
    if dt.category == 0 or dt.category == 3:
        raise not_implemented("arange_cpu", dt)
    if dt.category == 1:
        # integer dtypes accumulate in int64: the bounds are truncated first
        xstart, xend, xstep = int(start), int(end), int(step)
        _check_range(xstart, xend, xstep)
        if dt is _dt.int64:
            sign = (xstep > 0) - (xstep < 0)
            n = abs(xend - xstart + xstep - sign) // abs(xstep)
        else:
            n = math.ceil((float(end) - float(start)) / float(step))
        values = np.arange(n, dtype=np.int64) * xstep + xstart
    else:
        _check_range(float(start), float(end), float(step))
        size = math.ceil((float(end) - float(start)) / float(step))
        if size > LIMITS[_dt.int64][1]:
            raise RuntimeError("invalid size, possible overflow?")
        values = _arange_values(float(start), float(step), size, dt)
    return finish(values.astype(dt.np, copy=False), dt, d, xp, requires_grad, out, "arange")


def range(start: Any = 0, end: Any = None, step: Any = 1, *, out: Tensor | None = None,
          dtype: Any = None, layout: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Deprecated torch.range: like arange but includes ``end``; default float dtype."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    start, end, step, _ = _range_args("range", start, end, step)
    dt, d, xp = target(dtype, device)
    if dt.category == 1:  # integer dtypes accumulate in int64: the bounds are truncated
        start, end, step = int(start), int(end), int(step)
        _check_range(start, end, step)
        values = np.arange((end - start) // step + 1, dtype=np.int64) * step + start
    else:
        start, end, step = float(start), float(end), float(step)
        _check_range(start, end, step)
        values = np.arange(int((end - start) / step + 1), dtype=np.float64) * step + start
    return finish(values.astype(dt.np), dt, d, xp, requires_grad, out, "range")


def _steps(op: str, steps: Any) -> int:
    if not _is_index(steps):
        raise TypeError(f"{op}(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return int(steps)


def _halves(step: Any, start: Any, end: Any, n: int, fma: bool) -> np.ndarray:
    """torch fills ``[0, n // 2)`` forward from start and the rest backward from end, so both
    endpoints are exact."""
    half = n // 2
    forward = np.arange(half, dtype=np.float64)
    backward = np.arange(n - 1 - half, -1, -1, dtype=np.float64)
    if fma:
        return np.concatenate([_fma(step, forward, start), _fma(-step, backward, end)])
    acc = np.result_type(step)  # the index joins the arithmetic in the step's type
    return np.concatenate([start + step * forward.astype(acc), end - step * backward.astype(acc)])


def linspace(start: Any, end: Any, steps: int, *, out: Tensor | None = None, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """torch.linspace: ``steps`` points evenly spaced from start to end inclusive."""
    start, end = _number("linspace", "start", start), _number("linspace", "end", end)
    n = _steps("linspace", steps)
    is_complex = type(start) is complex or type(end) is complex
    dt, d, xp = target(dtype, device, _dt.default_complex() if is_complex else None)
    if dt.category == 0:
        raise not_implemented("linspace_cpu", dt)
    if dt.category == 3:
        s, e = np.asarray(start, dt.np), np.asarray(end, dt.np)
    else:
        s = np.asarray(checked_scalar(start, dt), dt.np)
        e = np.asarray(checked_scalar(end, dt), dt.np)
    if n == 1:
        values = s.reshape(1)
    elif dt.category == 3 or dt.itemsize < 4:
        # complex and half types: computed in their own arithmetic (float for the halves)
        acc = dt.np.type if dt.category == 3 else np.float32
        step = (e.astype(acc) - s.astype(acc)) / acc(n - 1)
        values = _halves(step, s.astype(acc), e.astype(acc), n, fma=False)
    else:
        # the step is computed in the dtype (in double for integer dtypes)
        step = (e - s) / dt.np.type(n - 1) if dt.category == 2 else (float(e) - float(s)) / (n - 1)
        values = _halves(float(step), float(s), float(e), n, fma=True)
        if dt.category == 1:
            values = np.trunc(values)
    return finish(values.astype(dt.np), dt, d, xp, requires_grad, out, "linspace")


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, out: Tensor | None = None,
             dtype: Any = None, layout: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """torch.logspace: ``base ** linspace(start, end, steps)``."""
    start, end = _number("logspace", "start", start), _number("logspace", "end", end)
    n = _steps("logspace", steps)
    is_complex = type(start) is complex or type(end) is complex
    dt, d, xp = target(dtype, device, _dt.default_complex() if is_complex else None)
    if dt.category == 3:
        exps = linspace(start, end, n, dtype=dt)._data
        values = np.power(dt.np.type(base), exps)
    else:
        s = np.float64(np.asarray(checked_scalar(start, dt), dt.np))
        e = np.float64(np.asarray(checked_scalar(end, dt), dt.np))
        if n == 1:
            exps = np.array([np.float64(start)])
        else:
            # unlike linspace's kernel this loop is compiled without FMA: plain numpy
            step = (np.float64(np.asarray(e - s, dt.np)) if dt.category == 2 else e - s) / (n - 1)
            exps = _halves(step, s, e, n, fma=False)
        # libm's pow, as torch calls it: numpy's vectorized power can be an ulp off
        values = np.array([math.pow(base, x) for x in exps.tolist()], dtype=np.float64)
        if dt.category == 1:
            values = np.trunc(values)
    return finish(values.astype(dt.np), dt, d, xp, requires_grad, out, "logspace")

