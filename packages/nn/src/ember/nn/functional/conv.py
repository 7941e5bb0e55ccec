"""Convolutions: torch.nn.functional's conv1d/2d/3d (``padding`` also 'same' or 'valid'),
conv_transpose1d/2d/3d and conv_tbc, over tensor-core's ``convolution`` primitive."""

from __future__ import annotations

from typing import Any

import ember.core as E
from ember.core import Tensor
from ember.core.function_modes import public
from ember.core.ops import convolution as C

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "conv_tbc"]

conv1d = E.conv1d
conv2d = E.conv2d
conv3d = E.conv3d


def _ints_only(op: str, padding: Any) -> None:
    # torch's transposed convolutions parse padding as ints: 'same' and 'valid' are refused
    if isinstance(padding, str):
        raise TypeError(f"{op}(): argument 'padding' must be tuple of ints, not str")


@public
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """torch.nn.functional.conv_transpose1d: the 1-d transposed convolution of ``input``
    (N, C, L) or (C, L) with ``weight`` (C, O/groups, K)."""
    _ints_only("conv_transpose1d", padding)
    return C.conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


@public
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """torch.nn.functional.conv_transpose2d: the 2-d transposed convolution of ``input``
    (N, C, H, W) or (C, H, W) with ``weight`` (C, O/groups, kH, kW)."""
    _ints_only("conv_transpose2d", padding)
    return C.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


@public
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """torch.nn.functional.conv_transpose3d: the 3-d transposed convolution of ``input``
    (N, C, D, H, W) or (C, D, H, W) with ``weight`` (C, O/groups, kD, kH, kW)."""
    _ints_only("conv_transpose3d", padding)
    return C.conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """torch.nn.functional.conv_tbc: the 1-d convolution of a (time, batch, in_channels)
    ``input`` with a (kernel_width, in_channels, out_channels) ``weight``, ``pad`` steps of
    zeros at both ends of time; the result is (time, batch, out_channels)."""
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output "
                           "channels).")
    out = C.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)
