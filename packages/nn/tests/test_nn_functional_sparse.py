"""embedding, embedding_bag and one_hot of ember.nn.functional against
torch.nn.functional: values and weight (and per-sample weight) gradients in float32 and
float64 for every mode, offsets, padding_idx, include_last_offset, max_norm (the weight
renormalized in place), scale_grad_by_freq, and torch's errors."""

from __future__ import annotations

import numpy as np
import pytest
from functional_oracle import DTYPES, EMBER, TORCH, check, compare, same_error

INDICES = np.array([3, 1, 3, 2, 1, 5, 7, 0, 0, 9])


def _ix(m, values):
    return m.tensor(np.asarray(values))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [{}, {"padding_idx": 1}, {"padding_idx": -2},
                                {"scale_grad_by_freq": True},
                                {"scale_grad_by_freq": True, "padding_idx": 3}])
@pytest.mark.parametrize("shape", [(10,), (2, 5), ()])
def test_embedding(shape, kw, dtype):
    idx = INDICES[:int(np.prod(shape))].reshape(shape)
    compare(lambda m, w: m.F.embedding(_ix(m, idx), w, **kw), [(10, 4)], dtype)


def test_embedding_sparse_gradient_has_the_dense_values():
    # (Ember has no sparse tensors: the gradient torch gives as a sparse tensor comes dense)
    compare(lambda m, w: m.F.embedding(_ix(m, INDICES), w, sparse=m is EMBER), [(10, 4)])


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0])
def test_embedding_max_norm_renormalizes_the_weight(norm_type):
    weights = {}

    def fn(m, w):
        table = (w * 1.0).detach()  # a leaf torch lets be renormalized in place
        weights[m] = table
        return m.F.embedding(_ix(m, INDICES.reshape(2, 5)), table, max_norm=1.5,
                             norm_type=norm_type)

    compare(fn, [(10, 4)], low=-2, high=2)
    check(weights[EMBER], weights[TORCH])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("offsets,include_last_offset", [
    ([0, 2, 2, 5, 8], False), ([0], False), ([0, 10], False), ([0, 2, 2, 5, 10], True),
    ([0, 10], True), ([0, 3, 3, 10], True)])
@pytest.mark.parametrize("padding_idx", [None, 1, -1])
def test_embedding_bag(mode, offsets, include_last_offset, padding_idx, dtype):
    compare(lambda m, w: m.F.embedding_bag(
        _ix(m, INDICES), w, _ix(m, offsets), mode=mode, include_last_offset=include_last_offset,
        padding_idx=padding_idx), [(10, 3)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 1])
def test_embedding_bag_last_offset_ends_the_last_bag(mode, padding_idx, dtype):
    # the rows past it take no part, as documented: the bags of the input cut there (torch's
    # kernels disagree among themselves on those rows: its float32 sum leaves them out, its
    # float32 mean divides by a count that has them, its others add them to the last bag)
    compare(lambda m, w: m.F.embedding_bag(
        _ix(m, INDICES if m is EMBER else INDICES[:8]), w, _ix(m, [0, 2, 2, 5, 8]), mode=mode,
        include_last_offset=True, padding_idx=padding_idx), [(10, 3)], dtype)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_of_rows_and_int32_indices(mode):
    compare(lambda m, w: m.F.embedding_bag(_ix(m, INDICES.reshape(2, 5)), w, mode=mode),
            [(10, 3)])
    compare(lambda m, w: m.F.embedding_bag(_ix(m, INDICES.astype(np.int32)), w,
                                           _ix(m, np.array([0, 4], np.int32)), mode=mode),
            [(10, 3)])
    same_error(lambda m: m.F.embedding_bag(_ix(m, np.zeros((3, 0), np.int64)), m.ones(10, 3),
                                           mode=mode))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_without_bags(mode):
    # (torch crashes the process on empty offsets of a non-empty input: not compared)
    compare(lambda m, w: m.F.embedding_bag(_ix(m, np.zeros((0, 3), np.int64)), w, mode=mode),
            [(10, 3)])


