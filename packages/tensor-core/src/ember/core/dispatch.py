"""The op registry, and the seam through which autograd observes ops.

Every primitive is registered once here: its name (one name per primitive, shared by
autograd's formula table, the compiler and ONNX export), its forward written against
the array module ``xp``, a data-free shape/dtype rule, and its kind (``elementwise``,
``reduction``, ``view``, ``library``...). The public functions are built around the
forward with their argument handling inlined, so the hot path holds no string lookups.

tensor-core never imports autograd. Autograd installs two callables in ``hooks``:
``record(op, inputs, params, outputs)`` is called after an op ran when one of its
tensor inputs requires grad; ``inplace(target, result, op)`` is called before an
in-place op writes ``result`` into ``target`` and may refuse by raising.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Op", "register", "REGISTRY", "hooks", "grad_mode"]


class Op:
    """One primitive: name, xp forward, data-free shape/dtype rule, kind."""

    __slots__ = ("name", "forward", "meta", "kind", "differentiable", "kernels")

    def __init__(self, name: str, forward: Callable[..., Any],
                 meta: Callable[..., Any] | str | None, kind: str, differentiable: bool):
        self.name = name
        self.forward = forward
        self.meta = meta
        self.kind = kind
        self.differentiable = differentiable
        # Faster per-device kernels (e.g. a Triton kernel for "cuda") registered beside the
        # xp forward, never as a branch inside it.
        self.kernels: dict[str, Callable[..., Any]] = {}

    def __repr__(self) -> str:
        return f"<op {self.name} ({self.kind})>"


REGISTRY: dict[str, Op] = {}


def register(name: str, forward: Callable[..., Any],
             meta: Callable[..., Any] | str | None = None, kind: str = "library",
             differentiable: bool = True) -> Op:
    """Register a primitive once; a second registration under one name is a bug.

    ``meta`` is the data-free shape/dtype rule, None to evaluate ``forward`` on zero-strided
    placeholders, or ``meta.DYNAMIC`` when the output shape depends on the values.
    """
    if name in REGISTRY:
        raise RuntimeError(f"op {name!r} is registered twice")
    op = Op(name, forward, meta, kind, differentiable)
    REGISTRY[name] = op
    return op


class _Hooks:
    __slots__ = ("record", "inplace")

    def __init__(self) -> None:
        self.record: Callable[..., None] | None = None
        self.inplace: Callable[..., None] | None = None


hooks = _Hooks()


class _GradMode(threading.local):
    """Thread-local grad mode; read by autograd's record hook, set by no_grad and friends."""

    def __init__(self) -> None:
        self.enabled = True
        self.inference = False


grad_mode = _GradMode()
