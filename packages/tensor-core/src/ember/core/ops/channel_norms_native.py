"""Native CPU kernels of batch and group norm over row-major (N, C, L) float32/float64
inputs, with parameters and statistics of their dtype; everything else runs the reference
in ``channel_norms``.

Every loop walks the input in memory order (samples, then channels, then the spatial
dims), so that any L reads whole lines. Batch norm: the per-channel sums (in double) are
taken over a share of the samples by each thread and added at the end; the elementwise
passes split the samples among the threads. Group norm, as torch's kernel: one pass per
(sample, group) for its statistics and the output (``x * scale[c] + shift[c]``); backward
takes the per-(sample, channel) sums of g * x and of g, then one pass per (sample, group)
for the input's gradient, and the parameters' gradients from those sums.
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

#define PARALLEL_FROM 262144

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

/* group norm: x (n, c, l) in g groups of c / g channels; mean, rstd (n, g) */
#define GROUP(T, SUFFIX)                                                          \\
void group_norm_forward_##SUFFIX(const T *x, const T *w, const T *b, T *y, T *mean,    \\
                                 T *rstd, int64_t n, int64_t c, int64_t l, int64_t g,  \\
                                 double eps, int threads) {                            \\
    const int64_t d = c / g, size = d * l;                                              \\
    _Pragma("omp parallel for num_threads(threads) if(n * c * l >= PARALLEL_FROM)")       \\
    for (int64_t r = 0; r < n * g; ++r) {                                               \\
        const T *xr = x + r * size;                                                     \\
        T *yr = y + r * size;                                                           \\
        T s = 0, q = 0;                                                                 \\
        _Pragma("omp simd reduction(+:s)")                                              \\
        for (int64_t i = 0; i < size; ++i) s += xr[i];                                  \\
        T m = s / size;                                                                 \\
        if (isinf(m)) m = NAN; /* torch's running (Welford) mean of an inf */           \\
        _Pragma("omp simd reduction(+:q)")                                              \\
        for (int64_t i = 0; i < size; ++i) { T e = xr[i] - m; q += e * e; }             \\
        const T rs = (T)(1 / sqrt((double)(q / size) + eps)); /* eps in double, as torch's */\\
        mean[r] = m;                                                                    \\
        rstd[r] = rs;                                                                   \\
        const int64_t c0 = (r % g) * d;                                                 \\
        if (!w && !b) { /* (x - mean) * rstd, as torch's loop without parameters */     \\
            _Pragma("omp simd")                                                         \\
            for (int64_t i = 0; i < size; ++i) yr[i] = (xr[i] - m) * rs;                \\
            continue;                                                                   \\
        }                                                                               \\
        if (l == 1) { /* a value per channel: vectorise over the group's channels */    \\
            _Pragma("omp simd")                                                         \\
            for (int64_t j = 0; j < d; ++j) {                                           \\
                const T scale = w ? rs * w[c0 + j] : rs;                                \\
                yr[j] = xr[j] * scale + ((b ? b[c0 + j] : 0) - m * scale);              \\
            }                                                                           \\
            continue;                                                                   \\
        }                                                                               \\
        for (int64_t j = 0; j < d; ++j) {                                               \\
            const T scale = w ? rs * w[c0 + j] : rs;                                    \\
            const T shift = (b ? b[c0 + j] : 0) - m * scale;                            \\
            const T *xc = xr + j * l;                                                   \\
            T *yc = yr + j * l;                                                         \\
            _Pragma("omp simd")                                                         \\
            for (int64_t i = 0; i < l; ++i) yc[i] = xc[i] * scale + shift;              \\
        }                                                                               \\
    }                                                                                   \\
}                                                                                       \\
                                                                                        \\
void group_norm_backward_##SUFFIX(const T *gy, const T *x, const T *mean,              \\
                                  const T *rstd, const T *w, T *dx, T *dw, T *db,      \\
                                  int64_t n, int64_t c, int64_t l, int64_t g,          \\
                                  int threads) {                                       \\
    const int64_t d = c / g, size = d * l;                                              \\
    const int nt = n * c * l >= PARALLEL_FROM ? threads : 1;                            \\
    /* per (sample, channel): the sums of g * x and of g */                             \\
    double *sgx = (double *)malloc(sizeof(double) * (n * c > 0 ? 2 * n * c : 1));       \\
    double *sg = sgx + n * c;                                                           \\
    _Pragma("omp parallel for num_threads(nt)")                                         \\
    for (int64_t r = 0; r < n * g; ++r) {                                               \\
        const int64_t c0 = (r % g) * d, k0 = (r / g) * c + c0;                          \\
        const T *gr = gy + k0 * l, *xr = x + k0 * l;                                    \\
        double ds = 0, dbs = 0; /* the group's sums of g * x * w and of g * w */        \\
        if (l == 1) { /* a value per channel: vectorise over the group's channels */    \\
            _Pragma("omp simd reduction(+:ds, dbs)")                                    \\
            for (int64_t j = 0; j < d; ++j) {                                           \\
                const double a = (double)gr[j] * xr[j], wj = w ? w[c0 + j] : 1;        \\
                sgx[k0 + j] = a;                                                        \\
                sg[k0 + j] = gr[j];                                                     \\
                ds += a * wj;                                                           \\
                dbs += gr[j] * wj;                                                      \\
            }                                                                           \\
        } else {                                                                        \\
            for (int64_t j = 0; j < d; ++j) {                                           \\
                const T *gc = gr + j * l, *xc = xr + j * l;                             \\
                double a = 0, e = 0;                                                    \\
                _Pragma("omp simd reduction(+:a, e)")                                   \\
                for (int64_t i = 0; i < l; ++i) { a += (double)gc[i] * xc[i]; e += gc[i]; }\\
                sgx[k0 + j] = a;                                                        \\
                sg[k0 + j] = e;                                                         \\
                const double wj = w ? w[c0 + j] : 1;                                    \\
                ds += a * wj;                                                           \\
                dbs += e * wj;                                                          \\
            }                                                                           \\
        }                                                                               \\
        if (!dx) continue;                                                              \\
        const double m = mean[r], rs = rstd[r], s = 1.0 / size;                         \\
        const double c2 = (dbs * m - ds) * rs * rs * rs * s;                            \\
        const T b2 = (T)c2, c3 = (T)(-c2 * m - dbs * rs * s);                           \\
        T *o = dx + k0 * l;                                                             \\
        if (l == 1) {                                                                   \\
            _Pragma("omp simd")                                                         \\
            for (int64_t j = 0; j < d; ++j)                                             \\
                o[j] = (T)(w ? rs * w[c0 + j] : rs) * gr[j] + b2 * xr[j] + c3;          \\
            continue;                                                                   \\
        }                                                                               \\
        for (int64_t j = 0; j < d; ++j) {                                               \\
            const T c1 = (T)(w ? rs * w[c0 + j] : rs);                                  \\
            const T *gc = gr + j * l, *xc = xr + j * l;                                 \\
            T *oc = o + j * l;                                                          \\
            _Pragma("omp simd")                                                         \\
            for (int64_t i = 0; i < l; ++i) oc[i] = c1 * gc[i] + b2 * xc[i] + c3;       \\
        }                                                                               \\
    }                                                                                   \\
    if (dw || db) { /* each thread sums its share of the samples, row by row */         \\
        double *part = (double *)calloc((size_t)nt * 2 * (c > 0 ? c : 1), sizeof(double));\\
        _Pragma("omp parallel num_threads(nt)")                                         \\
        {                                                                               \\
            double *pw = part + (size_t)omp_get_thread_num() * 2 * c, *pb = pw + c;     \\
            _Pragma("omp for schedule(static)")                                         \\
            for (int64_t i = 0; i < n; ++i)                                             \\
                for (int64_t gi = 0; gi < g; ++gi) {                                    \\
                    const double m = mean[i * g + gi], rs = rstd[i * g + gi];           \\
                    const int64_t k0 = i * c + gi * d;                                  \\
                    _Pragma("omp simd")                                                 \\
                    for (int64_t j = 0; j < d; ++j) {                                   \\
                        pw[gi * d + j] += (sgx[k0 + j] - sg[k0 + j] * m) * rs;          \\
                        pb[gi * d + j] += sg[k0 + j];                                   \\
                    }                                                                   \\
                }                                                                       \\
        }                                                                               \\
        for (int64_t ch = 0; ch < c; ++ch) {                                            \\
            double tw = 0, tb = 0;                                                      \\
            for (int t = 0; t < nt; ++t) {                                              \\
                tw += part[(size_t)t * 2 * c + ch];                                     \\
                tb += part[(size_t)t * 2 * c + c + ch];                                 \\
            }                                                                           \\
            if (dw) dw[ch] = (T)tw;                                                     \\
            if (db) db[ch] = (T)tb;                                                     \\
        }                                                                               \\
        free(part);                                                                     \\
    }                                                                                   \\
    free(sgx);                                                                          \\
}

SUMS(float, f32)
SUMS(double, f64)
GROUP(float, f32)
GROUP(double, f64)
"""
_P, _I64 = ctypes.c_void_p, ctypes.c_int64
_SUMS = [_P, _P, _P, _P, _P, _I64, _I64, _I64, ctypes.c_int]
_APPLY = [_P] * 9 + [_I64, _I64, _I64, ctypes.c_int]
_GROUP = [_P] * 6 + [_I64] * 4 + [ctypes.c_double, ctypes.c_int]
_GROUP_BACKWARD = [_P] * 8 + [_I64] * 4 + [ctypes.c_int]
_KERNELS = native.Kernels(_SOURCE, {
    "channel_sums_f32": _SUMS, "channel_sums_f64": _SUMS,
    "channel_apply_f32": _APPLY, "channel_apply_f64": _APPLY,
    "group_norm_forward_f32": _GROUP, "group_norm_forward_f64": _GROUP,
    "group_norm_backward_f32": _GROUP_BACKWARD, "group_norm_backward_f64": _GROUP_BACKWARD})
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


