"""How elementwise primitives are made: ``binary_op`` and ``unary_op`` register a primitive
(its xp forward, a NumPy ufunc that CuPy arrays also answer, and its broadcasting rule) and
build its public function, with the dtype checks torch makes, flat for speed.

binary.py and unary.py hold the primitives made here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..dispatch import Op, register
from ..tensor import Tensor, make
from .operands import (
    LIMITS,
    broadcast_error,
    not_implemented,
    prep_binary,
    record,
    write_out,
    write_out_exact,
)

_BF16 = _dt.bfloat16
_KIND = "bifc"  # a dtype's category as a letter: bool, int, float, complex
_ALL = "bifc"
_NDARRAY = np.ndarray
Refusals = dict[str, tuple[type[Exception], str]]
# torch's error when ``out`` must have the result's dtype exactly
SAME_OUT = "Found dtype {out} but expected {expected}"


def wrap_int(value: int, dt: _dt.dtype) -> int:
    """A Python int converted to an integer dtype the way torch converts scalars: wrapping."""
    lo, hi = LIMITS[dt]
    if lo <= value <= hi:
        return value
    span = hi - lo + 1
    return int((value - lo) % span + lo)  # int() for the type checker: LIMITS holds floats too


def binary_op(name: str, forward: Callable[..., Any], result: str = "promote",
            differentiable: bool = True, allowed: str = _ALL, kernel: str | None = None,
            scalars: str = "any", refusals: Refusals | None = None
            ) -> tuple[Op, Callable[..., Tensor]]:
    """Register a broadcasting binary primitive and build its public function.

    ``result``: 'promote' keeps the promoted dtype, 'float' turns integer results into the
    default float (true division), 'bool' gives a mask. ``allowed``: the dtype kinds torch
    computes the op for ('b'ool, 'i'nt, 'f'loat, 'c'omplex), checked on the promoted dtype;
    others raise torch's NotImplementedError naming ``kernel``, or the error ``refusals`` gives
    for that kind. ``scalars``: which operands may be Python numbers: 'any', 'other' (input
    must be a Tensor) or 'none'.
    """
    op = register(name, forward, meta.elementwise(result), "elementwise", differentiable)
    kernel_name = kernel or f"{name}_cpu"
    scalars_checked, tensor_first = scalars != "any", scalars == "other"
    accepted = tuple(kind in allowed for kind in _KIND)  # by dtype category
    to_float, to_bool = result == "float", result == "bool"

    def fn(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
        if scalars_checked and not (input.__class__ is Tensor and (
                tensor_first or other.__class__ is Tensor)):
            _check_scalars(name, scalars, input, other)
        x, y, dt, dev, rg = prep_binary(name, input, other)
        category = dt.category
        if dt is _BF16:
            # ml_dtypes scalars are not weakly typed: numbers become bfloat16 scalars first
            if not isinstance(y, np.ndarray):
                y = _BF16.np.type(y)
            if not isinstance(x, np.ndarray):
                x = _BF16.np.type(x)
        elif category == 1 and not to_float and (y.__class__ is int or x.__class__ is int):
            # Python ints wrap into integer dtypes (uint8 - 1 is uint8 255), as in torch
            if x.__class__ is int:
                x = wrap_int(x, dt)
            if y.__class__ is int:
                y = wrap_int(y, dt)
        if not accepted[category]:
            check_allowed(kernel_name, allowed, dt, refusals)
        rdt = dt
        if to_float:
            if category < 2:
                rdt = _dt.get_default_dtype()
                x = x.astype(rdt.np) if hasattr(x, "astype") else x
                y = y.astype(rdt.np) if hasattr(y, "astype") else y
        elif to_bool:
            rdt = _dt.bool
        try:
            r = forward(x, y)
        except ValueError:
            raise broadcast_error(name, x, y) from None
        if r.dtype != rdt.np:
            r = r.astype(rdt.np)
        if r.__class__ is not _NDARRAY and isinstance(r, np.generic):
            r = np.asarray(r)  # ufuncs answer 0-d operands with numpy scalars
        res = make(r, rdt, dev)
        if rg:
            record(op, (input, other), None, res)
        return res if out is None else write_out(name, out, res)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}(input, other): elementwise, with broadcasting and type promotion."
    return op, fn


def _check_scalars(name: str, scalars: str, input: Any, other: Any) -> None:
    """TypeError where torch takes only Tensors (subclasses such as Parameter pass)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if scalars == "none" and not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")


def check_allowed(kernel: str, allowed: str, dt: _dt.dtype, refusals: Refusals | None) -> None:
    """torch's error when ``dt``'s kind is not in ``allowed``: the one ``refusals`` gives for
    that kind, else NotImplementedError naming ``kernel``."""
    kind = _KIND[dt.category]
    if kind in allowed:
        return
    if refusals and kind in refusals:
        error, message = refusals[kind]
        raise error(message)
    raise not_implemented(kernel, dt)


def unary_op(name: str, forward: Callable[..., Any], result: str = "same",
             differentiable: bool = True, allowed: str = _ALL, kernel: str | None = None,
             refusals: Refusals | None = None, exact_out: str | None = None
             ) -> tuple[Op, Callable[..., Tensor]]:
    """Register a unary primitive. ``result``: 'same', 'float' (ints compute in the default
    float), 'bool' or 'real' (complex gives its real dtype, as abs does). ``allowed``,
    ``kernel`` and ``refusals``: as for ``binary_op``, checked on the input dtype.
    ``exact_out``: torch's error when ``out`` must have the result's dtype exactly."""
    op = register(name, forward, meta.elementwise("float" if result == "float" else
                                                  "bool" if result == "bool" else "promote"),
                  "elementwise", differentiable)
    kernel_name = kernel or f"{name}_cpu"
    accepted = tuple(kind in allowed for kind in _KIND)  # by dtype category
    to_float = result == "float"
    result_of = {"bool": lambda dt: _dt.bool, "real": _dt.dtype.to_real}.get(result)

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        dt = input.dtype
        if not accepted[dt.category]:
            check_allowed(kernel_name, allowed, dt, refusals)
        x = input._data
        if to_float and dt.category < 2:
            dt = _dt.get_default_dtype()
            x = x.astype(dt.np)
        r = forward(x)
        rdt = dt if result_of is None else result_of(dt)
        if r.dtype != rdt.np:
            r = r.astype(rdt.np)
        if r.__class__ is not _NDARRAY and isinstance(r, np.generic):
            r = np.asarray(r)
        res = make(r, rdt, input.device)
        if input._requires_grad:
            record(op, (input,), None, res)
        if out is None:
            return res
        if exact_out is None:
            return write_out(name, out, res)
        return write_out_exact(name, out, res, exact_out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}(input): elementwise."
    return op, fn

