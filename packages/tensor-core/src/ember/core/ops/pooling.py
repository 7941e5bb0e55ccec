"""Max and average pooling as torch's CPU runs them, each a primitive with a fused
backward primitive (the adaptive pools, in ``adaptive_pooling``, share its helpers).

Primitives (2-d and 3-d; torch's 1-d pools are its 2-d ones on an unsqueezed input):
``max_pool{2,3}d_with_indices`` -> ``(out, indices)`` and its ``_backward``;
``avg_pool{2,3}d`` and its ``_backward``. Indices are flat within each input plane, as
torch's.

Windows are strided views of the input padded with the dtype's lowest value (max) or
zeros (average); the kernels step over the kernel offsets (a handful of whole-array
operations each), never over output elements. A max keeps the first largest value and
the last NaN of its window, as torch's loop does. Results take the input's suggested
memory format (channels-last or row-major), as torch's CPU kernels.

Native loops for the 2-d max pool and its backward sit in ``pooling_native``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..dispatch import dispatch, register
from ..tensor import Tensor
from .convolution import laid_out, per_dim, suggests_channels_last
from .operands import LOW_PRECISION, check_operand, not_implemented

Ints = tuple[int, ...]
_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)


def _lowest(dt: Any) -> Any:
    return -np.inf if dt.kind in "fc" or dt in LOW_PRECISION else np.iinfo(dt).min


def pooled_size(size: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    """torch's ``pooling_output_shape``: a last window of ceil mode must start inside the
    input or its left padding."""
    out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1
    return out


def _spatial(x: Any, nd: int) -> Ints:
    return tuple(x.shape[x.ndim - nd:])


def _padded(x: Any, nd: int, padding: Ints, full: Ints, fill: Any) -> Any:
    """``x`` with ``padding`` before each spatial dim and ``fill`` up to the sizes ``full``."""
    size = _spatial(x, nd)
    if full == size:
        return x
    out = np.full(x.shape[:x.ndim - nd] + full, fill, x.dtype)
    out[(Ellipsis,) + tuple(slice(p, p + s) for p, s in zip(padding, size))] = x
    return out


def _offsets(kernel: Ints, dilation: Ints, stride: Ints, out: Ints
             ) -> Iterator[tuple[Ints, tuple[slice, ...]]]:
    """Each kernel offset and the slices of the padded input its windows read."""
    for k in np.ndindex(*kernel):
        yield k, tuple(slice(i * d, i * d + (o - 1) * s + 1, s) if o else slice(0, 0)
                       for i, d, o, s in zip(k, dilation, out, stride))


def _reach(out: Ints, kernel: Ints, stride: Ints, dilation: Ints, size: Ints,
           padding: Ints) -> Ints:
    return tuple(max(s + 2 * p, (o - 1) * st + d * (k - 1) + 1)
                 for o, k, st, d, s, p in zip(out, kernel, stride, dilation, size, padding))


def _flat(coords: list[Any], size: Ints) -> Any:
    """Flat plane indices from per-dim coordinate arrays broadcast against each other."""
    nd = len(size)
    flat: Any = 0
    for i, c in enumerate(coords):
        shape = [1] * nd
        shape[i] = -1
        flat = flat * size[i] + np.asarray(c, _I64).reshape(shape)
    return flat


def _max_update(best: Any, idx: Any, v: Any, flat: Any) -> tuple[Any, Any]:
    # torch's loop: a larger value or any NaN takes the place
    take = v > best
    if v.dtype.kind not in "biu":  # floats, bfloat16 (an ml_dtypes kind of its own) too
        take |= v != v
    return np.where(take, v, best), np.where(take, flat, idx)


# ----------------------------------------------------------------------------- max pool

def _max_pool(x: Any, *, kernel_size: Ints, stride: Ints, padding: Ints, dilation: Ints,
              ceil_mode: bool) -> tuple[Any, Any]:
    nd = len(kernel_size)
    size = _spatial(x, nd)
    out = tuple(pooled_size(*a, ceil_mode) for a in zip(size, kernel_size, stride, padding,
                                                          dilation))
    full = _reach(out, kernel_size, stride, dilation, size, padding)
    low = _lowest(x.dtype)
    xp = _padded(x, nd, padding, full, low)
    lead = x.shape[:x.ndim - nd]
    best = np.full(lead + out, low, x.dtype)
    starts = [np.arange(o) * s - p for o, s, p in zip(out, stride, padding)]
    first = [np.where(st < 0, st + (-st + d - 1) // d * d, st) for st, d in zip(starts, dilation)]
    idx = np.broadcast_to(_flat(first, size), lead + out)
    for k, where in _offsets(kernel_size, dilation, stride, out):
        flat = _flat([st + i * d for st, i, d in zip(starts, k, dilation)], size)
        best, idx = _max_update(best, idx, xp[(Ellipsis,) + where], flat)
    return np.ascontiguousarray(best), np.ascontiguousarray(idx, dtype=_I64)


def _scatter_grad(g: Any, x: Any, indices: Any, nd: int) -> Any:
    """The gradient of a max pool: each output's gradient added at its index."""
    lead = x.shape[:x.ndim - nd]
    plane = math.prod(_spatial(x, nd))
    rows = math.prod(lead)
    gz = g.astype(_F32) if g.dtype in LOW_PRECISION else g
    where = (np.arange(rows, dtype=_I64).reshape(-1, 1) * plane
             + indices.reshape(rows, -1)).ravel()
    if gz.dtype.kind == "c":
        gi = (np.bincount(where, gz.real.ravel(), rows * plane)
              + 1j * np.bincount(where, gz.imag.ravel(), rows * plane))
    else:
        gi = np.bincount(where, gz.ravel(), rows * plane)
    return np.ascontiguousarray(gi.reshape(x.shape).astype(x.dtype))


