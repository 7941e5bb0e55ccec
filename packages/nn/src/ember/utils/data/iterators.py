"""The iterators a DataLoader returns: what one pass over it keeps (the sampler's
iterator, the workers' base seed, the count of batches yielded), and loading in the main
process."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, NoReturn

import ember.core as E

from .fetch import make_fetcher

if TYPE_CHECKING:
    from .dataloader import DataLoader


class BaseDataLoaderIter:
    """One pass over a DataLoader: what single- and multi-process loading share."""

    def __init__(self, loader: DataLoader[Any]) -> None:
        self._dataset = loader.dataset
        self._is_iterable = loader._is_iterable
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be "
                          f"used as the device,ignore pin_memory_device="
                          f"'{loader.pin_memory_device}'.", stacklevel=3)
        if loader.pin_memory and not E.cuda_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(E.empty((), dtype=E.int64).random_(
            generator=loader.generator).item())
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self) -> BaseDataLoaderIter:
        return self

    def _reset(self, loader: DataLoader[Any], first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self) -> Any:
        return next(self._sampler_iter)  # may raise StopIteration

    def _next_data(self) -> Any:
        raise NotImplementedError

    def __next__(self) -> Any:
        data = self._next_data()
        self._num_yielded += 1
        reported = self._IterableDataset_len_called
        if self._is_iterable and reported is not None and self._num_yielded > reported:
            message = (f"Length of IterableDataset {self._dataset} was reported to be "
                       f"{reported}(when accessing len(dataloader)), but {self._num_yielded} "
                       "samples have been fetched. ")
            if self._num_workers > 0:
                message += ("For multiprocessing data-loading, this could be caused by not "
                            "properly configuring the IterableDataset replica at each worker.")
            warnings.warn(message, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self) -> NoReturn:
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class SingleProcessDataLoaderIter(BaseDataLoaderIter):
    """Loading in the main process (``num_workers=0``)."""

    def __init__(self, loader: DataLoader[Any]) -> None:
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._dataset_fetcher = make_fetcher(self._dataset, self._auto_collation,
                                             self._collate_fn, self._drop_last)

    def _next_data(self) -> Any:
        index = self._next_index()  # may raise StopIteration
        return self._dataset_fetcher.fetch(index)  # may raise StopIteration
