"""torch.nn.functional.multi_head_attention_forward, MultiheadAttention's computation, and
the mask helpers that the attention and transformer layers share (``_canonical_mask``,
``_none_or_dtype``).

The heads are views: the in-projection's (.., 3 * E) result is split into q, k and v
and viewed as (N, num_heads, L, head_dim) without a copy, in whichever of torch's layouts
the input came: (L, N, E), or (N, L, E) when MultiheadAttention is ``batch_first`` (torch
transposes those to (L, N, E) first; computing in the input's own layout gives the same
values without the transposed copies).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import ember.core as E
from ember.core import Tensor
from ember.core.ops.attention import scaled_dot_product_attention

from .dropout import dropout
from .linear import linear
from .padding import pad

__all__ = ["multi_head_attention_forward"]


def _none_or_dtype(input: Tensor | None) -> Any:
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask: Tensor | None, mask_name: str, other_type: Any, other_name: str,
                    target_type: Any, check_other: bool = True) -> Tensor | None:
    """A bool mask (True: masked out) as a float one of ``target_type`` (-inf where True);
    a float mask as it is. Warns, as torch does, where its dtype is not ``other_type``."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != E.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=2)
    if is_float:
        return mask
    return E.zeros_like(mask, dtype=target_type).masked_fill_(mask, -math.inf)


def _mha_shape_check(query: Tensor, key: Tensor, value: Tensor,
                     key_padding_mask: Tensor | None, attn_mask: Tensor | None,
                     num_heads: int) -> bool:
    """torch's checks of the inputs' dims; whether the input is batched."""
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 2-D but found {key_padding_mask.ndim}-D "
                                 "tensor instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be "
                                 f"`None`, 2-D or 3-D but found {attn_mask.ndim}-D tensor "
                                 "instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to "
                                 f"be 2-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 1-D but found {key_padding_mask.ndim}-D "
                                 "tensor instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.ndim}-D tensor "
                                     "instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.ndim == 3 and attn_mask.shape != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.ndim}-D query tensor")


def _seq_first(shape: Any, batch_first: bool) -> Any:
    """A shape as torch's function sees it, (S, N, E), for its messages."""
    return type(shape)((shape[1], shape[0], *shape[2:])) if batch_first else shape


def _split_heads(x: Tensor, parts: int, num_heads: int) -> tuple[Tensor, ...]:
    """A projection (A, B, parts * E) as ``parts`` views (A, B, num_heads, head_dim)."""
    a, b, width = x.shape
    head_dim = width // (parts * num_heads)
    if parts == 1:
        return (x.view(a, b, num_heads, head_dim),)
    return x.view(a, b, parts, num_heads, head_dim).unbind(2)


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Tensor | None,
                          num_heads: int) -> tuple[Tensor, ...]:
    """q, k and v (A, B, E) projected by the rows of ``w`` (3E, E) packed in q, k, v order,
    as (A, B, num_heads, head_dim) views: one matrix product for self-attention, two for a
    shared key and value, three otherwise."""
    e = q.size(-1)
    if k is v:
        if q is k:
            return _split_heads(linear(q, w, b), 3, num_heads)
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        return (*_split_heads(linear(q, w_q, b_q), 1, num_heads),
                *_split_heads(linear(k, w_kv, b_kv), 2, num_heads))
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return tuple(_split_heads(linear(x, wx, bx), 1, num_heads)[0]
                 for x, wx, bx in ((q, w_q, b_q), (k, w_k, b_k), (v, w_v, b_v)))


def _separate(weight: Tensor | None, name: str) -> Tensor:
    if weight is None:
        raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
    return weight


