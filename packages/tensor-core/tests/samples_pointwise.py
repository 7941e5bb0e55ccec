"""Dispatch-table samples of the pointwise primitives with several operands (pointwise.py,
fused_updates.py) and of isclose (closeness.py): broadcasting, 0-d, empty and transposed
operands, Python numbers among them, and the dtypes that make the wrappers promote."""

from __future__ import annotations

from typing import Any

from dispatch_oracle import make


def _three(m: Any, d: str, shapes: tuple[tuple[int, ...], ...], dtype: str = "float32",
           transposed: bool = False, **kw: Any) -> list[Any]:
    return [make(m, d, s, dtype, seed=i, transposed=transposed and len(s) > 1, **kw)
            for i, s in enumerate(shapes)]


_BROADCAST = ((3, 4), (4,), (3, 1))
_ZERO_D = ((), (2, 3), ())
_EMPTY = ((0, 3), (1, 3), (3,))
_SQUARE = ((3, 4), (3, 4), (3, 4))


def _ternary(call: Any, dtype: str = "float32", **kw: Any) -> list[Any]:
    """``call(m, a, b, c)`` on three tensors: broadcasting, 0-d, empty, transposed (all,
    and one of them only)."""
    return [
        lambda m, d: call(m, *_three(m, d, _BROADCAST, dtype, **kw)),
        lambda m, d: call(m, *_three(m, d, _ZERO_D, dtype, **kw)),
        lambda m, d: call(m, *_three(m, d, _EMPTY, dtype, **kw)),
        lambda m, d: call(m, *_three(m, d, _SQUARE, dtype, transposed=True, **kw)),
        lambda m, d: call(m, make(m, d, (3, 4), dtype, transposed=True, **kw),
                          *_three(m, d, ((4,), (3, 4)), dtype, **kw)),
    ]


def _unary(call: Any, dtype: str = "float32", **kw: Any) -> list[Any]:
    """``call(m, x)``: 2-d, 0-d, empty and transposed."""
    return [lambda m, d, s=s, t=t: call(m, make(m, d, s, dtype, transposed=t, **kw))
            for s, t in (((3, 4), False), ((), False), ((0, 2), False), ((3, 4), True))]


def _binary(call: Any, dtype: str = "float32", **kw: Any) -> list[Any]:
    """``call(m, x, y)``: broadcasting, 0-d, empty, transposed."""
    return [lambda m, d, a=a, b=b, t=t: call(m, make(m, d, a, dtype, transposed=t, **kw),
                                             make(m, d, b, dtype, seed=1, **kw))
            for a, b, t in (((3, 4), (4,), False), ((), (2, 3), False), ((0, 3), (1, 3), False),
                            ((3, 4), (3, 4), True), ((2, 3), (), True))]


CLAMP = [
    *_ternary(lambda m, x, lo, hi: m.clamp(x, lo, hi)),
    *_unary(lambda m, x: m.clamp(x, -1.0, 1.5)),
    lambda m, d: m.clamp(make(m, d, (3, 4), transposed=True), min=0.5),
    lambda m, d: m.clamp_max(make(m, d, (3, 4)), make(m, d, (4,), seed=1)),
    lambda m, d: m.clamp_min(make(m, d, (2, 3), "int64"), 0.5),  # promotes to float
    lambda m, d: make(m, d, (3, 4), transposed=True).clamp_(-1, 1),
    lambda m, d: m.clamp(make(m, d, (3, 4), "bool"), min=make(m, d, (4,), "bool", seed=1)),
]

WHERE = [
    *_ternary(lambda m, c, x, y: m.where(c > 0, x, y)),
    lambda m, d: m.where(make(m, d, (3, 4), "bool", transposed=True), 1.0, 0.0),
    lambda m, d: m.where(make(m, d, (2, 3), "bool"), 1, 0),
    lambda m, d: m.where(make(m, d, (3, 4), "bool"), make(m, d, (4,)), 2.5),
    lambda m, d: m.where(make(m, d, (3, 1), "bool"), -1, make(m, d, (3, 4), "int32")),
    lambda m, d: m.where(make(m, d, (), "bool"), make(m, d, (2, 3), "float64"),
                         make(m, d, (2, 3), transposed=True)),
    lambda m, d: make(m, d, (3, 4), transposed=True).where(make(m, d, (4,), "bool"), 0.0),
]

LERP = [
    *_ternary(lambda m, x, e, w: m.lerp(x, e, w)),
    *_binary(lambda m, x, e: m.lerp(x, e, 0.25)),
    lambda m, d: m.lerp(make(m, d, (3, 4)), make(m, d, (4,), seed=1), 0.75),
    lambda m, d: m.lerp(make(m, d, (3, 4), "float16"), make(m, d, (3, 4), "float16", seed=1),
                        make(m, d, (), "float64", seed=2)),
]

LERP_ = [
    lambda m, d: make(m, d, (3, 4)).lerp_(make(m, d, (4,), seed=1), 0.25),
    lambda m, d: make(m, d, (3, 4), transposed=True).lerp_(make(m, d, (3, 4), seed=1), 0.75),
    lambda m, d: make(m, d, (3, 4)).lerp_(*_three(m, d, ((3, 4), (3, 1)))),
    lambda m, d: make(m, d, (3, 4), "bfloat16").lerp_(make(m, d, (4,), "bfloat16", seed=1), 0.5),
]


def _addc(name: str) -> list[Any]:
    def call(m: Any, x: Any, a: Any, b: Any, **kw: Any) -> Any:
        return getattr(m, name)(x, a, b, **kw)

    return [
        *_ternary(lambda m, x, a, b: call(m, x, a, b, value=0.5), low=0.5),
        lambda m, d: call(m, *_three(m, d, _SQUARE, low=0.5)),
        lambda m, d: call(m, make(m, d, (3, 4), "float16"),
                          *_three(m, d, ((4,), (3, 4)), "float16", low=0.5), value=-2),
        lambda m, d: call(m, make(m, d, (2, 3), "int64"),
                          *_three(m, d, ((3,), (2, 3)), low=0.5), value=3),  # promotes
    ]


def _addc_(name: str) -> list[Any]:
    def call(x: Any, a: Any, b: Any, **kw: Any) -> Any:
        return getattr(x, name)(a, b, **kw)

    return [
        lambda m, d: call(make(m, d, (3, 4)), *_three(m, d, ((4,), (3, 1)), low=0.5),
                          value=0.5),
        lambda m, d: call(make(m, d, (3, 4), transposed=True),
                          *_three(m, d, ((3, 4), (3, 4)), low=0.5, transposed=True)),
        lambda m, d: call(make(m, d, (3, 4), "float16"),
                          *_three(m, d, ((4,), (3, 4)), "float16", low=0.5), value=-2),
    ]


def _specials(m: Any, x: Any) -> Any:
    """``x`` with NaN (log of negatives) and infinities (division by zero) among its values."""
    return m.log(x) / m.round(x)


NAN_TO_NUM = [
    *_unary(lambda m, x: m.nan_to_num(_specials(m, x))),
    lambda m, d: m.nan_to_num(_specials(m, make(m, d, (3, 4), "float16")), 1.0, 2.0, -3.0),
    lambda m, d: m.nan_to_num(make(m, d, (3, 4), "int32", transposed=True)),
    lambda m, d: m.nan_to_num(make(m, d, (2, 3), "complex64")),
]

FLOAT_POWER = [
    *_binary(lambda m, x, y: m.float_power(x, y), low=0.5),
    lambda m, d: m.float_power(make(m, d, (3, 4), transposed=True), 2),
    lambda m, d: m.float_power(2, make(m, d, (2, 3), "int64")),
    lambda m, d: m.float_power(make(m, d, (2, 3), low=0.5), 1j),
    lambda m, d: m.float_power(make(m, d, (2, 3), "float64"), make(m, d, (3,), "int32")),
]

HEAVISIDE = _binary(lambda m, x, v: m.heaviside(m.round(x), v))

ISCLOSE = [
    *_binary(lambda m, x, y: m.isclose(x, y, rtol=0.5, atol=0.5)),
    lambda m, d: m.isclose(make(m, d, (3, 4), "int64", transposed=True),
                           make(m, d, (4,), "int64", seed=1), atol=1.0),
    lambda m, d: m.isclose(make(m, d, (3, 4)), make(m, d, (3, 4), seed=1), 0.0, 0.0,
                           equal_nan=True),
]

SAMPLES = {
    "clamp": CLAMP, "where": WHERE, "lerp": LERP, "lerp_": LERP_,
    "addcmul": _addc("addcmul"), "addcdiv": _addc("addcdiv"),
    "addcmul_": _addc_("addcmul_"), "addcdiv_": _addc_("addcdiv_"),
    "nan_to_num": NAN_TO_NUM, "float_power": FLOAT_POWER, "heaviside": HEAVISIDE,
    "isclose": ISCLOSE,
}
