"""The optimizers' fused updates: lerp, addcmul, addcdiv and their in-place forms.

Primitives (operands arrive promoted: tensors in the result dtype, Python numbers weakly
typed; float16/bfloat16 are computed in float32 and rounded once, as torch's CPU kernels
do):

- ``lerp`` (``self``, ``end``, ``weight``: a tensor or a number);
- ``addcmul``, ``addcdiv`` (``self``, ``tensor1``, ``tensor2``; params ``value``);
- ``lerp_``, ``addcmul_``, ``addcdiv_``: the updates written into their first operand,
  whose dtype all the operands share (one dispatch and no temporary copy).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import xp_of
from ..dispatch import Op, register
from ..dtypes import demangled_type_name, scalar_type_name
from ..tensor import Tensor
from .conversion import cast
from .copying import check_overlap, check_writable, write_out
from .inplace import inplace
from .operands import (
    LOW_PRECISION,
    broadcast_shape,
    broadcasting,
    check_inplace_shape,
    check_operand,
    checked_scalar,
    common_device,
    not_implemented,
    plain_number,
    promote,
    upcast,
)

_F32, _BOOL = _dt.float32, _dt.bool
_NUMBERS = (bool, int, float, complex)
_NDARRAY = np.ndarray
_LOW = frozenset(LOW_PRECISION)  # a set: the in-place kernels ask on every optimizer step


def _scalar(op: str, value: Any, dt: _dt.dtype) -> Any:
    """A Python number as torch converts a Scalar for a kernel computing in ``dt`` (checked,
    not rounded; float16 and bfloat16 kernels compute in float32)."""
    if isinstance(value, np.generic):
        value = value.item()
    try:
        return checked_scalar(value, _F32 if dt.np in _LOW else dt)
    except RuntimeError as e:
        raise RuntimeError(f"{op}: {e}") from None


def _written(x: Any, value: Any) -> Any:
    if value.shape != x.shape:  # copyto would drop the value's leading 1-dims
        raise ValueError("the value does not fit the written-to array")
    xp_of(x).copyto(x, value)
    return x


def _updated(x: Any, *operands: Any, **params: Any) -> Any:
    """The meta rule of an in-place update: its first operand, which the others broadcast to
    (numpy's error otherwise, as its kernels give)."""
    shapes = [o.shape for o in operands if hasattr(o, "shape")]
    if meta.broadcast_shapes(x.shape, *shapes) != tuple(x.shape):
        raise ValueError("non-broadcastable output operand")
    return x


def _update(op: Op, operands: tuple[Any, ...], params: dict[str, Any] | None) -> Tensor:
    """Dispatch the in-place update ``op`` of ``operands[0]``; torch's errors for shapes
    that do not broadcast to it and memory it cannot write (it is left unchanged)."""
    self = operands[0]
    data = self._data
    check_overlap(op.name, self, operands[1:])
    if data.__class__ is not _NDARRAY and 0 in data.strides:
        check_writable(op.name, self)  # numpy refuses writes into expanded arrays itself
    try:
        return op.door(operands, params)  # type: ignore[no-any-return]
    except ValueError:  # raised before anything is written
        shapes = [o._data.shape for o in operands[1:] if isinstance(o, Tensor)]
        if shapes:
            check_inplace_shape(op.name, data.shape, broadcast_shape(op.name, *shapes))
        check_writable(op.name, self)
        raise


# ----------------------------------------------------------------------------- lerp

def _lerp(x: Any, end: Any, weight: Any) -> Any:
    # torch's two-sided formula: exact at weight 0 and 1, stable near both ends
    if weight.__class__ in _NUMBERS:
        a, b = upcast(x, end)
        diff = b - a
        r = a + weight * diff if abs(weight) < 0.5 else b - diff * (1 - weight)
    else:
        a, b, w = upcast(x, end, weight)
        diff = b - a
        r = xp_of(a).where(abs(w) < 0.5, a + w * diff, b - diff * (1 - w))
    return r.astype(x.dtype, copy=False)


def _lerp_(x: Any, end: Any, weight: Any) -> Any:
    if x.dtype in _LOW or weight.__class__ not in _NUMBERS:
        return _written(x, _lerp(x, end, weight))
    # the arithmetic of _lerp, written into x
    if abs(weight) < 0.5:
        x += weight * (end - x)
    else:
        x[...] = end - (end - x) * (1 - weight)
    return x


LERP = register("lerp", _lerp, meta.elementwise("promote"), "elementwise",
                arg_names=("self", "end", "weight"))
LERP_ = register("lerp_", _lerp_, _updated, "elementwise", mutates=True, functional=LERP,
                 arg_names=LERP.arg_names)


def lerp(input: Tensor, end: Tensor, weight: Any, *, out: Tensor | None = None) -> Tensor:
    """torch.lerp: ``input + weight * (end - input)``; weight is a number or a tensor."""
    if _plain_lerp(input, end, weight):
        x, e, w = input, end, weight  # the optimizers' case
    else:
        x, e, w = _lerp_operands(input, end, weight)
    res = broadcasting(LERP, (x, e, w))
    return res if out is None else write_out("lerp", out, res)


def lerp_(self: Tensor, end: Tensor, weight: Any) -> Tensor:
    """In-place form of ``lerp``."""
    if _plain_lerp(self, end, weight):
        return _update(LERP_, (self, end, weight), None)
    _, e, w = _lerp_operands(self, end, weight, True)
    return _update(LERP_, (self, e, w), None)


def _plain_lerp(input: Any, end: Any, weight: Any) -> bool:
    """float32/float64 tensors of one dtype and device, and a Python weight."""
    return (input.__class__ is Tensor and end.__class__ is Tensor and end.dtype is input.dtype
            and end.device is input.device and plain_number(weight, input))


def _lerp_shapes(input: Tensor, end: Tensor, weight: Tensor | None, inplace_op: bool
                 ) -> None:
    """The operands broadcast together (and, in place, to self's shape)."""
    shapes = [t._data.shape for t in (input, end, weight) if t is not None]
    shape = broadcast_shape("lerp_" if inplace_op else "lerp", *shapes)
    if inplace_op:
        check_inplace_shape("lerp_", input._data.shape, shape)
        # torch's iterator refuses shared and overlapping memory before its kernel checks
        # the dtype
        check_writable("lerp_", input)
        check_overlap("lerp_", input, [t for t in (end, weight) if t is not None])


def _lerp_operands(input: Any, end: Any, weight: Any, inplace_op: bool = False
                   ) -> tuple[Tensor, Tensor, Any]:
    """lerp's operands checked in torch's order (end's dtype, a dimensioned weight's dtype,
    the shapes, then the kernel's dtype) and cast to the result dtype on one device.

    A 0-d weight tensor takes part in the promotion (an integer input with a 0-d float
    weight computes in the weight's dtype, as torch's); the in-place form writes the result
    into self's dtype, which it must be castable to."""
    check_operand("lerp", "input", input, numbers=False)
    check_operand("lerp", "end", end, numbers=False)
    check_operand("lerp", "weight", weight)
    dt = input.dtype
    if end.dtype is not dt:
        raise RuntimeError(f"lerp: expected dtype {demangled_type_name(dt)} for `end` but got "
                           f"dtype {demangled_type_name(end.dtype)}")
    if not isinstance(weight, Tensor):
        _lerp_shapes(input, end, None, inplace_op)
        if dt.category < 2:
            raise not_implemented("lerp_kernel_scalar", dt)
        dev = common_device("lerp", input, end)
        return cast(input, dt, dev), cast(end, dt, dev), _scalar("lerp", weight, dt)
    if weight.dtype is not dt and weight._data.ndim:
        raise RuntimeError(f"lerp: expected dtype {demangled_type_name(dt)} for `weight` but "
                           f"got dtype {demangled_type_name(weight.dtype)}")
    _lerp_shapes(input, end, weight, inplace_op)
    common = _dt.result_type(input, end, weight)
    if inplace_op and not _dt.can_cast(common, dt):
        raise RuntimeError(f"lerp_: result type {scalar_type_name(common)} can't be cast to "
                           f"the desired output type {scalar_type_name(dt)}")
    if common.category < 2:
        raise not_implemented("lerp_kernel_tensor", common)
    dev = common_device("lerp", input, end, weight)
    return cast(input, common, dev), cast(end, common, dev), cast(weight, common, dev)


# ----------------------------------------------------------------------------- addcmul, addcdiv

def _addcmul(x: Any, t1: Any, t2: Any, *, value: Any) -> Any:
    a, b, c = upcast(x, t1, t2)
    return (a + value * b * c).astype(x.dtype, copy=False)


def _addcdiv(x: Any, t1: Any, t2: Any, *, value: Any) -> Any:
    a, b, c = upcast(x, t1, t2)
    return (a + value * b / c).astype(x.dtype, copy=False)


def _addcmul_(x: Any, t1: Any, t2: Any, *, value: Any) -> Any:
    if x.dtype in _LOW:
        return _written(x, _addcmul(x, t1, t2, value=value))
    x += value * t1 * t2  # the arithmetic of _addcmul, written into x
    return x


def _addcdiv_(x: Any, t1: Any, t2: Any, *, value: Any) -> Any:
    if x.dtype in _LOW:
        return _written(x, _addcdiv(x, t1, t2, value=value))
    x += value * t1 / t2  # the arithmetic of _addcdiv, written into x
    return x


_ADDC_NAMES = ("self", "tensor1", "tensor2")
ADDCMUL = register("addcmul", _addcmul, meta.elementwise("promote"), "elementwise",
                   arg_names=_ADDC_NAMES)
ADDCDIV = register("addcdiv", _addcdiv, meta.elementwise("promote"), "elementwise",
                   arg_names=_ADDC_NAMES)
ADDCMUL_ = register("addcmul_", _addcmul_, _updated, "elementwise", mutates=True,
                    functional=ADDCMUL, arg_names=_ADDC_NAMES)
ADDCDIV_ = register("addcdiv_", _addcdiv_, _updated, "elementwise", mutates=True,
                    functional=ADDCDIV, arg_names=_ADDC_NAMES)
_ADDCDIV_INTEGERS = (  # torch's words, its two spaces after "future" too
    "Integer division with addcdiv is no longer supported, and in a future  release "
    "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
    "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
    ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
    "float inputs. The future addcdiv behavior is just the latter implementation: "
    "(input + value * tensor1 / tensor2), for all dtypes.")


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1,
            out: Tensor | None = None) -> Tensor:
    """torch.addcmul: ``input + value * tensor1 * tensor2``."""
    return _addc(ADDCMUL, input, tensor1, tensor2, value, out)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1,
            out: Tensor | None = None) -> Tensor:
    """torch.addcdiv: ``input + value * tensor1 / tensor2`` (true division)."""
    return _addc(ADDCDIV, input, tensor1, tensor2, value, out)


