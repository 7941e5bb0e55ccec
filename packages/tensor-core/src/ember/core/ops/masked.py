"""Masked ops and nonzero: ``masked_fill``, ``masked_select``, ``masked_scatter``,
``nonzero``, ``argwhere``.

The mask is an operand (a bool tensor, never differentiated), after the input:
"masked_fill" ``(x, mask, value)`` (``value`` a 0-d tensor of x's dtype or a number),
"masked_select" ``(x, mask)``, "masked_scatter" ``(x, mask, source)``; input and mask
broadcast. "nonzero" and "argwhere" ``(x,)`` are not differentiable. The output shapes
of masked_select, nonzero and argwhere depend on the values (``meta.DYNAMIC``; nonzero's
and argwhere's (count, ndim) results are column-major, ``meta.DYNAMIC_COLUMN_MAJOR``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import xp_of
from ..dispatch import register
from ..dtypes import scalar_type_name
from ..tensor import Tensor
from .copying import write_out
from .index_checks import fill_operand, tensor_arg
from .inplace import inplace
from .operands import broadcast_shape, device_mismatch

FUNCTIONS = ["masked_fill", "masked_select", "masked_scatter", "nonzero", "argwhere"]


def _check_mask(op: str, mask: Any, x: Tensor, message: str) -> Tensor:
    """The mask: a bool Tensor on x's device broadcasting with x (``message``: torch's
    dtype error)."""
    tensor_arg(op, mask, "mask")
    if mask.dtype is not _dt.bool:
        raise RuntimeError(message.format(got=mask.dtype))
    if mask.device is not x.device:
        raise device_mismatch(op, x.device, mask.device)
    broadcast_shape(op, x._data.shape, mask._data.shape)
    return mask


def _broadcast_pair(x: Any, mask: Any) -> tuple[Any, Any]:
    """Input and mask broadcast to their common shape (read-only views)."""
    if x.shape == mask.shape:
        return x, mask
    xp = xp_of(x)
    return xp.broadcast_arrays(x, mask)  # type: ignore[no-any-return]


def _broadcast_meta(x: Any, mask: Any, *operands: Any) -> meta.MetaArray:
    """A fresh row-major result of the broadcast shape (torch's, for masked_fill and
    masked_scatter whatever the inputs' layout)."""
    return meta.empty(meta.broadcast_shapes(x.shape, mask.shape), x.dtype)


def _masked_fill(x: Any, mask: Any, value: Any) -> Any:
    out = xp_of(x).where(mask, value, x)
    return out if out.dtype == x.dtype else out.astype(x.dtype)


def _masked_select(x: Any, mask: Any) -> Any:
    x, mask = _broadcast_pair(x, mask)
    return x[mask]


def _masked_scatter(x: Any, mask: Any, source: Any) -> Any:
    x, mask = _broadcast_pair(x, mask)
    n = int(xp_of(mask).count_nonzero(mask))
    if n > source.size:
        raise RuntimeError("masked_scatter: Number of elements of source < number of ones in "
                           "mask")
    out = x.copy()
    out[mask] = source.reshape(-1)[:n]
    return out


def _nonzero(x: Any) -> Any:
    return xp_of(x).argwhere(x).astype(np.int64, copy=False)


MASKED_FILL = register("masked_fill", _masked_fill, _broadcast_meta, "elementwise",
                       arg_names=("self", "mask", "value"))
MASKED_SELECT = register("masked_select", _masked_select, meta.DYNAMIC, "library",
                         arg_names=("self", "mask"))
MASKED_SCATTER = register("masked_scatter", _masked_scatter, _broadcast_meta, "library",
                          arg_names=("self", "mask", "source"))
NONZERO = register("nonzero", _nonzero, meta.DYNAMIC_COLUMN_MAJOR, "library", False,
                   arg_names=("self",))
ARGWHERE = register("argwhere", _nonzero, meta.DYNAMIC_COLUMN_MAJOR, "library", False,
                    arg_names=("self",))


# ----------------------------------------------------------------------------- public ops

def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """torch.masked_fill: ``value`` (a number or a 0-d tensor) where ``mask`` is True; mask
    and input broadcast."""
    m = _check_mask("masked_fill", mask, input, "masked_fill_ only supports boolean masks, but "
                    "got mask with dtype {got}")
    fill = fill_operand("masked_fill", value, input)
    return MASKED_FILL.door((input, m, fill), None)  # type: ignore[no-any-return]


def masked_select(input: Tensor, mask: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.masked_select: the 1-D tensor of input's values where ``mask`` (broadcast with
    input) is True."""
    m = _check_mask("masked_select", mask, input, "masked_select: expected BoolTensor for "
                    "mask, got {got}")
    res = MASKED_SELECT.door((input, m), None)
    return res if out is None else write_out("masked_select", out, res)  # type: ignore[no-any-return]


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """torch.masked_scatter: a copy of input with the positions where ``mask`` is True
    filled, in order, from the first elements of ``source``."""
    m = _check_mask("masked_scatter", mask, input, "masked_scatter_ only supports boolean "
                    "masks, but got mask with dtype {got}")
    tensor_arg("masked_scatter", source, "source")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got {scalar_type_name(input.dtype)} and "
                           f"{scalar_type_name(source.dtype)}")
    if source.device is not input.device:
        raise device_mismatch("masked_scatter", input.device, source.device)
    return MASKED_SCATTER.door((input, m, source), None)  # type: ignore[no-any-return]


def nonzero(input: Tensor, *, out: Tensor | None = None, as_tuple: bool = False) -> Any:
    """torch.nonzero: the (n, ndim) int64 indices of the nonzero elements, or with
    ``as_tuple=True`` one 1-D index tensor per dim (``where(condition)``; a 0-d input
    counts as 1-D)."""
    if as_tuple:
        x = input[None] if input._data.ndim == 0 else input
        return NONZERO.door((x,), None).unbind(1)
    res = NONZERO.door((input,), None)
    return res if out is None else write_out("nonzero", out, res)


def argwhere(input: Tensor) -> Tensor:
    """torch.argwhere: ``nonzero(input)``."""
    return ARGWHERE.door((input,), None)  # type: ignore[no-any-return]


METHODS: dict[str, Any] = {name: globals()[name] for name in FUNCTIONS}
METHODS.update({
    "masked_fill_": inplace(masked_fill, "masked_fill_"),
    "masked_scatter_": inplace(masked_scatter, "masked_scatter_", None),
})
