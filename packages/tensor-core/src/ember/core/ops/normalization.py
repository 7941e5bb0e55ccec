"""Layer and RMS normalization over the trailing dims that ``normalized_shape`` names.

Primitives (``k = len(normalized_shape)``; the rows are the input's last ``k`` dims, the
statistics have the input's shape with those dims 1; results are row-major whatever the
input's layout, as torch's):

- ``native_layer_norm`` (``input``, ``weight``, ``bias``, either may be None; params
  ``normalized_shape``, ``eps``) -> ``(out, mean, rstd)``;
- ``native_layer_norm_backward`` (``grad_out``, ``input``, ``mean``, ``rstd``, ``weight``;
  params ``normalized_shape``, ``output_mask``) -> the gradients of input, weight and bias,
  None where the mask asks for none;
- ``_fused_rms_norm`` (``input``, ``weight``; params ``normalized_shape``, ``eps``) ->
  ``(out, rstd)``, and ``_fused_rms_norm_backward`` likewise.

float16/bfloat16 compute in float32 and round once, as torch's CPU kernels do. Native
loops for row-major float32/float64 rows sit in ``normalization_native``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..dispatch import dispatch, register
from ..dtypes import scalar_type_name
from ..tensor import Tensor
from .convolution import laid_out, suggests_channels_last
from .operands import LOW_PRECISION, check_operand, common_device, not_implemented

_F32 = np.dtype(np.float32)


def _split(shape: tuple[int, ...], k: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The reduced axes (the last ``k``) and the leading ones."""
    n = len(shape)
    return tuple(range(n - k, n)), tuple(range(n - k))


def _stat_shape(shape: tuple[int, ...], k: int) -> tuple[int, ...]:
    return shape[:len(shape) - k] + (1,) * k


def _compute(x: Any) -> Any:
    return x.astype(_F32) if x.dtype in LOW_PRECISION else x


# ----------------------------------------------------------------------------- layer norm

def _layer_norm(x: Any, w: Any, b: Any, *, normalized_shape: tuple[int, ...],
                eps: float) -> tuple[Any, Any, Any]:
    k = len(normalized_shape)
    axes, _ = _split(x.shape, k)
    stat = _layer_norm_stat_dtype(x, w, b)
    z = _compute(x)
    n = math.prod(normalized_shape)
    if n == 0:  # torch's empty rows: mean 0, rstd NaN
        shape = _stat_shape(x.shape, k)
        return (np.empty(x.shape, x.dtype), np.zeros(shape, stat),
                np.full(shape, np.nan, stat))
    mean = z.mean(axis=axes, keepdims=True)
    mean[np.isinf(mean)] = np.nan  # torch's running (Welford) mean of a row holding an inf
    centered = z - mean
    var = np.square(centered).mean(axis=axes, keepdims=True)
    rstd = 1 / np.sqrt(var + np.asarray(eps, z.dtype))
    y = centered * rstd
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return (np.ascontiguousarray(y.astype(x.dtype, copy=False)),
            mean.astype(stat, copy=False), rstd.astype(stat, copy=False))


def _layer_norm_stat_dtype(x: Any, *params: Any) -> Any:
    """float32 for a half input with float32 weights (torch's mixed type), else the input's."""
    return _F32 if any(p is not None and p.dtype != x.dtype for p in params) else x.dtype


def _layer_norm_backward(g: Any, x: Any, mean: Any, rstd: Any, w: Any, *,
                         normalized_shape: tuple[int, ...],
                         output_mask: tuple[bool, bool, bool]) -> tuple[Any, Any, Any]:
    axes, lead = _split(x.shape, len(normalized_shape))
    z, gz = _compute(x), _compute(g)
    xhat = (z - mean) * rstd
    dx = dw = db = None
    if output_mask[0]:
        gw = gz if w is None else gz * w
        if x.size:
            dx = rstd * (gw - gw.mean(axis=axes, keepdims=True)
                         - xhat * (gw * xhat).mean(axis=axes, keepdims=True))
        else:
            dx = gw
        dx = np.ascontiguousarray(dx.astype(x.dtype, copy=False))
    param = x.dtype if w is None else w.dtype
    if output_mask[1]:
        dw = (gz * xhat).sum(axis=lead).astype(param, copy=False)
    if output_mask[2]:
        db = gz.sum(axis=lead).astype(param, copy=False)
    return dx, dw, db


