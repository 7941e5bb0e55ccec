"""Interpolation (torch.nn.functional.interpolate and its upsample aliases) as torch's CPU
runs it: one primitive per mode and rank, with torch's aten name, each with its backward
primitive.

Primitives (operand the input, ``self``; params as torch's schemas: ``output_size``,
``align_corners`` for the interpolating modes, and ``scales`` (1-d), ``scales_h``,
``scales_w`` (2-d) or ``scales_d``, ``scales_h``, ``scales_w`` (3-d), each the user's scale
factor or None): ``upsample_nearest{1,2,3}d``, ``_upsample_nearest_exact{1,2,3}d``,
``upsample_linear1d``, ``upsample_bilinear2d``, ``upsample_bicubic2d``,
``upsample_trilinear3d``, the antialiased ``_upsample_{bilinear,bicubic,lanczos}2d_aa``;
and each one's ``_backward`` (operand ``grad_output``, params also ``input_size``), which
is not differentiable: autograd's formulas call it for a first-order backward and compose
Ember ops where a graph of the gradient is built.

Every mode is separable (``interpolation_taps`` holds torch's index arithmetic): the
reference resizes the last dim first, then the others (the order of torch's generic
kernel), each output the weighted sum of its taps in float32 (float64 for float64
inputs) with weights of the input's dtype, rounded once; the backward adds each gradient
at its taps, dim by dim. The antialiased modes and uint8 bilinear and bicubic resizes take
torch's filters of variable width (``interpolation_separable``). Results are channels-last
where a 4-d or 5-d input suggests it, as torch's; a backward's result follows its
gradient's layout where torch's does. Mode 'area' is adaptive average pooling
(``adaptive_pooling``). Native loops for the 2-d nearest, bilinear and bicubic forms sit in
``interpolation_native``.

torch has these functions in ``torch.nn.functional`` and ``torch._C._nn``, not at its top
level: the nn package gives them to Ember.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .. import meta
from ..dispatch import dispatch, register
from ..function_modes import checks_itself, engaged, handle, overriding, spec_of
from ..layouts import channels_last, channels_last_3d, is_laid_out
from ..tensor import Tensor
from . import adaptive_pooling
from .convolution import laid_out, suggests_channels_last
from .interpolation_separable import aa_weights, resized, resized_backward
from .interpolation_taps import opmath, pixel_scale, resampled, scattered, stored, taps
from .operands import LOW_PRECISION, check_operand, not_implemented

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]

Ints = tuple[int, ...]
_SCALES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}
_U8 = np.dtype(np.uint8)


class Form:
    """One primitive's mode ('nearest', 'nearest-exact', 'linear', 'cubic' or 'lanczos'),
    rank and whether it antialiases, whether it takes ``align_corners``, and whether its
    backward's result follows the gradient's channels-last layout (torch's
    ``suggest_memory_format``) or is row-major."""

    __slots__ = ("name", "mode", "nd", "aligned", "grad_layout", "antialias")

    def __init__(self, name: str, mode: str, nd: int, grad_layout: bool,
                 antialias: bool = False):
        self.name, self.mode, self.nd, self.grad_layout = name, mode, nd, grad_layout
        self.aligned = not mode.startswith("nearest")
        self.antialias = antialias

    def scales(self, params: dict[str, Any]) -> tuple[float | None, ...]:
        return tuple(params[k] for k in _SCALES[self.nd])


def _strides(x: Any) -> Ints:
    return tuple(s // x.itemsize for s in x.strides)


def _suggests(x: Any) -> bool:
    return suggests_channels_last(tuple(x.shape), meta.element_strides(x))


def vectorized(form: Form, shape: Ints, strides: Ints, out: Ints) -> bool:
    """Whether torch's CPU takes its channels-last kernel for ``form`` (its nearest
    indices then come from the other formula, and a float16 or bfloat16 input's weights
    stay float32): a channels-last input of more than 3 channels, or (2-d) an output of at
    most 128 rows and columns together. (torch's bilinear also takes it for 3 channels on
    one thread.)"""
    if form.nd == 1 or form.mode not in ("nearest", "nearest-exact", "linear"):
        return False
    fmt = channels_last if form.nd == 2 else channels_last_3d
    if is_laid_out(fmt, shape, strides) and shape[1] > 3:
        return True
    return form.nd == 2 and sum(out) <= 128


def _forward(form: Form) -> Any:
    def forward(x: Any, *, output_size: Ints, align_corners: bool = False,
                **params: Any) -> Any:
        if form.antialias or x.dtype == _U8 and form.aligned:
            return resized(x, form.mode, output_size, align_corners, form.scales(params),
                           form.antialias)
        op = opmath(x.dtype)
        generic = not vectorized(form, x.shape, _strides(x), output_size)
        z = x if form.mode.startswith("nearest") else x.astype(op)
        for d, scale in reversed(list(enumerate(form.scales(params)))):
            axis = x.ndim - form.nd + d
            index, w = taps(form.mode, x.shape[axis], output_size[d], align_corners, scale,
                            op, generic)
            if w is not None and generic and x.dtype in LOW_PRECISION:
                w = stored(form.mode, w, x.dtype, op)
            z = resampled(z, axis, (index, w), op)
        return z.astype(x.dtype, copy=False)

    return forward


def _backward(form: Form) -> Any:
    def backward(g: Any, *, output_size: Ints, input_size: Ints, align_corners: bool = False,
                 **params: Any) -> Any:
        if form.antialias:
            return resized_backward(g, form.mode, input_size, align_corners,
                                    form.scales(params))
        op = opmath(g.dtype)
        gi = g.astype(op)
        for d, scale in enumerate(form.scales(params)):
            axis = 2 + d
            t = taps(form.mode, input_size[axis], output_size[d], align_corners, scale, op,
                     generic=False)
            gi = scattered(gi, axis, t, input_size[axis])
        return gi.astype(g.dtype, copy=False)

    return backward


def _rule(form: Form) -> Any:
    def rule(x: Any, *, output_size: Ints, **params: Any) -> Any:
        return laid_out(tuple(x.shape[:2]) + tuple(output_size), x.dtype, _suggests(x))

    return rule


def _backward_rule(form: Form) -> Any:
    def rule(g: Any, *, input_size: Ints, **params: Any) -> Any:
        return laid_out(tuple(input_size), g.dtype, form.grad_layout and _suggests(g))

    return rule


FORMS = {f.name: f for f in (
    Form("upsample_nearest1d", "nearest", 1, False),
    Form("upsample_nearest2d", "nearest", 2, True),
    Form("upsample_nearest3d", "nearest", 3, False),
    Form("_upsample_nearest_exact1d", "nearest-exact", 1, False),
    Form("_upsample_nearest_exact2d", "nearest-exact", 2, True),
    Form("_upsample_nearest_exact3d", "nearest-exact", 3, False),
    Form("upsample_linear1d", "linear", 1, False),
    Form("upsample_bilinear2d", "linear", 2, True),
    Form("upsample_bicubic2d", "cubic", 2, False),
    Form("upsample_trilinear3d", "linear", 3, True),
    Form("_upsample_bilinear2d_aa", "linear", 2, True, antialias=True),
    Form("_upsample_bicubic2d_aa", "cubic", 2, False, antialias=True),
    Form("_upsample_lanczos2d_aa", "lanczos", 2, False, antialias=True))}
OPS = {name: register(name, _forward(f), _rule(f), "library", arg_names=("self",))
       for name, f in FORMS.items()}
BACKWARD_OPS = {name: register(name + "_backward", _backward(f), _backward_rule(f), "library",
                               False, arg_names=("grad_output",))
                for name, f in FORMS.items()}


def matrix(form: Form, size: int, out: int, align_corners: bool, scale: float | None,
           dtype: Any) -> Any:
    """The (out, size) matrix of ``form``'s weights along one dim (the backward's, for the
    nearest modes' indices): the linear map it applies along that dim."""
    if form.antialias:
        ratio = pixel_scale(size, out, align_corners, scale, dtype)
        xmin, _, w = aa_weights(form.mode, size, out, ratio, dtype)
        index = np.minimum(xmin[:, None] + np.arange(w.shape[1]), size - 1)
    else:
        index, w = taps(form.mode, size, out, align_corners, scale, dtype, generic=False)
    m = np.zeros((out, size), dtype)
    rows = np.arange(out)
    for j in range(index.shape[1]):
        np.add.at(m, (rows, index[:, j]), 1 if w is None else w[:, j])
    return m


