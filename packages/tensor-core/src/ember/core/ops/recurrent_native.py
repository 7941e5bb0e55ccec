"""Native CPU kernels of the recurrent layers (float32, float64; other dtypes run the
reference in ``recurrent``): the same loops, each step one BLAS product with the
recurrent weight (through numpy) and one C pass that does the rest of the step.

A forward pass reads the step's columns of the input gates and the product, applies the
gates' nonlinearities, updates the states (feature-major, (F, B)) and writes the step's
workspace block, its columns of the workspace's matrices and the output's rows; a backward
pass adds the output's gradient to the state's, writes the gates' gradients and updates
the cell state's. The (G, N) matrices (input gates, gates' gradients) have their rows
``row_stride`` apart, and each step's block is contiguous: a pass over a step's columns
of rows a power of two bytes apart missed the cache on every row. Arrays are passed
as addresses and row strides, computed once per layer (numpy's buffer protocol costs more
per call than a small step's pass). A pass runs on one thread: a step's gates fit in the
cache, and waking OpenMP threads between two BLAS products would cost more than the pass
(the products thread themselves). sigmoid is ``1 / (1 + exp(-x))`` and tanh glibc's,
through its vector variants (libmvec) where it has them.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from .. import native
from .recurrent import (
    GRU_LAYER,
    GRU_LAYER_BACKWARD,
    LSTM_LAYER,
    LSTM_LAYER_BACKWARD,
    RNN_LAYER,
    RNN_LAYER_BACKWARD,
    _gru,
    _gru_backward,
    _lstm,
    _lstm_backward,
    _rnn,
    _rnn_backward,
    matrix,
    matrix_part,
    new_workspace,
    row_stride,
    steps,
)

_SOURCE = """
/* 512-bit vectors where the machine has them: the passes are bound by exp and tanh */
#pragma GCC target("prefer-vector-width=512")
#include <math.h>
#include <stdint.h>

#ifdef VECTOR_MATH
#pragma omp declare simd notinbranch
float expf(float);
#pragma omp declare simd notinbranch
double exp(double);
#pragma omp declare simd notinbranch
float tanhf(float);
#pragma omp declare simd notinbranch
double tanh(double);
#endif

/* row k of a feature-major block: ld_<p> elements between rows, the step's b sequences
   contiguous in each */
#define ROW(p, k) ((p) + (int64_t)(k) * ld_##p)
#define SIMD _Pragma("omp simd") for (int64_t r = 0; r < b; ++r)
/* the gradient reaching a hidden state: the state's d, plus the output's rows gy (P apart)
   where given; the loop is written once per case, so that each is vectorised */
#define WITH_OUTPUT_GRAD(T, P, BODY)                                                          \\
    if (gy) { SIMD { const T dh = dj[r] + gy[r * (P) + j]; BODY } }                        \\
    else { SIMD { const T dh = dj[r]; BODY } }

#define LSTM_GATES(T, SUFFIX, EXP, TANH)                                                      \\
    T i = sigmoid_##SUFFIX(xi[r] + hi[r] + bi);                                            \\
    T f = sigmoid_##SUFFIX(xf[r] + hf[r] + bf);                                            \\
    T g = TANH(xc[r] + hc[r] + bc);                                                        \\
    T o = sigmoid_##SUFFIX(xo[r] + ho[r] + bo);                                            \\
    T before = cj[r];                                                                      \\
    T after = f * before + i * g;                                                          \\
    T t = TANH(after);                                                                     \\
    wi[r] = i; wf[r] = f; wg[r] = g; wo[r] = o; wc[r] = before; wt[r] = t;                 \\
    cj[r] = after;

#define LSTM_BACK(T)                                                                         \\
    T i = wi[r], f = wf[r], g = wg[r], o = wo[r], t = wt[r];                               \\
    T total = dcj[r] + dh * o * (1 - t * t);                                               \\
    di[r] = total * g * i * (1 - i);                                                       \\
    df[r] = total * wc[r] * f * (1 - f);                                                   \\
    dgg[r] = total * i * (1 - g * g);                                                      \\
    dout[r] = dh * t * o * (1 - o);                                                        \\
    dcj[r] = total * f;

