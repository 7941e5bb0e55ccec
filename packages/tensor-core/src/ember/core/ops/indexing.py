"""``Tensor.__getitem__``/``__setitem__`` with torch's rules, and ``index_put``.

How an index is read lives in ``index_rules``: a basic part (a view) and an advanced part
(index tensors, applied as torch's ``aten.index``). Primitives and their params (index
tensors travel in params, never in inputs):

- "getitem" (a view): inputs ``(x,)``, params ``{"index": basic}``, ``basic`` a tuple of
  non-negative ints, slices with non-negative start/stop and positive step, and None
  (NumPy basic indexing; trailing dims implied whole).
- "index": inputs ``(v,)``, params ``{"indices": entries}``, ``entries`` a tuple of Tensor
  or None, one per dim of ``v`` from the first (None: the whole dim; a bool Tensor covers
  ``mask.ndim`` dims), as torch's ``aten.index``. ``x[i]`` records "getitem" and then
  "index" when the index has both parts; ``v[tuple(slice(None) if e is None else e for e
  in entries)]`` reproduces it.
- "setitem": inputs ``(x, value)`` (value a Tensor or a Python number), params
  ``{"index": basic, "indices": entries or None}``: a copy of ``x`` with
  ``x[basic][entries] = value``; ``x[i] = v`` in a graph is this, then ``assign_inplace``.
- "index_put": inputs ``(x, values)``, params ``{"indices": entries, "accumulate": bool}``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..dispatch import hooks, register
from ..dtypes import scalar_type_name
from ..tensor import Tensor, bump_version, make, make_view
from .conversion import move_array
from .conversion import type as type_name
from .index_checks import fill_value, tensor_arg
from .index_rules import (
    INDEX_DTYPES,
    all_plain,
    entry_tensors,
    get_advanced,
    numpy_index,
    plain_slice,
    put_advanced,
    split_index,
    validate,
)
from .inplace import inplace
from .operands import assign_inplace, device_mismatch, record

# ----------------------------------------------------------------------------- getitem

def _getitem_forward(x: Any, *, index: tuple[Any, ...]) -> Any:
    return x[index + (Ellipsis,)]


def _index_forward(v: Any, *, indices: tuple[Any, ...]) -> Any:
    return v[numpy_index(list(indices))]


GETITEM = register("getitem", _getitem_forward, None, "view")
INDEX = register("index", _index_forward, None, "library")


def getitem(self: Tensor, index: Any) -> Tensor:
    """Tensor.__getitem__: ints, slices (positive steps), None, Ellipsis, integer and bool
    tensors, lists and arrays, as torch. Basic indexing returns a view; advanced copies."""
    if not self._requires_grad:
        cls = index.__class__
        if cls is int or (cls is slice and plain_slice(index)) or (
                cls is tuple and all_plain(index)):
            data = self._data
            try:
                r = data[index]
            except (IndexError, TypeError):
                pass  # the general path raises torch's error
            else:
                if r.__class__ is not data.__class__:  # NumPy gave a scalar: ask for a view
                    r = data[index + (Ellipsis,) if cls is tuple else (index, Ellipsis)]
                return make_view(self, r)
        elif cls is Tensor and _direct(self, index):
            try:
                return make(self._data[index._data], self.dtype, self.device)
            except IndexError:
                pass
    return _getitem(self, index)


def _direct(self: Tensor, index: Tensor) -> bool:
    """An int64 or bool index tensor that NumPy applies as torch does (checking bounds and
    mask shapes itself)."""
    dt = index.dtype
    return ((dt is _dt.int64 or dt is _dt.bool) and index._data.ndim > 0
            and index.device is self.device and self._data.__class__ is np.ndarray)


def _getitem(self: Tensor, index: Any) -> Tensor:
    basic, entries = split_index(self, index)
    view = self
    if basic is not None or entries is None:
        view = make_view(self, _getitem_forward(self._data, index=basic or ()))
        if self._requires_grad:
            record(GETITEM, (self,), {"index": basic or ()}, view)
    if entries is None:
        return view
    out = make(get_advanced(view._data, entries), self.dtype, self.device)
    if self._requires_grad:
        record(INDEX, (view,), {"indices": entry_tensors(entries, self.device)}, out)
    return out


# ----------------------------------------------------------------------------- setitem

def _setitem_forward(x: Any, value: Any, *, index: tuple[Any, ...],
                     indices: tuple[Any, ...] | None) -> Any:
    out = x.copy()
    dst = out[index + (Ellipsis,)]
    if indices is None:
        dst[...] = value
    else:
        src = value if hasattr(value, "ndim") else np.asarray(value, x.dtype)
        put_advanced("setitem", dst, list(indices), src, True, False)
    return out


SETITEM = register("setitem", _setitem_forward, lambda x, value, **p: meta.Spec(
    tuple(x.shape), x.dtype), "library")


def setitem(self: Tensor, index: Any, value: Any) -> None:
    """Tensor.__setitem__: writes ``value`` (a Tensor, broadcast and cast to self's dtype,
    or a number) at ``index`` in place. Index and shape errors leave self unchanged."""
    if isinstance(value, Tensor):
        src = value._data
        if value.device is not self.device:
            if value.device.type != "cpu" or src.ndim:
                raise device_mismatch("setitem", self.device, value.device)
            src = move_array(src, value.device, self.device)
        in_graph = self._requires_grad or value._requires_grad
    else:
        if value.__class__ not in (int, float, bool, complex) and not isinstance(value,
                                                                                np.generic):
            raise TypeError(f"can't assign a {type(value).__name__} to a {type_name(self)}")
        src = fill_value("setitem", value, self.dtype, self.device, check_half=False)
        in_graph = self._requires_grad
    if in_graph and hooks.inplace is not None:
        _setitem_in_graph(self, index, value, src)
        return
    data = self._data
    if not getattr(data.flags, "writeable", True):  # CuPy arrays have no such flag
        raise RuntimeError("setitem: unsupported operation: the tensor's memory is read-only "
                           "(an expanded tensor?). Please clone() the tensor first.")
    cls = index.__class__
    if cls is int or (cls is slice and plain_slice(index)) or (
            cls is tuple and all_plain(index)):
        try:
            data[index] = src
        except IndexError:
            _check_index(self, index)  # raises torch's error
            raise
        except ValueError:
            raise _shape_error(np.shape(data[index]), src.shape) from None
    elif cls is Tensor and value.__class__ is not Tensor and _direct(self, index):
        try:
            data[index._data] = src
        except IndexError:
            _check_index(self, index)
            raise
    else:
        _write(self, data, index, value, src)
    bump_version(self)


def _write(self: Tensor, out: Any, index: Any, value: Any, src: Any
           ) -> tuple[tuple[Any, ...] | None, list[Any] | None]:
    """``out[index] = src`` with torch's checks, ``out`` being self's data or a copy of it."""
    basic, entries = split_index(self, index)
    dst = out if basic is None else _getitem_forward(out, index=basic)
    if entries is None:
        try:
            dst[...] = src
        except ValueError:
            raise _shape_error(dst.shape, src.shape) from None
    else:
        if isinstance(value, Tensor) and value.dtype is not self.dtype:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{scalar_type_name(self.dtype)} for the destination and "
                               f"{scalar_type_name(value.dtype)} for the source.")
        put_advanced("setitem", dst, entries, src, True, False)
    return basic, entries


def _check_index(self: Tensor, index: Any) -> None:
    """Raise torch's error for an index NumPy refused."""
    basic, entries = split_index(self, index)
    if entries is not None:
        validate(_getitem_forward(self._data, index=basic or ()).shape, entries)


