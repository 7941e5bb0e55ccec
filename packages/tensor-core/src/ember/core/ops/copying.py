"""Writing into tensors: ``copy_``, ``fill_``, ``zero_``, ``out=``, and the write-back of
every in-place op.

Primitives (each writes into its first operand and returns it):

- ``copy_`` (``dst``, ``src``; params ``writeback``, ``resize``): ``src`` broadcast to
  ``dst``'s shape, cast to its dtype and moved to its device. ``writeback=True`` marks the
  second half of an in-place op computed out of place: autograd gives ``dst`` the history
  of ``src`` (as ``x.clamp_()`` has ClampBackward0) instead of a copy's. ``resize=True``
  (``out=`` of the wrong shape) gives ``dst`` fresh memory of ``src``'s shape first;
- ``fill_`` (``dst``; params ``value``, a Python number): every element set to ``value``,
  ``fill`` its out-of-place form (a tensor like ``x`` full of ``value``);
- ``resize_`` (``dst``; params ``size``): ``dst`` with fresh memory of ``size`` (zeros,
  where torch leaves it uninitialized: a recorded call replays exactly).

Every check runs before the write: an op that raises leaves its operands unchanged.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import xp_of
from ..dispatch import dispatch, grad_mode, register
from ..dtypes import scalar_type_name
from ..result_layouts import laid_out
from ..tensor import Tensor
from .conversion import CLONE, move_array
from .geometry import shares_elements
from .operands import check_inplace_shape, device_mismatch

FUNCTIONS: list[str] = []


def _copy_(dst: Any, src: Any, writeback: bool = False, resize: bool = False) -> Any:
    xp = xp_of(dst)
    if xp is not np or not isinstance(src, np.ndarray):
        src = move_array(src, _device_of(dst))
    if resize:
        dst = xp.empty(src.shape, dst.dtype)
    xp.copyto(dst, src, casting="unsafe")
    return dst


def _copy_meta(dst: Any, src: Any, writeback: bool = False, resize: bool = False) -> Any:
    return meta.empty(src.shape, dst.dtype) if resize else dst


def _device_of(arr: Any) -> Any:
    from ..device import CPU, device

    return CPU if isinstance(arr, np.ndarray) else device("cuda", arr.device.id)


def _fill(x: Any, *, value: Any) -> Any:
    out = xp_of(x).empty_like(x)
    out.fill(value)
    return out


def _fill_(x: Any, *, value: Any) -> Any:
    x.fill(value)
    return x


def _resize_(x: Any, *, size: tuple[int, ...]) -> Any:
    out = xp_of(x).zeros(size, x.dtype)
    return laid_out(out, _resize_meta(out, size=size)) if not out.size else out


def _same(x: Any, *rest: Any, **params: Any) -> Any:
    return x


def _resize_meta(x: Any, *, size: tuple[int, ...]) -> Any:
    return meta.empty(size, x.dtype)


COPY_ = register("copy_", _copy_, _copy_meta, "library", mutates=True,
                 arg_names=("self", "src"))
FILL = register("fill", _fill, lambda x, *, value: meta.like(x), "elementwise",
                differentiable=False, arg_names=("self",))
FILL_ = register("fill_", _fill_, _same, "elementwise", mutates=True, functional=FILL,
                 arg_names=("self",))
RESIZE_ = register("resize_", _resize_, _resize_meta, "library", differentiable=False,
                   mutates=True, arg_names=("self",))


# ----------------------------------------------------------------------------- writes

def overlapping(arr: Any) -> bool:
    """Whether elements of ``arr`` share memory (``geometry.shares_elements``)."""
    return shares_elements(arr.shape, arr.strides)


def check_writable(op: str, t: Tensor) -> None:
    """torch refuses writes where several elements share one memory location."""
    data = t._data
    if 0 in data.strides and overlapping(data):
        raise RuntimeError(f"{op}: unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the tensor "
                           "before performing the operation.")


def check_castable(op: str, result: _dt.dtype, target: _dt.dtype) -> None:
    if result is not target and not _dt.can_cast(result, target):
        raise RuntimeError(f"{op}: result type {scalar_type_name(result)} can't be cast to the "
                           f"desired output type {scalar_type_name(target)}")


def assign_inplace(self: Tensor, result: Tensor, op: str) -> Tensor:
    """Write ``result`` into ``self`` (the second half of an ``op_`` that computes out of
    place), checking dtype, shape and memory first."""
    check_castable(op, result.dtype, self.dtype)
    if result._data.shape != self._data.shape:
        check_inplace_shape(op, self._data.shape, result._data.shape)
    check_writable(op, self)
    return dispatch(COPY_, (self, result), _WRITEBACK)  # type: ignore[no-any-return]


_WRITEBACK = {"writeback": True}
_RESIZE = {"resize": True}


def write_out(op: str, out: Tensor, result: Tensor) -> Tensor:
    """Implements ``out=``: checks first, then resizes ``out`` to the result's shape (with
    torch's warning when it held elements) and copies the result in."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out.device is not result.device:
        raise device_mismatch(op, out.device, result.device)
    if not _dt.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"{op}: result type {scalar_type_name(result.dtype)} can't be cast to "
                           f"the desired output type {scalar_type_name(out.dtype)}")
    shape = result._data.shape
    if out._data.shape != shape:
        if out._data.size != 0:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._data.shape)}, which does not match the required output shape "
                f"{list(shape)}. This behavior is deprecated, and in a future "
                "PyTorch release outputs will not be resized unless they have zero elements. "
                "You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                "elements with t.resize_(0).", UserWarning, stacklevel=3)
        return dispatch(COPY_, (out, result), _RESIZE)  # type: ignore[no-any-return]
    return dispatch(COPY_, (out, result), None)  # type: ignore[no-any-return]


