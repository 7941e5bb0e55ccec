"""ember.nn.init: torch.nn.init's parameter initializations.

Each fills its tensor in place outside the graph and returns it; the random ones draw from
Ember's default generator, or ``generator`` where given. Gains and fans are torch's, so a
layer initialized here has torch's distribution.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import ember.core as E
from ember.autograd import no_grad
from ember.core import Generator, Tensor
from ember.core.ops.operands import not_implemented

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
    "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
    "kaiming_normal_", "orthogonal_", "sparse_",
    # deprecated aliases, as torch keeps them
    "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
    "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse",
]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d")


def calculate_gain(nonlinearity: str, param: int | float | None = None) -> float:
    """torch.nn.init.calculate_gain: the recommended gain of ``nonlinearity`` (1 for the
    linear ones and sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + slope**2)) for
    leaky_relu with ``param`` its negative slope (default 0.01), 3/4 for selu)."""
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope: float = 0.01
        elif not isinstance(param, bool) and isinstance(param, int) or isinstance(param, float):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0,
             generator: Generator | None = None) -> Tensor:
    """torch.nn.init.uniform_: fill with values drawn from U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: Generator | None = None) -> Tensor:
    """torch.nn.init.normal_: fill with values drawn from N(mean, std**2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _norm_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Generator | None = None) -> Tensor:
    """torch.nn.init.trunc_normal_: fill with values drawn from N(mean, std**2) truncated to
    [a, b], by torch's rejection sampling: normal draws redrawn where outside [a, b] when
    the interval holds more than 30% of the mass, else uniform draws on [a, b] accepted with
    the normal density's ratio to its peak."""
    if tensor.is_meta:
        return tensor
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    with no_grad():
        if _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std) > 0.3:
            _redrawn_normal(tensor, mean, std, a, b, generator)
        else:
            _accepted_uniform(tensor, mean, std, a, b, generator)
    return tensor


def _redrawn_normal(tensor: Tensor, mean: float, std: float, a: float, b: float,
                    generator: Generator | None) -> None:
    # the bounds in the tensor's dtype, so that the rejection agrees with its values
    lo = E.tensor(a, dtype=tensor.dtype).item()
    hi = E.tensor(b, dtype=tensor.dtype).item()
    result = tensor.normal_(mean, std, generator=generator)
    while True:
        outside = (result < lo) | (result > hi)
        if not outside.any():
            break
        result = E.where(outside, E.empty_like(result).normal_(mean, std, generator=generator),
                         result)
    if result is not tensor:
        tensor.copy_(result)


def _accepted_uniform(tensor: Tensor, mean: float, std: float, a: float, b: float,
                      generator: Generator | None) -> None:
    log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2

    def log_ratio(x: Tensor) -> Tensor:
        return x.sub(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)

    def rejected(x: Tensor) -> Tensor:
        return E.empty_like(x).uniform_(generator=generator).log_().gt(log_ratio(x))

    tensor.uniform_(a, b, generator=generator)
    pending = rejected(tensor)
    result = tensor
    while pending.any():
        candidates = E.empty_like(tensor).uniform_(a, b, generator=generator)
        result = E.where(pending, candidates, result)
        pending = E.where(pending, rejected(candidates), pending)
    if result is not tensor:
        tensor.copy_(result)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """torch.nn.init.constant_: fill with ``val``."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """torch.nn.init.ones_: fill with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """torch.nn.init.zeros_: fill with zeros."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    """torch.nn.init.eye_: fill a 2-d tensor with the identity (ones on the diagonal)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.copy_(E.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))
    return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """torch.nn.init.dirac_: fill a 3-, 4- or 5-d convolution weight with the Dirac delta,
    so that the convolution keeps its input's channels (in each of ``groups`` groups of
    output channels)."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    if tensor.is_meta:
        return tensor
    per_group = sizes[0] // groups
    kept = min(per_group, sizes[1])
    with no_grad():
        tensor.zero_()
        inputs = E.arange(kept, device=tensor.device).repeat(groups)
        outputs = (E.arange(groups, device=tensor.device) * per_group).repeat_interleave(kept)
        centre = tuple(s // 2 for s in sizes[2:])
        tensor[(outputs + inputs, inputs) + centre] = 1
    return tensor


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """torch's fans: (input, output) feature maps times the receptive field (dims 2:)."""
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def xavier_uniform_(tensor: Tensor, gain: float = 1.0,
                    generator: Generator | None = None) -> Tensor:
    """torch.nn.init.xavier_uniform_ (Glorot): U(-a, a) with ``a = gain * sqrt(6 / (fan_in +
    fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -math.sqrt(3.0) * std, math.sqrt(3.0) * std, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0,
                   generator: Generator | None = None) -> Tensor:
    """torch.nn.init.xavier_normal_ (Glorot): N(0, std**2) with ``std = gain * sqrt(2 /
    (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    """torch's fan for ``mode`` 'fan_in' or 'fan_out' (any case)."""
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu",
                     generator: Generator | None = None) -> Tensor:
    """torch.nn.init.kaiming_uniform_ (He): U(-bound, bound) with ``bound = gain *
    sqrt(3 / fan)``, the gain of ``nonlinearity`` (``a``: leaky_relu's negative slope) and
    the fan of ``mode``."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu",
                    generator: Generator | None = None) -> Tensor:
    """torch.nn.init.kaiming_normal_ (He): N(0, std**2) with ``std = gain / sqrt(fan)``."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Generator | None = None
                ) -> Tensor:
    """torch.nn.init.orthogonal_: fill with a (semi-)orthogonal matrix, the tensor seen as
    (dim 0, the rest): the Q of the QR decomposition of a standard normal matrix, each
    column's sign set by R's diagonal so that Q is uniformly distributed, times ``gain``."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or tensor.is_meta:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with no_grad():
        flattened = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
        if tensor.dtype not in (E.float32, E.float64):
            raise not_implemented("geqrf_cpu", tensor.dtype)
        a = np.asarray(flattened.cpu())
        q, r = np.linalg.qr(a.T if rows < cols else a)
        q = q * np.sign(np.diagonal(r))
        if rows < cols:
            q = q.T
        tensor.view(rows, cols).copy_(E.from_numpy(np.ascontiguousarray(q)))
        tensor.mul_(gain)
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01,
            generator: Generator | None = None) -> Tensor:
    """torch.nn.init.sparse_: fill a 2-d tensor with N(0, std**2) values, then zero
    ``ceil(sparsity * rows)`` randomly chosen rows of each column."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    if tensor.is_meta:
        return tensor
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        # each column's rows in a random order (one permutation per column, drawn at once)
        order = E.rand(rows, cols, generator=generator, device=tensor.device).argsort(0)
        tensor.scatter_(0, order[:num_zeros], 0.0)
    return tensor


def _make_deprecate(meth: Callable[..., Tensor]) -> Callable[..., Tensor]:
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args: Any, **kwargs: Any) -> Tensor:
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new_name}`.", FutureWarning, stacklevel=2)
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = f"torch.nn.init.{old_name}: deprecated, see ``{new_name}``."
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
