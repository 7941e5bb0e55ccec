"""Native CPU kernels of the nll_loss primitives: row-major float32/float64 inputs with
weights of their dtype; everything else (half types, strided inputs, no targets) runs the
reference in ``losses``.

Forward: without reduction, each target's loss, targets in parallel; with one, torch's own
loop, in order, into its cascade of partial sums, so that the sum rounds as torch's does.
Backward: the targets' entries of a zeroed gradient written, in parallel for many
targets. A target that names no class stops the loop: the caller raises torch's
IndexError for the first one.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

from .. import native
from .losses import (
    MEAN,
    NLL_LOSS2D_BACKWARD,
    NLL_LOSS2D_FORWARD,
    NLL_LOSS_BACKWARD,
    NLL_LOSS_FORWARD,
    NONE,
    _nll_loss,
    _nll_loss_backward,
    out_of_bounds,
)

_SOURCE = """
#include <stdint.h>

#define LEVELS 8
#define PARALLEL_FROM 65536

static int64_t ceil_log2(int64_t x) {
    return x <= 2 ? 1 : 64 - __builtin_clzll((uint64_t)(x - 1));
}

/* the offset of class c of target i in (rows, classes, positions): no division for the
   common one position per row */
static inline int64_t at(int64_t i, int64_t c, int64_t classes, int64_t positions) {
    if (positions == 1) return i * classes + c;
    const int64_t b = i / positions;
    return (b * classes + c) * positions + (i - b * positions);
}

/* x is (rows, classes, positions), t and out (rows * positions). torch's loops keep the
   weight's product and the partial sum's subtraction apart: no fused multiply-add. */
#define NLL(T, SUFFIX)                                                                 \\
__attribute__((optimize("fp-contract=off")))                                           \\
void nll_forward_##SUFFIX(const T *x, const int64_t *t, const T *w, T *out, T *total,  \\
                          int64_t *bad, int64_t rows, int64_t classes,                 \\
                          int64_t positions, int64_t ignore, int elementwise, int mean,\\
                          int threads) {                                               \\
    const int64_t n = rows * positions;                                                \\
    *bad = -1;                                                                         \\
    if (elementwise) {                                                                 \\
        int64_t first = n;                                                             \\
        const int big = n >= PARALLEL_FROM;                                            \\
        _Pragma("omp parallel for num_threads(threads) reduction(min:first) if(big)")  \\
        for (int64_t i = 0; i < n; ++i) {                                              \\
            const int64_t c = t[i];                                                    \\
            out[i] = 0;                                                                \\
            if (c == ignore) continue;                                                 \\
            if (c < 0 || c >= classes) { first = i < first ? i : first; continue; }    \\
            const T v = -x[at(i, c, classes, positions)];                              \\
            out[i] = w ? v * w[c] : v;                                                 \\
        }                                                                              \\
        if (first < n) *bad = first;                                                   \\
        *total = 0;                                                                    \\
        return;                                                                        \\
    }                                                                                  \\
    T loss[LEVELS] = {0}, weights[LEVELS] = {0};                                       \\
    int64_t power = ceil_log2(n) / LEVELS;                                             \\
    if (power < 4) power = 4;                                                          \\
    const int64_t mask = ((int64_t)1 << power) - 1;                                    \\
    int64_t ignored = 0;                                                               \\
    for (int64_t i = 0; i < n; ++i) {                                                  \\
        const int64_t c = t[i];                                                        \\
        if (c == ignore) { ++ignored; continue; }                                      \\
        if (c < 0 || c >= classes) { *bad = i; return; }                               \\
        const T d = x[at(i, c, classes, positions)];                                   \\
        if (w) { const T wc = w[c]; loss[0] -= d * wc; weights[0] += wc; }             \\
        else loss[0] -= d;                                                             \\
        for (int j = 0; j + 1 < LEVELS; ++j) {                                         \\
            if (i & (mask << (j * power))) break;                                      \\
            loss[j + 1] += loss[j]; weights[j + 1] += weights[j];                      \\
            loss[j] = 0; weights[j] = 0;                                               \\
        }                                                                              \\
    }                                                                                  \\
    T sum = 0, weight = 0;                                                             \\
    for (int j = 0; j < LEVELS; ++j) { sum += loss[j]; weight += weights[j]; }         \\
    if (!w) weight = (T)(n - ignored);                                                 \\
    *out = mean ? sum / weight : sum;                                                  \\
    *total = weight;                                                                   \\
}                                                                                      \\
                                                                                       \\
