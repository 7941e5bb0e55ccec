"""Loading with worker processes (``num_workers > 0``).

The main process hands out batches of indices round robin, ``prefetch_factor`` per worker
in flight, each numbered in sampler order (a task); results may come back in any order and
wait in ``_tasks`` until their turn (with ``in_order``). While it waits for a result the
main process checks, every ``STATUS_CHECK_INTERVAL``, that the workers it waits on are
alive, so a worker that dies gives an error instead of a hang.
"""

from __future__ import annotations

import atexit
import itertools
import multiprocessing
import pickle
import queue
import signal
import time
import warnings
from typing import TYPE_CHECKING, Any

from .iterators import BaseDataLoaderIter
from .worker import ExceptionWrapper, IterableDatasetStopIteration, ResumeIteration, worker_loop

if TYPE_CHECKING:
    from .dataloader import DataLoader

# How often a main process waiting for a batch checks that its workers are alive.
STATUS_CHECK_INTERVAL = 0.1
# How long shutting down waits for a worker to exit before terminating it.
JOIN_TIMEOUT = 5.0

_python_exiting = [False]


@atexit.register
def _note_python_exit() -> None:
    # at exit multiprocessing terminates the daemonic workers itself; an iterator collected
    # while the interpreter tears down must not touch its queues
    _python_exiting[0] = True


def _how_it_died(process: Any) -> str:
    code = process.exitcode
    if code is not None and code < 0:
        try:
            name = signal.strsignal(-code) or f"signal {-code}"
        except ValueError:
            name = f"signal {-code}"
        return f"DataLoader worker (pid {process.pid}) is killed by signal: {name}. "
    return (f"DataLoader worker (pid {process.pid}) exited unexpectedly with exit code {code}. "
            "Details are lost due to multiprocessing. Rerunning with num_workers=0 may give "
            "better error trace.")


class MultiProcessingDataLoaderIter(BaseDataLoaderIter):
    """One pass over a DataLoader whose batches worker processes load."""

    _shutdown = True  # until there are workers to shut down

    def __init__(self, loader: DataLoader[Any]) -> None:
        super().__init__(loader)
        self._prefetch_factor: int = loader.prefetch_factor or 0
        self._in_order = loader.in_order
        if self._num_workers <= 0:
            raise AssertionError("num_workers must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter")
        if self._prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter")
        context: Any = loader.multiprocessing_context or multiprocessing.get_context()
        self._result_queue = context.Queue()
        self._done_event = context.Event()
        self._index_queues: list[Any] = []
        self._workers: list[Any] = []
        self._workers_status: list[bool] = []
        self._shutdown = False
        for worker_id in range(self._num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()  # a worker that died must not block shutdown
            worker = context.Process(
                target=worker_loop, daemon=True,
                args=(self._dataset, index_queue, self._result_queue, self._done_event,
                      self._auto_collation, self._collate_fn, self._drop_last,
                      self._base_seed, loader.worker_init_fn, worker_id, self._num_workers))
            try:
                worker.start()
            except (TypeError, AttributeError, pickle.PicklingError):
                warnings.warn(
                    "Got pickle error when attempting to start a worker Process. This might be "
                    "because the worker Process arguments are not picklable. Python 3.14+ "
                    "changed the multiprocessing start method in non-Mac POSIX platforms to "
                    "'forkserver', which requires the worker Process arguments to be "
                    "picklable. You can also try multiprocessing.set_start_method('fork').",
                    stacklevel=3)
                raise
            self._index_queues.append(index_queue)
            self._workers.append(worker)
            self._workers_status.append(True)
        self._reset(loader, first_iter=True)

    # ----------------------------------------------------------------- epochs and tasks

    def _reset(self, loader: DataLoader[Any], first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0  # the next task to hand out
        self._rcvd_idx = 0  # the next task to return
        # task -> [worker] while it is out, [worker, result] once back early
        self._tasks: dict[int, list[Any]] = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:  # persistent workers: drop the last epoch's leftovers
            for index_queue in self._index_queues:
                index_queue.put(ResumeIteration())
            waiting = self._num_workers
            while waiting:
                task, _ = self._get_data()
                waiting -= isinstance(task, ResumeIteration)
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self) -> None:
        """Hand the sampler's next batch of indices to the next worker that takes work."""
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_cycle)
            if self._workers_status[worker_id] and (
                    self._in_order or self._workers_num_tasks[worker_id]
                    < max_tasks // sum(self._workers_status)):
                break
        else:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._tasks[self._send_idx] = [worker_id]
        self._workers_num_tasks[worker_id] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _next_data(self) -> Any:
        while True:
            # skip the tasks that never come back: those of workers whose stream ended
            while self._rcvd_idx < self._send_idx:
                entry = self._tasks.get(self._rcvd_idx)
                if entry is not None and (len(entry) == 2 or self._workers_status[entry[0]]):
                    break
                self._tasks.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            entry = self._tasks[self._rcvd_idx]
            if len(entry) == 2:  # it came back earlier
                del self._tasks[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process_data(entry[1], entry[0])
            task, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if task == self._rcvd_idx or not self._in_order:
                worker_id = self._tasks.pop(task)[0]
                if task == self._rcvd_idx:
                    self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            self._tasks[task].append(data)

    def _process_data(self, data: Any, worker_id: int) -> Any:
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    # ----------------------------------------------------------------- receiving

    def _get_data(self) -> tuple[Any, Any]:
        """The next result any worker sends, as ``(task, data)``."""
        if self._timeout > 0:
            message = self._try_get_data(self._timeout)
            if message is None:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return message
        while (message := self._try_get_data(STATUS_CHECK_INTERVAL)) is None:
            pass
        return message

    def _try_get_data(self, timeout: float) -> tuple[Any, Any] | None:
        """A result within ``timeout`` seconds, or None; RuntimeError if, meanwhile, a
        worker that was working died."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                raw = self._result_queue.get(timeout=min(STATUS_CHECK_INTERVAL, timeout))
            except queue.Empty:
                self._raise_if_a_worker_died()
                timeout = deadline - time.monotonic()
                if timeout <= 0:
                    return None
                continue
            message: tuple[Any, Any] = pickle.loads(raw)
            return message

    def _raise_if_a_worker_died(self) -> None:
        dead = [i for i, w in enumerate(self._workers)
                if self._workers_status[i] and not w.is_alive()]
        if not dead:
            return
        for worker_id in dead:
            self._mark_worker_as_unavailable(worker_id)
        pids = ", ".join(str(self._workers[i].pid) for i in dead)
        cause = RuntimeError("\n".join(_how_it_died(self._workers[i]) for i in dead))
        raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from cause

    # ----------------------------------------------------------------- shutting down

    def _mark_worker_as_unavailable(self, worker_id: int) -> None:
        """Tell worker ``worker_id`` to exit (it has no more work) and count it out."""
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        """Stop every worker: ask, wait up to ``JOIN_TIMEOUT`` each, then terminate."""
        if self._shutdown or _python_exiting[0]:
            return
        self._shutdown = True
        try:
            self._done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id)
            for worker in self._workers:
                worker.join(timeout=JOIN_TIMEOUT)
            for index_queue in self._index_queues:
                index_queue.close()
        finally:
            for worker in self._workers:
                if worker.is_alive():
                    worker.terminate()
                    worker.join(timeout=JOIN_TIMEOUT)

    def __del__(self) -> None:
        self._shutdown_workers()
