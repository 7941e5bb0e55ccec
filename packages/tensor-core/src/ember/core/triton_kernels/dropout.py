"""Triton kernels of dropout and its backward.

The mask is the reference's: element ``i`` of the input (row-major order) is kept where
the ``i``-th 32-bit draw of the generator's stream is below the threshold. The draws are
made on the host, as the reference makes them (so a seed gives the same mask on every
device and a recorded call replays), and copied over; the kernel compares, scales and
writes the output and the mask in one pass. A non-contiguous input is made row-major
first; the output and the mask are then laid out as ``empty_like(input)``, as the op's
rule says. The backward takes a gradient and a mask of one dense layout; other operands
run the reference.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import triton
import triton.language as tl

from .. import meta
from ..device import device, xp_of
from ..ops.dropout import (
    _draws,
    _native_dropout,
    _native_dropout_backward,
    _scale,
    _strides_like,
    _threshold,
)
from .launching import FLOATS, compute_type, empty_strided, launch

_BLOCK = 1024


@triton.jit
def _apply(x_ptr, bits_ptr, mask_ptr, out_ptr, n, threshold, scale: tl.float64,
           FROM_BITS: tl.constexpr, COMPUTE: tl.constexpr, BLOCK: tl.constexpr):
    """``out = x * (kept ? scale : 0)``: kept where a draw is below ``threshold`` (then
    written to the mask), or where the mask says so; the product with 0 keeps -0.0 and
    NaN, as torch's."""
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = idx < n
    if FROM_BITS:
        kept = tl.load(bits_ptr + idx, mask=inside, other=0).to(tl.int64) < threshold
        tl.store(mask_ptr + idx, kept.to(mask_ptr.dtype.element_ty), mask=inside)
    else:
        kept = tl.load(mask_ptr + idx, mask=inside, other=0) != 0
    x = tl.load(x_ptr + idx, mask=inside, other=0.0).to(COMPUTE)
    factor = tl.where(kept, tl.full((), scale, COMPUTE), 0.0)
    tl.store(out_ptr + idx, (x * factor).to(out_ptr.dtype.element_ty), mask=inside)


def _laid_out_like(xp: Any, a: Any, strides: tuple[int, ...]) -> Any:
    """The row-major ``a`` as an array with element ``strides``."""
    if strides == meta.contiguous_strides(a.shape):
        return a
    out = empty_strided(xp, a.shape, a.dtype, strides)
    out[...] = a
    return out


def native_dropout(state: Any, x: Any, *, p: float, device: device) -> tuple[Any, Any, Any]:
    if not x.size or x.dtype not in FLOATS:
        return _native_dropout(state, x, p=p, device=device)
    xp = xp_of(x)
    bits, new_state = _draws(state, x.size)
    rows = xp.ascontiguousarray(x)
    out, mask = xp.empty(x.shape, x.dtype), xp.empty(x.shape, np.bool_)
    launch(_apply, (math.ceil(x.size / _BLOCK),), rows, xp.asarray(bits), mask, out, x.size,
           _threshold(p), _scale(p), True, compute_type(x.dtype), _BLOCK)
    strides = _strides_like(x)
    return _laid_out_like(xp, out, strides), _laid_out_like(xp, mask, strides), new_state


def native_dropout_backward(g: Any, mask: Any, *, scale: float) -> Any:
    strides = meta.element_strides(g)
    if not g.size or g.dtype not in FLOATS or mask.shape != g.shape or \
            meta.element_strides(mask) != strides or _strides_like(g) != strides:
        return _native_dropout_backward(g, mask, scale=scale)
    out = empty_strided(xp_of(g), g.shape, g.dtype, strides)
    launch(_apply, (math.ceil(g.size / _BLOCK),), g, g, mask, out, g.size, 0, scale, False,
           compute_type(g.dtype), _BLOCK)
    return out
