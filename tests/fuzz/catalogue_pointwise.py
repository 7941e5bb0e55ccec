"""Catalogue entries: pointwise ops of several operands (clamp, where, nan_to_num,
isclose, lerp, addcmul...)."""

from __future__ import annotations

from typing import Any

from .entries import Family
from .gen import (
    Call,
    Gen,
    call,
    is_bool,
    is_float,
    is_number,
    is_real,
)

FAMILY = Family()
add, simple = FAMILY.add, FAMILY.simple

# ----------------------------------------------------------------------------- pointwise

def _bound(g: Gen, x: str) -> tuple[str, tuple[str, ...]]:
    if g.coin(0.3):
        y = g.partner(x, is_real)
        if y is not None:
            return "{1}", (y,)
    return g.choice(["-1", "0.5", "1.5", "0", "2"]), ()


def _clamp(name: str, form: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(is_real, recent=form == "inplace")
        if x is None:
            return None
        lo, args = _bound(g, x)
        if name in ("clamp_min", "clamp_max"):
            inner = lo
        elif g.coin(0.3):
            inner = g.choice([f"min={lo}", f"max={lo}"])
        else:
            hi = g.choice(["2", "1.5", "None", "3"]) if not args else "2"
            inner = f"{lo}, {hi}"
        if form == "function":
            return call(f"{{out}} = torch.{name}({{0}}, {inner})", x, *args)
        suffix = "_" if form == "inplace" else ""
        return call(f"{{out}} = {{0}}.{name}{suffix}({inner})", x, *args)

    return build


for _name in ("clamp", "clip", "clamp_min", "clamp_max"):
    add(f"torch.{_name}", _clamp(_name, "function"))
    add(f"Tensor.{_name}", _clamp(_name, "method"))
    add(f"Tensor.{_name}_", _clamp(_name, "inplace"), inplace=True)


def _where(g: Gen) -> Call | None:
    c = g.pick()
    if c is None:
        return None
    cond = "{0}" if is_bool(g.t(c)) else "({0} > 0)" if is_real(g.t(c)) else "({0} != 0)"
    x = g.partner(c)
    other = g.choice(["0", "1.5", "-1", "True"])
    if x is None or g.coin(0.2):
        return call(f"{{out}} = torch.where({cond}, {g.choice(['2', '1.5'])}, {other})", c)
    if g.coin(0.5):
        y = g.partner(x)
        return call(f"{{out}} = torch.where({cond}, {{1}}, {{2}})", c, x, y or x)
    if g.coin(0.5):
        return call(f"{{out}} = {{1}}.where({cond}, {other})", c, x)
    return call(f"{{out}} = torch.where({cond}, {{1}}, {other})", c, x)


add("torch.where", _where)
add("torch.where(cond)", lambda g: (lambda c: None if c is None else call(
    "{out} = torch.where({0})", c))(g.pick(ndim=1)))


def _nan_to_num(suffix: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(is_number, recent=bool(suffix))
        if x is None:
            return None
        kw = g.choice(["", "0.0", "nan=1.0, posinf=2.0", "neginf=-5.0", "1.0, 2.0, -3.0"])
        head = "torch.nan_to_num({0}" + (", " if kw else "") if not suffix else \
            f"{{0}}.nan_to_num{suffix}("
        return call("{out} = " + head + kw + ")", x)

    return build


add("torch.nan_to_num", _nan_to_num(""))
add("Tensor.nan_to_num_", _nan_to_num("_"), inplace=True)


def _two_tensor(name: str, form: str, pred: Any = None, scalar_ok: bool = True) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(pred, recent=form == "inplace")
        if x is None:
            return None
        if scalar_ok and g.coin(0.3):
            other, args = g.scalar(x), ()
        else:
            y = g.partner(x, pred)
            if y is None:
                return None
            other, args = "{1}", (y,)
        if form == "function":
            return call(f"{{out}} = torch.{name}({{0}}, {other})", x, *args)
        return call(f"{{out}} = {{0}}.{name}{'_' if form == 'inplace' else ''}({other})",
                    x, *args)

    return build


for _name, _scalar in (("float_power", True), ("heaviside", False)):
    add(f"torch.{_name}", _two_tensor(_name, "function", is_real, _scalar))
    add(f"Tensor.{_name}_", _two_tensor(_name, "inplace", is_real, _scalar), inplace=True)


def _isclose(g: Gen) -> Call | None:
    x = g.pick()
    y = None if x is None else g.partner(x)
    if y is None:
        return None
    kw = g.choice(["", "rtol=0.5, atol=0.5", "0.0, 0.0, True", "atol=1.0, equal_nan=True"])
    return call(f"{{out}} = torch.isclose({{0}}, {{1}}{', ' + kw if kw else ''})", x, y)


add("torch.isclose", _isclose)
add("torch.allclose", lambda g: (lambda x: None if x is None else call(
    "{out} = torch.allclose({0}, {1}, atol=0.5, equal_nan=True)", x, g.partner(x) or x))(
    g.pick()))
add("torch.equal", lambda g: (lambda x: None if x is None else call(
    "{out} = torch.equal({0}, {1})", x, g.partner(x) or x))(g.pick()))


def _ternary(name: str, form: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(is_number, recent=form == "inplace")
        if x is None:
            return None
        a = g.partner(x, is_number)
        if a is None:
            return None
        if name == "lerp":
            if g.coin(0.5):
                third, args = g.choice(["0.25", "0.5", "2"]), (a,)
            else:
                third, args = "{2}", (a, g.partner(x, is_float) or a)
            kw = ""
        else:
            third, args = "{2}", (a, g.partner(x, is_number) or a)
            kw = g.choice(["", ", value=0.5", ", value=-2", ", value=3"])
        if form == "function":
            return call(f"{{out}} = torch.{name}({{0}}, {{1}}, {third}{kw})", x, *args)
        return call(f"{{out}} = {{0}}.{name}{'_' if form == 'inplace' else ''}"
                    f"({{1}}, {third}{kw})", x, *args)

    return build


for _name in ("lerp", "addcmul", "addcdiv"):
    add(f"torch.{_name}", _ternary(_name, "function"))
    add(f"Tensor.{_name}", _ternary(_name, "method"))
    add(f"Tensor.{_name}_", _ternary(_name, "inplace"), inplace=True)
