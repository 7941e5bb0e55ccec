"""``torch.overrides``: TorchFunctionMode and the ``__torch_function__`` protocol helpers."""

from __future__ import annotations

from typing import Any

from ember.core.function_modes import (
    TorchFunctionMode,
    disabled_torch_function_impl,
    handle_torch_function,
    has_torch_function,
)
from ember.core.tensor import Tensor

__all__ = ["TorchFunctionMode", "has_torch_function", "handle_torch_function",
           "is_tensor_like", "has_torch_function_unary", "has_torch_function_variadic"]


def is_tensor_like(inp: Any) -> bool:
    """A Tensor, or an object whose type has ``__torch_function__``."""
    return isinstance(inp, Tensor) or hasattr(type(inp), "__torch_function__")


def has_torch_function_unary(inp: Any) -> bool:
    return has_torch_function((inp,))


def has_torch_function_variadic(*args: Any) -> bool:
    return has_torch_function(args)


_disabled_torch_function_impl = disabled_torch_function_impl
