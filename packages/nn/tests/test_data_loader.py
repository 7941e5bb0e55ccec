"""DataLoader in the main process against torch's: the batches (same structure, shapes, dtypes
and values) for map-style and iterable datasets in every batching mode, len(), the argument
errors (type and message), the warnings, and how shuffling draws from the generators."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tdata
from test_data_collate import assert_same

import ember.core as E
import ember.utils.data as D


class Samples:
    """A map-style dataset (no base class needed) whose samples are built with ``lib``."""

    def __init__(self, lib, n=10):
        self.lib, self.n = lib, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": self.lib.tensor([i, 2 * i], dtype=self.lib.float32), "y": i,
                "name": f"s{i}", "w": i / 2, "arr": np.full((2, 2), i, dtype=np.int16)}


def stream(base, lib, n, length=None):
    """An iterable dataset of ``n`` tensors, subclassing ``base``; with ``__len__`` returning
    ``length`` when given."""
    body = {"__iter__": lambda self: (lib.tensor([i, -i]) for i in range(n))}
    if length is not None:
        body["__len__"] = lambda self: length
    return type("Stream", (base,), body)()


def both(**kwargs):
    """The batches of torch's and Ember's DataLoader over the same samples."""
    theirs = list(tdata.DataLoader(Samples(torch), **kwargs))
    ours = list(D.DataLoader(Samples(E), **kwargs))
    return ours, theirs


CONFIGS = {
    "default": {},
    "batch 3": {"batch_size": 3},
    "batch 3 drop_last": {"batch_size": 3, "drop_last": True},
    "batch 5 drop_last exact": {"batch_size": 5, "drop_last": True},
    "batch larger than the dataset": {"batch_size": 32},
    "no batching": {"batch_size": None},
    "batch_sampler": {"batch_sampler": [[0, 1], [5], [2, 3, 4]]},
    "sampler": {"sampler": [9, 0, 3], "batch_size": 2},
    "no batching with sampler": {"sampler": [4, 2], "batch_size": None},
    "identity collate": {"batch_size": 4, "collate_fn": lambda b: b},
}


@pytest.mark.parametrize("name", CONFIGS)
def test_map_style_batches_are_torchs(name):
    ours, theirs = both(**CONFIGS[name])
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert_same(a, b)


STREAM_CONFIGS = {
    "default": {},
    "batch 3": {"batch_size": 3},
    "batch 3 drop_last": {"batch_size": 3, "drop_last": True},
    "no batching": {"batch_size": None},
}


@pytest.mark.parametrize("name", STREAM_CONFIGS)
def test_iterable_batches_are_torchs(name):
    theirs = list(tdata.DataLoader(stream(tdata.IterableDataset, torch, 7), **STREAM_CONFIGS[name]))
    ours = list(D.DataLoader(stream(D.IterableDataset, E, 7), **STREAM_CONFIGS[name]))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert_same(a, b)


@pytest.mark.parametrize("kwargs", [{}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True},
                                    {"batch_size": None}, {"batch_sampler": [[1, 2], [3]]}])
def test_len_is_torchs(kwargs):
    assert len(D.DataLoader(Samples(E), **kwargs)) == len(tdata.DataLoader(Samples(torch),
                                                                          **kwargs))


@pytest.mark.parametrize("kwargs", [{}, {"batch_size": 4}, {"batch_size": 4, "drop_last": True},
                                    {"batch_size": None}])
def test_len_of_an_iterable_dataset_with_len(kwargs):
    ours = D.DataLoader(stream(D.IterableDataset, E, 10, length=10), **kwargs)
    theirs = tdata.DataLoader(stream(tdata.IterableDataset, torch, 10, length=10), **kwargs)
    assert len(ours) == len(theirs)


def test_len_of_an_iterable_dataset_without_len():
    with pytest.raises(TypeError):
        len(D.DataLoader(stream(D.IterableDataset, E, 3)))


def test_iterable_dataset_longer_than_its_len_warns():
    loader = D.DataLoader(stream(D.IterableDataset, E, 3, length=2), batch_size=None)
    assert len(loader) == 2
    with pytest.warns(UserWarning, match=r"was reported to be 2\(when accessing len\(dataloader\)"
                                         r"\), but 3 samples have been fetched"):
        assert len(list(loader)) == 3


def test_each_iteration_starts_over():
    loader = D.DataLoader(Samples(E), batch_size=4)
    first = [b["y"].tolist() for b in loader]
    assert [b["y"].tolist() for b in loader] == first == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    it = iter(loader)
    assert len(it) == 3
    next(it)
    assert [b["y"].tolist() for b in iter(loader)] == first


def test_getitems_fetches_whole_batches():
    class Batched(Samples):
        def __getitems__(self, indices):
            return [{"y": -i} for i in indices]

    out = list(D.DataLoader(Batched(E, 5), batch_size=2))
    assert [b["y"].tolist() for b in out] == [[0, -1], [-2, -3], [-4]]


def test_no_batching_converts_numpy_arrays():
    class Arrays:
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return (np.arange(3, dtype=np.float32) + i, i)

    ours = list(D.DataLoader(Arrays(), batch_size=None))
    theirs = list(tdata.DataLoader(Arrays(), batch_size=None))
    for a, b in zip(ours, theirs):
        assert_same(a, b)


ERRORS = {
    "negative workers": {"num_workers": -1},
    "negative timeout": {"timeout": -1},
    "prefetch without workers": {"prefetch_factor": 2},
    "negative prefetch": {"num_workers": 1, "prefetch_factor": -1},
    "persistent without workers": {"persistent_workers": True},
    "sampler and shuffle": {"sampler": [0, 1], "shuffle": True},
    "batch_sampler and batch_size": {"batch_sampler": [[0]], "batch_size": 2},
    "batch_sampler and shuffle": {"batch_sampler": [[0]], "shuffle": True},
    "batch_sampler and sampler": {"batch_sampler": [[0]], "sampler": [0]},
    "batch_sampler and drop_last": {"batch_sampler": [[0]], "drop_last": True},
    "no batching and drop_last": {"batch_size": None, "drop_last": True},
    "context without workers": {"multiprocessing_context": "fork"},
    "unknown start method": {"num_workers": 1, "multiprocessing_context": "threads"},
    "context of a wrong type": {"num_workers": 1, "multiprocessing_context": 3},
}


@pytest.mark.parametrize("name", ERRORS)
def test_argument_errors_are_torchs(name):
    with pytest.raises(Exception) as expected:
        tdata.DataLoader(Samples(torch), **ERRORS[name])
    with pytest.raises(Exception) as got:
        D.DataLoader(Samples(E), **ERRORS[name])
    assert got.type is expected.type and str(got.value) == str(expected.value)


@pytest.mark.parametrize("kwargs", [{"shuffle": True}, {"sampler": [0]},
                                    {"batch_sampler": [[0]]}])
def test_iterable_dataset_refuses_samplers_as_torch(kwargs):
    with pytest.raises(ValueError) as expected:
        tdata.DataLoader(stream(tdata.IterableDataset, torch, 2), **kwargs)
    with pytest.raises(ValueError) as got:
        D.DataLoader(stream(D.IterableDataset, E, 2), **kwargs)
    assert str(got.value) == str(expected.value)


def test_iterable_dataset_accepts_shuffle_false():
    assert len(list(D.DataLoader(stream(D.IterableDataset, E, 2), shuffle=False))) == 2


@pytest.mark.parametrize("attr", ["batch_size", "batch_sampler", "sampler", "drop_last",
                                  "dataset", "persistent_workers"])
def test_sampling_attributes_are_frozen(attr):
    with pytest.raises(ValueError) as expected:
        setattr(tdata.DataLoader(Samples(torch)), attr, None)
    with pytest.raises(ValueError) as got:
        setattr(D.DataLoader(Samples(E)), attr, None)
    assert str(got.value) == str(expected.value)
    loader = D.DataLoader(Samples(E))
    loader.num_workers = 0  # others may change
    assert loader.num_workers == 0


def test_timeout_needs_workers_as_in_torch():
    with pytest.raises(AssertionError) as expected:
        iter(tdata.DataLoader(Samples(torch), timeout=1))
    with pytest.raises(AssertionError) as got:
        iter(D.DataLoader(Samples(E), timeout=1))
    assert str(got.value) == str(expected.value)


def test_pin_memory_without_an_accelerator_warns_as_torch():
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        expected = list(tdata.DataLoader(Samples(torch, 2), pin_memory=True))
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = list(D.DataLoader(Samples(E, 2), pin_memory=True))
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    for a, b in zip(got, expected):
        assert_same(a, b)


def test_iterator_cannot_be_pickled():
    with pytest.raises(NotImplementedError):
        pickle.dumps(iter(D.DataLoader(Samples(E))))


def test_defaults_are_torchs():
    ours, theirs = D.DataLoader(Samples(E)), tdata.DataLoader(Samples(torch))
    for attr in ["batch_size", "num_workers", "pin_memory", "drop_last", "timeout",
                 "prefetch_factor", "persistent_workers", "in_order", "multiprocessing_context"]:
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert type(ours.sampler).__name__ == type(theirs.sampler).__name__ == "SequentialSampler"
    assert ours.collate_fn is D.default_collate
    assert D.DataLoader(Samples(E), batch_size=None).collate_fn is D.default_convert
    assert D.DataLoader(Samples(E), num_workers=2).prefetch_factor == 2
    assert isinstance(D.DataLoader(Samples(E), shuffle=True).sampler, D.RandomSampler)


def order(loader):
    return [i for batch in loader for i in batch["y"].tolist()]


def test_shuffle_follows_manual_seed():
    loader = D.DataLoader(Samples(E, 40), batch_size=8, shuffle=True)
    E.manual_seed(123)
    first = order(loader)
    second = order(loader)
    E.manual_seed(123)
    assert order(loader) == first and first != second
    assert sorted(first) == list(range(40))


def test_shuffle_draws_the_base_seed_then_the_samplers_seed():
    # as torch: each iter() draws the workers' base seed from the default generator, then
    # the RandomSampler seeds its own generator with the next draw
    E.manual_seed(7)
    got = order(D.DataLoader(Samples(E, 12), batch_size=5, shuffle=True))
    E.manual_seed(7)
    E.empty((), dtype=E.int64).random_()
    seed = int(E.empty((), dtype=E.int64).random_().item())
    assert got == E.randperm(12, generator=E.Generator().manual_seed(seed)).tolist()


def test_shuffle_with_a_generator():
    def run(seed):
        return order(D.DataLoader(Samples(E, 15), batch_size=4, shuffle=True,
                                  generator=E.Generator().manual_seed(seed)))

    assert run(3) == run(3) != run(4)
    g = E.Generator().manual_seed(3)
    E.empty((), dtype=E.int64).random_(generator=g)  # the base seed comes first
    assert run(3) == E.randperm(15, generator=g).tolist()


def test_shuffle_with_a_generator_ignores_the_default_generator():
    g = E.Generator()
    loader = D.DataLoader(Samples(E, 15), shuffle=True, generator=g)
    g.manual_seed(0)
    E.manual_seed(1)
    first = order(loader)
    g.manual_seed(0)
    E.manual_seed(2)
    assert order(loader) == first
