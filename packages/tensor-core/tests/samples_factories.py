"""Dispatch-table samples of the factories (creation.py, ranges.py) and the sampling
primitives (samplers.py): sizes, dtypes, ``device=``, the layouts of ``*_like``
forms over transposed and non-dense inputs, explicit strides, 0-d and empty results, and
for the samplers their public functions and in-place fills (their meta rules are checked
against torch's meta random ops)."""

from __future__ import annotations

from typing import Any

from dispatch_oracle import make


def _probs(m: Any, d: str, shape: tuple[int, ...], dtype: str = "float32", **kw: Any) -> Any:
    """Probabilities (or weights) in (0, 1)."""
    return make(m, d, shape, dtype, low=0.05, high=0.95, **kw)


def _positive(m: Any, d: str, shape: tuple[int, ...], dtype: str = "float32", **kw: Any) -> Any:
    """Standard deviations, Poisson rates."""
    return make(m, d, shape, dtype, low=0.5, high=3.0, **kw)


def _gen(m: Any, d: str) -> Any:
    """A seeded generator for device ``d`` (meta tensors draw from a CPU one)."""
    return m.Generator("cuda" if d == "cuda" else "cpu").manual_seed(7)


def _seeded(samples: list[Any]) -> list[Any]:
    """Samples that seed the default generators first: a CUDA run draws what the CPU run
    drew (each device's default generator is seeded alike)."""
    def seeded(sample: Any) -> Any:
        def run(m: Any, d: str) -> Any:
            m.manual_seed(0)
            return sample(m, d)

        return run

    return [seeded(sample) for sample in samples]


_T = {"transposed": True}

EMPTY = [
    lambda m, d: m.empty(2, 3, device=d),
    lambda m, d: m.empty((0, 4), dtype=m.int64, device=d),
    lambda m, d: m.empty((), dtype=m.bool, device=d),
    lambda m, d: m.empty(2, 3, 4, 5, device=d, memory_format=m.channels_last),
    lambda m, d: m.empty_like(make(m, d, (3, 4), **_T)),
    lambda m, d: m.empty_like(make(m, d, (3, 4))[:, ::2]),
    lambda m, d: m.empty_like(make(m, d, (3, 4), **_T), memory_format=m.contiguous_format),
    lambda m, d: m.empty_like(make(m, d, (2, 3)), dtype=m.float64),
    lambda m, d: m.empty_strided((2, 3), (1, 2), device=d),
    lambda m, d: m.empty_strided((2, 3), (10, 1), dtype=m.float64, device=d),
    lambda m, d: m.empty_strided((2, 3), (0, 1), device=d),
    lambda m, d: m.empty_strided((0, 3), (10, 1), device=d),
    lambda m, d: m.empty_strided((), (), device=d),
    lambda m, d: make(m, d, (2, 3), "int32").new_empty((4, 1)),
]

FULL = [
    lambda m, d: m.zeros(2, 3, device=d),
    lambda m, d: m.zeros((0, 3), dtype=m.int32, device=d),
    lambda m, d: m.ones(3, 1, dtype=m.bool, device=d),
    lambda m, d: m.ones((), dtype=m.complex64, device=d),
    lambda m, d: m.full((2, 3), 1.5, device=d),
    lambda m, d: m.full((2,), 7, device=d),
    lambda m, d: m.full((2,), True, device=d),
    lambda m, d: m.full((2, 2), float("nan"), dtype=m.float64, device=d),
    lambda m, d: m.full((3,), -0.0, device=d),
    lambda m, d: m.full((), 1 + 2j, device=d),
    lambda m, d: m.zeros_like(make(m, d, (3, 4), **_T)),
    lambda m, d: m.ones_like(make(m, d, (3, 4), **_T), dtype=m.int8),
    lambda m, d: m.full_like(make(m, d, (2, 3, 4), **_T), 2.5),
    lambda m, d: m.full_like(make(m, d, (3, 4))[:, ::2], -1),
    lambda m, d: m.zeros_like(make(m, d, (2, 3, 4, 5)), memory_format=m.channels_last),
    lambda m, d: m.zeros_like(make(m, d, ())),
    lambda m, d: make(m, d, (2,), "float64").new_zeros(3, 2),
    lambda m, d: make(m, d, (2,)).new_ones((2,), dtype=m.int64),
    lambda m, d: make(m, d, (2,)).new_full((3,), 4.0),
    lambda m, d: m.scalar_tensor(3, device=d),
    lambda m, d: m.scalar_tensor(True, dtype=m.int64, device=d),
]

