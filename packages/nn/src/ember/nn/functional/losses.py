"""torch.nn.functional's regression and likelihood losses: nll_loss and cross_entropy
(tensor-core's), linear_cross_entropy, mse, l1, smooth l1, huber, the binary cross
entropies, kl_div, and the Poisson and Gaussian negative log likelihoods.

Each follows torch's function: its argument checks and warnings in torch's order, the
legacy ``size_average``/``reduce`` arguments, the dtype its kernel gives, then the loss
composed of Ember ops, so that autograd gives torch's gradients. Where torch's backward
is not the derivative of its forward (binary_cross_entropy clamps its logs at -100 but
differentiates the unclamped loss, with a floor on the denominator), a Function gives
torch's formula.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

import ember.core as E
from ember.autograd import Function, no_grad
from ember.core.dispatch import grad_mode
from ember.core.dtypes import scalar_type_name
from ember.core.function_modes import public
from ember.core.ops import losses as _primitives
from ember.core.ops.losses import MEAN, SUM, legacy_reduction, reduction_enum
from ember.core.ops.operands import not_implemented
from ember.core.tensor import Tensor

from .activations import logsigmoid
from .linear import linear

__all__ = ["nll_loss", "cross_entropy", "linear_cross_entropy", "mse_loss", "l1_loss",
           "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss",
           "gaussian_nll_loss"]

nll_loss = public(_primitives.nll_loss)
cross_entropy = public(_primitives.cross_entropy)

_FLOATING = 2  # a dtype category
# torch's floor of x * (1 - x) in binary_cross_entropy's backward, a float32 constant in
# every dtype
_BCE_EPSILON = float(np.float32(1e-12))
_REDUCTIONS = ("none", "mean", "sum")


# ----------------------------------------------------------------------------- reductions

def reduction_of(size_average: Any, reduce: Any, reduction: str) -> int:
    """torch's reduction enum of a loss's arguments: the deprecated ``size_average`` and
    ``reduce`` name it (with torch's warning) when either is given."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    return reduction_enum(reduction)


def reduce_loss(loss: Tensor, reduction: int) -> Tensor:
    """torch's apply_loss_reduction: the mean, the sum, or the loss itself."""
    if reduction == MEAN:
        return loss.mean()  # type: ignore[no-any-return]
    if reduction == SUM:
        return loss.sum()  # type: ignore[no-any-return]
    return loss


def refuse_grad(op: str, name: str, value: Tensor | None) -> None:
    """torch's refusal of an argument its backward does not differentiate."""
    if value is not None and value._requires_grad and grad_mode.enabled:
        raise RuntimeError(f"The function '{op}' is not differentiable with respect to "
                           f"argument '{name}'. This input cannot have requires_grad True.")


def _warn_sizes(input: Tensor, target: Tensor) -> None:
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input "
                      f"size ({input.size()}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=4)


def _weighted(errors: Tensor, weight: Tensor, input: Tensor, reduction: str) -> Tensor:
    """torch's weighted mse and l1: the errors times ``weight`` (of the input's size),
    their sum, or their sum over the weights' sum."""
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    weighted = errors * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()  # type: ignore[no-any-return]
    if reduction == "mean":
        return weighted.sum() / weight.sum()  # type: ignore[no-any-return]
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


def _floating_pair(kernel: str, input: Tensor, target: Tensor) -> None:
    common = E.result_type(input, target)
    if common.category != _FLOATING:
        raise not_implemented(kernel, common)


# ----------------------------------------------------------------------------- regression

@public
def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """torch.nn.functional.mse_loss: ``(input - target) ** 2``, reduced; with ``weight``
    (the input's size), weighted, its mean taken over the weights' sum."""
    _warn_sizes(input, target)
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    x, y = E.broadcast_tensors(input, target)
    if weight is not None:
        return _weighted((x - y).pow(2), weight, input, reduction)
    r = reduction_enum(reduction)
    _floating_pair("mse_cpu", x, y)
    return reduce_loss((x - y).square(), r)


@public
def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """torch.nn.functional.l1_loss: ``|input - target|``, reduced; with ``weight`` (the
    input's size), weighted, its mean taken over the weights' sum."""
    _warn_sizes(input, target)
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    x, y = E.broadcast_tensors(input, target)
    if weight is not None:
        return _weighted((x - y).abs(), weight, input, reduction)
    return reduce_loss((x - y).abs(), reduction_enum(reduction))


@public
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None,
                   reduce: Any = None, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """torch.nn.functional.smooth_l1_loss: ``0.5 * z ** 2 / beta`` where ``z = |input -
    target| < beta``, else ``z - 0.5 * beta``; l1_loss for ``beta == 0``."""
    _warn_sizes(input, target)
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    x, y = E.broadcast_tensors(input, target)
    r = reduction_enum(reduction)
    if beta == 0.0:
        return reduce_loss((x - y).abs(), r)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _floating_pair("smooth_l1_cpu", x, y)
    z = (x - y).abs()
    return reduce_loss(E.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta), r)


