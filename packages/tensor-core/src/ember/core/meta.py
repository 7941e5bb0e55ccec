"""The meta device: tensors with shape, dtype and strides and no data, and the rules that
compute an op's outputs from its operands' metadata alone.

A meta tensor's backend array is a ``MetaArray``: shape, numpy dtype, byte strides and a
byte offset into a storage that does not exist. An op's meta rule is its kernel for the
meta device: it takes the operands as they come (MetaArrays, and numpy arrays or Python
numbers where a host value joins in) and returns MetaArrays with the shape, dtype and
strides torch's meta tensors have. It never evaluates the op. Ops whose output shape
depends on values (``nonzero``, ``unique``...) are registered with ``DYNAMIC`` (their empty
results row-major) or ``DYNAMIC_COLUMN_MAJOR``: on meta tensors they raise
NotImplementedError, as torch's do.

Stride rules follow torch: elementwise results take the layout TensorIterator gives them
(``elementwise_strides``), copies of one tensor keep its layout (``like_strides``, torch's
``empty_like`` with ``preserve_format``), and the rest are row-major.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import dtypes as _dt

__all__ = ["MetaArray", "empty", "strided", "like", "like_input", "contiguous_strides",
           "elementwise_strides", "like_strides", "is_contiguous",
           "is_non_overlapping_and_dense", "elementwise", "power", "reduction", "DYNAMIC",
           "DYNAMIC_COLUMN_MAJOR", "DYNAMIC_RULES", "dynamic_rule", "result_dtype"]

DYNAMIC = "dynamic"
# nonzero's and argwhere's: torch fills a transposed (ndim, count) block, so the (count,
# ndim) result has strides (1, count), (1, 0) when empty
DYNAMIC_COLUMN_MAJOR = "dynamic, column-major"
DYNAMIC_RULES = (DYNAMIC, DYNAMIC_COLUMN_MAJOR)


class _Flags:
    __slots__ = ("c_contiguous", "f_contiguous", "writeable")

    def __init__(self, c: bool, f: bool):
        self.c_contiguous = c
        self.f_contiguous = f
        self.writeable = True


class MetaArray:
    """The array of a meta tensor: what numpy would report of it, without memory."""

    __slots__ = ("shape", "dtype", "strides", "offset", "_flags")

    def __init__(self, shape: Sequence[int], dtype: Any, strides: Sequence[int] | None = None,
                 offset: int = 0):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        item = self.dtype.itemsize
        self.strides = (tuple(s * item for s in contiguous_strides(self.shape)) if strides is None
                        else tuple(strides))
        self.offset = offset
        self._flags: _Flags | None = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def flags(self) -> _Flags:
        flags = self._flags
        if flags is None:
            item = self.dtype.itemsize
            elems = tuple(s // item for s in self.strides)
            flags = self._flags = _Flags(
                is_contiguous(self.shape, elems),
                is_contiguous(self.shape[::-1], elems[::-1]))
        return flags

    def element_strides(self) -> tuple[int, ...]:
        item = self.dtype.itemsize
        return tuple(s // item for s in self.strides)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype}, strides={self.strides})"


def _np(dtype: Any) -> np.dtype:
    return dtype.np if isinstance(dtype, _dt.dtype) else np.dtype(dtype)


def empty(shape: Sequence[int], dtype: Any) -> MetaArray:
    """A row-major meta array (``dtype``: an ember or numpy dtype)."""
    return MetaArray(shape, _np(dtype))


def strided(shape: Sequence[int], dtype: Any, strides: Sequence[int], offset: int = 0
            ) -> MetaArray:
    """A meta array with element ``strides`` and element ``offset`` (a view's geometry)."""
    d = _np(dtype)
    item = d.itemsize
    return MetaArray(shape, d, tuple(s * item for s in strides), offset * item)


def element_strides(x: Any) -> tuple[int, ...]:
    """The strides of a numpy, cupy or meta array in elements."""
    item = x.dtype.itemsize
    return tuple(s // item for s in x.strides)


def like(x: Any, dtype: Any = None, shape: Sequence[int] | None = None) -> MetaArray:
    """A fresh array laid out like ``x`` (torch's ``empty_like(x, preserve_format)``)."""
    d = x.dtype if dtype is None else _np(dtype)
    if shape is not None and tuple(shape) != tuple(x.shape):
        return MetaArray(shape, d)
    return strided(x.shape, d, like_strides(x.shape, element_strides(x)))


# ---------------------------------------------------------------------- strides

def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major element strides as torch computes them (a size-0 dim counts as 1)."""
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * max(shape[i + 1], 1)
    return tuple(strides)


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """torch's ``is_contiguous``: row-major, size-1 dims ignored, empty tensors always."""
    if 0 in shape:
        return True
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def same_layout(shape: Sequence[int], a: Sequence[int], b: Sequence[int]) -> bool:
    """Whether element strides ``a`` and ``b`` lay ``shape`` out alike (size-1 dims, whose
    strides address nothing, aside; any strides of an empty shape alike)."""
    if 0 in shape:
        return True
    return all(n == 1 or x == y for n, x, y in zip(shape, a, b))


def is_channels_last(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """torch's channels-last contiguity of a 4-d tensor (C fastest, then W, H, N)."""
    if len(shape) != 4 or 0 in shape:
        return False
    expected = 1
    for d in (1, 3, 2, 0):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def channels_last_strides(shape: Sequence[int]) -> tuple[int, ...]:
    n, c, h, w = shape
    c1, w1, h1 = max(c, 1), max(w, 1), max(h, 1)
    return (h1 * w1 * c1, 1, w1 * c1, c1)


def is_non_overlapping_and_dense(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """torch's test: the elements tile a block of memory exactly, in some dim order."""
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    order = sorted(range(len(shape)), key=lambda d: (shape[d] < 2, strides[d]))
    expected = 1
    for d in order:
        if shape[d] < 2:
            return True
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def like_strides(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, ...]:
    """The strides of ``empty_like(x, preserve_format)``: ``x``'s own when it is dense and
    non-overlapping (an empty tensor counts as contiguous), else dense strides in the
    order of ``x``'s (torch's ``infer_dense_strides``)."""
    if is_contiguous(shape, strides) or is_channels_last(shape, strides) or \
            is_non_overlapping_and_dense(shape, strides):
        return tuple(strides)
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))

    def should_swap(d0: int, d1: int) -> int:
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    _insertion_sort(perm, should_swap)
    out = [0] * ndim
    step = 1
    for d in perm:
        out[d] = step
        if shape[d] > 1:
            step *= shape[d]
    return tuple(out)


def _insertion_sort(perm: list[int], should_swap: Callable[[int, int], int]) -> None:
    """TensorIterator's insertion sort, which stops at the first decided comparison."""
    for i in range(1, len(perm)):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            c = should_swap(perm[dim0], perm[dim1])
            if c > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif c < 0:
                break


def elementwise_strides(shape: Sequence[int], operands: Sequence[Any]) -> tuple[int, ...]:
    """The element strides of an elementwise result of ``shape`` computed from ``operands``
    (arrays; numbers count as broadcast scalars), as torch's TensorIterator lays it out:
    row-major (or channels-last) when every operand is, the operands' common strides
    when they are dense alike, else the operands' dim order."""
    ndim = len(shape)
    shape = tuple(shape)
    present = [o for o in operands if o is not None]
    arrays = [o for o in present if hasattr(o, "strides")]
    if ndim == 0:
        return ()
    geometry = [(tuple(a.shape), element_strides(a), a.dtype.itemsize) for a in arrays]
    if geometry and len(geometry) == len(present) and all(g[0] == shape for g in geometry):
        if all(is_contiguous(shape, s) for _, s, _ in geometry):
            return contiguous_strides(shape)
        if all(is_channels_last(shape, s) for _, s, _ in geometry):
            return channels_last_strides(shape)
        first = geometry[0][1]
        if all(is_non_overlapping_and_dense(shape, s) for _, s, _ in geometry) and all(
                s == first for _, s, _ in geometry):
            return first
    if ndim == 1:
        return (1,)
    # byte strides of each operand over the broadcast shape (0 where it is broadcast)
    strides_bytes = []
    for op_shape, op_strides, item in geometry:
        lead = ndim - len(op_shape)
        row = [0] * ndim
        for i, (n, s) in enumerate(zip(op_shape, op_strides)):
            row[lead + i] = 0 if n == 1 and shape[lead + i] != 1 else s * item
        strides_bytes.append(row)

    def should_swap(d0: int, d1: int) -> int:
        for row in strides_bytes:
            s0, s1 = row[d0], row[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(ndim - 1, -1, -1))  # fastest-moving dim first
    _insertion_sort(perm, should_swap)
    out = [0] * ndim
    step = 1
    for d in perm:
        out[d] = step
        step *= shape[d]
    return tuple(out)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*shapes))


