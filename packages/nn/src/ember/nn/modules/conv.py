"""Convolutions: Conv1d/2d/3d, ConvTranspose1d/2d/3d and their Lazy* forms, with torch's
argument checks, default initialisation, padding modes and ``repr``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import ember.autograd as ag
import ember.core as E

from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .utils import _pair, _reverse_repeat_tuple, _single, _triple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]

_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    """The parameters, checks, initialisation and ``repr`` shared by the convolutions."""

    in_channels: int
    out_channels: int
    kernel_size: tuple[int, ...]
    stride: tuple[int, ...]
    padding: str | tuple[int, ...]
    dilation: tuple[int, ...]
    transposed: bool
    output_padding: tuple[int, ...]
    groups: int
    padding_mode: str
    _reversed_padding_repeated_twice: Sequence[int]

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple[int, ...],
                 stride: tuple[int, ...], padding: str | tuple[int, ...],
                 dilation: tuple[int, ...], transposed: bool, output_padding: tuple[int, ...],
                 groups: int, bias: bool, padding_mode: str, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's form of the padding (last dim first), for the non-zero padding modes
        if isinstance(padding, str):
            pads = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size,
                                   range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    pads[2 * i] = total // 2
                    pads[2 * i + 1] = total - total // 2
            self._reversed_padding_repeated_twice = pads
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        shape = (in_channels, out_channels // groups) if transposed else \
            (out_channels, in_channels // groups)
        self.weight = Parameter(E.empty((*shape, *kernel_size), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(E.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # kaiming_uniform_ with a = sqrt(5) is U(-1/sqrt(fan_in), 1/sqrt(fan_in))
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class Conv1d(_ConvNd):
    """torch.nn.Conv1d: the 1-d cross-correlation of an (N, C_in, L) or (C_in, L) input
    with ``out_channels`` filters of ``kernel_size``, plus a bias. ``padding`` is an int, a
    tuple, 'valid' or 'same'; ``padding_mode`` 'zeros', 'reflect', 'replicate' or
    'circular'. Weight and bias are drawn from U(-1/sqrt(k), 1/sqrt(k)), k = C_in / groups
    * prod(kernel_size)."""

    _no_padding = (0,)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any,
                 stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, _single(kernel_size), _single(stride),
                         padding if isinstance(padding, str) else _single(padding),
                         _single(dilation), False, _single(0), groups, bias, padding_mode,
                         device, dtype)

    def _conv_forward(self, input: E.Tensor, weight: E.Tensor,
                      bias: E.Tensor | None) -> E.Tensor:
        if self.padding_mode != "zeros":
            return F.conv1d(F.pad(input, self._reversed_padding_repeated_twice,
                                  mode=self.padding_mode),
                            weight, bias, self.stride, self._no_padding, self.dilation,
                            self.groups)
        return F.conv1d(input, weight, bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def forward(self, input: E.Tensor) -> E.Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv2d(_ConvNd):
    """torch.nn.Conv2d: the 2-d cross-correlation of an (N, C_in, H, W) or (C_in, H, W)
    input with ``out_channels`` filters of ``kernel_size``, plus a bias. ``padding`` is an
    int, a tuple, 'valid' or 'same'; ``padding_mode`` 'zeros', 'reflect', 'replicate' or
    'circular'. Weight and bias are drawn from U(-1/sqrt(k), 1/sqrt(k)), k = C_in / groups
    * prod(kernel_size)."""

    _no_padding = (0, 0)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any,
                 stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, _pair(kernel_size), _pair(stride),
                         padding if isinstance(padding, str) else _pair(padding),
                         _pair(dilation), False, _pair(0), groups, bias, padding_mode,
                         device, dtype)

    def _conv_forward(self, input: E.Tensor, weight: E.Tensor,
                      bias: E.Tensor | None) -> E.Tensor:
        if self.padding_mode != "zeros":
            return F.conv2d(F.pad(input, self._reversed_padding_repeated_twice,
                                  mode=self.padding_mode),
                            weight, bias, self.stride, self._no_padding, self.dilation,
                            self.groups)
        return F.conv2d(input, weight, bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def forward(self, input: E.Tensor) -> E.Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv3d(_ConvNd):
    """torch.nn.Conv3d: the 3-d cross-correlation of an (N, C_in, D, H, W) or
    (C_in, D, H, W) input with ``out_channels`` filters of ``kernel_size``, plus a bias.
    ``padding`` is an int, a tuple, 'valid' or 'same'; ``padding_mode`` 'zeros', 'reflect',
    'replicate' or 'circular'. Weight and bias are drawn from U(-1/sqrt(k), 1/sqrt(k)),
    k = C_in / groups * prod(kernel_size)."""

    _no_padding = (0, 0, 0)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any,
                 stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, _triple(kernel_size), _triple(stride),
                         padding if isinstance(padding, str) else _triple(padding),
                         _triple(dilation), False, _triple(0), groups, bias, padding_mode,
                         device, dtype)

    def _conv_forward(self, input: E.Tensor, weight: E.Tensor,
                      bias: E.Tensor | None) -> E.Tensor:
        if self.padding_mode != "zeros":
            return F.conv3d(F.pad(input, self._reversed_padding_repeated_twice,
                                  mode=self.padding_mode),
                            weight, bias, self.stride, self._no_padding, self.dilation,
                            self.groups)
        return F.conv3d(input, weight, bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def forward(self, input: E.Tensor) -> E.Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class _ConvTransposeNd(_ConvNd):
    """The transposed convolutions: zeros padding only, and ``output_size`` in forward."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple[int, ...],
                 stride: tuple[int, ...], padding: tuple[int, ...], dilation: tuple[int, ...],
                 transposed: bool, output_padding: tuple[int, ...], groups: int, bias: bool,
                 padding_mode: str, device: Any = None, dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         transposed, output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input: E.Tensor, output_size: Sequence[int] | None,
                        stride: Sequence[int], padding: Sequence[int],
                        kernel_size: Sequence[int], num_spatial_dims: int,
                        dilation: Sequence[int] | None = None) -> Sequence[int]:
        """The output padding that gives ``output_size`` (its spatial sizes, or with the
        batch and channel sizes too); ``self.output_padding`` where it is None."""
        if output_size is None:
            return _single(self.output_padding)
        non_spatial = 2 if input.ndim == num_spatial_dims + 2 else 1
        sizes = list(output_size)
        if len(sizes) == non_spatial + num_spatial_dims:
            sizes = sizes[non_spatial:]
        if len(sizes) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.ndim}D input, "
                             f"output_size must have {num_spatial_dims} or "
                             f"{non_spatial + num_spatial_dims} elements (got {len(sizes)})")
        min_sizes = [(input.shape[d + non_spatial] - 1) * stride[d] - 2 * padding[d]
                     + (1 if dilation is None else dilation[d]) * (kernel_size[d] - 1) + 1
                     for d in range(num_spatial_dims)]
        max_sizes = [m + s - 1 for m, s in zip(min_sizes, stride)]
        for size, low, high in zip(sizes, min_sizes, max_sizes):
            if size < low or size > high:
                raise ValueError(f"requested an output size of {sizes}, but valid sizes "
                                 f"range from {min_sizes} to {max_sizes} (for an input of "
                                 f"{list(input.shape[non_spatial:])})")
        return [s - m for s, m in zip(sizes, min_sizes)]

    def _check_padding_mode(self) -> None:
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for "
                             f"{type(self).__name__}")


