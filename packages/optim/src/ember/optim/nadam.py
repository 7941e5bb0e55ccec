"""torch.optim.NAdam: Adam with Nesterov momentum (its momentum decay schedule and running
product of momenta), L2 or decoupled weight decay, on the per-parameter and multi-tensor
paths."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember import core
from ember.core import Tensor

from .adam import check_common
from .optimizer import Optimizer, use_grad_for_differentiable
from .paths import (
    as_real,
    as_real_lists,
    check_capturable,
    get_value,
    group_tensors_by_device_and_dtype,
    pick_path,
    run_one_pass,
    step_tensor,
    to_scalar,
)

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    """torch.optim.NAdam."""

    def __init__(self, params: Any, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        check_common(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) == 0:
                    continue
                if not isinstance(p_state["step"], Tensor):
                    p_state["step"] = step_tensor(p, float(p_state["step"]),
                                                  group["capturable"])
                if not isinstance(p_state["mu_product"], Tensor):
                    p_state["mu_product"] = step_tensor(p, p_state["mu_product"],
                                                        group["capturable"])

    def _init_group(self, group: dict[str, Any], params: list[Tensor], grads: list[Tensor],
                    exp_avgs: list[Tensor], exp_avg_sqs: list[Tensor],
                    mu_products: list[Tensor], state_steps: list[Tensor]) -> bool:
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params.append(p)
            if p.grad.is_sparse:
                raise RuntimeError("NAdam does not support sparse gradients")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = step_tensor(p, 0.0, group["capturable"])
                state["mu_product"] = step_tensor(p, 1.0, group["capturable"])
                state["exp_avg"] = core.zeros_like(p)
                state["exp_avg_sq"] = core.zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            mu_products.append(state["mu_product"])
            state_steps.append(state["step"])
        return has_complex

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            exp_avgs: list[Tensor] = []
            exp_avg_sqs: list[Tensor] = []
            mu_products: list[Tensor] = []
            state_steps: list[Tensor] = []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params, grads, exp_avgs, exp_avg_sqs,
                                           mu_products, state_steps)
            nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, beta1=beta1,
                  beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                  momentum_decay=group["momentum_decay"], eps=group["eps"],
                  maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  foreach=group["foreach"], capturable=group["capturable"],
                  differentiable=group["differentiable"], has_complex=has_complex)
        return loss


def nadam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
          exp_avg_sqs: list[Tensor], mu_products: list[Tensor], state_steps: list[Tensor],
          decoupled_weight_decay: bool = False, foreach: bool | None = None,
          capturable: bool = False, differentiable: bool = False, has_complex: bool = False,
          maximize: bool = False, *, beta1: float, beta2: float, lr: float | Tensor,
          weight_decay: float, momentum_decay: float, eps: float) -> None:
    """torch.optim.nadam.nadam: the NAdam update of the lists, on the path asked for (by
    default the multi-tensor one)."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    if not all(isinstance(t, Tensor) for t in mu_products):
        raise RuntimeError("API has changed, `mu_products` argument must contain a list of "
                           "singleton tensors")
    func = pick_path(foreach, params, differentiable, single=_single_tensor_nadam,
                     multi=_multi_tensor_nadam, one_pass=_one_pass_nadam,
                     capturable=capturable, has_complex=has_complex)
    func(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, beta1=beta1,
         beta2=beta2, lr=lr, weight_decay=weight_decay, momentum_decay=momentum_decay,
         maximize=maximize, decoupled_weight_decay=decoupled_weight_decay, eps=eps,
         capturable=capturable, differentiable=differentiable, has_complex=has_complex)


def _mu(beta1: float, step: Any, momentum_decay: float) -> Any:
    """The momentum coefficient of ``step``: ``beta1 * (1 - 0.96**(step * decay) / 2)``."""
    return beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))


def _one_pass_nadam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                    exp_avg_sqs: list[Tensor], mu_products: list[Tensor],
                    state_steps: list[Tensor], *, beta1: float, beta2: float, lr: Any,
                    weight_decay: float, momentum_decay: float, eps: float,
                    decoupled_weight_decay: bool, maximize: bool, **_: Any) -> None:
    if not params:
        return
    core._foreach_add_(state_steps, 1)
    core._foreach_mul_(mu_products, [_mu(beta1, get_value(step), momentum_decay)
                                     for step in state_steps])
    run_one_pass(core._fused_nadam_, [params, grads, exp_avgs, exp_avg_sqs],
                 [state_steps, mu_products], lr=float(lr), beta1=beta1, beta2=beta2, eps=eps,
                 weight_decay=weight_decay, momentum_decay=momentum_decay,
                 decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)


def _single_tensor_nadam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                         exp_avg_sqs: list[Tensor], mu_products: list[Tensor],
                         state_steps: list[Tensor], *, beta1: float, beta2: float, lr: Any,
                         weight_decay: float, momentum_decay: float, eps: float,
                         decoupled_weight_decay: bool, maximize: bool, capturable: bool,
                         differentiable: bool, has_complex: bool) -> None:
    lr = to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq = exp_avgs[i], exp_avg_sqs[i]
        mu_product, step_t = mu_products[i], state_steps[i]
        if param.is_complex():
            param, grad, exp_avg, exp_avg_sq = (as_real(param), as_real(grad),
                                                as_real(exp_avg), as_real(exp_avg_sq))
        if capturable:
            check_capturable([param], [mu_product], [step_t],
                             what="params, mu_products and state_steps")
        step_t += 1
        step = step_t if capturable else get_value(step_t)
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        mu = _mu(beta1, step, momentum_decay)
        mu_next = _mu(beta1, step + 1, momentum_decay)
        mu_product *= mu
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt()
        if differentiable or capturable:
            denom = denom.add(eps)
            mu_product_next = mu_product * mu_next
            grad = grad * (-lr * (1.0 - mu) / (1.0 - mu_product))
            exp_avg = exp_avg * (-lr * mu_next / (1.0 - mu_product_next))
            param.addcdiv_(grad, denom)
            param.addcdiv_(exp_avg, denom)
        else:
            mu_product_next = get_value(mu_product) * mu_next
            denom.add_(eps)
            param.addcdiv_(grad, denom,
                           value=(-lr * (1.0 - mu) / (1.0 - get_value(mu_product))))
            param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))