def _in_projection(q: Tensor, k: Tensor, v: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor,
                   b: Tensor | None, num_heads: int) -> tuple[Tensor, ...]:
    """q, k and v projected by their own weights (E, Eq), (E, Ek), (E, Ev) (``b`` the
    packed biases), as (A, B, num_heads, head_dim) views."""
    eq, ek, ev = q.size(-1), k.size(-1), v.size(-1)
    for name, w, shape in (("query", w_q, (eq, eq)), ("key", w_k, (eq, ek)),
                           ("value", w_v, (eq, ev))):
        if w.shape != shape:
            raise AssertionError(f"expecting {name} weights shape of {shape}, but got "
                                 f"{w.shape}")
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    for name, bias in (("query", b_q), ("key", b_k), ("value", b_v)):
        if bias is not None and bias.shape != (eq,):
            raise AssertionError(f"expecting {name} bias shape of {(eq,)}, but got "
                                 f"{bias.shape}")
    return tuple(_split_heads(linear(x, wx, bx), 1, num_heads)[0]
                 for x, wx, bx in ((q, w_q, b_q), (k, w_k, b_k), (v, w_v, b_v)))


def _heads(x: Tensor, batch_first: bool) -> Tensor:
    """(L, N, num_heads, head_dim) or (N, L, ...) as a (N, num_heads, L, head_dim) view."""
    return x.permute(0, 2, 1, 3) if batch_first else x.permute(1, 2, 0, 3)


def _batch_of(x: Tensor, bsz: int, seq: int) -> Tensor:
    """``x`` (.., .., num_heads, head_dim), checked to have the query's batch size, with
    the error of torch's view of it as (length, bsz * num_heads, head_dim)."""
    if x.shape[1 - seq] != bsz:
        raise RuntimeError(f"shape '[{x.shape[seq]}, {bsz * x.shape[2]}, {x.shape[3]}]' is "
                           f"invalid for input of size {x.numel()}")
    return x


def _static(t: Tensor, name: str, bsz: int, num_heads: int, head_dim: int) -> Tensor:
    """A static key or value (N * num_heads, S, head_dim) as (N, num_heads, S, head_dim)."""
    if t.size(0) != bsz * num_heads:
        raise AssertionError(f"expecting {name}.size(0) of {bsz * num_heads}, but got "
                             f"{t.size(0)}")
    if t.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {t.size(2)}")
    return t.view(bsz, num_heads, t.size(1), head_dim)


def _head_mask(attn_mask: Tensor, tgt_len: int, src_len: int, bsz: int,
               num_heads: int) -> Tensor:
    """A 2-D (L, S) or 3-D (N * num_heads, L, S) float mask, checked, as a 4-D one that
    broadcasts against (N, num_heads, L, S)."""
    if attn_mask.ndim == 2:
        if attn_mask.shape != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                               f"be {(tgt_len, src_len)}.")
        return attn_mask.view(1, 1, tgt_len, src_len)
    if attn_mask.ndim == 3:
        if attn_mask.shape != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {(bsz * num_heads, tgt_len, src_len)}.")
        return attn_mask.view(bsz, num_heads, tgt_len, src_len)
    raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")


def _padding_mask(key_padding_mask: Tensor, bsz: int, src_len: int) -> Tensor:
    """A float (N, S) key padding mask, checked, as (N, 1, 1, S)."""
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                             f"{key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")
    return key_padding_mask.view(bsz, 1, 1, src_len)


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float,
        out_proj_weight: Tensor, out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """torch.nn.functional.multi_head_attention_forward: MultiheadAttention's forward.

    query (L, N, E) or (L, E), key (S, N, Ek), value (S, N, Ev) are projected (by
    ``in_proj_weight`` (3E, E), or by ``q_proj_weight``, ``k_proj_weight`` and
    ``v_proj_weight`` where ``use_separate_proj_weight``), split into ``num_heads``
    heads, attended (``bias_k``/``bias_v`` appended to the keys/values, then a zero key and
    value where ``add_zero_attn``; ``static_k``/``static_v`` (N * num_heads, S, E /
    num_heads) in place of the projected keys/values), and projected out. ``attn_mask``
    (L, S) or (N * num_heads, L, S) and ``key_padding_mask`` (N, S) are bool (True: not
    attended) or float (added); ``is_causal`` is a hint that ``attn_mask`` is causal.
    Returns the output (L, N, E) and, where ``need_weights``, the attention weights (N, L,
    S) averaged over the heads (``average_attn_weights``) or (N, num_heads, L, S); None
    otherwise."""
    return _attention_forward(
        query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
        bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training,
        key_padding_mask, need_weights, attn_mask, use_separate_proj_weight, q_proj_weight,
        k_proj_weight, v_proj_weight, static_k, static_v, average_attn_weights, is_causal,
        False)


