"""Resizing by a filter of variable width, one dim at a time, as torch's
``separable_upsample_generic_Nd_kernel_impl``: the antialiased modes (bilinear, bicubic
with a = -0.5, lanczos-3) in float32/float64, and every uint8 bilinear or bicubic resize.

Each output ``i`` along a dim reads the inputs ``xmin .. xmin + xsize - 1`` around its
centre ``scale * (i + 0.5)``, weighted by the filter (stretched by the scale when
downsampling, so that it averages what it skips) and normalized to sum to one (torch's
``_compute_indices_min_size_weights_aa``, in the input's float type). uint8 resizes take
torch's integer arithmetic: the weights (of the plain filters where not antialiased, the
taps past an edge folded onto it) in double, scaled to int16 by a power of two, each
output the rounded integer sum clamped to 0..255. The last dim is resized first, then the
others from the last up; a dim whose size does not change is left alone, as torch's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .interpolation_taps import guarded, pixel_scale, scattered, source_index

_F64 = np.dtype(np.float64)
_WIDTHS = {"linear": 2, "cubic": 4, "lanczos": 6}


def _cubic(x: Any, a: float) -> Any:
    x = np.abs(x)
    inner = ((a + 2) * x - (a + 3)) * x * x + 1
    outer = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, inner, np.where(x < 2, outer, 0)).astype(x.dtype)


def _sinc(x: Any) -> Any:
    safe = np.where(x == 0, 1, x) * x.dtype.type(math.pi)
    return np.where(x == 0, 1, np.sin(safe) / safe).astype(x.dtype)


def _filter(mode: str, x: Any, antialias: bool) -> Any:
    """torch's filters: a triangle, Keys' cubic (a = -0.5 antialiased, else -0.75), or
    lanczos-3 (``sinc(x) * sinc(x / 3)`` within 3)."""
    if mode == "linear":
        return np.where(np.abs(x) < 1, 1 - np.abs(x), 0).astype(x.dtype)
    if mode == "cubic":
        return _cubic(x, -0.5 if antialias else -0.75)
    x = np.abs(x)
    return np.where(x < 3, _sinc(x) * _sinc(x / x.dtype.type(3)), 0).astype(x.dtype)


def aa_weights(mode: str, size: int, out: int, scale: Any, op: Any) -> tuple[Any, Any, Any]:
    """Each output's first input, input count and normalized weights (out, width), the
    weights past its count zero; in ``op`` as torch computes them."""
    support = op.type((_WIDTHS[mode] * 0.5) * scale if scale >= 1.0 else _WIDTHS[mode] * 0.5)
    width = int(math.ceil(support)) * 2 + 1
    centre = (np.float64(scale) * (np.arange(out) + 0.5)).astype(op)
    invscale = op.type(1.0 / np.float64(scale)) if scale >= 1.0 else op.type(1.0)
    xmin = np.maximum(((centre - support).astype(_F64) + 0.5).astype(np.int64), 0)
    xsize = np.minimum(((centre + support).astype(_F64) + 0.5).astype(np.int64), size) - xmin
    xsize = np.clip(xsize, 0, width)
    j = np.arange(width)
    offset = ((j + xmin[:, None]).astype(op) - centre[:, None]).astype(_F64) + 0.5
    w = _filter(mode, (offset * np.float64(invscale)).astype(op), True)
    w = np.where(j < xsize[:, None], w, op.type(0))
    total = np.zeros(out, op)
    for k in range(width):
        total += w[:, k]
    w = np.where(total[:, None] != 0, w / np.where(total == 0, 1, total)[:, None], w)
    return xmin, xsize, w.astype(op, copy=False)


def _plain_weights(mode: str, size: int, out: int, align_corners: bool,
                   scale: float | None) -> tuple[Any, Any, Any, float]:
    """torch's ``_compute_indices_min_size_weights`` (uint8 without antialias): the filter's
    taps about the source index, those past an edge added onto the edge's; and the largest
    value any weight took while they were added."""
    width = _WIDTHS[mode]
    real = source_index(pixel_scale(size, out, align_corners, scale, _F64), out,
                        align_corners, width > 2, _F64)
    index, lam = guarded(real, size, _F64)
    half = width // 2
    low = index - half + 1
    xmin = np.maximum(low, 0)
    xsize = np.clip(np.minimum(index + half + 1, size) - xmin, 0, width)
    w = np.zeros((out, width))
    rows = np.arange(out)
    at = np.zeros(out, np.int64)
    top = 0.0
    for k in range(width):
        w[:, k] = 0.0
        value = _filter(mode, (k + 1 - half) - lam, False)
        at = np.where(low + k <= 0, 0, np.where(low + k >= size - 1, xsize - 1, at))
        w[rows, at] += value
        top = max(top, float(w[rows, at].max()))
        at = at + 1
    return xmin, xsize, w, top


def _int16(w: Any, top: float) -> tuple[Any, int]:
    """torch's int16 weights: scaled by the largest power of two that keeps them in range,
    rounded half away from zero."""
    precision = 0
    while precision < 22 and int(0.5 + top * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    v = w * (1 << precision)
    return np.where(v < 0, -0.5 + v, 0.5 + v).astype(np.int64), precision


def _pass(x: Any, axis: int, xmin: Any, xsize: Any, w: Any, precision: int | None) -> Any:
    """``x`` resized along ``axis``: each output the sum of its inputs' weighted values, in
    order (uint8: integer weights, rounded and clamped once)."""
    size = x.shape[axis]
    shape = [1] * x.ndim
    shape[axis] = -1
    z = x.astype(np.int64) if precision is not None else x
    acc: Any = 0
    for k in range(w.shape[1]):
        take = np.take(z, np.minimum(xmin + k, size - 1), axis=axis)
        term = take * w[:, k].reshape(shape)
        valid = (k < xsize).reshape(shape)
        acc = np.where(valid, acc + term if k else term, acc)
    if precision is None:
        return acc
    return np.clip((acc + (1 << (precision - 1))) >> precision, 0, 255).astype(np.uint8)


def _weights(mode: str, size: int, out: int, align_corners: bool, scale: float | None,
             antialias: bool, op: Any) -> tuple[Any, Any, Any, int | None]:
    if op != np.dtype(np.uint8):
        ratio = pixel_scale(size, out, align_corners, scale, op)
        return (*aa_weights(mode, size, out, ratio, op), None)
    if antialias:
        ratio = pixel_scale(size, out, align_corners, scale, _F64)
        xmin, xsize, w = aa_weights(mode, size, out, ratio, _F64)
        top = float(w.max(initial=0.0))
    else:
        xmin, xsize, w, top = _plain_weights(mode, size, out, align_corners, scale)
    return (xmin, xsize, *_int16(w, top))


def resized(x: Any, mode: str, output_size: tuple[int, ...], align_corners: bool,
            scales: tuple[float | None, ...], antialias: bool) -> Any:
    """``x`` (N, C, *spatial) resized to ``output_size``, the last dim first."""
    nd = len(output_size)
    z = x
    for d in [nd - 1] + list(range(nd - 2, -1, -1)):
        axis = x.ndim - nd + d
        if z.shape[axis] == output_size[d]:
            continue
        xmin, xsize, w, precision = _weights(mode, z.shape[axis], output_size[d],
                                             align_corners, scales[d], antialias, x.dtype)
        z = _pass(z, axis, xmin, xsize, w, precision)
    return z.astype(x.dtype, copy=False)


def resized_backward(g: Any, mode: str, input_size: tuple[int, ...], align_corners: bool,
                     scales: tuple[float | None, ...]) -> Any:
    """The adjoint of an antialiased ``resized``: each gradient added, weighted, at the
    inputs its output read (float32/float64)."""
    nd = len(scales)
    gi = g
    for d in range(nd):
        axis = 2 + d
        size, out = input_size[axis], g.shape[axis]
        ratio = pixel_scale(size, out, align_corners, scales[d], g.dtype)
        xmin, _, w = aa_weights(mode, size, out, ratio, g.dtype)
        index = np.minimum(xmin[:, None] + np.arange(w.shape[1]), size - 1)
        gi = scattered(gi, axis, (index, w), size)
    return gi.astype(g.dtype, copy=False)
