"""Scaled dot-product attention, ``softmax(q @ k^T * scale + mask) @ v``, computed a block
of queries at a time so that the whole (L, S) score matrix never exists for long sequences.

Primitives (operands (..., L, E), (..., S, E), (..., S, Ev) with the same leading dims;
``mask`` None or broadcasting to (..., L, S), float (added) or bool (True takes part);
params ``is_causal``, ``scale``):

- ``_scaled_dot_product_flash_attention_for_cpu`` -> ``(out, logsumexp)``: the output and
  the log of each query's softmax denominator (float32 for half types), as torch's CPU
  kernel of that name; a query that sees no key gets 0 (torch's ``_safe_softmax``);
- ``_scaled_dot_product_flash_attention_for_cpu_backward`` (``grad_out``, q, k, v,
  ``out``, ``logsumexp``, ``mask``) -> the gradients of q, k and v, recomputing each
  block's probabilities from the log-sum-exp.

out (..., L, Ev) and the log-sum-exp (..., L) are row-major.

Each block's scores come from one batched BLAS matmul; its softmax, and the softmax's
backward, run as native row loops (threads over rows, glibc's vector exp) where a compiler
is found, numpy otherwise.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta, native
from ..dispatch import dispatch, register
from ..dtypes import scalar_type_name
from ..tensor import Tensor
from .operands import LOW_PRECISION, broadcast_shape, check_operand

_F32 = np.dtype(np.float32)
_BLOCK_ELEMENTS = 1 << 21  # scores held at once: 8 MB of float32


def _rows_per_block(n: int, s: int) -> int:
    return max(1, _BLOCK_ELEMENTS // max(1, n * s))


def _work_mask(mask: Any, work: Any) -> Any:
    """A float mask in the computation dtype; a bool one as it is."""
    return mask if mask is None or mask.dtype == np.bool_ else mask.astype(work, copy=False)


def _keys_seen(start: int, stop: int, width: int, causal: bool) -> int:
    """How many keys the queries [start, stop) see: where causal, those up to the last
    query's position (the blocks above the diagonal are never computed)."""
    return min(width, stop) if causal else width


def _blocks(n: int, length: int, width: int, causal: bool) -> range:
    """The first queries of the blocks: smaller ones where causal, each seeing fewer keys."""
    step = _rows_per_block(n, width)
    return range(0, length, min(step, 128) if causal else step)


def _masked_scores(q: Any, k: Any, mask: Any, start: int, stop: int, keys: int) -> Any:
    """The scores of queries [start, stop) against the first ``keys`` keys (q already
    scaled), the float mask added; a bool mask's False entries set to -inf."""
    s = np.matmul(q[:, start:stop], k[:, :keys].transpose(0, 2, 1))
    if mask is not None:
        block = mask[:, start:stop, :keys]
        if block.dtype == np.bool_:
            np.copyto(s, -np.inf, where=~block)
        else:
            s += block
    return s


def _hide_later_keys(s: Any, start: int) -> None:
    """Scores (N, B, S) of queries start.. set to -inf past each query's own position."""
    b, width = s.shape[1:]
    np.copyto(s, -np.inf, where=np.arange(width)[None, :] > np.arange(start, start + b)[:, None])


def _softmax_rows(s: Any, start: int, causal: bool) -> Any:
    """Each row of ``s`` (N, B, S) softmaxed in place over its first keys (all, or those
    up to the query's own position where ``causal``); rows that see no key give zeros.
    Returns the log-sum-exp of each row."""
    n, b, width = s.shape
    fn = _KERNELS(_NAMES.get(s.dtype, "")) if s.size else None
    lse = np.empty((n, b), s.dtype)
    if fn is not None and s.flags.c_contiguous:
        fn(s, lse, n * b, b, width, start, int(causal),
           native.get_num_threads())
        return lse
    if causal:
        _hide_later_keys(s, start)
    m = s.max(axis=-1, keepdims=True)
    seen = np.isfinite(m)
    shift = np.where(seen, m, 0)
    np.exp(s - shift, out=s)
    total = s.sum(axis=-1, keepdims=True)
    np.divide(s, total, out=s, where=total > 0)
    s[~np.broadcast_to(seen, s.shape)] = 0
    with np.errstate(divide="ignore"):
        lse[...] = np.where(seen, shift + np.log(total), -np.inf)[..., 0]
    return lse