EYE = [
    lambda m, d: m.eye(3, device=d),
    lambda m, d: m.eye(2, 4, dtype=m.int64, device=d),
    lambda m, d: m.eye(0, device=d),
    lambda m, d: m.eye(3, 1, dtype=m.bool, device=d),
]

COMPLEX = [
    lambda m, d: m.complex(make(m, d, (3, 1)), make(m, d, (4,), seed=1)),
    lambda m, d: m.complex(make(m, d, (), "float64"), make(m, d, (2, 3), "float64", seed=1)),
    lambda m, d: m.complex(make(m, d, (0, 3)), make(m, d, (1, 3), seed=1)),
    lambda m, d: m.complex(make(m, d, (3, 4), **_T), make(m, d, (3, 4), seed=1)),
    lambda m, d: m.complex(make(m, d, (3, 4), **_T), make(m, d, (4,), seed=1)),
    lambda m, d: m.complex(make(m, d, (3, 4), **_T), make(m, d, (3, 4), seed=1, **_T)),
]

POLAR = [
    lambda m, d: m.polar(make(m, d, (2, 3), low=0.0), make(m, d, (3,), seed=1)),
    lambda m, d: m.polar(make(m, d, (3, 4), "float64", **_T), make(m, d, (3, 4), "float64")),
    lambda m, d: m.polar(make(m, d, (0, 3), low=0.0), make(m, d, (1, 3), seed=1)),
]

ARANGE = [
    lambda m, d: m.arange(5, device=d),
    lambda m, d: m.arange(0, 1, 0.1, device=d),
    lambda m, d: m.arange(10, 0, -3, device=d),
    lambda m, d: m.arange(5, 5, device=d),
    lambda m, d: m.arange(-2.5, 2.5, dtype=m.int32, device=d),
    lambda m, d: m.arange(0, 100, 3, dtype=m.float64, device=d),
    lambda m, d: m.arange(0, 10, 3, dtype=m.float16, device=d),
]

RANGE = [
    lambda m, d: m.range(0, 1, 0.25, device=d),
    lambda m, d: m.range(0, 4, dtype=m.int64, device=d),
    lambda m, d: m.range(5, 1, -2, device=d),
]

LINSPACE = [
    lambda m, d: m.linspace(0, 1, 5, device=d),
    lambda m, d: m.linspace(0, 1, 0, device=d),
    lambda m, d: m.linspace(0, 1, 1, device=d),
    lambda m, d: m.linspace(-10, 10, 7, dtype=m.int64, device=d),
    lambda m, d: m.linspace(0, 1 + 1j, 3, device=d),
    lambda m, d: m.linspace(-1, 1, 7, dtype=m.float16, device=d),
]

LOGSPACE = [
    lambda m, d: m.logspace(0, 2, 3, device=d),
    lambda m, d: m.logspace(0, 2, 3, base=2, dtype=m.float64, device=d),
    lambda m, d: m.logspace(0.5, 3.5, 7, dtype=m.int32, device=d),
    lambda m, d: m.logspace(0, 1, 0, device=d),
    lambda m, d: m.logspace(0, 1, 3, dtype=m.complex64, device=d),
]

UNIFORM = [
    lambda m, d: m.rand(3, 4, device=d),
    lambda m, d: m.rand(0, 2, device=d),
    lambda m, d: m.rand((), dtype=m.float64, device=d),
    lambda m, d: m.rand(4, dtype=m.float16, device=d),
    lambda m, d: m.rand(2, dtype=m.complex64, device=d),
    lambda m, d: m.rand(3, generator=_gen(m, d), device=d),
    lambda m, d: m.rand_like(make(m, d, (3, 4), **_T)),
    lambda m, d: m.rand_like(make(m, d, (3, 4))[:, ::2], dtype=m.float64),
    lambda m, d: make(m, d, (3, 4), **_T).uniform_(-2, 2),
]

