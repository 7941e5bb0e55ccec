"""The ``_foreach_*`` ops' values against the per-tensor ops (bit for bit) and torch's foreach
ops (bit for bit where the per-tensor ops are; see ``foreach_oracle``): every op and
overload, out of place and in place, on lists of 2-d, 1-d, 0-d, empty and odd-length
tensors of each floating dtype, and of int64 where torch computes the op for integers (the
per-tensor ops then run, as torch's slow path runs them)."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
from foreach_oracle import FLOATS, compared, lists

import ember.core as ember

SCALARS = {"float": [0.5, -1.25, 2, 3.0, 0.25], "int": [1, -2, 3, 0, 2]}
NUMBER = {"float": 0.75, "int": 3}
_INT = "int64"


def _values(dtype: str) -> str:
    return "int" if dtype.startswith("int") else "float"


def _second(m: Any, kind: str, made: list[Any], dtype: str, number: Any = None) -> Any:
    """The second operand of a binary foreach op of ``kind``: the second list, a number, a
    list of numbers or a 0-d tensor of the lists' dtype."""
    values = _values(dtype)
    n = NUMBER[values] if number is None else number
    if kind == "list":
        return made[1]
    if kind == "scalar":
        return n
    if kind == "scalars":
        return SCALARS[values][:len(made[0])] if number is None else [number] * len(made[0])
    return m.tensor(n).to(made[0][0].dtype)


def _at(kind: str, second: Any, i: int) -> Any:
    return second[i] if kind in ("list", "scalars") else second


# ----------------------------------------------------------------------------- binary

# (op, its overloads, alpha values to try with tensors, bounds of self and the second list)
BINARY = [("add", ("list", "tensor", "scalar", "scalars"), (1, 0.5), (-2.0, 2.0, -2.0, 2.0)),
          ("sub", ("list", "scalar", "scalars"), (1, -3), (-2.0, 2.0, -2.0, 2.0)),
          ("mul", ("list", "tensor", "scalar", "scalars"), (1,), (-2.0, 2.0, -2.0, 2.0)),
          ("div", ("list", "tensor", "scalar", "scalars"), (1,), (-2.0, 2.0, 0.5, 2.0)),
          ("maximum", ("list", "scalar", "scalars"), (1,), (-2.0, 2.0, -2.0, 2.0)),
          ("minimum", ("list", "scalar", "scalars"), (1,), (-2.0, 2.0, -2.0, 2.0)),
          ("clamp_min", ("list", "scalar", "scalars"), (1,), (-2.0, 2.0, -2.0, 2.0)),
          ("clamp_max", ("list", "scalar", "scalars"), (1,), (-2.0, 2.0, -2.0, 2.0)),
          ("pow", ("list", "scalar", "scalars"), (1,), (0.5, 2.0, 0.0, 3.0))]
# torch computes maximum and minimum with a number as clamp_min and clamp_max; it has no
# in-place maximum or minimum of tensors: their per-tensor reference copies theirs back
_WITH_NUMBERS = {"maximum": "clamp_min", "minimum": "clamp_max"}
# numbers whose powers torch computes by special kernels, and others
POWERS = (2, 3, 0.5, -0.5, -1, -2, 2.5)


def _binary_per_tensor(name: str, kind: str, alpha: Any) -> Any:
    numbers = kind in ("scalar", "scalars")
    fn = _WITH_NUMBERS.get(name, name) if numbers else name
    extra = {"alpha": alpha} if alpha != 1 else {}

    def per_tensor(m: Any, form: str, made: list[Any], i: int) -> Any:
        t, o = made[0][i], _at(kind, made[1], i)
        if form == "":
            return getattr(m, fn)(t, o, **extra)
        if name in ("maximum", "minimum") and not numbers:
            return t.copy_(getattr(m, name)(t, o))
        return getattr(t, fn + "_")(o, **extra)

    return per_tensor


