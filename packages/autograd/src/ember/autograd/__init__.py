"""ember.autograd: reverse-mode automatic differentiation with PyTorch's API.

Importing this package installs autograd into tensor-core: its record hook builds the
graph as ops run, its in-place hook guards and rebases in-place writes, and Tensor gets
``backward``, ``register_hook``, ``retain_grad`` and friends.
"""

from __future__ import annotations

from ember.core.dispatch import hooks as _hooks

from . import anomaly_mode, forward_ad, function, graph
from .anomaly_mode import (
                           detect_anomaly,
                           is_anomaly_check_nan_enabled,
                           is_anomaly_enabled,
                           set_detect_anomaly,
)
from .differentiate import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (
                           enable_grad,
                           inference_mode,
                           is_grad_enabled,
                           is_inference_mode_enabled,
                           no_grad,
                           set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .recording import inplace as _inplace
from .recording import record as _record
from .tensor_methods import install as _install_methods

__all__ = [
    "backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad",
    "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
    "is_inference_mode_enabled", "gradcheck", "gradgradcheck", "GradcheckError",
    "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled", "graph", "function", "anomaly_mode", "forward_ad",
]

_hooks.record = _record
_hooks.inplace = _inplace
_install_methods()
