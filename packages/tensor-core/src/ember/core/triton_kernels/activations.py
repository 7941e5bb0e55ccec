"""Triton kernels of gelu, silu, sigmoid and their backwards, and of silu_ and sigmoid_: one
pass over the elements in memory order, in blocks.

The result is laid out as the ops' rule (TensorIterator) lays it out: a dense input's own
strides, else dense strides in its dims' order, into which a non-dense input is copied
first. The backwards take a gradient of the input's shape, dtype and layout (what autograd
gives); other operands run the reference. gelu's and silu's backwards take the forward's
input, sigmoid's and tanh's its output. float16 computes in float32 and rounds once
(sigmoid's backward rounds each step to float16, as the reference does); the formulas are
the reference's, term by term (tanh from one exponential, ``(1 - e) / (1 + e)`` with
``e = exp(-2|u|)``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import triton
import triton.language as tl

from .. import meta
from ..device import xp_of
from ..ops.activations import (
    _ALPHA,
    _BETA,
    _KAPPA,
    _PDF,
    SIGMOID_,
    _gelu,
    _gelu_backward,
    _sigmoid_backward,
    _silu,
    _silu_backward,
    _silu_inplace,
    _tanh_backward,
)
from ..ops.unary import _sigmoid
from .launching import FLOATS, compute_type, dense_like, empty_strided, laid_out, launch

_BLOCK = 1024
GELU, GELU_TANH, SILU, SIGMOID = 0, 1, 2, 3  # the functions, by number
SIGMOID_BACKWARD, TANH_BACKWARD = 0, 1  # the backwards from the output, by number
# the reference's constants, exact in the kernels' float64
ALPHA, BETA, KAPPA, PDF = (tl.constexpr(c) for c in (_ALPHA, _BETA, _KAPPA, _PDF))


@triton.jit
def _tanh(u):
    e = tl.exp(-2.0 * tl.abs(u))
    t = (1.0 - e) / (1.0 + e)
    return tl.where(u < 0, -t, t)


@triton.jit
def _pointwise(x_ptr, g_ptr, y_ptr, n, FUNCTION: tl.constexpr, BACKWARD: tl.constexpr,
               COMPUTE: tl.constexpr, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = idx < n
    x = tl.load(x_ptr + idx, mask=inside, other=0.0).to(COMPUTE)
    alpha = tl.full((), ALPHA, COMPUTE)
    beta = tl.full((), BETA, COMPUTE)
    kappa = tl.full((), KAPPA, COMPUTE)
    if FUNCTION == 0:  # gelu
        if BACKWARD:
            cdf = 0.5 * (1.0 + tl.erf(x * alpha))
            y = cdf + x * (tl.full((), PDF, COMPUTE) * tl.exp(x * x * -0.5))
        else:
            y = x * 0.5 * (1.0 + tl.erf(x * alpha))
    elif FUNCTION == 1:  # gelu, tanh approximation
        square = x * x
        t = _tanh(beta * (x + kappa * (square * x)))
        if BACKWARD:
            y = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * (beta * (1.0 + 3.0 * kappa * square))
        else:
            y = 0.5 * x * (1.0 + t)
    elif FUNCTION == 2:  # silu
        if BACKWARD:
            s = 1.0 / (1.0 + tl.exp(-x))
            y = s * (1.0 + x * (1.0 - s))
        else:
            y = x / (1.0 + tl.exp(-x))
    else:  # sigmoid
        y = 1.0 / (1.0 + tl.exp(-x))
    if BACKWARD:
        y = tl.load(g_ptr + idx, mask=inside, other=0.0).to(COMPUTE) * y
    tl.store(y_ptr + idx, y.to(y_ptr.dtype.element_ty), mask=inside)


@triton.jit
def _step(v, STEP: tl.constexpr, COMPUTE: tl.constexpr):
    """``v`` rounded to ``STEP``'s precision (a step of float16 sigmoid's backward)."""
    return v.to(STEP).to(COMPUTE)


@triton.jit
def _from_output(g_ptr, y_ptr, out_ptr, n, FUNCTION: tl.constexpr, COMPUTE: tl.constexpr,
                 STEP: tl.constexpr, BLOCK: tl.constexpr):
    """A backward from the forward's output ``y``: sigmoid's ``g * (1 - y) * y``, each step
    rounded to ``STEP``, or tanh's ``g * (1 - y * y)``."""
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = idx < n
    g = tl.load(g_ptr + idx, mask=inside, other=0.0).to(COMPUTE)
    y = tl.load(y_ptr + idx, mask=inside, other=0.0).to(COMPUTE)
    if FUNCTION == 0:
        r = _step(_step(g * _step(1.0 - y, STEP, COMPUTE), STEP, COMPUTE) * y, STEP, COMPUTE)
    else:
        r = g * (1.0 - y * y)
    tl.store(out_ptr + idx, r.to(out_ptr.dtype.element_ty), mask=inside)