#define GRU_BACK(T)                                                                          \\
    T r_ = wr[r], z = wz[r], n = wn[r], d = dh + pj[r];                                    \\
    T dn = d * (1 - z) * (1 - n * n);                                                      \\
    T dr = dn * whn[r] * r_ * (1 - r_);                                                    \\
    T dz = d * (wh[r] - n) * z * (1 - z);                                                  \\
    xr[r] = dr; xz[r] = dz; xn[r] = dn;                                                    \\
    hr[r] = dr; hz[r] = dz; hn[r] = dn * r_;                                               \\
    cj[r] = d * z;

#define KERNELS(T, SUFFIX, EXP, TANH)                                                      \\
static inline T sigmoid_##SUFFIX(T x) { return 1 / (1 + EXP(-x)); }                        \\
                                                                                           \\
/* gates xg + hg + bias; the new cell state into c; the gates and the cell state before   \\
   and after tanh into the step's workspace block; where not projected, the hidden state  \\
   before into kept, the new one into h and into the output's rows (P apart); where       \\
   projected, the new (unprojected) one into kept */                                     \\
void lstm_step_##SUFFIX(const T *xg, int64_t ld_xg, const T *hg, int64_t ld_hg,            \\
                        const T *bias, T *c, int64_t ld_c, T *h, int64_t ld_h, T *ws,      \\
                        int64_t ld_ws, T *kept, int64_t ld_kept, T *out, int64_t P,        \\
                        int64_t H, int64_t b, int projected) {                             \\
    for (int64_t j = 0; j < H; ++j) {                                                      \\
        const T *xi = ROW(xg, j), *xf = ROW(xg, H + j), *xc = ROW(xg, 2 * H + j);          \\
        const T *xo = ROW(xg, 3 * H + j), *hi = ROW(hg, j), *hf = ROW(hg, H + j);          \\
        const T *hc = ROW(hg, 2 * H + j), *ho = ROW(hg, 3 * H + j);                        \\
        T *wi = ROW(ws, j), *wf = ROW(ws, H + j), *wg = ROW(ws, 2 * H + j);                \\
        T *wo = ROW(ws, 3 * H + j), *wc = ROW(ws, 4 * H + j), *wt = ROW(ws, 5 * H + j);    \\
        T *cj = ROW(c, j);                                                                 \\
        const T bi = bias ? bias[j] : 0, bf = bias ? bias[H + j] : 0;                      \\
        const T bc = bias ? bias[2 * H + j] : 0, bo = bias ? bias[3 * H + j] : 0;          \\
        T *kj = ROW(kept, j);                                                              \\
        if (projected) {                                                                   \\
            SIMD { LSTM_GATES(T, SUFFIX, EXP, TANH) kj[r] = o * t; }                          \\
        } else {                                                                           \\
            T *hj = ROW(h, j);                                                             \\
            SIMD { LSTM_GATES(T, SUFFIX, EXP, TANH) kj[r] = hj[r]; hj[r] = o * t;             \\
                   out[r * P + j] = o * t; }                                               \\
        }                                                                                  \\
    }                                                                                      \\
}                                                                                          \\
                                                                                           \\
/* the hidden state's gradient d (plus the output's rows gy, P apart, where given) and    \\
   the cell state's dc (updated to the previous step's) give the gates' gradients dg */   \\