# ----------------------------------------------------------------------------- arguments

def _checked_int(v: float) -> int:
    """torch's ``checked_convert<int64_t>`` of an output size computed in double."""
    if not math.isfinite(v) or not -2.0 ** 63 <= v < 2.0 ** 63:
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return int(v)


def _size_entry(op: str, v: Any) -> int:
    if isinstance(v, (int, np.integer)) or (isinstance(v, Tensor) and v.ndim == 0
                                            and v.dtype.category < 2):
        return int(v)
    raise TypeError(f"{op}(): argument 'output_size' failed to unpack the object at pos 2 "
                    f"with error \"type must be tuple of ints,but got {type(v).__name__}\"")


def _output_size(op: str, shape: Ints, output_size: Any, scale_factors: Any
                 ) -> tuple[Ints, tuple[float | None, ...]]:
    """torch's ``compute_output_size``: the sizes given, or each input size times its
    scale factor (truncated); and the scales the kernel is given (None with sizes)."""
    nd = len(shape) - 2
    if (output_size is None) == (scale_factors is None):
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    if output_size is not None:
        size = tuple(_size_entry(op, v) for v in output_size)
        if len(size) != nd:
            raise RuntimeError("Expected static_cast<int64_t>(output_size->size()) == "
                               "spatial_dimensions to be true, but got false.")
        return size, (None,) * nd
    scales = tuple(float(s) for s in scale_factors)
    if len(scales) != nd:
        raise RuntimeError("Expected static_cast<int64_t>(scale_factors->size()) == "
                           "spatial_dimensions to be true, but got false.")
    return tuple(_checked_int(shape[2 + i] * s) for i, s in enumerate(scales)), scales


