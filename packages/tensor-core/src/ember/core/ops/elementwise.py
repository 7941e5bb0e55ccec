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
from .conversion import to
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


# torch's C++ names for dtypes, used in its "not implemented for" errors
_PRETTY = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
           "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
           "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
_KIND = "bifc"  # a dtype's category as a letter: bool, int, float, complex
_ALL = "bifc"
_NDARRAY = np.ndarray
_INT_RANGE = {dt: (int(np.iinfo(dt.np).min), int(np.iinfo(dt.np).max))
              for dt in (_dt.uint8, _dt.int8, _dt.int16, _dt.int32, _dt.int64)}
_FLOAT_MAX = {dt: _dt.finfo(dt).max for dt in (_dt.float16, _BF16, _dt.float32, _dt.float64)}
Refusals = dict[str, tuple[type[Exception], str]]


def _wrap_int(value: int, dt: _dt.dtype) -> int:
    """A Python int converted to an integer dtype the way torch converts scalars: wrapping."""
    lo, hi = _INT_RANGE[dt]
    if lo <= value <= hi:
        return value
    span = hi - lo + 1
    return (value - lo) % span + lo


def _binary(name: str, forward: Callable[..., Any], result: str = "promote",
            differentiable: bool = True, allowed: str = _ALL, kernel: str | None = None,
            scalars: str = "any", refusals: Refusals | None = None
            ) -> tuple[Op, Callable[..., Tensor]]:
    """Register a broadcasting binary primitive and build its public function.

    ``result``: 'promote' keeps the promoted dtype, 'float' turns integer results into the
    default float (true division), 'bool' gives a mask. ``allowed``: the dtype kinds torch
    computes the op for ('b'ool, 'i'nt, 'f'loat, 'c'omplex), checked on the promoted dtype;
    others raise torch's NotImplementedError naming ``kernel``, or the error ``refusals`` gives
    for that kind. ``scalars``: which operands may be Python numbers: 'any', 'other' (input
    must be a Tensor) or 'none'.
    """
    op = register(name, forward, meta.elementwise(result), "elementwise", differentiable)
    kernel_name = kernel or f"{name}_cpu"
    scalars_checked, tensor_first = scalars != "any", scalars == "other"
    accepted = tuple(kind in allowed for kind in _KIND)  # by dtype category
    to_float, to_bool = result == "float", result == "bool"

    def fn(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
        if scalars_checked and not (input.__class__ is Tensor and (
                tensor_first or other.__class__ is Tensor)):
            _check_scalars(name, scalars, input, other)
        x, y, dt, dev, rg = prep_binary(name, input, other)
        category = dt.category
        if dt is _BF16:
            # ml_dtypes scalars are not weakly typed: numbers become bfloat16 scalars first
            if not isinstance(y, np.ndarray):
                y = _BF16.np.type(y)
            if not isinstance(x, np.ndarray):
                x = _BF16.np.type(x)
        elif category == 1 and not to_float and (y.__class__ is int or x.__class__ is int):
            # Python ints wrap into integer dtypes (uint8 - 1 is uint8 255), as in torch
            if x.__class__ is int:
                x = _wrap_int(x, dt)
            if y.__class__ is int:
                y = _wrap_int(y, dt)
        if not accepted[category]:
            _check_allowed(kernel_name, allowed, dt, refusals)
        rdt = dt
        if to_float:
            if category < 2:
                rdt = _dt.get_default_dtype()
                x = x.astype(rdt.np) if hasattr(x, "astype") else x
                y = y.astype(rdt.np) if hasattr(y, "astype") else y
        elif to_bool:
            rdt = _dt.bool
        try:
            r = forward(x, y)
        except ValueError:
            raise _broadcast_error(name, x, y) from None
        if r.dtype != rdt.np:
            r = r.astype(rdt.np)
        if r.__class__ is not _NDARRAY and isinstance(r, np.generic):
            r = np.asarray(r)  # ufuncs answer 0-d operands with numpy scalars
        res = make(r, rdt, dev)
        if rg:
            record(op, (input, other), None, res)
        return res if out is None else write_out(name, out, res)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}(input, other): elementwise, with broadcasting and type promotion."
    return op, fn


def _check_scalars(name: str, scalars: str, input: Any, other: Any) -> None:
    """TypeError where torch takes only Tensors (subclasses such as Parameter pass)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if scalars == "none" and not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")


_SAME_OUT = "Found dtype {out} but expected {expected}"


def _check_out_dtype(message: str, out: Any, dt: _dt.dtype) -> None:
    """torch's error for ops whose ``out`` must have the result dtype, not merely take it."""
    if isinstance(out, Tensor) and out.dtype is not dt:
        raise RuntimeError(message.format(out=_PRETTY[out.dtype.name], expected=_PRETTY[dt.name]))


