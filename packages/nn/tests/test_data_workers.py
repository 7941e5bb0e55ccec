"""DataLoader with worker processes: the same batches as in the main process (same order and
values), worker_init_fn, get_worker_info and the workers' seeds, IterableDataset sharding
against torch's, reproducible shuffling, prefetching, persistent workers, shutdown and
timeouts. Every test runs under a watchdog, so that a regression that hangs fails instead of
hanging the suite (test_data_worker_errors.py has the failing workers)."""

from __future__ import annotations

import dataclasses
import faulthandler
import gc
import math
import os
import random

import numpy as np
import pytest
import torch.utils.data as tdata
from torch.utils.data._utils.worker import _generate_state

import ember.core as E
import ember.utils.data as D
from ember.utils.data.worker import WorkerInfo

HANG_LIMIT_S = 120


@pytest.fixture(autouse=True)
def no_hang():
    faulthandler.dump_traceback_later(HANG_LIMIT_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def assert_equal(ours, expected):
    """Two results of Ember's DataLoader are equal: same containers, and tensors of the
    same shape, dtype and values."""
    assert type(ours) is type(expected)
    if isinstance(expected, E.Tensor):
        assert ours.shape == expected.shape and ours.dtype == expected.dtype
        np.testing.assert_array_equal(ours.numpy(), expected.numpy())
    elif isinstance(expected, np.ndarray):
        np.testing.assert_array_equal(ours, expected)
    elif isinstance(expected, dict):
        assert list(ours) == list(expected)
        for key in expected:
            assert_equal(ours[key], expected[key])
    elif isinstance(expected, (list, tuple)):
        assert len(ours) == len(expected)
        for a, b in zip(ours, expected):
            assert_equal(a, b)
    else:
        assert ours == expected


class Mixed(D.Dataset):
    """Samples of several dtypes and layouts, to cross process boundaries."""

    def __init__(self, n=11):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        grid = E.arange(6, dtype=E.float64).reshape(2, 3) * i
        return {"i": i, "f16": E.full((2,), i, dtype=E.float16), "t": grid.t(),
                "mask": E.tensor([i % 2 == 0, True]), "i8": E.tensor([i], dtype=E.int8),
                "name": f"n{i}", "arr": np.full(3, i, dtype=np.int32)}


CONFIGS = {
    "default": {},
    "batch 3": {"batch_size": 3},
    "batch 3 drop_last": {"batch_size": 3, "drop_last": True},
    "no batching": {"batch_size": None},
    "batch_sampler": {"batch_sampler": [[0, 1], [10], [2, 3, 4], [5]]},
    "shuffle": {"batch_size": 2, "shuffle": True, "generator": 17},
    "one worker": {"batch_size": 4, "num_workers": 1},
    "prefetch 1": {"batch_size": 2, "prefetch_factor": 1},
    "prefetch 4": {"batch_size": 2, "prefetch_factor": 4},
    "identity collate": {"batch_size": 3, "collate_fn": lambda b: b},
}


def loader_of(dataset, num_workers=0, generator=None, prefetch_factor=None, **kwargs):
    if generator is not None:
        generator = E.Generator().manual_seed(generator)
    if num_workers == 0:
        prefetch_factor = None
    return D.DataLoader(dataset, num_workers=num_workers, generator=generator,
                        prefetch_factor=prefetch_factor, **kwargs)


@pytest.mark.parametrize("name", CONFIGS)
def test_workers_deliver_the_batches_of_the_main_process(name):
    kwargs = {"num_workers": 2, **CONFIGS[name]}
    expected = list(loader_of(Mixed(), **{**kwargs, "num_workers": 0}))
    loader = loader_of(Mixed(), **kwargs)
    assert len(loader) == len(expected)
    assert_equal(list(loader), expected)


def test_more_workers_than_cpus_warns_as_torch():
    workers = len(os.sched_getaffinity(0)) + 1
    with pytest.warns(UserWarning) as expected:
        tdata.DataLoader(range(4), num_workers=workers)
    with pytest.warns(UserWarning) as got:
        loader = D.DataLoader(range(4), num_workers=workers)
    assert [str(w.message) for w in got] == [str(w.message) for w in expected]
    with pytest.warns(UserWarning, match=f"will create {workers} worker processes"):
        assert [b.item() for b in loader] == [0, 1, 2, 3]


def test_out_of_order_delivery_delivers_every_batch():
    expected = [b.tolist() for b in loader_of(range(20), batch_size=3)]
    got = [b.tolist() for b in loader_of(range(20), batch_size=3, num_workers=2, in_order=False)]
    assert sorted(got) == sorted(expected)


def test_shuffle_with_workers_follows_manual_seed():
    loader = D.DataLoader(range(30), batch_size=4, shuffle=True, num_workers=2)
    E.manual_seed(3)
    first = [b.tolist() for b in loader]
    E.manual_seed(3)
    assert [b.tolist() for b in loader] == first
    E.manual_seed(3)
    assert [b.tolist() for b in D.DataLoader(range(30), batch_size=4, shuffle=True)] == first


class Draws(D.Dataset):
    """Each sample: which worker made it, and draws from every generator a worker seeds."""

    tag = None

    def __len__(self):
        return 6

    def __getitem__(self, i):
        info = D.get_worker_info()
        return {"id": info.id, "num_workers": info.num_workers, "seed": info.seed,
                "same_dataset": info.dataset is self, "tag": self.tag,
                "threads": E.get_num_threads(), "initial_seed": E.initial_seed(),
                "ember": E.rand(2).tolist(), "python": random.random(),
                "numpy": float(np.random.rand())}


def tag_worker(worker_id):
    D.get_worker_info().dataset.tag = f"worker {worker_id}"


def test_worker_info_seeds_and_worker_init_fn():
    loader = D.DataLoader(Draws(), batch_size=None, num_workers=2, worker_init_fn=tag_worker,
                          generator=E.Generator().manual_seed(5))
    samples = list(loader)
    base = int(E.empty((), dtype=E.int64).random_(generator=E.Generator().manual_seed(5)).item())
    assert [s["id"] for s in samples] == [0, 1, 0, 1, 0, 1]
    for first in samples[:2]:  # each worker's first sample: the first draws after seeding
        seed = base + first["id"]
        assert first["seed"] == first["initial_seed"] == seed
        assert first["num_workers"] == 2 and first["same_dataset"] and first["threads"] == 1
        assert first["tag"] == f"worker {first['id']}"
        assert first["ember"] == E.rand(2, generator=E.Generator().manual_seed(seed)).tolist()
        assert first["python"] == random.Random(seed).random()
        assert first["numpy"] == np.random.RandomState(
            _generate_state(base, first["id"])).rand()
    assert D.get_worker_info() is None


def test_worker_draws_are_reproducible_and_differ_between_workers():
    def run(seed):
        E.manual_seed(seed)
        return [s["ember"] for s in D.DataLoader(Draws(), batch_size=None, num_workers=2)]

    first = run(1)
    assert run(1) == first and run(2) != first
    assert first[0] != first[1]


def test_worker_info_is_frozen_as_torchs():
    ours = WorkerInfo(id=0, num_workers=1, seed=3, dataset=None)
    theirs = tdata._utils.worker.WorkerInfo(id=0, num_workers=1, seed=3, dataset=None)
    for info in (ours, theirs):
        with pytest.raises(dataclasses.FrozenInstanceError):
            info.id = 1
    assert repr(ours) == repr(theirs)


def range_stream(data, shard_in_iter):
    """torch's IterableDataset examples: ``range(start, end)``, split between the workers
    by ``__iter__`` (example 1) or left to a worker_init_fn (example 2)."""
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        start, end = self.start, self.end
        info = data.get_worker_info()
        if shard_in_iter and info is not None:
            per_worker = math.ceil((end - start) / info.num_workers)
            start = start + info.id * per_worker
            end = min(start + per_worker, end)
        return iter(range(start, end))

    return type("RangeStream", (data.IterableDataset,), {"__init__": __init__,
                                                          "__iter__": __iter__})


def shard_in_init(data):
    def init(worker_id):
        info = data.get_worker_info()
        ds = info.dataset
        per_worker = math.ceil((ds.end - ds.start) / info.num_workers)
        ds.start = ds.start + worker_id * per_worker
        ds.end = min(ds.start + per_worker, ds.end)
    return init


STREAMS = {
    "sharded in __iter__": ((3, 7), True, False, {}),
    "sharded by worker_init_fn": ((3, 7), False, True, {}),
    "not sharded: duplicates": ((3, 7), False, False, {}),
    "uneven shards, batch 2": ((0, 11), True, False, {"batch_size": 2}),
    "uneven shards, batch 2, drop_last": ((0, 11), True, False, {"batch_size": 2,
                                                                  "drop_last": True}),
    "more workers than samples": ((0, 2), True, False, {"num_workers": 3}),
}


def _stream_batches(data, name):
    (start, end), in_iter, in_init, kwargs = STREAMS[name]
    kwargs = {"num_workers": 2, **kwargs}
    init = shard_in_init(data) if in_init else None
    loader = data.DataLoader(range_stream(data, in_iter)(start, end), worker_init_fn=init,
                             **kwargs)
    return [b.tolist() for b in loader]


@pytest.mark.filterwarnings("ignore:This DataLoader will create 3 worker processes")
@pytest.mark.parametrize("name", STREAMS)
def test_iterable_dataset_with_workers_is_torchs(name):
    assert _stream_batches(D, name) == _stream_batches(tdata, name)


def test_iterable_dataset_example_values():
    # torch's documented results of its two examples
    assert _stream_batches(D, "sharded in __iter__") == [[3], [5], [4], [6]]
    assert _stream_batches(D, "not sharded: duplicates") == [[3], [3], [4], [4], [5], [5],
                                                             [6], [6]]


def test_prefetch_factor_bounds_the_tasks_in_flight():
    for workers, prefetch in [(2, 1), (2, 3), (1, 2)]:
        it = iter(D.DataLoader(range(40), num_workers=workers, prefetch_factor=prefetch))
        assert it._tasks_outstanding == workers * prefetch
        assert [next(it).item() for _ in range(5)] == [0, 1, 2, 3, 4]
        assert it._tasks_outstanding <= workers * prefetch
        del it


def test_workers_stop_when_the_pass_ends():
    it = iter(D.DataLoader(range(6), batch_size=2, num_workers=2))
    workers = list(it._workers)
    assert all(w.is_alive() for w in workers)
    assert len(list(it)) == 3
    assert not any(w.is_alive() for w in workers)


def test_workers_stop_when_the_iterator_is_deleted():
    it = iter(D.DataLoader(range(100), num_workers=2))
    next(it)
    workers = list(it._workers)
    del it
    gc.collect()
    assert not any(w.is_alive() for w in workers)


class Pids(D.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return i, os.getpid()


def test_persistent_workers_are_reused_across_epochs():
    loader = D.DataLoader(Pids(), batch_size=3, num_workers=2, persistent_workers=True)
    epochs = [list(loader) for _ in range(3)]
    for epoch in epochs:
        assert [b[0].tolist() for b in epoch] == [[0, 1, 2], [3, 4, 5], [6, 7]]
    pids = {pid for epoch in epochs for b in epoch for pid in b[1].tolist()}
    assert len(pids) == 2 and os.getpid() not in pids
    workers = list(loader._iterator._workers)
    assert all(w.is_alive() for w in workers)
    del loader
    gc.collect()
    assert not any(w.is_alive() for w in workers)


def test_persistent_workers_after_a_pass_left_early():
    loader = D.DataLoader(range(20), batch_size=2, num_workers=2, persistent_workers=True)
    it = iter(loader)
    assert next(it).tolist() == [0, 1]
    assert [b.tolist() for b in loader] == [[i, i + 1] for i in range(0, 20, 2)]


def test_persistent_workers_restart_an_iterable_dataset():
    loader = D.DataLoader(range_stream(D, True)(0, 6), batch_size=2, num_workers=2,
                          persistent_workers=True)
    expected = [[0, 1], [3, 4], [2], [5]]
    assert [b.tolist() for b in loader] == expected
    assert [b.tolist() for b in loader] == expected


class Slow(D.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 1:
            import time

            time.sleep(1.0)
        return i


def test_timeout_raises_runtime_error_as_torch():
    it = iter(D.DataLoader(Slow(), num_workers=1, timeout=0.2))
    assert next(it).item() == 0
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0\.2 seconds$"):
        next(it)


def test_spawn_context():
    ds = D.TensorDataset(E.arange(10), E.arange(10).float() / 2)
    expected = list(D.DataLoader(ds, batch_size=3))
    got = list(D.DataLoader(ds, batch_size=3, num_workers=2, multiprocessing_context="spawn"))
    assert_equal(got, expected)
