"""Where each output element of an interpolation reads the input, as torch's CPU kernels
compute it: along one resized dim, output ``i`` reads a few input elements (its taps) with
weights, the same for every row. Every mode is separable, so these per-dim taps are all
the kernels need.

The arithmetic is torch's (``UpSample.h``, ``UpSampleKernel.cpp``), in its types: the
scale and source index in the input's ``opmath`` type (float32 for float16 and bfloat16
inputs, float64 for float64 ones), the source index of a half-pixel grid rounded once from
``scale * (i + 0.5) - 0.5`` (torch's build fuses it into one multiply-add), floors taken of
the index rounded to float32 (``floorf``). Indices must agree with torch's exactly (a
nearest neighbour one off is a different value); the weights agree to rounding.

``nearest`` has two formulas in torch: its generic kernel computes the index in the
opmath type, its channels-last kernel and every backward in float32 with shortcuts for
the same size and twice it (``nearest_idx``); ``nearest-exact`` likewise (the generic
kernel rounds the half-pixel source index, the other floors ``(i + 0.5) * scale``).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

Taps = tuple[Any, Any]  # (indices (out, k) int64, weights (out, k) or None for nearest)
_F32, _F64, _I64 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64)
_CUBIC_A = -0.75


def opmath(dtype: Any) -> Any:
    """The dtype torch computes an interpolation of ``dtype`` in."""
    return _F64 if dtype == _F64 else _F32


def _scale_value(scale: float | None, size: int, out: int, op: Any) -> Any:
    """torch's ``compute_scales_value``: the user's scale inverted, or the sizes' ratio."""
    if scale is not None and scale > 0:
        return op.type(1.0 / scale)
    return op.type(size) / op.type(out)


def pixel_scale(size: int, out: int, align_corners: bool, scale: float | None,
                op: Any) -> Any:
    """torch's ``area_pixel_compute_scale``."""
    if align_corners:
        return op.type(size - 1) / op.type(out - 1) if out > 1 else op.type(0)
    return _scale_value(scale, size, out, op)


def source_index(ratio: Any, out: int, align_corners: bool, cubic: bool, op: Any) -> Any:
    """torch's ``area_pixel_compute_source_index`` of every output index (clamped at 0
    except for cubic taps)."""
    i = np.arange(out, dtype=op)
    if align_corners:
        return ratio * i
    if op == _F32:  # one rounding of the multiply-add, as the fused instruction
        src = (np.float64(ratio) * (i + op.type(0.5)).astype(_F64) - 0.5).astype(_F32)
    else:
        src = ratio * (i + 0.5) - 0.5
    return src if cubic else np.maximum(src, op.type(0))


def _floorf(v: Any) -> Any:
    return np.floor(v.astype(_F32)).astype(_I64)


def guarded(real: Any, size: int, op: Any) -> tuple[Any, Any]:
    """torch's ``guard_index_and_lambda``: the index below ``real`` and the fraction past it."""
    index = np.minimum(_floorf(real), size - 1)
    return index, np.clip(real - index.astype(op), op.type(0), op.type(1))


def nearest_taps(size: int, out: int, scale: float | None, op: Any, exact: bool,
                 generic: bool) -> Taps:
    """``nearest`` (or ``nearest-exact``) indices; ``generic``: as torch's generic forward
    kernel computes them, else as its channels-last kernel and its backward."""
    if generic:
        ratio = _scale_value(scale, size, out, op)
        if exact:
            src = source_index(ratio, out, False, False, op)
            index = np.floor((src.astype(_F64) + 0.5).astype(_F32)).astype(_I64)
        else:
            index = _floorf(ratio * np.arange(out, dtype=op))
    elif exact:
        ratio = _scale_value(scale, size, out, _F32)
        index = _floorf((np.arange(out) + 0.5) * np.float64(ratio))
    elif out == size:
        index = np.arange(out, dtype=_I64)
    elif out == 2 * size:
        index = np.arange(out, dtype=_I64) >> 1
    else:
        index = _floorf(np.arange(out, dtype=_F32) * _scale_value(scale, size, out, _F32))
    return np.minimum(index, size - 1)[:, None], None


