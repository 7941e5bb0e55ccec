"""Rearranging copies: ``repeat``, ``tile``, ``repeat_interleave``, ``flip``, ``roll``,
``rot90``, ``tril``, ``triu``, ``diag_embed``, ``diag``.

Each returns a new row-major tensor, except ``flip``, which keeps its input's memory
layout, as torch's does. ``rot90(x, 0)`` is a row-major ``clone``, as in torch.

Primitives (operand ``self``) and their params:

    repeat              repeats
    repeat_interleave   dim, output_size; a second operand ``repeats``: a Python int, or
                        an integer tensor of counts (then the output's size depends on
                        its values: on meta tensors ``output_size`` gives it, as in torch)
    flip                dims
    roll                shifts, dims (empty: roll the flattened tensor)
    tril, triu          diagonal
    diag_embed          offset, dim1, dim2
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from .. import dtypes as _dt
from .. import meta
from ..device import xp_of
from ..dispatch import Op, dispatch, register
from ..dtypes import c_type_name
from ..layouts import contiguous_format
from ..meta import MetaArray, element_strides
from ..ranges import arange
from ..tensor import Tensor, wrap_dim
from .conversion import clone
from .copying import write_out_exact
from .geometry import c_order, int_tuple, laid_out
from .inplace import inplace
from .operands import not_implemented
from .shape import reshape
from .strided import diagonal as diagonal_view
from .strided import diagonal_array
from .transposing import transpose

_SELF = ("self",)


def _same_dtype_out(op: str, out: Tensor, res: Tensor) -> Tensor:
    """``out=`` of ops that take no other dtype than the result's (tril, diag)."""
    return write_out_exact(op, out, res, "Expected out tensor to have dtype {expected}, but got "
                           "{out} instead", c_type_name)


def _row_major(x: MetaArray, *params: Any, **kw: Any) -> MetaArray:
    """The meta rule of an op whose result is row-major with the input's shape."""
    return meta.empty(x.shape, x.dtype)


# ----------------------------------------------------------------------------- repeats

def _repeated_shape(shape: tuple[int, ...], repeats: tuple[int, ...]) -> list[int]:
    padded = (1,) * (len(repeats) - len(shape)) + shape
    return [r * s for r, s in zip(repeats, padded)]


def _repeat(x: Any, *, repeats: tuple[int, ...]) -> Any:
    lead = len(repeats) - x.ndim
    padded = (1,) * lead + x.shape
    pairs = [v for r, s in zip(repeats, padded) for v in (r, s)]
    xp = xp_of(x)
    spread = xp.broadcast_to(x.reshape([v for s in padded for v in (1, s)]), pairs)
    out = xp.empty(pairs, x.dtype)
    out[...] = spread
    return out.reshape(_repeated_shape(x.shape, repeats))


def _repeat_meta(x: MetaArray, *, repeats: tuple[int, ...]) -> MetaArray:
    return meta.empty(_repeated_shape(x.shape, repeats), x.dtype)


def _repeat_interleave(x: Any, repeats: Any, *, dim: int, output_size: int | None = None) -> Any:
    if repeats.__class__ is not int:
        # counts as Python ints: what both numpy's and cupy's repeat take
        repeats = repeats.reshape(-1).tolist()
        if repeats and min(repeats) < 0:
            raise RuntimeError("repeats can not be negative")
    out = c_order(xp_of(x).repeat(x, repeats, axis=dim))
    if output_size is not None and out.shape[dim] != output_size:
        raise RuntimeError("allocated size does not match required size")
    return out


def _repeat_interleave_meta(x: MetaArray, repeats: Any, *, dim: int,
                            output_size: int | None = None) -> MetaArray:
    if repeats.__class__ is int:
        n = x.shape[dim] * repeats
    elif output_size is None:
        raise RuntimeError("cannot repeat_interleave a meta tensor without output_size")
    else:
        n = output_size
    return meta.empty(x.shape[:dim] + (n,) + x.shape[dim + 1:], x.dtype)


