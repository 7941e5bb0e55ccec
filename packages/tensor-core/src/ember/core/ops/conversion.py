"""Moving between dtypes and devices: ``to``, ``type``, ``cpu``/``cuda``, ``clone``,
``contiguous``, and ``cast``, with which every op's wrapper promotes its operands.

Primitives: ``to_copy`` (operand ``x``; params ``dtype``, ``device``: a copy converted and
moved, laid out like ``x`` as torch's ``_to_copy`` is) and ``clone`` (params
``contiguous``: row-major rather than laid out like the input).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import CPU, array_module, canonical, check_dtype_supported, device, xp_of
from ..dispatch import dispatch, grad_mode, register
from ..layouts import channels_last_rank, contiguous_format, format_strides, preserve_format
from ..meta import MetaArray
from ..tensor import Tensor
from .geometry import restride

FUNCTIONS = ["clone"]


def move_array(data: Any, dst: device) -> Any:
    """A backend array on device ``dst`` (itself when it is there already)."""
    if data.__class__ is MetaArray:
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    on_host = isinstance(data, np.ndarray)
    if dst.type == "cpu":
        return data if on_host else data.get()
    cp = array_module(dst)
    if not on_host and data.device.id == (dst.index or 0):
        return data
    with cp.cuda.Device(dst.index or 0):
        return cp.asarray(data)


def _with_strides_of(x: Any, out: Any) -> Any:
    """``out``, numpy's copy of ``x``, with ``x``'s strides where ``x`` is row-major: torch's
    copies keep a dense tensor's strides, its size-1 dims' too, where numpy gives those its
    own (a later broadcast reads them). Called for views and the arrays Ember lays out (a
    numpy ``base``), the ones with other strides there; other layouts the kernel step holds
    to the rule."""
    if 1 not in x.shape or not x.flags.c_contiguous:
        return out
    strides = tuple(s // x.itemsize * out.itemsize for s in x.strides)
    return out if out.strides == strides else restride(out, x.shape, strides)


def _to_copy(x: Any, *, dtype: _dt.dtype, device: device) -> Any:
    data = x if device is CPU and x.__class__ is np.ndarray else move_array(x, device)
    if data.dtype != dtype.np:
        # torch casts out-of-range values silently: numpy's warnings about them are
        # filtered for Ember's modules (see ember.core), which costs nothing per call
        out = data.astype(dtype.np, order="K")
    elif data is x:
        out = data.copy(order="K")
    else:
        return data
    return out if x.base is None else _with_strides_of(x, out)


def _to_copy_meta(x: Any, *, dtype: _dt.dtype, device: device) -> Any:
    return meta.like(x, dtype)


def _clone(x: Any, *, contiguous: bool = False, strides: tuple[int, ...] | None = None) -> Any:
    if contiguous:
        return x.copy()
    if strides is not None:  # a channels-last layout: dense, so x.size elements hold it
        xp = xp_of(x)
        buffer = xp.empty(x.size, x.dtype)
        out = xp.lib.stride_tricks.as_strided(buffer, x.shape,
                                              tuple(s * x.itemsize for s in strides))
        out[...] = x
        return out
    out = x.copy(order="K")
    return out if x.base is None else _with_strides_of(x, out)


def _clone_meta(x: Any, *, contiguous: bool = False,
                strides: tuple[int, ...] | None = None) -> Any:
    if strides is not None:
        return meta.strided(x.shape, x.dtype, strides)
    return meta.empty(x.shape, x.dtype) if contiguous else meta.like(x)


TO_COPY = register("to_copy", _to_copy, _to_copy_meta, "library", device_param=True,
                   arg_names=("self",))
CLONE = register("clone", _clone, _clone_meta, "elementwise", arg_names=("self",))


def cast(t: Tensor, dt: _dt.dtype, dev: device | None = None) -> Tensor:
    """``t`` in dtype ``dt`` (on ``dev``): ``t`` itself when it is so already, else a
    ``to_copy`` (the one way wrappers promote and place their operands).

    torch's kernels promote inside, so what its nodes save is the operand itself: the copy
    names it (``_cast_of``, which autograd's nodes read instead) and shares its version
    counter, so that a write into ``t`` since refuses the backward."""
    target = t.device if dev is None else dev
    if t.dtype is dt and t.device is target:
        return t
    out: Tensor = dispatch(TO_COPY, (t,), {"dtype": dt, "device": target})
    out._vc = t._ensure_vc()
    out._cast_of = getattr(t, "_cast_of", t)
    if t._requires_grad and not out._requires_grad and grad_mode.enabled:
        # an integer tensor with a history (an in-place comparison's) cast to another
        # integer dtype, which leaves the graph: torch's op sees the operand itself, and a
        # differentiable one refuses its integer result ("Autograd not support dtype")
        out._requires_grad = True
        out._grad_fn = t._grad_fn
    return out


def _parse_to(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, bool]:
    """``to(dtype)``, ``to(device, dtype=None)``, ``to(other_tensor)``, keywords too."""
    dev = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = bool(kwargs.pop("copy", False))
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            dev, dtype = a.device, a.dtype
        elif isinstance(a, _dt.dtype) or a in (float, int, bool, complex):
            dtype = a
        elif isinstance(a, (str, device, int)) and not isinstance(a, bool):
            dev = a
        elif a is None:
            continue
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    return dev, dtype, copy


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Tensor.to(device=None, dtype=None, non_blocking=False, copy=False)."""
    if not kwargs and len(args) == 1 and args[0].__class__ is _dt.dtype:  # the common x.to(dt)
        dt, dst, copy = args[0], self.device, False
    else:
        layout = kwargs.pop("memory_format", None)
        dev, dtype, copy = _parse_to(args, kwargs)
        dst = self.device if dev is None else canonical(device(dev))
        dt = self.dtype if dtype is None else _dt.to_dtype(dtype)
        if layout is not None and layout is not preserve_format:
            moved = to(self, dst, dt, copy=copy)
            params = _layout_params(moved, layout)
            # torch keeps the tensor where the format is its suggested one: a row-major
            # tensor is copied to channels-last strides even where they would also fit
            kept = moved.is_contiguous(memory_format=layout) and (
                layout is contiguous_format or not moved.is_contiguous())
            return moved if kept else dispatch(CLONE, (moved,), params)  # type: ignore[no-any-return]
    # devices are interned: one object per device
    if dst is self.device and dt is self.dtype and not copy:
        return self
    if dst is not self.device and dst.type == "cuda":
        array_module(dst)  # raises clearly when CUDA is missing
    check_dtype_supported(dt, dst)
    return TO_COPY.door((self,), {"dtype": dt, "device": dst})  # type: ignore[no-any-return]


def cpu(self: Tensor, memory_format: Any = None) -> Tensor:
    return to(self, CPU)


def cuda(self: Tensor, device: Any = None, non_blocking: bool = False, memory_format: Any = None
         ) -> Tensor:
    return to(self, "cuda" if device is None else
              device if isinstance(device, (str, device_type)) else f"cuda:{device}")


device_type = device


def type(self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """``t.type()`` names the tensor type; ``t.type(dtype)`` casts."""
    if dtype is None:
        prefix = "torch.cuda." if self.device.type == "cuda" else "torch."
        return f"{prefix}{_dt.scalar_type_name(self.dtype)}Tensor"
    if isinstance(dtype, str) and dtype.endswith("Tensor"):
        dtype = _LEGACY_NAMES[dtype.rsplit(".", 1)[-1]]
    return to(self, dtype=dtype)


_LEGACY_NAMES = {"FloatTensor": _dt.float32, "DoubleTensor": _dt.float64, "HalfTensor": _dt.float16,
                 "BFloat16Tensor": _dt.bfloat16, "LongTensor": _dt.int64, "IntTensor": _dt.int32,
                 "ShortTensor": _dt.int16, "CharTensor": _dt.int8, "ByteTensor": _dt.uint8,
                 "BoolTensor": _dt.bool}


def _caster(dt: _dt.dtype) -> Any:
    def cast(self: Tensor, memory_format: Any = None) -> Tensor:
        return to(self, dtype=dt)

    cast.__name__ = dt.name
    cast.__doc__ = f"``self.to({dt})``"
    return cast


def _layout_params(t: Tensor, memory_format: Any) -> dict[str, Any] | None:
    """CLONE's params for ``memory_format`` (None: the input's own layout), with torch's
    error for a channels-last format of the wrong rank."""
    if memory_format is None or memory_format is preserve_format:
        return None
    if memory_format is contiguous_format:
        return {"contiguous": True}
    rank = channels_last_rank(memory_format)
    if rank is None:
        raise TypeError(f"memory_format must be a torch.memory_format, not "
                        f"{memory_format.__class__.__name__}")
    if t.ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {memory_format.name} format")
    return {"strides": format_strides(memory_format, t.shape)}


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """A copy with its own storage, in the autograd graph (grad flows back to ``input``),
    laid out like ``input`` (``memory_format=contiguous_format``: row-major;
    ``channels_last``/``channels_last_3d``: channels fastest)."""
    return dispatch(CLONE, (input,),  # type: ignore[no-any-return]
                    _layout_params(input, memory_format))


def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    """``self`` when already laid out in ``memory_format`` (row-major by default), else a
    copy so laid out."""
    if self.is_contiguous(memory_format=memory_format):
        return self
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    params = _layout_params(self, contiguous_format if memory_format is None else memory_format)
    return dispatch(CLONE, (self,), params)  # type: ignore[no-any-return]


METHODS = {
    "to": to, "cpu": cpu, "cuda": cuda, "type": type, "clone": clone, "contiguous": contiguous,
    "float": _caster(_dt.float32), "double": _caster(_dt.float64), "half": _caster(_dt.float16),
    "bfloat16": _caster(_dt.bfloat16), "long": _caster(_dt.int64), "int": _caster(_dt.int32),
    "short": _caster(_dt.int16), "char": _caster(_dt.int8), "byte": _caster(_dt.uint8),
    "bool": _caster(_dt.bool), "cfloat": _caster(_dt.complex64), "cdouble": _caster(_dt.complex128),
}