def _max_pool_backward(g: Any, x: Any, indices: Any, *, kernel_size: Ints, stride: Ints,
                       padding: Ints, dilation: Ints, ceil_mode: bool) -> Any:
    return _scatter_grad(g, x, indices, len(kernel_size))


def _last(x: Any) -> bool:
    return suggests_channels_last(x.shape, tuple(s // x.dtype.itemsize for s in x.strides))


def _max_pool_rule(x: Any, *, kernel_size: Ints, stride: Ints, padding: Ints, dilation: Ints,
                   ceil_mode: bool) -> tuple[Any, Any]:
    nd = len(kernel_size)
    size = _spatial(x, nd)
    out = x.shape[:x.ndim - nd] + tuple(
        pooled_size(*a, ceil_mode) for a in zip(size, kernel_size, stride, padding, dilation))
    last = _last(x)
    return laid_out(out, x.dtype, last), laid_out(out, _I64, last)


def _like_input_rule(g: Any, x: Any, *rest: Any, **params: Any) -> Any:
    return laid_out(x.shape, x.dtype, _last(x))


MAX_POOL2D = register("max_pool2d_with_indices", _max_pool, _max_pool_rule, "library",
                      arg_names=("self",))
MAX_POOL2D_BACKWARD = register("max_pool2d_with_indices_backward", _max_pool_backward,
                               _like_input_rule, "library", False,
                               arg_names=("grad_output", "self", "indices"))
MAX_POOL3D = register("max_pool3d_with_indices", _max_pool, _max_pool_rule, "library",
                      arg_names=("self",))
MAX_POOL3D_BACKWARD = register("max_pool3d_with_indices_backward", _max_pool_backward,
                               _like_input_rule, "library", False,
                               arg_names=("grad_output", "self", "indices"))


# ----------------------------------------------------------------------------- avg pool

def avg_divisor(size: Ints, out: Ints, kernel: Ints, stride: Ints, padding: Ints,
                count_include_pad: bool, divisor_override: int | None) -> Any:
    """Each window's divisor (shape ``out``), as torch's kernels count it: the window clipped
    to the padded input, or to the input itself without ``count_include_pad``."""
    if divisor_override:
        return np.full(out, divisor_override, np.int64)
    div: Any = 1
    for i, (s, o, k, st, p) in enumerate(zip(size, out, kernel, stride, padding)):
        start = np.arange(o) * st - p
        end = np.minimum(start + k, s + p)
        n = end - start
        if not count_include_pad:
            n = np.minimum(end, s) - np.maximum(start, 0)
        shape = [1] * len(out)
        shape[i] = -1
        div = div * n.reshape(shape)
    return np.broadcast_to(div, out)


def _avg_out(x: Any, nd: int, kernel: Ints, stride: Ints, padding: Ints, ceil: bool) -> Ints:
    return tuple(pooled_size(s, k, st, p, 1, ceil)
                 for s, k, st, p in zip(_spatial(x, nd), kernel, stride, padding))


def _avg_pool(x: Any, *, kernel_size: Ints, stride: Ints, padding: Ints, ceil_mode: bool,
              count_include_pad: bool, divisor_override: int | None) -> Any:
    nd = len(kernel_size)
    size = _spatial(x, nd)
    out = _avg_out(x, nd, kernel_size, stride, padding, ceil_mode)
    ones = (1,) * nd
    z = x.astype(_F32) if x.dtype in LOW_PRECISION else x
    xp = _padded(z, nd, padding, _reach(out, kernel_size, stride, ones, size, padding), 0)
    acc = np.zeros(x.shape[:x.ndim - nd] + out, z.dtype)
    for _, where in _offsets(kernel_size, ones, stride, out):
        acc += xp[(Ellipsis,) + where]
    div = avg_divisor(size, out, kernel_size, stride, padding, count_include_pad,
                      divisor_override)
    y = acc // div if x.dtype.kind in "iu" else acc / div.astype(z.dtype)
    return np.ascontiguousarray(y.astype(x.dtype, copy=False))


def _avg_pool_backward(g: Any, x: Any, *, kernel_size: Ints, stride: Ints, padding: Ints,
                       ceil_mode: bool, count_include_pad: bool,
                       divisor_override: int | None) -> Any:
    nd = len(kernel_size)
    size = _spatial(x, nd)
    out = _spatial(g, nd)
    ones = (1,) * nd
    gz = g.astype(_F32) if g.dtype in LOW_PRECISION else g
    div = avg_divisor(size, out, kernel_size, stride, padding, count_include_pad,
                      divisor_override)
    share = gz / div.astype(gz.dtype)
    full = _reach(out, kernel_size, stride, ones, size, padding)
    acc = np.zeros(x.shape[:x.ndim - nd] + full, gz.dtype)
    for _, where in _offsets(kernel_size, ones, stride, out):
        acc[(Ellipsis,) + where] += share
    gi = acc[(Ellipsis,) + tuple(slice(p, p + s) for p, s in zip(padding, size))]
    return np.ascontiguousarray(gi.astype(x.dtype, copy=False))


def _avg_pool_rule(x: Any, *, kernel_size: Ints, stride: Ints, padding: Ints,
                   ceil_mode: bool, count_include_pad: bool,
                   divisor_override: int | None) -> Any:
    nd = len(kernel_size)
    out = x.shape[:x.ndim - nd] + _avg_out(x, nd, kernel_size, stride, padding, ceil_mode)
    return laid_out(out, x.dtype, _last(x))


AVG_POOL2D = register("avg_pool2d", _avg_pool, _avg_pool_rule, "library",
                      arg_names=("self",))
AVG_POOL2D_BACKWARD = register("avg_pool2d_backward", _avg_pool_backward, _like_input_rule,
                               "library", False, arg_names=("grad_output", "self"))
AVG_POOL3D = register("avg_pool3d", _avg_pool, _avg_pool_rule, "library",
                      arg_names=("self",))
AVG_POOL3D_BACKWARD = register("avg_pool3d_backward", _avg_pool_backward, _like_input_rule,
                               "library", False, arg_names=("grad_output", "self"))


# ----------------------------------------------------------------------------- arguments

def _ints(value: Any, nd: int, name: str, op: str) -> Ints:
    vals, fits = per_dim(value, nd)
    if not fits:
        raise RuntimeError(f"{op}: {name} must either be a single int, or a tuple of {nd} "
                           f"ints")
    return vals


# the 3-d kernels' names in torch's message for an empty non-batch dim
_KERNEL_3D = {"max_pool3d": "max_pool3d_with_indices_out_cpu_template",
              "avg_pool3d": "avg_pool3d"}


def _check_input(op: str, x: Tensor, nd: int, pooled: str) -> None:
    """torch's checks of a pool's input: (C, *spatial) or (N, C, *spatial), every dim but
    N non-empty, and a dtype its kernel has."""
    check_operand(op, "input", x, numbers=False)
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for "
                           "input")
    if 0 in x.shape[x.ndim - nd - 1:]:
        shape = list(x.shape)
        if nd == 2:
            raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                               f"size for input, but got:{shape}")
        raise RuntimeError(f"{_KERNEL_3D.get(op, op)}(): Expected input's non-batch dimensions "
                           f"to have positive length, but input has a shape of {shape} and "
                           "non-batch dimension 0 has length zero!")
    if x.dtype.category == 3 or x.dtype.np == np.bool_:
        raise not_implemented(pooled, x.dtype)


