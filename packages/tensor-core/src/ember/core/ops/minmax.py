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
from ..device import xp_of
from ..dispatch import Op, dispatch, register
from ..dtypes import scalar_type_name
from ..tensor import Tensor, wrap_dim
from .binary import maximum, minimum
from .reduction_args import (
    NP_I64,
    SELF,
    Dims,
    check_input,
    check_not_complex,
    dim_index,
    keepdim_of,
    named,
    one_dim,
    reduced_dims,
    reduction_rule,
    row_major,
    with_out,
)

_same_rule = reduction_rule("same")


def _pair_rule(x: Any, dim: int | None = None, keepdim: bool = False) -> tuple[Any, Any]:
    """Values and their int64 indices, reduced over ``dim``."""
    values = _same_rule(x, dim, keepdim)
    return values, meta.empty(values.shape, NP_I64)


def _aminmax_rule(x: Any, dim: int | None = None, keepdim: bool = False) -> tuple[Any, Any]:
    values = _same_rule(x, dim, keepdim)
    return values, meta.empty(values.shape, values.dtype)


def _amax_forward(x: Any, dim: int | Dims = None, keepdim: bool = False) -> Any:
    return row_major(x.max(axis=dim, keepdims=keepdim))


def _amin_forward(x: Any, dim: int | Dims = None, keepdim: bool = False) -> Any:
    return row_major(x.min(axis=dim, keepdims=keepdim))


def _ufunc_kernel(reduce: Any) -> Callable[..., Any]:
    """The CPU kernel of amax/amin: numpy's ufunc reduction, positionally (the array method
    the reference forward calls, for numpy and CuPy alike, goes through a Python layer)."""

    def kernel(x: Any, dim: int | Dims = None, keepdim: bool = False) -> Any:
        return row_major(reduce(x, dim, None, None, keepdim))

    return kernel


def _aminmax_forward(x: Any, dim: int | None = None, keepdim: bool = False) -> tuple[Any, Any]:
    return _amin_forward(x, dim, keepdim), _amax_forward(x, dim, keepdim)


def _arg_forward(method: str) -> Callable[..., Any]:
    def forward(x: Any, dim: int | None = None, keepdim: bool = False) -> Any:
        if x.ndim == 0:
            return xp_of(x).zeros((), NP_I64)
        found = getattr(x, method)(axis=dim, keepdims=keepdim)
        return row_major(found.astype(NP_I64, copy=False))

    return forward


def _extreme_dim_forward(method: str) -> Callable[..., Any]:
    def forward(x: Any, dim: int, keepdim: bool = False) -> tuple[Any, Any]:
        xp = xp_of(x)
        if x.ndim == 0:
            return x.copy(), xp.zeros((), NP_I64)
        indices = getattr(x, method)(axis=dim, keepdims=True)
        values = xp.take_along_axis(x, indices, axis=dim)
        if not keepdim:
            values, indices = values.squeeze(dim), indices.squeeze(dim)
        return row_major(values), row_major(indices.astype(NP_I64, copy=False))

    return forward


AMAX = register("amax", _amax_forward, _same_rule, "reduction", arg_names=SELF)
AMIN = register("amin", _amin_forward, _same_rule, "reduction", arg_names=SELF)
AMAX.register_kernel("cpu", _ufunc_kernel(np.maximum.reduce))
AMIN.register_kernel("cpu", _ufunc_kernel(np.minimum.reduce))
# ``max(input)``/``min(input)``: amax/amin over everything, a primitive of its own as in
# torch, whose gradient differs (spread over the NaNs when the result is NaN)
MAX_ALL = register("max_all", _amax_forward, _same_rule, "reduction", arg_names=SELF)
MIN_ALL = register("min_all", _amin_forward, _same_rule, "reduction", arg_names=SELF)
MAX_ALL.register_kernel("cpu", _ufunc_kernel(np.maximum.reduce))
MIN_ALL.register_kernel("cpu", _ufunc_kernel(np.minimum.reduce))
AMINMAX = register("aminmax", _aminmax_forward, _aminmax_rule, "reduction", arg_names=SELF)
MAX = register("max", _extreme_dim_forward("argmax"), _pair_rule, "reduction", arg_names=SELF)
MIN = register("min", _extreme_dim_forward("argmin"), _pair_rule, "reduction", arg_names=SELF)
ARGMAX = register("argmax", _arg_forward("argmax"), reduction_rule("index"), "reduction", False,
                  arg_names=SELF)
