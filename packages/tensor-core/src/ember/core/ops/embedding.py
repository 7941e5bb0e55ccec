"""Embedding lookups: the rows of a weight picked by integer indices, and their backward.

Primitives:

- ``embedding`` (``weight`` (num_weights, dim), ``indices`` int64 or int32; params
  ``padding_idx``, ``scale_grad_by_freq``, which only its backward reads) -> a row-major
  ``indices.shape + (dim,)`` tensor, as torch's (an ``index_select`` of the rows);
- ``embedding_dense_backward`` (``grad_output``, ``indices``; params ``num_weights``,
  ``padding_idx``, ``scale_grad_by_freq``) -> the weight's gradient: each index's rows of
  the output gradient added into its row, none into ``padding_idx`` (negative: no
  padding), divided by the index's count in the batch where ``scale_grad_by_freq``.

Native loops: the forward copies whole rows of any dtype, checking each index; the
backward adds the rows, its columns shared among threads.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from .. import meta, native
from ..device import xp_of
from ..dispatch import dispatch, register
from ..dtypes import scalar_type_name
from ..tensor import Tensor
from .operands import check_operand, common_device


def _out_of_range() -> IndexError:
    return IndexError("index out of range in self")


def _embedding(weight: Any, indices: Any, *, padding_idx: int = -1,
               scale_grad_by_freq: bool = False) -> Any:
    if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= weight.shape[0]):
        raise _out_of_range()
    xp = xp_of(weight)
    return xp.take(weight, indices.reshape(-1), axis=0).reshape(*indices.shape,
                                                                weight.shape[1])


def _scaled_rows(grad: Any, flat: Any, num_weights: int, padding_idx: int,
                 scale_grad_by_freq: bool) -> Any:
    """The output gradient's rows, each divided by its index's count where asked for."""
    rows = grad.reshape(flat.size, grad.shape[-1])
    if scale_grad_by_freq and flat.size:
        counts = np.bincount(flat, minlength=num_weights)
        rows = rows / counts[flat, None].astype(rows.dtype)
    return rows


def _embedding_backward(grad: Any, indices: Any, *, num_weights: int, padding_idx: int,
                        scale_grad_by_freq: bool) -> Any:
    flat = indices.reshape(-1).astype(np.int64, copy=False)
    rows = _scaled_rows(grad, flat, num_weights, padding_idx, scale_grad_by_freq)
    out = np.zeros((num_weights, grad.shape[-1]), grad.dtype)
    np.add.at(out, flat, rows)
    if 0 <= padding_idx < num_weights:
        out[padding_idx] = 0
    return out


def _embedding_rule(weight: Any, indices: Any, **params: Any) -> Any:
    return meta.empty((*indices.shape, weight.shape[1]), weight.dtype)


def _embedding_backward_rule(grad: Any, indices: Any, *, num_weights: int,
                             **params: Any) -> Any:
    return meta.empty((num_weights, grad.shape[-1]), grad.dtype)


EMBEDDING = register("embedding", _embedding, _embedding_rule, "library",
                     arg_names=("weight", "indices"))
EMBEDDING_BACKWARD = register("embedding_dense_backward", _embedding_backward,
                              _embedding_backward_rule, "library", False,
                              arg_names=("grad_output", "indices"))

# ----------------------------------------------------------------------------- native CPU

# Threads share the columns: each adds every index's slice of its columns, so no two
# write one element. Rows of the padding index are skipped; ``inverse`` holds 1/count of
# each index where the gradient is scaled by frequency.
_SOURCE = """
#include <stdint.h>
#include <string.h>

/* the forward of any dtype: whole rows copied, each index checked (bad[0] set where one
   is out of range, its row then left unwritten: the caller raises) */
void gather_rows(const char *w, const int64_t *idx, char *out, int64_t n, int64_t row,
                 int64_t num, int64_t *bad, int threads) {
    int64_t wrong = 0;
    _Pragma("omp parallel for num_threads(threads) reduction(|:wrong) if(n * row >= 65536)")
    for (int64_t i = 0; i < n; ++i) {
        int64_t r = idx[i];
        if (r < 0 || r >= num) { wrong = 1; continue; }
        memcpy(out + i * row, w + r * row, (size_t)row);
    }
    bad[0] = wrong;
}

