"""Pointwise ops with several operands or parameters: clamp, where, lerp, addcmul, isclose,
softmax...

Each primitive is registered once; its xp forward takes the operand arrays already in the
result dtype (float16/bfloat16 are computed in float32 and rounded once, as torch's CPU
kernels do) and its parameters as keywords, the same keywords ``record`` passes autograd.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import device
from ..dispatch import grad_mode, hooks, register
from ..tensor import Tensor, bump_version, make, wrap_dim
from .conversion import to
from .inplace import inplace
from .operands import as_array, device_mismatch, record, write_out

_F16, _BF16, _F32, _F64, _BOOL = _dt.float16, _dt.bfloat16, _dt.float32, _dt.float64, _dt.bool
_NUMBERS = (bool, int, float, complex)
_F32_MAX = float(np.finfo(np.float32).max)
_LIMITS = {**{dt: (int(np.iinfo(dt.np).min), int(np.iinfo(dt.np).max))
              for dt in (_dt.uint8, _dt.int8, _dt.int16, _dt.int32, _dt.int64)},
           **{dt: (-_dt.finfo(dt).max, _dt.finfo(dt).max) for dt in (_F16, _BF16, _F32, _F64)}}
# torch names dtypes by their C++ types in conversion errors
_CTYPE = {"bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t",
          "int32": "int", "int64": "int64_t", "float16": "c10::Half",
          "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
          "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


# ----------------------------------------------------------------------------- operands

def scalar_to(op: str, value: Any, dt: _dt.dtype) -> Any:
    """A Python number as a 0-d array of ``dt``, with torch's overflow check.

    Negative ints may wrap into unsigned types (torch allows ``uint8 - 1``; floats may not);
    values outside the type's range are a RuntimeError, as are complex values for real types.
    """
    if isinstance(value, np.generic):
        value = value.item()
    if dt.category == 1:
        lowest, highest = _LIMITS[dt]
        if isinstance(value, complex):
            value = _real_or_raise(value, dt)
        low = -highest if lowest == 0 and isinstance(value, int) else lowest
        if not (math.isfinite(value) and low <= value <= highest):
            raise RuntimeError(f"{op}: value cannot be converted to type {_CTYPE[dt.name]} "
                               "without overflow")
        v = math.trunc(value)
        return np.asarray(v % (highest + 1) if v < 0 and lowest == 0 else v, dt.np)
    if dt.category == 2:
        if isinstance(value, complex):
            value = _real_or_raise(value, dt)
        if math.isfinite(value) and abs(value) > _LIMITS[dt][1]:
            raise RuntimeError(f"{op}: value cannot be converted to type {_CTYPE[dt.name]} "
                               "without overflow")
    return np.asarray(value, dt.np)


def _real_or_raise(value: complex, dt: _dt.dtype) -> float:
    if value.imag != 0:
        raise RuntimeError(f"value cannot be converted to type {_CTYPE[dt.name]} without overflow")
    return value.real


def check_operand(op: str, name: str, value: Any, numbers: bool = True) -> None:
    """TypeError, in torch's words, for an operand that is not a Tensor (or a number)."""
    if isinstance(value, Tensor) or (numbers and isinstance(value, (*_NUMBERS, np.generic))):
        return
    kind = "Tensor or Number" if numbers else "Tensor"
    raise TypeError(f"{op}(): argument '{name}' must be {kind}, not {type(value).__name__}")


def common_device_of(op: str, tensors: list[Tensor]) -> device:
    """The device of an op on several tensors; 0-d CPU tensors may join a CUDA op."""
    dev = None
    for t in tensors:
        d = t.device
        if dev is None or dev is d:
            dev = d
        elif d.type == "cpu" and t._data.ndim == 0:
            continue
        elif dev.type == "cpu" and all(u._data.ndim == 0 for u in tensors if u.device is dev):
            dev = d
        else:
            raise device_mismatch(op, dev, d)
    assert dev is not None
    return dev


def promote(op: str, operands: tuple[Any, ...], also: list[Tensor] | None = None
            ) -> tuple[list[Any], _dt.dtype, device, bool]:
    """``operands`` (Tensors, Python numbers or None) as arrays of their torch result dtype,
    on the device they share with the tensors in ``also`` (which do not promote).

    Returns ``(arrays, dtype, device, requires_grad)``; None stays None.
    """
    present = [o for o in operands if o is not None]
    tensors = [o for o in present if isinstance(o, Tensor)]
    dt = _dt.result_type(*present)
    dev = common_device_of(op, tensors + (also or []))
    arrays = [None if o is None else as_array(o, dt, dev) if isinstance(o, Tensor)
              else _on(scalar_to(op, o, dt), dev) for o in operands]
    return arrays, dt, dev, any(t._requires_grad for t in tensors)


