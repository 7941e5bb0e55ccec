"""VJP of scaled dot-product attention.

A first-order backward runs the fused backward primitive, which recomputes each block of
probabilities from the saved log-sum-exp. Where a graph is built, the same gradients are
written with Ember ops over the whole score matrix, so that they differentiate again.
"""

from __future__ import annotations

import math
from typing import Any

import ember.core as E
from ember.core.dispatch import dispatch, grad_mode
from ember.core.ops.attention import ATTENTION_BACKWARD
from ember.core.tensor import Tensor

from .formula import Formula

Grads = tuple[Any, ...]


def _probabilities(q: Tensor, k: Tensor, mask: Tensor | None, causal: bool,
                   scale: float) -> Tensor:
    scores = (q * scale) @ k.transpose(-2, -1)
    if causal:
        keep = E.ones(scores.shape[-2:], dtype=E.bool, device=q.device).tril()
        scores = scores.masked_fill(~keep, -math.inf)
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf) if mask.dtype == E.bool \
            else scores + mask
    p = scores.softmax(-1)
    return p.masked_fill(scores.isneginf().all(-1, keepdim=True), 0.0)


def attention(n: Any, g: Any) -> Grads:
    g = g[0]
    if g is None:
        return (None, None, None, None)
    q, k, v, mask = (n.saved(i) for i in range(4))
    causal, scale = n.params["is_causal"], n.params["scale"]
    if not grad_mode.enabled:  # no graph to build: the fused backward
        return (*dispatch(ATTENTION_BACKWARD, (g, q, k, v, n.result(0), n.result(1), mask),
                          n.params), None)
    p = _probabilities(q, k, mask, causal, scale)
    dv = p.transpose(-2, -1) @ g
    dp = g @ v.transpose(-2, -1)
    ds = p * (dp - (dp * p).sum(-1, keepdim=True))
    return (ds @ k) * scale, (ds.transpose(-2, -1) @ q) * scale, dv, None


FORMULAS: dict[str, Formula] = {
    "_scaled_dot_product_flash_attention_for_cpu": Formula(attention, (0, 1, 2, 3), (0, 1),
                                                           outputs=(0,)),
}
