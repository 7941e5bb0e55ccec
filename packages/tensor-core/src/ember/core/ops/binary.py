"""Binary elementwise ops: arithmetic, comparison, logical and bitwise, with broadcasting and
torch's type promotion, their in-place forms and the Tensor operators (``+``, ``<``, ``&``...).

Each primitive is one ``binary_op`` call (elementwise.py); ``add``, ``sub``, ``div`` and
``pow`` wrap theirs with the arguments torch adds (``alpha``, ``rounding_mode``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..dispatch import grad_mode, hooks
from ..tensor import Tensor, bump_version, make
from . import special
from .elementwise import Refusals, binary_op, wrap_int
from .operands import LIMITS, overflow_error, scalar_result, write_out

_BF16 = _dt.bfloat16


def _true_divide(x: Any, y: Any) -> Any:
    return np.true_divide(x, y)


def _floor_divide(x: Any, y: Any) -> Any:
    _check_int_zero_division("floor_divide", x, y)
    return np.floor_divide(x, y)


def _remainder(x: Any, y: Any) -> Any:
    _check_int_zero_division("remainder", x, y)
    return np.remainder(x, y)


def _fmod(x: Any, y: Any) -> Any:
    _check_int_zero_division("fmod", x, y)
    return np.fmod(x, y)


def _check_int_zero_division(name: str, x: Any, y: Any) -> None:
    kind = getattr(y, "dtype", np.dtype(type(y))).kind
    if kind in "iub" and not np.all(y):
        raise RuntimeError(f"{name}: ZeroDivisionError (integer division by zero)")


def _trunc_divide(x: Any, y: Any) -> Any:
    if getattr(x, "dtype", np.dtype(type(x))).kind in "iub":
        _check_int_zero_division("div", x, y)
        q = np.abs(x) // np.abs(y)  # exact for integers, unlike a float quotient
        return np.where((np.asarray(x) < 0) != (np.asarray(y) < 0), -q, q)
    return np.trunc(np.true_divide(x, y))


def _power(x: Any, y: Any) -> Any:
    if y.__class__ in (int, float):
        if y.__class__ is int and y < 0 and _is_integral(x):
            raise RuntimeError("pow: Integers to negative integer powers are not allowed.")
        # numpy's general pow is several times slower than multiplies for small powers
        if y == 2:
            return x * x
        if y == 3:
            return x * x * x
        if y == 0.5:
            return np.sqrt(x)
        return np.power(x, y)
    if _is_integral(x) and _is_integral(y) and np.any(np.asarray(y) < 0):
        return _integer_power(x, y)
    return np.power(x, y)


def _is_integral(v: Any) -> bool:
    if isinstance(v, int):  # Python ints and bools
        return True
    return getattr(v, "dtype", None) is not None and v.dtype.kind in "iu"


def _integer_power(x: Any, y: Any) -> Any:
    # torch's integer pow: x ** negative is 1 for x == 1, +-1 for x == -1, else 0
    positive = np.power(x, np.maximum(y, 0))
    ones = np.ones((), positive.dtype)
    odd = (y % 2).astype(bool)
    negative = np.where(x == 1, ones, np.where(x == -1, np.where(odd, -ones, ones), 0 * ones))
    return np.where(y < 0, negative, positive).astype(positive.dtype)


def _logaddexp(x: Any, y: Any) -> Any:
    if getattr(x, "dtype", np.dtype(np.float64)).kind != "c":
        return np.logaddexp(x, y)
    # complex: the operand with the larger real part factors out, as in torch
    bigger = np.where(np.real(x) >= np.real(y), x, y)
    smaller = np.where(np.real(x) >= np.real(y), y, x)
    with np.errstate(invalid="ignore", over="ignore"):
        return bigger + np.log1p(np.exp(smaller - bigger))


def _complex_refusal(name: str) -> Refusals:
    return {"c": (RuntimeError, f"{name} not implemented for complex tensors.")}


ADD, _add = binary_op("add", np.add)
SUB, _sub = binary_op("sub", np.subtract)
MUL, mul = binary_op("mul", np.multiply)
DIV, true_divide = binary_op("div", _true_divide, result="float")
DIV_TRUNC, _div_trunc = binary_op("div_trunc", _trunc_divide, differentiable=False, allowed="if")
FLOOR_DIVIDE, floor_divide = binary_op("floor_divide", _floor_divide, differentiable=False,
                                       allowed="if", kernel="div_floor_cpu")
REMAINDER, remainder = binary_op("remainder", _remainder, allowed="if")
FMOD, fmod = binary_op("fmod", _fmod, allowed="if", scalars="other")
POW, _pow = binary_op("pow", _power, allowed="ifc", kernel="pow")
MAXIMUM, maximum = binary_op("maximum", np.maximum, allowed="bif", scalars="none",
                             refusals=_complex_refusal("maximum"))
MINIMUM, minimum = binary_op("minimum", np.minimum, allowed="bif", scalars="none",
                             refusals=_complex_refusal("minimum"))
FMAX, fmax = binary_op("fmax", np.fmax, allowed="bif", scalars="none",
                       refusals=_complex_refusal("fmax"))
FMIN, fmin = binary_op("fmin", np.fmin, allowed="bif", scalars="none",
                       refusals=_complex_refusal("fmin"))
ATAN2, atan2 = binary_op("atan2", np.arctan2, result="float", allowed="bif", scalars="none")
HYPOT, hypot = binary_op("hypot", np.hypot, result="float", allowed="f", scalars="none")
COPYSIGN, copysign = binary_op("copysign", np.copysign, result="float", allowed="bif",
                               scalars="other")
LOGADDEXP, logaddexp = binary_op("logaddexp", _logaddexp, result="float", allowed="fc",
                                 scalars="none")
LOGADDEXP2, logaddexp2 = binary_op("logaddexp2", np.logaddexp2, result="float", allowed="f",
                                   scalars="none")
XLOGY, xlogy = binary_op("xlogy", special.xlogy, result="float", allowed="bif")
EQ, eq = binary_op("eq", np.equal, result="bool", differentiable=False, scalars="other")
NE, ne = binary_op("ne", np.not_equal, result="bool", differentiable=False, scalars="other")
LT, lt = binary_op("lt", np.less, result="bool", differentiable=False, allowed="bif",
                   scalars="other")
LE, le = binary_op("le", np.less_equal, result="bool", differentiable=False, allowed="bif",
                   scalars="other")
GT, gt = binary_op("gt", np.greater, result="bool", differentiable=False, allowed="bif",
                   scalars="other")
GE, ge = binary_op("ge", np.greater_equal, result="bool", differentiable=False, allowed="bif",
                   scalars="other")
LOGICAL_AND, logical_and = binary_op("logical_and", np.logical_and, "bool", False, scalars="none")
LOGICAL_OR, logical_or = binary_op("logical_or", np.logical_or, "bool", False, scalars="none")
LOGICAL_XOR, logical_xor = binary_op("logical_xor", np.logical_xor, "bool", False, scalars="none")
BITWISE_AND, bitwise_and = binary_op("bitwise_and", np.bitwise_and, differentiable=False,
                                     allowed="bi")
BITWISE_OR, bitwise_or = binary_op("bitwise_or", np.bitwise_or, differentiable=False, allowed="bi")
BITWISE_XOR, bitwise_xor = binary_op("bitwise_xor", np.bitwise_xor, differentiable=False,
                                     allowed="bi")
LEFT_SHIFT, bitwise_left_shift = binary_op("bitwise_left_shift", np.left_shift,
                                           differentiable=False, allowed="i", kernel="lshift_cpu")
RIGHT_SHIFT, bitwise_right_shift = binary_op("bitwise_right_shift", np.right_shift,
                                             differentiable=False, allowed="i", kernel="rshift_cpu")

greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
multiply = mul
arctan2 = atan2


def add(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """torch.add: ``input + alpha * other``."""
    if alpha.__class__ is not int or alpha != 1:
        other = _scaled(input, other, alpha)
    return _add(input, other) if out is None else _add(input, other, out=out)


def sub(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """torch.sub: ``input - alpha * other``."""
    a, b = _is_bool(input), _is_bool(other)
    if a or b:
        if a and b:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                               "supported. Use the `^` or `logical_xor()` operator instead.")
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    if alpha.__class__ is not int or alpha != 1:
        other = _scaled(input, other, alpha)
    return _sub(input, other) if out is None else _sub(input, other, out=out)


def _scaled(input: Any, other: Any, alpha: Any) -> Any:
    """``alpha * other`` after torch's checks that alpha suits the result dtype."""
    dt = _dt.result_type(input, other)
    if isinstance(alpha, bool) and dt is not _dt.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and dt.category < 2:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if isinstance(alpha, complex) and dt.category < 3:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")
    if dt is _dt.bool:
        alpha = bool(alpha)
    if alpha == 1 and alpha.__class__ is not float:
        return other
    return mul(other, alpha) if isinstance(other, Tensor) else other * alpha


