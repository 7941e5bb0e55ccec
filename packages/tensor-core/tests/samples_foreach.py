"""Dispatch-table samples of the ``_foreach_*`` primitives: each op over a list of float32
tensors of three shapes (one of an odd length), out of place and in place, with a second
list, a number or a list of numbers as torch's overloads take them (the in-place samples'
results are the lists they write). test_core_foreach compares the values with torch's for
every dtype and overload."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatch_oracle import make

Sample = Callable[[Any, str], Any]
_SHAPES = ((3,), (2, 2), (17,))
UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
         "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
         "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max", "pow")


def _list(m: Any, d: str, seed: int) -> list[Any]:
    # within (0.1, 0.9): in every unary op's domain, and a safe base and divisor
    return [make(m, d, s, seed=seed + i, low=0.1, high=0.9) for i, s in enumerate(_SHAPES)]


def _sample(name: str, lists: int, *numbers: Any, **kwargs: Any) -> Sample:
    """``m.<name>(*lists, *numbers, **kwargs)`` on ``lists`` fresh lists; the results, or
    in place the first list."""
    def sample(m: Any, d: str) -> Any:
        operands = [_list(m, d, 10 * k) for k in range(lists)]
        out = getattr(m, name)(*operands, *numbers, **kwargs)
        return operands[0] if name.endswith("_") else out

    return sample


SAMPLES: dict[str, list[Sample]] = {
    **{f"_foreach_{op}{form}": [_sample(f"_foreach_{op}{form}", 1)]
       for op in UNARY for form in ("", "_")},
    **{f"_foreach_{op}{form}": [_sample(f"_foreach_{op}{form}", 2),
                                _sample(f"_foreach_{op}{form}", 1, 0.75),
                                _sample(f"_foreach_{op}{form}", 1, [0.5, 2.0, 1.5])]
       for op in BINARY for form in ("", "_")},
    **{f"_foreach_{op}{form}": [_sample(f"_foreach_{op}{form}", 3, value=0.5)]
       for op in ("addcmul", "addcdiv") for form in ("", "_")},
    **{f"_foreach_lerp{form}": [_sample(f"_foreach_lerp{form}", 3),
                                _sample(f"_foreach_lerp{form}", 2, 0.25)]
       for form in ("", "_")},
    "_foreach_norm": [_sample("_foreach_norm", 1), _sample("_foreach_norm", 1, ord=1)],
    "_foreach_max": [_sample("_foreach_max", 1)],
    "_foreach_copy_": [_sample("_foreach_copy_", 2)],
    "_foreach_zero_": [_sample("_foreach_zero_", 1)],
}