ARGMIN = register("argmin", _arg_forward("argmin"), reduction_rule("index"), "reduction", False,
                  arg_names=SELF)


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
        if data.ndim and data.shape[wrap_dim(dim_index(name, d), data.ndim, name)] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _amax_like(op: Op, name: str, kernel: str, input: Tensor, dim: Any, keepdim: bool,
               out: Tensor | None) -> Tensor:
    check_input(name, input)
    _check_nonempty(name, input, dim)
    ndim = input._data.ndim
    dims = reduced_dims(name, dim, ndim)
    if input._data.size:  # torch reaches the (real-only) kernel only with data
        check_not_complex(kernel, input)
    keepdim = keepdim_of(keepdim, ndim)
    params = None if dims is None and not keepdim else {"dim": dims, "keepdim": keepdim}
    return with_out(op.door((input,), params), name, out)


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
        if out is None and input.__class__ is Tensor and input._data.size and \
                input.dtype.category < 3:  # the common case, kept flat
            return all_op.door((input,), None)
        return _amax_like(all_op, name, f"{name}_all", input, None, False, out)
    if isinstance(dim, Tensor):
        return binary(input, dim, out=out)
    check_input(name, input)
    ndim = input._data.ndim
    d = one_dim(name, dim, ndim)
    _check_nonempty(name, input, d)
    if input.dtype.category == 3:
        raise RuntimeError(f"{name}(): does not support complex input")
    results = dispatch(op, (input,), {"dim": d, "keepdim": keepdim_of(keepdim, ndim)})
    return named(rt.max if op is MAX else rt.min, name, results, out)


def max(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Tensor | None = None,
        out: Any = None) -> Any:
    """torch.max: ``max(input)`` is the 0-d maximum; ``max(input, dim, keepdim)`` returns
    ``(values, indices)``; ``max(input, other)`` is ``maximum``."""
    return _extreme(MAX, MAX_ALL, "max", maximum, input, dim, keepdim, other, out)


def min(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Tensor | None = None,
        out: Any = None) -> Any:
    """torch.min: the 0-d minimum, ``(values, indices)`` along ``dim``, or ``minimum``."""
    return _extreme(MIN, MIN_ALL, "min", minimum, input, dim, keepdim, other, out)


def _arg(op: Op, input: Tensor, dim: Any, keepdim: bool, out: Tensor | None) -> Tensor:
    name = op.name
    check_input(name, input)
    if input.dtype.category == 3 or input.dtype is _dt.bool:
        kind = "complex" if input.dtype.category == 3 else "bool"
        raise RuntimeError(f"{name}(): does not support {kind} input")
    d = None if dim is None else one_dim(name, dim, input._data.ndim)
    _check_nonempty(name, input, d, IndexError)
    params = {"dim": d, "keepdim": bool(keepdim)}
    return with_out(dispatch(op, (input,), params), name, out)


def argmax(input: Tensor, dim: Any = None, keepdim: bool = False, *,
           out: Tensor | None = None) -> Tensor:
    """torch.argmax: index of the first maximum along ``dim`` (None: of the flattened input)."""
    return _arg(ARGMAX, input, dim, keepdim, out)


def argmin(input: Tensor, dim: Any = None, keepdim: bool = False, *,
           out: Tensor | None = None) -> Tensor:
    """torch.argmin: index of the first minimum along ``dim`` (None: of the flattened input)."""
    return _arg(ARGMIN, input, dim, keepdim, out)


def aminmax(input: Tensor, *, dim: Any = None, keepdim: bool = False) -> Any:
    """torch.aminmax: ``(min, max)`` over one ``dim`` or all elements."""
    check_input("aminmax", input)
    ndim = input._data.ndim
    if dim is None:
        if input._data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
    else:
        dim = one_dim("aminmax", dim, ndim)
        _check_nonempty("aminmax", input, dim)
        if ndim == 0:
            if input.dtype.category == 3:
                # a 0-d input along a dim takes a path of its own in torch, which refuses
                # complex with a RuntimeError
                raise RuntimeError(f"aminmax not implemented for {scalar_type_name(input.dtype)}")
            dim = None
    check_not_complex("aminmax_cpu", input)
    results = dispatch(AMINMAX, (input,), {"dim": dim, "keepdim": keepdim_of(keepdim, ndim)})
    return named(rt.aminmax, "aminmax", results, None)

FUNCTIONS = ["max", "min", "amax", "amin", "aminmax", "argmax", "argmin"]
METHODS: dict[str, Callable[..., Any]] = {name: globals()[name] for name in FUNCTIONS}
