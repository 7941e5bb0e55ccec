"""Sizes and strides as torch computes them, shared by the view and copy ops.

Size arguments (``f(2, 3)``, ``f((2, 3))``, a ``Size``), the ``-1`` to infer, the strides
torch reports for a view, and arrays built with exactly those strides. The stride rules
take byte strides, so that a view op's forward (on a numpy or cupy array) and its meta
rule (on a ``MetaArray``) compute the same geometry.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import meta
from ..device import xp_of


def restride(data: Any, shape: Sequence[int], strides: Sequence[int]) -> Any:
    """A view of ``data``'s memory from its first element with byte ``strides``.

    numpy and torch disagree on the strides of size-1 dims and on those of some views;
    this builds exactly the ones torch reports. Read-only input gives read-only output.
    """
    if data.__class__ is np.ndarray and (data.flags.c_contiguous or data.flags.f_contiguous):
        # Ten times faster than as_strided; numpy checks the view stays inside ``data``.
        try:
            return np.ndarray(shape, data.dtype, data, 0, strides)
        except (ValueError, TypeError, BufferError):
            pass
    return xp_of(data).lib.stride_tricks.as_strided(data, tuple(shape), tuple(strides))


def element_at(data: Any, k: int) -> Any:
    """A one-element view of the memory ``k`` elements from ``data``'s first one (either
    side of it): where a view that starts elsewhere than ``data`` is built from."""
    step = data.itemsize if k >= 0 else -data.itemsize
    n = abs(k)
    return xp_of(data).lib.stride_tricks.as_strided(data, (n + 1,), (step,))[n:]


def shares_elements(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """A zero stride over a dim longer than 1 in a non-empty layout (an expanded tensor):
    several elements share one memory location."""
    if 0 in shape:
        return False
    for n, s in zip(shape, strides):
        if s == 0 and n > 1:
            return True
    return False


def refuse_writes(arr: Any) -> Any:
    """``arr`` marked read-only where its library has the flag (NumPy; CuPy arrays have
    none): in-place writes into it then refuse, as torch's do where elements share one
    memory location."""
    if arr.__class__ is np.ndarray:
        arr.setflags(write=False)  # a third cheaper than setting ``arr.flags.writeable``
    return arr


def writable_alias(arr: Any) -> Any:
    """A writable array over ``arr``'s memory with ``arr``'s geometry, for a write torch
    makes where ``refuse_writes`` marked ``arr`` (or the array it is a view of) read-only;
    None where the memory itself is read-only (a read-only NumPy array given to
    ``from_numpy``). CuPy arrays have no flag: ``arr`` itself."""
    if arr.__class__ is not np.ndarray:
        return arr
    owner = arr
    while owner.base is not None:  # the array owning the memory (as_strided interposes an
        base = owner.base          # object holding it)
        if not isinstance(base, np.ndarray):
            base = getattr(base, "base", None)
            if not isinstance(base, np.ndarray):
                break
        owner = base
    if not owner.flags.writeable:
        return None
    start = arr.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    try:
        flat = owner.reshape(-1, order="A")
        return np.ndarray(arr.shape, arr.dtype, flat, start, arr.strides)
    except (ValueError, TypeError, BufferError):  # memory numpy cannot re-view
        return None


def int_tuple(args: Sequence[Any], op: str, arg: str = "size") -> tuple[int, ...]:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(Size)`` all mean (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    try:
        return tuple(map(operator.index, args))
    except TypeError:
        i, bad = next((i, a) for i, a in enumerate(args) if not hasattr(a, "__index__"))
        raise TypeError(f"{op}(): argument '{arg}' must be tuple of ints, but found element of "
                        f"type {type(bad).__name__} at pos {i}") from None


def plain_size(shape: tuple[Any, ...], numel: int) -> bool:
    """Whether ``shape`` is a tuple of non-negative Python ints holding ``numel`` elements:
    a size to use as it is (the hot path of view and reshape)."""
    for s in shape:
        if s.__class__ is not int or s < 0:
            return False
    return math.prod(shape) == numel


def infer_size(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    """Resolve one ``-1`` in ``shape`` for ``numel`` elements, with torch's errors."""
    infer = -1
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer >= 0:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
        else:
            known *= s
    if numel == known or (infer >= 0 and known > 0 and numel % known == 0):
        if infer < 0:
            return shape
        if known == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                               "because the unspecified dimension size -1 can be any value and "
                               "is ambiguous")
        return shape[:infer] + (numel // known,) + shape[infer + 1:]
    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")


def view_strides(old_shape: tuple[int, ...], old_strides: tuple[int, ...],
                 new_shape: tuple[int, ...], unit: int) -> tuple[int, ...] | None:
    """The strides of ``new_shape`` viewing the same memory, or None where no view can
    (torch's ``computeStride``); ``unit`` is the stride of one element (numpy: itemsize)."""
    if not old_shape:
        return (unit,) * len(new_shape)
    numel = 1
    for s in old_shape:
        numel *= s
    if numel == 0:
        if old_shape == new_shape:
            return old_strides
        return contiguous_strides(new_shape, unit)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    return tuple(new_strides) if view_d == -1 else None


def contiguous_strides(shape: Sequence[int], unit: int = 1) -> tuple[int, ...]:
    """Row-major strides as torch computes them, in steps of ``unit``."""
    return tuple(s * unit for s in meta.contiguous_strides(shape))


def unsqueezed(shape: tuple[int, ...], strides: tuple[int, ...], dim: int, unit: int
               ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Shape and strides with a size-1 dim inserted at ``dim``: it strides over the dim it
    displaces (one element at the end), as in torch."""
    inserted = strides[dim] * shape[dim] if dim < len(shape) else unit
    return shape[:dim] + (1,) + shape[dim:], strides[:dim] + (inserted,) + strides[dim:]


def expanded_strides(shape: tuple[int, ...], strides: tuple[int, ...], size: tuple[int, ...]
                     ) -> tuple[int, ...]:
    """The strides of ``expand(size)`` (``size`` checked, no -1): 0 along repeated and new
    dims, except that a new leading dim of size 1 strides over the dims after it."""
    lead = len(size) - len(shape)
    out = [0] * len(size)
    for i, n in enumerate(shape):
        if n != 1 or size[lead + i] == 1:
            out[lead + i] = strides[i]
    if shape:
        for i in range(lead - 1, -1, -1):
            if size[i] == 1:
                out[i] = size[i + 1] * out[i + 1]
    return tuple(out)


def laid_out(arr: Any, strides: Sequence[int]) -> Any:
    """A copy of ``arr`` with element ``strides`` (a dense layout torch gives a result)."""
    out = restride(xp_of(arr).empty(arr.size, arr.dtype), arr.shape,
                   [s * arr.itemsize for s in strides])
    out[...] = arr
    return out


def c_order(arr: Any) -> Any:
    """torch's copies are row-major; numpy keeps its inputs' layout in some of its own."""
    return arr if arr.flags.c_contiguous else arr.copy()
