"""Triton kernels of the negative log likelihood loss (``nll_loss_forward``,
``nll_loss2d_forward``) and its backward, over the input seen as (batch, classes,
positions) through its strides (no copy for 1-d and 2-d inputs).

Forward: each program picks the log probabilities of a block of targets; without
reduction it writes each target's loss, else its block's sums of losses and weights,
which one more program adds up (in float32 for float16 inputs, as torch's CUDA kernel
accumulates; the reference adds in torch's CPU order, in float16). Backward: the input's
gradient is zeroed, then each target's entry written. A target that names no class
raises IndexError, as the reference does (a check that reads the targets once more and
waits for the result). Empty batches and dtypes other than the kernels' run the
reference.
"""

from __future__ import annotations

import math
from typing import Any

import triton
import triton.language as tl

from ..device import xp_of
from ..ops.losses import MEAN, NONE, _nll_loss, _nll_loss_backward, _rows, out_of_bounds
from .launching import FLOATS, compute_type, launch

_BLOCK = 1024


@triton.jit
def _picked(t_ptr, w_ptr, idx, count, positions, s_batch, s_class, s_pos, ignore_index,
            HAS_W: tl.constexpr, COMPUTE: tl.constexpr):
    """Whether each target of ``idx`` counts, its input's entry's offset, and its weight."""
    inside = idx < count
    t = tl.load(t_ptr + idx, mask=inside, other=ignore_index)
    valid = inside & (t != ignore_index)
    t = tl.where(valid, t, 0)
    at = (idx // positions) * s_batch + t * s_class + (idx % positions) * s_pos
    if HAS_W:
        weight = tl.load(w_ptr + t, mask=valid, other=0.0).to(COMPUTE)
    else:
        weight = tl.where(valid, 1.0, 0.0).to(COMPUTE)
    return valid, at, weight


@triton.jit
def _forward(x_ptr, t_ptr, w_ptr, loss_ptr, weight_ptr, count, positions, s_batch, s_class,
             s_pos, ignore_index, PER_TARGET: tl.constexpr, HAS_W: tl.constexpr,
             COMPUTE: tl.constexpr, BLOCK: tl.constexpr):
    block = tl.program_id(0)
    idx = block.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    valid, at, weight = _picked(t_ptr, w_ptr, idx, count, positions, s_batch, s_class,
                                s_pos, ignore_index, HAS_W, COMPUTE)
    chosen = tl.load(x_ptr + at, mask=valid, other=0.0).to(COMPUTE)
    loss = tl.where(valid, -(chosen * weight), 0.0)
    if PER_TARGET:
        tl.store(loss_ptr + idx, loss.to(loss_ptr.dtype.element_ty), mask=idx < count)
    else:
        tl.store(loss_ptr + block, tl.sum(loss, 0))
        tl.store(weight_ptr + block, tl.sum(weight, 0))


@triton.jit
def _total(loss_ptr, weight_ptr, out_ptr, total_ptr, parts, MEAN: tl.constexpr,
           COMPUTE: tl.constexpr, BLOCK: tl.constexpr):
    """The sums of the blocks' partial sums; the loss divided by the weights' for a mean."""
    loss = tl.zeros([BLOCK], COMPUTE)
    weight = tl.zeros([BLOCK], COMPUTE)
    for first in range(0, parts, BLOCK):
        idx = first + tl.arange(0, BLOCK)
        loss += tl.load(loss_ptr + idx, mask=idx < parts, other=0.0)
        weight += tl.load(weight_ptr + idx, mask=idx < parts, other=0.0)
    total_loss, total_weight = tl.sum(loss, 0), tl.sum(weight, 0)
    if MEAN:
        total_loss = total_loss / total_weight
    tl.store(out_ptr, total_loss.to(out_ptr.dtype.element_ty))
    tl.store(total_ptr, total_weight.to(total_ptr.dtype.element_ty))


@triton.jit
def _backward(g_ptr, total_ptr, t_ptr, w_ptr, dx_ptr, count, positions, s_batch, s_class,
              s_pos, ignore_index, PER_TARGET: tl.constexpr, MEAN: tl.constexpr,
              HAS_W: tl.constexpr, COMPUTE: tl.constexpr, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    valid, at, weight = _picked(t_ptr, w_ptr, idx, count, positions, s_batch, s_class,
                                s_pos, ignore_index, HAS_W, COMPUTE)
    if PER_TARGET:
        grad = -weight * tl.load(g_ptr + idx, mask=valid, other=0.0).to(COMPUTE)
    elif MEAN:
        grad = weight * -(tl.load(g_ptr).to(COMPUTE) / tl.load(total_ptr).to(COMPUTE))
    else:
        grad = weight * -tl.load(g_ptr).to(COMPUTE)
    tl.store(dx_ptr + at, grad.to(dx_ptr.dtype.element_ty), mask=valid)


def _operands(x: Any, t: Any, w: Any, ignore_index: int) -> tuple[Any, ...]:
    """The input as (batch, classes, positions), its positions' count and element strides,
    the targets flat in int64 and row-major, and the weight row-major (the input, never
    read, where there is none). IndexError, as the reference's, for the first target that
    names no class."""
    xp = xp_of(x)
    x3, t1 = _rows(x, t)
    t1 = xp.ascontiguousarray(t1)
    bad = (t1 != ignore_index) & ((t1 < 0) | (t1 >= x3.shape[1]))
    if bool(bad.any()):
        raise out_of_bounds(int(t1[int(bad.argmax())]))
    item = x3.dtype.itemsize
    geometry = (x3.shape[2], *(s // item for s in x3.strides))
    return x3, geometry, t1, x if w is None else xp.ascontiguousarray(w)


def _takes(x: Any, t: Any, w: Any) -> bool:
    return x.dtype in FLOATS and t.size > 0 and (w is None or w.dtype == x.dtype)


def nll_loss(x: Any, t: Any, w: Any, *, reduction: int, ignore_index: int) -> tuple[Any, Any]:
    if not _takes(x, t, w):
        return _nll_loss(x, t, w, reduction=reduction, ignore_index=ignore_index)
    xp = xp_of(x)
    has_w = w is not None
    x3, geometry, t1, w = _operands(x, t, w, ignore_index)
    count = t1.shape[0]
    blocks = math.ceil(count / _BLOCK)
    compute = compute_type(x.dtype)
    if reduction == NONE and x.ndim >= 2:
        out = xp.empty(t.shape, x.dtype)
        launch(_forward, (blocks,), x3, t1, w, out, out, count, *geometry, ignore_index, True,
               has_w, compute, _BLOCK)
        return out, xp.zeros((), x.dtype)
    parts = xp.empty((2, blocks), xp.float64 if x.dtype == xp.float64 else xp.float32)
    launch(_forward, (blocks,), x3, t1, w, parts[0], parts[1], count, *geometry, ignore_index,
           False, has_w, compute, _BLOCK)
    out, total = xp.empty((), x.dtype), xp.empty((), x.dtype)
    launch(_total, (1,), parts[0], parts[1], out, total, blocks, reduction == MEAN, compute,
           _BLOCK)
    return out, total


def nll_loss_backward(g: Any, x: Any, t: Any, w: Any, total_weight: Any, *, reduction: int,
                      ignore_index: int) -> Any:
    if not _takes(x, t, w) or g.dtype != x.dtype:
        return _nll_loss_backward(g, x, t, w, total_weight, reduction=reduction,
                                  ignore_index=ignore_index)
    xp = xp_of(x)
    has_w = w is not None
    dx = xp.zeros(x.shape, x.dtype)
    dx3, geometry, t1, w = _operands(dx, t, w, ignore_index)
    launch(_backward, (math.ceil(t1.shape[0] / _BLOCK),), xp.ascontiguousarray(g).reshape(-1),
           total_weight, t1, w, dx3, t1.shape[0], *geometry, ignore_index,
           reduction == NONE and x.ndim >= 2, reduction == MEAN, has_w, compute_type(x.dtype),
           _BLOCK)
    return dx