void lstm_step_backward_##SUFFIX(const T *d, int64_t ld_d, const T *gy, int64_t P,         \\
                                 T *dc, int64_t ld_dc, const T *ws, int64_t ld_ws, T *dg,  \\
                                 int64_t ld_dg, int64_t H, int64_t b) {                    \\
    for (int64_t j = 0; j < H; ++j) {                                                      \\
        const T *wi = ROW(ws, j), *wf = ROW(ws, H + j), *wg = ROW(ws, 2 * H + j);          \\
        const T *wo = ROW(ws, 3 * H + j), *wc = ROW(ws, 4 * H + j);                        \\
        const T *wt = ROW(ws, 5 * H + j), *dj = ROW(d, j);                                 \\
        T *dcj = ROW(dc, j), *di = ROW(dg, j), *df = ROW(dg, H + j);                       \\
        T *dgg = ROW(dg, 2 * H + j), *dout = ROW(dg, 3 * H + j);                           \\
        WITH_OUTPUT_GRAD(T, P, LSTM_BACK(T))                                                     \\
    }                                                                                      \\
}                                                                                          \\
                                                                                           \\
/* gates from xg + b_ih and hg + b_hh; r, z, n and W_hn h + b_hn into the step's block,   \\
   the hidden state before into prev; the new state into h and the output's rows */      \\
void gru_step_##SUFFIX(const T *xg, int64_t ld_xg, const T *hg, int64_t ld_hg,             \\
                       const T *b_ih, const T *b_hh, T *h, int64_t ld_h, T *ws,            \\
                       int64_t ld_ws, T *prev, int64_t ld_prev, T *out, int64_t H,         \\
                       int64_t b) {                                                        \\
    for (int64_t j = 0; j < H; ++j) {                                                      \\
        const T *xr = ROW(xg, j), *xz = ROW(xg, H + j), *xn = ROW(xg, 2 * H + j);          \\
        const T *hr = ROW(hg, j), *hz = ROW(hg, H + j), *hn = ROW(hg, 2 * H + j);          \\
        T *wr = ROW(ws, j), *wz = ROW(ws, H + j), *wn = ROW(ws, 2 * H + j);                \\
        T *whn = ROW(ws, 3 * H + j), *wh = ROW(prev, j), *hj = ROW(h, j);                  \\
        const T ir = b_ih ? b_ih[j] : 0, iz = b_ih ? b_ih[H + j] : 0;                      \\
        const T in = b_ih ? b_ih[2 * H + j] : 0, rr = b_hh ? b_hh[j] : 0;                  \\
        const T rz = b_hh ? b_hh[H + j] : 0, rn = b_hh ? b_hh[2 * H + j] : 0;              \\
        SIMD {                                                                             \\
            T r_ = sigmoid_##SUFFIX((xr[r] + ir) + (hr[r] + rr));                          \\
            T z = sigmoid_##SUFFIX((xz[r] + iz) + (hz[r] + rz));                           \\
            T hidden = hn[r] + rn;                                                         \\
            T n = TANH((xn[r] + in) + r_ * hidden);                                        \\
            T before = hj[r];                                                              \\
            T after = (before - n) * z + n;                                                \\
            wr[r] = r_; wz[r] = z; wn[r] = n; whn[r] = hidden; wh[r] = before;             \\
            hj[r] = after;                                                                 \\
            out[r * H + j] = after;                                                        \\
        }                                                                                  \\
    }                                                                                      \\
}                                                                                          \\
                                                                                           \\
/* the hidden state's gradient carry + product (plus the output's rows gy) gives the      \\
   gradients of the input's and the hidden state's parts of the gates; carry becomes the  \\
   part that passes straight to the previous state (times z) */                          \\
void gru_step_backward_##SUFFIX(T *carry, int64_t ld_carry, const T *product,              \\
                                int64_t ld_product, const T *gy, const T *ws,              \\
                                int64_t ld_ws, const T *prev, int64_t ld_prev, T *dxg,     \\
                                int64_t ld_dxg, T *dhg, int64_t ld_dhg, int64_t H,         \\
                                int64_t b) {                                               \\
    for (int64_t j = 0; j < H; ++j) {                                                      \\
        const T *wr = ROW(ws, j), *wz = ROW(ws, H + j), *wn = ROW(ws, 2 * H + j);          \\
        const T *whn = ROW(ws, 3 * H + j), *wh = ROW(prev, j);                             \\
        const T *pj = ROW(product, j), *dj = ROW(carry, j);                                \\
        T *cj = ROW(carry, j), *xr = ROW(dxg, j), *xz = ROW(dxg, H + j);                   \\
        T *xn = ROW(dxg, 2 * H + j), *hr = ROW(dhg, j), *hz = ROW(dhg, H + j);             \\
        T *hn = ROW(dhg, 2 * H + j);                                                       \\
        WITH_OUTPUT_GRAD(T, H, GRU_BACK(T))                                                      \\
    }                                                                                      \\
}                                                                                          \\
                                                                                           \\
