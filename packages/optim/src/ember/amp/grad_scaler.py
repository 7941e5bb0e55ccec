"""torch.amp.GradScaler: dynamic loss scaling for mixed-precision training.

``scale`` multiplies the loss by the current scale, ``step`` unscales the gradients (checking
them for infs and NaNs) and skips ``optimizer.step()`` when any are found, ``update`` backs
the scale off after a skipped step and grows it after ``growth_interval`` clean ones.

The two primitives torch builds it on, ``_amp_foreach_non_finite_check_and_unscale_`` and
``_amp_update_scale_``, are written here from ``ember.core`` ops with torch's semantics (a
float32 scale, products taken in float64 and rounded to float32), and never read a value
back to the host, so on CUDA they run without a sync, as torch's do.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections import abc, defaultdict
from enum import Enum
from typing import Any

from ember import core
from ember.autograd import no_grad
from ember.core import Tensor
from ember.core.device import cuda_available

__all__ = ["OptState", "GradScaler", "CudaGradScaler",
           "_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_"]


# ----------------------------------------------------------------- primitives

def _check_one_element(name: str, t: Tensor) -> None:
    if t.numel() != 1:
        raise RuntimeError(f"{name} must be a 1-element tensor.")


def _check_dtype(name: str, t: Tensor, dtype: Any, what: str) -> None:
    if t.dtype != dtype:
        raise RuntimeError(f"{name} must be a{what} tensor.")


def _amp_foreach_non_finite_check_and_unscale_(scaled_grads: list[Tensor], found_inf: Tensor,
                                               inv_scale: Tensor) -> None:
    """torch._amp_foreach_non_finite_check_and_unscale_: multiply every tensor of
    ``scaled_grads`` in place by ``inv_scale`` (a float32 1-element tensor) and set
    ``found_inf`` (float32, 1 element) to 1.0 if any holds an inf or a NaN."""
    _check_one_element("inv_scale", inv_scale)
    _check_one_element("found_inf", found_inf)
    _check_dtype("inv_scale", inv_scale, core.float32, " float")
    _check_dtype("found_inf", found_inf, core.float32, " float")
    nonempty = [g for g in scaled_grads if g.numel()]
    if not nonempty:
        return
    with no_grad():
        # the infinity norm is finite exactly when every element is (NaN propagates)
        largest = core._foreach_norm(nonempty, math.inf)
        bad = core.logical_not(core.isfinite(core.stack(largest)).all())
        found_inf.masked_fill_(bad.reshape(found_inf.shape), 1.0)
        core._foreach_mul_(nonempty, inv_scale)


def _amp_update_scale_(current_scale: Tensor, growth_tracker: Tensor, found_inf: Tensor,
                       growth_factor: float, backoff_factor: float,
                       growth_interval: int) -> Tensor:
    """torch._amp_update_scale_: after a step that found infs (``found_inf`` nonzero) multiply
    ``current_scale`` by ``backoff_factor`` and reset ``growth_tracker``; otherwise count the
    clean step, and at ``growth_interval`` of them multiply by ``growth_factor`` (unless that
    overflows float32) and reset the count. In place; returns ``current_scale``."""
    _check_one_element("growth_tracker", growth_tracker)
    _check_one_element("current_scale", current_scale)
    _check_one_element("found_inf", found_inf)
    _check_dtype("growth_tracker", growth_tracker, core.int32, "n int")
    _check_dtype("current_scale", current_scale, core.float32, " float")
    _check_dtype("found_inf", found_inf, core.float32, " float")
    with no_grad():
        found = found_inf != 0
        successful = growth_tracker + 1
        grow = core.logical_and(core.logical_not(found), successful == growth_interval)
        wide = current_scale.double()
        grown = (wide * growth_factor).float()
        grown = core.where(core.logical_and(grow, core.isfinite(grown)), grown, current_scale)
        new_scale = core.where(found, (wide * backoff_factor).float(), grown)
        new_tracker = core.where(core.logical_or(found, grow), 0, successful)
        current_scale.copy_(new_scale)
        growth_tracker.copy_(new_tracker)
    return current_scale


# ---------------------------------------------------------------- GradScaler

class _MultiDeviceReplicator:
    """Copies of one tensor on the devices asked for, made once per device."""

    def __init__(self, master_tensor: Tensor) -> None:
        self.master = master_tensor
        self._per_device_tensors: dict[Any, Tensor] = {}

    def get(self, device: Any) -> Tensor:
        copy = self._per_device_tensors.get(device)
        if copy is None:
            copy = self.master.to(device=device, non_blocking=True, copy=True)
            self._per_device_tensors[device] = copy
        return copy


class OptState(Enum):
    """Where an optimizer stands in the current iteration."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict[str, Any]:
    # module level (not a lambda) so that a scaler pickles
    return {"stage": OptState.READY, "found_inf_per_device": {}}


