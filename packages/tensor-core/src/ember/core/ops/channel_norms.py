"""Batch and group normalization: statistics per channel (dim 1) over the batch and the
spatial dims, or per sample over groups of channels.

Primitives (float16/bfloat16 compute in float32 and round once, as torch's CPU kernels):

- ``_native_batch_norm_legit_functional`` (``input``, ``weight``, ``bias``,
  ``running_mean``, ``running_var``, any but the input None; params ``momentum``, ``eps``)
  -> ``(out, save_mean, save_invstd, new_running_mean, new_running_var)`` of training: the
  batch's mean and 1/sqrt(biased var + eps), and the running statistics moved by
  ``momentum`` toward the batch's (unbiased variance). ``batch_norm`` copies the new
  running statistics into the caller's buffers (torch's ``native_batch_norm`` writes them
  in place);
- ``_native_batch_norm_legit_no_training`` (the same operands; params ``eps``) -> ``(out,
  save_mean, save_invstd)`` of evaluation: the running statistics normalize, the saved
  ones are empty; its node keeps the running statistics its backward reads;
- ``native_batch_norm_backward`` (``grad_out``, ``input``, ``weight``, ``running_mean``,
  ``running_var``, ``save_mean``, ``save_invstd``; params ``train``, ``eps``,
  ``output_mask``);
- ``native_group_norm`` (``input``, ``weight``, ``bias``; params ``group``, ``eps``) ->
  ``(out, mean, rstd)``, mean and rstd (N, group); ``native_group_norm_backward``
  (``grad_out``, ``input``, ``mean``, ``rstd``, ``weight``; params ``group``,
  ``output_mask``).

The output is laid out as the input where that is channels-last, else row-major (torch's
``suggest_memory_format``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import meta
from ..dispatch import dispatch, register
from ..tensor import Tensor, wrap_dim
from . import channel_norms_native as native_loops
from .normalization import _check_param_types
from .operands import LOW_PRECISION, check_operand, not_implemented

_F32 = np.dtype(np.float32)


def _work(x: Any) -> Any:
    return x.astype(_F32) if x.dtype in LOW_PRECISION else x


def _channel_view(p: Any, ndim: int) -> Any:
    """A per-channel vector shaped to broadcast along dim 1 of an ``ndim`` input."""
    return p.reshape((1, -1) + (1,) * (ndim - 2))


def _laid_out(x: Any, values: Any) -> Any:
    """``values`` in ``x``'s dtype, channels-last where ``x`` is, else row-major."""
    strides = _out_strides(x.shape, meta.element_strides(x))
    if strides == meta.contiguous_strides(x.shape):
        return np.ascontiguousarray(values.astype(x.dtype, copy=False))
    out = np.lib.stride_tricks.as_strided(np.empty(x.size, x.dtype), x.shape,
                                          tuple(s * x.itemsize for s in strides))
    out[...] = values
    return out


def _out_strides(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...]:
    if len(shape) in (4, 5) and meta.is_channels_last(shape, strides) and not \
            meta.is_contiguous(shape, strides):
        return meta.channels_last_strides(shape)
    return meta.contiguous_strides(shape)


def _stat_dtype(x: Any, *params: Any) -> Any:
    return _F32 if any(p is not None and p.dtype != x.dtype for p in params) else x.dtype


# ----------------------------------------------------------------------------- batch norm

def _unbiased(count: int) -> float:
    """The factor from the biased variance to the unbiased one: inf for a single value
    (torch's running variance then becomes NaN)."""
    return count / (count - 1) if count > 1 else math.inf


