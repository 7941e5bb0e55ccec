"""torch.optim.Adafactor: adaptive steps from a factored second moment (row and column
means for tensors of two or more dims, a full one for vectors), relative step sizes,
update clipping, decoupled weight decay and maximization, on the per-parameter and
multi-tensor paths."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember import core
from ember.autograd import no_grad
from ember.core import Tensor

from .optimizer import Optimizer, scalar_dtype
from .paths import group_tensors_by_device_and_dtype, to_scalar

__all__ = ["Adafactor", "adafactor"]


class Adafactor(Optimizer):
    """torch.optim.Adafactor."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = core.tensor(float(p_state["step"]), dtype=scalar_dtype())

    def _init_group(self, group: dict[str, Any], params: list[Tensor], grads: list[Tensor],
                    row_vars: list[Tensor | None], col_vars: list[Tensor | None],
                    variances: list[Tensor | None], state_steps: list[Tensor]) -> None:
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            if p.grad.is_sparse:
                raise RuntimeError("Adafactor does not support sparse gradients")
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = core.tensor(0.0, dtype=scalar_dtype())
                if p.grad.dim() > 1:
                    # the running means of g*g over the last dim (rows) and the one before
                    row_shape = list(p.grad.shape)
                    row_shape[-1] = 1
                    state["row_var"] = p.grad.new_zeros(row_shape)
                    col_shape = list(p.grad.shape)
                    col_shape[-2] = 1
                    state["col_var"] = p.grad.new_zeros(col_shape)
                else:
                    state["variance"] = core.zeros_like(p.grad)
            row_vars.append(state.get("row_var"))
            col_vars.append(state.get("col_var"))
            variances.append(state.get("variance"))
            state_steps.append(state["step"])

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            row_vars: list[Tensor | None] = []
            col_vars: list[Tensor | None] = []
            variances: list[Tensor | None] = []
            state_steps: list[Tensor] = []
            eps1, eps2 = group["eps"]
            self._init_group(group, params, grads, row_vars, col_vars, variances, state_steps)
            adafactor(params, grads, row_vars, col_vars, variances, state_steps,
                      foreach=group["foreach"], grad_scale=getattr(self, "grad_scale", None),
                      found_inf=getattr(self, "found_inf", None), d=group["d"],
                      lr=group["lr"], beta2_decay=group["beta2_decay"],
                      weight_decay=group["weight_decay"], eps1=eps1, eps2=eps2,
                      maximize=group["maximize"])
        return loss


