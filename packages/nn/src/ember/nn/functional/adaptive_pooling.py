"""Pooling over computed windows: torch.nn.functional's adaptive_avg_pool1d/2d/3d,
adaptive_max_pool1d/2d/3d (``return_indices``) with their ``_with_indices`` forms, and
fractional_max_pool2d/3d.

The 1-d and 2-d adaptive pools and the 3-d average are tensor-core's primitives. The 3-d
adaptive max pool and the fractional pools find each window's maximum outside the graph
(a gather of the windows' elements, torch's rule for ties: the first largest value, or the
last NaN) and then gather the maxima at their indices, so that the gradient goes to those
indices, as torch's backward sends it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as E
from ember.autograd import no_grad
from ember.core import Tensor
from ember.core.function_modes import public
from ember.core.ops import adaptive_pooling as AP
from ember.core.ops.operands import not_implemented

from .pooling import ntuple

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "fractional_max_pool2d",
           "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d_with_indices"]

adaptive_avg_pool1d = AP.adaptive_avg_pool1d


def _list_with_default(out_size: Any, defaults: Any) -> Any:
    """torch's: None entries of ``out_size`` take the input's size there."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [d if v is None else v for v, d in zip(out_size, defaults[-len(out_size):])]


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """torch.nn.functional.adaptive_avg_pool2d: the mean of each of ``output_size`` windows
    of the last two dims, window ``i`` covering ``[floor(i*H/h), ceil((i+1)*H/h))``."""
    return AP.adaptive_avg_pool2d(input, _list_with_default(output_size, input.shape))


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """torch.nn.functional.adaptive_avg_pool3d: the mean of each of ``output_size`` adaptive
    windows of the last three dims."""
    return AP.adaptive_avg_pool3d(input, _list_with_default(output_size, input.shape))


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """torch.nn.functional.adaptive_max_pool1d_with_indices: the largest value of each
    adaptive window of the last dim and its index."""
    if output_size is None:
        raise TypeError("adaptive_max_pool1d(): argument 'output_size' (position 2) must be "
                        "tuple of ints, not NoneType")
    return AP.adaptive_max_pool1d(input, output_size)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """torch.nn.functional.adaptive_max_pool2d_with_indices: the largest value of each
    adaptive window of the last two dims and its flat index within the plane."""
    return AP.adaptive_max_pool2d(input, _list_with_default(output_size, input.shape))


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """torch.nn.functional.adaptive_max_pool3d_with_indices: the largest value of each
    adaptive window of the last three dims and its flat index within the volume."""
    size = _list_with_default(output_size, input.shape)
    size = tuple(ntuple(size, 3))
    if input.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: "
                           f"{list(input.shape)}")
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"adaptive_max_pool3d(): Expected input to have non-zero size "
                               f"for non-batch dimensions, but input has sizes "
                               f"{list(input.shape)} with dimension {i} being empty")
    if len(size) != 3:
        raise RuntimeError("adaptive_max_pool3d(): internal error: output_size.size() must "
                           "be 3")
    if not input.dtype.is_floating_point:
        raise not_implemented("adaptive_max_pool3d_cpu", input.dtype)
    spatial = tuple(input.shape[-3:])
    lead = tuple(input.shape[:-3])
    shape = lead + tuple(int(o) for o in size)
    if 0 in size:
        indices = E.zeros(shape, dtype=E.int64, device=input.device)
        return input.reshape(*lead, -1).gather(-1, indices.reshape(*lead, 0)).view(shape), \
            indices
    coords = []
    for s, o in zip(spatial, size):
        start, end = AP.adaptive_bounds(s, int(o))
        width = int((end - start).max()) if o else 0
        # each window's elements, its last repeated where it is narrower than the widest
        coords.append(np.minimum(start[:, None] + np.arange(width), end[:, None] - 1))
    d, h, w = coords
    table = (d[:, None, None, :, None, None] * (spatial[1] * spatial[2])
             + h[None, :, None, None, :, None] * spatial[2] + w[None, None, :, None, None, :])
    table = table.reshape(int(np.prod(size)), -1)
    return _window_max(input.reshape(*lead, -1),
                       E.from_numpy(np.ascontiguousarray(table)).to(input.device), shape)


