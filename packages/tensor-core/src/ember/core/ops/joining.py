"""Joining: ``cat``, ``stack``, ``hstack``, ``vstack``, ``dstack``, ``column_stack``,
``meshgrid``.

``meshgrid`` returns expanded views; the others return a new C-contiguous tensor of the
inputs' promoted dtype.

Primitives and the ``params`` they record:

    cat                 dim, sizes (each input's size along dim; 0 for a skipped 1-D empty)
    stack               dim
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from functools import reduce
from typing import Any, NoReturn

import numpy as np

from .. import dtypes as _dt
from ..device import CPU, device, xp_of
from ..dispatch import register
from ..dtypes import scalar_type_name
from ..tensor import Tensor, make, wrap_dim
from .geometry import c_order
from .operands import device_mismatch, record, write_out
from .shape import atleast_1d, atleast_2d, atleast_3d, expand, reshape, view


def _promoted_dtype(arrays: Sequence[Any]) -> Any:
    """torch's promotion of the arrays' dtypes (numpy's differs), as a numpy dtype."""
    first = arrays[0].dtype
    if all(a.dtype == first for a in arrays):
        return first
    return reduce(_dt.promote_types, (_dt.from_numpy_dtype(a.dtype) for a in arrays)).np


def _tensor_list(tensors: Any, op: str) -> list[Tensor]:
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    tensors = list(tensors)
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise TypeError(f"{op}(): expected Tensor as element {i} in argument 0, but got "
                            f"{type(x).__name__}")
    return tensors


def _common_device(tensors: list[Tensor], op: str) -> device:
    dev = tensors[0].device
    for x in tensors:
        if x.device != dev:
            raise device_mismatch(op, dev, x.device)
    return dev


def _with_out(op: str, res: Tensor, out: Tensor | None) -> Tensor:
    """cat-like ``out=``: any dtype the result casts to (torch names cat in the error)."""
    if out is None:
        return res
    if isinstance(out, Tensor) and not _dt.can_cast(res.dtype, out.dtype):
        raise TypeError("torch.cat(): input types can't be cast to the desired output type "
                        f"{scalar_type_name(out.dtype)}")
    return write_out(op, out, res)


# ----------------------------------------------------------------------------- cat, stack

def _cat_forward(*arrays: Any, dim: int, sizes: Sequence[int]) -> Any:
    # torch's legacy rule: 1-D empty tensors join any cat (and only count for the dtype).
    dt = _promoted_dtype(arrays)
    promoted = [a.astype(dt, copy=False) for a in arrays]
    kept = [p for a, p in zip(arrays, promoted) if a.shape != (0,)] or promoted[:1]
    return c_order(np.concatenate(kept, axis=dim))


def _stack_forward(*arrays: Any, dim: int) -> Any:
    # Filling an empty result is several times faster than np.stack on small arrays.
    first = arrays[0]
    dt = _promoted_dtype(arrays)
    shape = first.shape
    out = xp_of(first).empty(shape[:dim] + (len(arrays),) + shape[dim:], dt)
    lead = (slice(None),) * dim
    for i, a in enumerate(arrays):
        out[lead + (i,)] = a
    return out


CAT = register("cat", _cat_forward, None, "library")
STACK = register("stack", _stack_forward, None, "library")


# numpy's C concatenate without its __array_function__ dispatch layer (0.15 us of a 1.3 us cat)
_np_concatenate = getattr(np.concatenate, "_implementation", np.concatenate)


def cat(tensors: Sequence[Tensor], dim: int = 0, *, axis: int | None = None,
        out: Tensor | None = None) -> Tensor:
    """torch.cat: join tensors along an existing dim, promoting their dtypes. 1-D empty
    tensors are skipped whatever the others' shapes (torch's legacy rule)."""
    cls = tensors.__class__
    if (cls is list or cls is tuple) and tensors and axis is None:
        # Fast path: Tensors of one dtype on one device; anything else (Parameters, mixed
        # dtypes or devices, errors) takes the checked general path.
        first = tensors[0]
        if first.__class__ is Tensor:
            dt = first.dtype
            dev = first.device
            rg = False
            arrays = []
            for x in tensors:
                if x.__class__ is not Tensor or x.dtype is not dt or x.device is not dev:
                    break
                rg = rg or x._requires_grad
                arrays.append(x._data)
            else:
                try:
                    r = (_np_concatenate if dev is CPU else dev.xp.concatenate)(arrays, dim)
                except (ValueError, TypeError, np.exceptions.AxisError):
                    return _cat_general(tensors, dim, out)  # reports torch's error
                res = make(r if r.flags.c_contiguous else r.copy(), dt, dev)
                if rg:
                    record(CAT, tuple(tensors), {"dim": dim % r.ndim,
                                                 "sizes": [a.shape[dim] for a in arrays]}, res)
                return res if out is None else _with_out("cat", res, out)
    return _cat_general(tensors, dim if axis is None else axis, out)


def _cat_general(tensors: Any, dim: int, out: Tensor | None) -> Tensor:
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    dev = _common_device(tensors, "cat")
    for i, x in enumerate(tensors):
        if x._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    kept = [x for x in tensors if x._data.shape != (0,)]
    ref = (kept or tensors)[0]._data.shape
    d = wrap_dim(operator.index(dim), len(ref), "cat")
    for i, x in enumerate(tensors):
        shape = x._data.shape
        if shape == (0,):
            continue
        if len(shape) != len(ref):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(ref)} and "
                               f"{len(shape)}")
        for a, (want, got) in enumerate(zip(ref, shape)):
            if a != d and want != got:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected "
                                   f"size {want} but got size {got} for tensor number {i} in the "
                                   "list.")
    sizes = [0 if x._data.shape == (0,) and kept else x._data.shape[d] for x in tensors]
    arr = _cat_forward(*(x._data for x in tensors), dim=d, sizes=sizes)
    res = make(arr, _dt.from_numpy_dtype(arr.dtype), dev)
    if any(x._requires_grad for x in tensors):
        record(CAT, tuple(tensors), {"dim": d, "sizes": sizes}, res)
    return _with_out("cat", res, out)


