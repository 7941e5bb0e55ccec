"""torch.nn's dropout layers: Dropout (elements), Dropout1d/2d/3d (whole channels),
AlphaDropout and FeatureAlphaDropout (which keep a SELU network's mean and variance).
They act in training only; in eval they return their input."""

from __future__ import annotations

import ember.core as E

from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]


class _DropoutNd(Module):
    """The settings every dropout layer has: ``p`` in [0, 1] and ``inplace``."""

    p: float
    inplace: bool

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """torch.nn.Dropout: in training, each element zeroed with probability ``p`` and the
    rest scaled by ``1 / (1 - p)``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """torch.nn.Dropout1d: whole channels of (N, C, L) or (C, L) inputs zeroed with
    probability ``p`` in training, the rest scaled by ``1 / (1 - p)``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """torch.nn.Dropout2d: whole channels of (N, C, H, W) or (C, H, W) inputs zeroed with
    probability ``p`` in training, the rest scaled by ``1 / (1 - p)``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """torch.nn.Dropout3d: whole channels of (N, C, D, H, W) or (C, D, H, W) inputs zeroed
    with probability ``p`` in training, the rest scaled by ``1 / (1 - p)``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """torch.nn.AlphaDropout: in training, elements set with probability ``p`` to SELU's
    negative saturation value, then all scaled and shifted to keep zero mean and unit
    variance (``inplace`` is accepted and, as in torch, unused)."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """torch.nn.FeatureAlphaDropout: alpha dropout of whole channels (dim 1)."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training)
