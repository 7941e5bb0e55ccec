"""Making tensors from data and from shapes: ``tensor``, ``zeros``, ``arange``, ``eye``..."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import dtypes as _dt
from .device import CPU, array_module, canonical, device
from .tensor import Tensor, make

__all__ = [
    "tensor", "as_tensor", "asarray", "from_numpy", "from_dlpack", "zeros", "ones", "empty",
    "full", "zeros_like", "ones_like", "empty_like", "full_like", "arange", "range", "linspace",
    "logspace", "eye", "scalar_tensor", "empty_strided", "LongTensor", "FloatTensor",
    "DoubleTensor", "IntTensor", "BoolTensor", "ByteTensor", "HalfTensor", "BFloat16Tensor",
    "polar", "complex",
]


def parse_size(args: tuple[Any, ...], op: str = "size") -> tuple[int, ...]:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(torch.Size([2, 3]))`` all mean (2, 3)."""
    if len(args) == 1 and not isinstance(args[0], (int, np.integer, Tensor)):
        args = tuple(args[0])
    try:
        shape = tuple(int(a.__index__()) for a in args)
    except (AttributeError, TypeError):
        raise TypeError(f"{op}(): argument 'size' must be tuple of ints, but found element of type "
                        f"{type(next(a for a in args if not hasattr(a, '__index__'))).__name__}"
                        ) from None
    for s in shape:
        if s < 0:
            raise RuntimeError(f"{op}: Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")
    return shape


def target(dtype: Any, dev: Any, default: _dt.dtype | None = None) -> tuple[_dt.dtype, device, Any]:
    """Resolve ``dtype=``/``device=`` keyword values; returns (dtype, device, xp)."""
    dt = _dt.to_dtype(dtype) if dtype is not None else (default or _dt.get_default_dtype())
    d = CPU if dev is None else canonical(device(dev))
    return dt, d, array_module(d)


def _finish(data: Any, dt: _dt.dtype, d: device, requires_grad: bool) -> Tensor:
    t = make(data, dt, d)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _infer_dtype(arr: np.ndarray, from_python: bool) -> _dt.dtype:
    kind = arr.dtype.kind
    if from_python or kind == "O":
        if kind == "f":
            return _dt.get_default_dtype()
        if kind == "c":
            return _dt.default_complex()
        if kind in "iu":
            return _dt.int64
    return _dt.from_numpy_dtype(arr.dtype)


def _host_array(data: Any) -> tuple[np.ndarray, bool]:
    """A numpy array for ``data`` and whether its dtype came from Python numbers."""
    if isinstance(data, Tensor):
        return data._host(), False
    if isinstance(data, np.ndarray):
        return data, False
    if isinstance(data, np.generic):
        return np.asarray(data), False
    if isinstance(data, (list, tuple)):
        arr = np.array(_unwrap_nested(data))
        if arr.dtype.kind not in "biufc" and arr.size:
            raise TypeError(f"tensor(): could not infer a numeric dtype from {type(data).__name__} "
                            "data (mixed or non-numeric elements)")
        if arr.size == 0 and arr.dtype == np.float64:
            arr = arr.astype(_dt.get_default_dtype().np)
        return arr, True
    if isinstance(data, (bool, int, float, complex)):
        return np.asarray(data), True
    if hasattr(data, "__array__") or hasattr(data, "__dlpack__"):
        return np.asarray(data), False
    raise TypeError(f"tensor(): could not convert data of type {type(data).__name__} to a tensor")


def _unwrap_nested(data: Any) -> Any:
    if isinstance(data, Tensor):
        return data._host()
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(d) for d in data]
    return data


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """torch.tensor: always copies ``data`` (nested lists, numbers, arrays, tensors)."""
    arr, from_python = _host_array(data)
    dt = _dt.to_dtype(dtype) if dtype is not None else _infer_dtype(arr, from_python)
    _, d, xp = target(dt, device)
    host = arr.astype(dt.np) if arr.dtype != dt.np else arr.copy()
    return _finish(xp.asarray(host) if xp is not np else host, dt, d, requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """torch.as_tensor: shares memory with a tensor or ndarray of matching dtype and device."""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)  # type: ignore[attr-defined, no-any-return]
    if isinstance(data, np.ndarray) and (dtype is None or _dt.to_dtype(dtype).np == data.dtype) \
            and (device is None or str(device) == "cpu"):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A CPU tensor sharing ``ndarray``'s memory: writes through either show in both."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return make(ndarray, _dt.from_numpy_dtype(ndarray.dtype), CPU)