def _folded(q: Any, k: Any, v: Any, mask: Any) -> tuple[Any, ...]:
    """q, k, v as (N, rows, E) arrays (N the leading dims' product) and the mask as an
    (N, L, S) view, where it broadcasts without copying."""
    lead = q.shape[:-2]
    n = math.prod(lead)
    q3, k3, v3 = (a.reshape(n, *a.shape[-2:]) for a in (q, k, v))
    if mask is not None:
        plane = (q.shape[-2], k.shape[-2])
        mask = (np.broadcast_to(mask, plane)[None] if mask.ndim <= 2 else
                np.broadcast_to(mask, (*lead, *plane)).reshape(n, *plane))
    return q3, k3, v3, mask


def _attention(q: Any, k: Any, v: Any, mask: Any, *, is_causal: bool,
               scale: float) -> tuple[Any, Any]:
    lead = q.shape[:-2]
    out, lse = _attention3(*_folded(q, k, v, mask), is_causal=is_causal, scale=scale)
    return out.reshape(*lead, *out.shape[1:]), lse.reshape(*lead, lse.shape[-1])


def _attention3(q: Any, k: Any, v: Any, mask: Any, *, is_causal: bool,
                scale: float) -> tuple[Any, Any]:
    dtype = q.dtype
    work = _F32 if dtype in LOW_PRECISION else dtype
    qs = q.astype(work, copy=False) * work.type(scale)
    kw, vw = k.astype(work, copy=False), v.astype(work, copy=False)
    n, length, _ = q.shape
    mk = _work_mask(mask, work)
    out = np.empty((n, length, v.shape[-1]), work)
    lse = np.empty((n, length), work)
    blocks = _blocks(n, length, k.shape[1], is_causal)
    for start in blocks:
        stop = min(length, start + blocks.step)
        keys = _keys_seen(start, stop, k.shape[1], is_causal)
        s = _masked_scores(qs, kw, mk, start, stop, keys)
        lse[:, start:stop] = _softmax_rows(s, start, is_causal)
        # (into a fresh array: numpy's matmul leaves BLAS for a strided ``out``)
        out[:, start:stop] = np.matmul(s, vw[:, :keys])
    return out.astype(dtype, copy=False), lse


def _attention_backward(g: Any, q: Any, k: Any, v: Any, out: Any, lse: Any, mask: Any, *,
                        is_causal: bool, scale: float) -> tuple[Any, Any, Any]:
    q3, k3, v3, mask3 = _folded(q, k, v, mask)
    n, length = q3.shape[:2]
    grads = _attention_backward3(g.reshape(n, *g.shape[-2:]), q3, k3, v3,
                                 out.reshape(n, *out.shape[-2:]), lse.reshape(n, length), mask3,
                                 is_causal=is_causal, scale=scale)
    return tuple(_heads_inner(d.reshape(a.shape))  # type: ignore[return-value]
                 for d, a in zip(grads, (q, k, v)))


def _heads_inner(d: Any) -> Any:
    """A (B, H, L, E) gradient laid out (B, L, H, E), as torch's CPU kernel writes it."""
    if d.ndim != 4:
        return d
    return np.ascontiguousarray(d.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)


def _heads_inner_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    b, h, length, e = shape
    return (length * h * e, e, h * e, 1)