def _multi_tensor_nadam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                        exp_avg_sqs: list[Tensor], mu_products: list[Tensor],
                        state_steps: list[Tensor], *, beta1: float, beta2: float, lr: Any,
                        weight_decay: float, momentum_decay: float, eps: float,
                        decoupled_weight_decay: bool, maximize: bool, capturable: bool,
                        differentiable: bool, has_complex: bool) -> None:
    if not params:
        return
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    if capturable:
        check_capturable(params, mu_products, state_steps, supports_xla=False,
                         what="params, mu_products, and state_steps")
    lr = to_scalar(lr)
    groups = group_tensors_by_device_and_dtype([params, grads, exp_avgs, exp_avg_sqs,
                                                mu_products, state_steps])
    for (g_params, g_grads, g_exp_avgs, g_exp_avg_sqs, g_mu_products, g_steps), _ in \
            groups.values():
        if has_complex:
            as_real_lists(g_params, g_grads, g_exp_avgs, g_exp_avg_sqs)
        if maximize:
            g_grads = core._foreach_neg(g_grads)
        core._foreach_add_(g_steps, 1)
        if weight_decay != 0:
            if decoupled_weight_decay:
                core._foreach_mul_(g_params, 1 - lr * weight_decay)
            elif maximize:
                core._foreach_add_(g_grads, g_params, alpha=weight_decay)
            else:
                g_grads = core._foreach_add(g_grads, g_params, alpha=weight_decay)
        core._foreach_lerp_(g_exp_avgs, g_grads, 1 - beta1)
        core._foreach_mul_(g_exp_avg_sqs, beta2)
        core._foreach_addcmul_(g_exp_avg_sqs, g_grads, g_grads, 1 - beta2)
        sq_sqrt = core._foreach_sqrt(g_exp_avg_sqs)
        mus: Any
        mu_nexts: Any
        if capturable:
            exponent = core._foreach_mul(g_steps, momentum_decay)
            mus = _foreach_mus(beta1, exponent)
            core._foreach_add_(exponent, momentum_decay)
            mu_nexts = _foreach_mus(beta1, exponent)
            bias_correction_sqrt = core._foreach_pow(beta2, g_steps)
            core._foreach_sub_(bias_correction_sqrt, 1.0)
            core._foreach_neg_(bias_correction_sqrt)
            core._foreach_sqrt_(bias_correction_sqrt)
        else:
            steps = [get_value(s) for s in g_steps]
            bias_correction_sqrt = [(1 - beta2 ** s) ** 0.5 for s in steps]
            mus = [_mu(beta1, s, momentum_decay) for s in steps]
            mu_nexts = [_mu(beta1, s + 1, momentum_decay) for s in steps]
        core._foreach_mul_(g_mu_products, mus)
        core._foreach_div_(sq_sqrt, bias_correction_sqrt)
        core._foreach_add_(sq_sqrt, eps)
        if capturable:
            core._foreach_sub_(mus, 1.0)
            core._foreach_mul_(mus, lr)
            denom = core._foreach_sub(g_mu_products, 1.0)
            core._foreach_neg_(denom)
            core._foreach_div_(mus, denom)  # -lr * (1 - mu) / (1 - mu_product)
            denom = core._foreach_mul(g_mu_products, mu_nexts)
            core._foreach_mul_(mu_nexts, lr)
            core._foreach_sub_(denom, 1.0)
            core._foreach_div_(mu_nexts, denom)  # -lr * mu_next / (1 - mu_product_next)
            numerator = core._foreach_mul(mus, g_grads)
            core._foreach_addcmul_(numerator, mu_nexts, g_exp_avgs)
            core._foreach_addcdiv_(g_params, numerator, sq_sqrt)
        else:
            lr_value = get_value(lr)
            products = [get_value(m) for m in g_mu_products]
            grad_sizes = [(lr_value * (1.0 - mu) / (1.0 - prod)) * -1
                          for prod, mu in zip(products, mus)]
            avg_sizes = [(lr_value * mu_next / (1.0 - prod * mu_next)) * -1
                         for prod, mu_next in zip(products, mu_nexts)]
            core._foreach_addcdiv_(g_params, g_grads, sq_sqrt, grad_sizes)
            core._foreach_addcdiv_(g_params, g_exp_avgs, sq_sqrt, avg_sizes)


def _foreach_mus(beta1: float, exponent: list[Tensor]) -> list[Tensor]:
    """``beta1 * (1 - 0.5 * 0.96**exponent)`` of each tensor, as new tensors."""
    mus = core._foreach_pow(0.96, exponent)
    core._foreach_mul_(mus, -0.5)
    core._foreach_add_(mus, 1.0)
    core._foreach_mul_(mus, beta1)
    return mus
