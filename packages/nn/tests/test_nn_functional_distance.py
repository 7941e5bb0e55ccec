"""cosine_similarity, pairwise_distance and pdist of ember.nn.functional against
torch.nn.functional: values and gradients in float32 and float64 with broadcasting, dims,
norms and eps, integer inputs, and errors."""

from __future__ import annotations

import pytest
import torch
from functional_oracle import DTYPES, EMBER, TORCH, E, check, compare, same_error


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes,kw", [
    ([(4, 5), (4, 5)], {}), ([(4, 5), (5,)], {"dim": -1}), ([(2, 3, 4), (2, 1, 4)], {"dim": 2}),
    ([(2, 3, 4), (3, 4)], {"dim": 0}), ([(4, 5), (4, 5)], {"eps": 5.0})])
def test_cosine_similarity(shapes, kw, dtype):
    compare(lambda m, a, b: m.F.cosine_similarity(a, b, **kw), shapes, dtype)


def test_cosine_similarity_zero_vector_and_integers():
    compare(lambda m, a: m.F.cosine_similarity(a, m.zeros(3, 4, dtype=m.float64)), [(3, 4)])
    compare(lambda m: m.F.cosine_similarity(m.arange(6).view(2, 3), m.ones(2, 3)), [])
    same_error(lambda m: m.F.cosine_similarity(m.ones(2, 3, dtype=m.int64),
                                               m.ones(2, 3, dtype=m.int64)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", [[(4, 5), (4, 5)], [(4, 5), (5,)], [(5,), (5,)],
                                    [(2, 3, 4), (3, 4)]])
@pytest.mark.parametrize("kw", [{}, {"p": 1.0}, {"p": 3.0, "keepdim": True},
                                {"p": float("inf")}, {"eps": 0.1}])
def test_pairwise_distance(shapes, kw, dtype):
    compare(lambda m, a, b: m.F.pairwise_distance(a, b, **kw), shapes, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [2, 1, 0.5, 3, float("inf")])
@pytest.mark.parametrize("shape", [(5, 3), (1, 3), (4, 1)])
def test_pdist(shape, p, dtype):
    compare(lambda m, x: m.F.pdist(x, p), [shape], dtype)


def test_pdist_empty():
    # values only: torch's pdist backward crashes the process on an empty input
    for shape in ((0, 3), (1, 3), (4, 0)):
        check(EMBER.F.pdist(E.ones(*shape)), TORCH.F.pdist(torch.ones(*shape)))


@pytest.mark.parametrize("call", [
    lambda m: m.F.pdist(m.ones(2, 3, 4)),
    lambda m: m.F.pdist(m.ones(2, 3, dtype=m.int64)),
    lambda m: m.F.pdist(m.ones(2, 3), -1),
])
def test_pdist_errors(call):
    same_error(call)