def linear_taps(size: int, out: int, align_corners: bool, scale: float | None,
                op: Any) -> Taps:
    """The two indices and weights of each output (torch's
    ``compute_source_index_and_lambda``)."""
    if out == size:
        i = np.arange(out, dtype=_I64)
        return np.stack([i, i], 1), np.stack([np.ones(out, op), np.zeros(out, op)], 1)
    real = source_index(pixel_scale(size, out, align_corners, scale, op), out,
                        align_corners, False, op)
    i0, l1 = guarded(real, size, op)
    i1 = i0 + (i0 < size - 1)
    return np.stack([i0, i1], 1), np.stack([op.type(1) - l1, l1], 1)


def _cubic1(x: Any, a: Any) -> Any:
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic2(x: Any, a: Any) -> Any:
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def cubic_taps(size: int, out: int, align_corners: bool, scale: float | None,
               op: Any) -> Taps:
    """The four indices (clamped to the input) and Keys-cubic weights (a = -0.75) of each
    output (torch's ``HelperInterpCubic.compute_indices_weights``)."""
    real = source_index(pixel_scale(size, out, align_corners, scale, op), out,
                        align_corners, True, op)
    i0, t = guarded(real, size, op)
    a, one = op.type(_CUBIC_A), op.type(1)
    w = np.stack([_cubic2(t + one, a), _cubic1(t, a), _cubic1(one - t, a),
                  _cubic2(one - t + one, a)], 1)
    return np.clip(i0[:, None] + np.arange(-1, 3), 0, size - 1), w.astype(op, copy=False)


@functools.lru_cache(maxsize=256)
def taps(mode: str, size: int, out: int, align_corners: bool, scale: float | None,
         op: Any, generic: bool = True) -> Taps:
    """The taps of ``mode`` ('nearest', 'nearest-exact', 'linear' or 'cubic') along one dim
    of ``size`` resized to ``out`` (computed once per arguments: read-only arrays)."""
    if mode == "linear":
        found = linear_taps(size, out, align_corners, scale, op)
    elif mode == "cubic":
        found = cubic_taps(size, out, align_corners, scale, op)
    else:
        found = nearest_taps(size, out, scale, op, mode == "nearest-exact", generic)
    for a in found:
        if a is not None:
            a.setflags(write=False)
    return found


def stored(mode: str, w: Any, dtype: Any, op: Any) -> Any:
    """Weights as torch's generic kernel stores them for a float16 or bfloat16 input: in
    that dtype, a linear pair's first one minus its rounded second."""
    if mode != "linear":
        return w.astype(dtype).astype(op)
    second = w[:, 1].astype(dtype)
    first = (op.type(1) - second.astype(op)).astype(dtype)
    return np.stack([first, second], 1).astype(op)


def resampled(x: Any, axis: int, t: Taps, op: Any) -> Any:
    """``x`` resized along ``axis`` by taps ``t``: the weighted sum of its taps, in order,
    in ``op`` (nearest: the input's values)."""
    index, w = t
    if w is None:
        return np.take(x, index[:, 0], axis=axis)
    shape = [1] * x.ndim
    shape[axis] = -1
    acc = np.take(x, index[:, 0], axis=axis) * w[:, 0].reshape(shape)
    for j in range(1, index.shape[1]):
        acc += np.take(x, index[:, j], axis=axis) * w[:, j].reshape(shape)
    return acc


def scattered(g: Any, axis: int, t: Taps, size: int) -> Any:
    """The adjoint of ``resampled``: each output's gradient, weighted, added at its taps
    (every tap's indices are non-decreasing in the output index, so each run of equal
    indices sums in one ``reduceat``)."""
    index, w = t
    shape = [1] * g.ndim
    shape[axis] = -1
    lead = (slice(None),) * axis
    gi = np.zeros(g.shape[:axis] + (size,) + g.shape[axis + 1:], g.dtype)
    for j in range(index.shape[1]):
        share = g if w is None else g * w[:, j].reshape(shape)
        hit, first = np.unique(index[:, j], return_index=True)
        gi[lead + (hit,)] += np.add.reduceat(share, first, axis=axis)
    return gi
