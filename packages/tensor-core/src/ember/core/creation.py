"""Making tensors from data and from shapes: ``tensor``, ``from_numpy``, ``zeros``, ``eye``,
``complex``... (``arange`` and the other ranges are in ``ranges``).

Data becomes a host constant (as torch's ``lift_fresh``), cast and moved by ``to_copy``
where the dtype or device asks for it. Factories of a shape are primitives whose device
is a param (``device=None``: the default device, see ``device.get_default_device``):

- ``empty`` (params ``size``, ``dtype``, ``device``, ``strides``: element strides, absent
  for row-major): memory of unspecified values (the reference kernel zeroes it);
  ``empty``, ``empty_like``, ``empty_strided``, ``new_empty``;
- ``full`` (the same and ``fill_value``): ``zeros``, ``ones``, ``full``, their ``_like``
  and ``new_`` forms and ``scalar_tensor``;
- ``eye`` (params ``n``, ``m``, ``dtype``, ``device``);
- ``complex`` (operands ``real``, ``imag``): laid out as torch's elementwise results.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import dtypes as _dt
from . import meta
from .device import CPU, array_module, canonical, device, get_default_device, xp_of
from .dispatch import dispatch, register
from .dtypes import scalar_type_name
from .factory_args import (
    _host_array,
    _is_index,
    _like,
    _number,
    _scalar_type,
    _sizes,
    allocate,
    filled_buffer,
    finish,
    format_strides,
    meta_array,
    parse_size,
    target,
)
from .layouts import contiguous_format
from .ops.aliasing import detach
from .ops.conversion import to
from .ops.copying import write_out
from .ops.operands import broadcast_shape, checked_scalar, device_mismatch, not_implemented
from .result_layouts import is_row_major
from .tensor import Tensor, make

__all__ = [
    "tensor", "as_tensor", "asarray", "from_numpy", "from_dlpack", "zeros", "ones", "empty",
    "full", "zeros_like", "ones_like", "empty_like", "full_like", "eye", "scalar_tensor",
    "empty_strided", "polar", "complex",
]


# ----------------------------------------------------------------------------- from data

def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """torch.tensor: a new tensor copied from ``data`` (nested sequences, numbers, arrays).

    The dtype is inferred as torch does: Python floats give the default dtype, ints int64,
    bools bool, complex the default complex dtype; arrays and tensors keep theirs.
    """
    dt = _dt.to_dtype(dtype) if dtype is not None else None
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()"
                      ".requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        out = _convert(detach(data), dt, _placed(device, data.device), True)
    else:
        out = _lifted(data, dt, _placed(device, CPU))
    return finish(out, requires_grad)


def _lifted(data: Any, dt: _dt.dtype | None, dev: device) -> Tensor:
    """Host data as a new tensor of ``dt`` on ``dev``: parsed into a host constant (as
    torch's ``lift_fresh``), then cast and moved by ``to_copy`` where needed."""
    arr, dt, aliased = _host_array(data, dt)
    kind = _dt.from_numpy_dtype(arr.dtype)
    if kind.np != arr.dtype:  # a numpy dtype Ember has no tensors of (uint16, big-endian...)
        arr, aliased = arr.astype(kind.np), False
    return _convert(make(arr, kind, CPU, is_row_major(arr)), dt, dev, True if aliased else None)


def _placed(dev: Any, data_device: device) -> Any:
    """Where ``tensor``, ``as_tensor`` and ``asarray`` put data found on ``data_device``:
    ``dev``; when None, the default device while one is set (torch's default-device mode
    gives these functions its device), else where the data is."""
    if dev is not None:
        return dev
    default = get_default_device()
    return data_device if default is CPU else default


def _convert(t: Tensor, dt: _dt.dtype | None, dev: Any, copy: bool | None) -> Tensor:
    """``t`` in dtype ``dt`` (None: its own) on ``dev``: itself when nothing changes, unless
    ``copy`` is True; ``copy=False`` refuses to copy (ValueError)."""
    new_dt, new_dev = target(t.dtype if dt is None else dt, dev)
    if new_dt is t.dtype and new_dev is t.device and not copy:
        return t
    if copy is False:
        raise ValueError(f"can't alias tensor with dtype '{t.dtype}' on {t.device} into dtype "
                         f"'{new_dt}' on {new_dev}.")
    return to(t, device=new_dev, dtype=new_dt, copy=True)  # type: ignore[no-any-return]


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """torch.as_tensor: shares memory with a tensor or ndarray of matching dtype and device,
    copies otherwise (keeping a tensor's autograd history)."""
    dt = _dt.to_dtype(dtype) if dtype is not None else None
    if isinstance(data, Tensor):
        return _convert(data, dt, _placed(device, data.device), None)
    if isinstance(data, np.ndarray) and _dt.from_numpy_dtype(data.dtype).np == data.dtype:
        return _convert(from_numpy(data), dt, _placed(device, CPU), None)
    return tensor(data, dtype=dt, device=device)


def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool = False) -> Tensor:
    """torch.asarray: like ``as_tensor``; ``copy=True`` always copies, ``copy=False`` never
    does (ValueError when it would have to); objects with ``__dlpack__`` are shared."""
    dt = _dt.to_dtype(dtype) if dtype is not None else None
    if isinstance(obj, Tensor):
        out = _convert(obj, dt, _placed(device, obj.device), copy)
    elif isinstance(obj, np.ndarray) or hasattr(obj, "__dlpack__"):
        shared = from_numpy(obj) if isinstance(obj, np.ndarray) else from_dlpack(obj)
        out = _convert(shared, dt, _placed(device, shared.device), copy)
    else:
        if copy is False:
            raise ValueError(f"can't alias {type(obj).__name__} data into a tensor without "
                             "copying it")
        out = tensor(obj, dtype=dt, device=device)
    if requires_grad:
        out.requires_grad_(True)
    return out


