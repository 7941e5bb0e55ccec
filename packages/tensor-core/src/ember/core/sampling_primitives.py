"""The sampling primitives: each sampler is one registered primitive (not differentiable)
whose forward takes a generator's numpy ``Generator`` first and returns a host array of the
result dtype, with a shape rule that needs no data."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import dtypes as _dt
from . import meta
from .dispatch import register

# Bits of a uniform draw per float dtype: every value of k * 2**-bits is representable.
_UNIFORM_BITS = {"float16": 11, "bfloat16": 8}


def _sized(*operands: Any, size: tuple[int, ...], dtype: _dt.dtype, **params: Any) -> meta.Spec:
    return meta.Spec(tuple(size), dtype)


def _like_input(x: meta.Spec, *operands: Any, **params: Any) -> meta.Spec:
    return x


def _uniform(rng: np.random.Generator, size: tuple[int, ...], dtype: _dt.dtype,
             low: float = 0.0, high: float = 1.0) -> np.ndarray:
    if dtype.category == 3:
        parts = _uniform(rng, (*size, 2), dtype.to_real(), low, high)
        return parts.view(dtype.np).reshape(size)
    bits = _UNIFORM_BITS.get(dtype.name)
    if bits is not None:
        u = rng.integers(0, 1 << bits, size).astype(np.float32) * np.float32(2.0 ** -bits)
        return (np.float32(low) + np.float32(high - low) * u).astype(dtype.np)
    u = rng.random(size, dtype=dtype.np)
    if low == 0.0 and high == 1.0:
        return u
    return (u * dtype.np.type(high - low) + dtype.np.type(low)).astype(dtype.np, copy=False)


def _normal(rng: np.random.Generator, size: tuple[int, ...], dtype: _dt.dtype,
            mean: Any = 0.0, std: Any = 1.0) -> np.ndarray:
    if dtype.category == 3:
        # each part has variance 1/2, so the complex value has variance std**2
        parts = rng.standard_normal((*size, 2), dtype=dtype.to_real().np) * math.sqrt(0.5)
        values = parts.view(dtype.np).reshape(size) * std + mean
        return values.astype(dtype.np, copy=False)  # type: ignore[no-any-return]
    work = np.float64 if dtype is _dt.float64 else np.float32
    z: Any = rng.standard_normal(size, dtype=work)
    if not (isinstance(mean, float) and mean == 0.0 and isinstance(std, float) and std == 1.0):
        z = z * np.asarray(std, work) + np.asarray(mean, work)
    return z.astype(dtype.np, copy=False)


def _randint(rng: np.random.Generator, size: tuple[int, ...], dtype: _dt.dtype,
             low: int, high: int) -> np.ndarray:
    """Integers in ``[low, high)``; ``high`` may be 2**63 (all int64 values from ``low``)."""
    span = high - low
    if span <= 1 << 32:
        # scaling a 53-bit uniform is several times cheaper than Generator.integers, and
        # its bias (below span / 2**53) is smaller than torch's own modulo bias
        scaled = (rng.random(size) * span).astype(np.int64)
        values = np.minimum(scaled, span - 1, out=scaled)  # u * span can round up to span
        values += low
    else:
        values = rng.integers(low, high - 1, size, dtype=np.int64, endpoint=True)
    return values.astype(dtype.np, copy=False)


def _randperm(rng: np.random.Generator, n: int, dtype: _dt.dtype) -> np.ndarray:
    return rng.permutation(n).astype(dtype.np)


def _bernoulli(rng: np.random.Generator, p: Any, size: tuple[int, ...],
               dtype: _dt.dtype) -> np.ndarray:
    return (rng.random(size) < p).astype(dtype.np)


def _multinomial(rng: np.random.Generator, probs: np.ndarray, num_samples: int,
                 replacement: bool) -> np.ndarray:
    """Category indices drawn from each row of the 2-D ``probs`` (float64)."""
    rows, k = probs.shape
    if not replacement:
        # p / Exp(1) keys: their top n are a weighted draw without replacement (torch's
        # method); zero-probability categories only come after all the others.
        keys = probs / rng.standard_exponential((rows, k))
        return np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    cdf = np.cumsum(probs, axis=1)
    cdf /= cdf[:, -1:]
    offset = np.arange(rows, dtype=np.float64)[:, None]
    u = rng.random((rows, num_samples)) + offset
    flat = np.searchsorted((cdf + offset).ravel(), u.ravel(), side="right").reshape(u.shape)
    idx = flat - np.arange(rows)[:, None] * k
    # rounding can put u past the last positive category: keep it there
    last = k - 1 - np.argmax(probs[:, ::-1] > 0, axis=1)
    return np.minimum(idx, last[:, None])


def _poisson(rng: np.random.Generator, rates: np.ndarray, dtype: _dt.dtype) -> np.ndarray:
    return rng.poisson(rates.astype(np.float64)).astype(dtype.np)


def _exponential(rng: np.random.Generator, size: tuple[int, ...], dtype: _dt.dtype,
                 lambd: float) -> np.ndarray:
    return (rng.standard_exponential(size) / lambd).astype(dtype.np)


def _geometric(rng: np.random.Generator, size: tuple[int, ...], dtype: _dt.dtype,
               p: float) -> np.ndarray:
    return rng.geometric(p, size).astype(dtype.np)


def _cauchy(rng: np.random.Generator, size: tuple[int, ...], dtype: _dt.dtype, median: float,
            sigma: float) -> np.ndarray:
    return (median + sigma * rng.standard_cauchy(size)).astype(dtype.np)


def _log_normal(rng: np.random.Generator, size: tuple[int, ...], dtype: _dt.dtype, mean: float,
                std: float) -> np.ndarray:
    return rng.lognormal(mean, std, size).astype(dtype.np)


def _multinomial_meta(x: meta.Spec, num_samples: int, **params: Any) -> meta.Spec:
    return meta.Spec((*x.shape[:-1], num_samples), _dt.int64)


def _normal_meta(*operands: Any, size: Any = None, dtype: Any = None, **params: Any) -> meta.Spec:
    specs = [o for o in operands if isinstance(o, meta.Spec)]
    if not specs:
        return meta.Spec(tuple(size), dtype)
    shape = tuple(np.broadcast_shapes(*[s.shape for s in specs]))
    return meta.Spec(shape, specs[0].dtype)


UNIFORM = register("uniform", _uniform, _sized, "random", differentiable=False)
NORMAL = register("normal", _normal, _normal_meta, "random", differentiable=False)
RANDINT = register("randint", _randint, _sized, "random", differentiable=False)
RANDPERM = register("randperm", _randperm,
                    lambda n, dtype, **_: meta.Spec((n,), dtype), "random", differentiable=False)
BERNOULLI = register("bernoulli", _bernoulli, _like_input, "random", differentiable=False)
MULTINOMIAL = register("multinomial", _multinomial, _multinomial_meta, "random",
                       differentiable=False)
POISSON = register("poisson", _poisson, _like_input, "random", differentiable=False)
EXPONENTIAL = register("exponential", _exponential, _sized, "random", differentiable=False)
GEOMETRIC = register("geometric", _geometric, _sized, "random", differentiable=False)
CAUCHY = register("cauchy", _cauchy, _sized, "random", differentiable=False)
LOG_NORMAL = register("log_normal", _log_normal, _sized, "random", differentiable=False)

