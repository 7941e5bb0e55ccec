"""What the optimizers' multi-tensor and fused paths share: which path runs by default,
the check ``fused=True`` makes, grouping tensors by device and dtype, scalar options that
may be tensors, complex tensors viewed as real ones."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ember import core
from ember.core import Tensor
from ember.core.ops import fused_optimizers_native

from .optimizer import scalar_dtype

__all__ = ["default_to_fused_or_foreach", "check_fused_device_dtype",
           "group_tensors_by_device_and_dtype", "to_scalar", "get_value", "pick_path",
           "run_one_pass", "CAPTURABLE_DEVICES", "check_capturable", "as_real",
           "as_real_lists"]

_FUSED_DEVICES = ["cpu", "cuda"]
# the device types torch lets ``capturable=True`` run on (read when a step checks them)
CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone"]


def default_to_fused_or_foreach(params: Sequence[Tensor | None], differentiable: bool,
                                use_fused: bool = False) -> tuple[bool, bool]:
    """``(fused, foreach)`` for an optimizer given neither: the fused path where the optimizer
    has one (``use_fused``) and its native CPU kernels are built for floating CPU parameters,
    otherwise the multi-tensor path. (torch takes its per-parameter loop on the CPU; here
    the list primitives beat it, and all paths agree to within float32 rounding.)"""
    if differentiable:
        return False, False
    fused = use_fused and all(p is None or (p.device.type == "cpu" and p.is_floating_point())
                              for p in params) and fused_optimizers_native.built()
    return fused, not fused


def check_fused_device_dtype(p: Tensor) -> None:
    """``fused=True`` takes floating-point tensors on devices with fused kernels only."""
    if not (p.device.type in _FUSED_DEVICES and p.is_floating_point()):
        raise RuntimeError("`fused=True` requires all the params to be floating point Tensors "
                           f"of supported devices: {_FUSED_DEVICES} but {p.dtype} and "
                           f"{p.device.type}")


def group_tensors_by_device_and_dtype(
        tensorlistlist: list[list[Any]], with_indices: bool = False
) -> dict[tuple[Any, Any], tuple[list[list[Any]], list[int]]]:
    """The lists split by the device and dtype of the first list's tensors, keeping their
    order: ``{(device, dtype): (lists, indices)}`` (entries of the other lists may be None)."""
    groups: dict[tuple[Any, Any], tuple[list[list[Any]], list[int]]] = {}
    first = tensorlistlist[0]
    for i, t in enumerate(first):
        key = (t.device, t.dtype)
        group = groups.get(key)
        if group is None:
            group = groups[key] = ([[] for _ in tensorlistlist], [])
        for lst, values in zip(group[0], tensorlistlist):
            lst.append(values[i] if values else None)
        group[1].append(i)
    if not with_indices:
        for _, indices in groups.values():
            indices.clear()
    return groups


def to_scalar(x: Any) -> Any:
    """A one-element tensor option (``lr``) as a 0-d tensor; numbers as they are."""
    if isinstance(x, Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


def get_value(x: Any) -> Any:
    """A ``step`` counter's value as a Python number."""
    return x.item() if isinstance(x, Tensor) else x


def pick_path(foreach: bool | None, params: Sequence[Tensor], differentiable: bool, *,
              single: Callable[..., None], multi: Callable[..., None],
              one_pass: Callable[..., None], capturable: bool = False,
              has_complex: bool = False) -> Callable[..., None]:
    """The implementation an optimizer without a torch fused kernel runs: the per-parameter
    loop or the multi-tensor path where ``foreach`` says, else (by default) Ember's one-pass
    step (``ember.core``'s ``fused_steps``) where the fused path's conditions hold and
    neither ``capturable`` nor complex parameters ask for torch's own paths, else the
    multi-tensor path."""
    if foreach is None:
        fused, foreach = default_to_fused_or_foreach(
            params, differentiable, use_fused=not capturable and not has_complex)
        if fused:
            return one_pass
    return multi if foreach else single


def run_one_pass(step: Callable[..., None], lists: list[list[Tensor]],
                 scalar_lists: list[list[Tensor]], **params: Any) -> None:
    """``step`` (one of ``ember.core``'s ``_fused_<optimizer>_``) over each device and dtype
    group of the tensor lists (an empty list stays empty: a state the options leave out)."""
    groups = group_tensors_by_device_and_dtype([*lists, *scalar_lists])
    for grouped, _ in groups.values():
        step(*[g if given else [] for g, given in zip(grouped, [*lists, *scalar_lists])],
             **params)


def check_capturable(params: list[Tensor], *others: list[Tensor], supports_xla: bool = True,
                     what: str = "params and state_steps") -> None:
    """torch's check that ``capturable=True`` tensors are on one device of a supported type
    (the multi-tensor paths, ``supports_xla=False``, leave out XLA)."""
    devices = CAPTURABLE_DEVICES + ["xla"] * supports_xla
    for p, *rest in zip(params, *others):
        if not (all(t.device.type == p.device.type for t in rest)
                and p.device.type in devices):
            raise AssertionError(f"If capturable=True, {what} must be on supported devices: "
                                 f"{devices}.")


_REAL_OF = {core.complex64: core.float32, core.complex128: core.float64}


def as_real(t: Tensor) -> Tensor:
    """A complex tensor as a real view of its components (torch's ``view_as_real`` up to
    shape: updates that act on each element alike need no more); other tensors as they
    are."""
    real = _REAL_OF.get(t.dtype)
    if real is None:
        return t
    return (t.reshape(1) if t.dim() == 0 else t).view(real)


def as_real_lists(*lists: list[Tensor]) -> None:
    """Each complex tensor of the lists replaced, in place, by its real view."""
    for lst in lists:
        for i, t in enumerate(lst):
            lst[i] = as_real(t)


def step_tensor(p: Tensor, value: float, on_device: bool, is_fused: bool | None = None
                ) -> Tensor:
    """A ``step`` (or similar) counter as torch keeps it: on the parameter's device for
    capturable or fused groups, on the CPU otherwise."""
    if on_device:
        return core.tensor(value, dtype=scalar_dtype(is_fused=is_fused), device=p.device)
    return core.tensor(value, dtype=scalar_dtype())


def steps_to_tensors(optimizer: Any, on_device_key: str | None) -> None:
    """Old state dicts kept ``step`` as a number; make it a tensor as torch does (on the
    parameter's device where the group's ``on_device_key`` option is set)."""
    for group in optimizer.param_groups:
        for p in group["params"]:
            p_state = optimizer.state.get(p, [])
            if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                p_state["step"] = step_tensor(p, float(p_state["step"]),
                                              bool(on_device_key and group[on_device_key]))
