"""Where a view lies in its base: the map behind ``CopySlices``.

An in-place write into a view changes its base. The base's new history is "the old base
with the view's region replaced"; its backward needs the region as positions in the
base, computed here once, from shapes and strides alone (no data), at the write. Meta
tensors have no data to hold the positions: theirs are meta tensors of the same shapes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.core import dtypes as _dt
from ember.core import meta
from ember.core.ops.geometry import shares_elements
from ember.core.tensor import Tensor, make


def element_offsets(shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """Memory offset (in elements) of every element of an array of this geometry."""
    off = np.zeros(shape, np.int64)
    for axis, (n, s) in enumerate(zip(shape, strides)):
        step = np.arange(n, dtype=np.int64) * s
        off += step.reshape((n,) + (1,) * (len(shape) - axis - 1))
    return off


def view_positions(base: Tensor, view: Tensor) -> Tensor:
    """For each element of ``view``, its flat (row-major) position in ``base``."""
    dev = base.device
    if dev.type == "meta":
        return make(meta.empty(view._data.shape, _dt.int64), _dt.int64, dev)
    return make(dev.xp.asarray(_positions(base, view)), _dt.int64, dev)


def _positions(base: Tensor, view: Tensor) -> np.ndarray:
    b, v = base._data, view._data
    item = base.dtype.itemsize
    base_off = element_offsets(b.shape, tuple(s // item for s in b.strides)).ravel()
    view_off = element_offsets(v.shape, tuple(s // item for s in v.strides)) + (
        view.storage_offset() - base.storage_offset())
    order = np.argsort(base_off, kind="stable")
    return order[np.searchsorted(base_off[order], view_off)]  # type: ignore[no-any-return]


def region_index(base: Tensor, view: Tensor) -> dict[str, Any]:
    """``index``: ``view_positions``; ``mask``: True at the positions of ``base`` the view
    covers; ``shared``: whether elements of the view share memory through an expanded dim
    (torch's backward, which writes the gradient's region through the view, refuses it)."""
    b = base._data
    dev = base.device
    shared = shares_elements(view._data.shape, view._data.strides)
    if dev.type == "meta":
        return {"index": view_positions(base, view),
                "mask": make(meta.empty(b.shape, _dt.bool), _dt.bool, dev), "shared": shared}
    flat = _positions(base, view)
    mask = np.zeros(b.size, np.bool_)
    mask[flat.ravel()] = True
    xp = dev.xp
    return {"index": make(xp.asarray(flat), _dt.int64, dev),
            "mask": make(xp.asarray(mask.reshape(b.shape)), _dt.bool, dev), "shared": shared}