def _on(arr: Any, dev: device) -> Any:
    return arr if dev.type == "cpu" else dev.xp.asarray(arr)


def _broadcast_error(op: str, arrays: list[Any]) -> RuntimeError:
    shapes = [tuple(np.shape(a)) for a in arrays if a is not None]
    ndim = max(len(s) for s in shapes)
    for i in range(1, ndim + 1):
        sizes = [s[-i] for s in shapes if len(s) >= i and s[-i] != 1]
        if len(set(sizes)) > 1:
            return RuntimeError(f"{op}: The size of tensor a ({sizes[0]}) must match the size of "
                                f"tensor b ({sizes[1]}) at non-singleton dimension {ndim - i}")
    return RuntimeError(f"{op}: shapes {[list(s) for s in shapes]} cannot be broadcast together")


def _compute(dt: _dt.dtype) -> Any:
    """The numpy dtype an op computes in: float32 for float16/bfloat16 (rounded once after)."""
    return np.float32 if dt is _F16 or dt is _BF16 else None


def _not_implemented(op: str, dt: _dt.dtype) -> NotImplementedError:
    return NotImplementedError(f"\"{op}\" not implemented for '{_pretty(dt)}'")


def _pretty(dt: _dt.dtype) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}[dt.name]


def _finish(op: Any, r: Any, dt: _dt.dtype, dev: device, inputs: tuple[Any, ...], params: Any,
            rg: bool, out: Tensor | None, exact_out: str | None = None) -> Tensor:
    """Wrap the forward's result, record it, and write it to ``out`` (``exact_out``: the
    error when ``out`` must have the result's dtype exactly, as for some torch ops)."""
    if r.dtype != dt.np:
        r = r.astype(dt.np)
    if isinstance(r, np.generic):  # ufuncs answer 0-d operands with numpy scalars
        r = np.asarray(r)
    res = make(r, dt, dev)
    if rg:
        record(op, inputs, params, res)
    if out is None:
        return res
    return write_out_exact(op.name, out, res, exact_out) if exact_out else write_out(
        op.name, out, res)


def write_out_exact(op: str, out: Tensor, result: Tensor, message: str) -> Tensor:
    """``out=`` for ops whose ``out`` must have the result dtype; ``message`` is torch's error,
    formatted with ``out`` and ``expected`` (torch's names of the two dtypes)."""
    if isinstance(out, Tensor) and out.dtype is not result.dtype:
        raise RuntimeError(f"{op}: " + message.format(out=_pretty(out.dtype),
                                                      expected=_pretty(result.dtype)))
    return write_out(op, out, result)


def _promote_rule(*operands: Any, **params: Any) -> meta.Spec:
    return meta.elementwise("promote")(*[o for o in operands if o is not None])


# ----------------------------------------------------------------------------- clamp

def _clamp(x: Any, lo: Any, hi: Any) -> Any:
    # maximum/minimum propagate NaN from either side, as torch's clamp does
    if lo is not None:
        x = np.maximum(x, lo)
    return x if hi is None else np.minimum(x, hi)


CLAMP = register("clamp", _clamp, _promote_rule, "elementwise")


def clamp(input: Tensor, min: Any = None, max: Any = None, *, out: Tensor | None = None) -> Tensor:
    """torch.clamp: ``min(max(input, min), max)``; bounds are numbers or tensors, either None.

    The result dtype promotes input with the bounds (an int tensor clamped by 0.5 is float).
    """
    if _plain_bound(min, input) and _plain_bound(max, input) and (min is not None or
                                                                  max is not None):
        # the common case, kept flat: a float32/float64 tensor and Python-number bounds
        x = input._data
        if min is not None:
            x = np.maximum(x, min)
        r = x if max is None else np.minimum(x, max)
        return _finish(CLAMP, r, input.dtype, input.device, (input, min, max), None,
                       input._requires_grad, out, "Found dtype {out} but expected {expected}")
    check_operand("clamp", "input", input, numbers=False)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    lo_t, hi_t = isinstance(min, Tensor), isinstance(max, Tensor)
    if min is not None and max is not None and lo_t != hi_t:
        raise TypeError("clamp(): min and max must both be Tensors or both be numbers, got "
                        f"{type(min).__name__} and {type(max).__name__}")
    if min is not None:
        check_operand("clamp", "min", min)
    if max is not None:
        check_operand("clamp", "max", max)
    (x, lo, hi), dt, dev, rg = promote("clamp", (input, min, max))
    if dt.category == 3:
        raise NotImplementedError("clamp is not supported for complex types")
    if dt is _BOOL and (min is None) == (max is None) or dt is _BOOL and not (lo_t or hi_t):
        # torch's bool kernels clamp by one tensor bound only
        raise _not_implemented("clamp_cpu" if lo_t else "clamp_scalar_cpu", dt)
    try:
        r = _clamp(x, lo, hi)
    except ValueError:
        raise _broadcast_error("clamp", [x, lo, hi]) from None
    exact = None if lo_t or hi_t else "Found dtype {out} but expected {expected}"
    return _finish(CLAMP, r, dt, dev, (input, min, max), None, rg, out, exact)


