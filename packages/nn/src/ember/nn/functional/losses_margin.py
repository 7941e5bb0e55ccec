"""torch.nn.functional's margin and embedding losses: cosine_embedding, margin_ranking,
hinge_embedding, soft_margin, the multi-label and multi-class margin losses and the
triplet losses.

Each is composed of Ember ops as torch's kernel computes it, so that autograd gives its
gradients; where torch's kernel counts a hinge only while strictly positive (the
multi-class and multi-label margins), the composite selects with ``where`` on that
comparison, since ``clamp_min``'s gradient passes at the hinge itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.core as E
from ember.core.dtypes import scalar_type_name
from ember.core.function_modes import public
from ember.core.ops.losses import NONE, legacy_reduction, reduction_enum
from ember.core.ops.operands import not_implemented
from ember.core.tensor import Tensor

from .activations import logsigmoid
from .distance import pairwise_distance
from .losses import reduce_loss, reduction_of, refuse_grad

__all__ = ["cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "soft_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
           "multi_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss"]

_EPSILON = 1e-12  # torch's cosine_embedding_loss adds it to each squared norm
_FLOATING = 2  # a dtype category


@public
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:
    """torch.nn.functional.cosine_embedding_loss: ``1 - cos(x1, x2)`` where the target is
    1, ``max(0, cos(x1, x2) - margin)`` where it is -1 (0 elsewhere); the cosine over the
    last dim of (N, D) inputs with an (N,) target, or of (D,) inputs with a 0-d one."""
    r = reduction_of(size_average, reduce, reduction)
    dim = target.dim()
    if dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    expected = 2 if dim == 1 else 1
    if input1.dim() != expected or input2.dim() != expected:
        raise RuntimeError(f"{dim}D target tensor expects {expected}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    product = (input1 * input2).sum(dim)
    square1 = (input1 * input1).sum(dim) + _EPSILON
    square2 = (input2 * input2).sum(dim) + _EPSILON
    cos = product / (square1 * square2).sqrt()
    zeros = E.zeros_like(cos)
    positive = E.where(target == 1, 1 - cos, zeros)
    negative = E.where(target == -1, (cos - float(margin)).clamp_min(0), zeros)
    return reduce_loss(positive + negative, r)


@public
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """torch.nn.functional.margin_ranking_loss: ``max(0, -target * (input1 - input2) +
    margin)``."""
    r = reduction_of(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.size()}, input2: {input2.size()}, "
                           f"target: {target.size()} ")
    return reduce_loss((-target * (input1 - input2) + float(margin)).clamp_min(0), r)


@public
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """torch.nn.functional.hinge_embedding_loss: ``input`` where the target is not -1,
    plus ``max(0, margin - input)`` where it is not 1."""
    r = reduction_of(size_average, reduce, reduction)
    zeros = E.zeros_like(input)
    # torch fills a tensor like the input with the margin: integer inputs stay integer
    hinge = (E.full_like(input, margin) - input).clamp_min(0)
    loss = E.where(target != 1, hinge, zeros) + E.where(target != -1, input, zeros)
    return reduce_loss(loss, r)


@public
def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """torch.nn.functional.soft_margin_loss: ``log(1 + exp(-target * input))``, in the
    input's dtype (torch writes every step into a tensor like the input)."""
    r = reduction_of(size_average, reduce, reduction)
    refuse_grad("soft_margin_loss", "target", target)
    z = -input * target
    if input.dtype.category < _FLOATING:
        result = z.dtype if z.dtype.category == _FLOATING else E.get_default_dtype()
        raise RuntimeError(f"result type {scalar_type_name(result)} can't be cast to the "
                           f"desired output type {scalar_type_name(input.dtype)}")
    if z.shape != input.shape:
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the "
                           f"broadcast shape {list(z.shape)}")
    if z.dtype is not input.dtype:
        z = z.to(input.dtype)
    return reduce_loss((z.exp() + 1).log(), r)


