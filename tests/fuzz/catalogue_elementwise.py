"""Catalogue entries: the elementwise families, taken whole from the op modules' FUNCTIONS
and METHODS: unary and binary functions, methods, in-place methods and operators."""

from __future__ import annotations

from collections.abc import Callable

from ember.core.ops import binary, unary

from .entries import Family
from .gen import (
    Call,
    Gen,
    call,
    is_bool,
    is_float,
    is_int,
    is_number,
    is_real,
    nan_free,
)

FAMILY = Family()
add = FAMILY.add

# ----------------------------------------------------------------------------- unary

_FLOAT_ONLY = {"sigmoid", "erf", "erfc", "erfinv", "lgamma", "digamma", "logit", "sinc",
               "deg2rad", "rad2deg", "rsqrt", "exp2", "expm1", "log1p", "frac"}
_INT_ONLY = {"bitwise_not"}
_NO_INPLACE_METHOD = {"positive", "isnan", "isinf", "isfinite", "isposinf", "isneginf",
                      "signbit", "fix"}


def _unary_pred(name: str) -> Callable[[object], bool]:
    if name == "signbit":
        return lambda t: is_number(t) and nan_free(t)
    if name in _INT_ONLY:
        return lambda t: is_int(t) or is_bool(t)
    if name in _FLOAT_ONLY:
        return is_float
    return is_number


def _unary_args(name: str, g: Gen) -> str:
    if name == "logit" and g.coin():
        return "1e-3"
    if name == "round" and g.coin(0.3):
        return "decimals=1"
    return ""


# signbit never sees a NaN (``nan_free``): not even the sometimes-any-tensor pick
_STRICT = {"signbit"}

for _name in unary.FUNCTIONS:
    def _fn(g: Gen, name: str = _name) -> Call | None:
        x = g.pick(_unary_pred(name), strict=name in _STRICT)
        if x is None:
            return None
        extra = _unary_args(name, g)
        return call(f"{{out}} = torch.{name}({{0}}{', ' + extra if extra else ''})", x)

    def _method(g: Gen, name: str = _name) -> Call | None:
        x = g.pick(_unary_pred(name), strict=name in _STRICT)
        return None if x is None else call(f"{{out}} = {{0}}.{name}({_unary_args(name, g)})", x)

    def _inplace(g: Gen, name: str = _name) -> Call | None:
        x = g.pick(_unary_pred(name), recent=True)
        return None if x is None else call(f"{{out}} = {{0}}.{name}_({_unary_args(name, g)})", x)

    add(f"torch.{_name}", _fn)
    if _name in unary.METHODS:
        add(f"Tensor.{_name}", _method)
    if f"{_name}_" in unary.METHODS:
        add(f"Tensor.{_name}_", _inplace, inplace=True)

for _op, _code in (("__neg__", "-{0}"), ("__pos__", "+{0}"), ("__abs__", "abs({0})"),
                   ("__invert__", "~{0}")):
    add(f"Tensor.{_op}", lambda g, c=_code, op=_op: (
        lambda x: None if x is None else call("{out} = " + c, x))(
        g.pick((lambda t: is_int(t) or is_bool(t)) if op == "__invert__" else is_number)))

# ----------------------------------------------------------------------------- binary

_BITWISE = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
            "bitwise_right_shift"}
_TENSOR_ONLY = {"maximum", "minimum", "fmax", "fmin", "atan2", "arctan2", "hypot",
                "logaddexp", "logaddexp2"}
_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
              "mod": "%", "pow": "**", "and": "&", "or": "|", "xor": "^", "lshift": "<<",
              "rshift": ">>", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">",
              "ge": ">="}
_REAL_ONLY = {"floor_divide", "remainder", "fmod", "maximum", "minimum", "fmax", "fmin",
              "atan2", "arctan2", "hypot", "copysign", "logaddexp", "logaddexp2", "xlogy",
              "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal"}


