"""``ember.amp``: automatic mixed precision, as ``torch.amp`` spells it: ``autocast`` (the
dispatcher's autocast step) and ``GradScaler``."""

from .autocast_mode import (
    autocast,
    custom_bwd,
    custom_fwd,
    is_autocast_available,
)
from .grad_scaler import GradScaler, OptState

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler",
           "OptState"]