NORMAL = [
    lambda m, d: m.randn(2, 3, device=d),
    lambda m, d: m.randn(2, dtype=m.complex64, device=d),
    lambda m, d: m.randn_like(make(m, d, (3, 4), **_T)),
    lambda m, d: m.normal(0.0, 2.0, (2, 3), device=d),
    lambda m, d: m.normal(make(m, d, (3, 1)), _positive(m, d, (4,))),
    lambda m, d: m.normal(make(m, d, (3, 4), **_T), 1.0),
    lambda m, d: m.normal(1.0, _positive(m, d, (3, 4), **_T)),
    lambda m, d: m.normal(make(m, d, (), "float64"), _positive(m, d, (2,), "float64")),
    lambda m, d: m.normal(make(m, d, (0, 2)), 1.0),
    lambda m, d: make(m, d, (2, 3)).normal_(1.0, 3.0),
]

RANDINT = [
    lambda m, d: m.randint(0, 10, (3, 4), device=d),
    lambda m, d: m.randint(5, (2,), dtype=m.int32, device=d),
    lambda m, d: m.randint(-3, 3, (0,), device=d),
    lambda m, d: m.randint(0, 2, (3,), dtype=m.bool, device=d),
    lambda m, d: m.randint_like(make(m, d, (3, 4), **_T), 10),
    lambda m, d: make(m, d, (2, 3)).random_(5),
    lambda m, d: make(m, d, (2, 3), "int64").random_(),
    lambda m, d: make(m, d, (4,), "uint8").random_(3, 9),
]

RANDPERM = [
    lambda m, d: m.randperm(5, device=d),
    lambda m, d: m.randperm(0, device=d),
    lambda m, d: m.randperm(4, dtype=m.float32, device=d),
]

BERNOULLI = [
    lambda m, d: m.bernoulli(_probs(m, d, (3, 4))),
    lambda m, d: m.bernoulli(_probs(m, d, (3, 4), **_T)),
    lambda m, d: m.bernoulli(make(m, d, (2, 3), "int64"), 0.3),
    lambda m, d: m.bernoulli(_probs(m, d, ())),
    lambda m, d: _probs(m, d, (4,), "float64").bernoulli(),
    lambda m, d: make(m, d, (2, 3)).bernoulli_(0.5),
    lambda m, d: make(m, d, (2, 3)).bernoulli_(_probs(m, d, (3,))),
]

MULTINOMIAL = [
    lambda m, d: m.multinomial(_probs(m, d, (5,)), 3),
    lambda m, d: m.multinomial(_probs(m, d, (3, 5)), 4, replacement=True),
    lambda m, d: m.multinomial(_probs(m, d, (5, 3), **_T), 2),
    lambda m, d: m.multinomial(_probs(m, d, (0, 3)), 2),
    lambda m, d: _probs(m, d, (4,), "float64").multinomial(6, True),
]

POISSON = [
    lambda m, d: m.poisson(_positive(m, d, (3, 4))),
    lambda m, d: m.poisson(_positive(m, d, (3, 4), "float64", **_T)),
    lambda m, d: m.poisson(_positive(m, d, ())),
]


def _fills(method: str, *args: Any) -> list[Any]:
    return [
        lambda m, d: getattr(make(m, d, (3, 4)), method)(*args),
        lambda m, d: getattr(make(m, d, (3, 4), "float64", **_T), method)(*args),
        lambda m, d: getattr(make(m, d, (0,)), method)(*args),
    ]


SAMPLES = {
    "empty": EMPTY, "full": FULL, "eye": EYE, "complex": COMPLEX, "polar": POLAR,
    "arange": ARANGE,
    "range": RANGE, "linspace": LINSPACE, "logspace": LOGSPACE,
    **{name: _seeded(samples) for name, samples in {
        "uniform": UNIFORM, "normal": NORMAL, "randint": RANDINT, "randperm": RANDPERM,
        "bernoulli": BERNOULLI, "multinomial": MULTINOMIAL, "poisson": POISSON,
        "exponential": _fills("exponential_", 2.0), "geometric": _fills("geometric_", 0.3),
        "cauchy": _fills("cauchy_"), "log_normal": _fills("log_normal_", 0.5, 0.25),
    }.items()},
}
