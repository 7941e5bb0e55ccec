"""Pointwise ops with several operands or parameters: clamp, where, lerp, addcmul, addcdiv,
nan_to_num, float_power, heaviside.

Primitives (operands arrive promoted: tensors in the result dtype, Python numbers weakly
typed; float16/bfloat16 are computed in float32 and rounded once, as torch's CPU kernels
do):

- ``clamp`` (``self``, ``min``, ``max``: tensors, numbers or None);
- ``where`` (``condition``, ``self``, ``other``; params ``dtype`` when both values are
  numbers, the dtype torch gives them);
- ``lerp`` (``self``, ``end``, ``weight``: a tensor or a number);
- ``addcmul``, ``addcdiv`` (``self``, ``tensor1``, ``tensor2``; params ``value``);
- ``nan_to_num`` (``self``; params ``nan``, ``posinf``, ``neginf``);
- ``float_power`` (``self``, ``exponent``: float64 or complex128 tensors, or numbers);
- ``heaviside`` (``self``, ``values``);
- ``lerp_``, ``addcmul_``, ``addcdiv_``: the optimizers' updates, written into their first
  operand, whose dtype all the operands share (one dispatch and no temporary copy).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import xp_of
from ..dispatch import Op, dispatch, register
from ..dtypes import demangled_type_name, scalar_type_name
from ..tensor import Tensor
from .conversion import cast
from .copying import check_writable, write_out, write_out_exact
from .elementwise_factory import SAME_OUT
from .inplace import inplace
from .operands import (
    LOW_PRECISION,
    broadcast_error,
    broadcast_shape,
    check_inplace_shape,
    check_operand,
    checked_scalar,
    common_device,
    not_implemented,
    promote,
    upcast,
)

_F32, _F64, _C128, _BOOL = _dt.float32, _dt.float64, _dt.complex128, _dt.bool
_F32_MAX = float(np.finfo(np.float32).max)
_NUMBERS = (bool, int, float, complex)
_NDARRAY = np.ndarray
_LOW = frozenset(LOW_PRECISION)  # a set: the in-place kernels ask on every optimizer step


def _plain_number(value: Any, t: Tensor) -> bool:
    """An int or float that the float32/float64 tensor ``t`` takes as it is (numpy treats
    Python numbers as weakly typed, as torch does): the hot path checks nothing more."""
    cls = value.__class__
    if cls is not float and cls is not int:
        return False
    dt = t.dtype
    return dt is _F64 or dt is _F32 and -_F32_MAX <= value <= _F32_MAX


def _scalar(op: str, value: Any, dt: _dt.dtype) -> Any:
    """A Python number as torch converts a Scalar for a kernel computing in ``dt`` (checked,
    not rounded; float16 and bfloat16 kernels compute in float32)."""
    if isinstance(value, np.generic):
        value = value.item()
    try:
        return checked_scalar(value, _F32 if dt.np in _LOW else dt)
    except RuntimeError as e:
        raise RuntimeError(f"{op}: {e}") from None


def _broadcast(op: Op, operands: tuple[Any, ...], params: dict[str, Any] | None = None
               ) -> Tensor:
    """Dispatch ``op``; numpy's error for operands that do not broadcast becomes torch's."""
    try:
        return op.door(operands, params)  # type: ignore[no-any-return]
    except ValueError:
        raise broadcast_error(op.name, *operands) from None


def _written(x: Any, value: Any) -> Any:
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


# ----------------------------------------------------------------------------- clamp

def _clamp(x: Any, lo: Any, hi: Any) -> Any:
    # maximum/minimum propagate NaN from either side, as torch's clamp does
    r = x if lo is None else np.maximum(x, lo)
    if hi is not None:
        r = np.minimum(r, hi)
    return _exactly(r, x.dtype)


def _exactly(r: Any, dt: np.dtype) -> Any:
    """``r`` in ``dt``: ml_dtypes' bfloat16 does not always take Python numbers as weakly
    typed (``where(c, 1.0, b)`` gives float32), so a result may need casting back."""
    return r if r.dtype == dt else r.astype(dt)


CLAMP = register("clamp", _clamp, meta.elementwise("promote"), "elementwise",
                 arg_names=("self", "min", "max"))


def clamp(input: Tensor, min: Any = None, max: Any = None, *, out: Tensor | None = None) -> Tensor:
    """torch.clamp: ``min(max(input, min), max)``; bounds are numbers or tensors, either None.

    The result dtype promotes input with the bounds (an int tensor clamped by 0.5 is float).
    """
    if input.__class__ is Tensor and (min is None or _plain_number(min, input)) and (
            max is None or _plain_number(max, input)) and (min is not None or max is not None):
        # the common case, kept flat: a float32/float64 tensor and Python-number bounds
        res = CLAMP.door((input, min, max), None)
        return res if out is None else write_out_exact("clamp", out, res, SAME_OUT)
    lo_t, hi_t = _check_bounds(input, min, max)
    (x, lo, hi), _, _ = promote("clamp", (input, min, max))
    res = _broadcast(CLAMP, (x, lo, hi))
    if out is None:
        return res
    if lo_t or hi_t:
        return write_out("clamp", out, res)
    return write_out_exact("clamp", out, res, SAME_OUT)


def _check_bounds(input: Any, lo: Any, hi: Any) -> tuple[bool, bool]:
    """torch's checks of clamp's arguments; whether each bound is a tensor."""
    check_operand("clamp", "input", input, numbers=False)
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    lo_t, hi_t = isinstance(lo, Tensor), isinstance(hi, Tensor)
    if lo is not None and hi is not None and lo_t != hi_t:
        raise TypeError("clamp(): min and max must both be Tensors or both be numbers, got "
                        f"{type(lo).__name__} and {type(hi).__name__}")
    for name, bound in (("min", lo), ("max", hi)):
        if bound is not None:
            check_operand("clamp", name, bound)
    dt = _dt.result_type(*[o for o in (input, lo, hi) if o is not None])
    if dt.category == 3:
        raise NotImplementedError("clamp is not supported for complex types")
    if dt is _BOOL and ((lo is None) == (hi is None) or not (lo_t or hi_t)):
        # torch's bool kernels clamp by one tensor bound only
        raise not_implemented("clamp_cpu" if lo_t else "clamp_scalar_cpu", dt)
    return lo_t, hi_t


def clamp_min(input: Tensor, min: Any, *, out: Tensor | None = None) -> Tensor:
    """torch.clamp_min: ``clamp(input, min=min)``."""
    return clamp(input, min, None, out=out)


def clamp_max(input: Tensor, max: Any, *, out: Tensor | None = None) -> Tensor:
    """torch.clamp_max: ``clamp(input, max=max)``."""
    return clamp(input, None, max, out=out)


clip = clamp


# ----------------------------------------------------------------------------- where

def _where(condition: Any, x: Any, y: Any, *, dtype: _dt.dtype | None = None) -> Any:
    r = xp_of(condition).where(condition, x, y)
    if dtype is not None:
        return r.astype(dtype.np, copy=False)
    return _exactly(r, (y if x.__class__ in _NUMBERS else x).dtype)


def _where_meta(condition: Any, x: Any, y: Any, *, dtype: _dt.dtype | None = None) -> Any:
    shape = meta.broadcast_shapes(*[o.shape for o in (condition, x, y) if hasattr(o, "shape")])
    dt = meta.result_dtype(x, y) if dtype is None else dtype
    return meta.strided(shape, dt, meta.elementwise_strides(shape, (condition, x, y)))


WHERE = register("where", _where, _where_meta, "elementwise",
                 arg_names=("condition", "self", "other"))
_WHERE_OUT = "Expected out type to be {expected} but got {out}"


def where(condition: Tensor, input: Any = None, other: Any = None, *,
          out: Tensor | None = None) -> Any:
    """torch.where(condition, input, other): ``input`` where condition holds, else ``other``.

    Either value may be a Python number; the result dtype promotes the two. With only
    ``condition``, the tuple of indices of its nonzero elements (``nonzero(as_tuple=True)``).
    """
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if condition.__class__ is Tensor and condition.dtype is _BOOL and _plain_values(
            condition, input, other):
        c, x, y, params = condition, input, other, None
    else:
        c, x, y, params = _where_operands(condition, input, other)
    res = _broadcast(WHERE, (c, x, y), params)
    return res if out is None else write_out_exact("where", out, res, _WHERE_OUT)


def _plain_values(condition: Tensor, x: Any, y: Any) -> bool:
    """The hot path of where: on condition's device, two tensors of one dtype, or a
    float32/float64 tensor and a Python number that fits it (formulas' masks)."""
    dev = condition.device
    if x.__class__ is Tensor:
        if y.__class__ is Tensor:
            return x.dtype is y.dtype and x.device is dev and y.device is dev
        return x.device is dev and _plain_number(y, x)
    return y.__class__ is Tensor and y.device is dev and _plain_number(x, y)


def _where_operands(condition: Any, input: Any, other: Any
                    ) -> tuple[Tensor, Any, Any, dict[str, Any] | None]:
    """where's operands checked and promoted, on one device, and its params."""
    check_operand("where", "condition", condition, numbers=False)
    if input is None or other is None:
        raise TypeError("where(): expected both input and other (or neither), got only one")
    cdt = condition.dtype
    if cdt is not _BOOL and cdt is not _dt.uint8:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {scalar_type_name(cdt)}")
    check_operand("where", "input", input)
    check_operand("where", "other", other)
    (x, y), dt, dev = promote("where", (input, other), [condition])
    # two numbers: the kernel is told the dtype torch gives them (numpy would differ)
    numbers = not isinstance(x, Tensor) and not isinstance(y, Tensor)
    return cast(condition, cdt, dev), x, y, {"dtype": dt} if numbers else None


def _tensor_where(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    """Tensor.where(condition, other): ``where(condition, self, other)``."""
    return where(condition, self, other)  # type: ignore[no-any-return]


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
    res = _broadcast(LERP, (x, e, w))
    return res if out is None else write_out("lerp", out, res)


def lerp_(self: Tensor, end: Tensor, weight: Any) -> Tensor:
    """In-place form of ``lerp``."""
    if _plain_lerp(self, end, weight):
        return _update(LERP_, (self, end, weight), None)
    _, e, w = _lerp_operands(self, end, weight)
    return _update(LERP_, (self, e, w), None)


def _plain_lerp(input: Any, end: Any, weight: Any) -> bool:
    """float32/float64 tensors of one dtype and device, and a Python weight."""
    return (input.__class__ is Tensor and end.__class__ is Tensor and end.dtype is input.dtype
            and end.device is input.device and _plain_number(weight, input))


def _lerp_operands(input: Any, end: Any, weight: Any) -> tuple[Tensor, Tensor, Any]:
    """lerp's operands checked (torch requires one floating dtype) and on one device."""
    check_operand("lerp", "input", input, numbers=False)
    check_operand("lerp", "end", end, numbers=False)
    check_operand("lerp", "weight", weight)
    dt = input.dtype
    if end.dtype is not dt:
        raise RuntimeError(f"lerp: expected dtype {demangled_type_name(dt)} for `end` but got "
                           f"dtype {demangled_type_name(end.dtype)}")
    if dt.category < 2:
        raise not_implemented("lerp_kernel_scalar", dt)
    if not isinstance(weight, Tensor):
        dev = common_device("lerp", input, end)
        return cast(input, dt, dev), cast(end, dt, dev), _scalar("lerp", weight, dt)
    if weight.dtype is not dt and weight._data.ndim:
        raise RuntimeError(f"lerp: expected dtype {demangled_type_name(dt)} for `weight` but "
                           f"got dtype {demangled_type_name(weight.dtype)}")
    dev = common_device("lerp", input, end, weight)
    return cast(input, dt, dev), cast(end, dt, dev), cast(weight, dt, dev)


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
_ADDCDIV_INTEGERS = (
    "Integer division with addcdiv is no longer supported, and in a future release "
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
        value = _addc_value(op.name, value, dt)
    res = _broadcast(op, (x, a, b), {"value": value})
    return res if out is None else write_out(op.name, out, res)


def _addc_(op: Op, self: Tensor, tensor1: Any, tensor2: Any, value: Any,
           promoted: Callable[..., Tensor]) -> Tensor:
    """``addcmul_``/``addcdiv_``: the update primitive where the operands take self's dtype,
    else ``promoted`` (computed out of place in the promoted dtype, then cast into self)."""
    if _plain_addc(self, tensor1, tensor2, value):
        return _update(op, (self, tensor1, tensor2), {"value": value})
    name = op.functional.name  # type: ignore[union-attr]
    dt = _check_addc(name, self, tensor1, tensor2)
    if dt is not self.dtype:
        return promoted(self, tensor1, tensor2, value=value)
    dev = common_device(name, self, tensor1, tensor2)
    return _update(op, (self, cast(tensor1, dt, dev), cast(tensor2, dt, dev)),
                   {"value": _addc_value(name, value, dt)})


def _plain_addc(input: Any, tensor1: Any, tensor2: Any, value: Any) -> bool:
    """float32/float64 tensors of one dtype and device, and a Python value."""
    return (input.__class__ is Tensor and tensor1.__class__ is Tensor
            and tensor2.__class__ is Tensor and input.dtype is tensor1.dtype is tensor2.dtype
            and input.device is tensor1.device is tensor2.device and _plain_number(value, input))


def _check_addc(name: str, input: Any, tensor1: Any, tensor2: Any) -> _dt.dtype:
    """torch's checks of addcmul's and addcdiv's tensors; the dtype they promote to."""
    for arg, val in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        check_operand(name, arg, val, numbers=False)
    if name == "addcdiv" and tensor1.dtype.category < 2 and tensor2.dtype.category < 2:
        raise RuntimeError(_ADDCDIV_INTEGERS)
    dt = _dt.result_type(input, tensor1, tensor2)
    if dt is _BOOL:
        raise not_implemented(f"{name}_cpu_out", dt)
    return dt


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


# ----------------------------------------------------------------------------- nan_to_num

def _nan_to_num(x: Any, *, nan: float, posinf: float | None, neginf: float | None) -> Any:
    kind = x.dtype.kind
    if kind in "biu":
        return x.copy()
    if kind == "c":
        r = x.copy()
        r.real = _nan_to_num(x.real, nan=nan, posinf=posinf, neginf=neginf)
        r.imag = _nan_to_num(x.imag, nan=nan, posinf=posinf, neginf=neginf)
        return r
    xp, dt = xp_of(x), x.dtype
    inf = dt.type(np.inf)
    # replacements converted to the dtype as torch converts them (beyond its range: inf)
    r = xp.where(xp.isnan(x), dt.type(nan), x)
    r = xp.where(x == inf, dt.type(posinf), r)
    return xp.where(x == -inf, dt.type(neginf), r)


# torch writes it into ``empty_like(input)``: laid out like the input
NAN_TO_NUM = register("nan_to_num", _nan_to_num, meta.like_input, "elementwise",
                      arg_names=("self",))


def nan_to_num(input: Tensor, nan: float | None = 0.0, posinf: float | None = None,
               neginf: float | None = None, *, out: Tensor | None = None) -> Tensor:
    """torch.nan_to_num: NaN to ``nan``, +inf/-inf to ``posinf``/``neginf`` (default: the
    dtype's largest/lowest finite value). Integer and bool tensors come back as a copy."""
    check_operand("nan_to_num", "input", input, numbers=False)
    dt = input.dtype
    if dt.category >= 2:
        info = _dt.finfo(dt.to_real())
        posinf = float(info.max if posinf is None else posinf)
        neginf = float(info.min if neginf is None else neginf)
    params = {"nan": 0.0 if nan is None else float(nan), "posinf": posinf, "neginf": neginf}
    res = dispatch(NAN_TO_NUM, (input,), params)
    return res if out is None else write_out_exact(
        "nan_to_num", out, res, "dtype of out: {out} should be same as input: {expected}")


# ----------------------------------------------------------------------------- float_power

FLOAT_POWER = register("float_power", np.power, meta.elementwise("promote"), "elementwise",
                       arg_names=("self", "exponent"))


def _float_power_dtype(input: Any, exponent: Any) -> _dt.dtype:
    for v in (input, exponent):
        if (v.dtype.category == 3) if isinstance(v, Tensor) else isinstance(v, complex):
            return _C128
    return _F64


def float_power(input: Any, exponent: Any, *, out: Tensor | None = None) -> Tensor:
    """torch.float_power: ``input ** exponent`` computed in float64 (complex128 for complex)."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power(): expected at least one Tensor argument, got "
                        f"{type(input).__name__} and {type(exponent).__name__}")
    check_operand("float_power", "input", input)
    check_operand("float_power", "exponent", exponent)
    dt = _float_power_dtype(input, exponent)
    dev = common_device("float_power", *[t for t in (input, exponent) if isinstance(t, Tensor)])
    # torch converts the tensors (``to_copy``) and the number (toDouble / toComplexDouble)
    number = complex if dt is _C128 else float
    x, y = (cast(v, dt, dev) if isinstance(v, Tensor) else number(v) for v in (input, exponent))
    res = _broadcast(FLOAT_POWER, (x, y))
    return res if out is None else write_out_exact(
        "float_power", out, res, "the output given to float_power has dtype {out} but the "
        "operation's result requires dtype {expected}")


_float_power_inplace = inplace(float_power, "float_power_")


def float_power_(self: Tensor, exponent: Any) -> Tensor:
    """In-place float_power: ``self`` must already be float64 (complex128 for complex)."""
    dt = _float_power_dtype(self, exponent)
    if self.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{scalar_type_name(self.dtype)} but the operation's result requires "
                           f"dtype {scalar_type_name(dt)}")
    return _float_power_inplace(self, exponent)


# ----------------------------------------------------------------------------- heaviside

def _heaviside(x: Any, values: Any) -> Any:
    # NaN input gives 0, as in torch (numpy's heaviside gives NaN)
    return xp_of(x).where(x == 0, values, (x > 0).astype(x.dtype))


HEAVISIDE = register("heaviside", _heaviside, meta.elementwise("promote"), "elementwise",
                     differentiable=False, arg_names=("self", "values"))


def heaviside(input: Tensor, values: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.heaviside: 0 where input < 0, ``values`` where input == 0, 1 where input > 0."""
    check_operand("heaviside", "input", input, numbers=False)
    check_operand("heaviside", "values", values, numbers=False)
    dt = input.dtype
    if values.dtype is not dt:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if dt.category == 3:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    dev = common_device("heaviside", input, values)
    res = _broadcast(HEAVISIDE, (cast(input, dt, dev), cast(values, dt, dev)))
    return res if out is None else write_out_exact(
        "heaviside", out, res, "heaviside is not yet implemented for tensors with different "
        "dtypes.")


FUNCTIONS = [
    "clamp", "clip", "clamp_min", "clamp_max", "where", "lerp", "addcmul", "addcdiv",
    "nan_to_num", "float_power", "heaviside",
]


def _methods() -> dict[str, Any]:
    g = globals()
    methods: dict[str, Any] = {n: g[n] for n in FUNCTIONS}
    methods["where"] = _tensor_where
    for n in ("clamp", "clamp_min", "clamp_max", "nan_to_num", "heaviside"):
        methods[n + "_"] = inplace(g[n], n + "_")
    methods.update(clip_=methods["clamp_"], lerp_=lerp_, addcmul_=addcmul_, addcdiv_=addcdiv_,
                   float_power_=float_power_)
    return methods


METHODS = _methods()
