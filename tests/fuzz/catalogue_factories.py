"""Catalogue entries: casts and copies, factories and the random ops."""

from __future__ import annotations

from typing import Any

from .entries import Family
from .gen import (
    Call,
    Gen,
    call,
    cast_defined,
    is_float,
    is_real,
)

FAMILY = Family()
add, simple = FAMILY.add, FAMILY.simple

# ----------------------------------------------------------------------------- conversion

_CAST_METHODS = {"float": "float32", "double": "float64", "half": "float16",
                 "bfloat16": "bfloat16", "long": "int64", "int": "int32", "short": "int16",
                 "char": "int8", "byte": "uint8", "bool": "bool", "cfloat": "complex64"}

def _to(g: Gen) -> Call | None:
    x = g.pick()
    if x is None:
        return None
    target = g.choice(list(_CAST_METHODS.values()))
    if not cast_defined(g.t(x), target):
        return None
    form = g.rng.random()
    if form < 0.4:
        return call(f"{{out}} = {{0}}.to(torch.{target}{', copy=True' if g.coin(0.2) else ''})",
                    x)
    if form < 0.8:
        method = {v: k for k, v in _CAST_METHODS.items()}[target]
        return call(f"{{out}} = {{0}}.{method}()", x)
    return call(f"{{out}} = {{0}}.type(torch.{target})", x)


add("Tensor.to", _to)
add("Tensor.type_as", lambda g: (lambda x, y: None if x is None or y is None or
                                 not cast_defined(g.t(x), str(g.t(y).dtype).split(".")[-1])
                                 else call("{out} = {0}.type_as({1})", x, y))(
    g.pick(), g.pick()))
simple("torch.clone", "{out} = torch.clone({0}{e})",
       extra=lambda g, x: g.choice(["", ", memory_format=torch.contiguous_format",
                                    ", memory_format=torch.preserve_format"]))
simple("Tensor.contiguous", "{out} = {0}.contiguous()")
simple("torch.detach", "{out} = torch.detach({0})")
simple("Tensor.detach", "{out} = {0}.detach()")
simple("Tensor.as_subclass", "{out} = {0}.as_subclass(torch.Tensor)")
simple("Tensor.cpu", "{out} = {0}.cpu()")

# ----------------------------------------------------------------------------- copying


def _copy_(g: Gen) -> Call | None:
    x = g.pick(recent=True)
    if x is None:
        return None
    y = g.partner(x)
    if y is None or not cast_defined(g.t(y), str(g.t(x).dtype).split(".")[-1]):
        return None
    return call("{out} = {0}.copy_({1})", x, y)


add("Tensor.copy_", _copy_, inplace=True)


def _fill_(g: Gen) -> Call | None:
    x = g.pick(recent=True)
    if x is None:
        return None
    v = g.scalar(x) if g.coin(0.7) else g.choice(["torch.tensor(2.5)", "torch.tensor(3)",
                                                   "torch.tensor(-1)"])
    return call(f"{{out}} = {{0}}.fill_({v})", x)


add("Tensor.fill_", _fill_, inplace=True)
simple("Tensor.zero_", "{out} = {0}.zero_()", inplace=True)
simple("Tensor.resize_", "{out} = {0}.clone().resize_({e})", meta_only=True,
       extra=lambda g, x: g.choice(["0", "2, 3", f"{max(g.t(x).numel(), 1)}", "1"]))

# ----------------------------------------------------------------------------- factories


def _shape_literal(g: Gen) -> str:
    return g.choice(["(2, 3)", "(0, 3)", "()", "(4,)", "(3, 1)"])


def _factory(name: str) -> Any:
    def build(g: Gen) -> Call | None:
        dt = ", dtype=" + g.dtype() if g.coin(0.4) else ""
        s = _shape_literal(g)
        if name == "full":
            return call(f"{{out}} = torch.full({s}, {g.scalar()}{dt})")
        if name == "empty":
            return call(f"{{out}} = torch.empty({s}{dt})", meta_only=True)
        if name == "empty_strided":
            return call(f"{{out}} = torch.empty_strided((2, 3), {g.choice(['(1, 2)', '(3, 1)', '(0, 1)'])}"
                        f"{dt})", meta_only=True)
        if name == "eye":
            return call(f"{{out}} = torch.eye({g.int(0, 3)}{', ' + str(g.int(0, 4)) if g.coin() else ''}"
                        f"{dt})")
        if name == "scalar_tensor":
            return call(f"{{out}} = torch.scalar_tensor({g.scalar()}{dt})")
        if name == "tensor":
            return call(f"{{out}} = torch.tensor({g.choice(['[1, 2]', '[1.5, -2.0]', '[[True], [False]]', '3', '[]', '[1, 2.5]', '[1j, 2]'])}{dt})")
        return call(f"{{out}} = torch.{name}({s}{dt})")

    return build


for _name in ("zeros", "ones", "full", "empty", "empty_strided", "eye", "scalar_tensor",
              "tensor"):
    add(f"torch.{_name}", _factory(_name))


