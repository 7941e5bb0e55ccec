"""MultiheadAttention (in torch.nn.modules.activation), its out projection a
NonDynamicallyQuantizableLinear."""

from __future__ import annotations

from typing import Any

import ember.core as E

from .. import init
from ..functional.multi_head_attention import _attention_forward, _canonical_mask, _none_or_dtype
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """torch.nn.MultiheadAttention: ``Concat(head_1, ..., head_h) W^O`` with ``head_i =
    Attention(Q W_i^Q, K W_i^K, V W_i^V)`` (Attention Is All You Need).

    ``embed_dim`` is split over ``num_heads`` heads; ``dropout`` drops attention weights in
    training; ``bias`` adds biases to the in and out projections; ``add_bias_kv`` appends a
    learnt key and value, ``add_zero_attn`` a zero one; ``kdim``/``vdim`` are the keys' and
    values' features (``embed_dim`` by default; other sizes get separate ``q_proj_weight``,
    ``k_proj_weight``, ``v_proj_weight`` in place of ``in_proj_weight``); ``batch_first``
    takes and returns (N, L, E) in place of (L, N, E)."""

    __constants__ = ["batch_first"]
    bias_k: E.Tensor | None
    bias_v: E.Tensor | None

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0,
                 bias: bool = True, add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(E.empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(E.empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(E.empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(E.empty((3 * embed_dim, embed_dim), **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(E.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        **factory)
        if add_bias_kv:
            self.bias_k = Parameter(E.empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(E.empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def __setstate__(self, state: dict[str, Any]) -> None:
        # checkpoints of torch 1.1 predate separate q/k/v weights
        state.setdefault("_qkv_same_embed_dim", True)
        super().__setstate__(state)

    def forward(self, query: E.Tensor, key: E.Tensor, value: E.Tensor,
                key_padding_mask: E.Tensor | None = None, need_weights: bool = True,
                attn_mask: E.Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[E.Tensor, E.Tensor | None]:
        """The attention output (L, E), (L, N, E) or, ``batch_first``, (N, L, E); and,
        where ``need_weights``, the attention weights (N, L, S) (averaged over the heads)
        or (N, num_heads, L, S) per head (``average_attn_weights=False``), else None.

        ``key_padding_mask`` (N, S) or (S): True (bool) or the added value (float) per key;
        ``attn_mask`` (L, S) or (N * num_heads, L, S): True where a query may not attend
        a key, or the added value; ``is_causal``: a hint that ``attn_mask`` is causal."""
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                           _none_or_dtype(attn_mask), "attn_mask",
                                           query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        return _attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, self.training, key_padding_mask,
            need_weights, attn_mask, not self._qkv_same_embed_dim, self.q_proj_weight,
            self.k_proj_weight, self.v_proj_weight, None, None, average_attn_weights,
            is_causal, self.batch_first and query.ndim == 3)

    def merge_masks(self, attn_mask: E.Tensor | None, key_padding_mask: E.Tensor | None,
                    query: E.Tensor) -> tuple[E.Tensor | None, int | None]:
        """The mask type and the masks combined: ``key_padding_mask`` (type 1), or
        ``attn_mask`` (L, L) or (N * num_heads, L, L) expanded to (N, num_heads, L, L)
        (type 2), plus the padding mask where both are given; (None, None) for neither.
        ``query`` is (N, L, E)."""
        mask_type: int | None = None
        merged: E.Tensor | None = None
        if key_padding_mask is not None:
            mask_type = 1
            merged = key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.ndim == 3:
                expanded = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                expanded = attn_mask.view(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1)
            merged = expanded
            if key_padding_mask is not None:
                merged = expanded + key_padding_mask.view(batch_size, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
        return merged, mask_type
