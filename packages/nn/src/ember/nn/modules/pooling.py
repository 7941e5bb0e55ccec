"""Pooling layers: max (with indices, and its inverse MaxUnpool), average, power-average
(LPPool) and adaptive pooling over 1 to 3 dims, as torch.nn's; each holds its arguments as
torch's does (so ``repr`` matches) and calls its ``F`` function."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ember.core as E

from .. import functional as F
from .module import Module
from .utils import _pair, _single, _triple

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
           "AvgPool1d", "AvgPool2d", "AvgPool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveAvgPool3d"]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, " \
               f"padding={self.padding}, dilation={self.dilation}, ceil_mode={self.ceil_mode}"


class MaxPool1d(_MaxPoolNd):
    """torch.nn.MaxPool1d: the maximum of each (dilated) window of an (N, C, L) or (C, L)
    input, padded by -inf; with ``return_indices`` also the flat index of each maximum in
    its plane (what MaxUnpool1d takes)."""

    def forward(self, input: E.Tensor) -> Any:
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """torch.nn.MaxPool2d: the maximum of each (dilated) window of an (N, C, H, W) or
    (C, H, W) input, padded by -inf; with ``return_indices`` also the flat index of each
    maximum in its plane (what MaxUnpool2d takes)."""

    def forward(self, input: E.Tensor) -> Any:
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool3d(_MaxPoolNd):
    """torch.nn.MaxPool3d: the maximum of each (dilated) window of an (N, C, D, H, W) or
    (C, D, H, W) input, padded by -inf; with ``return_indices`` also the flat index of each
    maximum in its volume (what MaxUnpool3d takes)."""

    def forward(self, input: E.Tensor) -> Any:
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _MaxUnpoolNd(Module):
    """MaxPool's partial inverse over ``_dims`` dims (``_unpool``: its F function)."""

    kernel_size: tuple[int, ...]
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    _dims: Any
    _unpool: Any

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = self._dims(kernel_size)
        self.stride = self._dims(stride if stride is not None else kernel_size)
        self.padding = self._dims(padding)

    def forward(self, input: E.Tensor, indices: E.Tensor,
                output_size: Sequence[int] | None = None) -> E.Tensor:
        return self._unpool(input, indices, self.kernel_size, self.stride,  # type: ignore[no-any-return]
                            self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """torch.nn.MaxUnpool1d: MaxPool1d's partial inverse: each value written at its index
    in a zero output (of ``output_size``, or the size the pool took)."""

    _dims = staticmethod(_single)
    _unpool = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """torch.nn.MaxUnpool2d: MaxPool2d's partial inverse: each value written at its index
    in a zero output (of ``output_size``, or the size the pool took)."""

    _dims = staticmethod(_pair)
    _unpool = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """torch.nn.MaxUnpool3d: MaxPool3d's partial inverse: each value written at its index
    in a zero output (of ``output_size``, or the size the pool took)."""

    _dims = staticmethod(_triple)
    _unpool = staticmethod(F.max_unpool3d)


class _AvgPoolNd(Module):
    kernel_size: Any
    stride: Any
    padding: Any
    ceil_mode: bool
    count_include_pad: bool

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """torch.nn.AvgPool1d: the mean of each window of an (N, C, L) or (C, L) input, zero
    padded; ``count_include_pad`` counts the padding in the divisor."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """torch.nn.AvgPool2d: the mean of each window of an (N, C, H, W) or (C, H, W) input,
    zero padded; ``count_include_pad`` counts the padding in the divisor, and
    ``divisor_override`` replaces the divisor."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AvgPool3d(_AvgPoolNd):
    """torch.nn.AvgPool3d: the mean of each window of an (N, C, D, H, W) or (C, D, H, W)
    input, zero padded; ``count_include_pad`` counts the padding in the divisor, and
    ``divisor_override`` replaces the divisor."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _FractionalMaxPoolNd(Module):
    _dims: int

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: E.Tensor | None = None
                 ) -> None:
        super().__init__()
        ntuple = _pair if self._dims == 2 else _triple
        self.kernel_size = ntuple(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = ntuple(output_size) if output_size is not None else None
        self.output_ratio = ntuple(output_ratio) if output_ratio is not None else None
        name = type(self).__name__
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a "
                             f"pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """torch.nn.FractionalMaxPool2d: the maximum over pseudo-random windows of
    ``kernel_size`` (Graham's fractional max pooling) of an (N, C, H, W) or (C, H, W)
    input, giving ``output_size`` or ``output_ratio`` of the input's size."""

    _dims = 2

    def forward(self, input: E.Tensor) -> Any:
        return F.fractional_max_pool2d(input, self.kernel_size, self.output_size,
                                       self.output_ratio, self.return_indices,
                                       _random_samples=self._random_samples)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """torch.nn.FractionalMaxPool3d: the maximum over pseudo-random windows of
    ``kernel_size`` of an (N, C, D, H, W) or (C, D, H, W) input, giving ``output_size`` or
    ``output_ratio`` of the input's size."""

    _dims = 3

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: E.Tensor | None = None
                 ) -> None:
        if isinstance(kernel_size, int) and kernel_size <= 0 or \
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        super().__init__(kernel_size, output_size, output_ratio, return_indices,
                         _random_samples)

    def forward(self, input: E.Tensor) -> Any:
        return F.fractional_max_pool3d(input, self.kernel_size, self.output_size,
                                       self.output_ratio, self.return_indices,
                                       _random_samples=self._random_samples)


class _LPPoolNd(Module):
    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, " \
               f"stride={self.stride}, ceil_mode={self.ceil_mode}"


class LPPool1d(_LPPoolNd):
    """torch.nn.LPPool1d: ``(sum of x**p over each window) ** (1/p)`` of an (N, C, L) or
    (C, L) input, p = ``norm_type``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """torch.nn.LPPool2d: ``(sum of x**p over each window) ** (1/p)`` of an (N, C, H, W)
    or (C, H, W) input, p = ``norm_type``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class LPPool3d(_LPPoolNd):
    """torch.nn.LPPool3d: ``(sum of x**p over each window) ** (1/p)`` of an
    (N, C, D, H, W) or (C, D, H, W) input, p = ``norm_type``."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class _AdaptiveMaxPoolNd(Module):
    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """torch.nn.AdaptiveMaxPool1d: the maximum over ``output_size`` windows spanning an
    (N, C, L) or (C, L) input (window i covers floor(i*L/out) to ceil((i+1)*L/out))."""

    def forward(self, input: E.Tensor) -> Any:
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """torch.nn.AdaptiveMaxPool2d: the maximum over windows spanning an (N, C, H, W) or
    (C, H, W) input, giving ``output_size`` (an int, or a pair whose None entries keep the
    input's size)."""

    def forward(self, input: E.Tensor) -> Any:
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """torch.nn.AdaptiveMaxPool3d: the maximum over windows spanning an (N, C, D, H, W)
    or (C, D, H, W) input, giving ``output_size`` (an int, or a triple whose None entries
    keep the input's size)."""

    def forward(self, input: E.Tensor) -> Any:
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _AdaptiveAvgPoolNd(Module):
    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """torch.nn.AdaptiveAvgPool1d: the mean over ``output_size`` windows spanning an
    (N, C, L) or (C, L) input (window i covers floor(i*L/out) to ceil((i+1)*L/out))."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """torch.nn.AdaptiveAvgPool2d: the mean over windows spanning an (N, C, H, W) or
    (C, H, W) input, giving ``output_size`` (an int, or a pair whose None entries keep the
    input's size)."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """torch.nn.AdaptiveAvgPool3d: the mean over windows spanning an (N, C, D, H, W) or
    (C, D, H, W) input, giving ``output_size`` (an int, or a triple whose None entries keep
    the input's size)."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.adaptive_avg_pool3d(input, self.output_size)
