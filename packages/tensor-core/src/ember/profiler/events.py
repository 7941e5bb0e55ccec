"""The profiler's events, their averages by name, and torch's table of them."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

__all__ = ["FunctionEvent", "FunctionEventAvg", "EventList", "format_time"]


def format_time(time_us: float) -> str:
    """torch's time format: seconds, milliseconds or microseconds, three decimals."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _share(time_us: float, total_us: float) -> str:
    return "0.00%" if total_us == 0 else f"{time_us / total_us * 100.0:.2f}%"


class _Times:
    """The ``*_str`` forms torch's events answer."""

    cpu_time_total: float
    self_cpu_time_total: float
    cpu_time: float
    device_time_total: float
    self_device_time_total: float
    device_time: float

    @property
    def cpu_time_total_str(self) -> str:
        return format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self) -> str:
        return format_time(self.self_cpu_time_total)

    @property
    def cpu_time_str(self) -> str:
        return format_time(self.cpu_time)

    @property
    def device_time_total_str(self) -> str:
        return format_time(self.device_time_total)

    @property
    def self_device_time_total_str(self) -> str:
        return format_time(self.self_device_time_total)

    @property
    def device_time_str(self) -> str:
        return format_time(self.device_time)

    # torch's older spellings
    @property
    def cuda_time_total(self) -> float:
        return self.device_time_total

    @property
    def self_cuda_time_total(self) -> float:
        return self.self_device_time_total

    @property
    def cuda_time(self) -> float:
        return self.device_time


class FunctionEvent(_Times):
    """One primitive call or ``record_function`` range: when it ran, and what it contains."""

    def __init__(self, id: int, name: str, thread: int, start_us: float, end_us: float,
                 input_shapes: list[Any] | None = None, is_user_annotation: bool = False,
                 device_time: float = 0.0, device_type: str = "cpu"):
        self.id = id
        self.name = name
        self.key = name
        self.thread = thread
        self.start_us = start_us
        self.end_us = end_us
        self.input_shapes = input_shapes or []
        self.is_user_annotation = is_user_annotation
        self.own_device_time = device_time
        self.device_type = device_type
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.count = 1
        self.node_id = -1
        self.overload_name = ""
        self.stack: list[str] = []
        self.is_async = False
        self.is_legacy = False
        self.flops = 0

    @property
    def cpu_time_total(self) -> float:  # type: ignore[override]
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:  # type: ignore[override]
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self) -> float:  # type: ignore[override]
        return self.cpu_time_total

    @property
    def device_time_total(self) -> float:  # type: ignore[override]
        return self.own_device_time + sum(c.device_time_total for c in self.cpu_children)

    @property
    def self_device_time_total(self) -> float:  # type: ignore[override]
        return self.own_device_time

    @property
    def device_time(self) -> float:  # type: ignore[override]
        return self.device_time_total

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_str} "
                f"start_us={self.start_us:.3f} end_us={self.end_us:.3f} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg(_Times):
    """The events of one name (and input shapes, when grouped so) taken together."""

    def __init__(self, key: str, input_shapes: list[Any] | None = None):
        self.key = key
        self.input_shapes = input_shapes or []
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.is_user_annotation = False
        self.node_id = -1
        self.overload_name = ""
        self.stack: list[str] = []
        self.is_async = False
        self.is_legacy = False
        self.cpu_parent = None
        self.device_type = "cpu"
        self.flops = 0

    def add(self, event: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.device_time_total += event.device_time_total
        self.self_device_time_total += event.self_device_time_total
        self.is_user_annotation = event.is_user_annotation
        if event.device_type != "cpu":
            self.device_type = event.device_type
        return self

    @property
    def cpu_time(self) -> float:  # type: ignore[override]
        return self.cpu_time_total / max(self.count, 1)

    @property
    def device_time(self) -> float:  # type: ignore[override]
        return self.device_time_total / max(self.count, 1)

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes}>")


