"""The row kernels (softmax, log_softmax, layer and RMS norms, forward and backward) against
their ops' reference forwards and torch: rows of 1, 3, 1000 and 4097 elements (one block,
and the blocked loop past 4096), a middle dim, transposed and strided inputs, empty and
0-d inputs, every dtype."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from triton_oracle import DTYPES, LAYOUTS, check_kernel, make

from ember.core.dispatch import REGISTRY

aten = torch.ops.aten
ROWS = [1, 3, 1000, 4097]
SOFTMAX = {"softmax": lambda x, dim: aten._softmax(x, dim, False),
           "log_softmax": lambda x, dim: aten._log_softmax(x, dim, False)}
BACKWARD = {"softmax": "_softmax_backward_data", "log_softmax": "_log_softmax_backward_data"}


def _softmax_both(xp, name, x, dim, dtype):
    """The forward, then the backward at its output."""
    check_kernel(name, [x], {"dim": dim}, dtype, lambda t: SOFTMAX[name](t, dim))
    y = REGISTRY[name].forward(x, dim=dim)
    g = make(xp, x.shape, dtype, seed=1)
    check_kernel(BACKWARD[name], [g, y], {"dim": dim}, dtype,
                 lambda gt, yt: getattr(aten, BACKWARD[name])(gt, yt, dim, yt.dtype))


@pytest.mark.parametrize("name", list(SOFTMAX))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", ROWS)
def test_softmax_rows(xp, name, dtype, n):
    _softmax_both(xp, name, make(xp, (2, n), dtype), 1, dtype)


@pytest.mark.parametrize("name", list(SOFTMAX))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dim", [((2, 5, 3), 1), ((4, 3), 0), ((2, 1000, 2), 1)])
def test_softmax_inner_dims(xp, name, dtype, shape, dim):
    _softmax_both(xp, name, make(xp, shape, dtype), dim, dtype)


@pytest.mark.parametrize("name", list(SOFTMAX))
@pytest.mark.parametrize("layout", LAYOUTS[1:])
def test_softmax_non_contiguous(xp, name, layout):
    _softmax_both(xp, name, make(xp, (3, 1000), "float32", layout=layout), 1, "float32")


@pytest.mark.parametrize("name", list(SOFTMAX))
@pytest.mark.parametrize("shape,dim", [((0, 5), 1), ((3, 0), 1), ((), 0)])
def test_softmax_empty_and_0d(xp, name, shape, dim):
    _softmax_both(xp, name, make(xp, shape, "float32"), dim, "float32")


@pytest.mark.parametrize("name", list(SOFTMAX))
def test_softmax_infinities(xp, name):
    """-inf before a row's only finite value in a later block (the blocked loop must not
    turn its running sum into NaN), a row of -inf (NaN), a row with +inf (NaN)."""
    x = np.full((4, 4097), -np.inf, np.float32)
    x[0, -1] = 1.0
    x[2, :10] = 0.5
    x[3, 7] = np.inf
    x[3, 8:] = 0.0
    _softmax_both(xp, name, xp.asarray(x), 1, "float32")
    _softmax_both(xp, name, xp.asarray(x[:, -9:]), 1, "float32")


def _layer_norm_oracle(ns, eps):
    return lambda x, w, b: torch.native_layer_norm(x, ns, w, b, eps)


def _norm_cases(xp, shape, ns, dtype, weight_dtype, layout="contiguous"):
    x = make(xp, shape, dtype, layout=layout, low=-2.0, high=4.0)
    w = None if weight_dtype is None else make(xp, ns, weight_dtype, seed=2)
    b = None if weight_dtype is None else make(xp, ns, weight_dtype, seed=3)
    g = make(xp, shape, dtype, seed=4)
    return x, w, b, g


def _eps(ns):
    """1e-5, but 1 for rows of one element: their rstd is then 1 where eps**-0.5 would make
    it 316, and torch's float32 backward, which forms x - mean as x * rstd - mean * rstd,
    would carry 316 times the rounding of x into an x-hat that is exactly 0."""
    return 1.0 if math.prod(ns) == 1 else 1e-5


def _layer_norm_both(xp, shape, ns, dtype, weight_dtype, layout="contiguous"):
    x, w, b, g = _norm_cases(xp, shape, ns, dtype, weight_dtype, layout)
    params = {"normalized_shape": ns, "eps": _eps(ns)}
    check_kernel("native_layer_norm", [x, w, b], params, dtype, _layer_norm_oracle(ns, _eps(ns)))
    _, mean, rstd = REGISTRY["native_layer_norm"].forward(x, w, b, **params)
    for mask in [(True, True, True), (True, False, False), (False, True, True)]:
        check_kernel("native_layer_norm_backward", [g, x, mean, rstd, w],
                     {"normalized_shape": ns, "output_mask": mask}, dtype,
                     lambda gt, xt, mt, rt, wt, mask=mask: _layer_norm_grads(
                         gt, xt, ns, mt, rt, wt, mask))


def _layer_norm_grads(g, x, ns, mean, rstd, w, mask):
    """torch's native_layer_norm_backward, which takes a weight and a bias to give their
    gradients (ones and zeros of the input's dtype where there are none)."""
    ones = torch.ones(ns, dtype=x.dtype)
    return aten.native_layer_norm_backward(g, x, ns, mean, rstd, ones if w is None else w,
                                           0 * ones, list(mask))


def _rms_norm_both(xp, shape, ns, dtype, weight_dtype, layout="contiguous"):
    x, w, _, g = _norm_cases(xp, shape, ns, dtype, weight_dtype, layout)
    params = {"normalized_shape": ns, "eps": _eps(ns)}
    check_kernel("_fused_rms_norm", [x, w], params, dtype,
                 lambda xt, wt: aten._fused_rms_norm(xt, ns, wt, _eps(ns)))
    _, rstd = REGISTRY["_fused_rms_norm"].forward(x, w, **params)
    for mask in [(True, w is not None), (False, w is not None)]:
        check_kernel("_fused_rms_norm_backward", [g, x, rstd, w],
                     {"normalized_shape": ns, "output_mask": mask}, dtype,
                     lambda gt, xt, rt, wt, mask=mask: _rms_norm_grads(gt, xt, wt, ns, mask))


def _rms_norm_grads(g, x, w, ns, mask):
    """torch's gradients of rms_norm through its autograd (its CPU build has no
    ``_fused_rms_norm_backward``)."""
    x = x.requires_grad_()
    if w is not None:
        w = w.requires_grad_()
    torch.rms_norm(x, ns, w, _eps(ns)).backward(g)
    return x.grad if mask[0] else None, w.grad if mask[1] else None


NORMS = {"layer_norm": _layer_norm_both, "rms_norm": _rms_norm_both}


@pytest.mark.parametrize("norm", list(NORMS))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", ROWS)
def test_norm_rows(xp, norm, dtype, n):
    NORMS[norm](xp, (3, n), (n,), dtype, dtype)


@pytest.mark.parametrize("norm", list(NORMS))
@pytest.mark.parametrize("dtype,weight_dtype", [("float32", None), ("float16", None),
                                                ("float16", "float32")])
def test_norm_parameters(xp, norm, dtype, weight_dtype):
    if norm == "rms_norm" and weight_dtype not in (None, dtype):
        weight_dtype = None  # rms_norm takes a weight of another dtype as a composite
    NORMS[norm](xp, (2, 3, 40), (3, 40), dtype, weight_dtype)


@pytest.mark.parametrize("norm", list(NORMS))
@pytest.mark.parametrize("layout", LAYOUTS[1:])
def test_norm_non_contiguous(xp, norm, layout):
    NORMS[norm](xp, (4, 1000), (1000,), "float32", "float32", layout)


@pytest.mark.parametrize("norm", list(NORMS))
@pytest.mark.parametrize("shape,ns", [((0, 5), (5,)), ((2, 0), (0,))])
def test_norm_empty(xp, norm, shape, ns):
    NORMS[norm](xp, shape, ns, "float32", "float32")


def test_norm_many_rows_in_groups(xp):
    """More rows than the column sums' groups: each group sums several, unevenly (in
    float64, where sums of 601 terms in another order still agree to the tolerance)."""
    _layer_norm_both(xp, (601, 70), (70,), "float64", "float64")


def test_layer_norm_row_with_inf(xp):
    """torch's mean of a row holding an inf is NaN, and so is the row's output."""
    x = make(xp, (3, 5000), "float32")
    x[1, 4500] = np.inf
    check_kernel("native_layer_norm", [x, None, None],
                 {"normalized_shape": (5000,), "eps": 1e-5}, "float32",
                 _layer_norm_oracle((5000,), 1e-5))
