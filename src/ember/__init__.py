"""Ember: PyTorch's API over NumPy and CuPy. ``import ember as torch``."""

import pkgutil

__path__ = pkgutil.extend_path(__path__, __name__)

# Importing autograd installs its steps into tensor-core's dispatcher.
from ember import accelerator, backends, cuda, func, library, overrides, profiler  # noqa: E402,F401
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