def write_out_exact(op: str, out: Tensor, result: Tensor, message: str,
                    names: Callable[[_dt.dtype], str] = scalar_type_name) -> Tensor:
    """``out=`` for ops whose ``out`` must have the result's dtype, not merely take it.

    ``message`` is torch's error, formatted with ``out`` and ``expected``, the two dtypes as
    ``names`` spells them, and prefixed with ``op`` unless it names the op already.
    """
    if isinstance(out, Tensor) and out.dtype is not result.dtype:
        text = message.format(out=names(out.dtype), expected=names(result.dtype))
        raise RuntimeError(text if text.startswith(op) else f"{op}: {text}")
    return write_out(op, out, result)


# ----------------------------------------------------------------------------- methods

def copy_(self: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast, cast to self's dtype, moved to self's device) into ``self``."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    if src._data.shape != self._data.shape:
        check_inplace_shape("copy_", self._data.shape, src._data.shape)
    check_writable("copy_", self)
    # copy_ converts any dtype (float -> int truncates), unlike arithmetic in-place ops
    return dispatch(COPY_, (self, src), None)  # type: ignore[no-any-return]


def fill_(self: Tensor, value: Any) -> Tensor:
    """Set every element to ``value`` (a number or a 0-d tensor)."""
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        return copy_(self, value)
    if isinstance(value, np.generic):
        value = value.item()
    check_writable("fill_", self)
    return dispatch(FILL_, (self,), {"value": value})  # type: ignore[no-any-return]


def zero_(self: Tensor) -> Tensor:
    """Set every element to zero."""
    return fill_(self, 0)


def resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """Give ``self`` the shape ``sizes`` (fresh memory when the shape changes)."""
    from ..factory_args import parse_size

    size = parse_size(sizes, "resize_")
    if size == self._data.shape:
        return self
    return dispatch(RESIZE_, (self,), {"size": size})  # type: ignore[no-any-return]


def type_as(self: Tensor, other: Tensor) -> Tensor:
    from .conversion import to

    return to(self, dtype=other.dtype)


def _itself(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    # pinned and shared memory are CUDA/multiprocessing notions NumPy storage does not have
    return self


def __deepcopy__(self: Tensor, memo: dict[int, Any]) -> Tensor:
    """copy.deepcopy: a detached copy with requires_grad, ``.grad`` and attributes copied."""
    previous = grad_mode.enabled
    grad_mode.enabled = False
    try:
        out = dispatch(CLONE, (self,), None)
    finally:
        grad_mode.enabled = previous
    out._requires_grad = self._requires_grad
    if self.grad is not None:
        out.grad = __deepcopy__(self.grad, memo)
    memo[id(self)] = out
    if self.__class__ is not Tensor:
        out.__class__ = self.__class__
    out.__dict__.update(self.__dict__)
    return out  # type: ignore[no-any-return]


METHODS = {
    "copy_": copy_, "fill_": fill_, "zero_": zero_, "resize_": resize_, "type_as": type_as,
    "pin_memory": _itself,
    "share_memory_": _itself, "is_pinned": lambda self: False,
    "is_shared": lambda self: False, "__deepcopy__": __deepcopy__,
}
