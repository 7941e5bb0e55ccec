"""``parameters_to_vector`` and ``vector_to_parameters``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import ember.core as E

from ..modules.module import typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _same_device(param: Any, device: Any) -> Any:
    if device is None:
        return param.device
    if param.device != device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return device


def parameters_to_vector(parameters: Iterable[Any]) -> E.Tensor:
    """All ``parameters`` flattened into one vector."""
    device = None
    flat = []
    for p in parameters:
        device = _same_device(p, device)
        flat.append(p.view(-1))
    return E.cat(flat)


def vector_to_parameters(vec: E.Tensor, parameters: Iterable[Any]) -> None:
    """Copy consecutive slices of ``vec`` into ``parameters`` (their data replaced)."""
    if not isinstance(vec, E.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    device = None
    pointer = 0
    for p in parameters:
        device = _same_device(p, device)
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n
