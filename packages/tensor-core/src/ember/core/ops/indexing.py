"""``Tensor.__getitem__``/``__setitem__`` with torch's rules, and ``index_put``.

How an index is read lives in ``index_rules``: a basic part (a view) and an advanced
part (index tensors, applied as torch's ``aten.index``). Primitives:

- ``getitem`` (a view; operand ``x``; params ``index``, a basic index: an int, a slice
  with a positive step, None, or a tuple of them and Ellipsis, which NumPy reads as torch
  does): ``x[index]`` with torch's strides. Plain indices pass as written (the hot path of
  ``x[0]``, ``x[:, 1:3]``); the others are made canonical first (non-negative ints,
  normalized slices, None, trailing whole dims implied).
- ``index`` (operands ``v, *indices``): torch's ``aten.index``, one entry per dim of ``v``
  from the first, an integer or bool index tensor or None (the whole dim); a mask covers
  ``mask.ndim`` dims. ``x[i]`` dispatches ``getitem`` and then ``index`` when the index
  has both parts.
- ``index_put`` (operands ``x, values, *indices``, ``values`` a tensor of x's dtype or a
  Python number; params ``accumulate``): a copy of ``x`` with ``x[indices] = values``
  (``+=`` with ``accumulate``, duplicates included); ``index_put_`` writes into ``x``.

``x[i] = v`` is what torch makes of it: the view ``x[basic]`` (``getitem``), then
``copy_`` or ``fill_`` into it, or ``index_put_`` for the advanced part, so that autograd
sees an in-place write into a view of ``x``. Every check runs before the write.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..dispatch import register
from ..dtypes import scalar_type_name
from ..function_modes import checks_itself, engaged, handle, overriding, spec_of
from ..tensor import Tensor
from .conversion import cast
from .conversion import type as type_name
from .copying import (
    check_overlap,
    check_writable,
    copy_,
    fill_,
    recorded_writes_refused_first,
    write_shared,
)
from .index_checks import fill_number, tensor_arg, written_value
from .index_rules import (
    INDEX_DTYPES,
    advanced_shape,
    advanced_strides,
    all_plain,
    as_index,
    basic_view,
    expandable,
    get_advanced,
    get_advanced_numpy,
    put_advanced,
    split_index,
    view_geometry,
)
from .operands import device_mismatch

FUNCTIONS = ["index_put"]

_NUMBERS = (bool, int, float, complex)


# ----------------------------------------------------------------------------- primitives

def _getitem_meta(x: Any, *, index: Any) -> meta.MetaArray:
    shape, strides, offset = view_geometry(x.shape, x.strides, x.itemsize, index)
    return meta.MetaArray(shape, x.dtype, strides, x.offset + offset)


def _index(v: Any, *indices: Any) -> Any:
    return get_advanced(v, list(indices))


def _index_cpu(v: Any, *indices: Any) -> Any:
    return get_advanced_numpy(v, list(indices))


def _index_meta(v: Any, *indices: Any) -> meta.MetaArray:
    entries = list(indices)
    if any(e is not None and e.dtype == np.bool_ for e in entries):
        raise NotImplementedError("index: the shape of a tensor indexed by a bool mask "
                                  "depends on the mask's values, which meta tensors do not have")
    shape = advanced_shape(v.shape, entries, [tuple(e.shape) for e in entries if e is not None])
    return meta.strided(shape, v.dtype, advanced_strides(v, entries, shape))


def _index_put(x: Any, values: Any, *indices: Any, accumulate: bool) -> Any:
    out = x.copy(order="K")
    put_advanced("index_put", out, list(indices), written_value(x, values), accumulate)
    return out


def _index_put_(x: Any, values: Any, *indices: Any, accumulate: bool) -> Any:
    put_advanced("index_put_", x, list(indices), written_value(x, values), accumulate)
    return x


def _same(x: Any, *operands: Any, **params: Any) -> Any:
    return x


GETITEM = register("getitem", basic_view, _getitem_meta, "view", view=True, arg_names=("self",))
INDEX = register("index", _index, _index_meta, "library", arg_names=("self",))
INDEX.register_kernel("cpu", _index_cpu)
INDEX_PUT = register("index_put", _index_put, lambda x, *rest, accumulate: meta.like(x),
                     "library", arg_names=("self", "values"))
INDEX_PUT_ = register("index_put_", _index_put_, _same, "library", mutates=True,
                      functional=INDEX_PUT, arg_names=("self", "values"))
_NO_ACCUMULATE = {"accumulate": False}


# ----------------------------------------------------------------------------- getitem

def getitem(self: Tensor, index: Any) -> Tensor:
    """Tensor.__getitem__: ints, slices (positive steps), None, Ellipsis, integer and bool
    tensors, lists and arrays, as torch. Basic indexing returns a view; advanced copies."""
    if engaged.count and overriding():
        return handle(getitem, _getitem_spec, (self, index), {})  # type: ignore[no-any-return]
    cls = index.__class__
    if cls is int or (cls is tuple and all_plain(index)) or (cls is slice and all_plain((index,))):
        try:
            return GETITEM.door((self,), {"index": index})  # type: ignore[no-any-return]
        except IndexError:
            pass  # out of range, or Ellipsis twice: the general path says it in torch's words
    elif cls is Tensor and _one_entry(self, index):
        return INDEX.door((self, index), None)  # type: ignore[no-any-return]
    basic, entries = split_index(self, index)
    if basic is None and entries is not None:
        view = self
    else:
        view = GETITEM.door((self,), {"index": basic or ()})
    if entries is None:
        return view  # type: ignore[no-any-return]
    return INDEX.door((view, *entries), None)  # type: ignore[no-any-return]


# the hot path of ``x[0]``: the torch-function check is the first line above, not a wrapper
_getitem_spec = spec_of(checks_itself(getitem))


def _one_entry(self: Tensor, index: Tensor) -> bool:
    """An index tensor that is the whole index's one entry as it is: an integer index or a
    mask over leading dims of self, on self's device (``x[idx]``, ``x[mask]``)."""
    dt, n = index.dtype, index._data.ndim
    return index.device is self.device and 0 < n and (
        (dt in INDEX_DTYPES and self._data.ndim > 0) or (dt is _dt.bool and n <= self._data.ndim))