def _layer_norm_rule(x: Any, w: Any, b: Any, *, normalized_shape: tuple[int, ...],
                     eps: float) -> tuple[Any, Any, Any]:
    stat = _layer_norm_stat_dtype(x, w, b)
    shape = _stat_shape(x.shape, len(normalized_shape))
    return meta.empty(x.shape, x.dtype), meta.empty(shape, stat), meta.empty(shape, stat)


def _layer_norm_backward_rule(g: Any, x: Any, mean: Any, rstd: Any, w: Any, *,
                              normalized_shape: tuple[int, ...],
                              output_mask: tuple[bool, bool, bool]) -> tuple[Any, Any, Any]:
    param = x.dtype if w is None else w.dtype
    return (meta.empty(x.shape, x.dtype) if output_mask[0] else None,
            meta.empty(normalized_shape, param) if output_mask[1] else None,
            meta.empty(normalized_shape, param) if output_mask[2] else None)


NATIVE_LAYER_NORM = register("native_layer_norm", _layer_norm, _layer_norm_rule,
                             "reduction", arg_names=("input", "weight", "bias"))
NATIVE_LAYER_NORM_BACKWARD = register(
    "native_layer_norm_backward", _layer_norm_backward, _layer_norm_backward_rule,
    "reduction", False, arg_names=("grad_out", "input", "mean", "rstd", "weight"))


# ----------------------------------------------------------------------------- RMS norm

def _rms_norm(x: Any, w: Any, *, normalized_shape: tuple[int, ...],
              eps: float) -> tuple[Any, Any]:
    axes, _ = _split(x.shape, len(normalized_shape))
    z = _compute(x)
    if x.size:
        rstd = 1 / np.sqrt(np.square(z).mean(axis=axes, keepdims=True)
                           + np.asarray(eps, z.dtype))
    else:  # empty rows: the mean of nothing is NaN, as torch's
        rstd = np.full(_stat_shape(x.shape, len(normalized_shape)),
                       np.nan if 0 in normalized_shape else 0, z.dtype)
    y = z * rstd
    if w is not None:
        y = y * w
    return np.ascontiguousarray(y.astype(x.dtype, copy=False)), rstd


def _rms_norm_backward(g: Any, x: Any, rstd: Any, w: Any, *,
                       normalized_shape: tuple[int, ...],
                       output_mask: tuple[bool, bool]) -> tuple[Any, Any]:
    axes, lead = _split(x.shape, len(normalized_shape))
    z, gz = _compute(x), _compute(g)
    xhat = z * rstd
    dx = dw = None
    if output_mask[0]:
        gw = gz if w is None else gz * w
        dx = rstd * (gw - xhat * (gw * xhat).mean(axis=axes, keepdims=True)) if x.size else gw
        dx = np.ascontiguousarray(dx.astype(x.dtype, copy=False))
    if output_mask[1]:
        dw = (gz * xhat).sum(axis=lead).astype(w.dtype, copy=False)
    return dx, dw


def _rms_norm_rule(x: Any, w: Any, *, normalized_shape: tuple[int, ...],
                   eps: float) -> tuple[Any, Any]:
    stat = _F32 if meta._np(x.dtype) in LOW_PRECISION else x.dtype
    # the input's suggested memory format, as torch's kernel lays its result out
    last = suggests_channels_last(x.shape, meta.element_strides(x))
    return (laid_out(x.shape, x.dtype, last),
            meta.empty(_stat_shape(x.shape, len(normalized_shape)), stat))


def _rms_norm_backward_rule(g: Any, x: Any, rstd: Any, w: Any, *,
                            normalized_shape: tuple[int, ...],
                            output_mask: tuple[bool, bool]) -> tuple[Any, Any]:
    return (meta.empty(x.shape, x.dtype) if output_mask[0] else None,
            meta.empty(normalized_shape, w.dtype) if output_mask[1] else None)


FUSED_RMS_NORM = register("_fused_rms_norm", _rms_norm, _rms_norm_rule, "reduction",
                          arg_names=("input", "weight"))
FUSED_RMS_NORM_BACKWARD = register(
    "_fused_rms_norm_backward", _rms_norm_backward, _rms_norm_backward_rule, "reduction",
    False, arg_names=("grad_out", "input", "rstd", "weight"))


# ----------------------------------------------------------------------------- public API

def _normalized_shape(op: str, shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (tuple, list)) and all(
            isinstance(s, int) and not isinstance(s, bool) for s in shape):
        return tuple(shape)
    raise TypeError(f"{op}(): argument 'normalized_shape' (position 2) must be tuple of "
                    f"ints, not {type(shape).__name__}")


