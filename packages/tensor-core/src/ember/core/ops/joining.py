"""Joining: ``cat``, ``stack``, ``hstack``, ``vstack``, ``dstack``, ``column_stack``,
``meshgrid``.

``meshgrid`` returns expanded views; the others return a new tensor of the inputs'
promoted dtype, laid out as torch lays it out.

Primitives (operands: the tensors, one dtype: the public functions cast them to their
promoted dtype first) and their params:

    cat                 dim. 1-D empty operands join any cat (torch's legacy rule); the
                        result is row-major, or channels-last where every operand is
    stack               dim; row-major
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from functools import reduce
from typing import Any, NoReturn

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import CPU, device, xp_of
from ..dispatch import dispatch, register
from ..dtypes import scalar_type_name
from ..function_modes import checks_itself, engaged, handle, overriding, spec_of
from ..meta import MetaArray, element_strides
from ..tensor import Tensor, wrap_dim
from .conversion import cast
from .copying import write_out
from .geometry import laid_out, view_strides
from .operands import device_mismatch
from .shape import atleast_1d, atleast_2d, atleast_3d, expand, reshape, view

# dims from fastest to slowest in torch's channels-last layouts, by rank
_CHANNELS_LAST = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}


def _like_channels_last(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """torch's ``is_channels_last_strides_2d``/``_3d``: laid out channels-last."""
    order = _CHANNELS_LAST.get(len(shape))
    if order is None or strides[1] == 0:
        return False
    low = 0
    for d in order:
        if shape[d] == 0 or strides[d] < low or (d == 0 and low == strides[1]):
            return False
        low = strides[d] * shape[d] if shape[d] > 1 else strides[d]
    return True


def _cat_strides(shape: tuple[int, ...], operands: Sequence[Any]) -> tuple[int, ...]:
    """The element strides of cat's result: channels-last where every operand (a skipped
    1-D empty one too) is laid out so, else row-major (torch's
    ``cat_compute_output_memory_format``)."""
    order = _CHANNELS_LAST.get(len(shape))
    if order is None or not all(_like_channels_last(x.shape, element_strides(x))
                                for x in operands):
        return meta.contiguous_strides(shape)
    out = [0] * len(shape)
    step = 1
    for d in order:
        out[d] = step
        step *= shape[d]
    return tuple(out)


def _joined(operands: Sequence[Any]) -> Sequence[Any]:
    """The operands cat joins: 1-D empty ones are skipped unless all are."""
    return [x for x in operands if x.shape != (0,)] or operands[:1]


def _in_layout(out: Any, arrays: Sequence[Any]) -> Any:
    """``out`` (numpy's join of ``arrays``) laid out as torch lays out cat's result."""
    if out.ndim < 4 and out.flags.c_contiguous:
        return out
    want = _cat_strides(out.shape, arrays)
    return out if element_strides(out) == want else laid_out(out, want)


def _cat(*arrays: Any, dim: int) -> Any:
    concatenate = xp_of(arrays[0]).concatenate
    try:
        out = concatenate(arrays, dim)
    except ValueError:  # a 1-D empty array among arrays of more dims
        out = concatenate(_joined(arrays), dim)
    return _in_layout(out, arrays)


# numpy's C concatenate without its __array_function__ dispatch layer (a tenth of a tiny cat)
_np_concatenate = getattr(np.concatenate, "_implementation", np.concatenate)


def _cat_cpu(*arrays: Any, dim: int) -> Any:
    """The CPU kernel: ``_cat`` with numpy's C concatenate called directly."""
    try:
        out = _np_concatenate(arrays, dim)
    except ValueError:
        return _cat(*arrays, dim=dim)
    if out.ndim < 4 and out.flags.c_contiguous:  # _in_layout's first answer, inlined
        return out
    return _in_layout(out, arrays)


def _cat_meta(*operands: MetaArray, dim: int) -> MetaArray:
    joined = _joined(operands)
    ref = joined[0].shape
    shape = ref[:dim] + (sum(x.shape[dim] for x in joined),) + ref[dim + 1:]
    return meta.strided(shape, joined[0].dtype, _cat_strides(shape, operands))


def _stack(*arrays: Any, dim: int) -> Any:
    # Filling an empty result is several times faster than np.stack on small arrays.
    first = arrays[0]
    shape = first.shape
    out = xp_of(first).empty(shape[:dim] + (len(arrays),) + shape[dim:], first.dtype)
    lead = (slice(None),) * dim
    for i, a in enumerate(arrays):
        out[lead + (i,)] = a
    return out


