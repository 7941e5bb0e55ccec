"""How torch reads an index: ``x[index]`` split into a basic and an advanced part.

The basic part (ints, slices, None, Ellipsis, the dims an index tensor spans) is NumPy
basic indexing: a view. The advanced part is a list of *entries*, one per dim of that
view from the first: None (the whole dim) or an index array (an integer array, or a bool
mask covering ``mask.ndim`` dims), as torch's ``aten.index``/``index_put`` take them. With
only slices and arrays left, NumPy's placement of the indexed dims is torch's (adjacent
indexed dims stay in place, separated ones go first), so the advanced part is one NumPy
fancy-indexing call. Ints never reach it: torch applies them as ``select`` first, which
is why ``x[0, :, [1, 2]]`` has shape (3, 2) here as in torch, not NumPy's (2, 3).
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..device import CPU
from ..tensor import Tensor, make
from .conversion import move_array
from .index_checks import min_max, xp_of

INDEX_DTYPES = (_dt.int64, _dt.int32)

_INT, _SLICE, _NONE, _ELLIPSIS, _BOOL, _MASK, _ARRAY = range(7)


def plain_slice(s: slice) -> bool:
    """A slice NumPy applies as torch does: no step, or a positive int one."""
    step = s.step
    return step is None or (step.__class__ is int and step > 0)


def all_plain(index: tuple[Any, ...]) -> bool:
    """Ints, positive-step slices, None and Ellipsis: NumPy's basic indexing is torch's."""
    for item in index:
        cls = item.__class__
        if cls is int or item is None or item is Ellipsis:
            continue
        if cls is slice and plain_slice(item):
            continue
        return False
    return True


def _as_tuple(index: Any) -> tuple[Any, ...]:
    if index.__class__ is tuple:
        return index  # type: ignore[no-any-return]
    # torch (like old NumPy) reads a short list holding slices, sequences or tensors as a
    # tuple of indices.
    if index.__class__ is list and len(index) < 32 and any(
            isinstance(i, (Tensor, list, tuple, slice, np.ndarray)) or i is None or i is Ellipsis
            for i in index):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated; "
                      "use x[tuple(seq)] instead of x[seq].", UserWarning, stacklevel=5)
        return tuple(index)
    return (index,)


def _classify(item: Any, x: Tensor) -> tuple[int, Any]:
    """One index item as (kind, value); index arrays end up on ``x``'s device."""
    if item is None:
        return _NONE, None
    if item is Ellipsis:
        return _ELLIPSIS, None
    cls = item.__class__
    if cls is bool or cls is np.bool_:
        return _BOOL, bool(item)
    if cls is int or isinstance(item, np.integer):
        return _INT, int(item)
    if cls is slice:
        return _SLICE, item
    if cls is str:
        raise TypeError(f"a string ({item!r}) is not a valid index")
    if isinstance(item, Tensor):
        return _classify_array(item._data, item.dtype, item.device, x)
    if isinstance(item, np.ndarray):
        return _classify_array(item, _dt.from_numpy_dtype(item.dtype), CPU, x)
    if isinstance(item, (list, tuple, range)):
        arr = np.asarray(item)
        if arr.dtype != np.bool_:
            if arr.dtype.kind not in "iuf":
                raise IndexError(f"index: a sequence of {arr.dtype} cannot be used as an index")
            arr = arr.astype(np.int64, copy=False)  # torch reads numeric lists as long
        return _classify_array(arr, _dt.from_numpy_dtype(arr.dtype), CPU, x)
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {type(item).__name__})")


def _classify_array(arr: Any, dt: _dt.dtype, dev: Any, x: Tensor) -> tuple[int, Any]:
    """An index array: a mask (bool, or uint8 as torch still allows), an integer index, or
    when 0-d a Python bool or int."""
    if dev is not x.device:
        if dev.type != "cpu":
            raise RuntimeError(f"indices should be either on cpu or on the same device as the "
                               f"indexed tensor ({x.device}), got {dev}")
        arr = move_array(arr, dev, x.device)
    if dt is _dt.bool or dt is _dt.uint8:
        if dt is _dt.uint8:
            warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a "
                          "dtype torch.bool instead.", UserWarning, stacklevel=6)
            arr = arr.astype(np.bool_)
        return (_BOOL, bool(arr)) if arr.ndim == 0 else (_MASK, arr)
    if dt.category == 1 and arr.ndim == 0:
        return _INT, int(arr)
    if dt in INDEX_DTYPES:
        return _ARRAY, arr
    raise IndexError("tensors used as indices must be long, int, byte or bool tensors "
                     f"(got {dt})")