REPEAT = register("repeat", _repeat, _repeat_meta, "library", arg_names=_SELF)
REPEAT_INTERLEAVE = register("repeat_interleave", _repeat_interleave, _repeat_interleave_meta,
                             "library", arg_names=("self", "repeats"))


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
    target = _repeated_shape(shape, reps)
    for size in target:
        if size < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {target}")
    return dispatch(REPEAT, (self,), {"repeats": reps})


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
    single tensor of counts, returns the repeated indices. ``output_size``: the size of
    the result along ``dim`` (what meta tensors need for a tensor of counts)."""
    if repeats is None:
        if input._data.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        _check_counts(input)
        index = arange(input._data.shape[0], dtype=input.dtype, device=input.device)
        return repeat_interleave(index, input, 0, output_size=output_size)
    if dim is None:
        input = reshape(input, (-1,))
        d = 0
    elif input._data.ndim == 0:
        raise IndexError(f"repeat_interleave: Dimension specified as {dim} but tensor has no "
                         "dimensions")
    else:
        d = wrap_dim(dim, input._data.ndim, "repeat_interleave")
    size = input._data.shape[d]
    if isinstance(repeats, Tensor):
        _check_counts(repeats)
        if repeats._data.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if repeats._data.size != 1 and repeats._data.size != size:
            raise RuntimeError("repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats._data.size} and input.size({d}) = "
                               f"{size}")
    else:
        repeats = operator.index(repeats)
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        if output_size is not None and output_size != size * repeats:
            raise RuntimeError(f"repeat_interleave: Invalid output_size, expected "
                               f"{size * repeats} but got {output_size}")
    return dispatch(REPEAT_INTERLEAVE, (input, repeats),
                    {"dim": d, "output_size": output_size})


def _check_counts(counts: Tensor) -> None:
    if counts.dtype is not _dt.int64 and counts.dtype is not _dt.int32:
        raise not_implemented("repeat_interleave_cpu", counts.dtype)


# ----------------------------------------------------------------------------- flips, rolls

def _flip(x: Any, *, dims: tuple[int, ...]) -> Any:
    index: list[Any] = [slice(None)] * x.ndim
    for d in dims:
        index[d] = slice(None, None, -1)
    flipped = x[(*index, Ellipsis)]  # the Ellipsis keeps a 0-d result an array
    # laid out like ``x``, as torch's empty_like(x)
    return laid_out(flipped, meta.like_strides(x.shape, element_strides(x)))


def _roll(x: Any, *, shifts: tuple[int, ...], dims: tuple[int, ...]) -> Any:
    xp = xp_of(x)
    return c_order(xp.roll(x, shifts, dims) if dims else xp.roll(x, shifts[0]))


FLIP = register("flip", _flip, lambda x, *, dims: meta.like(x), "library", arg_names=_SELF)
ROLL = register("roll", _roll, _row_major, "library", arg_names=_SELF)


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
    return dispatch(FLIP, (input,), {"dims": d})


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
    return dispatch(ROLL, (input,), {"shifts": shift, "dims": dim})


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
    # torch's clone(memory_format=contiguous_format): row-major, size-1 dims' strides too
    return clone(input, memory_format=contiguous_format)


# ----------------------------------------------------------------------------- triangles, diagonals

def _triangle(upper: bool) -> Callable[..., Any]:
    def forward(x: Any, *, diagonal: int) -> Any:
        rows, cols = x.shape[-2:]
        xp = xp_of(x)
        if upper:
            keep = ~xp.tri(rows, cols, diagonal - 1, dtype=bool)
        else:
            keep = xp.tri(rows, cols, diagonal, dtype=bool)
        return c_order(xp.where(keep, x, xp.zeros((), x.dtype)))

    return forward


def _diag_embed_shape(shape: tuple[int, ...], offset: int, dim1: int, dim2: int
                      ) -> list[int]:
    n = shape[-1] + abs(offset) if shape else 1
    batch = iter(shape[:-1])
    return [n if i in (dim1, dim2) else next(batch) for i in range(len(shape) + 1)]


def _diag_embed(x: Any, *, offset: int, dim1: int, dim2: int) -> Any:
    out = xp_of(x).zeros(_diag_embed_shape(x.shape, offset, dim1, dim2), x.dtype)
    diagonal_array(out, offset, dim1, dim2)[...] = x
    return out


def _diag_embed_meta(x: MetaArray, *, offset: int, dim1: int, dim2: int) -> MetaArray:
    return meta.empty(_diag_embed_shape(x.shape, offset, dim1, dim2), x.dtype)


TRIL = register("tril", _triangle(False), _row_major, "library", arg_names=_SELF)
TRIU = register("triu", _triangle(True), _row_major, "library", arg_names=_SELF)
DIAG_EMBED = register("diag_embed", _diag_embed, _diag_embed_meta, "library", arg_names=_SELF)


def _triangle_fn(op: Op, name: str) -> Callable[..., Tensor]:
    def fn(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:
        if input._data.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        res = dispatch(op, (input,), {"diagonal": operator.index(diagonal)})
        return res if out is None else _same_dtype_out(name, out, res)

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
    return dispatch(DIAG_EMBED, (input,),
                    {"offset": operator.index(offset), "dim1": d1, "dim2": d2})


def diag(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:
    """torch.diag: a 1-D tensor becomes a matrix with it on diagonal ``diagonal``; a matrix
    gives a copy of that diagonal."""
    n = input._data.ndim
    if n == 1:
        res = diag_embed(input, diagonal, 0, 1)
    elif n == 2:
        res = clone(diagonal_view(input, diagonal), memory_format=contiguous_format)
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {n}D")
    return res if out is None else _same_dtype_out("diag", out, res)


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
