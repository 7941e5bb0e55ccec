"""Writing into tensors: ``copy_``, ``fill_``, ``zero_``, ``out=``, and the write-back of
every in-place op.

Primitives (each writes into its first operand and returns it):

- ``copy_`` (``dst``, ``src``; params ``writeback``, ``resize``): ``src`` broadcast to
  ``dst``'s shape, cast to its dtype and moved to its device. ``writeback=True`` marks the
  second half of an in-place op computed out of place: autograd gives ``dst`` the history
  of ``src`` (as ``x.clamp_()`` has ClampBackward0) instead of a copy's. ``resize=True``
  (``out=`` of the wrong shape) gives ``dst`` fresh memory of ``src``'s shape first;
  ``fill=True`` marks ``fill_`` with a 0-d tensor (torch's fill_.Tensor, whose node
  autograd makes for an integer ``dst`` too, as it does not for a copy);
- ``fill_`` (``dst``; params ``value``, a Python number): every element set to ``value``,
  ``fill`` its out-of-place form (a tensor like ``x`` full of ``value``); ``zero_`` the
  same with ``value`` 0, torch's op of its own (its node is ZeroBackward0);
- ``resize_`` (``dst``; params ``size``): ``dst`` with fresh memory of ``size`` (zeros,
  where torch leaves it uninitialized: a recorded call replays exactly).

Every check runs before the write: an op that raises leaves its operands unchanged.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import xp_of
from ..dispatch import dispatch, grad_mode, register, steps
from ..dtypes import scalar_type_name
from ..result_layouts import laid_out
from ..tensor import Tensor, refuse_leaf_writes, refuse_view_writes
from .conversion import CLONE, move_array
from .geometry import shares_elements, writable_alias
from .index_checks import fill_number
from .operands import check_inplace_shape, device_mismatch

FUNCTIONS: list[str] = []


def _copy_(dst: Any, src: Any, writeback: bool = False, resize: bool = False,
           changed: bool = False, fill: bool = False, metadata: bool = False) -> Any:
    """``changed``: write only the elements where ``src`` differs from ``dst`` (the
    write-back of a masked or indexed in-place op into memory elements share);
    ``metadata``: the write-back of an in-place view op (``squeeze_``, ``t_``), whose
    elements do not change (a view's base keeps its history)."""
    if src is dst:
        return dst  # a copy of memory into itself (copy_ of the same data) writes nothing
    xp = xp_of(dst)
    if xp is not np or not isinstance(src, np.ndarray):
        src = move_array(src, _device_of(dst))
    if resize:
        dst = xp.empty(src.shape, dst.dtype)
    if changed:
        xp.copyto(dst, src, casting="unsafe", where=src != dst)
    else:
        xp.copyto(dst, src, casting="unsafe")
    return dst


def _copy_meta(dst: Any, src: Any, writeback: bool = False, resize: bool = False,
               changed: bool = False, fill: bool = False, metadata: bool = False) -> Any:
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
ZERO_ = register("zero_", _fill_, _same, "elementwise", mutates=True, functional=FILL,
                 arg_names=("self",))
_ZERO = {"value": 0}
RESIZE_ = register("resize_", _resize_, _resize_meta, "library", differentiable=False,
                   mutates=True, arg_names=("self",))


# ----------------------------------------------------------------------------- writes

def overlapping(arr: Any) -> bool:
    """Whether elements of ``arr`` share memory (``geometry.shares_elements``)."""
    return shares_elements(arr.shape, arr.strides)


# The writes torch makes into memory that several elements share (an expanded tensor):
# fill_ and zero_ silently, tril_ and triu_ silently where torch writes their zeros in
# place (``_triangle_in_place``), the indexed writes with a deprecation warning naming the
# op and the indexing it applies to. Every other write (copy_, arithmetic in place, random
# fills, scatter_, out=, a basic-indexing assignment) refuses.
_SHARED_WRITES: dict[str, tuple[str, str] | None] = {
    "fill_": None, "zero_": None, "tril_": None, "triu_": None,
    "index_put_": ("index_put_", "tensor[indices] = tensor"),
    "masked_fill_": ("masked_fill_", "tensor[mask] = scalar"),
    "index_fill_": ("index_fill_", "tensor[mask] = scalar"),
}


def check_writable(op: str, t: Tensor, like: str | None = None) -> bool:
    """The write step's memory check of the public write ``op`` (made as torch's ``like``
    makes it: ``index_put_`` for ``x[indices] = v``) into ``t``, before anything is
    written: False for a write into elements of their own; True where elements of ``t``
    share memory and torch writes them anyway (then ``write_shared`` makes the write);
    torch's RuntimeError where it refuses."""
    data = t._data
    if 0 in data.strides and overlapping(data):
        rule = like or op
        if rule not in _SHARED_WRITES or (rule in _TRIANGLES and not _triangle_in_place(data)):
            raise shared_write_error(op)
        deprecated = _SHARED_WRITES[rule]
        if deprecated is not None:
            warnings.warn(f"Use of {deprecated[0]} on expanded tensors is deprecated. Please "
                          "clone() the tensor before performing this operation. This also "
                          f"applies to advanced indexing e.g. {deprecated[1]}", UserWarning,
                          stacklevel=3)
        return True
    return False


_TRIANGLES = ("tril_", "triu_")


def _triangle_in_place(arr: Any) -> bool:
    """Whether torch's tril_/triu_ zero ``arr``'s elements in place (its
    checkTrilTriuBatchContiguous with zero strides allowed): up to 3 dims, or batch dims
    laid out as a contiguous batch of matrices (the first may be expanded). Elsewhere it
    computes into a copy and copies that back, which refuses shared memory."""
    ndim = arr.ndim
    if ndim <= 3:
        return True
    shape, strides = arr.shape, meta.element_strides(arr)
    expected = shape[-1] * shape[-2]
    for i in range(ndim - 3, -1, -1):
        if i == 0 and (strides[0] == 0 or shape[0] == 1):
            continue
        if strides[i] != expected:
            return False
        expected *= shape[i]
    return True


def shared_write_error(op: str) -> RuntimeError:
    """torch's refusal of a write into memory that several elements share (``op``: the
    name it starts with; empty for a write backward makes)."""
    return RuntimeError(f"{op}: " * bool(op) + "unsupported operation: more than one element of "
                        "the written-to tensor refers to a single memory location. Please clone() "
                        "the tensor before performing the operation.")


def read_only_write(op: Any, args: tuple[Any, ...], params: dict[str, Any] | None,
                    retry: Any) -> Any:
    """The kernel step of the in-place ``op`` when NumPy refused its write (the target
    array is read-only; nothing was written): torch's refusal where elements of the target
    share memory; where they do not (an element or a row of an expanded tensor), the
    target gets a writable alias of its memory and ``retry(args, params)`` runs the step
    again. Anything else raises NumPy's error."""
    t = args[0] if args else None
    data = getattr(t, "_data", None)
    if not isinstance(t, Tensor) or data.__class__ is not np.ndarray or data.flags.writeable:
        raise
    if overlapping(data):
        raise shared_write_error(op.name) from None
    alias = writable_alias(data)
    if alias is None:
        raise
    t._data = alias
    return retry(args, params)


def _root(t: Tensor) -> Tensor:
    base = t._base
    return t if base is None else base


def check_overlap(op: str, written: Tensor, inputs: Any, full: bool = True) -> None:
    """torch's memory-overlap check of a write into ``written`` that reads ``inputs``
    (Tensors; anything else is skipped), made before anything is written: a RuntimeError
    where an input shares some of its elements with ``written`` but not all of them in the
    same layout (``full``: the very same elements may be read, as in ``x.add_(x)``; else
    any shared element refuses, as index_put_'s values do). Layouts that are not dense
    (torch cannot tell cheaply) pass, as in torch. Tensors of distinct storages cost one
    identity test."""
    root = _root(written)
    for t in inputs:
        if not isinstance(t, Tensor) or _root(t) is not root:
            continue
        if t is written:
            if full:
                continue
            raise _partial_overlap_error(op)
        a, b = written._data, t._data
        if not a.size or not b.size or a.__class__ is not np.ndarray or \
                b.__class__ is not np.ndarray:
            continue
        if not (meta.is_non_overlapping_and_dense(a.shape, meta.element_strides(a)) and
                meta.is_non_overlapping_and_dense(b.shape, meta.element_strides(b))):
            continue
        a_begin = a.__array_interface__["data"][0]
        b_begin = b.__array_interface__["data"][0]
        a_end, b_end = a_begin + a.nbytes, b_begin + b.nbytes
        if a_begin == b_begin and a_end == b_end and full and written.stride() == t.stride():
            # the same elements (torch's strides: numpy's of a size-1 dim may differ): the
            # write reads each before it writes it
            continue
        if a_begin < b_end and b_begin < a_end:
            raise _partial_overlap_error(op)


def _partial_overlap_error(op: str) -> RuntimeError:
    return RuntimeError(f"{op}: unsupported operation: some elements of the input tensor and the "
                        "written-to tensor refer to a single memory location. Please clone() the "
                        "tensor before performing the operation.")


def write_shared(t: Tensor, op: Any, operands: tuple[Any, ...],
                 params: dict[str, Any] | None) -> Tensor:
    """Dispatch the in-place ``op`` on ``operands`` (``t`` first), a write into memory that
    elements of ``t`` share which ``check_writable`` allowed: the kernel writes through a
    writable alias of ``t``'s read-only array, which ``t`` gets back afterwards (its later
    writes are checked again)."""
    data = t._data
    alias = writable_alias(data)
    if alias is None:  # read-only memory (NumPy's own error)
        return dispatch(op, operands, params)  # type: ignore[no-any-return]
    t._data = alias
    try:
        return dispatch(op, operands, params)  # type: ignore[no-any-return]
    finally:
        t._data = data


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
    if check_writable(op, self):
        # torch writes only the elements the op changes (the masked or indexed ones): where
        # elements share memory, copying the rest back would undo those writes
        return write_shared(self, COPY_, (self, result), _CHANGED)
    return dispatch(COPY_, (self, result), _WRITEBACK)  # type: ignore[no-any-return]


_WRITEBACK = {"writeback": True}
_CHANGED = {"writeback": True, "changed": True}
_FILL = {"fill": True}
_RESIZE = {"resize": True}


def write_out(op: str, out: Tensor, result: Tensor, reads: Any = (), full: bool = True
              ) -> Tensor:
    """Implements ``out=``: checks first (``out`` against the op's operands ``reads`` as
    ``check_overlap`` does), then resizes ``out`` to the result's shape (with torch's
    warning when it held elements) and copies the result in."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if (result._requires_grad or out._requires_grad) and grad_mode.enabled:
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if reads:
        check_overlap(op, out, reads, full)
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
    if src is self or _same_data(self, src):
        # torch returns at once, before any check of the memory: autograd still records
        # the copy of self into itself, which the kernel makes without writing
        return dispatch(COPY_, (self, self), None)  # type: ignore[no-any-return]
    return _copied(self, src, None)


def _copied(self: Tensor, src: Tensor, params: dict[str, Any] | None) -> Tensor:
    if src._data.shape != self._data.shape:
        check_inplace_shape("copy_", self._data.shape, src._data.shape)
    check_writable("copy_", self)
    check_overlap("copy_", self, (src,))
    # copy_ converts any dtype (float -> int truncates), unlike arithmetic in-place ops
    return dispatch(COPY_, (self, src), params)  # type: ignore[no-any-return]


def refuse_recorded_write(self: Tensor, other: Any = None) -> None:
    """Autograd's refusals of an in-place write into ``self`` that it records (a leaf that
    requires grad, a view of one, a view whose history cannot be rewritten): torch makes
    them before any check of the op's own."""
    if (self._requires_grad or isinstance(other, Tensor) and other._requires_grad) \
            and grad_mode.enabled and not grad_mode.inference and steps.autograd is not None:
        refuse_view_writes(self)
        refuse_leaf_writes(self)


