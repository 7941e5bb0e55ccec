"""Native CPU kernels of batch norm over row-major (N, C, L) float32/float64 inputs, with
parameters and statistics of their dtype; everything else runs the reference in
``channel_norms``.

Every loop walks the input in memory order (samples, then channels, then the spatial
dims), so that any L reads whole lines: the per-channel sums (in double) are taken over
a share of the samples by each thread and added at the end; the elementwise passes split
the samples among the threads.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

from .. import native

_SOURCE = """
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#else
static int omp_get_thread_num(void) { return 0; }
#endif

#define PARALLEL_FROM 65536

/* per-channel sums over the samples and the spatial dims: of a (and, where b is given,
   of a * (b - centre[c])), into s1 (and s2); each thread sums a share of the samples */
#define SUMS(T, SUFFIX)                                                                 \\
void channel_sums_##SUFFIX(const T *a, const T *b, const T *centre, double *s1,        \\
                           double *s2, int64_t n, int64_t c, int64_t l, int threads) { \\
    int nt = n * c * l >= PARALLEL_FROM ? threads : 1;                                  \\
    double *part = (double *)calloc((size_t)nt * 2 * (c > 0 ? c : 1), sizeof(double)); \\
    _Pragma("omp parallel num_threads(nt)")                                             \\
    {                                                                                   \\
        double *p1 = part + (size_t)omp_get_thread_num() * 2 * c, *p2 = p1 + c;        \\
        if (l == 1) { /* one value per channel in a row: vectorise over the channels */ \\
            _Pragma("omp for schedule(static)")                                         \\
            for (int64_t i = 0; i < n; ++i) {                                           \\
                const T *ar = a + i * c, *br = b ? b + i * c : 0;                       \\
                if (b) {                                                                \\
                    _Pragma("omp simd")                                                 \\
                    for (int64_t j = 0; j < c; ++j) {                                   \\
                        p1[j] += ar[j];                                                 \\
                        p2[j] += (double)ar[j] * (br[j] - centre[j]);                   \\
                    }                                                                   \\
                } else {                                                                \\
                    _Pragma("omp simd")                                                 \\
                    for (int64_t j = 0; j < c; ++j) p1[j] += ar[j];                     \\
                }                                                                       \\
            }                                                                           \\
        } else {                                                                        \\
        _Pragma("omp for schedule(static)")                                             \\
        for (int64_t i = 0; i < n; ++i)                                                 \\
            for (int64_t j = 0; j < c; ++j) {                                           \\
                const T *ar = a + (i * c + j) * l;                                      \\
                double t1 = 0, t2 = 0;                                                  \\
                if (b) {                                                                \\
                    const T *br = b + (i * c + j) * l;                                  \\
                    const T m = centre[j];                                              \\
                    _Pragma("omp simd reduction(+:t1, t2)")                             \\
                    for (int64_t k = 0; k < l; ++k) {                                   \\
                        t1 += ar[k];                                                    \\
                        t2 += (double)ar[k] * (br[k] - m);                              \\
                    }                                                                   \\
                } else {                                                                \\
                    _Pragma("omp simd reduction(+:t1)")                                 \\
                    for (int64_t k = 0; k < l; ++k) t1 += ar[k];                        \\
                }                                                                       \\
                p1[j] += t1;                                                            \\
                p2[j] += t2;                                                            \\
            }                                                                           \\
        }                                                                               \\
    }                                                                                   \\
    for (int64_t j = 0; j < c; ++j) {                                                   \\
        double t1 = 0, t2 = 0;                                                          \\
        for (int t = 0; t < nt; ++t) {                                                  \\
            t1 += part[(size_t)t * 2 * c + j];                                          \\
            t2 += part[(size_t)t * 2 * c + c + j];                                      \\
        }                                                                               \\
        s1[j] = t1;                                                                     \\
        if (s2) s2[j] = t2;                                                             \\
    }                                                                                   \\
    free(part);                                                                         \\
}                                                                                       \\
                                                                                        \\
/* out = (a - centre[c]) * scale[c] * w[c] + shift[c] where b0 is NULL; with gradients  \\
   (b0, b1 the per-channel sums of g and of g * xhat over count): out = scale[c] * w[c] \\
   * (a - b0[c] - xhat * b1[c]), xhat = (x - centre[c]) * scale[c] */                   \\
void channel_apply_##SUFFIX(const T *a, const T *x, const T *centre, const T *scale,   \\
                            const T *w, const T *shift, const T *b0, const T *b1,      \\
                            T *out, int64_t n, int64_t c, int64_t l, int threads) {    \\
    _Pragma("omp parallel for num_threads(threads) if(n * c * l >= PARALLEL_FROM)")       \\
    for (int64_t i = 0; i < n; ++i) {                                                   \\
        if (l == 1) { /* vectorise over the channels */                                 \\
            const T *ar = a + i * c, *xr = x ? x + i * c : 0;                           \\
            T *o = out + i * c;                                                         \\
            if (!b0) {                                                                  \\
                _Pragma("omp simd")                                                     \\
                for (int64_t j = 0; j < c; ++j)                                         \\
                    o[j] = (ar[j] - centre[j]) * scale[j] * (w ? w[j] : 1)              \\
                           + (shift ? shift[j] : 0);                                    \\
            } else {                                                                    \\
                _Pragma("omp simd")                                                     \\
                for (int64_t j = 0; j < c; ++j)                                         \\
                    o[j] = (w ? w[j] : 1) * scale[j] * (ar[j] - b0[j]                   \\
                           - (xr[j] - centre[j]) * scale[j] * b1[j]);                   \\
            }                                                                           \\
            continue;                                                                   \\
        }                                                                               \\
        for (int64_t j = 0; j < c; ++j) {                                               \\
            const int64_t at = (i * c + j) * l;                                         \\
            const T m = centre[j], s = scale[j], k = w ? w[j] * s : s;                  \\
            if (!b0) {                                                                  \\
                const T sh = shift ? shift[j] : 0;                                      \\
                _Pragma("omp simd")                                                     \\
                for (int64_t q = 0; q < l; ++q)                                         \\
                    out[at + q] = (a[at + q] - m) * s * (w ? w[j] : 1) + sh;            \\
            } else {                                                                    \\
                const T g0 = b0[j], g1 = b1[j];                                         \\
                _Pragma("omp simd")                                                     \\
                for (int64_t q = 0; q < l; ++q)                                         \\
                    out[at + q] = k * (a[at + q] - g0 - (x[at + q] - m) * s * g1);      \\
            }                                                                           \\
        }                                                                               \\
    }                                                                                   \\
}