def _normalized_slice(s: slice, size: int) -> slice:
    """``s`` with non-negative start and stop for a dim of ``size`` (torch: no negative step)."""
    if s.step is not None and operator.index(s.step) <= 0:
        raise ValueError("step must be greater than zero")
    return slice(*s.indices(size))


def split_index(x: Tensor, index: Any) -> tuple[tuple[Any, ...] | None, list[Any] | None]:
    """torch's index as (basic, entries); basic is None when it selects everything, entries
    is None when there is no advanced part."""
    items = []
    specified = 0  # dims of x the index names (None, Ellipsis and bools name none)
    for i in _as_tuple(index):
        kind, value = _classify(i, x)
        items.append((kind, value))
        if kind == _INT or kind == _SLICE or kind == _ARRAY:
            specified += 1
        elif kind == _MASK:
            specified += value.ndim
    shape = x._data.shape
    ndim = len(shape)
    if specified > ndim:
        if ndim == 0 and index.__class__ is int:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    basic: list[Any] = []
    entries: list[Any] = []
    src = dim = 0
    whole = True  # basic so far selects everything, in place
    advanced = False
    xp = x.device.xp
    for kind, value in items:
        if kind == _INT:
            size = shape[src]
            if not -size <= value < size:
                raise IndexError(f"index {value} is out of bounds for dimension {dim} with "
                                 f"size {size}")
            basic.append(value + size if value < 0 else value)
            src += 1
            whole = False
        elif kind == _SLICE:
            s = _normalized_slice(value, shape[src])
            whole = whole and s.start == 0 and s.stop == shape[src] and s.step == 1
            basic.append(s)
            entries.append(None)
            src += 1
            dim += 1
        elif kind == _NONE or kind == _BOOL:
            basic.append(None)
            entries.append(None if kind == _NONE else xp.zeros(1 if value else 0, np.int64))
            advanced = advanced or kind == _BOOL
            dim += 1
            whole = False
        elif kind == _ELLIPSIS:
            # every Ellipsis stands for the unspecified dims, as in torch
            n = min(ndim - specified, ndim - src)
            basic.extend(slice(0, shape[src + j], 1) for j in range(n))
            entries.extend([None] * n)
            src += n
            dim += n
        else:
            k = value.ndim if kind == _MASK else 1
            basic.extend(slice(0, shape[src + j], 1) for j in range(k))
            entries.append(value)
            advanced = True
            src += k
            dim += k
    if advanced:
        while entries[-1] is None:
            entries.pop()
    while basic and basic[-1].__class__ is slice and basic[-1] == slice(0, shape[src - 1], 1):
        basic.pop()  # trailing whole dims are implied
        src -= 1
    return (None if whole else tuple(basic)), (entries if advanced else None)


def numpy_index(entries: list[Any]) -> tuple[Any, ...]:
    """Entries as a NumPy index: None becomes a whole slice."""
    return tuple(slice(None) if e is None else e for e in entries)


def _index_shapes(vshape: tuple[int, ...], entries: list[Any]) -> list[tuple[int, ...]]:
    """Shapes of the index arrays, masks expanded to their nonzero columns (torch's check
    order: mask shapes, then broadcasting)."""
    shapes: list[tuple[int, ...]] = []
    pos = 0
    for e in entries:
        if e is None:
            pos += 1
            continue
        if e.dtype == np.bool_:
            for j in range(e.ndim):
                if pos + j >= len(vshape) or e.shape[j] != vshape[pos + j]:
                    raise IndexError(f"The shape of the mask {list(e.shape)} at index {j} does "
                                     f"not match the shape of the indexed tensor "
                                     f"{list(vshape)} at index {pos + j}")
            shapes.extend([(int(np.count_nonzero(e)),)] * e.ndim)
            pos += e.ndim
        else:
            shapes.append(tuple(e.shape))
            pos += 1
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                         "with shapes " + ", ".join(str(list(s)) for s in shapes)) from None
    return shapes


