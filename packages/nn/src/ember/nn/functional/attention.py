"""torch.nn.functional.scaled_dot_product_attention, tensor-core's fused attention."""

from __future__ import annotations

from ember.core.ops.attention import scaled_dot_product_attention

__all__ = ["scaled_dot_product_attention"]
