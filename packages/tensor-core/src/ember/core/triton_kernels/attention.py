"""The Triton kernels of scaled dot-product attention, forward and backward, in the flash
style: the (L, S) score matrix is never stored.

The forward: each program takes a block of queries of one batch entry and walks the keys a
block at a time, keeping each query's running max, softmax denominator and weighted sum of
values. The backward recomputes each block's probabilities from the saved log-sum-exp, in
two passes: one over blocks of queries (their ``delta``, the row sums of grad_out * out,
and dq, walking the keys), then one over blocks of keys (dk and dv, walking the queries
that see them), so that every gradient is summed by one program, in a fixed order.

Operands are read through their strides (a broadcast mask's zero strides included), as
the reference folds them to (N, L, E); out and the log-sum-exp are row-major, and the
gradients laid out as the backward's rule lays them out. Where causal, key blocks past a
query block's last query are never read, nor, backward, query blocks before a key block's
first key. A query that sees no key gets 0 and a log-sum-exp of -inf, as the reference's,
and gives no gradient. float16 multiplies in float16 on the tensor
cores, accumulating in float32 (the probabilities, and the scores' gradients, are rounded
to float16 for their products, as flash attention does); float32 and float64 multiply in
full precision ("ieee": no TensorFloat-32). What the kernels do not take (other dtypes,
operands of mixed ones, empty operands, heads past 256) runs the reference.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import triton
import triton.language as tl

from .. import meta
from ..device import xp_of
from ..ops.attention import _attention, _attention_backward, _folded, _heads_inner_strides
from ..ops.operands import LOW_PRECISION
from .launching import FLOATS, compute_type, empty_strided, launch

_MAX_HEAD = 256  # the largest head size the kernels hold at once
# The backward's tiles by itemsize: (widest head, rows held, rows walked, warps). float16
# multiplies on the tensor cores; float32 and float64 ("ieee") on the FMA units, whose
# operands take registers: smaller tiles, or more warps. Each compiles for sm_90 without
# spilling registers (but float64's at 256, by 56 bytes), ptxas says.
_BACKWARD_TILES = {
    2: ((64, 64, 32, 4), (128, 64, 32, 8), (256, 32, 32, 8)),
    4: ((64, 32, 32, 8), (256, 32, 16, 8)),
    8: ((64, 32, 16, 4), (128, 32, 16, 8), (256, 16, 16, 8)),
}


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


@triton.jit
def _probabilities(s, mask_ptrs, query, key, lse, length, width, MASK: tl.constexpr,
                   BOOL_MASK: tl.constexpr, CAUSAL: tl.constexpr, COMPUTE: tl.constexpr):
    """The probabilities of scaled scores ``s`` from each query's log-sum-exp: the index
    tiles ``query`` and ``key`` and ``lse`` broadcast to ``s``'s shape, in either
    orientation; 0 where a key is not seen, and for a query that sees none."""
    seen = (query < length) & (key < width) & (lse != -float("inf"))
    if MASK:
        m = tl.load(mask_ptrs, mask=seen, other=0)
        if BOOL_MASK:
            seen = seen & (m != 0)
        else:
            s += m.to(COMPUTE)
    if CAUSAL:
        seen = seen & (key <= query)
    return tl.where(seen, tl.exp(s - lse), 0.0)


@triton.jit
def _backward_queries(q_ptr, k_ptr, v_ptr, mask_ptr, g_ptr, o_ptr, lse_ptr, delta_ptr, dq_ptr,
                      length, width, e, ev, heads, sq_n, sq_l, sq_e, sk_n, sk_s, sk_e, sv_n,
                      sv_s, sv_e, sm_n, sm_l, sm_s, sg_n, sg_l, sg_e, so_n, so_l, so_e,
                      sdq_outer, sdq_inner, sdq_l, scale: tl.float64, MASK: tl.constexpr,
                      BOOL_MASK: tl.constexpr, CAUSAL: tl.constexpr, COMPUTE: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_E: tl.constexpr,
                      BLOCK_EV: tl.constexpr):
    """A block of queries: their delta (stored for the pass over keys) and dq."""
    start = tl.program_id(0) * BLOCK_M
    batch = tl.program_id(1).to(tl.int64)
    rows = start + tl.arange(0, BLOCK_M)
    keys = tl.arange(0, BLOCK_N)
    dims, vdims = tl.arange(0, BLOCK_E), tl.arange(0, BLOCK_EV)
    row_in = rows < length
    dims_in, vdims_in = dims < e, vdims < ev
    q = tl.load(q_ptr + batch * sq_n + rows[:, None] * sq_l + dims[None, :] * sq_e,
                mask=row_in[:, None] & dims_in[None, :], other=0.0)
    g_at = row_in[:, None] & vdims_in[None, :]
    g = tl.load(g_ptr + batch * sg_n + rows[:, None] * sg_l + vdims[None, :] * sg_e, mask=g_at,
                other=0.0)
    o = tl.load(o_ptr + batch * so_n + rows[:, None] * so_l + vdims[None, :] * so_e, mask=g_at,
                other=0.0)
    delta = tl.sum(g.to(COMPUTE) * o.to(COMPUTE), 1)
    tl.store(delta_ptr + batch * length + rows, delta, mask=row_in)
    lse = tl.load(lse_ptr + batch * length + rows, mask=row_in, other=0.0).to(COMPUTE)
    factor = tl.full((), scale, COMPUTE)
    acc = tl.zeros([BLOCK_M, BLOCK_E], COMPUTE)
    stop = tl.minimum(width, start + BLOCK_M) if CAUSAL else width
    for first in range(0, stop, BLOCK_N):
        cols = first + keys
        key_in = cols < width
        kt = tl.load(k_ptr + batch * sk_n + cols[None, :] * sk_s + dims[:, None] * sk_e,
                     mask=key_in[None, :] & dims_in[:, None], other=0.0)
        vt = tl.load(v_ptr + batch * sv_n + cols[None, :] * sv_s + vdims[:, None] * sv_e,
                     mask=key_in[None, :] & vdims_in[:, None], other=0.0)
        s = tl.dot(q, kt, input_precision="ieee", out_dtype=COMPUTE) * factor
        m_ptrs = mask_ptr + batch * sm_n + rows[:, None] * sm_l + cols[None, :] * sm_s
        p = _probabilities(s, m_ptrs, rows[:, None], cols[None, :], lse[:, None], length, width,
                           MASK, BOOL_MASK, CAUSAL, COMPUTE)
        dp = tl.dot(g, vt, input_precision="ieee", out_dtype=COMPUTE)
        ds = p * (dp - delta[:, None])
        acc = tl.dot(ds.to(kt.dtype), tl.trans(kt), acc, input_precision="ieee",
                     out_dtype=COMPUTE)
    dq = acc * factor
    tl.store(dq_ptr + (batch // heads) * sdq_outer + (batch % heads) * sdq_inner +
             rows[:, None] * sdq_l + dims[None, :], dq.to(dq_ptr.dtype.element_ty),
             mask=row_in[:, None] & dims_in[None, :])


@triton.jit
def _backward_keys(q_ptr, k_ptr, v_ptr, mask_ptr, g_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr,
                   length, width, e, ev, heads, sq_n, sq_l, sq_e, sk_n, sk_s, sk_e, sv_n, sv_s,
                   sv_e, sm_n, sm_l, sm_s, sg_n, sg_l, sg_e, sdk_outer, sdk_inner, sdk_s,
                   sdv_outer, sdv_inner, sdv_s, scale: tl.float64, MASK: tl.constexpr,
                   BOOL_MASK: tl.constexpr, CAUSAL: tl.constexpr, COMPUTE: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_E: tl.constexpr,
                   BLOCK_EV: tl.constexpr):
    """A block of keys: dk and dv, from the queries that see them (the scores transposed:
    keys down, queries across)."""
    first = tl.program_id(0) * BLOCK_N
    batch = tl.program_id(1).to(tl.int64)
    cols = first + tl.arange(0, BLOCK_N)
    queries = tl.arange(0, BLOCK_M)
    dims, vdims = tl.arange(0, BLOCK_E), tl.arange(0, BLOCK_EV)
    key_in = cols < width
    dims_in, vdims_in = dims < e, vdims < ev
    k = tl.load(k_ptr + batch * sk_n + cols[:, None] * sk_s + dims[None, :] * sk_e,
                mask=key_in[:, None] & dims_in[None, :], other=0.0)
    v = tl.load(v_ptr + batch * sv_n + cols[:, None] * sv_s + vdims[None, :] * sv_e,
                mask=key_in[:, None] & vdims_in[None, :], other=0.0)
    factor = tl.full((), scale, COMPUTE)
    dk = tl.zeros([BLOCK_N, BLOCK_E], COMPUTE)
    dv = tl.zeros([BLOCK_N, BLOCK_EV], COMPUTE)
    # where causal, the queries before the block's first key see none of its keys
    begin = (first // BLOCK_M) * BLOCK_M if CAUSAL else 0
    for start in range(begin, length, BLOCK_M):
        rows = start + queries
        row_in = rows < length
        qt = tl.load(q_ptr + batch * sq_n + rows[None, :] * sq_l + dims[:, None] * sq_e,
                     mask=row_in[None, :] & dims_in[:, None], other=0.0)
        g = tl.load(g_ptr + batch * sg_n + rows[:, None] * sg_l + vdims[None, :] * sg_e,
                    mask=row_in[:, None] & vdims_in[None, :], other=0.0)
        lse = tl.load(lse_ptr + batch * length + rows, mask=row_in, other=0.0).to(COMPUTE)
        delta = tl.load(delta_ptr + batch * length + rows, mask=row_in, other=0.0)
        st = tl.dot(k, qt, input_precision="ieee", out_dtype=COMPUTE) * factor
        m_ptrs = mask_ptr + batch * sm_n + rows[None, :] * sm_l + cols[:, None] * sm_s
        pt = _probabilities(st, m_ptrs, rows[None, :], cols[:, None], lse[None, :], length,
                            width, MASK, BOOL_MASK, CAUSAL, COMPUTE)
        dv = tl.dot(pt.to(g.dtype), g, dv, input_precision="ieee", out_dtype=COMPUTE)
        dpt = tl.dot(v, tl.trans(g), input_precision="ieee", out_dtype=COMPUTE)
        dst = pt * (dpt - delta[None, :])
        dk = tl.dot(dst.to(qt.dtype), tl.trans(qt), dk, input_precision="ieee",
                    out_dtype=COMPUTE)
    dk = dk * factor
    lead_k = (batch // heads) * sdk_outer + (batch % heads) * sdk_inner
    tl.store(dk_ptr + lead_k + cols[:, None] * sdk_s + dims[None, :],
             dk.to(dk_ptr.dtype.element_ty), mask=key_in[:, None] & dims_in[None, :])
    lead_v = (batch // heads) * sdv_outer + (batch % heads) * sdv_inner
    tl.store(dv_ptr + lead_v + cols[:, None] * sdv_s + vdims[None, :],
             dv.to(dv_ptr.dtype.element_ty), mask=key_in[:, None] & vdims_in[None, :])


def _backward_tiles(itemsize: int, head: int, held: int, walked: int) -> tuple[int, int, int]:
    """The rows a backward program holds (of ``held``: queries, or keys), the rows it walks a
    block at a time (of ``walked``), and its warps, for rows of ``head`` elements of
    ``itemsize`` bytes; 16 rows at least, which the products need."""
    most_held, most_walked, warps = next(t[1:] for t in _BACKWARD_TILES[itemsize] if head <= t[0])
    return (max(16, min(most_held, triton.next_power_of_2(held))),
            max(16, min(most_walked, triton.next_power_of_2(walked))), warps)


def _gradient(xp: Any, a: Any) -> tuple[Any, tuple[int, int, int, int]]:
    """A new array for the gradient of operand ``a``, laid out as the backward's rule lays it
    out, and where the kernels write a folded batch entry's rows: its heads, and the element
    strides of ``batch // heads``, ``batch % heads`` and a row (its last dim's is 1)."""
    if a.ndim == 4:
        strides = _heads_inner_strides(a.shape)
        return empty_strided(xp, a.shape, a.dtype, strides), (a.shape[1], *strides[:3])
    rows, width = a.shape[-2:]
    return xp.empty(a.shape, a.dtype), (1, rows * width, 0, width)


