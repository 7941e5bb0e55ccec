"""``Parameter``, ``Buffer`` and the uninitialized placeholders of the Lazy* modules.

A Parameter is a Tensor subclass that shares its data's storage and version counter, is a
leaf, and requires grad by default; ops on it give plain Tensors (its
``__torch_function__`` is disabled, as torch's). Assigning one to a Module attribute
registers it. A Buffer marks a tensor to register as a buffer when assigned, and is a plain
Tensor otherwise, as in torch.
"""

from __future__ import annotations

import copy
from typing import Any

import ember.core as E
from ember.core.function_modes import disabled_torch_function_impl

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


def _shared(cls: type, data: Any, requires_grad: bool) -> Any:
    """``data``'s storage and version counter as a new leaf of class ``cls``."""
    if not isinstance(data, E.Tensor):
        raise TypeError(f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}")
    t = data.detach()
    t.__class__ = cls
    t.requires_grad_(requires_grad)
    return t


class Parameter(E.Tensor):
    """torch.nn.Parameter: a tensor that is a module parameter when assigned as an
    attribute of a Module."""

    # a plain function, as torch's: the subclass does not engage the override check
    __torch_function__ = disabled_torch_function_impl  # type: ignore[assignment]

    def __new__(cls, data: Any = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = E.empty(0)
        return _shared(cls, data, requires_grad)  # type: ignore[no-any-return]

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        pass  # everything happened in __new__

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]  # type: ignore[no-any-return]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild_parameter, (self.data, self.requires_grad))


def _rebuild_parameter(data: Any, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


class _BufferMeta(type):
    """``isinstance(t, Buffer)`` holds for the tensors ``Buffer(...)`` made."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if cls is Buffer:
            return isinstance(instance, E.Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(E.Tensor, metaclass=_BufferMeta):
    """torch.nn.Buffer: a tensor that is a module buffer when assigned as an attribute of a
    Module (``persistent``: whether it is part of the state dict). The object made is a
    plain Tensor sharing ``data``'s storage."""

    __torch_function__ = disabled_torch_function_impl  # type: ignore[assignment]

    def __new__(cls, data: Any = None, *, persistent: bool = True) -> Any:  # type: ignore[misc]
        if data is None:
            data = E.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t._is_buffer = True
        t.persistent = persistent
        return t


class _Uninitialized:
    """What UninitializedParameter and UninitializedBuffer share: no shape yet (an empty
    placeholder) until ``materialize(shape)`` turns the object into a real Parameter or
    Tensor. Unlike torch's, ops on a placeholder are not refused one by one: a
    ``__torch_function__`` of its own would put every op of every program on the
    override check's slow path."""

    cls_to_become: type

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Allocate the data with ``shape`` on ``device`` (default: the placeholder's) as
        ``dtype`` (default: its), and become ``cls_to_become``."""
        if device is None:
            device = self.device  # type: ignore[attr-defined]
        if dtype is None:
            dtype = self.dtype  # type: ignore[attr-defined]
        if isinstance(shape, int):
            shape = (shape,)
        fresh = E.empty(tuple(shape), device=device, dtype=dtype)
        self.data = fresh  # type: ignore[attr-defined]
        self.__class__ = self.cls_to_become

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the "
            "parameters before accessing their attributes.")

    def share_memory_(self) -> Any:
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (self.__class__, (self.requires_grad,))  # type: ignore[attr-defined]


class UninitializedParameter(_Uninitialized, Parameter):
    """torch.nn.UninitializedParameter: the parameter of a Lazy* module before its first
    forward fixes its shape."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None,  # type: ignore[misc]
                dtype: Any = None) -> UninitializedParameter:
        data = E.empty(0, device=device, dtype=dtype)
        return _shared(cls, data, requires_grad)  # type: ignore[no-any-return]

    def __init__(self, requires_grad: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        pass

    def __deepcopy__(self, memo: dict[int, Any]) -> UninitializedParameter:
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]  # type: ignore[no-any-return]


class UninitializedBuffer(_Uninitialized, E.Tensor):
    """torch.nn.UninitializedBuffer: the buffer of a Lazy* module before its first forward
    fixes its shape."""

    __torch_function__ = disabled_torch_function_impl  # type: ignore[assignment]

    cls_to_become = E.Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None,
                dtype: Any = None, persistent: bool = True) -> UninitializedBuffer:
        data = E.empty(0, device=device, dtype=dtype)
        t = data.detach()
        t.__class__ = cls
        t.requires_grad_(requires_grad)
        t.persistent = persistent
        return t  # type: ignore[no-any-return]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        if id(self) not in memo:
            memo[id(self)] = copy.copy(self)
        return memo[id(self)]


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is a placeholder whose shape is not known yet."""
    return isinstance(param, _Uninitialized)
