"""The negative log likelihood and cross entropy losses, structured as torch's.

``cross_entropy`` with class indices is ``log_softmax`` over the class dim, then the
primitive that picks each target's log probability (torch's ``nll_loss_nd``): ``nll_loss``
of it. Label smoothing and class-probability targets are composites of other ops, as in
torch's ``cross_entropy_loss``.

Primitives (operands ``self``, ``target`` and ``weight``, which may be None; params
``reduction``, torch's enum: 0 none, 1 mean, 2 sum, and ``ignore_index``):

- ``nll_loss_forward`` for a (C,) input with a 0-d target or an (N, C) input with an (N,)
  target, and ``nll_loss2d_forward`` for an (N, C, H, W) input with an (N, H, W) target ->
  ``(output, total_weight)``: the loss (per target without reduction, else 0-d) and the
  weights of the targets not ignored, summed (0 without reduction, but for a 1-d input);
- ``nll_loss_backward`` and ``nll_loss2d_backward`` (operands ``grad_output``, ``self``,
  ``target``, ``weight``, ``total_weight``) -> the input's gradient, row-major.

A reduction sums in the input's dtype in torch's order: a cascade of eight partial sums,
each level taking sixteen of the one below, so that float16 and bfloat16 losses round as
torch's CPU kernel rounds them. Native loops for float32/float64 sit in ``losses_native``.
"""

from __future__ import annotations

import math
import operator
import warnings
from typing import Any

import numpy as np

from .. import meta
from ..dispatch import register
from ..dtypes import scalar_type_name
from ..tensor import Tensor
from .operands import common_device, not_implemented
from .softmax import log_softmax

NONE, MEAN, SUM = 0, 1, 2
_LEVELS = 8  # torch's cascade_sum_num_levels
_LONG_OR_BYTE = (np.dtype(np.int64), np.dtype(np.uint8))


# ----------------------------------------------------------------------------- reference

def _rows(x: Any, t: Any) -> tuple[Any, Any]:
    """``x`` as (batch, classes, positions) and ``t`` flat in int64: a 1-d input is one
    row, an (N, C) input has one position per row, an (N, C, H, W) input H * W."""
    if x.ndim == 1:
        x3 = x.reshape(1, -1, 1)
    elif x.ndim == 2:
        x3 = x[:, :, None]
    else:
        x3 = x.reshape(x.shape[0], x.shape[1], math.prod(x.shape[2:]))
    return x3, t.reshape(-1).astype(np.int64, copy=False)


def out_of_bounds(target: int) -> IndexError:
    return IndexError(f"Target {target} is out of bounds.")


def _targets(t: Any, classes: int, ignore_index: int) -> Any:
    """The positions of the targets not ignored; IndexError, as torch's, for the first one
    that names no class."""
    valid = t != ignore_index
    bad = valid & ((t < 0) | (t >= classes))
    if bad.any():
        raise out_of_bounds(int(t[np.argmax(bad)]))
    return np.flatnonzero(valid)


def _ceil_log2(n: int) -> int:
    return 1 if n <= 2 else (n - 1).bit_length()


def _runs(values: Any, ends: Any) -> tuple[Any, Any]:
    """The sums, each from +0 and in order, of the runs of ``values`` that end (inclusive) at
    each index of ``ends``, and of the run after the last."""
    n = values.shape[0]
    dt = values.dtype
    starts = np.concatenate(([0], ends + 1))
    lengths = np.concatenate((ends + 1, [n])) - starts
    sums = np.zeros(starts.shape[0], dt)
    # runs grouped by the power of two their length rounds up to: the padding stays under
    # the values' count, however uneven the runs (targets ignored where a run would close
    # make it longer)
    widths = np.where(lengths > 0, 2 ** np.ceil(np.log2(np.maximum(lengths, 1))), 0)
    for width in np.unique(widths[widths > 0]).astype(np.int64):
        runs = np.flatnonzero(widths == width)
        cols = np.arange(width)
        inside = cols < lengths[runs, None]
        block = np.full((runs.shape[0], width + 1), -0.0, dt)  # -0.0 adds nothing, sign too
        block[:, 0] = 0
        block[:, 1:][inside] = values[(starts[runs, None] + cols)[inside]]
        sums[runs] = np.add.accumulate(block, axis=1, dtype=dt)[:, -1]
    return sums[:-1], sums[-1]


