"""Ember: PyTorch's API over NumPy and CuPy. ``import ember as torch``."""

import pkgutil

__path__ = pkgutil.extend_path(__path__, __name__)

# Importing autograd installs its steps into tensor-core's dispatcher; nn and utils.data are
# the layers above it, reachable as torch's top level has them (torch.nn, torch.utils.data).
# optim, amp (with torch.autocast and its helpers) and cpu are imported at their first use:
# a program that never steps an optimizer pays nothing for them.
import ember.utils.data  # noqa: E402,F401
from ember import (  # noqa: E402,F401
    accelerator,
    backends,
    cuda,
    func,
    library,
    nn,
    overrides,
    profiler,
)
from ember.autograd import (  # noqa: E402,F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from ember.core import *  # noqa: E402,F403
from ember.core import Tensor, cuda_available, return_types  # noqa: E402,F401
from ember.library import ops  # noqa: E402,F401

__version__ = "0.1.0"

_ON_FIRST_USE = ("optim", "amp", "cpu")
_AUTOCAST_NAMES = (
    "autocast", "autocast_decrement_nesting", "autocast_increment_nesting",
    "clear_autocast_cache", "get_autocast_cpu_dtype", "get_autocast_dtype",
    "get_autocast_gpu_dtype", "is_autocast_cache_enabled", "is_autocast_cpu_enabled",
    "is_autocast_enabled", "set_autocast_cache_enabled", "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled", "set_autocast_dtype", "set_autocast_enabled",
    "set_autocast_gpu_dtype")


def __getattr__(name: str) -> object:
    """``ember.optim``, ``ember.amp``, ``ember.cpu`` and the autocast names, imported at
    their first use."""
    import importlib

    if name in _ON_FIRST_USE:
        return importlib.import_module(f"ember.{name}")
    if name in _AUTOCAST_NAMES:
        return getattr(importlib.import_module("ember.amp.autocast_mode"), name)
    raise AttributeError(f"module 'ember' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_ON_FIRST_USE, *_AUTOCAST_NAMES})