# ----------------------------------------------------------------------------- setitem

def setitem(self: Tensor, index: Any, value: Any) -> None:
    """Tensor.__setitem__: writes ``value`` (a Tensor, broadcast and cast to self's dtype,
    or a number) at ``index`` in place. Index, value and shape errors leave self unchanged."""
    value = _setitem_value(self, value)
    basic, entries = split_index(self, index)
    target = self if basic is None else GETITEM.door((self,), {"index": basic})
    if entries is None:
        _assign(target, value)
    else:
        _put(target, entries, _without_leading_ones(value))


def _setitem_value(self: Tensor, value: Any) -> Any:
    """The value of ``self[i] = value``: a Tensor on self's device, or a Python number
    converted for self's dtype."""
    if isinstance(value, Tensor):
        if value.device is not self.device:
            if value.device.type != "cpu" or value._data.ndim:
                raise device_mismatch("setitem", self.device, value.device)
            value = cast(value, value.dtype, self.device)
        return value
    if value.__class__ not in _NUMBERS and not isinstance(value, np.generic):
        raise TypeError(f"can't assign a {type(value).__name__} to a {type_name(self)}")
    return fill_number("setitem", value, self.dtype, check_half=False)


def _without_leading_ones(value: Any) -> Any:
    """A tensor value without its leading size-1 dims (torch drops them where the value's
    shape is not the target's)."""
    if not isinstance(value, Tensor):
        return value
    shape = value._data.shape
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    return getitem(value, (0,) * lead) if lead else value


def _assign(target: Tensor, value: Any) -> None:
    """``target[...] = value``: a copy or a fill of the view (as torch: a fill_ from a 0-d
    CPU value of another shape, which autograd records for an integer target too)."""
    if isinstance(value, Tensor):
        src, dst = value._data.shape, target._data.shape
        if src != dst:
            value = _without_leading_ones(value)
            src = value._data.shape
        if src != dst:
            if not src and value.device.type == "cpu":
                fill_(target, value)  # as torch does: a 0-d value (maybe of target) fills it
                return
            if not expandable(src, dst):
                raise _shape_error(dst, src)
            value = value.expand(dst)  # as torch does: the copy's source has the view's shape
        copy_(target, value)
    else:
        check_writable("setitem", target)  # torch copies the number: a fill_ would write
        fill_(target, value)


def _put(target: Tensor, entries: list[Any], value: Any) -> None:
    """``target[entries] = value``: ``index_put_``."""
    if isinstance(value, Tensor):
        value = _put_values("setitem", target, entries, value)
    if check_writable("setitem", target, like="index_put_"):
        write_shared(target, INDEX_PUT_, (target, value, *entries), _NO_ACCUMULATE)
    else:
        INDEX_PUT_.door((target, value, *entries), _NO_ACCUMULATE)


