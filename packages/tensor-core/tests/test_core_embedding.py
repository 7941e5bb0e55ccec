"""torch.embedding against torch: lookups of int64 and int32 indices of any shape, the
backward primitive with padding and frequency scaling, errors, and the native backward
loop against its numpy reference."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_oracle import check, check_same_error

import ember.core as ember
from ember.core import native
from ember.core.ops import embedding as embedding_ops


def _weights(num, dim, dtype="float32", seed=0):
    w = np.random.default_rng(seed).normal(0, 1, (num, dim)).astype(dtype)
    return ember.from_numpy(w.copy()), torch.from_numpy(w)


def _indices(shape, num, dtype="int64", seed=1):
    i = np.random.default_rng(seed).integers(0, num, shape).astype(dtype)
    return ember.from_numpy(i.copy()), torch.from_numpy(i)


@pytest.mark.parametrize("shape", [(), (5,), (2, 3), (4, 0), (2, 3, 4)])
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
def test_lookups_match_torch(shape, index_dtype):
    (we, wt), (ie, it) = _weights(10, 7), _indices(shape, 10, index_dtype)
    check(ember.embedding(we, ie), torch.embedding(wt, it))


@pytest.mark.parametrize("dtype", ["float16", "float64", "int64"])
def test_lookups_of_other_weights_and_layouts_match_torch(dtype):
    (we, wt), (ie, it) = _weights(6, 10, "float32"), _indices((3, 4), 6)
    we, wt = we.to(getattr(ember, dtype)), wt.to(getattr(torch, dtype))
    check(ember.embedding(we, ie), torch.embedding(wt, it))
    (we, wt) = _weights(10, 6)
    check(ember.embedding(we.t(), ie.t()), torch.embedding(wt.t(), it.t()))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("padding_idx", [-1, 0, 3])
@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("n,dim", [(1, 1), (7, 3), (300, 257)])
def test_backward_matches_torch(dtype, padding_idx, scale, n, dim):
    rng = np.random.default_rng(2)
    g = rng.normal(0, 1, (n, dim)).astype(dtype)
    (ie, it) = _indices((n,), 5)
    params = {"num_weights": 5, "padding_idx": padding_idx, "scale_grad_by_freq": scale}
    check(embedding_ops.EMBEDDING_BACKWARD(ember.from_numpy(g), ie, **params),
          torch.ops.aten.embedding_dense_backward(torch.from_numpy(g), it, 5, padding_idx,
                                                  scale))


def test_backward_of_an_expanded_gradient_matches_torch():
    (ie, it) = _indices((4, 3), 6)
    ge, gt = ember.ones(1, 1, 8).expand(4, 3, 8), torch.ones(1, 1, 8).expand(4, 3, 8)
    check(embedding_ops.EMBEDDING_BACKWARD(ge, ie, num_weights=6, padding_idx=-1,
                                           scale_grad_by_freq=False),
          torch.ops.aten.embedding_dense_backward(gt, it, 6, -1, False))


@pytest.mark.parametrize("case,phrase", [
    (lambda m: m.embedding(m.ones(4, 3), m.tensor([1.0])), "scalar types: Long, Int"),
    (lambda m: m.embedding(m.ones(4, 3), m.tensor([1], dtype=m.int16)), "ShortTensor"),
    (lambda m: m.embedding(m.ones(4, 3), m.tensor([4])), "index out of range"),
    (lambda m: m.embedding(m.ones(4, 3), m.tensor([-1])), "index out of range"),
    (lambda m: m.embedding(m.ones(4), m.tensor([1])), "'weight' must be 2-D"),
    (lambda m: m.embedding(m.ones(4, 3, 2), m.tensor([1])), "'weight' must be 2-D"),
    (lambda m: m.embedding([[1.0]], m.tensor([0])), "must be Tensor"),
    (lambda m: m.embedding(m.ones(0, 3), m.tensor([0])), "axis dim should be positive"),
])
def test_errors_match_torch(case, phrase):
    check_same_error(case, phrase)


@pytest.mark.skipif(native._compiler() is None, reason="no C compiler")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("scale", [False, True])
def test_native_backward_agrees_with_its_reference_at_any_thread_count(dtype, scale):
    op = embedding_ops.EMBEDDING_BACKWARD
    rng = np.random.default_rng(3)
    g = rng.normal(0, 1, (500, 130)).astype(dtype)  # past the size the loop threads from
    i = rng.integers(0, 40, 500)
    params = {"num_weights": 40, "padding_idx": 7, "scale_grad_by_freq": scale}
    assert op.table["cpu"] is not op.forward
    fast = op.table["cpu"](g, i, **params)
    # the same sums in the same order: each element adds its rows in index order
    np.testing.assert_allclose(fast, op.forward(g, i, **params), rtol=1e-6, atol=1e-6)
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        np.testing.assert_array_equal(op.table["cpu"](g, i, **params), fast)
    finally:
        ember.set_num_threads(before)