@public
def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: Any = None, reduce: Any = None,
                                reduction: str = "mean") -> Tensor:
    """torch.nn.functional.multilabel_soft_margin_loss: ``-(y logsigmoid(x) + (1 - y)
    logsigmoid(-x))``, weighted per class, averaged over the classes (the last dim)."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return reduce_loss(loss, reduction_enum(reduction))


def _frames(name: str, input: Tensor) -> tuple[int, int]:
    """torch's shape check of the margin kernels: (frames, classes) of a 0-d, (C,) or
    (N, C) input."""
    shape = tuple(input.shape)
    if not ((len(shape) == 2 and shape[1] != 0) or (len(shape) == 1 and shape[0] != 0)
            or not shape):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(shape)}")
    if len(shape) <= 1:
        return 1, shape[0] if shape else 1
    return shape[0], shape[1]


def _long_target(target: Tensor) -> None:
    if target.dtype is not E.int64:
        raise RuntimeError(f"expected scalar type Long but found "
                           f"{scalar_type_name(target.dtype)}")


def _per_frame(loss: Tensor, reduction: int, batched: bool) -> Tensor:
    """A margin kernel's output: one loss per frame without reduction (0-d for an
    unbatched call), else reduced over the frames."""
    if reduction == NONE:
        return loss if batched else loss.reshape(())
    return reduce_loss(loss, reduction)


@public
def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                           reduce: Any = None, reduction: str = "mean") -> Tensor:
    """torch.nn.functional.multilabel_margin_loss: for each frame, ``sum(max(0, 1 - (x[j]
    - x[i]))) / C`` over the target classes ``j`` (the target's leading entries before
    the first -1) and the other classes ``i``."""
    r = reduction_of(size_average, reduce, reduction)
    frames, classes = _frames("multilabel_margin_loss", input)
    batched = input.dim() == 2
    if (target.dim() != 2 or tuple(target.shape) != (frames, classes)) if batched else (
            target.dim() > 1 or target.numel() != classes):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}")
    if input.numel() and (int(target.min()) < -1 or int(target.max()) >= classes):
        raise RuntimeError("argument #2 'target' is out of range")
    if input.dtype.category != _FLOATING:
        raise not_implemented("multilabel_margin_loss_forward_out_frame", input.dtype)
    _long_target(target)
    x = input.reshape(frames, classes)
    t = target.reshape(frames, classes)
    listed = (t < 0).cumsum(1) == 0  # the entries before the first negative one
    index = t.masked_fill(~listed, 0)
    is_target = ((index.unsqueeze(2) == E.arange(classes, device=input.device))
                 & listed.unsqueeze(2)).any(1)
    # z[n, j, i] = 1 - x[n, target j] + x[n, i], counted for listed j and non-target i
    z = 1 - x.gather(1, index).unsqueeze(2) + x.unsqueeze(1)
    counted = listed.unsqueeze(2) & ~is_target.unsqueeze(1) & (z > 0)
    loss = E.where(counted, z, 0).sum((1, 2)) / classes
    return _per_frame(loss, r, target.dim() > 1)


@public
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: Any = None,
                      reduce: Any = None, reduction: str = "mean") -> Tensor:
    """torch.nn.functional.multi_margin_loss: for each frame, ``sum(w[y] * max(0, margin
    - x[y] + x[i]) ** p) / C`` over the classes ``i`` other than the target ``y``."""
    r = reduction_of(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    frames, classes = _frames("multi_margin_loss", input)
    if target.dim() > 1 or target.numel() != frames:
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to "
                           "the number of input samples (batch size). Expected target size "
                           f"[{frames}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(f"inconsistent weight size, expected {classes} but got "
                           f"{list(weight.shape)}")
    refuse_grad("multi_margin_loss", "weight", weight)
    batched = r == NONE and target.dim() > 0
    if input.numel() == 0:
        return _per_frame(input.sum(1), r, batched)
    if input.dtype not in (E.float32, E.float64):
        raise not_implemented("multi_margin_loss_cpu_kernel", input.dtype)
    _long_target(target)
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input.dtype)} but found "
                           f"{scalar_type_name(weight.dtype)}")
    t = target.reshape(frames, 1)
    if bool(((t < 0) | (t >= classes)).any()):
        raise RuntimeError("target out of range")
    x = input.reshape(frames, classes)
    z = float(margin) - x.gather(1, t) + x
    others = E.arange(classes, device=input.device) != t
    hinge = E.where(others & (z > 0), z if p == 1 else z * z, 0)
    if weight is not None:
        hinge = hinge * weight[t]
    return _per_frame(hinge.sum(1) / classes, r, batched)


@public
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """torch.nn.functional.triplet_margin_loss: ``max(0, margin + d(a, p) - d(a, n))``
    with ``d`` the pairwise p-norm distance; ``swap`` takes ``min(d(a, n), d(p, n))``."""
    r = reduction_of(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _same_dims(anchor, positive, negative)

    def distance(x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, p, eps)

    return reduce_loss(_triplet(anchor, positive, negative, distance, margin, swap), r)


@public
def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[[Tensor, Tensor], Tensor]
                                      | None = None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """torch.nn.functional.triplet_margin_with_distance_loss: triplet_margin_loss with
    ``distance_function`` (default: pairwise_distance) as the distance."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _same_dims(anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    loss = _triplet(anchor, positive, negative, distance, margin, swap)
    return reduce_loss(loss, reduction_enum(reduction))


def _same_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    a, p, n = anchor.ndim, positive.ndim, negative.ndim
    if not a == p == n:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {a}D, positive "
                           f"{p}D, and negative {n}D inputs")


def _triplet(anchor: Tensor, positive: Tensor, negative: Tensor,
             distance: Callable[[Tensor, Tensor], Tensor], margin: float,
             swap: bool) -> Tensor:
    d_positive = distance(anchor, positive)
    d_negative = distance(anchor, negative)
    if swap:
        d_negative = E.minimum(d_negative, distance(positive, negative))
    return (margin + d_positive - d_negative).clamp_min(0)  # type: ignore[no-any-return]
