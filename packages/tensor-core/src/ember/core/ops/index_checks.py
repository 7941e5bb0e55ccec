"""Checks every indexing op shares: index tensors, bounds, fill values, along-dim indices.

The wrappers' checks read metadata only (dtypes, shapes, devices); the bounds checks read
index values, so they run in the kernels (``check_bounds``), before anything is written.
Messages follow torch's (same exception type, the op named first).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..device import device, xp_of
from ..dtypes import scalar_type_name
from ..tensor import Tensor
from .conversion import cast
from .operands import checked_scalar, device_mismatch

LONG = (_dt.int64,)
INT_OR_LONG = (_dt.int32, _dt.int64)

_NUMBERS = (bool, int, float, complex)
_INF = float("inf")


def fill_number(op: str, value: Any, dt: _dt.dtype, check_half: bool = True) -> Any:
    """A Python number (or numpy scalar) converted for ``dt`` as torch converts a Scalar.

    A value outside ``dt``'s range, a NaN or inf for an integer dtype, or a complex value
    with an imaginary part for a real dtype is a RuntimeError; negative integers wrap for
    uint8, floats truncate for integers (``checked_scalar``). ``check_half=False``:
    float16/bfloat16 overflow to inf instead (torch's setitem).
    """
    if isinstance(value, np.generic):
        value = value.item()
    if value.__class__ not in _NUMBERS:
        raise TypeError(f"{op}(): value must be a Number or a 0-dim Tensor, "
                        f"not {type(value).__name__}")
    try:
        return checked_scalar(value, dt)
    except RuntimeError:
        # torch's setitem rounds float16/bfloat16 fills unchecked: too large becomes inf
        if check_half or dt.category != 2 or dt.itemsize > 2 or value.imag != 0:
            raise
        return -_INF if value.real < 0 else _INF


def fill_operand(op: str, value: Any, input: Tensor) -> Any:
    """A fill value as an operand: a 0-d tensor in input's dtype on its device (in the
    graph, as torch's ``.Tensor`` overloads), or a number checked for input's dtype. torch
    fills with a tensor's ``item()``: its value is checked as a number's is (a meta tensor
    has none)."""
    if not isinstance(value, Tensor):
        return fill_number(op, value, input.dtype)
    if value._data.ndim:
        raise RuntimeError(f"{op}(): only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")
    if value.dtype is not input.dtype and value.device.type != "meta":
        fill_number(op, value.item(), input.dtype)
    return cast(value, input.dtype, input.device)


def written_value(x: Any, value: Any) -> Any:
    """A value a kernel writes into ``x``: an array, or a Python number as a 0-d array of
    x's dtype (the wrapper checked that it fits)."""
    return value if hasattr(value, "ndim") else xp_of(x).asarray(value, x.dtype)


def index_tensor(op: str, index: Any, allowed: tuple[_dt.dtype, ...], message: str,
                 dev: device, exc: type[Exception] = RuntimeError, arg: str = "index"
                 ) -> Tensor:
    """An index Tensor after torch's type, dtype and device checks.

    ``message`` is torch's dtype error; ``{got}`` in it becomes the index's C++ type name.
    """
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be Tensor, not {type(index).__name__}")
    if index.dtype not in allowed:
        raise exc(message.format(got=scalar_type_name(index.dtype)))
    if index.device is not dev:
        raise device_mismatch(op, dev, index.device)
    return index


def min_max(idx: Any) -> tuple[int, int]:
    """Smallest and largest index (not empty); NumPy's reductions cost more on tiny arrays."""
    if idx.size <= 64:
        values = idx.ravel().tolist()
        return min(values), max(values)
    return int(idx.min()), int(idx.max())


def first_outside(idx: Any, low: int, high: int) -> int | None:
    """The first index outside ``[low, high)`` in row-major order, or None."""
    if idx.size == 0:
        return None
    smallest, largest = min_max(idx)
    if smallest >= low and largest < high:
        return None
    flat = idx.reshape(-1)
    return int(flat[((flat < low) | (flat >= high)).nonzero()[0][0]])


def check_bounds(op: str, idx: Any, size: int, dim: int, negative: bool,
                 exc: type[Exception] = RuntimeError) -> None:
    """Every index in ``[0, size)`` (``[-size, size)`` when ``negative``), else torch's error
    (a kernel's check: it reads the index values)."""
    bad = first_outside(idx, -size if negative else 0, size)
    if bad is not None:
        raise exc(f"{op}(): index {bad} is out of bounds for dimension {dim} with size {size}")


def check_along_sizes(op: str, x: Tensor, index: Tensor, dim: int, src: Tensor | None = None
                     ) -> None:
    """index must have x's ndim and be no larger than x (except along dim) and than src."""
    nd = max(x._data.ndim, 1)
    ind = max(index._data.ndim, 1)
    if ind != nd:
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as "
                           f"input tensor ({nd}), got {ind}")
    if src is not None and max(src._data.ndim, 1) != nd:
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as "
                           f"src tensor ({max(src._data.ndim, 1)}), got {nd}")
    ishape = index._data.shape or (1,)
    xshape = x._data.shape or (1,)
    sshape = None if src is None else (src._data.shape or (1,))
    for d, n in enumerate(ishape):
        if (d != dim and n > xshape[d]) or (sshape is not None and n > sshape[d]):
            extra = "" if sshape is None else f" and to be no larger than src {list(sshape)}"
            raise RuntimeError(f"{op}(): Expected index {list(ishape)} to be no larger than self "
                               f"{list(xshape)} apart from dimension {dim}{extra}")


