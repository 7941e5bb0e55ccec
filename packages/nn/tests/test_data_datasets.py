"""The datasets and random_split against torch's: samples, lengths, the errors (type and
message) and random_split's lengths, partition and seeding."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import ember.core as E
import ember.utils.data as D


def raises_as_torch(ours, theirs, same_message=True):
    """Both calls raise, the same exception type with the same message."""
    with pytest.raises(Exception) as expected:
        theirs()
    with pytest.raises(Exception) as got:
        ours()
    assert got.type is expected.type
    if same_message:
        assert str(got.value) == str(expected.value)


class Squares(D.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i * i


class Batched(Squares):
    """A dataset that fetches whole batches itself, and says so."""

    def __getitems__(self, indices):
        return [("batched", i * i) for i in indices]


class Stream(D.IterableDataset):
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return len(self.items)


def test_dataset_base_refuses_getitem():
    raises_as_torch(lambda: D.Dataset()[0], lambda: tdata.Dataset()[0])


def test_iterable_dataset_without_iter_cannot_be_made():
    raises_as_torch(type("Incomplete", (D.IterableDataset,), {}),
                    type("Incomplete", (tdata.IterableDataset,), {}))


def test_dataset_has_no_default_len():
    with pytest.raises(TypeError):
        len(D.Dataset())


def test_tensor_dataset():
    x, y = E.arange(12).reshape(4, 3), E.arange(4) * 10
    ds = D.TensorDataset(x, y)
    assert len(ds) == 4
    a, b = ds[2]
    assert a.tolist() == [6, 7, 8] and b.item() == 20
    first, second = ds[1:3]
    assert tuple(first.shape) == (2, 3) and second.tolist() == [10, 20]


def test_tensor_dataset_size_mismatch():
    raises_as_torch(lambda: D.TensorDataset(E.zeros(3), E.zeros(4)),
                    lambda: tdata.TensorDataset(torch.zeros(3), torch.zeros(4)))


def test_stack_dataset_of_tuples_and_of_dicts():
    a, b = Squares(3), D.TensorDataset(E.arange(3))
    assert D.StackDataset(a, b)[2][0] == 4
    named = D.StackDataset(sq=a, t=b)
    sample = named[1]
    assert list(sample) == ["sq", "t"] and sample["sq"] == 1 and sample["t"][0].item() == 1
    assert len(named) == 3


def test_stack_dataset_getitems_uses_the_parts_getitems():
    ours = D.StackDataset(Squares(4), Batched(4)).__getitems__([3, 1])
    assert ours == [(9, ("batched", 9)), (1, ("batched", 1))]
    named = D.StackDataset(x=Batched(4), y=Squares(4)).__getitems__([2])
    assert named == [{"x": ("batched", 4), "y": 4}]


def test_stack_dataset_refuses_a_short_batch():
    class Short(Squares):
        def __getitems__(self, indices):
            return []

    class TorchShort(tdata.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return i

        def __getitems__(self, indices):
            return []

    raises_as_torch(lambda: D.StackDataset(Short(4)).__getitems__([1, 2]),
                    lambda: tdata.StackDataset(TorchShort()).__getitems__([1, 2]))


@pytest.mark.parametrize("call", [
    lambda S: S(),
    lambda S: S(range(2), b=range(2)),
    lambda S: S(range(2), range(3)),
    lambda S: S(a=range(2), b=range(3)),
])
def test_stack_dataset_errors(call):
    raises_as_torch(lambda: call(D.StackDataset), lambda: call(tdata.StackDataset))


def test_concat_dataset_indexes_like_torchs():
    parts = [range(3), range(10, 12), range(0), range(20, 24)]
    ours, theirs = D.ConcatDataset(parts), tdata.ConcatDataset(parts)
    assert len(ours) == len(theirs) == 9
    assert ours.cumulative_sizes == theirs.cumulative_sizes
    assert [ours[i] for i in range(-9, 9)] == [theirs[i] for i in range(-9, 9)]
    raises_as_torch(lambda: ours[-10], lambda: theirs[-10])
    raises_as_torch(lambda: ours[9], lambda: theirs[9])


def test_concat_dataset_errors():
    raises_as_torch(lambda: D.ConcatDataset([]), lambda: tdata.ConcatDataset([]))
    torch_stream = type("Stream", (tdata.IterableDataset,), {"__iter__": lambda s: iter([])})
    raises_as_torch(lambda: D.ConcatDataset([Stream([1])]),
                    lambda: tdata.ConcatDataset([torch_stream()]))


def test_adding_datasets():
    both = Squares(2) + Squares(3)
    assert isinstance(both, D.ConcatDataset) and [both[i] for i in range(5)] == [0, 1, 0, 1, 4]
    chained = Stream([1, 2]) + Stream([3])
    assert isinstance(chained, D.ChainDataset) and list(chained) == [1, 2, 3]


def test_concat_dataset_old_name_warns():
    ds = D.ConcatDataset([range(2)])
    with pytest.warns(FutureWarning, match="renamed to `cumulative_sizes`"):
        assert ds.cummulative_sizes == [2]


def test_chain_dataset():
    ds = D.ChainDataset([Stream([1, 2]), Stream([]), Stream([3])])
    assert list(ds) == [1, 2, 3] and list(ds) == [1, 2, 3]
    assert len(ds) == 3


def test_chain_dataset_refuses_map_style_datasets_when_read():
    ds = D.ChainDataset([Stream([1]), Squares(2)])
    torch_ds = tdata.ChainDataset([Squares(2)])
    raises_as_torch(lambda: list(ds), lambda: list(torch_ds))
    raises_as_torch(lambda: len(ds), lambda: len(torch_ds))


def test_subset():
    sub = D.Subset(Squares(10), [9, 2, 4])
    assert len(sub) == 3 and sub[0] == 81 and sub[-1] == 16
    assert sub.__getitems__([2, 0]) == [16, 81]
    assert D.Subset(Batched(10), [5, 6]).__getitems__([1]) == [("batched", 36)]


def test_subset_with_a_list_index_asks_the_dataset_once():
    class Lists(Squares):
        def __getitem__(self, i):
            return ("list", i) if isinstance(i, list) else super().__getitem__(i)

    assert D.Subset(Lists(10), [7, 8, 9])[[0, 2]] == ("list", [7, 9])


def test_subset_subclass_must_override_getitems():
    def bad(base):
        return type("Bad", (base,), {"__getitem__": lambda self, idx: 0})

    raises_as_torch(lambda: bad(D.Subset)(range(3), [0]), lambda: bad(tdata.Subset)(range(3), [0]))
    fixed = type("Fixed", (D.Subset,), {"__getitem__": lambda self, idx: 0,
                                         "__getitems__": lambda self, indices: [0]})
    assert fixed(range(3), [0])[0] == 0


SPLITS = [
    (10, [3, 7]), (10, [0.3, 0.7]), (30, [0.3, 0.3, 0.4]), (11, [0.5, 0.5]),
    (7, [0.1, 0.1, 0.8]), (100, [0.33, 0.33, 0.34]), (5, [0.2] * 5), (3, [0.25] * 4),
    (1, [0.5, 0.5]), (0, [1.0]), (17, [1 / 3] * 3), (10, [0.1] * 10),
]


@pytest.mark.parametrize("n, lengths", SPLITS)
def test_random_split_lengths_are_torchs(n, lengths):
    with warnings.catch_warnings(record=True) as theirs_warned:
        warnings.simplefilter("always")
        theirs = tdata.random_split(range(n), lengths, generator=torch.Generator().manual_seed(0))
    with warnings.catch_warnings(record=True) as ours_warned:
        warnings.simplefilter("always")
        ours = D.random_split(range(n), lengths, generator=E.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    assert [str(w.message) for w in ours_warned] == [str(w.message) for w in theirs_warned]
    assert all(isinstance(s, D.Subset) for s in ours)
    every = sorted(i for s in ours for i in s)
    assert every == list(range(n))


@pytest.mark.parametrize("lengths", [[3, 8], [0.5, 0.6], [1.5, -0.5], [0.5, 0.2]])
def test_random_split_errors(lengths):
    raises_as_torch(lambda: D.random_split(range(10), lengths),
                    lambda: tdata.random_split(range(10), lengths))


def test_random_split_refuses_float_lengths_that_are_no_fractions():
    # randperm's own TypeError; its message is tensor-core's, not torch's argument parser's
    raises_as_torch(lambda: D.random_split(range(10), [3.0, 7.0]),
                    lambda: tdata.random_split(range(10), [3.0, 7.0]), same_message=False)


def test_random_split_follows_randperm_of_its_generator():
    parts = D.random_split(range(10), [4, 6], generator=E.Generator().manual_seed(3))
    order = E.randperm(10, generator=E.Generator().manual_seed(3)).tolist()
    assert list(parts[0].indices) == order[:4] and list(parts[1].indices) == order[4:]


def test_random_split_default_generator_follows_manual_seed():
    E.manual_seed(11)
    first = [list(s) for s in D.random_split(range(20), [0.5, 0.5])]
    E.manual_seed(11)
    again = [list(s) for s in D.random_split(range(20), [0.5, 0.5])]
    assert first == again
    assert [list(s) for s in D.random_split(range(20), [0.5, 0.5])] != first


def test_random_split_subsets_read_the_dataset():
    ds = D.TensorDataset(E.as_tensor(np.arange(8) * 3))
    for part in D.random_split(ds, [5, 3], generator=E.Generator().manual_seed(1)):
        for k, i in enumerate(part.indices):
            assert part[k][0].item() == 3 * i