void nll_backward_##SUFFIX(const T *g, const int64_t *t, const T *w, const T *total,   \\
                           T *dx, int64_t *bad, int64_t rows, int64_t classes,         \\
                           int64_t positions, int64_t ignore, int elementwise,         \\
                           int mean, int threads) {                                    \\
    const int64_t n = rows * positions;                                                \\
    const T scale = elementwise ? 0 : -(mean ? g[0] / total[0] : g[0]);                \\
    int64_t first = n;                                                                 \\
    const int big = n >= PARALLEL_FROM;                                                \\
    _Pragma("omp parallel for num_threads(threads) reduction(min:first) if(big)")      \\
    for (int64_t i = 0; i < n; ++i) {                                                  \\
        const int64_t c = t[i];                                                        \\
        if (c == ignore) continue;                                                     \\
        if (c < 0 || c >= classes) { first = i < first ? i : first; continue; }        \\
        dx[at(i, c, classes, positions)] =                                             \\
            elementwise ? (w ? -w[c] : (T)-1) * g[i] : (w ? w[c] * scale : scale);     \\
    }                                                                                  \\
    *bad = first < n ? first : -1;                                                     \\
}

NLL(float, f32)
NLL(double, f64)
"""
_P, _I64, _INT = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
_ARGS = [_P, _P, _P, _P, _P, _P, _I64, _I64, _I64, _I64, _INT, _INT, _INT]
_KERNELS = native.Kernels(_SOURCE, {
    "nll_forward_f32": _ARGS, "nll_forward_f64": _ARGS,
    "nll_backward_f32": _ARGS, "nll_backward_f64": _ARGS})
_SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}
_INT64 = np.dtype(np.int64)


def _loop(kind: str, x: Any, t: Any, w: Any, *arrays: Any) -> Any:
    """The native ``kind`` loop where ``x`` is float32 or float64, as the weight (if any)
    and ``arrays`` are, and there are targets; else None."""
    suffix = _SUFFIX.get(x.dtype)
    if suffix is None or not t.size or w is not None and w.dtype != x.dtype:
        return None
    for a in arrays:
        if a.dtype != x.dtype:
            return None
    return _KERNELS(f"nll_{kind}_{suffix}")


def _geometry(x: Any) -> tuple[int, int, int]:
    """(rows, classes, positions) of a 1-d, 2-d or (N, C, H, W) input."""
    if x.ndim == 1:
        return 1, x.shape[0], 1
    return x.shape[0], x.shape[1], math.prod(x.shape[2:])


def _run(fn: Any, x: Any, t: Any, w: Any, *arrays: Any, reduction: int,
         ignore_index: int) -> None:
    """Call the loop ``fn`` on ``x``, the targets as int64 and ``arrays`` (its outputs and
    operands after the weight); raise torch's IndexError for a target out of range."""
    if t.dtype != _INT64 or not t.flags.c_contiguous:
        t = np.ascontiguousarray(t, _INT64)
    if w is not None and not w.flags.c_contiguous:
        w = np.ascontiguousarray(w)
    bad = np.empty(1, _INT64)
    rows, classes, positions = _geometry(x)
    fn(arrays[0], t, w, *arrays[1:], bad, rows, classes, positions,
       ignore_index, reduction == NONE and x.ndim >= 2, reduction == MEAN,
       native.get_num_threads())
    first = bad[0]
    if first >= 0:
        raise out_of_bounds(int(t.reshape(-1)[first]))


def _forward(x: Any, t: Any, w: Any, *, reduction: int, ignore_index: int) -> Any:
    fn = _loop("forward", x, t, w)
    if fn is None or not x.flags.c_contiguous:
        return _nll_loss(x, t, w, reduction=reduction, ignore_index=ignore_index)
    elementwise = reduction == NONE and x.ndim >= 2
    out = np.empty(t.shape if elementwise else (), x.dtype)
    total = np.empty((), x.dtype)
    _run(fn, x, t, w, x, out, total, reduction=reduction, ignore_index=ignore_index)
    return out, total


def _backward(g: Any, x: Any, t: Any, w: Any, total_weight: Any, *, reduction: int,
              ignore_index: int) -> Any:
    fn = _loop("backward", x, t, w, g, total_weight)
    if fn is None:
        return _nll_loss_backward(g, x, t, w, total_weight, reduction=reduction,
                                  ignore_index=ignore_index)
    # zeroed as numpy zeroes (a large array's pages by the system, as they are first
    # written): the loop writes the targets' entries only
    dx = np.zeros(x.shape, x.dtype)
    _run(fn, x, t, w, np.ascontiguousarray(g), np.ascontiguousarray(total_weight), dx,
         reduction=reduction, ignore_index=ignore_index)
    return dx


for _op in (NLL_LOSS_FORWARD, NLL_LOSS2D_FORWARD):
    _op.register_kernel("cpu", _forward)
for _op in (NLL_LOSS_BACKWARD, NLL_LOSS2D_BACKWARD):
    _op.register_kernel("cpu", _backward)
