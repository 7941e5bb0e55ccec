"""Native CPU kernels of layer and RMS normalization: row-major float32/float64 inputs
with parameters of their dtype; everything else runs the reference in ``normalization``.

Forward, per row: the mean (layer norm only), then the variance about it in a second
pass (as exact as torch's Welford moments for rows this short), then the scaled and
shifted output. Backward, per row: the two row sums the input's gradient needs, then
that gradient; the weight's and bias's gradients sum over rows into one buffer per
thread, added at the end. Rows run in parallel where the tensor is large enough to pay
for the threads.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

from .. import native
from .normalization import (
    FUSED_RMS_NORM,
    FUSED_RMS_NORM_BACKWARD,
    NATIVE_LAYER_NORM,
    NATIVE_LAYER_NORM_BACKWARD,
    _layer_norm,
    _layer_norm_backward,
    _rms_norm,
    _rms_norm_backward,
)

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

/* a weight of ones or a bias of zeros where the caller gives none */
#define FILLED(T, p, n, v, tmp)                                                        \\
    if (!p) { tmp = (T *)malloc(sizeof(T) * (n > 0 ? n : 1));                          \\
              for (int64_t i = 0; i < n; ++i) tmp[i] = v; p = tmp; }

#define NORM(T, SUFFIX, SQRT)                                                          \\
void norm_forward_##SUFFIX(const T *x, const T *w, const T *b, T *y, T *mean, T *rstd, \\
                           int64_t rows, int64_t n, double eps, int rms, int threads) {\\
    T *ones = 0, *zeros = 0;                                                           \\
    FILLED(T, w, n, 1, ones)                                                           \\
    FILLED(T, b, n, 0, zeros)                                                          \\
    const T e = (T)eps;                                                                \\
    _Pragma("omp parallel for num_threads(threads) if(rows * n >= PARALLEL_FROM)")      \\
    for (int64_t r = 0; r < rows; ++r) {                                               \\
        const T *xr = x + r * n;                                                       \\
        T *yr = y + r * n;                                                             \\
        T m = 0, q = 0;                                                                \\
        if (!rms) {                                                                    \\
            T s = 0;                                                                   \\
            _Pragma("omp simd reduction(+:s)")                                         \\
            for (int64_t i = 0; i < n; ++i) s += xr[i];                                \\
            m = s / n;                                                                 \\
            if (isinf(m)) m = NAN; /* torch's running (Welford) mean of an inf */      \\
            mean[r] = m;                                                               \\
        }                                                                              \\
        _Pragma("omp simd reduction(+:q)")                                             \\
        for (int64_t i = 0; i < n; ++i) { T d = xr[i] - m; q += d * d; }               \\
        T rs = 1 / SQRT(q / n + e);                                                    \\
        rstd[r] = rs;                                                                  \\
        _Pragma("omp simd")                                                            \\
        for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] - m) * rs * w[i] + b[i];         \\
    }                                                                                  \\
    free(ones);                                                                        \\
    free(zeros);                                                                       \\
}                                                                                      \\
                                                                                       \\
void norm_backward_##SUFFIX(const T *g, const T *x, const T *mean, const T *rstd,      \\
                            const T *w, T *dx, T *dw, T *db, int64_t rows, int64_t n,  \\
                            int threads) {                                             \\
    T *ones = 0;                                                                       \\
    FILLED(T, w, n, 1, ones)                                                           \\
    int nt = rows * n >= PARALLEL_FROM ? threads : 1;                                  \\
    int sums = dw || db;                                                               \\
    T *part = sums ? (T *)calloc((size_t)nt * 2 * (n > 0 ? n : 1), sizeof(T)) : 0;     \\
    _Pragma("omp parallel num_threads(nt)")                                            \\
    {                                                                                  \\
        T *pw = sums ? part + (size_t)omp_get_thread_num() * 2 * n : 0;               \\
        T *pb = sums ? pw + n : 0;                                                     \\
        _Pragma("omp for schedule(static)")                                            \\
        for (int64_t r = 0; r < rows; ++r) {                                           \\
            const T *gr = g + r * n, *xr = x + r * n;                                  \\
            const T m = mean ? mean[r] : 0, rs = rstd[r];                              \\
            if (dx) {                                                                  \\
                T a = 0, c = 0;                                                        \\
                _Pragma("omp simd reduction(+:a, c)")                                  \\
                for (int64_t i = 0; i < n; ++i) {                                      \\
                    T gw = gr[i] * w[i];                                               \\
                    a += gw;                                                           \\
                    c += gw * (xr[i] - m) * rs;                                        \\
                }                                                                      \\
                a = mean ? a / n : 0;                                                  \\
                c /= n;                                                                \\
                T *dxr = dx + r * n;                                                   \\
                _Pragma("omp simd")                                                    \\
                for (int64_t i = 0; i < n; ++i)                                        \\
                    dxr[i] = rs * (gr[i] * w[i] - a - (xr[i] - m) * rs * c);           \\
            }                                                                          \\
            if (sums) {                                                                \\
                _Pragma("omp simd")                                                    \\
                for (int64_t i = 0; i < n; ++i) {                                      \\
                    pw[i] += gr[i] * (xr[i] - m) * rs;                                 \\
                    pb[i] += gr[i];                                                    \\
                }                                                                      \\
            }                                                                          \\
        }                                                                              \\
    }                                                                                  \\
    if (sums) {                                                                        \\
        for (int64_t i = 0; i < n; ++i) {                                              \\
            T sw = 0, sb = 0;                                                          \\
            for (int t = 0; t < nt; ++t) {                                             \\
                sw += part[(size_t)t * 2 * n + i];                                     \\
                sb += part[(size_t)t * 2 * n + n + i];                                 \\
            }                                                                          \\
            if (dw) dw[i] = sw;                                                        \\
            if (db) db[i] = sb;                                                        \\
        }                                                                              \\
    }                                                                                  \\
    free(part);                                                                        \\
    free(ones);                                                                        \\
}

NORM(float, f32, sqrtf)
NORM(double, f64, sqrt)
"""
_P, _I64 = ctypes.c_void_p, ctypes.c_int64
_FORWARD = [_P, _P, _P, _P, _P, _P, _I64, _I64, ctypes.c_double, ctypes.c_int, ctypes.c_int]
_BACKWARD = [_P, _P, _P, _P, _P, _P, _P, _P, _I64, _I64, ctypes.c_int]
_KERNELS = native.Kernels(_SOURCE, {
    "norm_forward_f32": _FORWARD, "norm_forward_f64": _FORWARD,
    "norm_backward_f32": _BACKWARD, "norm_backward_f64": _BACKWARD})
_SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


def _native(kind: str, x: Any, *arrays: Any) -> Any:
    """The native ``kind`` loop for ``x``'s dtype, where ``x`` and every given array are
    row-major in that dtype and there is work to do; else None."""
    suffix = _SUFFIX.get(x.dtype)
    if suffix is None or not x.size or not x.flags.c_contiguous or not all(
            a is None or (a.dtype == x.dtype and a.flags.c_contiguous) for a in arrays):
        return None
    return _KERNELS(f"norm_{kind}_{suffix}")


def _forward(x: Any, w: Any, b: Any, ns: tuple[int, ...], eps: float,
             rms: bool) -> tuple[Any, Any, Any] | None:
    """``(out, mean, rstd)`` from the native loop (mean None for the RMS norm), or None."""
    fn = _native("forward", x, w, b)
    if fn is None:
        return None
    n = math.prod(ns)
    rows = x.size // n
    stat = x.shape[:x.ndim - len(ns)] + (1,) * len(ns)
    y, rstd = np.empty(x.shape, x.dtype), np.empty(stat, x.dtype)
    mean = None if rms else np.empty(stat, x.dtype)
    fn(x, w, b, y, mean, rstd, rows, n, eps, int(rms),
       native.get_num_threads())
    return y, mean, rstd


def _backward(g: Any, x: Any, mean: Any, rstd: Any, w: Any, ns: tuple[int, ...],
              mask: tuple[bool, ...]) -> tuple[Any, Any, Any] | None:
    if g.dtype == x.dtype and not g.flags.c_contiguous:
        g = np.ascontiguousarray(g)  # an expanded gradient (of a sum) read once
    fn = _native("backward", x, g, mean, rstd, w)
    if fn is None:
        return None
    dx = np.empty(x.shape, x.dtype) if mask[0] else None
    dw = np.empty(ns, x.dtype) if mask[1] else None
    db = np.empty(ns, x.dtype) if len(mask) > 2 and mask[2] else None
    n = math.prod(ns)
    fn(g, x, mean, rstd, w, dx, dw, db, x.size // n, n,
       native.get_num_threads())
    return dx, dw, db



def _layer_norm_kernel(x: Any, w: Any, b: Any, *, normalized_shape: tuple[int, ...],
                       eps: float) -> tuple[Any, Any, Any]:
    out = _forward(x, w, b, normalized_shape, eps, rms=False)
    return out if out is not None else _layer_norm(x, w, b, normalized_shape=normalized_shape,
                                                   eps=eps)


def _layer_norm_backward_kernel(g: Any, x: Any, mean: Any, rstd: Any, w: Any, *,
                                normalized_shape: tuple[int, ...],
                                output_mask: tuple[bool, bool, bool]) -> tuple[Any, Any, Any]:
    out = _backward(g, x, mean, rstd, w, normalized_shape, output_mask)
    return out if out is not None else _layer_norm_backward(
        g, x, mean, rstd, w, normalized_shape=normalized_shape, output_mask=output_mask)


def _rms_norm_kernel(x: Any, w: Any, *, normalized_shape: tuple[int, ...],
                     eps: float) -> tuple[Any, Any]:
    out = _forward(x, w, None, normalized_shape, eps, rms=True)
    return (out[0], out[2]) if out is not None else _rms_norm(
        x, w, normalized_shape=normalized_shape, eps=eps)


def _rms_norm_backward_kernel(g: Any, x: Any, rstd: Any, w: Any, *,
                              normalized_shape: tuple[int, ...],
                              output_mask: tuple[bool, bool]) -> tuple[Any, Any]:
    out = _backward(g, x, None, rstd, w, normalized_shape, output_mask)
    return out[:2] if out is not None else _rms_norm_backward(
        g, x, rstd, w, normalized_shape=normalized_shape, output_mask=output_mask)


NATIVE_LAYER_NORM.register_kernel("cpu", _layer_norm_kernel)
NATIVE_LAYER_NORM_BACKWARD.register_kernel("cpu", _layer_norm_backward_kernel)
FUSED_RMS_NORM.register_kernel("cpu", _rms_norm_kernel)
FUSED_RMS_NORM_BACKWARD.register_kernel("cpu", _rms_norm_backward_kernel)
