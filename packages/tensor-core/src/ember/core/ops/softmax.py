"""softmax and log_softmax along one dim, computed stably (the max subtracted first);
float16/bfloat16 compute in float32 and round once, as torch's CPU kernels do."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..dispatch import Op, register
from ..tensor import Tensor, wrap_dim
from .conversion import to
from .operands import check_operand, not_implemented, upcast, wrap


def _softmax(x: Any, *, dim: int) -> Any:
    if x.size == 0:
        return x.copy()
    (z,) = upcast(x)
    e = np.exp(z - z.max(axis=dim, keepdims=True))
    e /= e.sum(axis=dim, keepdims=True)
    return e


def _log_softmax(x: Any, *, dim: int) -> Any:
    if x.size == 0:
        return x.copy()
    (z,) = upcast(x)
    with np.errstate(invalid="ignore"):
        shifted = z - z.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))


SOFTMAX = register("softmax", _softmax, None, "reduction")
LOG_SOFTMAX = register("log_softmax", _log_softmax, None, "reduction")


def _softmax_like(op: Op, input: Tensor, dim: Any, dtype: Any) -> Tensor:
    name = op.name
    check_operand(name, "input", input, numbers=False)
    try:
        dim = operator.index(dim)
    except TypeError:
        raise TypeError(f"{name}(): argument 'dim' (position 2) must be int, not "
                        f"{type(dim).__name__}") from None
    if dtype is not None:
        input = to(input, dtype=dtype)
    dt = input.dtype
    x = input._data
    axis = wrap_dim(dim, x.ndim, name)
    if dt.category != 2 and x.size:
        raise not_implemented(f"{name}_kernel_impl", dt)
    if x.ndim == 0:
        x = x.reshape(1)
    with np.errstate(invalid="ignore"):
        r = op.forward(x, dim=axis).reshape(input._data.shape)
    return wrap(op, r, dt, input.device, (input,), {"dim": axis}, input._requires_grad)


def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """torch.softmax: ``exp(x) / exp(x).sum(dim)``, computed stably; ``dtype`` casts first."""
    return _softmax_like(SOFTMAX, input, dim, dtype)


def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """torch.log_softmax: ``x - logsumexp(x, dim)``, computed stably; ``dtype`` casts first."""
    return _softmax_like(LOG_SOFTMAX, input, dim, dtype)


FUNCTIONS = ["softmax", "log_softmax"]
METHODS = {name: globals()[name] for name in FUNCTIONS}
