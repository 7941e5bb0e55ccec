"""The margin and embedding losses of ember.nn.functional against torch.nn.functional:
the multi-class and multi-label margins on scores whose hinges are exactly 0 for some
pairs, the cosine and triplet losses, for each reduction, values and gradients in
float32 and float64; torch's errors."""

from __future__ import annotations

import numpy as np
import pytest
from functional_oracle import DTYPES, same_error
from values_oracle import compare_values

REDUCTIONS = ["none", "mean", "sum"]


def _rng(seed=0):
    return np.random.default_rng(seed)


def _randn(shape, dtype, seed=0):
    return _rng(seed).standard_normal(shape).astype(dtype)


def _targets(shape, classes, seed=0):
    return _rng(seed).integers(0, classes, shape)


# ----------------------------------------------------------------------------- classes

MARGINS = {
    "multi_margin_loss": lambda m, x, r: m.F.multi_margin_loss(
        x, m.tensor(_targets((4,), 6, 1)), reduction=r),
    "multi_margin_loss p margin weight": lambda m, x, r: m.F.multi_margin_loss(
        x, m.tensor(_targets((4,), 6, 2)), p=2, margin=0.7,
        weight=m.arange(6.0).to(x.dtype), reduction=r),
    "multi_margin_loss 1-d": lambda m, x, r: m.F.multi_margin_loss(
        x[0], m.tensor([2]), reduction=r),
    "multi_margin_loss 0-d target": lambda m, x, r: m.F.multi_margin_loss(
        x[1], m.tensor(3), reduction=r),
    "multi_margin_loss 0-d": lambda m, x, r: m.F.multi_margin_loss(
        x[1, 1], m.tensor(0), reduction=r),
    "multilabel_margin_loss": lambda m, x, r: m.F.multilabel_margin_loss(
        x, m.tensor([[3, 0, -1, 1, 2, 2], [1, 1, 5, -1, 0, 0], [0, 1, 2, 3, 4, 5],
                     [-1, 2, 3, 4, 4, 4]]), reduction=r),
    "multilabel_margin_loss 1-d": lambda m, x, r: m.F.multilabel_margin_loss(
        x[2], m.tensor([4, 0, 2, -1, 1, 1]), reduction=r),
    "multilabel_margin_loss 0-d": lambda m, x, r: m.F.multilabel_margin_loss(
        x[0, 0], m.tensor(0), reduction=r),
}


def _margin_ties(dtype):
    """Scores where ``1 - x[target] + x[other]`` is exactly 0 for some pairs."""
    x = _rng(4).uniform(-1, 1, (4, 6))
    x[0, 3], x[0, 4] = 1.5, 0.5
    x[1, 1], x[1, 2], x[1, 4] = 1.25, 0.25, 0.25
    x[2, :] = [0.5, 1.5, 0.5, -0.5, 0.5, 0.5]
    return x.astype(dtype)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(MARGINS))
def test_margin_losses_match_torch(name, dtype, reduction):
    compare_values(lambda m, x: MARGINS[name](m, x, reduction), [_margin_ties(dtype)])


def test_margin_losses_of_empty_batches():
    x = np.zeros((0, 4))
    compare_values(lambda m, a: m.F.multi_margin_loss(a, m.zeros(0, dtype=m.int64),
                                                      reduction="none"), [x])
    compare_values(lambda m, a: m.F.multilabel_margin_loss(a, m.zeros((0, 4), dtype=m.int64),
                                                           reduction="none"), [x])


# ----------------------------------------------------------------------------- embeddings

