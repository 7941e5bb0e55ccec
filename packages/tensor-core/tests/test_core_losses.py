"""nll_loss and cross_entropy against torch: each reduction, weights, ignored targets
(all of them too), 1-d, 2-d and spatial inputs, label smoothing, class probabilities,
every floating dtype, strided operands; the backward primitives; torch's errors and
deprecated arguments; the native loops against the numpy reference."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch_oracle import check, check_same_error, to_torch

import ember.core as ember
from ember.core import native
from ember.core.ops import losses

FLOATS = ["float32", "float64", "float16", "bfloat16"]
REDUCTIONS = ["mean", "sum", "none"]
C = 7


def _functional(m):
    return F if m is torch else losses


F_ = _functional


def _both(a, dtype=None):
    e, t = ember.from_numpy(a.copy()), torch.from_numpy(a.copy())
    if dtype is not None:
        e, t = e.to(getattr(ember, dtype)), t.to(getattr(torch, dtype))
    return e, t


def _inputs(shape, dtype, seed=0, ignored=0.25, classes=C):
    """Logits, class targets (about ``ignored`` of them -100) and class weights."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 2).astype(np.float32)
    t_shape = () if len(shape) == 1 else (shape[0], *shape[2:])
    t = rng.integers(0, classes, t_shape)
    t = np.where(rng.random(t_shape) < ignored, -100, t)
    w = rng.uniform(0.1, 2.0, classes).astype(np.float32)
    return _both(x, dtype), _both(np.asarray(t)), _both(w, dtype)


SHAPES = [(C,), (1, C), (5, C), (4, C, 3), (2, C, 3, 2), (2, C, 2, 1, 3), (0, C), (0, C, 2, 2)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_nll_loss_matches_torch_bit_for_bit(shape, reduction, dtype):
    """The same picks, products and sums in the same order: torch's values exactly."""
    (xe, xt), (te, tt), (we, wt) = _inputs(shape, dtype)
    for weight in (False, True):
        ours = losses.nll_loss(xe, te, we if weight else None, reduction=reduction)
        theirs = F.nll_loss(xt, tt, wt if weight else None, reduction=reduction)
        check(ours, theirs, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [17, 300, 4097, 70000])
@pytest.mark.parametrize("pattern", ["none", "random", "at multiples of 16", "most"])
def test_long_reductions_sum_in_torchs_order(n, pattern, dtype):
    """torch sums in a cascade of partial sums whose levels close at multiples of 16**k,
    skipped where that target is ignored: a half-type mean rounds as torch's does."""
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((n, 3)) * 3).astype(np.float32)
    t = rng.integers(0, 3, n)
    ignored = {"none": np.zeros(n, bool), "random": rng.random(n) < 0.3,
               "at multiples of 16": np.arange(n) % 16 == 0, "most": rng.random(n) < 0.97}
    t[ignored[pattern]] = -100
    (xe, xt), (te, tt), (we, wt) = _both(x, dtype), _both(t), _both(
        rng.uniform(0.1, 3.0, 3).astype(np.float32), dtype)
    for reduction in ("mean", "sum"):
        check(losses.nll_loss(xe, te, reduction=reduction),
              F.nll_loss(xt, tt, reduction=reduction), rtol=0, atol=0)
        check(losses.nll_loss(xe, te, we, reduction=reduction),
              F.nll_loss(xt, tt, wt, reduction=reduction), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cross_entropy_matches_torch(shape, reduction, dtype):
    (xe, xt), (te, tt), (we, wt) = _inputs(shape, dtype)
    for weight in (False, True):
        check(losses.cross_entropy(xe, te, we if weight else None, reduction=reduction),
              F.cross_entropy(xt, tt, wt if weight else None, reduction=reduction))


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(C,), (5, C), (4, C, 3), (2, C, 3, 2), (0, C)], ids=str)
@pytest.mark.parametrize("smoothing", [0.1, 1.0])
def test_label_smoothing_matches_torch(shape, reduction, dtype, smoothing):
    (xe, xt), (te, tt), (we, wt) = _inputs(shape, dtype)
    for weight in (False, True):
        for ignore_index in (-100, 2):
            te_, tt_ = te.masked_fill(te == -100, ignore_index), tt.masked_fill(tt == -100,
                                                                                ignore_index)
            check(losses.cross_entropy(xe, te_, we if weight else None, reduction=reduction,
                                       ignore_index=ignore_index, label_smoothing=smoothing),
                  F.cross_entropy(xt, tt_, wt if weight else None, reduction=reduction,
                                  ignore_index=ignore_index, label_smoothing=smoothing))


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(C,), (5, C), (2, C, 3, 2), (0, C)], ids=str)
def test_probability_targets_match_torch(shape, reduction, dtype):
    (xe, xt), _, (we, wt) = _inputs(shape, dtype)
    e = np.exp(np.random.default_rng(1).standard_normal(shape))
    pe, pt = _both((e / e.sum(0 if len(shape) == 1 else 1, keepdims=True)).astype(np.float32),
                   dtype)
    for weight in (False, True):
        for smoothing in (0.0, 0.3):
            check(losses.cross_entropy(xe, pe, we if weight else None, reduction=reduction,
                                       label_smoothing=smoothing),
                  F.cross_entropy(xt, pt, wt if weight else None, reduction=reduction,
                                  label_smoothing=smoothing))


