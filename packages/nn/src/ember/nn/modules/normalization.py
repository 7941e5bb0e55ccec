"""torch.nn's LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm and CrossMapLRN2d.

CrossMapLRN2d is torch's legacy layer, a Function with its own backward; it is written the
same way here, so that its values and gradients are torch's: torch's running window sum
over the channels never drops channel 0 once it has entered, and its backward takes the
window of channels ``c - (size + 1) // 2 .. c + size // 2 - 1`` (not the forward's). Both
windows are (C, C) 0/1 matrices applied with one matmul.
"""

from __future__ import annotations

import numbers
from typing import Any

import ember.core as E
from ember.autograd import Function

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm", "RMSNorm"]


def register_affine(module: Module, shape: Any, affine: bool, bias: bool, device: Any,
                    dtype: Any) -> None:
    """A norm's ``weight`` and ``bias`` Parameters of ``shape`` (uninitialised: its
    ``reset_parameters`` fills them), or None for those it has not."""
    if affine:
        module.weight = Parameter(E.empty(shape, device=device, dtype=dtype))
        if bias:
            module.bias = Parameter(E.empty(shape, device=device, dtype=dtype))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _normalized_shape(normalized_shape: Any) -> tuple[int, ...]:
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(normalized_shape)


class LocalResponseNorm(Module):
    """torch.nn.LocalResponseNorm: each channel divided by ``(k + alpha / size * sum of
    squares over ``size`` neighbouring channels) ** beta``."""

    size: int
    alpha: float
    beta: float
    k: float

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _channel_sums(window: E.Tensor, planes: E.Tensor) -> E.Tensor:
    """``sum_i window[c, i] * planes[:, i]`` for each channel c of (N, C, H, W) planes."""
    n, c, h, w = planes.shape
    return (window.to(planes.dtype) @ planes.reshape(n, c, h * w)).reshape(n, c, h, w)


class _CrossMapLRN2dFunction(Function):
    """torch's ``_functions.CrossMapLRN2d``: the forward and backward of CrossMapLRN2d."""

    @staticmethod
    def forward(ctx: Any, input: E.Tensor, size: int, alpha: float = 1e-4,
                beta: float = 0.75, k: float = 1) -> E.Tensor:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        channels = input.size(1)
        pre_pad = int((size - 1) / 2 + 1)
        c = E.arange(channels, device=input.device).unsqueeze(1)
        i = E.arange(channels, device=input.device)
        window = (i <= c + pre_pad - 1) & ((i >= c - pre_pad + 1) | (i == 0))
        scale = _channel_sums(window, input * input).mul_(alpha / size).add_(k)
        output = scale.pow(-beta).mul_(input)
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        ctx.save_for_backward(input, output, scale)
        return output

    @staticmethod
    def backward(ctx: Any, grad_output: E.Tensor) -> tuple[Any, ...]:
        input, output, scale = ctx.saved_tensors
        size, channels = ctx.size, input.size(1)
        inverse_pre_pad = int(size - (size - 1) / 2)
        if inverse_pre_pad + channels > channels + size - 1:
            raise RuntimeError(f"start ({inverse_pre_pad}) + length ({channels}) exceeds "
                               f"dimension size ({channels + size - 1}).")
        c = E.arange(channels, device=input.device).unsqueeze(1)
        j = E.arange(channels, device=input.device)
        window = (j >= c - inverse_pre_pad) & (j <= c - inverse_pre_pad + size - 1)
        accum = _channel_sums(window, grad_output * output / scale)
        grad_input = scale.pow(-ctx.beta) * grad_output \
            - (2 * ctx.alpha * ctx.beta / size) * input * accum
        return grad_input, None, None, None, None


class CrossMapLRN2d(Module):
    """torch.nn.CrossMapLRN2d: local response normalization across the channels of a 4-d
    input, as torch's legacy implementation computes it."""

    size: int
    alpha: float
    beta: float
    k: float

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: E.Tensor) -> E.Tensor:
        return _CrossMapLRN2dFunction.apply(  # type: ignore[no-any-return]
            input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class LayerNorm(Module):
    """torch.nn.LayerNorm: ``(x - mean) / sqrt(var + eps) * weight + bias`` over the
    trailing ``normalized_shape`` dims; ``weight`` ones and ``bias`` zeros
    (``elementwise_affine``; ``bias=False`` drops the bias)."""

    normalized_shape: tuple[int, ...]
    eps: float
    elementwise_affine: bool

    def __init__(self, normalized_shape: Any, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape = _normalized_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        register_affine(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, " \
               f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"


class GroupNorm(Module):
    """torch.nn.GroupNorm: the channels in ``num_groups`` groups, each normalized over its
    channels and spatial dims, then ``* weight + bias`` per channel (``affine``: weight
    ones, bias zeros)."""

    num_groups: int
    num_channels: int
    eps: float
    affine: bool

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        register_affine(self, num_channels, affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, " \
               f"affine={self.affine}, bias={self.bias is not None}"


class RMSNorm(Module):
    """torch.nn.RMSNorm: ``x / sqrt(mean(x**2) + eps) * weight`` over the trailing
    ``normalized_shape`` dims (``eps`` None: the dtype's machine epsilon; weight ones)."""

    normalized_shape: tuple[int, ...]
    eps: float | None
    elementwise_affine: bool

    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape = _normalized_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(E.empty(self.normalized_shape, device=device,
                                            dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: E.Tensor) -> E.Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, " \
               f"elementwise_affine={self.elementwise_affine}"
