"""Launching Triton kernels on Ember's arrays: cupy arrays on a GPU, numpy arrays under
Triton's interpreter (``TRITON_INTERPRET=1`` set before triton is imported: the kernels
run on the CPU through numpy, which is how they are tested without a GPU).

Triton takes a tensor argument as any object with ``data_ptr()`` and a ``dtype`` whose
name it knows (numpy's dtypes, which cupy's arrays carry too, name themselves as torch's
do: 'float32', 'int64'), which ``Pointer`` gives. Its interpreter also copies each
argument to the host and back through torch's storage methods (``untyped_storage``,
``cpu``, ``new_empty``, ``set_``, ``copy_``): for numpy memory, which is the host's
already, ``Pointer`` answers them with itself and copies nothing.

The stream: a launch goes to the current stream of Triton's driver, which is torch's
current stream where torch was imported when the driver was first used, else the CUDA
default stream 0 (the NVIDIA driver's own hooks, no torch needed). cupy's current stream
is 0 too unless a program makes another one current; then the kernel is compiled (or
found compiled) through ``warmup`` and launched on cupy's stream explicitly. The device
is the CUDA runtime's current one, which the dispatcher sets (cupy's ``Device``) around
every kernel of a ``cuda:n`` tensor, and which both torch's and the driver's hooks read.
(Triton counts its NVIDIA driver active, where torch is imported, only if torch itself
sees CUDA: a CPU build of torch imported beside cupy leaves Triton without a driver.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import triton
import triton.language as tl

from .. import meta
from ..device import _load_cupy, xp_of

__all__ = ["INTERPRETED", "ARRAYS", "FLOATS", "Pointer", "launch", "empty_strided", "laid_out",
           "dense_like", "block_size", "compute_type", "warps"]

INTERPRETED = bool(triton.knobs.runtime.interpret)
_cupy = None if INTERPRETED else _load_cupy()
# the arrays a launch takes as pointers
ARRAYS: tuple[type, ...] = (np.ndarray,) if _cupy is None else (np.ndarray, _cupy.ndarray)
# fused multiply-adds, as Triton's default; asked for by name, which also keeps Triton 3.9
# from warning that its default will change
_OPTIONS = {"enable_fp_fusion": True}
# the dtypes the kernels take (cupy has no bfloat16)
FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


class Pointer:
    """An array as a Triton kernel's pointer argument: its first element's address and
    its dtype (bool as uint8: one byte per element, which kernels read and write as
    numbers)."""

    __slots__ = ("dtype", "_address")

    def __init__(self, array: Any):
        self.dtype = np.dtype(np.uint8) if array.dtype == np.bool_ else array.dtype
        self._address = array.ctypes.data if array.__class__ is np.ndarray else array.data.ptr

    def data_ptr(self) -> int:
        return self._address

    # The interpreter's copy to the host and back: the memory is the host's already.
    def untyped_storage(self) -> Pointer:
        return self

    def cpu(self) -> Pointer:
        return self

    def new_empty(self, *size: Any, **options: Any) -> Pointer:
        return self

    def set_(self, *source: Any) -> Pointer:
        return self

    def storage_offset(self) -> int:
        return 0

    def size(self) -> tuple[int, ...]:
        return ()

    def stride(self) -> tuple[int, ...]:
        return ()

    def copy_(self, other: Any) -> Pointer:
        return self


def launch(kernel: Any, grid: tuple[int, ...], *args: Any, num_warps: int = 4,
           num_stages: int = 3) -> None:
    """Run the ``@triton.jit`` ``kernel`` over ``grid`` on ``args``, every parameter of its
    signature in order (arrays become ``Pointer``s; constexprs given by value), with
    ``num_warps`` warps a program and ``num_stages`` stages of software pipelining (3 is
    Triton's default)."""
    converted = [Pointer(a) if isinstance(a, ARRAYS) else a for a in args]
    options = {"num_warps": num_warps, "num_stages": num_stages, **_OPTIONS}
    if not INTERPRETED:
        stream = _cupy.cuda.get_current_stream().ptr  # type: ignore[union-attr]
        driver = triton.runtime.driver.active
        if stream != driver.get_current_stream(driver.get_current_device()):
            compiled = kernel.warmup(*converted, grid=grid, **options)
            compiled[grid](*converted, stream=stream)
            return
    kernel[grid](*converted, **options)


def empty_strided(xp: Any, shape: tuple[int, ...], dtype: Any,
                  strides: tuple[int, ...]) -> Any:
    """A new ``xp`` array of ``shape`` with element ``strides`` (dense: they tile it)."""
    size = int(np.prod(shape))
    if size == 0 or strides == meta.contiguous_strides(shape):
        return xp.empty(shape, dtype)
    base = xp.empty(size, dtype)
    return xp.lib.stride_tricks.as_strided(base, shape, tuple(s * base.itemsize for s in strides))


def laid_out(x: Any) -> bool:
    """Whether ``x`` is laid out as the elementwise rule (TensorIterator) lays out its
    results: dense, its elements tiling its memory from its first one, so that a kernel
    over that memory in order visits each element once."""
    return meta.elementwise_strides(x.shape, [x]) == meta.element_strides(x)


def dense_like(x: Any) -> Any:
    """``x`` itself where it is ``laid_out``, else a copy laid out so."""
    if laid_out(x):
        return x
    dense = empty_strided(xp_of(x), x.shape, x.dtype, meta.elementwise_strides(x.shape, [x]))
    dense[...] = x
    return dense


def compute_type(dtype: Any) -> Any:
    """The Triton dtype a kernel computes ``dtype`` in: float32 for float16 (as the
    reference forwards do), else ``dtype``'s own."""
    return tl.float64 if dtype == np.float64 else tl.float32


def block_size(n: int, limit: int) -> int:
    """The power of two covering ``n`` elements, from 16 up to ``limit``."""
    return max(16, min(limit, triton.next_power_of_2(n)))


def warps(block: int) -> int:
    """Warps for a program working on ``block`` elements at once: 4, and more for blocks
    past 2048, so that a thread holds at most 16 of them."""
    return 4 if block <= 2048 else 8 if block <= 4096 else 16
