"""The legacy constructors: ``Tensor(data)``/``Tensor(*sizes)`` and the typed ``LongTensor``,
``FloatTensor``... classes, which ``isinstance`` checks by dtype as in torch."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes as _dt
from .creation import empty, tensor
from .device import CPU
from .factory_args import _is_index, _is_sequence
from .tensor import Size, Tensor

__all__ = [
    "LongTensor", "FloatTensor", "DoubleTensor", "IntTensor", "ShortTensor", "CharTensor",
    "BoolTensor", "ByteTensor", "HalfTensor", "BFloat16Tensor",
]


def legacy_tensor(cls: type, *args: Any, device: Any = None) -> Tensor:
    """``Tensor(data)`` / ``Tensor(*sizes)`` / ``Tensor(other)``: the legacy constructor of
    the default float type."""
    out = _legacy_new("new", _dt.get_default_dtype(), args, device, any_tensor=True)
    if cls is not Tensor:
        out.__class__ = cls
    return out


def _legacy_new(name: str, dt: _dt.dtype, args: tuple[Any, ...], dev: Any,
                any_tensor: bool = False) -> Tensor:
    if dev is None:
        dev = CPU  # torch's default device does not reach the legacy constructors
    if not args:
        return empty(0, dtype=dt, device=dev)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if first.dtype is not dt and not any_tensor:
            raise TypeError(f"expected {dt} (got {first.dtype})")
        return first.detach()
    if type(first) is int or _is_index(first) or isinstance(first, Size):
        return empty(*args, dtype=dt, device=dev)
    if len(args) > 1:
        raise TypeError(f"{name}(): expected sizes (ints) or a single sequence of data, got "
                        f"{len(args)} arguments starting with {type(first).__name__}")
    if isinstance(first, (str, bytes)):
        raise TypeError(f"{name}(): invalid data type '{type(first).__name__}'")
    if not (_is_sequence(first) or isinstance(first, np.ndarray)):
        raise TypeError(f"{name}(): data must be a sequence (got {type(first).__name__})")
    return tensor(first, dtype=dt, device=dev)


class _LegacyType(type):
    """``isinstance(t, LongTensor)`` is true for CPU tensors of that dtype, as in torch."""

    dtype: _dt.dtype

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"


def _legacy_type(name: str, dt: _dt.dtype) -> type:
    def __new__(cls: type, *args: Any, device: Any = None) -> Tensor:
        return _legacy_new(name, dt, args, device)

    doc = f"Legacy ``torch.{name}``: a {dt} tensor from data, from sizes, or aliasing a tensor."
    return _LegacyType(name, (), {"__new__": __new__, "__doc__": doc, "dtype": dt})


LongTensor = _legacy_type("LongTensor", _dt.int64)
FloatTensor = _legacy_type("FloatTensor", _dt.float32)
DoubleTensor = _legacy_type("DoubleTensor", _dt.float64)
IntTensor = _legacy_type("IntTensor", _dt.int32)
ShortTensor = _legacy_type("ShortTensor", _dt.int16)
CharTensor = _legacy_type("CharTensor", _dt.int8)
BoolTensor = _legacy_type("BoolTensor", _dt.bool)
ByteTensor = _legacy_type("ByteTensor", _dt.uint8)
HalfTensor = _legacy_type("HalfTensor", _dt.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", _dt.bfloat16)


PROTOCOL = {"__new__": staticmethod(legacy_tensor)}
