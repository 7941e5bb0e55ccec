"""torch.nn.utils.parametrize: a parameter or buffer seen through a function.

``register_parametrization(module, "weight", p)`` moves ``module.weight`` into
``module.parametrizations.weight.original`` (a ``ParametrizationList``, whose state-dict
keys are torch's) and swaps the module's class for a subclass ``Parametrized<Name>``
with a property ``weight`` that returns ``p(original)`` on every access (once per
``cached()`` block) and whose setter stores ``p.right_inverse(value)``, as torch does.
"""

from __future__ import annotations

import collections.abc
import copyreg
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from copy import deepcopy
from typing import Any

import ember.autograd as ag
from ember.core import Tensor

from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Context manager that computes each parametrized tensor once, on its first access
    inside the block, and reuses it until the outermost block ends (useful when a
    parametrized weight is used several times in one forward, as in an RNN's loop)."""
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module: Module, name: str, x: Tensor) -> None:
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _set_data(dest: Tensor, src: Tensor) -> None:
    """torch's ``dest.set_(src)``: ``dest`` keeps its identity (so that an optimizer
    holding it still does) and takes ``src``'s storage."""
    dest.data = src


class ParametrizationList(ModuleList):
    """torch.nn.utils.parametrize.ParametrizationList: the parametrizations of one tensor
    (``module.parametrizations[tensor_name]``) and the tensor they are applied to,
    ``original`` (or ``original0``, ``original1``... when the first parametrization's
    ``right_inverse`` returns several tensors). Made by ``register_parametrization``."""

    original: Tensor
    unsafe: bool

    def __init__(self, modules: Sequence[Module], original: Tensor,
                 unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape = original.shape
        original_dtype = original.dtype
        with ag.no_grad():
            new: Any = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
                # without a right_inverse (or one that raises), it is the identity
        if not isinstance(new, Tensor) and not isinstance(new, Sequence):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if isinstance(new, Tensor) else len(new)
        if isinstance(new, Tensor):
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change "
                                 f"the dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            if original.device != new.device:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change "
                                 f"the device.\noriginal.device: {original.device}\n"
                                 f"right_inverse(original).device: {new.device}")
            # the original keeps its identity, so that it need not be re-registered
            # with an optimizer
            with ag.no_grad():
                _set_data(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, original_i in enumerate(new):
                if not isinstance(original_i, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors (list, tuple...). Got element {i} of the "
                                     f"sequence with type {type(original_i).__name__}.")
                # new parameters: the user adds them to an optimizer made before
                if isinstance(original, Parameter):
                    original_i = Parameter(original_i, original.requires_grad)
                original_i.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", original_i)
        if not self.unsafe:
            # forward(right_inverse(original)) must live where original does
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(z).__name__}.")
            if z.dtype != original_dtype:
                raise ValueError("Registering a parametrization may not change the dtype of "
                                 "the tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized dtype: {original_dtype}\n"
                                 f"parametrized dtype: {z.dtype}")
            if z.shape != original_shape:
                raise ValueError("Registering a parametrization may not change the shape of "
                                 "the tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized shape: {original_shape}\n"
                                 f"parametrized shape: {z.shape}")

    def right_inverse(self, value: Tensor) -> None:
        """Call the parametrizations' ``right_inverse`` in reverse registration order on
        ``value`` and store the result in ``original`` (or ``original0``,
        ``original1``...)."""
        with ag.no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _set_data(self.original, value)
                return
            if not isinstance(value, collections.abc.Sequence):
                raise ValueError("'right_inverse' must return a sequence of tensors. Got "
                                 f"{type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(value)}.")
            for i, tensor in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(tensor, Tensor):
                    raise ValueError("'right_inverse' must return a sequence of tensors. Got "
                                     f"element {i} of type {type(tensor).__name__}.")
                if original_i.dtype != tensor.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                     f"{tensor.dtype} while `original{i}` has dtype "
                                     f"{original_i.dtype}")
                _set_data(original_i, tensor)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        index = 1
        while hasattr(self, str(index)):
            x = self[index](x)
            index += 1
        return x  # type: ignore[no-any-return]


