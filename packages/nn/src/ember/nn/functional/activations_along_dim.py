"""torch.nn.functional's activations along a dim: softmax, softmin and log_softmax (one
tensor-core primitive each, with torch's legacy choice of dim when none is given), glu
and gumbel_softmax."""

from __future__ import annotations

import warnings
from typing import Any

import ember.core as E
from ember.core.function_modes import public
from ember.core.tensor import Tensor, wrap_dim

from .activations import check_floating

__all__ = ["softmax", "softmin", "log_softmax", "glu", "gumbel_softmax"]


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """torch's legacy choice of dim for softmax and its kin called without one."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the "
                  "call to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


# the public wrapper adds a frame between the caller and the function that warns
_WRAPPER_FRAMES = 1


@public
def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """torch.nn.functional.softmax: ``exp(x) / exp(x).sum(dim)``, computed stably;
    ``dtype`` casts the input first. Without ``dim``, torch's deprecated implicit choice
    (0 for 0-, 1- and 3-d inputs, else 1), with its warning."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel + _WRAPPER_FRAMES)
    return input.softmax(dim, dtype)  # type: ignore[no-any-return]


@public
def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """torch.nn.functional.softmin: ``softmax(-x, dim)``."""
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel + _WRAPPER_FRAMES)
    return (-input).softmax(dim, dtype)  # type: ignore[no-any-return]


@public
def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    """torch.nn.functional.log_softmax: ``x - logsumexp(x, dim)``, computed stably."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel + _WRAPPER_FRAMES)
    return input.log_softmax(dim, dtype)  # type: ignore[no-any-return]


@public
def glu(input: Tensor, dim: int = -1) -> Tensor:
    """torch.nn.functional.glu: ``a * sigmoid(b)``, ``a`` and ``b`` the halves of
    ``input`` along ``dim``."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    axis = wrap_dim(dim, input.ndim)
    size = input.shape[axis]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {axis} is size "
                           f"{size}")
    check_floating("glu", "glu_cpu", input)
    half = size // 2
    return input.narrow(axis, 0, half) * input.narrow(axis, half, half).sigmoid()  # type: ignore[no-any-return]


@public
def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """torch.nn.functional.gumbel_softmax: ``softmax((logits + g) / tau, dim)`` with ``g``
    Gumbel(0, 1) noise from Ember's generator; ``hard=True`` returns the one-hot of its
    argmax, differentiated as the soft sample (straight through). ``eps`` is deprecated
    and unused."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=3)
    gumbels = -E.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft  # type: ignore[no-any-return]
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = E.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft  # type: ignore[no-any-return]
