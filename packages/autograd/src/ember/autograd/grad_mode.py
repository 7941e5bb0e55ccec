"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Each is a context manager and a decorator (of functions and generator functions), and
acts on the calling thread only: the state lives in tensor-core's thread-local
``grad_mode``, which the record hook reads before building any graph.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from ember.core.dispatch import grad_mode

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]

F = TypeVar("F", bound=Callable[..., Any])


def is_grad_enabled() -> bool:
    """True when operations are recorded for autograd on this thread."""
    return grad_mode.enabled


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()`` on this thread."""
    return grad_mode.inference


class _DecoratorContextManager:
    """A context manager that also decorates functions: each call runs inside a fresh copy."""

    def clone(self) -> _DecoratorContextManager:
        return self.__class__()

    def __enter__(self) -> None:
        raise NotImplementedError

    def __exit__(self, *exc: Any) -> None:
        raise NotImplementedError

    def __call__(self, func: F) -> F:
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)  # type: ignore[return-value]

        @functools.wraps(func)
        def decorated(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)

        return decorated  # type: ignore[return-value]

    def _wrap_generator(self, func: Callable[..., Any]) -> Callable[..., Any]:
        # The mode holds while the generator body runs, not while its caller does.
        @functools.wraps(func)
        def generator(*args: Any, **kwargs: Any) -> Any:
            gen = func(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as exc:
                        with self.clone():
                            response = gen.throw(exc)
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value

        return generator


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable bare: ``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, orig_func: Callable[..., Any] | None = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disable gradient recording: results of ops do not require grad.

    Example::

        with ember.no_grad():
            y = x * 2        # y.requires_grad is False
    """

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = grad_mode.enabled
        grad_mode.enabled = False

    def __exit__(self, *exc: Any) -> None:
        grad_mode.enabled = self.prev


class enable_grad(_NoParamDecoratorContextManager):
    """Enable gradient recording, e.g. inside a ``no_grad`` block."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = grad_mode.enabled
        grad_mode.enabled = True

    def __exit__(self, *exc: Any) -> None:
        grad_mode.enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Set gradient recording on or off.

    Acts at once when called (``ember.set_grad_enabled(False)``); as a context manager or
    decorator, restores the previous mode on exit.
    """

    def __init__(self, mode: bool) -> None:
        self.prev = grad_mode.enabled
        self.mode = bool(mode)
        grad_mode.enabled = self.mode

    def __call__(self, func: F) -> F:
        # Used as a decorator, the mode applies only while the function runs.
        grad_mode.enabled = self.prev
        return super().__call__(func)

    def __enter__(self) -> None:
        grad_mode.enabled = self.mode

    def __exit__(self, *exc: Any) -> None:
        grad_mode.enabled = self.prev

    def clone(self) -> set_grad_enabled:
        prev = grad_mode.enabled
        copy = self.__class__(self.mode)
        grad_mode.enabled = prev
        copy.prev = prev
        return copy

    def __repr__(self) -> str:
        return f"ember.autograd.grad_mode.set_grad_enabled(mode={self.mode})"


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, for code that will never be differentiated.

    ``inference_mode(False)`` switches inference mode off (and gradient recording on)
    inside an inference-mode block.
    """

    def __new__(cls, mode: Any = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode
        self.prev = (True, False)

    def __enter__(self) -> None:
        self.prev = (grad_mode.enabled, grad_mode.inference)
        grad_mode.enabled = not self.mode
        grad_mode.inference = self.mode

    def __exit__(self, *exc: Any) -> None:
        grad_mode.enabled, grad_mode.inference = self.prev

    def clone(self) -> inference_mode:
        return self.__class__(self.mode)
