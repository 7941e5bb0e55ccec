"""Binary elementwise ops: arithmetic, comparison, logical and bitwise, with broadcasting and
torch's type promotion, their in-place forms and the Tensor operators (``+``, ``<``, ``&``...).

Each primitive is one ``binary_op`` call (elementwise_factory.py); ``add``, ``sub``, ``div`` and
``pow`` wrap theirs with the arguments torch adds (``alpha``, ``rounding_mode``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..dispatch import dispatch
from ..tensor import Tensor
from . import special_functions as special
from .conversion import cast, clone
from .copying import FILL, assign_inplace, write_out
from .elementwise_factory import Refusals, binary_op
from .operands import LIMITS, checked_scalar, overflow_error
from .unary import neg, reciprocal

_BF16, _BOOL = _dt.bfloat16, _dt.bool


def _floor_divide(x: Any, y: Any) -> Any:
    _check_int_zero_division("floor_divide", x, y)
    return np.floor_divide(x, y)


def _remainder(x: Any, y: Any) -> Any:
    _check_int_zero_division("remainder", x, y)
    if _computes_in(x, y).kind in "iub":
        return np.remainder(x, y)
    # torch's floored remainder: fmod, plus the divisor where the two signs differ; a zero
    # keeps fmod's sign, the dividend's (numpy's remainder gives it the divisor's)
    mod = np.fmod(x, y)
    return np.where((mod != 0) & ((mod < 0) != (y < 0)), mod + y, mod)


def _fmod(x: Any, y: Any) -> Any:
    _check_int_zero_division("fmod", x, y)
    return np.fmod(x, y)


def _computes_in(x: Any, y: Any) -> np.dtype:
    """The dtype a kernel computes in: its array operand's (operands arrive promoted; a
    Python number beside an array is weakly typed)."""
    return x.dtype if hasattr(x, "dtype") else np.asarray(y).dtype


def _check_int_zero_division(name: str, x: Any, y: Any) -> None:
    # by the computation's dtype, not the divisor's: ``float_tensor // False`` is inf; an
    # empty result divides nothing (an empty divisor holds no zero)
    if _computes_in(x, y).kind in "iub" and np.size(x) and not np.all(y):
        raise RuntimeError(f"{name}: ZeroDivisionError (integer division by zero)")


def _trunc_divide(x: Any, y: Any) -> Any:
    if _computes_in(x, y).kind in "iub":
        _check_int_zero_division("div", x, y)
        # x minus its truncated remainder is a multiple of y, so its floor quotient is the
        # truncated one: exact for integers, and no abs() (abs(int8 -128) wraps to -128)
        with np.errstate(over="ignore"):  # MIN // -1 wraps to MIN, as in torch
            return np.floor_divide(x - np.fmod(x, y), y)
    return np.trunc(np.true_divide(x, y))


def power(x: Any, y: Any) -> Any:
    """pow's kernel (float_power's too, on its float64 or complex128 conversions): torch's
    special exponents, its complex power, its refusal of negative integer powers."""
    if y.__class__ is bool:
        y = int(y)
    elif y.__class__ is complex and not y.imag and x.dtype.kind == "c":
        y = y.real  # torch compares a Scalar exponent with its special ones by value
    # a bfloat16 tensor's number arrives as a bfloat16 scalar (see elementwise_factory)
    e = float(y) if y.__class__ is _BF16.np.type else y
    if e.__class__ in (int, float):
        if e.__class__ is int and e < 0 and _is_integral(x):
            raise RuntimeError("pow: Integers to negative integer powers are not allowed.")
        if x.dtype == np.float16:  # torch's Half kernel is pow for every exponent
            return np.power(x, y)
        # torch's special exponents (numpy's general pow is also several times slower than
        # multiplies for small powers): sqrt, rsqrt and reciprocal kernels, then products
        if e == 2:
            return x * x
        if e == 3:
            return x * x * x
        if e == 0.5:
            return np.sqrt(x)
        if x.dtype.kind == "c":
            return _complex_scalar_power(x, e)
        if e == -0.5:  # -inf gives nan and -0.0 -inf, as 1/sqrt (bfloat16's in float)
            if x.dtype == _BF16.np:
                return np.reciprocal(np.sqrt(x.astype(np.float32))).astype(x.dtype)
            return np.reciprocal(np.sqrt(x))
        if e == -1:
            return np.reciprocal(x)
        if e == -2:
            return np.reciprocal(x * x)
        return np.power(x, y)
    if _is_integral(x) and _is_integral(y) and np.any(y < 0):
        return _integer_power(x, y)
    if getattr(x, "dtype", None) is not None and x.dtype.kind == "c" or \
            getattr(y, "dtype", None) is not None and y.dtype.kind == "c" or \
            y.__class__ is complex:
        return _complex_power(x, y)
    return np.power(x, y)


def _complex_scalar_power(x: Any, y: float) -> Any:
    # torch's special exponents of a complex tensor (2, 3 and 0.5 are handled above)
    if y == 0:
        return np.ones_like(x)
    if y == 1:
        return x.copy()
    with np.errstate(all="ignore"):
        if y == -1:
            return 1 / x
        if y == -2:
            return 1 / (x * x)
        if y == -0.5:
            return 1 / np.sqrt(x)
    return _complex_power(x, y)


def _complex_power(x: Any, y: Any) -> Any:
    # torch's complex pow is libm's cpow, exp(y * log(x)); numpy's calls the same cpow but
    # first special-cases y == 0 (1), x == 0 (0 or nan) and integral real y (repeated
    # products): there torch's exp(y * log(x)) is computed instead (0 ** z is inf + nanj for
    # Re z < 0 and nan + nanj for z == 0 in torch, and integral powers differ in the last bits)
    if x.__class__ in (int, float, bool):
        x = complex(x)  # a Python base: its complex log (numpy's real log of -1 is nan)
    with np.errstate(all="ignore"):
        out = np.power(x, y)
        real_y = np.real(y)
        special = (x == 0) | ((np.imag(y) == 0) & (np.floor(real_y) == real_y))
        if np.any(special):
            out = np.where(special, np.exp(y * np.log(x)), out)
    return out


def _is_integral(v: Any) -> bool:
    if isinstance(v, int):  # Python ints and bools
        return True
    return getattr(v, "dtype", None) is not None and v.dtype.kind in "iu"


def _integer_power(x: Any, y: Any) -> Any:
    # torch's integer pow: x ** negative is 1 for x == 1, +-1 for x == -1, else 0
    positive = np.power(x, np.maximum(y, 0))
    # scalars of the result's dtype (signed: an unsigned exponent is never negative), which
    # the array module of x takes as they are
    one, zero = positive.dtype.type(1), positive.dtype.type(0)
    odd = (y % 2).astype(bool)
    negative = np.where(x == 1, one, np.where(x == -1, np.where(odd, -one, one), zero))
    return np.where(y < 0, negative, positive).astype(positive.dtype)


def _logaddexp(x: Any, y: Any) -> Any:
    if getattr(x, "dtype", np.dtype(np.float64)).kind != "c":
        return np.logaddexp(x, y)
    # complex, as torch's helper: the operand with the larger real part factors out (x
    # where the real parts tie); infinite real parts that tie give the smaller operand
    # (-inf: its exp is 0) or log(exp(x) + exp(y)) (+inf); a NaN anywhere gives NaN
    x_smaller = np.real(x) < np.real(y)
    smaller, bigger = np.where(x_smaller, x, y), np.where(x_smaller, y, x)
    low, high = np.real(smaller), np.real(bigger)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        out = np.log1p(np.exp(smaller - bigger)) + bigger
        ties = ~np.isfinite(low) & (low == high)
        if np.any(ties):
            both_inf = np.log(np.exp(smaller) + np.exp(bigger))
            out = np.where(ties, np.where(low < 0, smaller, both_inf), out)
    nan = np.isnan(smaller) | np.isnan(bigger)
    return np.where(nan, np.array(complex("nan+nanj"), out.dtype), out).astype(out.dtype)


def _complex_refusal(name: str) -> Refusals:
    return {"c": (RuntimeError, f"{name} not implemented for complex tensors.")}



ADD, add, add_ = binary_op("add", np.add, inplace=True, scale=lambda s, o, a: _scaled(s, o, a))
SUB, _sub, _sub_ = binary_op("sub", np.subtract, inplace=True,
                             scale=lambda s, o, a: _scaled(s, o, a, True))
add.__doc__ = "torch.add: ``input + alpha * other``."
MUL, mul, _mul_ = binary_op("mul", np.multiply, inplace=True, number_in_float=True)
DIV, true_divide, _div_ = binary_op("div", np.true_divide, result="float", inplace=True,
                                    number_in_float=True)
# torch differentiates div with a rounding mode (gradient zero) and records floor_divide
# (whose backward raises): the same floor division is two primitives, as in torch
DIV_TRUNC, _div_trunc, _div_trunc_ = binary_op("div_trunc", _trunc_divide, inplace=True,
                                               allowed="if")
DIV_FLOOR, _div_floor, _div_floor_ = binary_op("div_floor", _floor_divide, kernel="div_floor_cpu",
                                               inplace=True, allowed="if")
FLOOR_DIVIDE, floor_divide, _floor_divide_ = binary_op(
    "floor_divide", _floor_divide, kernel="div_floor_cpu", inplace=True, allowed="if")
REMAINDER, remainder, _remainder_ = binary_op("remainder", _remainder, inplace=True, allowed="if")
FMOD, fmod, _fmod_ = binary_op("fmod", _fmod, scalars="other", inplace=True, allowed="if")
POW, _pow, _pow_ = binary_op("pow", power, allowed="ifc", kernel="pow", inplace=True,
                             arg_names=("self", "exponent"), rule=meta.power())
MAXIMUM, maximum, _ = binary_op("maximum", np.maximum, allowed="bif", scalars="none",
                                refusals=_complex_refusal("maximum"))
MINIMUM, minimum, _ = binary_op("minimum", np.minimum, allowed="bif", scalars="none",
                                refusals=_complex_refusal("minimum"))
FMAX, fmax, _ = binary_op("fmax", np.fmax, allowed="bif", scalars="none",
                          refusals=_complex_refusal("fmax"))
FMIN, fmin, _ = binary_op("fmin", np.fmin, allowed="bif", scalars="none",
                          refusals=_complex_refusal("fmin"))
ATAN2, atan2, _atan2_ = binary_op("atan2", np.arctan2, result="float", allowed="bif",
                                  scalars="none", inplace=True)
HYPOT, hypot, _hypot_ = binary_op("hypot", np.hypot, result="float", allowed="f", scalars="none",
                                  inplace=True)
COPYSIGN, copysign, _copysign_ = binary_op("copysign", np.copysign, result="float",
                                           allowed="bif", scalars="other", inplace=True)
LOGADDEXP, logaddexp, _ = binary_op("logaddexp", _logaddexp, result="float", allowed="fc",
                                    scalars="none")
LOGADDEXP2, logaddexp2, _ = binary_op("logaddexp2", np.logaddexp2, result="float", allowed="f",
                                      scalars="none")
XLOGY, xlogy, _xlogy_ = binary_op("xlogy", special.xlogy, result="float", allowed="bif",
                                  inplace=True)
_CMP: dict[str, Any] = {"result": "bool", "differentiable": False, "scalars": "other",
                        "inplace": True, "overwrites": True}
_BIT: dict[str, Any] = {"differentiable": False, "inplace": True}
_LOGICAL: dict[str, Any] = {"result": "bool", "differentiable": False, "scalars": "none",
                            "inplace": True, "writes_leaves": True}

EQ, eq, _eq_ = binary_op("eq", np.equal, **_CMP)
NE, ne, _ne_ = binary_op("ne", np.not_equal, **_CMP)
LT, lt, _lt_ = binary_op("lt", np.less, allowed="bif", **_CMP)
LE, le, _le_ = binary_op("le", np.less_equal, allowed="bif", **_CMP)
GT, gt, _gt_ = binary_op("gt", np.greater, allowed="bif", **_CMP)
GE, ge, _ge_ = binary_op("ge", np.greater_equal, allowed="bif", **_CMP)
LOGICAL_AND, logical_and, _logical_and_ = binary_op("logical_and", np.logical_and, **_LOGICAL)
LOGICAL_OR, logical_or, _logical_or_ = binary_op("logical_or", np.logical_or, **_LOGICAL)
LOGICAL_XOR, logical_xor, _logical_xor_ = binary_op("logical_xor", np.logical_xor, **_LOGICAL)
BITWISE_AND, bitwise_and, _bitwise_and_ = binary_op("bitwise_and", np.bitwise_and,
                                                    allowed="bi", **_BIT)
BITWISE_OR, bitwise_or, _bitwise_or_ = binary_op("bitwise_or", np.bitwise_or, allowed="bi",
                                                 **_BIT)
BITWISE_XOR, bitwise_xor, _bitwise_xor_ = binary_op("bitwise_xor", np.bitwise_xor,
                                                    allowed="bi", **_BIT)
LEFT_SHIFT, bitwise_left_shift, _bitwise_left_shift_ = binary_op(
    "bitwise_left_shift", np.left_shift, allowed="i", kernel="lshift_cpu", **_BIT)
RIGHT_SHIFT, bitwise_right_shift, _bitwise_right_shift_ = binary_op(
    "bitwise_right_shift", np.right_shift, allowed="i", kernel="rshift_cpu", **_BIT)

greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
multiply = mul
arctan2 = atan2


def sub(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """torch.sub: ``input - alpha * other``."""
    if not (input.__class__ is Tensor and other.__class__ is Tensor
            and input.dtype is not _BOOL and other.dtype is not _BOOL):  # else look closer
        check_bool_sub(input, other)
    return _sub(input, other, alpha=alpha, out=out)


def check_bool_sub(input: Any, other: Any) -> None:
    """torch's refusal of a subtraction with a bool tensor (or number) among its operands."""
    a, b = _is_bool(input), _is_bool(other)
    if a or b:
        if a and b:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                               "supported. Use the `^` or `logical_xor()` operator instead.")
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def _scaled(input: Any, other: Any, alpha: Any, negated: bool = False) -> Any:
    """``alpha * other`` after torch's checks that alpha suits the result dtype (``negated``:
    torch's sub adds ``-alpha * other``, and checks ``-alpha``). Complex operands are
    multiplied even by 1, as torch multiplies them: the complex product spreads a NaN or
    infinite part of ``other`` to both parts."""
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
    else:
        # torch converts alpha to the result dtype with a check, and multiplies in that
        # dtype: other is cast first (uint8 by -1 must not wrap before a float64 add)
        checked_scalar(-alpha if negated else alpha, dt)
    if dt.category == 3:
        return _complex_scaled(other, alpha, negated, dt)
    if alpha == 1 and alpha.__class__ is not float:
        return other
    if isinstance(other, Tensor):
        return mul(other if other.dtype is dt else cast(other, dt), alpha)
    return other * alpha


