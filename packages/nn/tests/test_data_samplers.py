"""The samplers against torch's: orders where they are deterministic, lengths, the structure
of random orders (permutations, chunks, ranges) and that they draw from Ember's generators
(so a seed fixes them), and the argument errors with torch's types and messages."""

from __future__ import annotations

import pytest
import torch.utils.data as tdata

import ember.core as E
import ember.utils.data as D


def raises_as_torch(ours, theirs):
    with pytest.raises(Exception) as expected:
        theirs()
    with pytest.raises(Exception) as got:
        ours()
    assert got.type is expected.type
    assert str(got.value) == str(expected.value)


def seeded(seed):
    return E.Generator().manual_seed(seed)


def test_sampler_base_refuses_iteration():
    raises_as_torch(lambda: iter(D.Sampler()), lambda: iter(tdata.Sampler()))


@pytest.mark.parametrize("n", [0, 1, 7])
def test_sequential_sampler(n):
    ours, theirs = D.SequentialSampler(range(n)), tdata.SequentialSampler(range(n))
    assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_random_sampler_is_a_permutation_from_randperm():
    sampler = D.RandomSampler(range(10), generator=seeded(4))
    order = list(sampler)
    assert sorted(order) == list(range(10)) and len(sampler) == 10
    assert order == E.randperm(10, generator=seeded(4)).tolist()


def test_random_sampler_draws_a_new_order_each_pass():
    sampler = D.RandomSampler(range(50), generator=seeded(0))
    assert list(sampler) != list(sampler)


@pytest.mark.parametrize("num_samples", [3, 10, 23, 30])
def test_random_sampler_more_or_fewer_samples_than_the_dataset(num_samples):
    sampler = D.RandomSampler(range(10), num_samples=num_samples, generator=seeded(2))
    order = list(sampler)
    assert len(order) == len(sampler) == len(tdata.RandomSampler(range(10),
                                                                 num_samples=num_samples))
    g = seeded(2)
    expected = [i for _ in range(num_samples // 10) for i in E.randperm(10, generator=g).tolist()]
    expected += E.randperm(10, generator=g).tolist()[:num_samples % 10]
    assert order == expected


@pytest.mark.parametrize("num_samples", [5, 32, 70])
def test_random_sampler_with_replacement_draws_randint_in_chunks_of_32(num_samples):
    sampler = D.RandomSampler(range(6), replacement=True, num_samples=num_samples,
                              generator=seeded(9))
    order = list(sampler)
    assert len(order) == num_samples and all(0 <= i < 6 for i in order)
    g = seeded(9)
    chunks = [32] * (num_samples // 32) + [num_samples % 32]
    expected = [i for size in chunks
                for i in E.randint(high=6, size=(size,), dtype=E.int64, generator=g).tolist()]
    assert order == expected


def test_random_sampler_without_generator_follows_manual_seed():
    sampler = D.RandomSampler(range(30))
    E.manual_seed(5)
    first = list(sampler)
    E.manual_seed(5)
    assert list(sampler) == first
    E.manual_seed(5)
    seed = int(E.empty((), dtype=E.int64).random_().item())
    assert first == E.randperm(30, generator=seeded(seed)).tolist()


def test_random_sampler_length_follows_the_dataset():
    data = [1, 2, 3]
    sampler = D.RandomSampler(data)
    data.append(4)
    assert len(sampler) == 4 and sorted(sampler) == [0, 1, 2, 3]


@pytest.mark.parametrize("kwargs", [
    {"replacement": 1}, {"num_samples": 0}, {"num_samples": -2}, {"num_samples": 2.0},
])
def test_random_sampler_errors(kwargs):
    raises_as_torch(lambda: D.RandomSampler(range(3), **kwargs),
                    lambda: tdata.RandomSampler(range(3), **kwargs))


def test_random_sampler_of_an_empty_dataset():
    raises_as_torch(lambda: D.RandomSampler([]), lambda: tdata.RandomSampler([]))


def test_subset_random_sampler():
    indices = [10, 20, 30, 40, 50]
    sampler = D.SubsetRandomSampler(indices, generator=seeded(1))
    order = list(sampler)
    assert sorted(order) == indices and len(sampler) == 5
    assert order == [indices[i] for i in E.randperm(5, generator=seeded(1)).tolist()]


def test_subset_random_sampler_follows_manual_seed():
    sampler = D.SubsetRandomSampler(list(range(40)))
    E.manual_seed(8)
    first = list(sampler)
    E.manual_seed(8)
    assert list(sampler) == first


def test_weighted_random_sampler_with_replacement():
    weights = [0.0, 1.0, 0.0, 3.0]
    sampler = D.WeightedRandomSampler(weights, 200, generator=seeded(0))
    order = list(sampler)
    assert len(order) == len(sampler) == 200 and set(order) <= {1, 3}
    assert order.count(3) > order.count(1)
    expected = E.multinomial(E.as_tensor(weights, dtype=E.float64), 200, True,
                             generator=seeded(0)).tolist()
    assert order == expected
    assert sampler.weights.dtype == E.float64


def test_weighted_random_sampler_without_replacement():
    order = list(D.WeightedRandomSampler([0.9, 0.4, 0.05, 0.2, 0.3, 0.1], 6, replacement=False,
                                         generator=seeded(3)))
    assert sorted(order) == list(range(6))


@pytest.mark.parametrize("args, kwargs", [
    (([1.0, 2.0], 0), {}), (([1.0, 2.0], True), {}), (([1.0, 2.0], 1.5), {}),
    (([1.0, 2.0], 2), {"replacement": 0}), (([[1.0, 2.0]], 2), {}),
])
def test_weighted_random_sampler_errors(args, kwargs):
    raises_as_torch(lambda: D.WeightedRandomSampler(*args, **kwargs),
                    lambda: tdata.WeightedRandomSampler(*args, **kwargs))


@pytest.mark.parametrize("n", [0, 1, 9, 10, 12])
@pytest.mark.parametrize("batch_size", [1, 3, 5])
@pytest.mark.parametrize("drop_last", [False, True])
def test_batch_sampler_is_torchs(n, batch_size, drop_last):
    ours = D.BatchSampler(D.SequentialSampler(range(n)), batch_size, drop_last)
    theirs = tdata.BatchSampler(tdata.SequentialSampler(range(n)), batch_size, drop_last)
    assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_batch_sampler_over_any_iterable():
    assert list(D.BatchSampler(iter("abcde"), 2, False)) == [["a", "b"], ["c", "d"], ["e"]]


@pytest.mark.parametrize("batch_size, drop_last", [(0, False), (True, False), (2.0, False),
                                                   (-1, False), (2, 1), (2, None)])
def test_batch_sampler_errors(batch_size, drop_last):
    raises_as_torch(lambda: D.BatchSampler(range(3), batch_size, drop_last),
                    lambda: tdata.BatchSampler(range(3), batch_size, drop_last))


def test_batch_sampler_of_a_random_sampler_keeps_its_order():
    batches = list(D.BatchSampler(D.RandomSampler(range(7), generator=seeded(6)), 3, False))
    flat = [i for b in batches for i in b]
    assert [len(b) for b in batches] == [3, 3, 1]
    assert flat == E.randperm(7, generator=seeded(6)).tolist()

