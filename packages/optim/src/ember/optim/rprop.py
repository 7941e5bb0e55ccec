"""torch.optim.Rprop: per-element step sizes grown where the gradient keeps its sign and
shrunk where it flips, the step taken along the gradient's sign, on the per-parameter and
multi-tensor paths (complex parameters through real views, as torch's ``view_as_real``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember import core
from ember.core import Tensor

from .optimizer import Optimizer, use_grad_for_differentiable
from .paths import (
    as_real,
    as_real_lists,
    check_capturable,
    group_tensors_by_device_and_dtype,
    pick_path,
    run_one_pass,
    step_tensor,
    steps_to_tensors,
    to_scalar,
)
from .rmsprop import check_state_steps

__all__ = ["Rprop", "rprop"]


def _initial_step_size(p: Tensor, lr: Any) -> Any:
    """The step sizes' starting value: ``lr``, in both components of a complex parameter
    (which steps as two independent real numbers)."""
    if p.is_complex():
        return complex(float(lr), float(lr))
    return to_scalar(lr)


class Rprop(Optimizer):
    """torch.optim.Rprop."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
        steps_to_tensors(self, "capturable")

    def _init_group(self, group: dict[str, Any], params: list[Tensor], grads: list[Tensor],
                    prevs: list[Tensor], step_sizes: list[Tensor],
                    state_steps: list[Tensor]) -> bool:
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params.append(p)
            grad = p.grad
            if grad.is_sparse:
                raise RuntimeError("Rprop does not support sparse gradients")
            grads.append(grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = step_tensor(p, 0.0, group["capturable"])
                state["prev"] = core.zeros_like(p)
                state["step_size"] = core.full_like(grad, _initial_step_size(p, group["lr"]))
            prevs.append(state["prev"])
            step_sizes.append(state["step_size"])
            state_steps.append(state["step"])
        return has_complex

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            prevs: list[Tensor] = []
            step_sizes: list[Tensor] = []
            state_steps: list[Tensor] = []
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            has_complex = self._init_group(group, params, grads, prevs, step_sizes,
                                           state_steps)
            rprop(params, grads, prevs, step_sizes, state_steps, step_size_min=step_size_min,
                  step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus,
                  foreach=group["foreach"], maximize=group["maximize"],
                  differentiable=group["differentiable"], capturable=group["capturable"],
                  has_complex=has_complex)
        return loss


def rprop(params: list[Tensor], grads: list[Tensor], prevs: list[Tensor],
          step_sizes: list[Tensor], state_steps: list[Tensor], foreach: bool | None = None,
          capturable: bool = False, maximize: bool = False, differentiable: bool = False,
          has_complex: bool = False, *, step_size_min: float, step_size_max: float,
          etaminus: float, etaplus: float) -> None:
    """torch.optim.rprop.rprop: the Rprop update of the lists."""
    check_state_steps(state_steps)
    func = pick_path(foreach, params, differentiable, single=_single_tensor_rprop,
                     multi=_multi_tensor_rprop, one_pass=_one_pass_rprop,
                     capturable=capturable, has_complex=has_complex)
    func(params, grads, prevs, step_sizes, state_steps, step_size_min=step_size_min,
         step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus,
         capturable=capturable, maximize=maximize, differentiable=differentiable,
         has_complex=has_complex)


def _one_pass_rprop(params: list[Tensor], grads: list[Tensor], prevs: list[Tensor],
                    step_sizes: list[Tensor], state_steps: list[Tensor], *,
                    step_size_min: float, step_size_max: float, etaminus: float,
                    etaplus: float, maximize: bool, **_: Any) -> None:
    if not params:
        return
    core._foreach_add_(state_steps, 1)
    run_one_pass(core._fused_rprop_, [params, grads, prevs, step_sizes], [],
                 etaminus=etaminus, etaplus=etaplus, step_size_min=step_size_min,
                 step_size_max=step_size_max, maximize=maximize)


def _to_factors(sign: Tensor, etaminus: float, etaplus: float, capturable: bool) -> None:
    """Replace the signs of ``grad * prev`` by the step-size factors, in place."""
    if capturable:
        sign.copy_(core.where(sign.gt(0), etaplus, sign))
        sign.copy_(core.where(sign.lt(0), etaminus, sign))
        sign.copy_(core.where(sign.eq(0), 1, sign))
    else:
        sign[sign.gt(0)] = etaplus
        sign[sign.lt(0)] = etaminus
        sign[sign.eq(0)] = 1


def _single_tensor_rprop(params: list[Tensor], grads: list[Tensor], prevs: list[Tensor],
                         step_sizes: list[Tensor], state_steps: list[Tensor], *,
                         step_size_min: float, step_size_max: float, etaminus: float,
                         etaplus: float, maximize: bool, capturable: bool,
                         differentiable: bool, has_complex: bool) -> None:
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        prev, step_size, step = prevs[i], step_sizes[i], state_steps[i]
        if capturable:
            check_capturable([param], [step])
        step += 1
        if param.is_complex():
            grad, prev, param, step_size = (as_real(grad), as_real(prev), as_real(param),
                                            as_real(step_size))
        sign = grad.mul(prev.clone() if differentiable else prev).sign()
        _to_factors(sign, etaminus, etaplus, capturable)
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        grad = grad.clone()
        if capturable:
            grad.copy_(core.where(sign.eq(etaminus), 0, grad))
        else:
            grad[sign.eq(etaminus)] = 0
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)


def _multi_tensor_rprop(params: list[Tensor], grads: list[Tensor], prevs: list[Tensor],
                        step_sizes: list[Tensor], state_steps: list[Tensor], *,
                        step_size_min: float, step_size_max: float, etaminus: float,
                        etaplus: float, maximize: bool, capturable: bool,
                        differentiable: bool, has_complex: bool) -> None:
    if not params:
        return
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    if capturable:
        check_capturable(params, state_steps)
    groups = group_tensors_by_device_and_dtype([params, grads, prevs, step_sizes, state_steps])
    for (device_params, device_grads, device_prevs, device_step_sizes,
         device_steps), _ in groups.values():
        core._foreach_add_(device_steps, 1)
        if has_complex:
            as_real_lists(device_params, device_grads, device_prevs, device_step_sizes)
        signs = core._foreach_mul(device_grads, device_prevs)
        if maximize:
            core._foreach_neg_(signs)
        # prev becomes this step's (maximize: negated) gradient, zeroed below where it flipped
        core._foreach_copy_(device_prevs, device_grads)
        if maximize:
            core._foreach_neg_(device_prevs)
        core._foreach_sign_(signs)
        for sign in signs:
            _to_factors(sign, etaminus, etaplus, capturable)
        core._foreach_mul_(device_step_sizes, signs)
        for step_size in device_step_sizes:
            step_size.clamp_(step_size_min, step_size_max)
        for sign, prev in zip(signs, device_prevs):
            prev.copy_(core.where(sign.eq(etaminus), 0, prev))
        grad_signs = [prev.sign() for prev in device_prevs]
        core._foreach_addcmul_(device_params, grad_signs, device_step_sizes, value=-1)