_warned_readonly: list[bool] = []


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A CPU tensor sharing ``ndarray``'s memory: writes through either show in both."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if not ndarray.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte "
                         "order. Conversion between byte orders is currently not supported.")
    dt = _dt.from_numpy_dtype(ndarray.dtype)
    if dt.np != ndarray.dtype:
        raise TypeError(f"can't convert np.ndarray of type numpy.{ndarray.dtype.name}: Ember "
                        "has no such dtype, so it cannot share this array's memory")
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    if not ndarray.flags.writeable and not _warned_readonly:
        _warned_readonly.append(True)
        warnings.warn("The given NumPy array is not writable; writing to the tensor made from "
                      "it will fail. Copy the array or make it writable first.", UserWarning,
                      stacklevel=2)
    return make(ndarray, dt, CPU, is_row_major(ndarray))


class _Capsule:
    """A legacy DLPack capsule (``to_dlpack()``'s result) posing as a CPU producer."""

    def __init__(self, capsule: Any):
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


def from_dlpack(ext_tensor: Any) -> Tensor:
    """Zero-copy import of any object with ``__dlpack__`` (CPU into numpy, CUDA into cupy)."""
    if isinstance(ext_tensor, Tensor):
        return make(ext_tensor._data, ext_tensor.dtype, ext_tensor.device, ext_tensor._row_major)
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(f"from_dlpack(): expected an object with __dlpack__, got "
                        f"{type(ext_tensor).__name__}")
    dev_type, dev_index = ext_tensor.__dlpack_device__()
    if int(dev_type) == 1:  # kDLCPU
        arr = np.from_dlpack(ext_tensor)
        return make(arr, _dt.from_numpy_dtype(arr.dtype), CPU)
    d = canonical(device("cuda", int(dev_index)))
    arr = array_module(d).from_dlpack(ext_tensor)
    return make(arr, _dt.from_numpy_dtype(arr.dtype), d)


# ----------------------------------------------------------------------------- from shapes

def _empty(*, size: tuple[int, ...], dtype: _dt.dtype, device: device,
           strides: tuple[int, ...] | None = None) -> Any:
    # zeroed rather than uninitialized, so that a recorded call replays bit for bit (numpy
    # takes zeroed pages from the system for large buffers: no pass over the memory)
    xp = device.xp or array_module(device)
    return xp.zeros(size, dtype.np) if strides is None else allocate(xp, size, dtype.np,
                                                                     strides, 0)


