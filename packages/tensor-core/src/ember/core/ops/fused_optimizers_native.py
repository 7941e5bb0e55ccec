"""Native CPU kernels of the fused optimizer updates (``fused_optimizers``): one C call per
dtype updates every tensor of the lists, float32 (float16 and bfloat16 tensors through
float32 copies, as torch computes them in float32) and float64.

The tensors' elements are cut into chunks of 16384, which the threads take in turn over
all the tensors (in one parallel region, where the update is large enough to pay for
waking the threads). Each element is computed as the reference computes it: every product and sum
rounded apart (no contraction: the source turns it off) but the fused multiply-adds torch
makes, and the last elements of each tensor as torch's scalar remainder loop does. A
tensor not laid out row-major is updated through row-major copies, written back.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import native
from .fused_optimizers import (
    FUSED_ADAM_,
    FUSED_ADAMW_,
    FUSED_SGD_,
    _item,
    bias_corrections,
    decayed_lrs,
    grad_scale_of,
    remainders,
    skipped,
)

# what every native optimizer step shares: includes, no contraction, the chunks of the
# tensors taken by the threads (also fused_steps_native's)
PRELUDE = r"""
#include <math.h>
#include <stdint.h>
#ifdef _OPENMP
#include <omp.h>
#else
static int omp_get_thread_num(void) { return 0; }
static int omp_get_num_threads(void) { return 1; }
#endif
/* every product and sum rounded apart, but for the fused multiply-adds written out */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define CHUNK 16384
/* Ember's OpenMP threads sleep soon after a loop (native.py's spin count): waking them
   for an update costs tens of microseconds, which pays from about this many elements */
#define PARALLEL_FROM 262144
#define INLINE static inline __attribute__((always_inline))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* A chunk's elements before the tensor's remainder (``body``: its first elements) and in
   it, each through ``span`` specialized to its constant flags. */
#define SPANS(span, ...)                                                               \
    span(from, MIN(to, body), 0, __VA_ARGS__);                                         \
    span(MAX(from, body), to, 1, __VA_ARGS__);

/* The chunks of all ``n`` tensors (``counts``: their sizes, then how many of their last
   elements are torch's remainder), taken by the threads in turn:
   the code after ``per_chunk`` sets up tensor t (its gradient ``gt``), ``per_chunk``
   updates elements [from, to) of it, after the gradients are unscaled (``scaled``:
   divided by ``scale``) and written back. */
#define CHUNKS(per_chunk, ...)                                                         \
    int64_t total = 0;                                                                 \
    for (int64_t t = 0; t < n; ++t) total += counts[t];                                \
    _Pragma("omp parallel num_threads(total >= PARALLEL_FROM ? threads : 1)")           \
    {                                                                                  \
        const int id = omp_get_thread_num(), share = omp_get_num_threads();            \
        int64_t c = 0;                                                                 \
        for (int64_t t = 0; t < n; ++t) {                                              \
            const int64_t size = counts[t], body = size - counts[n + t];               \
            __VA_ARGS__                                                                \
            for (int64_t from = 0; from < size; from += CHUNK, ++c) {                  \
                if (c % share != id) continue;                                         \
                const int64_t to = size - from < CHUNK ? size : from + CHUNK;          \
                if (scaled) {                                                          \
                    _Pragma("omp simd")                                                \
                    for (int64_t i = from; i < to; ++i) gt[i] = gt[i] / scale;         \
                }                                                                      \
                per_chunk                                                              \
            }                                                                          \
        }                                                                              \
    }

"""
_SOURCE = PRELUDE + r"""
/* rest: torch's scalar remainder, where its compiler fused the second moment's other
   product (and the momentum's); l2: Adam's weight decay added to the gradient */