def stack(tensors: Sequence[Tensor], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """torch.stack: join same-shaped tensors along a new dim ``dim``."""
    if tensors.__class__ is not list and tensors.__class__ is not tuple:
        tensors = _tensor_list(tensors, "stack")
    arrays = []
    rg = False
    try:
        first = tensors[0]
        shape, dev = first._data.shape, first.device
        for x in tensors:
            data = x._data
            if data.shape != shape or x.device is not dev:
                raise ValueError
            rg = rg or x._requires_grad
            arrays.append(data)
    except (IndexError, AttributeError, ValueError):
        _stack_error(tensors)
    d = wrap_dim(dim, len(shape) + 1, "stack")
    arr = _stack_forward(*arrays, dim=d)
    res = make(arr, _dt.from_numpy_dtype(arr.dtype), dev)
    if rg:
        record(STACK, tuple(tensors), {"dim": d}, res)
    return _with_out("stack", res, out)


def _stack_error(tensors: Sequence[Any]) -> NoReturn:
    """Raise torch's error for what stopped stack's fast path."""
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._data.shape
    for i, x in enumerate(tensors):
        if x._data.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} "
                               f"at entry 0 and {list(x._data.shape)} at entry {i}")
    dev = tensors[0].device
    raise device_mismatch("stack", dev, next(x.device for x in tensors if x.device is not dev))


def _nonempty(tensors: Any, op: str) -> list[Tensor]:
    tensors = _tensor_list(tensors, op)
    if not tensors:
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    return tensors


def hstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """torch.hstack: ``cat`` along dim 1 (dim 0 for 1-D tensors), after ``atleast_1d``."""
    parts = atleast_1d(_nonempty(tensors, "hstack"))
    return cat(parts, 0 if parts[0].ndim == 1 else 1, out=out)


def vstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """torch.vstack: ``cat`` along dim 0 after ``atleast_2d``."""
    return cat(atleast_2d(_nonempty(tensors, "vstack")), 0, out=out)


def dstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """torch.dstack: ``cat`` along dim 2 after ``atleast_3d``."""
    return cat(atleast_3d(_nonempty(tensors, "dstack")), 2, out=out)


def column_stack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """torch.column_stack: 0-D and 1-D tensors become columns, then ``hstack``."""
    parts = [reshape(x, (x._data.size, 1)) if x._data.ndim <= 1 else x
             for x in _nonempty(tensors, "column_stack")]
    return cat(parts, 1, out=out)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """torch.meshgrid: expanded views of 0-D/1-D tensors over their joint grid."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    tensors = tuple(_tensor_list(tensors, "meshgrid"))
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    elif indexing not in ("ij", "xy"):
        raise RuntimeError('torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f"{indexing}")
    for x in tensors:
        if x._data.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got a tensor of shape {list(x._data.shape)}")
        if x.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    _common_device(list(tensors), "meshgrid")
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors = (tensors[1], tensors[0]) + tensors[2:]
    grid = tuple(x._data.size for x in tensors)
    n = len(tensors)
    out = [expand(view(x, tuple(-1 if j == i else 1 for j in range(n))), grid)
           for i, x in enumerate(tensors)]
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


FUNCTIONS: list[str] = [
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "dstack",
    "column_stack", "meshgrid",
]

concat = concatenate = cat
row_stack = vstack

METHODS: dict[str, Any] = {}