def _like(name: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick()
        if x is None:
            return None
        dt = ", dtype=" + g.dtype() if g.coin(0.3) else ""
        mf = ", memory_format=torch.contiguous_format" if g.coin(0.2) else ""
        meta = name in ("empty_like", "rand_like", "randn_like", "randint_like")
        if name == "full_like":
            return call(f"{{out}} = torch.full_like({{0}}, {g.scalar()}{dt}{mf})", x)
        if name == "randint_like":
            return call(f"{{out}} = torch.randint_like({{0}}, 10{dt if 'complex' not in dt else ''})",
                        x, meta_only=True)
        return call(f"{{out}} = torch.{name}({{0}}{dt}{mf})", x, meta_only=meta)

    return build


for _name in ("zeros_like", "ones_like", "full_like", "empty_like", "rand_like",
              "randn_like", "randint_like"):
    add(f"torch.{_name}", _like(_name))


def _new(name: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick()
        if x is None:
            return None
        s = _shape_literal(g)
        if name == "new_full":
            return call(f"{{out}} = {{0}}.new_full({s}, {g.scalar(x)})", x)
        if name == "new_tensor":
            return call("{out} = {0}.new_tensor([1, 2])", x)
        return call(f"{{out}} = {{0}}.{name}({s})", x, meta_only=name == "new_empty")

    return build


for _name in ("new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"):
    add(f"Tensor.{_name}", _new(_name))


def _complex(g: Gen) -> Call | None:
    x = g.pick(lambda t: is_float(t) and str(t.dtype) in ("torch.float32", "torch.float64"))
    if x is None:
        return None
    y = g.partner(x, is_float) or x
    if str(g.t(x).dtype) == str(g.t(y).dtype) == "torch.float16":
        return None  # torch's complex32 is experimental; Ember refuses it (a known difference)
    return call("{out} = torch.complex({0}, {1})", x, y)


add("torch.complex", _complex)
add("torch.polar", lambda g: (lambda x: None if x is None else call(
    "{out} = torch.polar({0}.abs(), {1})", x, g.partner(x, is_float) or x))(
    g.pick(lambda t: str(t.dtype) in ("torch.float32", "torch.float64"))))


def _range(name: str) -> Any:
    def build(g: Gen) -> Call | None:
        dt = ", dtype=" + g.choice(["torch.float64", "torch.int64", "torch.float16",
                                     "torch.int32"]) if g.coin(0.3) else ""
        integral = "int" in dt
        if name == "arange":
            args = g.choice(["5", "10, 0, -3", "5, 5", "0, 10, 3"] + (
                [] if integral else ["0, 1, 0.1", "-2.5, 2.5"]))
        elif name == "range":
            # torch 2.13 traps (SIGFPE) on a fractional step cast to an integral zero
            args = g.choice(["0, 4", "5, 1, -2"] + ([] if integral else ["0, 1, 0.25"]))
        elif name == "linspace":
            args = g.choice(["0, 1, 5", "0, 1, 0", "0, 1, 1", "-10, 10, 7", "-1, 1, 7"])
        else:
            args = g.choice(["0, 2, 3", "0, 2, 3, base=2", "0.5, 3.5, 7", "0, 1, 0"])
        return call(f"{{out}} = torch.{name}({args}{dt})")

    return build


for _name in ("arange", "range", "linspace", "logspace"):
    add(f"torch.{_name}", _range(_name))

# ----------------------------------------------------------------------------- random ops


def _random(template: str, pred: Any = None) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(pred)
        if x is None:
            return None
        return call(template, x, meta_only=True)

    return build


for _name, _tmpl, _pred in (
        ("Tensor.uniform_", "{out} = {0}.clone().uniform_(-2, 2)", is_float),
        ("Tensor.normal_", "{out} = {0}.clone().normal_(1.0, 3.0)", is_float),
        ("Tensor.bernoulli_", "{out} = {0}.clone().bernoulli_(0.5)", None),
        ("Tensor.random_", "{out} = {0}.clone().random_(0, 5)", is_real),
        ("Tensor.exponential_", "{out} = {0}.clone().exponential_(2.0)", is_float),
        ("Tensor.geometric_", "{out} = {0}.clone().geometric_(0.3)", is_float),
        ("Tensor.cauchy_", "{out} = {0}.clone().cauchy_()", is_float),
        ("Tensor.log_normal_", "{out} = {0}.clone().log_normal_(0.5, 0.25)", is_float),
        ("torch.bernoulli", "{out} = torch.bernoulli({0}.abs().clamp(0, 1))", is_float),
        ("torch.multinomial", "{out} = torch.multinomial({0}.abs() + 0.1, 2, True)",
         lambda t: is_float(t) and 1 <= t.dim() <= 2 and t.shape[-1] > 0),
        ("torch.poisson", "{out} = torch.poisson({0}.abs())", is_float),
        ("torch.normal", "{out} = torch.normal({0}, 1.0)", is_float)):
    add(_name, _random(_tmpl, _pred))
for _name, _tmpl in (("torch.rand", "{out} = torch.rand(2, 3)"),
                     ("torch.randn", "{out} = torch.randn(3)"),
                     ("torch.randint", "{out} = torch.randint(0, 10, (3, 2))"),
                     ("torch.randperm", "{out} = torch.randperm(4)")):
    add(_name, lambda g, t=_tmpl: call(t, meta_only=True))
