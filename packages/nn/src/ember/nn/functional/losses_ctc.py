"""torch.nn.functional.ctc_loss: the connectionist temporal classification loss, by
torch's forward-backward recursions in log space (Graves et al., 2006), written with
Ember ops over the time steps and vectorised over the batch and the states.

torch's gradient is not the derivative of the loss with respect to ``log_probs`` alone:
it is ``exp(log_probs) - posterior`` within each input's length (what the gradient with
respect to the logits would be, were ``log_probs`` their log_softmax), and 0 beyond it.
A Function gives that formula, as torch's backward kernel computes it.
"""

from __future__ import annotations

from typing import Any

import ember.core as E
from ember.autograd import Function
from ember.core.function_modes import public
from ember.core.ops.losses import MEAN, SUM, reduction_enum
from ember.core.ops.operands import not_implemented
from ember.core.tensor import Tensor

__all__ = ["ctc_loss"]

_INF = float("inf")
_CHECKING = " (while checking arguments for ctc_loss_allocate_outputs)"


def _lengths(name: str, lengths: Any) -> list[int]:
    """The lengths as ints: a tensor of an integer dtype (any shape) or a sequence."""
    if isinstance(lengths, Tensor):
        if lengths.dtype.category != 1:
            raise RuntimeError(f"{name} must be integral")
        return lengths.reshape(-1).tolist()  # type: ignore[no-any-return]
    return [int(n) for n in lengths]


def _check(log_probs: Tensor, targets: Tensor, input_lengths: list[int],
           target_lengths: list[int], blank: int) -> None:
    """torch's checks of ctc_loss's arguments, in its order."""
    if log_probs.dtype not in (E.float32, E.float64):
        raise not_implemented("ctc_loss_cpu", log_probs.dtype)
    if log_probs.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.dim()}-"
                           f"dimensional tensor for argument #1 'log_probs'{_CHECKING}")
    if not 1 <= targets.dim() <= 2:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional "
                           f"tensor for argument #2 'targets'{_CHECKING}")
    steps, batch, labels = log_probs.shape
    if not 0 <= blank < labels:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    for n in target_lengths:
        if n < 0:
            raise RuntimeError("Expected target_lengths to have value at least 0, but got "
                               f"value {n}{_CHECKING}")
    longest = max(target_lengths, default=0)
    expected = sum(target_lengths) if targets.dim() == 1 else batch
    if targets.shape[0] != expected:
        raise RuntimeError(f"Expected tensor to have size {expected} at dimension 0, but got "
                           f"size {targets.shape[0]} for argument #2 'targets'{_CHECKING}")
    if targets.dim() == 2 and targets.shape[1] < longest:
        raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, "
                           f"but got size {targets.shape[1]} for argument #2 'targets'"
                           f"{_CHECKING}")
    for n in input_lengths:
        if n < 0:
            raise RuntimeError("Expected input_lengths to have value at least 0, but got "
                               f"value {n}{_CHECKING}")
        if n > steps:
            raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but "
                               f"got value {n}{_CHECKING}")


def _padded(targets: Tensor, lengths: Tensor, longest: int, blank: int) -> Tensor:
    """The targets as (N, longest), blank past each one's length (concatenated targets
    split at their lengths)."""
    positions = E.arange(longest, device=targets.device)
    inside = positions < lengths.unsqueeze(1)
    if targets.dim() == 2:
        picked = targets[:, :longest]
    elif targets.numel():
        starts = lengths.cumsum(0) - lengths
        index = (starts.unsqueeze(1) + positions).clamp(max=targets.numel() - 1)
        picked = targets[index]
    else:
        return E.full((lengths.shape[0], longest), blank, dtype=E.int64, device=targets.device)
    return E.where(inside, picked, blank)


