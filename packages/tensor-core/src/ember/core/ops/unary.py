"""Unary elementwise ops: sign and magnitude, exponentials and logarithms, trigonometric and
special functions, rounding, float classification, and the unary Tensor operators
(``-``, ``+``, ``abs``, ``~``).

Each primitive is one ``unary_op`` call (elementwise.py); ``round`` and ``logit`` add the
parameter torch gives them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..dispatch import register
from ..tensor import Tensor, make
from . import special
from .conversion import to
from .elementwise import SAME_OUT, Refusals, check_allowed, unary_op
from .operands import LOW_PRECISION, check_operand, not_implemented, record, wrap, write_out_exact


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


NEG, neg = unary_op("neg", _neg, exact_out=SAME_OUT)
ABS, abs = unary_op("abs", np.abs, "real", allowed="ifc", exact_out=SAME_OUT)
SIGN, sign = unary_op("sign", _sign, allowed="bif", exact_out=SAME_OUT, refusals=_refuse_complex(
    "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn "
    "instead."))
SGN, sgn = unary_op("sgn", _sgn, exact_out=SAME_OUT)
EXP, exp = unary_op("exp", np.exp, "float")
EXP2, exp2 = unary_op("exp2", np.exp2, "float")
EXPM1, expm1 = unary_op("expm1", np.expm1, "float")
LOG, log = unary_op("log", np.log, "float")
LOG2, log2 = unary_op("log2", np.log2, "float")
LOG10, log10 = unary_op("log10", np.log10, "float")
LOG1P, log1p = unary_op("log1p", np.log1p, "float")
SQRT, sqrt = unary_op("sqrt", np.sqrt, "float")
RSQRT, rsqrt = unary_op("rsqrt", _rsqrt, "float")
SIN, sin = unary_op("sin", np.sin, "float")
COS, cos = unary_op("cos", np.cos, "float")
TAN, tan = unary_op("tan", np.tan, "float")
ASIN, asin = unary_op("asin", np.arcsin, "float")
ACOS, acos = unary_op("acos", np.arccos, "float")
ATAN, atan = unary_op("atan", np.arctan, "float")
SINH, sinh = unary_op("sinh", np.sinh, "float")
COSH, cosh = unary_op("cosh", np.cosh, "float")
TANH, tanh = unary_op("tanh", np.tanh, "float")
ASINH, asinh = unary_op("asinh", np.arcsinh, "float")
ACOSH, acosh = unary_op("acosh", np.arccosh, "float")
ATANH, atanh = unary_op("atanh", np.arctanh, "float")
SIGMOID, sigmoid = unary_op("sigmoid", _sigmoid, "float")
ERF, erf = unary_op("erf", special.erf, "float", allowed="bif", kernel="erf_vml_cpu")
ERFC, erfc = unary_op("erfc", special.erfc, "float", allowed="bif", kernel="erfc_vml_cpu")
ERFINV, erfinv = unary_op("erfinv", special.erfinv, "float", allowed="bif",
                          kernel="erfinv_vml_cpu")
LGAMMA, lgamma = unary_op("lgamma", special.lgamma, "float", allowed="bif",
                          kernel="lgamma_vml_cpu")
DIGAMMA, digamma = unary_op("digamma", special.digamma, "float", allowed="bif",
                            kernel="digamma")
RECIPROCAL, reciprocal = unary_op("reciprocal", _reciprocal, "float")
SQUARE, _square_same = unary_op("square", _square)
RELU, relu = unary_op("relu", _relu, allowed="if", refusals={
    "b": (RuntimeError, "Boolean inputs not supported for relu"),
    "c": (NotImplementedError, "clamp is not supported for complex types")})
FLOOR, floor = unary_op("floor", _copy_if_int(np.floor), allowed="if", kernel="floor_vml_cpu",
                        exact_out=SAME_OUT,
                        refusals=_refuse_complex("floor is not supported for complex inputs"))
CEIL, ceil = unary_op("ceil", _copy_if_int(np.ceil), allowed="if", kernel="ceil_vml_cpu",
                      exact_out=SAME_OUT,
                      refusals=_refuse_complex("ceil is not supported for complex inputs"))
TRUNC, trunc = unary_op("trunc", _copy_if_int(np.trunc), allowed="if", kernel="trunc_vml_cpu",
                        exact_out=SAME_OUT,
                        refusals=_refuse_complex("trunc is not supported for complex inputs"))
FRAC, frac = unary_op("frac", _frac, allowed="f", exact_out=SAME_OUT)
ROUND, _round_half_even = unary_op("round", _round, allowed="if", kernel="round_vml_cpu",
                                   exact_out=SAME_OUT)
BITWISE_NOT, bitwise_not = unary_op("bitwise_not", np.invert, differentiable=False, allowed="bi",
                                    exact_out=SAME_OUT)
LOGICAL_NOT, logical_not = unary_op("logical_not", np.logical_not, "bool", differentiable=False)
ISNAN, isnan = unary_op("isnan", np.isnan, "bool", differentiable=False)
ISINF, isinf = unary_op("isinf", np.isinf, "bool", differentiable=False)
ISFINITE, isfinite = unary_op("isfinite", np.isfinite, "bool", differentiable=False)
ISPOSINF, isposinf = unary_op("isposinf", np.isposinf, "bool", differentiable=False, allowed="bif",
                              exact_out="isposinf does not support non-boolean outputs.",
                              refusals={"c": (RuntimeError,
                                              "isposinf does not support complex inputs.")})
ISNEGINF, isneginf = unary_op("isneginf", np.isneginf, "bool", differentiable=False, allowed="bif",
                              exact_out="isneginf does not support non-boolean outputs.",
                              refusals={"c": (RuntimeError,
                                              "isneginf does not support complex inputs.")})
SIGNBIT, signbit = unary_op("signbit", _signbit, "bool", differentiable=False, allowed="bif",
                            exact_out="signbit does not support non-boolean outputs.",
                            refusals=_refuse_complex("signbit is not implemented for complex "
                                                     "tensors."))

negative, absolute, fix = neg, abs, trunc
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh


def _sinc(x: Any) -> Any:
    if x.dtype in LOW_PRECISION:
        # torch rounds pi * x to the tensor's dtype before the sine, as numpy does in float16
        y = (x.astype(np.float32) * np.float32(np.pi)).astype(x.dtype).astype(np.float32)
    else:
        y = np.pi * x
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sin(y) / y
    return np.where(x == 0, np.ones((), r.dtype), r)


def _scale(factor: float) -> Callable[..., Any]:
    def forward(x: Any) -> Any:
        if x.dtype in LOW_PRECISION:
            return x.astype(np.float32) * np.float32(factor)
        return x * factor

    return forward


def _complex_unsupported(name: str) -> Refusals:
    return {"c": (RuntimeError, f"{name} is not supported for complex tensors.")}


SINC, _sinc_fn = unary_op("sinc", _sinc, "float")
DEG2RAD, _deg2rad_fn = unary_op("deg2rad", _scale(math.pi / 180), "float", allowed="bif",
                                refusals=_complex_unsupported("deg2rad"))
RAD2DEG, _rad2deg_fn = unary_op("rad2deg", _scale(180 / math.pi), "float", allowed="bif",
                                refusals=_complex_unsupported("rad2deg"))


def sinc(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.sinc: ``sin(pi x) / (pi x)``, 1 at 0."""
    return _sinc_fn(input, out=out)