def from_dlpack(ext_tensor: Any) -> Tensor:
    """Zero-copy import of any object with ``__dlpack__`` (CPU into numpy, CUDA into cupy)."""
    dev_type, dev_index = ext_tensor.__dlpack_device__()
    if int(dev_type) == 1:  # kDLCPU
        arr = np.from_dlpack(ext_tensor)
        return make(arr, _dt.from_numpy_dtype(arr.dtype), CPU)
    d = canonical(device("cuda", int(dev_index)))
    arr = array_module(d).from_dlpack(ext_tensor)
    return make(arr, _dt.from_numpy_dtype(arr.dtype), d)


def _filled(op: str, size: tuple[Any, ...], fill: Any, dtype: Any, device: Any,
            requires_grad: bool, default: _dt.dtype | None = None) -> Tensor:
    shape = parse_size(size, op)
    dt, d, xp = target(dtype, device, default)
    if fill is None:
        data = xp.empty(shape, dt.np)
    elif fill == 0:
        data = xp.zeros(shape, dt.np)
    else:
        data = xp.full(shape, fill, dt.np)
    return _finish(data, dt, d, requires_grad)


def zeros(*size: Any, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
          device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """torch.zeros(*size, dtype=None, device=None, requires_grad=False)."""
    return _filled("zeros", size, 0, dtype, device, requires_grad)


def ones(*size: Any, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
         device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """torch.ones(*size, dtype=None, device=None, requires_grad=False)."""
    return _filled("ones", size, 1, dtype, device, requires_grad)


def empty(*size: Any, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
          device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
          memory_format: Any = None) -> Tensor:
    """torch.empty: uninitialized memory of the given shape."""
    return _filled("empty", size, None, dtype, device, requires_grad)


def empty_strided(size: Any, stride: Any, *, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """torch.empty_strided; the strides are not kept (numpy storage is C-ordered)."""
    return _filled("empty_strided", (size,), None, dtype, device, requires_grad)


def full(size: Any, fill_value: Any, *, out: Tensor | None = None, dtype: Any = None,
         layout: Any = None, device: Any = None, requires_grad: bool = False,
         pin_memory: bool = False) -> Tensor:
    """torch.full: dtype is inferred from ``fill_value`` (bool, int64, default float)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    default = _dt.scalar_dtype(fill_value) if dtype is None else None
    return _filled("full", (size,), fill_value, dtype, device, requires_grad, default)


def _like(op: str, input: Tensor, fill: Any, dtype: Any, device: Any, requires_grad: bool
          ) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    return _filled(op, (input._data.shape,), fill, input.dtype if dtype is None else dtype,
                   input.device if device is None else device, requires_grad)


def zeros_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return _like("zeros_like", input, 0, dtype, device, requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return _like("ones_like", input, 1, dtype, device, requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return _like("empty_like", input, None, dtype, device, requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, layout: Any = None,
              device: Any = None, requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return _like("full_like", input, fill_value, dtype, device, requires_grad)


def _number(x: Any) -> Any:
    return x.item() if isinstance(x, Tensor) else x


def arange(start: Any, end: Any = None, step: Any = 1, *, out: Tensor | None = None,
           dtype: Any = None, layout: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """torch.arange: int64 when start, end and step are all integers, else the default float."""
    if end is None:
        start, end = 0, start
    start, end, step = _number(start), _number(end), _number(step)
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"arange: upper bound and larger bound inconsistent with step sign "
                           f"(start={start}, end={end}, step={step})")
    is_int = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    dt, d, xp = target(dtype, device, _dt.int64 if is_int else None)
    n = max(0, math.ceil((end - start) / step))
    # computed in float64/int64 like torch, then cast: arange(0, 1, 0.1, dtype=float32) matches
    data = (np.arange(n, dtype=np.int64 if is_int else np.float64) * step + start).astype(dt.np)
    return _finish(xp.asarray(data) if xp is not np else data, dt, d, requires_grad)


def range(start: Any, end: Any, step: Any = 1, *, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Deprecated torch.range: like arange but includes ``end``; default float dtype."""
    n = int(math.floor((end - start) / step)) + 1
    dt, d, xp = target(dtype, device)
    data = (np.arange(n, dtype=np.float64) * step + start).astype(dt.np)
    return _finish(xp.asarray(data) if xp is not np else data, dt, d, requires_grad)


def linspace(start: Any, end: Any, steps: int, *, out: Tensor | None = None, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """torch.linspace: ``steps`` points from start to end inclusive."""
    if steps < 0:
        raise RuntimeError("linspace: number of steps must be non-negative")
    dt, d, xp = target(dtype, device)
    start, end = _number(start), _number(end)
    # torch fills the two halves from either end (exact endpoints, symmetric rounding)
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    idx = np.arange(steps, dtype=np.float64)
    half = steps // 2
    data = np.where(idx < half, start + step * idx, end - step * (steps - 1 - idx))
    data = data.astype(dt.np) if dt.category >= 2 else np.trunc(data).astype(dt.np)
    return _finish(xp.asarray(data) if xp is not np else data, dt, d, requires_grad)


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, out: Tensor | None = None,
             dtype: Any = None, layout: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """torch.logspace: ``base ** linspace(start, end, steps)``."""
    exps = linspace(start, end, steps, dtype=_dt.float64)._data
    dt, d, xp = target(dtype, device)
    data = np.power(base, exps).astype(dt.np)
    return _finish(xp.asarray(data) if xp is not np else data, dt, d, requires_grad)


def eye(n: int, m: int | None = None, *, out: Tensor | None = None, dtype: Any = None,
        layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """torch.eye: an n x m identity."""
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"eye: n and m must be non-negative, got n={n}, m={m}")
    dt, d, xp = target(dtype, device)
    return _finish(xp.eye(n, n if m is None else m, dtype=dt.np), dt, d, requires_grad)


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
    """A 0-d tensor of the default float dtype (or ``dtype``)."""
    dt, d, xp = target(dtype, device)
    return _finish(xp.asarray(s, dtype=dt.np), dt, d, requires_grad)


def complex(real: Tensor, imag: Tensor) -> Tensor:
    """torch.complex: a complex tensor from real and imaginary float parts."""
    if real.dtype is not imag.dtype or real.dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError(f"complex: expected both inputs to be float or double tensors of one "
                           f"dtype, got {real.dtype} and {imag.dtype}")
    dt = real.dtype.to_complex()
    data = real._data.astype(dt.np) + 1j * imag._data.astype(dt.np)
    return make(data.astype(dt.np), dt, real.device)


def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """torch.polar: ``abs * (cos(angle) + i sin(angle))``."""
    from .ops.elementwise import cos, mul, sin

    return complex(mul(abs, cos(angle)), mul(abs, sin(angle)))


def legacy_tensor(cls: type, *args: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``Tensor(data)`` / ``Tensor(*sizes)``: the legacy constructor of the default float type."""
    dt = _dt.to_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)) and not _is_size(args[0]):
        out = tensor(args[0], dtype=dt, device=device)
    else:
        out = empty(*args, dtype=dt, device=device) if args else empty(0, dtype=dt, device=device)
    if cls is not Tensor:
        out.__class__ = cls
    return out


def _is_size(x: Any) -> bool:
    return type(x).__name__ == "Size"


def _legacy(dt: _dt.dtype, name: str) -> Any:
    def ctor(*args: Any, device: Any = None) -> Tensor:
        if len(args) == 1 and not isinstance(args[0], (int, np.integer)) and not _is_size(args[0]):
            return tensor(args[0], dtype=dt, device=device)
        return zeros(*args, dtype=dt, device=device) if args else zeros(0, dtype=dt)

    ctor.__name__ = ctor.__qualname__ = name
    ctor.__doc__ = f"Legacy ``torch.{name}``: a {dt} tensor from data or sizes."
    return ctor


LongTensor = _legacy(_dt.int64, "LongTensor")
FloatTensor = _legacy(_dt.float32, "FloatTensor")
DoubleTensor = _legacy(_dt.float64, "DoubleTensor")
IntTensor = _legacy(_dt.int32, "IntTensor")
BoolTensor = _legacy(_dt.bool, "BoolTensor")
ByteTensor = _legacy(_dt.uint8, "ByteTensor")
HalfTensor = _legacy(_dt.float16, "HalfTensor")
BFloat16Tensor = _legacy(_dt.bfloat16, "BFloat16Tensor")