def adafactor(params: list[Tensor], grads: list[Tensor], row_vars: list[Tensor | None],
              col_vars: list[Tensor | None], variances: list[Tensor | None],
              state_steps: list[Tensor], foreach: bool | None = None,
              grad_scale: Tensor | None = None, found_inf: Tensor | None = None,
              has_complex: bool = False, *, d: float, lr: float | Tensor, beta2_decay: float,
              weight_decay: float, eps1: float | None, eps2: float, maximize: bool) -> None:
    """torch.optim._adafactor.adafactor: the Adafactor update of the lists. As in torch the
    per-parameter loop runs unless ``foreach=True`` (the multi-tensor path holds a
    parameter-sized intermediate per tensor, and Adafactor is for tight memory)."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("`state_steps` argument must contain a list of singleton tensors")
    func = _multi_tensor_adafactor if foreach else _single_tensor_adafactor
    func(params, grads, row_vars, col_vars, variances, state_steps, grad_scale, found_inf,
         d=d, lr=lr, beta2_decay=beta2_decay, weight_decay=weight_decay, eps1=eps1,
         eps2=eps2, maximize=maximize)


def _rms(t: Tensor, d: float = 1.0) -> float:
    """The root mean square of ``t`` over ``d``, rounded as torch rounds it."""
    return float(t.norm(2).item()) / ((t.numel() ** 0.5) * d)


def _factored_estimate(row_var: Tensor, col_var: Tensor, eps1: float) -> Tensor:
    """The second moment rebuilt from its row and column factors: R C / mean(R)."""
    estimate = row_var @ col_var
    return estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))


def _single_tensor_adafactor(params: list[Tensor], grads: list[Tensor],
                             row_vars: list[Tensor | None], col_vars: list[Tensor | None],
                             variances: list[Tensor | None], state_steps: list[Tensor],
                             grad_scale: Tensor | None, found_inf: Tensor | None, *, d: float,
                             lr: Any, beta2_decay: float, weight_decay: float,
                             eps1: float | None, eps2: float, maximize: bool) -> None:
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Grad scaling should occur outside of optimizer.step()")
    lr = to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        step_t, row_var, col_var, variance = state_steps[i], row_vars[i], col_vars[i], \
            variances[i]
        if eps1 is None:
            # as torch: the first parameter's dtype fixes eps1 for the rest of the group
            eps1 = core.finfo(param.dtype).eps
        step_t += 1
        step = step_t.item()
        one_minus_beta2_t = step ** beta2_decay
        rho_t = min(lr, 1 / (step ** 0.5))
        alpha = max(eps2, _rms(param)) * rho_t
        if weight_decay != 0:
            param.mul_(1 - lr * weight_decay)
        if grad.dim() > 1:
            if row_var is None or col_var is None:
                raise AssertionError(
                    "row_var and col_var should be defined when grad is multidimensional")
            row_var.lerp_(core.norm(grad, dim=-1, keepdim=True).square_()
                          .div_(grad.size(-1)), one_minus_beta2_t)
            col_var.lerp_(core.norm(grad, dim=-2, keepdim=True).square_()
                          .div_(grad.size(-2)), one_minus_beta2_t)
            var_estimate = _factored_estimate(row_var, col_var, eps1)
        else:
            if variance is None:
                raise AssertionError("variance should be defined when grad is a vector")
            variance.lerp_(grad * grad, one_minus_beta2_t)
            var_estimate = variance.clone()
        # eps1 squared: the square root comes after
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
        denom = max(1.0, _rms(update, d))
        param.add_(update, alpha=-alpha / denom)


def _multi_tensor_adafactor(params: list[Tensor], grads: list[Tensor],
                            row_vars: list[Tensor | None], col_vars: list[Tensor | None],
                            variances: list[Tensor | None], state_steps: list[Tensor],
                            grad_scale: Tensor | None, found_inf: Tensor | None, *, d: float,
                            lr: Any, beta2_decay: float, weight_decay: float,
                            eps1: float | None, eps2: float, maximize: bool) -> None:
    if not params:
        return
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Grad scaling should occur outside of optimizer.step()")
    lr = to_scalar(lr)
    lists: list[list[Any]] = [params, grads, row_vars, col_vars, variances, state_steps]
    for (_, dtype, is_multidim), group in _group_by_device_dtype_and_is_multidim(lists).items():
        device_params, device_grads, device_rows, device_cols, device_vars, device_steps = group
        if eps1 is None:
            eps1 = core.finfo(dtype).eps
        if maximize:
            device_grads = core._foreach_neg(device_grads)
        core._foreach_add_(device_steps, 1.0)
        steps = [s.item() for s in device_steps]
        one_minus_beta2_ts = [s ** beta2_decay for s in steps]
        alphas = [max(eps2, _rms(p)) * min(lr, 1 / (s ** 0.5))
                  for p, s in zip(device_params, steps)]
        if weight_decay != 0:
            core._foreach_mul_(device_params, 1 - lr * weight_decay)
        if is_multidim:
            if device_rows[0] is None or device_cols[0] is None:
                raise AssertionError(
                    "row_var and col_var should be defined when grad is multidimensional")
            for dim, factors in ((-1, device_rows), (-2, device_cols)):
                means = [core.norm(g, dim=dim, keepdim=True) for g in device_grads]
                core._foreach_mul_(means, means)
                core._foreach_div_(means, [g.size(dim) for g in device_grads])
                core._foreach_lerp_(factors, means, one_minus_beta2_ts)
            estimates = [r @ c for r, c in zip(device_rows, device_cols)]
            row_means = [r.mean(dim=-2, keepdim=True) for r in device_rows]
            core._foreach_clamp_min_(row_means, eps1)
            core._foreach_div_(estimates, row_means)
        else:
            if device_vars[0] is None:
                raise AssertionError("variance should be defined when grad is a vector")
            core._foreach_lerp_(device_vars, core._foreach_mul(device_grads, device_grads),
                                one_minus_beta2_ts)
            estimates = [v.clone() for v in device_vars]
        core._foreach_clamp_min_(estimates, eps1 * eps1)
        core._foreach_rsqrt_(estimates)
        core._foreach_mul_(estimates, device_grads)
        scales = [-a / max(1.0, _rms(u, d)) for a, u in zip(alphas, estimates)]
        core._foreach_mul_(estimates, scales)
        core._foreach_add_(device_params, estimates)


def _group_by_device_dtype_and_is_multidim(lists: list[list[Any]]
                                           ) -> dict[tuple[Any, Any, bool], list[list[Any]]]:
    """The lists split by device and dtype and by whether the gradient (the second list)
    has more than one dim, so that each group is all factored or all vectors."""
    out: dict[tuple[Any, Any, bool], list[list[Any]]] = {}
    for (device, dtype), (grouped, _) in group_tensors_by_device_and_dtype(lists).items():
        for j, grad in enumerate(grouped[1]):
            if grad is None:
                raise AssertionError("grad should not be None")
            sub = out.setdefault((device, dtype, grad.dim() > 1), [[] for _ in grouped])
            for lst, values in zip(sub, grouped):
                lst.append(values[j])
    return out
