"""Joining, splitting and rearranging: ``cat``, ``stack``, ``split``, ``chunk``, ``unbind``,
``repeat``, ``flip``, ``roll``, ``tril``, ``diag_embed``, ``meshgrid``...

Splits return views (as in torch); everything else here returns a new C-contiguous
tensor (``flip`` keeps its input's memory layout, as torch does).

Primitives and the ``params`` they record:

    cat                 dim, sizes (each input's size along dim; 0 for a skipped 1-D empty)
    stack               dim
    split               dim, sizes (outputs: the tuple of views)
    unbind              dim (outputs: the tuple of views)
    repeat              repeats, shape (the input's)
    repeat_interleave   repeats (an int or an integer Tensor), dim
    flip                dims
    roll                shifts, dims (empty: roll the flattened tensor)
    tril, triu          diagonal
    diag_embed          offset, dim1, dim2
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable, Sequence
from functools import reduce
from typing import Any, NoReturn

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import device, xp_of
from ..dispatch import register
from ..tensor import Tensor, make, make_view, wrap_dim
from .conversion import clone
from .inplace import inplace
from .operands import _pretty, device_mismatch, record, write_out
from .shape import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    diagonal_array,
    expand,
    int_tuple,
    narrow,
    reshape,
    restride,
    transpose,
    view,
)
from .shape import diagonal as diagonal_view


def _c_order(arr: Any) -> Any:
    """torch's copies are row-major; numpy keeps its inputs' layout in some of its own."""
    return arr if arr.flags.c_contiguous else arr.copy()


def _promoted_dtype(arrays: Sequence[Any]) -> Any:
    """torch's promotion of the arrays' dtypes (numpy's differs), as a numpy dtype."""
    first = arrays[0].dtype
    if all(a.dtype == first for a in arrays):
        return first
    return reduce(_dt.promote_types, (_dt.from_numpy_dtype(a.dtype) for a in arrays)).np


def _tensor_list(tensors: Any, op: str) -> list[Tensor]:
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    tensors = list(tensors)
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise TypeError(f"{op}(): expected Tensor as element {i} in argument 0, but got "
                            f"{type(x).__name__}")
    return tensors


def _common_device(tensors: list[Tensor], op: str) -> device:
    dev = tensors[0].device
    for x in tensors:
        if x.device != dev:
            raise device_mismatch(op, dev, x.device)
    return dev


def _with_out(op: str, res: Tensor, out: Tensor | None) -> Tensor:
    """cat-like ``out=``: any dtype the result casts to (torch names cat in the error)."""
    if out is None:
        return res
    if isinstance(out, Tensor) and not _dt.can_cast(res.dtype, out.dtype):
        raise TypeError("torch.cat(): input types can't be cast to the desired output type "
                        f"{_pretty(out.dtype)}")
    return write_out(op, out, res)


def _same_dtype_out(out: Tensor, res: Tensor) -> Tensor:
    """``out=`` of ops that take no other dtype than the result's (tril, diag)."""
    if isinstance(out, Tensor) and out.dtype is not res.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {res.dtype.name}, but got "
                           f"{out.dtype.name} instead")
    return write_out("out", out, res)


# ----------------------------------------------------------------------------- cat, stack

def _cat_forward(*arrays: Any, dim: int, sizes: Sequence[int]) -> Any:
    # torch's legacy rule: 1-D empty tensors join any cat (and only count for the dtype).
    dt = _promoted_dtype(arrays)
    promoted = [a.astype(dt, copy=False) for a in arrays]
    kept = [p for a, p in zip(arrays, promoted) if a.shape != (0,)] or promoted[:1]
    return _c_order(np.concatenate(kept, axis=dim))


def _stack_forward(*arrays: Any, dim: int) -> Any:
    # Filling an empty result is several times faster than np.stack on small arrays.
    first = arrays[0]
    dt = _promoted_dtype(arrays)
    shape = first.shape
    out = xp_of(first).empty(shape[:dim] + (len(arrays),) + shape[dim:], dt)
    lead = (slice(None),) * dim
    for i, a in enumerate(arrays):
        out[lead + (i,)] = a
    return out


