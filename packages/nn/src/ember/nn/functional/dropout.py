"""Dropout: torch.nn.functional's dropout, dropout1d/2d/3d (whole channels), alpha_dropout
and feature_alpha_dropout (which keep a SELU network's mean and variance).

Plain dropout is tensor-core's ``dropout`` primitive; the others multiply by a noise tensor
drawn from the default generator, as torch's ``_dropout_impl``: one Bernoulli draw per
element, or per (sample, channel) for the channel-wise forms, broadcast over the rest.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import ember.core as E
from ember.core import Tensor
from ember.core.dtypes import scalar_type_name
from ember.core.ops import dropout as core_dropout

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
           "feature_alpha_dropout"]

# SELU's alpha * scale: alpha dropout sets a dropped element to -_ALPHA, SELU's lower bound
_ALPHA = 1.7580993408473766


def _check_p(p: Any) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise_dropout(input: Tensor, p: float, train: bool, feature: bool, alpha: bool,
                   inplace: bool) -> Tensor:
    """torch's ``_dropout_impl``: ``input * noise`` (plus the shift of alpha dropout)."""
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:  # a product with zero, as torch's: -0.0 where the input is negative
        zero = input.new_zeros(())
        return input.mul_(zero) if inplace else input * zero
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not input.dtype.is_floating_point:  # (torch's noise, of the input's dtype, refuses 1/(1-p))
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{scalar_type_name(input.dtype)}")
    if feature:
        noise = input.new_empty(tuple(input.shape[:2]) + (1,) * (input.ndim - 2))
    else:
        noise = E.empty_like(input)
    noise.bernoulli_(1 - p)
    if not alpha:
        noise.div_(1 - p)
        return input.mul_(noise) if inplace else input * noise
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    shift = noise.add(-1).mul_(_ALPHA * a).add_(_ALPHA * a * p)
    noise.mul_(a)
    return (input.mul_(noise) if inplace else input * noise).add_(shift)


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """torch.nn.functional.dropout: in training, each element zeroed with probability ``p``
    and the rest scaled by ``1 / (1 - p)``; ``input`` itself otherwise."""
    _check_p(p)
    out = core_dropout.dropout(input, p, training)
    return input.copy_(out) if inplace and out is not input else out


def _channel_dropout(input: Tensor, p: float, training: bool, inplace: bool,
                     unbatched: bool) -> Tensor:
    if unbatched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    out = _noise_dropout(input, p, training, True, False, inplace)
    if unbatched:
        out = out.squeeze_(0) if inplace else out.squeeze(0)
    return out


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """torch.nn.functional.dropout1d: whole channels of (N, C, L) or (C, L) zeroed with
    probability ``p`` in training, the rest scaled by ``1 / (1 - p)``."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    return _channel_dropout(input, p, training, inplace, input.ndim == 2)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """torch.nn.functional.dropout2d: whole channels of (N, C, H, W) zeroed with probability
    ``p`` in training, the rest scaled by ``1 / (1 - p)`` (a 3-d input is taken as (N, C,
    L), as torch's)."""
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _noise_dropout(input, p, training, True, False, inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """torch.nn.functional.dropout3d: whole channels of (N, C, D, H, W) or (C, D, H, W)
    zeroed with probability ``p`` in training, the rest scaled by ``1 / (1 - p)``."""
    _check_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _channel_dropout(input, p, training, inplace, input.ndim != 5)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """torch.nn.functional.alpha_dropout: in training, each element set with probability
    ``p`` to SELU's negative saturation value, then all scaled and shifted so that inputs of
    zero mean and unit variance keep them."""
    _check_p(p)
    return _noise_dropout(input, p, training, False, True, inplace)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """torch.nn.functional.feature_alpha_dropout: alpha dropout of whole channels (dim 1)."""
    _check_p(p)
    return _noise_dropout(input, p, training, True, True, inplace)
