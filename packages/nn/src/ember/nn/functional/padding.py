"""Padding: torch.nn.functional.pad, by a constant or by reflecting, replicating or
wrapping the input's border (the last 1 to 3 dims).

``pad`` lists (left, right) pairs from the last dim backwards. A constant pad fills a new
tensor and writes the input into it (negative pads narrow the input first); the other
modes gather each padded dim's source indices with ``index_select``, whose backward adds
each output gradient into its source, as torch's padding backward kernels do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ember.core as E
from ember.core import Tensor
from ember.core.function_modes import public

__all__ = ["pad"]

_MODES = ("constant", "reflect", "replicate", "circular")
_KERNELS = {"reflect": "reflection_pad", "replicate": "replication_pad"}


def _pad_ints(pad: Any) -> list[int]:
    values = list(pad)
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but "
                            f"found element of type {type(v).__name__} at pos {i}")
    return values


@public
def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Tensor:
    """torch.nn.functional.pad: ``input`` padded by ``pad`` = (left, right) of the last dim,
    then of the one before it, and so on. ``mode``: 'constant' (``value``, default 0, any
    number of dims; negative pads crop), 'reflect' (mirrored about the edge element),
    'replicate' (the edge element repeated) or 'circular' (wrapped around), these three
    over the last 1, 2 or 3 dims of an input with one or two more dims."""
    pads = _pad_ints(pad)
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pads) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pads) > 2 * input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pads)} and input of "
                           f"dimension {input.ndim}")
    if mode == "constant":
        return _constant(input, pads, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    nd = len(pads) // 2
    if not 1 <= nd <= 3 or input.ndim not in (nd + 1, nd + 2):
        raise NotImplementedError(
            f"Padding size {len(pads)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        _check_circular(input, pads)
    else:
        _check_border(input, pads, nd, mode)
    out = input
    for i in range(nd):
        dim = input.ndim - 1 - i
        left, right = pads[2 * i], pads[2 * i + 1]
        if left or right:
            out = out.index_select(dim, _sources(mode, input.shape[dim], left, right,
                                                 input.device))
    return out


def _constant(input: Tensor, pads: list[int], value: float) -> Tensor:
    """torch's ``constant_pad_nd``: negative pads narrow the input; the rest are filled."""
    nd = len(pads) // 2
    inner = input
    for i in range(nd):
        dim = input.ndim - 1 - i
        left, right = pads[2 * i], pads[2 * i + 1]
        if left < 0:
            inner = inner.narrow(dim, -left, inner.shape[dim] + left)
        if right < 0:
            inner = inner.narrow(dim, 0, inner.shape[dim] + right)
    if all(p <= 0 for p in pads):
        return inner.clone()
    shape = list(input.shape)
    for i in range(nd):
        dim = input.ndim - 1 - i
        size = input.shape[dim] + pads[2 * i] + pads[2 * i + 1]
        if size < 0:
            raise RuntimeError(f"The input size {input.shape[dim]}, plus negative padding "
                               f"{pads[2 * i]} and {pads[2 * i + 1]} resulted in a negative "
                               f"output size, which is invalid. Check dimension {dim} of your "
                               f"input.")
        shape[dim] = size
    out = input.new_full(shape, value)
    where = [slice(None)] * input.ndim
    for i in range(nd):
        dim = input.ndim - 1 - i
        where[dim] = slice(max(pads[2 * i], 0), shape[dim] - max(pads[2 * i + 1], 0))
    out[tuple(where)] = inner
    return out


def _check_border(input: Tensor, pads: list[int], nd: int, mode: str) -> None:
    """torch's checks of its reflection and replication pads, in their order."""
    batched = input.ndim == nd + 2
    if any(s == 0 for s in input.shape[1 if batched else 0:]):
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with "
                           f"possibly 0 batch size and other non-zero dimensions for input, "
                           f"but got: {list(input.shape)}")
    if input.dtype == E.bool:
        raise NotImplementedError(f'"{_KERNELS[mode]}{nd}d" not implemented for \'Bool\'')
    names = "WHD"
    for i in range(nd):
        dim = input.ndim - 1 - i
        size, left, right = input.shape[dim], pads[2 * i], pads[2 * i + 1]
        if mode == "reflect" and not (left < size and right < size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({left}, "
                               f"{right}) at dimension {dim} of input {list(input.shape)}")
        if size + left + right < 1:
            raise RuntimeError(f"input ({names[i]}: {size}) is too small. Calculated output "
                               f"{names[i]}: {size + left + right}")


def _check_circular(input: Tensor, pads: list[int]) -> None:
    for i in range(len(pads) // 2):
        size, left, right = input.shape[input.ndim - 1 - i], pads[2 * i], pads[2 * i + 1]
        if left > size or right > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size + left + right < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")


def _sources(mode: str, size: int, left: int, right: int, device: Any) -> Tensor:
    """The input index along one dim that each padded position reads."""
    if mode == "circular":  # wrapped around the input cropped by any negative pads
        start, kept = max(-left, 0), size - max(-left, 0) - max(-right, 0)
        j = E.arange(size + left + right, device=device)
        return (j - max(left, 0)).remainder(kept) + start
    i = E.arange(-left, size + right, device=device)
    if mode == "replicate":
        return i.clamp(0, size - 1)
    reflected = E.where(i < 0, -i, i)
    return E.where(reflected >= size, 2 * (size - 1) - reflected, reflected)
