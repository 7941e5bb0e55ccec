"""``ember.autograd.profiler``: torch's older profiler spelling, over ``ember.profiler``."""

from __future__ import annotations

from typing import Any

from ember.profiler import ProfilerActivity, record_function
from ember.profiler import profile as _profile
from ember.profiler.events import EventList

__all__ = ["profile", "record_function"]


class profile(_profile):
    """torch.autograd.profiler.profile(enabled=True, use_cuda=False, record_shapes=False,
    ...): ``enabled=False`` records nothing."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False,
                 use_device: str | None = None, record_shapes: bool = False,
                 with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False,
                 use_cpu: bool = True, **kwargs: Any):
        activities = [ProfilerActivity.CPU] + (
            [ProfilerActivity.CUDA] if use_cuda or use_device == "cuda" else [])
        super().__init__(activities=activities, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops)
        self.enabled = enabled

    def start(self) -> None:
        if self.enabled:
            super().start()

    @property
    def function_events(self) -> EventList:
        return self.events()

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs: Any) -> str:
        return self.events().table(sort_by=sort_by, row_limit=row_limit, **kwargs)
