"""Making tensors from data and from shapes: ``tensor``, ``from_numpy``, ``zeros``, ``eye``,
``complex``... (``arange`` and the other ranges are in ``ranges``)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import dtypes as _dt
from .device import CPU, array_module, canonical, device
from .dispatch import register
from .dtypes import scalar_type_name
from .factory_args import (
    _PY_SCALARS,
    _is_index,
    _like,
    _number,
    _sizes,
    finish,
    parse_size,
    target,
)
from .ops.operands import broadcast_shape, checked_scalar, record, write_out
from .tensor import Tensor, make

__all__ = [
    "tensor", "as_tensor", "asarray", "from_numpy", "from_dlpack", "zeros", "ones", "empty",
    "full", "zeros_like", "ones_like", "empty_like", "full_like", "eye", "scalar_tensor",
    "empty_strided", "polar", "complex",
]

# ``complex`` is a torch function here; this keeps Python's builtin at hand.
_pycomplex = complex
_PY_KINDS = frozenset(_PY_SCALARS)


# ----------------------------------------------------------------------------- from data

def _nested_shape(data: Any) -> list[int]:
    """The shape torch reads off a nested sequence: the lengths down the first elements."""
    shape: list[int] = []
    x = data
    while True:
        if isinstance(x, np.ndarray) and x.ndim:
            shape.extend(x.shape)
            return shape
        if isinstance(x, str):
            raise ValueError(f"too many dimensions '{type(x).__name__}'")
        if not _is_sequence(x):
            return shape
        n = len(x)
        shape.append(n)
        if n == 0:
            return shape
        x = x[0]


def _is_sequence(x: Any) -> bool:
    return isinstance(x, (list, tuple, range)) or (
        isinstance(x, Sequence) and not isinstance(x, (str, bytes, Tensor)))


def _leaves(data: Any, shape: list[int]) -> list[Any]:
    """The scalars of a nested sequence in row-major order, checking it is not ragged."""
    level = [data]
    for dim, n in enumerate(shape):
        flat: list[Any] = []
        extend = flat.extend
        for x in level:
            if type(x) is not list and type(x) is not tuple:
                if isinstance(x, (np.ndarray, Tensor)) and x.ndim:
                    x = list(x._host() if isinstance(x, Tensor) else x)
                elif _is_sequence(x):
                    x = list(x)
                else:
                    raise TypeError("not a sequence")
            if len(x) != n:
                raise ValueError(f"expected sequence of length {n} at dim {dim} (got {len(x)})")
            extend(x)
        level = flat
    return level


def _scalar_type(x: Any) -> _dt.dtype:
    """torch's ``infer_scalar_type`` of one element."""
    t = type(x)
    if t is float:
        return _dt.get_default_dtype()
    if t is int:
        return _dt.int64
    if t is bool:
        return _dt.bool
    if t is _pycomplex:
        return _dt.default_complex()
    if isinstance(x, (Tensor, np.ndarray, np.generic)):
        return x.dtype if isinstance(x, Tensor) else _dt.from_numpy_dtype(x.dtype)
    if isinstance(x, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{t.__name__}'")
    if _is_sequence(x):
        out = None
        for item in x:
            d = _scalar_type(item)
            out = d if out is None else _dt.promote_types(out, d)
        return out if out is not None else _dt.get_default_dtype()
    raise RuntimeError(f"Could not infer dtype of {t.__name__}")


def _leaf_value(x: Any, dt: _dt.dtype) -> Any:
    if type(x) in _PY_SCALARS:
        return x
    if isinstance(x, (Tensor, np.ndarray)):
        if (x._data if isinstance(x, Tensor) else x).size != 1:
            if dt.category == 1:
                raise TypeError("only integer tensors of a single element can be converted to "
                                "an index")
            raise ValueError("only one element tensors can be converted to Python scalars")
        return x.item()
    if isinstance(x, np.generic) and x.dtype.kind in "biufc":
        return x.item()
    raise TypeError(f"must be real number, not {type(x).__name__}")


def _values_array(values: list[Any], dt: _dt.dtype, kinds: Any = None) -> np.ndarray:
    """Python scalars (of the types ``kinds``) as an array of ``dt``, with torch's checks for
    integer targets."""
    if kinds is None:
        kinds = set(map(type, values))
    if _pycomplex in kinds:
        if dt.category < 3 and dt is not _dt.bool:
            raise TypeError("must be real number, not complex")
        wide: Any = np.complex128
    elif dt.category >= 2 or float in kinds:
        wide = np.float64
    else:
        wide = np.int64 if int in kinds else np.bool_
    try:
        arr = np.array(values, dtype=wide)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    if dt.category == 1 and arr.size and (wide is np.float64 or dt is not _dt.int64):
        checked_scalar(arr.min().item(), dt)
        checked_scalar(arr.max().item(), dt)
    return arr if arr.dtype == dt.np else arr.astype(dt.np)


def _sequence_array(data: Any, dtype: _dt.dtype | None) -> tuple[np.ndarray, _dt.dtype]:
    shape = _nested_shape(data)
    if 0 in shape:  # torch neither checks nor converts the elements of an empty nest
        dt = dtype or _scalar_type(data)
        return np.empty(shape, dt.np), dt
    leaves = _leaves(data, shape)
    kinds = set(map(type, leaves))
    if dtype is not None:
        dt = dtype
    elif kinds <= _PY_KINDS:
        dt = (_dt.default_complex() if _pycomplex in kinds else _dt.get_default_dtype()
              if float in kinds else _dt.int64 if int in kinds else _dt.bool)
    else:
        dt = _scalar_type(leaves)
    if kinds <= _PY_KINDS:
        return _values_array(leaves, dt, kinds).reshape(shape), dt
    return _values_array([_leaf_value(x, dt) for x in leaves], dt).reshape(shape), dt


def _host_array(data: Any, dtype: _dt.dtype | None) -> tuple[np.ndarray, _dt.dtype, bool]:
    """``data`` as a host array of the result dtype, and whether it may alias ``data``."""
    t = type(data)
    if t is float or t is int or t is bool or t is _pycomplex:
        if dtype is None and t is not int:
            dt = _scalar_type(data)
            return np.array(data, dt.np), dt, False
        dt = dtype or _dt.int64
        return _values_array([data], dt).reshape(()), dt, False
    if isinstance(data, Tensor):
        return data._host(), dtype or data.dtype, True
    if isinstance(data, (np.ndarray, np.generic)):
        arr = np.asarray(data)
        return arr, dtype or _dt.from_numpy_dtype(arr.dtype), True
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{t.__name__}'")
    if _is_sequence(data):
        arr, dt = _sequence_array(data, dtype)
        return arr, dt, False
    if hasattr(data, "__array__") or hasattr(data, "__array_interface__") or \
            isinstance(data, memoryview):
        arr = np.asarray(data)
        return arr, dtype or _dt.from_numpy_dtype(arr.dtype), True
    raise RuntimeError(f"Could not infer dtype of {t.__name__}")


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """torch.tensor: a new tensor copied from ``data`` (nested sequences, numbers, arrays).

    The dtype is inferred as torch does: Python floats give the default dtype, ints int64,
    bools bool, complex the default complex dtype; arrays and tensors keep theirs.
    """
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()"
                      ".requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        if device is None:
            device = data.device
    dt = _dt.to_dtype(dtype) if dtype is not None else None
    arr, dt, aliased = _host_array(data, dt)
    if arr.dtype != dt.np:
        arr = arr.astype(dt.np)
    elif aliased:
        arr = arr.copy()
    _, d, xp = target(dt, device)
    return finish(arr, dt, d, xp, requires_grad)


def _convert(t: Tensor, dt: _dt.dtype | None, dev: Any, copy: bool | None) -> Tensor:
    """``t`` in dtype ``dt`` on ``dev``: itself when nothing changes and no copy is asked."""
    new_dt = t.dtype if dt is None else dt
    new_dev = t.device if dev is None else canonical(device(dev))
    if new_dt is t.dtype and new_dev == t.device and not copy:
        return t
    if copy is False:
        raise ValueError(f"can't alias tensor with dtype '{t.dtype}' on {t.device} into dtype "
                         f"'{new_dt}' on {new_dev}.")
    from .ops.conversion import to

    return to(t, device=new_dev, dtype=new_dt, copy=True)  # type: ignore[no-any-return]


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """torch.as_tensor: shares memory with a tensor or ndarray of matching dtype and device,
    copies otherwise (keeping a tensor's autograd history)."""
    dt = _dt.to_dtype(dtype) if dtype is not None else None
    if isinstance(data, Tensor):
        return _convert(data, dt, device, None)
    if isinstance(data, np.ndarray) and _dt.from_numpy_dtype(data.dtype).np == data.dtype:
        return _convert(from_numpy(data), dt, device, None)
    return tensor(data, dtype=dt, device=device)


def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool = False) -> Tensor:
    """torch.asarray: like ``as_tensor``; ``copy=True`` always copies, ``copy=False`` never
    does (ValueError when it would have to); objects with ``__dlpack__`` are shared."""
    dt = _dt.to_dtype(dtype) if dtype is not None else None
    if isinstance(obj, Tensor):
        out = _convert(obj, dt, device, copy)
    elif isinstance(obj, np.ndarray) or hasattr(obj, "__dlpack__"):
        shared = from_numpy(obj) if isinstance(obj, np.ndarray) else from_dlpack(obj)
        out = _convert(shared, dt, device, copy)
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
    return make(ndarray, dt, CPU)


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
        return make(ext_tensor._data, ext_tensor.dtype, ext_tensor.device)
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

