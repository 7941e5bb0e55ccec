"""``ember.cpu``: the CPU device module, as ``torch.cpu`` spells it."""

from __future__ import annotations

from typing import Any

from . import amp

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize"]


def is_available() -> bool:
    """Always True: the CPU is always there."""
    return True


def device_count() -> int:
    """1: torch counts the CPU as one device."""
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device: Any = None) -> None:
    """A no-op: CPU work is done when its call returns."""
