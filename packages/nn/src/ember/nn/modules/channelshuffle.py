"""ChannelShuffle: the channels of each sample interleaved across groups (ShuffleNet)."""

from __future__ import annotations

import ember.core as E

from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """torch.nn.ChannelShuffle: the channels of an (N, C, *) input, seen as ``groups`` rows
    of C / groups, transposed: (N, g, C/g, *) to (N, C/g, g, *), flattened back."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