def _full(*, size: tuple[int, ...], fill_value: Any, dtype: _dt.dtype, device: device,
          strides: tuple[int, ...] | None = None) -> Any:
    xp = device.xp or array_module(device)
    if strides is None:
        if fill_value.__class__ is int and fill_value == 0:  # zeros(): the hot path
            return xp.zeros(size, dtype.np)
        return filled_buffer(xp, size, dtype.np, fill_value)
    return allocate(xp, size, dtype.np, strides, fill_value)


def _factory_meta(*, size: tuple[int, ...], dtype: _dt.dtype,
                  strides: tuple[int, ...] | None = None, **params: Any) -> meta.MetaArray:
    return meta_array(size, dtype, strides)


def _eye(*, n: int, m: int, dtype: _dt.dtype, device: device) -> Any:
    return array_module(device).eye(n, m, dtype=dtype.np)


def _eye_meta(*, n: int, m: int, dtype: _dt.dtype, device: device) -> meta.MetaArray:
    return meta.empty((n, m), dtype)


EMPTY = register("empty", _empty, _factory_meta, "factory", differentiable=False,
                 device_param=True)
FULL = register("full", _full, _factory_meta, "factory", differentiable=False,
                device_param=True)
EYE = register("eye", _eye, _eye_meta, "factory", differentiable=False, device_param=True)


def _filled(size: tuple[int, ...], value: Any, dt: _dt.dtype, d: device,
            strides: tuple[int, ...] | None = None) -> Tensor:
    """A new tensor holding ``value`` (None: uninitialized) everywhere, laid out with
    element ``strides`` (None: row-major)."""
    if value is None:
        op, params = EMPTY, {"size": size, "dtype": dt, "device": d}
    else:
        op, params = FULL, {"size": size, "fill_value": value, "dtype": dt, "device": d}
    if strides is not None:
        params["strides"] = strides
    return op.door((), params)  # type: ignore[no-any-return]


def _sized(op: str, size: tuple[Any, ...], kwargs: dict[str, Any], value: Any, dtype: Any,
           device: Any, requires_grad: bool, out: Tensor | None) -> Tensor:
    """``zeros`` and ``ones``: ``value`` in every element of a new row-major tensor."""
    shape = _sizes(op, size, kwargs)
    dt, d = target(dtype, device)
    t = FULL.door((), {"size": shape, "fill_value": value, "dtype": dt, "device": d})
    return t if out is None and not requires_grad else finish(t, requires_grad, out, op)


def zeros(*size: Any, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
          device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
          **kwargs: Any) -> Tensor:
    """torch.zeros(*size, dtype=None, device=None, requires_grad=False)."""
    return _sized("zeros", size, kwargs, 0, dtype, device, requires_grad, out)


def ones(*size: Any, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
         device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
         **kwargs: Any) -> Tensor:
    """torch.ones(*size, dtype=None, device=None, requires_grad=False)."""
    return _sized("ones", size, kwargs, 1, dtype, device, requires_grad, out)


def empty(*size: Any, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
          device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
          memory_format: Any = None, **kwargs: Any) -> Tensor:
    """torch.empty: uninitialized memory of the given shape (row-major, or channels last
    with ``memory_format=channels_last``)."""
    shape = _sizes("empty", size, kwargs)
    dt, d = target(dtype, device)
    strides = format_strides(shape, memory_format or contiguous_format)
    return finish(_filled(shape, None, dt, d, strides), requires_grad, out, "empty")


def empty_strided(size: Any, stride: Any, *, dtype: Any = None, layout: Any = None,
                  device: Any = None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """torch.empty_strided: uninitialized memory with the given element strides."""
    for name, value in (("size", size), ("stride", stride)):
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"empty_strided(): argument '{name}' must be tuple of ints, not "
                            f"{type(value).__name__}")
    shape = parse_size((size,), "empty_strided")
    strides = _stride_values(stride)
    if len(strides) != len(shape):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality "
                           f"of strides ({len(strides)})")
    if any(s < 0 for s in strides):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} and "
                           f"strides={list(strides)}")
    dt, d = target(dtype, device)
    return finish(_filled(shape, None, dt, d, strides), requires_grad)


