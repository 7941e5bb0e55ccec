"""TorchDispatchMode: objects that see every primitive the dispatcher runs.

A mode entered with ``with mode:`` goes on this thread's stack; every op dispatched
while it is there reaches ``mode.__torch_dispatch__(func, types, args, kwargs)`` after
autocast and autograd, the ops backward runs included: ``func`` is the ``Op`` (call it
to run the op beneath the mode), ``args`` its operands as Tensors, ``kwargs`` its
params. The innermost mode sees a call first; while its handler runs it is off the
stack, so ``func(*args, **kwargs)`` inside reaches the next mode, then the kernel.
"""

from __future__ import annotations

from typing import Any, Self

from .dispatch import disengage, engage, state

__all__ = ["TorchDispatchMode", "PrimitiveNames", "current_modes", "is_in_torch_dispatch_mode"]


class TorchDispatchMode:
    """torch.utils._python_dispatch.TorchDispatchMode."""

    def __init__(self, _dispatch_key: Any = None) -> None:
        pass

    def __torch_dispatch__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        raise NotImplementedError

    def __enter__(self) -> Self:
        state.modes.append(self)
        engage()
        return self

    def __exit__(self, *exc: Any) -> None:
        modes = state.modes
        # the innermost entry of this mode: modes nest, and a handler may be running
        for i in range(len(modes) - 1, -1, -1):
            if modes[i] is self:
                del modes[i]
                break
        disengage()

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> Self:
        return cls(*args, **kwargs).__enter__()


class PrimitiveNames(TorchDispatchMode):
    """The names of the primitives dispatched inside ``with PrimitiveNames() as seen:``, in
    order, in ``seen.names``: what a test or ``library.opcheck`` asks when it needs to know
    that an op went through the dispatcher."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __torch_dispatch__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        self.names.append(func.name)
        return func(*args, **(kwargs or {}))


def current_modes() -> list[TorchDispatchMode]:
    """This thread's mode stack, innermost last."""
    return list(state.modes)


def is_in_torch_dispatch_mode() -> bool:
    return bool(state.modes)