def _pool_params(op: str, x: Tensor, nd: int, kernel_size: Any, stride: Any, padding: Any,
                 dilation: Any, ceil_mode: bool) -> tuple[Ints, Ints, Ints, Ints]:
    k = _ints(kernel_size, nd, "kernel_size", op)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        _ints(stride, nd, "stride", op)
    p = _ints(padding, nd, "padding", op)
    d = _ints(dilation, nd, "dilation", op)
    if any(v <= 0 for v in k):
        raise RuntimeError("stride should not be zero" if any(v == 0 for v in k) else
                           "kernel size should be greater than zero")
    if any(v == 0 for v in s):
        raise RuntimeError("stride should not be zero")
    if any(v <= 0 for v in d):
        names = ("dilationH", "dilationW") if nd == 2 else ("dilationT", "dilationH",
                                                            "dilationW")
        raise RuntimeError("dilation should be greater than zero, but got "
                           + " ".join(f"{n}: {v}" for n, v in zip(names, d)))
    for kk, pp, dd in zip(k, p, d):
        if pp > (dd * (kk - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation={dd}")
    size = tuple(x.shape[x.ndim - nd:])
    out = tuple(pooled_size(*a, bool(ceil_mode)) for a in zip(size, k, s, p, d))
    if any(o <= 0 for o in out):
        c = x.shape[x.ndim - nd - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (c,) + size))}). "
                           f"Calculated output size: ({'x'.join(map(str, (c,) + out))}). "
                           f"Output size is too small")
    return k, s, p, d