def _split_forward(x: Any, dim: int, sizes: Sequence[int]) -> tuple[Any, ...]:
    lead = (slice(None),) * dim
    out = []
    start = 0
    for s in sizes:
        out.append(x[lead + (slice(start, start + s),)])
        start += s
    return tuple(out)


def _split_meta(x: meta.Spec, dim: int, sizes: Sequence[int]) -> tuple[meta.Spec, ...]:
    return tuple(meta.Spec(x.shape[:dim] + (s,) + x.shape[dim + 1:], x.dtype) for s in sizes)


def _unbind_forward(x: Any, dim: int) -> tuple[Any, ...]:
    if dim == 0 and x.ndim > 1:
        return tuple(x)
    lead = (slice(None),) * dim
    # The trailing Ellipsis keeps 0-d results arrays (views), not numpy scalars.
    return tuple(x[lead + (i, Ellipsis)] for i in range(x.shape[dim]))


def _unbind_meta(x: meta.Spec, dim: int) -> tuple[meta.Spec, ...]:
    part = meta.Spec(x.shape[:dim] + x.shape[dim + 1:], x.dtype)
    return (part,) * x.shape[dim]


CAT = register("cat", _cat_forward, None, "library")
STACK = register("stack", _stack_forward, None, "library")
SPLIT = register("split", _split_forward, _split_meta, "view")
UNBIND = register("unbind", _unbind_forward, _unbind_meta, "view")


def cat(tensors: Sequence[Tensor], dim: int = 0, *, axis: int | None = None,
        out: Tensor | None = None) -> Tensor:
    """torch.cat: join tensors along an existing dim, promoting their dtypes. 1-D empty
    tensors are skipped whatever the others' shapes (torch's legacy rule)."""
    if axis is not None:
        dim = axis
    if not isinstance(tensors, Tensor):
        try:
            first = tensors[0]
            dt, dev = first.dtype, first.device
            rg = False
            arrays = []
            for x in tensors:
                if x.dtype is not dt or x.device is not dev:
                    raise TypeError  # mixed: the general path promotes or reports
                rg = rg or x._requires_grad
                arrays.append(x._data)
            r = np.concatenate(arrays, axis=dim)
        except Exception:  # the general path re-checks and raises torch's error
            pass
        else:
            res = make(r if r.flags.c_contiguous else r.copy(), dt, dev)
            if rg:
                record(CAT, tuple(tensors), {"dim": dim % r.ndim,
                                             "sizes": [a.shape[dim] for a in arrays]}, res)
            return res if out is None else _with_out("cat", res, out)
    return _cat_general(tensors, dim, out)


def _cat_general(tensors: Any, dim: int, out: Tensor | None) -> Tensor:
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    dev = _common_device(tensors, "cat")
    for i, x in enumerate(tensors):
        if x._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    kept = [x for x in tensors if x._data.shape != (0,)]
    ref = (kept or tensors)[0]._data.shape
    d = wrap_dim(operator.index(dim), len(ref), "cat")
    for i, x in enumerate(tensors):
        shape = x._data.shape
        if shape == (0,):
            continue
        if len(shape) != len(ref):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(ref)} and "
                               f"{len(shape)}")
        for a, (want, got) in enumerate(zip(ref, shape)):
            if a != d and want != got:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected "
                                   f"size {want} but got size {got} for tensor number {i} in the "
                                   "list.")
    sizes = [0 if x._data.shape == (0,) and kept else x._data.shape[d] for x in tensors]
    arr = _cat_forward(*(x._data for x in tensors), dim=d, sizes=sizes)
    res = make(arr, _dt.from_numpy_dtype(arr.dtype), dev)
    if any(x._requires_grad for x in tensors):
        record(CAT, tuple(tensors), {"dim": d, "sizes": sizes}, res)
    return _with_out("cat", res, out)


