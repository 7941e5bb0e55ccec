"""``profile`` and ``record_function``: collect events from the dispatcher's door.

The collector is a TorchDispatchMode: each primitive it sees is timed around
``func(*args, **kwargs)`` (the modes beneath it and the kernel), and becomes a child of
the innermost open event (a ``record_function`` range, or a primitive that a mode beneath
ran others inside). A ``schedule`` decides per ``step()`` whether to record, as in torch.
"""

from __future__ import annotations

import enum
import functools
import itertools
import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from ember.core.dispatch_modes import TorchDispatchMode
from ember.core.tensor import Tensor

from .events import EventList, FunctionEvent

__all__ = ["ProfilerActivity", "ProfilerAction", "schedule", "tensorboard_trace_handler",
           "profile", "record_function"]

_ids = itertools.count()


class ProfilerActivity(enum.Enum):
    """What to measure: CPU time, and device time of ops on CUDA tensors."""

    CPU = 0
    CUDA = 1


class ProfilerAction(enum.Enum):
    """What a schedule tells the profiler to do at a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0
             ) -> Callable[[int], ProfilerAction]:
    """torch.profiler.schedule: after ``skip_first`` steps, cycles of ``wait`` idle steps,
    ``warmup`` steps recorded then dropped, and ``active`` recorded steps (the last one
    saves: ``on_trace_ready`` is called), ``repeat`` times (0: forever)."""
    if warmup < 0 or active <= 0 or wait < 0 or repeat < 0 or skip_first < 0:
        raise ValueError("Invalid profiler schedule arguments")
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        phase = step % cycle
        if phase < wait:
            return ProfilerAction.NONE
        if phase < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if phase < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False) -> Callable[[profile], None]:
    """An ``on_trace_ready`` that writes each trace into ``dir_name`` as Chrome JSON."""

    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{os.uname().nodename}_{os.getpid()}"
        name = f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json"
        path = os.path.join(dir_name, name)
        prof.export_chrome_trace(path)
        if use_gzip:
            import gzip

            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                dst.write(src.read())
            os.remove(path)

    return handler


def _now_us() -> float:
    return time.perf_counter_ns() / 1000.0


def _shapes(args: Iterable[Any]) -> list[Any]:
    return [list(a._data.shape) if isinstance(a, Tensor) else [] for a in args]


class _Collector(TorchDispatchMode):
    """The mode that times every primitive into its profile's events."""

    def __init__(self, prof: profile):
        super().__init__()
        self.prof = prof

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        prof = self.prof
        timer = prof._device_timer(args, kwargs)
        event = prof._open(f"ember::{func.name}",
                           _shapes(args) if prof.record_shapes else None, False)
        try:
            if timer is None:
                return func(*args, **(kwargs or {}))
            with timer:
                return func(*args, **(kwargs or {}))
        finally:
            prof._close(event, timer)


class _CudaTimer:
    """CUDA events around one op: its device time, read once the profile stops."""

    def __init__(self, cupy: Any):
        self.cupy = cupy
        self.start = cupy.cuda.Event()
        self.end = cupy.cuda.Event()

    def __enter__(self) -> None:
        self.start.record()

    def __exit__(self, *exc: Any) -> None:
        self.end.record()

    def elapsed_us(self) -> float:
        self.end.synchronize()
        return float(self.cupy.cuda.get_elapsed_time(self.start, self.end)) * 1000.0


class _Active(threading.local):
    def __init__(self) -> None:
        self.profiles: list[profile] = []


_active = _Active()


