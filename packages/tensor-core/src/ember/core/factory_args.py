"""What every tensor factory shares: its arguments (sizes, ``dtype=``/``device=`` with the
default device when not given, numbers, ``memory_format=``, and the nested data of
``tensor``, parsed into a host array as torch infers it), the layout of its result
(row-major, or strides given or taken from a tensor, allocated by ``allocate``), and
``finish``, which sets ``requires_grad`` and honours ``out=``. Fill values are checked by
``ops.operands.checked_scalar``.

Used by ``creation``, ``ranges``, ``sampling``, ``samplers`` and ``legacy``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import dtypes as _dt
from . import meta
from .device import CPU, array_module, canonical, check_dtype_supported, device, get_default_device
from .layouts import channels_last, channels_last_3d, contiguous_format, preserve_format
from .ops.copying import write_out
from .ops.operands import checked_scalar
from .tensor import Tensor

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
    if not kwargs and size:
        for s in size:
            if s.__class__ is not int or s < 0:
                break
        else:
            return size  # the common call, ``zeros(4, 4)``
    if kwargs:
        if size or set(kwargs) != {"size"}:
            raise TypeError(f"{op}() got unexpected keyword arguments {sorted(kwargs)}")
        size = (kwargs["size"],)
    if not size:
        raise TypeError(f"{op}() missing 1 required positional arguments: \"size\"")
    return parse_size(size, op)


def target(dtype: Any, dev: Any, default: _dt.dtype | None = None) -> tuple[_dt.dtype, device]:
    """Resolve ``dtype=``/``device=``: (dtype, device), the default dtype (or ``default``)
    and the default device (``set_default_device``, ``with device(...)``) when not given."""
    dt = _dt.to_dtype(dtype) if dtype is not None else (default or _dt.get_default_dtype())
    if dev is None:
        d = get_default_device()
        if d is CPU:
            return dt, d
    else:
        d = dev if dev is CPU else canonical(device(dev))
    if d.type == "cuda":
        array_module(d)  # raises clearly when CUDA is missing
        check_dtype_supported(dt, d)
    return dt, d


def _like(op: str, input: Any, dtype: Any, dev: Any, memory_format: Any = None
          ) -> tuple[tuple[int, ...], _dt.dtype, device, tuple[int, ...] | None]:
    """The shape, dtype, device and strides of a ``*_like`` factory's result: ``input``'s
    unless given (its layout, torch's ``preserve_format``, unless ``memory_format``)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if dtype is None and dev is None:
        dt, d = input.dtype, input.device
    else:
        dt, d = target(input.dtype if dtype is None else dtype,
                       input.device if dev is None else dev)
    data = input._data
    shape = data.shape
    if memory_format is None and data.flags.c_contiguous and 1 not in shape and 0 not in shape:
        return shape, dt, d, None  # row-major, strides and all
    return shape, dt, d, format_strides(shape, memory_format or preserve_format, data)


def _number(op: str, name: str, x: Any) -> Any:
    """A Python number from a number, numpy scalar or one-element tensor argument."""
    if type(x) in _PY_SCALARS:
        return x
    if isinstance(x, Tensor):
        return x.item()
    if isinstance(x, np.generic) and x.dtype.kind in "biufc":
        return x.item()
    raise TypeError(f"{op}(): argument '{name}' must be Number, not {type(x).__name__}")


def finish(t: Tensor, requires_grad: bool, out: Tensor | None = None, op: str = "") -> Tensor:
    """A factory's result with ``requires_grad`` set, or written into ``out``."""
    if requires_grad:
        t.requires_grad_(True)
    if out is not None:
        return write_out(op, out, t)
    return t


# ----------------------------------------------------------------------------- data

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
    if t is complex:
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
    if complex in kinds:
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
        dt = (_dt.default_complex() if complex in kinds else _dt.get_default_dtype()
              if float in kinds else _dt.int64 if int in kinds else _dt.bool)
    else:
        dt = _scalar_type(leaves)
    if kinds <= _PY_KINDS:
        return _values_array(leaves, dt, kinds).reshape(shape), dt
    return _values_array([_leaf_value(x, dt) for x in leaves], dt).reshape(shape), dt


def _host_array(data: Any, dtype: _dt.dtype | None) -> tuple[np.ndarray, _dt.dtype, bool]:
    """``data`` as a host array of the result dtype, and whether it may alias ``data``."""
    t = type(data)
    if t is float or t is int or t is bool or t is complex:
        if dtype is None and t is not int:
            dt = _scalar_type(data)
            return np.array(data, dt.np), dt, False
        dt = dtype or _dt.int64
        return _values_array([data], dt).reshape(()), dt, False
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


# ----------------------------------------------------------------------------- layouts

def format_strides(shape: tuple[int, ...], memory_format: Any, like: Any = None
           ) -> tuple[int, ...] | None:
    """The element strides of a new tensor of ``shape`` in ``memory_format`` (None when
    row-major): ``preserve_format`` lays it out like the array ``like`` (torch's
    ``empty_like``), ``channels_last``/``channels_last_3d`` put the channels fastest."""
    if memory_format is preserve_format and like is not None:
        strides = meta.like_strides(shape, meta.element_strides(like))
    elif memory_format is channels_last or memory_format is channels_last_3d:
        rank = 4 if memory_format is channels_last else 5
        if len(shape) != rank:
            raise RuntimeError(f"required rank {rank} tensor to use "
                               f"{'channels_last' if rank == 4 else 'channels_last_3d'} format")
        strides = _channels_last(shape)
    elif memory_format is contiguous_format:
        return None
    else:
        name = "Preserve" if memory_format is preserve_format else repr(memory_format)
        raise RuntimeError(f"unsupported memory format {name}")
    return None if strides == meta.contiguous_strides(shape) else strides


def _channels_last(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Channels (dim 1) fastest, then the spatial dims from the last, the batch slowest."""
    strides = [0] * len(shape)
    step = 1
    for d in (1, *range(len(shape) - 1, 1, -1), 0):
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


def allocate(xp: Any, size: tuple[int, ...], dtype: Any, strides: tuple[int, ...] | None = None,
             fill: Any = None) -> Any:
    """A new array of ``size`` and numpy ``dtype`` with element ``strides`` (None:
    row-major), holding ``fill`` (None: uninitialized). A strided array views a buffer
    just long enough for its elements, as torch's ``empty_strided`` storage is."""
    if strides is None:
        return filled_buffer(xp, size, dtype, fill)
    extent = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, strides))
    buffer = filled_buffer(xp, (extent,), dtype, fill)
    item = buffer.itemsize
    return xp.lib.stride_tricks.as_strided(buffer, size, tuple(s * item for s in strides))


def filled_buffer(xp: Any, shape: tuple[int, ...], dtype: Any, fill: Any) -> Any:
    """A new row-major array of ``shape`` and numpy ``dtype`` holding ``fill`` (None:
    uninitialized)."""
    if fill is None:
        return xp.empty(shape, dtype)
    if fill.__class__ is int and fill == 0 or _zero_bits(fill):
        return xp.zeros(shape, dtype)  # zeroed pages: no pass over the memory
    out = xp.empty(shape, dtype)
    out.fill(fill)  # half the cost of ``full`` on small arrays
    return out


def _zero_bits(value: Any) -> bool:
    """A number stored as all zero bits (+0, not -0.0), as freshly zeroed memory holds."""
    if value.__class__ is complex:
        return _zero_bits(value.real) and _zero_bits(value.imag)
    return value == 0 and math.copysign(1.0, value) > 0


def meta_array(size: tuple[int, ...], dtype: Any, strides: tuple[int, ...] | None = None
               ) -> meta.MetaArray:
    """The meta rule of a factory: a row-major meta array, or one with ``strides``."""
    return meta.empty(size, dtype) if strides is None else meta.strided(size, dtype, strides)
