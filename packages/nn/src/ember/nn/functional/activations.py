"""torch.nn.functional's elementwise activations (those along a dim, softmax and its kin,
are in ``activations_along_dim``).

Each is one primitive where tensor-core has it (relu, sigmoid, tanh, gelu, silu) and
otherwise a short composite of public ops whose autograd gives torch's gradients. Where
torch's backward takes a side at a kink (leaky_relu's slope at 0, elu's negative branch at
0, hardtanh's 0 at its bounds), the composite selects with ``where`` on the comparison
torch's kernel makes, or adds pieces whose own gradients take that side (relu's is 0 at 0,
clamp's 1 at its bound, minimum's 1/2 at a tie); branches that ``where`` leaves unselected
are fed inputs that keep their derivatives finite (an unselected ``exp`` of a large input
would turn the zero gradient it is given into NaN).

In-place forms (``relu_``, ``inplace=True``) write the result into the input and return
it, with autograd's refusals (a leaf that requires grad) and the input's history taken
over by the result, as in torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as E
from ember.autograd import Function
from ember.core.dtypes import scalar_type_name
from ember.core.function_modes import public
from ember.core.ops import activations as _primitives
from ember.core.ops.inplace import in_graph, inplace
from ember.core.ops.operands import checked_scalar, not_implemented
from ember.core.tensor import Tensor

__all__ = [
    "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "selu_",
    "celu", "celu_", "gelu", "silu", "mish", "hardswish", "hardsigmoid", "hardtanh",
    "hardtanh_", "hardshrink", "softshrink", "tanhshrink", "threshold", "threshold_",
    "sigmoid", "logsigmoid", "tanh", "softplus", "softsign", "prelu", "rrelu", "rrelu_",
]

_FLOATING = 2  # a dtype category
_ONE_SIXTH = float(np.float32(1 / 6))  # torch's hardsigmoid backward: 1.0f / 6.0f
# torch's SELU constants
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_ELU_SLOPE_ERROR = ("In-place elu backward calculation is triggered with a negative slope "
                    "which is not supported. This is caused by calling in-place forward "
                    "function with a negative slope, please call out-of-place version "
                    "instead.")
_LEAKY_SLOPE_ERROR = ("In-place leakyReLu backward calculation is triggered with a negative "
                      "slope which is not supported. This is caused by calling in-place "
                      "forward function with a negative slope, please call out-of-place "
                      "version instead. File an issue at https://github.com/pytorch/pytorch "
                      "if you do require supporting in-place leakRelu backward calculation "
                      "with negative slope")

gelu = _primitives.gelu
silu = _primitives.silu


def _tensor(op: str, value: Any, name: str = "input", position: int = 1) -> None:
    """torch's argument parser: a TypeError for an operand that is not a Tensor."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{type(value).__name__}")


def check_floating(op: str, kernel: str, input: Any) -> None:
    """The checks of a kernel built for floating dtypes only: the input's type, then its
    dtype (NotImplementedError naming torch's kernel)."""
    if input.__class__ is not Tensor:
        _tensor(op, input)
    if input.dtype.category != _FLOATING:
        raise not_implemented(kernel, input.dtype)


def _refuse_in_backward(result: Tensor, message: str) -> None:
    """Make backward through ``result`` raise ``message``: torch's in-place elu and
    leaky_relu differentiate from their result, which a negative slope leaves ambiguous,
    and refuse when the gradient reaches them (not before)."""
    if in_graph(result, ()):
        def refuse(grad: Tensor) -> None:
            raise RuntimeError(message)

        result.register_hook(refuse)


def _strict_clamp(input: Tensor, low: float, high: float) -> Tensor:
    """``clamp(input, low, high)`` whose gradient is 0 at the bounds too (clamp's passes
    there), as torch's hardtanh takes it; NaN passes, with its gradient."""
    floor = E.where(input <= low, low, input)
    return E.where(floor >= high, high, floor)


# ----------------------------------------------------------------------------- rectifiers

@public
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """torch.nn.functional.relu: ``max(0, x)`` elementwise; ``inplace=True`` writes into
    ``input``."""
    return relu_(input) if inplace else E.relu(input)


@public
def relu_(input: Tensor) -> Tensor:
    """torch.nn.functional.relu_: relu written into ``input``, which is returned."""
    _tensor("relu_", input)
    return input.relu_()  # type: ignore[no-any-return]


