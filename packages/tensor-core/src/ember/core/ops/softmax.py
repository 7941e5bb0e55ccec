"""softmax and log_softmax along one dim, computed stably (the max subtracted first);
float16/bfloat16 compute in float32 and round once, as torch's CPU kernels do.

Primitives ``softmax`` and ``log_softmax`` (operand the input, params ``dim``): the result
has the input's shape and dtype and is row-major whatever the input's layout, as torch's.
Their fused backwards ``_softmax_backward_data`` and ``_log_softmax_backward_data``
(operands the output's gradient and the output, params ``dim``) give the input's gradient,
laid out likewise.
"""

from __future__ import annotations

import ctypes
import operator
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta, native
from ..dispatch import Op, dispatch, register
from ..tensor import Tensor, wrap_dim
from .conversion import cast
from .operands import check_operand, not_implemented, upcast


def _rows(x: Any, dim: int) -> tuple[Any, int]:
    """``x`` in its computation dtype, with the one dim torch gives a 0-d tensor."""
    (z,) = upcast(x)
    return (z.reshape(1), 0) if z.ndim == 0 else (z, dim)


def _softmax(x: Any, *, dim: int) -> Any:
    if x.size == 0:
        return x.copy()
    z, axis = _rows(x, dim)
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    e /= e.sum(axis=axis, keepdims=True)
    return e.reshape(x.shape).astype(x.dtype, order="C", copy=False)


def _log_softmax(x: Any, *, dim: int) -> Any:
    if x.size == 0:
        return x.copy()
    z, axis = _rows(x, dim)
    shifted = z - z.max(axis=axis, keepdims=True)  # rows of -inf give nan, as in torch
    r = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    return r.reshape(x.shape).astype(x.dtype, order="C", copy=False)


def _rule(x: Any, *, dim: int) -> Any:
    return meta.empty(x.shape, x.dtype)


def _softmax_backward(g: Any, y: Any, *, dim: int) -> Any:
    """``y * (g - sum(g * y))`` along ``dim``."""
    gz, yz = upcast(g, y)
    if y.ndim == 0 or not y.size:
        return (yz * (gz - gz * yz)).astype(y.dtype, order="C", copy=False)
    r = yz * (gz - (gz * yz).sum(axis=dim, keepdims=True))
    return r.astype(y.dtype, order="C", copy=False)


def _log_softmax_backward(g: Any, y: Any, *, dim: int) -> Any:
    """``g - exp(y) * sum(g)`` along ``dim``."""
    gz, yz = upcast(g, y)
    total = gz if y.ndim == 0 or not y.size else gz.sum(axis=dim, keepdims=True)
    return (gz - np.exp(yz) * total).astype(y.dtype, order="C", copy=False)


def _backward_rule(g: Any, y: Any, *, dim: int) -> Any:
    return meta.empty(y.shape, y.dtype)


SOFTMAX = register("softmax", _softmax, _rule, "reduction", arg_names=("self",))
LOG_SOFTMAX = register("log_softmax", _log_softmax, _rule, "reduction", arg_names=("self",))
SOFTMAX_BACKWARD = register("_softmax_backward_data", _softmax_backward, _backward_rule,
                            "reduction", False, arg_names=("grad_output", "output"))
LOG_SOFTMAX_BACKWARD = register("_log_softmax_backward_data", _log_softmax_backward,
                                _backward_rule, "reduction", False,
                                arg_names=("grad_output", "output"))

# ----------------------------------------------------------------------------- native CPU

# One pass over each row for its max (NaN wins, as numpy's max), one for the exponentials
# and their sum (vectorised through glibc's SIMD exp), one to scale by the sum's reciprocal
# (torch's vectorised kernel's step): rows in parallel where the tensor is large enough to
# pay for the threads.
_SOURCE = """
#include <math.h>
#include <stdint.h>

/* the vector variants of exp (glibc's libmvec) in loops the compiler vectorises */
#pragma omp declare simd notinbranch
float expf(float);
#pragma omp declare simd notinbranch
double exp(double);

#define ROWS(T, NAME, EXP, LOG)                                                        \\
void NAME(const T *x, T *y, int64_t rows, int64_t n, int take_log, int threads) {      \\
    _Pragma("omp parallel for num_threads(threads) schedule(static) if(rows * n >= 65536)") \\
    for (int64_t r = 0; r < rows; ++r) {                                               \\
        const T *xr = x + r * n;                                                       \\
        T *yr = y + r * n;                                                             \\
        T m = -INFINITY;                                                               \\
        int nan = 0;                                                                   \\
        _Pragma("omp simd reduction(max:m) reduction(|:nan)")                          \\
        for (int64_t i = 0; i < n; ++i) {                                              \\
            m = xr[i] > m ? xr[i] : m;                                                 \\
            nan |= xr[i] != xr[i];                                                     \\
        }                                                                              \\
        if (nan) m = NAN;                                                              \\
        T s = 0;                                                                       \\
        if (take_log) {                                                                \\
            _Pragma("omp simd reduction(+:s)")                                         \\
            for (int64_t i = 0; i < n; ++i) s += EXP(xr[i] - m);                       \\
            T ls = LOG(s);                                                             \\
            _Pragma("omp simd")                                                        \\
            for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] - m) - ls;                  \\
        } else {                                                                       \\
            _Pragma("omp simd reduction(+:s)")                                         \\
            for (int64_t i = 0; i < n; ++i) { T e = EXP(xr[i] - m); yr[i] = e; s += e; } \\
            T inv = 1 / s;                                                             \\
            _Pragma("omp simd")                                                        \\
            for (int64_t i = 0; i < n; ++i) yr[i] *= inv;                              \\
        }                                                                              \\
    }                                                                                  \\
}

/* the input's gradient from the output's, ``g``, and the output ``y``: softmax's
   y * (g - sum(g * y)), log_softmax's g - exp(y) * sum(g) */
#define BACK(T, NAME, EXP)                                                             \\
void NAME(const T *g, const T *y, T *dx, int64_t rows, int64_t n, int take_log,        \\
          int threads) {                                                               \\
    _Pragma("omp parallel for num_threads(threads) schedule(static) if(rows * n >= 65536)") \\
    for (int64_t r = 0; r < rows; ++r) {                                               \\
        const T *gr = g + r * n, *yr = y + r * n;                                      \\
        T *dr = dx + r * n;                                                            \\
        T s = 0;                                                                       \\
        if (take_log) {                                                                \\
            _Pragma("omp simd reduction(+:s)")                                         \\
            for (int64_t i = 0; i < n; ++i) s += gr[i];                                \\
            _Pragma("omp simd")                                                        \\
            for (int64_t i = 0; i < n; ++i) dr[i] = gr[i] - EXP(yr[i]) * s;            \\
        } else {                                                                       \\
            _Pragma("omp simd reduction(+:s)")                                         \\
            for (int64_t i = 0; i < n; ++i) s += gr[i] * yr[i];                        \\
            _Pragma("omp simd")                                                        \\
            for (int64_t i = 0; i < n; ++i) dr[i] = yr[i] * (gr[i] - s);               \\
        }                                                                              \\
    }                                                                                  \\
}

ROWS(float, softmax_f32, expf, logf)
ROWS(double, softmax_f64, exp, log)
BACK(float, softmax_backward_f32, expf)
BACK(double, softmax_backward_f64, exp)
"""
_ROW_ARGS = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int,
             ctypes.c_int]
