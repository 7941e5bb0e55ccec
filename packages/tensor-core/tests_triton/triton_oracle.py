"""Checking one Triton kernel against its op: ``check_kernel`` runs the op's ``cuda`` kernel
on the test's arrays (numpy under the interpreter, cupy on a GPU) and its reference forward
on numpy copies of them, and asserts the same dtypes, shapes and values, the layout the
op's meta rule gives, and, where given, torch's values for the same operands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ember.core import meta
from ember.core.dispatch import REGISTRY

DTYPES = ["float32", "float64", "float16"]
# as torch_oracle's: float16 results differ from torch's by rounding order
TOL = {"float16": (1e-3, 1e-3), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}
LAYOUTS = ["contiguous", "transposed", "strided"]


def make(xp: Any, shape: tuple[int, ...], dtype: str, seed: int = 0, layout: str = "contiguous",
         low: float = -3.0, high: float = 3.0) -> Any:
    """Random values in [low, high) as an ``xp`` array of ``shape``: row-major, a
    transposed view (dims reversed), or every other element of a wider last dim."""
    rng = np.random.default_rng(seed)
    if layout == "transposed":
        base = rng.uniform(low, high, shape[::-1]).astype(dtype)
        return xp.asarray(base).transpose(tuple(reversed(range(len(shape)))))
    if layout == "strided" and shape:
        base = rng.uniform(low, high, (*shape[:-1], 2 * shape[-1])).astype(dtype)
        return xp.asarray(base)[..., ::2]
    return xp.asarray(rng.uniform(low, high, shape).astype(dtype))


def host(a: Any) -> Any:
    """A numpy copy of an ``xp`` array (None and numbers as they are)."""
    if a is None or not hasattr(a, "shape"):
        return a
    return a.get() if hasattr(a, "get") else np.array(a)


def to_torch(a: Any) -> Any:
    """A torch CPU tensor of an ``xp`` array's values, float16 widened to float32: torch's
    CUDA kernels, which the Triton kernels stand for, compute half types in float32 (its
    CPU kernels add some results, the norms' weight gradients, in float16)."""
    if not hasattr(a, "shape"):
        return a
    t = torch.from_numpy(host(a).copy())
    return t.float() if t.dtype == torch.float16 else t


def _outputs(out: Any) -> tuple[Any, ...]:
    return out if isinstance(out, tuple) else (out,)


def _meta_of(a: Any) -> Any:
    return meta.strided(a.shape, a.dtype, meta.element_strides(a)) if hasattr(a, "strides") \
        else a


def assert_close(actual: Any, expected: Any, dtype: str, rtol: float | None = None,
                 atol: float | None = None) -> None:
    r, t = TOL[dtype]
    np.testing.assert_allclose(host(actual).astype(np.float64),
                               np.asarray(expected, np.float64), rtol=rtol or r, atol=atol or t,
                               equal_nan=True)


def _widened(a: Any) -> Any:
    return a.astype(np.float32) if getattr(a, "dtype", None) == np.float16 else a


def check_kernel(name: str, operands: list[Any], params: dict[str, Any], dtype: str,
                 oracle: Callable[..., Any] | None = None, rtol: float | None = None,
                 atol: float | None = None, widen_reference: bool = False) -> Any:
    """The op ``name``'s ``cuda`` kernel on ``operands`` (``xp`` arrays, numbers, None) with
    ``params`` equals its reference forward (run on numpy copies of the operands: the same
    spec on every device) and lays its results out as its meta rule does;
    ``oracle(*torch operands)`` gives torch's results where torch computes them (None where
    torch gives nothing to compare). ``widen_reference``: the reference runs on
    float16 operands widened to float32, its results rounded back (for a kernel that adds
    in float32 where the reference adds in float16). Returns the kernel's results."""
    op = REGISTRY[name]
    got = op.kernels["cuda"](*operands, **params)
    on_host = [host(a) for a in operands]
    if widen_reference:
        want = op.forward(*[_widened(a) for a in on_host], **params)
        want = tuple(w if w is None or g is None else w.astype(g.dtype)
                     for g, w in zip(_outputs(got), _outputs(want)))
        want = want if isinstance(got, tuple) else want[0]
    else:
        want = op.forward(*on_host, **params)
    rule = op.meta(*[_meta_of(a) for a in operands], **params)
    for i, (g, w, m) in enumerate(zip(_outputs(got), _outputs(want), _outputs(rule),
                                      strict=True)):
        where = f"{name} output {i}"
        if w is None:
            assert g is None, f"{where}: {g!r}, the reference gives None"
            continue
        assert hasattr(g, "strides"), f"{where}: a {type(g)}, not an array"
        assert g.dtype == w.dtype == m.dtype, f"{where}: {g.dtype}, {w.dtype}, rule {m.dtype}"
        assert g.shape == w.shape == m.shape, f"{where}: {g.shape}, {w.shape}, rule {m.shape}"
        assert meta.same_layout(g.shape, meta.element_strides(g), meta.element_strides(m)), (
            f"{where}: strides {meta.element_strides(g)}, the rule's "
            f"{meta.element_strides(m)}")
        if g.dtype == np.bool_ or g.dtype == np.uint8:
            np.testing.assert_array_equal(host(g), host(w), err_msg=where)
        else:
            assert_close(g, host(w), dtype, rtol, atol)
    if oracle is not None:
        expected = oracle(*[to_torch(a) for a in operands])
        for i, (g, e) in enumerate(zip(_outputs(got), _outputs(expected))):
            if e is not None and g is not None:
                assert tuple(g.shape) == tuple(e.shape), f"{name} output {i}: torch's {e.shape}"
                if e.dtype == torch.bool:
                    np.testing.assert_array_equal(host(g), e.numpy())
                else:
                    rounded = e.to(torch.float16) if g.dtype == np.float16 else e
                    assert_close(g, rounded.double().numpy(), dtype, rtol, atol)
    return got
