"""Unary elementwise ops: sign and magnitude, exponentials and logarithms, trigonometric and
special functions, rounding, float classification, and the unary Tensor operators
(``-``, ``+``, ``abs``, ``~``).

Each primitive is one ``unary_op`` call (elementwise_factory.py); ``round`` and ``logit`` add the
parameter torch gives them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..dispatch import dispatch, register
from ..tensor import Tensor
from . import special_functions as special
from .conversion import cast, to
from .copying import (
    assign_inplace,
    check_castable,
    check_inplace_write,
    refuse_recorded_write,
    write_out,
    write_out_exact,
)
from .elementwise_factory import SAME_OUT, Refusals, check_allowed, unary_op
from .inplace import inplace
from .operands import LOW_PRECISION, check_operand, keeping_ties, not_implemented


def _rsqrt(x: Any) -> Any:
    return 1 / np.sqrt(x)


def _sigmoid(x: Any) -> Any:
    # torch's formula, whose roundings its results carry (exp(-x) overflowing to inf gives
    # 0); float16 and bfloat16 compute in float32 and round once, as torch's kernels do
    if x.dtype in LOW_PRECISION:
        return (1 / (1 + np.exp(-x.astype(np.float32)))).astype(x.dtype)
    return 1 / (1 + np.exp(-x))


def _frac(x: Any) -> Any:
    return x - np.trunc(x)


def _reciprocal(x: Any) -> Any:
    return 1 / x


def _relu(x: Any) -> Any:
    # a scalar of x's dtype: bfloat16 stays bfloat16
    return keeping_ties(np.maximum, x, x.dtype.type(0))


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


_F = "float"

NEG, neg, _neg_ = unary_op(
    "neg", np.negative, allowed="ifc", exact_out=SAME_OUT, inplace=True, refusals={"b": (
        RuntimeError, "Negation, the `-` operator, on a bool tensor is not supported. If you "
        "are trying to invert a mask, use the `~` or `logical_not()` operator instead.")})
ABS, abs, _abs_ = unary_op("abs", np.abs, "real", allowed="ifc", exact_out=SAME_OUT, inplace=True)
SIGN, sign, _sign_ = unary_op(
    "sign", _sign, allowed="bif", exact_out=SAME_OUT, inplace=True, refusals=_refuse_complex(
        "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
        "torch.sgn instead."))
SGN, sgn, _sgn_ = unary_op("sgn", _sgn, exact_out=SAME_OUT, inplace=True)
EXP, exp, _exp_ = unary_op("exp", np.exp, _F, inplace=True)
EXP2, exp2, _exp2_ = unary_op("exp2", np.exp2, _F, inplace=True)
EXPM1, expm1, _expm1_ = unary_op("expm1", np.expm1, _F, inplace=True)
LOG, log, _log_ = unary_op("log", np.log, _F, inplace=True)
LOG2, log2, _log2_ = unary_op("log2", np.log2, _F, inplace=True)
LOG10, log10, _log10_ = unary_op("log10", np.log10, _F, inplace=True)
LOG1P, log1p, _log1p_ = unary_op("log1p", np.log1p, _F, inplace=True)
SQRT, sqrt, _sqrt_ = unary_op("sqrt", np.sqrt, _F, inplace=True)
RSQRT, rsqrt, _rsqrt_ = unary_op("rsqrt", _rsqrt, _F, inplace=True)
SIN, sin, _sin_ = unary_op("sin", np.sin, _F, inplace=True)
COS, cos, _cos_ = unary_op("cos", np.cos, _F, inplace=True)
TAN, tan, _tan_ = unary_op("tan", np.tan, _F, inplace=True)
ASIN, asin, _asin_ = unary_op("asin", np.arcsin, _F, inplace=True)
ACOS, acos, _acos_ = unary_op("acos", np.arccos, _F, inplace=True)
ATAN, atan, _atan_ = unary_op("atan", np.arctan, _F, inplace=True)
SINH, sinh, _sinh_ = unary_op("sinh", np.sinh, _F, inplace=True)
COSH, cosh, _cosh_ = unary_op("cosh", np.cosh, _F, inplace=True)
TANH, tanh, _tanh_ = unary_op("tanh", np.tanh, _F, inplace=True)
ASINH, asinh, _asinh_ = unary_op("asinh", np.arcsinh, _F, inplace=True)
ACOSH, acosh, _acosh_ = unary_op("acosh", np.arccosh, _F, inplace=True)
ATANH, atanh, _atanh_ = unary_op("atanh", np.arctanh, _F, inplace=True)
SIGMOID, sigmoid, _sigmoid_ = unary_op("sigmoid", _sigmoid, _F, inplace=True)
ERF, erf, _erf_ = unary_op("erf", special.erf, _F, allowed="bif", kernel="erf_vml_cpu",
                           inplace=True)
ERFC, erfc, _erfc_ = unary_op("erfc", special.erfc, _F, allowed="bif", kernel="erfc_vml_cpu",
                              inplace=True)
ERFINV, erfinv, _erfinv_ = unary_op("erfinv", special.erfinv, _F, allowed="bif",
                                    kernel="erfinv_vml_cpu", inplace=True)
LGAMMA, lgamma, _lgamma_ = unary_op("lgamma", special.lgamma, _F, allowed="bif",
                                    kernel="lgamma_vml_cpu", inplace=True)
DIGAMMA, digamma, _digamma_ = unary_op("digamma", special.digamma, _F, allowed="bif",
                                       kernel="digamma", inplace=True)
RECIPROCAL, reciprocal, _reciprocal_ = unary_op("reciprocal", _reciprocal, _F, inplace=True)
SQUARE, _square_same, _square_ = unary_op("square", _square, inplace=True)
RELU, relu, _relu_ = unary_op("relu", _relu, allowed="if", inplace=True, refusals={
    "b": (RuntimeError, "Boolean inputs not supported for relu"),
    "c": (NotImplementedError, "clamp is not supported for complex types")})
FLOOR, floor, _floor_ = unary_op(
    "floor", _copy_if_int(np.floor), allowed="if", kernel="floor_vml_cpu", exact_out=SAME_OUT,
    inplace=True, refusals=_refuse_complex("floor is not supported for complex inputs"))
CEIL, ceil, _ceil_ = unary_op(
    "ceil", _copy_if_int(np.ceil), allowed="if", kernel="ceil_vml_cpu", exact_out=SAME_OUT,
    inplace=True, refusals=_refuse_complex("ceil is not supported for complex inputs"))
TRUNC, trunc, _trunc_ = unary_op(
    "trunc", _copy_if_int(np.trunc), allowed="if", kernel="trunc_vml_cpu", exact_out=SAME_OUT,
    inplace=True, refusals=_refuse_complex("trunc is not supported for complex inputs"))
FRAC, frac, _frac_ = unary_op("frac", _frac, allowed="f", exact_out=SAME_OUT, inplace=True)
ROUND, _round_half_even, _round_ = unary_op("round", _round, allowed="if", kernel="round_vml_cpu",
                                            exact_out=SAME_OUT, inplace=True)
BITWISE_NOT, bitwise_not, _bitwise_not_ = unary_op(
    "bitwise_not", np.invert, differentiable=False, allowed="bi", exact_out=SAME_OUT, inplace=True)
LOGICAL_NOT, logical_not, _logical_not_ = unary_op("logical_not", np.logical_not, "bool",
                                                   differentiable=False, inplace=True,
                                                   writes_leaves=True)
ISNAN, isnan, _ = unary_op("isnan", np.isnan, result="bool", differentiable=False)
_ITERATOR_BOOL = meta.elementwise("bool")


def _known_for_integers(x: Any) -> Any:
    """isinf's and isfinite's layout: torch answers an integer or bool tensor with
    ``zeros_like``/``ones_like`` (its layout kept, size-1 dims' strides too), a floating
    one through its iterator."""
    if np.dtype(x.dtype).kind in "biu":
        return meta.like(x, np.bool_)
    return _ITERATOR_BOOL(x)


ISINF, isinf, _ = unary_op("isinf", np.isinf, result="bool", differentiable=False,
                           rule=_known_for_integers)
ISFINITE, isfinite, _ = unary_op("isfinite", np.isfinite, result="bool", differentiable=False,
                                 rule=_known_for_integers)
ISPOSINF, isposinf, _ = unary_op(
    "isposinf", np.isposinf, allowed="bif", exact_out="isposinf does not support non-boolean "
    "outputs.", refusals={"c": (RuntimeError, "isposinf does not support complex inputs.")},
    result="bool", differentiable=False)
ISNEGINF, isneginf, _ = unary_op(
    "isneginf", np.isneginf, allowed="bif", exact_out="isneginf does not support non-boolean "
    "outputs.", refusals={"c": (RuntimeError, "isneginf does not support complex inputs.")},
    result="bool", differentiable=False)
SIGNBIT, signbit, _ = unary_op(
    "signbit", _signbit, allowed="bif", exact_out="signbit does not support non-boolean outputs.",
    refusals=_refuse_complex("signbit is not implemented for complex tensors."), result="bool",
    differentiable=False)

negative, absolute, fix = neg, abs, trunc
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh


def _sinc(x: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        if x.dtype in LOW_PRECISION:
            # torch computes the 16-bit floats in float32 and rounds only the result; its
            # float32 sine is the correctly rounded one (NumPy's float32 sine is 1 ulp off)
            y = x.astype(np.float32) * np.float32(np.pi)
            r = np.sin(y.astype(np.float64)).astype(np.float32) / y
        else:
            y = np.pi * x
            r = np.sin(y) / y
    return np.where(x == 0, r.dtype.type(1), r)


def _scale(factor: float) -> Callable[..., Any]:
    def forward(x: Any) -> Any:
        if x.dtype in LOW_PRECISION:
            return x.astype(np.float32) * np.float32(factor)
        return x * factor

    return forward


def _complex_unsupported(name: str) -> Refusals:
    return {"c": (RuntimeError, f"{name} is not supported for complex tensors.")}


SINC, _sinc_fn, _sinc_ = unary_op("sinc", _sinc, "float", inplace=True)
# torch writes these into ``empty_like(input)``: laid out like the input
DEG2RAD, _deg2rad_fn, _deg2rad_ = unary_op("deg2rad", _scale(math.pi / 180), "float",
                                           allowed="bif", inplace=True, rule=meta.like_input,
                                           refusals=_complex_unsupported("deg2rad"))
RAD2DEG, _rad2deg_fn, _rad2deg_ = unary_op("rad2deg", _scale(180 / math.pi), "float",
                                           allowed="bif", inplace=True, rule=meta.like_input,
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


def square_(self: Tensor) -> Tensor:
    """In-place ``square`` (a bool tensor's square is int64: it cannot be written back)."""
    if isinstance(self, Tensor) and self.dtype is _dt.bool:
        check_castable("square_", _dt.int64, _dt.bool)
    return _square_(self)  # type: ignore[misc]


def round(input: Tensor, *, decimals: int = 0, out: Tensor | None = None) -> Tensor:
    """torch.round: half to even, optionally to ``decimals`` places (floats only then)."""
    if decimals == 0:
        return _round_half_even(input, out=out)
    if not isinstance(input, Tensor):
        raise TypeError(f"round(): argument 'input' must be Tensor, not {type(input).__name__}")
    check_allowed("round_cpu", "f", input.dtype, None)
    res = dispatch(ROUND, (input,), {"decimals": decimals})
    return res if out is None else write_out_exact("round", out, res, SAME_OUT)


def round_(self: Tensor, *, decimals: int = 0) -> Tensor:
    """In-place ``round``."""
    if decimals == 0:
        return _round_(self)  # type: ignore[misc]
    check_inplace_write("round_", self)
    return assign_inplace(self, round(self, decimals=decimals), "round_")


def _logit(x: Any, *, eps: float | None) -> Any:
    # as torch: bounds in the tensor's dtype (1 - eps rounds there), no clamp for eps=0/NaN
    dt = x.dtype
    if eps is not None and eps == eps and eps != 0:
        lo = dt.type(eps)
        x = np.clip(x, lo, dt.type(1) - lo)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x / (dt.type(1) - x)).astype(dt, copy=False)


LOGIT = register("logit", _logit, meta.elementwise("float"), "elementwise", arg_names=("self",))


def logit(input: Tensor, eps: float | None = None, *, out: Tensor | None = None) -> Tensor:
    """torch.logit: ``log(p / (1 - p))``, with p clamped to ``[eps, 1 - eps]`` when eps is given."""
    check_operand("logit", "input", input, numbers=False)
    dt = input.dtype
    if dt.category == 3:
        raise not_implemented("logit_cpu", dt)
    if dt.category < 2:
        input = cast(input, _dt.get_default_dtype())
    res = dispatch(LOGIT, (input,), {"eps": eps})
    return res if out is None else write_out("logit", out, res)


_logit_ = inplace(logit, "logit_", overlap=None)


def logit_(self: Tensor, eps: float | None = None) -> Tensor:
    """In-place ``logit`` (in a graph it reads a clone of self, which its node saves)."""
    check_inplace_write("logit_", self)  # torch's refusals of the write before the dtype's
    return _logit_(self, eps)


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
            refuse_recorded_write(self)  # autograd's refusal comes first
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

def _methods() -> dict[str, Callable[..., Any]]:
    g = globals()
    methods: dict[str, Callable[..., Any]] = {n: g[n] for n in FUNCTIONS}
    methods.update({n + "_": g[f"_{n}_"] for n in (
        "logical_not", "bitwise_not", "neg", "sign", "sgn", "exp", "exp2", "expm1", "log",
        "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan",
        "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc", "erfinv",
        "lgamma", "digamma", "reciprocal", "relu", "floor", "ceil", "trunc", "frac", "sinc",
        "deg2rad", "rad2deg")})
    methods.update({"abs_": _real_only(_abs_), "round_": round_, "logit_": logit_,  # type: ignore[arg-type]
                    "square_": square_})  # type: ignore[arg-type]
    methods.update({
        "negative_": methods["neg_"], "absolute_": methods["abs_"], "fix_": methods["trunc_"],
        "__neg__": neg, "__pos__": positive, "__abs__": abs, "__invert__": _invert,
    })
    return methods


METHODS = _methods()
