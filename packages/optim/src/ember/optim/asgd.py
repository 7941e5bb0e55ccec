"""torch.optim.ASGD: averaged stochastic gradient descent (Polyak-Juditsky), on the
per-parameter and multi-tensor paths, with torch's state (``step``, ``eta``, ``mu``, ``ax``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember import core
from ember.core import Tensor

from .optimizer import Optimizer, scalar_dtype, use_grad_for_differentiable
from .paths import (
    check_capturable,
    get_value,
    group_tensors_by_device_and_dtype,
    pick_path,
    run_one_pass,
    to_scalar,
)

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    """torch.optim.ASGD."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) == 0:
                    continue
                for key in ("step", "eta", "mu"):
                    if not isinstance(p_state[key], Tensor):
                        p_state[key] = core.tensor(float(p_state[key]), dtype=scalar_dtype(),
                                                   device=p.device)

    def _init_group(self, group: dict[str, Any], params: list[Tensor], grads: list[Tensor],
                    mus: list[Tensor], axs: list[Tensor], etas: list[Tensor],
                    state_steps: list[Tensor]) -> None:
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            if p.grad.is_sparse:
                raise RuntimeError("ASGD does not support sparse gradients")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = core.zeros((), device=p.device, dtype=scalar_dtype())
                state["eta"] = core.as_tensor(to_scalar(group["lr"]), device=p.device,
                                              dtype=scalar_dtype()).clone().detach()
                state["mu"] = core.ones((), device=p.device, dtype=scalar_dtype())
                state["ax"] = core.zeros_like(p)
            mus.append(state["mu"])
            axs.append(state["ax"])
            etas.append(state["eta"])
            state_steps.append(state["step"])

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            mus: list[Tensor] = []
            axs: list[Tensor] = []
            etas: list[Tensor] = []
            state_steps: list[Tensor] = []
            self._init_group(group, params, grads, mus, axs, etas, state_steps)
            asgd(params, grads, axs, mus, etas, state_steps, lambd=group["lambd"],
                 lr=group["lr"], t0=group["t0"], alpha=group["alpha"],
                 weight_decay=group["weight_decay"], foreach=group["foreach"],
                 maximize=group["maximize"], differentiable=group["differentiable"],
                 capturable=group["capturable"])
        return loss


def asgd(params: list[Tensor], grads: list[Tensor], axs: list[Tensor], mus: list[Tensor],
         etas: list[Tensor], state_steps: list[Tensor], foreach: bool | None = None,
         maximize: bool = False, differentiable: bool = False, capturable: bool = False,
         has_complex: bool = False, *, lambd: float, lr: Any, t0: float, alpha: float,
         weight_decay: float) -> None:
    """torch.optim.asgd.asgd: the ASGD update of the lists (multi-tensor path by default)."""
    func = pick_path(foreach, params, differentiable, single=_single_tensor_asgd,
                     multi=_multi_tensor_asgd, one_pass=_one_pass_asgd,
                     capturable=capturable, has_complex=has_complex)
    func(params, grads, axs, mus, etas, state_steps, lambd=lambd, lr=lr, t0=t0, alpha=alpha,
         weight_decay=weight_decay, maximize=maximize, differentiable=differentiable,
         capturable=capturable)


def _one_pass_asgd(params: list[Tensor], grads: list[Tensor], axs: list[Tensor],
                   mus: list[Tensor], etas: list[Tensor], state_steps: list[Tensor], *,
                   lambd: float, lr: Any, t0: float, alpha: float, weight_decay: float,
                   maximize: bool, **_: Any) -> None:
    if not params:
        return
    core._foreach_add_(state_steps, 1)
    run_one_pass(core._fused_asgd_, [params, grads, axs], [mus, etas], lambd=lambd,
                 weight_decay=weight_decay, maximize=maximize)
    lr = float(lr)
    for mu, eta, step_t in zip(mus, etas, state_steps):
        step = get_value(step_t)
        eta.fill_(lr / ((1 + lambd * lr * step) ** alpha))
        mu.fill_(1 / max(1, step - t0))


