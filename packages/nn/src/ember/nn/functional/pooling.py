"""Pooling: torch.nn.functional's max_pool1d/2d/3d (``return_indices``, ``ceil_mode``) and
their ``_with_indices`` forms, max_unpool1d/2d/3d, avg_pool1d/2d/3d and lp_pool1d/2d/3d.

The max and average pools are tensor-core's primitives; an unpool scatters each value to
its index within the output plane (its gradient gathers from there, as torch's); an Lp
pool is torch's composite of an average pool of ``x**p``.
"""

from __future__ import annotations

import math
from typing import Any

import ember.core as E
from ember.core import Tensor
from ember.core.dtypes import scalar_type_name
from ember.core.function_modes import public
from ember.core.ops import pooling as P
from ember.core.ops.operands import not_implemented

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "max_unpool1d",
           "max_unpool2d", "max_unpool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
           "lp_pool1d", "lp_pool2d", "lp_pool3d"]

avg_pool1d = P.avg_pool1d
avg_pool2d = P.avg_pool2d
avg_pool3d = P.avg_pool3d


def ntuple(value: Any, n: int) -> tuple[Any, ...]:
    """torch's ``_single``/``_pair``/``_triple``: an iterable as a tuple, else ``n`` copies."""
    if isinstance(value, (list, tuple)) or isinstance(value, Tensor):
        return tuple(value)
    return (value,) * n


def _stride(stride: Any) -> Any:
    # torch's Python layer passes an empty list for None: the kernel size
    return () if stride is None else stride


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """torch.nn.functional.max_pool1d_with_indices: the 1-d max pool of (N, C, L) or (C, L)
    and each maximum's index along L."""
    return P.max_pool1d_with_indices(input, kernel_size, _stride(stride), padding, dilation,
                                         ceil_mode)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """torch.nn.functional.max_pool2d_with_indices: the 2-d max pool of (N, C, H, W) or
    (C, H, W) and each maximum's flat index within its plane."""
    return P.max_pool2d_with_indices(input, kernel_size, _stride(stride), padding, dilation,
                                         ceil_mode)


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """torch.nn.functional.max_pool3d_with_indices: the 3-d max pool of (N, C, D, H, W) or
    (C, D, H, W) and each maximum's flat index within its volume."""
    return P.max_pool3d_with_indices(input, kernel_size, _stride(stride), padding, dilation,
                                         ceil_mode)


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """torch.nn.functional.max_pool1d: the largest value of each (dilated) window along the
    last dim; ``(values, indices)`` where ``return_indices``."""
    if return_indices:
        return P.max_pool1d_with_indices(input, kernel_size, _stride(stride), padding,
                                         dilation, ceil_mode)
    return P.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """torch.nn.functional.max_pool2d: the largest value of each (dilated) window of the
    last two dims; ``(values, indices)`` where ``return_indices``."""
    if return_indices:
        return P.max_pool2d_with_indices(input, kernel_size, _stride(stride), padding,
                                         dilation, ceil_mode)
    return P.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """torch.nn.functional.max_pool3d: the largest value of each (dilated) window of the
    last three dims; ``(values, indices)`` where ``return_indices``."""
    if return_indices:
        return P.max_pool3d_with_indices(input, kernel_size, _stride(stride), padding,
                                         dilation, ceil_mode)
    return P.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


# ----------------------------------------------------------------------------- unpooling

def _unpool_output_size(input: Tensor, kernel_size: tuple[int, ...], stride: tuple[int, ...],
                        padding: tuple[int, ...], output_size: Any) -> list[int]:
    """torch's: the pooled input's size by default, else ``output_size`` (optionally with
    the batch and channel dims) within a stride of it."""
    nd = len(kernel_size)
    default = [(input.shape[input.ndim - nd + d] - 1) * stride[d] + kernel_size[d]
               - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        size = default
    else:
        size = list(output_size)
        if len(size) == nd + 2:
            size = size[2:]
        if len(size) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                             f"elements, but it has a length of '{len(size)}'")
        for d in range(nd):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < size[d] < high:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be '
                                 f'between {low} and {high})')
    for d in range(nd):
        if size[d] < 0:
            raise ValueError(f"max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{d}]={size[d]}")
    return size


