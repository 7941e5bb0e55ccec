"""The sampling primitives: each sampler is one registered primitive (normal, bernoulli
and poisson differentiable, with zero gradients, as torch's)

    forward(state, *operands, device, **params) -> (values, new_state)

``state`` is the bytes of a generator's state (see ``random``): the values are drawn on
the host from the numpy stream at that state, then placed on ``device``, and
``new_state`` is the state after the draw. The same state gives the same values, so a
recorded call replays. Operands that are tensors (probabilities, rates, means) are
checked here, where their values are read; the rest is checked by ``sampling``'s
wrappers. The meta rules give the values' shape, dtype and strides and return the state
as it came: torch's meta random ops do not advance the generator.

================  =================  ====================================================
primitive         operands           params (besides ``device``)
================  =================  ====================================================
``uniform``       state              size, dtype, low, high, strides (None: row-major)
``normal``        state, mean, std   size, dtype, strides; mean and std: arrays or numbers
``randint``       state              size, dtype, low, high, strides
``randperm``      state              n, dtype
``bernoulli``     state, p           size, dtype; p: an array of probabilities or a number
``multinomial``   state, probs       num_samples, replacement
``poisson``       state, rates
``exponential``   state              size, dtype, lambd
``geometric``     state              size, dtype, p
``cauchy``        state              size, dtype, median, sigma
``log_normal``    state              size, dtype, mean, std
================  =================  ====================================================
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from . import dtypes as _dt
from . import meta
from .device import CPU, array_module, device
from .dispatch import Op, register
from .factory_args import allocate, meta_array
from .ops.conversion import move_array
from .random import advanced, stream_of

# Bits of a uniform draw per float dtype: every value of k * 2**-bits is representable.
_UNIFORM_BITS = {"float16": 11, "bfloat16": 8}
_NUMBERS = (int, float, complex)


# ----------------------------------------------------------------------------- draws

def _uniform(rng: np.random.Generator, *, size: tuple[int, ...], dtype: _dt.dtype,
             low: float = 0.0, high: float = 1.0) -> np.ndarray:
    if dtype.category == 3:
        parts = _uniform(rng, size=(*size, 2), dtype=dtype.to_real(), low=low, high=high)
        return parts.view(dtype.np).reshape(size)
    bits = _UNIFORM_BITS.get(dtype.name)
    if bits is not None:
        u = rng.integers(0, 1 << bits, size).astype(np.float32) * np.float32(2.0 ** -bits)
        return (np.float32(low) + np.float32(high - low) * u).astype(dtype.np)
    u = rng.random(size, dtype=dtype.np)
    if low == 0.0 and high == 1.0:
        return u
    return (u * dtype.np.type(high - low) + dtype.np.type(low)).astype(dtype.np, copy=False)


def _normal(rng: np.random.Generator, mean: Any, std: Any, *, size: tuple[int, ...],
            dtype: _dt.dtype) -> np.ndarray:
    if isinstance(std, np.ndarray) and (std < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if dtype.category == 3:
        # each part has variance 1/2, so the complex value has variance std**2
        parts = rng.standard_normal((*size, 2), dtype=dtype.to_real().np) * math.sqrt(0.5)
        values = parts.view(dtype.np).reshape(size) * std + mean
        return values.astype(dtype.np, copy=False)  # type: ignore[no-any-return]
    work = np.float64 if dtype is _dt.float64 else np.float32
    z: Any = rng.standard_normal(size, dtype=work)
    if not (isinstance(mean, float) and mean == 0.0 and isinstance(std, float) and std == 1.0):
        z = z * np.asarray(std, work) + np.asarray(mean, work)
    if dtype is _dt.float32 or dtype is _dt.float64:
        return z
    return z.astype(dtype.np, copy=False)  # type: ignore[no-any-return]


def _randint(rng: np.random.Generator, *, size: tuple[int, ...], dtype: _dt.dtype, low: int,
             high: int) -> np.ndarray:
    """Integers in ``[low, high)``; ``high`` may be 2**63 (all int64 values from ``low``)."""
    span = high - low
    if span <= 1 << 32:
        # scaling a 53-bit uniform is several times cheaper than Generator.integers, and
        # its bias (below span / 2**53) is smaller than torch's own modulo bias
        # np.asarray: a 0-d product is a numpy scalar, which cannot take ``out=``
        scaled = np.asarray((rng.random(size) * span).astype(np.int64))
        values = np.minimum(scaled, span - 1, out=scaled)  # u * span can round up to span
        values += low
    else:
        values = rng.integers(low, high - 1, size, dtype=np.int64, endpoint=True)
    return values.astype(dtype.np, copy=False)


def _randperm(rng: np.random.Generator, *, n: int, dtype: _dt.dtype) -> np.ndarray:
    return rng.permutation(n).astype(dtype.np)


def _bernoulli(rng: np.random.Generator, p: Any, *, size: tuple[int, ...],
               dtype: _dt.dtype) -> np.ndarray:
    if isinstance(p, np.ndarray) and not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    return (rng.random(size) < p).astype(dtype.np)


def _multinomial(rng: np.random.Generator, probs: np.ndarray, *, num_samples: int,
                 replacement: bool) -> np.ndarray:
    """``num_samples`` category indices (int64) drawn from each row of ``probs``."""
    k = probs.shape[-1]
    rows = math.prod(probs.shape[:-1])  # a 1-d input is one row, even without categories
    p = probs.astype(np.float64).reshape(rows, k)
    if not (np.isfinite(p) & (p >= 0)).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (p.sum(axis=1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not rows:
        return np.empty((0, num_samples), np.int64)
    picks = _with_replacement(rng, p, num_samples) if replacement else \
        _without_replacement(rng, p, num_samples)
    return picks.reshape(*probs.shape[:-1], num_samples).astype(np.int64, copy=False)


def _without_replacement(rng: np.random.Generator, p: np.ndarray, n: int) -> np.ndarray:
    # p / Exp(1) keys: their top n are a weighted draw without replacement (torch's
    # method); zero-probability categories only come after all the others.
    keys = p / rng.standard_exponential(p.shape)
    return np.argsort(-keys, axis=1, kind="stable")[:, :n]


def _with_replacement(rng: np.random.Generator, p: np.ndarray, n: int) -> np.ndarray:
    rows, k = p.shape
    cdf = np.cumsum(p, axis=1)
    cdf /= cdf[:, -1:]
    offset = np.arange(rows, dtype=np.float64)[:, None]
    u = rng.random((rows, n)) + offset
    flat = np.searchsorted((cdf + offset).ravel(), u.ravel(), side="right").reshape(u.shape)
    idx = flat - np.arange(rows)[:, None] * k
    # rounding can put u past the last positive category: keep it there
    last = k - 1 - np.argmax(p[:, ::-1] > 0, axis=1)
    return np.minimum(idx, last[:, None])


# numpy's largest Poisson rate (it refuses larger ones)
_POISSON_MAX = float(np.iinfo(np.int64).max) - 10 * math.sqrt(np.iinfo(np.int64).max)


def _poisson(rng: np.random.Generator, rates: np.ndarray) -> np.ndarray:
    if not (rates >= 0).all():  # NaN too
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    lam = rates.astype(np.float64)
    huge = lam > _POISSON_MAX
    if huge.any():
        # torch's draw overflows int64 there and comes back as its minimum, -2**63
        lam = np.where(huge, 0.0, lam)
        drawn = np.where(huge, np.float64(-2.0 ** 63), rng.poisson(lam))
    else:
        drawn = rng.poisson(lam)
    # np.asarray: numpy answers a 0-d array of rates with a Python int
    return np.asarray(drawn, rates.dtype)


def _exponential(rng: np.random.Generator, *, size: tuple[int, ...], dtype: _dt.dtype,
                 lambd: float) -> np.ndarray:
    return (rng.standard_exponential(size) / lambd).astype(dtype.np)


def _geometric(rng: np.random.Generator, *, size: tuple[int, ...], dtype: _dt.dtype,
               p: float) -> np.ndarray:
    return rng.geometric(p, size).astype(dtype.np)


def _cauchy(rng: np.random.Generator, *, size: tuple[int, ...], dtype: _dt.dtype,
            median: float, sigma: float) -> np.ndarray:
    return (median + sigma * rng.standard_cauchy(size)).astype(dtype.np)


def _log_normal(rng: np.random.Generator, *, size: tuple[int, ...], dtype: _dt.dtype,
                mean: float, std: float) -> np.ndarray:
    return rng.lognormal(mean, std, size).astype(dtype.np)


# ----------------------------------------------------------------------------- primitives

def _host(operand: Any) -> Any:
    """A tensor operand's array on the host (numbers as they are): draws run there."""
    return operand if isinstance(operand, _NUMBERS) else move_array(operand, CPU)


