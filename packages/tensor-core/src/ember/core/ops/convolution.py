"""Convolution as torch's ``aten.convolution``: 1-d, 2-d and 3-d, strided, padded,
dilated, grouped and transposed, as one primitive with a fused backward.

Primitives:

- ``convolution`` (``input``, ``weight``, ``bias``, bias may be None; params ``stride``,
  ``padding``, ``dilation``, ``transposed``, ``output_padding``, ``groups``) -> ``out``;
- ``convolution_backward`` (``grad_output``, ``input``, ``weight``; params as above plus
  ``output_mask``) -> the gradients of input, weight and bias, None where the mask asks for
  none.

Both reduce to three array routines: a cross-correlation (im2col by a strided view of
the padded input, then one batched matmul per group, so BLAS does the work), its adjoint
in the input (the weight's transpose times the columns, added back window by window:
one Python step per kernel offset, never per output pixel) and its adjoint in the weight.
A transposed convolution is the correlation's adjoint in the input, and its gradients
swap the roles. A native loop adds the columns of 1-d and 2-d float32/float64 inputs
back into the input's gradient, whole (N, C) planes to a thread. Results take the layout
torch's CPU gives them: channels-last when the input or the weight suggests it, row-major
otherwise. float16/bfloat16 compute in float32 and round once.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta, native
from ..dispatch import dispatch, register
from ..dtypes import scalar_type_name
from ..tensor import Tensor
from .operands import LOW_PRECISION, check_operand, common_device, not_implemented

_F32 = np.dtype(np.float32)
Ints = tuple[int, ...]


# ----------------------------------------------------------------------------- arrays

def _compute(a: Any) -> Any:
    return a.astype(_F32) if a.dtype in LOW_PRECISION else a


def _padded(x: Any, padding: Ints, extra: Ints | None = None) -> Any:
    if not any(padding) and (extra is None or not any(extra)):
        return x
    extra = extra or (0,) * len(padding)
    shape = x.shape[:2] + tuple(s + 2 * p + e for s, p, e in zip(x.shape[2:], padding, extra))
    out = np.zeros(shape, x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in
                                           zip(padding, x.shape[2:]))] = x
    return out


def _windows(xp: Any, kernel: Ints, stride: Ints, dilation: Ints, out: Ints) -> Any:
    """A read-only (N, C, *kernel, *out) view of the padded input's windows."""
    st = xp.strides
    nd = len(kernel)
    shape = xp.shape[:2] + kernel + out
    strides = st[:2] + tuple(st[2 + i] * dilation[i] for i in range(nd)) + \
        tuple(st[2 + i] * stride[i] for i in range(nd))
    return np.lib.stride_tricks.as_strided(xp, shape, strides, writeable=False)


def _out_size(size: Ints, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints) -> Ints:
    return tuple((s + 2 * p - d * (k - 1) - 1) // st + 1
                 for s, k, st, p, d in zip(size, kernel, stride, padding, dilation))