/* tanh or relu of xg + hg + bias: the new state into h, the output's rows and the step's \\
   block, the state before into prev */                                                  \\
void rnn_step_##SUFFIX(const T *xg, int64_t ld_xg, const T *hg, int64_t ld_hg,             \\
                       const T *bias, T *h, int64_t ld_h, T *ws, int64_t ld_ws, T *prev,   \\
                       int64_t ld_prev, T *out, int64_t H, int64_t b, int relu) {          \\
    for (int64_t j = 0; j < H; ++j) {                                                      \\
        const T *xj = ROW(xg, j), *gj = ROW(hg, j);                                        \\
        T *hj = ROW(h, j), *wj = ROW(ws, j), *wb = ROW(prev, j);                           \\
        const T bj = bias ? bias[j] : 0;                                                   \\
        if (relu) {                                                                        \\
            SIMD { T v = xj[r] + gj[r] + bj; v = v > 0 ? v : 0;                            \\
                   wb[r] = hj[r]; wj[r] = v; hj[r] = v; out[r * H + j] = v; }              \\
        } else {                                                                           \\
            SIMD { T v = TANH(xj[r] + gj[r] + bj);                                         \\
                   wb[r] = hj[r]; wj[r] = v; hj[r] = v; out[r * H + j] = v; }              \\
        }                                                                                  \\
    }                                                                                      \\
}                                                                                          \\
                                                                                           \\
/* the pre-activation's gradient from the state's d (plus the output's rows gy) and the   \\
   state the step gave (torch's relu passes none where it gave 0) */                     \\
void rnn_step_backward_##SUFFIX(const T *d, int64_t ld_d, const T *gy, const T *ws,        \\
                                int64_t ld_ws, T *dg, int64_t ld_dg, int64_t H, int64_t b, \\
                                int relu) {                                                \\
    for (int64_t j = 0; j < H; ++j) {                                                      \\
        const T *dj = ROW(d, j), *wj = ROW(ws, j);                                         \\
        T *gj = ROW(dg, j);                                                                \\
        if (relu) {                                                                        \\
            WITH_OUTPUT_GRAD(T, H, gj[r] = wj[r] > 0 ? dh : 0;)                               \\
        } else {                                                                           \\
            WITH_OUTPUT_GRAD(T, H, gj[r] = dh * (1 - wj[r] * wj[r]);)                         \\
        }                                                                                  \\
    }                                                                                      \\
}

