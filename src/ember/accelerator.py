"""``ember.accelerator``: the device-agnostic accelerator API of recent torch versions."""

from __future__ import annotations

from ember.core import device
from ember.core.device import cuda_available


def is_available() -> bool:
    """True when an accelerator (a CUDA device) is usable."""
    return cuda_available()


def current_accelerator(check_available: bool = False) -> device | None:
    """``device('cuda')`` when CUDA is present, else None (there is no other accelerator)."""
    return device("cuda") if cuda_available() else None


def device_count() -> int:
    from ember.core.device import device_count as count

    return count()