def _plain_bound(bound: Any, input: Any) -> bool:
    """A bound numpy can take as it is: None, or an int/float that fits the float32/float64
    tensor's dtype (numpy treats Python numbers as weakly typed, as torch does)."""
    if bound is None:
        return isinstance(input, Tensor) and (input.dtype is _F32 or input.dtype is _F64)
    cls = bound.__class__
    if cls is not float and cls is not int or not isinstance(input, Tensor):
        return False
    dt = input.dtype
    return dt is _F64 or dt is _F32 and -_F32_MAX <= bound <= _F32_MAX


def clamp_min(input: Tensor, min: Any, *, out: Tensor | None = None) -> Tensor:
    """torch.clamp_min: ``clamp(input, min=min)``."""
    return clamp(input, min, None, out=out)


def clamp_max(input: Tensor, max: Any, *, out: Tensor | None = None) -> Tensor:
    """torch.clamp_max: ``clamp(input, max=max)``."""
    return clamp(input, None, max, out=out)


clip = clamp


# ----------------------------------------------------------------------------- where

def _where(condition: Any, x: Any, y: Any) -> Any:
    return np.where(condition, x, y)


WHERE = register("where", _where, meta.elementwise("promote"), "elementwise")


def where(condition: Tensor, input: Any = None, other: Any = None, *,
          out: Tensor | None = None) -> Any:
    """torch.where(condition, input, other): ``input`` where condition holds, else ``other``.

    Either value may be a Python number; the result dtype promotes the two. With only
    ``condition``, the tuple of indices of its nonzero elements (``nonzero(as_tuple=True)``).
    """
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)  # type: ignore[attr-defined]
    check_operand("where", "condition", condition, numbers=False)
    if input is None or other is None:
        raise TypeError("where(): expected both input and other (or neither), got only one")
    cdt = condition.dtype
    if cdt is not _BOOL and cdt is not _dt.uint8:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {_pretty(cdt)}")
    if (isinstance(input, Tensor) and isinstance(other, Tensor) and input.dtype is other.dtype
            and input.device is other.device is condition.device):
        x, y, dt, dev = input._data, other._data, input.dtype, input.device
        rg = input._requires_grad or other._requires_grad
    elif _plain_bound(other, input) and input.device is condition.device:
        x, y, dt, dev, rg = input._data, other, input.dtype, input.device, input._requires_grad
    else:
        check_operand("where", "input", input)
        check_operand("where", "other", other)
        (x, y), dt, dev, rg = promote("where", (input, other), [condition])
    c = condition._data if cdt is _BOOL else condition._data.astype(np.bool_)
    try:
        r = np.where(c, x, y)
    except ValueError:
        raise _broadcast_error("where", [c, x, y]) from None
    return _finish(WHERE, r, dt, dev, (condition, input, other), None, rg, out,
                   "Expected out type to be {expected} but got {out}")


# ----------------------------------------------------------------------------- lerp

def _lerp(x: Any, end: Any, weight: Any) -> Any:
    # torch's two-sided formula: exact at weight 0 and 1, stable near both ends
    ct = _compute(_dt.from_numpy_dtype(x.dtype))
    if ct is not None:
        x, end, weight = x.astype(ct), end.astype(ct), weight.astype(ct)
    diff = end - x
    small = np.abs(weight) < 0.5
    if small.ndim == 0:
        return x + weight * diff if small else end - diff * (1 - weight)
    return np.where(small, x + weight * diff, end - diff * (1 - weight))