KERNELS(float, f32, expf, tanhf)
KERNELS(double, f64, exp, tanh)
"""
_P, _N, _I = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
_SIGNATURES = {f"{name}_{suffix}": argtypes for suffix in ("f32", "f64")
               for name, argtypes in (
                   ("lstm_step", [_P, _N, _P, _N, _P, _P, _N, _P, _N, _P, _N, _P, _N, _P, _N,
                                  _N, _N, _I]),
                   ("lstm_step_backward", [_P, _N, _P, _N, _P, _N, _P, _N, _P, _N, _N, _N]),
                   ("gru_step", [_P, _N, _P, _N, _P, _P, _P, _N, _P, _N, _P, _N, _P, _N, _N]),
                   ("gru_step_backward", [_P, _N, _P, _N, _P, _P, _N, _P, _N, _P, _N, _P, _N,
                                          _N, _N]),
                   ("rnn_step", [_P, _N, _P, _N, _P, _P, _N, _P, _N, _P, _N, _P, _N, _N, _I]),
                   ("rnn_step_backward", [_P, _N, _P, _P, _N, _P, _N, _N, _N, _I]))}
_VECTOR_KERNELS = native.Kernels("#define VECTOR_MATH\n" + _SOURCE, _SIGNATURES)
_SCALAR_KERNELS: list[native.Kernels] = []
_SUFFIX = {np.dtype(np.float32): "_f32", np.dtype(np.float64): "_f64"}


def _loop(name: str, dtype: Any) -> Any:
    """The pass ``name`` for numpy ``dtype``, or None (no native code for it)."""
    suffix = _SUFFIX.get(dtype)
    if suffix is None:
        return None
    fn = _VECTOR_KERNELS(name + suffix)
    if fn is None:
        if not _SCALAR_KERNELS:  # a glibc before 2.35 has no vector tanh
            _SCALAR_KERNELS.append(native.Kernels(_SOURCE, _SIGNATURES))
        fn = _SCALAR_KERNELS[0](name + suffix)
    return fn


class _Layer:
    """What a native loop holds for one layer: the step order, the element size and the
    row stride of its (features, rows) matrices."""

    __slots__ = ("order", "ld", "item")

    def __init__(self, batch_sizes: tuple[int, ...], reverse: bool, n: int, dtype: Any):
        self.order = steps(batch_sizes, reverse)
        self.item = np.dtype(dtype).itemsize
        self.ld = row_stride(n, self.item)


def _address(a: Any) -> int:
    """The address of ``a``'s first element (0 for None: NULL)."""
    return 0 if a is None else int(a.__array_interface__["data"][0])


def _same_dtype(dtype: Any, *arrays: Any) -> bool:
    return all(a is None or a.dtype == dtype for a in arrays)


def _state(s: Any, dtype: Any) -> Any:
    return np.array(s.T, dtype=dtype, order="C", copy=True)


def _input_gates(x: Any, w_ih: Any, n: int) -> Any:
    """``w_ih @ x^T`` (G, n), its rows ``row_stride`` apart."""
    xg = matrix(np, w_ih.shape[0], n, x.dtype)
    np.matmul(w_ih, x.T, out=xg)
    return xg


def _bias(b_ih: Any, b_hh: Any) -> Any:
    if b_ih is None or b_hh is None:
        b = b_ih if b_hh is None else b_hh
        return None if b is None else np.ascontiguousarray(b)
    return b_ih + b_hh


def _rows_of(gy: Any) -> Any:
    """The output's gradient as the row-major rows the backward passes read (or None)."""
    return None if gy is None else np.ascontiguousarray(gy)


def _grads(dg: Any, x: Any, w_ih: Any, want_input: bool, want_weight: bool) -> tuple[Any, Any]:
    return (np.matmul(dg.T, w_ih) if want_input else None,
            np.matmul(dg, x) if want_weight else None)


# ----------------------------------------------------------------------------- LSTM

