"""The C allocator's thresholds for large arrays, raised once at import (glibc only).

NumPy takes each array's memory from malloc. glibc serves a large request (above its
mmap threshold) with a fresh mapping, whose pages the kernel faults in and zeroes one by
one on first touch, and hands freed memory at the top of the heap back to the system
(above its trim threshold). A training step allocates and frees the same large arrays
every iteration, so it would pay those page faults again on every step: torch's CPU
allocator keeps such blocks, and so does this setting (freed blocks stay in the heap for
the next step; the process's resident memory stays at its peak). ``EMBER_MALLOC=0``
leaves the allocator's settings as they are.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

__all__ = ["tune"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 << 20  # glibc's largest on 64-bit systems: bigger arrays are mapped
_TRIM_THRESHOLD = 1 << 30


def tune() -> bool:
    """Raise glibc's mmap and trim thresholds; whether they were set."""
    if os.environ.get("EMBER_MALLOC", "1") == "0":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (macOS, Windows, musl without mallopt)
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))
