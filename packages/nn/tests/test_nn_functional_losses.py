"""ember.nn.functional's losses against torch.nn.functional: values and the gradients of
every differentiable argument in float32 and float64, for each reduction, on random data
with the kinks placed in it (errors of exactly 0 and exactly beta or delta, probabilities
of exactly 0 and 1, hinges of exactly 0), weights, ignored targets, empty inputs; the
legacy reduction arguments; the result dtypes of mixed and integer inputs; torch's errors
and warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from functional_oracle import DTYPES, EMBER, TORCH, check, same_error
from values_oracle import compare_values

REDUCTIONS = ["none", "mean", "sum"]


def _rng(seed=0):
    return np.random.default_rng(seed)


# ----------------------------------------------------------------------------- data

def _pair_with_kinks(dtype, shape=(4, 6), seed=0):
    """An input and a target whose differences include 0, +-1 (beta and delta) and
    +-0.5, beside random ones."""
    rng = _rng(seed)
    x = rng.uniform(-2, 2, shape)
    d = rng.uniform(-2, 2, shape).reshape(-1)
    d[:6] = [0.0, 1.0, -1.0, 0.5, -0.5, 0.0]
    return x.astype(dtype), (x - d.reshape(shape)).astype(dtype)


def _probabilities(dtype, shape=(4, 6), seed=0):
    rng = _rng(seed)
    x, y = rng.uniform(0.02, 0.98, shape), rng.uniform(0, 1, shape)
    x.reshape(-1)[:4] = [0.0, 1.0, 0.0, 1.0]
    y.reshape(-1)[:4] = [0.0, 1.0, 1.0, 0.0]
    return x.astype(dtype), y.astype(dtype)


def _signs(shape, seed=0):
    return np.where(_rng(seed).random(shape) < 0.5, -1.0, 1.0)


def _randn(shape, dtype, seed=0):
    return _rng(seed).standard_normal(shape).astype(dtype)


# ----------------------------------------------------------------------------- elementwise

ELEMENTWISE = {
    "mse_loss": (lambda m, x, y, r: m.F.mse_loss(x, y, reduction=r), _pair_with_kinks),
    "l1_loss": (lambda m, x, y, r: m.F.l1_loss(x, y, reduction=r), _pair_with_kinks),
    "smooth_l1_loss": (lambda m, x, y, r: m.F.smooth_l1_loss(x, y, reduction=r),
                       _pair_with_kinks),
    "smooth_l1_loss beta": (lambda m, x, y, r: m.F.smooth_l1_loss(x, y, reduction=r,
                                                                  beta=0.5),
                            _pair_with_kinks),
    "smooth_l1_loss beta 0": (lambda m, x, y, r: m.F.smooth_l1_loss(x, y, reduction=r,
                                                                    beta=0.0),
                              _pair_with_kinks),
    "huber_loss": (lambda m, x, y, r: m.F.huber_loss(x, y, reduction=r), _pair_with_kinks),
    "huber_loss delta": (lambda m, x, y, r: m.F.huber_loss(x, y, reduction=r, delta=0.5),
                         _pair_with_kinks),
    "binary_cross_entropy": (lambda m, x, y, r: m.F.binary_cross_entropy(x, y, reduction=r),
                             _probabilities),
    "binary_cross_entropy_with_logits": (
        lambda m, x, y, r: m.F.binary_cross_entropy_with_logits(x * 8 - 4, y, reduction=r),
        _probabilities),
    "soft_margin_loss": (lambda m, x, y, r: m.F.soft_margin_loss(x, y.sign(), reduction=r),
                         _pair_with_kinks),
    "kl_div": (lambda m, x, y, r: m.F.kl_div(x.log_softmax(1), y, reduction=r),
               _probabilities),
    "kl_div log_target": (lambda m, x, y, r: m.F.kl_div(x, y.log(), reduction=r,
                                                        log_target=True),
                          lambda dtype: (_randn((4, 6), dtype), _probabilities(dtype)[0] + 0.1)),
    "poisson_nll_loss": (lambda m, x, y, r: m.F.poisson_nll_loss(x, y, reduction=r),
                         lambda dtype: (_randn((4, 6), dtype),
                                        _rng(1).poisson(2, (4, 6)).astype(dtype))),
    "poisson_nll_loss rate full": (
        lambda m, x, y, r: m.F.poisson_nll_loss(x, y, log_input=False, full=True,
                                                reduction=r),
        lambda dtype: (_rng(2).uniform(0.1, 3, (4, 6)).astype(dtype),
                       _rng(1).poisson(3, (4, 6)).astype(dtype) + 0.5)),
    "gaussian_nll_loss": (
        lambda m, x, y, r: m.F.gaussian_nll_loss(x, y, (x * y).abs(), reduction=r),
        _pair_with_kinks),
    "gaussian_nll_loss full eps": (
        lambda m, x, y, r: m.F.gaussian_nll_loss(x, y, x.abs(), full=True, eps=0.3,
                                                 reduction=r),
        _pair_with_kinks),
    "margin_ranking_loss": (
        lambda m, x, y, r: m.F.margin_ranking_loss(x[0], y[0], (x[1] - y[1]).sign(),
                                                   reduction=r),
        _pair_with_kinks),
    "margin_ranking_loss margin": (
        lambda m, x, y, r: m.F.margin_ranking_loss(x, y, (x - y).sign() + 0.0, 0.5,
                                                   reduction=r),
        _pair_with_kinks),
    "hinge_embedding_loss": (
        lambda m, x, y, r: m.F.hinge_embedding_loss(x, (y - x).sign(), reduction=r),
        _pair_with_kinks),
    "hinge_embedding_loss margin": (
        lambda m, x, y, r: m.F.hinge_embedding_loss(x + 0.5, (y - x).sign(), 1.5,
                                                    reduction=r),
        _pair_with_kinks),
}


# torch's backward of these does not differentiate the target (it refuses one that
# requires grad)
INPUT_ONLY = {"soft_margin_loss"}


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss:UserWarning")
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(ELEMENTWISE))
def test_elementwise_losses_match_torch(name, dtype, reduction):
    call, data = ELEMENTWISE[name]
    compare_values(lambda m, x, y: call(m, x, y, reduction), list(data(dtype)),
                   grads=[0] if name in INPUT_ONLY else None)


WEIGHTED = {
    "mse_loss": lambda m, x, y, w, r: m.F.mse_loss(x, y, reduction=r, weight=w),
    "l1_loss": lambda m, x, y, w, r: m.F.l1_loss(x, y, reduction=r, weight=w),
    "huber_loss": lambda m, x, y, w, r: m.F.huber_loss(x, y, reduction=r, weight=w),
    "binary_cross_entropy": lambda m, x, y, w, r: m.F.binary_cross_entropy(
        x.sigmoid(), y.sigmoid(), w, reduction=r),
    "binary_cross_entropy row weight": lambda m, x, y, w, r: m.F.binary_cross_entropy(
        x.sigmoid(), y.sigmoid(), w[0], reduction=r),
    "binary_cross_entropy_with_logits": lambda m, x, y, w, r:
        m.F.binary_cross_entropy_with_logits(x, y.sigmoid(), w, reduction=r),
    "binary_cross_entropy_with_logits pos_weight": lambda m, x, y, w, r:
        m.F.binary_cross_entropy_with_logits(x, y.sigmoid(), w, reduction=r, pos_weight=w[0] * 3),
    "multilabel_soft_margin_loss": lambda m, x, y, w, r: m.F.multilabel_soft_margin_loss(
        x, (y > 0) + 0.0, w[0], reduction=r),
    "multilabel_soft_margin_loss soft targets": lambda m, x, y, w, r:
        m.F.multilabel_soft_margin_loss(x, y.sigmoid(), reduction=r),
}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(WEIGHTED))
def test_weighted_losses_match_torch(name, dtype, reduction):
    x, y = _pair_with_kinks(dtype)
    w = _rng(5).uniform(0, 2, x.shape).astype(dtype)
    compare_values(lambda m, a, b, c: WEIGHTED[name](m, a, b, c, reduction), [x, y, w],
                   grads=[0, 1])


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_broadcast_targets_warn_and_broadcast(name):
    x, y = _pair_with_kinks("float64")
    with pytest.warns(UserWarning, match="Using a target size"):
        compare_values(lambda m, a, b: getattr(m.F, name)(a, b), [x, y[:1]])


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
                                  "binary_cross_entropy", "soft_margin_loss", "kl_div",
                                  "poisson_nll_loss"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_empty_inputs(name, reduction):
    def call(m, x, y):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return getattr(m.F, name)(x, y, reduction=reduction)

    compare_values(call, [np.zeros((0, 3)), np.zeros((0, 3))],
                   grads=[0] if name in INPUT_ONLY else None)


# pytest.warns passes on the other warnings it saw: numpy's, of the logs of 0 the losses
# clamp or multiply by 0
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("legacy", [(None, False), (False, None), (False, True), (True, False),
                                    (True, True)], ids=str)
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss",
                                  "binary_cross_entropy", "kl_div", "soft_margin_loss",
                                  "poisson_nll_loss", "multilabel_soft_margin_loss",
                                  "hinge_embedding_loss"])
def test_legacy_size_average_and_reduce(name, legacy):
    size_average, reduce = legacy
    x, y = _probabilities("float64")

    def call(m, a, b):
        return getattr(m.F, name)(a, b, size_average=size_average, reduce=reduce)

    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        compare_values(call, [x, y], grads=[0] if name in INPUT_ONLY else None)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_kl_div_reductions():
    x, y = _probabilities("float64")
    with pytest.warns(UserWarning, match="'mean' divides the total loss by both"):
        compare_values(lambda m, a, b: m.F.kl_div(a, b), [x, y])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        compare_values(lambda m, a, b: m.F.kl_div(a, b, reduction="batchmean"), [x, y])
        compare_values(lambda m, a, b: m.F.kl_div(a[0, 0], b[0, 0], reduction="batchmean"),
                       [x, y])
    with pytest.warns(UserWarning, match="size_average"):
        compare_values(lambda m, a, b: m.F.kl_div(a, b, reduce=True, reduction="batchmean"),
                       [x, y])


def test_elementwise_mean_is_deprecated():
    x, y = _pair_with_kinks("float64")
    with pytest.warns(UserWarning, match="reduction='elementwise_mean' is deprecated"):
        compare_values(lambda m, a, b: m.F.mse_loss(a, b, reduction="elementwise_mean"), [x, y])


@pytest.mark.parametrize("shapes", [((4, 6), (4, 6)), ((4, 6), (4,)), ((4, 6), (4, 1)),
                                    ((2, 3, 4), (1, 3, 4)), ((2, 3, 4), (2, 1, 4))], ids=str)
def test_gaussian_nll_loss_variance_shapes(shapes):
    x, y = _pair_with_kinks("float64", shapes[0])
    var = _rng(3).uniform(0, 2, shapes[1])
    var.reshape(-1)[0] = 1e-9  # below eps: clamped, its gradient passing as unclamped
    compare_values(lambda m, a, b, v: m.F.gaussian_nll_loss(a, b, v), [x, y, var])
    compare_values(lambda m, a, b: m.F.gaussian_nll_loss(a, b, 0.7, reduction="sum"), [x, y])


# ----------------------------------------------------------------------------- classes

def _targets(shape, classes, seed=0, ignored=0.0):
    rng = _rng(seed)
    t = rng.integers(0, classes, shape)
    return np.where(rng.random(shape) < ignored, -100, t)


CLASSES = {
    "cross_entropy": lambda m, x, r: m.F.cross_entropy(
        x, m.tensor(_targets((4,), 6, ignored=0.3)), reduction=r),
    "cross_entropy weight smoothing": lambda m, x, r: m.F.cross_entropy(
        x, m.tensor(_targets((4,), 6)), m.linspace(0.5, 2, 6).to(x.dtype), reduction=r,
        label_smoothing=0.2),
    "cross_entropy probabilities": lambda m, x, r: m.F.cross_entropy(
        x, (x * 0 + 1).softmax(1).detach(), reduction=r),
    "nll_loss": lambda m, x, r: m.F.nll_loss(x.log_softmax(1),
                                             m.tensor(_targets((4,), 6, ignored=0.3)),
                                             reduction=r),
}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(CLASSES))
def test_class_losses_match_torch(name, dtype, reduction):
    compare_values(lambda m, x: CLASSES[name](m, x, reduction), [_randn((4, 6), dtype)])


# ----------------------------------------------------------------------------- linear head

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ["plain", "bias weight", "unbatched", "k-dim", "probabilities",
                                  "ignore_index"])
def test_linear_cross_entropy_matches_torch(case, dtype):
    x, w, b = _randn((3, 4), dtype), _randn((5, 4), dtype, 1), _randn((5,), dtype, 2)
    classes = _rng(3).uniform(0.5, 1.5, 5).astype(dtype)
    if case == "plain":
        compare_values(lambda m, a, lw: m.F.linear_cross_entropy(a, lw, m.tensor([0, 4, 2])),
                       [x, w])
    elif case == "bias weight":
        compare_values(lambda m, a, lw, c, cw: m.F.linear_cross_entropy(
            a, lw, m.tensor([0, 4, 2]), linear_bias=c, weight=cw, reduction="sum",
            label_smoothing=0.1), [x, w, b, classes], grads=[0, 1, 2])
    elif case == "unbatched":
        compare_values(lambda m, a, lw: m.F.linear_cross_entropy(a[0], lw, m.tensor(3)), [x, w])
    elif case == "k-dim":
        wk, bk = _randn((5, 2, 4), dtype, 4), _randn((5, 2), dtype, 5)
        compare_values(lambda m, a, lw, c: m.F.linear_cross_entropy(
            a, lw, m.tensor([[0, 1], [4, 4], [2, 3]]), linear_bias=c, reduction="none"),
            [x, wk, bk])
    elif case == "probabilities":
        p = _rng(6).dirichlet(np.ones(5), 3).astype(dtype)
        compare_values(lambda m, a, lw, q: m.F.linear_cross_entropy(a, lw, q), [x, w, p],
                       grads=[0, 1])
    else:
        compare_values(lambda m, a, lw: m.F.linear_cross_entropy(
            a, lw, m.tensor([0, 1, 2]), ignore_index=1), [x, w])


# ----------------------------------------------------------------------------- dtypes

MIXED = {
    "mse_loss": lambda m, x, y: m.F.mse_loss(x, y),
    "l1_loss none": lambda m, x, y: m.F.l1_loss(x, y, reduction="none"),
    "l1_loss": lambda m, x, y: m.F.l1_loss(x, y),
    "smooth_l1_loss": lambda m, x, y: m.F.smooth_l1_loss(x, y),
    "huber_loss": lambda m, x, y: m.F.huber_loss(x, y),
    "binary_cross_entropy": lambda m, x, y: m.F.binary_cross_entropy(x, y),
    "binary_cross_entropy_with_logits": lambda m, x, y: m.F.binary_cross_entropy_with_logits(x, y),
    "kl_div": lambda m, x, y: m.F.kl_div(x, y, reduction="sum"),
    "soft_margin_loss": lambda m, x, y: m.F.soft_margin_loss(x, y),
    "hinge_embedding_loss": lambda m, x, y: m.F.hinge_embedding_loss(x, y),
    "margin_ranking_loss": lambda m, x, y: m.F.margin_ranking_loss(x, y, y),
    "poisson_nll_loss": lambda m, x, y: m.F.poisson_nll_loss(x, y),
    "multilabel_soft_margin_loss": lambda m, x, y: m.F.multilabel_soft_margin_loss(x, y),
}


@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float64", "float32"),
                                    ("float32", "int64"), ("int64", "float32"),
                                    ("int64", "int64"), ("float16", "float16")], ids=str)
@pytest.mark.parametrize("name", list(MIXED))
def test_dtypes_of_mixed_and_integer_inputs(name, dtypes):
    def run(m):
        x = m.tensor([[0.25, 0.0, 1.0], [1.0, 0.5, 0.0]]).to(getattr(m, dtypes[0]))
        y = m.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]).to(getattr(m, dtypes[1]))
        return MIXED[name](m, x, y)

    try:
        expected = run(TORCH)
    except Exception:
        same_error(run)
        return
    half = "float16" in dtypes
    check(run(EMBER), expected, rtol=1e-3 if half else None, atol=1e-3 if half else None)


# ----------------------------------------------------------------------------- errors

ERRORS = {
    "reduction": lambda m: m.F.mse_loss(m.ones(2), m.ones(2), reduction="x"),
    "weighted reduction": lambda m: m.F.l1_loss(m.ones(2), m.ones(2), reduction="x",
                                                weight=m.ones(2)),
    "weight size": lambda m: m.F.mse_loss(m.ones(2, 3), m.ones(2, 3), weight=m.ones(3)),
    "huber weight size": lambda m: m.F.huber_loss(m.ones(2, 3), m.ones(2, 3),
                                                  weight=m.ones(3)),
    "huber weighted reduction": lambda m: m.F.huber_loss(m.ones(2), m.ones(2),
                                                         reduction="x", weight=m.ones(2)),
    # tensor-core's broadcasting errors name their op (and its shapes as tuples)
    "no broadcast": (lambda m: m.F.mse_loss(m.ones(2, 3), m.ones(2, 2)), False),
    "mse integers": lambda m: m.F.mse_loss(m.ones(2, dtype=m.int64),
                                           m.ones(2, dtype=m.int64)),
    "smooth_l1 beta": lambda m: m.F.smooth_l1_loss(m.ones(2), m.ones(2), beta=-1.0),
    "smooth_l1 integers": lambda m: m.F.smooth_l1_loss(m.ones(2, dtype=m.int64),
                                                       m.ones(2, dtype=m.int64)),
    "huber delta": lambda m: m.F.huber_loss(m.ones(2), m.ones(2), delta=0.0),
    "bce input range": lambda m: m.F.binary_cross_entropy(m.ones(2) * 2, m.ones(2)),
    "bce target range": lambda m: m.F.binary_cross_entropy(m.ones(2), m.ones(2) * -1),
    "bce nan input": lambda m: m.F.binary_cross_entropy(m.ones(2) * float("nan"),
                                                        m.ones(2)),
    "bce sizes": lambda m: m.F.binary_cross_entropy(m.ones(2, 3), m.ones(3)),
    "bce dtypes": lambda m: m.F.binary_cross_entropy(m.ones(2),
                                                     m.ones(2, dtype=m.float64)),
    "bce weight broadcast": (lambda m: m.F.binary_cross_entropy(
        m.ones(2, 3), m.ones(2, 3), m.ones(2)), False),
    "bce weight bigger": lambda m: m.F.binary_cross_entropy(m.ones(2, 3), m.ones(2, 3),
                                                            m.ones(4, 2, 3)),
    "bce weight requires grad": lambda m: m.F.binary_cross_entropy(
        m.ones(2), m.ones(2), m.ones(2, requires_grad=True)),
    "bce with logits sizes": lambda m: m.F.binary_cross_entropy_with_logits(m.ones(2, 3),
                                                                            m.ones(3)),
    "bce with logits integer target": lambda m: m.F.binary_cross_entropy_with_logits(
        m.ones(2), m.ones(2, dtype=m.int64)),
    "bce with logits pos_weight": (lambda m: m.F.binary_cross_entropy_with_logits(
        m.ones(2, 3), m.ones(2, 3), pos_weight=m.ones(2)), False),
    "bce with logits weight requires grad": lambda m: m.F.binary_cross_entropy_with_logits(
        m.ones(2), m.ones(2), m.ones(2, requires_grad=True)),
    "bce with logits pos_weight requires grad": lambda m:
        m.F.binary_cross_entropy_with_logits(m.ones(2), m.ones(2),
                                             pos_weight=m.ones(2, requires_grad=True)),
    "kl_div integers": lambda m: m.F.kl_div(m.ones(2, dtype=m.int64), m.ones(2)),
    "kl_div reduction": lambda m: m.F.kl_div(m.ones(2), m.ones(2), reduction="x"),
    "poisson reduction": lambda m: m.F.poisson_nll_loss(m.ones(2), m.ones(2),
                                                        reduction="elementwise_mean"),
    "gaussian negative var": lambda m: m.F.gaussian_nll_loss(m.ones(2), m.ones(2),
                                                             m.ones(2) * -1),
    "gaussian negative float var": lambda m: m.F.gaussian_nll_loss(m.ones(2), m.ones(2),
                                                                   -1.0),
    "gaussian var size": lambda m: m.F.gaussian_nll_loss(m.ones(3, 4), m.ones(3, 4),
                                                         m.ones(2, 1)),
    "gaussian int var": (lambda m: m.F.gaussian_nll_loss(m.ones(2), m.ones(2), 1), False),
    "gaussian reduction": lambda m: m.F.gaussian_nll_loss(m.ones(2), m.ones(2),
                                                          m.ones(2), reduction="x"),
    "huber integer input": lambda m: m.F.huber_loss(m.ones(2, dtype=m.int64),
                                                    m.ones(2)),
    "linear_cross_entropy input dims": lambda m: m.F.linear_cross_entropy(
        m.ones(2, 3, 4), m.ones(5, 4), m.tensor([0, 1])),
    "linear_cross_entropy weight dims": lambda m: m.F.linear_cross_entropy(
        m.ones(2, 4), m.ones(4), m.tensor([0, 1])),
    "linear_cross_entropy features": lambda m: m.F.linear_cross_entropy(
        m.ones(2, 4), m.ones(5, 3), m.tensor([0, 1])),
    "linear_cross_entropy bias": lambda m: m.F.linear_cross_entropy(
        m.ones(2, 4), m.ones(5, 4), m.tensor([0, 1]), linear_bias=m.ones(4)),
    "linear_cross_entropy k-dim unbatched": lambda m: m.F.linear_cross_entropy(
        m.ones(4), m.ones(5, 2, 4), m.tensor([0, 1])),
    "linear_cross_entropy probabilities ignore_index": lambda m: m.F.linear_cross_entropy(
        m.ones(2, 4), m.ones(5, 4), m.ones(2, 5), ignore_index=0),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_torch(name):
    program = ERRORS[name]
    exact = True
    if isinstance(program, tuple):
        program, exact = program
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(program, exact)