_FIX = ("This may indicate your script did not use scaler.scale(loss or outputs) earlier in "
        "the iteration.")


class GradScaler:
    """torch.amp.GradScaler: scales the loss, unscales and checks the gradients, skips steps
    whose gradients hold infs or NaNs, and adapts the scale.

    ``enabled=False`` makes every method a no-op (``scale`` returns its input, ``step`` just
    calls ``optimizer.step()``); on ``device="cuda"`` without CUDA the scaler warns and
    disables itself."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled and not cuda_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale: Tensor | None = None  # made on first use, on the outputs' device
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Tensor | None = None
            self._per_optimizer_states: defaultdict[int, dict[str, Any]] = \
                defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname: str) -> tuple[Tensor, Tensor]:
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + _FIX)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + _FIX)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev: Any) -> Tensor:
        if self._growth_tracker is not None:
            raise AssertionError("_growth_tracker initialized before _scale")
        self._scale = core.full((), self._init_scale, dtype=core.float32, device=dev)
        self._growth_tracker = core.full((), self._init_growth_tracker, dtype=core.int32,
                                         device=dev)
        return self._scale

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or lists, tuples and other iterables of them) multiplied by
        the scale; returned unchanged when the scaler is disabled."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            scale = self._scale
            if scale is None:
                scale = self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * scale.to(device=outputs.device, non_blocking=True)
        stash: list[_MultiDeviceReplicator] = []

        def apply_scale(val: Any) -> Any:
            if isinstance(val, Tensor):
                if not stash:
                    scale = self._scale
                    if scale is None:
                        scale = self._lazy_init_scale_growth_tracker(val.device)
                    stash.append(_MultiDeviceReplicator(scale))
                return val * stash[0].get(val.device)
            if isinstance(val, abc.Iterable):
                scaled = map(apply_scale, val)
                return type(val)(scaled) if isinstance(val, (list, tuple)) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer: Any, inv_scale: Tensor, found_inf: Tensor,
                        allow_fp16: bool) -> dict[Any, Tensor]:
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        per_device_found_inf = _MultiDeviceReplicator(found_inf)
        by_device_dtype: defaultdict[Any, defaultdict[Any, list[Tensor]]] = \
            defaultdict(lambda: defaultdict(list))
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError("expected param to be torch.Tensor, got "
                                             f"{type(param).__name__}")
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype == core.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    by_device_dtype[grad.device][grad.dtype].append(grad)
            for device, per_dtype in by_device_dtype.items():
                for grads in per_dtype.values():
                    _amp_foreach_non_finite_check_and_unscale_(
                        grads, per_device_found_inf.get(device), per_device_inv_scale.get(device))
        return per_device_found_inf._per_device_tensors

    def unscale_(self, optimizer: Any) -> None:
        """Divide the gradients of ``optimizer``'s parameters by the scale (once per step,
        before ``step``), e.g. to clip them; ``step`` then does not unscale them again."""
        if not self._enabled:
            return
        scale = self._check_scale_growth_tracker("unscale_")[0]
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # the reciprocal in float64, rounded once, as torch takes it
        inv_scale = scale.double().reciprocal().float()
        found_inf = core.full((), 0.0, dtype=core.float32, device=scale.device)
        optimizer_state["found_inf_per_device"] = self._unscale_grads_(
            optimizer, inv_scale, found_inf, False)
        optimizer_state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer: Any, optimizer_state: dict[str, Any], *args: Any,
                        **kwargs: Any) -> Any:
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale the gradients (unless ``unscale_`` did) and call ``optimizer.step(*args,
        **kwargs)`` if they hold no inf or NaN; returns what it returned (None if skipped).

        An optimizer with ``_step_supports_amp_scaling`` (fused SGD, Adam, AdamW) is handed
        ``grad_scale`` and ``found_inf`` attributes and unscales and skips by itself."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            return self._step_amp_aware(optimizer, optimizer_state, args, kwargs)
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return retval

    def _step_amp_aware(self, optimizer: Any, optimizer_state: dict[str, Any],
                        args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The step of an optimizer that unscales and skips by itself."""
        has_grad_scaler_kwarg = "grad_scaler" in inspect.signature(optimizer.step).parameters
        if has_grad_scaler_kwarg:
            warnings.warn("GradScaler is going to stop passing itself as a keyword argument to "
                          "the passed optimizer. In the near future GradScaler registers "
                          "`grad_scale: Tensor` and `found_inf: Tensor` to the passed optimizer "
                          "and let the optimizer use them directly.", FutureWarning,
                          stacklevel=3)
            kwargs.update({"grad_scaler": self})
        else:
            if optimizer_state["stage"] is OptState.READY:
                self._check_inf_per_device(optimizer)
            scale = self._get_scale_async()
            if scale is None:
                raise AssertionError("_get_scale_async returned None")
            found_inf = sum([t.to(scale.device, non_blocking=True)
                             for t in optimizer_state["found_inf_per_device"].values()])
            # a grad_scale the user set is multiplied in, unless unscale_ already unscaled
            optimizer.grad_scale = getattr(optimizer, "grad_scale", None) \
                if optimizer_state["stage"] == OptState.UNSCALED \
                else scale * getattr(optimizer, "grad_scale", 1)
            optimizer.found_inf = found_inf
        retval = optimizer.step(*args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        if not has_grad_scaler_kwarg:
            del optimizer.grad_scale
            del optimizer.found_inf
        return retval

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Back the scale off if any optimizer's step was skipped, grow it after
        ``growth_interval`` clean steps in a row; or set it to ``new_scale`` (a float or a
        1-element float32 tensor, copied)."""
        if not self._enabled:
            return
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found_infs = [found_inf.to(device=scale.device, non_blocking=True)
                          for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf_combined = found_infs[0]
            for other in found_infs[1:]:
                found_inf_combined += other
            _amp_update_scale_(scale, growth_tracker, found_inf_combined, self._growth_factor,
                               self._backoff_factor, self._growth_interval)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self) -> Tensor | None:
        return self._scale

    def get_scale(self) -> float:
        """The current scale as a Python float (``init_scale`` before the first ``scale``,
        1.0 when disabled)."""
        if self._enabled:
            scale = self._get_scale_async()
            return self._init_scale if scale is None else float(scale.item())
        return 1.0

    def get_growth_factor(self) -> float:
        """The factor the scale grows by."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the factor the scale grows by."""
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        """The factor the scale backs off by."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the factor the scale backs off by."""
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        """How many clean steps in a row grow the scale."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set how many clean steps in a row grow the scale."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._enabled:
            tracker = self._growth_tracker
            return self._init_growth_tracker if tracker is None else int(tracker.item())
        return 0

    def is_enabled(self) -> bool:
        """Whether the scaler scales (False when built disabled or without CUDA)."""
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval`` and
        ``_growth_tracker`` as Python numbers (torch's layout); empty when disabled."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state dict saved by ``state_dict`` (Ember's or torch's); a no-op when
        disabled."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the "
                                     "beginning of an iteration, or at the end after "
                                     "scaler.update().")
            # the tensors are rebuilt lazily from these numbers after unpickling
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer: Any) -> dict[Any, Tensor]:
        scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = core.full((), 1.0, dtype=core.float32, device=scale.device)
        found_inf = core.full((), 0.0, dtype=core.float32, device=scale.device)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = \
            self._unscale_grads_(optimizer, dummy_inv_scale, found_inf, True)
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer: Any) -> dict[Any, Tensor]:
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]


class CudaGradScaler(GradScaler):
    """torch.cuda.amp.GradScaler, deprecated: ``GradScaler("cuda", ...)``. Exported as
    ``ember.cuda.amp.GradScaler``."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