def _binary_cases() -> list[Any]:
    cases = []
    for name, kinds, alphas, bounds in BINARY:
        for kind in kinds:
            for alpha in alphas if kind in ("list", "tensor") else (1,):
                for dtype in [*FLOATS, _INT]:
                    for form in ("", "_"):
                        if name == "div" and dtype == _INT and form == "_" or (
                                dtype == _INT and alpha.__class__ is float):
                            continue  # (errors: test_core_foreach_checks)
                        cases.append(pytest.param(name, kind, alpha, bounds, dtype, form,
                                                  id=f"{name}{form}-{kind}-{alpha}-{dtype}"))
    return cases


def _binary(name: str, kind: str, alpha: Any, bounds: Any, dtype: str, form: str,
            number: Any = None) -> None:
    def make() -> Any:
        ours, theirs = lists(dtype, 2, seed=3, low=bounds[0::2], high=bounds[1::2])
        return ([ours[0], _second(ember, kind, ours, dtype, number)],
                [theirs[0], _second(torch, kind, theirs, dtype, number)])

    extra = {"alpha": alpha} if alpha != 1 else {}

    def foreach(m: Any, f: str, made: list[Any]) -> Any:
        return getattr(m, f"_foreach_{name}{f}")(made[0], made[1], **extra)

    compared(foreach, _binary_per_tensor(name, kind, alpha), form, make,
             f"_foreach_{name}{form}({kind}, alpha={alpha}, {dtype}, {number})")


@pytest.mark.parametrize(("name", "kind", "alpha", "bounds", "dtype", "form"), _binary_cases())
def test_binary(name, kind, alpha, bounds, dtype, form):
    # no negative integer powers of integers (refused: test_core_foreach_checks)
    number = 2 if name == "pow" and dtype == _INT and kind == "scalars" else None
    _binary(name, kind, alpha, bounds, dtype, form, number)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("form", ["", "_"])
def test_pow_of_special_exponents(dtype, form):
    for exponent in POWERS:
        _binary("pow", "scalar", 1, (0.5, 2.0, 0.0, 1.0), dtype, form, exponent)


@pytest.mark.parametrize("dtype", [*FLOATS, _INT])
def test_pow_of_a_number_base(dtype):
    base = 2 if dtype == _INT else 0.9

    def make() -> Any:
        ours, theirs = lists(dtype, seed=5, low=0.0, high=3.0)
        return ours, theirs

    compared(lambda m, f, made: m._foreach_pow(base, made[0]),
             lambda m, f, made, i: m.pow(base, made[0][i]), "", make,
             f"_foreach_pow({base}, {dtype})")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("form", ["", "_"])
def test_bounds_of_special_values(dtype, form):
    """NaN and zeros of both signs against numbers and tensors of them, on both sides."""
    special = [math.nan, 0.0, -0.0, 1.0, -1.0]

    def make() -> Any:
        sides = []
        for m in (ember, torch):
            dt = getattr(m, dtype)
            sides.append([[m.tensor([a for a in special for _ in special], dtype=dt)],
                          [m.tensor([b for _ in special for b in special], dtype=dt)]])
        return tuple(sides)

    for name in ("maximum", "minimum", "clamp_min", "clamp_max"):
        for kind in ("list", "scalar"):
            values = [0.0, -0.0, math.nan] if kind == "scalar" else [None]
            for value in values:
                def made_with(value: Any = value, kind: str = kind) -> Any:
                    ours, theirs = make()
                    if kind == "scalar":
                        ours[1], theirs[1] = value, value
                    return ours, theirs

                compared(lambda m, f, made, name=name: getattr(m, f"_foreach_{name}{f}")(
                    made[0], made[1]), _binary_per_tensor(name, kind, 1), form, made_with,
                    f"_foreach_{name}{form}({kind}, {value}, {dtype})")


# ----------------------------------------------------------------------------- ternary