#define UPDATES(T, S, FMA, SQRT)                                                       \
INLINE void adam_span_##S(int64_t from, int64_t to, const int rest, const int l2,      \
                          const int amsgrad, T *restrict p, T *restrict g,              \
                          T *restrict m, T *restrict v, T *restrict x, const T *k) {    \
    const T sign = k[0], wd = k[1], decay = k[2], coeff = k[3], b2 = k[4], c2 = k[5];  \
    const T bc = k[6], eps = k[7], neg_step = k[8];                                    \
    const int small = k[9] != 0;                                                       \
    _Pragma("omp simd")                                                                \
    for (int64_t i = from; i < to; ++i) {                                              \
        T gi = g[i] * sign;                                                            \
        const T pi = p[i] * decay; /* AdamW's decay, or 1 */                           \
        if (l2) gi = FMA(p[i], wd, gi);                                                \
        T mi = m[i];                                                                   \
        mi = FMA(coeff, gi - mi, small ? mi : gi); /* lerp from the nearer end */      \
        T vi = rest ? FMA(v[i], b2, c2 * gi * gi) : FMA(c2 * gi, gi, v[i] * b2);       \
        m[i] = mi;                                                                     \
        v[i] = vi;                                                                     \
        if (amsgrad) {                                                                 \
            const T xi = x[i];                                                         \
            vi = rest ? (xi < vi ? vi : xi)                                            \
                      : (isnan(vi) ? vi : isnan(xi) ? xi : vi > xi ? vi : xi);         \
            x[i] = vi;                                                                 \
        }                                                                              \
        p[i] = pi + neg_step * mi / (SQRT(vi) / bc + eps);                             \
    }                                                                                  \
}                                                                                      \
                                                                                       \
