"""VJPs of view, shape and joining primitives, and of ``CopySlices`` (an in-place write
into a view).

None of them reads its inputs' values (only ``repeat_interleave`` reads its tensor of
counts): the shapes come from the node's metadata, the rest from its params."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import ember.core as E
from ember.core.ops.copying import shared_write_error
from ember.core.tensor import Tensor

from .formula import Formula, keep
from .views import element_offsets
from .vjp_elementwise import conj, needs
from .vjp_reduction import input_shape

Grads = tuple[Any, ...]


def _zeros(shape: tuple[int, ...], like: Tensor) -> Tensor:
    return E.zeros(shape, dtype=like.dtype, device=like.device)


def copy_slices(n: Any, g: Tensor) -> Grads:
    """The base had the view's region replaced by the result: the region's gradient goes
    to the result, the rest to the old base."""
    index, mask = n.params["index"], n.params["mask"]
    if n.params["shared"]:
        raise shared_write_error("")
    gbase = E.where(mask, 0.0, g) if needs(n, 0) else None
    gresult = g.take(index) if needs(n, 1) else None
    return gbase, gresult


def view_of_base(n: Any, g: Tensor) -> Grads:
    """A view's history renewed over its base: each element's gradient goes to its position
    in the base (positions an expanded view repeats add up)."""
    shape = input_shape(n)
    flat = _zeros((math.prod(shape),), g).index_add(0, n.params["index"].reshape(-1),
                                                    g.reshape(-1))
    return (flat.reshape(shape),)


# ----------------------------------------------------------------------------- views

def reshape(n: Any, g: Tensor) -> Grads:
    return (g.reshape(input_shape(n)),)


def permute(n: Any, g: Tensor) -> Grads:
    return (g.permute(tuple(np.argsort(n.params["dims"]).tolist())),)


def narrow(n: Any, g: Tensor) -> Grads:
    p = n.params
    shape, d, start, length = input_shape(n), p["dim"], p["start"], p["length"]
    parts = []
    if start:
        parts.append(_zeros(shape[:d] + (start,) + shape[d + 1:], g))
    parts.append(g)
    rest = shape[d] - start - length
    if rest:
        parts.append(_zeros(shape[:d] + (rest,) + shape[d + 1:], g))
    return (E.cat(parts, d) if len(parts) > 1 else g,)


def getitem(n: Any, g: Tensor) -> Grads:
    out = _zeros(input_shape(n), g)
    out[n.params["index"]] = g
    return (out,)


def getitem_name(n: Any) -> str:
    """torch's name of an indexing view's node: that of the last view it is made of
    (``x[0]`` SelectBackward0, ``x[1:]`` SliceBackward0, ``x[None]`` UnsqueezeBackward0);
    in a tuple, slices over a whole dim make no view."""
    index = n.params["index"]
    whole = slice(None)
    name = "AliasBackward0"
    for entry in index if index.__class__ is tuple else (index,):
        if entry is None:
            name = "UnsqueezeBackward0"
        elif entry.__class__ is slice:
            if entry != whole or index.__class__ is not tuple:
                name = "SliceBackward0"
        elif entry is not Ellipsis:
            name = "SelectBackward0"
    return name


def diagonal(n: Any, g: Tensor) -> Grads:
    p = n.params
    out = _zeros(input_shape(n), g)
    out.diagonal(p["offset"], p["dim1"], p["dim2"]).copy_(g)
    return (out,)


def unfold(n: Any, g: Tensor) -> Grads:
    p = n.params
    shape, d, size, step = input_shape(n), p["dimension"], p["size"], p["step"]
    if not shape:
        return (g.sum(),)
    windows = g.shape[d]
    starts = E.arange(windows, device=g.device).unsqueeze(1) * step
    index = (starts + E.arange(size, device=g.device)).reshape(-1)
    spread = g.movedim(-1, d + 1).reshape(shape[:d] + (windows * size,) + shape[d + 1:])
    return (_zeros(shape, g).index_add(d, index, spread),)


def as_strided(n: Any, g: Tensor) -> Grads:
    """Each output element adds its gradient to the input element at the same storage
    position (overlapping outputs accumulate); positions count from the input's first
    element, as the forward's ``storage_offset`` does."""
    p = n.params
    shape = input_shape(n)
    inside = element_offsets(shape, p["input_stride"]).ravel()
    wanted = element_offsets(p["size"], p["stride"]).ravel() + p["storage_offset"]
    order = np.argsort(inside, kind="stable")
    at = np.searchsorted(inside[order], wanted)
    if wanted.size and (at.max(initial=0) >= inside.size
                        or not np.array_equal(inside[order][np.minimum(at, inside.size - 1)],
                                              wanted)):
        raise NotImplementedError("as_strided backward: the view reaches storage outside its "
                                  "input, which is not supported")
    index = E.tensor(order[at], dtype=E.int64, device=g.device)
    flat = _zeros((math.prod(shape),), g).index_add(0, index, g.reshape(-1))
    return (flat.reshape(shape),)


