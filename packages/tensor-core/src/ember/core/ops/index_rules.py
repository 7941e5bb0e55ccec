"""How torch reads an index: ``x[index]`` split into a basic and an advanced part.

The *basic* part (ints, slices, None, Ellipsis, the dims an index tensor spans) is a view:
NumPy basic indexing, which reads ints, positive-step slices, None (a new dim) and one
Ellipsis as torch does, with the strides torch gives the view (``basic_view``);
``split_index`` gives it canonical (non-negative ints, slices with non-negative start and
stop and a positive step, None; trailing dims implied whole). The *advanced* part is a list of
entries, one per dim of that view from the first: None (the whole dim) or an index
tensor (integer, or a bool mask covering ``mask.ndim`` dims), as torch's
``aten.index``/``index_put`` take them. With only whole dims and arrays left, NumPy's
placement of the indexed dims is torch's (adjacent indexed dims stay in place, separated
ones go first), so the advanced part is one NumPy fancy-indexing call. Ints never reach
it: torch applies them as ``select`` first, which is why ``x[0, :, [1, 2]]`` has shape
(3, 2) here as in torch, not NumPy's (2, 3).

``split_index`` is the wrappers' part: it reads shapes, never index values (but a 0-d
index tensor's, which torch reads as a number too). The kernels validate the entries
against the view (``validate``) and apply them; the meta rules compute shapes and
strides alone.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..creation import from_numpy
from ..device import xp_of
from ..meta import MetaArray, broadcast_shapes, elementwise_strides, strided
from ..result_layouts import laid_out
from ..tensor import Tensor
from .conversion import cast
from .index_checks import first_outside

INDEX_DTYPES = (_dt.int64, _dt.int32)

_INT, _SLICE, _NONE, _ELLIPSIS, _BOOL, _MASK, _ARRAY = range(7)


# ----------------------------------------------------------------------------- the wrappers' part

def all_plain(index: tuple[Any, ...]) -> bool:
    """Ints, slices with int or None bounds and no step or a positive one, None and
    Ellipsis: NumPy's basic indexing reads them as torch does (but for ints out of range
    and repeated Ellipses, which NumPy refuses)."""
    for item in index:  # flat: the hot path of ``x[:, a:b]``
        cls = item.__class__
        if cls is slice:
            start, stop, step = item.start, item.stop, item.step
            if (step is None or (step.__class__ is int and step > 0)) and (
                    start is None or start.__class__ is int) and (
                    stop is None or stop.__class__ is int):
                continue
            return False
        if cls is not int and item is not None and item is not Ellipsis:
            return False
    return True


def _strip_whole(basic: list[Any], shape: tuple[int, ...], src: int) -> tuple[Any, ...]:
    """``basic`` without its trailing whole slices (they are implied); ``src`` is the
    number of dims of ``shape`` it consumes."""
    while basic:
        last = basic[-1]
        if last.__class__ is not slice or last.start != 0 or last.step != 1 or \
                last.stop != shape[src - 1]:
            break
        basic.pop()
        src -= 1
    return tuple(basic)


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


def _basic_kind(item: Any) -> tuple[int, Any] | None:
    """A basic index item (an int, a bool, a slice, None or Ellipsis) as (kind, value)."""
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
    return None


def _classify(item: Any, x: Tensor) -> tuple[int, Any]:
    """One index item as (kind, value); index arrays become tensors on ``x``'s device."""
    basic = _basic_kind(item)
    if basic is not None:
        return basic
    cls = item.__class__
    if cls is str:
        raise TypeError(f"a string ({item!r}) is not a valid index")
    if isinstance(item, Tensor):
        return _classify_tensor(item, x)
    if isinstance(item, np.ndarray):
        return _classify_tensor(_constant(item), x)
    if isinstance(item, (list, tuple, range)):
        arr = np.asarray(item)
        if arr.dtype != np.bool_:
            if arr.dtype.kind not in "iuf":
                raise IndexError(f"index: a sequence of {arr.dtype} cannot be used as an index")
            arr = arr.astype(np.int64, copy=False)  # torch reads numeric lists as long
        return _classify_tensor(_constant(arr), x)
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {type(item).__name__})")