def _max_pool_nd(op: str, nd: int, input: Tensor, kernel_size: Any, stride: Any,
                 padding: Any, dilation: Any, ceil_mode: bool) -> tuple[Tensor, Tensor]:
    _check_input(op, input, nd, "max_pool2d" if nd == 2 else "max_pool3d_cpu")
    k, s, p, d = _pool_params(op, input, nd, kernel_size, stride, padding, dilation, ceil_mode)
    if any(pp > kk // 2 for kk, pp in zip(k, p)):
        # torch's kernel checks the padding once more, against the undilated kernel
        shown = (f"padW = {p[1]}, padH = {p[0]}, kW = {k[1]}, kH = {k[0]}" if nd == 2 else
                 f"kT: {k[0]} kW: {k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} padH: {p[1]}")
        raise RuntimeError("pad should be smaller than or equal to half of kernel size, but "
                           f"got {shown}")
    prim = MAX_POOL2D if nd == 2 else MAX_POOL3D
    return dispatch(prim, (input,), {"kernel_size": k, "stride": s,  # type: ignore[no-any-return]
                                     "padding": p, "dilation": d,
                                     "ceil_mode": bool(ceil_mode)})


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = (),
                            padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """torch._C._nn.max_pool2d_with_indices: the 2-d max pool of (N, C, H, W) or (C, H, W)
    and the flat index within its plane of each maximum."""
    return _max_pool_nd("max_pool2d", 2, input, kernel_size, stride, padding, dilation,
                        ceil_mode)


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = (),
                            padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """torch._C._nn.max_pool3d_with_indices: the 3-d max pool of (N, C, D, H, W) or
    (C, D, H, W) and the flat index within its volume of each maximum."""
    return _max_pool_nd("max_pool3d", 3, input, kernel_size, stride, padding, dilation,
                        ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = (),
                            padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """torch.max_pool1d_with_indices: the 1-d max pool of (N, C, L) or (C, L) and the index
    of each maximum (torch's 2-d pool over a unit height)."""
    check_operand("max_pool1d", "input", input, numbers=False)
    if input.ndim not in (2, 3):  # (empty dims: the 2-d pool's check, as in torch)
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "max_pool1d)")

    def one(v: Any, name: str, fill: int | None = None) -> Ints:
        vals = _ints(v, 1, name, "max_pool1d") if fill is None or not (
            not isinstance(v, int) and len(v) == 0) else ()
        return (1,) + vals if vals else ()

    k = one(kernel_size, "kernel_size")
    s = one(stride, "stride", 0) or k
    out, idx = _max_pool_nd("max_pool2d", 2, input.unsqueeze(-2), k, s,
                            (0,) + _ints(padding, 1, "padding", "max_pool1d"),
                            (1,) + _ints(dilation, 1, "dilation", "max_pool1d"), ceil_mode)
    return out.squeeze(-2), idx.squeeze(-2)


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    """torch.max_pool1d: the largest value of each window along the last dim (floating
    types only, as torch's kernel without indices, which it takes where no gradient is
    needed)."""
    if isinstance(input, Tensor) and (input.ndim not in (2, 3) or
                                      0 in input.shape[input.ndim - 2:]):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    if isinstance(input, Tensor) and input.dtype.category != 2 and input.numel():
        raise not_implemented("max_pool1d_impl", input.dtype)
    (k,), (p,) = _ints(kernel_size, 1, "kernel_size", "max_pool1d"), \
        _ints(padding, 1, "padding", "max_pool1d")
    if k > 0 and p > k // 2:  # torch's own 1-d kernel, with its message
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but "
                           f"got padding={p} and kernel_size={k}")
    return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)[0]


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    """torch.max_pool2d: the largest value of each (dilated) window of the last two dims."""
    return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)[0]


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    """torch.max_pool3d: the largest value of each (dilated) window of the last three dims."""
    return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)[0]