EMBEDDINGS = {
    "cosine_embedding_loss": lambda m, a, b, c, r: m.F.cosine_embedding_loss(
        a, b, m.tensor([1.0, -1.0, 1.0, -1.0, 0.0]).to(a.dtype), reduction=r),
    "cosine_embedding_loss margin": lambda m, a, b, c, r: m.F.cosine_embedding_loss(
        a, b, m.tensor([-1.0, -1.0, 1.0, -1.0, -1.0]).to(a.dtype), 0.2, reduction=r),
    "cosine_embedding_loss 1-d": lambda m, a, b, c, r: m.F.cosine_embedding_loss(
        a[0], b[1], m.tensor(-1.0).to(a.dtype), -0.5, reduction=r),
    "triplet_margin_loss": lambda m, a, b, c, r: m.F.triplet_margin_loss(
        a, b, c, reduction=r),
    "triplet_margin_loss p swap": lambda m, a, b, c, r: m.F.triplet_margin_loss(
        a, b, c, margin=2.0, p=1, eps=1e-3, swap=True, reduction=r),
    "triplet_margin_loss 1-d": lambda m, a, b, c, r: m.F.triplet_margin_loss(
        a[0], b[0], c[0], reduction=r),
    "triplet_margin_with_distance_loss": lambda m, a, b, c, r:
        m.F.triplet_margin_with_distance_loss(a, b, c, reduction=r),
    "triplet_margin_with_distance_loss custom swap": lambda m, a, b, c, r:
        m.F.triplet_margin_with_distance_loss(a, b, c, distance_function=lambda x, y:
                                              (x - y).abs().sum(-1), margin=0.5, swap=True,
                                             reduction=r),
}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(EMBEDDINGS))
def test_embedding_losses_match_torch(name, dtype, reduction):
    a, b, c = (_randn((5, 4), dtype, seed) for seed in range(3))
    compare_values(lambda m, x, y, z: EMBEDDINGS[name](m, x, y, z, reduction), [a, b, c])


def test_margin_ranking_hinge_at_zero():
    """Equal inputs and margin 0 put every hinge exactly at its kink."""
    x = np.array([0.5, -1.0, 2.0])
    compare_values(lambda m, a, b, t: m.F.margin_ranking_loss(a, b, t), [x, x.copy(),
                                                                         np.array([1.0, -1, 1])])
    compare_values(lambda m, a: m.F.hinge_embedding_loss(a, m.tensor([-1.0, -1.0, 1.0]), 0.5),
                   [x])


# ----------------------------------------------------------------------------- errors