def _attention_backward3(g: Any, q: Any, k: Any, v: Any, out: Any, lse: Any, mask: Any, *,
                         is_causal: bool, scale: float) -> tuple[Any, Any, Any]:
    dtype = q.dtype
    work = _F32 if dtype in LOW_PRECISION else dtype
    gw, qw, kw, vw = (a.astype(work, copy=False) for a in (g, q, k, v))
    qs = qw * work.type(scale)
    n, length, _ = q.shape
    width = k.shape[1]
    mk = _work_mask(mask, work)
    delta = (gw * out.astype(work, copy=False)).sum(axis=-1)
    dq, dk, dv = np.empty_like(qw), np.zeros_like(kw), np.zeros_like(vw)
    blocks = _blocks(n, length, width, is_causal)
    for start in blocks:
        stop = min(length, start + blocks.step)
        keys = _keys_seen(start, stop, width, is_causal)
        p = _masked_scores(qs, kw, mk, start, stop, keys)
        _probabilities(p, lse[:, start:stop], start, is_causal)
        g_blk = gw[:, start:stop]
        dv[:, :keys] += np.matmul(p.transpose(0, 2, 1), g_blk)
        dp = np.matmul(g_blk, vw[:, :keys].transpose(0, 2, 1))
        _softmax_backward_rows(p, dp, delta[:, start:stop])  # dp becomes the scores' grad
        dq[:, start:stop] = np.matmul(dp, kw[:, :keys])
        dk[:, :keys] += np.matmul(dp.transpose(0, 2, 1), qw[:, start:stop])
    dq *= work.type(scale)
    dk *= work.type(scale)
    return dq.astype(dtype, copy=False), dk.astype(dtype, copy=False), dv.astype(
        dtype, copy=False)


def _probabilities(s: Any, lse: Any, start: int, causal: bool) -> None:
    """The softmax of scores ``s`` in place from its log-sum-exp (0 past a causal limit
    and for rows that saw no key)."""
    fn = _KERNELS("probabilities" + _SUFFIX.get(s.dtype, "")) if s.size else None
    lse = np.ascontiguousarray(lse, s.dtype)
    n, b, width = s.shape
    if fn is not None and s.flags.c_contiguous:
        fn(s, lse, n * b, b, width, start, int(causal),
           native.get_num_threads())
        return
    if causal:
        _hide_later_keys(s, start)
    seen = np.isfinite(lse)[..., None]
    np.exp(s - np.where(seen, lse[..., None], 0), out=s)
    s[~np.broadcast_to(seen, s.shape)] = 0


def _softmax_backward_rows(p: Any, dp: Any, delta: Any) -> None:
    """``dp = p * (dp - delta)`` in place: the scores' gradient."""
    fn = _KERNELS("softmax_grad" + _SUFFIX.get(p.dtype, "")) if p.size else None
    delta = np.ascontiguousarray(delta, p.dtype)
    if fn is not None and p.flags.c_contiguous and dp.flags.c_contiguous:
        fn(p, dp, delta, p.shape[0] * p.shape[1], p.shape[2],
           native.get_num_threads())
        return
    dp -= delta[..., None]
    dp *= p


def _rule(q: Any, k: Any, v: Any, mask: Any, *, is_causal: bool, scale: float) -> Any:
    lse = _dt.float32 if meta._np(q.dtype) in LOW_PRECISION else q.dtype
    return (meta.empty((*q.shape[:-1], v.shape[-1]), q.dtype), meta.empty(q.shape[:-1], lse))


def _backward_rule(g: Any, q: Any, k: Any, v: Any, out: Any, lse: Any, mask: Any,
                   **params: Any) -> Any:
    return tuple(meta.strided(a.shape, a.dtype, _heads_inner_strides(a.shape)) if a.ndim == 4
                 else meta.empty(a.shape, a.dtype) for a in (q, k, v))


ATTENTION = register("_scaled_dot_product_flash_attention_for_cpu", _attention, _rule,
                     "library", arg_names=("query", "key", "value", "attn_mask"))
ATTENTION_BACKWARD = register(
    "_scaled_dot_product_flash_attention_for_cpu_backward", _attention_backward,
    _backward_rule, "library", False,
    arg_names=("grad_out", "query", "key", "value", "out", "logsumexp", "attn_mask"))

# ----------------------------------------------------------------------------- native CPU

