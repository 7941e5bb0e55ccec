"""Closeness and equality of tensors: isclose (a primitive, elementwise), allclose and equal
(composites that read the values, so they give Python bools and refuse meta tensors, as
torch's do).

Primitive: ``isclose`` (``self``, ``other``: tensors of one dtype; params ``rtol``,
``atol``, ``equal_nan``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..dispatch import dispatch, register
from ..dtypes import scalar_type_name
from ..tensor import Tensor
from .binary import eq
from .conversion import cast
from .operands import broadcast_error, check_operand, common_device


def _isclose(x: Any, y: Any, *, rtol: float, atol: float, equal_nan: bool) -> Any:
    close = x == y
    floating = x.dtype.kind in "fc" or x.dtype == _dt.bfloat16.np
    if equal_nan and floating:
        close |= np.isnan(x) & np.isnan(y)
    if rtol == 0 and atol == 0:
        return close
    if not floating:
        # torch measures integer distances in the default float dtype (no wraparound)
        x = x.astype(_dt.get_default_dtype().np)
        y = y.astype(x.dtype)
    dt = x.dtype.type
    allowed = dt(atol) + np.abs(dt(rtol) * y)
    actual = np.abs(x - y)
    close |= np.isfinite(actual) & (actual <= allowed)
    return close


ISCLOSE = register("isclose", _isclose, meta.elementwise("bool"), "elementwise",
                   differentiable=False, arg_names=("self", "other"))


def _close(op: str, input: Tensor, other: Tensor, rtol: float, atol: float, equal_nan: bool
           ) -> Tensor:
    """isclose's checks (named for ``op``) and its dispatch."""
    check_operand(op, "input", input, numbers=False)
    check_operand(op, "other", other, numbers=False)
    dt = input.dtype
    if other.dtype is not dt:
        raise RuntimeError(f"{op}: {scalar_type_name(dt)} did not match "
                           f"{scalar_type_name(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    dev = common_device(op, input, other)
    x, y = cast(input, dt, dev), cast(other, dt, dev)
    params = {"rtol": float(rtol), "atol": float(atol), "equal_nan": bool(equal_nan)}
    try:
        return dispatch(ISCLOSE, (x, y), params)  # type: ignore[no-any-return]
    except ValueError:
        raise broadcast_error(op, x, y) from None


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """torch.isclose: ``|input - other| <= atol + rtol * |other|``, elementwise (bool)."""
    return _close("isclose", input, other, rtol, atol, equal_nan)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """torch.allclose: whether ``isclose`` holds everywhere (a Python bool)."""
    return bool(_close("allclose", input, other, rtol, atol, equal_nan).all())


def equal(input: Tensor, other: Tensor) -> bool:
    """torch.equal: True when both have the same shape and the same values (NaN is unequal)."""
    check_operand("equal", "input", input, numbers=False)
    check_operand("equal", "other", other, numbers=False)
    if input.device.type == "meta" or other.device.type == "meta":
        # torch has no meta kernel for it: its answer depends on the values
        raise NotImplementedError("aten::equal: attempted to run this operator with Meta "
                                  "tensors, but there was no fake impl or Meta kernel "
                                  "registered.")
    common_device("equal", input, other)
    if input._data.shape != other._data.shape:
        return False
    return bool(eq(input, other).all())


FUNCTIONS = ["isclose", "allclose", "equal"]
METHODS = {name: globals()[name] for name in FUNCTIONS}
