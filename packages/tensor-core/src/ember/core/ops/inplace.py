"""In-place forms built from out-of-place functions (``clamp_``, ``masked_fill_``...):
compute out of place, then write back into ``self``.

The write-back (``copy_`` with ``writeback=True``) checks dtype and shape before touching
memory (a failing op leaves ``self`` unchanged), lets autograd refuse or give ``self`` the
result's history, and bumps the version counter shared by every view of the storage.
The elementwise ops have in-place primitives of their own (``add_``), made in
``elementwise``: one dispatch, no temporary.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..dispatch import grad_mode, steps
from ..tensor import Tensor, refuse_leaf_writes, refuse_view_writes
from .conversion import clone
from .copying import assign_inplace, check_overlap


def in_graph(self: Tensor, args: tuple[Any, ...]) -> bool:
    """Whether an op on ``self`` and ``args`` is recorded for autograd."""
    if steps.autograd is None or not grad_mode.enabled:
        return False
    if self._requires_grad:
        return True
    return any(isinstance(a, Tensor) and a._requires_grad for a in args)


def inplace(fn: Callable[..., Tensor], name: str, overlap: str | None = "partial",
            parse: Callable[..., None] | None = None) -> Callable[..., Tensor]:
    """Build ``name`` (e.g. ``clamp_``) from the out-of-place ``fn``.

    In a graph the op reads a clone of ``self``, so that tensors the graph saved keep
    their values after ``self`` is overwritten. ``overlap``: torch's check of the tensor
    arguments against ``self`` (``copying.check_overlap``): 'partial' (self itself may be
    read), 'any' (no shared element at all: a scatter's source) or None (none made).
    ``parse``: torch's argument parser's refusals, called with the arguments first.
    """
    full = overlap == "partial"

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if parse is not None:
            parse(self, *args, **kwargs)
        recorded = in_graph(self, (*args, *kwargs.values()) if kwargs else args)
        if recorded:
            refuse_leaf_writes(self, views=False)  # autograd refuses before the op checks
        if overlap is not None and isinstance(self, Tensor):
            check_overlap(name, self, args, full)
            if kwargs:
                check_overlap(name, self, kwargs.values(), full)
        src = self
        if recorded:
            refuse_view_writes(self)  # before the clone reads it
            src = clone(self)
        return assign_inplace(self, fn(src, *args, **kwargs), name)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place form of ``{fn.__name__}``."
    return method
