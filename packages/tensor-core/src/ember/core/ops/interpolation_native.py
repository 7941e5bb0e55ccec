"""Native CPU kernels of the 2-d interpolations (nearest, nearest-exact, bilinear, bicubic)
and their backward, for row-major float32/float64 tensors (everything else runs the
reference in ``interpolation``).

The taps come from ``interpolation_taps``, as the reference takes them (computed once per
size and scale). The forward resizes each input row along W once per thread that needs it
(the last few are kept: consecutive output rows share them), then sums the rows, in torch's
generic kernel's order and with its fused multiply-adds (a pair ``t0 * w0 + t1 * w1`` as
``fma(t0, w0, t1 * w1)``, longer sums one ``fma`` per tap), so it gives torch's bits where
torch takes that kernel. Planes and output rows run in parallel. The backward sums each
plane's gradient along H into rows of the input's height, then adds them, weighted, at
their taps along W; whole planes to a thread, so that no two threads add into one
element.
"""

from __future__ import annotations

import ctypes
import functools
import math
from typing import Any

import numpy as np

from .. import native
from .interpolation import BACKWARD_OPS, FORMS, OPS, Form, vectorized
from .interpolation_taps import taps

_SOURCE = """
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* taps times outputs: below this, waking the threads costs more than they save (an
   (8, 8, 16, 16) input doubled ran forward and backward faster on one thread) */
#define PARALLEL_FROM 524288

/* The taps come tap-major: dim H's k indices (already times W) and weights for output
   row oh at ih[a * OH + oh], wh[a * OH + oh]; dim W's likewise by column. Weights NULL:
   nearest (one tap, copied). */
#define RESAMPLE(T, SUFFIX, FMA)                                                        \\
/* input row xr resized along W into out: its taps' weighted sum, in torch's order */   \\
static void along_w_##SUFFIX(const T *xr, T *out, int64_t OW, int64_t kw,              \\
                             const int64_t *iw, const T *ww) {                          \\
    if (kw == 2) {                                                                      \\
        const int64_t *i0 = iw, *i1 = iw + OW;                                          \\
        const T *w0 = ww, *w1 = ww + OW;                                                \\
        for (int64_t ow = 0; ow < OW; ++ow)                                             \\
            out[ow] = FMA(xr[i0[ow]], w0[ow], xr[i1[ow]] * w1[ow]);                     \\
        return;                                                                         \\
    }                                                                                   \\
    for (int64_t ow = 0; ow < OW; ++ow) {                                               \\
        T t = xr[iw[ow]] * ww[ow];                                                      \\
        for (int64_t b = 1; b < kw; ++b) t = FMA(xr[iw[b * OW + ow]], ww[b * OW + ow], t);\\
        out[ow] = t;                                                                    \\
    }                                                                                   \\
}                                                                                       \\
                                                                                        \\
void resample2d_##SUFFIX(const T *x, T *y, int64_t planes, int64_t H, int64_t W,       \\
                         int64_t OH, int64_t OW, int64_t kh, const int64_t *ih,        \\
                         const T *wh, int64_t kw, const int64_t *iw, const T *ww,      \\
                         int threads) {                                                 \\
    const int64_t work = planes * OH * OW * kh * kw;                                    \\
    _Pragma("omp parallel num_threads(threads) if(work >= PARALLEL_FROM)")              \\
    {                                                                                   \\
        /* each thread's last kh input rows resized along W, slot r % kh holding row r */ \\
        T *rows = wh ? (T *)malloc(sizeof(T) * kh * (OW > 0 ? OW : 1)) : NULL;          \\
        int64_t held[4] = {-1, -1, -1, -1};                                             \\
        _Pragma("omp for collapse(2) schedule(static)")                                 \\
        for (int64_t p = 0; p < planes; ++p)                                            \\
            for (int64_t oh = 0; oh < OH; ++oh) {                                       \\
                const T *xp = x + p * H * W;                                            \\
                T *yr = y + (p * OH + oh) * OW;                                         \\
                if (wh == NULL) {                                                       \\
                    const T *xr = xp + ih[oh];                                          \\
                    for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = xr[iw[ow]];            \\
                    continue;                                                           \\
                }                                                                       \\
                const T *t[4];                                                          \\
                for (int64_t a = 0; a < kh; ++a) {                                      \\
                    const int64_t r = ih[a * OH + oh] / W, slot = r % kh;               \\
                    T *buf = rows + slot * OW;                                          \\
                    if (held[slot] != p * H + r) {                                      \\
                        along_w_##SUFFIX(xp + r * W, buf, OW, kw, iw, ww);              \\
                        held[slot] = p * H + r;                                         \\
                    }                                                                   \\
                    t[a] = buf;                                                         \\
                }                                                                       \\
                if (kh == 2) {                                                          \\
                    const T v0 = wh[oh], v1 = wh[OH + oh];                              \\
                    for (int64_t ow = 0; ow < OW; ++ow)                                 \\
                        yr[ow] = FMA(t[0][ow], v0, t[1][ow] * v1);                      \\
                } else {                                                                \\
                    const T v0 = wh[oh];                                                \\
                    for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = t[0][ow] * v0;         \\
                    for (int64_t a = 1; a < kh; ++a) {                                  \\
                        const T v = wh[a * OH + oh];                                    \\
                        for (int64_t ow = 0; ow < OW; ++ow)                             \\
                            yr[ow] = FMA(t[a][ow], v, yr[ow]);                          \\
                    }                                                                   \\
                }                                                                       \\
            }                                                                           \\
        free(rows);                                                                     \\
    }                                                                                   \\
}                                                                                       \\
                                                                                        \\
void resample2d_backward_##SUFFIX(const T *g, T *gi, int64_t planes, int64_t H,        \\
                                  int64_t W, int64_t OH, int64_t OW, int64_t kh,       \\
                                  const int64_t *ih, const T *wh, int64_t kw,          \\
                                  const int64_t *iw, const T *ww, int threads) {        \\
    const int64_t work = planes * (H * W + OH * OW * kh * kw);                          \\
    _Pragma("omp parallel num_threads(threads) if(work >= PARALLEL_FROM)")              \\
    {                                                                                   \\
        /* the gradient summed along H first, as rows of OW for each input row */       \\
        T *acc = (T *)malloc(sizeof(T) * (H * OW > 0 ? H * OW : 1));                    \\
        _Pragma("omp for schedule(static)")                                             \\
        for (int64_t p = 0; p < planes; ++p) {                                          \\
            T *gp = gi + p * H * W;                                                     \\
            const T *gq = g + p * OH * OW;                                              \\
            memset(gp, 0, sizeof(T) * H * W);                                           \\
            memset(acc, 0, sizeof(T) * H * OW);                                         \\
            for (int64_t oh = 0; oh < OH; ++oh)                                         \\
                for (int64_t a = 0; a < kh; ++a) {                                      \\
                    T *ar = acc + ih[a * OH + oh] / W * OW;                             \\
                    const T *gr = gq + oh * OW;                                         \\
                    if (wh == NULL) {                                                   \\
                        for (int64_t ow = 0; ow < OW; ++ow) ar[ow] += gr[ow];           \\
                    } else {                                                            \\
                        const T v = wh[a * OH + oh];                                    \\
                        for (int64_t ow = 0; ow < OW; ++ow) ar[ow] += gr[ow] * v;       \\
                    }                                                                   \\
                }                                                                       \\
            for (int64_t r = 0; r < H; ++r) {                                           \\
                const T *ar = acc + r * OW;                                             \\
                T *row = gp + r * W;                                                    \\
                for (int64_t b = 0; b < kw; ++b) {                                      \\
                    const int64_t *ib = iw + b * OW;                                    \\
                    if (ww == NULL) {                                                   \\
                        for (int64_t ow = 0; ow < OW; ++ow) row[ib[ow]] += ar[ow];      \\
                    } else {                                                            \\
                        const T *wb = ww + b * OW;                                      \\
                        for (int64_t ow = 0; ow < OW; ++ow)                             \\
                            row[ib[ow]] += ar[ow] * wb[ow];                             \\
                    }                                                                   \\
                }                                                                       \\
            }                                                                           \\
        }                                                                               \\
        free(acc);                                                                      \\
    }                                                                                   \\
}

RESAMPLE(float, f32, fmaf)
RESAMPLE(double, f64, fma)
"""
_P, _N = ctypes.c_void_p, ctypes.c_int64
# x, y, planes, H, W, OH, OW, then per dim: taps, indices, weights; threads
_SIGNATURE = [_P, _P] + [_N] * 5 + [_N, _P, _P] * 2 + [ctypes.c_int]
_KERNELS = native.Kernels(_SOURCE, {
    f"resample2d{kind}_{s}": _SIGNATURE for kind in ("", "_backward") for s in ("f32", "f64")})
_SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


@functools.lru_cache(maxsize=256)
def _dim_taps(mode: str, size: int, out: int, stride: int, align_corners: bool,
              scale: float | None, dtype: Any, generic: bool) -> tuple[Any, ...]:
    """One dim's taps as the loops read them: their count, then the indices (times the
    dim's ``stride``) and the weights (None for nearest), tap-major."""
    index, w = taps(mode, size, out, align_corners, scale, dtype, generic)
    return (index.shape[1], np.ascontiguousarray(index.T * stride),
            None if w is None else np.ascontiguousarray(w.T, dtype))


def _taps2d(form: Form, sizes: tuple[int, int], out: tuple[int, int], params: dict[str, Any],
            dtype: Any, generic: bool) -> list[Any]:
    ac = params.get("align_corners", False)
    (h, w), (sh, sw) = sizes, form.scales(params)
    return [*_dim_taps(form.mode, h, out[0], w, ac, sh, dtype, generic),
            *_dim_taps(form.mode, w, out[1], 1, ac, sw, dtype, generic)]


def _forward_kernel(form: Form) -> Any:
    reference = OPS[form.name].forward

    def kernel(x: Any, **params: Any) -> Any:
        out = params["output_size"]
        generic = not vectorized(form, x.shape, tuple(s // x.itemsize for s in x.strides), out)
        fn = None
        if x.dtype in _SUFFIX and x.size and x.flags.c_contiguous:
            fn = _KERNELS(f"resample2d_{_SUFFIX[x.dtype]}")
        if fn is None:
            return reference(x, **params)
        y = np.empty(x.shape[:2] + tuple(out), x.dtype)
        fn(x, y, math.prod(x.shape[:2]), *x.shape[2:], *out,
           *_taps2d(form, x.shape[2:], out, params, x.dtype, generic),
           native.get_num_threads())
        return y

    return kernel


def _backward_kernel(form: Form) -> Any:
    reference = BACKWARD_OPS[form.name].forward

    def kernel(g: Any, **params: Any) -> Any:
        size = tuple(params["input_size"])
        fn = None
        if g.dtype in _SUFFIX and g.size:
            fn = _KERNELS(f"resample2d_backward_{_SUFFIX[g.dtype]}")
        if fn is None:
            return reference(g, **params)
        g = np.ascontiguousarray(g)
        gi = np.empty(size, g.dtype)
        fn(g, gi, math.prod(size[:2]), *size[2:], *g.shape[2:],
           *_taps2d(form, size[2:], g.shape[2:], params, g.dtype, False),
           native.get_num_threads())
        return gi

    return kernel


for _name, _form in FORMS.items():
    if _form.nd == 2 and not _form.antialias:
        OPS[_name].register_kernel("cpu", _forward_kernel(_form))
        BACKWARD_OPS[_name].register_kernel("cpu", _backward_kernel(_form))