def _put_values(op: str, target: Tensor, entries: list[Any], values: Tensor,
                written: bool = True, accumulate: bool = False) -> Tensor:
    """The ``values`` that ``index_put`` writes into ``target`` at ``entries``, after
    torch's checks of them. One element on the CPU, written (not accumulated) through one
    mask, makes torch's ``masked_fill_(mask, values.item())``: the value is converted with
    its range check and may be an element of target. Other values must have target's dtype
    and (``written``: in place) share none of target's memory."""
    indices = [e for e in entries if e is not None]
    if values._data.size == 1 and not accumulate and values.device.type == "cpu" and \
            len(indices) == 1 and indices[0].dtype is _dt.bool:
        if values.dtype is not target.dtype:
            fill_number(op, values.item(), target.dtype)
            values = cast(values, target.dtype)
        return values
    if values.dtype is not target.dtype:
        raise _dtype_error(target.dtype, values.dtype)
    if written:
        check_overlap(op, target, (values,), full=False)
    return values


def _shape_error(dst: tuple[int, ...], src: tuple[int, ...]) -> RuntimeError:
    """torch's error for a value that does not broadcast to the indexed shape."""
    return RuntimeError(f"setitem: shape mismatch: value tensor of shape {list(src)} cannot be "
                        f"broadcast to indexing result of shape {list(dst)}")


def _dtype_error(dst: _dt.dtype, src: _dt.dtype) -> RuntimeError:
    return RuntimeError(f"Index put requires the source and destination dtypes match, got "
                        f"{scalar_type_name(dst)} for the destination and "
                        f"{scalar_type_name(src)} for the source.")


# ----------------------------------------------------------------------------- index_put

def _put_entries(op: str, input: Tensor, indices: Any, values: Any) -> list[Any]:
    """``index_put``'s indices as entries (bool or integer tensors on input's device, or
    None), after torch's checks of them and of ``values``'s type and device."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{op}(): argument 'indices' must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    tensor_arg(op, values, "values")
    if values.device is not input.device:
        raise device_mismatch(op, input.device, values.device)
    entries: list[Any] = []
    count = 0
    for t in indices:
        if t is None:
            entries.append(None)
            count += 1
            continue
        tensor_arg(op, t, "indices")
        if t.dtype is _dt.bool or t.dtype is _dt.uint8:
            entries.append(as_index(t, _dt.bool, input))
            count += t._data.ndim
        elif t.dtype in INDEX_DTYPES:
            entries.append(as_index(t, t.dtype, input))
            count += 1
        else:
            raise IndexError(f"tensors used as indices must be long, int, byte or bool tensors "
                             f"(got {t.dtype})")
    ndim = input._data.ndim
    if count > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim} (got {count})")
    if all(e is None for e in entries):
        raise RuntimeError(f"{op}(): expected at least one index tensor")
    dim = 0
    for e in entries:  # torch's AdvancedIndex checks this before the values' dtype
        if e is not None and e.dtype is not _dt.bool and e._data.size and \
                not input._data.shape[dim]:
            raise IndexError("index is out of bounds for dimension with size 0")
        dim += 1 if e is None or e.dtype is not _dt.bool else e._data.ndim
    return entries


def index_put(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """torch.index_put: a copy of ``input`` with ``input[indices] = values``
    (``accumulate=True`` adds, duplicates included). ``indices`` is a tuple of integer or
    bool tensors (None entries, meaning a whole dim, are accepted too)."""
    entries = _put_entries("index_put", input, indices, values)
    values = _put_values("index_put", input, entries, values, False, bool(accumulate))
    return INDEX_PUT.door((input, values, *entries),  # type: ignore[no-any-return]
                          {"accumulate": bool(accumulate)})


@recorded_writes_refused_first  # before the index and dtype checks, as torch's autograd
def index_put_(self: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """In-place ``index_put``."""
    entries = _put_entries("index_put_", self, indices, values)
    params = {"accumulate": bool(accumulate)}
    values = _put_values("index_put_", self, entries, values, accumulate=params["accumulate"])
    if check_writable("index_put_", self):
        return write_shared(self, INDEX_PUT_, (self, values, *entries), params)
    return INDEX_PUT_.door((self, values, *entries), params)  # type: ignore[no-any-return]


METHODS: dict[str, Any] = {
    "__getitem__": getitem,
    "__setitem__": setitem,
    "index_put": index_put,
    "index_put_": index_put_,
}
