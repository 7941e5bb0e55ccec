"""Triton kernels of common elementwise ops where cupy's are slow (``exp``, ``add``,
``mul``): one pass over the elements in memory order, in blocks.

They take float arrays laid out as the elementwise rule lays out its results (dense; a
non-dense input of ``exp`` is copied so first), the binary ones two operands of one
shape, dtype and layout, which the result keeps. Anything else (broadcasting, a Python
number, integer or complex dtypes) runs the reference ufunc. float16 computes in
float32 and rounds once, as numpy's float16 loops do.
"""

from __future__ import annotations

import math
from typing import Any

import triton
import triton.language as tl

from .. import meta
from ..device import xp_of
from ..ops.binary import ADD, MUL
from ..ops.unary import EXP
from .launching import (
    ARRAYS,
    FLOATS,
    compute_type,
    dense_like,
    empty_strided,
    laid_out,
    launch,
)

_BLOCK = 1024
_EXP, _ADD, _MUL = 0, 1, 2  # the functions, by number


@triton.jit
def _elementwise(x_ptr, y_ptr, out_ptr, n, FUNCTION: tl.constexpr, COMPUTE: tl.constexpr,
                 BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = idx < n
    x = tl.load(x_ptr + idx, mask=inside, other=0.0).to(COMPUTE)
    if FUNCTION == 0:
        out = tl.exp(x)
    else:
        y = tl.load(y_ptr + idx, mask=inside, other=0.0).to(COMPUTE)
        out = x + y if FUNCTION == 1 else x * y
    tl.store(out_ptr + idx, out.to(out_ptr.dtype.element_ty), mask=inside)


def _run(function: int, x: Any, y: Any) -> Any:
    out = empty_strided(xp_of(x), x.shape, x.dtype, meta.element_strides(x))
    launch(_elementwise, (math.ceil(x.size / _BLOCK),), x, y, out, x.size, function,
           compute_type(x.dtype), _BLOCK)
    return out


def _is_array(a: Any) -> bool:
    return isinstance(a, ARRAYS)


def _takes(x: Any) -> bool:
    return _is_array(x) and x.dtype in FLOATS and x.size > 0


def exp(x: Any) -> Any:
    if not _takes(x):
        return EXP.forward(x)
    x = dense_like(x)
    return _run(_EXP, x, x)


def _binary(function: int, reference: Any, name: str) -> Any:
    def kernel(x: Any, y: Any) -> Any:
        if not _takes(x) or not _is_array(y) or y.dtype != x.dtype or \
                y.shape != x.shape or y.strides != x.strides or not laid_out(x):
            return reference(x, y)
        return _run(function, x, y)

    kernel.__name__ = name
    return kernel


add = _binary(_ADD, ADD.forward, "add")
mul = _binary(_MUL, MUL.forward, "mul")