LERP = register("lerp", _lerp, meta.elementwise("promote"), "elementwise")


def lerp(input: Tensor, end: Tensor, weight: Any, *, out: Tensor | None = None) -> Tensor:
    """torch.lerp: ``input + weight * (end - input)``; weight is a number or a tensor."""
    if (_plain_bound(weight, input) and isinstance(end, Tensor) and end.dtype is input.dtype
            and end.device is input.device):
        # the optimizers' case: float32/float64 tensors and a Python weight
        x, e = input._data, end._data
        try:
            r = x + weight * (e - x) if -0.5 < weight < 0.5 else e - (e - x) * (1 - weight)
        except ValueError:
            raise _broadcast_error("lerp", [x, e]) from None
        return _finish(LERP, r, input.dtype, input.device, (input, end, weight), None,
                       input._requires_grad or end._requires_grad, out)
    check_operand("lerp", "input", input, numbers=False)
    check_operand("lerp", "end", end, numbers=False)
    check_operand("lerp", "weight", weight)
    dt = input.dtype
    if end.dtype is not dt:
        raise RuntimeError(f"lerp: expected dtype {_CTYPE[dt.name]} for `end` but "
                           f"got dtype {_CTYPE[end.dtype.name]}")
    if dt.category < 2:
        raise _not_implemented("lerp_kernel_scalar", dt)
    tensors = [input, end]
    if isinstance(weight, Tensor):
        if weight.dtype is not dt and weight._data.ndim:
            raise RuntimeError(f"lerp: expected dtype {_CTYPE[dt.name]} for "
                               f"`weight` but got dtype "
                               f"{_CTYPE[weight.dtype.name]}")
        tensors.append(weight)
    dev = common_device_of("lerp", tensors)
    w = as_array(weight, dt, dev) if isinstance(weight, Tensor) else _on(
        scalar_to("lerp", weight, dt), dev)
    x, e = as_array(input, dt, dev), as_array(end, dt, dev)
    try:
        r = _lerp(x, e, w)
    except ValueError:
        raise _broadcast_error("lerp", [x, e, w]) from None
    rg = any(t._requires_grad for t in tensors)
    return _finish(LERP, r, dt, dev, (input, end, weight), None, rg, out)


# ----------------------------------------------------------------------------- addcmul, addcdiv

def _addcmul(x: Any, t1: Any, t2: Any, *, value: Any) -> Any:
    ct = _compute(_dt.from_numpy_dtype(x.dtype))
    if ct is not None:
        x, t1, t2 = x.astype(ct), t1.astype(ct), t2.astype(ct)
    return x + value * t1 * t2


def _addcdiv(x: Any, t1: Any, t2: Any, *, value: Any) -> Any:
    ct = _compute(_dt.from_numpy_dtype(x.dtype))
    if ct is not None:
        x, t1, t2 = x.astype(ct), t1.astype(ct), t2.astype(ct)
    with np.errstate(divide="ignore", invalid="ignore"):
        return x + value * t1 / t2


ADDCMUL = register("addcmul", _addcmul, meta.elementwise("promote"), "elementwise")
ADDCDIV = register("addcdiv", _addcdiv, meta.elementwise("promote"), "elementwise")


def _addc(op: Any, input: Tensor, tensor1: Tensor, tensor2: Tensor, value: Any,
          out: Tensor | None) -> Tensor:
    name = op.name
    if (_plain_bound(value, input) and isinstance(tensor1, Tensor) and isinstance(tensor2, Tensor)
            and input.dtype is tensor1.dtype is tensor2.dtype
            and input.device is tensor1.device is tensor2.device):
        # the optimizers' case: float32/float64 tensors of one dtype and a Python value
        x, a, b = input._data, tensor1._data, tensor2._data
        try:
            r = op.forward(x, a, b, value=value)
        except ValueError:
            raise _broadcast_error(name, [x, a, b]) from None
        return _finish(op, r, input.dtype, input.device, (input, tensor1, tensor2),
                       {"value": value}, input._requires_grad or tensor1._requires_grad
                       or tensor2._requires_grad, out)
    for arg, val in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        check_operand(name, arg, val, numbers=False)
    if isinstance(value, Tensor):
        value = value.item()
    (x, a, b), dt, dev, rg = promote(name, (input, tensor1, tensor2))
    if dt is _BOOL:
        raise _not_implemented(f"{name}_cpu_out", dt)
    v = scalar_to(name, value, dt)
    try:
        r = op.forward(x, a, b, value=v)
    except ValueError:
        raise _broadcast_error(name, [x, a, b]) from None
    return _finish(op, r, dt, dev, (input, tensor1, tensor2), {"value": v}, rg, out)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1,
            out: Tensor | None = None) -> Tensor:
    """torch.addcmul: ``input + value * tensor1 * tensor2``."""
    return _addc(ADDCMUL, input, tensor1, tensor2, value, out)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1,
            out: Tensor | None = None) -> Tensor:
    """torch.addcdiv: ``input + value * tensor1 / tensor2`` (true division)."""
    if (isinstance(tensor1, Tensor) and isinstance(tensor2, Tensor)
            and tensor1.dtype.category < 2 and tensor2.dtype.category < 2):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    return _addc(ADDCDIV, input, tensor1, tensor2, value, out)


