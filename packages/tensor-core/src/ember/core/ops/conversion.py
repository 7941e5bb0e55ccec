"""Moving between dtypes and devices: ``to``, ``type``, ``cpu``/``cuda``, ``clone``,
``contiguous``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..device import CPU, array_module, canonical, check_dtype_supported, device
from ..dispatch import register
from ..tensor import Tensor, make
from .operands import record

FUNCTIONS = ["clone"]


def move_array(data: Any, src: device, dst: device) -> Any:
    """Copy a backend array between devices (numpy <-> cupy)."""
    if src.type == dst.type and src.index == dst.index:
        return data
    if dst.type == "cpu":
        return data.get()
    cp = array_module(dst)
    with cp.cuda.Device(dst.index or 0):
        return cp.asarray(data)


def _to_copy(x: Any, dtype: _dt.dtype, src: device, dst: device) -> Any:
    data = move_array(x, src, dst)
    if data.dtype != dtype.np:
        with np.errstate(over="ignore", invalid="ignore"):  # torch casts out-of-range silently
            return data.astype(dtype.np)
    return data.copy() if data is x else data


TO_COPY = register("to_copy", _to_copy, kind="library")
CLONE = register("clone", lambda x: x.copy(), kind="elementwise")


def _parse_to(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, bool]:
    """``to(dtype)``, ``to(device, dtype=None)``, ``to(other_tensor)``, keywords too."""
    dev = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = bool(kwargs.pop("copy", False))
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            dev, dtype = a.device, a.dtype
        elif isinstance(a, _dt.dtype) or a in (float, int, bool, complex):
            dtype = a
        elif isinstance(a, (str, device, int)) and not isinstance(a, bool):
            dev = a
        elif a is None:
            continue
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    return dev, dtype, copy


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Tensor.to(device=None, dtype=None, non_blocking=False, copy=False)."""
    dev, dtype, copy = _parse_to(args, kwargs)
    dst = self.device if dev is None else canonical(device(dev))
    dt = self.dtype if dtype is None else _dt.to_dtype(dtype)
    if dst == self.device and dt is self.dtype and not copy:
        return self
    if dst != self.device:
        array_module(dst)  # raises clearly when CUDA is missing
    check_dtype_supported(dt, dst)
    out = make(_to_copy(self._data, dt, self.device, dst), dt, dst)
    if self._requires_grad:
        record(TO_COPY, (self,), {"dtype": dt, "device": dst}, out)
    return out


def cpu(self: Tensor, memory_format: Any = None) -> Tensor:
    return to(self, CPU)


def cuda(self: Tensor, device: Any = None, non_blocking: bool = False, memory_format: Any = None
         ) -> Tensor:
    return to(self, "cuda" if device is None else
              device if isinstance(device, (str, device_type)) else f"cuda:{device}")


device_type = device


def type(self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """``t.type()`` names the tensor type; ``t.type(dtype)`` casts."""
    if dtype is None:
        prefix = "torch.cuda." if self.device.type == "cuda" else "torch."
        return f"{prefix}{_dt.scalar_type_name(self.dtype)}Tensor"
    if isinstance(dtype, str) and dtype.endswith("Tensor"):
        dtype = _LEGACY_NAMES[dtype.rsplit(".", 1)[-1]]
    return to(self, dtype=dtype)


_LEGACY_NAMES = {"FloatTensor": _dt.float32, "DoubleTensor": _dt.float64, "HalfTensor": _dt.float16,
                 "BFloat16Tensor": _dt.bfloat16, "LongTensor": _dt.int64, "IntTensor": _dt.int32,
                 "ShortTensor": _dt.int16, "CharTensor": _dt.int8, "ByteTensor": _dt.uint8,
                 "BoolTensor": _dt.bool}


def _caster(dt: _dt.dtype) -> Any:
    def cast(self: Tensor, memory_format: Any = None) -> Tensor:
        return to(self, dtype=dt)

    cast.__name__ = dt.name
    cast.__doc__ = f"``self.to({dt})``"
    return cast


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """A copy with its own storage, in the autograd graph (grad flows back to ``input``)."""
    out = make(input._data.copy(), input.dtype, input.device)
    if input._requires_grad:
        record(CLONE, (input,), None, out)
    return out


def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    """``self`` when already C-contiguous, else a contiguous copy."""
    if self._data.flags.c_contiguous:
        return self
    out = make(np.ascontiguousarray(self._data) if self.device.type == "cpu"
               else self.device.xp.ascontiguousarray(self._data), self.dtype, self.device)
    if self._requires_grad:
        record(CLONE, (self,), None, out)
    return out


METHODS = {
    "to": to, "cpu": cpu, "cuda": cuda, "type": type, "clone": clone, "contiguous": contiguous,
    "float": _caster(_dt.float32), "double": _caster(_dt.float64), "half": _caster(_dt.float16),
    "bfloat16": _caster(_dt.bfloat16), "long": _caster(_dt.int64), "int": _caster(_dt.int32),
    "short": _caster(_dt.int16), "char": _caster(_dt.int8), "byte": _caster(_dt.uint8),
    "bool": _caster(_dt.bool), "cfloat": _caster(_dt.complex64), "cdouble": _caster(_dt.complex128),
}
