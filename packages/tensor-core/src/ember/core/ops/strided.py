"""Strided views of part of a tensor: ``narrow``, ``diagonal``, ``unfold``, ``as_strided``.

Each is a view with the strides torch reports, so in-place writes through it change the
base; the meta rules give the same strides and the view's byte offset.

Primitives (operand ``self``) and their params:

    narrow          dim, start, length
    diagonal        offset, dim1, dim2
    unfold          dimension, size, step
    as_strided      size, stride, storage_offset, input_stride

``as_strided`` reads memory from its operand's first element: ``storage_offset`` counts
from there (``as_strided`` passes the offset torch takes less the input's own, so a
recorded call replays on a copy of the input), and ``input_stride`` (the input's strides)
is for the backward, which maps storage positions back to the input's elements.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from ..device import xp_of
from ..dispatch import dispatch, register
from ..meta import MetaArray, element_strides
from ..tensor import Tensor, wrap_dim
from .copying import overlapping
from .geometry import element_at, int_tuple, refuse_writes, restride

Geometry = tuple[list[int], list[int]]


def _narrow(x: Any, *, dim: int, start: int, length: int) -> Any:
    return x[(slice(None),) * dim + (slice(start, start + length),)]


def _narrow_meta(x: MetaArray, *, dim: int, start: int, length: int) -> MetaArray:
    shape = x.shape[:dim] + (length,) + x.shape[dim + 1:]
    return MetaArray(shape, x.dtype, x.strides, x.offset + start * x.strides[dim])


def _diagonal_geometry(x: Any, offset: int, dim1: int, dim2: int
                       ) -> tuple[list[int], list[int], int, int]:
    """Shape and strides of the diagonal view, and the dim and the steps along it to its
    first element."""
    shape, strides = x.shape, x.strides
    n1, n2 = shape[dim1], shape[dim2]
    length = max(min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2), 0)
    d, k = (dim2, offset) if offset > 0 else (dim1, -offset)
    keep = [i for i in range(x.ndim) if i != dim1 and i != dim2]
    return ([shape[i] for i in keep] + [length],
            [strides[i] for i in keep] + [strides[dim1] + strides[dim2]], d, k if length else 0)


def diagonal_array(x: Any, offset: int, dim1: int, dim2: int) -> Any:
    """The writable strided view of ``x``'s diagonal (numpy's ``diagonal`` is read-only)."""
    shape, strides, d, k = _diagonal_geometry(x, offset, dim1, dim2)
    start = x[(slice(None),) * d + (slice(k, None),)] if k else x
    return restride(start, shape, strides)


def _diagonal(x: Any, *, offset: int, dim1: int, dim2: int) -> Any:
    return diagonal_array(x, offset, dim1, dim2)


def _diagonal_meta(x: MetaArray, *, offset: int, dim1: int, dim2: int) -> MetaArray:
    shape, strides, d, k = _diagonal_geometry(x, offset, dim1, dim2)
    return MetaArray(shape, x.dtype, strides, x.offset + k * x.strides[d])


def _unfold_geometry(x: Any, dimension: int, size: int, step: int) -> Geometry:
    if x.ndim == 0:
        return [size], [x.itemsize]
    sizes, strides = list(x.shape), list(x.strides)
    stride = strides[dimension]
    sizes[dimension] = (sizes[dimension] - size) // step + 1
    strides[dimension] = stride * step
    return sizes + [size], strides + [stride]


def _unfold(x: Any, *, dimension: int, size: int, step: int) -> Any:
    return restride(x, *_unfold_geometry(x, dimension, size, step))


def _unfold_meta(x: MetaArray, *, dimension: int, size: int, step: int) -> MetaArray:
    shape, strides = _unfold_geometry(x, dimension, size, step)
    return MetaArray(shape, x.dtype, strides, x.offset)


def _as_strided(x: Any, *, size: tuple[int, ...], stride: tuple[int, ...], storage_offset: int,
                input_stride: tuple[int, ...]) -> Any:
    arr = xp_of(x).lib.stride_tricks.as_strided(element_at(x, storage_offset), size,
                                                tuple(s * x.itemsize for s in stride))
    return refuse_writes(arr) if overlapping(arr) else arr


def _as_strided_meta(x: MetaArray, *, size: tuple[int, ...], stride: tuple[int, ...],
                     storage_offset: int, input_stride: tuple[int, ...]) -> MetaArray:
    item = x.itemsize
    return MetaArray(size, x.dtype, [s * item for s in stride], x.offset + storage_offset * item)


_SELF = ("self",)
NARROW = register("narrow", _narrow, _narrow_meta, "view", view=True, arg_names=_SELF)
DIAGONAL = register("diagonal", _diagonal, _diagonal_meta, "view", view=True, arg_names=_SELF)
UNFOLD = register("unfold", _unfold, _unfold_meta, "view", view=True, arg_names=_SELF)
AS_STRIDED = register("as_strided", _as_strided, _as_strided_meta, "view", view=True,
                      arg_names=_SELF)


def narrow(input: Tensor, dim: int, start: Any, length: int) -> Tensor:
    """torch.narrow: elements ``start..start+length`` of dim ``dim``; a view. ``start`` may
    be a 0-d integer tensor."""
    data = input._data
    n = data.ndim
    if n == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if isinstance(start, Tensor) and (start._data.ndim or start.dtype.category != 1):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    start = operator.index(start)
    length = operator.index(length)
    d = wrap_dim(dim, n, "narrow")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    size = data.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if start > size - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return dispatch(NARROW, (input,),
                    {"dim": d, "start": start, "length": length})


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """torch.diagonal: a view of the diagonal of dims ``dim1``/``dim2`` (moved last)."""
    n = input._data.ndim
    d1 = wrap_dim(dim1, n, "diagonal")
    d2 = wrap_dim(dim2, n, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return dispatch(DIAGONAL, (input,),
                    {"offset": operator.index(offset), "dim1": d1, "dim2": d2})


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Tensor.unfold: a view of all slices of length ``size`` (``step`` apart) along
    ``dimension``, in a new last dim."""
    data = self._data
    n = data.ndim
    d = wrap_dim(dimension, n, "unfold")
    dim_size = data.shape[d] if n else 1
    if size > dim_size:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {dim_size} but size is "
                           f"{size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return dispatch(UNFOLD, (self,),
                    {"dimension": d, "size": size, "step": step})