def _forward(draw: Callable[..., np.ndarray]) -> Callable[..., Any]:
    """The primitive's forward: ``draw`` from the stream at ``state``, placed on ``device``
    with element ``strides`` (None: row-major), and the state after it. The values are
    laid out as the meta rule states, so the kernel step does not check them."""

    def forward(state: np.ndarray, *operands: Any, device: device,
                strides: tuple[int, ...] | None = None, **params: Any) -> Any:
        stream = stream_of(state)
        for o in operands:
            if not isinstance(o, _NUMBERS):  # tensor operands: their arrays on the host
                operands = tuple([_host(o) for o in operands])
                break
        values = draw(stream, *operands, **params)
        if device is CPU and strides is None and values.size and values.flags.c_contiguous:
            return values, advanced(stream, state)
        xp = array_module(device)
        if strides is None and values.size and values.flags.c_contiguous:
            placed = xp.asarray(values)
        else:  # numpy gives an empty array zero strides, torch row-major ones
            placed = allocate(xp, values.shape, values.dtype,
                              strides or meta.contiguous_strides(values.shape))
            placed[...] = xp.asarray(values)
        return placed, advanced(stream, state)

    forward.__name__ = draw.__name__
    forward.__doc__ = f"{draw.__name__.strip('_')}: (state, ...) -> (values, new state)."
    return forward