# ----------------------------------------------------------------------------- nan_to_num

def _nan_to_num(x: Any, *, nan: float, posinf: float, neginf: float) -> Any:
    if x.dtype.kind in "biu":
        return x.copy()
    if x.dtype.kind == "c":
        r = x.copy()
        r.real = _nan_to_num(x.real, nan=nan, posinf=posinf, neginf=neginf)
        r.imag = _nan_to_num(x.imag, nan=nan, posinf=posinf, neginf=neginf)
        return r
    r = x.copy()
    dt = x.dtype
    r[np.isnan(x)] = np.asarray(nan).astype(dt)
    r[x == np.asarray(np.inf, dt)] = np.asarray(posinf).astype(dt)
    r[x == np.asarray(-np.inf, dt)] = np.asarray(neginf).astype(dt)
    return r


NAN_TO_NUM = register("nan_to_num", _nan_to_num, meta.elementwise("promote"), "elementwise")


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None, *, out: Tensor | None = None) -> Tensor:
    """torch.nan_to_num: NaN to ``nan``, +inf/-inf to ``posinf``/``neginf`` (default: the
    dtype's largest/lowest finite value). Integer and bool tensors come back as a copy."""
    check_operand("nan_to_num", "input", input, numbers=False)
    dt = input.dtype
    if dt.category >= 2:
        info = _dt.finfo(dt.to_real())
        posinf = info.max if posinf is None else posinf
        neginf = info.min if neginf is None else neginf
    params = {"nan": nan, "posinf": posinf, "neginf": neginf}
    with np.errstate(over="ignore"):  # posinf beyond the dtype's range becomes inf, as in torch
        r = _nan_to_num(input._data, **params)  # type: ignore[arg-type]
    return _finish(NAN_TO_NUM, r, dt, input.device, (input,), params, input._requires_grad, out,
                   "dtype of out: {out} should be same as input: {expected}")


# ----------------------------------------------------------------------------- float_power