def _batch_norm_any(x: Any, w: Any, b: Any, rm: Any, rv: Any, training: bool, momentum: float,
                    eps: float) -> tuple[Any, ...]:
    axes = (0, *range(2, x.ndim))
    z = _work(x)
    stat = _stat_dtype(x, w, b, rm, rv)
    if training:
        mean = z.mean(axis=axes)
        var = np.square(z - _channel_view(mean, x.ndim)).mean(axis=axes)
        invstd = 1 / np.sqrt(var + z.dtype.type(eps))
        count = x.size // max(x.shape[1], 1)
        new_rm = None if rm is None else (
            (1 - momentum) * _work(rm) + momentum * mean).astype(rm.dtype)
        new_rv = None if rv is None else (
            (1 - momentum) * _work(rv) + momentum * var * _unbiased(count)
        ).astype(rv.dtype)
        centre, scale = mean, invstd
        saved = (mean.astype(stat), invstd.astype(stat))
    else:
        centre, scale = _work(rm), 1 / np.sqrt(_work(rv) + z.dtype.type(eps))
        saved = (np.empty(0, stat), np.empty(0, stat))
        new_rm = new_rv = None
    y = (z - _channel_view(centre, x.ndim)) * _channel_view(scale, x.ndim)
    if w is not None:
        y = y * _channel_view(_work(w), x.ndim)
    if b is not None:
        y = y + _channel_view(_work(b), x.ndim)
    return (_laid_out(x, y), *saved, new_rm, new_rv)


def _batch_norm_backward(g: Any, x: Any, w: Any, rm: Any, rv: Any, mean: Any, invstd: Any, *,
                         train: bool, eps: float,
                         output_mask: tuple[bool, bool, bool]) -> tuple[Any, Any, Any]:
    axes = (0, *range(2, x.ndim))
    z, gz = _work(x), _work(g)
    if train:
        centre, scale = _work(mean), _work(invstd)
    else:
        centre, scale = _work(rm), 1 / np.sqrt(_work(rv) + z.dtype.type(eps))
    xhat = (z - _channel_view(centre, x.ndim)) * _channel_view(scale, x.ndim)
    weight = np.ones(x.shape[1], z.dtype) if w is None else _work(w)
    dx = dw = db = None
    sum_g = gz.sum(axis=axes)
    sum_gx = (gz * xhat).sum(axis=axes)
    if output_mask[0]:
        k = _channel_view(weight * scale, x.ndim)
        if train:
            count = x.size // max(x.shape[1], 1)
            dx = k * (gz - _channel_view(sum_g / count, x.ndim)
                      - xhat * _channel_view(sum_gx / count, x.ndim))
        else:
            dx = gz * k
        dx = _laid_out(x, dx)
    param = x.dtype if w is None else w.dtype
    if output_mask[1]:
        dw = sum_gx.astype(param)
    if output_mask[2]:
        db = sum_g.astype(param)
    return dx, dw, db


def _batch_norm(x: Any, w: Any, b: Any, rm: Any, rv: Any, *, momentum: float,
                eps: float) -> tuple[Any, ...]:
    return _batch_norm_any(x, w, b, rm, rv, True, momentum, eps)


def _batch_norm_eval(x: Any, w: Any, b: Any, rm: Any, rv: Any, *, eps: float) -> Any:
    return _batch_norm_any(x, w, b, rm, rv, False, 0.0, eps)[:3]


def _batch_norm_rule_any(x: Any, w: Any, b: Any, rm: Any, rv: Any,
                         training: bool) -> tuple[Any, ...]:
    stat = _stat_dtype(x, w, b, rm, rv)
    saved = (x.shape[1],) if training else (0,)
    out = meta.strided(x.shape, x.dtype, _out_strides(x.shape, meta.element_strides(x)))
    return (out, meta.empty(saved, stat), meta.empty(saved, stat),
            None if rm is None else meta.empty(rm.shape, rm.dtype),
            None if rv is None else meta.empty(rv.shape, rv.dtype))


def _channel_grads_rule(x: Any, w: Any, output_mask: tuple[bool, bool, bool]) -> tuple[Any, ...]:
    """The gradients of a channel norm's input, weight and bias, as the mask asks."""
    param = x.dtype if w is None else w.dtype
    c = (x.shape[1],)
    return (meta.strided(x.shape, x.dtype, _out_strides(x.shape, meta.element_strides(x)))
            if output_mask[0] else None,
            meta.empty(c, param) if output_mask[1] else None,
            meta.empty(c, param) if output_mask[2] else None)


def _batch_norm_backward_rule(g: Any, x: Any, w: Any, rm: Any, rv: Any, mean: Any,
                              invstd: Any, *, train: bool, eps: float,
                              output_mask: tuple[bool, bool, bool]) -> tuple[Any, ...]:
    return _channel_grads_rule(x, w, output_mask)


