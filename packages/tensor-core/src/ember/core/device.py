"""Devices: ``cpu`` runs on NumPy, ``cuda[:n]`` on CuPy (one ``xp`` code path serves both)
and ``meta`` holds shapes without data. The default device of factories lives here too:
``set_default_device`` and ``with ember.device(...)``."""

from __future__ import annotations

import threading
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["device", "cuda_available", "device_count", "array_module", "xp_of",
           "set_default_device", "get_default_device", "enter_device"]


class device:
    """torch.device: ``device('cpu')``, ``device('cuda', 0)``, ``device('cuda:1')``."""

    __slots__ = ("type", "index", "xp")
    type: str
    index: int | None
    xp: Any  # numpy, or cupy once CUDA is first used (None until then)

    _interned: dict[tuple[str, int | None], device] = {}

    def __new__(cls, type: str | device | int, index: int | None = None) -> device:
        if isinstance(type, device):
            return type
        if isinstance(type, int):  # torch.device(0) means cuda:0
            index = type
            type = "cuda"
        if not isinstance(type, str):
            raise TypeError(f"device() expects a string or device, got {type!r}")
        if ":" in type:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in ("cpu", "cuda", "meta"):
            raise RuntimeError(
                f"Expected one of cpu, cuda, meta device type at start of device string: {type}")
        key = (type, index)
        dev = cls._interned.get(key)
        if dev is None:
            dev = object.__new__(cls)
            dev.type = type
            dev.index = index
            dev.xp = np if type != "cuda" else None  # cupy is imported on first CUDA use
            cls._interned[key] = dev
        return dev

    def __repr__(self) -> str:
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{idx})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self) -> tuple[Any, ...]:
        return (device, (self.type, self.index))

    # ``with ember.device('meta'):`` makes it the default device of the factories inside
    def __enter__(self) -> device:
        _default.stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _default.stack.pop()


CPU = device("cpu")
META = device("meta")


class _Default(threading.local):
    def __init__(self) -> None:
        self.stack: list[device] = []
        self.device: device = CPU


_default = _Default()


def set_default_device(dev: Any) -> None:
    """torch.set_default_device: where factories put tensors when not told (None: cpu)."""
    _default.device = CPU if dev is None else canonical(device(dev))


def get_default_device() -> device:
    """The device factories use when not told: the innermost ``with device(...)``, else
    the one ``set_default_device`` chose."""
    stack = _default.stack
    return canonical(stack[-1]) if stack else _default.device

_cupy: ModuleType | None = None
_cupy_error: str | None = None


def _load_cupy() -> ModuleType | None:
    global _cupy, _cupy_error
    if _cupy is None and _cupy_error is None:
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() < 1:
                raise RuntimeError("no CUDA device is visible")
            _cupy = cupy
        except Exception as exc:  # ImportError, or a CUDA driver error on a GPU-less host
            _cupy_error = f"{type(exc).__name__}: {exc}"
    return _cupy


def cuda_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    return _load_cupy() is not None


def device_count() -> int:
    cp = _load_cupy()
    return 0 if cp is None else int(cp.cuda.runtime.getDeviceCount())


def array_module(dev: device) -> ModuleType:
    """numpy for CPU tensors, cupy for CUDA tensors (raising clearly if CUDA is missing)."""
    if dev.xp is not None:
        return dev.xp  # type: ignore[no-any-return]
    cp = _load_cupy()
    if cp is None:
        raise RuntimeError(f"device {dev} requested but CUDA is not available ({_cupy_error})")
    if dev.index is not None and dev.index >= cp.cuda.runtime.getDeviceCount():
        raise RuntimeError(f"CUDA error: invalid device ordinal {dev.index}")
    dev.xp = cp
    return cp


def xp_of(array: Any) -> ModuleType:
    """The array module of a backend array (for forwards that need module functions)."""
    if isinstance(array, (np.ndarray, np.generic)):
        return np
    cp = _load_cupy()
    if cp is None or not isinstance(array, cp.ndarray):
        raise TypeError(f"expected a numpy or cupy array, got {type(array).__name__}")
    return cp


class enter_device:
    """The CUDA device ``dev`` current for the block: every kernel on a ``cuda:n`` tensor
    runs inside one (the dispatcher enters it, in one place)."""

    __slots__ = ("ctx",)

    def __init__(self, dev: device):
        cp = _load_cupy()
        self.ctx = cp.cuda.Device(dev.index or 0) if cp is not None else None

    def __enter__(self) -> None:
        if self.ctx is not None:
            self.ctx.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self.ctx is not None:
            self.ctx.__exit__(*exc)


def check_dtype_supported(dtype: Any, dev: device) -> None:
    """CuPy has no bfloat16 arrays: refuse clearly instead of failing deep inside CuPy."""
    if dev.type == "cuda" and dtype.name == "bfloat16":
        raise TypeError("bfloat16 tensors are not supported on CUDA devices (CuPy has no bfloat16 "
                        "arrays); use float16 or float32 (ember.cuda.is_bf16_supported() is False)")


def canonical(dev: device) -> device:
    """cuda means the current CUDA device: give it its index, as torch's tensors report."""
    if dev.type == "cuda" and dev.index is None:
        cp = _load_cupy()
        return device("cuda", int(cp.cuda.runtime.getDevice()) if cp is not None else 0)
    return dev