def _huber(x: Tensor, y: Tensor, delta: float, dtype: Any) -> Tensor:
    """torch's huber kernel, computed in the inputs' common dtype and written in the
    input's (``dtype``)."""
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    common = E.result_type(x, y)
    if dtype.category < _FLOATING <= common.category:
        raise RuntimeError(f"result type {scalar_type_name(common)} can't be cast to the "
                           f"desired output type {scalar_type_name(dtype)}")
    _floating_pair("huber_cpu", x, y)
    z = (x - y).abs()
    loss = E.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
    return loss if loss.dtype is dtype else loss.to(dtype)


@public
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """torch.nn.functional.huber_loss: ``0.5 * z ** 2`` where ``z = |input - target| <
    delta``, else ``delta * (z - 0.5 * delta)``, in the input's dtype; with ``weight`` (the
    input's size), weighted before the reduction."""
    _warn_sizes(input, target)
    x, y = E.broadcast_tensors(input, target)
    if weight is None:
        r = reduction_enum(reduction)
        return reduce_loss(_huber(x, y, delta, input.dtype), r)
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    weighted = _huber(x, y, delta, input.dtype) * weight
    if reduction not in _REDUCTIONS:
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', "
                         "'mean', 'sum'.")
    return reduce_loss(weighted, reduction_enum(reduction))


# ----------------------------------------------------------------------------- binary

class _BinaryCrossEntropy(Function):
    """``-w (y log x + (1 - y) log(1 - x))``, each log clamped at -100, differentiated as
    torch differentiates it: ``w (x - y) / max(x (1 - x), 1e-12)`` for ``x``, and
    ``-w logit(x)`` for ``y``."""

    @staticmethod
    def forward(ctx: Any, input: Tensor, target: Tensor, weight: Tensor | None) -> Tensor:
        ctx.save_for_backward(input, target, weight)
        loss = ((target - 1) * (-input).log1p().clamp_min(-100)
                - target * input.log().clamp_min(-100))
        if weight is not None:
            loss = (loss * weight).to(loss.dtype)  # torch multiplies in place
        return loss  # type: ignore[no-any-return]

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None, None]:
        x, y, w = ctx.saved_tensors
        if w is not None:
            grad = grad * w
        gx = gy = None
        if ctx.needs_input_grad[0]:
            gx = grad * (x - y) / ((1 - x) * x).clamp_min(_BCE_EPSILON)
        if ctx.needs_input_grad[1]:
            gy = -grad * x.logit()
        return gx, gy, None


def _check_unit_interval(name: str, t: Tensor) -> None:
    if not bool(((t >= 0) & (t <= 1)).all()):
        raise RuntimeError(f"all elements of {name} should be between 0 and 1")


@public
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """torch.nn.functional.binary_cross_entropy: ``-w (y log x + (1 - y) log(1 - x))``
    for probabilities ``x`` in [0, 1], each log clamped at -100; ``weight`` broadcasts to
    the target."""
    r = reduction_of(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the "
                         f"input size ({input.size()}) is deprecated. Please ensure they have "
                         "the same size.")
    if weight is not None:
        weight = weight.expand(E.broadcast_shapes(target.size(), weight.size()))
        refuse_grad("binary_cross_entropy", "weight", weight)
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {scalar_type_name(target.dtype)} but expected "
                           f"{scalar_type_name(input.dtype)}")
    if input.dtype.category != _FLOATING:
        raise not_implemented("binary_cross_entropy", input.dtype)
    _check_unit_interval("input", input)
    _check_unit_interval("target", target)
    if weight is not None and weight.shape != input.shape:
        # torch multiplies the loss by the weight in place
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the "
                           f"broadcast shape {list(weight.shape)}")
    return reduce_loss(_BinaryCrossEntropy.apply(input, target, weight), r)


