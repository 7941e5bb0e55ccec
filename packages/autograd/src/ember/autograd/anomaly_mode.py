"""Anomaly detection: name the backward function that failed or produced NaN, and show
the forward call that created it."""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Callable
from typing import Any

from ember.core.tensor import Tensor

from .grad_mode import _DecoratorContextManager

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


class _State:
    __slots__ = ("enabled", "check_nan")

    def __init__(self) -> None:
        self.enabled = False
        self.check_nan = True


state = _State()


def is_anomaly_enabled() -> bool:
    return state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return state.check_nan


class detect_anomaly(_DecoratorContextManager):
    """Context manager and decorator turning anomaly detection on.

    Nodes made inside remember the forward traceback; a backward function that raises
    is reported with it, and (``check_nan=True``) one that returns NaN raises
    ``RuntimeError("Function 'XBackward0' returned nan values in its 0th output.")``.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self.prev = (state.enabled, state.check_nan)
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def clone(self) -> detect_anomaly:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.__class__(self.check_nan)

    def __enter__(self) -> None:
        self.prev = (state.enabled, state.check_nan)
        state.enabled, state.check_nan = True, self.check_nan

    def __exit__(self, *exc: Any) -> None:
        state.enabled, state.check_nan = self.prev


class set_detect_anomaly(_DecoratorContextManager):
    """Turn anomaly detection on or off at once; as a context manager, restore on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (state.enabled, state.check_nan)
        self.mode = (bool(mode), bool(check_nan))
        state.enabled, state.check_nan = self.mode

    def clone(self) -> set_detect_anomaly:
        prev = (state.enabled, state.check_nan)
        copy = self.__class__(*self.mode)
        state.enabled, state.check_nan = prev
        copy.prev = prev
        return copy

    def __enter__(self) -> None:
        state.enabled, state.check_nan = self.mode

    def __exit__(self, *exc: Any) -> None:
        state.enabled, state.check_nan = self.prev


def forward_trace() -> list[str]:
    """The stack of the op being recorded, without autograd's and tensor-core's frames."""
    frames = traceback.extract_stack()[:-1]
    keep = [f for f in frames if "/ember/autograd/" not in f.filename
            and "/ember/core/" not in f.filename]
    return traceback.format_list(keep)


def run_checked(node: Any, vjp: Callable[..., Any], grads: Any) -> Any:
    """Run ``node``'s formula, reporting the forward trace when it fails or returns NaN."""
    try:
        grads_in = vjp(node, grads)
        if state.check_nan:
            for i, g in enumerate(grads_in):
                if isinstance(g, Tensor) and bool(g.isnan().any()):  # (not a ZeroGrad)
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                       f"{i}th output.")
    except Exception:
        trace = node.extra.trace if node.extra is not None else None
        if trace:
            warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that "
                          f"caused the error:\n{''.join(trace)}", stacklevel=2)
        raise
    return grads_in
