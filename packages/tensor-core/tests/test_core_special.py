"""erf, erfc, erfinv, lgamma, digamma and xlogy against torch over wide ranges.

float64 is held to near machine precision. float32 is compared with torch's float64 result
rounded to float32 (the correctly rounded value): torch's own float32 erfc, for one,
flushes to zero long before float32 underflows. float16/bfloat16 match torch directly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch_oracle import check

import ember.core as ember
from ember.core.ops import special_functions as special

NAN, INF = math.nan, math.inf
EDGES = [0.0, -0.0, NAN, INF, -INF, 5e-324, -5e-324, 1e-300, 1e300, -1e300]


def _spread(low: float, high: float, n: int = 400, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, n)


def _log_spread(lo_exp: float, hi_exp: float, n: int = 400, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 10.0 ** rng.uniform(lo_exp, hi_exp, n) * rng.choice([-1.0, 1.0], n)


INPUTS = {
    "erf": np.concatenate([_spread(-7, 7), _log_spread(-300, 1.5), [0.46875, 4.0, 26.6], EDGES]),
    "erfc": np.concatenate([_spread(-7, 28), _log_spread(-300, 1.5), [0.46875, 4.0, 26.5, 27.3],
                            EDGES]),
    "erfinv": np.concatenate([_spread(-1, 1), 1 - 10.0 ** -_spread(0.3, 16),
                              -(1 - 10.0 ** -_spread(0.3, 16)), _log_spread(-300, -0.5),
                              [1.0, -1.0, 1.5, -2.0, 0.5, -0.5, 0.7, np.nextafter(1, 0)], EDGES]),
    "lgamma": np.concatenate([_spread(-30, 30), _spread(0, 3), _log_spread(-300, 300),
                              [1.0, 2.0, -1.0, -2.0, 0.5, 0.6796875, 1.5, 4.0, 12.0, 1e306],
                              EDGES]),
    "digamma": np.concatenate([_spread(-30, 30), _spread(0, 3), _log_spread(-300, 300),
                               [1.0, 2.0, 10.0, -1.0, -2.0, 1.4616321449683622], EDGES]),
}
# (rtol, atol) for float64. lgamma's reflection below 0 is accurate to an absolute 1e-15
# next to its zeros near -2.46, -2.75, ...
TOL64 = {"erf": (1e-15, 0.0), "erfc": (4e-15, 0.0), "erfinv": (1e-15, 0.0),
         "lgamma": (1e-14, 1e-15), "digamma": (1e-14, 1e-15)}


def _float32_reference(name: str, x: np.ndarray) -> torch.Tensor:
    return getattr(torch, name)(torch.from_numpy(x).double()).float()


@pytest.mark.parametrize("name", list(INPUTS))
def test_float64_to_machine_precision(name: str) -> None:
    x = INPUTS[name]
    rtol, atol = TOL64[name]
    check(getattr(ember, name)(ember.from_numpy(x.copy())),
          getattr(torch, name)(torch.from_numpy(x.copy())), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", list(INPUTS))
def test_float32_correctly_rounded_within_ulps(name: str) -> None:
    with np.errstate(over="ignore"):  # +-1e300 become +-inf on purpose
        x = INPUTS[name].astype(np.float32)
    # a few float32 ulps; the absolute part covers results in the subnormal range, where
    # one ulp (1.4e-45) is a large relative error
    check(getattr(ember, name)(ember.from_numpy(x.copy())), _float32_reference(name, x),
          rtol=6e-7, atol=1e-37)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", list(INPUTS))
def test_half_precision_matches_torch(name: str, dtype: str) -> None:
    x = INPUTS[name]
    x = x[np.abs(x) < 6e4]
    t = torch.from_numpy(x).to(getattr(torch, dtype))
    e = ember.from_numpy(x).to(getattr(ember, dtype))
    check(getattr(ember, name)(e), getattr(torch, name)(t))


@pytest.mark.parametrize("name", list(INPUTS))
def test_integer_input_computes_in_default_float(name: str) -> None:
    x = np.arange(-5, 6, dtype=np.int64)
    check(getattr(ember, name)(ember.from_numpy(x.copy())),
          getattr(torch, name)(torch.from_numpy(x.copy())))


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv", "lgamma", "digamma"])
@pytest.mark.parametrize("shape", [(0,), (1,), (3, 4), (2, 0, 5)])
def test_shapes_and_dtypes_preserved(name: str, shape: tuple[int, ...]) -> None:
    x = np.random.default_rng(2).uniform(-0.9, 0.9, shape)
    for dt in (np.float64, np.float32, np.float16):
        r = getattr(special, name)(x.astype(dt))
        assert r.shape == shape and r.dtype == dt
    assert getattr(special, name)(np.array(0.25)).shape == ()


def test_poles_and_special_values() -> None:
    x = np.array([0.0, -0.0, -1.0, -2.0, INF, -INF, NAN])
    for name in ("lgamma", "digamma"):
        check(getattr(ember, name)(ember.from_numpy(x.copy())),
              getattr(torch, name)(torch.from_numpy(x.copy())))
    y = np.array([1.0, -1.0, 1.0 + 2e-16, -3.0, 0.0, NAN])
    check(ember.erfinv(ember.from_numpy(y.copy())), torch.erfinv(torch.from_numpy(y.copy())))


XLOGY_VALUES = [0.0, -0.0, 1.0, 2.5, -1.5, NAN, INF, -INF, 1e-300, 3.0]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_xlogy(dtype: str) -> None:
    v = np.array(XLOGY_VALUES)
    x, y = np.meshgrid(v, v)
    tx = torch.from_numpy(x.copy()).to(getattr(torch, dtype))
    ty = torch.from_numpy(y.copy()).to(getattr(torch, dtype))
    ex = ember.from_numpy(x.copy()).to(getattr(ember, dtype))
    ey = ember.from_numpy(y.copy()).to(getattr(ember, dtype))
    check(ember.xlogy(ex, ey), torch.xlogy(tx, ty))
    check(ember.xlogy(ex, 2.5), torch.xlogy(tx, 2.5))
    check(ember.xlogy(0.0, ey), torch.xlogy(0.0, ty))
    check(ember.xlogy(3, ey), torch.xlogy(3, ty))


def test_xlogy_promotes_integers() -> None:
    a = np.array([0, 1, 2, 3])
    b = np.array([0, 2, 0, 5])
    check(ember.xlogy(ember.from_numpy(a.copy()), ember.from_numpy(b.copy())),
          torch.xlogy(torch.from_numpy(a.copy()), torch.from_numpy(b.copy())))
    check(ember.xlogy(ember.from_numpy(a.copy()), 2.0), torch.xlogy(torch.from_numpy(a.copy()), 2.0))


@pytest.mark.parametrize("name", list(INPUTS))
def test_noncontiguous_input(name: str) -> None:
    base = np.random.default_rng(3).uniform(-1, 1, (6, 4))
    view = base.T[::2]
    check(getattr(ember, name)(ember.from_numpy(view)), getattr(torch, name)(torch.from_numpy(view.copy())))
