"""Layer and RMS normalization against torch: forward and the backward primitives, in
every floating dtype, over rows of odd sizes, transposed and empty inputs, with and
without parameters; their errors; the native loops against the numpy reference."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_oracle import check, check_same_error

import ember.core as ember
from ember.core import native
from ember.core.ops import normalization as norm

FLOATS = ["float32", "float64", "float16", "bfloat16"]
ROWS = [1, 3, 256, 1000, 4097]


def _arrays(shape, ns, dtype, seed=0):
    rng = np.random.default_rng(seed)
    as_dtype = "float32" if dtype == "bfloat16" else dtype
    return [rng.normal(1, 2, s).astype(as_dtype) for s in (shape, ns, ns, shape)]


def _both(a, dtype):
    e, t = ember.from_numpy(a.copy()), torch.from_numpy(a.copy())
    if dtype == "bfloat16":
        return e.to(ember.bfloat16), t.to(torch.bfloat16)
    return e, t


def _pairs(shape, ns, dtype, seed=0):
    return [_both(a, dtype) for a in _arrays(shape, ns, dtype, seed)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", ROWS)
def test_layer_norm_rows_match_torch(dtype, n):
    (xe, xt), (we, wt), (be, bt), _ = _pairs((5, n), (n,), dtype)
    check(ember.native_layer_norm(xe, (n,), we, be, 1e-5),
          torch.native_layer_norm(xt, (n,), wt, bt, 1e-5))
    check(ember.layer_norm(xe, [n]), torch.layer_norm(xt, [n]))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", ROWS)
def test_rms_norm_rows_match_torch(dtype, n):
    (xe, xt), (we, wt), _, _ = _pairs((5, n), (n,), dtype)
    check(ember.rms_norm(xe, (n,), we), torch.rms_norm(xt, (n,), wt))
    check(ember.rms_norm(xe, (n,), eps=0.5), torch.rms_norm(xt, (n,), eps=0.5))


@pytest.mark.parametrize("layout", ["transposed", "two dims", "no rows", "empty rows",
                                    "one dim", "half with float params"])
def test_norms_of_other_layouts_match_torch(layout):
    shape, ns = {"two dims": ((2, 3, 5), (3, 5)), "no rows": ((0, 4), (4,)),
                 "empty rows": ((3, 0), (0,)), "one dim": ((6,), (6,))}.get(
        layout, ((4, 6), (6,)))
    dtype = "float16" if layout.startswith("half") else "float32"
    (xe, xt), (we, wt), (be, bt), _ = _pairs(shape, ns, dtype)
    if layout == "transposed":
        (xe, xt), _, _, _ = _pairs(ns + shape[:1], ns, dtype)
        xe, xt = xe.t(), xt.t()
    if layout.startswith("half"):
        we, wt, be, bt = we.float(), wt.float(), be.float(), bt.float()
    check(ember.native_layer_norm(xe, ns, we, be, 1e-5),
          torch.native_layer_norm(xt, ns, wt, bt, 1e-5))
    check(ember.native_layer_norm(xe, ns, None, be, 1e-5),
          torch.native_layer_norm(xt, ns, None, bt, 1e-5))
    if not layout.startswith("half"):
        check(ember.rms_norm(xe, ns, we), torch.rms_norm(xt, ns, wt))


def test_rms_norm_with_a_weight_of_another_dtype_or_complex_input_matches_torch():
    (xe, xt), (we, wt), _, _ = _pairs((4, 6), (6,), "float32")
    check(ember.rms_norm(xe, (6,), we.double()), torch.rms_norm(xt, (6,), wt.double()))
    check(ember.rms_norm(xe.half(), (6,), we), torch.rms_norm(xt.half(), (6,), wt))
    ze, zt = xe.to(ember.complex64) * (1 + 1j), xt.to(torch.complex64) * (1 + 1j)
    check(ember.rms_norm(ze, (6,)), torch.rms_norm(zt, (6,)))
    # the default eps is that of the dtype computed in: float64's for complex128
    check(ember.rms_norm(ze.to(ember.complex128), (6,)), torch.rms_norm(zt.to(torch.complex128), (6,)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mask", [(True, True, True), (True, False, False),
                                  (False, True, True)])
@pytest.mark.parametrize("n", [1, 3, 1000])
def test_layer_norm_backward_matches_torch(dtype, mask, n):
    (xe, xt), (we, wt), (be, bt), (ge, gt) = _pairs((7, n), (n,), dtype)
    _, me, re = ember.native_layer_norm(xe, (n,), we, be, 1e-5)
    _, mt, rt = torch.native_layer_norm(xt, (n,), wt, bt, 1e-5)
    ours = norm.NATIVE_LAYER_NORM_BACKWARD(ge, xe, me, re, we, normalized_shape=(n,),
                                           output_mask=mask)
    theirs = torch.ops.aten.native_layer_norm_backward(gt, xt, (n,), mt, rt, wt, bt,
                                                       list(mask))
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert (a is None) == (b is None)
        if b is None:
            continue
        if i < 2 and n == 1:
            # rows of one element: the true gradients of input and weight are 0, and both
            # frameworks give rounding noise of a few ulps of g, scaled by 1 / sqrt(eps)
            ulp = float(torch.finfo(getattr(torch, dtype)).eps)
            bound = 8 * ulp * 1e5 ** 0.5 * np.abs(np.array(ge.float())).max()
            assert np.abs(np.array(a.float())).max() <= bound
            assert np.abs(b.float().numpy()).max() <= bound
        elif i and dtype in ("float16", "bfloat16"):
            # sums over rows rounded to a half type: as close to the exact sum (from the
            # statistics given) as torch's, within one ulp of the largest of them
            xhat = (xt.double() - mt.double()) * rt.double()
            exact = ((gt.double() * xhat) if i == 1 else gt.double()).sum(0).numpy()
            ulp = float(torch.finfo(getattr(torch, dtype)).eps) * np.abs(exact).max()
            ours_off = np.abs(np.array(a.double()) - exact)
            assert (ours_off <= np.abs(b.double().numpy() - exact) + ulp).all()
        else:
            check(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 3, 1000, 4097])
def test_rms_norm_backward_matches_torchs_gradients(dtype, n):
    (xe, xt), (we, wt), _, (ge, gt) = _pairs((7, n), (n,), dtype)
    xt.requires_grad_()
    wt.requires_grad_()
    expected = torch.autograd.grad(torch.rms_norm(xt, (n,), wt, 1e-5), (xt, wt), gt)
    rstd = norm.FUSED_RMS_NORM(xe, we, normalized_shape=(n,), eps=1e-5)[1]
    check(norm.FUSED_RMS_NORM_BACKWARD(ge, xe, rstd, we, normalized_shape=(n,),
                                       output_mask=(True, True)), expected)


def test_an_expanded_gradient_is_read_as_it_is():
    (xe, xt), (we, wt), (be, bt), _ = _pairs((5, 8), (8,), "float32")
    _, me, re = ember.native_layer_norm(xe, (8,), we, be, 1e-5)
    _, mt, rt = torch.native_layer_norm(xt, (8,), wt, bt, 1e-5)
    ge, gt = ember.ones(1, 8).expand(5, 8), torch.ones(1, 8).expand(5, 8)
    check(norm.NATIVE_LAYER_NORM_BACKWARD(ge, xe, me, re, we, normalized_shape=(8,),
                                          output_mask=(True, True, True)),
          torch.ops.aten.native_layer_norm_backward(gt, xt, (8,), mt, rt, wt, bt,
                                                    [True, True, True]))


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("shape,order,ns", [((1, 4, 4, 2), (0, 3, 1, 2), (4,)),
                                            ((2, 4), (1, 0), (4, 2)), ((2, 3, 4), (2, 0, 1),
                                                                       (3,))])
def test_rms_norm_of_a_permuted_input_is_laid_out_as_torchs(dtype, shape, order, ns):
    """torch's kernel lays its result out in the input's suggested memory format:
    channels-last for a 4-d input that suggests it, else row-major (its layer norm's
    result is row-major always)."""
    x = np.random.default_rng(2).normal(size=shape).astype(np.float32)
    xe = ember.from_numpy(x).to(getattr(ember, dtype)).permute(*order)
    xt = torch.from_numpy(x).to(getattr(torch, dtype)).permute(*order)
    ye, yt = ember.rms_norm(xe, ns), torch.rms_norm(xt, ns)
    check(ye, yt)
    assert ye.stride() == yt.stride()


def test_non_finite_rows_match_torch():
    x = np.ones((4, 5), np.float32)
    x[0, 1], x[1, 2], x[2, :] = np.nan, np.inf, -np.inf
    check(ember.native_layer_norm(ember.from_numpy(x), (5,), None, None, 1e-5),
          torch.native_layer_norm(torch.from_numpy(x), (5,), None, None, 1e-5))
    check(ember.rms_norm(ember.from_numpy(x), (5,)), torch.rms_norm(torch.from_numpy(x), (5,)))


@pytest.mark.parametrize("case,phrase", [
    (lambda m: m.layer_norm(m.ones(3, 4), (5,)), "Given normalized_shape=[5]"),
    (lambda m: m.layer_norm(m.ones(3, 4), (3, 4, 1)), "expected input with shape"),
    (lambda m: m.layer_norm(m.ones(3, 4), ()), "at least 1-dimensional"),
    (lambda m: m.layer_norm(m.ones(3, 4), 4), "must be tuple of ints"),
    (lambda m: m.layer_norm(m.ones(3, 4), (4,), m.ones(3)), "Expected weight to be of same"),
    (lambda m: m.layer_norm(m.ones(3, 4), (4,), None, m.ones(2, 2)), "Expected bias"),
    (lambda m: m.layer_norm(m.ones(3, 4).long(), (4,)), "LayerNormKernelImpl"),
    (lambda m: m.layer_norm(m.ones(3, 4).to(m.complex64), (4,)), "LayerNormKernelImpl"),
    (lambda m: m.layer_norm(m.ones(3, 4).double(), (4,), m.ones(4)), "share same datatype"),
    (lambda m: m.layer_norm(m.ones(3, 4), (4,), m.ones(4).double()), "scalar type of Float"),
    (lambda m: m.layer_norm(m.ones(3, 4).half(), (4,), m.ones(4), m.ones(4).half()),
     "scalar type of Float"),
    (lambda m: m.layer_norm(m.ones(3, 4).half(), (4,), m.ones(4).half(), m.ones(4)),
     "expected scalar type Half but found Float"),
    (lambda m: m.layer_norm(m.ones(3, 4), (4,), m.ones(4).long()), "scalar type of Float"),
    (lambda m: m.layer_norm([1.0], (1,)), "must be Tensor"),
    (lambda m: m.rms_norm(m.ones(3, 4), (3,)), "expected input with shape [*3]"),
    (lambda m: m.rms_norm(m.ones(3, 4), (1, 4)), "expected input with shape [*1, 4]"),
    (lambda m: m.rms_norm(m.tensor(1.0), (1,)), "at least 1 dimensions, but got 0"),
    (lambda m: m.rms_norm(m.ones(4).long(), (2, 4)), "at least 2 dimensions, but got 1"),
    (lambda m: m.rms_norm(m.ones(3, 4), (4,), m.ones(2)), "Expected weight to be of same"),
    (lambda m: m.rms_norm(m.ones(3, 4).long(), (4,)), "not implemented for 'Long'"),
])
def test_norm_errors_match_torch(case, phrase):
    check_same_error(case, phrase)


@pytest.mark.skipif(native._compiler() is None, reason="no C compiler")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_native_norms_agree_with_their_reference_and_with_any_thread_count(dtype):
    x, w, b, g = _arrays((1100, 257), (257,), dtype)  # past the size the loops thread from
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-12,
                                                                      "atol": 1e-12}
    ns = {"normalized_shape": (257,)}
    runs = [
        (norm.NATIVE_LAYER_NORM, (x, w, b), {**ns, "eps": 1e-5}),
        (norm.FUSED_RMS_NORM, (x, w), {**ns, "eps": 1e-5}),
    ]
    _, mean, rstd = norm.NATIVE_LAYER_NORM.forward(x, w, b, **ns, eps=1e-5)
    rms_rstd = norm.FUSED_RMS_NORM.forward(x, w, **ns, eps=1e-5)[1]
    runs += [
        (norm.NATIVE_LAYER_NORM_BACKWARD, (g, x, mean, rstd, w),
         {**ns, "output_mask": (True, True, True)}),
        (norm.FUSED_RMS_NORM_BACKWARD, (g, x, rms_rstd, w), {**ns, "output_mask": (True, True)}),
    ]
    before = ember.get_num_threads()
    for op, args, params in runs:
        assert op.table["cpu"] is not op.forward
        fast = op.table["cpu"](*args, **params)
        for a, r in zip(fast, op.forward(*args, **params)):
            np.testing.assert_allclose(a, r, **tol)
        try:
            ember.set_num_threads(1)
            one = op.table["cpu"](*args, **params)
        finally:
            ember.set_num_threads(before)
        for a, r in zip(fast, one):  # the same rows in any order; sums over rows may round
            np.testing.assert_allclose(a, r, **tol)