# addcmul's and addcdiv's fourth argument, lerp's third
ADDC_VALUES = {"default": None, "scalar": 0.5, "scalars": [0.5, -1.0, 2, 0.25, 3.0],
               "tensor": [0.5, -1.0, 2, 0.25, 3.0]}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("form", ["", "_"])
@pytest.mark.parametrize("kind", list(ADDC_VALUES))
@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addcmul_and_addcdiv(name, kind, form, dtype):
    given = ADDC_VALUES[kind]

    def make() -> Any:
        ours, theirs = lists(dtype, 3, seed=7, low=(-2.0, -2.0, 0.5), high=(2.0, 2.0, 2.0))
        return ours, theirs

    def foreach(m: Any, f: str, made: list[Any]) -> Any:
        fn = getattr(m, f"_foreach_{name}{f}")
        if given is None:
            return fn(*made)
        return fn(*made, m.tensor(given) if kind == "tensor" else given)

    def per_tensor(m: Any, f: str, made: list[Any], i: int) -> Any:
        value = 1 if given is None else given if kind == "scalar" else given[i]
        t, a, b = (ts[i] for ts in made)
        if f == "":
            return getattr(m, name)(t, a, b, value=value)
        return getattr(t, name + "_")(a, b, value=value)

    compared(foreach, per_tensor, form, make, f"_foreach_{name}{form}({kind}, {dtype})")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("form", ["", "_"])
@pytest.mark.parametrize("kind", ["scalar", "scalars", "list", "tensor"])
def test_lerp(kind, form, dtype):
    weights = {"scalar": 0.3, "scalars": [0.1, 0.9, 0.5, 0.0, 1.0], "tensor": 0.75}

    def make() -> Any:
        ours, theirs = lists(dtype, 3, seed=9, low=(-2.0, -2.0, 0.0), high=(2.0, 2.0, 1.0))
        sides = []
        for m, made in ((ember, ours), (torch, theirs)):
            if kind == "list":
                sides.append(made)
            elif kind == "tensor":  # a 0-d tensor is taken as the number it holds
                sides.append([made[0], made[1], m.tensor(weights["tensor"])])
            else:
                sides.append([made[0], made[1], weights[kind]])
        return tuple(sides)

    def per_tensor(m: Any, f: str, made: list[Any], i: int) -> Any:
        w = made[2][i] if kind in ("list", "scalars") else weights.get(kind)
        if f == "":
            return m.lerp(made[0][i], made[1][i], w)
        return made[0][i].lerp_(made[1][i], w)

    compared(lambda m, f, made: getattr(m, f"_foreach_lerp{f}")(*made), per_tensor, form,
             make, f"_foreach_lerp{form}({kind}, {dtype})")


# ----------------------------------------------------------------------------- unary

UNARY = ["abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
         "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
         "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"]
# each op's inputs: inside its domain (no NaN, whose payloads need not agree)
_DOMAINS = {"acos": (-0.9, 0.9), "asin": (-0.9, 0.9), "log": (0.1, 3.0), "log10": (0.1, 3.0),
            "log2": (0.1, 3.0), "log1p": (-0.5, 3.0), "rsqrt": (0.1, 3.0), "sqrt": (0.0, 3.0),
            "lgamma": (0.1, 3.0), "reciprocal": (0.1, 3.0)}
# torch computes these for integer tensors too (the float ones give float results)
_INTEGER_UNARY = ["abs", "neg", "sign", "ceil", "floor", "round", "trunc", "sqrt", "exp",
                  "sigmoid"]


def _unary(name: str, dtype: str, form: str) -> None:
    low, high = _DOMAINS.get(name, (-2.5, 2.5))

    def make() -> Any:
        return lists(dtype, seed=11, low=low, high=high)

    def per_tensor(m: Any, f: str, made: list[Any], i: int) -> Any:
        t = made[0][i]
        return getattr(m, name)(t) if f == "" else getattr(t, name + "_")()

    compared(lambda m, f, made: getattr(m, f"_foreach_{name}{f}")(made[0]), per_tensor, form,
             make, f"_foreach_{name}{form}({dtype})")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("form", ["", "_"])
