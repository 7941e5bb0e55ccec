"""Gradients against PyTorch: run one program in both frameworks, compare what backward gives.

``compare_grads(fn, shapes)`` calls ``fn(m, *inputs)`` with ``m`` = torch and ``m`` =
ember.core on the same random inputs (from tensor-core's ``torch_oracle.pair``) and checks
the output and every input's gradient (dtype, shape, values) for the same random
output gradient.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tensor-core" / "tests"))

from torch_oracle import check, pair  # noqa: E402

import ember.autograd as ag  # noqa: E402  (importing it installs autograd)
import ember.core as E  # noqa: E402
import ember.func  # noqa: E402
from ember.core.ops import activations, attention, interpolation, losses  # noqa: E402

# The torch-like top level that whole programs are written against, assembled from the two
# packages these tests have: the meta package ``ember`` is not installed in this package's
# own test session.
TOP = SimpleNamespace(
    **{name: getattr(E, name) for name in E.__all__}, autograd=ag, func=ember.func,
    no_grad=ag.no_grad, enable_grad=ag.enable_grad, inference_mode=ag.inference_mode,
    is_grad_enabled=ag.is_grad_enabled, is_inference_mode_enabled=ag.is_inference_mode_enabled)

__all__ = ["E", "check", "pair", "inputs", "first", "compare_grads", "ops_in_graph",
           "data_options", "compare_value_grads"]


# torch.nn.functional's names that Ember's op modules hold until the nn package gives them
_FUNCTIONAL = SimpleNamespace(
    gelu=activations.gelu, silu=activations.silu, nll_loss=losses.nll_loss,
    cross_entropy=losses.cross_entropy, interpolate=interpolation.interpolate,
    scaled_dot_product_attention=attention.scaled_dot_product_attention)


def functional(m: Any) -> Any:
    """``torch.nn.functional``, or Ember's functions of the same names."""
    return torch.nn.functional if m is torch else _FUNCTIONAL


def data_options(opts: dict[str, Any]) -> dict[str, Any]:
    """A case's options that shape its random data (``low``, ``high``)."""
    return {k: v for k, v in opts.items() if k in ("low", "high")}


def inputs(shapes: list[tuple[int, ...]], dtype: str = "float64", *, low: float = -2.0,
           high: float = 2.0, noncontiguous: bool = False, seed: int = 0
           ) -> tuple[list[E.Tensor], list[torch.Tensor]]:
    """Leaves that require grad, the same values in both frameworks."""
    es, ts = [], []
    for i, shape in enumerate(shapes):
        e, t = pair(shape, dtype, seed=seed + i, low=low, high=high,
                    noncontiguous=noncontiguous and len(shape) > 0)
        es.append(e.requires_grad_())
        ts.append(t.requires_grad_())
    return es, ts


def first(out: Any) -> Any:
    """The output a test differentiates: the first of a tuple (values of max, sort...)."""
    return out[0] if isinstance(out, (tuple, list)) else out


def _seed(shape: tuple[int, ...], dtype: Any, rng: np.random.Generator
          ) -> tuple[E.Tensor, torch.Tensor]:
    arr = rng.standard_normal(shape)
    return E.tensor(arr, dtype=getattr(E, str(dtype).split(".")[-1])), torch.tensor(arr,
                                                                                  dtype=dtype)


def compare_grads(fn: Callable[..., Any], shapes: list[tuple[int, ...]],
                  dtype: str = "float64", *, low: float = -2.0, high: float = 2.0,
                  noncontiguous: bool = False, seed: int = 0) -> None:
    """Output and input gradients of ``fn`` equal torch's (None where torch gives None)."""
    es, ts = inputs(shapes, dtype, low=low, high=high, noncontiguous=noncontiguous, seed=seed)
    oe, ot = first(fn(E, *es)), first(fn(torch, *ts))
    check(oe, _resolved(ot))
    assert oe.requires_grad == ot.requires_grad
    ge_seed, gt_seed = _seed(tuple(ot.shape), ot.dtype, np.random.default_rng(seed + 100))
    ge = ember.autograd.grad(oe, es, ge_seed, allow_unused=True)
    gt = torch.autograd.grad(ot, ts, gt_seed, allow_unused=True)
    for i, (a, b) in enumerate(zip(ge, gt)):
        if b is None:
            assert a is None or not np.array(a).any(), f"input {i}: torch gives no gradient"
        else:
            assert a is not None, f"input {i}: no gradient, torch has one"
            check(a, _resolved(b))


def _resolved(t: torch.Tensor) -> torch.Tensor:
    """torch's lazy conjugate and negative views, materialized (numpy() refuses them)."""
    return t.resolve_conj().resolve_neg()


def ops_in_graph(out: E.Tensor) -> set[str]:
    """The names of the recorded ops behind ``out``."""
    names: set[str] = set()
    stack = [out.grad_fn]
    seen = set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        op = getattr(node, "op", None)
        if op is not None:
            names.add(op.name)
        stack.extend(fn for fn, _ in node.next_functions)
    return names


def saved_bytes(m: Any, fn: Callable[..., Any], *args: Any) -> int:
    """The bytes ``fn(*args)`` saves for backward in framework ``m`` (``TOP`` or torch), as
    its saved_tensors_hooks see them."""
    total = [0]

    def pack(t: Any) -> Any:
        total[0] += t.numel() * t.element_size()
        return t

    with m.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(*args)
    return total[0]


def check_saved(fn: Callable[..., Any], shapes: list[tuple[int, ...]], *,
                needs: tuple[bool, ...] | None = None, **options: Any) -> None:
    """``fn(m, *inputs)`` saves no more bytes for backward in Ember than in torch, for the
    given inputs (``needs``: which of them require grad; default all)."""
    counts = []
    for m in (TOP, torch):
        xs = inputs(shapes, **options)[0 if m is TOP else 1]
        for x, rg in zip(xs, needs or (True,) * len(xs)):
            x.requires_grad_(rg)
        counts.append(saved_bytes(m, fn, m, *xs))
    assert counts[0] <= counts[1], f"Ember saves {counts[0]} bytes, torch {counts[1]}"


def compare_value_grads(fn: Callable[..., Any], *values: Any) -> None:
    """``fn(m, *leaves).sum().backward()`` on leaves holding ``values`` (NaN, ties, zeros):
    the same gradients as torch's, NaN where torch's are NaN, or the same exception."""
    ts = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    es = [E.tensor(v, dtype=E.float64, requires_grad=True) for v in values]
    try:
        first(fn(torch, *ts)).sum().backward()
    except Exception as exc:
        try:
            first(fn(E, *es)).sum().backward()
        except type(exc):
            return
        raise AssertionError(f"torch raises {type(exc).__name__}: {exc}; Ember does not")
    first(fn(E, *es)).sum().backward()
    for i, (e, t) in enumerate(zip(es, ts)):
        assert (e.grad is None) == (t.grad is None), f"input {i}: grad {e.grad} vs {t.grad}"
        if t.grad is not None:
            np.testing.assert_allclose(np.array(e.grad), t.grad.numpy(), rtol=1e-12,
                                       err_msg=f"input {i}")
