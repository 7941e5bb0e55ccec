"""The transformer layers of Attention Is All You Need, as torch.nn's: TransformerEncoderLayer,
TransformerDecoderLayer, TransformerEncoder, TransformerDecoder and Transformer."""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable
from typing import Any

import ember.autograd as ag
import ember.core as E

from .. import functional as F
from .. import init
from ..functional.multi_head_attention import _canonical_mask, _none_or_dtype
from .activation import GELU, ReLU
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .multihead_attention import MultiheadAttention
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder",
           "TransformerEncoderLayer", "TransformerDecoderLayer"]

Activation = str | Callable[[E.Tensor], E.Tensor]


def _generate_square_subsequent_mask(sz: int, device: Any = None,
                                     dtype: Any = None) -> E.Tensor:
    return E.triu(E.full((sz, sz), -math.inf, dtype=dtype, device=device), diagonal=1)


def _get_seq_len(src: E.Tensor, batch_first: bool) -> int:
    if src.ndim == 2:  # unbatched (S, E)
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask: E.Tensor | None, is_causal: bool | None = None,
                           size: int | None = None) -> bool:
    """``is_causal`` where given; where None, whether ``mask`` is the causal mask of
    ``size`` (its last but one dim by default)."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        make_causal = mask.shape == causal.shape and bool(mask.eq(causal).all())
    return make_causal


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation: str) -> Callable[[E.Tensor], E.Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class TransformerEncoderLayer(Module):
    """torch.nn.TransformerEncoderLayer: self-attention then a feed-forward block
    (``d_model`` -> ``dim_feedforward`` -> ``d_model``, ``activation`` between), each with
    dropout, a residual connection and a LayerNorm: after the residual (post-norm), or
    before the block where ``norm_first``."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Activation = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(self, src: E.Tensor, src_mask: E.Tensor | None = None,
                src_key_padding_mask: E.Tensor | None = None,
                is_causal: bool = False) -> E.Tensor:
        """``src`` (S, E), (S, N, E) or, ``batch_first``, (N, S, E) through the layer;
        ``src_mask`` (S, S) or (N * nhead, S, S) and ``src_key_padding_mask`` (N, S) are
        MultiheadAttention's ``attn_mask`` and ``key_padding_mask``; ``is_causal`` a hint
        that ``src_mask`` is the causal mask."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask",
                                               src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype,
                                   check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x: E.Tensor, attn_mask: E.Tensor | None,
                  key_padding_mask: E.Tensor | None, is_causal: bool = False) -> E.Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)  # type: ignore[no-any-return]

    def _ff_block(self, x: E.Tensor) -> E.Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)  # type: ignore[no-any-return]


class TransformerDecoderLayer(Module):
    """torch.nn.TransformerDecoderLayer: self-attention, attention over the encoder's
    output (``memory``), then a feed-forward block, each with dropout, a residual
    connection and a LayerNorm (after the residual, or before the block where
    ``norm_first``)."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Activation = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias,
                                                 **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) \
            else activation

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("activation", F.relu)
        super().__setstate__(state)

    def forward(self, tgt: E.Tensor, memory: E.Tensor, tgt_mask: E.Tensor | None = None,
                memory_mask: E.Tensor | None = None,
                tgt_key_padding_mask: E.Tensor | None = None,
                memory_key_padding_mask: E.Tensor | None = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> E.Tensor:
        """``tgt`` (T, E), (T, N, E) or, ``batch_first``, (N, T, E) through the layer,
        attending over ``memory`` (S, ...); the masks and causal hints are those of the
        self-attention (``tgt_*``) and of the attention over the memory (``memory_*``)."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                   tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                           memory_is_causal))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x: E.Tensor, attn_mask: E.Tensor | None,
                  key_padding_mask: E.Tensor | None, is_causal: bool = False) -> E.Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)  # type: ignore[no-any-return]

    def _mha_block(self, x: E.Tensor, mem: E.Tensor, attn_mask: E.Tensor | None,
                   key_padding_mask: E.Tensor | None, is_causal: bool = False) -> E.Tensor:
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)  # type: ignore[no-any-return]

    def _ff_block(self, x: E.Tensor) -> E.Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)  # type: ignore[no-any-return]


def _why_no_nested_tensor(layer: Module) -> str:
    """Why torch would not run ``layer``'s stack on nested tensors ('' where it would)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return (f"{name}.self_attn.batch_first was not True(use batch_first for better "
                "inference performance)")
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """torch.nn.TransformerEncoder: ``num_layers`` deep copies of ``encoder_layer`` in
    sequence, then ``norm`` where given.

    In inference (eval mode, no gradient wanted) with a ``src_key_padding_mask`` and no
    ``mask``, torch runs the stack on nested tensors where ``enable_nested_tensor`` and
    the layer allow it: each sequence is its first unpadded tokens (checked to be left
    aligned where ``mask_check``) and the padded positions of the output are zeros; the
    same is computed here with the padding as a mask."""

    __constants__ = ["norm"]

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why_not}", stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src: E.Tensor, mask: E.Tensor | None = None,
                src_key_padding_mask: E.Tensor | None = None,
                is_causal: bool | None = None) -> E.Tensor:
        """``src`` through the layers (and ``norm``); ``mask`` and ``src_key_padding_mask``
        as TransformerEncoderLayer's; ``is_causal`` None detects whether ``mask`` is the
        causal mask."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(mask), "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        first = self.layers[0]
        padding = self._nested_padding(src, mask, src_key_padding_mask)
        if padding is not None:
            src_key_padding_mask = padding
        is_causal = _detect_is_causal_mask(mask, is_causal,
                                           _get_seq_len(src, first.self_attn.batch_first))
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal,
                         src_key_padding_mask=src_key_padding_mask)
        if padding is not None:
            output = output.masked_fill(padding.unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _nested_padding(self, src: E.Tensor, mask: E.Tensor | None,
                        key_padding_mask: E.Tensor | None) -> E.Tensor | None:
        """Where torch would take nested tensors: the padded positions (N, S) it drops,
        those past each sequence's count of unpadded tokens; None elsewhere."""
        first = self.layers[0]
        if (not getattr(self, "use_nested_tensor", False) or first.training or src.ndim != 3
                or key_padding_mask is None or mask is not None):
            return None
        padded = key_padding_mask.ne(0)  # torch's logical_not of the float mask
        lengths = (~padded).sum(1, keepdim=True)
        trailing = E.arange(src.shape[1], device=src.device).unsqueeze(0) >= lengths
        if getattr(self, "mask_check", True) and not bool(trailing.eq(padded).all()):
            return None
        attn = first.self_attn
        weights = (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight,
                   attn.out_proj.bias, first.norm1.weight, first.norm1.bias,
                   first.norm2.weight, first.norm2.bias, first.linear1.weight,
                   first.linear1.bias, first.linear2.weight, first.linear2.bias)
        if ag.is_grad_enabled() and any(w.requires_grad for w in weights):
            return None
        return trailing


class TransformerDecoder(Module):
    """torch.nn.TransformerDecoder: ``num_layers`` deep copies of ``decoder_layer`` in
    sequence, each attending over ``memory``, then ``norm`` where given."""

    __constants__ = ["norm"]

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: E.Tensor, memory: E.Tensor, tgt_mask: E.Tensor | None = None,
                memory_mask: E.Tensor | None = None,
                tgt_key_padding_mask: E.Tensor | None = None,
                memory_key_padding_mask: E.Tensor | None = None,
                tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> E.Tensor:
        """``tgt`` through the layers (and ``norm``); the masks as TransformerDecoderLayer's;
        ``tgt_is_causal`` None detects whether ``tgt_mask`` is the causal mask."""
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """torch.nn.Transformer: a TransformerEncoder of ``num_encoder_layers`` and a
    TransformerDecoder of ``num_decoder_layers`` (or ``custom_encoder``/``custom_decoder``),
    each ending in a LayerNorm; weights of two or more dims xavier_uniform_."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Activation = F.relu,
                 custom_encoder: Any | None = None, custom_decoder: Any | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                      batch_first, norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*layer_args, **factory), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*layer_args, **factory), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: E.Tensor, tgt: E.Tensor, src_mask: E.Tensor | None = None,
                tgt_mask: E.Tensor | None = None, memory_mask: E.Tensor | None = None,
                src_key_padding_mask: E.Tensor | None = None,
                tgt_key_padding_mask: E.Tensor | None = None,
                memory_key_padding_mask: E.Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> E.Tensor:
        """The decoder's output for ``tgt`` (T, N, E) attending over the encoding of ``src``
        (S, N, E) ((N, ., E) where ``batch_first``; unbatched (., E)); ``src_mask`` (S, S),
        ``tgt_mask`` (T, T), ``memory_mask`` (T, S) and the key padding masks (N, S), (N, T),
        (N, S) as the layers'."""
        is_batched = src.ndim == 3
        batch = 0 if self.batch_first else 1
        if is_batched and src.size(batch) != tgt.size(batch):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask,  # type: ignore[no-any-return]
                            memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None,
                                        dtype: Any = None) -> E.Tensor:
        """The causal mask (sz, sz): -inf above the diagonal, 0 elsewhere (float32 by
        default)."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
