"""Triton kernels of layer and RMS normalization and their backwards, over the rows the
trailing ``normalized_shape`` dims make (a non-contiguous input is made row-major first;
results are row-major, as the ops' rule says).

Forward, one program per row: the mean (layer norm only), then the variance about it,
then the output; a row of at most ``_WHOLE`` elements is held at once, a longer one is
read in blocks, once per step. Backward: one program per row for the input's gradient
(its two row sums, then the gradient); the weight's and bias's gradients as column sums,
each program summing a tile of columns over one group of rows, the groups' sums added
after (no atomics: the sums come out the same on every run). float16 computes in float32
and rounds once; the statistics take the dtype the op's rule gives them.
"""

from __future__ import annotations

import math
from typing import Any

import triton
import triton.language as tl

from ..device import xp_of
from ..ops.normalization import (
    _layer_norm,
    _layer_norm_backward,
    _layer_norm_stat_dtype,
    _rms_norm,
    _rms_norm_backward,
)
from ..ops.operands import LOW_PRECISION
from .launching import FLOATS, block_size, compute_type, launch, warps

_WHOLE = 4096  # the longest row held at once
_CHUNK = 2048  # the block a longer row is read in
_COLUMNS = 64  # columns per program of the column sums
_TILE_ROWS = 16  # rows a column-sum program reads at once
_GROUPS = 256  # the most row groups the column sums split the rows into


@triton.jit
def _forward(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, n, eps: tl.float64,
             RMS: tl.constexpr, HAS_W: tl.constexpr, HAS_B: tl.constexpr,
             COMPUTE: tl.constexpr, BLOCK: tl.constexpr, WHOLE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, y_row = x_ptr + row * n, y_ptr + row * n
    cols = tl.arange(0, BLOCK)
    epsilon = tl.full((), eps, COMPUTE)
    mean = tl.zeros((), COMPUTE)
    if WHOLE:
        inside = cols < n
        z = tl.load(x_row + cols, mask=inside, other=0.0).to(COMPUTE)
        if not RMS:
            mean = _finite_or_nan(tl.sum(z, 0) / n)
        centered = tl.where(inside, z - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(centered * centered, 0) / n + epsilon)
        y = _scaled(centered * rstd, w_ptr, b_ptr, cols, inside, HAS_W, HAS_B, COMPUTE)
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=inside)
    else:
        acc = tl.zeros([BLOCK], COMPUTE)
        if not RMS:
            for first in range(0, n, BLOCK):
                idx = first + cols
                acc += tl.load(x_row + idx, mask=idx < n, other=0.0).to(COMPUTE)
            mean = _finite_or_nan(tl.sum(acc, 0) / n)
            acc = tl.zeros([BLOCK], COMPUTE)
        for first in range(0, n, BLOCK):
            idx = first + cols
            inside = idx < n
            z = tl.load(x_row + idx, mask=inside, other=0.0).to(COMPUTE)
            centered = tl.where(inside, z - mean, 0.0)
            acc += centered * centered
        rstd = 1.0 / tl.sqrt(tl.sum(acc, 0) / n + epsilon)
        for first in range(0, n, BLOCK):
            idx = first + cols
            inside = idx < n
            z = tl.load(x_row + idx, mask=inside, other=0.0).to(COMPUTE)
            y = _scaled((z - mean) * rstd, w_ptr, b_ptr, idx, inside, HAS_W, HAS_B, COMPUTE)
            tl.store(y_row + idx, y.to(y_ptr.dtype.element_ty), mask=inside)
    if not RMS:
        tl.store(mean_ptr + row, mean.to(mean_ptr.dtype.element_ty))
    tl.store(rstd_ptr + row, rstd.to(rstd_ptr.dtype.element_ty))


@triton.jit
def _finite_or_nan(mean):
    """The running (Welford) mean of a row holding an inf is NaN, in torch's kernel."""
    return tl.where(tl.abs(mean) == float("inf"), float("nan"), mean)


@triton.jit
def _scaled(y, w_ptr, b_ptr, idx, inside, HAS_W: tl.constexpr, HAS_B: tl.constexpr,
            COMPUTE: tl.constexpr):
    """The normalized ``y`` times the weight, plus the bias, where given."""
    if HAS_W:
        y = y * tl.load(w_ptr + idx, mask=inside, other=0.0).to(COMPUTE)
    if HAS_B:
        y = y + tl.load(b_ptr + idx, mask=inside, other=0.0).to(COMPUTE)
    return y


@triton.jit
def _weighted_grad_and_xhat(g_row, x_row, w_ptr, idx, inside, mean, rstd, HAS_W: tl.constexpr,
                            COMPUTE: tl.constexpr):
    """A block of a row's gradient times the weight (where given) and of its normalized
    input: what both passes of the input's gradient read."""
    gw = tl.load(g_row + idx, mask=inside, other=0.0).to(COMPUTE)
    if HAS_W:
        gw = gw * tl.load(w_ptr + idx, mask=inside, other=0.0).to(COMPUTE)
    xhat = (tl.load(x_row + idx, mask=inside, other=0.0).to(COMPUTE) - mean) * rstd
    return gw, xhat