def _cascade_sum(terms: Any, valid: Any) -> Any:
    """``sum(terms)`` as torch's nll_loss kernels add them, in the terms' dtype: each term
    into the first of eight partial sums; after a term not ignored at an index that is a
    multiple of ``step**(j + 1)`` (``step`` 16 below 2**40 terms), partial sum ``j`` moves
    into ``j + 1``; at the end the partial sums are added in order."""
    n = terms.shape[0]
    power = max(4, _ceil_log2(n) // _LEVELS)
    index = np.arange(n)
    pushes = np.flatnonzero(valid & ((index & ((1 << power) - 1)) == 0))
    values, ends = terms, pushes
    total = np.zeros((), terms.dtype)
    for level in range(_LEVELS):
        if level == _LEVELS - 1:
            ends = ends[:0]
        sums, rest = _runs(values, ends)
        total = total + rest
        closes = (pushes & ((1 << (power * (level + 2))) - 1)) == 0
        values, ends, pushes = sums, np.flatnonzero(closes), pushes[closes]
    return total


def _nll_loss(x: Any, t: Any, w: Any, *, reduction: int,
              ignore_index: int) -> tuple[Any, Any]:
    dt = x.dtype
    x3, t1 = _rows(x, t)
    batch, classes, positions = x3.shape
    picked = _targets(t1, classes, ignore_index)
    target = t1[picked]
    chosen = x3[picked // positions, target, picked % positions]
    weights = None if w is None else w[target]
    if reduction == NONE and x.ndim >= 2:
        out = np.zeros(t.shape, dt)
        out.reshape(-1)[picked] = -chosen if weights is None else -chosen * weights
        return out, np.zeros((), dt)
    if t1.shape[0] == 0:  # the mean of no targets is NaN, as torch's
        return np.full((), np.nan if reduction == MEAN else 0, dt), np.zeros((), dt)
    valid = np.zeros(t1.shape[0], bool)
    valid[picked] = True
    terms = np.full(t1.shape[0], -0.0, dt)
    terms[picked] = -chosen if weights is None else -(chosen * weights)
    loss = _cascade_sum(terms, valid)
    if weights is None:
        total = np.asarray(picked.shape[0], dt)
    else:
        taken = np.full(t1.shape[0], -0.0, dt)
        taken[picked] = weights
        total = _cascade_sum(taken, valid)
    if reduction == MEAN:
        loss = loss / total
    return np.asarray(loss, dt), np.asarray(total, dt)


def _nll_loss_backward(g: Any, x: Any, t: Any, w: Any, total_weight: Any, *,
                       reduction: int, ignore_index: int) -> Any:
    dt = x.dtype
    dx = np.zeros(x.shape, dt)
    dx3, t1 = _rows(dx, t)
    _, classes, positions = dx3.shape
    picked = _targets(t1, classes, ignore_index)
    target = t1[picked]
    weights = None if w is None else w[target]
    if reduction == NONE and x.ndim >= 2:
        g1 = g.reshape(-1)[picked]
        values = -g1 if weights is None else -weights * g1
    else:
        scale = -(g.reshape(()) / total_weight.reshape(()) if reduction == MEAN
                  else g.reshape(()))
        values = scale if weights is None else weights * scale
    dx3[picked // positions, target, picked % positions] = values
    return dx


def _forward_rule(x: Any, t: Any, w: Any, *, reduction: int, ignore_index: int) -> Any:
    shape = (x.shape[0], *x.shape[2:]) if reduction == NONE and x.ndim >= 2 else ()
    return meta.empty(shape, x.dtype), meta.empty((), x.dtype)


def _backward_rule(g: Any, x: Any, t: Any, w: Any, total_weight: Any, *, reduction: int,
                   ignore_index: int) -> Any:
    return meta.empty(x.shape, x.dtype)


_NAMES = ("self", "target", "weight")
_BACKWARD_NAMES = ("grad_output", "self", "target", "weight", "total_weight")
NLL_LOSS_FORWARD = register("nll_loss_forward", _nll_loss, _forward_rule, "library",
                            arg_names=_NAMES)
NLL_LOSS2D_FORWARD = register("nll_loss2d_forward", _nll_loss, _forward_rule, "library",
                              arg_names=_NAMES)
NLL_LOSS_BACKWARD = register("nll_loss_backward", _nll_loss_backward, _backward_rule,
                             "library", False, arg_names=_BACKWARD_NAMES)
NLL_LOSS2D_BACKWARD = register("nll_loss2d_backward", _nll_loss_backward, _backward_rule,
                               "library", False, arg_names=_BACKWARD_NAMES)


# ----------------------------------------------------------------------------- arguments

def reduction_enum(reduction: Any) -> int:
    """torch's ``_Reduction.get_enum``: 'none' 0, 'mean' 1, 'sum' 2."""
    if reduction == "none":
        return NONE
    if reduction == "mean":
        return MEAN
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use "
                      "reduction='mean' instead.", stacklevel=4)
        return MEAN
    if reduction == "sum":
        return SUM
    raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_reduction(size_average: Any, reduce: Any) -> str:
    """torch's ``_Reduction.legacy_get_string``: the reduction the deprecated
    ``size_average`` and ``reduce`` arguments name, with torch's warning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn("size_average and reduce args will be deprecated, please use "
                  f"reduction='{ret}' instead.", stacklevel=4)
    return ret


def _reduction(size_average: Any, reduce: Any, reduction: Any) -> int:
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    return reduction_enum(reduction)


def _check_types(op: str, input: Any, target: Any, weight: Any, ignore_index: Any) -> int:
    """torch's argument parsing: TypeErrors naming the argument and its position."""
    if input.__class__ is not Tensor or target.__class__ is not Tensor or (
            weight is not None and weight.__class__ is not Tensor):
        for position, (name, value) in enumerate(
                (("input", input), ("target", target), ("weight", weight)), 1):
            if not isinstance(value, Tensor) and (value is not None or name != "weight"):
                raise TypeError(f"{op}(): argument '{name}' (position {position}) must be "
                                f"Tensor, not {type(value).__name__}")
    if ignore_index.__class__ is int:
        return ignore_index  # type: ignore[no-any-return]
    if isinstance(ignore_index, bool):
        raise TypeError(f"{op}(): argument 'ignore_index' (position 5) must be int, not bool")
    try:
        return operator.index(ignore_index)
    except TypeError:
        raise TypeError(f"{op}(): argument 'ignore_index' (position 5) must be int, not "
                        f"{type(ignore_index).__name__}") from None


def _check_nll(input: Tensor, target: Tensor, weight: Tensor | None) -> None:
    """torch's checks of nll_loss_forward's arguments, in its order (its meta function,
    then its CPU kernel's)."""
    x, t = input._data.shape, target._data.shape
    if not 1 <= len(x) <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if len(t) > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.dtype.np not in _LONG_OR_BYTE:
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{scalar_type_name(target.dtype)}")
    if len(x) == 1 and len(t) == 1 and t[0] != 1:
        raise ValueError("For 1D input, 1D target must have size 1, but got target size: "
                         f"{t[0]}")
    if len(x) != 1 and x[0] != t[0]:
        raise RuntimeError(f"size mismatch (got input: {list(x)}, target: {list(t)})")
    if weight is not None and weight._data.shape != x[-1:]:
        raise RuntimeError(f"weight tensor should be defined either for all {x[-1]} classes "
                           "or no classes but got weight tensor of shape: "
                           f"{list(weight._data.shape)}")
    _check_kernel_types("nll_loss_out_frame", input, weight)


def _check_nll2d(input: Tensor, target: Tensor, weight: Tensor | None) -> None:
    """torch's checks of nll_loss2d_forward's arguments, in its order."""
    x, t = input._data.shape, target._data.shape
    if len(t) != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {len(t)}")
    if len(x) != 4:
        raise RuntimeError("only batches of spatial inputs supported (4D tensors), but got "
                           f"input of dimension: {len(x)}")
    if target.dtype.np not in _LONG_OR_BYTE:
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{scalar_type_name(target.dtype)}")
    if weight is not None and weight._data.size != x[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if t != (x[0], *x[2:]):
        raise RuntimeError(f"size mismatch (got input: {list(x)} , target: {list(t)}")
    _check_kernel_types("nll_loss2d_forward_out_frame", input, weight)
    if target.dtype.np != _LONG_OR_BYTE[0]:  # its kernel reads int64 targets only
        raise RuntimeError(f"expected scalar type Long but found "
                           f"{scalar_type_name(target.dtype)}")


def _check_kernel_types(kernel: str, input: Tensor, weight: Tensor | None) -> None:
    if input.dtype.category != 2:
        raise not_implemented(kernel, input.dtype)
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input.dtype)} but found "
                           f"{scalar_type_name(weight.dtype)}")


