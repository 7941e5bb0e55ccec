"""Rearranging copies: ``repeat``, ``tile``, ``repeat_interleave``, ``flip``, ``roll``,
``rot90``, ``tril``, ``triu``, ``diag_embed``, ``diag``.

Each returns a new C-contiguous tensor (``flip`` keeps its input's memory layout, as
torch does).

Primitives and the ``params`` they record:

    repeat              repeats, shape (the input's)
    repeat_interleave   repeats (an int or an integer Tensor), dim
    flip                dims
    roll                shifts, dims (empty: roll the flattened tensor)
    tril, triu          diagonal
    diag_embed          offset, dim1, dim2
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import xp_of
from ..dispatch import register
from ..tensor import Tensor, make, wrap_dim
from .conversion import clone
from .geometry import c_order, int_tuple, restride
from .inplace import inplace
from .operands import not_implemented, record, write_out
from .shape import reshape
from .strided import diagonal as diagonal_view
from .strided import diagonal_array
from .transposing import transpose


def _same_dtype_out(out: Tensor, res: Tensor) -> Tensor:
    """``out=`` of ops that take no other dtype than the result's (tril, diag)."""
    if isinstance(out, Tensor) and out.dtype is not res.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {res.dtype.name}, but got "
                           f"{out.dtype.name} instead")
    return write_out("out", out, res)


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
    return c_order(np.repeat(x, repeats, axis=dim))


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
        raise not_implemented("repeat_interleave_cpu", counts.dtype)


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
    return c_order(np.roll(x, shifts, dims) if dims else np.roll(x, shifts[0]))


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
        return c_order(xp.where(keep, x, xp.zeros((), x.dtype)))

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
    "tile", "repeat_interleave", "flip", "fliplr", "flipud", "roll", "rot90", "tril", "triu",
    "diag_embed", "diag",
]

METHODS: dict[str, Any] = {
    "repeat": repeat, "tile": _tile_method, "repeat_interleave": repeat_interleave,
    "flip": flip, "fliplr": fliplr, "flipud": flipud, "roll": roll, "rot90": rot90,
    "tril": tril, "triu": triu, "diag_embed": diag_embed, "diag": diag,
    "tril_": inplace(tril, "tril_"), "triu_": inplace(triu, "triu_"),
}