def _check_sizes(form: Form, shape: Ints, out: Ints) -> None:
    """torch's ``upsample_{1,2,3}d_common_check`` and its meta function's: sizes above
    zero, an input of the form's rank whose only empty dim may be the batch."""
    names = "DHW"[3 - form.nd:]
    size = shape[2:]
    if min(size + out) <= 0:
        given = ", ".join(f"{n}: {s}" for n, s in zip(names, size))
        wanted = ", ".join(f"{n}: {s}" for n, s in zip(names, out))
        link = ") and output (" if form.nd == 1 else ") output ("
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({given}{link}{wanted})")
    if shape[1] == 0:
        raise RuntimeError(f"Non-empty {form.nd + 2}D data tensor expected but got a tensor "
                           f"with sizes {list(shape)}")


def _kernel_name(form: Form, x: Tensor, out: Ints) -> str:
    """The kernel torch's dtype error names: the channels-last one where it takes it."""
    if form.antialias:
        return "compute_index_ranges_weights"
    if vectorized(form, tuple(x.shape), tuple(x.stride()), out):
        kind = "nearest" if form.mode.startswith("nearest") else form.name[9:-2]
        return f"upsample_{kind}{form.nd}d_channels_last"
    return "compute_indices_weights_" + form.mode.replace("-exact", "")


def _check_dtype(form: Form, x: Tensor, out: Ints) -> None:
    """torch's CPU dtypes: floating ones (float32/float64 antialiased) and uint8 for the
    nearest modes and the 2-d ones."""
    np_dt = x.dtype.np
    if x.dtype.category == 2 and not (form.antialias and np_dt in LOW_PRECISION):
        return
    if np_dt == _U8 and (form.mode.startswith("nearest") or form.nd == 2):
        return
    raise not_implemented(_kernel_name(form, x, out), x.dtype)


def upsample_form(name: str, input: Tensor, output_size: Any, scale_factors: Any,
                  align_corners: bool = False) -> Tensor:
    """``torch._C._nn.<name>(input, output_size, [align_corners,] scale_factors)`` (the
    ``.vec`` overloads interpolate calls): checks as torch's, then the primitive."""
    form = FORMS[name]
    check_operand(name, "input", input, numbers=False)
    shape = tuple(input.shape)
    out, scales = _output_size(name, shape, output_size, scale_factors)
    _check_sizes(form, shape, out)
    _check_dtype(form, input, out)
    params: dict[str, Any] = {"output_size": out}
    if form.aligned:
        params["align_corners"] = bool(align_corners)
    params.update(zip(_SCALES[form.nd], scales))
    return dispatch(OPS[name], (input,), params)  # type: ignore[no-any-return]


# ----------------------------------------------------------------------------- public API

