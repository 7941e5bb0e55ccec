"""The activation layers of torch.nn (all but MultiheadAttention): each holds its settings
and calls one function of ``ember.nn.functional``, with torch's arguments, defaults and
``repr``."""

from __future__ import annotations

import warnings
from typing import Any

import ember.core as E

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = [
    "Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh",
    "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink",
    "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "PReLU", "Softsign", "Tanhshrink",
    "Softmin", "Softmax", "Softmax2d", "LogSoftmax",
]

# F.softmax's warning of an implicit dim, given torch's ``_stacklevel=5``, names the line
# that called the module (Module.__call__ and forward stand between)
_SOFTMAX_STACKLEVEL = 5


def _inplace_repr(inplace: bool, leading: str = "") -> str:
    """torch's ``inplace`` suffix of ``extra_repr``: shown only when set."""
    return f"{leading}inplace=True" if inplace else ""


class _Inplace(Module):
    """An activation whose only setting is ``inplace`` (which its repr leaves out)."""

    inplace: bool

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class _InplaceShown(_Inplace):
    """An activation whose only setting is ``inplace``, shown in its repr when set."""

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class _Alpha(Module):
    """ELU's and CELU's settings."""

    alpha: float
    inplace: bool

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_repr(self.inplace, ', ')}"


class _Lambda(Module):
    """Hardshrink's and Softshrink's setting."""

    lambd: float

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Threshold(Module):
    """torch.nn.Threshold: ``x`` where ``x > threshold``, else ``value``."""

    threshold: float
    value: float
    inplace: bool

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" \
               f"{_inplace_repr(self.inplace, ', ')}"


class ReLU(_InplaceShown):
    """torch.nn.ReLU: ``max(0, x)``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.relu(input, self.inplace)


class RReLU(Module):
    """torch.nn.RReLU: ``x`` for ``x >= 0``, else ``a * x`` with ``a`` drawn from
    U(lower, upper) per element in training and ``(lower + upper) / 2`` in eval."""

    lower: float
    upper: float
    inplace: bool

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_repr(self.inplace, ', ')}"


class Hardtanh(Module):
    """torch.nn.Hardtanh: ``x`` clamped to ``[min_val, max_val]`` (``min_value`` and
    ``max_value`` are their deprecated names)."""

    min_val: float
    max_val: float
    inplace: bool

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to "
                          "`min_val`", FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to "
                          "`max_val`", FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val "
                                 f"({self.min_val})")

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" \
               f"{_inplace_repr(self.inplace, ', ')}"


class ReLU6(Hardtanh):
    """torch.nn.ReLU6: ``min(max(0, x), 6)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Sigmoid(Module):
    """torch.nn.Sigmoid: ``1 / (1 + exp(-x))``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.sigmoid(input)


class Hardsigmoid(_Inplace):
    """torch.nn.Hardsigmoid: ``clamp(x / 6 + 1 / 2, 0, 1)``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.hardsigmoid(input, self.inplace)


class Tanh(Module):
    """torch.nn.Tanh: the hyperbolic tangent."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.tanh(input)


class SiLU(_InplaceShown):
    """torch.nn.SiLU: ``x * sigmoid(x)``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.silu(input, self.inplace)


class Mish(_InplaceShown):
    """torch.nn.Mish: ``x * tanh(softplus(x))``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.mish(input, self.inplace)


class Hardswish(_Inplace):
    """torch.nn.Hardswish: ``x * hardsigmoid(x)``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.hardswish(input, self.inplace)


class ELU(_Alpha):
    """torch.nn.ELU: ``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.elu(input, self.alpha, self.inplace)


class CELU(_Alpha):
    """torch.nn.CELU: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.celu(input, self.alpha, self.inplace)


class SELU(_InplaceShown):
    """torch.nn.SELU: ``scale * elu(x, alpha)`` with the self-normalizing constants."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.selu(input, self.inplace)


class GLU(Module):
    """torch.nn.GLU: ``a * sigmoid(b)``, ``a`` and ``b`` the halves of the input along
    ``dim``."""

    dim: int

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GELU(Module):
    """torch.nn.GELU: ``x * Φ(x)``, Φ the standard normal's CDF (``approximate='tanh'``:
    its tanh approximation)."""

    approximate: str

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Hardshrink(_Lambda):
    """torch.nn.Hardshrink: ``x`` where ``|x| > lambd``, else 0."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.hardshrink(input, self.lambd)


class LeakyReLU(Module):
    """torch.nn.LeakyReLU: ``x`` for ``x >= 0``, else ``negative_slope * x``."""

    negative_slope: float
    inplace: bool

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace_repr(self.inplace, ', ')}"


class LogSigmoid(Module):
    """torch.nn.LogSigmoid: ``log(sigmoid(x))``, computed stably."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.logsigmoid(input)


class Softplus(Module):
    """torch.nn.Softplus: ``log(1 + exp(beta * x)) / beta``, linear where ``beta * x``
    exceeds ``threshold``."""

    beta: float
    threshold: float

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(_Lambda):
    """torch.nn.Softshrink: ``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``,
    else 0."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.softshrink(input, self.lambd)


class PReLU(Module):
    """torch.nn.PReLU: ``x`` for ``x >= 0``, else ``a * x`` with ``a`` learned, one per
    channel (``num_parameters``) or one shared, initialised to ``init``."""

    num_parameters: int

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(E.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    """torch.nn.Softsign: ``x / (1 + |x|)``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.softsign(input)


class Tanhshrink(Module):
    """torch.nn.Tanhshrink: ``x - tanh(x)``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.tanhshrink(input)


class _AlongDim(Module):
    """A softmax-like layer over ``dim`` (None: torch's deprecated implicit choice)."""

    dim: int | None

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(_AlongDim):
    """torch.nn.Softmin: ``softmax(-x)`` along ``dim``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.softmin(input, self.dim, _SOFTMAX_STACKLEVEL)


class Softmax(_AlongDim):
    """torch.nn.Softmax: ``exp(x) / exp(x).sum(dim)``, computed stably."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.softmax(input, self.dim, _SOFTMAX_STACKLEVEL)


class Softmax2d(Module):
    """torch.nn.Softmax2d: softmax over the channels of (N, C, H, W) or (C, H, W) at each
    spatial location."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3, _SOFTMAX_STACKLEVEL)


class LogSoftmax(_AlongDim):
    """torch.nn.LogSoftmax: ``x - logsumexp(x, dim)``, computed stably."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.log_softmax(input, self.dim, _SOFTMAX_STACKLEVEL)