def test_probability_targets_of_another_dtype_promote_as_torch():
    (xe, xt), _, _ = _inputs((4, C), "float32")
    pe, pt = _both(np.full((4, C), 1 / C))
    check(losses.cross_entropy(xe, pe.double()), F.cross_entropy(xt, pt.double()))
    # a float16 input's log probabilities times float32 ones: float32, from Ember's own
    # log_softmax (torch's float16 one rounds its exps, their sum and its log to float16)
    lp = to_torch(ember.log_softmax(xe.half(), 1))
    check(losses.cross_entropy(xe.half(), pe), -(lp * pt).sum() / 4)


@pytest.mark.parametrize("fn", [
    lambda m, x, t, w: _functional(m).nll_loss(x, t),
    lambda m, x, t, w: _functional(m).nll_loss(x, t, w),
    lambda m, x, t, w: _functional(m).cross_entropy(x, t, w, label_smoothing=0.4),
    lambda m, x, t, w: _functional(m).cross_entropy(x[:2, :, 0, 0], t[:2, 0, 0], w),
])
def test_all_targets_ignored_give_nan_means_as_torch(fn):
    (xe, xt), _, (we, wt) = _inputs((3, C, 2, 2), "float32")
    te, tt = _both(np.full((3, 2, 2), -100))
    check(fn(ember, xe, te, we), fn(torch, xt, tt, wt))
    assert np.isnan(float(fn(ember, xe, te, we)))


def test_strided_operands_match_torch():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((C, 6)).astype(np.float32)  # logits transposed: (6, C) strided
    t = rng.integers(0, C, 12)
    w = rng.uniform(0.1, 2, 2 * C).astype(np.float32)
    (xe, xt), (te, tt), (we, wt) = _both(x), _both(t), _both(w)
    xe, xt, te, tt, we, wt = xe.t(), xt.t(), te[::2], tt[::2], we[::2], wt[::2]
    for reduction in REDUCTIONS:
        check(losses.nll_loss(xe, te, we, reduction=reduction),
              F.nll_loss(xt, tt, wt, reduction=reduction), rtol=0, atol=0)
        check(losses.cross_entropy(xe, te, we, reduction=reduction, label_smoothing=0.2),
              F.cross_entropy(xt, tt, wt, reduction=reduction, label_smoothing=0.2))
    (xe, xt), (te, tt), _ = _inputs((2, C, 3, 4), "float32")
    xe, xt = xe.permute(0, 1, 3, 2), xt.permute(0, 1, 3, 2)
    te, tt = te.transpose(1, 2), tt.transpose(1, 2)
    check(losses.cross_entropy(xe, te, reduction="none"),
          F.cross_entropy(xt, tt, reduction="none"))