def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int],
               storage_offset: int | None = None) -> Tensor:
    """torch.as_strided: a view of ``input``'s storage with the given sizes, strides (in
    elements) and storage offset (default: ``input``'s own). Writes into a result whose
    elements repeat along a zero stride are refused, as in torch."""
    size = int_tuple((size,), "as_strided")
    stride = int_tuple((stride,), "as_strided", "stride")
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    own = input.storage_offset()
    offset = own if storage_offset is None else operator.index(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    root = input
    while root._base is not None:
        root = root._base
    available = _storage_size(root._data)
    item = input.dtype.itemsize
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed > available:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {item} requiring a storage size of "
                           f"{needed * item} are out of bounds for storage of size "
                           f"{available * item}")
    return dispatch(AS_STRIDED, (input,), {
        "size": size, "stride": stride, "storage_offset": offset - own,
        "input_stride": input.stride()})


def _storage_size(root: Any) -> int:
    """How many elements the root tensor's memory spans, from its first to its last."""
    if root.flags.c_contiguous or not root.size:
        return root.size
    return 1 + sum((n - 1) * s for n, s in zip(root.shape, element_strides(root)))


FUNCTIONS: list[str] = ["narrow", "diagonal", "as_strided"]

METHODS: dict[str, Any] = {
    "narrow": narrow, "diagonal": diagonal, "unfold": unfold, "as_strided": as_strided,
}
