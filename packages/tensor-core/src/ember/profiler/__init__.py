"""``ember.profiler``: what each primitive costs, as torch.profiler reports it.

``with ember.profiler.profile() as prof:`` records every primitive the dispatcher runs
(it is a TorchDispatchMode, so it sees exactly the calls a mode sees, those of backward
included) and every ``record_function`` range, with wall-clock CPU times and, for ops on
CUDA tensors, device times from CUDA events. ``prof.key_averages().table(sort_by=...)``
prints torch's table; ``prof.export_chrome_trace(path)`` writes a trace that
chrome://tracing and Perfetto open.
"""

from .events import EventList, FunctionEvent, FunctionEventAvg
from .profile import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "EventList", "FunctionEvent", "FunctionEventAvg"]