# ---------------------------------------------------------------------- rules

class _DtypeView:
    """What ``dtypes.result_type`` reads of an operand: its dtype and dimensionality."""

    __slots__ = ("dtype", "ndim", "_data")

    def __init__(self, x: Any):
        self.dtype = _dt.from_numpy_dtype(x.dtype)
        self.ndim = len(x.shape)
        self._data = None


def result_dtype(*operands: Any) -> _dt.dtype:
    """torch's result dtype of arrays and Python numbers."""
    return _dt.result_type(*[_DtypeView(o) if hasattr(o, "dtype") else o for o in operands
                             if o is not None])


def like_input(x: Any, *operands: Any, **params: Any) -> MetaArray:
    """The rule of an op whose result is made with ``empty_like(x)``: laid out like ``x``."""
    return like(x)


def elementwise(result: str) -> Callable[..., MetaArray]:
    """The rule of a broadcasting elementwise primitive whose operands arrive promoted:
    ``result`` 'promote' (the operands' dtype), 'float' (integers give the default float),
    'bool' or 'real' (complex gives its real dtype)."""

    def rule(*operands: Any, **params: Any) -> MetaArray:
        arrays = [o for o in operands if hasattr(o, "strides")]
        shape = broadcast_shapes(*[a.shape for a in arrays])
        dt = result_dtype(*operands)
        if result == "float" and dt.category < 2:
            dt = _dt.get_default_dtype()
        elif result == "bool":
            dt = _dt.bool
        elif result == "real" and dt.category == 3:
            dt = dt.to_real()
        return strided(shape, dt, elementwise_strides(shape, operands))

    ITERATOR_RULES.add(rule)
    return rule