subtract = sub


def rsub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """torch.rsub: ``other - alpha * input``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"rsub(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return sub(other, input, alpha=alpha)


def div(input: Any, other: Any, *, rounding_mode: str | None = None,
        out: Tensor | None = None) -> Tensor:
    """torch.div with rounding_mode None (true division), 'trunc' or 'floor'."""
    if rounding_mode is None:
        return true_divide(input, other, out=out)
    if rounding_mode == "floor":
        return floor_divide(input, other, out=out)
    if rounding_mode == "trunc":
        return _div_trunc(input, other, out=out)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       f"found '{rounding_mode}'")


divide = div


def _is_bool(x: Any) -> bool:
    return x.dtype is _dt.bool if isinstance(x, Tensor) else x.__class__ is bool


def pow(input: Any, exponent: Any, *, out: Tensor | None = None) -> Tensor:
    """torch.pow(input, exponent): either may be a Python number."""
    if isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        dt = input.dtype
        if exponent.__class__ is bool and dt is _dt.bool:
            # torch answers ``x ** True`` with a copy and ``x ** False`` with ones
            exponent = int(exponent)
            input = make(input._data.copy() if exponent else
                         input.device.xp.ones(input._data.shape, np.bool_), dt, input.device)
            return input if out is None else write_out("pow", out, input)
        if exponent.__class__ is int and dt.category == 1:
            # an integer exponent is converted to the tensor's dtype with a check, not wrapped
            if exponent < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            if exponent > LIMITS[dt][1]:
                raise overflow_error(dt)
        elif exponent.__class__ in (int, float) and dt.itemsize == 2 and dt.category == 2 and not (
                LIMITS[dt][0] <= exponent <= LIMITS[dt][1]) and exponent - exponent == 0:
            # torch converts the exponent with a check only for the 16-bit floats
            raise overflow_error(dt)
    return _pow(input, exponent) if out is None else _pow(input, exponent, out=out)


def _reflected(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def method(self: Tensor, other: Any) -> Tensor:
        return fn(other, self)

    method.__name__ = "r" + fn.__name__
    return method


FUNCTIONS = [
    "add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide", "remainder", "fmod", "pow", "maximum", "minimum", "fmax", "fmin", "atan2",
    "arctan2", "hypot", "copysign", "logaddexp", "logaddexp2", "xlogy", "eq", "ne", "lt", "le",
    "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal", "logical_and",
    "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_left_shift", "bitwise_right_shift",
]

_INPLACE = [
    "add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "atan2", "hypot",
    "copysign", "xlogy", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift",
]


def _ufunc_inplace(name: str, ufunc: Any, generic: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``add_``-style method: a ufunc writing straight into ``self`` when no promotion, grad or
    ``alpha`` is involved (the optimizer's hot path), else the checked generic route."""

    def method(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
        if isinstance(other, Tensor):
            fast = other.dtype is self.dtype and other.device is self.device
            rg = other._requires_grad
            y = other._data
        else:
            fast = type(other) in _FAST_SCALARS and scalar_result(self.dtype, other) is self.dtype \
                and self.dtype is not _BF16
            rg = False
            y = other
        if not fast or ((self._requires_grad or rg) and grad_mode.enabled
                        and hooks.record is not None):
            return generic(self, other) if alpha == 1 else generic(self, other, alpha=alpha)
        if alpha != 1:
            if ufunc is np.multiply or scalar_result(self.dtype, alpha) is not self.dtype:
                return generic(self, other, alpha=alpha)
            y = y * alpha
        if y.__class__ is int and self.dtype.category == 1:
            y = wrap_int(y, self.dtype)
        x = self._data
        try:
            ufunc(x, y, out=x)
        except (ValueError, TypeError):
            # read-only, a shape mismatch or bool subtraction: the generic route reports it as
            # torch does
            return generic(self, other) if alpha == 1 else generic(self, other, alpha=alpha)
        bump_version(self)
        return self

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``."
    return method


_FAST_SCALARS = (int, float)


def _methods() -> dict[str, Callable[..., Any]]:
    from .inplace import inplace

    g = globals()
    methods: dict[str, Callable[..., Any]] = {n: g[n] for n in FUNCTIONS}
    methods.update({n + "_": inplace(g[n], n + "_") for n in _INPLACE})
    for n, uf in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply)):
        methods[n + "_"] = _ufunc_inplace(n + "_", uf, methods[n + "_"])
    methods.update({
        "subtract_": methods["sub_"], "multiply_": methods["mul_"], "divide_": methods["div_"],
        "true_divide_": methods["div_"], "arctan2_": methods["atan2_"], "greater_": methods["gt_"],
        "less_": methods["lt_"], "greater_equal_": methods["ge_"], "less_equal_": methods["le_"],
        "not_equal_": methods["ne_"],
        "__add__": _add, "__radd__": _add, "__iadd__": methods["add_"],
        "__sub__": sub, "__rsub__": _reflected(sub), "__isub__": methods["sub_"],
        "__mul__": mul, "__rmul__": mul, "__imul__": methods["mul_"],
        "__truediv__": true_divide, "__rtruediv__": _reflected(true_divide),
        "__itruediv__": methods["div_"],
        "__floordiv__": floor_divide, "__rfloordiv__": _reflected(floor_divide),
        "__ifloordiv__": methods["floor_divide_"],
        "__mod__": remainder, "__rmod__": _reflected(remainder), "__imod__": methods["remainder_"],
        "__pow__": pow, "__rpow__": _reflected(pow), "__ipow__": methods["pow_"],
        "__and__": bitwise_and, "__rand__": bitwise_and, "__iand__": methods["bitwise_and_"],
        "__or__": bitwise_or, "__ror__": bitwise_or, "__ior__": methods["bitwise_or_"],
        "__xor__": bitwise_xor, "__rxor__": bitwise_xor, "__ixor__": methods["bitwise_xor_"],
        "__lshift__": bitwise_left_shift, "__rlshift__": _reflected(bitwise_left_shift),
        "__ilshift__": methods["bitwise_left_shift_"],
        "__rshift__": bitwise_right_shift, "__rrshift__": _reflected(bitwise_right_shift),
        "__irshift__": methods["bitwise_right_shift_"],
        "__eq__": eq, "__ne__": ne, "__lt__": lt, "__le__": le, "__gt__": gt, "__ge__": ge,
    })
    return methods


METHODS = _methods()