def _nll_loss_nd(input: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                 ignore_index: int) -> Tensor:
    """torch's nll_loss_nd: nll_loss_forward for 1-d and 2-d inputs, nll_loss2d_forward
    for the others, their positions flattened into one spatial dim."""
    x, t = input._data.shape, target._data.shape
    if not x:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    batch = t[0] if t else 0
    if len(x) != 1 and x[0] != batch:
        raise ValueError(f"Expected input batch_size ({x[0]}) to match target "
                         f"batch_size ({batch}).")
    if input.device is not target.device or weight is not None and (
            weight.device is not input.device):
        common_device("nll_loss", input, target, *(() if weight is None else (weight,)))
    params = {"reduction": reduction, "ignore_index": ignore_index}
    if len(x) <= 2:
        _check_nll(input, target, weight)
        return NLL_LOSS_FORWARD.door((input, target, weight), params)[0]  # type: ignore[no-any-return]
    if len(x) == 4:
        _check_nll2d(input, target, weight)
        return NLL_LOSS2D_FORWARD.door((input, target, weight), params)[0]  # type: ignore[no-any-return]
    n, c = x[0], x[1]
    out_size = [n, *x[2:]]
    if list(t[1:]) != out_size[1:]:
        raise RuntimeError(f"Expected target size {out_size}, got {list(t)}")
    empty = input.numel() == 0
    input = input.contiguous().view(n, c, 0 if empty else 1, 0 if empty else -1)
    empty = target.numel() == 0
    target = target.contiguous().view(n, 0 if empty else 1, 0 if empty else -1)
    _check_nll2d(input, target, weight)
    out = NLL_LOSS2D_FORWARD.door((input, target, weight), params)[0]
    return out if reduction != NONE else out.view(out_size)  # type: ignore[no-any-return]


