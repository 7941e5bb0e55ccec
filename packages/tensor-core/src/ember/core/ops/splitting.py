"""Splitting: ``split``, ``tensor_split``, ``chunk``, ``unbind``, ``hsplit``, ``vsplit``...

Every piece is a view of the input (as in torch): in-place writes through it change
the base. The primitives return a tuple of views.

Primitives (operand ``self``) and their params:

    split               dim, sizes (each piece's size along dim)
    unbind              dim
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from .. import dtypes as _dt
from ..dispatch import dispatch, register
from ..dtypes import scalar_type_name
from ..meta import MetaArray
from ..tensor import Tensor, wrap_dim
from .geometry import int_tuple
from .strided import narrow


def _split(x: Any, *, dim: int, sizes: Sequence[int]) -> tuple[Any, ...]:
    lead = (slice(None),) * dim
    out = []
    start = 0
    for s in sizes:
        out.append(x[lead + (slice(start, start + s),)])
        start += s
    return tuple(out)


def _split_meta(x: MetaArray, *, dim: int, sizes: Sequence[int]) -> tuple[MetaArray, ...]:
    out = []
    start = 0
    for s in sizes:
        out.append(MetaArray(x.shape[:dim] + (s,) + x.shape[dim + 1:], x.dtype, x.strides,
                             x.offset + start * x.strides[dim]))
        start += s
    return tuple(out)


def _unbind(x: Any, *, dim: int) -> tuple[Any, ...]:
    if dim == 0 and x.ndim > 1:
        return tuple(x)
    lead = (slice(None),) * dim
    # The trailing Ellipsis keeps 0-d results arrays (views), not numpy scalars.
    return tuple(x[lead + (i, Ellipsis)] for i in range(x.shape[dim]))


def _unbind_meta(x: MetaArray, *, dim: int) -> tuple[MetaArray, ...]:
    shape, strides = x.shape[:dim] + x.shape[dim + 1:], x.strides[:dim] + x.strides[dim + 1:]
    step = x.strides[dim]
    return tuple(MetaArray(shape, x.dtype, strides, x.offset + i * step)
                 for i in range(x.shape[dim]))


SPLIT = register("split", _split, _split_meta, "view", view=True, arg_names=("self",))
UNBIND = register("unbind", _unbind, _unbind_meta, "view", view=True, arg_names=("self",))


def _split_views(input: Tensor, d: int, sizes: Sequence[int]) -> tuple[Tensor, ...]:
    return dispatch(SPLIT, (input,), {"dim": d, "sizes": tuple(sizes)})


def _split_dim(input: Tensor, dim: int, op: str) -> tuple[int, int]:
    n = input._data.ndim
    if n == 0:
        raise RuntimeError(f"{op} expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, n, op)
    return d, input._data.shape[d]


def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """torch.split: views of pieces of ``split_size`` (the last may be smaller) or of the
    given list of sizes along ``dim``."""
    d, size = _split_dim(tensor, dim, "split")
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = list(int_tuple((split_size_or_sections,), "split", "split_size"))
        if any(s < 0 for s in sizes):
            raise RuntimeError("split_with_sizes expects split_sizes have only non-negative "
                               f"entries, but got split_sizes={sizes}")
        if sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={sizes}")
        return _split_views(tensor, d, sizes)
    step = operator.index(split_size_or_sections)
    if step < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
    if step == 0 and size != 0:
        raise RuntimeError("split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {size}")
    count = max(-(-size // step), 1) if step else 1
    return _split_views(tensor, d, [step] * (count - 1) + [size - step * (count - 1)])


def _split_method(self: Tensor, split_size: Any, dim: int = 0) -> tuple[Tensor, ...]:
    return split(self, split_size, dim)


def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """torch.tensor_split: ``sections`` near-equal views, or views between ``indices``."""
    n = input._data.ndim
    if n == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = wrap_dim(dim, n, "tensor_split")
    size = input._data.shape[d]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec.dtype is not _dt.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of "
                               f"long, but got {scalar_type_name(spec.dtype)}")
        if spec._data.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor with "
                               f"{spec._data.ndim} dims")
        spec = spec.item() if spec._data.ndim == 0 else spec.tolist()
    if not isinstance(spec, (list, tuple)):
        sections = operator.index(spec)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        base, extra = divmod(size, sections)
        return _split_views(input, d, [base + 1] * extra + [base] * (sections - extra))
    bounds = []
    start = 0
    for idx in list(int_tuple((spec,), "tensor_split", "indices")) + [size]:
        lo = min(max(start + size if start < 0 else start, 0), size)
        hi = min(max(idx + size if idx < 0 else idx, lo), size)
        bounds.append((lo, hi))
        start = idx
    if all(a[1] == b[0] for a, b in zip(bounds, bounds[1:])):
        return _split_views(input, d, [hi - lo for lo, hi in bounds])
    # Decreasing indices give overlapping pieces: each is its own narrow.
    return tuple(narrow(input, d, lo, hi - lo) for lo, hi in bounds)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """torch.chunk: at most ``chunks`` views of equal size (the last may be smaller)."""
    d, size = _split_dim(input, dim, "chunk")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    step = -(-size // chunks)
    if step == 0:
        return _split_views(input, d, [0] * chunks)
    return split(input, step, d)


def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """torch.unbind: the views ``input.select(dim, i)`` for every i."""
    n = input._data.ndim
    if n == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return dispatch(UNBIND, (input,), {"dim": wrap_dim(dim, n, "unbind")})


def _directional_split(name: str, dim_of: Callable[[int], int], min_dims: int, where: str
                       ) -> Callable[..., tuple[Tensor, ...]]:
    def fn(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
        n = input._data.ndim
        if n < min_dims:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} "
                               f"dimension, but got a tensor with {n} dimensions!")
        d = dim_of(n)
        sections = indices_or_sections
        if isinstance(sections, int) and sections > 0 and input._data.shape[d] % sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the "
                               f"size of the dimension {input._data.shape[d]} is not divisible by "
                               f"the split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"torch.{name}: ``tensor_split`` along {where}; a number of sections must "
                  "divide that dim.")
    return fn


hsplit = _directional_split("hsplit", lambda n: 0 if n == 1 else 1, 1,
                            "dim 1 (dim 0 of a 1-D tensor)")
vsplit = _directional_split("vsplit", lambda n: 0, 2, "dim 0")
dsplit = _directional_split("dsplit", lambda n: 2, 3, "dim 2")


FUNCTIONS: list[str] = [
    "split", "tensor_split", "chunk", "unbind", "hsplit", "vsplit", "dsplit",
]

METHODS: dict[str, Any] = {
    "split": _split_method, "tensor_split": tensor_split, "chunk": chunk, "unbind": unbind,
    "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit,
}