_SOURCE = """
#include <math.h>
#include <stdint.h>

#pragma omp declare simd notinbranch
float expf(float);
#pragma omp declare simd notinbranch
double exp(double);

/* Rows of scores r = 0..rows-1; row r is query start + r % per_block: where causal, only
   its first (query + 1) keys take part. */
#define LIMIT (causal ? (start + r % per_block + 1 < n ? start + r % per_block + 1 : n) : n)

#define ROWS(T, SUFFIX, EXP, LOG)                                                      \\
void softmax_lse##SUFFIX(T *s, T *lse, int64_t rows, int64_t per_block, int64_t n,    \\
                         int64_t start, int causal, int threads) {                     \\
    _Pragma("omp parallel for num_threads(threads) schedule(static) if(rows * n >= 32768)") \\
    for (int64_t r = 0; r < rows; ++r) {                                               \\
        T *x = s + r * n;                                                              \\
        int64_t lim = LIMIT;                                                           \\
        T m = -INFINITY;                                                               \\
        _Pragma("omp simd reduction(max:m)")                                           \\
        for (int64_t i = 0; i < lim; ++i) m = x[i] > m ? x[i] : m;                     \\
        if (m == -INFINITY) {                                                          \\
            for (int64_t i = 0; i < n; ++i) x[i] = 0;                                  \\
            lse[r] = -INFINITY;                                                        \\
            continue;                                                                  \\
        }                                                                              \\
        T sum = 0;                                                                     \\
        _Pragma("omp simd reduction(+:sum)")                                           \\
        for (int64_t i = 0; i < lim; ++i) { T e = EXP(x[i] - m); x[i] = e; sum += e; } \\
        T inv = 1 / sum;                                                               \\
        _Pragma("omp simd")                                                            \\
        for (int64_t i = 0; i < lim; ++i) x[i] *= inv;                                 \\
        for (int64_t i = lim; i < n; ++i) x[i] = 0;                                    \\
        lse[r] = m + LOG(sum);                                                         \\
    }                                                                                  \\
}                                                                                      \\
                                                                                       \\
void probabilities##SUFFIX(T *s, const T *lse, int64_t rows, int64_t per_block,       \\
                           int64_t n, int64_t start, int causal, int threads) {        \\
    _Pragma("omp parallel for num_threads(threads) schedule(static) if(rows * n >= 32768)") \\
    for (int64_t r = 0; r < rows; ++r) {                                               \\
        T *x = s + r * n;                                                              \\
        int64_t lim = lse[r] == -INFINITY ? 0 : LIMIT;                                 \\
        const T l = lse[r];                                                            \\
        _Pragma("omp simd")                                                            \\
        for (int64_t i = 0; i < lim; ++i) x[i] = EXP(x[i] - l);                        \\
        for (int64_t i = lim; i < n; ++i) x[i] = 0;                                    \\
    }                                                                                  \\
}                                                                                      \\
                                                                                       \\
void softmax_grad##SUFFIX(const T *p, T *dp, const T *delta, int64_t rows, int64_t n,  \\
                          int threads) {                                               \\
    _Pragma("omp parallel for num_threads(threads) schedule(static) if(rows * n >= 32768)") \\
    for (int64_t r = 0; r < rows; ++r) {                                               \\
        const T *pr = p + r * n;                                                       \\
        T *d = dp + r * n;                                                             \\
        const T dr = delta[r];                                                         \\
        _Pragma("omp simd")                                                            \\
        for (int64_t i = 0; i < n; ++i) d[i] = pr[i] * (d[i] - dr);                    \\
    }                                                                                  \\
}

ROWS(float, _f32, expf, logf)
ROWS(double, _f64, exp, log)
"""
_P, _I64 = ctypes.c_void_p, ctypes.c_int64
_ROWS = [_P, _P, _I64, _I64, _I64, _I64, ctypes.c_int, ctypes.c_int]
_GRAD = [_P, _P, _P, _I64, _I64, ctypes.c_int]
_KERNELS = native.Kernels(_SOURCE, {
    **{f"{name}{suffix}": _ROWS for name in ("softmax_lse", "probabilities")
       for suffix in ("_f32", "_f64")},
    "softmax_grad_f32": _GRAD, "softmax_grad_f64": _GRAD})