def _float_power(x: Any, y: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.power(x, y)


def _float_power_rule(*operands: Any, **params: Any) -> meta.Spec:
    spec = meta.elementwise("promote")(*operands)
    return meta.Spec(spec.shape, _dt.complex128 if spec.dtype.category == 3 else _dt.float64)


FLOAT_POWER = register("float_power", _float_power, _float_power_rule, "elementwise")


def _float_power_dtype(input: Any, exponent: Any) -> _dt.dtype:
    for v in (input, exponent):
        if (v.dtype.category == 3) if isinstance(v, Tensor) else isinstance(v, complex):
            return _dt.complex128
    return _dt.float64


def float_power(input: Any, exponent: Any, *, out: Tensor | None = None) -> Tensor:
    """torch.float_power: ``input ** exponent`` computed in float64 (complex128 for complex)."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power(): expected at least one Tensor argument, got "
                        f"{type(input).__name__} and {type(exponent).__name__}")
    check_operand("float_power", "input", input)
    check_operand("float_power", "exponent", exponent)
    dt = _float_power_dtype(input, exponent)
    tensors = [t for t in (input, exponent) if isinstance(t, Tensor)]
    dev = common_device_of("float_power", tensors)
    x, y = (as_array(v, dt, dev) if isinstance(v, Tensor) else _on(np.asarray(v, dt.np), dev)
            for v in (input, exponent))
    try:
        r = _float_power(x, y)
    except ValueError:
        raise _broadcast_error("float_power", [x, y]) from None
    rg = any(t._requires_grad for t in tensors)
    return _finish(FLOAT_POWER, r, dt, dev, (input, exponent), None, rg, out,
                   "the output given to float_power has dtype {out} but the operation's result "
                   "requires dtype {expected}")


def float_power_(self: Tensor, exponent: Any) -> Tensor:
    """In-place float_power: ``self`` must already be float64 (complex128 for complex)."""
    dt = _float_power_dtype(self, exponent)
    if self.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype {_pretty(self.dtype)} but "
                           f"the operation's result requires dtype {_pretty(dt)}")
    return _FLOAT_POWER_INPLACE(self, exponent)


# ----------------------------------------------------------------------------- unary families

def _float_unary(name: str, forward: Any, differentiable: bool = True, complex_ok: bool = True
                 ) -> tuple[Any, Any]:
    """A unary op whose integer and bool inputs compute in the default float dtype."""
    op = register(name, forward, meta.elementwise("float"), "elementwise", differentiable)

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        check_operand(name, "input", input, numbers=False)
        dt = input.dtype
        x = input._data
        if dt.category < 2:
            dt = _dt.get_default_dtype()
            x = x.astype(dt.np)
        elif dt.category == 3 and not complex_ok:
            raise RuntimeError(f"{name} is not supported for complex tensors.")
        return _finish(op, forward(x), dt, input.device, (input,), None, input._requires_grad,
                       out)

    fn.__name__ = fn.__qualname__ = name
    return op, fn


def _sinc(x: Any) -> Any:
    ct = _compute(_dt.from_numpy_dtype(x.dtype))
    if ct is not None:
        # torch rounds pi * x to the tensor's dtype before the sine, as numpy does in float16
        y = (x.astype(ct) * np.float32(np.pi)).astype(x.dtype).astype(ct)
    else:
        y = np.pi * x
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sin(y) / y
    return np.where(x == 0, np.ones((), r.dtype), r)


def _scale(factor: float) -> Any:
    def forward(x: Any) -> Any:
        ct = _compute(_dt.from_numpy_dtype(x.dtype))
        return x.astype(ct) * np.float32(factor) if ct is not None else x * factor

    return forward


SINC, _sinc_fn = _float_unary("sinc", _sinc)
DEG2RAD, _deg2rad_fn = _float_unary("deg2rad", _scale(math.pi / 180), complex_ok=False)
RAD2DEG, _rad2deg_fn = _float_unary("rad2deg", _scale(180 / math.pi), complex_ok=False)


def sinc(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.sinc: ``sin(pi x) / (pi x)``, 1 at 0."""
    return _sinc_fn(input, out=out)


def deg2rad(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.deg2rad: degrees to radians."""
    return _deg2rad_fn(input, out=out)


def rad2deg(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.rad2deg: radians to degrees."""
    return _rad2deg_fn(input, out=out)


def _logit(x: Any, *, eps: float | None) -> Any:
    # as torch: bounds in the tensor's dtype (1 - eps rounds there), no clamp for eps=0/NaN
    if eps is not None and eps == eps and eps != 0:
        lo = np.asarray(eps).astype(x.dtype)
        x = np.clip(x, lo, (np.ones((), x.dtype) - lo).astype(x.dtype))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x / (np.ones((), x.dtype) - x))


LOGIT = register("logit", _logit, meta.elementwise("float"), "elementwise")


def logit(input: Tensor, eps: float | None = None, *, out: Tensor | None = None) -> Tensor:
    """torch.logit: ``log(p / (1 - p))``, with p clamped to ``[eps, 1 - eps]`` when eps is given."""
    check_operand("logit", "input", input, numbers=False)
    dt = input.dtype
    x = input._data
    if dt.category == 3:
        raise _not_implemented("logit_cpu", dt)
    if dt.category < 2:
        dt = _dt.get_default_dtype()
        x = x.astype(dt.np)
    params = {"eps": eps}
    return _finish(LOGIT, _logit(x, eps=eps), dt, input.device, (input,), params,
                   input._requires_grad, out)


def positive(input: Tensor) -> Tensor:
    """torch.positive: ``input`` itself (an error for bool tensors)."""
    check_operand("positive", "input", input, numbers=False)
    if input.dtype is _BOOL:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# ----------------------------------------------------------------------------- heaviside

def _heaviside(x: Any, values: Any) -> Any:
    # NaN input gives 0, as in torch (numpy's heaviside gives NaN)
    return np.where(x == 0, values, (x > 0).astype(x.dtype))


HEAVISIDE = register("heaviside", _heaviside, meta.elementwise("promote"), "elementwise",
                     differentiable=False)


def heaviside(input: Tensor, values: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.heaviside: 0 where input < 0, ``values`` where input == 0, 1 where input > 0."""
    check_operand("heaviside", "input", input, numbers=False)
    check_operand("heaviside", "values", values, numbers=False)
    dt = input.dtype
    if values.dtype is not dt:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if dt.category == 3:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    dev = common_device_of("heaviside", [input, values])
    x, v = as_array(input, dt, dev), as_array(values, dt, dev)
    try:
        with np.errstate(invalid="ignore"):
            r = _heaviside(x, v)
    except ValueError:
        raise _broadcast_error("heaviside", [x, v]) from None
    rg = input._requires_grad or values._requires_grad
    return _finish(HEAVISIDE, r, dt, dev, (input, values), None, rg, out,
                   "heaviside is not yet implemented for tensors with different dtypes.")


# ----------------------------------------------------------------------------- closeness

def _isclose(x: Any, y: Any, *, rtol: float, atol: float, equal_nan: bool) -> Any:
    close = x == y
    floating = x.dtype.kind in "fc" or x.dtype == _BF16.np
    if equal_nan and floating:
        close |= np.isnan(x) & np.isnan(y)
    if rtol == 0 and atol == 0:
        return close
    if not floating:
        # torch measures integer distances in the default float dtype (no wraparound)
        x = x.astype(_dt.get_default_dtype().np)
        y = y.astype(x.dtype)
    dt = x.dtype
    allowed = np.asarray(atol).astype(dt) + np.abs(np.asarray(rtol).astype(dt) * y)
    actual = np.abs(x - y)
    close |= np.isfinite(actual) & (actual <= allowed)
    return close


ISCLOSE = register("isclose", _isclose, meta.elementwise("bool"), "elementwise",
                   differentiable=False)


def _close_operands(op: str, input: Tensor, other: Tensor, rtol: float, atol: float
                    ) -> tuple[Any, Any, device]:
    check_operand(op, "input", input, numbers=False)
    check_operand(op, "other", other, numbers=False)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{op}: {_pretty(input.dtype)} did not match {_pretty(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    dev = common_device_of(op, [input, other])
    return as_array(input, input.dtype, dev), as_array(other, input.dtype, dev), dev


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """torch.isclose: ``|input - other| <= atol + rtol * |other|``, elementwise (bool)."""
    x, y, dev = _close_operands("isclose", input, other, rtol, atol)
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            r = _isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)
    except ValueError:
        raise _broadcast_error("isclose", [x, y]) from None
    params = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan}
    return _finish(ISCLOSE, r, _BOOL, dev, (input, other), params,
                   input._requires_grad or other._requires_grad, None)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """torch.allclose: whether ``isclose`` holds everywhere (a Python bool)."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input: Tensor, other: Tensor) -> bool:
    """torch.equal: True when both have the same shape and the same values (NaN is unequal)."""
    check_operand("equal", "input", input, numbers=False)
    check_operand("equal", "other", other, numbers=False)
    dev = common_device_of("equal", [input, other])
    if input._data.shape != other._data.shape:
        return False
    dt = _dt.promote_types(input.dtype, other.dtype)
    return bool((as_array(input, dt, dev) == as_array(other, dt, dev)).all())


# ----------------------------------------------------------------------------- softmax

def _softmax(x: Any, *, dim: int) -> Any:
    if x.size == 0:
        return x.copy()
    ct = _compute(_dt.from_numpy_dtype(x.dtype))
    z = x.astype(ct) if ct is not None else x
    e = np.exp(z - z.max(axis=dim, keepdims=True))
    e /= e.sum(axis=dim, keepdims=True)
    return e


def _log_softmax(x: Any, *, dim: int) -> Any:
    if x.size == 0:
        return x.copy()
    ct = _compute(_dt.from_numpy_dtype(x.dtype))
    z = x.astype(ct) if ct is not None else x
    with np.errstate(invalid="ignore"):
        shifted = z - z.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))


