"""torch.optim.SparseAdam: Adam masked to the entries a sparse gradient holds.

Torch's SparseAdam takes the sparse gradients of ``nn.Embedding(sparse=True)`` and updates
only the rows they hold (the looked-up ones), their moments included. Ember has no sparse
layout: its embeddings give dense gradients, whose rows that hold a nonzero value are the
rows a sparse gradient would hold, and SparseAdam updates those rows as torch's updates
its rows (the same operations on the gathered values). A row looked up whose gradient is
exactly zero everywhere is the one case told apart differently: torch updates it, Ember
leaves it (docs/compatibility.md)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ember import core
from ember.autograd import no_grad
from ember.core import Tensor

from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """torch.optim.SparseAdam."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        sparse_params = []
        complex_params = []
        for index, group in enumerate(self.param_groups):
            for d_index, p in enumerate(group["params"]):
                if p.is_sparse:
                    sparse_params.append([index, d_index])
                if p.is_complex():
                    complex_params.append([index, d_index])
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires "
                             "dense parameter tensors")
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One masked Adam step of the rows each gradient holds; ``closure`` re-evaluates
        the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr = float(group["lr"])
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = core.zeros_like(p)
                    state["exp_avg_sq"] = core.zeros_like(p)
                state["step"] += 1
                grad = -p.grad if group["maximize"] else p.grad
                _masked_adam(p, grad, state["exp_avg"], state["exp_avg_sq"], state["step"],
                             lr=lr, beta1=beta1, beta2=beta2, eps=group["eps"])
        return loss


def _held_rows(grad: Tensor) -> Tensor:
    """The indices of the rows (first-dim slices) of ``grad`` that hold a nonzero value."""
    rows = grad.reshape(grad.shape[0] if grad.dim() else 1, -1)
    return (rows != 0).any(1).nonzero().reshape(-1)


def _masked_adam(param: Tensor, grad: Tensor, exp_avg: Tensor, exp_avg_sq: Tensor,
                 step: int, *, lr: float, beta1: float, beta2: float, eps: float) -> None:
    """torch.optim._functional.sparse_adam on one parameter, its values gathered by row."""
    rows = _held_rows(grad)
    if not rows.numel():
        return
    flat = [t if t.dim() else t.reshape(1) for t in (param, grad, exp_avg, exp_avg_sq)]
    param_, grad_, exp_avg_, exp_avg_sq_ = flat
    values = grad_.index_select(0, rows)
    old_exp_avg = exp_avg_.index_select(0, rows)
    exp_avg_update = values.sub(old_exp_avg).mul_(1 - beta1)
    exp_avg_.index_add_(0, rows, exp_avg_update)
    old_exp_avg_sq = exp_avg_sq_.index_select(0, rows)
    exp_avg_sq_update = values.pow(2).sub_(old_exp_avg_sq).mul_(1 - beta2)
    exp_avg_sq_.index_add_(0, rows, exp_avg_sq_update)
    numer = exp_avg_update.add_(old_exp_avg)
    denom = exp_avg_sq_update.add_(old_exp_avg_sq).sqrt_().add_(eps)
    step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    param_.index_add_(0, rows, numer.div_(denom).mul_(-step_size))
