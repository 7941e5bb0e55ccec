"""Normalization: torch.nn.functional's batch_norm, instance_norm, layer_norm, group_norm,
rms_norm (tensor-core's fused primitives), local_response_norm and normalize."""

from __future__ import annotations

import math
from typing import Any

import ember.core as E
from ember.autograd import no_grad
from ember.core import Tensor
from ember.core.ops import channel_norms, normalization, pooling

from .padding import pad

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm",
           "local_response_norm", "normalize"]


def _verify_batch_size(size: Any) -> None:
    if size[0] * math.prod(size[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {size}")


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """torch.nn.functional.batch_norm: each channel (dim 1) normalized by the batch's mean
    and biased variance in training (the running statistics, where given, moving by
    ``momentum`` toward the batch's unbiased ones), by the running ones otherwise; then
    ``* weight + bias``."""
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return channel_norms.batch_norm(input, weight, bias, running_mean, running_var, training,
                                    momentum, eps, True)


def _repeated(t: Tensor | None, times: int) -> Tensor | None:
    return None if t is None else t.repeat(times)


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """torch.nn.functional.instance_norm: each channel of each sample normalized over its
    spatial dims (``use_input_stats``) or by the running statistics, which move toward the
    mean of the samples' statistics; then ``* weight + bias`` per channel."""
    if use_input_stats:
        size = input.size()
        if math.prod(size[2:]) == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got "
                             f"input size {size}")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither "
                         "be None")
    if not use_input_stats and running_mean is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    b, c = input.shape[0], input.shape[1]
    # torch's: one batch of b * c channels, the parameters repeated for each sample, each
    # running statistic then the mean of its samples' copies
    means, variances = _repeated(running_mean, b), _repeated(running_var, b)
    out = channel_norms.batch_norm(
        input.reshape(1, b * c, *input.shape[2:]), _repeated(weight, b), _repeated(bias, b),
        means, variances, use_input_stats, momentum, eps, True)
    with no_grad():
        for buffer, copies in ((running_mean, means), (running_var, variances)):
            if buffer is not None and copies is not None:
                buffer.copy_(copies.view(b, c).mean(0))
    return out.view(input.shape)


def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """torch.nn.functional.layer_norm: ``(x - mean) / sqrt(var + eps) * weight + bias`` over
    the trailing dims ``normalized_shape`` names (biased variance)."""
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(f"layer_norm(): argument 'normalized_shape' (position 2) must be tuple "
                        f"of ints, not {type(normalized_shape).__name__}")
    return normalization.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """torch.nn.functional.group_norm: each sample's channels in ``num_groups`` groups, each
    normalized over its channels and spatial dims, then ``* weight + bias`` per channel."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    _verify_batch_size([input.shape[0] * input.shape[1] // num_groups, num_groups]
                       + list(input.shape[2:]))
    return channel_norms.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """torch.nn.functional.rms_norm: ``x / sqrt(mean(x**2) + eps) * weight`` over the
    trailing dims ``normalized_shape`` names (``eps`` by default the machine epsilon of the
    computation dtype)."""
    return normalization.rms_norm(input, normalized_shape, weight, eps)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """torch.nn.functional.local_response_norm: ``x / (k + alpha * mean of x**2 over a
    window of ``size`` neighbouring channels) ** beta``."""
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          "
                         f"input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    before, after = size // 2, (size - 1) // 2
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, before, after))
        div = pooling.avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = pad(div.view(sizes[0], 1, sizes[1], sizes[2], -1), (0, 0, 0, 0, before, after))
        div = pooling.avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    return input / div.mul(alpha).add(k).pow(beta)


def normalize(input: Tensor, p: float = 2.0, dim: Any = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """torch.nn.functional.normalize: ``input / max(||input||_p, eps)``, the norm taken
    over ``dim`` (an int or a tuple); ``out`` receives the result (not differentiable)."""
    if out is None:
        denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
        return input / denom
    denom = input.norm(p, dim, keepdim=True).clamp_min_(eps).expand_as(input)
    return E.div(input, denom, out=out)
