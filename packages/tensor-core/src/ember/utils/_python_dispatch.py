"""``torch.utils._python_dispatch``: the TorchDispatchMode base class and its helpers."""

from __future__ import annotations

from ember.core.dispatch_modes import (
    TorchDispatchMode,
    current_modes,
    is_in_torch_dispatch_mode,
)

__all__ = ["TorchDispatchMode", "is_in_torch_dispatch_mode", "_get_current_dispatch_mode_stack"]


def _get_current_dispatch_mode_stack() -> list[TorchDispatchMode]:
    return current_modes()