def _addc(op: Op, input: Any, tensor1: Any, tensor2: Any, value: Any, out: Tensor | None
          ) -> Tensor:
    if _plain_addc(input, tensor1, tensor2, value):
        x, a, b = input, tensor1, tensor2  # the optimizers' case
    else:
        _check_addc(op.name, input, tensor1, tensor2)
        (x, a, b), dt, _ = promote(op.name, (input, tensor1, tensor2))
        if dt is _BOOL:
            _refuse_bool(op.name, (x, a, b))
        value = _addc_value(op.name, value, dt)
    res = broadcasting(op, (x, a, b), {"value": value})
    return res if out is None else write_out(op.name, out, res)


def _addc_(op: Op, self: Tensor, tensor1: Any, tensor2: Any, value: Any,
           promoted: Callable[..., Tensor]) -> Tensor:
    """``addcmul_``/``addcdiv_``: the update primitive where the operands take self's dtype,
    else ``promoted`` (computed out of place in the promoted dtype, then cast into self)."""
    if _plain_addc(self, tensor1, tensor2, value):
        return _update(op, (self, tensor1, tensor2), {"value": value})
    name = op.functional.name  # type: ignore[union-attr]
    dt = _check_addc(name, self, tensor1, tensor2)
    if dt is _BOOL:
        _refuse_bool(op.name, (self, tensor1, tensor2), self)
    if dt is not self.dtype:
        return promoted(self, tensor1, tensor2, value=value)
    dev = common_device(name, self, tensor1, tensor2)
    return _update(op, (self, cast(tensor1, dt, dev), cast(tensor2, dt, dev)),
                   {"value": _addc_value(name, value, dt)})