/* corrections: each tensor's step size, then its sqrt(1 - beta2 ** step) */          \
void adam_##S(void **p, void **g, void **m, void **v, void **x, const int64_t *counts, \
              const double *corrections, int64_t n, double lr, double beta1,           \
              double beta2, double weight_decay,                                       \
              double eps, int amsgrad, int maximize, int decoupled, int scaled,        \
              double grad_scale, int threads) {                                        \
    const int l2 = !decoupled && weight_decay != 0;                                    \
    const T w = (T)(1 - beta1), scale = (T)grad_scale;                                 \
    const T decay = decoupled && weight_decay != 0 ? (T)(1 - lr * weight_decay) : 1;   \
    CHUNKS(                                                                            \
        if (l2 && amsgrad) { SPANS(adam_span_##S, 1, 1, pt, gt, mt, vt, xt, k) }       \
        else if (l2) { SPANS(adam_span_##S, 1, 0, pt, gt, mt, vt, xt, k) }             \
        else if (amsgrad) { SPANS(adam_span_##S, 0, 1, pt, gt, mt, vt, xt, k) }        \
        else { SPANS(adam_span_##S, 0, 0, pt, gt, mt, vt, xt, k) },                    \
        T *pt = (T *)p[t], *gt = (T *)g[t], *mt = (T *)m[t], *vt = (T *)v[t];          \
        T *xt = amsgrad ? (T *)x[t] : 0;                                               \
        const T k[10] = {(T)(maximize ? -1 : 1), (T)weight_decay, decay,               \
                         fabs(w) < 0.5 ? w : w - (T)1, (T)beta2, (T)(1 - beta2),       \
                         (T)corrections[n + t], (T)eps, (T)(-corrections[t]),          \
                         fabs(w) < 0.5};)                                              \
}                                                                                      \
                                                                                       \
INLINE void sgd_span_##S(int64_t from, int64_t to, const int rest, const int l2,       \
                         const int moves, T *restrict p, T *restrict g, T *restrict b,  \
                         const T *k, const int first, const int nesterov) {            \
    const T sign = k[0], wd = k[1], mom = k[2], kept = k[3], neg_lr = k[4];            \
    _Pragma("omp simd")                                                                \
    for (int64_t i = from; i < to; ++i) {                                              \
        T gi = g[i] * sign;                                                            \
        const T pi = p[i];                                                             \
        if (l2) gi = FMA(pi, wd, gi);                                                  \
        if (moves) {                                                                   \
            const T bi = first ? gi : rest ? FMA(b[i], mom, gi * kept)                 \
                                           : FMA(kept, gi, b[i] * mom);                \
            b[i] = bi;                                                                 \
            gi = nesterov ? FMA(bi, mom, gi) : bi;                                     \
        }                                                                              \
        p[i] = FMA(gi, neg_lr, pi);                                                    \
    }                                                                                  \
}                                                                                      \
                                                                                       \
void sgd_##S(void **p, void **g, void **b, const int64_t *counts, int64_t n,           \
             double weight_decay, double momentum, double lr,                          \
             double dampening, int nesterov, int maximize, int first, int scaled,      \
             double grad_scale, int threads) {                                         \
    const int l2 = weight_decay != 0, moves = momentum != 0;                           \
    const T scale = (T)grad_scale;                                                     \
    const T k[5] = {(T)(maximize ? -1 : 1), (T)weight_decay, (T)momentum,              \
                    (T)(1 - dampening), (T)(-lr)};                                     \
    CHUNKS(                                                                            \
        if (l2 && moves) { SPANS(sgd_span_##S, 1, 1, pt, gt, bt, k, first, nesterov) } \
        else if (l2) { SPANS(sgd_span_##S, 1, 0, pt, gt, bt, k, first, nesterov) }     \
        else if (moves) { SPANS(sgd_span_##S, 0, 1, pt, gt, bt, k, first, nesterov) }  \
        else { SPANS(sgd_span_##S, 0, 0, pt, gt, bt, k, first, nesterov) },            \
        T *pt = (T *)p[t], *gt = (T *)g[t], *bt = moves ? (T *)b[t] : 0;)              \
}

UPDATES(float, f32, fmaf, sqrtf)
UPDATES(double, f64, fma, sqrt)

/* Adagrad: the weight decay and the sum of squares fused multiply-adds, the step divided
   apart; clrs: each tensor's decayed lr */
#define ADAGRAD(T, S, FMA, SQRT)                                                       \
INLINE void adagrad_span_##S(int64_t from, int64_t to, const int l2, T *restrict p,    \
                             T *restrict g, T *restrict s, const T sign, const T wd,    \
                             const T eps, const T clr) {                               \
    _Pragma("omp simd")                                                                \
    for (int64_t i = from; i < to; ++i) {                                              \
        T gi = g[i] * sign;                                                            \
        if (l2) gi = FMA(p[i], wd, gi);                                                \
        const T si = FMA(gi, gi, s[i]);                                                \
        s[i] = si;                                                                     \
        p[i] = p[i] - clr * gi / (SQRT(si) + eps);                                     \
    }                                                                                  \
}                                                                                      \
                                                                                       \
void adagrad_##S(void **p, void **g, void **s, const int64_t *counts,                  \
                 const double *clrs, int64_t n, double weight_decay, double eps,       \
                 int maximize, int scaled, double grad_scale, int threads) {           \
    const int l2 = weight_decay != 0;                                                  \
    const T scale = (T)grad_scale, sign = (T)(maximize ? -1 : 1);                      \
    const T wd = (T)weight_decay, e = (T)eps;                                          \
    CHUNKS(                                                                            \
        if (l2) { adagrad_span_##S(from, to, 1, pt, gt, st, sign, wd, e, clr); }       \
        else { adagrad_span_##S(from, to, 0, pt, gt, st, sign, wd, e, clr); },         \
        T *pt = (T *)p[t], *gt = (T *)g[t], *st = (T *)s[t];                           \
        const T clr = (T)clrs[t];)                                                     \
}

ADAGRAD(float, f32, fmaf, sqrtf)
ADAGRAD(double, f64, fma, sqrt)
"""
_P, _TABLE, _I64, _D, _I = (ctypes.c_void_p, native.POINTERS, ctypes.c_int64, ctypes.c_double,
                            ctypes.c_int)
_ADAM = [_TABLE] * 5 + [_P, _P, _I64] + [_D] * 5 + [_I] * 4 + [_D, _I]
_SGD = [_TABLE] * 3 + [_P, _I64] + [_D] * 4 + [_I] * 4 + [_D, _I]
_ADAGRAD = [_TABLE] * 3 + [_P, _P, _I64, _D, _D, _I, _I, _D, _I]
_KERNELS = native.Kernels(_SOURCE, {"adam_f32": _ADAM, "adam_f64": _ADAM, "sgd_f32": _SGD,
                                    "sgd_f64": _SGD, "adagrad_f32": _ADAGRAD,
                                    "adagrad_f64": _ADAGRAD})
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_WORK = {_F32: "f32", _F64: "f64"}


def _groups(lists: list[list[Any]], written: list[bool]
            ) -> list[tuple[str, list[int], list[list[Any]], list[tuple[Any, Any]]]]:
    """Per native loop (``f32``, ``f64``): the indices of the tensors it updates (empty ones
    may be left out), their arrays per list (row-major, in its dtype: copies where they
    are not) and the copies to write back, ``(array, copy)``, of the ``written`` lists."""
    params = lists[0]
    dt = params[0].dtype if params else None
    if dt in _WORK and all([a.dtype is dt and a.flags.c_contiguous
                            for values in lists for a in values]):
        return [(_WORK[dt], list(range(len(params))), lists, [])]  # an optimizer's usual step
    groups: dict[str, tuple[list[int], list[list[Any]], list[tuple[Any, Any]]]] = {}
    for i, p in enumerate(params):
        if not p.size:
            continue
        work = _F64 if p.dtype is _F64 else _F32
        members, arrays, copies = groups.setdefault(_WORK[work], ([], [[] for _ in lists], []))
        members.append(i)
        for arg, (values, written_arg) in enumerate(zip(lists, written)):
            a = values[i]
            if a.dtype is not work or not a.flags.c_contiguous:
                copy = np.ascontiguousarray(a, dtype=work)
                if written_arg:
                    copies.append((a, copy))
                a = copy
            arrays[arg].append(a)
    return [(suffix, *group) for suffix, group in groups.items()]


def _counts(arrays: list[Any], tails: list[int], members: list[int]) -> Any:
    """The C loops' ``counts``: each array's size, then its remainder's."""
    return np.array([a.size for a in arrays] + [tails[i] for i in members], np.int64)


def launch(kernels: native.Kernels, name: str, lists: list[list[Any]], written: list[bool],
           call: Callable[[Any, list[list[Any]], list[int]], None]) -> None:
    """``call(fn, arrays, members)`` for each native loop's group (``fn``: the function
    ``<name>_f32`` or ``_f64`` of ``kernels``); its copies written back."""
    for suffix, members, arrays, copies in _groups(lists, written):
        call(kernels(f"{name}_{suffix}"), arrays, members)
        for target, copy in copies:
            np.copyto(target, copy, casting="unsafe")


def built() -> bool:
    """Whether the native kernels are compiled and loaded (compiling them on first call):
    the optimizers take their fused path by default only where they are."""
    return _KERNELS("adam_f32") is not None


def _adam_kernel(adamw: bool) -> Callable[..., None]:
    reference = (FUSED_ADAMW_ if adamw else FUSED_ADAM_).forward

    def kernel(self: list[Any], grads: list[Any], exp_avgs: list[Any], exp_avg_sqs: list[Any],
               max_exp_avg_sqs: list[Any], state_steps: list[Any], lr: Any, grad_scale: Any,
               found_inf: Any, *, beta1: float, beta2: float, weight_decay: float,
               eps: float, amsgrad: bool, maximize: bool) -> None:
        if _KERNELS("adam_f32") is None:
            return reference(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                             lr, grad_scale, found_inf, beta1=beta1, beta2=beta2,
                             weight_decay=weight_decay, eps=eps, amsgrad=amsgrad,
                             maximize=maximize)
        if skipped(found_inf):
            return None
        lr = _item(lr)
        scale = grad_scale_of(grad_scale)
        step_sizes, bc2_sqrts = bias_corrections(state_steps, lr, beta1, beta2)
        tails = remainders(self)

        def call(fn: Any, arrays: list[list[Any]], members: list[int]) -> None:
            p, g, m, v, *x = arrays
            fn(p, g, m, v, x[0] if amsgrad else (), _counts(p, tails, members),
               np.array([step_sizes[i] for i in members] + [bc2_sqrts[i] for i in members]),
               len(p), lr, beta1, beta2, weight_decay, eps, int(amsgrad), int(maximize),
               int(adamw), int(scale is not None), 1.0 if scale is None else scale,
               native.get_num_threads())

        lists = [self, grads, exp_avgs, exp_avg_sqs] + [max_exp_avg_sqs] * bool(amsgrad)
        launch(_KERNELS, "adam", lists, [True, scale is not None, True, True, True], call)
        return None

    return kernel


def _sgd_kernel(self: list[Any], grads: list[Any], momentum_buffer_list: list[Any], lr: Any,
                grad_scale: Any, found_inf: Any, *, weight_decay: float, momentum: float,
                dampening: float, nesterov: bool, maximize: bool, is_first_step: bool) -> None:
    if _KERNELS("sgd_f32") is None:
        return FUSED_SGD_.forward(self, grads, momentum_buffer_list, lr, grad_scale, found_inf,
                                  weight_decay=weight_decay, momentum=momentum,
                                  dampening=dampening, nesterov=nesterov, maximize=maximize,
                                  is_first_step=is_first_step)
    if skipped(found_inf):
        return None
    lr = _item(lr)
    scale = grad_scale_of(grad_scale)
    tails = remainders(self)

    def call(fn: Any, arrays: list[list[Any]], members: list[int]) -> None:
        p, g, *b = arrays
        fn(p, g, b[0] if momentum != 0 else (), _counts(p, tails, members), len(p),
           weight_decay, momentum, lr, dampening, int(nesterov), int(maximize), int(is_first_step),
           int(scale is not None), 1.0 if scale is None else scale, native.get_num_threads())

    lists = [self, grads] + [momentum_buffer_list] * (momentum != 0)
    launch(_KERNELS, "sgd", lists, [True, scale is not None, True], call)
    return None


def adagrad_kernel(reference: Callable[..., None]) -> Callable[..., None]:
    """The CPU kernel of ``_fused_adagrad_`` (``fused_adagrad`` registers it), ``reference``
    where the native loops are not built."""

    def kernel(self: list[Any], grads: list[Any], state_sums: list[Any],
               state_steps: list[Any], lr: Any, grad_scale: Any, found_inf: Any, *,
               lr_decay: float, weight_decay: float, eps: float, maximize: bool) -> None:
        if _KERNELS("adagrad_f32") is None:
            return reference(self, grads, state_sums, state_steps, lr, grad_scale, found_inf,
                             lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
                             maximize=maximize)
        if skipped(found_inf):
            return None
        scale = grad_scale_of(grad_scale)
        clrs = decayed_lrs(state_steps, _item(lr), lr_decay)

        def call(fn: Any, arrays: list[list[Any]], members: list[int]) -> None:
            p, g, s = arrays
            fn(p, g, s, _counts(p, [0] * len(self), members),
               np.array([clrs[i] for i in members]), len(p), weight_decay, eps, int(maximize),
               int(scale is not None), 1.0 if scale is None else scale,
               native.get_num_threads())

        launch(_KERNELS, "adagrad", [self, grads, state_sums],
               [True, scale is not None, True], call)
        return None

    return kernel


FUSED_ADAM_.register_kernel("cpu", _adam_kernel(False))
FUSED_ADAMW_.register_kernel("cpu", _adam_kernel(True))
FUSED_SGD_.register_kernel("cpu", _sgd_kernel)