def _threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    if input.__class__ is not Tensor:
        _tensor("threshold", input)
    dt = input.dtype
    if dt.category < _FLOATING:
        if dt is E.bool:
            raise not_implemented("threshold_cpu", dt)
        # torch's kernel converts both numbers to the input's type first
        threshold, value = checked_scalar(threshold, dt), checked_scalar(value, dt)
    return E.where(input <= threshold, value, input)


@public
def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """torch.nn.functional.threshold: ``value`` where ``x <= threshold``, else ``x``."""
    return (threshold_ if inplace else _threshold)(input, threshold, value)


threshold_ = public(inplace(_threshold, "threshold_"))
threshold_.__doc__ = """torch.nn.functional.threshold_: threshold written into ``input``."""


def _hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    if input.__class__ is not Tensor:
        _tensor("hardtanh", input)
    dt = input.dtype
    if dt.category < _FLOATING:
        if dt is E.bool:
            raise RuntimeError("Bool inputs not supported for hardtanh")
        # torch's kernel takes integer bounds for integer inputs, not promoting them
        min_val, max_val = int(min_val), int(max_val)
        if dt is E.uint8 and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    elif in_graph(input, ()):
        return _strict_clamp(input, min_val, max_val)
    return input.clamp(min_val, max_val)  # type: ignore[no-any-return]


@public
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """torch.nn.functional.hardtanh: ``x`` clamped to ``[min_val, max_val]``; its gradient
    is 0 at the bounds, as torch's."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return (hardtanh_ if inplace else _hardtanh)(input, min_val, max_val)


hardtanh_ = public(inplace(_hardtanh, "hardtanh_"))
hardtanh_.__doc__ = """torch.nn.functional.hardtanh_: hardtanh written into ``input``."""


@public
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """torch.nn.functional.relu6: ``min(max(0, x), 6)``, torch's hardtanh(x, 0, 6)."""
    if input.__class__ is not Tensor:
        _tensor("relu6", input)
    return (hardtanh_ if inplace else _hardtanh)(input, 0.0, 6.0)