def _avg_pool_nd(op: str, nd: int, input: Tensor, kernel_size: Any, stride: Any,
                 padding: Any, ceil_mode: bool, count_include_pad: bool,
                 divisor_override: int | None) -> Tensor:
    _check_input(op, input, nd, op if nd == 2 else "avg_pool3d_out_frame")
    k, s, p, _ = _pool_params(op, input, nd, kernel_size, stride, padding, 1, ceil_mode)
    if nd == 3 and any(n < kk for n, kk in zip(input.shape[-3:], k)):
        # torch's 3-d kernel compares the input, without padding, with the kernel
        t, h, w = input.shape[-3:]
        raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size "
                           f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    prim = AVG_POOL2D if nd == 2 else AVG_POOL3D
    return dispatch(prim, (input,), {  # type: ignore[no-any-return]
        "kernel_size": k, "stride": s, "padding": p, "ceil_mode": bool(ceil_mode),
        "count_include_pad": bool(count_include_pad),
        "divisor_override": None if divisor_override is None else int(divisor_override)})


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """torch.avg_pool1d: the mean of each window along the last dim."""
    check_operand("avg_pool1d", "input", input, numbers=False)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"avg_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{list(input.shape)}")
    k = (1,) + _ints(kernel_size, 1, "kernel_size", "avg_pool1d")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        (1,) + _ints(stride, 1, "stride", "avg_pool1d")
    out = _avg_pool_nd("avg_pool2d", 2, input.unsqueeze(-2), k, s,
                       (0,) + _ints(padding, 1, "padding", "avg_pool1d"), ceil_mode,
                       count_include_pad, None)
    return out.squeeze(-2)


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """torch._C._nn.avg_pool2d: the mean of each window of the last two dims
    (``divisor_override`` divides every window's sum instead)."""
    return _avg_pool_nd("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override)


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """torch._C._nn.avg_pool3d: the mean of each window of the last three dims."""
    return _avg_pool_nd("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override)


# the native CPU kernels, registered beside the reference forwards above
from . import pooling_native  # noqa: E402,F401

FUNCTIONS = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
             "avg_pool1d"]
METHODS: dict[str, Any] = {}
