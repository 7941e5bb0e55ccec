"""Helpers that compare Ember with PyTorch, the test oracle.

``pair(shape, dtype)`` makes the same random data in both frameworks;
``check(ember_result, torch_result)`` asserts same dtype, shape and values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import ember.core as ember

DTYPES_FLOAT = ["float32", "float64", "float16", "bfloat16"]
DTYPES_INT = ["int64", "int32", "int16", "int8", "uint8"]
DTYPES_ALL = DTYPES_FLOAT + DTYPES_INT + ["bool"]

# Shapes every elementwise op is tried on: 0-d, empty, broadcasting partners.
SHAPES = [(), (0,), (5,), (3, 4), (2, 3, 4)]
BROADCAST_PAIRS = [((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (3,)), ((5,), ()), ((0, 3), (1, 3))]

# Per-dtype tolerances: float16/bfloat16 results differ from torch's by rounding order.
TOL = {"float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (1.3e-6, 1e-5),
       "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def to_torch(t: ember.Tensor) -> torch.Tensor:
    arr = np.array(t)
    if t.dtype is ember.bfloat16:
        return torch.from_numpy(arr.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(arr.copy())


def to_numpy(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.numpy()


def random_array(shape: tuple[int, ...], dtype: str, rng: np.random.Generator,
                 low: float = -3.0, high: float = 3.0) -> np.ndarray:
    return np.asarray(_random_values(shape, dtype, rng, low, high))


def _random_values(shape: tuple[int, ...], dtype: str, rng: np.random.Generator,
                   low: float, high: float) -> Any:
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype in DTYPES_INT:
        lo = 0 if dtype == "uint8" else int(low)
        return rng.integers(lo, max(int(high), lo + 1) + 1, size=shape).astype(dtype)
    if dtype.startswith("complex"):
        return (rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)).astype(dtype)
    return rng.uniform(low, high, shape).astype(np.float32 if dtype == "bfloat16" else dtype)


def pair(shape: tuple[int, ...], dtype: str = "float32", *, seed: int = 0,
         low: float = -3.0, high: float = 3.0, noncontiguous: bool = False
         ) -> tuple[ember.Tensor, torch.Tensor]:
    """The same random data as an Ember tensor and a torch tensor.

    ``noncontiguous=True`` gives both as transposed views of a bigger buffer.
    """
    rng = np.random.default_rng(seed)
    if noncontiguous and len(shape) >= 1:
        full = random_array(tuple(reversed(shape)) if len(shape) > 1 else (shape[0] * 2,),
                            dtype, rng, low, high)
        t = torch.from_numpy(full.copy())
        e = ember.from_numpy(full.copy())
        if dtype == "bfloat16":
            t, e = t.to(torch.bfloat16), e.to(ember.bfloat16)
        if len(shape) > 1:
            return e.permute(*reversed(range(len(shape)))), t.permute(*reversed(range(len(shape))))
        return e[::2], t[::2]
    arr = random_array(shape, dtype, rng, low, high)
    t = torch.from_numpy(arr.copy())
    e = ember.from_numpy(arr.copy())
    if dtype == "bfloat16":
        t, e = t.to(torch.bfloat16), e.to(ember.bfloat16)
    return e, t


def dtype_name(dt: Any) -> str:
    return str(dt).removeprefix("torch.").removeprefix("ember.")


def check(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
          check_dtype: bool = True, equal_nan: bool = True) -> None:
    """Assert an Ember result equals a torch result: type, dtype, shape, values.

    Tuples and lists (e.g. ``max(dim)``'s values and indices) are compared item by item.
    """
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)), f"expected a sequence, got {type(actual)}"
        assert len(actual) == len(expected), f"length {len(actual)} != {len(expected)}"
        for a, e in zip(actual, expected):
            check(a, e, rtol, atol, check_dtype, equal_nan)
        return
    if not isinstance(expected, torch.Tensor):
        assert not isinstance(actual, ember.Tensor), f"expected a {type(expected)}, got a Tensor"
        if isinstance(expected, float):
            np.testing.assert_allclose(actual, expected, rtol=rtol or 1e-6, atol=atol or 1e-6)
        else:
            assert actual == expected, f"{actual!r} != {expected!r}"
        return
    assert isinstance(actual, ember.Tensor), f"expected an ember Tensor, got {type(actual)}"
    if check_dtype:
        assert dtype_name(actual.dtype) == dtype_name(expected.dtype), (
            f"dtype {actual.dtype} != torch's {expected.dtype}")
    assert tuple(actual.shape) == tuple(expected.shape), (
        f"shape {tuple(actual.shape)} != torch's {tuple(expected.shape)}")
    a = np.array(actual)
    if actual.dtype is ember.bfloat16:
        a = a.astype(np.float32)
    e = to_numpy(expected)
    name = dtype_name(expected.dtype)
    if name in TOL or rtol is not None:
        r, t = TOL.get(name, (0.0, 0.0))
        r, t = r if rtol is None else rtol, t if atol is None else atol
        # complex values with an infinite part: compare the parts apart (|a - e| would be nan)
        split = np.iscomplexobj(e) and not np.isfinite(e).all()
        for part in ((np.real, np.imag) if split else (np.asarray,)):
            np.testing.assert_allclose(part(a), part(e), rtol=r, atol=t, equal_nan=equal_nan)
    else:
        np.testing.assert_array_equal(a, e)


def check_signs(actual: ember.Tensor, expected: torch.Tensor) -> None:
    """Assert the sign bits agree wherever torch's value is not NaN (of each part of complex
    values): ``check`` cannot tell -0.0 from 0.0, which later ops can (``1 / x``, atan2)."""
    a, e = np.asarray(np.array(actual)), to_numpy(expected)
    for part in (np.real, np.imag) if np.iscomplexobj(e) else (np.asarray,):
        ours, theirs = part(a).astype(np.float64), part(e).astype(np.float64)
        known = ~np.isnan(theirs)
        np.testing.assert_array_equal(np.signbit(ours)[known], np.signbit(theirs)[known])


def check_same_error(fn: Callable[[Any], Any], phrase: str) -> None:
    """``fn(torch)`` and ``fn(ember.core)`` raise the same exception type, each with
    ``phrase`` in its message (the check an op makes first, in torch's order)."""
    with pytest.raises(Exception) as expected:
        fn(torch)
    assert phrase in str(expected.value)
    with pytest.raises(Exception) as got:
        fn(ember)
    assert type(got.value) is type(expected.value)
    assert phrase in str(got.value)
