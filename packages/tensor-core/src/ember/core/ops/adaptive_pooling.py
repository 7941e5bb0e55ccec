"""Adaptive pooling as torch's CPU runs it: each output element the mean (or the largest
value, and its flat index within the plane) of an adaptive window, ``[floor(i * size /
out), ceil((i + 1) * size / out))`` along each pooled dim.

Primitives: ``_adaptive_avg_pool{2,3}d`` and its ``_backward``; ``adaptive_max_pool2d`` ->
``(out, indices)`` and its ``_backward``; the 1-d pools are the 2-d ones over an
unsqueezed input. The average is a product with each dim's averaging matrix. Results take
the input's suggested memory format, as torch's CPU kernels (its 3-d average pool's are
row-major).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import meta
from ..dispatch import dispatch, register
from ..tensor import Tensor
from .convolution import laid_out, suggests_channels_last
from .operands import LOW_PRECISION, check_operand, not_implemented
from .pooling import (
    _F32,
    _I64,
    Ints,
    _flat,
    _ints,
    _last,
    _like_input_rule,
    _lowest,
    _max_update,
    _scatter_grad,
    _spatial,
)


def adaptive_bounds(size: int, out: int) -> tuple[Any, Any]:
    """torch's adaptive windows: ``[floor(i * size / out), ceil((i + 1) * size / out))``."""
    i = np.arange(out)
    return i * size // out, -(-(i + 1) * size // out)


def adaptive_matrix(size: int, out: int, dtype: Any) -> Any:
    """The (out, size) averaging matrix of adaptive windows along one dim."""
    start, end = adaptive_bounds(size, out)
    j = np.arange(size)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _along(a: Any, m: Any, axis: int) -> Any:
    """``m`` (out, size) applied along ``axis`` of ``a``."""
    return np.moveaxis(np.tensordot(a, m, axes=([axis], [1])), -1, axis)


def _adaptive_avg(x: Any, *, output_size: Ints) -> Any:
    nd = len(output_size)
    z = x.astype(_F32) if x.dtype in LOW_PRECISION else x
    y = z
    for i, o in enumerate(output_size):
        axis = x.ndim - nd + i
        y = _along(y, adaptive_matrix(x.shape[axis], o, z.dtype), axis)
    return np.ascontiguousarray(y.astype(x.dtype, copy=False))


def _adaptive_avg_backward(g: Any, x: Any, nd: int = 2) -> Any:
    gz = g.astype(_F32) if g.dtype in LOW_PRECISION else g
    gi = gz
    for i in range(nd):
        axis = x.ndim - nd + i
        gi = _along(gi, adaptive_matrix(x.shape[axis], g.shape[axis], gz.dtype).T, axis)
    return np.ascontiguousarray(gi.astype(x.dtype, copy=False))


def _adaptive_avg_rule(x: Any, *, output_size: Ints) -> Any:
    return laid_out(x.shape[:x.ndim - len(output_size)] + output_size, x.dtype, _last(x))


def _adaptive_avg3d_backward(g: Any, x: Any) -> Any:
    return _adaptive_avg_backward(g, x, 3)


def _adaptive_avg3d_rule(x: Any, *, output_size: Ints) -> Any:
    # torch's 3-d CPU kernel gives row-major results, but for its mean over a volume
    return laid_out(x.shape[:x.ndim - 3] + output_size, x.dtype,
                    _last(x) and output_size == (1, 1, 1))


def _row_major_rule(g: Any, x: Any) -> Any:
    return meta.empty(x.shape, x.dtype)


def _adaptive_max(x: Any, *, output_size: Ints) -> tuple[Any, Any]:
    nd = len(output_size)
    size = _spatial(x, nd)
    bounds = [adaptive_bounds(s, o) for s, o in zip(size, output_size)]
    widths = [int((e - s).max()) if len(s) else 0 for s, e in bounds]
    lead = x.shape[:x.ndim - nd]
    best = np.full(lead + output_size, _lowest(x.dtype), x.dtype)
    idx = np.broadcast_to(_flat([s for s, _ in bounds], size), lead + output_size)
    for k in np.ndindex(*widths):
        coords = [np.minimum(s + i, e - 1) for (s, e), i in zip(bounds, k)]
        v = x
        for i, c in enumerate(coords):
            v = np.take(v, c, axis=x.ndim - nd + i)
        best, idx = _max_update(best, idx, v, _flat(coords, size))
    return np.ascontiguousarray(best), np.ascontiguousarray(idx, dtype=_I64)


def _adaptive_max_backward(g: Any, x: Any, indices: Any) -> Any:
    return _scatter_grad(g, x, indices, 2)


def _adaptive_max_rule(x: Any, *, output_size: Ints) -> tuple[Any, Any]:
    shape = x.shape[:x.ndim - len(output_size)] + output_size
    last = _last(x)
    return laid_out(shape, x.dtype, last), laid_out(shape, _I64, last)


ADAPTIVE_AVG_POOL2D = register("_adaptive_avg_pool2d", _adaptive_avg, _adaptive_avg_rule,
                               "library", arg_names=("self",))
