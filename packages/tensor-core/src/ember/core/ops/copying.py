"""Writing whole tensors: ``copy_``, ``fill_``, ``zero_``, and the ``new_*`` constructors."""

from __future__ import annotations

from typing import Any

from .. import creation
from ..device import xp_of
from ..dispatch import grad_mode, hooks, register
from ..tensor import Tensor, bump_version, make
from .conversion import move_array, to
from .operands import assign_inplace, check_inplace_shape, record

FUNCTIONS: list[str] = []


def _broadcast_cast(x: Any, shape: tuple[int, ...], np_dtype: Any) -> Any:
    out = xp_of(x).broadcast_to(x, shape)
    return out.astype(np_dtype) if out.dtype != np_dtype else out


# copy_'s gradient flows to ``src``: the value written is ``src`` broadcast to self's shape.
EXPAND_COPY = register("expand_copy", _broadcast_cast, kind="view")


def copy_(self: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast, cast to self's dtype, moved to self's device) into ``self``."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    data = src._data
    if src.device is not self.device:
        data = move_array(data, src.device, self.device)
    if data.shape != self._data.shape:
        check_inplace_shape("copy_", self._data.shape, data.shape)
    value = make(_broadcast_cast(data, self._data.shape, self.dtype.np), self.dtype, self.device)
    if src._requires_grad:
        record(EXPAND_COPY, (src,), {"shape": self._data.shape, "dtype": self.dtype}, value)
    # copy_ converts any dtype (float -> int truncates), unlike arithmetic in-place ops
    return assign_inplace(self, value, "copy_")


def fill_(self: Tensor, value: Any) -> Tensor:
    """Set every element to ``value`` (a number or a 0-d tensor)."""
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        return copy_(self, value)
    if self._requires_grad and grad_mode.enabled and hooks.record is not None:
        # in a graph: the checked route, so autograd can refuse (leaf) or rebase
        return assign_inplace(self, creation.full_like(self, value), "fill_")
    if not self._data.flags.writeable:
        raise RuntimeError("fill_: unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the tensor "
                           "before performing the operation.")
    self._data.fill(value)
    bump_version(self)
    return self


def zero_(self: Tensor) -> Tensor:
    """Set every element to zero."""
    return fill_(self, 0)


def _new(kind: str) -> Any:
    def method(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, layout: Any = None,
               pin_memory: bool = False) -> Tensor:
        dt = self.dtype if dtype is None else dtype
        dev = self.device if device is None else device
        maker = getattr(creation, kind)
        return maker(*size, dtype=dt, device=dev, requires_grad=requires_grad)  # type: ignore[no-any-return]

    method.__name__ = f"new_{kind}"
    method.__doc__ = f"A new {kind} tensor with this tensor's dtype and device unless given."
    return method


def new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, **kwargs: Any) -> Tensor:
    return creation.full(size, fill_value, dtype=self.dtype if dtype is None else dtype,
                         device=self.device if device is None else device,
                         requires_grad=requires_grad)


def new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, **kwargs: Any) -> Tensor:
    return creation.tensor(data, dtype=self.dtype if dtype is None else dtype,
                           device=self.device if device is None else device,
                           requires_grad=requires_grad)


def type_as(self: Tensor, other: Tensor) -> Tensor:
    return to(self, dtype=other.dtype)


def _itself(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    # pinned and shared memory are CUDA/multiprocessing notions NumPy storage does not have
    return self


METHODS = {
    "copy_": copy_, "fill_": fill_, "zero_": zero_, "new_zeros": _new("zeros"),
    "new_ones": _new("ones"), "new_empty": _new("empty"), "new_full": new_full,
    "new_tensor": new_tensor, "type_as": type_as, "pin_memory": _itself,
    "share_memory_": _itself, "is_pinned": lambda self: False,
    "is_shared": lambda self: False,
}
