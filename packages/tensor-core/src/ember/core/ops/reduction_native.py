"""Native CPU loops of sum and mean over large row-major float32/float64 arrays: the whole
array, or each row along the last dims. NumPy reduces in one thread; these split the work
over ``native.get_num_threads()`` threads.

Each block of 8192 elements is summed in double (vectorised), and the blocks' sums are
added in order, so a result does not depend on the thread count, and is closer to the
exact sum than a float32 pairwise one. Smaller or other arrays return None: the caller
runs numpy's reduction.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

from .. import native

# below this many elements the threads' start costs more than the work
LARGE = 65536

_SOURCE = """
#include <stdint.h>
#include <stdlib.h>

#define BLOCK 8192

#define SUMS(T, SUFFIX)                                                                \\
static double block_##SUFFIX(const T *x, int64_t n) {                                 \\
    double s = 0;                                                                      \\
    _Pragma("omp simd reduction(+:s)")                                                 \\
    for (int64_t i = 0; i < n; ++i) s += x[i];                                         \\
    return s;                                                                          \\
}                                                                                      \\
                                                                                       \\
/* the sum of each of the rows (rows, n) of x, over divisor, into out */               \\
void row_sums_##SUFFIX(const T *x, T *out, int64_t rows, int64_t n, double divisor,   \\
                       int threads) {                                                  \\
    if (rows == 1) { /* one row: its blocks split among the threads */                 \\
        int64_t blocks = (n + BLOCK - 1) / BLOCK;                                      \\
        double *part = (double *)malloc(sizeof(double) * (blocks > 0 ? blocks : 1));   \\
        _Pragma("omp parallel for num_threads(threads) schedule(static)")              \\
        for (int64_t b = 0; b < blocks; ++b) {                                         \\
            int64_t start = b * BLOCK, len = n - start < BLOCK ? n - start : BLOCK;    \\
            part[b] = block_##SUFFIX(x + start, len);                                  \\
        }                                                                              \\
        double s = 0;                                                                  \\
        for (int64_t b = 0; b < blocks; ++b) s += part[b];                             \\
        out[0] = (T)(s / divisor);                                                     \\
        free(part);                                                                    \\
        return;                                                                        \\
    }                                                                                  \\
    _Pragma("omp parallel for num_threads(threads) schedule(static)")                  \\
    for (int64_t r = 0; r < rows; ++r) {                                               \\
        const T *xr = x + r * n;                                                       \\
        double s = 0;                                                                  \\
        for (int64_t start = 0; start < n; start += BLOCK)                             \\
            s += block_##SUFFIX(xr + start, n - start < BLOCK ? n - start : BLOCK);    \\
        out[r] = (T)(s / divisor);                                                     \\
    }                                                                                  \\
}

SUMS(float, f32)
SUMS(double, f64)
"""
_ROWS = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_double,
         ctypes.c_int]
_KERNELS = native.Kernels(_SOURCE, {"row_sums_f32": _ROWS, "row_sums_f64": _ROWS})
_NAMES = {np.dtype(np.float32): "row_sums_f32", np.dtype(np.float64): "row_sums_f64"}


def row_sums(x: Any, dim: tuple[int, ...] | None, keepdim: bool, mean: bool) -> Any:
    """The sum (or the mean) of ``x`` whole (``dim`` None) or over its last dims, shaped as
    numpy's reduction with ``keepdim``; None where the native loop does not take it."""
    name = _NAMES.get(x.dtype) if x.__class__ is np.ndarray else None
    if name is None or x.size < LARGE or not x.flags.c_contiguous:
        return None
    nd = x.ndim
    if dim is None:
        dim = tuple(range(nd))
    if dim != tuple(range(nd - len(dim), nd)):
        return None  # (not the trailing dims)
    fn = _KERNELS(name)
    if fn is None:
        return None
    n = math.prod(x.shape[nd - len(dim):])
    lead = x.shape[:nd - len(dim)]
    out = np.empty(lead + (1,) * len(dim) if keepdim else lead, x.dtype)
    fn(x, out, x.size // n, n, float(n) if mean else 1.0, native.get_num_threads())
    return out
