"""Dropout: each element kept with probability ``1 - p`` and scaled by ``1 / (1 - p)``, the
rest zeroed (times 0, so a negative input gives -0.0 and NaN stays NaN, as torch's).

Primitives:

- ``native_dropout`` (the generator's ``state``, ``input``; params ``p``, ``device``) ->
  ``(out, mask, new_state)``: element ``i`` of the input (in row-major order) is kept
  where the ``i``-th 32-bit draw of the stream at ``state`` is below ``(1 - p) * 2**32``,
  so a recorded call replays; ``out`` and the bool ``mask`` are laid out as the input is
  (torch's ``empty_like``);
- ``native_dropout_backward`` (``grad_output``, ``mask``; params ``scale``) -> ``grad_output
  * mask * scale``.

The native loops (row-major float32/float64) apply the mask in one pass, in parallel.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta, native
from ..creation import empty_like, ones_like
from ..device import device, xp_of
from ..dispatch import dispatch, register
from ..dtypes import scalar_type_name
from ..random import advanced, generator_for, stream_of
from ..tensor import Tensor
from .operands import LOW_PRECISION, check_operand, not_implemented

_F32 = np.dtype(np.float32)


def _scale(p: float) -> float:
    return 0.0 if p == 1 else 1 / (1 - p)


def _draws(state: Any, n: int) -> tuple[Any, Any]:
    """``n`` 32-bit draws of the stream at ``state``, and the state after them."""
    stream = stream_of(state)
    bits = stream.bit_generator.random_raw((n + 1) // 2).view(np.uint32)[:n]
    return bits, advanced(stream, state)


def _threshold(p: float) -> int:
    """The draws below it keep their element (for p == 0: 2**32, above every draw)."""
    return round((1 - p) * 2 ** 32)


def _keep(state: Any, shape: tuple[int, ...], p: float) -> tuple[Any, Any]:
    """The mask of an input of ``shape`` (row-major order) and the state after its draws."""
    bits, new_state = _draws(state, int(np.prod(shape)))
    return (bits < np.uint64(_threshold(p))).reshape(shape), new_state


def _strides_like(x: Any) -> tuple[int, ...]:
    """The element strides of torch's ``empty_like(x)`` (row-major for an empty ``x``)."""
    if not x.size:
        return meta.contiguous_strides(x.shape)
    return meta.like_strides(x.shape, meta.element_strides(x))


def _like(x: Any, dtype: Any) -> Any:
    """An empty array laid out as torch's ``empty_like(x)``."""
    xp = xp_of(x)
    strides = _strides_like(x)
    if strides == meta.contiguous_strides(x.shape):
        return xp.empty(x.shape, dtype)
    base = xp.empty(x.size, dtype)
    return xp.lib.stride_tricks.as_strided(base, x.shape,
                                           tuple(s * base.itemsize for s in strides))


def _apply(x: Any, keep: Any, scale: float) -> tuple[Any, Any]:
    """``(x * keep * scale, keep)``, laid out as ``x``; half types computed in float32."""
    keep = xp_of(x).asarray(keep)
    z = x.astype(_F32) if x.dtype in LOW_PRECISION else x
    out, mask = _like(x, x.dtype), _like(x, np.bool_)
    out[...] = z * (keep * z.real.dtype.type(scale))
    mask[...] = keep
    return out, mask


def _native_dropout(state: Any, x: Any, *, p: float, device: device) -> tuple[Any, Any, Any]:
    keep, new_state = _keep(state, x.shape, p)
    return (*_apply(x, keep, _scale(p)), new_state)


def _native_dropout_backward(g: Any, mask: Any, *, scale: float) -> Any:
    z = g.astype(_F32) if g.dtype in LOW_PRECISION else g
    out = _like(g, g.dtype)
    out[...] = z * (mask * z.real.dtype.type(scale))
    return out


def _dropout_rule(state: Any, x: Any, *, p: float, device: device) -> tuple[Any, Any, Any]:
    strides = _strides_like(x)
    return (meta.strided(x.shape, x.dtype, strides), meta.strided(x.shape, _dt.bool, strides),
            state)


def _dropout_backward_rule(g: Any, mask: Any, *, scale: float) -> Any:
    return meta.strided(g.shape, g.dtype, _strides_like(g))


NATIVE_DROPOUT = register("native_dropout", _native_dropout, _dropout_rule, "library",
                          device_param=True, arg_names=("state", "input"))
NATIVE_DROPOUT_BACKWARD = register("native_dropout_backward", _native_dropout_backward,
                                   _dropout_backward_rule, "elementwise", False,
                                   arg_names=("grad_output", "mask"))

# ----------------------------------------------------------------------------- native CPU

