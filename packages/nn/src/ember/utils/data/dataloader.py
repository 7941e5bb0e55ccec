"""torch.utils.data.DataLoader: a dataset, a sampler and a collate function made into an
iterable of batches, loaded in the main process or by worker processes."""

from __future__ import annotations

import math
import multiprocessing
import multiprocessing.context
import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

import ember.core as E

from .collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset
from .iterators import BaseDataLoaderIter as _BaseDataLoaderIter
from .iterators import SingleProcessDataLoaderIter as _SingleProcessDataLoaderIter
from .multiprocess_iterator import MultiProcessingDataLoaderIter as _MultiProcessingDataLoaderIter
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from .worker import get_worker_info

# torch's dataloader module offers the collate functions and get_worker_info too
__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

T_co = TypeVar("T_co", covariant=True)

# Attributes that fix how the loader samples: torch refuses to change them afterwards.
_FROZEN = frozenset({"batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                     "persistent_workers"})


class _InfiniteConstantSampler(Sampler[None]):
    """The sampler of an iterable dataset: None, forever (the dataset decides the end)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


def _usable_cpus() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on Linux)
        return os.cpu_count()


class DataLoader(Generic[T_co]):
    """torch.utils.data.DataLoader: iterate over ``dataset`` in batches.

    Map-style datasets are read in the order of ``sampler`` (``SequentialSampler``, or
    ``RandomSampler`` with ``generator`` when ``shuffle``), grouped by ``batch_size``
    (``drop_last`` drops a short last batch) or by a custom ``batch_sampler``, and merged by
    ``collate_fn`` (``default_collate``; ``default_convert`` when ``batch_size=None``
    turns batching off). Iterable datasets are read in their own order, and take no sampler
    or shuffle.

    With ``num_workers > 0`` the batches are loaded by that many worker processes (started
    with ``multiprocessing_context``, the platform's default if None), each with
    ``prefetch_factor`` batches in flight; they come back in the sampler's order unless
    ``in_order=False``. Worker ``i`` is seeded with ``base_seed + i``, where ``base_seed``
    is drawn from ``generator`` (or the default generator) at each ``iter()``, then runs
    ``worker_init_fn(i)``. ``persistent_workers`` keeps the workers (and their copies of
    the dataset) from one epoch to the next. ``timeout`` (seconds, 0 for none) bounds the
    wait for a batch: RuntimeError beyond it. An exception in a worker is raised again in
    the main process, with the worker's traceback in its message; a worker that dies gives
    RuntimeError. ``pin_memory`` is accepted: Ember's host memory needs no pinning.
    """

    dataset: Dataset[T_co]
    batch_size: int | None
    num_workers: int
    pin_memory: bool
    drop_last: bool
    timeout: float
    sampler: Sampler[Any] | Iterable[Any]
    pin_memory_device: str
    prefetch_factor: int | None
    _initialized = False

    def __init__(self, dataset: Dataset[T_co], batch_size: int | None = 1,
                 shuffle: bool | None = None, sampler: Sampler[Any] | Iterable[Any] | None = None,
                 batch_sampler: Sampler[list[Any]] | Iterable[list[Any]] | None = None,
                 num_workers: int = 0, collate_fn: Callable[[Any], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None, generator: E.Generator | None = None,
                 *, prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        # an iterable dataset's checks come first: a custom sampler cannot work with one
        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._initialized = True
        self._IterableDataset_len_called: int | None = None
        self._iterator: _BaseDataLoaderIter | None = None
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self) -> multiprocessing.context.BaseContext | None:
        """The multiprocessing context the workers start in (None: the default one)."""
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context: Any) -> None:
        if context is not None:
            if self.num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 "loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError("multiprocessing_context option should specify a valid "
                                     f"start method in {methods!r}, but got "
                                     f"multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context "
                                "object or a string specifying the start method, but got "
                                f"multiprocessing_context={context}")
        self._multiprocessing_context = context

    def __setattr__(self, attr: str, value: Any) -> None:
        if self._initialized and attr in _FROZEN:
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(attr, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        """What the fetchers read: the batch sampler when batching, else the sampler."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self) -> _BaseDataLoaderIter:
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self) -> _BaseDataLoaderIter:
        """A new iterator per epoch; persistent workers keep one, reset for each epoch."""
        if not (self.persistent_workers and self.num_workers > 0):
            return self._get_iterator()
        if self._iterator is None:
            self._iterator = self._get_iterator()
        else:
            self._iterator._reset(self)
        return self._iterator

    def __len__(self) -> int:
        """The number of batches: the index sampler's length, or for an iterable dataset
        with ``__len__`` its length divided by ``batch_size`` (rounded up, or down with
        ``drop_last``)."""
        if not self._is_iterable:
            return len(self._index_sampler)
        length = self._IterableDataset_len_called = len(self.dataset)  # type: ignore[arg-type]
        if self.batch_size is not None:
            if self.drop_last:
                return length // self.batch_size
            return math.ceil(length / self.batch_size)
        return length

    def check_worker_number_rationality(self) -> None:
        """Warn when there are more workers than CPUs this process may use."""
        if not self.num_workers:
            return
        cpus = _usable_cpus()
        if cpus is not None and self.num_workers <= cpus:
            return
        if cpus is None:
            suggestion = ("DataLoader is not able to compute a suggested max number of worker "
                          "in current system.")
        else:
            unchecked = "" if hasattr(os, "sched_getaffinity") else (
                " (`cpuset` is not taken into account)")
            suggestion = (f"Our suggested max number of worker in current system is {cpus}"
                          f"{unchecked}, which is smaller than what this DataLoader is going "
                          "to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                      f"total. {suggestion} Please be aware that excessive worker creation "
                      "might get DataLoader running slow or even freeze, lower the worker "
                      "number to avoid potential slowness/freeze if necessary.", stacklevel=2)
