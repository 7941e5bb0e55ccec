"""``ember.cpu.amp``: torch.cpu.amp's deprecated spelling of ``ember.amp.autocast('cpu')``."""

from __future__ import annotations

import warnings
from typing import Any

from ember.amp import autocast_mode as _autocast_mode
from ember.core import bfloat16

__all__ = ["autocast"]


class autocast(_autocast_mode.autocast):  # noqa: N801 - torch's name
    """``torch.cpu.amp.autocast(args...)``: deprecated, ``ember.amp.autocast('cpu', args...)``."""

    def __init__(self, enabled: bool = True, dtype: Any = bfloat16, cache_enabled: bool = True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
