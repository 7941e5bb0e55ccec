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
from ember.core.tensor import Tensor, make


def element_offsets(shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """Memory offset (in elements) of every element of an array of this geometry."""
    off = np.zeros(shape, np.int64)
    for axis, (n, s) in enumerate(zip(shape, strides)):
        step = np.arange(n, dtype=np.int64) * s
        off += step.reshape((n,) + (1,) * (len(shape) - axis - 1))
    return off


def region_index(base: Tensor, view: Tensor) -> dict[str, Any]:
    """``index``: for each element of ``view``, its flat (row-major) position in ``base``;
    ``mask``: True at the positions of ``base`` the view covers."""
    b, v = base._data, view._data
    dev = base.device
    if dev.type == "meta":
        return {"index": make(meta.empty(v.shape, _dt.int64), _dt.int64, dev),
                "mask": make(meta.empty(b.shape, _dt.bool), _dt.bool, dev)}
    item = base.dtype.itemsize
    base_off = element_offsets(b.shape, tuple(s // item for s in b.strides)).ravel()
    view_off = element_offsets(v.shape, tuple(s // item for s in v.strides)) + view.storage_offset()
    order = np.argsort(base_off, kind="stable")
    flat = order[np.searchsorted(base_off[order], view_off)]
    mask = np.zeros(b.size, np.bool_)
    mask[flat.ravel()] = True
    xp = dev.xp
    return {"index": make(xp.asarray(flat), _dt.int64, dev),
            "mask": make(xp.asarray(mask.reshape(b.shape)), _dt.bool, dev)}