class ConvTranspose1d(_ConvTransposeNd):
    """torch.nn.ConvTranspose1d: the 1-d transposed convolution ("deconvolution") of an
    (N, C_in, L) or (C_in, L) input; ``output_size`` in forward picks the output length
    among those the stride allows. Weight (C_in, C_out / groups, K) and bias are drawn from
    U(-1/sqrt(k), 1/sqrt(k)), k = C_out / groups * K."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any,
                 stride: Any = 1, padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                 bias: bool = True, dilation: Any = 1, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, _single(kernel_size), _single(stride),
                         _single(padding), _single(dilation), True, _single(output_padding),
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input: E.Tensor, output_size: Sequence[int] | None = None) -> E.Tensor:
        self._check_padding_mode()
        output_padding = self.output_padding if output_size is None else \
            self._output_padding(input, output_size, self.stride, self.padding,  # type: ignore[arg-type]
                                 self.kernel_size, 1, self.dilation)
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  output_padding, self.groups, self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """torch.nn.ConvTranspose2d: the 2-d transposed convolution ("deconvolution") of an
    (N, C_in, H, W) or (C_in, H, W) input; ``output_size`` in forward picks the output size
    among those the stride allows. Weight (C_in, C_out / groups, kH, kW) and bias are drawn
    from U(-1/sqrt(k), 1/sqrt(k)), k = C_out / groups * kH * kW."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any,
                 stride: Any = 1, padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                 bias: bool = True, dilation: Any = 1, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, _pair(kernel_size), _pair(stride),
                         _pair(padding), _pair(dilation), True, _pair(output_padding),
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input: E.Tensor, output_size: Sequence[int] | None = None) -> E.Tensor:
        self._check_padding_mode()
        output_padding = self.output_padding if output_size is None else \
            self._output_padding(input, output_size, self.stride, self.padding,  # type: ignore[arg-type]
                                 self.kernel_size, 2, self.dilation)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  output_padding, self.groups, self.dilation)