def _max_unpool(input: Tensor, indices: Tensor, size: list[int],
                stride: tuple[int, ...] = ()) -> Tensor:
    """torch's max_unpool{2,3}d: zeros of the pooled input's size with each value at its
    flat index within its plane (or volume); torch's checks in its order."""
    nd = len(size)
    op = f"max_unpooling{nd}d"
    if indices.dtype != E.int64:
        raise RuntimeError("elements in indices should be type int64" + (
            f" but got: {scalar_type_name(indices.dtype)}" if nd == 2 else ""))
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to {op} should be a {nd + 1}d or {nd + 2}d Tensor, but got "
                           f"a tensor with {input.ndim} dimensions.")
    if indices.shape != input.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"{op}_forward_out_cpu(): Expected input to have non-zero size "
                               f"for non-batch dimensions, but got {list(input.shape)} with "
                               f"dimension {i} being empty.")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"strides should be greater than zero, but got stride: "
                           f"{list(stride)}")
    if not input.dtype.is_floating_point:
        raise not_implemented(f"max_unpool{nd}d", input.dtype)
    plane = math.prod(size)
    lead = tuple(input.shape[:input.ndim - nd])
    flat = indices.reshape(*lead, -1)
    bad = ((flat < 0) | (flat >= plane)).reshape(-1).nonzero()
    if bad.numel():  # (torch's loop reports the last one it meets)
        raise RuntimeError(f"Found an invalid max index: {int(flat.reshape(-1)[bad[-1, 0]])} "
                           f"(output volumes are of size {'x'.join(map(str, size))})")
    out = input.new_zeros((*lead, plane)).scatter(-1, flat, input.reshape(*lead, -1))
    return out.view(*lead, *size)


def _unpool_args(nd: int, kernel_size: Any, stride: Any, padding: Any
                 ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    kernel = ntuple(kernel_size, nd)
    return kernel, kernel if stride is None else ntuple(stride, nd), ntuple(padding, nd)


@public
def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """torch.nn.functional.max_unpool1d: the inverse of ``max_pool1d`` — each value put back
    at its index along L, zeros elsewhere."""
    kernel, step, pad = _unpool_args(1, kernel_size, stride, padding)
    size = _unpool_output_size(input, kernel, step, pad, output_size)
    return _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), size + [1]).squeeze(-1)


@public
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """torch.nn.functional.max_unpool2d: the inverse of ``max_pool2d`` — each value put back
    at its flat index within its plane, zeros elsewhere."""
    kernel, step, pad = _unpool_args(2, kernel_size, stride, padding)
    size = _unpool_output_size(input, kernel, step, pad, output_size)
    return _max_unpool(input, indices, size)


@public
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """torch.nn.functional.max_unpool3d: the inverse of ``max_pool3d`` — each value put back
    at its flat index within its volume, zeros elsewhere."""
    kernel, step, pad = _unpool_args(3, kernel_size, stride, padding)
    size = _unpool_output_size(input, kernel, step, pad, output_size)
    return _max_unpool(input, indices, size, step)


# ----------------------------------------------------------------------------- Lp pooling

def _lp_pool(nd: int, input: Tensor, norm_type: float, kernel_size: Any, stride: Any,
             ceil_mode: bool) -> Tensor:
    """torch's composite: ``(sum over the window of x**p) ** (1/p)``, from an average pool
    times the window's size (p = +-inf: the max pool of |x|)."""
    max_pool = (max_pool1d, max_pool2d, max_pool3d)[nd - 1]
    if norm_type == math.inf:
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    avg_pool = (P.avg_pool1d, P.avg_pool2d, P.avg_pool3d)[nd - 1]
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    window = kernel_size if nd == 1 else math.prod(ntuple(kernel_size, nd))
    return (E.sign(out) * E.relu(E.abs(out))).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """torch.nn.functional.lp_pool1d: the ``norm_type``-norm of each window along the last
    dim."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """torch.nn.functional.lp_pool2d: the ``norm_type``-norm of each window of the last two
    dims."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """torch.nn.functional.lp_pool3d: the ``norm_type``-norm of each window of the last
    three dims."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)