@public
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average: Any = None,
                                     reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """torch.nn.functional.binary_cross_entropy_with_logits: binary_cross_entropy of
    ``sigmoid(input)``, computed stably as ``(1 - y) x - lw * logsigmoid(x)`` with
    ``lw = (pos_weight - 1) y + 1``; in the target's dtype (torch writes into
    ``1 - target``)."""
    r = reduction_of(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    refuse_grad("binary_cross_entropy_with_logits", "weight", weight)
    refuse_grad("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    log_sigmoid = logsigmoid(input)
    if pos_weight is not None:
        log_sigmoid = log_sigmoid * ((pos_weight - 1) * target + 1)
    complement = 1 - target
    if complement.dtype.category != _FLOATING:
        raise RuntimeError(f"result type {scalar_type_name(E.result_type(complement, input))} "
                           "can't be cast to the desired output type "
                           f"{scalar_type_name(complement.dtype)}")
    loss = complement * input - log_sigmoid
    if weight is not None:
        loss = loss * weight
    if loss.dtype is not complement.dtype:
        loss = loss.to(complement.dtype)
    return reduce_loss(loss, r)


# ----------------------------------------------------------------------------- likelihoods

@public
def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """torch.nn.functional.kl_div: ``target * (log(target) - input)`` for log
    probabilities ``input`` (``exp(target) * (target - input)`` with ``log_target``);
    'batchmean' divides the sum by the batch size, 'mean' by the element count, with
    torch's warning."""
    if size_average is not None or reduce is not None:
        r = reduction_enum(legacy_reduction(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size "
                          "and the support size.'batchmean' divides only by the batch size, "
                          "and aligns with the KL div math definition.'mean' will be changed "
                          "to behave the same as 'batchmean' in the next major release.",
                          stacklevel=3)
        r = SUM if reduction == "batchmean" else reduction_enum(reduction)
    if input.dtype.category == 3 or target.dtype.category == 3:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if input.dtype.category < _FLOATING or target.dtype.category < _FLOATING:
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = E.xlogy(target, target) - target * input
    reduced = reduce_loss(loss, r)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


@public
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True,
                     full: bool = False, size_average: Any = None, eps: float = 1e-8,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """torch.nn.functional.poisson_nll_loss: ``exp(input) - target * input`` for a log
    rate (``input - target * log(input + eps)`` otherwise); ``full`` adds Stirling's
    approximation of ``log(target!)`` where ``target > 1``."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return reduce_loss(loss, reduction_enum(reduction))


@public
def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """torch.nn.functional.gaussian_nll_loss: ``0.5 * (log(var) + (input - target) ** 2 /
    var)`` with ``var`` clamped at ``eps`` (its gradient passing as unclamped), plus
    ``0.5 * log(2 pi)`` when ``full``. ``var`` has the input's shape, or one dim short of
    it, or one of its dims 1; a float is one variance for all."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        variance = var * E.ones_like(input)
    elif E.any(var < 0):
        raise ValueError("var has negative entry/entries")
    else:
        variance = var
    if variance.size() != input.size():
        if input.size()[:-1] == variance.size():
            variance = variance.unsqueeze(-1)
        elif not (input.ndim == variance.ndim and sum(
                v for i, v in zip(input.size(), variance.size(), strict=True) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    variance = variance.clone()
    with no_grad():
        variance.clamp_(min=eps)
    loss = 0.5 * (variance.log() + (input - target) ** 2 / variance)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction_enum(reduction))


# ----------------------------------------------------------------------------- fused head

@public
def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:
    """torch.nn.functional.linear_cross_entropy: ``cross_entropy(linear(input,
    linear_weight, linear_bias), target)``, the logits of an (N, in) or (in,) input and a
    (C, *out, in) weight shaped (N, C, *out). ``options`` selects torch's chunked,
    memory-saving evaluation of the same loss; Ember evaluates it whole for any
    ``options``."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and "
                           f"{linear_weight.shape[-1]}, respectively")
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, (N, "
                           f"{in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*batches, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    if out_features:
        rows = math.prod(out_features, start=classes)
        linear_weight = linear_weight.reshape(rows, in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,  # type: ignore[no-any-return]
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)
