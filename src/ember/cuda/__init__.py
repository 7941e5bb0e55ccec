"""``ember.cuda``: CUDA availability and seeding, as ``torch.cuda`` spells them."""

from __future__ import annotations

from ember.core import device as _device
from ember.core import random as _random
from ember.core.device import cuda_available, device_count

__all__ = ["amp", "is_available", "device_count", "current_device", "is_bf16_supported",
           "manual_seed", "manual_seed_all", "synchronize", "empty_cache", "get_device_name"]


def is_available() -> bool:
    """True when CuPy imports and sees a CUDA device; False (never an error) otherwise."""
    return cuda_available()


def current_device() -> int:
    if not cuda_available():
        raise RuntimeError("CUDA is not available: no current device")
    import cupy

    return int(cupy.cuda.runtime.getDevice())


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: CuPy has no bfloat16 arrays, so Ember's CUDA tensors cannot hold bfloat16.

    Programs that pick bfloat16 only when this is True (nanoGPT does) fall back to float16.
    """
    return False


def manual_seed(seed: int) -> None:
    """Seed the random stream of the current CUDA device (the CPU stream is left alone)."""
    if cuda_available():
        _random.manual_seed_cuda(seed, current_device())


def manual_seed_all(seed: int) -> None:
    """Seed the random streams of every CUDA device."""
    _random.manual_seed_cuda(seed)


def synchronize(device: object = None) -> None:
    """Wait for all queued CUDA work (a no-op without CUDA)."""
    if cuda_available():
        import cupy

        cupy.cuda.Device().synchronize()


def empty_cache() -> None:
    """Return cached device memory to the driver (CuPy's memory pool)."""
    if cuda_available():
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()


def get_device_name(device: str | int | _device | None = None) -> str:
    """The CUDA device's name, e.g. 'NVIDIA H200'."""
    if not cuda_available():
        raise RuntimeError("CUDA is not available")
    import cupy

    if device is None:
        index = 0
    else:
        index = _device(f"cuda:{device}" if isinstance(device, int) else device).index or 0
    return str(cupy.cuda.runtime.getDeviceProperties(index)["name"].decode())


def __getattr__(name: str) -> object:
    """``ember.cuda.amp``, imported at its first use (it imports ember.amp)."""
    if name == "amp":
        import importlib

        return importlib.import_module("ember.cuda.amp")
    raise AttributeError(f"module 'ember.cuda' has no attribute {name!r}")