_SUFFIX = {np.dtype(np.float32): "_f32", np.dtype(np.float64): "_f64"}
_NAMES = {dt: "softmax_lse" + suffix for dt, suffix in _SUFFIX.items()}


# ----------------------------------------------------------------------------- public API

def _check_inputs(query: Any, key: Any, value: Any, attn_mask: Any) -> None:
    for name, t in (("query", query), ("key", key), ("value", value)):
        check_operand("scaled_dot_product_attention", name, t, numbers=False)
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_c_name(query.dtype)} key.dtype: {_c_name(key.dtype)} and value.dtype: "
            f"{_c_name(value.dtype)} instead.")
    if attn_mask is not None and attn_mask.dtype not in (_dt.bool, _dt.float32, query.dtype):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_c_name(attn_mask.dtype)} and  query.dtype: "
            f"{_c_name(query.dtype)} instead.")


def _c_name(dt: Any) -> str:
    """A dtype as torch's C++ messages spell it (``float``, ``double``, ``long int``)."""
    return {"Float": "float", "Double": "double", "Long": "long int", "Int": "int",
            "Half": "c10::Half", "BFloat16": "c10::BFloat16", "Bool": "bool"}.get(
        scalar_type_name(dt), scalar_type_name(dt))


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """torch.nn.functional.scaled_dot_product_attention: ``softmax(q @ k^T * scale + mask)
    @ v`` over the last two dims, ``scale`` 1/sqrt(E) by default; a bool ``attn_mask``
    keeps its True entries, a float one is added; ``is_causal`` lets each query see the
    keys up to its own position; ``enable_gqa`` shares key/value heads among query heads."""
    _check_inputs(query, key, value, attn_mask)
    if scale is None:
        scale = 1 / math.sqrt(query.shape[-1])
    if enable_gqa and key.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        repeat = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(repeat, -3)
        value = value.repeat_interleave(repeat, -3)
    lead = broadcast_shape("scaled_dot_product_attention", query.shape[:-2], key.shape[:-2],
                           value.shape[:-2])
    mask_grad = attn_mask is not None and attn_mask.requires_grad
    if dropout_p > 0 or mask_grad or key.shape[-1] != query.shape[-1]:
        return _composite(query, key, value, attn_mask, dropout_p, is_causal, float(scale))
    if query.shape[:-2] != lead:
        query = query.expand(*lead, *query.shape[-2:])
    if key.shape[:-2] != lead:
        key, value = key.expand(*lead, *key.shape[-2:]), value.expand(*lead, *value.shape[-2:])
    return dispatch(ATTENTION, (query, key, value, attn_mask),  # type: ignore[no-any-return]
                    {"is_causal": bool(is_causal), "scale": float(scale)})[0]


def _composite(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None,
               dropout_p: float, is_causal: bool, scale: float) -> Tensor:
    """torch's math path, for what the fused kernel does not take (dropout, a mask that
    requires grad) and to raise torch's error for keys of another size than the queries."""
    from .dropout import dropout
    from .softmax import softmax

    scores = (query * scale) @ key.transpose(-2, -1)
    length, width = query.shape[-2], key.shape[-2]
    if is_causal:
        causal = query.new_ones((length, width), dtype=_dt.bool).tril()
        scores = scores.masked_fill(~causal, -math.inf)
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, -math.inf) if attn_mask.dtype == _dt.bool \
            else scores + attn_mask
    weights = softmax(scores, -1)
    # a query that sees no key gets 0, not NaN (torch's _safe_softmax)
    weights = weights.masked_fill(scores.isneginf().all(-1, keepdim=True), 0.0)
    if dropout_p > 0:
        weights = dropout(weights, dropout_p, True)
    return weights @ value  # type: ignore[no-any-return]


FUNCTIONS: list[str] = []
METHODS: dict[str, Any] = {}
