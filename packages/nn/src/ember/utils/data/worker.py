"""A DataLoader worker process: its loop, its seeding, ``get_worker_info`` and the wrapper
that carries an exception raised in it back to the main process.

Protocol: the main process puts ``(task, indices)`` on the worker's index queue (or a
``ResumeIteration`` at the start of an epoch of persistent workers, or None to stop); the
worker puts the pickled ``(task, batch)`` on the shared result queue, where the batch may be
an ``ExceptionWrapper`` or, for an iterable dataset that ran out, an
``IterableDatasetStopIteration``. The worker pickles each result itself, so that one that
cannot be pickled comes back as an error instead of being lost (which would leave the main
process waiting for it).
"""

from __future__ import annotations

import os
import queue
import random
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler
from types import TracebackType
from typing import Any, NoReturn

import numpy as np

import ember.core as E

from .fetch import IterableFetcher, MapFetcher, make_fetcher

__all__ = ["WorkerInfo", "get_worker_info", "ExceptionWrapper"]

# How often an idle worker checks that the process that started it is still there.
PARENT_CHECK_INTERVAL = 1.0

_worker_info: WorkerInfo | None = None


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """torch.utils.data.WorkerInfo: who the current worker process is.

    ``id`` (0 to ``num_workers - 1``), ``num_workers``, ``seed`` (the base seed drawn by
    the main process plus ``id``; the worker's Python, Ember and NumPy generators are seeded
    from it) and ``dataset`` (this process's copy of the dataset).
    """

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str | None = "multiprocessing"


def get_worker_info() -> WorkerInfo | None:
    """torch.utils.data.get_worker_info: the WorkerInfo of the DataLoader worker process
    this runs in, or None in the main process.

    In a dataset's ``__iter__`` or a ``worker_init_fn`` it tells each worker which share of
    the data to read (``id``, ``num_workers``) and gives it its copy of the dataset.
    """
    return _worker_info


class KeyErrorMessage(str):
    """A message that KeyError shows as it is (KeyError shows the repr of its argument)."""

    def __repr__(self) -> str:
        return str(self)


class ExceptionWrapper:
    """An exception and its traceback as text, to raise again in another process."""

    def __init__(self, exc_info: tuple[type[BaseException] | None, BaseException | None,
                                       TracebackType | None] | None = None,
                 where: str = "in background") -> None:
        exc_type, exc, tb = sys.exc_info() if exc_info is None else exc_info
        self.exc_type: type[BaseException] = exc_type or RuntimeError
        self.exc_name = self.exc_type.__name__
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc, tb))
        self.where = where

    def reraise(self) -> NoReturn:
        """Raise the wrapped exception's type with a message naming where it was caught,
        followed by its original traceback; RuntimeError where the type cannot be built
        from a message."""
        msg: str = f"Caught {self.exc_name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)  # type: ignore[call-arg]
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


@dataclass(frozen=True)
class IterableDatasetStopIteration:
    """A worker's iterable dataset has no more samples."""

    worker_id: int


@dataclass(frozen=True)
class ResumeIteration:
    """Start a new epoch (persistent workers): restart the fetcher, acknowledge."""


def numpy_seed(base_seed: int, worker_id: int) -> np.ndarray:
    """The 128-bit seed of a worker's ``np.random``, as torch derives it: NumPy's
    SeedSequence hash of the worker id and the two halves of the base seed."""
    entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
    return np.random.SeedSequence(entropy).generate_state(4)


def _encoded(message: tuple[Any, Any], where: str) -> bytes:
    """``message`` pickled; where it cannot be, the pickling error in its place (for a
    wrapped exception whose type does not pickle, the same message under RuntimeError)."""
    try:
        return bytes(ForkingPickler.dumps(message))
    except Exception:
        task, data = message
        if isinstance(data, ExceptionWrapper):
            data.exc_type = RuntimeError
        else:
            data = ExceptionWrapper(where=where)
        return bytes(ForkingPickler.dumps((task, data)))


def _seed_generators(base_seed: int, worker_id: int) -> int:
    seed = base_seed + worker_id
    random.seed(seed)
    E.manual_seed(seed)
    np.random.seed(numpy_seed(base_seed, worker_id))
    return seed


def worker_loop(dataset: Any, index_queue: Any, data_queue: Any, done_event: Any,
                auto_collation: bool, collate_fn: Callable[[Any], Any], drop_last: bool,
                base_seed: int, init_fn: Callable[[int], None] | None, worker_id: int,
                num_workers: int) -> None:
    """The body of worker process ``worker_id``: seed, run ``init_fn``, then fetch the
    batches asked for until told to stop (or until the main process is gone)."""
    global _worker_info
    where = f"in DataLoader worker process {worker_id}"
    try:
        E.set_num_threads(1)
        seed = _seed_generators(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)

        def start() -> MapFetcher | IterableFetcher | ExceptionWrapper:
            try:
                return make_fetcher(dataset, auto_collation, collate_fn, drop_last)
            except Exception:
                return ExceptionWrapper(where=where)

        init_error = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
        except Exception:
            init_error = ExceptionWrapper(where=where)  # the answer to every task
        fetcher = init_error or start()
        stream_ended = False
        parent = os.getppid()
        while os.getppid() == parent:
            try:
                message = index_queue.get(timeout=PARENT_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if message is None:
                break
            if isinstance(message, ResumeIteration):
                data_queue.put(_encoded((message, None), where))
                stream_ended = False
                fetcher = init_error or start()  # an iterable dataset starts over
                continue
            if done_event.is_set() or stream_ended:
                continue
            task, index = message
            data: Any
            if isinstance(fetcher, ExceptionWrapper):
                data = fetcher
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if isinstance(fetcher, IterableFetcher):
                        data, stream_ended = IterableDatasetStopIteration(worker_id), True
                    else:
                        data = ExceptionWrapper(where=where)
                except Exception:
                    data = ExceptionWrapper(where=where)
            data_queue.put(_encoded((task, data), where))
            del data, index, message
    except KeyboardInterrupt:
        pass  # the main process handles the interrupt and shuts the workers down
    if done_event.is_set():
        # the main process reads no more: exit without waiting to flush what is unread
        data_queue.cancel_join_thread()
        data_queue.close()