def check_vector_index(op: str, index: Tensor) -> None:
    """An index of ``index_*``: a vector (or a scalar)."""
    nd = index._data.ndim
    if nd > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector, but got dim: {nd} "
                         f"with type: {scalar_type_name(index.dtype)} and size: "
                         f"{list(index._data.shape)}")


def no_dimensions(op: str, d: int) -> IndexError:
    """torch's error for the size of dim ``d`` of a 0-d tensor."""
    return IndexError(f"{op}(): Dimension specified as {d} but tensor has no dimensions")


def _without_dim(shape: tuple[int, ...], d: int) -> list[int]:
    return [n for i, n in enumerate(shape) if i != d]


def check_index_add(op: str, input: Tensor, d: int, index: Any, source: Any) -> Tensor:
    """The checks of index_add (torch's ``index_func_meta_impl``), in torch's order: the
    index's rank, its dtype, source's dtype, ``d`` against source's rank, the index count
    against ``source.size(d)``, then the shapes; returns the index."""
    idx = tensor_arg(op, index, "index")
    tensor_arg(op, source, "source")
    check_vector_index(op, idx)
    index_tensor(op, idx, INT_OR_LONG, f"{op}(): Expected dtype int32/int64 for index but "
                 "got: {got}", input.device)
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{op}(): self ({scalar_type_name(input.dtype)}) and source "
                           f"({scalar_type_name(source.dtype)}) must have the same scalar type")
    if source.device is not input.device:
        raise device_mismatch(op, input.device, source.device)
    ss, xs = source._data.shape, input._data.shape
    if d != 0 and d >= len(ss):
        raise RuntimeError(f"{op}(): Indexing dim {d} is out of bounds of the source tensor "
                           f"with dim {len(ss)}")
    n = idx._data.size
    if n != (ss[d] if ss else 1):
        if not ss:  # torch's message reads source.size(d) of the 0-d source
            raise no_dimensions(op, d)
        raise RuntimeError(f"{op}(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({ss[d]}), for dim: {d}")
    both = bool(ss) and bool(xs)
    if (_without_dim(xs, d) if both else list(xs)) != (_without_dim(ss, d) if both
                                                        else list(ss)):
        raise RuntimeError(f"{op}(): source tensor shape must match self tensor shape, "
                           f"excluding the specified dimension. Got self.shape = {list(xs)} "
                           f"source.shape = {list(ss)}")
    return idx