def _dims(t: Tensor) -> list[int]:
    return list(t._data.shape)


# ----------------------------------------------------------------------------- public API

def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """torch.nn.functional.nll_loss: ``-input[n, target[n]] * weight[target[n]]`` per
    target (class dim 1; the trailing dims of an (N, C, d1, ...) input are positions),
    summed, or averaged over the weights of the targets, ``ignore_index`` left out.
    ``size_average`` and ``reduce`` are deprecated: given, they name the reduction."""
    r = _reduction(size_average, reduce, reduction)
    ignore = _check_types("nll_loss_nd", input, target, weight, ignore_index)
    return _nll_loss_nd(input, target, weight, r, ignore)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """torch.nn.functional.cross_entropy: ``nll_loss(log_softmax(input, 1), target)`` for
    class indices (class dim 0 for a 1-d input); for class probabilities (a float target
    of the input's shape), ``-(log_softmax(input, 1) * target * weight)`` summed over the
    classes. ``label_smoothing`` mixes the target with the uniform distribution over the
    classes by that amount."""
    r = _reduction(size_average, reduce, reduction)
    ignore = _check_types("cross_entropy_loss", input, target, weight, ignore_index)
    if label_smoothing.__class__ is not float and not isinstance(label_smoothing,
                                                                 (int, float, np.number)):
        raise TypeError("cross_entropy_loss(): argument 'label_smoothing' (position 6) must be "
                        f"float, not {type(label_smoothing).__name__}")
    smoothing = float(label_smoothing)
    shape = input._data.shape
    if shape == target._data.shape:
        if target.dtype.category != 2:
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {scalar_type_name(target.dtype)}")
        if ignore >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _probability_target(input, target, weight, r, smoothing)
    if smoothing > 0.0:
        _check_smoothing(smoothing)
        return _label_smoothing(input, target, weight, r, ignore, smoothing)
    return _nll_loss_nd(log_softmax(input, 0 if len(shape) == 1 else 1), target, weight, r,
                        ignore)


