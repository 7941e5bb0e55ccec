"""Strided views of part of a tensor: ``narrow``, ``diagonal``, ``unfold``, ``as_strided``.

Each is a view (``make_view`` over the input's storage) with the strides torch reports,
so in-place writes through it change the base.

Primitives and the ``params`` they record (``shape`` is the input's, for the VJP):

    narrow          dim, start, length, shape
    diagonal        offset, dim1, dim2, shape
    unfold          dimension, size, step, shape
    as_strided      size, stride, storage_offset, shape, input_stride, input_storage_offset
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from .. import meta
from ..dispatch import register
from ..tensor import Tensor, make_view, wrap_dim
from .geometry import int_tuple, restride
from .operands import record


def _narrow_forward(x: Any, dim: int, start: int, length: int, shape: tuple[int, ...]) -> Any:
    return x[(slice(None),) * dim + (slice(start, start + length),)]


def diagonal_array(x: Any, offset: int, dim1: int, dim2: int) -> Any:
    """The writable strided view of ``x``'s diagonal (numpy's ``diagonal`` is read-only)."""
    shape, strides = x.shape, x.strides
    n1, n2 = shape[dim1], shape[dim2]
    length = max(min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2), 0)
    start = x
    if length > 0 and offset != 0:
        d, k = (dim2, offset) if offset > 0 else (dim1, -offset)
        start = x[(slice(None),) * d + (slice(k, None),)]
    keep = [i for i in range(x.ndim) if i != dim1 and i != dim2]
    return restride(start, [shape[i] for i in keep] + [length],
                    [strides[i] for i in keep] + [strides[dim1] + strides[dim2]])


def _diagonal_forward(x: Any, offset: int, dim1: int, dim2: int, shape: tuple[int, ...]) -> Any:
    return diagonal_array(x, offset, dim1, dim2)


def _unfold_forward(x: Any, dimension: int, size: int, step: int, shape: tuple[int, ...]) -> Any:
    if x.ndim == 0:
        return restride(x, (size,), (x.itemsize,))
    sizes, strides = list(x.shape), list(x.strides)
    stride = strides[dimension]
    sizes[dimension] = (sizes[dimension] - size) // step + 1
    strides[dimension] = stride * step
    return restride(x, sizes + [size], strides + [stride])


def _as_strided_forward(x: Any, size: tuple[int, ...], stride: tuple[int, ...],
                        storage_offset: int, **input_geometry: Any) -> Any:
    # ``x`` stands for the whole storage, from its first element.
    flat = x.reshape(-1)[storage_offset:]
    return restride(flat, size, [s * x.itemsize for s in stride])


def _as_strided_meta(x: meta.Spec, size: tuple[int, ...], **params: Any) -> meta.Spec:
    return meta.Spec(tuple(size), x.dtype)


NARROW = register("narrow", _narrow_forward, None, "view")
DIAGONAL = register("diagonal", _diagonal_forward, None, "view")
UNFOLD = register("unfold", _unfold_forward, None, "view")
AS_STRIDED = register("as_strided", _as_strided_forward, _as_strided_meta, "view")


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
    out = make_view(input, data[(slice(None),) * d + (slice(start, start + length),)])
    if input._requires_grad:
        record(NARROW, (input,), {"dim": d, "start": start, "length": length,
                                  "shape": data.shape}, out)
    return out


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """torch.diagonal: a view of the diagonal of dims ``dim1``/``dim2`` (moved last)."""
    data = input._data
    n = data.ndim
    d1 = wrap_dim(dim1, n, "diagonal")
    d2 = wrap_dim(dim2, n, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    out = make_view(input, diagonal_array(data, offset, d1, d2))
    if input._requires_grad:
        record(DIAGONAL, (input,), {"offset": offset, "dim1": d1, "dim2": d2,
                                    "shape": data.shape}, out)
    return out


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
    out = make_view(self, _unfold_forward(data, d, size, step, data.shape))
    if self._requires_grad:
        record(UNFOLD, (self,), {"dimension": d, "size": size, "step": step,
                                 "shape": data.shape}, out)
    return out


def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int],
               storage_offset: int | None = None) -> Tensor:
    """torch.as_strided: a view of ``input``'s storage with the given sizes, strides (in
    elements) and storage offset (default: ``input``'s own)."""
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
    offset = input.storage_offset() if storage_offset is None else operator.index(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    root = input._base if input._base is not None else input
    storage = _storage_array(root._data)
    item = input.dtype.itemsize
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed > storage.size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {item} requiring a storage size of "
                           f"{needed * item} are out of bounds for storage of size "
                           f"{storage.size * item}")
    out = make_view(input, restride(storage[offset:], size, [s * item for s in stride]))
    if input._requires_grad:
        record(AS_STRIDED, (input,), {
            "size": size, "stride": stride, "storage_offset": offset, "shape": input._data.shape,
            "input_stride": input.stride(), "input_storage_offset": input.storage_offset()}, out)
    return out


def _storage_array(root: Any) -> Any:
    """The root tensor's memory as a 1-D array from its first element to its last."""
    if root.flags.c_contiguous:
        return root.reshape(-1)
    extent = 1 + sum((n - 1) * s for n, s in zip(root.shape, root.strides)) // root.itemsize
    return restride(root, (extent if root.size else 0,), (root.itemsize,))


FUNCTIONS: list[str] = ["narrow", "diagonal", "as_strided"]

METHODS: dict[str, Any] = {
    "narrow": narrow, "diagonal": diagonal, "unfold": unfold, "as_strided": as_strided,
}