def _shape_error(dst: tuple[int, ...], src: tuple[int, ...]) -> RuntimeError:
    """torch's error for a value that does not broadcast to the indexed shape."""
    return RuntimeError(f"setitem: shape mismatch: value tensor of shape {list(src)} cannot be "
                        f"broadcast to indexing result of shape {list(dst)}")


def _setitem_in_graph(self: Tensor, index: Any, value: Any, src: Any) -> None:
    out = self._data.copy()
    basic, entries = _write(self, out, index, value, src)
    res = make(out, self.dtype, self.device)
    params = {"index": basic or (),
              "indices": None if entries is None else entry_tensors(entries, self.device)}
    record(SETITEM, (self, value), params, res)
    assign_inplace(self, res, "setitem")


# ----------------------------------------------------------------------------- index_put

INDEX_PUT = register("index_put", lambda x, values, *, indices, accumulate: _index_put_data(
    x, list(indices), values, accumulate), lambda x, values, **p: meta.Spec(tuple(x.shape),
                                                                             x.dtype), "library")


def _index_put_data(x: Any, entries: list[Any], values: Any, accumulate: bool) -> Any:
    out = x.copy()
    put_advanced("index_put", out, entries, values, False, accumulate)
    return out


def _index_entry(t: Any, x: Tensor) -> Any:
    """An entry of ``index_put``'s indices as a backend array on x's device."""
    tensor_arg("index_put", t, "indices")
    arr = t._data
    if t.device is not x.device:
        if t.device.type != "cpu":
            raise device_mismatch("index_put", x.device, t.device)
        arr = move_array(arr, t.device, x.device)
    if t.dtype is _dt.bool or t.dtype is _dt.uint8:
        return arr.astype(np.bool_, copy=False)
    if t.dtype in INDEX_DTYPES:
        return arr
    raise IndexError(f"tensors used as indices must be long, int, byte or bool tensors (got "
                     f"{t.dtype})")


def index_put(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """torch.index_put: a copy of ``input`` with ``input[indices] = values``
    (``accumulate=True`` adds, duplicates included). ``indices`` is a tuple of integer or
    bool tensors (None entries, meaning a whole dim, are accepted too)."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    tensor_arg("index_put", values, "values")
    if values.dtype is not input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{scalar_type_name(input.dtype)} for the destination and "
                           f"{scalar_type_name(values.dtype)} for the source.")
    if values.device is not input.device:
        raise device_mismatch("index_put", input.device, values.device)
    entries: list[Any] = []
    count = 0
    for t in indices:
        if t is None:
            entries.append(None)
            count += 1
            continue
        arr = _index_entry(t, input)
        entries.append(arr)
        count += arr.ndim if arr.dtype == np.bool_ else 1
    ndim = input._data.ndim
    if count > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim} (got {count})")
    if not any(e is not None for e in entries):
        raise RuntimeError("index_put(): expected at least one index tensor")
    res = make(_index_put_data(input._data, entries, values._data, bool(accumulate)),
               input.dtype, input.device)
    if input._requires_grad or values._requires_grad:
        record(INDEX_PUT, (input, values), {"indices": entry_tensors(entries, input.device),
                                            "accumulate": bool(accumulate)}, res)
    return res


FUNCTIONS = ["index_put"]

METHODS: dict[str, Any] = {
    "__getitem__": getitem,
    "__setitem__": setitem,
    "index_put": index_put,
    "index_put_": inplace(index_put, "index_put_"),
}
