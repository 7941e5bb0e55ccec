"""ember.autograd: reverse-mode automatic differentiation with PyTorch's API.

Importing this package installs autograd's steps into tensor-core's dispatcher: one
records every differentiable op into the graph as it runs (and guards and rebases in-place
writes), one carries forward-mode AD while a dual level is active; Tensor gets
``backward``, ``register_hook``, ``retain_grad`` and friends.
"""

from __future__ import annotations

from ember.core.dispatch import install_step as _install_step

from . import anomaly_mode, forward_ad, function, graph, profiler
from .anomaly_mode import (
                           detect_anomaly,
                           is_anomaly_check_nan_enabled,
                           is_anomaly_enabled,
                           set_detect_anomaly,
)
from .differentiate import backward, grad
from .forward_ad import step as _forward_ad_step
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
from .recording import record as _record
from .recording import step as _autograd_step
from .tensor_methods import install as _install_methods

__all__ = [
    "backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad",
    "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
    "is_inference_mode_enabled", "gradcheck", "gradgradcheck", "GradcheckError",
    "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled", "graph", "function", "anomaly_mode", "forward_ad",
    "profiler",
]

_install_step("autograd", _autograd_step)
_install_step("record", _record)
_install_step("forward_ad", _forward_ad_step)
_install_methods()
