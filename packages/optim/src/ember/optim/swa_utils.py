"""torch.optim.swa_utils: stochastic weight averaging and exponential moving averages of a
model's weights (``AveragedModel``), the SWA learning-rate schedule (``SWALR``) and the
recomputation of batch-norm statistics for averaged weights (``update_bn``)."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

from ember import core
from ember.autograd import no_grad
from ember.core import Tensor
from ember.nn import Module
from ember.nn.modules.batchnorm import _BatchNorm

from .lr_scheduler import _GET_LAST_LR_WARNING, LRScheduler, _format_param
from .optimizer import Optimizer
from .paths import group_tensors_by_device_and_dtype

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]

ParamList = list[Tensor] | tuple[Tensor, ...]
# the devices where torch averages with the multi-tensor kernels by default
_FOREACH_DEVICES = ("cuda",)


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def _is_floating_or_complex(t: Tensor) -> bool:
    return bool(t.is_floating_point() or t.is_complex())


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[ParamList, ParamList, Any], None]:
    """An exponential moving average over lists of tensors, updated in place."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list: ParamList, current_param_list: ParamList, _: Any) -> None:
        if _is_floating_or_complex(ema_param_list[0]):
            core._foreach_lerp_(ema_param_list, current_param_list, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[[ParamList, ParamList, Any], None]:
    """The running mean (SWA) over lists of tensors, updated in place."""

    @no_grad()
    def swa_update(averaged_param_list: ParamList, current_param_list: ParamList,
                   num_averaged: Tensor | int) -> None:
        if _is_floating_or_complex(averaged_param_list[0]):
            core._foreach_lerp_(averaged_param_list, current_param_list, 1 / (num_averaged + 1))
        else:
            diffs = core._foreach_sub(current_param_list, averaged_param_list)
            if isinstance(num_averaged, Tensor):
                core._foreach_addcdiv_(averaged_param_list, diffs,
                                       [num_averaged + 1] * len(averaged_param_list))
            else:
                core._foreach_add_(averaged_param_list, diffs, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    """An exponential moving average of one tensor, returned."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The running mean (SWA) of one tensor, returned."""

    @no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor,
                   num_averaged: Tensor | int) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """torch.optim.swa_utils.AveragedModel: a copy of ``model`` whose parameters (and, with
    ``use_buffers``, buffers) are averaged over ``update_parameters`` calls, by SWA's running
    mean unless ``avg_fn`` (per tensor) or ``multi_avg_fn`` (per list) is given."""

    n_averaged: Tensor

    def __init__(self, model: Module, device: Any = None,
                 avg_fn: Callable[[Tensor, Tensor, Any], Tensor] | None = None,
                 multi_avg_fn: Callable[[ParamList, ParamList, Any], None] | None = None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", core.tensor(0, dtype=core.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The averaged model's output."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current weights into the average (copy them the first time)."""
        if self.use_buffers:
            self_param = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            model_param = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            self_param, model_param = list(self.parameters()), list(model.parameters())
        self_detached: list[Tensor] = []
        model_detached: list[Tensor] = []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param, strict=False):
            p_model_ = p_model.detach().to(p_averaged.device)
            self_detached.append(p_averaged.detach())
            model_detached.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                self._average_lists(self_detached, model_detached)
            else:
                for p_averaged, p_model in zip(self_detached, model_detached, strict=True):
                    n_averaged = self.n_averaged.to(p_averaged.device)
                    p_averaged.detach().copy_(self.avg_fn(p_averaged.detach(), p_model,
                                                          n_averaged))
        if not self.use_buffers:
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1

    def _average_lists(self, averaged: list[Tensor], current: list[Tensor]) -> None:
        """Average by device and dtype: ``multi_avg_fn``, else SWA (multi-tensor on the
        devices where torch uses it, per tensor elsewhere)."""
        grouped = group_tensors_by_device_and_dtype([averaged, current])
        for (device, _), ([self_params, model_params], _) in grouped.items():
            n_averaged = self.n_averaged.to(device)
            if self.multi_avg_fn:
                self.multi_avg_fn(self_params, model_params, n_averaged)
            elif device is not None and device.type in _FOREACH_DEVICES:
                get_swa_multi_avg_fn()(self_params, model_params, n_averaged)
            else:
                avg_fn = get_swa_avg_fn()
                for p_averaged, p_model in zip(self_params, model_params, strict=True):
                    p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))


@no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of ``model``'s batch norms in one pass over
    ``loader`` (a cumulative average; the first item of a list or tuple batch is the
    input)."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """torch.optim.swa_utils.SWALR: anneal each group's lr to its ``swa_lr`` over
    ``anneal_epochs`` (cosine or linear), then hold it."""

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float],
                 anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: Any, swa_lr: Any, alpha: float) -> Any:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[Any]:
        """This step's lrs: the previous lrs moved on along the annealing curve."""
        if not self._get_lr_called_within_step:
            warnings.warn(_GET_LAST_LR_WARNING, UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        groups = self.optimizer.param_groups
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" \
            else self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer and the annealing function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes (the annealing function from its name)."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