#define ADD_ROWS(T, NAME)                                                              \\
void NAME(const T *g, const int64_t *idx, const T *inverse, T *out, int64_t n,        \\
          int64_t d, int64_t num, int64_t padding, int threads) {                      \\
    memset(out, 0, sizeof(T) * num * d);                                               \\
    int64_t chunks = d >= 64 && n * d >= 16384 ? threads : 1;                          \\
    _Pragma("omp parallel for num_threads(chunks) schedule(static)")                   \\
    for (int64_t c = 0; c < chunks; ++c) {                                             \\
        int64_t lo = d * c / chunks, hi = d * (c + 1) / chunks;                        \\
        for (int64_t i = 0; i < n; ++i) {                                              \\
            int64_t r = idx[i];                                                        \\
            if (r == padding) continue;                                                \\
            const T *gi = g + i * d;                                                   \\
            T *o = out + r * d;                                                        \\
            if (inverse) {                                                             \\
                T s = inverse[r];                                                      \\
                _Pragma("omp simd")                                                    \\
                for (int64_t j = lo; j < hi; ++j) o[j] += gi[j] * s;                   \\
            } else {                                                                   \\
                _Pragma("omp simd")                                                    \\
                for (int64_t j = lo; j < hi; ++j) o[j] += gi[j];                       \\
            }                                                                          \\
        }                                                                              \\
    }                                                                                  \\
}

ADD_ROWS(float, embedding_backward_f32)
ADD_ROWS(double, embedding_backward_f64)
"""
_P, _I64 = ctypes.c_void_p, ctypes.c_int64
_ARGS = [_P, _P, _P, _P, _I64, _I64, _I64, _I64, ctypes.c_int]
_GATHER = [_P, _P, _P, _I64, _I64, _I64, _P, ctypes.c_int]
_KERNELS = native.Kernels(_SOURCE, {"embedding_backward_f32": _ARGS,
                                    "embedding_backward_f64": _ARGS,
                                    "gather_rows": _GATHER})
_NAMES = {np.dtype(np.float32): "embedding_backward_f32",
          np.dtype(np.float64): "embedding_backward_f64"}


def _embedding_backward_kernel(grad: Any, indices: Any, *, num_weights: int,
                               padding_idx: int, scale_grad_by_freq: bool) -> Any:
    name = _NAMES.get(grad.dtype)
    fn = _KERNELS(name) if name is not None and grad.size else None
    if fn is None:
        return _embedding_backward(grad, indices, num_weights=num_weights,
                                   padding_idx=padding_idx,
                                   scale_grad_by_freq=scale_grad_by_freq)
    grad = np.ascontiguousarray(grad)
    flat = np.ascontiguousarray(indices.reshape(-1), np.int64)
    inverse = None
    if scale_grad_by_freq:
        counts = np.bincount(flat, minlength=num_weights)
        inverse = np.zeros(num_weights, grad.dtype)
        np.divide(1, counts, out=inverse, where=counts > 0)
    out = np.empty((num_weights, grad.shape[-1]), grad.dtype)
    fn(grad, flat, inverse, out, flat.size, grad.shape[-1], num_weights,
       padding_idx, native.get_num_threads())
    return out


def _embedding_kernel(weight: Any, indices: Any, *, padding_idx: int = -1,
                      scale_grad_by_freq: bool = False) -> Any:
    fn = _KERNELS("gather_rows") if weight.flags.c_contiguous and indices.size else None
    if fn is None:
        return _embedding(weight, indices, padding_idx=padding_idx,
                          scale_grad_by_freq=scale_grad_by_freq)
    flat = np.ascontiguousarray(indices.reshape(-1), np.int64)
    out = np.empty((*indices.shape, weight.shape[1]), weight.dtype)
    bad = np.zeros(1, np.int64)
    fn(weight, flat, out, flat.size, weight.shape[1] * weight.itemsize,
       weight.shape[0], bad, native.get_num_threads())
    if bad[0]:
        raise _out_of_range()
    return out


EMBEDDING.register_kernel("cpu", _embedding_kernel)
EMBEDDING_BACKWARD.register_kernel("cpu", _embedding_backward_kernel)


# ----------------------------------------------------------------------------- public API

_INDEX_TYPES = ("Long", "Int")


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """torch.embedding: the rows of ``weight`` at ``indices`` (``indices.shape + (dim,)``).

    ``padding_idx`` (negative: none) gets no gradient; ``scale_grad_by_freq`` divides each
    row's gradient by its index's count in ``indices``. ``sparse`` gradients are computed
    dense (Ember has no sparse tensors; the values are the same).
    """
    check_operand("embedding", "weight", weight, numbers=False)
    check_operand("embedding", "indices", indices, numbers=False)
    kind = scalar_type_name(indices.dtype)
    if kind not in _INDEX_TYPES:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got torch.{kind}Tensor "
                           "instead (while checking arguments for embedding)")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if weight.shape[0] == 0 and indices.numel():  # (torch's index_select refuses first)
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    common_device("embedding", weight, indices)
    return dispatch(EMBEDDING, (weight, indices),  # type: ignore[no-any-return]
                    {"padding_idx": int(padding_idx),
                     "scale_grad_by_freq": bool(scale_grad_by_freq)})


FUNCTIONS = ["embedding"]
METHODS: dict[str, Any] = {}
