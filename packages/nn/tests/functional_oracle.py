"""ember.nn.functional against torch.nn.functional: one program run in both.

``compare(fn, shapes)`` calls ``fn(m, *inputs)`` with ``m`` = ``TORCH`` and ``m`` =
``EMBER`` (each the tensor library with its ``F``, e.g. ``m.F.max_pool2d(x, 2)``,
``m.tensor(...)``) on the same random leaves, and checks the outputs (dtype, shape, values,
tuples item by item) and every input's gradient for the same random output gradient.
``same_error(fn)`` checks that both raise the same exception type with the same message.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tensor-core" / "tests"))

from torch_oracle import check, pair  # noqa: E402

import ember.autograd as ag  # noqa: E402  (importing it installs autograd)
import ember.core as E  # noqa: E402
import ember.nn.functional as F  # noqa: E402

__all__ = ["TORCH", "EMBER", "E", "F", "TF", "check", "compare", "same_error", "leaves",
           "DTYPES"]

DTYPES = ["float32", "float64"]


class _Library:
    """A tensor library with its functional namespace as ``F``."""

    def __init__(self, core: Any, functional: Any):
        self.core = core
        self.F = functional

    def __getattr__(self, name: str) -> Any:
        return getattr(self.core, name)


TORCH = _Library(torch, TF)
EMBER = _Library(E, F)


def leaves(shapes: list[tuple[int, ...]], dtype: str = "float64", *, low: float = -2.0,
           high: float = 2.0, seed: int = 0, noncontiguous: bool = False
           ) -> tuple[list[E.Tensor], list[torch.Tensor]]:
    """Leaves that require grad, the same random values in both frameworks."""
    es, ts = [], []
    for i, shape in enumerate(shapes):
        e, t = pair(shape, dtype, seed=seed + i, low=low, high=high,
                    noncontiguous=noncontiguous and len(shape) > 1)
        es.append(e.requires_grad_())
        ts.append(t.requires_grad_())
    return es, ts


def _differentiable(out: Any) -> list[Any]:
    outs = out if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if getattr(o, "requires_grad", False)]


def compare(fn: Callable[..., Any], shapes: list[tuple[int, ...]], dtype: str = "float64",
            *, low: float = -2.0, high: float = 2.0, seed: int = 0,
            noncontiguous: bool = False, rtol: float | None = None,
            atol: float | None = None) -> None:
    """Outputs and input gradients of ``fn(m, *leaves)`` equal torch's. An input torch
    gives a gradient of zeros may get none in Ember (its output then does not depend on
    it, e.g. the grid of a nearest-neighbour sampling)."""
    es, ts = leaves(shapes, dtype, low=low, high=high, seed=seed, noncontiguous=noncontiguous)
    oe, ot = fn(EMBER, *es), fn(TORCH, *ts)
    check(oe, _detached(ot), rtol, atol)
    te, tt = _differentiable(oe), _differentiable(ot)
    assert len(te) == len(tt), "outputs requiring grad"
    if not tt:
        return
    rng = np.random.default_rng(seed + 100)
    seeds = [rng.standard_normal(tuple(o.shape)) for o in tt]
    ge = ag.grad(te, es, [E.tensor(s, dtype=o.dtype) for s, o in zip(seeds, te)],
                 allow_unused=True)
    gt = torch.autograd.grad(tt, ts, [torch.tensor(s, dtype=o.dtype) for s, o in zip(seeds, tt)],
                             allow_unused=True)
    for i, (a, b) in enumerate(zip(ge, gt)):
        if b is None or a is None and not b.any():
            assert a is None or not np.array(a).any(), f"input {i}: torch gives no gradient"
        else:
            assert a is not None, f"input {i}: no gradient, torch has one"
            check(a, b, rtol, atol)


def _detached(out: Any) -> Any:
    if isinstance(out, (tuple, list)):
        return type(out)(_detached(o) for o in out)
    return out.detach() if isinstance(out, torch.Tensor) else out


def same_error(fn: Callable[[Any], Any], exact: bool = True) -> None:
    """``fn(TORCH)`` and ``fn(EMBER)`` raise the same exception type (not a subclass), with
    the same message where ``exact``."""
    with pytest.raises(Exception) as expected:
        fn(TORCH)
    with pytest.raises(Exception) as got:
        fn(EMBER)
    assert type(got.value) is type(expected.value), (
        f"torch raises {type(expected.value).__name__}: {expected.value}; Ember raises "
        f"{type(got.value).__name__}: {got.value}")
    if exact:
        assert str(got.value) == str(expected.value), (
            f"messages differ:\n  torch: {expected.value}\n  Ember: {got.value}")