def _lstm_kernel(x: Any, hx: Any, cx: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any,
                 w_hr: Any, *, batch_sizes: tuple[int, ...], reverse: bool) -> Any:
    fn = _loop("lstm_step", x.dtype)
    if fn is None or not _same_dtype(x.dtype, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr):
        return _lstm(x, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr, batch_sizes=batch_sizes,
                     reverse=reverse)
    n, (batch, proj), hidden = x.shape[0], hx.shape, cx.shape[1]
    gates, rows, dtype = 4 * hidden, 6 * hidden, x.dtype
    projected = w_hr is not None
    layer = _Layer(batch_sizes, reverse, n, dtype)
    ld, item = layer.ld, layer.item
    xg = _input_gates(x, w_ih, n)
    ws = new_workspace(np, rows, proj + (hidden if projected else 0), n, dtype)
    before = matrix_part(ws, rows, 0, proj, n)
    raw = matrix_part(ws, rows, proj, hidden, n) if projected else None
    out = np.empty((n, proj), dtype)
    h, c = _state(hx, dtype), _state(cx, dtype)
    buffer = np.empty(gates * batch, dtype)
    xa, wa, oa, ha, ca, ga = (_address(a) for a in (xg, ws, out, h, c, buffer))
    kept = _address(raw if projected else before)
    ba = _address(_bias(b_ih, b_hh))
    for first, b in layer.order:
        hp = h if b == batch else h[:, :b]
        if projected:
            before[:, first:first + b] = hp
        np.matmul(w_hh, hp, out=buffer[:gates * b].reshape(gates, b))
        fn(xa + first * item, ld, ga, b, ba, ca, batch, ha, batch, wa + rows * first * item, b,
           kept + first * item, ld, oa + first * proj * item, proj, hidden, b, int(projected))
        if raw is not None:
            np.matmul(w_hr, raw[:, first:first + b], out=hp)
            out[first:first + b] = hp.T
    return out, np.ascontiguousarray(h.T), np.ascontiguousarray(c.T), ws


def _lstm_backward_kernel(gy: Any, ghy: Any, gcy: Any, x: Any, w_ih: Any, w_hh: Any,
                          w_hr: Any, ws: Any, *, batch_sizes: tuple[int, ...], reverse: bool,
                          output_mask: tuple[bool, ...]) -> Any:
    fn = _loop("lstm_step_backward", ws.dtype)
    if fn is None or not _same_dtype(ws.dtype, gy, ghy, gcy, x, w_ih, w_hh, w_hr):
        return _lstm_backward(gy, ghy, gcy, x, w_ih, w_hh, w_hr, ws, batch_sizes=batch_sizes,
                              reverse=reverse, output_mask=output_mask)
    n, (gates, proj), dtype = x.shape[0], w_hh.shape, ws.dtype
    hidden, batch, rows = gates // 4, ghy.shape[0], 6 * gates // 4
    layer = _Layer(batch_sizes, reverse, n, dtype)
    ld, item = layer.ld, layer.item
    dg = matrix(np, gates, n, dtype)
    dh, dc = _state(ghy, dtype), _state(gcy, dtype)
    grad_rows = _rows_of(gy)
    projected = w_hr is not None
    dproj = matrix(np, proj, n, dtype) if projected else None
    draw = np.empty(hidden * batch, dtype)
    wa, ga, ha, ca, ra, da = (_address(a) for a in (ws, dg, dh, dc, grad_rows, draw))
    for first, b in reversed(layer.order):
        dhb = dh if b == batch else dh[:, :b]
        cols = slice(first, first + b)
        if dproj is not None:
            if grad_rows is not None:
                dhb += grad_rows[cols].T
            dproj[:, cols] = dhb
            np.matmul(w_hr.T, dhb, out=draw[:hidden * b].reshape(hidden, b))
            fn(da, b, 0, 0, ca, batch, wa + rows * first * item, b, ga + first * item, ld,
               hidden, b)
        else:
            fn(ha, batch, ra and ra + first * proj * item, proj, ca, batch,
               wa + rows * first * item, b, ga + first * item, ld, hidden, b)
        np.matmul(w_hh.T, dg[:, cols], out=dhb)
    grad_x, grad_w_ih = _grads(dg, x, w_ih, output_mask[0], output_mask[3])
    return (grad_x, np.ascontiguousarray(dh.T) if output_mask[1] else None,
            np.ascontiguousarray(dc.T) if output_mask[2] else None, grad_w_ih,
            np.matmul(dg, matrix_part(ws, rows, 0, proj, n).T) if output_mask[4] else None,
            dg.sum(1) if output_mask[5] else None,
            np.matmul(dproj, matrix_part(ws, rows, proj, hidden, n).T)
            if output_mask[6] and dproj is not None else None)


# ----------------------------------------------------------------------------- GRU

