"""Identity, Linear, Bilinear and LazyLinear, with torch's default initialisation."""

from __future__ import annotations

import math
from typing import Any

import ember.autograd as ag
import ember.core as E

from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

# (NonDynamicallyQuantizableLinear too is here, and out of torch.nn, as in torch)
__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear"]


class Identity(Module):
    """torch.nn.Identity: returns its input (any arguments are accepted and ignored)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


class Linear(Module):
    """torch.nn.Linear: ``y = x @ weight.T + bias``; weight (out_features, in_features)
    drawn from U(-1/sqrt(in_features), 1/sqrt(in_features)), as the bias."""

    in_features: int
    out_features: int

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(E.empty((out_features, in_features), device=device,
                                        dtype=dtype))
        if bias:
            self.bias = Parameter(E.empty(out_features, device=device, dtype=dtype))
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

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, " \
               f"bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """torch.nn.modules.linear.NonDynamicallyQuantizableLinear: a Linear (the class only
    keeps torch's quantization tools off MultiheadAttention's out projection)."""


class Bilinear(Module):
    """torch.nn.Bilinear: ``y = x1^T A x2 + b``, A (out, in1, in2) and b drawn from
    U(-1/sqrt(in1_features), 1/sqrt(in1_features))."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(E.empty((out_features, in1_features, in2_features),
                                        device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(E.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: E.Tensor, input2: E.Tensor) -> E.Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in1_features={self.in1_features}, in2_features={self.in2_features}, " \
               f"out_features={self.out_features}, bias={self.bias is not None}"


class LazyLinear(LazyModuleMixin, Linear):
    """torch.nn.LazyLinear: a Linear whose in_features come from its first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: E.Tensor) -> None:
        if self.has_uninitialized_params():
            with ag.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