def conj_physical(n: Any, g: Tensor) -> Grads:
    return (conj(g),)


# ----------------------------------------------------------------------------- joining

def cat(n: Any, g: Tensor) -> Grads:
    d = n.params["dim"]
    grads: list[Tensor | None] = []
    start = 0
    for i in range(len(n.metas)):
        shape = input_shape(n, i)
        if shape == (0,) and g.ndim != 1:
            grads.append(None)  # a skipped 1-D empty input
            continue
        size = shape[d]
        grads.append(g.narrow(d, start, size) if needs(n, i) else None)
        start += size
    return tuple(grads)


def stack(n: Any, g: Tensor) -> Grads:
    return g.unbind(n.params["dim"])


def _filled(grads: Any, n: Any, shapes: list[tuple[int, ...]]) -> list[Tensor]:
    like = next(g for g in grads if g is not None)
    return [_zeros(s, like) if g is None else g for g, s in zip(grads, shapes)]


def split(n: Any, grads: Any) -> Grads:
    p = n.params
    shape, d = input_shape(n), p["dim"]
    shapes = [shape[:d] + (s,) + shape[d + 1:] for s in p["sizes"]]
    return (E.cat(_filled(grads, n, shapes), d),)


def unbind(n: Any, grads: Any) -> Grads:
    shape, d = input_shape(n), n.params["dim"]
    part = shape[:d] + shape[d + 1:]
    return (E.stack(_filled(grads, n, [part] * len(grads)), d),)


def repeat(n: Any, g: Tensor) -> Grads:
    repeats, shape = n.params["repeats"], input_shape(n)
    padded = (1,) * (len(repeats) - len(shape)) + tuple(shape)
    split_shape = [v for r, s in zip(repeats, padded) for v in (r, s)]
    summed = g.reshape(split_shape).sum(tuple(range(0, 2 * len(repeats), 2)))
    return (summed.reshape(shape),)


def repeat_interleave(n: Any, g: Tensor) -> Grads:
    shape, d, repeats = input_shape(n), n.params["dim"], n.saved(1)
    if not shape:
        return (g.sum(),)
    if isinstance(repeats, Tensor):
        counts = repeats.reshape(-1).to(g.device)
        if counts.numel() == 1:
            counts = counts.expand(shape[d])
        index = E.arange(shape[d], device=g.device).repeat_interleave(counts)
        return (_zeros(shape, g).index_add(d, index, g),)
    return (g.reshape(shape[:d] + (shape[d], repeats) + shape[d + 1:]).sum(d + 1),)


def flip(n: Any, g: Tensor) -> Grads:
    return (g.flip(n.params["dims"]),)


def roll(n: Any, g: Tensor) -> Grads:
    p = n.params
    back = tuple(-s for s in p["shifts"])
    return (g.roll(back, p["dims"]) if p["dims"] else g.roll(back[0]),)


def tril(n: Any, g: Tensor) -> Grads:
    return (g.tril(n.params["diagonal"]),)


def triu(n: Any, g: Tensor) -> Grads:
    return (g.triu(n.params["diagonal"]),)


def diag_embed(n: Any, g: Tensor) -> Grads:
    p = n.params
    return (g.diagonal(p["offset"], p["dim1"], p["dim2"]),)


F = Formula
FORMULAS: dict[str, Formula] = {
    # ------------------------------------------------------------------ views, shapes
    "view": F(reshape),
    "reshape": F(reshape, name="UnsafeViewBackward0"),
    "squeeze": F(reshape),
    "unsqueeze": F(reshape),
    "permute": F(permute),
    "t": F(permute),
    "expand": F(keep),
    "narrow": F(narrow, name="SliceBackward0"),  # (torch's narrow is a slice)
    "diagonal": F(diagonal),
    "unfold": F(unfold),
    "as_strided": F(as_strided),
    "conj_physical": F(conj_physical),
    "getitem": F(getitem, name=getitem_name),
    # ------------------------------------------------------------------ joining
    "cat": F(cat),
    "stack": F(stack),
    "split": F(split),
    "unbind": F(unbind),
    "repeat": F(repeat),
    "repeat_interleave": F(repeat_interleave, (1,)),
    "flip": F(flip),
    "roll": F(roll),
    "tril": F(tril),
    "triu": F(triu),
    "diag_embed": F(diag_embed),
}
