"""Ranges: ``arange``, ``range``, ``linspace`` and ``logspace``, rounded exactly as torch's CPU
kernels round them (fused multiply-adds, blocked vector loops, both ends exact).

Each is a primitive of the same name without operands; its params are the Python numbers
of the call as given (``start``, ``end``, ``step``/``steps``, ``base``), ``dtype`` and
``device``. The values are computed on the host and placed on the device.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from . import dtypes as _dt
from . import meta
from .device import array_module, device
from .dispatch import register
from .dtypes import LIMITS
from .factory_args import _is_index, _number, finish, target
from .ops.operands import checked_scalar, not_implemented
from .tensor import Tensor

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


def _arange_length(start: Any, end: Any, step: Any, dt: _dt.dtype) -> int:
    """The number of elements of ``arange(start, end, step, dtype=dt)``."""
    if dt is _dt.int64:  # int64 counts in integers: the bounds are truncated first
        xstart, xend, xstep = int(start), int(end), int(step)
        sign = (xstep > 0) - (xstep < 0)
        return abs(xend - xstart + xstep - sign) // abs(xstep)
    return math.ceil((float(end) - float(start)) / float(step))


def _arange(*, start: Any, end: Any, step: Any, dtype: _dt.dtype, device: device) -> Any:
    n = _arange_length(start, end, step, dtype)
    if dtype.category == 1:  # integer dtypes accumulate in int64 from the truncated bounds
        values = _int_steps(n, int(start), int(step))
    else:
        values = _arange_values(float(start), float(step), n, dtype)
    return array_module(device).asarray(values.astype(dtype.np, copy=False))


def _int_steps(n: int, start: int, step: int) -> np.ndarray:
    """``start + step * i`` for ``i < n`` in int64 (in place: tiny ranges are common)."""
    values = np.arange(n, dtype=np.int64)
    if step != 1:
        values *= step
    if start:
        values += start
    return values


def _arange_meta(*, start: Any, end: Any, step: Any, dtype: _dt.dtype,
                 device: device) -> meta.MetaArray:
    return meta.empty((_arange_length(start, end, step, dtype),), dtype)


def _range_length(start: Any, end: Any, step: Any, dt: _dt.dtype) -> int:
    """The number of elements of ``range(start, end, step, dtype=dt)`` (end included)."""
    if dt.category == 1:
        return (int(end) - int(start)) // int(step) + 1
    return int((float(end) - float(start)) / float(step) + 1)


def _range(*, start: Any, end: Any, step: Any, dtype: _dt.dtype, device: device) -> Any:
    n = _range_length(start, end, step, dtype)
    if dtype.category == 1:  # integer dtypes accumulate in int64: the bounds are truncated
        values = _int_steps(n, int(start), int(step))
    else:
        values = np.arange(n, dtype=np.float64) * float(step) + float(start)
    return array_module(device).asarray(values.astype(dtype.np))


def _range_meta(*, start: Any, end: Any, step: Any, dtype: _dt.dtype,
                device: device) -> meta.MetaArray:
    return meta.empty((_range_length(start, end, step, dtype),), dtype)


ARANGE = register("arange", _arange, _arange_meta, "factory", differentiable=False,
                  device_param=True)
RANGE = register("range", _range, _range_meta, "factory", differentiable=False,
                 device_param=True)


def arange(start: Any = 0, end: Any = None, step: Any = 1, *, out: Tensor | None = None,
           dtype: Any = None, layout: Any = None, device: Any = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """torch.arange: ``[start, end)`` by ``step``; int64 when all three are integers, else
    the default float dtype."""
    if end is None:
        start, end = 0, start
    if start.__class__ is int and end.__class__ is int and step.__class__ is int:
        is_int = True  # the common call: Python ints, nothing to convert
    else:
        start, end, step, is_int = _range_args("arange", start, end, step)
    dt, d = target(dtype, device, _dt.int64 if is_int else None)
    if dt.category == 0 or dt.category == 3:
        raise not_implemented("arange_cpu", dt)
    if dt.category == 1:
        _check_range(int(start), int(end), int(step))
    else:
        _check_range(float(start), float(end), float(step))
        if _arange_length(start, end, step, dt) > LIMITS[_dt.int64][1]:
            raise RuntimeError("invalid size, possible overflow?")
    params = {"start": start, "end": end, "step": step, "dtype": dt, "device": d}
    return finish(ARANGE.door((), params), requires_grad, out, "arange")


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
    dt, d = target(dtype, device)
    if dt.category == 1:
        _check_range(int(start), int(end), int(step))
    else:
        _check_range(float(start), float(end), float(step))
    params = {"start": start, "end": end, "step": step, "dtype": dt, "device": d}
    return finish(RANGE.door((), params), requires_grad, out, "range")


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


def _linspace_values(start: Any, end: Any, n: int, dt: _dt.dtype) -> np.ndarray:
    """torch's CPU linspace of ``n`` points (``start`` and ``end`` checked for ``dt``)."""
    if dt.category == 3:
        s, e = np.asarray(start, dt.np), np.asarray(end, dt.np)
    else:
        s = np.asarray(checked_scalar(start, dt), dt.np)
        e = np.asarray(checked_scalar(end, dt), dt.np)
    if n == 1:
        return s.reshape(1)
    if dt.category == 3 or dt.itemsize < 4:
        # complex and half types: computed in their own arithmetic, each step rounded to
        # the dtype (the halves' ops run in float and round, as c10's Half and BFloat16 do)
        step = (e - s) / dt.np.type(n - 1)
        return _halves(step, s, e, n, fma=False)
    # the step is computed in the dtype (in double for integer dtypes)
    step = (e - s) / dt.np.type(n - 1) if dt.category == 2 else (float(e) - float(s)) / (n - 1)
    values = _halves(float(step), float(s), float(e), n, fma=True)
    return (np.trunc(values) if dt.category == 1 else values).astype(dt.np)