def stack(tensors: Sequence[Tensor], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """torch.stack: join same-shaped tensors along a new dim ``dim``."""
    if tensors.__class__ is not list and tensors.__class__ is not tuple:
        tensors = _tensor_list(tensors, "stack")
    arrays = []
    rg = False
    try:
        first = tensors[0]
        shape, dev = first._data.shape, first.device
        for x in tensors:
            data = x._data
            if data.shape != shape or x.device is not dev:
                raise ValueError
            rg = rg or x._requires_grad
            arrays.append(data)
    except (IndexError, AttributeError, ValueError):
        _stack_error(tensors)
    d = wrap_dim(dim, len(shape) + 1, "stack")
    arr = _stack_forward(*arrays, dim=d)
    res = make(arr, _dt.from_numpy_dtype(arr.dtype), dev)
    if rg:
        record(STACK, tuple(tensors), {"dim": d}, res)
    return _with_out("stack", res, out)


def _stack_error(tensors: Sequence[Any]) -> NoReturn:
    """Raise torch's error for what stopped stack's fast path."""
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._data.shape
    for i, x in enumerate(tensors):
        if x._data.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} "
                               f"at entry 0 and {list(x._data.shape)} at entry {i}")
    dev = tensors[0].device
    raise device_mismatch("stack", dev, next(x.device for x in tensors if x.device is not dev))


def _nonempty(tensors: Any, op: str) -> list[Tensor]:
    tensors = _tensor_list(tensors, op)
    if not tensors:
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    return tensors


def hstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """torch.hstack: ``cat`` along dim 1 (dim 0 for 1-D tensors), after ``atleast_1d``."""
    parts = atleast_1d(_nonempty(tensors, "hstack"))
    return cat(parts, 0 if parts[0].ndim == 1 else 1, out=out)


def vstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """torch.vstack: ``cat`` along dim 0 after ``atleast_2d``."""
    return cat(atleast_2d(_nonempty(tensors, "vstack")), 0, out=out)


def dstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """torch.dstack: ``cat`` along dim 2 after ``atleast_3d``."""
    return cat(atleast_3d(_nonempty(tensors, "dstack")), 2, out=out)


def column_stack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """torch.column_stack: 0-D and 1-D tensors become columns, then ``hstack``."""
    parts = [reshape(x, (x._data.size, 1)) if x._data.ndim <= 1 else x
             for x in _nonempty(tensors, "column_stack")]
    return cat(parts, 1, out=out)


# ----------------------------------------------------------------------------- splits

