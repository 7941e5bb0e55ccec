"""torch.utils.data's samplers: the orders in which a DataLoader reads a map-style dataset,
and BatchSampler, which groups any of them into batches of indices. The random ones draw
from Ember's generators, so ``manual_seed`` (or a ``generator``) fixes their orders."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

import ember.core as E

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]

T_co = TypeVar("T_co", covariant=True)

_CHUNK = 32  # indices drawn per randint call when sampling with replacement, as torch does


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


class Sampler(Generic[T_co]):
    """torch.utils.data.Sampler: the base of every sampler.

    A subclass provides ``__iter__`` over indices (or lists of indices, for a batch
    sampler) and, where it can, ``__len__``. There is no default ``__len__``.
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """torch.utils.data.SequentialSampler: ``0, 1, ..., len(data_source) - 1``."""

    data_source: Sized

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """torch.utils.data.RandomSampler: the indices of ``data_source`` in random order.

    Without replacement each pass is a fresh permutation (``num_samples`` beyond the
    dataset's length takes whole permutations, then part of one); with replacement,
    ``num_samples`` independent draws. Without a ``generator`` each iteration seeds a new
    one from the default generator.
    """

    data_source: Sized
    replacement: bool

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator: E.Generator | None = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        """The number of indices an iteration yields (the dataset's length by default)."""
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            seed = int(E.empty((), dtype=E.int64).random_().item())
            generator = E.Generator().manual_seed(seed)
        if self.replacement:
            for size in [_CHUNK] * (self.num_samples // _CHUNK) + [self.num_samples % _CHUNK]:
                yield from E.randint(high=n, size=(size,), dtype=E.int64,
                                     generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from E.randperm(n, generator=generator).tolist()
            yield from E.randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """torch.utils.data.SubsetRandomSampler: the given ``indices`` in random order."""

    indices: Sequence[int]

    def __init__(self, indices: Sequence[int], generator: E.Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in E.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """torch.utils.data.WeightedRandomSampler: ``num_samples`` indices of ``weights``,
    each drawn with probability proportional to its weight (``multinomial``)."""

    weights: E.Tensor
    num_samples: int
    replacement: bool

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: E.Generator | None = None) -> None:
        if not _positive_int(num_samples):
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        weights_tensor = E.as_tensor(weights, dtype=E.float64)
        if weights_tensor.dim() != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        drawn = E.multinomial(self.weights, self.num_samples, self.replacement,
                              generator=self.generator)
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """torch.utils.data.BatchSampler: lists of ``batch_size`` indices from ``sampler``
    (any iterable); the last, shorter one is dropped when ``drop_last``."""

    def __init__(self, sampler: Sampler[Any] | Iterable[Any], batch_size: int,
                 drop_last: bool) -> None:
        if not _positive_int(batch_size):
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        while batch := list(itertools.islice(indices, self.batch_size)):
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return n // self.batch_size
        return -(-n // self.batch_size)
