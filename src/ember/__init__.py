"""Ember: PyTorch's API over NumPy and CuPy. ``import ember as torch``."""

import pkgutil

__path__ = pkgutil.extend_path(__path__, __name__)

# Importing autograd installs its steps into tensor-core's dispatcher; nn and utils.data
# are the layers above it, reachable as torch's top level has them (torch.nn,
# torch.utils.data).
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
