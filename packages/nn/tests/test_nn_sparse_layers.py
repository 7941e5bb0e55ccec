"""Embedding and EmbeddingBag against torch.nn's: outputs and weight gradients (float32
and float64) over padding_idx (positive and negative), max_norm (the table renormalized in
place), norm_type, scale_grad_by_freq, sparse, index shapes and dtypes; the bag modes with
offsets, include_last_offset, per_sample_weights and padding; the default initialisation;
from_pretrained and freezing; state dict keys, ``repr`` and torch's exception types."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from nn_oracle import check_close, compare_modules, pair_modules

import ember.autograd as ag
import ember.core as E
import ember.nn as enn

DTYPES = ["float32", "float64"]


def _indices(shape, high, seed=0, dtype="int64"):
    return np.random.default_rng(seed).integers(0, high, shape).astype(dtype)


def _same_error(program):
    with pytest.raises(Exception) as expected:
        program(torch.nn, torch)
    with pytest.raises(Exception) as got:
        program(enn, E)
    assert type(got.value) is type(expected.value), (expected.value, got.value)


EMBEDDINGS = [
    # (constructor args, constructor kwargs, index shape, index dtype)
    ((10, 3), {}, (4, 5), "int64"),
    ((10, 3), {}, (7,), "int32"),
    ((6, 4), {"padding_idx": 2}, (3, 4), "int64"),
    ((6, 4), {"padding_idx": -1}, (2, 3, 2), "int64"),
    ((8, 3), {"scale_grad_by_freq": True}, (5, 4), "int64"),
    ((8, 3), {"scale_grad_by_freq": True, "padding_idx": 0}, (12,), "int64"),
    ((8, 5), {"max_norm": 1.0}, (3, 4), "int64"),
    ((8, 5), {"max_norm": 2.0, "norm_type": 1.0}, (6,), "int64"),
    ((5, 2), {}, (), "int64"),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args, kwargs, shape, index_dtype", EMBEDDINGS,
                         ids=[str(i) for i in range(len(EMBEDDINGS))])
def test_embedding_matches_torch(args, kwargs, shape, index_dtype, dtype):
    t, e = pair_modules(lambda nn: nn.Embedding(*args, **kwargs), dtype=dtype)
    idx = _indices(shape, args[0], dtype=index_dtype)
    compare_modules(t, e, [idx])
    # max_norm renormalizes the rows looked up, in place, in both
    check_close(t.weight, e.weight, "weight after forward")
    compare_modules(t, e, [_indices(shape, args[0], seed=1, dtype=index_dtype)], train=False)


def test_sparse_gradient_has_torch_values():
    t, e = pair_modules(lambda nn: nn.Embedding(7, 3, sparse=True, padding_idx=1))
    idx = _indices((4, 3), 7)
    torch_out, ember_out = t(torch.tensor(idx)), e(E.tensor(idx))
    check_close(torch_out, ember_out, "output")
    g = np.random.default_rng(2).standard_normal(tuple(torch_out.shape)).astype("float32")
    torch_out.backward(torch.tensor(g))
    ember_out.backward(E.tensor(g))
    assert t.weight.grad.is_sparse
    check_close(t.weight.grad.to_dense(), e.weight.grad, "weight grad")
    assert repr(t) == repr(e)


def test_embedding_default_initialisation_and_keys():
    E.manual_seed(0)
    e = enn.Embedding(400, 50, padding_idx=3)
    w = e.weight.detach().numpy()
    rest = np.delete(w, 3, axis=0)
    assert abs(rest.mean()) < 0.02 and abs(rest.std() - 1) < 0.02
    assert np.all(w[3] == 0)
    assert list(e.state_dict()) == ["weight"] and e.weight.requires_grad
    assert e.padding_idx == 3 and enn.Embedding(5, 2, padding_idx=-2).padding_idx == 3
    e.reset_parameters()
    assert np.all(e.weight.detach().numpy()[3] == 0)
    f = enn.Embedding(3, 2, dtype=E.float64)
    assert f.weight.dtype == E.float64


@pytest.mark.parametrize("freeze", [True, False])
def test_embedding_from_pretrained(freeze):
    table = np.arange(12, dtype="float32").reshape(4, 3)
    made = []
    for nn, lib in ((torch.nn, torch), (enn, E)):
        source = lib.tensor(table)
        m = nn.Embedding.from_pretrained(source, freeze=freeze, padding_idx=1, max_norm=30.0)
        assert m.weight.requires_grad is (not freeze)
        with (torch.no_grad() if lib is torch else ag.no_grad()):
            source[0, 0] = 100.0  # the weight shares the given tensor's storage
        assert float(m.weight.detach()[0, 0]) == 100.0
        made.append(m)
    assert repr(made[0]) == repr(made[1])
    idx = np.array([[0, 1], [3, 2]])
    check_close(made[0](torch.tensor(idx)), made[1](E.tensor(idx)), "output")
    check_close(made[0].weight, made[1].weight, "renormalized weight")


@pytest.mark.parametrize("program", [
    lambda nn, lib: nn.Embedding.from_pretrained(lib.ones(3)),
    lambda nn, lib: nn.Embedding(3, 2, _weight=lib.ones(2, 3)),
    lambda nn, lib: nn.Embedding(3, 2, padding_idx=3),
    lambda nn, lib: nn.Embedding(3, 2, padding_idx=-4),
    lambda nn, lib: nn.Embedding(3, 2)(lib.tensor([3])),
    lambda nn, lib: nn.Embedding(3, 2)(lib.tensor([-4])),
    lambda nn, lib: nn.Embedding(3, 2)(lib.tensor([1.0])),
    lambda nn, lib: nn.Embedding(3, 2, max_norm=1.0)(lib.tensor([5])),
    lambda nn, lib: nn.EmbeddingBag(3, 2, padding_idx=5),
    lambda nn, lib: nn.EmbeddingBag.from_pretrained(lib.ones(2, 2, 2)),
], ids=["pretrained-1d", "weight-shape", "padding-high", "padding-low", "index-high",
        "index-negative", "float-index", "max-norm-range", "bag-padding", "bag-pretrained"])
def test_embedding_errors_match_torch(program):
    _same_error(program)


def test_embedding_repr_matches_torch():
    for kwargs in ({}, {"padding_idx": 1}, {"max_norm": 2.0}, {"norm_type": 1.0},
                   {"scale_grad_by_freq": True}, {"sparse": True},
                   {"padding_idx": 0, "max_norm": 1.5, "norm_type": 3.0,
                    "scale_grad_by_freq": True, "sparse": True}):
        assert repr(torch.nn.Embedding(5, 3, **kwargs)) == repr(enn.Embedding(5, 3, **kwargs))
        assert repr(torch.nn.EmbeddingBag(5, 3, **{k: v for k, v in kwargs.items()
                                                   if k != "sparse"})) == \
            repr(enn.EmbeddingBag(5, 3, **{k: v for k, v in kwargs.items() if k != "sparse"}))
    for mode in ("sum", "max"):
        assert repr(torch.nn.EmbeddingBag(5, 3, mode=mode)) == repr(enn.EmbeddingBag(5, 3,
                                                                                      mode=mode))


# --------------------------------------------------------------------------- bags

BAGS = [
    # (constructor kwargs, input, offsets, per_sample_weights)
    ({}, _indices((4, 3), 9), None, None),
    ({"mode": "sum"}, _indices((10,), 9), np.array([0, 3, 3, 7]), None),
    ({"mode": "max"}, _indices((10,), 9, seed=2), np.array([0, 2, 5]), None),
    ({"mode": "max"}, _indices((3, 4), 9), None, None),
    ({"mode": "sum"}, _indices((8,), 9), np.array([0, 4]), np.linspace(-1, 1, 8)),
    ({"mode": "sum"}, _indices((2, 3), 9), None, np.linspace(0.5, 2, 6).reshape(2, 3)),
    ({"include_last_offset": True}, _indices((9,), 9), np.array([0, 2, 2, 9]), None),
    ({"mode": "sum", "include_last_offset": True}, _indices((9,), 9), np.array([0, 4, 9]),
     None),
    ({"padding_idx": 2}, np.array([2, 1, 2, 2, 5, 3]), np.array([0, 1, 3, 4]), None),
    ({"mode": "max", "padding_idx": -1}, np.array([8, 1, 8, 4]), np.array([0, 1, 2]), None),
    # every index as frequent as the others: torch's CPU backward divides the k-th distinct
    # index's gradient by the count of the k-th sorted input, not by its own count (Ember
    # divides by its own, as documented; test_nn_functional_sparse checks that)
    ({"mode": "sum", "scale_grad_by_freq": True}, np.array([1, 2, 2, 1]), np.array([0, 2]),
     None),
    ({"max_norm": 1.0}, _indices((6,), 9), np.array([0, 3]), None),
    ({"mode": "mean"}, _indices((0, 3), 9), None, None),
    ({"mode": "sum"}, _indices((0,), 9), np.array([0, 0]), None),
]


def _weighted_2d_bag(kwargs):
    """An EmbeddingBag called with a 2-d input and per_sample_weights (no offsets)."""
    def build(nn):
        class WeightedBag(nn.Module):
            def __init__(self):
                super().__init__()
                self.bag = nn.EmbeddingBag(9, 3, **kwargs)

            def forward(self, input, weights):
                return self.bag(input, per_sample_weights=weights)
        return WeightedBag()
    return build


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kwargs, input, offsets, weights", BAGS,
                         ids=[str(i) for i in range(len(BAGS))])
def test_embedding_bag_matches_torch(kwargs, input, offsets, weights, dtype):
    if offsets is None and weights is not None:
        t, e = pair_modules(_weighted_2d_bag(kwargs), dtype=dtype)
        compare_modules(t, e, [input, weights.astype(dtype)])
        return
    t, e = pair_modules(lambda nn: nn.EmbeddingBag(9, 3, **kwargs), dtype=dtype)
    args = [input] + [a for a in (offsets, weights) if a is not None]
    compare_modules(t, e, [a.astype(dtype) if a is weights else a for a in args])
    check_close(t.weight, e.weight, "weight after forward")


def test_embedding_bag_from_pretrained_and_keys():
    table = np.linspace(-2, 2, 15).reshape(5, 3).astype("float32")
    t = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(table), mode="sum", padding_idx=0)
    e = enn.EmbeddingBag.from_pretrained(E.tensor(table), mode="sum", padding_idx=0)
    assert not e.weight.requires_grad and list(e.state_dict()) == ["weight"]
    assert repr(t) == repr(e)
    idx, offsets = np.array([0, 1, 4, 2]), np.array([0, 2])
    check_close(t(torch.tensor(idx), torch.tensor(offsets)),
                e(E.tensor(idx), E.tensor(offsets)), "output")
    g = enn.EmbeddingBag.from_pretrained(E.tensor(table), freeze=False)
    assert g.weight.requires_grad and g.mode == "mean"
    E.manual_seed(0)
    d = enn.EmbeddingBag(300, 40, padding_idx=7)
    w = d.weight.detach().numpy()
    assert np.all(w[7] == 0) and abs(np.delete(w, 7, 0).std() - 1) < 0.03


@pytest.mark.parametrize("program", [
    lambda nn, lib: nn.EmbeddingBag(5, 2)(lib.tensor([1, 2])),
    lambda nn, lib: nn.EmbeddingBag(5, 2)(lib.tensor([[1, 2]]), lib.tensor([0])),
    lambda nn, lib: nn.EmbeddingBag(5, 2)(lib.tensor([1, 2]), lib.tensor([0]),
                                          lib.tensor([1.0, 2.0])),
    lambda nn, lib: nn.EmbeddingBag(5, 2, mode="max", scale_grad_by_freq=True)(
        lib.tensor([[1, 2]])),
    lambda nn, lib: nn.EmbeddingBag(5, 2, mode="median")(lib.tensor([[1, 2]])),
    lambda nn, lib: nn.EmbeddingBag(5, 2)(lib.tensor([1, 7]), lib.tensor([0])),
    lambda nn, lib: nn.EmbeddingBag(5, 2)(lib.tensor([1, 2]), lib.tensor([1])),
    lambda nn, lib: nn.EmbeddingBag(5, 2)(lib.tensor([[[1]]])),
    lambda nn, lib: nn.EmbeddingBag(5, 2)(lib.zeros(2, 0, dtype=lib.int64)),
], ids=["no-offsets", "2d-offsets", "weights-mean", "max-freq", "mode", "range",
        "first-offset", "3d", "2d-empty-bags"])
def test_embedding_bag_errors_match_torch(program):
    _same_error(program)
