"""What every op does around its forward: promote and place operands, wrap and record.

Kept flat on purpose: these functions sit on the hot path of every tiny op.
"""

from __future__ import annotations

import warnings
from typing import Any

from .. import dtypes as _dt
from ..device import device
from ..dispatch import Op, grad_mode, hooks
from ..tensor import Tensor, bump_version, make

_SCALARS = (int, float, bool, complex)
scalar_result = _dt.scalar_result


def device_mismatch(op: str, a: device, b: device) -> RuntimeError:
    return RuntimeError(f"{op}: Expected all tensors to be on the same device, but found at least "
                        f"two devices, {a} and {b}!")


def common_device(op: str, a: Tensor, b: Tensor) -> device:
    """torch lets a 0-d CPU tensor join a CUDA op as a scalar; other mixes are errors."""
    da, db = a.device, b.device
    if da is db:
        return da
    if db.type == "cpu" and b._data.ndim == 0:
        return da
    if da.type == "cpu" and a._data.ndim == 0:
        return db
    raise device_mismatch(op, da, db)


def as_array(t: Tensor, dt: _dt.dtype, dev: device) -> Any:
    """``t``'s data in dtype ``dt`` on device ``dev`` (no copy when already so)."""
    data = t._data
    if t.device is not dev:
        from .conversion import move_array

        data = move_array(data, t.device, dev)
    return data if t.dtype is dt else data.astype(dt.np)


def prep_binary(op: str, a: Any, b: Any) -> tuple[Any, Any, _dt.dtype, device, bool]:
    """Promote two operands (Tensors or Python scalars) to their common dtype.

    Returns ``(x, y, dtype, device, requires_grad)``; a Python scalar stays a Python
    scalar (NumPy treats it as weakly typed, as torch does) unless the result dtype
    is not the tensor's.
    """
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            dev = a.device if a.device is b.device else common_device(op, a, b)
            da, db = a.dtype, b.dtype
            if da is db and dev is a.device is b.device:
                return a._data, b._data, da, dev, a._requires_grad or b._requires_grad
            rdt = _dt.result_type(a, b)
            return (as_array(a, rdt, dev), as_array(b, rdt, dev), rdt, dev,
                    a._requires_grad or b._requires_grad)
        if type(b) not in _SCALARS:
            b = scalar_operand(op, b)
        rdt = scalar_result(a.dtype, b)
        x = a._data if a.dtype is rdt else a._data.astype(rdt.np)
        return x, b, rdt, a.device, a._requires_grad
    if isinstance(b, Tensor):
        if type(a) not in _SCALARS:
            a = scalar_operand(op, a)
        rdt = scalar_result(b.dtype, a)
        y = b._data if b.dtype is rdt else b._data.astype(rdt.np)
        return a, y, rdt, b.device, b._requires_grad
    raise TypeError(f"{op}(): expected at least one Tensor argument, got "
                    f"{type(a).__name__} and {type(b).__name__}")


def scalar_operand(op: str, value: Any) -> Any:
    """numpy scalars become Python scalars; anything else is a TypeError naming the op."""
    import numpy as np

    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return value.item()
    raise TypeError(f"{op}(): argument 'other' must be Tensor or Number, "
                    f"not {type(value).__name__}")


def record(op: Op, inputs: tuple[Any, ...], params: Any, out: Any) -> None:
    """Tell autograd (when installed) that ``op`` ran on inputs that require grad."""
    rec = hooks.record
    if rec is not None:
        rec(op, inputs, params, out)


def wrap(op: Op, data: Any, dt: _dt.dtype, dev: device, inputs: tuple[Any, ...], params: Any,
         requires_grad: bool) -> Tensor:
    out = make(data, dt, dev)
    if requires_grad and hooks.record is not None:
        hooks.record(op, inputs, params, out)
    return out


def needs_clone_for_inplace(self: Tensor) -> bool:
    """An in-place op on a tensor in a graph computes from a clone, so what the graph saved
    stays intact, and autograd rebases ``self`` onto the result."""
    return self._requires_grad and hooks.record is not None and grad_mode.enabled


def assign_inplace(self: Tensor, result: Tensor, op: str) -> Tensor:
    """Write ``result`` into ``self`` (the second half of every ``op_``), checking first."""
    if result.dtype is not self.dtype and not _dt.can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"{op}: result type {_pretty(result.dtype)} can't be cast to the "
                           f"desired output type {_pretty(self.dtype)}")
    dst = self._data
    src = result._data
    if src.shape != dst.shape:
        check_inplace_shape(op, dst.shape, src.shape)
    if hooks.inplace is not None and (self._requires_grad or result._requires_grad):
        hooks.inplace(self, result, op)
    if not getattr(dst.flags, "writeable", True) or _overlaps(dst):
        raise RuntimeError(f"{op}: unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the tensor "
                           "before performing the operation.")
    xp = self.device.xp
    xp.copyto(dst, src, casting="unsafe")
    bump_version(self)
    return self


def _overlaps(arr: Any) -> bool:
    """A zero stride over a dim longer than 1 (an expanded tensor): elements share memory.

    NumPy marks such views read-only; CuPy has no read-only arrays, so look at strides."""
    return arr.size > 1 and any(s == 0 and n > 1 for n, s in zip(arr.shape, arr.strides))


def check_inplace_shape(op: str, dst: tuple[int, ...], src: tuple[int, ...]) -> None:
    """``src`` must broadcast to ``dst`` without growing it."""
    ok = len(src) <= len(dst) and all(
        s == d or s == 1 for s, d in zip(reversed(src), reversed(dst)))
    if not ok:
        raise RuntimeError(f"{op}: output with shape {list(dst)} doesn't match the broadcast "
                           f"shape {list(broadcast_shape(op, dst, src))}")


def broadcast_shape(op: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """numpy/torch broadcasting of shapes, with torch's RuntimeError text on mismatch."""
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if n != out[i]:
                if out[i] == 1:
                    out[i] = n
                elif n != 1:
                    raise RuntimeError(
                        f"{op}: The size of tensor a ({out[i]}) must match the size of tensor b "
                        f"({n}) at non-singleton dimension {i}")
    return tuple(out)


def write_out(op: str, out: Tensor, result: Tensor) -> Tensor:
    """Implements ``out=``: checks first, then resizes ``out`` to the result's shape (with
    torch's warning when it held elements) and copies the result in."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out.device is not result.device:
        raise device_mismatch(op, out.device, result.device)
    if not _dt.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"{op}: result type {_pretty(result.dtype)} can't be cast to the "
                           f"desired output type {_pretty(out.dtype)}")
    if out._data.shape != result._data.shape:
        if out._data.size != 0:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._data.shape)}, which does not match the required output shape "
                f"{list(result._data.shape)}. This behavior is deprecated, and in a future "
                "PyTorch release outputs will not be resized unless they have zero elements. "
                "You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                "elements with t.resize_(0).", UserWarning, stacklevel=3)
        out._data = out.device.xp.empty(result._data.shape, out.dtype.np)
    out.device.xp.copyto(out._data, result._data, casting="unsafe")
    bump_version(out)
    return out


def _pretty(dt: _dt.dtype) -> str:
    # torch names dtypes in these messages by their C++ scalar type names.
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}[dt.name]