def _check_allowed(kernel: str, allowed: str, dt: _dt.dtype, refusals: Refusals | None) -> None:
    kind = _KIND[dt.category]
    if kind in allowed:
        return
    if refusals and kind in refusals:
        error, message = refusals[kind]
        raise error(message)
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{_PRETTY[dt.name]}'")


def _unary(name: str, forward: Callable[..., Any], result: str = "same",
           differentiable: bool = True, allowed: str = _ALL, kernel: str | None = None,
           refusals: Refusals | None = None, exact_out: str | None = None
           ) -> tuple[Op, Callable[..., Tensor]]:
    """Register a unary primitive. ``result``: 'same', 'float' (ints compute in the default
    float), 'bool' or 'real' (complex gives its real dtype, as abs does). ``allowed``,
    ``kernel`` and ``refusals``: as for ``_binary``, checked on the input dtype.
    ``exact_out``: torch's error when ``out`` must have the result's dtype exactly."""
    op = register(name, forward, meta.elementwise("float" if result == "float" else
                                                  "bool" if result == "bool" else "promote"),
                  "elementwise", differentiable)
    kernel_name = kernel or f"{name}_cpu"
    accepted = tuple(kind in allowed for kind in _KIND)  # by dtype category
    to_float = result == "float"
    result_of = {"bool": lambda dt: _dt.bool, "real": _dt.dtype.to_real}.get(result)

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        dt = input.dtype
        if not accepted[dt.category]:
            _check_allowed(kernel_name, allowed, dt, refusals)
        x = input._data
        if to_float and dt.category < 2:
            dt = _dt.get_default_dtype()
            x = x.astype(dt.np)
        r = forward(x)
        rdt = dt if result_of is None else result_of(dt)
        if r.dtype != rdt.np:
            r = r.astype(rdt.np)
        if r.__class__ is not _NDARRAY and isinstance(r, np.generic):
            r = np.asarray(r)
        res = make(r, rdt, input.device)
        if input._requires_grad:
            record(op, (input,), None, res)
        if out is None:
            return res
        if exact_out is not None:
            _check_out_dtype(exact_out, out, rdt)
        return write_out(name, out, res)

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


ADD, _add = _binary("add", np.add)
SUB, _sub = _binary("sub", np.subtract)
MUL, mul = _binary("mul", np.multiply)
DIV, true_divide = _binary("div", _true_divide, result="float")
DIV_TRUNC, _div_trunc = _binary("div_trunc", _trunc_divide, differentiable=False, allowed="if")
FLOOR_DIVIDE, floor_divide = _binary("floor_divide", _floor_divide, differentiable=False,
                                     allowed="if", kernel="div_floor_cpu")
REMAINDER, remainder = _binary("remainder", _remainder, allowed="if")
FMOD, fmod = _binary("fmod", _fmod, allowed="if", scalars="other")
POW, _pow = _binary("pow", _power, allowed="ifc", kernel="pow")
MAXIMUM, maximum = _binary("maximum", np.maximum, allowed="bif", scalars="none",
                           refusals=_complex_refusal("maximum"))
MINIMUM, minimum = _binary("minimum", np.minimum, allowed="bif", scalars="none",
                           refusals=_complex_refusal("minimum"))
FMAX, fmax = _binary("fmax", np.fmax, allowed="bif", scalars="none",
                     refusals=_complex_refusal("fmax"))
FMIN, fmin = _binary("fmin", np.fmin, allowed="bif", scalars="none",
                     refusals=_complex_refusal("fmin"))
ATAN2, atan2 = _binary("atan2", np.arctan2, result="float", allowed="bif", scalars="none")
HYPOT, hypot = _binary("hypot", np.hypot, result="float", allowed="f", scalars="none")
COPYSIGN, copysign = _binary("copysign", np.copysign, result="float", allowed="bif",
                             scalars="other")
LOGADDEXP, logaddexp = _binary("logaddexp", _logaddexp, result="float", allowed="fc",
                               scalars="none")
LOGADDEXP2, logaddexp2 = _binary("logaddexp2", np.logaddexp2, result="float", allowed="f",
                                 scalars="none")
XLOGY, xlogy = _binary("xlogy", special.xlogy, result="float", allowed="bif")
EQ, eq = _binary("eq", np.equal, result="bool", differentiable=False, scalars="other")
NE, ne = _binary("ne", np.not_equal, result="bool", differentiable=False, scalars="other")
LT, lt = _binary("lt", np.less, result="bool", differentiable=False, allowed="bif",
                 scalars="other")
LE, le = _binary("le", np.less_equal, result="bool", differentiable=False, allowed="bif",
                 scalars="other")
