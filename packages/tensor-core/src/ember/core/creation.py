"""Making tensors from data and from shapes: ``tensor``, ``zeros``, ``arange``, ``eye``..."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import dtypes as _dt
from .device import CPU, array_module, canonical, check_dtype_supported, device
from .dispatch import register
from .tensor import Size, Tensor, make

__all__ = [
    "tensor", "as_tensor", "asarray", "from_numpy", "from_dlpack", "zeros", "ones", "empty",
    "full", "zeros_like", "ones_like", "empty_like", "full_like", "arange", "range", "linspace",
    "logspace", "eye", "scalar_tensor", "empty_strided", "polar", "complex", "LongTensor",
    "FloatTensor", "DoubleTensor", "IntTensor", "ShortTensor", "CharTensor", "BoolTensor",
    "ByteTensor", "HalfTensor", "BFloat16Tensor",
]

# ``range`` and ``complex`` are torch functions here; these keep Python's builtins at hand.
_builtin_range = range
_pycomplex = complex
_PY_SCALARS = (bool, int, float, complex)
_PY_KINDS = frozenset(_PY_SCALARS)


# ----------------------------------------------------------------------------- arguments

def parse_size(args: tuple[Any, ...], op: str = "size") -> tuple[int, ...]:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(Size([2, 3]))`` all mean (2, 3)."""
    if len(args) == 1 and type(args[0]) is not int:
        only = args[0]
        if isinstance(only, (tuple, list)):
            args = tuple(only)
        elif not _is_index(only):
            raise TypeError(f"{op}(): argument 'size' (position 1) must be tuple of ints, not "
                            f"{type(only).__name__}")
    for i, a in enumerate(args):
        if type(a) is not int:
            if not _is_index(a):
                raise TypeError(f"{op}(): argument 'size' failed to unpack the object at pos "
                                f"{i + 1} with error \"type must be tuple of ints,but got "
                                f"{type(a).__name__}\"")
            args = tuple(int(x.__index__()) for x in args)
            break
    if args and min(args) < 0:
        bad = next(s for s in args if s < 0)
        raise RuntimeError(f"{op}: Trying to create tensor with negative dimension {bad}: "
                           f"{list(args)}")
    return args if type(args) is tuple else tuple(args)


def _is_index(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, Tensor):
        return x.dtype.category == 1 and x._data.size == 1
    return isinstance(x, (int, np.integer))


def _sizes(op: str, size: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, ...]:
    """The shape of ``zeros(*size)`` and friends, which also take ``size=`` by keyword."""
    if kwargs:
        if size or set(kwargs) != {"size"}:
            raise TypeError(f"{op}() got unexpected keyword arguments {sorted(kwargs)}")
        size = (kwargs["size"],)
    if not size:
        raise TypeError(f"{op}() missing 1 required positional arguments: \"size\"")
    return parse_size(size, op)


def target(dtype: Any, dev: Any, default: _dt.dtype | None = None) -> tuple[_dt.dtype, device, Any]:
    """Resolve ``dtype=``/``device=`` keyword values; returns (dtype, device, xp)."""
    dt = _dt.to_dtype(dtype) if dtype is not None else (default or _dt.get_default_dtype())
    d = CPU if dev is None else canonical(device(dev))
    xp = array_module(d)
    check_dtype_supported(dt, d)
    return dt, d, xp


def finish(host: Any, dt: _dt.dtype, d: device, xp: Any, requires_grad: bool,
           out: Tensor | None = None, op: str = "") -> Tensor:
    """Wrap the array made for device ``d`` (a host array when ``xp`` is not numpy); set
    requires_grad; honour ``out=``."""
    t = make(host if xp is np else xp.asarray(host), dt, d)
    if requires_grad:
        t.requires_grad_(True)
    if out is not None:
        from .ops.operands import write_out

        return write_out(op, out, t)
    return t