def _split_views(input: Tensor, d: int, sizes: list[int]) -> tuple[Tensor, ...]:
    outs = tuple(make_view(input, a) for a in _split_forward(input._data, d, sizes))
    if input._requires_grad:
        record(SPLIT, (input,), {"dim": d, "sizes": sizes}, outs)
    return outs


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
                               f"long, but got {_pretty(spec.dtype)}")
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
    d = wrap_dim(dim, n, "unbind")
    outs = tuple(make_view(input, a) for a in _unbind_forward(input._data, d))
    if input._requires_grad:
        record(UNBIND, (input,), {"dim": d}, outs)
    return outs


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


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """torch.meshgrid: expanded views of 0-D/1-D tensors over their joint grid."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    tensors = tuple(_tensor_list(tensors, "meshgrid"))
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    elif indexing not in ("ij", "xy"):
        raise RuntimeError('torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f"{indexing}")
    for x in tensors:
        if x._data.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got a tensor of shape {list(x._data.shape)}")
        if x.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    _common_device(list(tensors), "meshgrid")
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors = (tensors[1], tensors[0]) + tensors[2:]
    grid = tuple(x._data.size for x in tensors)
    n = len(tensors)
    out = [expand(view(x, tuple(-1 if j == i else 1 for j in range(n))), grid)
           for i, x in enumerate(tensors)]
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


# ----------------------------------------------------------------------------- repeats

def _repeat_forward(x: Any, repeats: tuple[int, ...], shape: tuple[int, ...]) -> Any:
    lead = len(repeats) - x.ndim
    padded = (1,) * lead + x.shape
    pairs = [v for r, s in zip(repeats, padded) for v in (r, s)]
    spread = np.broadcast_to(x.reshape([v for s in padded for v in (1, s)]), pairs)
    out = xp_of(x).empty(pairs, x.dtype)
    out[...] = spread
    return out.reshape([r * s for r, s in zip(repeats, padded)])


def _repeat_interleave_forward(x: Any, repeats: Any, dim: int) -> Any:
    if isinstance(repeats, Tensor):
        repeats = repeats._data
    return _c_order(np.repeat(x, repeats, axis=dim))


REPEAT = register("repeat", _repeat_forward, None, "library")
REPEAT_INTERLEAVE = register("repeat_interleave", _repeat_interleave_forward, meta.DYNAMIC,
                             "library")


def repeat(self: Tensor, *repeats: Any) -> Tensor:
    """Tensor.repeat(*repeats): tile the tensor ``repeats[i]`` times along each dim (new
    leading dims for extra entries)."""
    if not repeats:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    reps = int_tuple(repeats, "repeat", "repeats")
    shape = self._data.shape
    if len(reps) < len(shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    padded = (1,) * (len(reps) - len(shape)) + shape
    target = [r * s for r, s in zip(reps, padded)]
    for size in target:
        if size < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {target}")
    res = make(_repeat_forward(self._data, reps, shape), self.dtype, self.device)
    if self._requires_grad:
        record(REPEAT, (self,), {"repeats": reps, "shape": shape}, res)
    return res


def tile(input: Tensor, dims: Any) -> Tensor:
    """torch.tile: ``repeat`` with ``dims`` padded by leading 1s to ``input.dim()``."""
    reps = int_tuple((dims,), "tile", "dims")
    return repeat(input, (1,) * (input._data.ndim - len(reps)) + reps)


def _tile_method(self: Tensor, *dims: Any) -> Tensor:
    return tile(self, dims[0] if len(dims) == 1 and not isinstance(dims[0], int) else dims)


def repeat_interleave(input: Tensor, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """torch.repeat_interleave: repeat each element ``repeats`` times (an int, or one count
    per element along ``dim``); without ``dim`` the input is flattened first. With a
    single tensor of counts, returns the repeated indices. ``output_size`` is accepted for
    torch's signature; the size is always computed."""
    if repeats is None:
        if input._data.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        _check_counts(input)
        idx = make(xp_of(input._data).arange(input._data.shape[0], dtype=input.dtype.np),
                   input.dtype, input.device)
        return repeat_interleave(idx, input, 0)
    if dim is None:
        input = reshape(input, (-1,))
        d = 0
    elif input._data.ndim == 0:
        raise IndexError(f"repeat_interleave: Dimension specified as {dim} but tensor has no "
                         "dimensions")
    else:
        d = wrap_dim(dim, input._data.ndim, "repeat_interleave")
    size = input._data.shape[d]
    counts: Any
    if isinstance(repeats, Tensor):
        _check_counts(repeats)
        if repeats._data.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if repeats._data.size != 1 and repeats._data.size != size:
            raise RuntimeError("repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats._data.size} and input.size({d}) = "
                               f"{size}")
        if repeats._data.size and int(repeats._data.min()) < 0:
            raise RuntimeError("repeats can not be negative")
        counts = repeats._data.reshape(-1)
    else:
        counts = operator.index(repeats)
        if counts < 0:
            raise RuntimeError("Repeats must be non-negative")
    res = make(_repeat_interleave_forward(input._data, counts, d), input.dtype, input.device)
    if input._requires_grad:
        record(REPEAT_INTERLEAVE, (input,), {"repeats": repeats, "dim": d}, res)
    return res


def _check_counts(counts: Tensor) -> None:
    if counts.dtype is not _dt.int64 and counts.dtype is not _dt.int32:
        raise NotImplementedError(
            f"\"repeat_interleave_cpu\" not implemented for '{_pretty(counts.dtype)}'")


# ----------------------------------------------------------------------------- flips, rolls

def _flip_forward(x: Any, dims: tuple[int, ...]) -> Any:
    index: list[Any] = [slice(None)] * x.ndim
    for d in dims:
        index[d] = slice(None, None, -1)
    flipped = x[(*index, Ellipsis)]  # the Ellipsis keeps a 0-d result an array
    if x.flags.c_contiguous and 1 not in x.shape:
        return flipped.copy()  # torch keeps the layout, here plain row-major
    out = restride(xp_of(x).empty(x.size, x.dtype), x.shape, _preserved_strides(x))
    out[...] = flipped
    return out


