"""What every op does around its forward: promote and place operands, wrap and record.

Kept flat on purpose: these functions sit on the hot path of every tiny op.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..device import device
from ..dispatch import Op, hooks
from ..dtypes import LIMITS, c_type_name, scalar_type_name
from ..tensor import Tensor, bump_version, make

_SCALARS = (int, float, bool, complex)
_NUMBERS = (bool, int, float, complex, np.generic)
scalar_result = _dt.scalar_result
LOW_PRECISION = (_dt.float16.np, _dt.bfloat16.np)


def device_mismatch(op: str, a: device, b: device) -> RuntimeError:
    return RuntimeError(f"{op}: Expected all tensors to be on the same device, but found at least "
                        f"two devices, {a} and {b}!")


def common_device(op: str, *tensors: Tensor) -> device:
    """The device an op on ``tensors`` runs on: torch lets 0-d CPU tensors join a CUDA op as
    scalars; other mixes are errors naming both devices."""
    dev = tensors[0].device
    for t in tensors[1:]:
        d = t.device
        if d is dev or d.type == "cpu" and t._data.ndim == 0:
            continue
        if dev.type == "cpu" and all(u._data.ndim == 0 for u in tensors if u.device is dev):
            dev = d
        else:
            raise device_mismatch(op, dev, d)
    return dev


def as_array(t: Tensor, dt: _dt.dtype, dev: device) -> Any:
    """``t``'s data in dtype ``dt`` on device ``dev`` (no copy when already so)."""
    data = t._data
    if t.device is not dev:
        from .conversion import move_array

        data = move_array(data, t.device, dev)
    return data if t.dtype is dt else data.astype(dt.np)


def on_device(arr: Any, dev: device) -> Any:
    """A numpy array (a converted scalar) moved to ``dev``."""
    return arr if dev.type == "cpu" else dev.xp.asarray(arr)


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
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return value.item()
    raise TypeError(f"{op}(): argument 'other' must be Tensor or Number, "
                    f"not {type(value).__name__}")


def check_operand(op: str, name: str, value: Any, numbers: bool = True) -> None:
    """TypeError, in torch's words, for an operand that is not a Tensor (or a number)."""
    if isinstance(value, Tensor) or (numbers and isinstance(value, _NUMBERS)):
        return
    kind = "Tensor or Number" if numbers else "Tensor"
    raise TypeError(f"{op}(): argument '{name}' must be {kind}, not {type(value).__name__}")


def scalar_to(op: str, value: Any, dt: _dt.dtype) -> Any:
    """A Python number as a 0-d array of ``dt``, converted as ``checked_scalar`` converts it;
    its overflow error names ``op``."""
    if isinstance(value, np.generic):
        value = value.item()
    try:
        return np.asarray(checked_scalar(value, dt), dt.np)
    except RuntimeError as e:
        raise RuntimeError(f"{op}: {e}") from None


def checked_scalar(value: Any, dt: _dt.dtype) -> Any:
    """A Python number converted for ``dt`` as torch's checked ``Scalar.to<T>()`` converts it.

    A value outside the range of an integer or floating ``dt`` (NaN and inf included, for
    integers), or a complex value with an imaginary part for a real ``dt``, is a RuntimeError.
    For integer dtypes floats truncate, and negative ints wrap into unsigned types (torch
    allows ``uint8 - 1``; floats may not).
    """
    category = dt.category
    if category == 0 or category == 3:
        return value
    if value.__class__ is complex:
        if value.imag != 0:
            raise overflow_error(dt)
        value = value.real
    lowest, highest = LIMITS[dt]
    if category == 2:
        if math.isfinite(value) and abs(value) > highest:
            raise overflow_error(dt)
        return value
    if value.__class__ is float:
        if not (math.isfinite(value) and lowest <= value <= highest):
            raise overflow_error(dt)
        return math.trunc(value)
    if not (-highest if lowest == 0 else lowest) <= value <= highest:
        raise overflow_error(dt)
    return value % (highest + 1) if value < 0 and lowest == 0 else value


def overflow_error(dt: _dt.dtype) -> RuntimeError:
    """torch's error for a number that does not fit ``dt``."""
    return RuntimeError(f"value cannot be converted to type {c_type_name(dt)} without overflow")