def _constant(arr: np.ndarray) -> Tensor:
    """Host index data as a tensor (torch's ``lift_fresh`` of the index it builds)."""
    return from_numpy(np.array(arr, copy=True))


def _classify_tensor(t: Tensor, x: Tensor) -> tuple[int, Any]:
    """An index tensor: a mask (bool, or uint8 as torch still allows), an integer index, or
    when 0-d a Python bool or int (torch reads those, as it reads ints)."""
    dt = t.dtype
    if dt is _dt.bool or dt is _dt.uint8:
        if t._data.ndim == 0:
            return _BOOL, bool(t)
        if dt is _dt.uint8:
            warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a "
                          "dtype torch.bool instead.", UserWarning, stacklevel=6)
        return _MASK, as_index(t, _dt.bool, x)
    if dt.category == 1 and t._data.ndim == 0:
        return _INT, operator.index(t)
    if dt in INDEX_DTYPES:
        return _ARRAY, as_index(t, dt, x)
    raise IndexError("tensors used as indices must be long, int, byte or bool tensors "
                     f"(got {dt})")


def as_index(t: Tensor, dt: _dt.dtype, x: Tensor) -> Tensor:
    """Index tensor ``t`` in ``dt`` on x's device (torch takes CPU indices for any tensor)."""
    if t.device is not x.device and t.device.type != "cpu":
        raise RuntimeError(f"indices should be either on cpu or on the same device as the "
                           f"indexed tensor ({x.device}), got {t.device}")
    return cast(t, dt, x.device)


def _normalized_slice(s: slice, size: int) -> slice:
    """``s`` with non-negative start and stop for a dim of ``size`` (torch: no negative step)."""
    if s.step is not None and operator.index(s.step) <= 0:
        raise ValueError("step must be greater than zero")
    return slice(*s.indices(size))


def split_index(x: Tensor, index: Any) -> tuple[tuple[Any, ...] | None, list[Any] | None]:
    """torch's index as (basic, entries); basic is None when it selects everything, entries
    is None when there is no advanced part."""
    items = [_classify(i, x) for i in _as_tuple(index)]
    return _split(items, x._data.shape, index, x)


