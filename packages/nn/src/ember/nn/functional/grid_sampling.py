"""Sampling at given coordinates: torch.nn.functional's grid_sample (bilinear, nearest,
bicubic; padding 'zeros', 'border', 'reflection') and affine_grid.

grid_sample is composed as torch's CPU kernel computes it: each grid coordinate
unnormalized from [-1, 1] to pixels, folded into the input by the padding mode (clipped,
or reflected and clipped, with a gradient of 0 on the borders, as torch's), then the
values at the neighbouring pixels gathered (one ``index_select`` of the channels-last
input for every neighbour at once) and weighted. Autograd then gives torch's gradients of
both the input (the weights scattered back) and the grid (the weights' derivatives); a
nearest-neighbour sampling does not depend on its grid, which gets no gradient (torch's is
zeros).
"""

from __future__ import annotations

import warnings
from itertools import product
from typing import Any

import ember.core as E
from ember.core import Tensor
from ember.core.dtypes import scalar_type_name
from ember.core.function_modes import public
from ember.core.ops.operands import not_implemented

__all__ = ["grid_sample", "affine_grid"]

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the old "
                  "behavior is desired. See the documentation of grid_sample for details.")
_CUBIC_A = -0.75


def _check(input: Tensor, grid: Tensor, mode: str) -> None:
    """torch's ``grid_sampler`` checks, in its order."""
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input.dtype)} but found "
                           f"{scalar_type_name(grid.dtype)}")
    if input.size(0) != grid.size(0):
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got {sizes}")
    if grid.size(-1) != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in "
                           f"last dimension, but got grid with sizes {list(grid.shape)}")
    for i in range(2, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {i} being empty")
    if input.ndim not in (4, 5) or input.ndim != grid.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of "
                           f"dimensions, but got {sizes}")
    if mode == "bicubic" and input.ndim != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.dtype.is_floating_point:
        raise not_implemented(f"grid_sampler_{input.ndim - 2}d_cpu_kernel_impl", input.dtype)


def _unnormalize(g: Tensor, size: int, align_corners: bool) -> Tensor:
    """[-1, 1] to pixels: the corner pixels' centres (``align_corners``) or the image's
    edges at +-1, as torch's CPU kernel scales it."""
    if align_corners:
        return (g + 1) * ((size - 1) / 2)
    return (g + 1) * (size / 2) - 0.5


def _clipped(c: Tensor, size: int) -> Tensor:
    # clamped to [0, size - 1], with no gradient on the borders themselves, as torch's
    top = float(size - 1)
    return E.where(c <= 0, 0.0, E.where(c >= top, top, c))


def _reflected(c: Tensor, size: int, align_corners: bool) -> Tensor:
    """``c`` reflected about the borders (the corner pixels' centres, or the image's edges)
    until inside, as torch's CPU kernel folds it."""
    twice_span = 2 * (size - 1) if align_corners else 2 * size
    if twice_span == 0:
        return c * 0.0
    t = c if align_corners else c + 0.5
    a = E.where(t < 0, -t, t)
    extra = a - (a / twice_span).trunc().detach() * twice_span
    flipped = twice_span - extra
    r = E.where(extra > flipped, flipped, extra)
    return r if align_corners else r - 0.5


def _source(g: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    c = _unnormalize(g, size, align_corners)
    if padding_mode == "border":
        return _clipped(c, size)
    if padding_mode == "reflection":
        return _clipped(_reflected(c, size, align_corners), size)
    return c


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """torch's cubic convolution coefficients (A = -0.75) of the taps at -1, 0, 1, 2."""
    a = _CUBIC_A

    def near(x: Tensor) -> Tensor:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Tensor) -> Tensor:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _gather(input: Tensor, taps: list[tuple[list[Tensor], Tensor]], shape: tuple[int, ...]
            ) -> Tensor:
    """``sum(weight * input[index])`` over the taps, each a list of per-dim integer pixel
    coordinates (N, *out) and its weight (N, *out); out-of-bounds taps read zeros."""
    n, c = input.shape[:2]
    spatial = input.shape[2:]
    # the input as (N * plane, C) rows: each tap gathers whole pixels, all channels at once
    rows = input.reshape(n, c, -1).transpose(1, 2).reshape(-1, c)
    plane = rows.shape[0] // max(n, 1)
    base = (E.arange(n, device=input.device) * plane).view(n, *([1] * (len(shape) - 2)))
    indices, inside, weights = [], [], []
    for coords, weight in taps:
        flat: Any = 0
        ok: Any = True
        for x, s in zip(coords, spatial):
            ok = ok & (x >= 0) & (x < s)
            flat = flat * s + x.clamp(0, s - 1)
        indices.append(base + flat)
        inside.append(ok)
        weights.append(weight)
    index = E.stack(indices)  # (taps, N, *out)
    values = rows.index_select(0, index.reshape(-1)).view(*index.shape, c)
    values = E.where(E.stack(inside).unsqueeze(-1), values, 0.0)
    out = (values * E.stack(weights).unsqueeze(-1)).sum(0)  # (N, *out, C)
    return out.movedim(-1, 1)