_SOURCE = """
#include <stdint.h>

/* out = x * (kept ? scale : 0), and the mask, from the 32-bit draws: the product with 0
   keeps torch's -0.0 and NaN */
#define APPLY(T, NAME)                                                                 \\
void NAME(const T *x, const uint32_t *bits, T *out, uint8_t *mask, int64_t n,          \\
          uint64_t threshold, double scale, int threads) {                             \\
    const T s = (T)scale;                                                              \\
    _Pragma("omp parallel for simd num_threads(threads) if(n >= 65536)")               \\
    for (int64_t i = 0; i < n; ++i) {                                                  \\
        uint8_t k = bits[i] < threshold;                                               \\
        mask[i] = k;                                                                   \\
        out[i] = x[i] * (k ? s : (T)0);                                                \\
    }                                                                                  \\
}                                                                                      \\
                                                                                       \\
void NAME##_backward(const T *g, const uint8_t *mask, T *out, int64_t n, double scale, \\
                     int threads) {                                                    \\
    const T s = (T)scale;                                                              \\
    _Pragma("omp parallel for simd num_threads(threads) if(n >= 65536)")               \\
    for (int64_t i = 0; i < n; ++i) out[i] = g[i] * (mask[i] ? s : (T)0);              \\
}

APPLY(float, dropout_f32)
APPLY(double, dropout_f64)
"""
_P, _I64 = ctypes.c_void_p, ctypes.c_int64
_FORWARD = [_P, _P, _P, _P, _I64, ctypes.c_uint64, ctypes.c_double, ctypes.c_int]
_BACKWARD = [_P, _P, _P, _I64, ctypes.c_double, ctypes.c_int]
_KERNELS = native.Kernels(_SOURCE, {
    "dropout_f32": _FORWARD, "dropout_f64": _FORWARD,
    "dropout_f32_backward": _BACKWARD, "dropout_f64_backward": _BACKWARD})
_NAMES = {np.dtype(np.float32): "dropout_f32", np.dtype(np.float64): "dropout_f64"}


def _native_for(x: Any, suffix: str = "") -> Any:
    name = _NAMES.get(x.dtype)
    if name is None or not x.size or not x.flags.c_contiguous:
        return None
    return _KERNELS(name + suffix)


def _native_dropout_kernel(state: Any, x: Any, *, p: float, device: device) -> Any:
    fn = _native_for(x)
    if fn is None:
        return _native_dropout(state, x, p=p, device=device)
    bits, new_state = _draws(state, x.size)
    out, mask = np.empty(x.shape, x.dtype), np.empty(x.shape, np.bool_)
    fn(x, bits, out, mask, x.size, _threshold(p), _scale(p),
       native.get_num_threads())
    return out, mask, new_state


def _native_dropout_backward_kernel(g: Any, mask: Any, *, scale: float) -> Any:
    fn = _native_for(g, "_backward")
    if fn is None or not mask.flags.c_contiguous:
        return _native_dropout_backward(g, mask, scale=scale)
    out = np.empty(g.shape, g.dtype)
    fn(g, mask, out, g.size, scale, native.get_num_threads())
    return out


NATIVE_DROPOUT.register_kernel("cpu", _native_dropout_kernel)
NATIVE_DROPOUT_BACKWARD.register_kernel("cpu", _native_dropout_backward_kernel)


# ----------------------------------------------------------------------------- public API

def _check(op: str, input: Tensor, p: Any) -> float:
    check_operand(op, "input", input, numbers=False)
    p = float(p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1 - p:g}")
    return p


def native_dropout(input: Tensor, p: float, train: bool) -> tuple[Tensor, Tensor]:
    """torch.native_dropout: ``(out, mask)``; ``out`` keeps each element with probability
    ``1 - p``, scaled by ``1 / (1 - p)``, where ``train`` (else a copy and a mask of ones)."""
    p = _check("native_dropout", input, p)
    if not input.numel():  # torch's: the input itself, and a "mask" of its dtype
        return input, empty_like(input)
    if input.dtype.category < 2:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{scalar_type_name(input.dtype)}")
    if not train:
        return input.clone(), ones_like(input, dtype=_dt.bool)
    gen = generator_for(None, input.device)
    out, mask, gen._state = dispatch(NATIVE_DROPOUT, (gen._state, input),
                                     {"p": p, "device": input.device})
    return out, mask


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """torch.dropout: ``input`` with each element zeroed with probability ``p`` and the rest
    scaled by ``1 / (1 - p)`` where ``train``; ``input`` itself where not (or p is 0)."""
    check_operand("dropout", "input", input, numbers=False)
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:  # torch multiplies by a zero: any dtype, and -0.0 where the input is negative
        return input * input.new_zeros((), dtype=input.dtype)
    if input.dtype.category == 3:
        raise not_implemented("bernoulli_scalar_cpu_", input.dtype)
    return native_dropout(input, p, train)[0]


FUNCTIONS = ["native_dropout", "dropout"]
METHODS: dict[str, Any] = {}