def _sized_meta(state: Any, *operands: Any, size: tuple[int, ...], dtype: _dt.dtype,
                strides: tuple[int, ...] | None = None, **params: Any) -> Any:
    return meta_array(size, dtype, strides), state


def _randperm_meta(state: Any, *, n: int, dtype: _dt.dtype, **params: Any) -> Any:
    return meta.empty((n,), dtype), state


def _multinomial_meta(state: Any, probs: Any, *, num_samples: int, **params: Any) -> Any:
    return meta.empty((*probs.shape[:-1], num_samples), _dt.int64), state


def _poisson_meta(state: Any, rates: Any, **params: Any) -> Any:
    return meta.empty(rates.shape, rates.dtype), state


def _random_op(name: str, draw: Callable[..., np.ndarray], rule: Callable[..., Any],
               operands: tuple[str, ...] = (), differentiable: bool = False) -> Op:
    return register(name, _forward(draw), rule, "random", differentiable=differentiable,
                    device_param=True, arg_names=("state", *operands))


# normal, bernoulli and poisson are differentiable in torch, with zero gradients for their
# tensor operands: their results require grad when an operand does
UNIFORM = _random_op("uniform", _uniform, _sized_meta)
NORMAL = _random_op("normal", _normal, _sized_meta, ("mean", "std"), differentiable=True)
RANDINT = _random_op("randint", _randint, _sized_meta)
RANDPERM = _random_op("randperm", _randperm, _randperm_meta)
BERNOULLI = _random_op("bernoulli", _bernoulli, _sized_meta, ("p",), differentiable=True)
MULTINOMIAL = _random_op("multinomial", _multinomial, _multinomial_meta, ("self",))
POISSON = _random_op("poisson", _poisson, _poisson_meta, ("self",), differentiable=True)
EXPONENTIAL = _random_op("exponential", _exponential, _sized_meta)
GEOMETRIC = _random_op("geometric", _geometric, _sized_meta)
CAUCHY = _random_op("cauchy", _cauchy, _sized_meta)
LOG_NORMAL = _random_op("log_normal", _log_normal, _sized_meta)