@public
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """torch.nn.functional.grid_sample: ``input`` (N, C, H, W) or (N, C, D, H, W) sampled
    at ``grid`` (N, H_out, W_out, 2) or (N, D_out, H_out, W_out, 3), whose last dim holds
    (x, y[, z]) in [-1, 1]. ``mode``: 'bilinear' (trilinear in 3-d), 'nearest' or 'bicubic'
    (2-d); ``padding_mode``: what lies outside: 'zeros', 'border' (the edge pixels) or
    'reflection'; ``align_corners``: -1 and 1 are the corner pixels' centres, else their
    outer edges."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    _check(input, grid, mode)
    nd = input.ndim - 2
    spatial = tuple(input.shape[2:])
    shape = (input.shape[0], input.shape[1]) + tuple(grid.shape[1:-1])
    # grid's last dim lists x (the last input dim) first
    gs = [grid[..., nd - 1 - i] for i in range(nd)]
    if mode == "bicubic":
        return _bicubic(input, gs, spatial, shape, padding_mode, align_corners)
    coords = [_source(g, s, padding_mode, align_corners) for g, s in zip(gs, spatial)]
    if mode == "nearest":
        nearest = [c.round().detach().long() for c in coords]
        return _gather(input, [(nearest, E.ones_like(coords[0]))], shape)
    lows = [c.floor().detach() for c in coords]
    # each dim's (pixel, weight) pairs: torch's (x1 - x) and (x - x0)
    pairs = [((lo.long(), lo + 1 - c), (lo.long() + 1, c - lo)) for c, lo in zip(coords, lows)]
    taps = []
    for corner in product(*pairs):
        weight = corner[0][1]
        for _, w in corner[1:]:
            weight = weight * w
        taps.append(([x for x, _ in corner], weight))
    return _gather(input, taps, shape)


def _bicubic(input: Tensor, gs: list[Tensor], spatial: tuple[int, ...],
             shape: tuple[int, ...], padding_mode: str, align_corners: bool) -> Tensor:
    """torch's bicubic sampling: 4 x 4 taps around the unnormalized (unpadded) point, each
    tap's pixel folded in by the padding mode."""
    axes = []
    for g, s in zip(gs, spatial):
        c = _unnormalize(g, s, align_corners)
        lo = c.floor().detach()
        weights = _cubic_weights(c - lo)
        pixels = []
        for k in range(4):
            at = lo + (k - 1)
            if padding_mode != "zeros":
                at = _source_pixel(at, s, padding_mode, align_corners)
            pixels.append(at.long())
        axes.append(list(zip(pixels, weights)))
    taps = [([x for x, _ in corner], corner[0][1] * corner[1][1]) for corner in product(*axes)]
    return _gather(input, taps, shape)


def _source_pixel(at: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    if padding_mode == "border":
        return at.clamp(0, size - 1)
    return _reflected(at, size, align_corners).clamp(0, size - 1)


def _base_line(steps: int, align_corners: bool, like: Tensor) -> Tensor:
    """torch's ``linspace_from_neg_one``: ``steps`` points from -1 to 1 (scaled in to the
    pixels' centres without ``align_corners``), 0 for a single step."""
    if steps <= 1:
        return E.zeros((), dtype=like.dtype, device=like.device)
    line = E.linspace(-1, 1, steps, dtype=like.dtype, device=like.device)
    return line if align_corners else line * (steps - 1) / steps


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """torch.nn.functional.affine_grid: the sampling grid (N, H, W, 2) or (N, D, H, W, 3)
    that the affine matrices ``theta`` (N, 2, 3) or (N, 3, 4) make of the output ``size``
    (N, C, H, W) or (N, C, D, H, W), for ``grid_sample``."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.ndim != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
    elif len(size) == 5:
        if theta.ndim != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n, nd = size[0], len(spatial)
    # the base grid (N, *spatial, nd + 1): x (the last dim) first, then y (and z), then 1
    base = theta.new_empty((n, *spatial, nd + 1))
    for i in range(nd):
        line = _base_line(spatial[nd - 1 - i], align_corners, theta)
        base[..., i] = line.view(-1, *([1] * i)) if line.ndim else line
    base[..., nd] = 1
    grid = E.bmm(base.view(n, -1, nd + 1), theta.transpose(1, 2))
    return grid.view(n, *spatial, nd)