def zeros(*size: Any, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
          device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
          **kwargs: Any) -> Tensor:
    """torch.zeros(*size, dtype=None, device=None, requires_grad=False)."""
    shape = _sizes("zeros", size, kwargs)
    dt, d, xp = target(dtype, device)
    return finish(xp.zeros(shape, dt.np), dt, d, np, requires_grad, out, "zeros")


def ones(*size: Any, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
         device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
         **kwargs: Any) -> Tensor:
    """torch.ones(*size, dtype=None, device=None, requires_grad=False)."""
    shape = _sizes("ones", size, kwargs)
    dt, d, xp = target(dtype, device)
    return finish(xp.ones(shape, dt.np), dt, d, np, requires_grad, out, "ones")


def empty(*size: Any, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
          device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
          memory_format: Any = None, **kwargs: Any) -> Tensor:
    """torch.empty: uninitialized memory of the given shape."""
    shape = _sizes("empty", size, kwargs)
    dt, d, xp = target(dtype, device)
    return finish(xp.empty(shape, dt.np), dt, d, np, requires_grad, out, "empty")


def empty_strided(size: Any, stride: Any, *, dtype: Any = None, layout: Any = None,
                  device: Any = None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """torch.empty_strided; the strides are not kept (numpy storage is C-ordered)."""
    shape = parse_size((size,), "empty_strided")
    dt, d, xp = target(dtype, device)
    return finish(xp.empty(shape, dt.np), dt, d, np, requires_grad)


def full(size: Any, fill_value: Any, *, out: Tensor | None = None, dtype: Any = None,
         layout: Any = None, device: Any = None, requires_grad: bool = False,
         pin_memory: bool = False) -> Tensor:
    """torch.full: dtype is inferred from ``fill_value`` (bool, int64, default float/complex)."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    shape = parse_size((size,), "full")
    value = _number("full", "fill_value", fill_value)
    dt, d, xp = target(dtype, device, _scalar_type(value))
    value = checked_scalar(value, dt)
    return finish(xp.full(shape, value, dt.np), dt, d, np, requires_grad, out, "full")


def zeros_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """torch.zeros_like: zeros with ``input``'s shape, dtype and device unless given."""
    shape, dt, d, xp = _like("zeros_like", input, dtype, device)
    return finish(xp.zeros(shape, dt.np), dt, d, np, requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """torch.ones_like: ones with ``input``'s shape, dtype and device unless given."""
    shape, dt, d, xp = _like("ones_like", input, dtype, device)
    return finish(xp.ones(shape, dt.np), dt, d, np, requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """torch.empty_like: uninitialized memory with ``input``'s shape, dtype and device."""
    shape, dt, d, xp = _like("empty_like", input, dtype, device)
    return finish(xp.empty(shape, dt.np), dt, d, np, requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, layout: Any = None,
              device: Any = None, requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """torch.full_like: ``fill_value`` everywhere, in ``input``'s dtype unless given."""
    shape, dt, d, xp = _like("full_like", input, dtype, device)
    value = checked_scalar(_number("full_like", "fill_value", fill_value), dt)
    return finish(xp.full(shape, value, dt.np), dt, d, np, requires_grad)


def eye(n: int, m: int | None = None, *, out: Tensor | None = None, dtype: Any = None,
        layout: Any = None, device: Any = None, requires_grad: bool = False,
        pin_memory: bool = False) -> Tensor:
    """torch.eye: an n x m (default n x n) matrix with ones on the diagonal."""
    for name, v in (("n", n), ("m", m)):
        if v is not None and not _is_index(v):
            raise TypeError(f"eye(): argument '{name}' must be int, not {type(v).__name__}")
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    dt, d, xp = target(dtype, device)
    return finish(xp.eye(int(n), int(n if m is None else m), dtype=dt.np), dt, d, np,
                  requires_grad, out, "eye")


def scalar_tensor(s: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """torch.scalar_tensor: a 0-d tensor of the default float dtype (or ``dtype``)."""
    dt, d, xp = target(dtype, device)
    value = checked_scalar(_number("scalar_tensor", "s", s), dt)
    return finish(np.asarray(value, dtype=dt.np), dt, d, xp, requires_grad)


# ----------------------------------------------------------------------------- complex

def _complex_forward(real: Any, imag: Any) -> Any:
    shape = np.broadcast_shapes(real.shape, imag.shape)
    out = np.broadcast_to(real, shape).astype(np.result_type(real.dtype, np.complex64))
    out.imag = imag  # keeps -0.0 and nan parts exactly as given
    return out


def _complex_parts(op: str, a: Any, b: Any) -> tuple[Any, Any, _dt.dtype]:
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
    if a.dtype is _dt.float16:
        raise RuntimeError(f"{op}: complex32 (ComplexHalf) results are not supported by Ember")
    if a.device != b.device:
        raise RuntimeError(f"{op}: Expected all tensors to be on the same device, but found at "
                           f"least two devices, {a.device} and {b.device}!")
    try:
        np.broadcast_shapes(a._data.shape, b._data.shape)
    except ValueError:
        broadcast_shape(op, a._data.shape, b._data.shape)  # raises torch's message
    return a._data, b._data, a.dtype.to_complex()


COMPLEX = register("complex", _complex_forward, kind="elementwise")


def complex(real: Tensor, imag: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.complex: a complex tensor with real part ``real`` and imaginary part ``imag``."""
    x, y, dt = _complex_parts("complex", real, imag)
    res = make(_complex_forward(x, y), dt, real.device)
    if real._requires_grad or imag._requires_grad:
        record(COMPLEX, (real, imag), None, res)
    if out is not None:
        return write_out("complex", out, res)
    return res


def polar(abs: Tensor, angle: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.polar: the complex tensor ``abs * (cos(angle) + i sin(angle))``."""
    from .ops.binary import mul
    from .ops.unary import cos, sin

    _complex_parts("polar", abs, angle)
    return complex(mul(abs, cos(angle)), mul(abs, sin(angle)), out=out)