SOFTMAX = register("softmax", _softmax, None, "reduction")
LOG_SOFTMAX = register("log_softmax", _log_softmax, None, "reduction")


def _softmax_like(op: Any, input: Tensor, dim: Any, dtype: Any) -> Tensor:
    name = op.name
    check_operand(name, "input", input, numbers=False)
    try:
        dim = operator.index(dim)
    except TypeError:
        raise TypeError(f"{name}(): argument 'dim' (position 2) must be int, not "
                        f"{type(dim).__name__}") from None
    if dtype is not None:
        input = to(input, dtype=dtype)
    dt = input.dtype
    x = input._data
    axis = wrap_dim(dim, x.ndim, name)
    if dt.category != 2 and x.size:
        raise _not_implemented(f"{name}_kernel_impl", dt)
    if x.ndim == 0:
        x = x.reshape(1)
    with np.errstate(invalid="ignore"):
        r = op.forward(x, dim=axis).reshape(input._data.shape)
    return _finish(op, r, dt, input.device, (input,), {"dim": axis}, input._requires_grad, None)


def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """torch.softmax: ``exp(x) / exp(x).sum(dim)``, computed stably; ``dtype`` casts first."""
    return _softmax_like(SOFTMAX, input, dim, dtype)


def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """torch.log_softmax: ``x - logsumexp(x, dim)``, computed stably; ``dtype`` casts first."""
    return _softmax_like(LOG_SOFTMAX, input, dim, dtype)