def _linspace(*, start: Any, end: Any, steps: int, dtype: _dt.dtype, device: device) -> Any:
    return array_module(device).asarray(_linspace_values(start, end, steps, dtype))


def _logspace(*, start: Any, end: Any, steps: int, base: float, dtype: _dt.dtype,
              device: device) -> Any:
    n = steps
    if dtype.category == 3:
        values = np.power(dtype.np.type(base), _linspace_values(start, end, n, dtype))
    else:
        s = np.float64(np.asarray(checked_scalar(start, dtype), dtype.np))
        e = np.float64(np.asarray(checked_scalar(end, dtype), dtype.np))
        if n == 1:
            exps = np.array([np.float64(start)])
        else:
            # unlike linspace's kernel this loop is compiled without FMA: plain numpy
            gap = np.float64(np.asarray(e - s, dtype.np)) if dtype.category == 2 else e - s
            exps = _halves(gap / (n - 1), s, e, n, fma=False)
        # libm's pow, as torch calls it: numpy's vectorized power can be an ulp off
        values = np.array([math.pow(base, x) for x in exps.tolist()], dtype=np.float64)
        if dtype.category == 1:
            values = np.trunc(values)
    return array_module(device).asarray(values.astype(dtype.np))


def _spaced_meta(*, steps: int, dtype: _dt.dtype, **params: Any) -> meta.MetaArray:
    return meta.empty((steps,), dtype)


LINSPACE = register("linspace", _linspace, _spaced_meta, "factory", differentiable=False,
                    device_param=True)
LOGSPACE = register("logspace", _logspace, _spaced_meta, "factory", differentiable=False,
                    device_param=True)


def _spaced_args(op: str, start: Any, end: Any, steps: Any, dtype: Any, device: Any
                 ) -> dict[str, Any]:
    """The params of ``linspace`` and ``logspace``, checked as torch checks them."""
    start, end = _number(op, "start", start), _number(op, "end", end)
    n = _steps(op, steps)
    is_complex = type(start) is complex or type(end) is complex
    dt, d = target(dtype, device, _dt.default_complex() if is_complex else None)
    if dt.category != 3:
        checked_scalar(start, dt)
        checked_scalar(end, dt)
    return {"start": start, "end": end, "steps": n, "dtype": dt, "device": d}


def linspace(start: Any, end: Any, steps: int, *, out: Tensor | None = None, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """torch.linspace: ``steps`` points evenly spaced from start to end inclusive."""
    params = _spaced_args("linspace", start, end, steps, dtype, device)
    if params["dtype"].category == 0:
        raise not_implemented("linspace_cpu", params["dtype"])
    return finish(LINSPACE.door((), params), requires_grad, out, "linspace")


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, out: Tensor | None = None,
             dtype: Any = None, layout: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """torch.logspace: ``base ** linspace(start, end, steps)``."""
    params = _spaced_args("logspace", start, end, steps, dtype, device)
    params["base"] = base
    return finish(LOGSPACE.door((), params), requires_grad, out, "logspace")
