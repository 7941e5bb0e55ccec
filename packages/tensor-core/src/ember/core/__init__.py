"""ember.core: the Tensor, dtypes, devices, the op registry and every tensor op.

Each op module lists its top-level ``FUNCTIONS`` and its Tensor ``METHODS``; this file
gathers them, so adding an op never means editing two places.
"""

from __future__ import annotations

import builtins
import warnings
from types import ModuleType
from typing import TYPE_CHECKING, Any

from . import allocator, creation, dtypes, layouts, legacy, printing, random, ranges, sampling
from .creation import *  # noqa: F403
from .device import (
    cuda_available,
    device,
    device_count,
    get_default_device,
    set_default_device,
)
from .dispatch import REGISTRY, Op, dispatch, grad_mode, register
from .dtypes import *  # noqa: F403
from .function_modes import public
from .layouts import *  # noqa: F403
from .legacy import *  # noqa: F403
from .native import get_num_threads, set_num_threads
from .ops import (
    activations,
    adaptive_pooling,
    aliasing,
    attention,
    binary,
    channel_norms,
    closeness,
    contraction,
    conversion,
    convolution,
    copying,
    dropout,
    einsum_contraction,
    embedding,
    foreach,
    foreach_pointwise,
    foreach_unary,
    fused_adagrad,
    fused_optimizers,
    fused_updates,
    gather_scatter,
    indexing,
    interpolation,
    joining,
    losses,
    masked,
    minmax,
    normalization,
    norms,
    optimizer_steps,
    pointwise,
    pooling,
    products,
    rearranging,
    recurrent,
    reduction,
    scan,
    searching,
    shape,
    softmax,
    sorting,
    splitting,
    strided,
    transposing,
    unary,
)
from .printing import *  # noqa: F403
from .random import *  # noqa: F403
from .ranges import *  # noqa: F403
from .sampling import *  # noqa: F403
from .tensor import Size, Tensor

OP_MODULES: tuple[ModuleType, ...] = (
    aliasing, conversion, copying, binary, unary, pointwise, fused_updates, closeness, softmax,
    reduction, minmax, norms, normalization, scan, sorting, searching, sampling, shape,
    transposing, strided, joining, splitting, rearranging, indexing, gather_scatter, masked,
    products, contraction, embedding, dropout, attention, channel_norms,
    einsum_contraction, convolution, pooling, adaptive_pooling, interpolation, activations,
    losses, fused_optimizers, fused_adagrad, optimizer_steps, foreach, foreach_unary,
    foreach_pointwise, recurrent)


def _install(modules: tuple[ModuleType, ...]) -> list[str]:
    """The op modules' FUNCTIONS here and METHODS on Tensor, each behind the torch-function
    check (the same wrapper where a function is a method too)."""
    names = []
    g = globals()
    wrapped: dict[builtins.int, Any] = {}

    def public_once(fn: Any) -> Any:
        if not callable(fn) or isinstance(fn, type):
            return fn  # properties (``T``, ``mT``) and the like
        w = wrapped.get(id(fn))
        if w is None:
            w = wrapped[id(fn)] = public(fn)
        return w

    for mod in modules:
        for name in mod.FUNCTIONS:
            g[name] = public_once(getattr(mod, name))
            names.append(name)
        for name, fn in mod.METHODS.items():
            setattr(Tensor, name, public_once(fn))
    for mod in (creation, ranges, sampling):
        for name in mod.__all__:
            g[name] = public_once(g[name])
    for name, fn in creation.METHODS.items():
        setattr(Tensor, name, public_once(fn))
    for mod in (creation, legacy, printing):
        for name, fn in mod.PROTOCOL.items():
            setattr(Tensor, name, fn)  # __new__, __repr__, __reduce_ex__: no check
    return names


_op_names = _install(OP_MODULES)
allocator.tune()

# the ops' Triton kernels for CUDA, where triton is installed (imported at their first call)
from . import triton_kernels  # noqa: E402,F401

# torch computes inf and nan silently; NumPy warns when its ufuncs produce them. Silence those
# warnings for calls made by Ember's own code only (the filter matches the module issuing
# them): users' NumPy keeps its settings, and the hot path pays nothing (an errstate block
# would cost a microsecond per op).
warnings.filterwarnings(
    "ignore", message=r"(overflow|divide by zero|invalid value|underflow) encountered",
    category=RuntimeWarning, module=r"ember\.")


def is_tensor(obj: Any) -> builtins.bool:
    """True for ember Tensors (and subclasses such as Parameter)."""
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> builtins.int:
    """The number of elements of ``input``."""
    return input.numel()


if TYPE_CHECKING:
    # The op functions are installed above from each module's FUNCTIONS: tell type checkers
    # that names they cannot see are there.
    def __getattr__(name: str) -> Any: ...


__all__ = (["Tensor", "Size", "device", "is_tensor", "numel", "cuda_available", "device_count",
            "Op", "register", "REGISTRY", "dispatch", "grad_mode", "set_default_device",
            "get_default_device", "set_num_threads", "get_num_threads"]
           + creation.__all__ + layouts.__all__ + ranges.__all__ + legacy.__all__
           + dtypes.__all__ + random.__all__ + sampling.__all__ + printing.__all__ + _op_names)