class ConvTranspose3d(_ConvTransposeNd):
    """torch.nn.ConvTranspose3d: the 3-d transposed convolution ("deconvolution") of an
    (N, C_in, D, H, W) or (C_in, D, H, W) input; ``output_size`` in forward picks the output
    size among those the stride allows. Weight (C_in, C_out / groups, kD, kH, kW) and bias
    are drawn from U(-1/sqrt(k), 1/sqrt(k)), k = C_out / groups * kD * kH * kW."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any,
                 stride: Any = 1, padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                 bias: bool = True, dilation: Any = 1, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, _triple(kernel_size), _triple(stride),
                         _triple(padding), _triple(dilation), True, _triple(output_padding),
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input: E.Tensor, output_size: Sequence[int] | None = None) -> E.Tensor:
        self._check_padding_mode()
        output_padding = self.output_padding if output_size is None else \
            self._output_padding(input, output_size, self.stride, self.padding,  # type: ignore[arg-type]
                                 self.kernel_size, 3, self.dilation)
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                  output_padding, self.groups, self.dilation)


class _LazyConvXdMixin(LazyModuleMixin):
    """in_channels, the weight and the bias from the first input (its dim 1, or dim 0 of
    an unbatched one)."""

    groups: int
    transposed: bool
    in_channels: int
    out_channels: int
    kernel_size: tuple[int, ...]
    weight: Any
    bias: Any
    _spatial_dims: int

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: E.Tensor, *args: Any, **kwargs: Any) -> None:
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        shape = (self.in_channels, self.out_channels // self.groups) if self.transposed \
            else (self.out_channels, self.in_channels // self.groups)
        with ag.no_grad():
            self.weight.materialize((*shape, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input: E.Tensor) -> int:
        unbatched = self._spatial_dims + 1
        if input.ndim not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D "
                               f"(batched) input to {type(self).__name__}, but got input of "
                               f"size: {list(input.shape)}")
        return int(input.shape[1] if input.ndim == unbatched + 1 else input.shape[0])

    def _lazy_parameters(self, out_channels: int, bias: bool, device: Any,
                         dtype: Any) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)


class _LazyConv(_LazyConvXdMixin):
    """The constructor of LazyConv1d/2d/3d: Conv*d's arguments less in_channels."""

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation,  # type: ignore[call-arg]
                         groups, False, padding_mode, device, dtype)
        self._lazy_parameters(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    """The constructor of LazyConvTranspose1d/2d/3d: ConvTranspose*d's arguments less
    in_channels."""

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                 bias: bool = True, dilation: Any = 1, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding,  # type: ignore[call-arg]
                         output_padding, groups, False, dilation, padding_mode, device, dtype)
        self._lazy_parameters(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """torch.nn.LazyConv1d: a Conv1d whose in_channels come from its first input."""

    cls_to_become = Conv1d
    _spatial_dims = 1


class LazyConv2d(_LazyConv, Conv2d):
    """torch.nn.LazyConv2d: a Conv2d whose in_channels come from its first input."""

    cls_to_become = Conv2d
    _spatial_dims = 2


class LazyConv3d(_LazyConv, Conv3d):
    """torch.nn.LazyConv3d: a Conv3d whose in_channels come from its first input."""

    cls_to_become = Conv3d
    _spatial_dims = 3


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """torch.nn.LazyConvTranspose1d: a ConvTranspose1d whose in_channels come from its
    first input."""

    cls_to_become = ConvTranspose1d
    _spatial_dims = 1


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """torch.nn.LazyConvTranspose2d: a ConvTranspose2d whose in_channels come from its
    first input."""

    cls_to_become = ConvTranspose2d
    _spatial_dims = 2


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """torch.nn.LazyConvTranspose3d: a ConvTranspose3d whose in_channels come from its
    first input."""

    cls_to_become = ConvTranspose3d
    _spatial_dims = 3