def _run(function: int, x: Any, g: Any = None, out: Any = None) -> Any:
    """The kernel over the elements of the dense ``x`` (and ``g``, laid out alike) into
    ``out``, a new array laid out as ``x`` unless given."""
    if out is None:
        out = empty_strided(xp_of(x), x.shape, x.dtype, meta.element_strides(x))
    launch(_pointwise, (math.ceil(x.size / _BLOCK),), x, x if g is None else g, out, x.size,
           function, g is not None, compute_type(x.dtype), _BLOCK)
    return out


def _function(approximate: str) -> int:
    return GELU_TANH if approximate == "tanh" else GELU


def _takes(x: Any) -> bool:
    return x.dtype in FLOATS and bool(x.size)


def _takes_pair(g: Any, x: Any) -> bool:
    """Whether the backward kernel takes the gradient ``g`` with the input ``x``: one dtype,
    shape and dense layout."""
    return _takes(x) and g.dtype == x.dtype and g.shape == x.shape and \
        g.strides == x.strides and laid_out(x)


def gelu(x: Any, *, approximate: str = "none") -> Any:
    if not _takes(x):
        return _gelu(x, approximate=approximate)
    return _run(_function(approximate), dense_like(x))


def gelu_backward(g: Any, x: Any, *, approximate: str = "none") -> Any:
    if not _takes_pair(g, x):
        return _gelu_backward(g, x, approximate=approximate)
    return _run(_function(approximate), x, g)


def silu(x: Any) -> Any:
    if not _takes(x):
        return _silu(x)
    return _run(SILU, dense_like(x))


def silu_backward(g: Any, x: Any) -> Any:
    if not _takes_pair(g, x):
        return _silu_backward(g, x)
    return _run(SILU, x, g)


def silu_(x: Any) -> Any:
    if not _takes(x) or not laid_out(x):
        return _silu_inplace(x)
    return _run(SILU, x, out=x)


def sigmoid(x: Any) -> Any:
    if not _takes(x):
        return _sigmoid(x)
    return _run(SIGMOID, dense_like(x))


def sigmoid_(x: Any) -> Any:
    if not _takes(x) or not laid_out(x):
        return SIGMOID_.forward(x)
    return _run(SIGMOID, x, out=x)


def _backward_from_output(function: int, g: Any, y: Any) -> Any:
    out = empty_strided(xp_of(y), y.shape, y.dtype, meta.element_strides(y))
    compute = compute_type(y.dtype)
    step = tl.float16 if function == SIGMOID_BACKWARD and y.dtype == np.float16 else compute
    launch(_from_output, (math.ceil(y.size / _BLOCK),), g, y, out, y.size, function, compute,
           step, _BLOCK)
    return out


def sigmoid_backward(g: Any, y: Any) -> Any:
    if not _takes_pair(g, y):
        return _sigmoid_backward(g, y)
    return _backward_from_output(SIGMOID_BACKWARD, g, y)


def tanh_backward(g: Any, y: Any) -> Any:
    if not _takes_pair(g, y):
        return _tanh_backward(g, y)
    return _backward_from_output(TANH_BACKWARD, g, y)
