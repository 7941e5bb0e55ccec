"""``LazyModuleMixin``: modules whose parameters take their shapes from the first input.

Until then the parameters are ``UninitializedParameter``s; a forward pre-hook calls the
module's ``initialize_parameters(*args)``, then removes itself and turns the module into
its ``cls_to_become`` (LazyLinear into Linear). Loading a state dict materialises them
with the checkpoint's shapes.
"""

from __future__ import annotations

import itertools
from typing import Any

import ember.autograd as ag

from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """torch.nn.modules.lazy.LazyModuleMixin."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(  # type: ignore[attr-defined]
            self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(  # type: ignore[attr-defined]
            self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str,
                            keep_vars: bool) -> None:
        for name, value in itertools.chain(
                self._parameters.items(),  # type: ignore[attr-defined]
                ((k, v) for k, v in self._buffers.items()  # type: ignore[attr-defined]
                 if k not in self._non_persistent_buffers_set)):  # type: ignore[attr-defined]
            if value is not None:
                destination[prefix + name] = value if is_lazy(value) or keep_vars \
                    else value.detach()

    def _lazy_load_hook(self, state_dict: Any, prefix: str, *args: Any) -> None:
        for name, value in itertools.chain(self._parameters.items(),  # type: ignore[attr-defined]
                                           self._buffers.items()):  # type: ignore[attr-defined]
            key = prefix + name
            if key in state_dict and value is not None and is_lazy(value):
                loaded = state_dict[key]
                if not is_lazy(loaded):
                    with ag.no_grad():
                        value.materialize(loaded.shape)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Give the uninitialized parameters their shapes from the first input."""
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")

    def has_uninitialized_params(self) -> bool:
        return any(is_lazy(v) for v in itertools.chain(
            self._parameters.values(), self._buffers.values()))  # type: ignore[attr-defined]

    def _infer_parameters(self, module: Any, args: Any, kwargs: Any = None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully "  # type: ignore[attr-defined]
                               "initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become