def _gru_kernel(x: Any, hx: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, *,
                batch_sizes: tuple[int, ...], reverse: bool) -> Any:
    fn = _loop("gru_step", x.dtype)
    if fn is None or not _same_dtype(x.dtype, hx, w_ih, w_hh, b_ih, b_hh):
        return _gru(x, hx, w_ih, w_hh, b_ih, b_hh, batch_sizes=batch_sizes, reverse=reverse)
    n, (batch, hidden), dtype = x.shape[0], hx.shape, x.dtype
    gates, rows = 3 * hidden, 4 * hidden
    layer = _Layer(batch_sizes, reverse, n, dtype)
    ld, item = layer.ld, layer.item
    xg = _input_gates(x, w_ih, n)
    ws = new_workspace(np, rows, hidden, n, dtype)
    out = np.empty((n, hidden), dtype)
    h = _state(hx, dtype)
    buffer = np.empty(gates * batch, dtype)
    b_ih, b_hh = (None if b is None else np.ascontiguousarray(b) for b in (b_ih, b_hh))
    xa, wa, oa, ha, ga, ia, ra = (_address(a) for a in (xg, ws, out, h, buffer, b_ih, b_hh))
    pa = _address(matrix_part(ws, rows, 0, hidden, n))
    for first, b in layer.order:
        np.matmul(w_hh, h if b == batch else h[:, :b], out=buffer[:gates * b].reshape(gates, b))
        fn(xa + first * item, ld, ga, b, ia, ra, ha, batch, wa + rows * first * item, b,
           pa + first * item, ld, oa + first * hidden * item, hidden, b)
    return out, np.ascontiguousarray(h.T), ws


def _gru_backward_kernel(gy: Any, ghy: Any, x: Any, w_ih: Any, w_hh: Any, ws: Any, *,
                         batch_sizes: tuple[int, ...], reverse: bool,
                         output_mask: tuple[bool, ...]) -> Any:
    fn = _loop("gru_step_backward", ws.dtype)
    if fn is None or not _same_dtype(ws.dtype, gy, ghy, x, w_ih, w_hh):
        return _gru_backward(gy, ghy, x, w_ih, w_hh, ws, batch_sizes=batch_sizes,
                             reverse=reverse, output_mask=output_mask)
    n, hidden, dtype = x.shape[0], w_hh.shape[1], ws.dtype
    batch, rows = ghy.shape[0], 4 * hidden
    layer = _Layer(batch_sizes, reverse, n, dtype)
    ld, item = layer.ld, layer.item
    before = matrix_part(ws, rows, 0, hidden, n)
    dxg, dhg = matrix(np, 3 * hidden, n, dtype), matrix(np, 3 * hidden, n, dtype)
    # the previous state's gradient is carry + product: the part through z, and the
    # recurrent weight's product of the hidden part of the gates' gradients
    carry, product = _state(ghy, dtype), np.zeros((hidden, batch), dtype)
    grad_rows = _rows_of(gy)
    ca, pa, ra, wa, ba, xa, ha = (_address(a) for a in (carry, product, grad_rows, ws, before,
                                                         dxg, dhg))
    for first, b in reversed(layer.order):
        fn(ca, batch, pa, batch, ra and ra + first * hidden * item, wa + rows * first * item,
           b, ba + first * item, ld, xa + first * item, ld, ha + first * item, ld, hidden, b)
        np.matmul(w_hh.T, dhg[:, first:first + b], out=product if b == batch else
                  product[:, :b])
    grad_x, grad_w_ih = _grads(dxg, x, w_ih, output_mask[0], output_mask[2])
    return (grad_x, np.ascontiguousarray((carry + product).T) if output_mask[1] else None,
            grad_w_ih, np.matmul(dhg, before.T) if output_mask[3] else None,
            dxg.sum(1) if output_mask[4] else None, dhg.sum(1) if output_mask[5] else None)


# ----------------------------------------------------------------------------- RNN