ADAPTIVE_AVG_POOL2D_BACKWARD = register(
    "_adaptive_avg_pool2d_backward", _adaptive_avg_backward, _like_input_rule, "library",
    False, arg_names=("grad_output", "self"))
ADAPTIVE_AVG_POOL3D = register("_adaptive_avg_pool3d", _adaptive_avg, _adaptive_avg3d_rule,
                               "library", arg_names=("self",))
ADAPTIVE_AVG_POOL3D_BACKWARD = register(
    "_adaptive_avg_pool3d_backward", _adaptive_avg3d_backward, _row_major_rule, "library",
    False, arg_names=("grad_output", "self"))
ADAPTIVE_MAX_POOL2D = register("adaptive_max_pool2d", _adaptive_max, _adaptive_max_rule,
                               "library", arg_names=("self",))
ADAPTIVE_MAX_POOL2D_BACKWARD = register(
    "adaptive_max_pool2d_backward", _adaptive_max_backward, _like_input_rule, "library",
    False, arg_names=("grad_output", "self", "indices"))



# ----------------------------------------------------------------------------- public API

def _adaptive_input(op: str, x: Tensor, nd: int, output_size: Any) -> Ints:
    check_operand(op, "input", x, numbers=False)
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{list(x.shape)}")
    for i in range(1, x.ndim):
        if x.shape[i] == 0:
            raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(x.shape)} with "
                               f"dimension {i} being empty")
    if isinstance(output_size, (int, np.integer)):
        size: tuple[Any, ...] = (int(output_size),) * nd
    else:
        size = tuple(output_size)
        if len(size) != nd:
            raise RuntimeError(f"{op}: output_size must be {nd}")
    return tuple(x.shape[x.ndim - nd + i] if v is None else int(v) for i, v in enumerate(size))


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """torch._C._nn.adaptive_avg_pool2d: the mean over ``output_size`` windows of the last
    two dims, window ``i`` covering ``[floor(i*H/h), ceil((i+1)*H/h))``."""
    size = _adaptive_input("adaptive_avg_pool2d", input, 2, output_size)
    if input.dtype.category < 2:
        raise not_implemented("adaptive_avg_pool2d", input.dtype)
    if size == (1, 1) and not _last_tensor(input):
        # torch's CPU takes the mean here, recorded as its own op
        return input.mean((-1, -2), keepdim=True)  # type: ignore[no-any-return]
    return dispatch(ADAPTIVE_AVG_POOL2D, (input,),  # type: ignore[no-any-return]
                    {"output_size": size})


def _last_tensor(t: Tensor) -> bool:
    return suggests_channels_last(tuple(t.shape), tuple(t.stride()))


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """torch.adaptive_avg_pool1d: the mean over ``output_size`` adaptive windows of the last
    dim."""
    check_operand("adaptive_avg_pool1d", "input", input, numbers=False)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d() argument 'input' should have 2 or 3 "
                           f"dimensions, but got {input.ndim}")
    size = _ints(output_size, 1, "output_size", "adaptive_avg_pool1d")
    x = input.unsqueeze(-2)
    _adaptive_input("adaptive_avg_pool2d", x, 2, (1,) + size)
    if input.dtype.category < 2:
        raise not_implemented("adaptive_avg_pool2d", input.dtype)
    out = dispatch(ADAPTIVE_AVG_POOL2D, (x,), {"output_size": (1,) + size})
    return out.squeeze(-2)  # type: ignore[no-any-return]


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """torch._C._nn.adaptive_avg_pool3d: the mean over ``output_size`` adaptive windows of
    the last three dims."""
    size = _adaptive_input("adaptive_avg_pool3d", input, 3, output_size)
    if input.dtype.category < 2:
        raise not_implemented("adaptive_avg_pool3d_cpu", input.dtype)
    if size == (1, 1, 1) and not _last_tensor(input):
        return input.mean((-1, -2, -3), keepdim=True)  # type: ignore[no-any-return]
    return dispatch(ADAPTIVE_AVG_POOL3D, (input,),  # type: ignore[no-any-return]
                    {"output_size": size})


def adaptive_max_pool2d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    """torch._C._nn.adaptive_max_pool2d: the largest value of each adaptive window of the
    last two dims and its flat index within the plane."""
    size = _adaptive_input("adaptive_max_pool2d", input, 2, output_size)
    if input.dtype.category < 2:
        raise not_implemented("adaptive_max_pool2d", input.dtype)
    return dispatch(ADAPTIVE_MAX_POOL2D, (input,),  # type: ignore[no-any-return]
                    {"output_size": size})


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    """torch.adaptive_max_pool1d: the largest value of each adaptive window of the last dim
    and its index."""
    check_operand("adaptive_max_pool1d", "input", input, numbers=False)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_max_pool1d() argument 'input' should have 2 or 3 "
                           f"dimensions, but got {input.ndim}")
    size = _ints(output_size, 1, "output_size", "adaptive_max_pool1d")
    out, idx = adaptive_max_pool2d(input.unsqueeze(-2), (1,) + size)
    return out.squeeze(-2), idx.squeeze(-2)


FUNCTIONS = ["adaptive_avg_pool1d", "adaptive_max_pool1d"]
METHODS: dict[str, Any] = {}
