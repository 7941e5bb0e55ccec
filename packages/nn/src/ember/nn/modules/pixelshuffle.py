"""PixelShuffle and PixelUnshuffle: channels traded for spatial resolution and back."""

from __future__ import annotations

import ember.core as E

from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """torch.nn.PixelShuffle: (*, C * r**2, H, W) rearranged to (*, C, H * r, W * r),
    r = ``upscale_factor``."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """torch.nn.PixelUnshuffle: PixelShuffle's inverse, (*, C, H * r, W * r) rearranged to
    (*, C * r**2, H, W), r = ``downscale_factor``."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
