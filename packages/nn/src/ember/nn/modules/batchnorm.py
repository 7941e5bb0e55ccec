"""torch.nn's BatchNorm1d/2d/3d, their Lazy forms and SyncBatchNorm.

In training each channel is normalized by the batch's statistics, and the running mean
and variance (with ``track_running_stats``) move toward the batch's by ``momentum``, or
by ``1 / num_batches_tracked`` (a cumulative average) when ``momentum`` is None; in eval
the running statistics normalize. SyncBatchNorm would share the statistics across the
processes of a group; with one process (no distributed package is running) it is exactly
BatchNorm.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ember.core as E

from .. import functional as F
from .. import init
from ..parameter import UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .normalization import register_affine

__all__ = ["BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d",
           "LazyBatchNorm3d", "SyncBatchNorm"]


class _NormBase(Module):
    """What BatchNorm and InstanceNorm share: the affine parameters, the running
    statistics and ``num_batches_tracked``."""

    _version = 2
    num_features: int
    eps: float
    momentum: float | None
    affine: bool
    track_running_stats: bool

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        register_affine(self, num_features, affine, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean",
                                 E.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", E.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 E.tensor(0, dtype=E.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean zeros, running variance ones, ``num_batches_tracked`` 0."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """The running statistics reset, weight ones and bias zeros."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: E.Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, " \
               f"affine={self.affine}, bias={self.bias is not None}, " \
               f"track_running_stats={self.track_running_stats}"

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str,
                              local_metadata: dict[str, Any], strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        # checkpoints of version 1 have no num_batches_tracked: keep the module's own
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                tracked = self.num_batches_tracked
                if tracked is None or tracked.is_meta:
                    tracked = E.tensor(0, dtype=E.int64)
                state_dict[key] = tracked  # type: ignore[index]
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    """BatchNorm over the channels (dim 1) of any input the subclass's dims allow."""

    def forward(self, input: E.Tensor) -> E.Tensor:
        self._check_input_dim(input)
        return self._batch_norm(input)

    def _batch_norm(self, input: E.Tensor) -> E.Tensor:
        momentum = self.momentum
        factor = 0.0 if momentum is None else momentum
        training = self.training
        if training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if momentum is None:  # the cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        use_running = not training or self.track_running_stats
        return F.batch_norm(
            input, self.running_mean if use_running else None,
            self.running_var if use_running else None, self.weight, self.bias,
            training or (self.running_mean is None and self.running_var is None), factor,
            self.eps)


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """A norm layer whose ``num_features`` come from its first input's dim 1."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype,  # type: ignore[call-arg]
                         bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = E.tensor(0, dtype=E.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: E.Tensor) -> None:  # type: ignore[override]
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _check_dims(input: E.Tensor, dims: tuple[int, ...], text: str) -> None:
    if input.dim() not in dims:
        raise ValueError(f"expected {text} input (got {input.dim()}D input)")


class BatchNorm1d(_BatchNorm):
    """torch.nn.BatchNorm1d: batch normalization of (N, C) or (N, C, L) inputs."""

    def _check_input_dim(self, input: E.Tensor) -> None:
        _check_dims(input, (2, 3), "2D or 3D")


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """torch.nn.LazyBatchNorm1d: a BatchNorm1d whose ``num_features`` come from its first
    input."""

    cls_to_become = BatchNorm1d

    def _check_input_dim(self, input: E.Tensor) -> None:
        _check_dims(input, (2, 3), "2D or 3D")


class BatchNorm2d(_BatchNorm):
    """torch.nn.BatchNorm2d: batch normalization of (N, C, H, W) inputs."""

    def _check_input_dim(self, input: E.Tensor) -> None:
        _check_dims(input, (4,), "4D")


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """torch.nn.LazyBatchNorm2d: a BatchNorm2d whose ``num_features`` come from its first
    input."""

    cls_to_become = BatchNorm2d

    def _check_input_dim(self, input: E.Tensor) -> None:
        _check_dims(input, (4,), "4D")


class BatchNorm3d(_BatchNorm):
    """torch.nn.BatchNorm3d: batch normalization of (N, C, D, H, W) inputs."""

    def _check_input_dim(self, input: E.Tensor) -> None:
        _check_dims(input, (5,), "5D")


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """torch.nn.LazyBatchNorm3d: a BatchNorm3d whose ``num_features`` come from its first
    input."""

    cls_to_become = BatchNorm3d

    def _check_input_dim(self, input: E.Tensor) -> None:
        _check_dims(input, (5,), "5D")


class SyncBatchNorm(_BatchNorm):
    """torch.nn.SyncBatchNorm: batch normalization of inputs of 2 or more dims whose
    statistics a process group would share; in one process, BatchNorm itself."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: E.Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input: E.Tensor) -> None:
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input: E.Tensor) -> E.Tensor:
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        return self._batch_norm(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every BatchNorm*d in it (itself included) replaced by a
        SyncBatchNorm holding the same parameters and running statistics."""
        output = module
        if isinstance(module, _BatchNorm):
            output = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                   module.affine, module.track_running_stats, process_group,
                                   bias=module.bias is not None)
            if module.affine:
                output.weight = module.weight
                output.bias = module.bias
            output.running_mean = module.running_mean
            output.running_var = module.running_var
            output.num_batches_tracked = module.num_batches_tracked
            output.training = module.training
            if hasattr(module, "qconfig"):
                output.qconfig = module.qconfig
        for name, child in module.named_children():
            output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return output