@pytest.mark.parametrize("name", UNARY)
def test_unary(name, form, dtype):
    _unary(name, dtype, form)


@pytest.mark.parametrize("name", _INTEGER_UNARY)
def test_unary_of_integers(name):
    _unary(name, _INT, "")
    if name in ("abs", "neg", "sign", "ceil", "floor", "round", "trunc"):
        _unary(name, _INT, "_")


# ----------------------------------------------------------------------------- the rest

@pytest.mark.parametrize("dtype", [*FLOATS, _INT, "bool"])
def test_zero_(dtype):
    compared(lambda m, f, made: m._foreach_zero_(made[0]),
             lambda m, f, made, i: made[0][i].zero_(), "_",
             lambda: lists(dtype, seed=13), f"_foreach_zero_({dtype})")


@pytest.mark.parametrize(("dtype", "src"), [(d, d) for d in [*FLOATS, _INT]] + [
    ("float32", "float64"), ("float16", "float32"), ("int64", "float32"), ("float32", "bool")])
def test_copy_(dtype, src):
    def make() -> Any:
        dst, dst_t = lists(dtype, seed=15)
        source, source_t = lists(src, seed=16)
        return [dst[0], source[0]], [dst_t[0], source_t[0]]

    compared(lambda m, f, made: m._foreach_copy_(made[0], made[1]),
             lambda m, f, made, i: made[0][i].copy_(made[1][i]), "_", make,
             f"_foreach_copy_({dtype} <- {src})")


NORM_ORDERS = [2, 1, 3, 0, 0.5, math.inf, -math.inf, -1]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ord", NORM_ORDERS)
def test_norm(ord, dtype):
    shapes = None if ord > 0 and ord != math.inf else [(3, 4), (5,), (), (17,)]  # no identity

    def per_tensor(m: Any, f: str, made: list[Any], i: int) -> Any:
        return m.linalg.vector_norm(made[0][i], ord) if m is torch else \
            m.norm(made[0][i], ord)

    compared(lambda m, f, made: m._foreach_norm(made[0], ord), per_tensor, "",
             lambda: lists(dtype, seed=17, shapes=shapes), f"_foreach_norm({ord}, {dtype})")


@pytest.mark.parametrize(("dtype", "into"), [("float32", "float64"), ("float16", "float32"),
                                             ("bfloat16", "float32"), ("float32", "float32")])
def test_norm_in_a_dtype(dtype, into):
    def per_tensor(m: Any, f: str, made: list[Any], i: int) -> Any:
        dt = getattr(m, into)
        return m.linalg.vector_norm(made[0][i], 2, dtype=dt) if m is torch else \
            m.norm(made[0][i], 2, dtype=dt)

    compared(lambda m, f, made: m._foreach_norm(made[0], 2, dtype=getattr(m, into)), per_tensor,
             "", lambda: lists(dtype, seed=19), f"_foreach_norm({dtype} in {into})")


@pytest.mark.parametrize("dtype", [*FLOATS, _INT, "bool"])
def test_max(dtype):
    compared(lambda m, f, made: m._foreach_max(made[0]), lambda m, f, made, i: m.max(made[0][i]),
             "", lambda: lists(dtype, seed=21, shapes=[(3, 4), (5,), (), (17,)]),
             f"_foreach_max({dtype})")


def test_max_propagates_nan():
    ours = ember._foreach_max([ember.tensor([1.0, math.nan, 3.0]), ember.tensor([2.0])])
    theirs = torch._foreach_max([torch.tensor([1.0, math.nan, 3.0]), torch.tensor([2.0])])
    assert [math.isnan(t.item()) for t in ours] == [math.isnan(t.item()) for t in theirs]
    assert ours[1].item() == theirs[1].item()