# ----------------------------------------------------------------------------- exports

FUNCTIONS = [
    "clamp", "clip", "clamp_min", "clamp_max", "where", "lerp", "addcmul", "addcdiv",
    "nan_to_num", "float_power", "logit", "heaviside", "isclose", "allclose", "equal", "sinc",
    "deg2rad", "rad2deg", "positive", "softmax", "log_softmax",
]


def _tensor_where(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    """Tensor.where(condition, other): ``where(condition, self, other)``."""
    return where(condition, self, other)  # type: ignore[no-any-return]


def _writable_alike(self: Tensor, *others: Any) -> bool:
    """Whether an in-place update of ``self`` by ``others`` can write straight into its numpy
    array: same dtype, device and shape, a writeable array, and no graph to record (nothing
    requires grad, or grad mode is off, as in an optimizer's step)."""
    if not isinstance(self, Tensor) or self.device.type != "cpu" or \
            not self._data.flags.writeable:
        return False
    grads = self._requires_grad
    for t in others:
        if (not isinstance(t, Tensor) or t.dtype is not self.dtype or t.device is not self.device
                or t._data.shape != self._data.shape):
            return False
        grads = grads or t._requires_grad
    return not grads or not grad_mode.enabled or hooks.record is None


_lerp_checked = inplace(lerp, "lerp_")
_addcmul_checked = inplace(addcmul, "addcmul_")
_addcdiv_checked = inplace(addcdiv, "addcdiv_")

# lerp_, addcmul_ and addcdiv_ are the optimizers' updates: when ``_writable_alike`` allows,
# they write straight into ``self``'s array (same arithmetic as the out-of-place forms).


def lerp_(self: Tensor, end: Tensor, weight: Any) -> Tensor:
    """In-place form of ``lerp``."""
    if _plain_bound(weight, self) and _writable_alike(self, end):
        x, e = self._data, end._data
        if -0.5 < weight < 0.5:
            x += weight * (e - x)
        else:
            x[...] = e - (e - x) * (1 - weight)
        bump_version(self)
        return self
    return _lerp_checked(self, end, weight)


def addcmul_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """In-place form of ``addcmul``."""
    if _plain_bound(value, self) and _writable_alike(self, tensor1, tensor2):
        self._data += value * tensor1._data * tensor2._data
        bump_version(self)
        return self
    return _addcmul_checked(self, tensor1, tensor2, value=value)


def addcdiv_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """In-place form of ``addcdiv``."""
    if _plain_bound(value, self) and _writable_alike(self, tensor1, tensor2):
        with np.errstate(divide="ignore", invalid="ignore"):
            self._data += value * tensor1._data / tensor2._data
        bump_version(self)
        return self
    return _addcdiv_checked(self, tensor1, tensor2, value=value)


def _methods() -> dict[str, Any]:
    g = globals()
    methods: dict[str, Any] = {n: g[n] for n in FUNCTIONS}
    methods["where"] = _tensor_where
    for n in ("clamp", "clamp_min", "clamp_max", "nan_to_num", "logit", "heaviside", "sinc",
              "deg2rad", "rad2deg"):
        methods[n + "_"] = inplace(g[n], n + "_")
    methods.update(lerp_=lerp_, addcmul_=addcmul_, addcdiv_=addcdiv_, clip_=methods["clamp_"])
    methods["float_power_"] = float_power_
    return methods


_FLOAT_POWER_INPLACE = inplace(float_power, "float_power_")
METHODS = _methods()