def _number(op: str, name: str, x: Any) -> Any:
    """A Python number from a number, numpy scalar or one-element tensor argument."""
    if type(x) in _PY_SCALARS:
        return x
    if isinstance(x, Tensor):
        return x.item()
    if isinstance(x, np.generic) and x.dtype.kind in "biufc":
        return x.item()
    raise TypeError(f"{op}(): argument '{name}' must be Number, not {type(x).__name__}")


_C_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
            "int64": "int64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "float32": "float", "float64": "double", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>", "bool": "bool"}


# (lowest, highest) finite value of each real dtype, for the overflow checks below.
LIMITS = {d: ((0, 1) if d is _dt.bool else
              (int(np.iinfo(d.np).min), int(np.iinfo(d.np).max)) if d.category == 1 else
              (-float(_dt.finfo(d).max), float(_dt.finfo(d).max)))
          for d in _dt.ALL_DTYPES if d.category < 3}


def checked_fill(value: Any, dt: _dt.dtype) -> Any:
    """A fill value converted like torch's ``Scalar.to<T>()``: errors when it overflows ``dt``."""
    ok = True
    if dt.category == 1:
        low, high = LIMITS[dt]
        if type(value) is _pycomplex:
            ok = value.imag == 0
            value = value.real
        if isinstance(value, float):
            ok = ok and math.isfinite(value) and low <= value <= high
        elif low == 0:  # unsigned: negative ints wrap, as in two's complement
            ok = ok and -high <= value <= high
            value %= high + 1
        else:
            ok = ok and low <= value <= high
    elif dt.category == 2:
        if type(value) is _pycomplex:
            ok, value = value.imag == 0, value.real
        if ok and math.isfinite(value):
            ok = abs(value) <= LIMITS[dt][1]
    if not ok:
        raise RuntimeError(f"value cannot be converted to type {_C_NAMES[dt.name]} without "
                           "overflow")
    return value


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
    return isinstance(x, (list, tuple, _builtin_range)) or (
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
        checked_fill(arr.min().item(), dt)
        checked_fill(arr.max().item(), dt)
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
    value = checked_fill(value, dt)
    return finish(xp.full(shape, value, dt.np), dt, d, np, requires_grad, out, "full")


def _like(op: str, input: Any, dtype: Any, device: Any) -> tuple[tuple[int, ...], _dt.dtype,
                                                                   device, Any]:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    dt, d, xp = target(input.dtype if dtype is None else dtype,
                       input.device if device is None else device)
    return input._data.shape, dt, d, xp


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
    value = checked_fill(_number("full_like", "fill_value", fill_value), dt)
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
    value = checked_fill(_number("scalar_tensor", "s", s), dt)
    return finish(np.asarray(value, dtype=dt.np), dt, d, xp, requires_grad)


# ----------------------------------------------------------------------------- ranges

def _fma(step: float, index: np.ndarray, c: Any) -> np.ndarray:
    """``step * index + c`` (float64, ``index`` holding integers below 2**26) rounded once,
    as the fused multiply-add of torch's compiled kernels; plain numpy rounds twice and can
    be an ulp away."""
    p = step * index
    big = step * 134217729.0  # Veltkamp: split step into two 26-bit halves, so that
    hi = big - (big - step)  # hi * index and lo * index are exact
    p_err = (hi * index - p) + (step - hi) * index  # step * index == p + p_err exactly
    if not p_err.any():
        return p + c  # exact products (integer steps): one rounding already
    s, s_err = _two_sum(p, c)
    u, v = _two_sum(s_err, p_err)
    r, w = _two_sum(s, u)  # step * index + c == r + w + v exactly
    # r is s + u rounded; the tiny v only decides the ties of that rounding.
    toward = np.nextafter(r, np.copysign(np.inf, w))
    tie = (w != 0) & (w == (toward - r) / 2) & (v * w > 0)
    return np.where(tie, toward, r)  # type: ignore[no-any-return]


def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _arange_values(start: float, step: float, n: int, dt: _dt.dtype) -> np.ndarray:
    """torch's CPU arange of a float dtype: ``start + step * i`` in double, except that
    full blocks of two 32-byte vectors compute ``base + k * step`` from each vector's first
    element ``base`` (rounded to ``dt``)."""
    i = np.arange(n, dtype=np.float64)
    if dt.itemsize < 4:  # half types accumulate in float
        return (np.float32(start) + np.float32(step) * i.astype(np.float32)).astype(dt.np)
    lanes = 32 // dt.itemsize
    blocked = n // (2 * lanes) * 2 * lanes
    tail = _fma(step, i[blocked:], start)
    if not blocked:
        return tail.astype(dt.np)
    first = i[:blocked] // lanes * lanes
    base = _fma(step, first, start).astype(dt.np).astype(np.float64)
    head = _fma(step, i[:blocked] - first, base)
    return np.concatenate([head, tail]).astype(dt.np)


def _range_args(op: str, start: Any, end: Any, step: Any) -> tuple[Any, Any, Any, bool]:
    start, end, step = (_number(op, "start", start), _number(op, "end", end),
                        _number(op, "step", step))
    if any(type(v) is _pycomplex for v in (start, end, step)):
        raise RuntimeError("value cannot be converted to type double without overflow")
    is_int = not any(type(v) is float for v in (start, end, step))
    return start, end, step, is_int


def _check_range(start: Any, end: Any, step: Any) -> None:
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def arange(start: Any = 0, end: Any = None, step: Any = 1, *, out: Tensor | None = None,
           dtype: Any = None, layout: Any = None, device: Any = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """torch.arange: ``[start, end)`` by ``step``; int64 when all three are integers, else
    the default float dtype."""
    if end is None:
        start, end = 0, start
    if (type(start) is int and type(end) is int and type(step) is int and dtype is None
            and device is None and out is None and not requires_grad
            and ((step > 0 and end >= start) or (step < 0 and end <= start))):
        return make(np.arange(start, end, step, dtype=np.int64), _dt.int64, CPU)
    start, end, step, is_int = _range_args("arange", start, end, step)
    dt, d, xp = target(dtype, device, _dt.int64 if is_int else None)
    if dt.category == 0 or dt.category == 3:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_dt_title(dt)}'")
    if dt.category == 1:
        # integer dtypes accumulate in int64: the bounds are truncated first
        xstart, xend, xstep = int(start), int(end), int(step)
        _check_range(xstart, xend, xstep)
        if dt is _dt.int64:
            sign = (xstep > 0) - (xstep < 0)
            n = abs(xend - xstart + xstep - sign) // abs(xstep)
        else:
            n = math.ceil((float(end) - float(start)) / float(step))
        values = np.arange(n, dtype=np.int64) * xstep + xstart
    else:
        _check_range(float(start), float(end), float(step))
        size = math.ceil((float(end) - float(start)) / float(step))
        if size > LIMITS[_dt.int64][1]:
            raise RuntimeError("invalid size, possible overflow?")
        values = _arange_values(float(start), float(step), size, dt)
    return finish(values.astype(dt.np, copy=False), dt, d, xp, requires_grad, out, "arange")


def range(start: Any = 0, end: Any = None, step: Any = 1, *, out: Tensor | None = None,
          dtype: Any = None, layout: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Deprecated torch.range: like arange but includes ``end``; default float dtype."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    start, end, step, _ = _range_args("range", start, end, step)
    dt, d, xp = target(dtype, device)
    if dt.category == 1:  # integer dtypes accumulate in int64: the bounds are truncated
        start, end, step = int(start), int(end), int(step)
        _check_range(start, end, step)
        values = np.arange((end - start) // step + 1, dtype=np.int64) * step + start
    else:
        start, end, step = float(start), float(end), float(step)
        _check_range(start, end, step)
        values = np.arange(int((end - start) / step + 1), dtype=np.float64) * step + start
    return finish(values.astype(dt.np), dt, d, xp, requires_grad, out, "range")


def _steps(op: str, steps: Any) -> int:
    if not _is_index(steps):
        raise TypeError(f"{op}(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return int(steps)


def _halves(step: Any, start: Any, end: Any, n: int, fma: bool) -> np.ndarray:
    """torch fills ``[0, n // 2)`` forward from start and the rest backward from end, so both
    endpoints are exact."""
    half = n // 2
    forward = np.arange(half, dtype=np.float64)
    backward = np.arange(n - 1 - half, -1, -1, dtype=np.float64)
    if fma:
        return np.concatenate([_fma(step, forward, start), _fma(-step, backward, end)])
    acc = np.result_type(step)  # the index joins the arithmetic in the step's type
    return np.concatenate([start + step * forward.astype(acc), end - step * backward.astype(acc)])


def linspace(start: Any, end: Any, steps: int, *, out: Tensor | None = None, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """torch.linspace: ``steps`` points evenly spaced from start to end inclusive."""
    start, end = _number("linspace", "start", start), _number("linspace", "end", end)
    n = _steps("linspace", steps)
    is_complex = type(start) is _pycomplex or type(end) is _pycomplex
    dt, d, xp = target(dtype, device, _dt.default_complex() if is_complex else None)
    if dt.category == 0:
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    if dt.category == 3:
        s, e = np.asarray(start, dt.np), np.asarray(end, dt.np)
    else:
        s, e = np.asarray(checked_fill(start, dt), dt.np), np.asarray(checked_fill(end, dt), dt.np)
    if n == 1:
        values = s.reshape(1)
    elif dt.category == 3 or dt.itemsize < 4:
        # complex and half types: computed in their own arithmetic (float for the halves)
        acc = dt.np.type if dt.category == 3 else np.float32
        step = (e.astype(acc) - s.astype(acc)) / acc(n - 1)
        values = _halves(step, s.astype(acc), e.astype(acc), n, fma=False)
    else:
        # the step is computed in the dtype (in double for integer dtypes)
        step = (e - s) / dt.np.type(n - 1) if dt.category == 2 else (float(e) - float(s)) / (n - 1)
        values = _halves(float(step), float(s), float(e), n, fma=True)
        if dt.category == 1:
            values = np.trunc(values)
    return finish(values.astype(dt.np), dt, d, xp, requires_grad, out, "linspace")


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, out: Tensor | None = None,
             dtype: Any = None, layout: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """torch.logspace: ``base ** linspace(start, end, steps)``."""
    start, end = _number("logspace", "start", start), _number("logspace", "end", end)
    n = _steps("logspace", steps)
    is_complex = type(start) is _pycomplex or type(end) is _pycomplex
    dt, d, xp = target(dtype, device, _dt.default_complex() if is_complex else None)
    if dt.category == 3:
        exps = linspace(start, end, n, dtype=dt)._data
        values = np.power(dt.np.type(base), exps)
    else:
        s = np.float64(np.asarray(checked_fill(start, dt), dt.np))
        e = np.float64(np.asarray(checked_fill(end, dt), dt.np))
        if n == 1:
            exps = np.array([np.float64(start)])
        else:
            # unlike linspace's kernel this loop is compiled without FMA: plain numpy
            step = (np.float64(np.asarray(e - s, dt.np)) if dt.category == 2 else e - s) / (n - 1)
            exps = _halves(step, s, e, n, fma=False)
        # libm's pow, as torch calls it: numpy's vectorized power can be an ulp off
        values = np.array([math.pow(base, x) for x in exps.tolist()], dtype=np.float64)
        if dt.category == 1:
            values = np.trunc(values)
    return finish(values.astype(dt.np), dt, d, xp, requires_grad, out, "logspace")


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
                           f"{_dt_title(a.dtype)} and {_dt_title(b.dtype)}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {_dt_title(a.dtype)} but got scalar "
                           f"type {_dt_title(b.dtype)} for second argument")
    if a.dtype is _dt.float16:
        raise RuntimeError(f"{op}: complex32 (ComplexHalf) results are not supported by Ember")
    if a.device != b.device:
        raise RuntimeError(f"{op}: Expected all tensors to be on the same device, but found at "
                           f"least two devices, {a.device} and {b.device}!")
    try:
        np.broadcast_shapes(a._data.shape, b._data.shape)
    except ValueError:
        from .ops.operands import broadcast_shape

        broadcast_shape(op, a._data.shape, b._data.shape)  # raises torch's message
    return a._data, b._data, a.dtype.to_complex()


COMPLEX = register("complex", _complex_forward, kind="elementwise")


def complex(real: Tensor, imag: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.complex: a complex tensor with real part ``real`` and imaginary part ``imag``."""
    x, y, dt = _complex_parts("complex", real, imag)
    res = make(_complex_forward(x, y), dt, real.device)
    if real._requires_grad or imag._requires_grad:
        from .ops.operands import record

        record(COMPLEX, (real, imag), None, res)
    if out is not None:
        from .ops.operands import write_out

        return write_out("complex", out, res)
    return res


def polar(abs: Tensor, angle: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.polar: the complex tensor ``abs * (cos(angle) + i sin(angle))``."""
    from .ops.elementwise import cos, mul, sin

    _complex_parts("polar", abs, angle)
    return complex(mul(abs, cos(angle)), mul(abs, sin(angle)), out=out)


def _dt_title(dt: _dt.dtype) -> str:
    from .ops.operands import _pretty

    return _pretty(dt)


# ----------------------------------------------------------------------------- legacy

def legacy_tensor(cls: type, *args: Any, device: Any = None) -> Tensor:
    """``Tensor(data)`` / ``Tensor(*sizes)`` / ``Tensor(other)``: the legacy constructor of
    the default float type."""
    out = _legacy_new("new", _dt.get_default_dtype(), args, device, any_tensor=True)
    if cls is not Tensor:
        out.__class__ = cls
    return out


def _legacy_new(name: str, dt: _dt.dtype, args: tuple[Any, ...], dev: Any,
                any_tensor: bool = False) -> Tensor:
    if not args:
        return empty(0, dtype=dt, device=dev)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if first.dtype is not dt and not any_tensor:
            raise TypeError(f"expected {dt} (got {first.dtype})")
        return first.detach()
    if type(first) is int or _is_index(first) or isinstance(first, Size):
        return empty(*args, dtype=dt, device=dev)
    if len(args) > 1:
        raise TypeError(f"{name}(): expected sizes (ints) or a single sequence of data, got "
                        f"{len(args)} arguments starting with {type(first).__name__}")
    if isinstance(first, (str, bytes)):
        raise TypeError(f"{name}(): invalid data type '{type(first).__name__}'")
    if not (_is_sequence(first) or isinstance(first, np.ndarray)):
        raise TypeError(f"{name}(): data must be a sequence (got {type(first).__name__})")
    return tensor(first, dtype=dt, device=dev)


class _LegacyType(type):
    """``isinstance(t, LongTensor)`` is true for CPU tensors of that dtype, as in torch."""

    dtype: _dt.dtype

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"


def _legacy_type(name: str, dt: _dt.dtype) -> type:
    def __new__(cls: type, *args: Any, device: Any = None) -> Tensor:
        return _legacy_new(name, dt, args, device)

    doc = f"Legacy ``torch.{name}``: a {dt} tensor from data, from sizes, or aliasing a tensor."
    return _LegacyType(name, (), {"__new__": __new__, "__doc__": doc, "dtype": dt})


LongTensor = _legacy_type("LongTensor", _dt.int64)
FloatTensor = _legacy_type("FloatTensor", _dt.float32)
DoubleTensor = _legacy_type("DoubleTensor", _dt.float64)
IntTensor = _legacy_type("IntTensor", _dt.int32)
ShortTensor = _legacy_type("ShortTensor", _dt.int16)
CharTensor = _legacy_type("CharTensor", _dt.int8)
BoolTensor = _legacy_type("BoolTensor", _dt.bool)
ByteTensor = _legacy_type("ByteTensor", _dt.uint8)
HalfTensor = _legacy_type("HalfTensor", _dt.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", _dt.bfloat16)
