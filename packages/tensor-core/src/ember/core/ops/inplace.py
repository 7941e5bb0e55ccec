"""In-place forms (``add_``, ``mul_``, ...): compute out of place, then write into ``self``.

Writing goes through ``assign_inplace``, which checks dtype and shape before touching
memory (a failing op leaves ``self`` unchanged), lets autograd refuse or rebase, and
bumps the version counter shared by every view of the storage.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..dispatch import grad_mode, hooks
from ..tensor import Tensor
from .conversion import clone
from .operands import assign_inplace


def _in_graph(self: Tensor, args: tuple[Any, ...]) -> bool:
    if hooks.record is None or not grad_mode.enabled:
        return False
    if self._requires_grad:
        return True
    return any(isinstance(a, Tensor) and a._requires_grad for a in args)


def inplace(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    """Build ``name`` (e.g. ``add_``) from the out-of-place ``fn``.

    In a graph the op reads a clone of ``self``, so that tensors the graph saved keep
    their values after ``self`` is overwritten.
    """

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        src = clone(self) if _in_graph(self, args) else self
        return assign_inplace(self, fn(src, *args, **kwargs), name)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place form of ``{fn.__name__}``."
    return method