def _attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float,
        out_proj_weight: Tensor, out_proj_bias: Tensor | None, training: bool,
        key_padding_mask: Tensor | None, need_weights: bool, attn_mask: Tensor | None,
        use_separate_proj_weight: bool, q_proj_weight: Tensor | None,
        k_proj_weight: Tensor | None, v_proj_weight: Tensor | None, static_k: Tensor | None,
        static_v: Tensor | None, average_attn_weights: bool, is_causal: bool,
        batch_first: bool) -> tuple[Tensor, Tensor | None]:
    """multi_head_attention_forward on batched inputs laid out (N, L, E) where
    ``batch_first``, (L, N, E) otherwise; the output in the same layout."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        batch_first = True
        query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    seq, batch = (1, 0) if batch_first else (0, 1)
    tgt_len, bsz, embed_dim = query.shape[seq], query.shape[batch], query.shape[2]
    src_len = key.shape[seq]

    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        # the fused attention applies the hint itself; with a padding mask or weights to
        # return, the mask is used and the merged mask is no longer causal
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False

    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(
                f"key's sequence and batch dims {_seq_first(key.shape[:2], batch_first)} do "
                f"not match value's {_seq_first(value.shape[:2], batch_first)}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {_seq_first(key.shape, batch_first)} does not match "
                             f"value shape {_seq_first(value.shape, batch_first)}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias,
                                        num_heads)
    else:
        q, k, v = _in_projection(query, key, value, _separate(q_proj_weight, "q"),
                                 _separate(k_proj_weight, "k"), _separate(v_proj_weight, "v"),
                                 in_proj_bias, num_heads)

    mask = None if attn_mask is None else _head_mask(attn_mask, tgt_len, src_len, bsz,
                                                     num_heads)
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        shape = (bsz, 1, num_heads, head_dim) if batch_first else (1, bsz, num_heads, head_dim)
        k = E.cat([k, bias_k.view(1, 1, num_heads, head_dim).expand(shape)], seq)
        v = E.cat([v, bias_v.view(1, 1, num_heads, head_dim).expand(shape)], seq)
        mask = None if mask is None else pad(mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    qh = _heads(q, batch_first)
    kh = _heads(_batch_of(k, bsz, seq), batch_first) if static_k is None else \
        _static(static_k, "static_k", bsz, num_heads, head_dim)
    vh = _heads(_batch_of(v, bsz, seq), batch_first) if static_v is None else \
        _static(static_v, "static_v", bsz, num_heads, head_dim)
    if add_zero_attn:
        kh = E.cat([kh, kh.new_zeros((bsz, num_heads, 1, head_dim))], 2)
        vh = E.cat([vh, vh.new_zeros((bsz, num_heads, 1, head_dim))], 2)
        mask = None if mask is None else pad(mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    src_len = kh.size(2)
    if key_padding_mask is not None:
        padding = _padding_mask(key_padding_mask, bsz, src_len)
        mask = padding if mask is None else mask + padding
    if not training:
        dropout_p = 0.0

    weights = None
    if need_weights:
        scores = (qh * math.sqrt(1.0 / float(head_dim))) @ kh.transpose(-2, -1)
        if mask is not None:
            scores = scores + mask
        weights = scores.softmax(-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        heads = weights @ vh
        if average_attn_weights:
            weights = weights.mean(1)
    else:
        heads = scaled_dot_product_attention(qh, kh, vh, mask, dropout_p, is_causal)
    # (N, H, L, D) -> rows of (N * L, E) or (L * N, E), one copy, as torch's
    rows = heads.permute(0, 2, 1, 3) if batch_first else heads.permute(2, 0, 1, 3)
    out = linear(rows.reshape(-1, embed_dim), out_proj_weight, out_proj_bias)
    out = out.view(query.shape[0], query.shape[1], out.size(1))
    if not is_batched:
        out = out.squeeze(0)
        weights = None if weights is None else weights.squeeze(0)
    return out, weights
