"""torch.nn's Embedding (a lookup table of rows) and EmbeddingBag (sums, means or maxima
of bags of rows), with ``from_pretrained``; weights drawn from N(0, 1), the
``padding_idx`` row zero."""

from __future__ import annotations

from typing import Any

import ember.autograd as ag
import ember.core as E

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


def _padding_index(padding_idx: int | None, num_embeddings: int, name: str) -> int | None:
    """``padding_idx`` checked against ``num_embeddings`` and made non-negative."""
    if padding_idx is None:
        return None
    if padding_idx > 0 and padding_idx >= num_embeddings \
            or padding_idx < 0 and padding_idx < -num_embeddings:
        raise AssertionError(f"{name} must be within num_embeddings")
    return padding_idx + num_embeddings if padding_idx < 0 else padding_idx


def _table(num_embeddings: int, embedding_dim: int, weight: E.Tensor | None,
           requires_grad: bool, device: Any, dtype: Any) -> tuple[Parameter, bool]:
    """The weight Parameter: ``weight``'s storage (its shape checked), or a new one; and
    whether it is new (so needs initialising)."""
    if weight is None:
        return Parameter(E.empty((num_embeddings, embedding_dim), device=device, dtype=dtype),
                         requires_grad=requires_grad), True
    if list(weight.shape) != [num_embeddings, embedding_dim]:
        raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
    return Parameter(weight, requires_grad=requires_grad), False


def _check_pretrained(embeddings: E.Tensor) -> None:
    if embeddings.dim() != 2:
        raise AssertionError("Embeddings parameter is expected to be 2-dimensional")


class _Table(Module):
    """What Embedding and EmbeddingBag share: the weight table and its initialisation."""

    num_embeddings: int
    embedding_dim: int
    padding_idx: int | None
    weight: Parameter

    def reset_parameters(self) -> None:
        """Weight drawn from N(0, 1), the ``padding_idx`` row zero."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with ag.no_grad():
                self.weight[self.padding_idx].fill_(0)


class Embedding(_Table):
    """torch.nn.Embedding: the rows of ``weight`` (num_embeddings, embedding_dim) at the
    integer indices of the input. ``padding_idx``'s row gets no gradient; ``max_norm``
    renormalizes the looked-up rows in place; ``scale_grad_by_freq`` divides each row's
    gradient by its index's count in the batch; ``sparse`` is accepted (the gradient is
    dense)."""

    max_norm: float | None
    norm_type: float
    scale_grad_by_freq: bool
    sparse: bool

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: E.Tensor | None = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _padding_index(padding_idx, num_embeddings, "Padding_idx")
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.weight, fresh = _table(num_embeddings, embedding_dim, _weight, not _freeze,
                                    device, dtype)
        if fresh:
            self.reset_parameters()
        self.sparse = sparse

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: E.Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding whose weight is the 2-d ``embeddings`` (sharing its storage),
        trained unless ``freeze``."""
        _check_pretrained(embeddings)
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                   _freeze=freeze, padding_idx=padding_idx, max_norm=max_norm,
                   norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(_Table):
    """torch.nn.EmbeddingBag: the sum, mean or max (``mode``) of each bag of rows, without
    the rows themselves being made. A 2-d input is one bag per row; a 1-d one is cut into
    bags at ``offsets`` (``include_last_offset``: its last entry ends the last bag).
    ``per_sample_weights`` (mode 'sum') scales each row; ``padding_idx`` rows take no
    part."""

    max_norm: float | None
    norm_type: float
    scale_grad_by_freq: bool
    mode: str
    sparse: bool
    include_last_offset: bool

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: E.Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _padding_index(padding_idx, num_embeddings, "padding_idx")
        self.weight, fresh = _table(num_embeddings, embedding_dim, _weight, True, device,
                                    dtype)
        if fresh:
            self.reset_parameters()
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def forward(self, input: E.Tensor, offsets: E.Tensor | None = None,
                per_sample_weights: E.Tensor | None = None) -> E.Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings!r}, {self.embedding_dim!r}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: E.Tensor, freeze: bool = True,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag whose weight is the 2-d ``embeddings`` (sharing its storage),
        trained unless ``freeze``."""
        _check_pretrained(embeddings)
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                  max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