class EventList(list):  # type: ignore[type-arg]
    """A list of events with torch's summaries: ``key_averages``, ``table``, traces."""

    def __init__(self, events: Iterable[Any] = (), use_device: str | None = None):
        super().__init__(events)
        self.use_device = use_device

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        """One FunctionEventAvg per name (and per input shapes with
        ``group_by_input_shape``), in the order names first occur."""
        groups: dict[Any, FunctionEventAvg] = {}
        for e in self:
            key = (e.key, str(e.input_shapes)) if group_by_input_shape else e.key
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(
                    e.key, e.input_shapes if group_by_input_shape else None)
            avg.add(e)
        return EventList(groups.values(), self.use_device)

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """torch's table: one row per event, sorted by ``sort_by`` (an attribute such as
        ``cpu_time_total``, ``self_cpu_time_total``, ``cuda_time_total``, ``count``)."""
        return build_table(self, sort_by, row_limit, max_name_column_width,
                           max_shapes_column_width, header, top_level_events_only, time_unit)

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (``chrome://tracing``, Perfetto)."""
        pid = os.getpid()
        trace = [{"name": e.name, "ph": "X", "ts": e.start_us, "dur": e.cpu_time_total,
                  "pid": pid, "tid": e.thread,
                  "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                  "args": {"Input Dims": e.input_shapes,
                           **({"device duration us": e.self_device_time_total}
                              if e.self_device_time_total else {})}}
                 for e in self]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)

    def __str__(self) -> str:
        return self.table()


def build_table(events: EventList, sort_by: str | None, row_limit: int, name_width_max: int,
                shapes_width_max: int, header: str | None, top_level_only: bool,
                time_unit: str | None) -> str:
    """The rows and columns of torch's profiler table, spaced as torch spaces them."""
    if not events:
        return ""
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device")
        events = EventList(sorted(events, key=lambda e: getattr(e, attr), reverse=True),
                           events.use_device)
    has_device = any(e.self_device_time_total > 0 for e in events)
    has_shapes = any(e.input_shapes for e in events)
    name_width = min(max(len(e.key) for e in events) + 4, name_width_max)
    shapes_width = min(max(len(str(e.input_shapes)) for e in events) + 4, shapes_width_max)
    device = (events.use_device or "cuda").upper()
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_device:
        headers += [f"Self {device}", f"Self {device} %", f"{device} total",
                    f"{device} time avg"]
    headers.append("# of Calls")
    widths = [name_width] + [12] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row = "".join("{:>" + str(w) + "}  " for w in widths)
    sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    def when(us: float) -> str:
        scale = {"s": 1e6, "ms": 1e3, "us": 1.0}.get(time_unit or "")
        return format_time(us) if scale is None else f"{us / scale:.3f}{time_unit}"

    total_cpu = sum(e.self_cpu_time_total for e in events)
    total_device = sum(e.self_device_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [sep, row.format(*headers), sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if len(name) >= name_width_max - 3:
            name = name[:name_width_max - 3] + "..."
        values = [name, _share(e.self_cpu_time_total, total_cpu), when(e.self_cpu_time_total),
                  _share(e.cpu_time_total, total_cpu), when(e.cpu_time_total), when(e.cpu_time)]
        if has_device:
            values += [when(e.self_device_time_total),
                       _share(e.self_device_time_total, total_device),
                       when(e.device_time_total), when(e.device_time)]
        values.append(e.count)
        if has_shapes:
            shapes = str(e.input_shapes)
            values.append(shapes if len(shapes) <= shapes_width_max else
                          shapes[:shapes_width_max - 3] + "...")
        lines.append(row.format(*values))
    lines.append(sep)
    lines.append(f"Self CPU time total: {when(total_cpu)}")
    if has_device:
        lines.append(f"Self {device} time total: {when(total_device)}")
    return "\n".join(lines) + "\n"