class _CTC(Function):
    """The negative log likelihood of each target, from ``log_probs`` (T, N, C) and the
    padded targets (N, S); the states are the targets' labels with blanks around and
    between them (N, 2S + 1)."""

    @staticmethod
    def forward(ctx: Any, log_probs: Tensor, targets: Tensor, input_lengths: Tensor,
                target_lengths: Tensor, blank: int, zero_infinity: bool) -> Tensor:
        steps, batch, _ = log_probs.shape
        device = log_probs.device
        states = 2 * targets.shape[1] + 1
        labels = E.full((batch, states), blank, dtype=E.int64, device=device)
        labels[:, 1::2] = targets
        # the label two states back differs: the path may skip the blank between them
        skip = E.zeros((batch, states), dtype=E.bool, device=device)
        skip[:, 2:] = labels[:, 2:] != labels[:, :-2]
        picked = log_probs.gather(2, labels.expand(steps, batch, states))
        ends = 2 * target_lengths
        index = E.arange(states, device=device)
        active = E.arange(steps, device=device).unsqueeze(1) < input_lengths  # (T, N)
        # log alpha, two states of -inf in front for the shifted reads
        alpha = E.full((steps, batch, states + 2), -_INF, dtype=log_probs.dtype,
                       device=device)
        nll = E.where(target_lengths == 0, 0.0, _INF).to(log_probs.dtype)
        if steps:
            starts = (index == 0) | ((index == 1) & (ends > 0).unsqueeze(1))
            alpha[0, :, 2:] = E.where(starts, picked[0], -_INF)
            skip_bias = E.where(skip, 0.0, -_INF).to(log_probs.dtype)
            for t in range(1, steps):
                before = alpha[t - 1]
                reach = E.stack([before[:, 2:], before[:, 1:-1], before[:, :-2] + skip_bias])
                step = reach.logsumexp(0) + picked[t]
                alpha[t, :, 2:] = E.where(active[t].unsqueeze(1), step, before[:, 2:])
            # each sample's alphas stop changing after its last step: the last row holds them
            last = alpha[steps - 1, :, 2:]
            final = last.gather(1, ends.unsqueeze(1)).squeeze(1)
            before_final = last.gather(1, (ends - 1).clamp(min=0).unsqueeze(1)).squeeze(1)
            both = E.stack([final, before_final]).logsumexp(0)
            likelihood = E.where(target_lengths > 0, both, final)
            nll = E.where(input_lengths > 0, -likelihood, nll)
        ctx.save_for_backward(log_probs)
        ctx.state = (picked, labels, skip, alpha[:, :, 2:], nll, active, ends, index,
                     input_lengths, zero_infinity)
        return nll

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, None, None, None, None, None]:
        (log_probs,) = ctx.saved_tensors
        picked, labels, skip, log_alpha, nll, active, ends, index, input_lengths, \
            zero_infinity = ctx.state
        steps, batch, classes = log_probs.shape
        states = labels.shape[1]
        # log beta, two states of -inf behind for the shifted reads
        beta = E.full((steps, batch, states + 2), -_INF, dtype=log_probs.dtype,
                      device=log_probs.device)
        endings = (index == ends.unsqueeze(1)) | ((index == ends.unsqueeze(1) - 1)
                                                   & (ends > 0).unsqueeze(1))
        # state s may come from s + 2 where that state may skip back to s
        skip_up = E.zeros_like(skip)
        skip_up[:, :-2] = skip[:, 2:]
        skip_bias = E.where(skip_up, 0.0, -_INF).to(log_probs.dtype)
        last_step = input_lengths - 1
        for t in range(steps - 1, -1, -1):
            start = E.where(endings, picked[t], -_INF)
            if t + 1 < steps:
                after = beta[t + 1]
                reach = E.stack([after[:, :-2], after[:, 1:-1], after[:, 2:] + skip_bias])
                step = reach.logsumexp(0) + picked[t]
                start = E.where((t < last_step).unsqueeze(1), step, start)
            beta[t, :, :-2] = E.where((t <= last_step).unsqueeze(1), start, -_INF)
        # log of the summed alpha * beta of the states of each label
        both = log_alpha + beta[:, :, :-2]
        top = both.amax(2, keepdim=True)
        top = E.where(top == -_INF, 0.0, top)
        sums = E.zeros((steps, batch, classes), dtype=log_probs.dtype, device=log_probs.device)
        sums.scatter_add_(2, labels.expand(steps, batch, states), (both - top).exp())
        log_sums = sums.log() + top
        out = log_probs.exp() - (log_sums + nll.view(1, batch, 1) - log_probs).exp()
        out = out * grad.view(1, batch, 1)
        keep = active.unsqueeze(2)
        if zero_infinity:
            keep = keep & (nll != _INF).view(1, batch, 1)
        return E.where(keep, out, 0.0), None, None, None, None, None


@public
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """torch.nn.functional.ctc_loss: ``-log p(target | log_probs)`` summed over the
    alignments of each target, for ``log_probs`` (T, N, C) (or (T, C)), targets padded
    (N, S) or concatenated (sum of the target lengths), and lengths given as tensors or
    sequences. 'mean' divides each loss by its target length (at least 1) before the
    mean; ``zero_infinity`` zeroes infinite losses (no alignment) and their gradients."""
    r = reduction_enum(reduction)
    ins = _lengths("input_lengths", input_lengths)
    outs = _lengths("target_lengths", target_lengths)
    batched = log_probs.dim() == 3
    probs = log_probs if batched else log_probs.unsqueeze(1)
    labels = targets if targets.dtype is E.int64 else targets.to(E.int64)
    _check(probs, labels, ins, outs, blank)
    device = probs.device
    in_lengths = E.tensor(ins, dtype=E.int64, device=device)
    out_lengths = E.tensor(outs, dtype=E.int64, device=device)
    padded = _padded(labels, out_lengths, max(outs, default=0), blank)
    nll = _CTC.apply(probs, padded, in_lengths, out_lengths, blank, zero_infinity)
    if zero_infinity:
        nll = E.where(nll == _INF, 0.0, nll)
    if r == MEAN:
        return (nll / out_lengths.to(nll.dtype).clamp_min(1)).mean()  # type: ignore[no-any-return]
    if r == SUM:
        return nll.sum()  # type: ignore[no-any-return]
    return nll if batched else nll.squeeze(0)