@triton.jit
def _input_grad(g_ptr, x_ptr, mean_ptr, rstd_ptr, w_ptr, dx_ptr, n, RMS: tl.constexpr,
                HAS_W: tl.constexpr, COMPUTE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    g_row, x_row, dx_row = g_ptr + row * n, x_ptr + row * n, dx_ptr + row * n
    cols = tl.arange(0, BLOCK)
    mean = tl.zeros((), COMPUTE) if RMS else tl.load(mean_ptr + row).to(COMPUTE)
    rstd = tl.load(rstd_ptr + row).to(COMPUTE)
    sum_gw = tl.zeros([BLOCK], COMPUTE)
    sum_gw_xhat = tl.zeros([BLOCK], COMPUTE)
    for first in range(0, n, BLOCK):
        idx = first + cols
        inside = idx < n
        gw, xhat = _weighted_grad_and_xhat(g_row, x_row, w_ptr, idx, inside, mean, rstd,
                                           HAS_W, COMPUTE)
        sum_gw += gw
        sum_gw_xhat += gw * xhat
    mean_gw = tl.zeros((), COMPUTE) if RMS else tl.sum(sum_gw, 0) / n
    mean_gw_xhat = tl.sum(sum_gw_xhat, 0) / n
    for first in range(0, n, BLOCK):
        idx = first + cols
        inside = idx < n
        gw, xhat = _weighted_grad_and_xhat(g_row, x_row, w_ptr, idx, inside, mean, rstd,
                                           HAS_W, COMPUTE)
        dx = rstd * (gw - mean_gw - xhat * mean_gw_xhat)
        tl.store(dx_row + idx, dx.to(dx_ptr.dtype.element_ty), mask=inside)


@triton.jit
def _param_grads(g_ptr, x_ptr, mean_ptr, rstd_ptr, dw_ptr, db_ptr, rows, n, per_group,
                 RMS: tl.constexpr, WANT_DW: tl.constexpr, WANT_DB: tl.constexpr,
                 COMPUTE: tl.constexpr, COLUMNS: tl.constexpr, TILE_ROWS: tl.constexpr):
    cols = tl.program_id(0) * COLUMNS + tl.arange(0, COLUMNS)
    group = tl.program_id(1).to(tl.int64)
    first_row = group * per_group
    last_row = tl.minimum(first_row + per_group, rows)
    tile = tl.arange(0, TILE_ROWS)
    dw = tl.zeros([TILE_ROWS, COLUMNS], COMPUTE)
    db = tl.zeros([TILE_ROWS, COLUMNS], COMPUTE)
    for first in range(first_row, last_row, TILE_ROWS):
        r = first + tile
        inside = (r < last_row)[:, None] & (cols < n)[None, :]
        at = r[:, None] * n + cols[None, :]
        g = tl.load(g_ptr + at, mask=inside, other=0.0).to(COMPUTE)
        if WANT_DW:
            rstd = tl.load(rstd_ptr + r, mask=r < last_row, other=0.0).to(COMPUTE)
            if RMS:
                xhat = tl.load(x_ptr + at, mask=inside, other=0.0).to(COMPUTE) * rstd[:, None]
            else:
                mean = tl.load(mean_ptr + r, mask=r < last_row, other=0.0).to(COMPUTE)
                x = tl.load(x_ptr + at, mask=inside, other=0.0).to(COMPUTE)
                xhat = (x - mean[:, None]) * rstd[:, None]
            dw += tl.where(inside, g * xhat, 0.0)
        if WANT_DB:
            db += g
    out = group * n + cols
    if WANT_DW:
        tl.store(dw_ptr + out, tl.sum(dw, 0), mask=cols < n)
    if WANT_DB:
        tl.store(db_ptr + out, tl.sum(db, 0), mask=cols < n)


def _row_geometry(n: int) -> tuple[int, bool]:
    whole = n <= _WHOLE
    return block_size(n, _WHOLE if whole else _CHUNK), whole


def _stat_shape(x: Any, ns: tuple[int, ...]) -> tuple[int, ...]:
    return x.shape[:x.ndim - len(ns)] + (1,) * len(ns)


def _flat(xp: Any, p: Any) -> Any:
    return None if p is None else xp.ascontiguousarray(p).reshape(-1)


def _norm_forward(x: Any, w: Any, b: Any, ns: tuple[int, ...], eps: float, rms: bool,
                  stat: Any) -> tuple[Any, Any, Any]:
    xp = xp_of(x)
    x = xp.ascontiguousarray(x)
    n = math.prod(ns)
    y = xp.empty(x.shape, x.dtype)
    mean = xp.empty(_stat_shape(x, ns), stat)
    rstd = xp.empty(_stat_shape(x, ns), stat)
    w, b = _flat(xp, w), _flat(xp, b)
    block, whole = _row_geometry(n)
    launch(_forward, (x.size // n,), x, x if w is None else w, x if b is None else b, y, mean,
           rstd, n, eps, rms, w is not None, b is not None, compute_type(x.dtype), block,
           whole, num_warps=warps(block) if whole else 8)
    return y, mean, rstd


def _norm_backward(g: Any, x: Any, mean: Any, rstd: Any, w: Any, ns: tuple[int, ...],
                   mask: tuple[bool, ...], rms: bool) -> tuple[Any, Any, Any]:
    xp = xp_of(x)
    g, x = xp.ascontiguousarray(g), xp.ascontiguousarray(x)
    mean = rstd if mean is None else xp.ascontiguousarray(mean)
    rstd = xp.ascontiguousarray(rstd)
    n = math.prod(ns)
    rows = x.size // n
    compute = compute_type(x.dtype)
    dx = dw = db = None
    if mask[0]:
        dx = xp.empty(x.shape, x.dtype)
        block = block_size(n, _CHUNK)
        launch(_input_grad, (rows,), g, x, mean, rstd, x if w is None else _flat(xp, w), dx, n,
               rms, w is not None, compute, block, num_warps=warps(block))
    want_dw, want_db = mask[1], len(mask) > 2 and mask[2]
    if want_dw or want_db:
        groups = min(_GROUPS, rows)
        per_group = math.ceil(rows / groups)
        groups = math.ceil(rows / per_group)
        parts = xp.empty((2, groups, n), xp.float64 if x.dtype == xp.float64 else xp.float32)
        launch(_param_grads, (math.ceil(n / _COLUMNS), groups), g, x, mean, rstd, parts[0],
               parts[1], rows, n, per_group, rms, want_dw, want_db, compute, _COLUMNS,
               _TILE_ROWS)
        param = x.dtype if w is None else w.dtype
        if want_dw:
            dw = parts[0].sum(axis=0).astype(param, copy=False).reshape(ns)
        if want_db:
            db = parts[1].sum(axis=0).astype(param, copy=False).reshape(ns)
    return dx, dw, db


def _takes(x: Any, ns: tuple[int, ...], *params: Any) -> bool:
    """Whether the kernels take ``x`` (a float dtype they compute, rows with elements) and
    its parameters (the input's dtype, or float32 with a float16 input)."""
    return x.dtype in FLOATS and x.size > 0 and all(
        p is None or p.dtype == x.dtype or (x.dtype in LOW_PRECISION and p.dtype == xp_of(
            x).float32) for p in params)


def layer_norm(x: Any, w: Any, b: Any, *, normalized_shape: tuple[int, ...],
               eps: float) -> tuple[Any, Any, Any]:
    if not _takes(x, normalized_shape, w, b):
        return _layer_norm(x, w, b, normalized_shape=normalized_shape, eps=eps)
    return _norm_forward(x, w, b, normalized_shape, eps, False, _layer_norm_stat_dtype(x, w, b))


def layer_norm_backward(g: Any, x: Any, mean: Any, rstd: Any, w: Any, *,
                        normalized_shape: tuple[int, ...],
                        output_mask: tuple[bool, bool, bool]) -> tuple[Any, Any, Any]:
    if not _takes(x, normalized_shape, w) or g.shape != x.shape or g.dtype != x.dtype:
        return _layer_norm_backward(g, x, mean, rstd, w, normalized_shape=normalized_shape,
                                    output_mask=output_mask)
    return _norm_backward(g, x, mean, rstd, w, normalized_shape, output_mask, False)


def rms_norm(x: Any, w: Any, *, normalized_shape: tuple[int, ...],
             eps: float) -> tuple[Any, Any]:
    if not _takes(x, normalized_shape, w):
        return _rms_norm(x, w, normalized_shape=normalized_shape, eps=eps)
    stat = xp_of(x).float32 if x.dtype in LOW_PRECISION else x.dtype
    y, _, rstd = _norm_forward(x, w, None, normalized_shape, eps, True, stat)
    return y, rstd


def rms_norm_backward(g: Any, x: Any, rstd: Any, w: Any, *, normalized_shape: tuple[int, ...],
                      output_mask: tuple[bool, bool]) -> tuple[Any, Any]:
    if not _takes(x, normalized_shape, w) or g.shape != x.shape or g.dtype != x.dtype or (
            output_mask[1] and w is None):
        return _rms_norm_backward(g, x, rstd, w, normalized_shape=normalized_shape,
                                  output_mask=output_mask)
    dx, dw, _ = _norm_backward(g, x, None, rstd, w, normalized_shape, output_mask, True)
    return dx, dw