def canonical_basic(index: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """A basic index (ints, slices, None, Ellipsis) in canonical form for a tensor of
    ``shape``, with torch's errors for what does not fit it."""
    items = []
    for i in index if index.__class__ is tuple else (index,):
        kind = _basic_kind(i)
        if kind is None or kind[0] == _BOOL:
            raise IndexError(f"{i!r} is not a basic index")
        items.append(kind)
    basic, _ = _split(items, shape, index, None)
    return basic or ()


def _split(items: list[tuple[int, Any]], shape: tuple[int, ...], index: Any,
           x: Tensor | None) -> tuple[tuple[Any, ...] | None, list[Any] | None]:
    """``split_index`` of classified items (``x``: the tensor a bool's index tensor is made
    for; a basic index has no bools, and needs none)."""
    specified = 0  # dims of x the index names (None, Ellipsis and bools name none)
    for kind, value in items:
        if kind == _INT or kind == _SLICE or kind == _ARRAY:
            specified += 1
        elif kind == _MASK:
            specified += value._data.ndim
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
            # torch indexes a bool as a new dim, kept (True: index [0]) or emptied ([])
            basic.append(None)
            if kind == _NONE:
                entries.append(None)
            else:
                assert x is not None
                picked = _constant(np.zeros(1 if value else 0, np.int64))
                entries.append(as_index(picked, _dt.int64, x))
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
            k = value._data.ndim if kind == _MASK else 1
            basic.extend(slice(0, shape[src + j], 1) for j in range(k))
            entries.append(value)
            advanced = True
            src += k
            dim += k
    if advanced:
        while entries[-1] is None:
            entries.pop()
    return (None if whole else _strip_whole(basic, shape, src)), (entries if advanced else None)


# ----------------------------------------------------------------------------- the view

def view_geometry(shape: tuple[int, ...], strides: tuple[int, ...], item: int, index: Any
                  ) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """The shape, byte strides and byte offset torch gives ``x[index]`` (a basic index) for
    an ``x`` of this geometry: ints select, slices narrow and step, and None is torch's
    ``unsqueeze``, whose stride is that of the dim it goes before times its size (one
    element at the end; NumPy says 0)."""
    out_shape: list[int] = []
    out_strides: list[int] = []
    offset = 0
    d = 0
    for it in canonical_basic(index, shape):
        if it is None:
            out_shape.append(1)
            out_strides.append(shape[d] * strides[d] if d < len(shape) else item)
        elif it.__class__ is slice:
            start, stop, step = it.start, it.stop, it.step
            out_shape.append(max(0, (stop - start + step - 1) // step))
            out_strides.append(strides[d] * step)
            offset += start * strides[d]
            d += 1
        else:
            offset += it * strides[d]
            d += 1
    return tuple(out_shape) + tuple(shape[d:]), tuple(out_strides) + tuple(strides[d:]), offset


def basic_view(x: Any, *, index: Any) -> Any:
    """``x[index]`` (a basic index: an int, a slice, None, or a tuple of them and Ellipsis)
    as a view with torch's strides (an array of any module)."""
    view = x[index]
    if view.__class__ is not x.__class__:  # NumPy answers a full int index with a scalar
        view = x[(*index, Ellipsis) if index.__class__ is tuple else (index, Ellipsis)]
    if index is None or (index.__class__ is tuple and None in index):
        _, strides, _ = view_geometry(x.shape, x.strides, x.itemsize, index)
        view = xp_of(x).lib.stride_tricks.as_strided(view, view.shape, strides)
    return view


# ----------------------------------------------------------------------------- the kernels' part

def _count(mask: Any) -> int:
    return int(xp_of(mask).count_nonzero(mask))


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
            shapes.extend([(_count(e),)] * e.ndim)
            pos += e.ndim
        else:
            shapes.append(tuple(e.shape))
            pos += 1
    broadcast_indices(shapes)
    return shapes


def broadcast_indices(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The shape the index arrays broadcast to (torch's IndexError when they do not)."""
    try:
        return broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                         "with shapes " + ", ".join(str(list(s)) for s in shapes)) from None


def validate(vshape: tuple[int, ...], entries: list[Any]) -> list[tuple[int, ...]]:
    """Raise torch's error for a bad advanced index into a tensor of shape ``vshape``;
    return the index shapes (masks as their nonzero columns)."""
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
        bad = first_outside(e, -size, size)
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for dimension {ordinal} with size "
                             f"{size}")
        pos += 1
        ordinal += 1
    return shapes


def _indexed_dims(entries: list[Any]) -> tuple[list[int], bool]:
    """The dims of the view the entries index, and whether they are adjacent."""
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
    return indexed, groups == 1


def advanced_shape(vshape: tuple[int, ...], entries: list[Any],
                   shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """Shape of ``v[entries]``: the broadcast index shape in place of the indexed dims when
    they are adjacent, else first."""
    indexed, adjacent = _indexed_dims(entries)
    b = broadcast_indices(shapes)
    if adjacent:
        return tuple(vshape[:indexed[0]]) + b + tuple(vshape[indexed[-1] + 1:])
    return b + tuple(s for i, s in enumerate(vshape) if i not in indexed)


def advanced_strides(v: Any, entries: list[Any], shape: tuple[int, ...]) -> tuple[int, ...]:
    """The element strides torch gives ``v[entries]`` (integer entries): TensorIterator's
    layout over the source restrided to the result's shape (indexed dims broadcast, moved
    first when they are apart) and the index tensors viewed over the result's dims."""
    indexed, adjacent = _indexed_dims(entries)
    kept = [s for d, s in enumerate(v.strides) if d not in indexed]
    before = indexed[0] if adjacent else 0
    after = len(kept) - before
    b = len(shape) - len(kept)
    src = MetaArray(shape, v.dtype, kept[:before] + [0] * b + kept[before:])
    operands = [src]
    for e in entries:
        if e is not None:
            # torch reshapes each index to the result's dims: its size-1 dims stride as
            # unsqueeze's do (over the dims after them), which orders the dims
            inner = e.strides[0] * e.shape[0] if e.ndim else 1
            lead = before + b - e.ndim
            strides = [inner] * lead + list(e.strides) + [1] * after
            operands.append(MetaArray((1,) * lead + tuple(e.shape) + (1,) * after,
                                      e.dtype, strides))
    return elementwise_strides(shape, operands)


def numpy_index(entries: list[Any]) -> tuple[Any, ...]:
    """Entries as a NumPy index with masks as their nonzero columns (what every array
    module takes): None becomes a whole slice."""
    columns: list[Any] = []
    for e in entries:
        if e is None:
            columns.append(slice(None))
        else:
            columns.extend(e.nonzero() if e.dtype == np.bool_ else (e,))
    return tuple(columns)


def get_advanced(v: Any, entries: list[Any]) -> Any:
    """``v[entries]`` (a copy), torch's errors for bad indices."""
    validate(v.shape, entries)
    return _laid_out(v, entries, v[numpy_index(entries)])


def get_advanced_numpy(v: np.ndarray, entries: list[Any]) -> np.ndarray:
    """``get_advanced`` on NumPy arrays, which check the index themselves: validated only to
    raise torch's error for what NumPy refused."""
    try:
        out = v[tuple(slice(None) if e is None else e for e in entries)]
    except IndexError:
        validate(v.shape, entries)
        raise
    return _laid_out(v, entries, out)  # type: ignore[no-any-return]


def _laid_out(v: Any, entries: list[Any], out: Any) -> Any:
    """The result of ``v[entries]`` laid out as torch lays it out. With a bool mask among
    the entries no meta rule can (the result's shape depends on the mask's values), so the
    kernel does: torch indexes with the mask's nonzero columns, whose layout
    ``advanced_strides`` gives. Integer entries alone are row-major here; the kernel step
    lays them out by the meta rule."""
    masked = False
    for e in entries:
        if e is not None and e.dtype == np.bool_:
            masked = True
            break
    if not masked:
        return row_major(out)
    if v.flags.c_contiguous and sum(e is not None for e in entries) == 1:
        # one mask over a row-major source: row-major, as in torch (NumPy gives an empty
        # result zero strides)
        return row_major(out) if out.size else laid_out(out, MetaArray(out.shape, out.dtype))
    columns: list[Any] = []
    for e in entries:
        columns.extend(e.nonzero() if e is not None and e.dtype == np.bool_ else (e,))
    return laid_out(out, strided(out.shape, out.dtype, advanced_strides(v, columns, out.shape)))


def row_major(out: Any) -> Any:
    """An indexing result in row-major order, torch's for a row-major source (NumPy moves
    the indexed dims of some results to the front of memory)."""
    return out if out.flags.c_contiguous else xp_of(out).ascontiguousarray(out)


def put_advanced(op: str, dst: Any, entries: list[Any], src: Any, accumulate: bool) -> None:
    """``dst[entries] = src`` (``+=`` with duplicates accumulating), torch's checks first:
    ``src`` must broadcast to the indexing result's shape."""
    shapes = validate(dst.shape, entries)
    if src.ndim:
        rshape = advanced_shape(dst.shape, entries, shapes)
        if not expandable(src.shape, rshape):
            raise RuntimeError(f"{op}: shape mismatch: value tensor of shape {list(src.shape)} "
                               f"cannot be broadcast to indexing result of shape {list(rshape)}")
    where = numpy_index(entries)
    if accumulate:
        xp_of(dst).add.at(dst, where, src)
    else:
        dst[where] = src


def expandable(src: tuple[int, ...], dst: tuple[int, ...]) -> bool:
    """Whether ``src`` broadcasts to ``dst`` without growing it."""
    return len(src) <= len(dst) and all(s == d or s == 1 for s, d in zip(reversed(src),
                                                                           reversed(dst)))
