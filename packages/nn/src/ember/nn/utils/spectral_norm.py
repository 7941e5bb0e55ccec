"""torch.nn.utils.spectral_norm, the hook-based spectral normalization (torch's newer one
is ``parametrizations.spectral_norm``): ``weight`` becomes ``weight_orig / sigma``, the
largest singular value ``sigma`` estimated by power iteration on the buffers
``weight_u`` and ``weight_v``, once per training-mode forward, by a forward pre-hook.
State dicts carry the hook's version in their metadata; loading one saved before
version 1 (with ``weight`` and without ``weight_v``) solves for ``weight_v``, as torch
does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import ember.autograd as ag
import ember.core as E
from ember.core import Tensor

from ..functional import normalize
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from ..parameter import Parameter, UninitializedParameter
from .matrix_functions import solve

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook of ``spectral_norm``. Between calls ``u = normalize(W @ v)``.
    Version 1 (torch's since 1.0): ``W`` is no buffer, ``v`` is one, and evaluation
    computes ``W = W_orig / (u @ W_orig @ v)``."""

    _version: int = 1
    name: str
    dim: int
    n_power_iterations: int
    eps: float

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim,
                                    *[d for d in range(weight.dim()) if d != self.dim])
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            # u and v are updated in place (replicas of the module share them); the
            # weight uses clones, so that two forwards can be backpropagated through
            with ag.no_grad():
                for _ in range(self.n_power_iterations):
                    normalize(E.mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    normalize(E.mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                u = u.clone()
                v = v.clone()
        sigma = E.dot(u, E.mv(weight_mat, v))
        return weight / sigma  # type: ignore[no-any-return]

    def remove(self, module: Module) -> None:
        with ag.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat: Tensor, u: Tensor,
                             target_sigma: Tensor) -> Tensor:
        """A ``v`` with ``u = normalize(W @ v)`` and ``u @ W @ v = target_sigma``: torch's
        ``pinverse(W^T W) W^T u`` rescaled, the least-norm solution of ``W v = u``, here
        through the Gram matrix of W's shorter side (exact for W of full rank)."""
        h, w = weight_mat.shape
        if h <= w:
            v = weight_mat.t() @ solve(weight_mat @ weight_mat.t(), u.unsqueeze(1))
        else:
            v = solve(weight_mat.t() @ weight_mat, weight_mat.t() @ u.unsqueeze(1))
        v = v.squeeze(1)
        return v.mul_(target_sigma / E.dot(u, E.mv(weight_mat, v)))  # type: ignore[no-any-return]

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "spectral normalization")
        with ag.no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # ``weight`` stays an attribute (code that initialises weights reads it), as
        # plain data: a Parameter would be registered
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Converts a state dict saved before version 1 (``weight``, ``weight_orig``,
    ``weight_u``): ``sigma = mean(weight_orig / weight)`` and ``weight_v`` solved from
    ``u = normalize(W_orig @ v)``."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, state_dict: dict[str, Any], prefix: str,
                 local_metadata: Mapping[str, Any], strict: bool, missing_keys: list[str],
                 unexpected_keys: list[str], error_msgs: list[str]) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if version is None and weight_key not in state_dict and all(
                weight_key + s in state_dict for s in ("_orig", "_u", "_v")):
            # a current state dict without metadata (made by hand): taken as current
            return
        has_missing_keys = False
        for suffix in ("_orig", "", "_u"):
            key = weight_key + suffix
            if key not in state_dict:
                has_missing_keys = True
                if strict:
                    missing_keys.append(key)
        if has_missing_keys:
            return
        with ag.no_grad():
            weight_orig = state_dict[weight_key + "_orig"]
            weight = state_dict.pop(weight_key)
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            u = state_dict[weight_key + "_u"]
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """Records the hook's version in the state dict's metadata
    (``spectral_norm: {'weight.version': 1}``)."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module: Module, state_dict: Any, prefix: str,
                 local_metadata: dict[str, Any]) -> None:
        if "spectral_norm" not in local_metadata:
            local_metadata["spectral_norm"] = {}
        key = self.fn.name + ".version"
        if key in local_metadata["spectral_norm"]:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        local_metadata["spectral_norm"][key] = self.fn._version


T_module = TypeVar("T_module", bound=Module)


def spectral_norm(module: T_module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> T_module:
    """Apply spectral normalization to a parameter in the given module: ``name`` becomes
    ``name + '_orig'`` divided by its largest singular value (the tensor seen as a matrix
    with ``dim`` first), estimated with ``n_power_iterations`` of the power method per
    training-mode forward. ``dim`` defaults to 0, or 1 for ConvTranspose modules.
    Returns ``module``."""
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d,
                                       ConvTranspose3d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: T_module, name: str = "weight") -> T_module:
    """Remove the spectral normalization reparameterization from a module: ``name`` is a
    parameter again, holding the current normalized weight."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for k, hook in module._state_dict_hooks.items():
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del module._state_dict_hooks[k]
            break
    for k, hook in module._load_state_dict_pre_hooks.items():
        if isinstance(hook, SpectralNormLoadStateDictPreHook) and hook.fn.name == name:
            del module._load_state_dict_pre_hooks[k]
            break
    return module