def _plain_addc(input: Any, tensor1: Any, tensor2: Any, value: Any) -> bool:
    """float32/float64 tensors of one dtype and device, and a Python value."""
    return (input.__class__ is Tensor and tensor1.__class__ is Tensor
            and tensor2.__class__ is Tensor and input.dtype is tensor1.dtype is tensor2.dtype
            and input.device is tensor1.device is tensor2.device and plain_number(value, input))


def _check_addc(name: str, input: Any, tensor1: Any, tensor2: Any) -> _dt.dtype:
    """torch's checks of addcmul's and addcdiv's tensors; the dtype they promote to."""
    for arg, val in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        check_operand(name, arg, val, numbers=False)
    if name == "addcdiv" and tensor1.dtype.category < 2 and tensor2.dtype.category < 2:
        raise RuntimeError(_ADDCDIV_INTEGERS)
    return _dt.result_type(input, tensor1, tensor2)


def _refuse_bool(name: str, operands: tuple[Tensor, ...], written: Tensor | None = None
                 ) -> None:
    """torch has no bool addcmul: its kernel refuses one after the iterator's checks of the
    memory ``written`` (in place) and of the shapes."""
    if written is not None:
        check_writable(name, written)
        check_overlap(name, written, operands[1:])
    shape = broadcast_shape(name, *(t._data.shape for t in operands))
    if written is not None:
        check_inplace_shape(name, written._data.shape, shape)
    raise not_implemented("addcmul_cpu_out", _BOOL)


def _addc_value(name: str, value: Any, dt: _dt.dtype) -> Any:
    if isinstance(value, Tensor):
        value = value.item()  # torch takes a one-element tensor as the Scalar it holds
    return _scalar(name, value, dt)


_addcmul_promoted = inplace(addcmul, "addcmul_")
_addcdiv_promoted = inplace(addcdiv, "addcdiv_")


def addcmul_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """In-place form of ``addcmul``."""
    return _addc_(ADDCMUL_, self, tensor1, tensor2, value, _addcmul_promoted)


def addcdiv_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """In-place form of ``addcdiv``."""
    return _addc_(ADDCDIV_, self, tensor1, tensor2, value, _addcdiv_promoted)


FUNCTIONS = ["lerp", "addcmul", "addcdiv"]
METHODS = {"lerp": lerp, "addcmul": addcmul, "addcdiv": addcdiv, "lerp_": lerp_,
           "addcmul_": addcmul_, "addcdiv_": addcdiv_}