def test_embedding_bag_max_gives_a_tie_to_the_first_row():
    compare(lambda m, w: m.F.embedding_bag(_ix(m, [3, 1, 2]), w * 0, _ix(m, [0]), mode="max"),
            [(10, 2)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("padding_idx", [None, 3])
def test_embedding_bag_per_sample_weights(padding_idx, dtype):
    compare(lambda m, w, psw: m.F.embedding_bag(
        _ix(m, INDICES), w, _ix(m, [0, 4, 4]), mode="sum", per_sample_weights=psw,
        padding_idx=padding_idx), [(10, 3), (10,)], dtype)
    compare(lambda m, w, psw: m.F.embedding_bag(
        _ix(m, INDICES.reshape(2, 5)), w, mode="sum", per_sample_weights=psw),
        [(10, 3), (2, 5)], dtype)


def test_embedding_bag_scale_grad_by_freq():
    # each row's gradient divided by its index's count in the batch, as torch's embedding
    # does (torch's CPU embedding_bag reads the counts of other indices: a torch bug)
    compare(lambda m, w: m.F.embedding_bag(_ix(m, INDICES), w, _ix(m, [0, 4]), mode="sum",
                                           scale_grad_by_freq=True)
            if m is EMBER else m.zeros(2, 3, dtype=m.float64).index_add(
                0, m.tensor([0] * 4 + [1] * 6),
                m.F.embedding(_ix(m, INDICES), w, scale_grad_by_freq=True)),
            [(10, 3)])


def test_embedding_bag_max_norm():
    weights = {}

    def fn(m, w):
        table = (w * 1.0).detach()
        weights[m] = table
        return m.F.embedding_bag(_ix(m, INDICES), table, _ix(m, [0, 3]), max_norm=1.0)

    compare(fn, [(10, 4)])
    check(weights[EMBER], weights[TORCH])


W = (10, 3)


@pytest.mark.parametrize("call", [
    lambda m: m.F.embedding_bag(_ix(m, [1, 20]), m.ones(*W), _ix(m, [0])),
    lambda m: m.F.embedding_bag(_ix(m, [1, -1]), m.ones(*W), _ix(m, [0])),
    lambda m: m.F.embedding_bag(_ix(m, [1, 20]), m.ones(*W), _ix(m, [0]), mode="max"),
    lambda m: m.F.embedding_bag(_ix(m, [1, 2]), m.ones(*W), _ix(m, [0, 3])),
    lambda m: m.F.embedding_bag(_ix(m, [1, 2]), m.ones(*W, dtype=m.int64), _ix(m, [0])),
    lambda m: m.F.embedding_bag(m.ones(2), m.ones(*W), _ix(m, [0])),
    lambda m: m.F.embedding_bag(_ix(m, [1, 2]), m.ones(*W), _ix(m, [0]), mode="sum",
                                per_sample_weights=m.ones(2, dtype=m.float64)),
    lambda m: m.F.embedding_bag(_ix(m, [1, 2]), m.ones(*W), _ix(m, [0]),
                                per_sample_weights=m.ones(2)),
    lambda m: m.F.embedding_bag(_ix(m, [1, 2]), m.ones(*W), _ix(m, [0]), mode="sum",
                                per_sample_weights=m.ones(3)),
    lambda m: m.F.embedding_bag(_ix(m, [1, 2]), m.ones(*W), _ix(m, [0]), padding_idx=10),
    lambda m: m.F.embedding_bag(_ix(m, [1, 2]), m.ones(*W), _ix(m, [0]), padding_idx=-11),
    lambda m: m.F.embedding_bag(_ix(m, [1, 2]), m.ones(*W), _ix(m, np.zeros(0, np.int64)),
                                include_last_offset=True),
    lambda m: m.F.embedding_bag(m.ones(2, 2, 2, dtype=m.int64), m.ones(*W)),
    lambda m: m.F.embedding_bag(m.ones(2, dtype=m.int64), m.ones(*W)),
    lambda m: m.F.embedding_bag(m.ones(2, dtype=m.int64), m.ones(3), _ix(m, [0])),
    lambda m: m.F.embedding_bag(m.ones(2, dtype=m.int64), m.ones(*W), _ix(m, [0]), mode="min"),
    lambda m: m.F.embedding_bag(m.ones(2, dtype=m.int64), m.ones(*W), _ix(m, [0]), mode="max",
                                scale_grad_by_freq=True),
    lambda m: m.F.embedding_bag(m.ones(2, dtype=m.int64), m.ones(*W), _ix(m, [0]), mode="max",
                                sparse=True),
    lambda m: m.F.embedding(m.ones(2, dtype=m.int64), m.ones(*W), padding_idx=10),
    lambda m: m.F.embedding(m.ones(2, dtype=m.int64), m.ones(*W), padding_idx=-11),
    lambda m: m.F.embedding(m.ones(2), m.ones(*W)),
    lambda m: m.F.embedding(_ix(m, [11]), m.ones(*W)),
    lambda m: m.F.embedding(_ix(m, [11]), m.ones(*W), max_norm=1.0),
    lambda m: m.F.embedding(_ix(m, [1]), m.ones(4)),
])
def test_errors(call):
    same_error(call)


def test_embedding_bag_errors_naming_torch_objects():
    # (torch's messages print the offset as a tensor, and the class torch.Tensor)
    same_error(lambda m: m.F.embedding_bag(_ix(m, [1, 2]), m.ones(*W), _ix(m, [1])),
               exact=False)
    same_error(lambda m: m.F.embedding_bag(m.ones(2, 2, dtype=m.int64), m.ones(*W),
                                           _ix(m, [0])), exact=False)


@pytest.mark.parametrize("values,num_classes", [([1, 2, 0], -1), ([[1, 2], [3, 0]], 5),
                                                (2, -1), (np.zeros(0, np.int64), 3)])
def test_one_hot(values, num_classes):
    compare(lambda m: m.F.one_hot(_ix(m, values), num_classes), [])


@pytest.mark.parametrize("call", [
    lambda m: m.F.one_hot(_ix(m, np.array([1, 2], np.int32))),
    lambda m: m.F.one_hot(_ix(m, [-1, 2])),
    lambda m: m.F.one_hot(_ix(m, [1, 2]), 2),
    lambda m: m.F.one_hot(_ix(m, np.zeros(0, np.int64))),
    lambda m: m.F.one_hot(_ix(m, [1, 2]), -2),
])
def test_one_hot_errors(call):
    same_error(call)