def recorded_writes_refused_first(method: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``method`` (an in-place write into its first argument) making autograd's refusals
    (``refuse_recorded_write``) before it checks its arguments."""

    @functools.wraps(method)
    def refusing(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if self._requires_grad:
            refuse_recorded_write(self)
        return method(self, *args, **kwargs)

    return refusing


def check_inplace_write(name: str, self: Tensor) -> None:
    """The checks torch makes of an in-place write into ``self`` before the op's own
    (its kernel's dtype): autograd's refusals, then memory that elements of ``self`` share."""
    if self._requires_grad:
        refuse_recorded_write(self)
    check_writable(name, self)


def _same_data(self: Tensor, src: Tensor) -> bool:
    """Whether ``src`` is a view of the very elements of ``self``, in the same layout and
    dtype (torch's early return of copy_)."""
    if _root(src) is not _root(self) or src.dtype is not self.dtype:
        return False
    a, b = self._data, src._data
    return a.shape == b.shape and a.strides == b.strides and self.data_ptr() == src.data_ptr()


def fill_(self: Tensor, value: Any) -> Tensor:
    """Set every element to ``value`` (a number or a 0-d tensor)."""
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            if self._requires_grad:
                refuse_recorded_write(self)  # autograd's refusal comes first
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        if _root(value) is _root(self):  # torch copies an element of self before the fill
            value = dispatch(CLONE, (value,), None)
        return _copied(self, value, _FILL)
    # converted as torch converts a Scalar: checked, negative ints wrapping into unsigned
    value = fill_number("fill_", value, self.dtype)
    if check_writable("fill_", self):
        return write_shared(self, FILL_, (self,), {"value": value})
    return dispatch(FILL_, (self,), {"value": value})  # type: ignore[no-any-return]


def zero_(self: Tensor) -> Tensor:
    """Set every element to zero."""
    if check_writable("zero_", self):
        return write_shared(self, ZERO_, (self,), _ZERO)
    return dispatch(ZERO_, (self,), _ZERO)  # type: ignore[no-any-return]


def resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """Give ``self`` the shape ``sizes`` (fresh memory when the shape changes)."""
    from ..factory_args import parse_size

    size = parse_size(sizes, "resize_")
    if self._requires_grad:  # even to its own shape, and in no_grad mode, as torch
        raise RuntimeError("cannot resize variables that require grad")
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