SUMS(float, f32)
SUMS(double, f64)
"""
_P, _I64 = ctypes.c_void_p, ctypes.c_int64
_SUMS = [_P, _P, _P, _P, _P, _I64, _I64, _I64, ctypes.c_int]
_APPLY = [_P] * 9 + [_I64, _I64, _I64, ctypes.c_int]
_KERNELS = native.Kernels(_SOURCE, {
    "channel_sums_f32": _SUMS, "channel_sums_f64": _SUMS,
    "channel_apply_f32": _APPLY, "channel_apply_f64": _APPLY})
_SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


def _takes(x: Any, *arrays: Any) -> str | None:
    """The dtype suffix where the native loops take ``x`` and the per-channel ``arrays``."""
    suffix = _SUFFIX.get(x.dtype)
    if suffix is None or not x.size or x.ndim < 2 or not x.flags.c_contiguous or not all(
            a is None or (a.dtype == x.dtype and a.flags.c_contiguous) for a in arrays):
        return None
    return suffix if _KERNELS(f"channel_sums_{suffix}") is not None else None


# below this many values per channel in a sample, the loops run over (N, C * L) with each
# (channel, position) a column of its own: inner loops over the row, vectorised
_COLUMNS_BELOW = 16


def _dims(x: Any) -> tuple[int, int, int]:
    return x.shape[0], x.shape[1], math.prod(x.shape[2:])


def _columns(l: int, *vectors: Any) -> list[Any]:
    """Per-channel vectors as per-column ones where the loops take columns."""
    return [v if v is None or l == 1 else np.repeat(v, l) for v in vectors]


def _sums(suffix: str, a: Any, b: Any, centre: Any) -> tuple[Any, Any]:
    n, c, l = _dims(a)
    cols = l if l < _COLUMNS_BELOW else 1
    (centre,) = _columns(cols, centre)
    width = c * cols
    s1, s2 = np.empty(width), np.empty(width) if b is not None else None
    _KERNELS(f"channel_sums_{suffix}")(a, b, centre, s1, s2, n, width,
                                       l // cols, native.get_num_threads())
    if cols > 1:
        s1 = s1.reshape(c, cols).sum(axis=1)
        s2 = None if s2 is None else s2.reshape(c, cols).sum(axis=1)
    return s1, s2


def _apply(suffix: str, a: Any, x: Any, centre: Any, scale: Any, w: Any, shift: Any,
           b0: Any, b1: Any) -> Any:
    n, c, l = _dims(a)
    cols = l if l < _COLUMNS_BELOW else 1
    vectors = _columns(cols, centre, scale, w, shift, b0, b1)
    out = np.empty(a.shape, a.dtype)
    _KERNELS(f"channel_apply_{suffix}")(a, x, *vectors, out, n, c * cols,
                                        l // cols, native.get_num_threads())
    return out


def statistics(x: Any, eps: float) -> tuple[Any, Any, Any] | None:
    """The batch's per-channel mean, biased variance and 1/sqrt(var + eps), or None."""
    suffix = _takes(x)
    if suffix is None:
        return None
    count = x.size // x.shape[1]
    total, _ = _sums(suffix, x, None, None)
    mean = (total / count).astype(x.dtype)
    _, squares = _sums(suffix, x, x, mean)  # sum of x * (x - mean) = sum of (x - mean)^2
    var = squares / count
    return mean, var.astype(x.dtype), (1 / np.sqrt(var + eps)).astype(x.dtype)


def normalize(x: Any, centre: Any, scale: Any, w: Any, b: Any) -> Any:
    """``(x - centre) * scale * w + b`` per channel, or None."""
    suffix = _takes(x, centre, scale, w, b)
    return None if suffix is None else _apply(suffix, x, None, centre, scale, w, b, None, None)


def gradients(g: Any, x: Any, centre: Any, scale: Any, w: Any, train: bool,
              want_dx: bool) -> tuple[Any, Any, Any] | None:
    """The input's gradient (where ``want_dx``) and the per-channel sums of g * xhat and
    of g (the weight's and bias's gradients), or None."""
    suffix = _takes(x, centre, scale, w)
    if suffix is None or g.dtype != x.dtype or not g.flags.c_contiguous:
        return None
    sum_g, sum_gc = _sums(suffix, g, x, centre)  # sum of g, of g * (x - centre)
    sum_gx = sum_gc * scale
    dx = None
    if want_dx:
        count = x.size // x.shape[1]
        if train:
            b0, b1 = (sum_g / count).astype(x.dtype), (sum_gx / count).astype(x.dtype)
        else:
            b0 = b1 = np.zeros(x.shape[1], x.dtype)
        dx = _apply(suffix, g, x, centre, scale, w, None, b0, b1)
    return dx, sum_gx, sum_g
