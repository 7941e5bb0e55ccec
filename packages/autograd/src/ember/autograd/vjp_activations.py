"""VJPs of the activations gelu, silu, sigmoid and tanh.

A first-order backward (no graph of the gradient is built) runs torch's fused kernels,
``gelu_backward`` and ``silu_backward``, one pass over the gradient and the input
(``sigmoid_backward`` and ``tanh_backward``: over the gradient and the output, for real
dtypes; complex ones keep the composite). Where a
graph is built (``create_graph=True``, forward mode, ``ember.func``), the same derivative is
composed of Ember ops, so that it can be differentiated again (torch's
``infinitely_differentiable_silu_backward``; for gelu, what its ``gelu_backward`` computes).
"""

from __future__ import annotations

import math
from typing import Any

from ember.core.dispatch import grad_mode
from ember.core.ops.activations import (
    GELU_BACKWARD,
    SIGMOID_BACKWARD,
    SILU_BACKWARD,
    TANH_BACKWARD,
)
from ember.core.tensor import Tensor

from .formula import Formula, R, X

Grads = tuple[Any, ...]

# torch's constants: M_SQRT1_2, M_SQRT2 * M_2_SQRTPI * 0.5, M_2_SQRTPI * M_SQRT1_2 * 0.5
_ALPHA = math.sqrt(0.5)
_BETA = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5
_KAPPA = 0.044715
_PDF = (2.0 / math.sqrt(math.pi)) * math.sqrt(0.5) * 0.5


def gelu(n: Any, g: Tensor) -> Grads:
    x = n.saved(0)
    if not grad_mode.enabled:
        return (GELU_BACKWARD.door((g, x), n.params),)
    if n.params["approximate"] == "tanh":
        square = x * x
        t = ((x + square * x * _KAPPA) * _BETA).tanh()
        inner = (square * (3 * _KAPPA) + 1) * _BETA
        return (g * ((t + 1) * 0.5 + x * 0.5 * (1 - t * t) * inner),)
    cdf = ((x * _ALPHA).erf() + 1) * 0.5
    return (g * (cdf + x * ((x * x * -0.5).exp() * _PDF)),)


def silu(n: Any, g: Tensor) -> Grads:
    x = n.saved(0)
    if not grad_mode.enabled:
        return (SILU_BACKWARD.door((g, x), None),)
    s = x.sigmoid()
    return (g * s * (1 + x * (1 - s)),)


def sigmoid(n: Any, g: Tensor) -> Grads:
    y = n.result()
    if not grad_mode.enabled and y.dtype.category == 2:
        return (SIGMOID_BACKWARD.door((g, y), None),)
    return (g * (1 - y) * y,)


def tanh(n: Any, g: Tensor) -> Grads:
    y = n.result()
    if not grad_mode.enabled and y.dtype.category == 2:
        return (TANH_BACKWARD.door((g, y), None),)
    return (g * (1 - y * y),)


F = Formula
FORMULAS: dict[str, Formula] = {
    "gelu": F(gelu, X),
    # torch's complex formula (an in-place silu_ of a complex tensor in a graph; silu's
    # refuses) is g * f'(z), unconjugated: kept as it is
    "silu": F(silu, X, conjugates=True),
    "sigmoid": F(sigmoid, result=R),
    "tanh": F(tanh, result=R),
}
