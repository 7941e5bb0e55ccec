"""Ember: PyTorch's API over NumPy and CuPy. ``import ember as torch``."""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from ember.core import *  # noqa: E402,F403
from ember.core import Tensor, cuda_available  # noqa: E402

from ember import accelerator, backends, cuda  # noqa: E402,F401

__version__ = "0.1.0"