def _single_tensor_asgd(params: list[Tensor], grads: list[Tensor], axs: list[Tensor],
                        mus: list[Tensor], etas: list[Tensor], state_steps: list[Tensor], *,
                        lambd: float, lr: Any, t0: float, alpha: float, weight_decay: float,
                        maximize: bool, differentiable: bool, capturable: bool) -> None:
    lr = to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        mu, ax, eta, step_t = mus[i], axs[i], etas[i], state_steps[i]
        if capturable:
            check_capturable([param], [mu], [eta], [step_t],
                             what="params, mus, etas, and state_steps")
        step_t += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if capturable:
            param.mul_(1 - lambd * eta)
            param.addcmul_(grad, eta, value=-1)
        else:
            eta_value = get_value(eta)
            param.mul_(1 - lambd * eta_value)
            param.add_(grad, alpha=-eta_value)
        if capturable or mu.item() != 1:
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)
        if capturable:
            eta.copy_(lr / ((1 + lambd * lr * step_t) ** alpha))
            mu.copy_(1 / core.maximum(step_t - t0, core.ones_like(step_t)))
        else:
            step = get_value(step_t)
            eta.copy_(core.as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
            mu.copy_(core.as_tensor(1 / max(1, step - t0)))


def _multi_tensor_asgd(params: list[Tensor], grads: list[Tensor], axs: list[Tensor],
                       mus: list[Tensor], etas: list[Tensor], state_steps: list[Tensor], *,
                       lambd: float, lr: Any, t0: float, alpha: float, weight_decay: float,
                       maximize: bool, differentiable: bool, capturable: bool) -> None:
    if not params:
        return
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    if capturable:
        check_capturable(params, mus, etas, state_steps, supports_xla=False,
                         what="params, mus, etas, and state_steps")
    lr = to_scalar(lr)
    groups = group_tensors_by_device_and_dtype([params, grads, axs, mus, etas, state_steps])
    for (device, _), ((d_params, d_grads, d_axs, d_mus, d_etas, d_steps), _) in groups.items():
        if maximize:
            d_grads = core._foreach_neg(d_grads)
        if d_steps[0].device.type == "cpu":
            core._foreach_add_(d_steps, core.tensor(1.0, device="cpu"), alpha=1.0)
        else:
            core._foreach_add_(d_steps, 1)
        if weight_decay != 0:
            if maximize:
                core._foreach_add_(d_grads, d_params, alpha=weight_decay)
                intermediate = d_grads
            else:
                intermediate = core._foreach_add(d_grads, d_params, alpha=weight_decay)
            core._foreach_add_(intermediate, d_params, alpha=lambd)
        else:
            intermediate = core._foreach_add(d_grads, d_params, alpha=lambd)
        core._foreach_addcmul_(d_params, intermediate, d_etas, value=-1)
        core._foreach_addcmul_(d_axs, core._foreach_sub(d_params, d_axs), d_mus)
        if capturable:
            new_mus = core._foreach_sub(d_steps, t0)
            core._foreach_maximum_(new_mus, 1.0)
            core._foreach_reciprocal_(new_mus)
            core._foreach_copy_(d_mus, new_mus)
            new_etas = core._foreach_mul(d_steps, lambd)
            core._foreach_mul_(new_etas, lr)
            core._foreach_add_(new_etas, 1)
            core._foreach_pow_(new_etas, alpha)
            core._foreach_reciprocal_(new_etas)
            core._foreach_mul_(new_etas, lr)
            core._foreach_copy_(d_etas, new_etas)
        else:
            core._foreach_copy_(d_etas, [core.as_tensor(lr / ((1 + lambd * lr * s) ** alpha),
                                                        device=device) for s in d_steps])
            core._foreach_copy_(d_mus, [core.as_tensor(1 / max(1, get_value(s) - t0),
                                                       device=device) for s in d_steps])