def attention_backward(g: Any, q: Any, k: Any, v: Any, out: Any, lse: Any, mask: Any, *,
                       is_causal: bool, scale: float) -> tuple[Any, Any, Any]:
    work = np.dtype(np.float32) if q.dtype in LOW_PRECISION else q.dtype
    if q.dtype not in FLOATS or not g.dtype == k.dtype == v.dtype == out.dtype == q.dtype or \
            lse.dtype != work or not q.size or not k.size or not v.shape[-1] or \
            max(q.shape[-1], v.shape[-1]) > _MAX_HEAD:
        return _attention_backward(g, q, k, v, out, lse, mask, is_causal=is_causal,
                                   scale=scale)
    xp = xp_of(q)
    q3, k3, v3, m3 = _folded(q, k, v, mask)
    n, length, e = q3.shape
    width, ev = k3.shape[1], v3.shape[2]
    g3, o3 = (a.reshape(n, length, ev) for a in (g, out))
    lse2 = xp.ascontiguousarray(lse.reshape(n, length))
    delta = xp.empty((n, length), work)
    (dq, (heads, *dq_at)), (dk, (_, *dk_at)), (dv, (_, *dv_at)) = (
        _gradient(xp, a) for a in (q, k, v))
    block_e, block_ev = (max(16, triton.next_power_of_2(d)) for d in (e, ev))
    head = max(block_e, block_ev)
    qkv = [s for a in (q3, k3, v3) for s in meta.element_strides(a)]
    mask_strides = (0, 0, 0) if m3 is None else meta.element_strides(m3)
    masked = (m3 is not None, m3 is not None and m3.dtype == xp.bool_, is_causal,
              compute_type(q.dtype))
    m_or_q = q3 if m3 is None else m3
    held, walked, warps = _backward_tiles(q.dtype.itemsize, head, length, width)
    launch(_backward_queries, (math.ceil(length / held), n), q3, k3, v3, m_or_q, g3, o3, lse2,
           delta, dq, length, width, e, ev, heads, *qkv, *mask_strides,
           *meta.element_strides(g3), *meta.element_strides(o3), *dq_at, scale, *masked, held,
           walked, block_e, block_ev, num_warps=warps, num_stages=2)
    held, walked, warps = _backward_tiles(q.dtype.itemsize, head, width, length)
    launch(_backward_keys, (math.ceil(width / held), n), q3, k3, v3, m_or_q, g3, lse2, delta,
           dk, dv, length, width, e, ev, heads, *qkv, *mask_strides, *meta.element_strides(g3),
           *dk_at, *dv_at, scale, *masked, walked, held, block_e, block_ev, num_warps=warps,
           num_stages=2)
    return dq, dk, dv