GT, gt = _binary("gt", np.greater, result="bool", differentiable=False, allowed="bif",
                 scalars="other")
GE, ge = _binary("ge", np.greater_equal, result="bool", differentiable=False, allowed="bif",
                 scalars="other")
LOGICAL_AND, logical_and = _binary("logical_and", np.logical_and, "bool", False, scalars="none")
LOGICAL_OR, logical_or = _binary("logical_or", np.logical_or, "bool", False, scalars="none")
LOGICAL_XOR, logical_xor = _binary("logical_xor", np.logical_xor, "bool", False, scalars="none")
BITWISE_AND, bitwise_and = _binary("bitwise_and", np.bitwise_and, differentiable=False,
                                   allowed="bi")
BITWISE_OR, bitwise_or = _binary("bitwise_or", np.bitwise_or, differentiable=False, allowed="bi")
BITWISE_XOR, bitwise_xor = _binary("bitwise_xor", np.bitwise_xor, differentiable=False,
                                   allowed="bi")
LEFT_SHIFT, bitwise_left_shift = _binary("bitwise_left_shift", np.left_shift,
                                         differentiable=False, allowed="i", kernel="lshift_cpu")
RIGHT_SHIFT, bitwise_right_shift = _binary("bitwise_right_shift", np.right_shift,
                                           differentiable=False, allowed="i", kernel="rshift_cpu")

greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
multiply = mul


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
            if exponent > _INT_RANGE[dt][1]:
                raise RuntimeError(f"value cannot be converted to type {dt.name}_t without "
                                   "overflow")
        elif exponent.__class__ is float and dt.category == 2 and not (
                -_FLOAT_MAX[dt] <= exponent <= _FLOAT_MAX[dt]) and exponent - exponent == 0:
            raise RuntimeError(f"value cannot be converted to type {_PRETTY[dt.name]} without "
                               "overflow")
    return _pow(input, exponent) if out is None else _pow(input, exponent, out=out)


# ----------------------------------------------------------------------------- unary

def _rsqrt(x: Any) -> Any:
    return 1 / np.sqrt(x)


def _sigmoid(x: Any) -> Any:
    if x.dtype.kind == "c":
        return 1 / (1 + np.exp(-x))
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
    if x.dtype.kind in "iu":
        return np.sign(x)
    if x.dtype == np.bool_:
        return x.copy()
    # torch's (0 < x) - (x < 0): NaN has sign 0 (numpy says NaN)
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


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


def _signbit(x: Any) -> Any:
    if x.dtype.kind in "iub":  # numpy's signbit takes floats only
        return x < 0
    return np.signbit(x)


def _refuse_complex(message: str) -> Refusals:
    return {"c": (NotImplementedError, message)}


def _round(x: Any, decimals: int = 0) -> Any:
    """Half to even; with ``decimals``, torch's scaled form computed in float32 for
    float16/bfloat16 (negative decimals divide first)."""
    if x.dtype.kind in "iub":
        return x.copy()
    if decimals == 0:
        return np.round(x)
    z = x.astype(np.float32) if x.dtype.itemsize == 2 else x
    scale = z.dtype.type(10.0 ** (-decimals if decimals < 0 else decimals))
    r = np.round(z / scale) * scale if decimals < 0 else np.round(z * scale) / scale
    return r.astype(x.dtype, copy=False)


def _copy_if_int(f: Callable[..., Any]) -> Callable[..., Any]:
    """floor/ceil/trunc/round of an integer tensor is the tensor itself (a copy)."""

    def forward(x: Any) -> Any:
        return x.copy() if x.dtype.kind in "iub" else f(x)

    return forward


NEG, neg = _unary("neg", _neg, exact_out=_SAME_OUT)
ABS, abs = _unary("abs", np.abs, "real", allowed="ifc", exact_out=_SAME_OUT)
SIGN, sign = _unary("sign", _sign, allowed="bif", exact_out=_SAME_OUT, refusals=_refuse_complex(
    "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn "
    "instead."))
SGN, sgn = _unary("sgn", _sgn, exact_out=_SAME_OUT)
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
ERF, erf = _unary("erf", special.erf, "float", allowed="bif", kernel="erf_vml_cpu")
ERFC, erfc = _unary("erfc", special.erfc, "float", allowed="bif", kernel="erfc_vml_cpu")
ERFINV, erfinv = _unary("erfinv", special.erfinv, "float", allowed="bif",
                        kernel="erfinv_vml_cpu")
LGAMMA, lgamma = _unary("lgamma", special.lgamma, "float", allowed="bif",
                        kernel="lgamma_vml_cpu")