def group_norm(x: Any, w: Any, b: Any, group: int, eps: float) -> tuple[Any, Any, Any] | None:
    """``(out, mean, rstd)`` of group norm, the statistics (N, group), or None."""
    suffix = _takes(x, w, b)
    if suffix is None:
        return None
    n, c, l = _dims(x)
    y, mean, rstd = np.empty(x.shape, x.dtype), np.empty((n, group), x.dtype), \
        np.empty((n, group), x.dtype)
    _KERNELS(f"group_norm_forward_{suffix}")(x, w, b, y, mean, rstd, n, c, l, group, eps,
                                             native.get_num_threads())
    return y, mean, rstd


def group_norm_gradients(g: Any, x: Any, mean: Any, rstd: Any, w: Any,
                         mask: tuple[bool, bool, bool]) -> tuple[Any, Any, Any] | None:
    """The input's, weight's and bias's gradients of group norm (None where ``mask`` does
    not ask), or None where the native loops do not take the arrays."""
    suffix = _takes(x, w)
    if suffix is None or g.dtype != x.dtype or mean.dtype != x.dtype or \
            rstd.dtype != x.dtype:
        return None
    g, mean, rstd = (np.ascontiguousarray(a) for a in (g, mean, rstd))
    n, c, l = _dims(x)
    dx = np.empty(x.shape, x.dtype) if mask[0] else None
    dw = np.empty(c, x.dtype) if mask[1] else None
    db = np.empty(c, x.dtype) if mask[2] else None
    _KERNELS(f"group_norm_backward_{suffix}")(g, x, mean, rstd, w, dx, dw, db, n, c, l,
                                              mean.shape[1], native.get_num_threads())
    return dx, dw, db
