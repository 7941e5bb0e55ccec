"""Masked ops and nonzero: ``masked_fill``, ``masked_select``, ``masked_scatter``,
``nonzero``, ``argwhere``.

The mask is not differentiable: it travels in ``params`` ("mask", a bool Tensor). Records:
"masked_fill" ``(x, value)``, "masked_select" ``(x,)``, "masked_scatter" ``(x, source)``;
"nonzero" and "argwhere" are not differentiable, and their output shape depends on the
values (``meta.DYNAMIC``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..dispatch import register
from ..dtypes import scalar_type_name
from ..tensor import Tensor, make
from .index_checks import fill_value, tensor_arg, xp_of
from .inplace import inplace
from .operands import broadcast_shape, device_mismatch, record, write_out


def _mask_data(op: str, mask: Any, x: Tensor, message: str) -> Any:
    """The mask's array: a bool Tensor on x's device (``message``: torch's dtype error)."""
    tensor_arg(op, mask, "mask")
    if mask.dtype is not _dt.bool:
        raise RuntimeError(message.format(got=mask.dtype))
    if mask.device is not x.device:
        raise device_mismatch(op, x.device, mask.device)
    return mask._data


def _broadcast_pair(op: str, x: Any, m: Any) -> tuple[Any, Any]:
    """Input and mask broadcast to their common shape (read-only views)."""
    if x.shape == m.shape:
        return x, m
    shape = broadcast_shape(op, x.shape, m.shape)
    xp = xp_of(x)
    return xp.broadcast_to(x, shape), xp.broadcast_to(m, shape)


def _masked_fill(x: Any, value: Any, *, mask: Any) -> Any:
    return np.where(mask, value, x)


def _masked_select(x: Any, *, mask: Any) -> Any:
    x, mask = _broadcast_pair("masked_select", x, mask)
    return x[mask]


def _masked_scatter(x: Any, source: Any, *, mask: Any) -> Any:
    x, mask = _broadcast_pair("masked_scatter", x, mask)
    out = x.copy()
    n = int(np.count_nonzero(mask))
    out[mask] = source.reshape(-1)[:n]
    return out


MASKED_FILL = register("masked_fill", _masked_fill, lambda x, value, *, mask: meta.Spec(
    tuple(np.broadcast_shapes(tuple(x.shape), tuple(mask.shape))), x.dtype), "elementwise")
MASKED_SELECT = register("masked_select", _masked_select, meta.DYNAMIC, "library")  # type: ignore[arg-type]
MASKED_SCATTER = register("masked_scatter", _masked_scatter, lambda x, source, *, mask: meta.Spec(
    tuple(np.broadcast_shapes(tuple(x.shape), tuple(mask.shape))), x.dtype), "library")


# ----------------------------------------------------------------------------- public ops

def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """torch.masked_fill: ``value`` (a number or a 0-d tensor) where ``mask`` is True; mask
    and input broadcast."""
    m = _mask_data("masked_fill", mask, input, "masked_fill_ only supports boolean masks, but "
                   "got mask with dtype {got}")
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")
    fill = fill_value("masked_fill", value, input.dtype, input.device)
    x = input._data
    if x.shape != m.shape:
        broadcast_shape("masked_fill", x.shape, m.shape)
    res = make(_masked_fill(x, fill, mask=m), input.dtype, input.device)
    if input._requires_grad or (isinstance(value, Tensor) and value._requires_grad):
        record(MASKED_FILL, (input, value), {"mask": mask}, res)
    return res


def masked_select(input: Tensor, mask: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.masked_select: the 1-D tensor of input's values where ``mask`` (broadcast with
    input) is True."""
    m = _mask_data("masked_select", mask, input, "masked_select: expected BoolTensor for mask, "
                   "got {got}")
    res = make(_masked_select(input._data, mask=m), input.dtype, input.device)
    if input._requires_grad:
        record(MASKED_SELECT, (input,), {"mask": mask}, res)
    return res if out is None else write_out("masked_select", out, res)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """torch.masked_scatter: a copy of input with the positions where ``mask`` is True
    filled, in order, from the first elements of ``source``."""
    m = _mask_data("masked_scatter", mask, input, "masked_scatter_ only supports boolean "
                   "masks, but got mask with dtype {got}")
    tensor_arg("masked_scatter", source, "source")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got {scalar_type_name(input.dtype)} and "
                           f"{scalar_type_name(source.dtype)}")
    if source.device is not input.device:
        raise device_mismatch("masked_scatter", input.device, source.device)
    x, mb = _broadcast_pair("masked_scatter", input._data, m)
    if int(np.count_nonzero(mb)) > source._data.size:
        raise RuntimeError("masked_scatter: Number of elements of source < number of ones in "
                           "mask")
    res = make(_masked_scatter(input._data, source._data, mask=m), input.dtype, input.device)
    if input._requires_grad or source._requires_grad:
        record(MASKED_SCATTER, (input, source), {"mask": mask}, res)
    return res


def _nonzero(x: Any) -> Any:
    return np.argwhere(x)


NONZERO = register("nonzero", _nonzero, meta.DYNAMIC, "library", False)  # type: ignore[arg-type]
ARGWHERE = register("argwhere", _nonzero, meta.DYNAMIC, "library", False)  # type: ignore[arg-type]


def nonzero(input: Tensor, *, out: Tensor | None = None, as_tuple: bool = False) -> Any:
    """torch.nonzero: the (n, ndim) int64 indices of the nonzero elements, or with
    ``as_tuple=True`` one 1-D index tensor per dim (``where(condition)``)."""
    x = input._data
    if as_tuple:
        cols = np.nonzero(x.reshape(1) if x.ndim == 0 else x)
        return tuple(make(c.astype(np.int64, copy=False), _dt.int64, input.device) for c in cols)
    res = make(_nonzero(x).astype(np.int64, copy=False), _dt.int64, input.device)
    if input._requires_grad:
        record(NONZERO, (input,), None, res)
    return res if out is None else write_out("nonzero", out, res)


def argwhere(input: Tensor) -> Tensor:
    """torch.argwhere: ``nonzero(input)``."""
    res = make(_nonzero(input._data).astype(np.int64, copy=False), _dt.int64, input.device)
    if input._requires_grad:
        record(ARGWHERE, (input,), None, res)
    return res


FUNCTIONS = ["masked_fill", "masked_select", "masked_scatter", "nonzero", "argwhere"]

METHODS: dict[str, Any] = {name: globals()[name] for name in FUNCTIONS}
METHODS.update({
    "masked_fill_": inplace(masked_fill, "masked_fill_"),
    "masked_scatter_": inplace(masked_scatter, "masked_scatter_"),
})