def _inject_new_class(module: Module) -> None:
    """Swap ``module``'s class for a subclass ``Parametrized<Name>`` that can hold the
    properties, refuses pickling (only state dicts serialize a parametrized module) and
    still deep-copies."""
    cls = module.__class__

    def default_deepcopy(self: Module, memo: dict[int, Any]) -> Module:
        obj = memo.get(id(self), None)
        if obj is not None:
            return obj  # type: ignore[no-any-return]
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = deepcopy(self.__dict__, memo)
        for slot in copyreg._slotnames(self.__class__):  # type: ignore[attr-defined]
            if hasattr(self, slot):
                setattr(replica, slot, deepcopy(getattr(self, slot), memo))
        return replica

    def getstate(self: Module) -> Any:
        raise RuntimeError(
            "Serialization of parametrized modules is only supported through state_dict(). "
            "See:\nhttps://pytorch.org/tutorials/beginner/saving_loading_models.html"
            "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")

    namespace: dict[str, Any] = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module: Module, tensor_name: str) -> None:
    """Add the property ``tensor_name`` to ``module``'s (already swapped) class."""
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()  # type: ignore[no-any-return]
        key = (id(module), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def _check_chained(module: Module, tensor_name: str, parametrization: Module) -> None:
    """A parametrization added to a parametrized tensor must map the tensor's space (its
    shape and dtype) to itself, and so must its ``right_inverse``."""
    y = getattr(module, tensor_name)
    x = parametrization(y)
    if not isinstance(x, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
    if x.dtype != y.dtype:
        raise ValueError("Registering a parametrization may not change the dtype of the "
                         "tensor, unless the `unsafe` flag is enabled.\n"
                         f"module.{tensor_name}.dtype: {y.dtype}\n"
                         f"parametrization(module.{tensor_name}).dtype: {x.dtype}")
    if x.shape != y.shape:
        raise ValueError("Registering a parametrization may not change the shape of the "
                         "tensor, unless the `unsafe` flag is enabled.\n"
                         f"module.{tensor_name}.shape: {y.shape}\n"
                         f"parametrization(module.{tensor_name}).shape: {x.shape}")
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        z = parametrization.right_inverse(x)
    except NotImplementedError:
        return
    if not isinstance(z, Tensor):
        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: "
                         f"{type(z).__name__}")
    if z.dtype != y.dtype:
        raise ValueError("The tensor returned by parametrization.right_inverse must have the "
                         f"same dtype as module.{tensor_name}, unless the `unsafe` flag is "
                         f"enabled.\nmodule.{tensor_name}.dtype: {y.dtype}\n"
                         f"returned dtype: {z.dtype}")
    if z.shape != y.shape:
        raise ValueError("The tensor returned by parametrization.right_inverse must have the "
                         f"same shape as module.{tensor_name}, unless the `unsafe` flag is "
                         f"enabled.\nmodule.{tensor_name}.shape: {y.shape}\n"
                         f"returned shape: {z.shape}")


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Register a parametrization to a tensor in a module: ``module.tensor_name`` then
    returns ``parametrization(original)``, the original being kept (as a parameter if it
    was one) under ``module.parametrizations.tensor_name.original`` (``original0``,
    ``original1``... if ``parametrization.right_inverse`` returns several tensors, which
    gives their initial values). Registering on a parametrized tensor chains the
    parametrizations. ``unsafe=True`` skips the checks that the parametrization keeps
    the tensor's shape and dtype. The parametrization takes the module's training mode.
    Returns ``module``."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_chained(module, tensor_name, parametrization)
        parametrizations = module.parametrizations[tensor_name]
        parametrizations.append(parametrization)
        # unsafe once, unsafe from then on
        parametrizations.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        # made first: it checks the parametrization before the module changes
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization on ``tensor_name`` (``None``: on any
    tensor)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Remove the parametrizations on ``module.tensor_name``: it becomes a parameter or
    buffer again, holding its current parametrized value (``leave_parametrized=True``)
    or the unparametrized ``original`` (possible only when the parametrization depends
    on one tensor). The original keeps its identity. Returns ``module``."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with ag.no_grad():
                _set_data(original, getattr(module, tensor_name))
    elif leave_parametrized:
        # no no_grad: whether the originals required grad decides what the tensor becomes
        t = getattr(module, tensor_name)
        original = Parameter(t) if t.requires_grad else t
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                         "that is parametrized in terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before any parametrization was registered (its own class if
    none is)."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Register ``from_module``'s parametrizations (of ``tensor_name``, or of every
    parametrized tensor) on ``to_module`` too, creating the parameters it lacks, and make
    its originals ``from_module``'s. Returns ``to_module``."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        source = from_module.parametrizations[name]
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            index = 0
            while hasattr(source, f"original{index}"):
                setattr(target, f"original{index}", getattr(source, f"original{index}"))
                index += 1
    return to_module

