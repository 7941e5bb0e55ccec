"""torch.utils.data's datasets: the map-style and iterable-style bases, the wrappers that
combine them (TensorDataset, StackDataset, ConcatDataset, ChainDataset, Subset) and
``random_split``."""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import ember.core as E

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """torch.utils.data.Dataset: a map from keys to samples.

    Subclasses implement ``__getitem__`` and, for the samplers and the DataLoader's
    defaults, ``__len__``; they may implement ``__getitems__(indices)`` to fetch a whole
    batch at once. There is no default ``__len__``: ``len()`` of a dataset without one
    raises TypeError, as Python does.
    """

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """torch.utils.data.IterableDataset: a stream of samples, read through ``__iter__``.

    With ``num_workers > 0`` every worker process iterates its own copy of the dataset; use
    ``get_worker_info()`` in ``__iter__`` (or in the DataLoader's ``worker_init_fn``) to give
    each copy its share of the stream. ``__iter__`` is abstract: a subclass without one
    cannot be instantiated.
    """

    def __add__(self, other: Dataset[T_co]) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple[E.Tensor, ...]]):
    """torch.utils.data.TensorDataset: sample ``i`` is ``tuple(t[i] for t in tensors)``.

    Every tensor must have the same size of the first dimension.
    """

    tensors: tuple[E.Tensor, ...]

    def __init__(self, *tensors: E.Tensor) -> None:
        if any(t.size(0) != tensors[0].size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[E.Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return int(self.tensors[0].size(0))


class StackDataset(Dataset[Any]):
    """torch.utils.data.StackDataset: datasets of one length side by side; a sample is the
    tuple of theirs (datasets given as ``*args``) or the dict of theirs (``**kwargs``)."""

    datasets: tuple[Any, ...] | dict[str, Any]

    def __init__(self, *args: Dataset[Any], **kwargs: Dataset[Any]) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or"
                             "``dict``- (via ``kwargs``) like input/output, but both types "
                             "are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args or kwargs.values())
        self._length = len(parts[0])  # type: ignore[arg-type]
        if any(len(d) != self._length for d in parts):  # type: ignore[arg-type]
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {key: d[index] for key, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list[Any]) -> list[Any]:
        """The samples at ``indices``, each part fetched with its dataset's own
        ``__getitems__`` where it has one."""
        named = isinstance(self.datasets, dict)
        parts = self.datasets.items() if isinstance(self.datasets, dict) else enumerate(
            self.datasets)
        columns: dict[Any, list[Any]] = {}
        for key, d in parts:
            if callable(getattr(d, "__getitems__", None)):
                items = d.__getitems__(indices)
                if len(items) != len(indices):
                    raise ValueError("Nested dataset's output size mismatch. "
                                     f"Expected {len(indices)}, got {len(items)}")
                columns[key] = list(items)
            else:
                columns[key] = [d[i] for i in indices]
        rows = range(len(indices))
        if named:
            return [{key: col[r] for key, col in columns.items()} for r in rows]
        return [tuple(col[r] for col in columns.values()) for r in rows]

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """torch.utils.data.ConcatDataset: map-style datasets one after another."""

    datasets: list[Dataset[T_co]]
    cumulative_sizes: list[int]

    @staticmethod
    def cumsum(sequence: Iterable[Any]) -> list[int]:
        """The running totals of the lengths of ``sequence``'s items."""
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets: Iterable[Dataset[Any]]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]

    @property
    def cummulative_sizes(self) -> list[int]:
        """The old, misspelt name of ``cumulative_sizes`` (deprecated)."""
        warnings.warn("`cummulative_sizes` attribute is renamed to `cumulative_sizes`",
                      FutureWarning, stacklevel=2)
        return self.cumulative_sizes


class ChainDataset(IterableDataset[Any]):
    """torch.utils.data.ChainDataset: iterable datasets read one after another, lazily."""

    def __init__(self, datasets: Iterable[Dataset[Any]]) -> None:
        self.datasets = datasets

    def _checked(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield d

    def __iter__(self) -> Iterator[Any]:
        for d in self._checked():
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self._checked())


class Subset(Dataset[T_co]):
    """torch.utils.data.Subset: the samples of ``dataset`` at ``indices``.

    A subclass that overrides ``__getitem__`` must override ``__getitems__`` too (the
    DataLoader fetches batches through it).
    """

    dataset: Dataset[T_co]
    indices: Sequence[int]

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices
        cls = type(self)
        if cls.__getitem__ is not Subset.__getitem__ and (
                cls.__getitems__ is Subset.__getitems__):
            raise NotImplementedError(
                f"{cls.__name__} overrides __getitem__ but not __getitems__. When "
                "subclassing Subset and overriding __getitem__, you must also override "
                "__getitems__ to ensure DataLoader works correctly with your custom logic. "
                "A simple implementation:\n\n"
                "def __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list[T_co]:
        """The samples at ``indices``, through the dataset's ``__getitems__`` if it has one."""
        keys = [self.indices[i] for i in indices]
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(keys)  # type: ignore[attr-defined,no-any-return]
        return [self.dataset[k] for k in keys]

    def __len__(self) -> int:
        return len(self.indices)


def _lengths_of_fractions(fractions: Sequence[float], n: int) -> list[int]:
    """floor(f * n) for each fraction, then the remainder handed out one by one from the
    first split on."""
    for i, frac in enumerate(fractions):
        if not 0 <= frac <= 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
    lengths = [math.floor(n * frac) for frac in fractions]
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                          "empty dataset.", stacklevel=3)
    return lengths


def random_split(dataset: Dataset[T_co], lengths: Sequence[int | float],
                 generator: E.Generator | None = E.default_generator) -> list[Subset[T_co]]:
    """torch.utils.data.random_split: split ``dataset`` at random into non-overlapping
    Subsets of the given ``lengths``.

    ``lengths`` are sizes, or fractions summing to 1: then each split gets
    ``floor(frac * len(dataset))`` samples and what is left is handed out one at a time,
    round robin from the first split. The order comes from ``randperm`` drawn from
    ``generator``.
    """
    n = len(dataset)  # type: ignore[arg-type]
    total = sum(lengths)
    sizes: Sequence[Any] = (_lengths_of_fractions(lengths, n)
                            if math.isclose(total, 1) and total <= 1 else lengths)
    if sum(sizes) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = E.randperm(sum(sizes), generator=generator).tolist()
    ends = itertools.accumulate(sizes)
    return [Subset(dataset, order[end - size:end]) for end, size in zip(ends, sizes)]
