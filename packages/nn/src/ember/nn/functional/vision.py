"""Resampling and rearranging images: torch.nn.functional's interpolate and its upsample
aliases (tensor-core's primitives), pixel_shuffle, pixel_unshuffle, channel_shuffle,
native_channel_shuffle, unfold (im2col) and fold (col2im).

``unfold`` copies a strided view of the padded input (one ``Tensor.unfold`` per spatial
dim) into columns; ``fold``, its adjoint, adds the columns into the padded output one
strided slice per kernel offset. Each is the other's gradient (and so is differentiable
again), as in torch.
"""

from __future__ import annotations

from typing import Any

import ember.core as E
from ember.autograd import Function
from ember.core import Tensor
from ember.core.ops import interpolation
from ember.core.ops.operands import not_implemented

from .padding import pad
from .pooling import ntuple

Ints = tuple[int, ...]

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear",
           "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle",
           "unfold", "fold"]

interpolate = interpolation.interpolate
upsample = interpolation.upsample
upsample_nearest = interpolation.upsample_nearest
upsample_bilinear = interpolation.upsample_bilinear


def _factor(op: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{op}(): argument '{name}' (position 2) must be int, not "
                        f"{type(value).__name__}")
    return value


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """torch.nn.functional.pixel_shuffle: (*, C * r**2, H, W) -> (*, C, H * r, W * r), each
    group of r**2 channels spread over an r x r block of pixels."""
    r = _factor("pixel_shuffle", "upscale_factor", upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    n = len(lead)
    blocks = input.reshape(*lead, c // (r * r), r, r, h, w)
    order = list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2]
    return blocks.permute(*order).reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """torch.nn.functional.pixel_unshuffle: (*, C, H * r, W * r) -> (*, C * r**2, H, W), the
    inverse of ``pixel_shuffle``."""
    r = _factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by "
                           f"downscale_factor, but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, "
                           f"but input.size(-1)={w} is not divisible by {r}")
    n = len(lead)
    blocks = input.reshape(*lead, c, h // r, r, w // r, r)
    order = list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3]
    return blocks.permute(*order).reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """torch.nn.functional.channel_shuffle: the channels (dim 1) of (N, C, *) in ``groups``
    groups, interleaved: channel ``g * C/groups + i`` moves to ``i * groups + g``."""
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    n, rest = input.shape[0], input.shape[2:]
    grouped = input.reshape(n, groups, c // groups, *rest)
    return grouped.transpose(1, 2).reshape(input.shape)


native_channel_shuffle = channel_shuffle


def _pairs(kernel_size: Any, dilation: Any, padding: Any, stride: Any
           ) -> tuple[tuple[int, ...], ...]:
    values = tuple(ntuple(v, 2) for v in (kernel_size, dilation, padding, stride))
    for name, v in zip(("kernel_size", "dilation", "padding", "stride"), values):
        if len(v) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
    return values


def _check_block_params(k: tuple[int, ...], d: tuple[int, ...], p: tuple[int, ...],
                        s: tuple[int, ...], stride_first: bool) -> None:
    checks = [
        (k[0] > 0 and k[1] > 0, f"kernel size should be greater than zero, but got "
                                f"kernel_height: {k[0]} kernel_width: {k[1]}"),
        (d[0] > 0 and d[1] > 0, f"dilation should be greater than zero, but got "
                                f"dilation_height: {d[0]} dilation_width: {d[1]}"),
        (p[0] >= 0 and p[1] >= 0, f"padding should be non-negative, but got pad_height: "
                                  f"{p[0]} pad_width: {p[1]}"),
        (s[0] > 0 and s[1] > 0, f"stride should be greater than zero, but got stride_height: "
                                f"{s[0]} stride_width: {s[1]}")]
    if stride_first:  # (col2im checks the stride second)
        checks.insert(1, checks.pop())
    for ok, message in checks:
        if not ok:
            raise RuntimeError(message)


def _blocks(size: int, k: int, d: int, p: int, s: int) -> int:
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """torch.nn.functional.unfold (im2col): the sliding blocks of (N, C, H, W) or (C, H, W)
    as columns, (N, C * kH * kW, L) with L the number of blocks."""
    k, d, p, s = _pairs(kernel_size, dilation, padding, stride)
    _check_block_params(k, d, p, s, False)
    valid = input.size(1) != 0 and input.size(2) != 0
    if not (input.ndim == 3 and input.shape[0] and valid
            or input.ndim == 4 and valid and input.shape[3] != 0):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    h, w = input.shape[-2:]
    oh, ow = _blocks(h, k[0], d[0], p[0], s[0]), _blocks(w, k[1], d[1], p[1], s[1])
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size=({k[0]}, "
                           f"{k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), "
                           f"calculated shape of the array of sliding blocks as ({oh}, {ow}), "
                           f"but its components must be at least one.")
    if input.dtype.category < 2 and input.dtype != E.bool:
        raise not_implemented("im2col_out_cpu", input.dtype)
    x = input if input.ndim == 4 else input.unsqueeze(0)
    cols = _Im2Col.apply(x, k, d, p, s)
    return cols if input.ndim == 4 else cols.squeeze(0)


class _Im2Col(Function):
    """im2col: the padded image's sliding blocks, read through a strided view (one
    ``Tensor.unfold`` per spatial dim, every d-th element) and copied into columns; its
    gradient is col2im (``fold``) of the columns', as torch's."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, k: Ints, d: Ints, p: Ints, s: Ints) -> Tensor:
        ctx.geometry = (tuple(x.shape[2:]), k, d, p, s)
        if p[0] or p[1]:
            x = pad(x, (p[1], p[1], p[0], p[0]))
        reach = (d[0] * (k[0] - 1) + 1, d[1] * (k[1] - 1) + 1)
        # (N, C, oh, ow, reach_h, reach_w) views of the padded input
        windows = x.unfold(2, reach[0], s[0]).unfold(3, reach[1], s[1])[..., ::d[0], ::d[1]]
        n, c, oh, ow = windows.shape[:4]
        return windows.permute(0, 1, 4, 5, 2, 3).reshape(n, c * k[0] * k[1], oh * ow)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None, None, None, None]:
        size, k, d, p, s = ctx.geometry
        return _Col2Im.apply(grad, size, k, d, p, s), None, None, None, None


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,
         padding: Any = 0, stride: Any = 1) -> Tensor:
    """torch.nn.functional.fold (col2im): columns (N, C * kH * kW, L) or (C * kH * kW, L)
    summed back into an (N, C, *output_size) image, overlapping entries added."""
    size = ntuple(output_size, 2)
    if len(size) != 2:
        raise RuntimeError(f"It is expected output_size equals to 2, but got size {len(size)}")
    k, d, p, s = _pairs(kernel_size, dilation, padding, stride)
    _check_block_params(k, d, p, s, True)
    if not (input.ndim == 2 and input.shape[0] != 0 and input.shape[1] != 0
            or input.ndim == 3 and input.shape[1] != 0 and input.shape[2] != 0):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    batch_dim = 0 if input.ndim == 3 else -1
    planes, length = input.shape[batch_dim + 1], input.shape[batch_dim + 2]
    if planes % (k[0] * k[1]):
        # (torch's message names dims 1 and 2 of a batched input, batched or not)
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={planes} and "
                           f"kernel_size=({k[0]}, {k[1]}).")
    h, w = size
    oh, ow = _blocks(h, k[0], d[0], p[0], s[0]), _blocks(w, k[1], d[1], p[1], s[1])
    described = (f"Given output_size=({h}, {w}), kernel_size=({k[0]}, {k[1]}), dilation=("
                 f"{d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), ")
    if length != oh * ow:
        raise RuntimeError(f"{described}expected size of input's dimension 2 to match the "
                           f"calculated number of sliding blocks {oh} * {ow} = {oh * ow}, but "
                           f"got input.size(2)={length}.")
    if oh < 1 or ow < 1:
        raise RuntimeError(f"{described}calculated shape of the array of sliding blocks as "
                           f"({oh}, {ow}), which is too small (non-positive)")
    if h < 1 or w < 1:
        raise RuntimeError(f"Expected output spatial size to be positive, but got: "
                           f"output_size=({h}, {w}).")
    if input.dtype.category < 2:
        raise not_implemented("col2im_out_cpu", input.dtype)
    cols = input if input.ndim == 3 else input.unsqueeze(0)
    out = _Col2Im.apply(cols, (h, w), k, d, p, s)
    return out if input.ndim == 3 else out.squeeze(0)


class _Col2Im(Function):
    """col2im: each column entry added into its place of the padded image, one strided
    slice per kernel offset; its gradient is im2col (``unfold``) of the image's, as
    torch's."""

    @staticmethod
    def forward(ctx: Any, cols: Tensor, size: tuple[int, int], k: Ints, d: Ints, p: Ints,
                s: Ints) -> Tensor:
        ctx.geometry = (k, d, p, s)
        (h, w), n = size, cols.shape[0]
        oh, ow = _blocks(h, k[0], d[0], p[0], s[0]), _blocks(w, k[1], d[1], p[1], s[1])
        blocks = cols.reshape(n, cols.shape[1] // (k[0] * k[1]), k[0], k[1], oh, ow)
        image = cols.new_zeros((n, blocks.shape[1], h + 2 * p[0], w + 2 * p[1]))
        for i in range(k[0]):
            for j in range(k[1]):
                image[:, :, i * d[0]:i * d[0] + (oh - 1) * s[0] + 1:s[0],
                      j * d[1]:j * d[1] + (ow - 1) * s[1] + 1:s[1]] += blocks[:, :, i, j]
        return image[:, :, p[0]:p[0] + h, p[1]:p[1] + w].contiguous()

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None, None, None, None, None]:
        k, d, p, s = ctx.geometry
        return _Im2Col.apply(grad, k, d, p, s), None, None, None, None, None