def _preserved_strides(x: Any) -> list[int]:
    """The byte strides of torch's ``empty_like(x)``: ``x``'s own when it is dense, else
    dense strides in the order of ``x``'s (torch's ``infer_dense_strides``)."""
    shape, strides, n = x.shape, x.strides, x.ndim
    big = sorted((d for d in range(n) if shape[d] > 1), key=lambda d: strides[d])
    need = x.itemsize
    for d in big:
        if strides[d] != need:
            break
        need *= shape[d]
    else:
        return list(strides)
    perm = list(range(n - 1, -1, -1))
    for i in range(1, n):
        j = i
        for k in range(i - 1, -1, -1):
            a, b = perm[k], perm[j]
            if strides[a] == 0 or strides[b] == 0:
                continue
            if strides[a] > strides[b] or (strides[a] == strides[b] and shape[a] > shape[b]):
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif strides[a] < strides[b]:
                break
    out = [0] * n
    step = x.itemsize
    for d in perm:
        out[d] = step
        if shape[d] > 1:
            step *= shape[d]
    return out


def _roll_forward(x: Any, shifts: tuple[int, ...], dims: tuple[int, ...]) -> Any:
    return _c_order(np.roll(x, shifts, dims) if dims else np.roll(x, shifts[0]))


FLIP = register("flip", _flip_forward, None, "library")
ROLL = register("roll", _roll_forward, None, "library")


def _dims_arg(args: tuple[Any, ...], dims: Any, op: str) -> tuple[int, ...]:
    if dims is None:
        if not args:
            raise TypeError(f'{op}() missing 1 required positional arguments: "dims"')
        dims = args
    return int_tuple(dims if isinstance(dims, tuple) else (dims,), op, "dims")


def _unique_dims(dims: Sequence[int], n: int, op: str) -> tuple[int, ...]:
    wrapped = tuple(wrap_dim(d, n, op) for d in dims)
    for i, d in enumerate(wrapped):
        if d in wrapped[:i]:
            raise RuntimeError(f"{op}: dim {d} appears multiple times in the list of dims")
    return wrapped


def flip(input: Tensor, *args: Any, dims: Any = None) -> Tensor:
    """torch.flip: reverse the order of elements along ``dims`` (a copy)."""
    n = input._data.ndim
    if dims is None and len(args) == 1 and args[0].__class__ is int:
        d: tuple[int, ...] = (wrap_dim(args[0], n, "flip"),)
    else:
        d = _unique_dims(_dims_arg(args, dims, "flip"), n, "flip")
    if n == 0:
        d = ()  # a 0-d tensor has dim 0 to name but nothing to reverse
    res = make(_flip_forward(input._data, d), input.dtype, input.device)
    if input._requires_grad:
        record(FLIP, (input,), {"dims": d}, res)
    return res


def fliplr(input: Tensor) -> Tensor:
    """torch.fliplr: flip dim 1."""
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input: Tensor) -> Tensor:
    """torch.flipud: flip dim 0."""
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """torch.roll: shift elements cyclically along ``dims`` (without dims: over the
    flattened tensor, keeping the shape)."""
    shift = int_tuple((shifts,), "roll", "shifts")
    dim = () if dims is None else int_tuple((dims,), "roll", "dims")
    if not shift:
        raise RuntimeError("`shifts` required")
    if (dim and len(shift) != len(dim)) or (not dim and len(shift) != 1):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shift)}, "
                           f"dims:{len(dim)}")
    dim = tuple(wrap_dim(d, input._data.ndim, "roll") for d in dim)
    res = make(_roll_forward(input._data, shift, dim), input.dtype, input.device)
    if input._requires_grad:
        record(ROLL, (input,), {"shifts": shift, "dims": dim}, res)
    return res


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """torch.rot90: rotate by 90 degrees ``k`` times in the plane of ``dims``."""
    dims = int_tuple((dims,), "rot90", "dims")
    n = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = wrap_dim(dims[0], n, "rot90"), wrap_dim(dims[1], n, "rot90")
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and "
                           f"dim1 = {dims[1]}")
    k %= 4
    if k == 1:
        return transpose(flip(input, (d1,)), d0, d1)
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return transpose(flip(input, (d0,)), d0, d1)
    return clone(input)


