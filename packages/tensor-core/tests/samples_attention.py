"""Dispatch-table samples of attention.py: causal and masked attention over batched and
grouped heads, transposed and half-type inputs, and the fused backward."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from dispatch_oracle import make

from ember.core.ops.attention import ATTENTION, ATTENTION_BACKWARD, scaled_dot_product_attention

Sample = Callable[[Any, str], Any]


def _sdpa(m: Any) -> Any:
    return F.scaled_dot_product_attention if m is torch else scaled_dot_product_attention


def _qkv(m: Any, d: str, q: tuple[int, ...], kv: tuple[int, ...], dtype: str = "float32",
         transposed: bool = False) -> tuple[Any, Any, Any]:
    return (make(m, d, q, dtype, transposed=transposed), make(m, d, kv, dtype, seed=1),
            make(m, d, kv, dtype, seed=2))


def _backward(m: Any, d: str, causal: bool) -> Any:
    q, k, v = _qkv(m, d, (2, 3, 4, 8), (2, 3, 5, 8))
    g = make(m, d, (2, 3, 4, 8), seed=3)
    if m is torch:
        out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
            q, k, v, 0.0, causal, scale=0.5)
        return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
            g, q, k, v, out, lse, 0.0, causal, scale=0.5)
    out, lse = ATTENTION(q, k, v, None, is_causal=causal, scale=0.5)
    return ATTENTION_BACKWARD(g, q, k, v, out, lse, None, is_causal=causal, scale=0.5)


SAMPLES: dict[str, list[Sample]] = {
    "_scaled_dot_product_flash_attention_for_cpu": [
        lambda m, d: _sdpa(m)(*_qkv(m, d, (2, 3, 4, 8), (2, 3, 5, 8))),
        lambda m, d: _sdpa(m)(*_qkv(m, d, (2, 3, 4, 8), (2, 3, 4, 8), transposed=True),
                              is_causal=True),
        lambda m, d: _sdpa(m)(*_qkv(m, d, (3, 4, 8), (3, 5, 8), "float64"),
                              attn_mask=make(m, d, (4, 5), "bool", seed=6)),
        lambda m, d: _sdpa(m)(*_qkv(m, d, (1, 2, 4, 8), (1, 2, 5, 8), "bfloat16")),
    ],
    "_scaled_dot_product_flash_attention_for_cpu_backward": [
        lambda m, d: _backward(m, d, False),
        lambda m, d: _backward(m, d, True),
    ],
}