def _leaky_relu(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    check_floating("leaky_relu", "leaky_relu_cpu", input)
    return E.where(input > 0, input, input * negative_slope)


def _leaky_relu_in_place(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    result = _leaky_relu(input, negative_slope)
    if negative_slope < 0:
        _refuse_in_backward(result, _LEAKY_SLOPE_ERROR)
    return result


@public
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """torch.nn.functional.leaky_relu: ``x`` where ``x > 0``, else ``negative_slope * x``
    (the gradient at 0 is ``negative_slope``, as torch's)."""
    return (leaky_relu_ if inplace else _leaky_relu)(input, negative_slope)


leaky_relu_ = public(inplace(_leaky_relu_in_place, "leaky_relu_"))
leaky_relu_.__doc__ = """torch.nn.functional.leaky_relu_: leaky_relu written into ``input``;
backward through it refuses a negative slope, as torch's."""


def _elu(input: Tensor, alpha: float, scale: float = 1.0, input_scale: float = 1.0) -> Tensor:
    """torch's elu kernel, ``x <= 0 ? expm1(x * input_scale) * alpha * scale : x * scale``,
    as ``relu(x) * scale + expm1(min(x, 0) * input_scale) * alpha * scale``: relu's
    gradient is 0 at 0 and min's 1, which gives torch's side of the kink (and the positive
    side's gradient at NaN), and the sum is exact where one term is 0."""
    check_floating("elu", "elu_cpu", input)
    negative = input.clamp_max(0)
    if input_scale != 1.0:
        negative = negative * input_scale
    positive = input.relu()
    if scale != 1.0:
        positive = positive * scale
    return positive + negative.expm1() * (alpha * scale)  # type: ignore[no-any-return]


def _elu_in_place(input: Tensor, alpha: float, scale: float = 1.0,
                  input_scale: float = 1.0) -> Tensor:
    result = _elu(input, alpha, scale, input_scale)
    if alpha < 0:
        _refuse_in_backward(result, _ELU_SLOPE_ERROR)
    return result


_elu_written = inplace(_elu_in_place, "elu_")


@public
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """torch.nn.functional.elu: ``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    return (_elu_written if inplace else _elu)(input, alpha)


@public
def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """torch.nn.functional.elu_: elu written into ``input``."""
    return _elu_written(input, alpha)


@public
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """torch.nn.functional.selu: ``scale * elu(x, alpha)`` with torch's constants
    ``alpha = 1.6732632423543772`` and ``scale = 1.0507009873554805``."""
    return (_elu_written if inplace else _elu)(input, _SELU_ALPHA, _SELU_SCALE)


@public
def selu_(input: Tensor) -> Tensor:
    """torch.nn.functional.selu_: selu written into ``input``."""
    return _elu_written(input, _SELU_ALPHA, _SELU_SCALE)


def _celu_alpha(alpha: float) -> float:
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return 1.0 / alpha


@public
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """torch.nn.functional.celu: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    inverse = _celu_alpha(alpha)
    return (_elu_written if inplace else _elu)(input, alpha, 1.0, inverse)


@public
def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """torch.nn.functional.celu_: celu written into ``input``."""
    return _elu_written(input, alpha, 1.0, _celu_alpha(alpha))


def _rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return _leaky_relu(input, (lower + upper) / 2)
    if input.__class__ is not Tensor:
        _tensor("rrelu", input)
    if input.dtype not in (E.float32, E.float64, E.bfloat16):
        raise not_implemented("rrelu_with_noise_out_cpu", input.dtype)
    slopes = E.empty_like(input).uniform_(lower, upper)
    return E.where(input <= 0, input * slopes, input)


@public
def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Tensor:
    """torch.nn.functional.rrelu: leaky_relu whose slope for each element ``x <= 0`` is
    drawn uniformly from ``[lower, upper]`` (Ember's generator) in training, and is
    ``(lower + upper) / 2`` otherwise."""
    return (rrelu_ if inplace else _rrelu)(input, lower, upper, training)


rrelu_ = public(inplace(_rrelu, "rrelu_"))
rrelu_.__doc__ = """torch.nn.functional.rrelu_: rrelu written into ``input``."""


@public
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """torch.nn.functional.prelu: ``x`` where ``x > 0``, else ``weight * x``; ``weight``
    has one element, or one per channel (dim 1 of ``input``)."""
    _tensor("prelu", input)
    _tensor("prelu", weight, "weight", 2)
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{scalar_type_name(input.dtype)} and "
                           f"{scalar_type_name(weight.dtype)}")
    ndim, count = input.ndim, weight.numel()
    if count != 1:
        if ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if ndim > 1 else 1
        if channels != count:
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {count} and channel size = {channels}.")
    if weight.ndim > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    if input.dtype.category != _FLOATING:
        raise not_implemented("prelu_cpu", input.dtype)
    if ndim != weight.ndim:
        shape = [1] * ndim
        if ndim > 1:
            shape[1] = count
        weight = weight.reshape(shape)
    return E.where(input > 0, input, weight * input)


# ----------------------------------------------------------------------------- smooth

@public
def sigmoid(input: Tensor) -> Tensor:
    """torch.nn.functional.sigmoid: ``1 / (1 + exp(-x))``."""
    return input.sigmoid()  # type: ignore[no-any-return]


@public
def tanh(input: Tensor) -> Tensor:
    """torch.nn.functional.tanh: the hyperbolic tangent."""
    return input.tanh()  # type: ignore[no-any-return]


@public
def logsigmoid(input: Tensor) -> Tensor:
    """torch.nn.functional.logsigmoid: ``log(1 / (1 + exp(-x)))``, computed as torch's
    kernel computes it, ``min(x, 0) - log1p(exp(-|x|))``; at 0, where abs's gradient is 0,
    minimum's, which splits a tie, gives the gradient ``sigmoid(0) = 1/2``."""
    check_floating("log_sigmoid", "log_sigmoid_cpu", input)
    return E.minimum(input, input.new_zeros(())) - _log1p_exp_minus_abs(input)


@public
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """torch.nn.functional.softplus: ``log1p(exp(beta * x)) / beta``, and ``x`` itself
    where ``beta * x > threshold``."""
    check_floating("softplus", "softplus_cpu", input)
    scaled = input * beta if beta != 1 else input
    linear = scaled > threshold
    # exp reads the threshold where the linear branch is taken: an infinite exp there
    # would make the zero gradient it gets NaN
    soft = E.where(linear, threshold, scaled).exp().log1p()
    if beta != 1:
        soft = soft / beta
    return E.where(linear, input, soft)


@public
def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """torch.nn.functional.mish: ``x * tanh(softplus(x))`` (softplus without threshold)."""
    return (_mish_written if inplace else _mish)(input)


def _mish(input: Tensor) -> Tensor:
    check_floating("mish", "mish_cpu", input)
    # softplus as max(x, 0) + log1p(exp(-|x|)): finite, with finite gradients, for any x
    softplus = E.maximum(input, input.new_zeros(())) + _log1p_exp_minus_abs(input)
    return input * softplus.tanh()  # type: ignore[no-any-return]


def _log1p_exp_minus_abs(input: Tensor) -> Tensor:
    return (-input.abs()).exp().log1p()  # type: ignore[no-any-return]


_mish_written = inplace(_mish, "mish_")


@public
def softsign(input: Tensor) -> Tensor:
    """torch.nn.functional.softsign: ``x / (1 + |x|)``."""
    return input / (input.abs() + 1)  # type: ignore[no-any-return]


@public
def tanhshrink(input: Tensor) -> Tensor:
    """torch.nn.functional.tanhshrink: ``x - tanh(x)``."""
    return input - input.tanh()  # type: ignore[no-any-return]


# ----------------------------------------------------------------------------- piecewise

def _hardswish(input: Tensor) -> Tensor:
    check_floating("hardswish", "hardswish_cpu", input)
    if in_graph(input, ()):
        return _Hardswish.apply(input)  # type: ignore[no-any-return]
    return input * (input + 3).clamp(0, 6) / 6  # type: ignore[no-any-return]


class _Hardswish(Function):
    """``x * relu6(x + 3) / 6``, differentiated as torch's kernel: 0 up to -3, the gradient
    times ``x / 3 + 1/2`` below 3, the gradient itself from 3 on (and at NaN)."""

    @staticmethod
    def forward(ctx: Any, input: Tensor) -> Tensor:
        ctx.save_for_backward(input)
        return input * (input + 3).clamp(0, 6) / 6  # type: ignore[no-any-return]

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return E.where(x <= -3, 0.0, E.where(x < 3, grad * (x / 3 + 0.5), grad))


_hardswish_written = inplace(_hardswish, "hardswish_")


@public
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """torch.nn.functional.hardswish: ``x * relu6(x + 3) / 6``."""
    return (_hardswish_written if inplace else _hardswish)(input)


def _hardsigmoid(input: Tensor) -> Tensor:
    check_floating("hardsigmoid", "hardsigmoid_cpu", input)
    if in_graph(input, ()):
        return _Hardsigmoid.apply(input)  # type: ignore[no-any-return]
    return (input + 3).clamp(0, 6) / 6  # type: ignore[no-any-return]


class _Hardsigmoid(Function):
    """``relu6(x + 3) / 6``, differentiated as torch's kernel: the gradient times 1/6
    strictly between -3 and 3 (NaN excluded), 0 elsewhere; its 1/6 is a float32 constant
    in every dtype (off the float64 value by 3e-8)."""

    @staticmethod
    def forward(ctx: Any, input: Tensor) -> Tensor:
        ctx.save_for_backward(input)
        return (input + 3).clamp(0, 6) / 6  # type: ignore[no-any-return]

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return E.where((x > -3) & (x < 3), grad * _ONE_SIXTH, 0.0)


_hardsigmoid_written = inplace(_hardsigmoid, "hardsigmoid_")


@public
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """torch.nn.functional.hardsigmoid: ``relu6(x + 3) / 6``; its gradient is 0 at -3 and
    3, as torch's."""
    return (_hardsigmoid_written if inplace else _hardsigmoid)(input)


@public
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """torch.nn.functional.hardshrink: 0 where ``-lambd <= x <= lambd``, else ``x``."""
    check_floating("hardshrink", "hardshrink_cpu", input)
    return E.where(input.abs() <= lambd, 0, input)


@public
def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """torch.nn.functional.softshrink: ``x - lambd`` above ``lambd``, ``x + lambd`` below
    ``-lambd``, 0 between (``x - clamp(x, -lambd, lambd)``)."""
    check_floating("softshrink", "softshrink_check", input)
    largest = E.finfo(input.dtype).max
    if not 0 <= lambd <= largest:
        raise RuntimeError(f"lambda must be in range [0, {largest:g}] for input dtype "
                           f"{scalar_type_name(input.dtype)}, but found {lambd:g}")
    return input - input.clamp(-lambd, lambd)  # type: ignore[no-any-return]
