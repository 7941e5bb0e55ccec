"""Fold and Unfold: sliding local blocks taken out of a batched image as columns (im2col)
and summed back into one (col2im)."""

from __future__ import annotations

from typing import Any

import ember.core as E

from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """torch.nn.Fold: an (N, C * prod(kernel_size), L) or (C * prod(kernel_size), L)
    input of L blocks summed into an (N, C, *output_size) image, each block at its sliding
    position (overlaps add up)."""

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1,
                 padding: Any = 0, stride: Any = 1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, kernel_size={self.kernel_size}, " \
               f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"


class Unfold(Module):
    """torch.nn.Unfold: the sliding blocks of an (N, C, H, W) or (C, H, W) input as the
    columns of an (N, C * prod(kernel_size), L) result, L the number of blocks."""

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, dilation={self.dilation}, " \
               f"padding={self.padding}, stride={self.stride}"
