"""``ember.cuda.amp``: torch.cuda.amp's deprecated spellings of ``ember.amp`` for CUDA."""

from __future__ import annotations

import functools
import warnings
from typing import Any

from ember.amp import autocast_mode as _autocast_mode
from ember.amp.grad_scaler import CudaGradScaler as GradScaler
from ember.amp.grad_scaler import OptState
from ember.core import cuda_available, float16

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler",
           "OptState"]


def amp_definitely_not_available() -> bool:
    """True when CUDA is not available (autocast('cuda') then disables itself)."""
    return not cuda_available()


class autocast(_autocast_mode.autocast):  # noqa: N801 - torch's name
    """``torch.cuda.amp.autocast(args...)``: deprecated, ``ember.amp.autocast('cuda', args...)``."""

    def __init__(self, enabled: bool = True, dtype: Any = float16, cache_enabled: bool = True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


def custom_fwd(fwd: Any = None, *, cast_inputs: Any = None) -> Any:
    """Deprecated: ``ember.amp.custom_fwd(args..., device_type='cuda')``."""
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.", FutureWarning,
                  stacklevel=2)
    return functools.partial(_autocast_mode.custom_fwd, device_type="cuda")(
        fwd=fwd, cast_inputs=cast_inputs)


def custom_bwd(bwd: Any) -> Any:
    """Deprecated: ``ember.amp.custom_bwd(args..., device_type='cuda')``."""
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.", FutureWarning,
                  stacklevel=2)
    return functools.partial(_autocast_mode.custom_bwd, device_type="cuda")(bwd)
