"""The Tensor: a backend array (numpy or cupy) with dtype, device and autograd slots.

Ops live in ``ember.core.ops`` and are attached as methods in ``methods.py``; this file
holds what a Tensor *is*: its storage, metadata, views and conversions.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes as _dt
from .device import CPU, device
from .function_modes import DisableTorchFunctionSubclass, subclass_defined
from .layouts import is_laid_out
from .meta import MetaArray

__all__ = ["Tensor", "make", "make_view", "bump_version", "DEFAULT", "MULTI_OUTPUT",
           "NO_GRAD_MODE", "refused_view_write", "refuse_view_writes"]

# How a view was made (torch's CreationMeta): in-place writes into the last two are refused
# under autograd, since their histories cannot be rewritten
DEFAULT, MULTI_OUTPUT, NO_GRAD_MODE = 0, 1, 2


class Tensor:
    """A multi-dimensional array with PyTorch's semantics."""

    __slots__ = ("_data", "dtype", "device", "_row_major", "_vc", "_base", "_gv", "_cm",
                 "_requires_grad", "grad", "_grad_fn", "_ag", "__weakref__", "__dict__")
    _data: Any  # numpy.ndarray on the CPU, cupy.ndarray on CUDA
    dtype: _dt.dtype
    device: device
    # True where ``_data`` is known to be a non-empty array with the strides numpy gives a new
    # row-major array (size-1 dims' too): the kernel step then knows, without reading the
    # array's flags, that an elementwise result of such operands is laid out as torch's (and
    # is such an array too). False: not known; whoever sets ``_data`` keeps it true or clears it
    _row_major: bool
    _vc: list[int] | None  # version counter, shared by all views of one storage
    # the tensor whose storage this view looks into: the first one up the chain that is no
    # view or is a view outside autograd (detach), which its own views take as their base
    _base: Tensor | None
    # a view's: the version its autograd history was taken at (a write into the storage
    # after it makes autograd renew it); -1 for a view outside autograd (detach, .data)
    _gv: int
    _cm: int  # a view's: how it was made (DEFAULT, MULTI_OUTPUT, NO_GRAD_MODE), as torch's
    _requires_grad: bool
    grad: Tensor | None
    _grad_fn: Any
    _ag: Any  # autograd's per-tensor extras (hooks, retain_grad)
    # set only on the copy a wrapper's promoting ``cast`` made (in the instance dict, off
    # the hot path): the operand it copied, which autograd's nodes save instead
    _cast_of: Tensor

    if TYPE_CHECKING:
        # Ops are attached as methods at import (methods come from each op module's METHODS).
        def __getattr__(self, name: str) -> Any: ...
        def __neg__(self) -> Tensor: ...
        def __pos__(self) -> Tensor: ...
        def __abs__(self) -> Tensor: ...
        def __invert__(self) -> Tensor: ...
        def __getitem__(self, index: Any) -> Tensor: ...
        def __setitem__(self, index: Any, value: Any) -> None: ...
        def __add__(self, other: Any) -> Tensor: ...
        def __radd__(self, other: Any) -> Tensor: ...
        def __iadd__(self, other: Any) -> Tensor: ...
        def __sub__(self, other: Any) -> Tensor: ...
        def __rsub__(self, other: Any) -> Tensor: ...
        def __isub__(self, other: Any) -> Tensor: ...
        def __mul__(self, other: Any) -> Tensor: ...
        def __rmul__(self, other: Any) -> Tensor: ...
        def __imul__(self, other: Any) -> Tensor: ...
        def __truediv__(self, other: Any) -> Tensor: ...
        def __rtruediv__(self, other: Any) -> Tensor: ...
        def __itruediv__(self, other: Any) -> Tensor: ...
        def __floordiv__(self, other: Any) -> Tensor: ...
        def __rfloordiv__(self, other: Any) -> Tensor: ...
        def __ifloordiv__(self, other: Any) -> Tensor: ...
        def __mod__(self, other: Any) -> Tensor: ...
        def __rmod__(self, other: Any) -> Tensor: ...
        def __imod__(self, other: Any) -> Tensor: ...
        def __pow__(self, other: Any) -> Tensor: ...
        def __rpow__(self, other: Any) -> Tensor: ...
        def __ipow__(self, other: Any) -> Tensor: ...
        def __matmul__(self, other: Any) -> Tensor: ...
        def __rmatmul__(self, other: Any) -> Tensor: ...
        def __and__(self, other: Any) -> Tensor: ...
        def __rand__(self, other: Any) -> Tensor: ...
        def __iand__(self, other: Any) -> Tensor: ...
        def __or__(self, other: Any) -> Tensor: ...
        def __ror__(self, other: Any) -> Tensor: ...
        def __ior__(self, other: Any) -> Tensor: ...
        def __xor__(self, other: Any) -> Tensor: ...
        def __rxor__(self, other: Any) -> Tensor: ...
        def __ixor__(self, other: Any) -> Tensor: ...
        def __lshift__(self, other: Any) -> Tensor: ...
        def __rlshift__(self, other: Any) -> Tensor: ...
        def __rshift__(self, other: Any) -> Tensor: ...
        def __rrshift__(self, other: Any) -> Tensor: ...
        def __lt__(self, other: Any) -> Tensor: ...
        def __le__(self, other: Any) -> Tensor: ...
        def __gt__(self, other: Any) -> Tensor: ...
        def __ge__(self, other: Any) -> Tensor: ...

    # ``Tensor(...)`` (the legacy constructor) is installed by ``legacy``, ``repr`` by
    # ``printing``, pickling by ``creation``: the Tensor itself only holds and describes data.

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        subclass_defined(cls)

    @classmethod
    def __torch_function__(cls, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        """The default for subclasses: run ``func`` as for plain tensors and give the
        results back as ``cls`` (``x.as_subclass(cls)`` for each tensor result)."""
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        with DisableTorchFunctionSubclass():
            ret = func(*args, **(kwargs or {}))
        return _convert(ret, cls)

    # --------------------------------------------------------------- metadata
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Any:
        shape = self._data.shape
        if dim is None:
            return Size(shape)
        return shape[wrap_dim(dim, len(shape), "size")]

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.size * self.dtype.itemsize

    def stride(self, dim: int | None = None) -> Any:
        item = self.dtype.itemsize
        strides = tuple(s // item for s in self._data.strides)
        if dim is None:
            return strides
        return strides[wrap_dim(dim, self._data.ndim, "stride")]

    def storage_offset(self) -> int:
        data = self._data
        if data.__class__ is MetaArray:
            return data.offset // self.dtype.itemsize  # type: ignore[no-any-return]
        base = self._base
        if base is None:
            return 0
        return (_address(data) - _address(base._data)) // self.dtype.itemsize + \
            base.storage_offset()

    def data_ptr(self) -> int:
        return _address(self._data)

    def is_contiguous(self, memory_format: Any = None) -> bool:
        """Row-major (``memory_format=None``, ``contiguous_format``), or dense in the order
        of ``channels_last``/``channels_last_3d``."""
        if memory_format is None or memory_format.name in ("contiguous_format",
                                                           "preserve_format"):
            return bool(self._data.flags.c_contiguous)
        item = self._data.itemsize
        return is_laid_out(memory_format, self._data.shape,
                           tuple(s // item for s in self._data.strides))

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    @property
    def is_meta(self) -> bool:
        return self.device.type == "meta"

    @property
    def is_sparse(self) -> bool:
        return False

    @property
    def is_quantized(self) -> bool:
        return False

    @property
    def layout(self) -> str:
        return "torch.strided"

    def is_floating_point(self) -> bool:
        return self.dtype.category == 2

    def is_complex(self) -> bool:
        return self.dtype.category == 3

    def is_signed(self) -> bool:
        return self.dtype.is_signed

    def get_device(self) -> int:
        return -1 if self.device.type == "cpu" else (self.device.index or 0)

    # --------------------------------------------------------------- autograd slots
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad and self.dtype.category < 2:
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               f"gradients (got {self.dtype})")
        if not requires_grad and self._grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you "
                               "want to use a computed variable in a subgraph that doesn't require "
                               "differentiation use var_no_grad = var.detach().")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def grad_fn(self) -> Any:
        """The node that made this tensor (None for a leaf); autograd installs the version
        that renews a view's history after an in-place write into its storage."""
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def _version(self) -> int:
        vc = self._vc
        return 0 if vc is None else vc[0]

    @property
    def data(self) -> Tensor:
        """The same storage without autograd history (and with its own version counter)."""
        out = make(self._data, self.dtype, self.device, self._row_major)
        out._base = self._base
        out._gv = -1
        out._cm = DEFAULT
        return out

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._data = value._data
        self._row_major = value._row_major
        self.dtype = value.dtype
        self.device = value.device

    def detach_(self) -> Tensor:
        self._grad_fn = None
        self._requires_grad = False
        return self

    def _ensure_vc(self) -> list[int]:
        vc = self._vc
        if vc is None:
            vc = self._vc = [0]
        return vc

    # --------------------------------------------------------------- conversions
    def item(self) -> Any:
        _check_has_data(self, "Tensor.item()")
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        return _to_python(self._data.reshape(()), self.dtype)

    def tolist(self) -> Any:
        arr = self._host()
        if self.dtype is _dt.bfloat16 or self.dtype is _dt.float16:
            arr = arr.astype(np.float32)
        return arr.tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The CPU tensor's memory as an ndarray (shared, not copied)."""
        if self.device.type != "cpu":
            if not force:
                raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                                "Tensor.cpu() to copy the tensor to host memory first.")
            return self._host()
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._data  # type: ignore[no-any-return]

    def _host(self) -> np.ndarray:
        data = self._data
        if self.device.type == "cpu":
            return data  # type: ignore[no-any-return]
        if data.__class__ is MetaArray:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return data.get()  # type: ignore[no-any-return]

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        arr = self._host()
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        return arr.copy() if copy else arr

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._data.__dlpack_device__()  # type: ignore[no-any-return]

    def __len__(self) -> int:
        shape = self._data.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self) -> Any:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))  # type: ignore[attr-defined]

    def __bool__(self) -> bool:
        n = self._data.size
        if n != 1:
            many = "no" if n == 0 else "more than one"
            raise RuntimeError(f"Boolean value of Tensor with {many} value is ambiguous")
        _check_has_data(self, "Tensor.item()")
        return bool(self._data.reshape(()))

    def __int__(self) -> int:
        return int(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __index__(self) -> int:
        if self.dtype.category > 1 or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        _check_has_data(self, "Tensor.item()")
        return int(self._data.reshape(()))

    __hash__ = object.__hash__

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0 and self.device.type != "meta":
            return format(self.item(), spec)
        return repr(self) if not spec else format(repr(self), spec)

    # numpy defers to Tensor's reflected operators: ``np.float32(2) * t`` is a Tensor.
    __array_ufunc__ = None


class Size(tuple):  # type: ignore[type-arg]
    """torch.Size: a tuple of ints that also answers ``numel()``."""

    __slots__ = ()

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def __getitem__(self, item: Any) -> Any:
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out

    def __add__(self, other: Any) -> Size:
        return Size(tuple.__add__(self, tuple(other)))


_new = object.__new__


def make(data: Any, dtype: _dt.dtype, dev: device = CPU, row_major: bool = False) -> Tensor:
    """Wrap a backend array whose numpy dtype is ``dtype.np``; the hot path of every op.
    ``row_major``: what is known of the array (``Tensor._row_major``), an alias's bit."""
    t = _new(Tensor)
    t._data = data
    t.dtype = dtype
    t.device = dev
    t._row_major = row_major
    t._vc = None
    t._base = None
    t._requires_grad = False
    t.grad = None
    t._grad_fn = None
    t._ag = None
    return t


def make_view(base: Tensor, data: Any, dtype: _dt.dtype | None = None) -> Tensor:
    """A tensor over part of ``base``'s storage (seen as ``dtype``, else ``base``'s): shares
    its version counter and base."""
    t = _new(Tensor)
    t._data = data
    t.dtype = base.dtype if dtype is None else dtype
    t.device = base.device
    t._row_major = False
    vc = base._vc
    if vc is None:
        vc = base._vc = [0]
    t._vc = vc
    root = base._base
    t._base = base if root is None or base._gv < 0 else root
    t._gv = vc[0]
    t._cm = DEFAULT
    t._requires_grad = False
    t.grad = None
    t._grad_fn = None
    t._ag = None
    return t


_REFUSAL_REASONS = {
    MULTI_OUTPUT: "This view is the output of a function that returns multiple views. Such "
                  "functions do not allow the output views to be modified inplace. You should "
                  "replace the inplace operation by an out-of-place one.",
    NO_GRAD_MODE: "Given that this use case is ambiguous and error-prone, it is forbidden. You "
                  "can clarify your code by moving both the view and the inplace either both "
                  "inside the no_grad block (if you don't want the inplace to be tracked) or "
                  "both outside (if you want the inplace to be tracked).",
}


def refused_view_write(view: Tensor, output_nr: int, indirect: bool) -> RuntimeError:
    """torch's refusal of an in-place write, under autograd, into a view whose history
    cannot be rewritten (``view._cm`` not DEFAULT); ``indirect``: the write went through
    its base or another view of it."""
    fn = view._grad_fn
    where = "its base or another view of its base has been" if indirect else "is being"
    op = "" if fn is None else re.sub(r"Backward\d*$", "", fn.name())  # the forward op
    if view._cm == NO_GRAD_MODE or fn is None:
        head = f"Output {output_nr} of {op} is a view of a view which was created in" if fn \
            else "A view was created in"
        msg = f"{head} no_grad mode and {where} modified inplace with grad mode enabled."
    else:
        msg = f"Output {output_nr} of {op} is a view and {where} modified inplace."
    return RuntimeError(f"{msg} {_REFUSAL_REASONS[view._cm]}")


def refuse_view_writes(t: Tensor) -> None:
    """Under autograd, before an in-place write into ``t``: torch's refusal when ``t`` is a
    view whose history cannot be rewritten."""
    if t._base is not None and t._gv >= 0 and t._cm:
        raise refused_view_write(t, t.output_nr, indirect=False)


def refuse_leaf_writes(t: Tensor, views: bool = True) -> None:
    """Under autograd, before an in-place write into ``t``: torch's refusal when ``t`` is a
    leaf that requires grad, or a view of one (autograd's own check, made where an op's
    other checks come after it in torch, or where autograd does not record the op).
    ``views=False``: views are left to the write-back, which refuses them."""
    base = t._base
    if t._requires_grad and t._grad_fn is None and (views or base is None):
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if views and base is not None and t._gv >= 0 and base._requires_grad and \
            base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


def bump_version(t: Tensor) -> None:
    vc = t._vc
    if vc is None:
        t._vc = [1]
    else:
        vc[0] += 1


def wrap_dim(dim: int, ndim: int, op: str = "") -> int:
    """Normalize a possibly negative dim, with torch's IndexError when out of range."""
    n = ndim if ndim > 0 else 1
    if -n <= dim < n:
        return dim + n if dim < 0 else dim
    raise IndexError(f"{op + ': ' if op else ''}Dimension out of range (expected to be in range "
                     f"of [{-n}, {n - 1}], but got {dim})")


def _address(arr: Any) -> int:
    if isinstance(arr, np.ndarray):
        return int(arr.__array_interface__["data"][0])
    if arr.__class__ is MetaArray:
        return 0
    return int(arr.data.ptr)


def _check_has_data(t: Tensor, what: str) -> None:
    if t._data.__class__ is MetaArray:
        raise RuntimeError(f"{what} cannot be called on meta tensors")


def _convert(ret: Any, cls: type) -> Any:
    """Tensor results as ``cls`` (torch's ``_convert``): tuples and lists item by item."""
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)  # type: ignore[attr-defined]
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        if hasattr(ret, "_fields"):  # torch.return_types named tuples
            return type(ret)(*items)
        return type(ret)(items)
    return ret


def _to_python(arr0d: Any, dtype: _dt.dtype) -> Any:
    if dtype is _dt.bfloat16 or dtype is _dt.float16:
        return float(arr0d)
    return arr0d.item()