class profile:
    """torch.profiler.profile: a context manager that records the primitives run inside.

    ``activities``: ``ProfilerActivity.CPU`` and/or ``CUDA`` (default: both when CUDA is
    available); ``record_shapes``: keep each op's input shapes (``key_averages(
    group_by_input_shape=True)``); ``schedule`` and ``on_trace_ready``: record only the
    steps the schedule picks (advance with ``step()``). The remaining torch arguments
    (``profile_memory``, ``with_stack``, ``with_flops``, ``with_modules``) are accepted.
    """

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[[profile], Any] | None = None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config: Any = None,
                 use_cuda: bool | None = None, **kwargs: Any):
        if activities is None:
            from ember.core.device import cuda_available

            activities = [ProfilerActivity.CPU] + (
                [ProfilerActivity.CUDA] if use_cuda or (use_cuda is None and cuda_available())
                else [])
        self.activities = set(activities)
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.step_num = 0
        self._events: list[FunctionEvent] = []
        self._timers: list[tuple[FunctionEvent, _CudaTimer]] = []
        self._open_stack: list[FunctionEvent] = []
        self._collector: _Collector | None = None
        self._action = ProfilerAction.RECORD if schedule is None else schedule(0)
        self._thread = threading.get_ident()

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> None:
        if self._action is not ProfilerAction.NONE:
            self._begin()

    def stop(self) -> None:
        recording = self._collector is not None
        self._end()
        if recording and self._action in (ProfilerAction.RECORD,
                                          ProfilerAction.RECORD_AND_SAVE):
            self._ready()

    def step(self) -> None:
        """Advance the schedule by one step (one iteration of a training loop)."""
        if self.schedule is None:
            return
        previous = self._action
        self.step_num += 1
        self._action = self.schedule(self.step_num)
        if previous is ProfilerAction.RECORD_AND_SAVE:
            self._end()
            self._ready()
        if previous is ProfilerAction.WARMUP and self._action is not ProfilerAction.WARMUP:
            self._discard()  # warm-up steps are not reported
        if self._action is ProfilerAction.NONE:
            self._end()
        elif self._collector is None:
            self._begin()

    def _begin(self) -> None:
        if self._collector is None:
            self._discard()
            self._collector = _Collector(self)
            self._collector.__enter__()
            _active.profiles.append(self)

    def _end(self) -> None:
        if self._collector is not None:
            self._collector.__exit__(None, None, None)
            self._collector = None
            _active.profiles.remove(self)
            for event, timer in self._timers:
                event.own_device_time = timer.elapsed_us()
            self._timers = []

    def _ready(self) -> None:
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _discard(self) -> None:
        self._events = []
        self._timers = []
        self._open_stack = []

    # ------------------------------------------------------------------ events
    def _open(self, name: str, shapes: list[Any] | None, annotation: bool) -> FunctionEvent:
        event = FunctionEvent(next(_ids), name, threading.get_ident(), _now_us(), 0.0, shapes,
                              annotation)
        if self._open_stack:
            parent = self._open_stack[-1]
            event.cpu_parent = parent
            parent.cpu_children.append(event)
        self._open_stack.append(event)
        return event

    def _close(self, event: FunctionEvent, timer: _CudaTimer | None = None) -> None:
        event.end_us = _now_us()
        if self._open_stack and self._open_stack[-1] is event:
            self._open_stack.pop()
        self._events.append(event)
        if timer is not None:
            event.device_type = "cuda"
            self._timers.append((event, timer))

    def _device_timer(self, args: tuple[Any, ...], kwargs: dict[str, Any] | None
                      ) -> _CudaTimer | None:
        if ProfilerActivity.CUDA not in self.activities:
            return None
        dev = (kwargs or {}).get("device")
        for a in args:
            if isinstance(a, Tensor):
                dev = a.device
                break
        if dev is None or getattr(dev, "type", None) != "cuda":
            return None
        from ember.core.device import array_module

        return _CudaTimer(array_module(dev))

    # ------------------------------------------------------------------ results
    def events(self) -> EventList:
        """Every event, in the order they ended."""
        return EventList(self._events, "cuda" if ProfilerActivity.CUDA in self.activities
                         else None)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0
                     ) -> EventList:
        """The events averaged by name (and input shapes): what ``table`` prints."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> None:
        self.events().export_chrome_trace(path)

    @property
    def self_cpu_time_total(self) -> float:
        return self.events().self_cpu_time_total


class record_function:
    """torch.profiler.record_function: a named range in the active profiles' events,
    as a context manager or a decorator."""

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self._events: list[tuple[profile, FunctionEvent]] = []

    def __enter__(self) -> record_function:
        self._events = [(p, p._open(self.name, None, True)) for p in _active.profiles]
        return self

    def __exit__(self, *exc: Any) -> None:
        for prof, event in reversed(self._events):
            prof._close(event)
        self._events = []

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapper
