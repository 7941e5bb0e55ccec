"""Dispatch-table samples of the elementwise primitives (binary.py, unary.py) and their
in-place variants: broadcasting, 0-d, empty and transposed operands, Python numbers."""

from __future__ import annotations

from typing import Any

from dispatch_oracle import make

from ember.core.dispatch import REGISTRY, Op

# a dtype each op computes in (torch refuses some kinds), and the ops whose integer
# operands must not be zero (integer division) or negative (shifts)
_INTEGER_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                 "bitwise_right_shift", "bitwise_not"}
_BOOLEAN = {"logical_and", "logical_or", "logical_xor", "logical_not"}
_NO_NUMBER = {"maximum", "minimum", "fmax", "fmin", "atan2", "hypot", "logaddexp", "logaddexp2",
              "logical_and", "logical_or", "logical_xor"}
# public spelling of primitives whose name is not torch's
_PUBLIC = {"div_trunc": ("div", {"rounding_mode": "trunc"}),
           "div_floor": ("div", {"rounding_mode": "floor"})}


def _dtype(name: str) -> str:
    if name in _INTEGER_ONLY:
        return "int64"
    if name in _BOOLEAN:
        return "bool"
    return "float32"


def _call(m: Any, name: str, *args: Any) -> Any:
    public, kw = _PUBLIC.get(name, (name, {}))
    return getattr(m, public)(*args, **kw)


def _binary(name: str) -> list[Any]:
    dt = _dtype(name)
    low = 1 if name in _INTEGER_ONLY else -3

    def operands(m: Any, d: str, a: tuple[int, ...], b: tuple[int, ...], **kw: Any) -> Any:
        return (make(m, d, a, dt, low=low, **kw), make(m, d, b, dt, seed=1, low=low, **kw))

    samples = [
        lambda m, d: _call(m, name, *operands(m, d, (3, 4), (4,))),
        lambda m, d: _call(m, name, *operands(m, d, (), (2, 3))),
        lambda m, d: _call(m, name, *operands(m, d, (0, 3), (1, 3))),
        lambda m, d: _call(m, name, *operands(m, d, (3, 4), (3, 4), transposed=True)),
        lambda m, d: _call(m, name, make(m, d, (3, 4), dt, transposed=True, low=low),
                           make(m, d, (4,), dt, low=low)),
    ]
    if name not in _NO_NUMBER:
        number = True if dt == "bool" else 2
        samples.append(lambda m, d: _call(m, name, make(m, d, (2, 3), dt, low=low), number))
    return samples


def _binary_inplace(name: str) -> list[Any]:
    dt = _dtype(name[:-1])
    low = 1 if name[:-1] in _INTEGER_ONLY else -3
    method = {"div_trunc_": None, "div_floor_": None}.get(name, name)

    def call(m: Any, x: Any, y: Any) -> Any:
        if method is None:
            return x.div_(y, rounding_mode="trunc" if name == "div_trunc_" else "floor")
        return getattr(x, method)(y)

    return [
        lambda m, d: call(m, make(m, d, (3, 4), dt, low=low), make(m, d, (4,), dt, low=low)),
        lambda m, d: call(m, make(m, d, (3, 4), dt, transposed=True, low=low),
                          make(m, d, (3, 4), dt, seed=2, low=low)),
    ]


def _unary(name: str) -> list[Any]:
    dt = _dtype(name)
    low, high = (0.1, 0.9) if name in ("acos", "asin", "atanh", "erfinv", "logit") else \
        (1.1, 3.0) if name == "acosh" else (-3.0, 3.0)
    if name == "logit":
        return [lambda m, d: m.logit(make(m, d, (3, 4), low=low, high=high), 1e-3),
                lambda m, d: m.logit(make(m, d, (3, 4), low=low, high=high, transposed=True))]
    if name == "round":
        return [lambda m, d: m.round(make(m, d, (3, 4))),
                lambda m, d: m.round(make(m, d, (3, 4), transposed=True), decimals=2)]
    return [
        lambda m, d: getattr(m, name)(make(m, d, (3, 4), dt, low=low, high=high)),
        lambda m, d: getattr(m, name)(make(m, d, (), dt, low=low, high=high)),
        lambda m, d: getattr(m, name)(make(m, d, (0, 2), dt, low=low, high=high)),
        lambda m, d: getattr(m, name)(make(m, d, (3, 4), dt, low=low, high=high,
                                           transposed=True)),
    ]


def _unary_inplace(name: str) -> list[Any]:
    base = name[:-1]
    dt = _dtype(base)
    low, high = (0.1, 0.9) if base in ("acos", "asin", "atanh", "erfinv") else \
        (1.1, 3.0) if base == "acosh" else (-3.0, 3.0)
    return [lambda m, d: getattr(make(m, d, (3, 4), dt, low=low, high=high), name)(),
            lambda m, d: getattr(make(m, d, (3, 4), dt, low=low, high=high, transposed=True),
                                 name)()]


def _collect() -> dict[str, list[Any]]:
    from ember.core.ops import binary, copying, unary

    imported = {v for v in vars(copying).values() if isinstance(v, Op)}
    samples: dict[str, list[Any]] = {}
    for mod, single, inplace in ((binary, _binary, _binary_inplace),
                                 (unary, _unary, _unary_inplace)):
        ops = {v for v in vars(mod).values() if isinstance(v, Op) and v not in imported}
        for name, op in REGISTRY.items():
            if op in ops:
                samples[name] = single(name)
            elif op.mutates and op.functional in ops:
                samples[name] = inplace(name)
    return samples


SAMPLES = _collect()