def _check_inputs(op: str, input: Tensor, normalized_shape: Any,
                  params: tuple[tuple[str, Any], ...]) -> tuple[int, ...]:
    """torch's checks of a norm's arguments, in its order: the shape named, each
    parameter's shape, then the input's trailing dims."""
    check_operand(op, "input", input, numbers=False)
    ns = _normalized_shape(op, normalized_shape)
    if not ns:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    listed = list(ns)
    for name, p in params:
        if p is None:
            continue
        check_operand(op, name, p, numbers=False)
        if tuple(p.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(p.shape)} and normalized_shape "
                               f"= {listed}")
    shape = tuple(input.shape)
    rms = op == "rms_norm"  # (torch's rms_norm words two of these checks its own way)
    if rms and len(shape) < len(ns):
        raise ValueError(f"Input tensor must have at least {len(ns)} dimensions, but got "
                         f"{len(shape)}")
    if len(shape) < len(ns) or shape[len(shape) - len(ns):] != ns:
        expected = ", ".join(map(str, ns)) if rms else "".join(f", {s}" for s in ns)
        raise RuntimeError(f"Given normalized_shape={listed}, expected input with shape "
                           f"[*{expected}], but got input of size{list(shape)}")
    common_device(op, input, *(p for _, p in params if p is not None))
    return ns


def _check_param_types(input: Tensor, *params: Tensor | None) -> None:
    """torch's CPU rule for the parameters' dtypes: the input's, or (the first given one
    differing) all float32 with a float16 or bfloat16 input."""
    given = [p for p in params if p is not None]
    if not given:
        return
    if given[0].dtype == input.dtype:
        for p in given:
            if p.dtype != input.dtype:
                raise RuntimeError(f"expected scalar type {scalar_type_name(input.dtype)} "
                                   f"but found {scalar_type_name(p.dtype)}")
        return
    if any(p.dtype != _dt.float32 for p in given):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if input.dtype.np not in LOW_PRECISION:
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def native_layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None,
                      bias: Tensor | None, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """torch.native_layer_norm: ``(out, mean, rstd)``, the normalized input and each row's
    mean and reciprocal standard deviation (biased variance plus ``eps``)."""
    ns = _check_inputs("native_layer_norm", input, normalized_shape,
                       (("weight", weight), ("bias", bias)))
    _check_param_types(input, weight, bias)
    if input.dtype.category != 2 and input.numel():
        raise not_implemented("LayerNormKernelImpl", input.dtype)
    return dispatch(NATIVE_LAYER_NORM, (input, weight, bias),  # type: ignore[no-any-return]
                    {"normalized_shape": ns, "eps": float(eps)})


def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05,
               cudnn_enable: bool = True) -> Tensor:
    """torch.layer_norm: ``(x - mean) / sqrt(var + eps) * weight + bias`` over the trailing
    dims ``normalized_shape`` names (biased variance)."""
    return native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


def rms_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """torch.rms_norm: ``x / sqrt(mean(x**2) + eps) * weight`` over the trailing dims
    ``normalized_shape`` names; ``eps`` defaults to the machine epsilon of the dtype the
    input is computed in (float32 for half types)."""
    ns = _check_inputs("rms_norm", input, normalized_shape, (("weight", weight),))
    cat = input.dtype.category
    if cat < 2:
        raise not_implemented("rms_norm", input.dtype)
    if eps is None:
        wide = input.dtype in (_dt.float64, _dt.complex128)
        eps = float(np.finfo(np.float64 if wide else np.float32).eps)
    if cat == 3 or (weight is not None and weight.dtype != input.dtype):
        return _rms_norm_composite(input, ns, weight, float(eps))
    return dispatch(FUSED_RMS_NORM, (input, weight),  # type: ignore[no-any-return]
                    {"normalized_shape": ns, "eps": float(eps)})[0]


def _rms_norm_composite(input: Tensor, ns: tuple[int, ...], weight: Tensor | None,
                        eps: float) -> Tensor:
    """torch's composite rms_norm, for complex inputs and weights of another dtype: in the
    input's computation dtype, times the weight as the two promote, cast back."""
    z = input.to(_dt.float32) if input.dtype.np in LOW_PRECISION else input
    dims = tuple(range(-1, -len(ns) - 1, -1))
    y = z * ((z * z).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:
        y = y * weight
    return y.to(input.dtype)


# the native CPU kernels, registered beside the reference forwards above
from . import normalization_native  # noqa: E402,F401

FUNCTIONS = ["native_layer_norm", "layer_norm", "rms_norm"]
METHODS: dict[str, Any] = {}
