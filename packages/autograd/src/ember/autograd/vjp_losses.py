"""VJPs of the nll_loss primitives (the input's gradient; the target and the weight get
none, as in torch).

A first-order backward (no graph being built) runs the fused backward primitive,
``nll_loss_backward`` or ``nll_loss2d_backward``. Where a graph is built (grad of grad,
forward mode), the same gradient is written with Ember ops: each kept target's
``-weight[target] * grad`` (over the total weight for the mean) scattered into zeros along
the class dim, linear in the output's gradient as torch's double backward is.
"""

from __future__ import annotations

from typing import Any

import ember.core as E
from ember.core.dispatch import grad_mode
from ember.core.ops.losses import MEAN, NLL_LOSS2D_BACKWARD, NLL_LOSS_BACKWARD, NONE
from ember.core.tensor import Tensor

from .formula import Formula

Grads = tuple[Any, ...]


def _refuse_weight_grad(node: Any, args: tuple[Any, ...], outs: Any) -> None:
    """torch's nll_loss has no derivative for its weight: recording it with a weight that
    requires grad is an error (as it is not under no_grad)."""
    w = args[2]
    if isinstance(w, Tensor) and w.requires_grad:
        raise RuntimeError(f"The function '{node.op.name}' is not differentiable with respect "
                           "to argument 'weight'. This input cannot have requires_grad True.")


def _composite(g: Tensor, x: Tensor, t: Tensor, w: Tensor | None, total: Tensor,
               reduction: int, ignore_index: int) -> Tensor:
    class_dim = 0 if x.ndim == 1 else 1
    kept = t != ignore_index
    target = t.masked_fill(~kept, 0).long()
    coefficient = -w[target] if w is not None else E.full_like(g, -1.0)
    if reduction == MEAN:
        scale = g / total
    elif reduction == NONE and x.ndim >= 2:
        scale = g
    else:
        scale = g.reshape(())
    values = E.where(kept, coefficient * scale, 0.0).to(x.dtype)
    return E.zeros(x.shape, dtype=x.dtype, device=x.device).scatter(
        class_dim, target.unsqueeze(class_dim), values.unsqueeze(class_dim))


def _vjp(backward: Any) -> Any:
    def vjp(n: Any, g: Any) -> Grads:
        g = g[0]
        if g is None:
            return (None, None, None)
        x, t, w = n.saved(0), n.saved(1), n.saved(2)
        if x.ndim == 1 and t.ndim == 1:
            # torch's nll_loss_backward refuses the 1-d target its forward takes
            raise RuntimeError(f"size mismatch (got input: {list(x.shape)}, target: "
                               f"{list(t.shape)})")
        total = n.result(1)
        if not grad_mode.enabled:
            return (backward.door((g, x, t, w, total), n.params), None, None)
        return (_composite(g, x, t, w, total.detach(), n.params["reduction"],
                           n.params["ignore_index"]), None, None)

    return vjp


F = Formula
FORMULAS: dict[str, Formula] = {
    "nll_loss_forward": F(_vjp(NLL_LOSS_BACKWARD), (0, 1, 2), (1,), name="NllLossBackward0",
                          setup=_refuse_weight_grad, listed=(0,), outputs=(0,)),
    "nll_loss2d_forward": F(_vjp(NLL_LOSS2D_BACKWARD), (0, 1, 2), (1,),
                            name="NllLoss2DBackward0", setup=_refuse_weight_grad, listed=(0,),
                            outputs=(0,)),
}