def _columns(x: Any, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints,
             groups: int, out: Ints | None = None) -> tuple[Any, Ints]:
    """im2col: the (N, groups, C/groups * prod(kernel), prod(out)) columns of ``x``, at
    the first ``out`` window positions (default: all of them)."""
    n, c = x.shape[:2]
    out = out or _out_size(x.shape[2:], kernel, stride, padding, dilation)
    view = _windows(_padded(x, padding), kernel, stride, dilation, out)
    return view.reshape(n, groups, c // groups * math.prod(kernel), math.prod(out)), out


def _correlate(x: Any, w: Any, stride: Ints, padding: Ints, dilation: Ints,
               groups: int, out: Ints | None = None) -> Any:
    """The cross-correlation of ``x`` (N, C, *S) with ``w`` (O, C/groups, *K), at the
    first ``out`` positions (default: all)."""
    kernel = w.shape[2:]
    cols, out = _columns(x, kernel, stride, padding, dilation, groups, out)
    wm = w.reshape(groups, w.shape[0] // groups, -1)
    return np.matmul(wm, cols).reshape((x.shape[0], w.shape[0]) + out)


def _adjoint(y: Any, w: Any, size: Ints, stride: Ints, padding: Ints, dilation: Ints,
             groups: int, add_back: Any) -> Any:
    """The correlation's adjoint in its input: ``y`` (N, O, *out) back onto an input of
    spatial ``size``, through ``w`` (O, C/groups, *K) (a transposed convolution);
    ``add_back`` sums the columns into the input (``_col2im`` or its native loop)."""
    n, o = y.shape[:2]
    cg, kernel = w.shape[1], w.shape[2:]
    out = y.shape[2:]
    wm = w.reshape(groups, o // groups, cg * math.prod(kernel)).transpose(0, 2, 1)
    cols = np.matmul(wm, y.reshape(n, groups, o // groups, math.prod(out)))
    return add_back(cols.reshape((n, groups * cg) + kernel + out), size, stride, padding,
                    dilation)


def _col2im(cols: Any, size: Ints, stride: Ints, padding: Ints, dilation: Ints) -> Any:
    """The columns (N, C, *kernel, *out) added back window by window into an input of
    spatial ``size``: one step per kernel offset."""
    n, c = cols.shape[:2]
    nd = len(size)
    kernel, out = cols.shape[2:2 + nd], cols.shape[2 + nd:]
    full = tuple(s + 2 * p for s, p in zip(size, padding))
    # the windows may stop short of the padded input's end (a stride that skips its tail)
    reach = tuple((u - 1) * st + d * (k - 1) + 1 for u, st, d, k in zip(out, stride, dilation,
                                                                         kernel))
    acc = np.zeros((n, c) + tuple(max(f, r) for f, r in zip(full, reach)), cols.dtype)
    if cols.size:
        for k in np.ndindex(*kernel):
            where = tuple(slice(i * d, i * d + (u - 1) * st + 1, st)
                          for i, d, u, st in zip(k, dilation, out, stride))
            acc[(slice(None), slice(None)) + where] += cols[(slice(None), slice(None)) + k]
    return acc[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in
                                                  zip(padding, size))]


def _weight_grad(x: Any, g: Any, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints,
                 groups: int) -> Any:
    """The correlation's adjoint in its weight: (O, C/groups, *kernel) from its input ``x``
    and the gradient ``g`` of its output."""
    n, o = g.shape[:2]
    cols, out = _columns(x, kernel, stride, padding, dilation, groups, g.shape[2:])
    gm = g.reshape(n, groups, o // groups, math.prod(out))
    gw = np.matmul(gm, cols.transpose(0, 1, 3, 2)).sum(0)
    return gw.reshape((o, x.shape[1] // groups) + kernel)


_SOURCE = """
#include <stdint.h>
#include <string.h>

#define PARALLEL_FROM 32768

/* the columns (N, C, kh, kw, OH, OW) added into the (N, C, H, W) gradient, the kernel
   offsets in the reference's order so that each element sums in the same order */
#define COL2IM(T, SUFFIX)                                                               \\
void col2im_##SUFFIX(const T *cols, T *dx, int64_t planes, int64_t H, int64_t W,        \\
                     int64_t OH, int64_t OW, int64_t kh, int64_t kw, int64_t sh,        \\
                     int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw,        \\
                     int threads) {                                                     \\
    const int64_t work = planes * kh * kw * OH * OW;                                    \\
    _Pragma("omp parallel for num_threads(threads) if(work >= PARALLEL_FROM)")           \\
    for (int64_t p = 0; p < planes; ++p) {                                              \\
        T *d = dx + p * H * W;                                                          \\
        memset(d, 0, sizeof(T) * H * W);                                                \\
        for (int64_t i = 0; i < kh; ++i)                                                \\
            for (int64_t j = 0; j < kw; ++j) {                                          \\
                const T *c = cols + ((p * kh + i) * kw + j) * OH * OW;                  \\
                const int64_t off = j * dw - pw;                                        \\
                int64_t lo = 0, hi = OW;                                                \\
                while (lo < OW && lo * sw + off < 0) ++lo;                              \\
                while (hi > lo && (hi - 1) * sw + off >= W) --hi;                       \\
                for (int64_t oh = 0; oh < OH; ++oh) {                                   \\
                    const int64_t h = oh * sh - ph + i * dh;                            \\
                    if (h < 0 || h >= H) continue;                                      \\
                    T *row = d + h * W + off;                                           \\
                    const T *cr = c + oh * OW;                                          \\
                    if (sw == 1) {                                                      \\
                        _Pragma("omp simd")                                             \\
                        for (int64_t ow = lo; ow < hi; ++ow) row[ow] += cr[ow];         \\
                    } else {                                                            \\
                        for (int64_t ow = lo; ow < hi; ++ow) row[ow * sw] += cr[ow];    \\
                    }                                                                   \\
                }                                                                       \\
            }                                                                           \\
    }                                                                                   \\
}

COL2IM(float, f32)
COL2IM(double, f64)
"""
_ARGS = [ctypes.c_void_p, ctypes.c_void_p] + [ctypes.c_int64] * 13 + [ctypes.c_int]
_KERNELS = native.Kernels(_SOURCE, {"col2im_f32": _ARGS, "col2im_f64": _ARGS})
_SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


def _native_col2im(cols: Any, size: Ints, stride: Ints, padding: Ints, dilation: Ints) -> Any:
    """``_col2im`` by the native loop, for 1-d and 2-d float32/float64 columns."""
    nd = len(size)
    fn = _KERNELS(f"col2im_{_SUFFIX[cols.dtype]}") if (
        cols.dtype in _SUFFIX and nd in (1, 2) and cols.size) else None
    if fn is None:
        return _col2im(cols, size, stride, padding, dilation)
    n, c = cols.shape[:2]
    kernel, out = cols.shape[2:2 + nd], cols.shape[2 + nd:]

    def plane(t: Ints, fill: int = 1) -> Ints:  # a 1-d convolution is a 2-d one of height 1
        return (fill,) + tuple(t) if nd == 1 else tuple(t)

    cols = np.ascontiguousarray(cols)
    dx = np.empty((n, c) + tuple(size), cols.dtype)
    fn(cols, dx, n * c, *plane(size), *plane(out), *plane(kernel),
       *plane(stride), *plane(padding, 0), *plane(dilation), native.get_num_threads())
    return dx


def _transposed_size(size: Ints, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints,
                     output_padding: Ints) -> Ints:
    return tuple((s - 1) * st - 2 * p + d * (k - 1) + op + 1 for s, k, st, p, d, op in
                 zip(size, kernel, stride, padding, dilation, output_padding))


# ----------------------------------------------------------------------------- primitives

def _forwards(add_back: Any) -> tuple[Any, Any]:
    """The forwards of ``convolution`` and ``convolution_backward``, with ``add_back``
    summing columns into an input (the reference's, or the native loop)."""

    def convolution(x: Any, w: Any, b: Any, *, stride: Ints, padding: Ints, dilation: Ints,
                    transposed: bool, output_padding: Ints, groups: int) -> Any:
        z, wz = _compute(x), _compute(w)
        if transposed:
            size = _transposed_size(x.shape[2:], w.shape[2:], stride, padding, dilation,
                                    output_padding)
            y = _adjoint(z, wz, size, stride, padding, dilation, groups, add_back)
        else:
            y = _correlate(z, wz, stride, padding, dilation, groups)
        if b is not None:
            y = y + _compute(b).reshape((-1,) + (1,) * (y.ndim - 2))
        return np.ascontiguousarray(y.astype(x.dtype, copy=False))

    def convolution_backward(g: Any, x: Any, w: Any, *, stride: Ints, padding: Ints,
                             dilation: Ints, transposed: bool, output_padding: Ints,
                             groups: int, output_mask: tuple[bool, bool, bool]
                             ) -> tuple[Any, Any, Any]:
        gz, z, wz = _compute(g), _compute(x), _compute(w)
        kernel = w.shape[2:]
        dx = dw = db = None
        if output_mask[0]:
            if transposed:  # (an output padding of a dilated kernel can reach past the
                # input's last window position: the positions are the input's)
                dx = _correlate(gz, wz, stride, padding, dilation, groups, x.shape[2:])
            else:
                dx = _adjoint(gz, wz, x.shape[2:], stride, padding, dilation, groups,
                              add_back)
            dx = np.ascontiguousarray(dx.astype(x.dtype, copy=False))
        if output_mask[1]:
            if transposed:
                dw = _weight_grad(gz, z, kernel, stride, padding, dilation, groups)
            else:
                dw = _weight_grad(z, gz, kernel, stride, padding, dilation, groups)
            dw = np.ascontiguousarray(dw.astype(w.dtype, copy=False))
        if output_mask[2]:
            db = gz.sum(axis=(0,) + tuple(range(2, g.ndim))).astype(g.dtype, copy=False)
        return dx, dw, db

    return convolution, convolution_backward


_convolution, _convolution_backward = _forwards(_col2im)


def suggests_channels_last(shape: Ints, strides: Ints) -> bool:
    """torch's ``suggest_memory_format() == channels_last`` (or ``channels_last_3d``) of a
    4-d (5-d) tensor: its strides order the dims as channels-last does, ambiguous cases
    (size-1 dims of one stride) read as contiguous."""
    if len(shape) not in (4, 5) or strides[1] == 0:
        return False
    order = (1, 3, 2, 0) if len(shape) == 4 else (1, 4, 3, 2, 0)
    least = 0
    for d in order:
        if shape[d] == 0 or strides[d] < least:
            return False
        if d == 0 and least == strides[1]:
            return False
        least = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return True


def channels_last(shape: Ints) -> Ints:
    """The element strides of a channels-last (3d) tensor of ``shape``."""
    dims = [max(s, 1) for s in shape]
    strides = [0] * len(shape)
    step = 1
    for d in (1, *range(len(shape) - 1, 1, -1), 0):
        strides[d] = step
        step *= dims[d]
    return tuple(strides)


def laid_out(shape: Ints, dtype: Any, last: bool) -> Any:
    """A meta array of ``shape``, channels-last where ``last`` says, else row-major."""
    return meta.strided(shape, dtype, channels_last(shape)) if last else meta.empty(shape, dtype)


def _suggests(*arrays: Any) -> bool:
    return any(a is not None and suggests_channels_last(a.shape, meta.element_strides(a))
               for a in arrays)


def _convolution_rule(x: Any, w: Any, b: Any, *, stride: Ints, padding: Ints, dilation: Ints,
                      transposed: bool, output_padding: Ints, groups: int) -> Any:
    if transposed:
        size = _transposed_size(x.shape[2:], w.shape[2:], stride, padding, dilation,
                                output_padding)
        shape = (x.shape[0], w.shape[1] * groups) + size
    else:
        shape = (x.shape[0], w.shape[0]) + _out_size(x.shape[2:], w.shape[2:], stride,
                                                      padding, dilation)
    return laid_out(shape, x.dtype, _suggests(x, w))


def _convolution_backward_rule(g: Any, x: Any, w: Any, *, stride: Ints, padding: Ints,
                               dilation: Ints, transposed: bool, output_padding: Ints,
                               groups: int, output_mask: tuple[bool, bool, bool]
                               ) -> tuple[Any, Any, Any]:
    last = _suggests(x, w)
    return (laid_out(x.shape, x.dtype, last) if output_mask[0] else None,
            laid_out(w.shape, w.dtype, last) if output_mask[1] else None,
            meta.empty((g.shape[1],), g.dtype) if output_mask[2] else None)


CONVOLUTION = register("convolution", _convolution, _convolution_rule, "library",
                       arg_names=("input", "weight", "bias"))
CONVOLUTION_BACKWARD = register(
    "convolution_backward", _convolution_backward, _convolution_backward_rule, "library",
    False, arg_names=("grad_output", "input", "weight"))
for _op, _kernel in zip((CONVOLUTION, CONVOLUTION_BACKWARD), _forwards(_native_col2im)):
    _op.register_kernel("cpu", _kernel)


# ----------------------------------------------------------------------------- arguments

def per_dim(value: Any, nd: int) -> tuple[Ints, bool]:
    """An int, or a list of one or ``nd`` ints, as ``nd`` ints; and whether it had one of
    those lengths (the caller raises its own error where not)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * nd, True
    vals = tuple(int(v) for v in value)
    if len(vals) == 1:
        return vals * nd, True
    return vals, len(vals) == nd


def expand_param(name: str, value: Any, nd: int) -> Ints:
    """An int or a list of ``nd`` ints, as torch's convolution takes its params."""
    vals, fits = per_dim(value, nd)
    if not fits:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(vals)}")
    return vals


# the C++ names torch's bias check gives dtypes
_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int8": "signed char", "uint8": "unsigned char",
            "int16": "short", "int32": "int", "int64": "long int", "bool": "bool"}


def _refusing_kernel(dt: Any, transposed: bool, dilated: bool, nd: int) -> str | None:
    """The CPU kernel of torch's that has no loop for the integer or bool dtype ``dt``
    (None where it has one: int64 everywhere, every integer in the plain convolution)."""
    if dt.category >= 2 or dt is _dt.int64:
        return None
    if transposed:
        return f"slow_conv_transpose{max(nd, 2)}d_out_cpu"
    if dilated:
        return "slow_conv_dilated<>"
    return f"slow_conv{max(nd, 2)}d_cpu" if dt is _dt.bool else None


def _type_name(t: Tensor) -> str:
    return f"torch.{scalar_type_name(t.dtype)}Tensor"


def _check(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Ints, padding: Ints,
           dilation: Ints, transposed: bool, output_padding: Ints, groups: int) -> None:
    """torch's checks of a convolution's arguments (``check_shape_forward``), in its order."""
    nd = weight.ndim - 2
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if input.ndim != weight.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-"
                           f"dimensional weight {list(weight.shape)}, but got {input.ndim}-"
                           f"dimensional input of size {list(input.shape)} instead")
    ws, xs = list(weight.shape), list(input.shape)
    if weight.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} "
                           f"at dimension 0, but got weight of size {ws} instead")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size {ws} instead")
    if not transposed:
        if xs[1] != ws[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {ws}, expected "
                               f"input{xs} to have {ws[1] * groups} channels, but got "
                               f"{xs[1]} channels instead")
        if bias is not None and (bias.ndim != 1 or bias.shape[0] != ws[0]):
            raise RuntimeError(f"Given weight of size {ws}, expected bias to be 1-dimensional "
                               f"with {ws[0]} elements, but got bias of size "
                               f"{list(bias.shape)} instead")
        padded = [s + 2 * p for s, p in zip(xs[2:], padding)]
        reach = [d * (k - 1) + 1 for d, k in zip(dilation, ws[2:])]
        if any(p < r for p, r in zip(padded, reach)):
            raise RuntimeError(f"Calculated padded input size per channel: "
                               f"({' x '.join(map(str, padded))}). Kernel size: "
                               f"({' x '.join(map(str, reach))}). Kernel size can't be greater "
                               f"than actual input size")
    else:
        if xs[1] != ws[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {ws}, expected input{xs} "
                               f"to have {ws[0]} channels, but got {xs[1]} channels instead")
        if bias is not None and (bias.ndim != 1 or bias.shape[0] != ws[1] * groups):
            raise RuntimeError(f"Given transposed=1, weight of size {ws}, expected bias to be "
                               f"1-dimensional with {ws[1] * groups} elements, but got bias "
                               f"of size {list(bias.shape)} instead")
        if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
            axes = ("height", "width") if nd == 2 else ("depth", "height", "width")[-nd:] \
                if nd != 1 else ("width",)
            parts = " ".join(
                [f"output_padding_{a}: {v}" for a, v in zip(axes, output_padding)]
                + [f"stride_{a}: {v}" for a, v in zip(axes, stride)]
                + [f"dilation_{a}: {v}" for a, v in zip(axes, dilation)])
            raise RuntimeError(f"output padding must be smaller than either stride or "
                               f"dilation, but got {parts}")
        size = _transposed_size(tuple(xs[2:]), tuple(ws[2:]), stride, padding, dilation,
                                output_padding)
        # (an empty output is refused by torch's slow kernel alone: its oneDNN one, which
        # it takes for float32 batches and grouped float32 inputs, gives it)
        onednn = input.dtype is _dt.float32 and (xs[0] > 1 or groups > 1)
        if any(s < 0 or s == 0 and not onednn for s in size):
            plane = (1,) if nd == 1 else ()  # (torch's 1-d one is a 2-d one of height 1)
            raise RuntimeError(f"Given input size per channel: "
                               f"({' x '.join(map(str, plane + tuple(xs[2:])))}). Calculated "
                               f"output size per channel: "
                               f"({' x '.join(map(str, plane + size))}). Output size is too "
                               f"small")
    if input.numel() == 0 and xs[0] and xs[1]:
        raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got "
                           f"input shape: {xs}")
    refusing = _refusing_kernel(input.dtype, transposed, any(d > 1 for d in dilation), nd)
    if refusing is not None and transposed:  # (its kernel refuses before the bias check)
        raise not_implemented(refusing, input.dtype)
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"Input type ({_C_NAMES.get(input.dtype.name, input.dtype.name)}) "
                           f"and bias type ({_C_NAMES.get(bias.dtype.name, bias.dtype.name)}) "
                           f"should be the same")
    if refusing is not None:
        raise not_implemented(refusing, input.dtype)
    if input.dtype != weight.dtype and (input.dtype is _dt.float64 or
                                        input.dtype.category < 2):
        # (float32, half and complex inputs go to kernels of torch's that word it below)
        raise RuntimeError(f"expected scalar type {scalar_type_name(input.dtype)} but found "
                           f"{scalar_type_name(weight.dtype)}")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"Input type ({_type_name(input)}) and weight type "
                           f"({_type_name(weight)}) should be the same or input should be a "
                           f"MKLDNN tensor and weight is a dense tensor")


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,
                padding: Any, dilation: Any, transposed: bool, output_padding: Any,
                groups: int) -> Tensor:
    """torch.convolution: the N-d (transposed) convolution of a batched ``input`` (N, C, *)
    with ``weight``, plus ``bias``; ``stride``, ``padding``, ``dilation`` and
    ``output_padding`` are ints or lists of one per spatial dim."""
    check_operand("convolution", "input", input, numbers=False)
    check_operand("convolution", "weight", weight, numbers=False)
    nd = max(weight.ndim - 2, 1)
    params: dict[str, Any] = {"stride": expand_param("stride", stride, nd),
                              "padding": expand_param("padding", padding, nd),
                              "dilation": expand_param("dilation", dilation, nd),
                              "transposed": bool(transposed),
                              "output_padding": expand_param("output_padding",
                                                             output_padding, nd),
                              "groups": int(groups)}
    _check(input, weight, bias, params["stride"], params["padding"], params["dilation"],
           params["transposed"], params["output_padding"], params["groups"])
    common_device("convolution", input, weight, *(() if bias is None else (bias,)))
    return dispatch(CONVOLUTION, (input, weight, bias), params)  # type: ignore[no-any-return]