def check_index_copy(op: str, input: Tensor, d: int, index: Any, source: Any) -> Tensor:
    """The checks of index_copy (torch's meta function), in torch's order: the index's
    rank, its count against a 0-d source (or the ranks), the index's dtype, source's dtype,
    the slice shapes, then the count against ``source.size(d)``; returns the index."""
    idx = tensor_arg(op, index, "index")
    tensor_arg(op, source, "source")
    if idx._data.ndim > 1:
        raise IndexError(f"{op}(): Index should have dimension 1 or 0 (got {idx._data.ndim})")
    ss, xs = source._data.shape, input._data.shape
    n = idx._data.size
    if not ss and n != 1:
        raise IndexError(f"{op}(): When source is scalar, index should have one element "
                         f"(got {n})")
    if ss and xs and len(ss) != len(xs):
        raise IndexError(f"{op}(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({len(ss)}), "
                         f"destination dimensionality ({len(xs)})")
    index_tensor(op, idx, LONG, f"{op}(): Expected a long tensor for index, but got {{got}}",
                 input.device)
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{op}(): self and source expected to have the same dtype, but got "
                           f"(self) {scalar_type_name(input.dtype)} and (source) "
                           f"{scalar_type_name(source.dtype)}")
    if source.device is not input.device:
        raise device_mismatch(op, input.device, source.device)
    xsl = _without_dim(xs, d) if xs else []
    ssl = _without_dim(ss, d) if ss else []
    if xsl != ssl:
        raise RuntimeError(f"{op}(): Source/destination tensor must have same slice shapes. "
                           f"Destination slice shape: {' '.join(map(str, xsl))} at dimension "
                           f"{d} and source slice shape: {' '.join(map(str, ssl))} at "
                           "dimension 0.")
    if ss and n != ss[d]:
        raise IndexError(f"{op}(): Number of indices ({n}) should be equal to source.size(dim) "
                         f"({ss[d]})")
    return idx


def check_index_select(op: str, input: Tensor, index: Any) -> Tensor:
    """The checks of index_select, in torch's order: the index's rank, its count for a 0-d
    input, then its dtype; returns the index."""
    idx = tensor_arg(op, index, "index")
    if idx._data.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    n = idx._data.size
    if input._data.ndim == 0 and n != 1:
        raise RuntimeError(f"{op}(): Index to scalar can have only 1 value, got {n} value(s)")
    return index_tensor(op, idx, INT_OR_LONG, f"{op}(): Expected dtype int32 or int64 for "
                        "index", input.device)


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
    xp = xp_of(index)
    return tuple(index if d == dim else xp.arange(n).reshape((n,) + (1,) * (nd - 1 - d))
                 for d, n in enumerate(shape))


def ufunc_at(name: str, out: Any, where: tuple[Any, ...], src: Any) -> None:
    """``out[where] = name(out[where], src)`` unbuffered: repeated positions combine in turn.

    ``where`` holds integer arrays broadcasting together and with ``src``; ``out`` is
    row-major. Products are applied in rounds of distinct positions, in the order the
    positions repeat (CuPy's ufuncs have no ``multiply.at``); the others use ``ufunc.at``.
    """
    xp = xp_of(out)
    if name != "multiply":
        getattr(xp, name).at(out, where, src)
        return
    shape = np.broadcast_shapes(*(w.shape for w in where), np.shape(src))
    flat = xp.ravel_multi_index(tuple(xp.broadcast_to(w, shape).ravel() for w in where),
                                out.shape)
    values = xp.broadcast_to(src, shape).ravel()
    order = xp.argsort(flat, kind="stable")
    flat, values = flat[order], values[order]
    rank = xp.arange(flat.size) - xp.searchsorted(flat, flat)  # position among its repeats
    target = out.reshape(-1)  # a view: out is row-major
    for r in range(int(rank.max()) + 1 if flat.size else 0):
        pick = rank == r
        target[flat[pick]] *= values[pick]
