"""Tensor methods that belong to autograd, attached to ``ember.core.Tensor`` at import."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from ember.core.tensor import Tensor

from .differentiate import backward as _backward
from .graph import RemovableHandle, meta
from .recording import history, output_nr

__all__ = ["install"]


def backward(self: Tensor, gradient: Tensor | None = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Compute the gradient of this tensor w.r.t. the graph leaves (into their ``.grad``).

    ``gradient`` is required unless the tensor has a single element.
    """
    _backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _require_grad(t: Tensor) -> None:
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")


def register_hook(self: Tensor, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
    """``hook(grad)`` runs each time this tensor's gradient is computed; a tensor it returns
    replaces the gradient. Returns a handle whose ``remove()`` unregisters it."""
    _require_grad(self)
    node = self.grad_fn
    if node is None:
        m = meta(self)
        if m.hooks is None:
            m.hooks = []
        hooks = m.hooks
    else:
        hooks = node._extra().tensor_prehooks.setdefault(output_nr(self), [])
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def register_post_accumulate_grad_hook(self: Tensor, hook: Callable[[Tensor], None]
                                       ) -> RemovableHandle:
    """``hook(tensor)`` runs after a gradient was accumulated into this leaf's ``.grad``."""
    _require_grad(self)
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    m = meta(self)
    if m.post_hooks is None:
        m.post_hooks = []
    m.post_hooks.append(hook)
    return RemovableHandle(m.post_hooks, hook)


def retain_grad(self: Tensor) -> None:
    """Keep this non-leaf tensor's gradient in ``.grad`` (leaves always keep theirs)."""
    if not self._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    node = self.grad_fn
    if node is None:
        return
    meta(self).retains_grad = True
    node._extra().retains[output_nr(self)] = weakref.ref(self)


def _retains_grad(self: Tensor) -> bool:
    m = self._ag
    return self.grad_fn is not None and m is not None and m.retains_grad


def _grad_fn(self: Tensor) -> Any:
    """The node that made this tensor (None for a leaf); a view whose storage was written
    in place since gets its history renewed from its base's."""
    return history(self)


METHODS: dict[str, Any] = {
    "backward": backward,
    "register_hook": register_hook,
    "register_post_accumulate_grad_hook": register_post_accumulate_grad_hook,
    "retain_grad": retain_grad,
    "retains_grad": property(_retains_grad),
    "output_nr": property(output_nr),
    "grad_fn": property(_grad_fn),
}


def install() -> None:
    for name, fn in METHODS.items():
        setattr(Tensor, name, fn)