def _complex_scaled(other: Any, alpha: Any, negated: bool, dt: _dt.dtype) -> Any:
    """What sub subtracts or add adds so that the result is torch's ``input + a * other``
    (``a`` is alpha, or -alpha for sub) with the complex product, in ``dt``: sub subtracts
    the product's negation, which adds the product exactly, signed zeros included."""
    a = -alpha if negated else alpha
    if isinstance(other, Tensor):
        product = mul(other if other.dtype is dt else cast(other, dt), a)
        return neg(product) if negated else product
    product = dt.np.type(other) * dt.np.type(a)
    return -product if negated else product


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
        return _div_floor(input, other, out=out)
    if rounding_mode == "trunc":
        return _div_trunc(input, other, out=out)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       f"found '{rounding_mode}'")


divide = div


def _is_bool(x: Any) -> bool:
    return x.dtype is _dt.bool if isinstance(x, Tensor) else x.__class__ is bool


def _pow_checks(input: Any, exponent: Any) -> Any:
    """torch's checks of a Python exponent against the tensor's dtype; ``x ** True`` and
    ``x ** False`` of a bool tensor give a copy and ones, returned as such (else None)."""
    if isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        dt = input.dtype
        if exponent.__class__ is complex and dt is _dt.float16:
            # a complex number promotes float16 to torch's complex32, which pow has no loop for
            raise NotImplementedError("\"pow\" not implemented for 'ComplexHalf'")
        if exponent.__class__ is bool and dt is _dt.bool:
            return clone(input) if exponent else dispatch(FILL, (input,), {"value": True})
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
    return None