def _rnn_kernel(x: Any, hx: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, *,
                batch_sizes: tuple[int, ...], reverse: bool, nonlinearity: str) -> Any:
    fn = _loop("rnn_step", x.dtype)
    if fn is None or not _same_dtype(x.dtype, hx, w_ih, w_hh, b_ih, b_hh):
        return _rnn(x, hx, w_ih, w_hh, b_ih, b_hh, batch_sizes=batch_sizes, reverse=reverse,
                    nonlinearity=nonlinearity)
    n, (batch, hidden), dtype = x.shape[0], hx.shape, x.dtype
    layer = _Layer(batch_sizes, reverse, n, dtype)
    ld, item = layer.ld, layer.item
    xg = _input_gates(x, w_ih, n)
    ws = new_workspace(np, hidden, hidden, n, dtype)
    out = np.empty((n, hidden), dtype)
    h = _state(hx, dtype)
    buffer = np.empty(hidden * batch, dtype)
    relu = int(nonlinearity == "relu")
    xa, wa, oa, ha, ga = (_address(a) for a in (xg, ws, out, h, buffer))
    ba, pa = _address(_bias(b_ih, b_hh)), _address(matrix_part(ws, hidden, 0, hidden, n))
    for first, b in layer.order:
        np.matmul(w_hh, h if b == batch else h[:, :b],
                  out=buffer[:hidden * b].reshape(hidden, b))
        fn(xa + first * item, ld, ga, b, ba, ha, batch, wa + hidden * first * item, b,
           pa + first * item, ld, oa + first * hidden * item, hidden, b, relu)
    return out, np.ascontiguousarray(h.T), ws


def _rnn_backward_kernel(gy: Any, ghy: Any, x: Any, w_ih: Any, w_hh: Any, ws: Any, *,
                         batch_sizes: tuple[int, ...], reverse: bool, nonlinearity: str,
                         output_mask: tuple[bool, ...]) -> Any:
    fn = _loop("rnn_step_backward", ws.dtype)
    if fn is None or not _same_dtype(ws.dtype, gy, ghy, x, w_ih, w_hh):
        return _rnn_backward(gy, ghy, x, w_ih, w_hh, ws, batch_sizes=batch_sizes,
                             reverse=reverse, nonlinearity=nonlinearity,
                             output_mask=output_mask)
    n, hidden, dtype = x.shape[0], w_hh.shape[1], ws.dtype
    batch = ghy.shape[0]
    layer = _Layer(batch_sizes, reverse, n, dtype)
    ld, item = layer.ld, layer.item
    dg = matrix(np, hidden, n, dtype)
    dh = _state(ghy, dtype)
    grad_rows = _rows_of(gy)
    relu = int(nonlinearity == "relu")
    ha, ra, wa, ga = (_address(a) for a in (dh, grad_rows, ws, dg))
    for first, b in reversed(layer.order):
        fn(ha, batch, ra and ra + first * hidden * item, wa + hidden * first * item, b,
           ga + first * item, ld, hidden, b, relu)
        np.matmul(w_hh.T, dg[:, first:first + b], out=dh if b == batch else dh[:, :b])
    grad_x, grad_w_ih = _grads(dg, x, w_ih, output_mask[0], output_mask[2])
    return (grad_x, np.ascontiguousarray(dh.T) if output_mask[1] else None, grad_w_ih,
            np.matmul(dg, matrix_part(ws, hidden, 0, hidden, n).T)
            if output_mask[3] else None,
            dg.sum(1) if output_mask[4] else None)


for _op, _kernel in ((LSTM_LAYER, _lstm_kernel), (LSTM_LAYER_BACKWARD, _lstm_backward_kernel),
                     (GRU_LAYER, _gru_kernel), (GRU_LAYER_BACKWARD, _gru_backward_kernel),
                     (RNN_LAYER, _rnn_kernel), (RNN_LAYER_BACKWARD, _rnn_backward_kernel)):
    _kernel.__name__ = _op.forward.__name__
    _op.register_kernel("cpu", _kernel)