def validate(vshape: tuple[int, ...], entries: list[Any]) -> list[tuple[int, ...]]:
    """Raise torch's error for a bad advanced index into a tensor of shape ``vshape``."""
    shapes = _index_shapes(vshape, entries)
    pos = ordinal = 0
    for e in entries:
        if e is None:
            pos += 1
            continue
        if e.dtype == np.bool_:
            pos += e.ndim
            ordinal += e.ndim
            continue
        size = vshape[pos]
        if e.size and (min_max(e)[0] < -size or min_max(e)[1] >= size):
            flat = e.reshape(-1)
            bad = int(flat[((flat < -size) | (flat >= size)).nonzero()[0][0]])
            raise IndexError(f"index {bad} is out of bounds for dimension {ordinal} with size "
                             f"{size}")
        pos += 1
        ordinal += 1
    return shapes


def _advanced_shape(vshape: tuple[int, ...], entries: list[Any],
                    shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """Shape of ``v[entries]``: the broadcast index shape in place of the indexed dims when
    they are adjacent, else first."""
    indexed: list[int] = []
    groups = 0
    pos = 0
    previous = False
    for e in entries:
        if e is None:
            pos += 1
            previous = False
            continue
        groups += not previous
        previous = True
        k = e.ndim if e.dtype == np.bool_ else 1
        indexed.extend(range(pos, pos + k))
        pos += k
    b = tuple(np.broadcast_shapes(*shapes))
    if groups == 1:
        return tuple(vshape[:indexed[0]]) + b + tuple(vshape[indexed[-1] + 1:])
    return b + tuple(s for i, s in enumerate(vshape) if i not in indexed)


def get_advanced(v: Any, entries: list[Any]) -> Any:
    """``v[entries]`` (a copy), torch's errors for bad indices."""
    if not isinstance(v, np.ndarray):
        validate(v.shape, entries)  # CuPy does not check bounds
        return v[_integer_columns(entries)]
    try:
        return v[numpy_index(entries)]
    except IndexError:
        validate(v.shape, entries)
        raise


def put_advanced(op: str, dst: Any, entries: list[Any], src: Any, strip: bool,
                 accumulate: bool) -> None:
    """``dst[entries] = src`` (``+=`` with duplicates accumulating), torch's checks first.

    ``strip``: leading size-1 dims of ``src`` are dropped first, as torch's setitem does
    (``index_put`` does not).
    """
    if src.ndim or accumulate or not isinstance(dst, np.ndarray):
        shapes = validate(dst.shape, entries)
        if src.ndim:
            rshape = _advanced_shape(dst.shape, entries, shapes)
            vshape = _strip_leading_ones(src.shape) if strip else src.shape
            if not _expandable(vshape, rshape):
                raise RuntimeError(f"{op}: shape mismatch: value tensor of shape "
                                   f"{list(src.shape)} cannot be broadcast to indexing result "
                                   f"of shape {list(rshape)}")
            src = src.reshape(vshape)
    if accumulate:
        xp_of(dst).add.at(dst, _integer_columns(entries), src)
        return
    if not isinstance(dst, np.ndarray):
        dst[_integer_columns(entries)] = src
        return
    try:
        dst[numpy_index(entries)] = src
    except IndexError:
        validate(dst.shape, entries)
        raise


def _integer_columns(entries: list[Any]) -> tuple[Any, ...]:
    """Entries as a NumPy index with masks as their nonzero columns (what ufunc.at and
    CuPy take)."""
    columns: list[Any] = []
    for e in entries:
        if e is None:
            columns.append(slice(None))
        else:
            columns.extend(e.nonzero() if e.dtype == np.bool_ else (e,))
    return tuple(columns)


def _strip_leading_ones(shape: tuple[int, ...]) -> tuple[int, ...]:
    i = 0
    while i < len(shape) and shape[i] == 1:
        i += 1
    return tuple(shape[i:])


def _expandable(src: tuple[int, ...], dst: tuple[int, ...]) -> bool:
    return len(src) <= len(dst) and all(s == d or s == 1 for s, d in zip(reversed(src),
                                                                           reversed(dst)))


def entry_tensors(entries: list[Any], dev: Any) -> tuple[Tensor | None, ...]:
    return tuple(None if e is None else make(e, _dt.from_numpy_dtype(e.dtype), dev)
                 for e in entries)