ERRORS = {
    "cosine target dims": lambda m: m.F.cosine_embedding_loss(m.ones(2, 3), m.ones(2, 3),
                                                              m.ones(2, 1)),
    "cosine 1-d target": lambda m: m.F.cosine_embedding_loss(m.ones(3), m.ones(3),
                                                             m.ones(3)),
    "cosine 0-d target": lambda m: m.F.cosine_embedding_loss(m.ones(2, 3), m.ones(2, 3),
                                                             m.tensor(1.0)),
    "margin ranking dims": lambda m: m.F.margin_ranking_loss(m.ones(2, 3), m.ones(2, 3),
                                                             m.ones(3)),
    "soft margin integers": lambda m: m.F.soft_margin_loss(m.ones(2, dtype=m.int64),
                                                           m.ones(2, dtype=m.int64)),
    "soft margin bigger target": lambda m: m.F.soft_margin_loss(m.ones(3), m.ones(2, 3)),
    "multilabel soft margin reduction": lambda m: m.F.multilabel_soft_margin_loss(
        m.ones(2, 3), m.ones(2, 3), reduction="x"),
    # tensor-core's Tensor.size(dim) of a 0-d tensor words its IndexError as Python does
    "multilabel soft margin 0-d": (lambda m: m.F.multilabel_soft_margin_loss(
        m.tensor(1.0), m.tensor(1.0)), False),
    "soft margin target requires grad": lambda m: m.F.soft_margin_loss(
        m.ones(2), m.ones(2, requires_grad=True)),
    "multilabel margin 3-d": lambda m: m.F.multilabel_margin_loss(
        m.ones(2, 3, 4), m.zeros(2, 3, 4, dtype=m.int64)),
    "multilabel margin no classes": lambda m: m.F.multilabel_margin_loss(
        m.ones(3, 0), m.zeros(3, 0, dtype=m.int64)),
    "multilabel margin target size": lambda m: m.F.multilabel_margin_loss(
        m.ones(3, 4), m.zeros(3, 3, dtype=m.int64)),
    "multilabel margin 1-d target size": lambda m: m.F.multilabel_margin_loss(
        m.ones(4), m.zeros(3, dtype=m.int64)),
    "multilabel margin target range": lambda m: m.F.multilabel_margin_loss(
        m.ones(1, 4), m.tensor([[4, -1, 0, 0]])),
    "multilabel margin target below -1": lambda m: m.F.multilabel_margin_loss(
        m.ones(1, 4), m.tensor([[0, -2, 0, 0]])),
    "multilabel margin int32 target": lambda m: m.F.multilabel_margin_loss(
        m.ones(1, 4), m.zeros(1, 4, dtype=m.int32)),
    "multilabel margin integer input": lambda m: m.F.multilabel_margin_loss(
        m.ones(1, 4, dtype=m.int64), m.zeros(1, 4, dtype=m.int64)),
    "multi margin p": lambda m: m.F.multi_margin_loss(m.ones(2, 3), m.tensor([0, 1]), p=3),
    "multi margin 2-d weight": lambda m: m.F.multi_margin_loss(
        m.ones(2, 3), m.tensor([0, 1]), weight=m.ones(1, 3)),
    "multi margin weight size": lambda m: m.F.multi_margin_loss(
        m.ones(2, 3), m.tensor([0, 1]), weight=m.ones(2)),
    "multi margin 3-d": lambda m: m.F.multi_margin_loss(m.ones(2, 3, 4), m.tensor([0, 1])),
    "multi margin target size": lambda m: m.F.multi_margin_loss(m.ones(2, 3),
                                                                m.tensor([0])),
    "multi margin 2-d target": lambda m: m.F.multi_margin_loss(m.ones(2, 3),
                                                               m.tensor([[0], [1]])),
    "multi margin target range": lambda m: m.F.multi_margin_loss(m.ones(2, 3),
                                                                 m.tensor([0, 3])),
    "multi margin negative target": lambda m: m.F.multi_margin_loss(m.ones(2, 3),
                                                                    m.tensor([-1, 0])),
    "multi margin int32 target": lambda m: m.F.multi_margin_loss(
        m.ones(2, 3), m.tensor([0, 1]).to(m.int32)),
    "multi margin integer input": lambda m: m.F.multi_margin_loss(
        m.ones(2, 3, dtype=m.int64), m.tensor([0, 1])),
    "multi margin weight dtype": lambda m: m.F.multi_margin_loss(
        m.ones(2, 3), m.tensor([0, 1]), weight=m.ones(3, dtype=m.float64)),
    "multi margin weight requires grad": lambda m: m.F.multi_margin_loss(
        m.ones(2, 3), m.tensor([0, 1]), weight=m.ones(3, requires_grad=True)),
    "triplet margin": lambda m: m.F.triplet_margin_loss(m.ones(2), m.ones(2), m.ones(2),
                                                        margin=0),
    "triplet dims": lambda m: m.F.triplet_margin_loss(m.ones(2, 3), m.ones(2, 3),
                                                      m.ones(3)),
    "triplet distance reduction": lambda m: m.F.triplet_margin_with_distance_loss(
        m.ones(2), m.ones(2), m.ones(2), reduction="x"),
    "triplet distance margin": lambda m: m.F.triplet_margin_with_distance_loss(
        m.ones(2), m.ones(2), m.ones(2), margin=-1.0),
    "triplet distance dims": lambda m: m.F.triplet_margin_with_distance_loss(
        m.ones(2, 3), m.ones(3), m.ones(2, 3)),
    "triplet distance positional": (lambda m: m.F.triplet_margin_with_distance_loss(
        m.ones(2), m.ones(2), m.ones(2), None), False),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_torch(name):
    program = ERRORS[name]
    exact = True
    if isinstance(program, tuple):
        program, exact = program
    same_error(program, exact)