def _stack_meta(*operands: MetaArray, dim: int) -> MetaArray:
    """torch's stack: along an existing dim, cat there (its layout: channels-last where
    every operand is) viewed with the dim split in two; past the last dim, cat of the
    operands unsqueezed at the end."""
    first = operands[0]
    shape, n = tuple(first.shape), len(operands)
    out_shape = shape[:dim] + (n,) + shape[dim:]
    if dim < len(shape):
        joined = shape[:dim] + (shape[dim] * n,) + shape[dim + 1:]
        strides = view_strides(joined, _cat_strides(joined, operands), out_shape, 1)
    else:
        strides = _cat_strides(out_shape, [meta.strided(
            (*x.shape, 1), x.dtype, (*element_strides(x), 1)) for x in operands])
    return meta.strided(out_shape, first.dtype, strides or meta.contiguous_strides(out_shape))


CAT = register("cat", _cat, _cat_meta, "library")
CAT.register_kernel("cpu", _cat_cpu)
STACK = register("stack", _stack, _stack_meta, "library")


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


def _promoted(tensors: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """The tensors cast to torch's promotion of their dtypes."""
    dt = reduce(_dt.promote_types, (x.dtype for x in tensors))
    return tuple(cast(x, dt) for x in tensors)


def _with_out(op: str, res: Tensor, out: Tensor | None, tensors: Any = ()) -> Tensor:
    """cat-like ``out=``: any dtype the result casts to (torch names cat in the error), no
    part of ``out`` among the joined ``tensors``."""
    if out is None:
        return res
    if isinstance(out, Tensor) and not _dt.can_cast(res.dtype, out.dtype):
        raise TypeError("torch.cat(): input types can't be cast to the desired output type "
                        f"{scalar_type_name(out.dtype)}")
    return write_out(op, out, res, tensors, False)


# ----------------------------------------------------------------------------- cat, stack

def cat(tensors: Sequence[Tensor], dim: int = 0, *, axis: int | None = None,
        out: Tensor | None = None) -> Tensor:
    """torch.cat: join tensors along an existing dim, promoting their dtypes. 1-D empty
    tensors are skipped whatever the others' shapes (torch's legacy rule)."""
    if engaged.count and overriding():
        return handle(cat, _CAT_SPEC, (tensors, dim),
                      {"axis": axis, "out": out})
    cls = tensors.__class__
    if (cls is list or cls is tuple) and tensors and axis is None and dim.__class__ is int:
        # Fast path: CPU Tensors of one dtype; anything else (Parameters, mixed dtypes or
        # devices, a leading 1-D empty tensor, errors) takes the checked general path.
        first = tensors[0]
        dt = first.dtype if first.__class__ is Tensor else None
        for x in tensors:
            if x.__class__ is not Tensor or x.dtype is not dt or x.device is not CPU:
                break
        else:
            n = first._data.ndim
            if -n <= dim < n and (n != 1 or first._data.shape[0]):
                try:
                    res = CAT.door(tuple(tensors), {"dim": dim + n if dim < 0 else dim})
                except ValueError:
                    pass  # the general path reports torch's error
                else:
                    return res if out is None else _with_out("cat", res, out, tensors)
    return _cat_general(tensors, dim if axis is None else axis, out)


_CAT_SPEC = spec_of(checks_itself(cat))


def _cat_general(tensors: Any, dim: int, out: Tensor | None) -> Tensor:
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    _common_device(tensors, "cat")
    for i, x in enumerate(tensors):
        if x._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    ref = _joined([x._data for x in tensors])[0].shape
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
    res = dispatch(CAT, _promoted(tensors), {"dim": d})
    return _with_out("cat", res, out, tensors)


def stack(tensors: Sequence[Tensor], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """torch.stack: join same-shaped tensors along a new dim ``dim``."""
    if tensors.__class__ is not list and tensors.__class__ is not tuple:
        tensors = _tensor_list(tensors, "stack")
    try:
        first = tensors[0]
        shape, dev = first._data.shape, first.device
        for x in tensors:
            if x._data.shape != shape or x.device is not dev:
                raise ValueError
    except (IndexError, AttributeError, ValueError):
        _stack_error(tensors)
    d = wrap_dim(dim, len(shape) + 1, "stack")
    return _with_out("stack", dispatch(STACK, _promoted(tensors), {"dim": d}), out, tensors)


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
