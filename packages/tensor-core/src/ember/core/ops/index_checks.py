"""Checks every indexing op shares: index tensors, bounds, fill values, along-dim indices.

Messages follow torch's (same exception type, the op named first).
"""

from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import array_module, device
from ..dtypes import scalar_type_name
from ..tensor import Tensor
from .operands import checked_scalar, device_mismatch

LONG = (_dt.int64,)
INT_OR_LONG = (_dt.int32, _dt.int64)

_NUMBERS = (bool, int, float, complex)
_INF = float("inf")


def xp_of(arr: Any) -> Any:
    """The array module of a backend array (numpy, or cupy for device arrays)."""
    if isinstance(arr, np.ndarray):
        return np
    return array_module(device("cuda"))


def fill_value(op: str, value: Any, dt: _dt.dtype, dev: Any, check_half: bool = True
               ) -> Any:
    """A Python number (or 0-d tensor, or numpy scalar) as a 0-d array of ``dt`` on ``dev``.

    Checked like torch's scalar conversion: a value outside ``dt``'s range, a NaN or inf
    for an integer dtype, or a complex value with an imaginary part for a real dtype is a
    RuntimeError. Negative integers down to -255 wrap for uint8, as in torch.
    ``check_half=False``: float16/bfloat16 overflow to inf instead (torch's setitem).
    """
    arr = _host_fill_value(op, value, dt, check_half)
    return arr if dev.type == "cpu" else dev.xp.asarray(arr)


def _host_fill_value(op: str, value: Any, dt: _dt.dtype, check_half: bool) -> np.ndarray:
    if isinstance(value, Tensor):
        value = value.item()
    elif isinstance(value, np.generic):
        value = value.item()
    if value.__class__ not in _NUMBERS:
        raise TypeError(f"{op}(): value must be a Number or a 0-dim Tensor, "
                        f"not {type(value).__name__}")
    try:
        return np.array(checked_scalar(value, dt), dt.np)
    except RuntimeError:
        # torch's setitem rounds float16/bfloat16 fills unchecked: too large becomes inf
        if check_half or dt.category != 2 or dt.itemsize > 2 or value.imag != 0:
            raise
        return np.array(-_INF if value.real < 0 else _INF, dt.np)


def index_data(op: str, index: Any, allowed: tuple[_dt.dtype, ...], message: str,
               dev: Any, exc: type[Exception] = RuntimeError, arg: str = "index") -> Any:
    """The backend array of an index Tensor, after torch's type and dtype checks.

    ``message`` is torch's dtype error; ``{got}`` in it becomes the index's C++ type name.
    """
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be Tensor, not {type(index).__name__}")
    if index.dtype not in allowed:
        raise exc(message.format(got=scalar_type_name(index.dtype)))
    if index.device is not dev:
        raise device_mismatch(op, dev, index.device)
    return index._data


def min_max(idx: Any) -> tuple[int, int]:
    """Smallest and largest index (not empty); NumPy's reductions cost more on tiny arrays."""
    if idx.size <= 64:
        values = idx.ravel().tolist()
        return min(values), max(values)
    return int(idx.min()), int(idx.max())


def check_bounds(op: str, idx: Any, size: int, dim: int, negative: bool,
                 exc: type[Exception] = RuntimeError) -> None:
    """Every index in ``[0, size)`` (``[-size, size)`` when ``negative``), else torch's error."""
    if idx.size == 0:
        return
    low = -size if negative else 0
    smallest, largest = min_max(idx)
    if smallest >= low and largest < size:
        return
    flat = idx.reshape(-1)
    bad = int(flat[((flat < low) | (flat >= size)).nonzero()[0][0]])
    raise exc(f"{op}(): index {bad} is out of bounds for dimension {dim} with size {size}")


def same_dtype(op: str, self: Tensor, other: Tensor, what: str = "src") -> None:
    """torch's scatter family takes no promotion: ``other`` must have self's dtype."""
    if other.dtype is not self.dtype:
        raise RuntimeError(f"{op}(): Expected self.dtype to be equal to {what}.dtype, got "
                           f"{scalar_type_name(self.dtype)} and {scalar_type_name(other.dtype)}")


def tensor_arg(op: str, value: Any, arg: str) -> Tensor:
    """``value``, which must be a Tensor (torch's TypeError naming the argument otherwise)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be Tensor, not {type(value).__name__}")
    return value


def as_dim(dim: Any) -> int:
    """A dim argument as an int (ints, numpy ints, 0-d integer tensors)."""
    return operator.index(dim)


def at_least_1d(a: Any) -> Any:
    """torch's dim-wise ops read a 0-d tensor as 1-D of size 1."""
    return a.reshape(1) if a.ndim == 0 else a


def along(index: Any, dim: int) -> tuple[Any, ...]:
    """The full index tuple that ``index`` along ``dim`` stands for (put_along_axis's)."""
    shape = index.shape
    nd = len(shape)
    numpy = isinstance(index, np.ndarray)
    out = []
    for d, n in enumerate(shape):
        if d == dim:
            out.append(index)
        else:
            ar = _arange(n) if numpy else xp_of(index).arange(n)
            out.append(ar.reshape((n,) + (1,) * (nd - 1 - d)))
    return tuple(out)


def ufunc_at(name: str, out: Any, where: tuple[Any, ...], src: Any) -> None:
    """``out[where] = name(out[where], src)`` unbuffered: repeated positions combine in turn.

    ``where`` holds integer arrays broadcasting together and with ``src``. NumPy has
    ``ufunc.at`` for all of them; CuPy for add/maximum/minimum, so a product there is
    applied in rounds of distinct positions.
    """
    xp = xp_of(out)
    if xp is np or name != "multiply":
        getattr(xp, name).at(out, where, src)
        return
    shape = np.broadcast_shapes(*(w.shape for w in where), src.shape)
    flat = xp.ravel_multi_index(tuple(xp.broadcast_to(w, shape).ravel() for w in where),
                                out.shape)
    values = xp.broadcast_to(src, shape).ravel()
    order = xp.argsort(flat)
    flat, values = flat[order], values[order]
    rank = xp.arange(flat.size) - xp.searchsorted(flat, flat)  # position among its repeats
    target = out.reshape(-1)  # out is a fresh contiguous copy: this is a view
    for r in range(int(rank.max()) + 1 if flat.size else 0):
        pick = rank == r
        target[flat[pick]] *= values[pick]


@functools.lru_cache(maxsize=256)
def _arange(n: int) -> np.ndarray:
    ar = np.arange(n)
    ar.flags.writeable = False  # shared between calls
    return ar


def like_input(x: Any, *operands: Any, **params: Any) -> meta.Spec:
    return meta.Spec(tuple(x.shape), x.dtype)


def like_index(x: Any, *operands: Any, index: Any, **params: Any) -> meta.Spec:
    return meta.Spec(tuple(index.shape), x.dtype)
