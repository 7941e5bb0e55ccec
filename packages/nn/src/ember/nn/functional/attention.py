"""torch.nn.functional.scaled_dot_product_attention, tensor-core's fused attention."""

from __future__ import annotations

from ember.core.function_modes import public
from ember.core.ops import attention as _attention

scaled_dot_product_attention = public(_attention.scaled_dot_product_attention)

__all__ = ["scaled_dot_product_attention"]
