"""Flatten and Unflatten."""

from __future__ import annotations

from typing import Any

import ember.core as E

from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """torch.nn.Flatten: dims ``start_dim`` to ``end_dim`` made one."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: E.Tensor) -> E.Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """torch.nn.Unflatten: dim ``dim`` split into ``unflattened_size``."""

    def __init__(self, dim: Any, unflattened_size: Any) -> None:
        super().__init__()
        if isinstance(dim, int):
            if not isinstance(unflattened_size, (tuple, list, E.Size)):
                raise TypeError("unflattened_size must be tuple of ints, but found type "
                                f"{type(unflattened_size).__name__}")
            for i, size in enumerate(unflattened_size):
                if not isinstance(size, int):
                    raise TypeError("unflattened_size must be tuple of ints, but found "
                                    f"element of type {type(size).__name__} at pos {i}")
        elif isinstance(dim, str):
            raise TypeError("named tensors are not supported: invalid dimension name")
        else:
            raise TypeError("invalid argument type for dim parameter")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: E.Tensor) -> E.Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