def _check_smoothing(smoothing: float) -> None:
    if smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {smoothing:g}")


def _class_weight(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    """``weight`` viewed to broadcast along the class dim of an ``ndim``-d input."""
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(shape)


def _probability_target(input: Tensor, target: Tensor, weight: Tensor | None,
                        reduction: int, smoothing: float) -> Tensor:
    """torch's cross_entropy_loss_prob_target."""
    class_dim = 0 if input.ndim == 1 else 1
    if input.ndim <= class_dim:
        raise IndexError(f"Dimension specified as {class_dim} but tensor has no dimensions")
    classes = input.shape[class_dim]
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all "
                           f"{classes} classes or no classes but got weight tensor of shape: "
                           f"{_dims(weight)}")
    x = log_softmax(input, class_dim)
    if smoothing > 0.0:
        _check_smoothing(smoothing)
        target = target * (1 - smoothing) + smoothing / classes
    terms = x * target
    if weight is not None:
        terms = terms * (_class_weight(weight, x.ndim, 1) if x.ndim > 1 else weight)
    if reduction == MEAN:
        if x.numel() == 0:
            return -terms.sum().fill_(math.nan)
        return -terms.sum() / (x.numel() // classes)
    if reduction == SUM:
        return -terms.sum()
    return -terms.sum(class_dim)


def _label_smoothing(input: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                     ignore_index: int, smoothing: float) -> Tensor:
    """torch's cross_entropy_loss_label_smoothing: the loss of the target, and that of the
    uniform distribution over the classes, mixed; the weights' sum of the mean taken by
    gather and masking (torch's path for tensor subclasses and dispatch modes, whose shapes
    depend on no values)."""
    class_dim = 0 if input.ndim == 1 else 1
    x = log_softmax(input, class_dim)
    nll = _nll_loss_nd(x, target, weight, reduction, ignore_index)
    classes = x.shape[class_dim]
    if weight is not None:
        smooth = -(x * _class_weight(weight, x.ndim, class_dim)).sum(class_dim)
    else:
        smooth = -x.sum(class_dim)
    ignored = target.eq(ignore_index)
    smooth.masked_fill_(ignored, 0.0)
    if reduction == MEAN:
        if weight is not None:
            kept = weight.gather(0, target.masked_fill(ignored, 0).flatten())
            weight_sum = kept.masked_fill_(ignored.flatten(), 0).sum()
            ret = smooth.sum() / weight_sum
        else:
            kept = ignored.logical_not()
            ret = smooth.sum() / kept.sum()
    elif reduction == SUM:
        ret = smooth.sum()
    else:
        ret = smooth
    uniform = ret * (smoothing / classes)
    return nll * (1 - smoothing) + uniform  # type: ignore[no-any-return]


# the native CPU kernels, registered beside the reference forwards above
from . import losses_native  # noqa: E402,F401

# torch has no top-level nll_loss or cross_entropy: the nn package takes them from here
FUNCTIONS: list[str] = []
METHODS: dict[str, Any] = {}
