"""torch's memory formats (``torch.contiguous_format``...): how a new tensor is laid out."""

from __future__ import annotations

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