def _window_max(flat: Tensor, table: Tensor, shape: tuple[int, ...]) -> tuple[Tensor, Tensor]:
    """The maximum of each window of ``flat`` (..., plane) and its index within the plane:
    ``table`` (windows, elements) or (..., windows, elements) lists each window's indices."""
    windows, width = table.shape[-2:]
    table = table.expand(*flat.shape[:-1], windows, width)
    with no_grad():
        values = flat.gather(-1, table.reshape(*flat.shape[:-1], -1)).view(table.shape)
        pick = values.argmax(-1, keepdim=True)
        nan = values.isnan()
        if nan.any():  # torch's loops keep the last NaN of a window
            last = (width - 1) - nan.flip(-1).long().argmax(-1, keepdim=True)
            pick = E.where(nan.any(-1, keepdim=True), last, pick)
        indices = table.gather(-1, pick).squeeze(-1)
    return flat.gather(-1, indices).view(shape), indices.view(shape)


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """torch.nn.functional.adaptive_max_pool1d: the largest value of each adaptive window of
    the last dim; ``(values, indices)`` where ``return_indices``."""
    out = adaptive_max_pool1d_with_indices(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """torch.nn.functional.adaptive_max_pool2d: the largest value of each adaptive window of
    the last two dims; ``(values, indices)`` where ``return_indices``."""
    out = adaptive_max_pool2d_with_indices(input, output_size)
    return out if return_indices else out[0]


@public
def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """torch.nn.functional.adaptive_max_pool3d: the largest value of each adaptive window of
    the last three dims; ``(values, indices)`` where ``return_indices``."""
    out = adaptive_max_pool3d_with_indices(input, output_size)
    return out if return_indices else out[0]


# ----------------------------------------------------------------------------- fractional

_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _intervals(sample: Tensor, size: int, out: int, pool: int) -> Tensor:
    """torch's ``generate_intervals``: each window's start, in the samples' dtype:
    ``int((i + u) * alpha) - int(u * alpha)`` with ``alpha = (size - pool) / (out - 1)``,
    the last window ending at the input's end."""
    last = E.full((*sample.shape, 1), size - pool, dtype=E.int64, device=sample.device)
    if out <= 1:
        return last[..., :out]
    alpha = E.tensor(float(size - pool), dtype=sample.dtype, device=sample.device) / (out - 1)
    i = E.arange(out - 1, dtype=sample.dtype, device=sample.device)
    starts = ((i + sample.unsqueeze(-1)) * alpha).long() - (sample * alpha).long().unsqueeze(-1)
    return E.cat([starts, last], -1)


def _fractional(nd: int, input: Tensor, kernel_size: Any, output_size: Any,
                samples: Tensor) -> tuple[Tensor, Tensor]:
    op = f"fractional_max_pool{nd}d"
    where = op + ("()" if nd == 2 else "_out()")
    kernel = ntuple(kernel_size, nd)
    size = ntuple(output_size, nd)
    if len(kernel) != nd:
        raise RuntimeError(f"{op}: kernel_size must either be a single Int or tuple of "
                           + ("Ints" if nd == 2 else "three Ints"))
    if len(size) != nd:
        raise RuntimeError(f"{op}: output_size must either be a single Int or tuple of "
                           + ("Ints" if nd == 2 else "three Ints"))
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{where}: Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"{where}: Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{list(input.shape)} with dimension {i} "
                               f"being empty.")
    spatial = tuple(input.shape[-nd:])
    for name, s, o, k in zip(_DIM_NAMES[nd], spatial, size, kernel):
        if o + k - 1 > s:
            raise RuntimeError(f"{where}: pool {name} {k} too large relative to input {name} "
                               f"{s}")
    x = input if input.ndim == nd + 2 else input.unsqueeze(0)
    batch, planes = x.shape[0], x.shape[1]
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != planes:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{samples.shape[2]}.")
    if not input.dtype.is_floating_point:
        raise not_implemented(op, input.dtype)
    # torch's sample order: (w, h) in 2-d, (t, h, w) in 3-d
    which = (1, 0) if nd == 2 else (0, 1, 2)
    table: Any = 0
    for d in range(nd):
        starts = _intervals(samples[:batch, :, which[d]], spatial[d], int(size[d]), kernel[d])
        reach = starts.unsqueeze(-1) + E.arange(kernel[d], device=x.device)  # (N, C, o, k)
        view = [batch, planes] + [1] * (2 * nd)
        view[2 + d], view[2 + nd + d] = reach.shape[2], reach.shape[3]
        table = table * spatial[d] + reach.view(*view)
    windows = table.reshape(batch, planes, -1, int(np.prod(kernel)))
    out, indices = _window_max(x.reshape(batch, planes, -1), windows,
                               (batch, planes) + tuple(int(o) for o in size))
    if input.ndim == nd + 1:
        return out.squeeze(0), indices.squeeze(0)
    return out, indices


def _fractional_size(nd: int, input: Tensor, output_size: Any, output_ratio: Any) -> Any:
    if output_size is None and output_ratio is None:
        raise ValueError(f"fractional_max_pool{nd}d requires specifying either an output_size "
                         f"or an output_ratio")
    if output_size is not None:
        return output_size
    if nd == 2 and len(output_ratio) > 2:
        raise ValueError("fractional_max_pool2d requires output_ratio to either be a single "
                         "Int or tuple of Ints.")
    ratio = ntuple(output_ratio, nd)
    return [int(input.shape[input.ndim - nd + d] * ratio[d]) for d in range(nd)]


def _samples(nd: int, input: Tensor) -> Tensor:
    batch = 1 if input.ndim == nd + 1 else input.shape[0]
    return E.rand(batch, input.shape[-nd - 1], nd, dtype=input.dtype, device=input.device)


def fractional_max_pool2d_with_indices(
        input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
        return_indices: bool = False, _random_samples: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """torch.nn.functional.fractional_max_pool2d_with_indices: the 2-d fractional max pool
    (Graham's pseudo-random windows of ``kernel_size``, ``output_size`` of them or
    ``output_ratio`` of the input) and each maximum's flat index within its plane."""
    size = _fractional_size(2, input, output_size, output_ratio)
    samples = _random_samples if _random_samples is not None else _samples(2, input)
    return _fractional(2, input, kernel_size, size, samples)


def fractional_max_pool3d_with_indices(
        input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
        return_indices: bool = False, _random_samples: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """torch.nn.functional.fractional_max_pool3d_with_indices: the 3-d fractional max pool
    and each maximum's flat index within its volume."""
    size = _fractional_size(3, input, output_size, output_ratio)
    samples = _random_samples if _random_samples is not None else _samples(3, input)
    return _fractional(3, input, kernel_size, size, samples)


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """torch.nn.functional.fractional_max_pool2d: the 2-d fractional max pool;
    ``(values, indices)`` where ``return_indices``."""
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                             _random_samples=_random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """torch.nn.functional.fractional_max_pool3d: the 3-d fractional max pool;
    ``(values, indices)`` where ``return_indices``."""
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                             _random_samples=_random_samples)
    return out if return_indices else out[0]
