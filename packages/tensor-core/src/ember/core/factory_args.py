"""The arguments every tensor factory shares: sizes, ``dtype=``/``device=``, numbers, and
``finish``, which wraps the factory's host array into the result. Fill values are checked by
``ops.operands.checked_scalar``.

Used by ``creation``, ``ranges``, ``sampling`` and ``legacy``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes as _dt
from .device import CPU, array_module, canonical, check_dtype_supported, device
from .ops.operands import write_out
from .tensor import Tensor, make

_PY_SCALARS = (bool, int, float, complex)


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
        return write_out(op, out, t)
    return t


def _like(op: str, input: Any, dtype: Any, device: Any) -> tuple[tuple[int, ...], _dt.dtype,
                                                                   device, Any]:
    """The shape, dtype, device and array module of a ``*_like`` factory's result."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    dt, d, xp = target(input.dtype if dtype is None else dtype,
                       input.device if device is None else device)
    return input._data.shape, dt, d, xp


def _number(op: str, name: str, x: Any) -> Any:
    """A Python number from a number, numpy scalar or one-element tensor argument."""
    if type(x) in _PY_SCALARS:
        return x
    if isinstance(x, Tensor):
        return x.item()
    if isinstance(x, np.generic) and x.dtype.kind in "biufc":
        return x.item()
    raise TypeError(f"{op}(): argument '{name}' must be Number, not {type(x).__name__}")
