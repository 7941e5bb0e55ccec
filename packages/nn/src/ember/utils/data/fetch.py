"""How one batch (or one sample) is read from a dataset, the same in the main process and in
a worker: map-style datasets by index, iterable ones by advancing their iterator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .dataset import IterableDataset


class MapFetcher:
    """Reads a map-style dataset: a list of indices gives the collated samples (through
    the dataset's ``__getitems__`` where it has one), a single index its sample."""

    def __init__(self, dataset: Any, auto_collation: bool,
                 collate_fn: Callable[[Any], Any]) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, index: Any) -> Any:
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems:
            return self.collate_fn(getitems(index))
        return self.collate_fn([self.dataset[i] for i in index])


class IterableFetcher:
    """Reads an iterable dataset through one iterator: as many samples as the batch of
    indices is long (the indices themselves are placeholders), or one. Raises StopIteration
    once the stream is spent, and for a short last batch when ``drop_last``."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[[Any], Any],
                 drop_last: bool) -> None:
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        samples = []
        for _ in index:
            try:
                samples.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not samples or (self.drop_last and len(samples) < len(index)):
            raise StopIteration
        return self.collate_fn(samples)


def make_fetcher(dataset: Any, auto_collation: bool, collate_fn: Callable[[Any], Any],
                 drop_last: bool) -> MapFetcher | IterableFetcher:
    """The fetcher for ``dataset``'s kind (iterating an IterableDataset starts here)."""
    if isinstance(dataset, IterableDataset):
        return IterableFetcher(dataset, auto_collation, collate_fn, drop_last)
    return MapFetcher(dataset, auto_collation, collate_fn)