_BACK_ARGS = [ctypes.c_void_p, *_ROW_ARGS]
_KERNELS = native.Kernels(_SOURCE, {
    "softmax_f32": _ROW_ARGS, "softmax_f64": _ROW_ARGS,
    "softmax_backward_f32": _BACK_ARGS, "softmax_backward_f64": _BACK_ARGS})
_SUFFIX = {np.dtype(np.float32): "_f32", np.dtype(np.float64): "_f64"}


def _last_dim_rows(name: str, dim: int, *arrays: Any) -> Any:
    """The native ``name`` loop where every array is row-major in one float32 or float64
    dtype and ``dim`` is the last, with elements to work on; else None."""
    x = arrays[0]
    suffix = _SUFFIX.get(x.dtype)
    if suffix is None or not x.ndim or dim != x.ndim - 1 or not x.size or not all(
            a.dtype == x.dtype and a.flags.c_contiguous for a in arrays):
        return None
    return _KERNELS(name + suffix)


def _rows_kernel(reference: Any, take_log: int) -> Any:
    """The CPU kernel: the native loop over the rows of a row-major float32 or float64
    input along its last dim, the reference forward otherwise."""

    def kernel(x: Any, *, dim: int) -> Any:
        fn = _last_dim_rows("softmax", dim, x)
        if fn is None:
            return reference(x, dim=dim)
        y = np.empty(x.shape, x.dtype)
        n = x.shape[-1]
        fn(x, y, x.size // n, n, take_log, native.get_num_threads())
        return y

    kernel.__name__ = reference.__name__
    return kernel


def _backward_kernel(reference: Any, take_log: int) -> Any:
    """The CPU kernel of a backward: the native loop where the gradient and the output are
    row-major along their last dim (an expanded gradient is copied once first)."""

    def kernel(g: Any, y: Any, *, dim: int) -> Any:
        if not g.flags.c_contiguous and g.dtype == y.dtype:
            g = np.ascontiguousarray(g)
        fn = _last_dim_rows("softmax_backward", dim, y, g)
        if fn is None:
            return reference(g, y, dim=dim)
        dx = np.empty(y.shape, y.dtype)
        n = y.shape[-1]
        fn(g, y, dx, y.size // n, n, take_log, native.get_num_threads())
        return dx

    kernel.__name__ = reference.__name__
    return kernel


SOFTMAX.register_kernel("cpu", _rows_kernel(_softmax, 0))
LOG_SOFTMAX.register_kernel("cpu", _rows_kernel(_log_softmax, 1))
SOFTMAX_BACKWARD.register_kernel("cpu", _backward_kernel(_softmax_backward, 0))
LOG_SOFTMAX_BACKWARD.register_kernel("cpu", _backward_kernel(_log_softmax_backward, 1))


def _softmax_like(op: Op, input: Tensor, dim: Any, dtype: Any) -> Tensor:
    name = op.name
    check_operand(name, "input", input, numbers=False)
    try:
        dim = operator.index(dim)
    except TypeError:
        raise TypeError(f"{name}(): argument 'dim' (position 2) must be int, not "
                        f"{type(dim).__name__}") from None
    if dtype is not None:
        input = cast(input, _dt.to_dtype(dtype))
    data = input._data
    axis = wrap_dim(dim, data.ndim, name)
    if input.dtype.category != 2 and data.size:
        raise not_implemented(f"{name}_kernel_impl", input.dtype)
    return dispatch(op, (input,), {"dim": axis})  # type: ignore[no-any-return]


def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """torch.softmax: ``exp(x) / exp(x).sum(dim)``, computed stably; ``dtype`` casts first."""
    return _softmax_like(SOFTMAX, input, dim, dtype)


def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """torch.log_softmax: ``x - logsumexp(x, dim)``, computed stably; ``dtype`` casts first."""
    return _softmax_like(LOG_SOFTMAX, input, dim, dtype)


FUNCTIONS = ["softmax", "log_softmax"]
METHODS = {name: globals()[name] for name in FUNCTIONS}