def _binary_pred(name: str) -> Callable[[object], bool]:
    if name in _BITWISE:
        return lambda t: is_int(t) or is_bool(t)
    if name in _REAL_ONLY:
        return is_real
    return lambda t: True


def _second(g: Gen, x: str, name: str) -> tuple[str, tuple[str, ...]]:
    """The second operand: a broadcasting tensor, or sometimes a Python number."""
    if name not in _TENSOR_ONLY and g.coin(0.35):
        s = g.scalar(x)
        if name in _BITWISE and s not in ("True", "False"):
            s = g.choice(["1", "2", "3"])
        return s, ()
    pred = _binary_pred(name)
    if name == "copysign":  # the sign source
        y = g.partner(x, lambda t: pred(t) and nan_free(t))
        return ("{1}", (y,)) if y is not None and nan_free(g.t(y)) else ("2", ())
    y = g.partner(x, pred)
    return ("{1}", (y,)) if y is not None else ("2", ())


def _binary_extra(name: str, g: Gen) -> str:
    if name in ("add", "sub", "subtract", "rsub") and g.coin(0.3):
        return ", alpha=" + g.choice(["2", "-1", "0.5"])
    if name in ("div", "divide") and g.coin(0.4):
        return ", rounding_mode=" + g.choice(["'trunc'", "'floor'", "None"])
    return ""


for _name in binary.FUNCTIONS:
    def _fn(g: Gen, name: str = _name) -> Call | None:
        x = g.pick(_binary_pred(name))
        if x is None:
            return None
        other, args = _second(g, x, name)
        if g.coin(0.15) and name not in _TENSOR_ONLY and not args:
            # a number first, a tensor second
            return call(f"{{out}} = torch.{name}({other}, {{0}}{_binary_extra(name, g)})", x)
        return call(f"{{out}} = torch.{name}({{0}}, {other}{_binary_extra(name, g)})",
                    x, *args)

    def _method(g: Gen, name: str = _name, suffix: str = "") -> Call | None:
        x = g.pick(_binary_pred(name), recent=bool(suffix))
        if x is None:
            return None
        other, args = _second(g, x, name)
        return call(f"{{out}} = {{0}}.{name}{suffix}({other}{_binary_extra(name, g)})",
                    x, *args)

    add(f"torch.{_name}", _fn)
    if _name in binary.METHODS:
        add(f"Tensor.{_name}", _method)
    if f"{_name}_" in binary.METHODS:
        add(f"Tensor.{_name}_", lambda g, name=_name: _method(g, name, "_"), inplace=True)

for _dunder, _sym in _OPERATORS.items():
    _base = {"truediv": "div", "floordiv": "floor_divide", "mod": "remainder",
             "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
             "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift"}.get(_dunder,
                                                                                   _dunder)

    def _op(g: Gen, sym: str = _sym, base: str = _base) -> Call | None:
        x = g.pick(_binary_pred(base))
        if x is None:
            return None
        other, args = _second(g, x, base)
        return call(f"{{out}} = {{0}} {sym} {other}", x, *args)

    def _rop(g: Gen, sym: str = _sym, base: str = _base) -> Call | None:
        x = g.pick(_binary_pred(base))
        s = g.scalar(x)
        if base in _BITWISE and s not in ("True", "False"):
            s = "3"
        return None if x is None else call(f"{{out}} = {s} {sym} {{0}}", x)

    def _iop(g: Gen, sym: str = _sym, base: str = _base) -> Call | None:
        x = g.pick(_binary_pred(base), recent=True)
        if x is None:
            return None
        other, args = _second(g, x, base)
        return call(f"{{out}} = {{0}}; {{out}} {sym}= {other}", x, *args)

    add(f"Tensor.__{_dunder}__", _op)
    if _dunder not in ("eq", "ne", "lt", "le", "gt", "ge"):
        add(f"Tensor.__r{_dunder}__", _rop)
        add(f"Tensor.__i{_dunder}__", _iop, inplace=True)