def test_byte_targets_are_class_indices_for_1d_and_2d_inputs():
    (xe, xt), (te, tt), _ = _inputs((5, C), "float32", ignored=0)
    check(losses.nll_loss(xe, te.byte(), reduction="none"),
          F.nll_loss(xt, tt.byte(), reduction="none"))
    check(losses.nll_loss(xe, te.byte(), ignore_index=int(te[0])),
          F.nll_loss(xt, tt.byte(), ignore_index=int(tt[0])))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("shape", [(C,), (5, C), (2, C, 3, 2)], ids=str)
def test_backward_primitives_match_torch_bit_for_bit(shape, reduction, dtype):
    (xe, xt), (te, tt), (we, wt) = _inputs(shape, dtype)
    spatial = len(shape) == 4
    forward = losses.NLL_LOSS2D_FORWARD if spatial else losses.NLL_LOSS_FORWARD
    backward = losses.NLL_LOSS2D_BACKWARD if spatial else losses.NLL_LOSS_BACKWARD
    aten = torch.ops.aten
    t_forward = aten.nll_loss2d_forward if spatial else aten.nll_loss_forward
    t_backward = aten.nll_loss2d_backward if spatial else aten.nll_loss_backward
    for weight in (False, True):
        w_e, w_t = (we, wt) if weight else (None, None)
        out, total = forward(xe, te, w_e, reduction=reduction, ignore_index=-100)
        t_out, t_total = t_forward(xt, tt, w_t, reduction, -100)
        check((out, total), (t_out, t_total), rtol=0, atol=0)
        ge, gt = _both(np.random.default_rng(5).standard_normal(tuple(out.shape))
                       .astype(np.float32), dtype)
        check(backward(ge, xe, te, w_e, total, reduction=reduction, ignore_index=-100),
              t_backward(gt, xt, tt, w_t, reduction, -100, t_total), rtol=0, atol=0)


def test_an_expanded_gradient_is_read_as_it_is():
    (xe, xt), (te, tt), _ = _inputs((6, C), "float32")
    ge, gt = ember.ones(1).expand(6), torch.ones(1).expand(6)
    total = losses.NLL_LOSS_FORWARD(xe, te, None, reduction=0, ignore_index=-100)[1]
    check(losses.NLL_LOSS_BACKWARD(ge, xe, te, None, total, reduction=0, ignore_index=-100),
          torch.ops.aten.nll_loss_backward(gt, xt, tt, None, 0, -100, torch.tensor(0.0)))


