"""Max and min: ``max``/``min`` (0-d, along a dim with indices, or elementwise with
``other``), ``amax``/``amin`` over dims, ``argmax``/``argmin`` and ``aminmax``.

Installed through ``reduction.py``, whose helpers these build on. Reductions without an
identity refuse empty slices with torch's exception types.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from .. import return_types as rt
from ..dispatch import Op, register
from ..tensor import Tensor, make, wrap_dim
from .binary import maximum, minimum
from .operands import record
from .reduction import (
    _NP_I64,
    _check_not_complex,
    _Dims,
    _dims,
    _finish,
    _finish_pair,
    _index,
    _max_reduce,
    _min_reduce,
    _named,
    _one_dim,
    _rule,
)

_same_rule = meta.reduction("same")


def _rule_pair(x: meta.Spec, dim: int, keepdim: bool = False) -> tuple[meta.Spec, meta.Spec]:
    spec = _same_rule(x, dim, keepdim)
    return spec, meta.Spec(spec.shape, _dt.int64)


def _amax_forward(x: Any, dim: _Dims = None, keepdim: bool = False) -> Any:
    return _max_reduce(x, axis=dim, keepdims=keepdim)


def _amin_forward(x: Any, dim: _Dims = None, keepdim: bool = False) -> Any:
    return _min_reduce(x, axis=dim, keepdims=keepdim)


def _arg_forward(find: Callable[..., Any]) -> Callable[..., Any]:
    def forward(x: Any, dim: int | None = None, keepdim: bool = False) -> Any:
        if x.ndim == 0:
            return np.zeros_like(x, dtype=_NP_I64)
        return find(x, axis=dim, keepdims=keepdim).astype(_NP_I64, copy=False)

    return forward


def _extreme_dim_forward(find: Callable[..., Any]) -> Callable[..., Any]:
    def forward(x: Any, dim: int, keepdim: bool = False) -> tuple[Any, Any]:
        if x.ndim == 0:
            return x.copy(), np.zeros_like(x, dtype=_NP_I64)
        indices = find(x, axis=dim, keepdims=True)
        values = np.take_along_axis(x, indices, axis=dim)
        if not keepdim:
            values, indices = values.squeeze(dim), indices.squeeze(dim)
        return values, indices.astype(_NP_I64, copy=False)

    return forward


AMAX = register("amax", _amax_forward, _rule("same"), "reduction")
AMIN = register("amin", _amin_forward, _rule("same"), "reduction")
MAX = register("max", _extreme_dim_forward(np.argmax), _rule_pair, "reduction")
MIN = register("min", _extreme_dim_forward(np.argmin), _rule_pair, "reduction")
ARGMAX = register("argmax", _arg_forward(np.argmax), _rule("index"), "reduction", False)
ARGMIN = register("argmin", _arg_forward(np.argmin), _rule("index"), "reduction", False)


def _check_nonempty(name: str, input: Tensor, dim: Any, error: type = RuntimeError) -> None:
    """Reductions without an identity refuse empty slices (before any other check of
    ``dim``, as torch does)."""
    data = input._data
    if data.size:
        return
    if dim is None or isinstance(dim, (tuple, list)) and not dim:
        raise error(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                    "Specify the reduction dim with the 'dim' argument.")
    for d in dim if isinstance(dim, (tuple, list)) else (dim,):
        if data.ndim and data.shape[wrap_dim(_index(name, d), data.ndim, name)] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _amax_like(op: Op, name: str, kernel: str, input: Tensor, dim: Any, keepdim: bool,
               out: Tensor | None) -> Tensor:
    _check_nonempty(name, input, dim)
    dims = _dims(name, dim, input._data.ndim)
    if input._data.size:  # torch reaches the (real-only) kernel only with data
        _check_not_complex(kernel, input)
    keepdim = bool(keepdim) and input._data.ndim > 0
    r = op.forward(input._data, dims, keepdim)
    return _finish(op, name, input, r, out, {"dim": dims, "keepdim": keepdim})


def amax(input: Tensor, dim: Any = (), keepdim: bool = False, *,
         out: Tensor | None = None) -> Tensor:
    """torch.amax: the maximum over ``dim`` (all dims by default); NaN propagates."""
    return _amax_like(AMAX, "amax", "max_values_cpu", input, dim, keepdim, out)


def amin(input: Tensor, dim: Any = (), keepdim: bool = False, *,
         out: Tensor | None = None) -> Tensor:
    """torch.amin: the minimum over ``dim`` (all dims by default); NaN propagates."""
    return _amax_like(AMIN, "amin", "min_values_cpu", input, dim, keepdim, out)


def _extreme(op: Op, all_op: Op, name: str, binary: Callable[..., Tensor], input: Tensor,
             dim: Any, keepdim: bool, other: Tensor | None, out: Any) -> Any:
    if other is not None:
        return binary(input, other, out=out)
    if dim is None:
        data = input._data
        if data.size and out is None and input.dtype.category < 3:  # the common case, flat
            r = (_max_reduce if op is MAX else _min_reduce)(data, None)
            res = make(np.asarray(r) if isinstance(r, np.generic) else r, input.dtype,
                       input.device)
            if input._requires_grad:
                record(all_op, (input,), {"dim": None, "keepdim": False}, res)
            return res
        return _amax_like(all_op, name, f"{name}_all", input, None, False, out)
    if isinstance(dim, Tensor):
        return binary(input, dim, out=out)
    ndim = input._data.ndim
    d = _one_dim(name, dim, ndim)
    _check_nonempty(name, input, d)
    if input.dtype.category == 3:
        raise RuntimeError(f"{name}(): does not support complex input")
    keepdim = bool(keepdim) and ndim > 0
    pair = op.forward(input._data, d, keepdim)
    kind = rt.max if op is MAX else rt.min
    return _finish_pair(op, name, input, pair, kind, out, {"dim": d, "keepdim": keepdim})


def max(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Tensor | None = None,
        out: Any = None) -> Any:
    """torch.max: ``max(input)`` is the 0-d maximum; ``max(input, dim, keepdim)`` returns
    ``(values, indices)``; ``max(input, other)`` is ``maximum``."""
    return _extreme(MAX, AMAX, "max", maximum, input, dim, keepdim, other, out)


def min(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Tensor | None = None,
        out: Any = None) -> Any:
    """torch.min: the 0-d minimum, ``(values, indices)`` along ``dim``, or ``minimum``."""
    return _extreme(MIN, AMIN, "min", minimum, input, dim, keepdim, other, out)


def _arg(op: Op, name: str, input: Tensor, dim: Any, keepdim: bool, out: Tensor | None) -> Tensor:
    if input.dtype.category == 3 or input.dtype is _dt.bool:
        kind = "complex" if input.dtype.category == 3 else "bool"
        raise RuntimeError(f"{name}(): does not support {kind} input")
    ndim = input._data.ndim
    d = None if dim is None else _one_dim(name, dim, ndim)
    _check_nonempty(name, input, d, IndexError)
    keepdim = bool(keepdim)
    r = op.forward(input._data, d, keepdim)
    return _finish(op, name, input, r, out, {"dim": d, "keepdim": keepdim})


def argmax(input: Tensor, dim: Any = None, keepdim: bool = False, *,
           out: Tensor | None = None) -> Tensor:
    """torch.argmax: index of the first maximum along ``dim`` (None: of the flattened input)."""
    return _arg(ARGMAX, "argmax", input, dim, keepdim, out)


def argmin(input: Tensor, dim: Any = None, keepdim: bool = False, *,
           out: Tensor | None = None) -> Tensor:
    """torch.argmin: index of the first minimum along ``dim`` (None: of the flattened input)."""
    return _arg(ARGMIN, "argmin", input, dim, keepdim, out)


def aminmax(input: Tensor, *, dim: Any = None, keepdim: bool = False) -> Any:
    """torch.aminmax: ``(min, max)`` over one ``dim`` or all elements."""
    if dim is None:
        if input._data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        dim = ()
    else:
        dim = _one_dim("aminmax", dim, input._data.ndim)
        _check_nonempty("aminmax", input, dim)
    _check_not_complex("aminmax_cpu", input)
    return _named(rt.aminmax, amin(input, dim, keepdim), amax(input, dim, keepdim))
