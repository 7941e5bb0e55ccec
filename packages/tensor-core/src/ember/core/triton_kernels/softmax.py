"""Triton kernels of softmax, log_softmax and their backwards along one dim.

One program per row (the elements along ``dim``; a non-contiguous input is made row-major
first, and the result is row-major, as the ops' rule says). A row of at most ``_WHOLE``
elements is held at once: one read, one write. A longer row is read in blocks, twice: an
online max and sum (each lane keeps its own, rescaled as its max grows), then the
output. float16 computes in float32 and rounds once, as the reference does; 0-d and
empty inputs, and other dtypes, run the reference.
"""

from __future__ import annotations

import math
from typing import Any

import triton
import triton.language as tl

from ..device import xp_of
from ..ops.softmax import _log_softmax, _log_softmax_backward, _softmax, _softmax_backward
from .launching import FLOATS, block_size, compute_type, launch, warps

_WHOLE = 4096  # the longest row held at once
_CHUNK = 2048  # the block a longer row is read in


@triton.jit
def _forward(x_ptr, y_ptr, n, inner, LOG: tl.constexpr, COMPUTE: tl.constexpr,
             BLOCK: tl.constexpr, WHOLE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    start = (row // inner) * n * inner + row % inner
    x_row, y_row = x_ptr + start, y_ptr + start
    cols = tl.arange(0, BLOCK)
    if WHOLE:
        inside = cols < n
        z = tl.load(x_row + cols * inner, mask=inside, other=-float("inf")).to(COMPUTE)
        shifted = z - tl.max(z, 0)
        e = tl.exp(shifted)
        total = tl.sum(e, 0)
        y = shifted - tl.log(total) if LOG else e / total
        tl.store(y_row + cols * inner, y.to(y_ptr.dtype.element_ty), mask=inside)
    else:
        lane_max = tl.full([BLOCK], -float("inf"), COMPUTE)
        lane_sum = tl.zeros([BLOCK], COMPUTE)
        for first in range(0, n, BLOCK):
            idx = first + cols
            z = tl.load(x_row + idx * inner, mask=idx < n, other=-float("inf")).to(COMPUTE)
            new_max = tl.maximum(lane_max, z)
            # a lane that has seen only -inf keeps a sum of 0 (its rescaling would be NaN)
            lane_sum = tl.where(new_max == -float("inf"), 0.0,
                                lane_sum * tl.exp(lane_max - new_max) + tl.exp(z - new_max))
            lane_max = new_max
        m = tl.max(lane_max, 0)
        total = tl.sum(tl.where(lane_max == -float("inf"), 0.0,
                                lane_sum * tl.exp(lane_max - m)), 0)
        for first in range(0, n, BLOCK):
            idx = first + cols
            inside = idx < n
            z = tl.load(x_row + idx * inner, mask=inside, other=0.0).to(COMPUTE)
            y = (z - m) - tl.log(total) if LOG else tl.exp(z - m) / total
            tl.store(y_row + idx * inner, y.to(y_ptr.dtype.element_ty), mask=inside)


@triton.jit
def _backward(g_ptr, y_ptr, dx_ptr, n, inner, LOG: tl.constexpr, COMPUTE: tl.constexpr,
              BLOCK: tl.constexpr, WHOLE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    start = (row // inner) * n * inner + row % inner
    g_row, y_row, dx_row = g_ptr + start, y_ptr + start, dx_ptr + start
    cols = tl.arange(0, BLOCK)
    if WHOLE:
        inside = cols < n
        g = tl.load(g_row + cols * inner, mask=inside, other=0.0).to(COMPUTE)
        y = tl.load(y_row + cols * inner, mask=inside, other=0.0).to(COMPUTE)
        if LOG:
            dx = g - tl.exp(y) * tl.sum(g, 0)
        else:
            dx = y * (g - tl.sum(g * y, 0))
        tl.store(dx_row + cols * inner, dx.to(dx_ptr.dtype.element_ty), mask=inside)
    else:
        acc = tl.zeros([BLOCK], COMPUTE)
        for first in range(0, n, BLOCK):
            idx = first + cols
            inside = idx < n
            g = tl.load(g_row + idx * inner, mask=inside, other=0.0).to(COMPUTE)
            if LOG:
                acc += g
            else:
                acc += g * tl.load(y_row + idx * inner, mask=inside, other=0.0).to(COMPUTE)
        total = tl.sum(acc, 0)
        for first in range(0, n, BLOCK):
            idx = first + cols
            inside = idx < n
            g = tl.load(g_row + idx * inner, mask=inside, other=0.0).to(COMPUTE)
            y = tl.load(y_row + idx * inner, mask=inside, other=0.0).to(COMPUTE)
            dx = g - tl.exp(y) * total if LOG else y * (g - total)
            tl.store(dx_row + idx * inner, dx.to(dx_ptr.dtype.element_ty), mask=inside)


def _geometry(shape: tuple[int, ...], dim: int) -> tuple[int, int, int, int, bool]:
    """The rows' count, length, stride and block, and whether one block holds a row."""
    n = shape[dim]
    inner = math.prod(shape[dim + 1:])
    whole = n <= _WHOLE
    return math.prod(shape) // n, n, inner, block_size(n, _WHOLE if whole else _CHUNK), whole


def _rows(kernel: Any, log: bool, dim: int, *operands: Any) -> Any:
    """``kernel`` over the rows of the row-major ``operands`` (the last one's shape and
    dtype are the result's)."""
    y = operands[-1]
    out = xp_of(y).empty(y.shape, y.dtype)
    rows, n, inner, block, whole = _geometry(y.shape, dim)
    launch(kernel, (rows,), *operands, out, n, inner, log, compute_type(y.dtype), block, whole,
           num_warps=warps(block) if whole else 4)
    return out


def _forward_kernel(reference: Any, log: bool) -> Any:
    def kernel(x: Any, *, dim: int) -> Any:
        if not x.ndim or not x.size or x.dtype not in FLOATS:
            return reference(x, dim=dim)
        return _rows(_forward, log, dim, xp_of(x).ascontiguousarray(x))

    kernel.__name__ = reference.__name__
    return kernel


def _backward_kernel(reference: Any, log: bool) -> Any:
    def kernel(g: Any, y: Any, *, dim: int) -> Any:
        if not y.ndim or not y.size or y.dtype not in FLOATS or g.dtype != y.dtype or \
                g.shape != y.shape:
            return reference(g, y, dim=dim)
        xp = xp_of(y)
        return _rows(_backward, log, dim, xp.ascontiguousarray(g), xp.ascontiguousarray(y))

    kernel.__name__ = reference.__name__
    return kernel


softmax = _forward_kernel(_softmax, False)
log_softmax = _forward_kernel(_log_softmax, True)
softmax_backward = _backward_kernel(_softmax_backward, False)
log_softmax_backward = _backward_kernel(_log_softmax_backward, True)
