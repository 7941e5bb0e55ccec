"""torch.optim.Muon: momentum (optionally Nesterov) orthogonalized by a quintic
Newton-Schulz iteration in bfloat16, with decoupled weight decay and a shape-dependent
learning rate, for 2-d parameters."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ember import core
from ember.autograd import no_grad
from ember.core import Tensor

from .optimizer import Optimizer
from .paths import to_scalar

__all__ = ["Muon", "muon"]

# Keller Jordan's constants (https://kellerjordan.github.io/posts/muon/), as torch takes them
EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad: Tensor, ns_coefficients: tuple[float, float, float],
                                ns_steps: int, eps: float) -> Tensor:
    """An approximate orthogonalization U S' V^T of ``grad`` = U S V^T (S' near 1), by
    ``ns_steps`` quintic Newton-Schulz iterations in bfloat16 on the wide orientation."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.size(0) > grad.size(1)
    x = grad.bfloat16()
    if tall:
        x = x.T
    # a Frobenius norm of at most 1 bounds the spectral norm by 1
    x.div_(x.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram = x @ x.T
        poly = _addmm_bf16(gram, gram, gram, beta=b, alpha=c)
        x = _addmm_bf16(x, poly, x, beta=a)
    return x.T if tall else x


def _addmm_bf16(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float,
                alpha: float = 1.0) -> Tensor:
    """bfloat16 ``beta * input + alpha * (mat1 @ mat2)`` rounded as torch's CPU kernel
    rounds it: the product summed and scaled in float32, ``beta * input`` fused into the
    sum (one rounding, as an FMA), then bfloat16. The iteration's polynomial cancels to
    near zero off the diagonal, where rounding ``beta * input`` apart (as ``core.addmm``
    does) moves the bfloat16 result by an ulp."""
    product = mat1.float() @ mat2.float()
    if alpha != 1:
        product = product * alpha
    beta32 = core.tensor(beta, dtype=core.float32).item()
    # a bfloat16 times a float32 is exact in float64, and so is the sum to within its last bit
    return (input.double() * beta32 + product.double()).float().bfloat16()


def _lerp(start: Tensor, end: Tensor, weight: float) -> Tensor:
    """float32 ``start.lerp(end, weight)`` to the bit, as torch's vectorized CPU kernel
    computes it: one FMA, ``weight * (end - start) + start`` for a small weight, else
    ``(weight - 1) * (end - start) + end``. (A last-bit difference in the momentum would
    now and then tip an element to the other bfloat16 in the iteration, an ulp of 0.4%.)
    Other dtypes take ``Tensor.lerp``."""
    if start.dtype is not core.float32:
        return start.lerp(end, weight)
    w = core.tensor(weight, dtype=core.float32)
    small = abs(w.item()) < 0.5
    coeff, base = (w, start) if small else (w - 1, end)
    # a float32 product is exact in float64: only the sum rounds, as in an FMA
    return ((end - start).double() * coeff.double() + base.double()).float()


def _adjust_lr(lr: Any, adjust_lr_fn: str | None, param_shape: Sequence[int]) -> Any:
    """``lr`` scaled for the matrix's shape (A, B): by sqrt(max(1, A/B)) ("original", the
    default) or 0.2 sqrt(max(A, B)) ("match_rms_adamw")."""
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """torch.optim.Muon."""

    def __init__(self, params: Any, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B,
                                                                DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS,
                 adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _init_group(self, group: dict[str, Any], params: list[Tensor], grads: list[Tensor],
                    momentum_bufs: list[Tensor]) -> None:
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            if p.grad.is_sparse:
                raise RuntimeError("Muon does not support sparse gradients")
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = core.zeros_like(p.grad)
            momentum_bufs.append(state["momentum_buffer"])

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            momentum_bufs: list[Tensor] = []
            self._init_group(group, params, grads, momentum_bufs)
            muon(params, grads, momentum_bufs, lr=group["lr"],
                 weight_decay=group["weight_decay"], momentum=group["momentum"],
                 nesterov=group["nesterov"], ns_coefficients=group["ns_coefficients"],
                 eps=group["eps"], ns_steps=group["ns_steps"],
                 adjust_lr_fn=group["adjust_lr_fn"], has_complex=False)
        return loss


def muon(params: list[Tensor], grads: list[Tensor], muon_momentum_bufs: list[Tensor], *,
         foreach: bool | None = None, lr: Any, weight_decay: float, momentum: float,
         nesterov: bool, ns_coefficients: tuple[float, float, float], ns_steps: int,
         eps: float, adjust_lr_fn: str | None, has_complex: bool) -> None:
    """torch.optim._muon.muon: the Muon update of the lists (torch has only the
    per-parameter loop)."""
    if foreach is not None and foreach:
        raise RuntimeError("Foreach is not supported for Muon yet")
    lr = to_scalar(lr)
    if has_complex:
        raise ValueError("Complex parameters are not supported")
    for param, grad, buf in zip(params, grads, muon_momentum_bufs):
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        buf.copy_(_lerp(buf, grad, 1 - momentum))
        update = _lerp(grad, buf, momentum) if nesterov else buf
        update = _zeropower_via_newtonschulz(update, ns_coefficients, ns_steps, eps)
        param.mul_(1 - lr * weight_decay)
        param.add_(update, alpha=-_adjust_lr(lr, adjust_lr_fn, param.shape))
