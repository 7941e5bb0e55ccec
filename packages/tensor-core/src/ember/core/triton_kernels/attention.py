"""The Triton kernel of scaled dot-product attention's forward, in the flash style: each
program takes a block of queries of one batch entry and walks the keys a block at a time,
keeping each query's running max, softmax denominator and weighted sum of values, so the
(L, S) score matrix is never stored.

Operands are read through their strides (a broadcast mask's zero strides included), as
the reference folds them to (N, L, E); out and the log-sum-exp are row-major. Where
causal, key blocks past a query block's last query are never read. A query that sees no
key gets 0 and a log-sum-exp of -inf, as the reference's. float16 multiplies in float16
on the tensor cores, accumulating in float32 (the probabilities are rounded to float16
for their product with the values, as flash attention does); float32 and float64 multiply
in full precision ("ieee": no TensorFloat-32). The backward stays the reference's.
"""

from __future__ import annotations

import math
from typing import Any

import triton
import triton.language as tl

from .. import meta
from ..device import xp_of
from ..ops.attention import _attention, _folded
from ..ops.operands import LOW_PRECISION
from .launching import FLOATS, compute_type, launch

_MAX_HEAD = 256  # the largest head size the kernel holds at once


@triton.jit
def _forward(q_ptr, k_ptr, v_ptr, mask_ptr, out_ptr, lse_ptr, length, width, e, ev,
             sq_n, sq_l, sq_e, sk_n, sk_s, sk_e, sv_n, sv_s, sv_e, sm_n, sm_l, sm_s,
             scale: tl.float64, MASK: tl.constexpr, BOOL_MASK: tl.constexpr,
             CAUSAL: tl.constexpr, COMPUTE: tl.constexpr, BLOCK_M: tl.constexpr,
             BLOCK_N: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_EV: tl.constexpr):
    start = tl.program_id(0) * BLOCK_M
    batch = tl.program_id(1).to(tl.int64)
    rows = start + tl.arange(0, BLOCK_M)
    keys = tl.arange(0, BLOCK_N)
    dims, vdims = tl.arange(0, BLOCK_E), tl.arange(0, BLOCK_EV)
    q = tl.load(q_ptr + batch * sq_n + rows[:, None] * sq_l + dims[None, :] * sq_e,
                mask=(rows < length)[:, None] & (dims < e)[None, :], other=0.0)
    factor = tl.full((), scale, COMPUTE)
    running_max = tl.full([BLOCK_M], -float("inf"), COMPUTE)
    total = tl.zeros([BLOCK_M], COMPUTE)
    acc = tl.zeros([BLOCK_M, BLOCK_EV], COMPUTE)
    stop = tl.minimum(width, start + BLOCK_M) if CAUSAL else width
    for first in range(0, stop, BLOCK_N):
        cols = first + keys
        key_in = cols < width
        k = tl.load(k_ptr + batch * sk_n + cols[None, :] * sk_s + dims[:, None] * sk_e,
                    mask=key_in[None, :] & (dims < e)[:, None], other=0.0)
        s = tl.dot(q, k, input_precision="ieee", out_dtype=COMPUTE) * factor
        if MASK:
            m = tl.load(mask_ptr + batch * sm_n + rows[:, None] * sm_l + cols[None, :] * sm_s,
                        mask=(rows < length)[:, None] & key_in[None, :], other=0)
            if BOOL_MASK:
                s = tl.where(m != 0, s, -float("inf"))
            else:
                s += m.to(COMPUTE)
        seen = key_in[None, :]
        if CAUSAL:
            seen = seen & (cols[None, :] <= rows[:, None])
        s = tl.where(seen, s, -float("inf"))
        new_max = tl.maximum(running_max, tl.max(s, 1))
        # a query that has seen only -inf keeps nothing (its rescaling would be NaN)
        nothing = new_max == -float("inf")
        rescale = tl.where(nothing, 1.0, tl.exp(running_max - new_max))
        p = tl.where(nothing[:, None], 0.0, tl.exp(s - new_max[:, None]))
        total = total * rescale + tl.sum(p, 1)
        v = tl.load(v_ptr + batch * sv_n + cols[:, None] * sv_s + vdims[None, :] * sv_e,
                    mask=key_in[:, None] & (vdims < ev)[None, :], other=0.0)
        acc = acc * rescale[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee",
                                              out_dtype=COMPUTE)
        running_max = new_max
    some = total > 0
    out = tl.where(some[:, None], acc / tl.where(some, total, 1.0)[:, None], 0.0)
    lse = tl.where(some, running_max + tl.log(tl.where(some, total, 1.0)), -float("inf"))
    row_in = rows < length
    tl.store(out_ptr + (batch * length + rows[:, None]) * ev + vdims[None, :],
             out.to(out_ptr.dtype.element_ty), mask=row_in[:, None] & (vdims < ev)[None, :])
    tl.store(lse_ptr + batch * length + rows, lse.to(lse_ptr.dtype.element_ty), mask=row_in)


def _blocks(itemsize: int, head: int, length: int, width: int) -> tuple[int, int]:
    """Queries and keys per block: fewer for wider rows of q, k and v (``head`` elements of
    ``itemsize`` bytes), so that the tiles of two pipeline stages stay near 100 KB of
    shared memory (sm_90 has 227 KB a block); 16 of each at least, which the products
    need."""
    row = itemsize * head
    most_m, most_n = (64, 64) if row <= 256 else (64, 32) if row <= 512 else \
        (32, 32) if row <= 1024 else (16, 16)
    return (max(16, min(most_m, triton.next_power_of_2(length))),
            max(16, min(most_n, triton.next_power_of_2(width))))


def attention(q: Any, k: Any, v: Any, mask: Any, *, is_causal: bool,
              scale: float) -> tuple[Any, Any]:
    if q.dtype not in FLOATS or not q.size or not k.size or \
            max(q.shape[-1], v.shape[-1]) > _MAX_HEAD or not v.shape[-1]:
        return _attention(q, k, v, mask, is_causal=is_causal, scale=scale)
    xp = xp_of(q)
    lead = q.shape[:-2]
    q3, k3, v3, m3 = _folded(q, k, v, mask)
    n, length, e = q3.shape
    width, ev = k3.shape[1], v3.shape[2]
    out = xp.empty((n, length, ev), q.dtype)
    lse = xp.empty((n, length), xp.float32 if q.dtype in LOW_PRECISION else q.dtype)
    block_e, block_ev = (max(16, triton.next_power_of_2(d)) for d in (e, ev))
    block_m, block_n = _blocks(q.dtype.itemsize, max(block_e, block_ev), length, width)
    strides = [s for a in (q3, k3, v3) for s in meta.element_strides(a)]
    mask_strides = (0, 0, 0) if m3 is None else meta.element_strides(m3)
    launch(_forward, (math.ceil(length / block_m), n), q3, k3, v3, q3 if m3 is None else m3,
           out, lse, length, width, e, ev, *strides, *mask_strides, scale, m3 is not None,
           m3 is not None and m3.dtype == xp.bool_, is_causal, compute_type(q.dtype), block_m,
           block_n, block_e, block_ev, num_stages=2)
    return out.reshape(*lead, length, ev), lse.reshape(*lead, length)
