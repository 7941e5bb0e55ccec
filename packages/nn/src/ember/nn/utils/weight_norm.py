"""torch.nn.utils.weight_norm, the hook-based weight normalization (deprecated in favour of
``parametrizations.weight_norm``): ``weight`` becomes ``weight_g * weight_v /
||weight_v||``, recomputed by a forward pre-hook before every call. Also the two
functions both versions compute with, torch's ``norm_except_dim`` and ``_weight_norm``.
"""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

from ember.core import Tensor

from ..modules.module import Module
from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm", "norm_except_dim"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """torch.norm_except_dim: the ``pow``-norm of ``v`` over every dimension but ``dim``,
    kept as size-1 dimensions; ``dim=-1`` means the norm of the whole tensor (0-d)."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        sizes = [v.size(0)] + [1] * (v.dim() - 1)
        return v.reshape(v.size(0), -1).norm(pow, 1).view(sizes)
    if dim == v.dim() - 1:
        sizes = [1] * (v.dim() - 1) + [v.size(-1)]
        return v.reshape(-1, v.size(-1)).norm(pow, 0).view(sizes)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """torch._weight_norm: ``v * (g / norm_except_dim(v, 2, dim))``."""
    if v.device != g.device:
        raise RuntimeError(f"weight_norm: expected v_in and g_in to be on the same device, but "
                           f"v_in is on {v.device} and g_in is on {g.device}")
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook of ``weight_norm``: it recomputes ``module.<name>`` from
    ``<name>_g`` and ``<name>_v``."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=2)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2,
                                                                        fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


T_module = TypeVar("T_module", bound=Module)


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Apply weight normalization to a parameter in the given module: ``name`` is
    replaced by a magnitude ``name + '_g'`` and a direction ``name + '_v'``, and
    recomputed from them before every forward as ``g * v / ||v||``, the norm taken per
    slice along ``dim`` (``None``: over the whole tensor). Deprecated: use
    ``torch.nn.utils.parametrizations.weight_norm``. Returns ``module``."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Remove the weight normalization reparameterization from a module: ``name`` is a
    parameter again, holding the current normalized weight."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")