@pytest.mark.parametrize("case,phrase", [
    (lambda m: F_(m).nll_loss(m.ones(4, 5), m.tensor([1, 5, 4, 2])), "Target 5 is out of bounds."),
    (lambda m: F_(m).nll_loss(m.ones(4, 5), m.tensor([1, -1, 4, 2])), "Target -1 is out of"),
    (lambda m: F_(m).nll_loss(m.ones(4, 5), m.tensor([1, 7, 4, 2]), reduction="none"),
     "Target 7 is out of bounds."),
    (lambda m: F_(m).nll_loss(m.ones(2, 5, 3, 2), m.full((2, 3, 2), 9)), "Target 9 is out"),
    (lambda m: F_(m).nll_loss(m.ones(2, 5, 3), m.full((2, 3), 9), reduction="sum"),
     "Target 9 is out"),
    (lambda m: F_(m).nll_loss(m.ones(3, 0), m.zeros(3, dtype=m.long)), "Target 0 is out"),
    (lambda m: F_(m).cross_entropy(m.ones(4, 5), m.tensor([0, 7, 2, 3]), label_smoothing=0.1),
     "Target 7 is out of bounds."),
    (lambda m: F_(m).nll_loss(m.ones(4, 5), m.tensor([1, 0, 4, 2]).int()),
     "expected target dtype to be Long or Byte, but got Int"),
    (lambda m: F_(m).nll_loss(m.ones(4, 5), m.ones(4)), "but got Float"),
    (lambda m: F_(m).nll_loss(m.ones(2, 5, 3, 2), m.zeros(2, 3, 2, dtype=m.int32)),
     "expected target dtype to be Long or Byte, but got Int"),
    (lambda m: F_(m).nll_loss(m.ones(2, 5, 3, 2), m.zeros(2, 3, 2, dtype=m.uint8)),
     "expected scalar type Long but found Byte"),
    (lambda m: F_(m).cross_entropy(m.ones(4, 5), m.tensor([0, 1, 2, 3]).short()),
     "but got Short"),
    (lambda m: F_(m).cross_entropy(m.ones(4, 5), m.ones(4, 5).long()),
     "Expected floating point type for target with class probabilities, got Long"),
    (lambda m: F_(m).cross_entropy(m.ones(4, 5), m.ones(4, 5), ignore_index=1),
     "ignore_index is not supported for floating point target"),
    (lambda m: F_(m).cross_entropy(m.ones(4, 5), m.tensor([0, 1, 2, 3]), label_smoothing=1.5),
     "label_smoothing must be between 0.0 and 1.0. Got: 1.5"),
    (lambda m: F_(m).cross_entropy(m.ones(4, 5), m.ones(4, 5), label_smoothing=1.5),
     "label_smoothing must be between 0.0 and 1.0. Got: 1.5"),
    (lambda m: F_(m).nll_loss(m.tensor(1.0), m.tensor(0)), "Expected 1 or more dimensions (got 0)"),
    (lambda m: F_(m).cross_entropy(m.tensor(1.0), m.tensor(0.0)), "Dimension specified as 1"),
    (lambda m: F_(m).nll_loss(m.ones(4, 5), m.tensor([1, 2, 3])),
     "Expected input batch_size (4) to match target batch_size (3)."),
    (lambda m: F_(m).cross_entropy(m.ones(1, 5), m.tensor(0)),
     "Expected input batch_size (1) to match target batch_size (0)."),
    (lambda m: F_(m).nll_loss(m.ones(4, 5), m.zeros(4, 2, dtype=m.long)),
     "0D or 1D target tensor expected, multi-target not supported"),
    (lambda m: F_(m).nll_loss(m.ones(5), m.tensor([1, 1, 1, 1, 1])),
     "For 1D input, 1D target must have size 1, but got target size: 5"),
    (lambda m: F_(m).nll_loss(m.ones(4, 5), m.tensor([1, 0, 4, 2]), m.ones(4)),
     "weight tensor should be defined either for all 5 classes or no classes but got weight "
     "tensor of shape: [4]"),
    (lambda m: F_(m).nll_loss(m.ones(4, 5), m.tensor([1, 0, 4, 2]), m.ones(5, 1)),
     "but got weight tensor of shape: [5, 1]"),
    (lambda m: F_(m).nll_loss(m.ones(2, 5, 3, 2), m.zeros(2, 3, 2, dtype=m.long), m.ones(3)),
     "weight tensor should be defined either for all or no classes"),
    (lambda m: F_(m).nll_loss(m.ones(2, 5, 3), m.zeros(2, 3, dtype=m.long), m.ones(3)),
     "weight tensor should be defined either for all or no classes"),
    (lambda m: F_(m).cross_entropy(m.ones(4, 5), m.ones(4, 5), m.ones(4)),
     "cross_entropy: weight tensor should be defined either for all 5 classes"),
    (lambda m: F_(m).nll_loss(m.ones(4, 5), m.tensor([1, 0, 4, 2]), m.ones(5).double()),
     "expected scalar type Float but found Double"),
    (lambda m: F_(m).nll_loss(m.ones(4, 5).half(), m.tensor([1, 0, 4, 2]), m.ones(5)),
     "expected scalar type Half but found Float"),
    (lambda m: F_(m).cross_entropy(m.ones(4, 5), m.tensor([1, 0, 4, 2]), m.ones(5).double(),
                                   label_smoothing=0.1), "expected scalar type Float"),
    (lambda m: F_(m).nll_loss(m.ones(2, 5, 3, 2), m.zeros(2, 3, 3, dtype=m.long)),
     "size mismatch (got input: [2, 5, 3, 2] , target: [2, 3, 3]"),
    (lambda m: F_(m).nll_loss(m.ones(2, 5, 3, 2), m.zeros(2, 6, dtype=m.long)),
     "only batches of spatial targets supported (3D tensors) but got targets of dimension: 2"),
    (lambda m: F_(m).nll_loss(m.ones(2, 5, 3), m.zeros(2, 4, dtype=m.long)),
     "Expected target size [2, 3], got [2, 4]"),
    (lambda m: F_(m).nll_loss(m.ones(2, 5, 3, 2, 2), m.zeros(2, 3, 2, 1, dtype=m.long)),
     "Expected target size [2, 3, 2, 2], got [2, 3, 2, 1]"),
    (lambda m: F_(m).nll_loss(m.ones(4, 5).long(), m.tensor([1, 0, 4, 2])),
     "\"nll_loss_out_frame\" not implemented for 'Long'"),
    (lambda m: F_(m).nll_loss(m.ones(4, 5, 2).long(), m.ones(4, 2, dtype=m.long)),
     "\"nll_loss2d_forward_out_frame\" not implemented for 'Long'"),
    (lambda m: F_(m).nll_loss(m.ones(4, 5).to(m.complex64), m.tensor([1, 0, 4, 2])),
     "not implemented for 'ComplexFloat'"),
    (lambda m: F_(m).cross_entropy(m.ones(4, 5).long(), m.tensor([1, 0, 4, 2])),
     "not implemented for 'Long'"),
    (lambda m: F_(m).nll_loss(m.ones(4, 5), m.tensor([1, 0, 4, 2]), reduction="foo"),
     "foo is not a valid value for reduction"),
    (lambda m: F_(m).nll_loss([1.0], m.tensor([1])), "argument 'input' (position 1) must be"),
    (lambda m: F_(m).nll_loss(m.ones(4, 5), [1, 2, 3, 4]), "argument 'target' (position 2)"),
    (lambda m: F_(m).nll_loss(m.ones(4, 5), m.tensor([1, 0, 4, 2]), [1.0] * 5),
     "nll_loss_nd(): argument 'weight' (position 3) must be Tensor, not list"),
    (lambda m: F_(m).nll_loss(m.ones(4, 5), m.tensor([1, 0, 4, 2]), ignore_index=1.5),
     "argument 'ignore_index' (position 5) must be int, not float"),
    (lambda m: F_(m).nll_loss(m.ones(4, 5), m.tensor([1, 0, 4, 2]), ignore_index=True),
     "argument 'ignore_index' (position 5) must be int, not bool"),
    (lambda m: F_(m).cross_entropy([1.0], m.tensor([1])),
     "cross_entropy_loss(): argument 'input' (position 1) must be Tensor, not list"),
    (lambda m: F_(m).cross_entropy(m.ones(4, 5), m.tensor([1, 0, 4, 2]), label_smoothing="a"),
     "argument 'label_smoothing' (position 6) must be float, not str"),
])
def test_errors_match_torch(case, phrase):
    check_same_error(case, phrase)