def deg2rad(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.deg2rad: degrees to radians."""
    return _deg2rad_fn(input, out=out)


def rad2deg(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.rad2deg: radians to degrees."""
    return _rad2deg_fn(input, out=out)


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
    check_allowed("round_vml_cpu", "f", input.dtype, None)
    res = make(_round(input._data, decimals), input.dtype, input.device)
    if input._requires_grad:
        record(ROUND, (input,), {"decimals": decimals}, res)
    return res if out is None else write_out_exact("round", out, res, SAME_OUT)


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
        raise not_implemented("logit_cpu", dt)
    if dt.category < 2:
        dt = _dt.get_default_dtype()
        x = x.astype(dt.np)
    params = {"eps": eps}
    return wrap(LOGIT, _logit(x, eps=eps), dt, input.device, (input,), params,
                input._requires_grad, out)


def positive(input: Tensor) -> Tensor:
    """torch.positive: ``input`` itself (an error for bool tensors)."""
    check_operand("positive", "input", input, numbers=False)
    if input.dtype is _dt.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _invert(self: Tensor) -> Tensor:
    if self.dtype.category > 1:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return bitwise_not(self)


def _real_only(method: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``abs_`` keeps complex tensors out: their abs is real."""

    def abs_(self: Tensor) -> Tensor:
        if self.dtype.category == 3:
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        return method(self)

    abs_.__doc__ = method.__doc__
    return abs_


FUNCTIONS = [
    "logical_not", "bitwise_not", "neg", "negative", "abs", "absolute", "sign", "sgn", "exp",
    "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
    "asin", "acos", "atan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "asinh",
    "acosh", "atanh", "arcsinh", "arccosh", "arctanh", "sigmoid", "erf", "erfc", "erfinv",
    "lgamma", "digamma", "reciprocal", "square", "relu", "floor", "ceil", "trunc", "fix", "frac",
    "round", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit", "sinc", "deg2rad",
    "rad2deg", "logit", "positive",
]

_INPLACE = [
    "logical_not", "bitwise_not", "neg", "abs", "sign", "sgn", "exp", "exp2", "expm1", "log",
    "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc", "erfinv",
    "lgamma", "digamma", "reciprocal", "square", "relu", "floor", "ceil", "trunc", "frac",
    "round", "sinc", "deg2rad", "rad2deg", "logit",
]


def _methods() -> dict[str, Callable[..., Any]]:
    from .inplace import inplace

    g = globals()
    methods: dict[str, Callable[..., Any]] = {n: g[n] for n in FUNCTIONS}
    methods.update({n + "_": inplace(g[n], n + "_") for n in _INPLACE})
    methods["abs_"] = _real_only(methods["abs_"])
    methods.update({
        "negative_": methods["neg_"], "absolute_": methods["abs_"], "fix_": methods["trunc_"],
        "__neg__": neg, "__pos__": positive, "__abs__": abs, "__invert__": _invert,
    })
    return methods


METHODS = _methods()
