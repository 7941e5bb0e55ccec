"""Second derivatives (``create_graph=True``) against torch, and gradgradcheck.

For each program: first gradients with ``create_graph=True``, then the gradient of
``sum(grad_i * w_i)`` (fixed random ``w``) with respect to the inputs, in both frameworks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from autograd_oracle import E, check, first, functional, inputs

import ember.autograd

POS = {"low": 0.5, "high": 2.0}
M, V = (3, 4), (4,)


CASES: list[tuple[str, Any, list[tuple[int, ...]], dict[str, Any]]] = [
    ("mul", lambda m, x, y: x * y * x, [M, V], {}),
    ("div", lambda m, x, y: x / y, [M, (3, 1)], POS),
    ("pow", lambda m, x, y: x ** y, [M, V], POS),
    ("exp", lambda m, x: x.exp() * x, [M], {}),
    ("log", lambda m, x: x.log() * x, [M], POS),
    ("tanh", lambda m, x: x.tanh(), [M], {}),
    ("sigmoid", lambda m, x: x.sigmoid(), [M], {}),
    ("sqrt", lambda m, x: x.sqrt(), [M], POS),
    ("sin_cos", lambda m, x: x.sin() * x.cos(), [M], {}),
    ("erf", lambda m, x: x.erf(), [M], {}),
    ("lgamma", lambda m, x: x.lgamma(), [M], POS),
    ("where", lambda m, x, y: m.where(x > 0, x * x, y * y), [M, V], {}),
    ("clamp", lambda m, x: x.clamp(-1, 1) ** 2, [M], {}),
    ("matmul", lambda m, x, y: (x @ y) ** 2, [M, (4, 5)], {}),
    ("matmul_batch", lambda m, x, y: (x @ y) ** 2, [(2, 3, 4), (4, 5)], {}),
    ("mv", lambda m, x, y: (x @ y) ** 2, [M, V], {}),
    ("addmm", lambda m, x, y, z: m.addmm(x, y, z, alpha=2) ** 2, [(3, 5), M, (4, 5)], {}),
    ("einsum", lambda m, x, y: m.einsum("ij,jk->ik", x, y) ** 2, [M, (4, 5)], {}),
    ("sum", lambda m, x: (x * x).sum(1), [M], {}),
    ("mean", lambda m, x: (x * x).mean(), [M], {}),
    ("prod", lambda m, x: x.prod(1), [M], {}),
    ("var", lambda m, x: x.var(1), [M], {}),
    ("std", lambda m, x: x.std(1), [M], {}),
    ("norm", lambda m, x: x.norm(dim=1), [M], {}),
    ("logsumexp", lambda m, x: x.logsumexp(1), [M], {}),
    ("gelu", lambda m, x: functional(m).gelu(x) * x, [M], {"low": -3.0, "high": 3.0}),
    ("gelu_tanh", lambda m, x: functional(m).gelu(x, approximate="tanh"), [M],
     {"low": -3.0, "high": 3.0}),
    ("silu", lambda m, x: functional(m).silu(x) * x, [M], {"low": -3.0, "high": 3.0}),
    ("layer_norm", lambda m, x, w, b: m.layer_norm(x, (4,), w, b) ** 2, [M, V, V], {}),
    ("rms_norm", lambda m, x, w: m.rms_norm(x, (3, 4), w) ** 2, [(2, 3, 4), M], {}),
    ("cross_entropy", lambda m, x: functional(m).cross_entropy(
        x, m.tensor([1, -100, 3]), m.arange(4, dtype=x.dtype) + 0.5), [M], {}),
    ("cross_entropy_spatial", lambda m, x: functional(m).cross_entropy(
        x, m.tensor([[1, 0], [3, 2]]), reduction="none") ** 2, [(2, 4, 2)], {}),
    ("nll_loss", lambda m, x: functional(m).nll_loss(x, m.tensor([1, 0, 3]), reduction="sum") ** 2,
     [M], {}),
    ("embedding", lambda m, w: m.embedding(w, m.tensor([1, 2, 2]), 0) ** 2, [M], {}),
    ("batch_norm", lambda m, x, w: m.batch_norm(x, w, None, None, None, True, 0.1, 1e-5,
                                                False) ** 2, [(4, 3, 2), (3,)], {}),
    ("group_norm", lambda m, x, w: m.group_norm(x, 2, w) ** 2, [(2, 4, 3), (4,)], {}),
    ("attention", lambda m, q, k, v: functional(m).scaled_dot_product_attention(
        q, k, v, is_causal=True) ** 2, [(2, 3, 4), (2, 3, 4), (2, 3, 4)], {}),
    ("embedding_scaled", lambda m, w: m.embedding(w, m.tensor([1, 2, 2]), -1, True) ** 2,
     [M], {}),
    ("amax", lambda m, x: x.amax(1) * x.sum(), [M], {}),
    ("max_dim", lambda m, x: x.max(1)[0] * x.sum(), [M], {}),
    ("cumsum", lambda m, x: x.cumsum(1) ** 2, [M], {}),
    ("cumprod", lambda m, x: x.cumprod(1), [M], {}),
    ("softmax", lambda m, x: x.softmax(1), [M], {}),
    ("log_softmax", lambda m, x: x.log_softmax(1), [M], {}),
    ("getitem_index", lambda m, x: x[m.tensor([0, 2, 0])] ** 2 + x[1:, ::2].sum(), [M], {}),
    ("cat_gather", lambda m, x: m.cat([x, x * x], 1).gather(1, m.tensor([[0, 5]] * 3)) ** 2,
     [M], {}),
    ("narrow_diag", lambda m, x: (x.narrow(1, 1, 2) ** 2).sum(1) + x.diagonal() ** 3, [M], {}),
    ("conv2d", lambda m, x, w: m.conv2d(x, w, stride=2, padding=1, groups=2) ** 2,
     [(2, 4, 5, 5), (4, 2, 3, 3)], {}),
    ("conv_transpose1d", lambda m, x, w: m.conv_transpose1d(x, w, stride=2, output_padding=1,
                                                            dilation=2) ** 2,
     [(2, 2, 4), (2, 3, 3)], {}),
    ("max_pool2d", lambda m, x: m.max_pool2d(x, 2, 1) ** 2, [(2, 2, 4, 4)], {}),
    ("avg_pool1d", lambda m, x: m.avg_pool1d(x, 3, 2, 1, True) ** 2, [(2, 2, 6)], {}),
    ("adaptive_avg_pool1d", lambda m, x: m.adaptive_avg_pool1d(x, 3) ** 2, [(2, 2, 7)], {}),
    ("adaptive_max_pool1d", lambda m, x: m.adaptive_max_pool1d(x, 3)[0] ** 2, [(2, 2, 7)], {}),
]

IDS = [c[0] for c in CASES]


def _second(m: Any, fn: Any, xs: list[Any], weights: list[np.ndarray]) -> tuple[Any, ...]:
    out = first(fn(m, *xs))
    seed = m.ones_like(out)
    grads = m.autograd.grad(out, xs, seed, create_graph=True)
    total = sum((g * m.tensor(w)).sum() for g, w in zip(grads, weights))
    return m.autograd.grad(total, xs, allow_unused=True)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_second_derivative_matches_torch(case: Any) -> None:
    _, fn, shapes, opts = case
    es, ts = inputs(shapes, **opts)
    rng = np.random.default_rng(7)
    weights = [rng.standard_normal(s) for s in shapes]
    second_e = _second(_EmberWithAutograd, fn, es, weights)
    second_t = _second(torch, fn, ts, weights)
    for a, b in zip(second_e, second_t):
        if b is None:
            assert a is None or not np.array(a).any()
        else:
            check(a, b)


# torch's double backward of a frequency-scaled embedding leaves the scaling out, so its
# second derivative is not that of its (scaled) first: gradcheck's numbers cannot agree
NOT_GRADGRADCHECKED = {"embedding_scaled"}


@pytest.mark.parametrize("case", [c for c in CASES if c[0] not in NOT_GRADGRADCHECKED],
                         ids=[i for i in IDS if i not in NOT_GRADGRADCHECKED])
def test_gradgradcheck(case: Any) -> None:
    _, fn, shapes, opts = case
    es, _ = inputs(shapes, **opts)
    assert ember.autograd.gradgradcheck(lambda *a: first(fn(E, *a)), es)


class _EmberWithAutograd:
    """ember.core's ops plus ``autograd``, so one program text serves both frameworks."""

    autograd = ember.autograd

    def __getattr__(self, name: str) -> Any:
        return getattr(E, name)


_EmberWithAutograd = _EmberWithAutograd()  # type: ignore[misc,assignment]
