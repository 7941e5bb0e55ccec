"""Native CPU kernels of the 2-d max pool and its backward, for float32/float64 inputs not
laid out channels-last (everything else runs the reference in ``pooling``).

The forward takes one output element at a time in the reference's window order, so that
values and indices are the same bits; the backward adds each gradient at its index within
the plane, whole planes to a thread so that no two threads add into one element.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

from .. import native
from .pooling import (
    _I64,
    MAX_POOL2D,
    MAX_POOL2D_BACKWARD,
    Ints,
    _last,
    _max_pool,
    _max_pool_backward,
    _spatial,
    pooled_size,
)

_SOURCE = """
#include <math.h>
#include <stdint.h>
#include <string.h>

#define PARALLEL_FROM 32768

/* a window's first in-bounds coordinate, where its maximum is when every value is -inf */
static inline int64_t first_inside(int64_t start, int64_t d) {
    return start < 0 ? start + (-start + d - 1) / d * d : start;
}

#define MAX_POOL(T, SUFFIX)                                                             \\
void max_pool2d_##SUFFIX(const T *x, T *y, int64_t *idx, int64_t planes, int64_t H,    \\
                         int64_t W, int64_t OH, int64_t OW, int64_t kh, int64_t kw,     \\
                         int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh,    \\
                         int64_t dw, int threads) {                                     \\
    const int64_t work = planes * OH * OW * kh * kw;                                    \\
    _Pragma("omp parallel for collapse(2) num_threads(threads) if(work >= PARALLEL_FROM)")\\
    for (int64_t p = 0; p < planes; ++p)                                                \\
        for (int64_t oh = 0; oh < OH; ++oh) {                                           \\
            const T *xp = x + p * H * W;                                                \\
            T *yr = y + (p * OH + oh) * OW;                                             \\
            int64_t *ir = idx + (p * OH + oh) * OW;                                     \\
            const int64_t h0 = oh * sh - ph, hf = first_inside(h0, dh);                 \\
            for (int64_t ow = 0; ow < OW; ++ow) {                                       \\
                const int64_t w0 = ow * sw - pw;                                        \\
                T best = -INFINITY;                                                     \\
                int64_t at = hf * W + first_inside(w0, dw);                             \\
                for (int64_t i = 0; i < kh; ++i) {                                      \\
                    const int64_t h = h0 + i * dh;                                      \\
                    if (h < 0 || h >= H) continue;                                      \\
                    for (int64_t j = 0; j < kw; ++j) {                                  \\
                        const int64_t w = w0 + j * dw;                                  \\
                        if (w < 0 || w >= W) continue;                                  \\
                        const T v = xp[h * W + w];                                      \\
                        /* torch's loop: a larger value or any NaN takes the place */   \\
                        if (v > best || isnan(v)) { best = v; at = h * W + w; }         \\
                    }                                                                   \\
                }                                                                       \\
                yr[ow] = best;                                                          \\
                ir[ow] = at;                                                            \\
            }                                                                           \\
        }                                                                               \\
}                                                                                       \\
                                                                                        \\
void max_pool2d_backward_##SUFFIX(const T *g, const int64_t *idx, T *dx, int64_t planes,\\
                                  int64_t plane, int64_t outs, int64_t *bad,            \\
                                  int threads) {                                        \\
    int64_t wrong = 0;                                                                  \\
    const int64_t work = planes * (plane + outs);                                       \\
    _Pragma("omp parallel for num_threads(threads) reduction(|:wrong) if(work >= PARALLEL_FROM)")\\
    for (int64_t p = 0; p < planes; ++p) {                                              \\
        T *dp = dx + p * plane;                                                         \\
        const T *gp = g + p * outs;                                                     \\
        const int64_t *ip = idx + p * outs;                                             \\
        memset(dp, 0, sizeof(T) * plane);                                               \\
        for (int64_t o = 0; o < outs; ++o) {                                            \\
            const int64_t at = ip[o];                                                   \\
            if (at < 0 || at >= plane) { wrong = 1; continue; }                         \\
            dp[at] += gp[o];                                                            \\
        }                                                                               \\
    }                                                                                   \\
    bad[0] = wrong;                                                                     \\
}

MAX_POOL(float, f32)
MAX_POOL(double, f64)
"""
_P, _N = ctypes.c_void_p, ctypes.c_int64
_KERNELS = native.Kernels(_SOURCE, {
    **{f"max_pool2d_{s}": [_P, _P, _P] + [_N] * 13 + [ctypes.c_int] for s in ("f32", "f64")},
    **{f"max_pool2d_backward_{s}": [_P, _P, _P, _N, _N, _N, _P, ctypes.c_int]
       for s in ("f32", "f64")}})
_SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


def _native_takes(x: Any) -> bool:
    """Whether the native loops take ``x``: float32/float64, not laid out channels-last
    (whose results keep that layout)."""
    return x.dtype in _SUFFIX and x.size > 0 and (x.flags.c_contiguous or not _last(x))


def _max_pool2d_kernel(x: Any, *, kernel_size: Ints, stride: Ints, padding: Ints,
                       dilation: Ints, ceil_mode: bool) -> tuple[Any, Any]:
    fn = _KERNELS(f"max_pool2d_{_SUFFIX[x.dtype]}") if _native_takes(x) else None
    if fn is None:
        return _max_pool(x, kernel_size=kernel_size, stride=stride, padding=padding,
                         dilation=dilation, ceil_mode=ceil_mode)
    size = _spatial(x, 2)
    out = tuple(pooled_size(*a, ceil_mode) for a in zip(size, kernel_size, stride, padding,
                                                          dilation))
    lead = x.shape[:-2]
    z = np.ascontiguousarray(x)
    y, idx = np.empty(lead + out, x.dtype), np.empty(lead + out, _I64)
    fn(z, y, idx, math.prod(lead), *size, *out, *kernel_size, *stride,
       *padding, *dilation, native.get_num_threads())
    return y, idx


def _max_pool2d_backward_kernel(g: Any, x: Any, indices: Any, **params: Any) -> Any:
    fn = None
    if g.dtype == x.dtype and indices.dtype == _I64 and _native_takes(x):
        fn = _KERNELS(f"max_pool2d_backward_{_SUFFIX[x.dtype]}")
    if fn is not None:
        g, idx = np.ascontiguousarray(g), np.ascontiguousarray(indices)
        dx, bad = np.empty(x.shape, x.dtype), np.zeros(1, _I64)
        planes = math.prod(x.shape[:-2])
        fn(g, idx, dx, planes, math.prod(_spatial(x, 2)),
           g.size // max(planes, 1), bad, native.get_num_threads())
        if not bad[0]:
            return dx
    return _max_pool_backward(g, x, indices, **params)


MAX_POOL2D.register_kernel("cpu", _max_pool2d_kernel)
MAX_POOL2D_BACKWARD.register_kernel("cpu", _max_pool2d_backward_kernel)