def pow(input: Any, exponent: Any, *, out: Tensor | None = None) -> Tensor:
    """torch.pow(input, exponent): either may be a Python number."""
    special = _pow_checks(input, exponent)
    if special is not None:
        return special if out is None else write_out("pow", out, special)
    if out is not None:
        return _pow(input, exponent, out=out)
    res = _pow(input, exponent)
    if not isinstance(input, Tensor):
        # torch's pow(Scalar, Tensor) allocates its result row-major; a number base of a
        # low-precision exponent reaches the primitive as a 0-d tensor, whose rule follows
        # the exponent's layout
        res = res.contiguous()
    return res


def pow_(self: Tensor, exponent: Any) -> Tensor:
    """In-place ``pow``."""
    special = _pow_checks(self, exponent)
    if special is not None:
        return assign_inplace(self, special, "pow_")
    return _pow_(self, exponent)  # type: ignore[misc]


def sub_(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """In-place ``sub``: ``self -= alpha * other``."""
    check_bool_sub(self, other)
    return _sub_(self, other, alpha=alpha)  # type: ignore[misc]


def div_(self: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """In-place ``div``."""
    if rounding_mode is None:
        return _div_(self, other)  # type: ignore[misc]
    if rounding_mode == "floor":
        return _div_floor_(self, other)  # type: ignore[misc]
    if rounding_mode == "trunc":
        return _div_trunc_(self, other)  # type: ignore[misc]
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       f"found '{rounding_mode}'")


def _rtruediv(self: Tensor, other: Any) -> Tensor:
    """``other / self`` as torch's operator computes it, ``self.reciprocal() * other``: its
    roundings, and nan + nanj where a complex zero is the divisor (not inf + nanj)."""
    return mul(reciprocal(self), other)


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

def _methods() -> dict[str, Callable[..., Any]]:
    g = globals()
    # torch.rsub is a function only: Tensor has no rsub method (``__rsub__`` is the operator)
    methods: dict[str, Callable[..., Any]] = {n: g[n] for n in FUNCTIONS if n != "rsub"}
    methods.update({n + "_": g[f"_{n}_"] for n in (  # made by binary_op(inplace=True)
        "mul", "floor_divide", "remainder", "fmod", "atan2", "hypot", "copysign", "xlogy", "eq",
        "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "bitwise_and",
        "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift")})
    methods.update({"add_": add_, "sub_": sub_, "div_": div_, "pow_": pow_})  # type: ignore[dict-item]
    methods.update({
        "subtract_": methods["sub_"], "multiply_": methods["mul_"], "divide_": methods["div_"],
        "true_divide_": methods["div_"], "arctan2_": methods["atan2_"], "greater_": methods["gt_"],
        "less_": methods["lt_"], "greater_equal_": methods["ge_"], "less_equal_": methods["le_"],
        "not_equal_": methods["ne_"],
        "__add__": add, "__radd__": add, "__iadd__": methods["add_"],
        "__sub__": sub, "__rsub__": _reflected(sub), "__isub__": methods["sub_"],
        "__mul__": mul, "__rmul__": mul, "__imul__": methods["mul_"],
        "__truediv__": true_divide, "__rtruediv__": _rtruediv,
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