@pytest.mark.parametrize("size_average,reduce", [(None, False), (False, None), (True, True),
                                                 (False, True), (True, False)])
def test_deprecated_size_average_and_reduce_name_the_reduction_as_torch(size_average, reduce):
    (xe, xt), (te, tt), _ = _inputs((5, C), "float32")
    for fn in ("nll_loss", "cross_entropy"):
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            out = getattr(losses, fn)(xe, te, size_average=size_average, reduce=reduce,
                                      reduction="none")
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            expected = getattr(F, fn)(xt, tt, size_average=size_average, reduce=reduce,
                                      reduction="none")
        check(out, expected)
        assert [(w.category, str(w.message)) for w in ours] == [
            (w.category, str(w.message)) for w in theirs]
        assert ours[0].filename == __file__  # the warning points at the caller


def test_elementwise_mean_is_mean_with_torchs_warning():
    (xe, xt), (te, tt), _ = _inputs((5, C), "float32")
    with pytest.warns(UserWarning, match="reduction='elementwise_mean' is deprecated"):
        out = losses.nll_loss(xe, te, reduction="elementwise_mean")
    check(out, F.nll_loss(xt, tt))


def test_one_d_input_with_a_target_of_one_is_one_loss_as_torch():
    (xe, xt), _, _ = _inputs((C,), "float32")
    for reduction in REDUCTIONS:
        check(losses.nll_loss(xe, ember.tensor([3]), reduction=reduction),
              F.nll_loss(xt, torch.tensor([3]), reduction=reduction))


