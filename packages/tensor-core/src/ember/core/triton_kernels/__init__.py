"""Triton kernels of the fused primitives, each op's ``cuda`` kernel where triton is
installed (``pip install ember-tensor-core[cuda]``); elsewhere, or with ``EMBER_TRITON=0``,
the ops' reference forwards run on cupy.

Registering them imports neither triton nor cupy (``import ember`` stays fast): each op's
kernel is a thin function that imports its Triton module at its first call. The kernels
take the operands' arrays and the op's params, as the reference forward does, and give
what it gives: the same dtypes, laid out as the op's rule says. Where a kernel does not
take its operands (a dtype it does not compute, empty or 0-d inputs, some layouts), it
runs the reference itself.

Under Triton's interpreter (``TRITON_INTERPRET=1`` before triton is imported) the same
kernels run on numpy arrays on the CPU: how ``tests_triton`` checks them without a GPU.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable
from typing import Any

from ..dispatch import REGISTRY

__all__ = ["KERNELS", "available"]

# op -> (module of this package, function)
KERNELS: dict[str, tuple[str, str]] = {
    "softmax": ("softmax", "softmax"),
    "log_softmax": ("softmax", "log_softmax"),
    "_softmax_backward_data": ("softmax", "softmax_backward"),
    "_log_softmax_backward_data": ("softmax", "log_softmax_backward"),
    "native_layer_norm": ("normalization", "layer_norm"),
    "native_layer_norm_backward": ("normalization", "layer_norm_backward"),
    "_fused_rms_norm": ("normalization", "rms_norm"),
    "_fused_rms_norm_backward": ("normalization", "rms_norm_backward"),
    "gelu": ("activations", "gelu"),
    "gelu_backward": ("activations", "gelu_backward"),
    "silu": ("activations", "silu"),
    "silu_": ("activations", "silu_"),
    "silu_backward": ("activations", "silu_backward"),
    "sigmoid": ("activations", "sigmoid"),
    "sigmoid_": ("activations", "sigmoid_"),
    "sigmoid_backward": ("activations", "sigmoid_backward"),
    "tanh_backward": ("activations", "tanh_backward"),
    "native_dropout": ("dropout", "native_dropout"),
    "native_dropout_backward": ("dropout", "native_dropout_backward"),
    "nll_loss_forward": ("losses", "nll_loss"),
    "nll_loss2d_forward": ("losses", "nll_loss"),
    "nll_loss_backward": ("losses", "nll_loss_backward"),
    "nll_loss2d_backward": ("losses", "nll_loss_backward"),
    "_scaled_dot_product_flash_attention_for_cpu": ("attention", "attention"),
    "_scaled_dot_product_flash_attention_for_cpu_backward": ("attention", "attention_backward"),
    "exp": ("elementwise", "exp"),
    "add": ("elementwise", "add"),
    "mul": ("elementwise", "mul"),
}


def available() -> bool:
    """Whether the Triton kernels are registered: triton is installed and not switched off
    with ``EMBER_TRITON=0``."""
    return os.environ.get("EMBER_TRITON", "1") != "0" and \
        importlib.util.find_spec("triton") is not None


def _on_first_call(module: str, name: str) -> Callable[..., Any]:
    """The kernel ``name`` of ``module``, imported when first called."""
    loaded: list[Callable[..., Any]] = []

    def kernel(*arrays: Any, **params: Any) -> Any:
        if not loaded:
            loaded.append(getattr(importlib.import_module(f"{__name__}.{module}"), name))
        return loaded[0](*arrays, **params)

    kernel.__name__ = name
    return kernel


if available():
    for _op, (_module, _name) in KERNELS.items():
        REGISTRY[_op].register_kernel("cuda", _on_first_call(_module, _name))