# the rules that lay results out as TensorIterator does, nothing else (``elementwise``'s)
ITERATOR_RULES: set[Callable[..., Any]] = set()


def power(result: str = "promote") -> Callable[..., MetaArray]:
    """The rule of ``pow``: elementwise, but torch's CPU kernel lays out a Python number's
    power of a tensor row-major (``pow(Scalar, Tensor)`` allocates its result so; torch's
    own meta registration follows the tensor instead)."""
    rule = elementwise(result)

    def power_rule(base: Any, exponent: Any, **params: Any) -> MetaArray:
        out = rule(base, exponent, **params)
        return out if hasattr(base, "strides") else MetaArray(out.shape, out.dtype)

    return power_rule


def reduced_shape(shape: Sequence[int], dim: Any, keepdim: bool) -> tuple[int, ...]:
    """The shape left by reducing ``dim`` (None: every dim; an int or a tuple of
    non-negative dims) with or without ``keepdim``."""
    if dim is None:
        dims: Any = range(len(shape))
    else:
        dims = (dim,) if isinstance(dim, int) else dim
    return tuple(1 if i in dims else n for i, n in enumerate(shape)
                 if keepdim or i not in dims)


def reduction(result: str = "same") -> Callable[..., MetaArray]:
    """The rule of a reduction over ``dim`` with ``keepdim`` (row-major result, as torch's):
    ``result`` 'same', 'sum' (bool and integers give int64), 'float', 'bool' or 'index'
    (int64); an explicit ``dtype`` param wins."""

    def rule(x: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None,
             **params: Any) -> MetaArray:
        shape = reduced_shape(x.shape, dim, keepdim)
        if dtype is not None:
            return empty(shape, dtype)
        dt = _dt.from_numpy_dtype(x.dtype)
        if result == "sum" and dt.category < 2:
            dt = _dt.int64
        elif result == "float" and dt.category < 2:
            dt = _dt.get_default_dtype()
        elif result == "bool":
            dt = _dt.bool
        elif result == "index":
            dt = _dt.int64
        return empty(shape, dt)

    return rule


def dynamic_rule(name: str) -> Callable[..., Any]:
    """The meta rule of an op whose output shape depends on its operands' values."""

    def rule(*operands: Any, **params: Any) -> Any:
        raise NotImplementedError(
            f"{name}: the output shape depends on the input values, so it cannot be computed "
            "for meta tensors (no data-independent shape rule exists)")

    return rule