def _public(op: str, nd: int, input: Tensor, weight: Tensor, bias: Tensor | None,
            stride: Any, padding: Any, dilation: Any, groups: int, transposed: bool,
            output_padding: Any) -> Tensor:
    """conv{nd}d / conv_transpose{nd}d: unbatched inputs, then torch's 'same' and 'valid'."""
    check_operand(op, "input", input, numbers=False)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{op}, but got input of size: {list(input.shape)}")
    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same":
            x, padding = _same(x, weight, stride, dilation, nd)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    out = convolution(x, weight, bias, stride, padding, dilation, transposed, output_padding,
                      groups)
    return out.squeeze(0) if unbatched else out


def _same(x: Tensor, weight: Tensor, stride: Any, dilation: Any, nd: int
          ) -> tuple[Tensor, Ints]:
    """torch's 'same' padding: half the dilated kernel on each side, the odd one more at
    the end (padded onto the input by zeros, as torch's ``constant_pad_nd``)."""
    if any(s != 1 for s in expand_param("stride", stride, nd)):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    dil = expand_param("dilation", dilation, nd)
    total = [d * (k - 1) for d, k in zip(dil, weight.shape[2:])]
    for i, t in enumerate(total):
        if t % 2:
            extra = list(x.shape)
            extra[2 + i] = 1
            x = _cat_zeros(x, tuple(extra), 2 + i)
    return x, tuple(t // 2 for t in total)


def _cat_zeros(x: Tensor, shape: Ints, dim: int) -> Tensor:
    from ..creation import zeros
    from .joining import cat

    return cat([x, zeros(shape, dtype=x.dtype, device=x.device)], dim)  # type: ignore[no-any-return]


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """torch.conv1d: the 1-d cross-correlation of ``input`` (N, C, L) or (C, L) with
    ``weight`` (O, C/groups, K); ``padding`` may also be 'valid' or 'same'."""
    return _public("conv1d", 1, input, weight, bias, stride, padding, dilation, groups,
                   False, 0)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """torch.conv2d: the 2-d cross-correlation of ``input`` (N, C, H, W) or (C, H, W) with
    ``weight`` (O, C/groups, kH, kW); ``padding`` may also be 'valid' or 'same'."""
    return _public("conv2d", 2, input, weight, bias, stride, padding, dilation, groups,
                   False, 0)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """torch.conv3d: the 3-d cross-correlation of ``input`` (N, C, D, H, W) or (C, D, H, W)
    with ``weight`` (O, C/groups, kD, kH, kW); ``padding`` may also be 'valid' or 'same'."""
    return _public("conv3d", 3, input, weight, bias, stride, padding, dilation, groups,
                   False, 0)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """torch.conv_transpose1d: the 1-d transposed convolution ("deconvolution") of
    ``input`` (N, C, L) or (C, L) with ``weight`` (C, O/groups, K)."""
    return _public("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation,
                   groups, True, output_padding)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """torch.conv_transpose2d: the 2-d transposed convolution of ``input`` (N, C, H, W) or
    (C, H, W) with ``weight`` (C, O/groups, kH, kW)."""
    return _public("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation,
                   groups, True, output_padding)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """torch.conv_transpose3d: the 3-d transposed convolution of ``input`` (N, C, D, H, W)
    or (C, D, H, W) with ``weight`` (C, O/groups, kD, kH, kW)."""
    return _public("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation,
                   groups, True, output_padding)


FUNCTIONS = ["convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
             "conv_transpose2d", "conv_transpose3d"]
METHODS: dict[str, Any] = {}