# ----------------------------------------------------------------------------- triangles, diagonals

def _triangle(upper: bool) -> Callable[..., Any]:
    def forward(x: Any, diagonal: int) -> Any:
        rows, cols = x.shape[-2:]
        xp = xp_of(x)
        if upper:
            keep = ~xp.tri(rows, cols, diagonal - 1, dtype=bool)
        else:
            keep = xp.tri(rows, cols, diagonal, dtype=bool)
        return _c_order(xp.where(keep, x, xp.zeros((), x.dtype)))

    return forward


def _diag_embed_forward(x: Any, offset: int, dim1: int, dim2: int) -> Any:
    n = x.shape[-1] + abs(offset) if x.ndim else 1
    batch = iter(x.shape[:-1])
    shape = [n if i in (dim1, dim2) else next(batch) for i in range(x.ndim + 1)]
    out = xp_of(x).zeros(shape, x.dtype)
    diagonal_array(out, offset, dim1, dim2)[...] = x
    return out


TRIL = register("tril", _triangle(False), None, "library")
TRIU = register("triu", _triangle(True), None, "library")
DIAG_EMBED = register("diag_embed", _diag_embed_forward, None, "library")


def _triangle_fn(op_: Any, name: str) -> Callable[..., Tensor]:
    def fn(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:
        if input._data.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        diagonal = operator.index(diagonal)
        res = make(op_.forward(input._data, diagonal), input.dtype, input.device)
        if input._requires_grad:
            record(op_, (input,), {"diagonal": diagonal}, res)
        return res if out is None else _same_dtype_out(out, res)

    fn.__name__ = fn.__qualname__ = name
    side = "on and above" if name == "triu" else "on and below"
    fn.__doc__ = (f"torch.{name}: the elements {side} the ``diagonal``-th diagonal of the last "
                  "two dims; the rest are zero.")
    return fn


tril = _triangle_fn(TRIL, "tril")
triu = _triangle_fn(TRIU, "triu")


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """torch.diag_embed: tensors whose (``dim1``, ``dim2``) diagonal ``offset`` holds the
    last dim of ``input``; zeros elsewhere."""
    n = input._data.ndim + 1
    d1, d2 = wrap_dim(dim1, n, "diag_embed"), wrap_dim(dim2, n, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    res = make(_diag_embed_forward(input._data, offset, d1, d2), input.dtype, input.device)
    if input._requires_grad:
        record(DIAG_EMBED, (input,), {"offset": offset, "dim1": d1, "dim2": d2}, res)
    return res


def diag(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:
    """torch.diag: a 1-D tensor becomes a matrix with it on diagonal ``diagonal``; a matrix
    gives a copy of that diagonal."""
    n = input._data.ndim
    if n == 1:
        res = diag_embed(input, diagonal, 0, 1)
    elif n == 2:
        res = clone(diagonal_view(input, diagonal))
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {n}D")
    return res if out is None else _same_dtype_out(out, res)


FUNCTIONS: list[str] = [
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "dstack",
    "column_stack", "split", "tensor_split", "chunk", "unbind", "hsplit", "vsplit", "dsplit",
    "meshgrid", "tile", "repeat_interleave", "flip", "fliplr", "flipud", "roll", "rot90",
    "tril", "triu", "diag_embed", "diag",
]

concat = concatenate = cat
row_stack = vstack

METHODS: dict[str, Any] = {
    "split": _split_method, "tensor_split": tensor_split, "chunk": chunk, "unbind": unbind,
    "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit, "repeat": repeat, "tile": _tile_method,
    "repeat_interleave": repeat_interleave, "flip": flip, "fliplr": fliplr, "flipud": flipud,
    "roll": roll, "rot90": rot90, "tril": tril, "triu": triu, "diag_embed": diag_embed,
    "diag": diag, "tril_": inplace(tril, "tril_"), "triu_": inplace(triu, "triu_"),
}
