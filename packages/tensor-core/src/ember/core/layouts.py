"""torch's memory formats (``torch.contiguous_format``...): how a new tensor is laid out."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["memory_format", "preserve_format", "contiguous_format", "channels_last",
           "channels_last_3d"]


class memory_format:
    """torch.memory_format: one of the four module-level instances."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> str:
        return self.name


preserve_format = memory_format("preserve_format")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")

_CHANNELS_LAST_RANK = {"channels_last": 4, "channels_last_3d": 5}


def _order(rank: int) -> tuple[int, ...]:
    """Channels-last dims from fastest to slowest: C, the spatial dims from the last, N."""
    return (1, *range(rank - 1, 1, -1), 0)


def channels_last_rank(fmt: memory_format) -> int | None:
    """The rank a channels-last format needs (4 or 5); None for the other formats."""
    return _CHANNELS_LAST_RANK.get(fmt.name)


def format_strides(fmt: memory_format, shape: Sequence[int]) -> tuple[int, ...]:
    """The element strides of a dense tensor of ``shape`` in the channels-last ``fmt``."""
    strides = [0] * len(shape)
    step = 1
    for d in _order(len(shape)):
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


def is_laid_out(fmt: memory_format, shape: Sequence[int], strides: Sequence[int]) -> bool:
    """torch's ``is_contiguous(memory_format=fmt)`` for a channels-last ``fmt``: dense in
    its dim order, size-1 dims taking any stride."""
    if len(shape) != channels_last_rank(fmt) or 0 in shape:
        return False
    expected = 1
    for d in _order(len(shape)):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True