def _batch_norm_rule(x: Any, w: Any, b: Any, rm: Any, rv: Any, *, momentum: float,
                     eps: float) -> tuple[Any, ...]:
    return _batch_norm_rule_any(x, w, b, rm, rv, True)


def _batch_norm_eval_rule(x: Any, w: Any, b: Any, rm: Any, rv: Any, *, eps: float) -> Any:
    return _batch_norm_rule_any(x, w, b, rm, rv, False)[:3]


_BATCH_NORM_ARGS = ("input", "weight", "bias", "running_mean", "running_var")
BATCH_NORM = register("_native_batch_norm_legit_functional", _batch_norm, _batch_norm_rule,
                      "reduction", arg_names=_BATCH_NORM_ARGS)
BATCH_NORM_EVAL = register("_native_batch_norm_legit_no_training", _batch_norm_eval,
                           _batch_norm_eval_rule, "reduction", arg_names=_BATCH_NORM_ARGS)
BATCH_NORM_BACKWARD = register(
    "native_batch_norm_backward", _batch_norm_backward, _batch_norm_backward_rule,
    "reduction", False, arg_names=("grad_out", "input", "weight", "running_mean",
                                   "running_var", "save_mean", "save_invstd"))


# ----------------------------------------------------------------------------- group norm

def _grouped(x: Any, group: int) -> Any:
    """``x`` (N, C, *) as (N, group, C // group * prod(*)), empty ones too."""
    return x.reshape(x.shape[0], group, x.shape[1] // group * math.prod(x.shape[2:]))


def _group_norm(x: Any, w: Any, b: Any, *, group: int, eps: float) -> tuple[Any, Any, Any]:
    z = _grouped(_work(np.ascontiguousarray(x)), group)
    stat = _stat_dtype(x, w, b)
    if z.shape[-1] == 0:
        mean = np.zeros(z.shape[:2], z.dtype)
        rstd = np.full(z.shape[:2], np.nan, z.dtype)
    else:
        mean = z.mean(axis=-1)
        var = np.square(z - mean[..., None]).mean(axis=-1)
        rstd = (1 / np.sqrt(var.astype(np.float64) + eps)).astype(z.dtype)  # (as torch's)
    y = ((z - mean[..., None]) * rstd[..., None]).reshape(x.shape)
    if w is not None:
        y = y * _channel_view(_work(w), x.ndim)
    if b is not None:
        y = y + _channel_view(_work(b), x.ndim)
    return _laid_out(x, y), mean.astype(stat), rstd.astype(stat)


def _group_norm_backward(g: Any, x: Any, mean: Any, rstd: Any, w: Any, *, group: int,
                         output_mask: tuple[bool, bool, bool]) -> tuple[Any, Any, Any]:
    z, gz = _work(np.ascontiguousarray(x)), _work(np.ascontiguousarray(g))
    m, r = _work(mean)[..., None], _work(rstd)[..., None]
    xhat = ((_grouped(z, group) - m) * r).reshape(x.shape)
    axes = (0, *range(2, x.ndim))
    dx = dw = db = None
    if output_mask[0]:
        gw = gz if w is None else gz * _channel_view(_work(w), x.ndim)
        gg, xg = _grouped(gw, group), _grouped(xhat, group)
        dx = r * (gg - gg.mean(axis=-1, keepdims=True)
                  - xg * (gg * xg).mean(axis=-1, keepdims=True)) if gg.shape[-1] else gg
        dx = _laid_out(x, dx.reshape(x.shape))
    param = x.dtype if w is None else w.dtype
    if output_mask[1]:
        dw = (gz * xhat).sum(axis=axes).astype(param)
    if output_mask[2]:
        db = gz.sum(axis=axes).astype(param)
    return dx, dw, db


def _group_norm_rule(x: Any, w: Any, b: Any, *, group: int, eps: float) -> tuple[Any, ...]:
    stat = _stat_dtype(x, w, b)
    out = meta.strided(x.shape, x.dtype, _out_strides(x.shape, meta.element_strides(x)))
    return out, meta.empty((x.shape[0], group), stat), meta.empty((x.shape[0], group), stat)


def _group_norm_backward_rule(g: Any, x: Any, mean: Any, rstd: Any, w: Any, *, group: int,
                              output_mask: tuple[bool, bool, bool]) -> tuple[Any, ...]:
    return _channel_grads_rule(x, w, output_mask)


GROUP_NORM = register("native_group_norm", _group_norm, _group_norm_rule, "reduction",
                      arg_names=("input", "weight", "bias"))
GROUP_NORM_BACKWARD = register(
    "native_group_norm_backward", _group_norm_backward, _group_norm_backward_rule,
    "reduction", False, arg_names=("grad_out", "input", "mean", "rstd", "weight"))


# ----------------------------------------------------------------------------- native CPU

def _of_its_dtype(x: Any, *arrays: Any) -> bool:
    return all(a is None or a.dtype == x.dtype for a in arrays)


def _batch_norm_kernel(x: Any, w: Any, b: Any, rm: Any, rv: Any, *, momentum: float,
                       eps: float) -> tuple[Any, ...]:
    stats = native_loops.statistics(x, eps) if _of_its_dtype(x, w, b, rm, rv) else None
    y = None if stats is None else native_loops.normalize(x, stats[0], stats[2], w, b)
    if stats is None or y is None:
        return _batch_norm(x, w, b, rm, rv, momentum=momentum, eps=eps)
    mean, var, invstd = stats
    count = x.size // x.shape[1]
    new_rm = None if rm is None else ((1 - momentum) * rm + momentum * mean).astype(rm.dtype)
    new_rv = None if rv is None else (
        (1 - momentum) * rv + momentum * var * _unbiased(count)).astype(rv.dtype)
    return y, mean, invstd, new_rm, new_rv


def _running_scale(rv: Any, eps: float) -> Any:
    return (1 / np.sqrt(rv + rv.dtype.type(eps))).astype(rv.dtype)


def _batch_norm_eval_kernel(x: Any, w: Any, b: Any, rm: Any, rv: Any, *, eps: float) -> Any:
    y = native_loops.normalize(x, rm, _running_scale(rv, eps), w, b) if _of_its_dtype(
        x, w, b, rm, rv) else None
    if y is None:
        return _batch_norm_eval(x, w, b, rm, rv, eps=eps)
    return y, np.empty(0, x.dtype), np.empty(0, x.dtype)


def _batch_norm_backward_kernel(g: Any, x: Any, w: Any, rm: Any, rv: Any, mean: Any,
                                invstd: Any, *, train: bool, eps: float,
                                output_mask: tuple[bool, bool, bool]) -> tuple[Any, Any, Any]:
    centre, scale = (mean, invstd) if train else (rm, None if rv is None else
                                                   _running_scale(rv, eps))
    out = None
    if _of_its_dtype(x, w, centre, scale) and g.dtype == x.dtype:
        out = native_loops.gradients(np.ascontiguousarray(g), x, centre, scale, w, train,
                                  output_mask[0])
    if out is None:
        return _batch_norm_backward(g, x, w, rm, rv, mean, invstd, train=train, eps=eps,
                                    output_mask=output_mask)
    dx, sum_gx, sum_g = out
    param = x.dtype if w is None else w.dtype
    return (dx, sum_gx.astype(param) if output_mask[1] else None,
            sum_g.astype(param) if output_mask[2] else None)


BATCH_NORM.register_kernel("cpu", _batch_norm_kernel)
BATCH_NORM_EVAL.register_kernel("cpu", _batch_norm_eval_kernel)
BATCH_NORM_BACKWARD.register_kernel("cpu", _batch_norm_backward_kernel)


def _group_norm_kernel(x: Any, w: Any, b: Any, *, group: int, eps: float) -> Any:
    out = native_loops.group_norm(x, w, b, group, eps)
    return _group_norm(x, w, b, group=group, eps=eps) if out is None else out


def _group_norm_backward_kernel(g: Any, x: Any, mean: Any, rstd: Any, w: Any, *, group: int,
                                output_mask: tuple[bool, bool, bool]) -> Any:
    out = native_loops.group_norm_gradients(g, x, mean, rstd, w, output_mask)
    if out is None:
        return _group_norm_backward(g, x, mean, rstd, w, group=group, output_mask=output_mask)
    return out


GROUP_NORM.register_kernel("cpu", _group_norm_kernel)
GROUP_NORM_BACKWARD.register_kernel("cpu", _group_norm_backward_kernel)


# ----------------------------------------------------------------------------- public API

def _check_channel_params(input: Tensor, params: tuple[tuple[str, Any], ...]) -> None:
    channels = input.shape[1] if input.ndim > 1 else 0
    for name, p in params:
        if p is not None:
            check_operand("batch_norm", name, p, numbers=False)
            if p.numel() != channels:
                raise RuntimeError(f"{name} should contain {channels} elements not "
                                   f"{p.numel()}")


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                      running_mean: Tensor | None, running_var: Tensor | None, training: bool,
                      momentum: float, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """torch.native_batch_norm: ``(out, save_mean, save_invstd)``; in training the running
    statistics, where given, move by ``momentum`` toward the batch's."""
    check_operand("batch_norm", "input", input, numbers=False)
    _check_channel_params(input, (("weight", weight), ("bias", bias),
                                  ("running_mean", running_mean),
                                  ("running_var", running_var)))
    if input.dtype.category != 2:
        raise not_implemented("batch_norm", input.dtype)
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    _check_param_types(input, weight, bias)
    operands = (input, weight, bias, running_mean, running_var)
    if not training:
        return dispatch(BATCH_NORM_EVAL, operands,  # type: ignore[no-any-return]
                        {"eps": float(eps)})
    out, mean, invstd, new_mean, new_var = dispatch(
        BATCH_NORM, operands, {"momentum": float(momentum), "eps": float(eps)})
    for buffer, value in ((running_mean, new_mean), (running_var, new_var)):
        if buffer is not None:
            buffer.copy_(value)
    return out, mean, invstd


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """torch.batch_norm: ``(x - mean) / sqrt(var + eps) * weight + bias`` per channel (dim 1),
    with the batch's statistics in training (the running ones updated) or the running
    ones in evaluation. An empty input, as torch's, is no batch: a copy times the weight's
    first element plus the bias's, whatever the parameters' sizes."""
    if isinstance(input, Tensor) and input.numel() == 0:
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    if isinstance(input, Tensor) and input.ndim == 0:
        raise RuntimeError("batch_norm: expected an input of at least 1 dimension, got a 0-d "
                           "tensor")
    return native_batch_norm(input, weight, bias, running_mean, running_var, training,
                             momentum, eps)[0]


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int,
                      C: int, HxW: int, group: int, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """torch.native_group_norm: ``(out, mean, rstd)``, the statistics (N, group)."""
    return _group_norm_checked(input, group, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05,
               cudnn_enabled: bool = True) -> Tensor:
    """torch.group_norm: each sample's channels (dim 1) in ``num_groups`` groups, each group
    normalized over its channels and spatial dims, then scaled and shifted per channel."""
    return _group_norm_checked(input, num_groups, weight, bias, eps)[0]


def _group_norm_checked(input: Tensor, group: int, weight: Tensor | None,
                        bias: Tensor | None, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    check_operand("group_norm", "input", input, numbers=False)
    if input.ndim == 0:  # torch reads the sizes of dims 0 and 1 first
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    channels = input.shape[wrap_dim(1, input.ndim)]
    if group <= 0 or channels % group:
        raise RuntimeError("Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={group}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (p.ndim != 1 or p.numel() != channels):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number "
                               f"of channels in input, but got {name} of shape "
                               f"{list(p.shape)} and input of shape {list(input.shape)}")
    _check_param_types(input, weight, bias)
    if input.dtype.category != 2:
        raise not_implemented("GroupNormKernelImpl", input.dtype)
    return dispatch(GROUP_NORM, (input, weight, bias),  # type: ignore[no-any-return]
                    {"group": int(group), "eps": float(eps)})


FUNCTIONS = ["native_batch_norm", "batch_norm", "native_group_norm", "group_norm"]
METHODS: dict[str, Any] = {}