def _stride_values(stride: Sequence[Any]) -> tuple[int, ...]:
    for i, s in enumerate(stride):
        if not _is_index(s):
            raise TypeError(f"empty_strided(): argument 'stride' (position 2) must be tuple of "
                            f"ints, but found element of type {type(s).__name__} at pos {i}")
    return tuple(int(s) for s in stride)


def full(size: Any, fill_value: Any, *, out: Tensor | None = None, dtype: Any = None,
         layout: Any = None, device: Any = None, requires_grad: bool = False,
         pin_memory: bool = False) -> Tensor:
    """torch.full: dtype is inferred from ``fill_value`` (bool, int64, default float/complex)."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    shape = parse_size((size,), "full")
    value = _number("full", "fill_value", fill_value)
    dt, d = target(dtype, device, _scalar_type(value))
    value = checked_scalar(value, dt)
    return finish(_filled(shape, value, dt, d), requires_grad, out, "full")


def _filled_like(op: str, input: Tensor, value: Any, dtype: Any, device: Any,
                 requires_grad: bool, memory_format: Any, given: bool = False) -> Tensor:
    """The ``*_like`` factories: ``value`` (None: uninitialized; ``given``: the user's, to
    check) in a tensor with ``input``'s shape, dtype, device and layout unless given."""
    shape, dt, d, strides = _like(op, input, dtype, device, memory_format)
    if given:
        value = checked_scalar(_number(op, "fill_value", value), dt)
    return finish(_filled(shape, value, dt, d, strides), requires_grad)


def zeros_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """torch.zeros_like: zeros with ``input``'s shape, dtype, device and layout unless
    given."""
    return _filled_like("zeros_like", input, 0, dtype, device, requires_grad, memory_format)


def ones_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """torch.ones_like: ones with ``input``'s shape, dtype, device and layout unless given."""
    return _filled_like("ones_like", input, 1, dtype, device, requires_grad, memory_format)


def empty_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """torch.empty_like: uninitialized memory with ``input``'s shape, dtype, device and
    layout unless given."""
    return _filled_like("empty_like", input, None, dtype, device, requires_grad, memory_format)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, layout: Any = None,
              device: Any = None, requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """torch.full_like: ``fill_value`` everywhere, in ``input``'s dtype unless given."""
    return _filled_like("full_like", input, fill_value, dtype, device, requires_grad,
                        memory_format, given=True)


def eye(n: int, m: int | None = None, *, out: Tensor | None = None, dtype: Any = None,
        layout: Any = None, device: Any = None, requires_grad: bool = False,
        pin_memory: bool = False) -> Tensor:
    """torch.eye: an n x m (default n x n) matrix with ones on the diagonal."""
    for name, v in (("n", n), ("m", m)):
        if v is not None and not _is_index(v):
            raise TypeError(f"eye(): argument '{name}' must be int, not {type(v).__name__}")
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    dt, d = target(dtype, device)
    params = {"n": int(n), "m": int(n if m is None else m), "dtype": dt, "device": d}
    return finish(EYE.door((), params), requires_grad, out, "eye")


