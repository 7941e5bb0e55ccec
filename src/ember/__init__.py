"""Ember: PyTorch's API over NumPy and CuPy. ``import ember as torch``."""

import pkgutil

__path__ = pkgutil.extend_path(__path__, __name__)

# Importing autograd installs its steps into tensor-core's dispatcher; nn, utils.data,
# optim and amp are the layers above it, reachable as torch's top level has them (torch.nn,
# torch.utils.data, torch.optim, torch.amp and torch.autocast).
import ember.utils.data  # noqa: E402,F401
from ember import (  # noqa: E402,F401
    accelerator,
    amp,
    backends,
    cpu,
    cuda,
    func,
    library,
    nn,
    optim,
    overrides,
    profiler,
)
from ember.amp import autocast  # noqa: E402,F401
from ember.amp.autocast_mode import (  # noqa: E402,F401
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
    set_autocast_gpu_dtype,
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