def promote(op: str, operands: tuple[Any, ...], also: list[Tensor] | None = None
            ) -> tuple[list[Any], _dt.dtype, device, bool]:
    """``operands`` (Tensors, Python numbers or None) as arrays of their torch result dtype,
    on the device they share with the tensors in ``also`` (which do not promote).

    Returns ``(arrays, dtype, device, requires_grad)``; None stays None.
    """
    present = [o for o in operands if o is not None]
    tensors = [o for o in present if isinstance(o, Tensor)]
    dt = _dt.result_type(*present)
    dev = common_device(op, *tensors, *(also or ()))
    arrays = [None if o is None else as_array(o, dt, dev) if isinstance(o, Tensor)
              else on_device(scalar_to(op, o, dt), dev) for o in operands]
    return arrays, dt, dev, any(t._requires_grad for t in tensors)


def upcast(*arrays: Any) -> tuple[Any, ...]:
    """float16/bfloat16 arrays in float32, where torch's CPU kernels compute them (the caller
    rounds the result once); others as they are. The first array's dtype decides."""
    if arrays[0].dtype in LOW_PRECISION:
        return tuple(a.astype(np.float32) for a in arrays)
    return arrays


def record(op: Op, inputs: tuple[Any, ...], params: Any, out: Any) -> None:
    """Tell autograd (when installed) that ``op`` ran on inputs that require grad."""
    rec = hooks.record
    if rec is not None:
        rec(op, inputs, params, out)


def wrap(op: Op, data: Any, dt: _dt.dtype, dev: device, inputs: tuple[Any, ...], params: Any,
         requires_grad: bool, out: Tensor | None = None, exact_out: str | None = None) -> Tensor:
    """The forward's result ``data`` as a Tensor of ``dt``, recorded for autograd when
    ``requires_grad``, and written to ``out`` when given (``exact_out``: torch's error when
    ``out`` must have the result's dtype exactly, as for ``write_out_exact``)."""
    if data.dtype != dt.np:
        data = data.astype(dt.np)
    if isinstance(data, np.generic):  # ufuncs answer 0-d operands with numpy scalars
        data = np.asarray(data)
    res = make(data, dt, dev)
    if requires_grad:
        record(op, inputs, params, res)
    if out is None:
        return res
    if exact_out is None:
        return write_out(op.name, out, res)
    return write_out_exact(op.name, out, res, exact_out)


def assign_inplace(self: Tensor, result: Tensor, op: str) -> Tensor:
    """Write ``result`` into ``self`` (the second half of every ``op_``), checking first."""
    if result.dtype is not self.dtype and not _dt.can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"{op}: result type {scalar_type_name(result.dtype)} can't be cast to "
                           f"the desired output type {scalar_type_name(self.dtype)}")
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
    """numpy/torch broadcasting of shapes, with torch's RuntimeError text on mismatch (torch
    compares each shape with those before it, from the last dim)."""
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        for i in range(ndim - 1, ndim - len(s) - 1, -1):
            n = s[i - ndim]
            if n != out[i]:
                if out[i] == 1:
                    out[i] = n
                elif n != 1:
                    raise RuntimeError(
                        f"{op}: The size of tensor a ({out[i]}) must match the size of tensor b "
                        f"({n}) at non-singleton dimension {i}")
    return tuple(out)


def broadcast_error(op: str, *arrays: Any) -> RuntimeError:
    """The error for operands (arrays, numbers or None) numpy failed to broadcast."""
    shapes = [np.shape(a) for a in arrays if a is not None]
    try:
        broadcast_shape(op, *shapes)
    except RuntimeError as error:
        return error
    return RuntimeError(f"{op}: shapes {[list(s) for s in shapes]} cannot be broadcast together")


def write_out(op: str, out: Tensor, result: Tensor) -> Tensor:
    """Implements ``out=``: checks first, then resizes ``out`` to the result's shape (with
    torch's warning when it held elements) and copies the result in."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out.device is not result.device:
        raise device_mismatch(op, out.device, result.device)
    if not _dt.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"{op}: result type {scalar_type_name(result.dtype)} can't be cast to "
                           f"the desired output type {scalar_type_name(out.dtype)}")
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


def write_out_exact(op: str, out: Tensor, result: Tensor, message: str,
                    names: Callable[[_dt.dtype], str] = scalar_type_name) -> Tensor:
    """``out=`` for ops whose ``out`` must have the result's dtype, not merely take it.

    ``message`` is torch's error, formatted with ``out`` and ``expected``, the two dtypes as
    ``names`` spells them, and prefixed with ``op`` unless it names the op already.
    """
    if isinstance(out, Tensor) and out.dtype is not result.dtype:
        text = message.format(out=names(out.dtype), expected=names(result.dtype))
        raise RuntimeError(text if text.startswith(op) else f"{op}: {text}")
    return write_out(op, out, result)


def not_implemented(kernel: str, dt: _dt.dtype) -> NotImplementedError:
    """torch's error for a dtype its ``kernel`` is not built for."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(dt)}'")