def scalar_tensor(s: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """torch.scalar_tensor: a 0-d tensor of the default float dtype (or ``dtype``)."""
    dt, d = target(dtype, device)
    value = checked_scalar(_number("scalar_tensor", "s", s), dt)
    return finish(_filled((), value, dt, d), requires_grad)


# ----------------------------------------------------------------------------- complex

def _complex_of(a: Any, b: Any) -> Any:
    """A new complex array of the broadcast shape of the real arrays ``a`` and ``b``, laid
    out from them as TensorIterator lays out its result."""
    shape = meta.broadcast_shapes(a.shape, b.shape)
    dt = _dt.from_numpy_dtype(a.dtype).to_complex()
    return allocate(xp_of(a), shape, dt.np, meta.elementwise_strides(shape, (a, b)))


def _complex_forward(real: Any, imag: Any) -> Any:
    out = _complex_of(real, imag)
    out.real = real  # part by part: -0.0 and nan parts stay exactly as given
    out.imag = imag
    return out


def _complex_meta(real: Any, imag: Any) -> meta.MetaArray:
    shape = meta.broadcast_shapes(real.shape, imag.shape)
    dt = _dt.from_numpy_dtype(real.dtype).to_complex()
    return meta.strided(shape, dt, meta.elementwise_strides(shape, (real, imag)))


def _complex_parts(op: str, a: Any, b: Any) -> None:
    """torch's checks of the parts of ``complex`` and ``polar``: real tensors of one float
    dtype on one device, broadcastable."""
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        bad = b if isinstance(a, Tensor) else a
        raise TypeError(f"{op}(): expected Tensor arguments, got {type(bad).__name__}")
    if a.dtype not in (_dt.float32, _dt.float64, _dt.float16) or \
            b.dtype not in (_dt.float32, _dt.float64, _dt.float16):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{scalar_type_name(a.dtype)} and {scalar_type_name(b.dtype)}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {scalar_type_name(a.dtype)} but got "
                           f"scalar type {scalar_type_name(b.dtype)} for second argument")
    if a.device != b.device:
        raise device_mismatch(op, a.device, b.device)
    broadcast_shape(op, a._data.shape, b._data.shape)  # torch's message when they do not
    if a.dtype is _dt.float16:
        if op == "polar":  # torch's polar kernel has no Half
            raise not_implemented("polar_cpu", a.dtype)
        # torch's complex32 is experimental and numpy has no such dtype (a known difference)
        raise RuntimeError(f"{op}: complex32 (ComplexHalf) results are not supported by Ember")


COMPLEX = register("complex", _complex_forward, _complex_meta, "elementwise",
                   arg_names=("real", "imag"))


def _polar_forward(abs: Any, angle: Any) -> Any:
    xp = xp_of(abs)
    out = _complex_of(abs, angle)
    out.real = abs * xp.cos(angle)  # torch's kernel: (abs cos(angle), abs sin(angle))
    out.imag = abs * xp.sin(angle)
    return out


POLAR = register("polar", _polar_forward, _complex_meta, "elementwise",
                 arg_names=("abs", "angle"))


def complex(real: Tensor, imag: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.complex: a complex tensor with real part ``real`` and imaginary part ``imag``."""
    _complex_parts("complex", real, imag)
    res = dispatch(COMPLEX, (real, imag), None)
    return res if out is None else write_out("complex", out, res)


def polar(abs: Tensor, angle: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.polar: the complex tensor ``abs * (cos(angle) + i sin(angle))``."""
    _complex_parts("polar", abs, angle)
    res = dispatch(POLAR, (abs, angle), None)
    return res if out is None else write_out("polar", out, res)


def _reduce_ex(self: Tensor, protocol: Any) -> Any:
    """Pickling: the host data, dtype, device and requires_grad, rebuilt by ``tensor``."""
    return (tensor, (self._host().copy(), self.dtype, str(self.device), self._requires_grad))


PROTOCOL = {"__reduce_ex__": _reduce_ex}


def _new(maker: Callable[..., Tensor], kind: str) -> Callable[..., Tensor]:
    def method(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, layout: Any = None,
               pin_memory: bool = False) -> Tensor:
        return maker(*size, dtype=self.dtype if dtype is None else dtype,
                     device=self.device if device is None else device,
                     requires_grad=requires_grad)

    method.__name__ = f"new_{kind}"
    method.__doc__ = f"A new {kind} tensor with this tensor's dtype and device unless given."
    return method


def new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """A tensor of ``size`` full of ``fill_value``, with this tensor's dtype and device."""
    return full(size, fill_value, dtype=self.dtype if dtype is None else dtype,
                device=self.device if device is None else device, requires_grad=requires_grad)


def new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """A tensor of ``data``, with this tensor's dtype and device unless given."""
    return tensor(data, dtype=self.dtype if dtype is None else dtype,
                  device=self.device if device is None else device, requires_grad=requires_grad)


METHODS = {"new_zeros": _new(zeros, "zeros"), "new_ones": _new(ones, "ones"),
           "new_empty": _new(empty, "empty"), "new_full": new_full, "new_tensor": new_tensor}