_MODES = {("nearest", 1): "upsample_nearest1d", ("nearest", 2): "upsample_nearest2d",
          ("nearest", 3): "upsample_nearest3d",
          ("nearest-exact", 1): "_upsample_nearest_exact1d",
          ("nearest-exact", 2): "_upsample_nearest_exact2d",
          ("nearest-exact", 3): "_upsample_nearest_exact3d",
          ("linear", 1): "upsample_linear1d", ("bilinear", 2): "upsample_bilinear2d",
          ("bicubic", 2): "upsample_bicubic2d", ("trilinear", 3): "upsample_trilinear3d"}
_ANTIALIASED = {"bilinear": "_upsample_bilinear2d_aa", "bicubic": "_upsample_bicubic2d_aa",
                "lanczos": "_upsample_lanczos2d_aa"}
_RANKS = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _is_integer(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) or (isinstance(v, Tensor)
                                                and v.dtype.category < 2)


def _sizes(input: Tensor, dim: int, size: Any, scale_factor: Any
           ) -> tuple[Any, Any]:
    """torch's interpolate: exactly one of ``size`` and ``scale_factor``, of the input's
    spatial rank or one value for every spatial dim."""
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    spatial = list(input.shape[2:])
    if size is not None:
        if not isinstance(size, (list, tuple)):
            return [size] * dim, None
        if len(size) != dim:
            raise ValueError(
                "Input and output must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {spatial} and output size of {size}. "
                "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output "
                "size in (o1, o2, ...,oK) format.")
        if not all(_is_integer(v) for v in size):
            raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] "
                            "or Tuple[int, int, int], but got size with types "
                            f"{[type(v) for v in size]}")
        return size, None
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if not isinstance(scale_factor, (list, tuple)):
        return None, [scale_factor] * dim
    if len(scale_factor) != dim:
        raise ValueError(
            "Input and scale_factor must have the same number of spatial dimensions, but got "
            f"input with spatial dimensions of {spatial} and scale_factor of shape "
            f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
            "and scale_factor in (s1, s2, ...,sK) format.")
    return None, scale_factor


@checks_itself
def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """torch.nn.functional.interpolate: ``input`` (N, C, *spatial) resized to ``size`` or
    by ``scale_factor`` along its 1 to 3 spatial dims, by ``mode``: 'nearest' (torch's
    OpenCV-like floor of ``i * in / out``), 'nearest-exact' (the nearest pixel centre),
    'linear', 'bilinear', 'bicubic' (a = -0.75), 'trilinear' (``align_corners``: the
    corner pixels' centres map to each other, else the grids' edges) or 'area' (adaptive
    average pooling); 'lanczos' (2-d, antialiased only). ``recompute_scale_factor``: the
    kernel gets the output size alone, not the scale factor. ``antialias`` (bilinear,
    bicubic with a = -0.5): a downsampling filter as wide as the scale, as Pillow's."""
    if engaged.count and overriding():
        args = (input, size, scale_factor, mode, align_corners, recompute_scale_factor,
                antialias)
        return handle(interpolate, _SPEC, args, {})  # type: ignore[no-any-return]
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    output_size, scale_factors = _sizes(input, dim, size, scale_factor)
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [int(input.shape[i + 2] * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in _ANTIALIASED and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode == "area" and 1 <= dim <= 3:
        pool = (adaptive_pooling.adaptive_avg_pool1d, adaptive_pooling.adaptive_avg_pool2d,
                adaptive_pooling.adaptive_avg_pool3d)[dim - 1]
        return pool(input, output_size)  # type: ignore[no-any-return]
    if mode == "lanczos" and dim == 2:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    name = _ANTIALIASED[mode] if antialias else _MODES.get((mode, dim))
    if name is not None:
        return upsample_form(name, input, output_size, scale_factors, bool(align_corners))
    if mode in _RANKS and 3 <= input.ndim <= 5:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_RANKS[mode]}D input")
    raise NotImplementedError(
        "Input Error: Only 3D, 4D and 5D input Tensors supported"
        f" (got {input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | "
        f"trilinear | lanczos | area | nearest-exact (got {mode})")


_SPEC = spec_of(interpolate)


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """torch.nn.functional.upsample: ``interpolate``, with torch's deprecation warning."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """torch.nn.functional.upsample_nearest: ``interpolate(mode='nearest')``, with torch's
    deprecation warning."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """torch.nn.functional.upsample_bilinear: ``interpolate(mode='bilinear',
    align_corners=True)``, with torch's deprecation warning."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# the native CPU kernels, registered beside the reference forwards above
from . import interpolation_native  # noqa: E402,F401

FUNCTIONS: list[str] = []
METHODS: dict[str, Any] = {}
