"""Pointwise ops with several operands or parameters: clamp, where, lerp, addcmul, addcdiv,
nan_to_num, float_power, heaviside.

Each primitive is registered once; its xp forward takes the operand arrays already in the
result dtype (float16/bfloat16 are computed in float32 and rounded once, as torch's CPU
kernels do) and its parameters as keywords, the same keywords ``record`` passes autograd.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..dispatch import grad_mode, hooks, register
from ..dtypes import demangled_type_name, scalar_type_name
from ..tensor import Tensor, bump_version
from .elementwise import SAME_OUT
from .inplace import inplace
from .operands import (
    as_array,
    broadcast_error,
    check_operand,
    common_device,
    not_implemented,
    on_device,
    promote,
    scalar_to,
    upcast,
    wrap,
)

_F32, _F64, _BOOL = _dt.float32, _dt.float64, _dt.bool
_F32_MAX = float(np.finfo(np.float32).max)


def _promote_rule(*operands: Any, **params: Any) -> meta.Spec:
    return meta.elementwise("promote")(*[o for o in operands if o is not None])


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
        return wrap(CLAMP, r, input.dtype, input.device, (input, min, max), None,
                    input._requires_grad, out, SAME_OUT)
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
        raise not_implemented("clamp_cpu" if lo_t else "clamp_scalar_cpu", dt)
    try:
        r = _clamp(x, lo, hi)
    except ValueError:
        raise broadcast_error("clamp", x, lo, hi) from None
    exact = None if lo_t or hi_t else SAME_OUT
    return wrap(CLAMP, r, dt, dev, (input, min, max), None, rg, out, exact)


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
                           f"with dtype {scalar_type_name(cdt)}")
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
        raise broadcast_error("where", c, x, y) from None
    return wrap(WHERE, r, dt, dev, (condition, input, other), None, rg, out,
                "Expected out type to be {expected} but got {out}")


def _lerp(x: Any, end: Any, weight: Any) -> Any:
    # torch's two-sided formula: exact at weight 0 and 1, stable near both ends
    x, end, weight = upcast(x, end, weight)
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
            raise broadcast_error("lerp", x, e) from None
        return wrap(LERP, r, input.dtype, input.device, (input, end, weight), None,
                    input._requires_grad or end._requires_grad, out)
    check_operand("lerp", "input", input, numbers=False)
    check_operand("lerp", "end", end, numbers=False)
    check_operand("lerp", "weight", weight)
    dt = input.dtype
    if end.dtype is not dt:
        raise RuntimeError(f"lerp: expected dtype {demangled_type_name(dt)} for `end` but got "
                           f"dtype {demangled_type_name(end.dtype)}")
    if dt.category < 2:
        raise not_implemented("lerp_kernel_scalar", dt)
    tensors = [input, end]
    if isinstance(weight, Tensor):
        if weight.dtype is not dt and weight._data.ndim:
            raise RuntimeError(f"lerp: expected dtype {demangled_type_name(dt)} for `weight` but "
                               f"got dtype {demangled_type_name(weight.dtype)}")
        tensors.append(weight)
    dev = common_device("lerp", *tensors)
    w = as_array(weight, dt, dev) if isinstance(weight, Tensor) else on_device(
        scalar_to("lerp", weight, dt), dev)
    x, e = as_array(input, dt, dev), as_array(end, dt, dev)
    try:
        r = _lerp(x, e, w)
    except ValueError:
        raise broadcast_error("lerp", x, e, w) from None
    rg = any(t._requires_grad for t in tensors)
    return wrap(LERP, r, dt, dev, (input, end, weight), None, rg, out)


def _addcmul(x: Any, t1: Any, t2: Any, *, value: Any) -> Any:
    x, t1, t2 = upcast(x, t1, t2)
    return x + value * t1 * t2


def _addcdiv(x: Any, t1: Any, t2: Any, *, value: Any) -> Any:
    x, t1, t2 = upcast(x, t1, t2)
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
            raise broadcast_error(name, x, a, b) from None
        return wrap(op, r, input.dtype, input.device, (input, tensor1, tensor2),
                    {"value": value}, input._requires_grad or tensor1._requires_grad
                    or tensor2._requires_grad, out)
    for arg, val in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        check_operand(name, arg, val, numbers=False)
    if isinstance(value, Tensor):
        value = value.item()
    (x, a, b), dt, dev, rg = promote(name, (input, tensor1, tensor2))
    if dt is _BOOL:
        raise not_implemented(f"{name}_cpu_out", dt)
    v = scalar_to(name, value, dt)
    try:
        r = op.forward(x, a, b, value=v)
    except ValueError:
        raise broadcast_error(name, x, a, b) from None
    return wrap(op, r, dt, dev, (input, tensor1, tensor2), {"value": v}, rg, out)


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
    return wrap(NAN_TO_NUM, r, dt, input.device, (input,), params, input._requires_grad, out,
                "dtype of out: {out} should be same as input: {expected}")


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
    dev = common_device("float_power", *tensors)
    x, y = (as_array(v, dt, dev) if isinstance(v, Tensor) else on_device(np.asarray(v, dt.np), dev)
            for v in (input, exponent))
    try:
        r = _float_power(x, y)
    except ValueError:
        raise broadcast_error("float_power", x, y) from None
    rg = any(t._requires_grad for t in tensors)
    return wrap(FLOAT_POWER, r, dt, dev, (input, exponent), None, rg, out,
                "the output given to float_power has dtype {out} but the operation's result "
                "requires dtype {expected}")


def float_power_(self: Tensor, exponent: Any) -> Tensor:
    """In-place float_power: ``self`` must already be float64 (complex128 for complex)."""
    dt = _float_power_dtype(self, exponent)
    if self.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{scalar_type_name(self.dtype)} but the operation's result requires "
                           f"dtype {scalar_type_name(dt)}")
    return _FLOAT_POWER_INPLACE(self, exponent)


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
    dev = common_device("heaviside", input, values)
    x, v = as_array(input, dt, dev), as_array(values, dt, dev)
    try:
        with np.errstate(invalid="ignore"):
            r = _heaviside(x, v)
    except ValueError:
        raise broadcast_error("heaviside", x, v) from None
    rg = input._requires_grad or values._requires_grad
    return wrap(HEAVISIDE, r, dt, dev, (input, values), None, rg, out,
                "heaviside is not yet implemented for tensors with different dtypes.")


FUNCTIONS = [
    "clamp", "clip", "clamp_min", "clamp_max", "where", "lerp", "addcmul", "addcdiv",
    "nan_to_num", "float_power", "heaviside",
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
    for n in ("clamp", "clamp_min", "clamp_max", "nan_to_num", "heaviside"):
        methods[n + "_"] = inplace(g[n], n + "_")
    methods.update(lerp_=lerp_, addcmul_=addcmul_, addcdiv_=addcdiv_, clip_=methods["clamp_"])
    methods["float_power_"] = float_power_
    return methods


_FLOAT_POWER_INPLACE = inplace(float_power, "float_power_")
METHODS = _methods()
