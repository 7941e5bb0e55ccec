"""Elementwise primitives: arithmetic, comparison, logical, bitwise and unary math.

Each primitive is one ``register`` call with its xp forward (a NumPy ufunc, which CuPy
arrays also answer) and its broadcasting rule; the public function around it is made by
a factory so that its hot path is flat.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..dispatch import Op, grad_mode, hooks, register
from ..tensor import Tensor, bump_version, make
from . import special
from .operands import prep_binary, record, scalar_result, write_out

__all__: list[str] = []

_BF16 = _dt.bfloat16


def _broadcast_error(op: str, a: Any, b: Any) -> RuntimeError:
    sa, sb = np.shape(a), np.shape(b)
    for i in range(1, min(len(sa), len(sb)) + 1):
        if sa[-i] != sb[-i] and sa[-i] != 1 and sb[-i] != 1:
            return RuntimeError(
                f"{op}: The size of tensor a ({sa[-i]}) must match the size of tensor b ({sb[-i]}) "
                f"at non-singleton dimension {max(len(sa), len(sb)) - i}")
    return RuntimeError(f"{op}: shapes {list(sa)} and {list(sb)} cannot be broadcast")


def _binary(name: str, forward: Callable[..., Any], result: str = "promote",
            differentiable: bool = True, allowed: str = "all") -> tuple[Op, Callable[..., Tensor]]:
    """Register a broadcasting binary primitive and build its public function.

    ``result``: 'promote' keeps the promoted dtype, 'float' turns integer results into the
    default float (true division), 'bool' gives a mask. ``allowed``: 'all', 'int' (bitwise:
    integers and bool only) or 'nocomplex'.
    """
    op = register(name, forward, meta.elementwise(result), "elementwise", differentiable)

    def fn(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
        x, y, dt, dev, rg = prep_binary(name, input, other)
        if dt is _BF16 and not isinstance(y, np.ndarray):
            y = _BF16.np.type(y)  # ml_dtypes scalars are not weakly typed
        rdt = dt
        if result == "float":
            if dt.category < 2:
                rdt = _dt.get_default_dtype()
                x = x.astype(rdt.np) if hasattr(x, "astype") else x
                y = y.astype(rdt.np) if hasattr(y, "astype") else y
        elif result == "bool":
            rdt = _dt.bool
        if allowed != "all":
            _check_allowed(name, allowed, dt)
        try:
            r = forward(x, y)
        except ValueError:
            raise _broadcast_error(name, x, y) from None
        if r.dtype != rdt.np:
            r = r.astype(rdt.np)
        res = make(r, rdt, dev)
        if rg:
            record(op, (input, other), None, res)
        return res if out is None else write_out(name, out, res)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}(input, other): elementwise, with broadcasting and type promotion."
    return op, fn


def _check_allowed(name: str, allowed: str, dt: _dt.dtype) -> None:
    if allowed == "int" and dt.category > 1:
        raise RuntimeError(f"\"{name}_cpu\" not implemented for '{dt.name}'")
    if allowed == "nocomplex" and dt.category == 3:
        raise RuntimeError(f"{name} does not support complex inputs (got {dt})")


def _unary(name: str, forward: Callable[..., Any], result: str = "same",
           differentiable: bool = True, allowed: str = "all") -> tuple[Op, Callable[..., Tensor]]:
    """Register a unary primitive. ``result``: 'same', 'float' (ints compute in the default
    float), 'bool'."""
    op = register(name, forward, meta.elementwise("float" if result == "float" else
                                                  "bool" if result == "bool" else "promote"),
                  "elementwise", differentiable)

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
        dt = input.dtype
        x = input._data
        if result == "float" and dt.category < 2:
            dt = _dt.get_default_dtype()
            x = x.astype(dt.np)
        if allowed != "all":
            _check_allowed(name, allowed, dt)
        r = forward(x)
        rdt = _dt.bool if result == "bool" else dt
        if r.dtype != rdt.np:
            r = r.astype(rdt.np)
        res = make(r, rdt, input.device)
        if input._requires_grad:
            record(op, (input,), None, res)
        return res if out is None else write_out(name, out, res)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}(input): elementwise."
    return op, fn


# ----------------------------------------------------------------------------- binary

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
    if getattr(x, "dtype", np.dtype(np.float64)).kind in "iu":
        if np.any(np.asarray(y) < 0):
            raise RuntimeError("pow: Integers to negative integer powers are not allowed.")
    if y.__class__ in (int, float):
        # numpy's general pow is several times slower than multiplies for small powers
        if y == 2:
            return x * x
        if y == 3:
            return x * x * x
        if y == 0.5:
            return np.sqrt(x)
    return np.power(x, y)


ADD, _add = _binary("add", np.add)
SUB, _sub = _binary("sub", np.subtract)
MUL, mul = _binary("mul", np.multiply)
DIV, true_divide = _binary("div", _true_divide, result="float")
DIV_TRUNC, _div_trunc = _binary("div_trunc", _trunc_divide, differentiable=False)
FLOOR_DIVIDE, floor_divide = _binary("floor_divide", _floor_divide, differentiable=False)
REMAINDER, remainder = _binary("remainder", _remainder)
FMOD, fmod = _binary("fmod", _fmod)
POW, _pow = _binary("pow", _power)
MAXIMUM, maximum = _binary("maximum", np.maximum, allowed="nocomplex")
MINIMUM, minimum = _binary("minimum", np.minimum, allowed="nocomplex")
FMAX, fmax = _binary("fmax", np.fmax, allowed="nocomplex")
FMIN, fmin = _binary("fmin", np.fmin, allowed="nocomplex")
ATAN2, atan2 = _binary("atan2", np.arctan2, result="float")
HYPOT, hypot = _binary("hypot", np.hypot, result="float")
COPYSIGN, copysign = _binary("copysign", np.copysign, result="float")
LOGADDEXP, logaddexp = _binary("logaddexp", np.logaddexp, result="float")
LOGADDEXP2, logaddexp2 = _binary("logaddexp2", np.logaddexp2, result="float")
XLOGY, xlogy = _binary("xlogy", special.xlogy, result="float")
EQ, eq = _binary("eq", np.equal, result="bool", differentiable=False)
NE, ne = _binary("ne", np.not_equal, result="bool", differentiable=False)
LT, lt = _binary("lt", np.less, result="bool", differentiable=False)
LE, le = _binary("le", np.less_equal, result="bool", differentiable=False)
GT, gt = _binary("gt", np.greater, result="bool", differentiable=False)
GE, ge = _binary("ge", np.greater_equal, result="bool", differentiable=False)
LOGICAL_AND, logical_and = _binary("logical_and", np.logical_and, "bool", False)
LOGICAL_OR, logical_or = _binary("logical_or", np.logical_or, "bool", False)
LOGICAL_XOR, logical_xor = _binary("logical_xor", np.logical_xor, "bool", False)
BITWISE_AND, bitwise_and = _binary("bitwise_and", np.bitwise_and, differentiable=False, allowed="int")
BITWISE_OR, bitwise_or = _binary("bitwise_or", np.bitwise_or, differentiable=False, allowed="int")
BITWISE_XOR, bitwise_xor = _binary("bitwise_xor", np.bitwise_xor, differentiable=False, allowed="int")
LEFT_SHIFT, bitwise_left_shift = _binary("bitwise_left_shift", np.left_shift, differentiable=False,
                                         allowed="int")
RIGHT_SHIFT, bitwise_right_shift = _binary("bitwise_right_shift", np.right_shift,
                                           differentiable=False, allowed="int")

greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
multiply = mul


def add(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """torch.add: ``input + alpha * other``."""
    if alpha != 1:
        other = mul(other, alpha)
    return _add(input, other) if out is None else _add(input, other, out=out)


def sub(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """torch.sub: ``input - alpha * other``."""
    if _is_bool(input) and _is_bool(other):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if alpha != 1:
        other = mul(other, alpha)
    return _sub(input, other, out=out)


subtract = sub


def rsub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """torch.rsub: ``other - alpha * input``."""
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
    return isinstance(x, Tensor) and x.dtype is _dt.bool


def pow(input: Any, exponent: Any, *, out: Tensor | None = None) -> Tensor:
    """torch.pow(input, exponent): either may be a Python number."""
    return _pow(input, exponent, out=out)


# ----------------------------------------------------------------------------- unary

def _rsqrt(x: Any) -> Any:
    return 1 / np.sqrt(x)


def _sigmoid(x: Any) -> Any:
    # exp of -|x| never overflows; both branches are exact rearrangements.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def _frac(x: Any) -> Any:
    return x - np.trunc(x)


def _reciprocal(x: Any) -> Any:
    return 1 / x


def _relu(x: Any) -> Any:
    return np.maximum(x, np.zeros((), x.dtype))


def _square(x: Any) -> Any:
    return x * x


def _sign(x: Any) -> Any:
    return np.sign(x) if x.dtype != np.bool_ else x.copy()


def _sgn(x: Any) -> Any:
    if x.dtype.kind != "c":
        return _sign(x)
    mag = np.abs(x)
    return np.where(mag == 0, 0, x / np.where(mag == 0, 1, mag)).astype(x.dtype)


def _neg(x: Any) -> Any:
    if x.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                           "are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.")
    return np.negative(x)


def _abs(x: Any) -> Any:
    return np.abs(x) if x.dtype != np.bool_ else x.copy()


def _bitwise_not(x: Any) -> Any:
    if x.dtype.kind == "f" or x.dtype.kind == "c" or x.dtype == _BF16.np:
        raise TypeError("~ (bitwise_not) is only supported for integer and bool tensors, got "
                        f"{_dt.from_numpy_dtype(x.dtype)}")
    return np.invert(x)


def _copy_if_int(f: Callable[..., Any]) -> Callable[..., Any]:
    """floor/ceil/trunc/round of an integer tensor is the tensor itself (a copy)."""

    def forward(x: Any) -> Any:
        return x.copy() if x.dtype.kind in "iub" else f(x)

    return forward


NEG, neg = _unary("neg", _neg)
ABS, abs = _unary("abs", _abs)
SIGN, sign = _unary("sign", _sign)
SGN, sgn = _unary("sgn", _sgn)
EXP, exp = _unary("exp", np.exp, "float")
EXP2, exp2 = _unary("exp2", np.exp2, "float")
EXPM1, expm1 = _unary("expm1", np.expm1, "float")
LOG, log = _unary("log", np.log, "float")
LOG2, log2 = _unary("log2", np.log2, "float")
LOG10, log10 = _unary("log10", np.log10, "float")
LOG1P, log1p = _unary("log1p", np.log1p, "float")
SQRT, sqrt = _unary("sqrt", np.sqrt, "float")
RSQRT, rsqrt = _unary("rsqrt", _rsqrt, "float")
SIN, sin = _unary("sin", np.sin, "float")
COS, cos = _unary("cos", np.cos, "float")
TAN, tan = _unary("tan", np.tan, "float")
ASIN, asin = _unary("asin", np.arcsin, "float")
ACOS, acos = _unary("acos", np.arccos, "float")
ATAN, atan = _unary("atan", np.arctan, "float")
SINH, sinh = _unary("sinh", np.sinh, "float")
COSH, cosh = _unary("cosh", np.cosh, "float")
TANH, tanh = _unary("tanh", np.tanh, "float")
ASINH, asinh = _unary("asinh", np.arcsinh, "float")
ACOSH, acosh = _unary("acosh", np.arccosh, "float")
ATANH, atanh = _unary("atanh", np.arctanh, "float")
SIGMOID, sigmoid = _unary("sigmoid", _sigmoid, "float")
ERF, erf = _unary("erf", special.erf, "float", allowed="nocomplex")
ERFC, erfc = _unary("erfc", special.erfc, "float", allowed="nocomplex")
ERFINV, erfinv = _unary("erfinv", special.erfinv, "float", allowed="nocomplex")
LGAMMA, lgamma = _unary("lgamma", special.lgamma, "float", allowed="nocomplex")
DIGAMMA, digamma = _unary("digamma", special.digamma, "float", allowed="nocomplex")
RECIPROCAL, reciprocal = _unary("reciprocal", _reciprocal, "float")
SQUARE, square = _unary("square", _square)
RELU, relu = _unary("relu", _relu, allowed="nocomplex")
FLOOR, floor = _unary("floor", _copy_if_int(np.floor), allowed="nocomplex")
CEIL, ceil = _unary("ceil", _copy_if_int(np.ceil), allowed="nocomplex")
TRUNC, trunc = _unary("trunc", _copy_if_int(np.trunc), allowed="nocomplex")
FRAC, frac = _unary("frac", _frac, allowed="nocomplex")
ROUND, _round_half_even = _unary("round", _copy_if_int(np.round), allowed="nocomplex")
BITWISE_NOT, bitwise_not = _unary("bitwise_not", _bitwise_not, differentiable=False)
LOGICAL_NOT, logical_not = _unary("logical_not", np.logical_not, "bool", differentiable=False)
ISNAN, isnan = _unary("isnan", np.isnan, "bool", differentiable=False)
ISINF, isinf = _unary("isinf", np.isinf, "bool", differentiable=False)
ISFINITE, isfinite = _unary("isfinite", np.isfinite, "bool", differentiable=False)
ISPOSINF, isposinf = _unary("isposinf", np.isposinf, "bool", differentiable=False)
ISNEGINF, isneginf = _unary("isneginf", np.isneginf, "bool", differentiable=False)
SIGNBIT, signbit = _unary("signbit", np.signbit, "bool", differentiable=False)

negative, absolute, fix = neg, abs, trunc
arcsin, arccos, arctan, arcsinh, arccosh, arctanh, arctan2 = asin, acos, atan, asinh, acosh, atanh, atan2
special_expit = sigmoid


def round(input: Tensor, *, decimals: int = 0, out: Tensor | None = None) -> Tensor:
    """torch.round: half to even, optionally to ``decimals`` places."""
    if decimals == 0:
        return _round_half_even(input, out=out)
    scale = 10.0 ** decimals
    return true_divide(_round_half_even(mul(input, scale)), scale, out=out)


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
    "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "neg", "negative", "abs",
    "absolute", "sign", "sgn", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
    "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "arcsin", "arccos", "arctan", "sinh",
    "cosh", "tanh", "asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh", "sigmoid", "erf",
    "erfc", "erfinv", "lgamma", "digamma", "reciprocal", "square", "relu", "floor", "ceil",
    "trunc", "fix", "frac", "round", "isnan", "isinf", "isfinite", "isposinf", "isneginf",
    "signbit",
]

_INPLACE = [
    "add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "atan2", "hypot",
    "copysign", "xlogy", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
    "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "bitwise_left_shift", "bitwise_right_shift", "neg", "abs", "sign", "sgn", "exp", "exp2",
    "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc",
    "erfinv", "lgamma", "digamma", "reciprocal", "square", "relu", "floor", "ceil", "trunc",
    "frac", "round",
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
        x = self._data
        try:
            ufunc(x, y, out=x)
        except ValueError:
            # read-only or a shape mismatch: the generic route reports it as torch does
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
        "true_divide_": methods["div_"], "negative_": methods["neg_"], "absolute_": methods["abs_"],
        "fix_": methods["trunc_"], "arctan2_": methods["atan2_"], "greater_": methods["gt_"],
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
        "__neg__": neg, "__pos__": lambda self: self, "__abs__": abs, "__invert__": bitwise_not,
    })
    return methods


METHODS = _methods()
