"""torch.nn's InstanceNorm1d/2d/3d and their Lazy forms: each channel of each sample
normalized over its spatial dims (by default without affine parameters or running
statistics); inputs without a batch dim are taken as one sample."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import ember.core as E

from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    """Instance normalization of inputs with ``_no_batch_dim`` dims without a batch dim."""

    _no_batch_dim: int

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input: E.Tensor) -> None:
        if input.dim() not in (self._no_batch_dim, self._no_batch_dim + 1):
            raise ValueError(f"expected {self._no_batch_dim}D or {self._no_batch_dim + 1}D "
                             f"input (got {input.dim()}D input)")

    def _apply_instance_norm(self, input: E.Tensor) -> E.Tensor:
        return F.instance_norm(
            input, self.running_mean, self.running_var, self.weight, self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0, self.eps)

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str,
                              local_metadata: dict[str, Any], strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        # checkpoints from before track_running_stats=False was the default may hold
        # running statistics this module does not keep
        version = local_metadata.get("version", None)
        if version is None and not self.track_running_stats:
            keys = [prefix + name for name in ("running_mean", "running_var")
                    if prefix + name in state_dict]
            if keys:
                klass = type(self).__name__
                names = " and ".join(f'"{k}"' for k in keys)
                error_msgs.append(
                    f"Unexpected running stats buffer(s) {names} for {klass} with "
                    "track_running_stats=False. If state_dict is a checkpoint saved before "
                    f"0.4.0, this may be expected because {klass} does not track running "
                    "stats by default since 0.4.0. Please remove these keys from state_dict. "
                    "If the running stats are actually needed, instead set "
                    f"track_running_stats=True in {klass} to enable them. See the "
                    f"documentation of {klass} for details.")
                for key in keys:
                    state_dict.pop(key)  # type: ignore[attr-defined]
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    def forward(self, input: E.Tensor) -> E.Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. "
                          "You can silence this warning by not passing in num_features, "
                          "which is not used because affine=False", stacklevel=2)
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """torch.nn.InstanceNorm1d: instance normalization of (N, C, L) or (C, L) inputs."""

    _no_batch_dim = 2


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """torch.nn.LazyInstanceNorm1d: an InstanceNorm1d whose ``num_features`` come from its
    first input."""

    cls_to_become = InstanceNorm1d
    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """torch.nn.InstanceNorm2d: instance normalization of (N, C, H, W) or (C, H, W)
    inputs."""

    _no_batch_dim = 3


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """torch.nn.LazyInstanceNorm2d: an InstanceNorm2d whose ``num_features`` come from its
    first input."""

    cls_to_become = InstanceNorm2d
    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """torch.nn.InstanceNorm3d: instance normalization of (N, C, D, H, W) or (C, D, H, W)
    inputs."""

    _no_batch_dim = 4


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """torch.nn.LazyInstanceNorm3d: an InstanceNorm3d whose ``num_features`` come from its
    first input."""

    cls_to_become = InstanceNorm3d
    _no_batch_dim = 4