def test_meta_tensors_give_torchs_shapes():
    for m in (ember, torch):
        x = m.empty(4, C, 3, device="meta")
        t = m.empty(4, 3, dtype=m.long, device="meta")
        shapes = [tuple(_functional(m).cross_entropy(x, t, reduction=r).shape)
                  for r in REDUCTIONS]
        assert shapes == [(), (), (4, 3)]


@pytest.mark.skipif(native._compiler() is None, reason="no C compiler")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(C,), (70000, C), (300, C, 2, 300)], ids=str)
def test_native_loops_agree_with_the_reference_at_any_thread_count(shape, dtype):
    """Past the sizes the loops thread from; the same picks and the same order of sums."""
    (xe, _), (te, _), (we, _) = _inputs(shape, dtype)
    x, t, w = xe._data, te._data, we._data
    spatial = len(shape) == 4
    forward = losses.NLL_LOSS2D_FORWARD if spatial else losses.NLL_LOSS_FORWARD
    backward = losses.NLL_LOSS2D_BACKWARD if spatial else losses.NLL_LOSS_BACKWARD
    assert forward.table["cpu"] is not forward.forward
    before = ember.get_num_threads()
    for reduction in (0, 1, 2):
        for weight in (None, w):
            params = {"reduction": reduction, "ignore_index": -100}
            reference = forward.forward(x, t, weight, **params)
            g = np.random.default_rng(1).standard_normal(reference[0].shape).astype(dtype)
            expected = backward.forward(g, x, t, weight, reference[1], **params)
            for threads in (1, 2):
                try:
                    ember.set_num_threads(threads)
                    out = forward.table["cpu"](x, t, weight, **params)
                    dx = backward.table["cpu"](g, x, t, weight, out[1], **params)
                finally:
                    ember.set_num_threads(before)
                for a, r in zip((*out, dx), (*reference, expected)):
                    assert a.dtype == r.dtype and a.shape == r.shape
                    np.testing.assert_array_equal(a, r)


@pytest.mark.skipif(native._compiler() is None, reason="no C compiler")
def test_native_loops_raise_torchs_error_for_the_first_target_out_of_range():
    x = np.zeros((70000, 3), np.float32)
    t = np.zeros(70000, np.int64)
    t[[9, 60000]] = [5, 4]
    for reduction in (0, 1):
        with pytest.raises(IndexError, match="Target 5 is out of bounds."):
            losses.NLL_LOSS_FORWARD.table["cpu"](x, t, None, reduction=reduction,
                                                 ignore_index=-100)
        with pytest.raises(IndexError, match="Target 5 is out of bounds."):
            losses.NLL_LOSS_BACKWARD.table["cpu"](np.ones(70000 if reduction == 0 else (),
                                                          np.float32), x, t, None,
                                                  np.ones((), np.float32),
                                                  reduction=reduction, ignore_index=-100)
