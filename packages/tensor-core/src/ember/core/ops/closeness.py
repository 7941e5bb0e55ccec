"""Closeness and equality of tensors: isclose (a primitive, elementwise), allclose and equal
(Python bools)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import device
from ..dispatch import register
from ..dtypes import scalar_type_name
from ..tensor import Tensor
from .operands import as_array, broadcast_error, check_operand, common_device, wrap


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
    dt = x.dtype
    allowed = np.asarray(atol).astype(dt) + np.abs(np.asarray(rtol).astype(dt) * y)
    actual = np.abs(x - y)
    close |= np.isfinite(actual) & (actual <= allowed)
    return close


ISCLOSE = register("isclose", _isclose, meta.elementwise("bool"), "elementwise",
                   differentiable=False)


def _close_operands(op: str, input: Tensor, other: Tensor, rtol: float, atol: float
                    ) -> tuple[Any, Any, device]:
    check_operand(op, "input", input, numbers=False)
    check_operand(op, "other", other, numbers=False)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{op}: {scalar_type_name(input.dtype)} did not match "
                           f"{scalar_type_name(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    dev = common_device(op, input, other)
    return as_array(input, input.dtype, dev), as_array(other, input.dtype, dev), dev


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """torch.isclose: ``|input - other| <= atol + rtol * |other|``, elementwise (bool)."""
    x, y, dev = _close_operands("isclose", input, other, rtol, atol)
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            r = _isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)
    except ValueError:
        raise broadcast_error("isclose", x, y) from None
    params = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan}
    return wrap(ISCLOSE, r, _dt.bool, dev, (input, other), params,
                input._requires_grad or other._requires_grad)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """torch.allclose: whether ``isclose`` holds everywhere (a Python bool)."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input: Tensor, other: Tensor) -> bool:
    """torch.equal: True when both have the same shape and the same values (NaN is unequal)."""
    check_operand("equal", "input", input, numbers=False)
    check_operand("equal", "other", other, numbers=False)
    dev = common_device("equal", input, other)
    if input._data.shape != other._data.shape:
        return False
    dt = _dt.promote_types(input.dtype, other.dtype)
    return bool((as_array(input, dt, dev) == as_array(other, dt, dev)).all())


FUNCTIONS = ["isclose", "allclose", "equal"]
METHODS = {name: globals()[name] for name in FUNCTIONS}
