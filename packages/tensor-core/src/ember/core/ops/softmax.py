"""softmax and log_softmax along one dim, computed stably (the max subtracted first);
float16/bfloat16 compute in float32 and round once, as torch's CPU kernels do.

Primitives ``softmax`` and ``log_softmax`` (operand the input, params ``dim``): the result
has the input's shape and dtype and is row-major whatever the input's layout, as torch's.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..dispatch import Op, dispatch, register
from ..tensor import Tensor, wrap_dim
from .conversion import cast
from .operands import check_operand, not_implemented, upcast


def _rows(x: Any, dim: int) -> tuple[Any, int]:
    """``x`` in its computation dtype, with the one dim torch gives a 0-d tensor."""
    (z,) = upcast(x)
    return (z.reshape(1), 0) if z.ndim == 0 else (z, dim)


def _softmax(x: Any, *, dim: int) -> Any:
    if x.size == 0:
        return x.copy()
    z, axis = _rows(x, dim)
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    e /= e.sum(axis=axis, keepdims=True)
    return e.reshape(x.shape).astype(x.dtype, order="C", copy=False)


def _log_softmax(x: Any, *, dim: int) -> Any:
    if x.size == 0:
        return x.copy()
    z, axis = _rows(x, dim)
    shifted = z - z.max(axis=axis, keepdims=True)  # rows of -inf give nan, as in torch
    r = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    return r.reshape(x.shape).astype(x.dtype, order="C", copy=False)


def _rule(x: Any, *, dim: int) -> Any:
    return meta.empty(x.shape, x.dtype)


SOFTMAX = register("softmax", _softmax, _rule, "reduction", arg_names=("self",))
LOG_SOFTMAX = register("log_softmax", _log_softmax, _rule, "reduction", arg_names=("self",))


def _softmax_like(op: Op, input: Tensor, dim: Any, dtype: Any) -> Tensor:
    name = op.name
    check_operand(name, "input", input, numbers=False)
    try:
        dim = operator.index(dim)
    except TypeError:
        raise TypeError(f"{name}(): argument 'dim' (position 2) must be int, not "
                        f"{type(dim).__name__}") from None
    if dtype is not None:
        input = cast(input, _dt.to_dtype(dtype))
    data = input._data
    axis = wrap_dim(dim, data.ndim, name)
    if input.dtype.category != 2 and data.size:
        raise not_implemented(f"{name}_kernel_impl", input.dtype)
    return dispatch(op, (input,), {"dim": axis})  # type: ignore[no-any-return]


def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """torch.softmax: ``exp(x) / exp(x).sum(dim)``, computed stably; ``dtype`` casts first."""
    return _softmax_like(SOFTMAX, input, dim, dtype)


def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """torch.log_softmax: ``x - logsumexp(x, dim)``, computed stably; ``dtype`` casts first."""
    return _softmax_like(LOG_SOFTMAX, input, dim, dtype)


FUNCTIONS = ["softmax", "log_softmax"]
METHODS = {name: globals()[name] for name in FUNCTIONS}
