"""What every op's wrapper does before dispatching: check, promote and place operands.

Kept flat on purpose: these functions sit on the hot path of every tiny op.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import dtypes as _dt
from ..device import device
from ..dtypes import LIMITS, c_type_name, scalar_type_name
from ..tensor import Tensor
from .conversion import cast

if TYPE_CHECKING:
    from ..dispatch import Op

_SCALARS = (int, float, bool, complex)
_NUMBERS = (bool, int, float, complex, np.generic)
scalar_result = _dt.scalar_result
LOW_PRECISION = (_dt.float16.np, _dt.bfloat16.np)
_F32, _F64 = _dt.float32, _dt.float64
_F32_MAX = float(np.finfo(np.float32).max)


def _first_on_tie(dt: Any) -> bool:
    return bool(np.signbit(np.maximum(np.array([-0.0], dt), np.array([0.0], dt)))[0])


# the float dtypes whose NumPy maximum and minimum give their first operand on a tie of
# zeros (float16's loops; the others give their second)
_FIRST_ON_TIE = frozenset(np.dtype(dt) for dt in (*LOW_PRECISION, np.float32, np.float64)
                          if _first_on_tie(dt))


def keeping_ties(extreme: Any, x: Any, bound: Any) -> Any:
    """``extreme(x, bound)``, NumPy's maximum or minimum, giving ``x`` where the two tie, as
    torch's clamp and relu do: a -0.0 clamped at 0.0 stays -0.0."""
    return extreme(x, bound) if x.dtype in _FIRST_ON_TIE else extreme(bound, x)


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


def prep_binary(op: str, a: Any, b: Any) -> tuple[Any, Any, _dt.dtype, device]:
    """Promote two operands (Tensors or Python scalars) to their common dtype.

    Returns ``(x, y, dtype, device)``: tensors cast (``to_copy``) to the result dtype and
    placed on the op's device; a Python scalar stays a Python scalar (the kernels treat it
    as weakly typed, as torch does).
    """
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            da, db = a.dtype, b.dtype
            dev = a.device
            if da is db and dev is b.device:
                return a, b, da, dev
            if dev is not b.device:
                dev = common_device(op, a, b)
            rdt = _dt.result_type(a, b)
            return cast(a, rdt, dev), cast(b, rdt, dev), rdt, dev
        if type(b) not in _SCALARS:
            b = scalar_operand(op, b)
        rdt = scalar_result(a.dtype, b)
        return (a if a.dtype is rdt else cast(a, rdt)), b, rdt, a.device
    if isinstance(b, Tensor):
        if type(a) not in _SCALARS:
            a = scalar_operand(op, a)
        rdt = scalar_result(b.dtype, a)
        return a, (b if b.dtype is rdt else cast(b, rdt)), rdt, b.device
    raise TypeError(f"{op}(): expected at least one Tensor argument, got "
                    f"{type(a).__name__} and {type(b).__name__}")


def scalar_operand(op: str, value: Any) -> Any:
    """numpy scalars (a bfloat16 one too: the primitives take numbers in that dtype, which a
    formula may read back) become Python scalars; anything else is a TypeError naming the
    op."""
    if isinstance(value, np.generic) and (value.dtype.kind in "biufc"
                                          or value.dtype == _dt.bfloat16.np):
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
            ) -> tuple[list[Any], _dt.dtype, device]:
    """``operands`` (Tensors, Python numbers or None) in their torch result dtype, on the
    device they share with the tensors in ``also`` (which do not promote): tensors cast,
    numbers checked for the dtype and kept as Python numbers, None kept.

    Returns ``(operands, dtype, device)``.
    """
    present = [o for o in operands if o is not None]
    tensors = [o for o in present if isinstance(o, Tensor)]
    dt = _dt.result_type(*present)
    dev = common_device(op, *tensors, *(also or ()))
    out = [None if o is None else cast(o, dt, dev) if isinstance(o, Tensor)
           else scalar_to(op, o, dt).item() for o in operands]
    return out, dt, dev


def upcast(*arrays: Any) -> tuple[Any, ...]:
    """float16/bfloat16 arrays in float32, where torch's CPU kernels compute them (the caller
    rounds the result once); others as they are. The first array's dtype decides."""
    if arrays[0].dtype in LOW_PRECISION:
        return tuple(a.astype(np.float32) for a in arrays)
    return arrays


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


def plain_number(value: Any, t: Tensor) -> bool:
    """An int or float that the float32/float64 tensor ``t`` takes as it is (numpy treats
    Python numbers as weakly typed, as torch does): the hot path checks nothing more."""
    cls = value.__class__
    if cls is not float and cls is not int:
        return False
    dt = t.dtype
    return dt is _F64 or dt is _F32 and -_F32_MAX <= value <= _F32_MAX


def broadcasting(op: Op, operands: tuple[Any, ...], params: dict[str, Any] | None = None
                 ) -> Tensor:
    """Dispatch ``op``; numpy's error for operands that do not broadcast becomes torch's."""
    try:
        return op.door(operands, params)  # type: ignore[no-any-return]
    except ValueError:
        raise broadcast_error(op.name, *operands) from None


def broadcast_error(op: str, *arrays: Any) -> RuntimeError:
    """The error for operands (arrays, numbers or None) numpy failed to broadcast."""
    shapes = [np.shape(a) for a in arrays if a is not None]
    try:
        broadcast_shape(op, *shapes)
    except RuntimeError as error:
        return error
    return RuntimeError(f"{op}: shapes {[list(s) for s in shapes]} cannot be broadcast together")


def not_implemented(kernel: str, dt: _dt.dtype) -> NotImplementedError:
    """torch's error for a dtype its ``kernel`` is not built for."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(dt)}'")



class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError (torch's ``_LinAlgError``): a linear-algebra routine failed
    on its input (LAPACK reported a singular matrix, or no convergence on non-finite
    values)."""