DIGAMMA, digamma = _unary("digamma", special.digamma, "float", allowed="bif",
                          kernel="digamma")
RECIPROCAL, reciprocal = _unary("reciprocal", _reciprocal, "float")
SQUARE, _square_same = _unary("square", _square)
RELU, relu = _unary("relu", _relu, allowed="if", refusals={
    "b": (RuntimeError, "Boolean inputs not supported for relu"),
    "c": (NotImplementedError, "clamp is not supported for complex types")})
FLOOR, floor = _unary("floor", _copy_if_int(np.floor), allowed="if", kernel="floor_vml_cpu",
                      exact_out=_SAME_OUT,
                      refusals=_refuse_complex("floor is not supported for complex inputs"))
CEIL, ceil = _unary("ceil", _copy_if_int(np.ceil), allowed="if", kernel="ceil_vml_cpu",
                    exact_out=_SAME_OUT,
                    refusals=_refuse_complex("ceil is not supported for complex inputs"))
TRUNC, trunc = _unary("trunc", _copy_if_int(np.trunc), allowed="if", kernel="trunc_vml_cpu",
                      exact_out=_SAME_OUT,
                      refusals=_refuse_complex("trunc is not supported for complex inputs"))
FRAC, frac = _unary("frac", _frac, allowed="f", exact_out=_SAME_OUT)
ROUND, _round_half_even = _unary("round", _round, allowed="if", kernel="round_vml_cpu",
                                 exact_out=_SAME_OUT)
BITWISE_NOT, bitwise_not = _unary("bitwise_not", np.invert, differentiable=False, allowed="bi",
                                  exact_out=_SAME_OUT)
LOGICAL_NOT, logical_not = _unary("logical_not", np.logical_not, "bool", differentiable=False)
ISNAN, isnan = _unary("isnan", np.isnan, "bool", differentiable=False)
ISINF, isinf = _unary("isinf", np.isinf, "bool", differentiable=False)
ISFINITE, isfinite = _unary("isfinite", np.isfinite, "bool", differentiable=False)
ISPOSINF, isposinf = _unary("isposinf", np.isposinf, "bool", differentiable=False, allowed="bif",
                            exact_out="isposinf does not support non-boolean outputs.",
                            refusals={"c": (RuntimeError,
                                            "isposinf does not support complex inputs.")})
ISNEGINF, isneginf = _unary("isneginf", np.isneginf, "bool", differentiable=False, allowed="bif",
                            exact_out="isneginf does not support non-boolean outputs.",
                            refusals={"c": (RuntimeError,
                                            "isneginf does not support complex inputs.")})
SIGNBIT, signbit = _unary("signbit", _signbit, "bool", differentiable=False, allowed="bif",
                          exact_out="signbit does not support non-boolean outputs.",
                          refusals=_refuse_complex("signbit is not implemented for complex "
                                                   "tensors."))

negative, absolute, fix = neg, abs, trunc
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh
arctan2 = atan2
special_expit = sigmoid


def square(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.square: ``input * input`` (bool squares to int64, as ``pow(input, 2)`` does)."""
    if isinstance(input, Tensor) and input.dtype is _dt.bool:
        input = to(input, dtype=_dt.int64)
    return _square_same(input, out=out)


def round(input: Tensor, *, decimals: int = 0, out: Tensor | None = None) -> Tensor:
    """torch.round: half to even, optionally to ``decimals`` places (floats only then)."""
    if decimals == 0:
        return _round_half_even(input, out=out)
    if not isinstance(input, Tensor):
        raise TypeError(f"round(): argument 'input' must be Tensor, not {type(input).__name__}")
    _check_allowed("round_vml_cpu", "f", input.dtype, None)
    res = make(_round(input._data, decimals), input.dtype, input.device)
    if input._requires_grad:
        record(ROUND, (input,), {"decimals": decimals}, res)
    if out is None:
        return res
    _check_out_dtype(_SAME_OUT, out, res.dtype)
    return write_out("round", out, res)


def _invert(self: Tensor) -> Tensor:
    if self.dtype.category > 1:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return bitwise_not(self)


def _positive(self: Tensor) -> Tensor:
    if self.dtype is _dt.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def _real_only(method: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``abs_`` keeps complex tensors out: their abs is real."""

    def abs_(self: Tensor) -> Tensor:
        if self.dtype.category == 3:
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        return method(self)

    abs_.__doc__ = method.__doc__
    return abs_


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
        if y.__class__ is int and self.dtype.category == 1:
            y = _wrap_int(y, self.dtype)
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
    methods["abs_"] = _real_only(methods["abs_"])
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
        "__neg__": neg, "__pos__": _positive, "__abs__": abs, "__invert__": _invert,
    })
    return methods


METHODS = _methods()
