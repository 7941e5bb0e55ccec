"""Dispatch-table samples of the nll_loss primitives (losses.py): each reduction, with and
without a weight, targets ignored, 1-d, 2-d and spatial inputs, half types, no targets, and
the backward primitives; cross_entropy's paths through them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from dispatch_oracle import make

from ember.core.ops import losses

Sample = Callable[[Any, str], Any]
C = 5


IGNORED = -1  # the targets drawn from -1 to C - 1: some are ignored


def _targets(m: Any, d: str, shape: tuple[int, ...]) -> Any:
    return make(m, d, shape, "int64", seed=4, low=IGNORED, high=C - 1)


def _forward(m: Any, x: Any, t: Any, w: Any, reduction: int,
             ignore_index: int = IGNORED) -> Any:
    spatial = x.ndim == 4
    if m is torch:
        op = torch.ops.aten.nll_loss2d_forward if spatial else torch.ops.aten.nll_loss_forward
        return op(x, t, w, reduction, ignore_index)
    op = losses.NLL_LOSS2D_FORWARD if spatial else losses.NLL_LOSS_FORWARD
    return op(x, t, w, reduction=reduction, ignore_index=ignore_index)


def _nll(shape: tuple[int, ...], reduction: int, weight: bool = False,
         dtype: str = "float32", target_shape: tuple[int, ...] | None = None) -> Sample:
    def sample(m: Any, d: str) -> Any:
        x = make(m, d, shape, dtype)
        ts = target_shape if target_shape is not None else (
            () if len(shape) == 1 else (shape[0], *shape[2:]))
        w = make(m, d, (shape[1] if len(shape) > 1 else shape[0],), dtype, seed=2, low=0.1,
                 high=2.0) if weight else None
        return _forward(m, x, _targets(m, d, ts), w, reduction)

    return sample


def _nll_backward(shape: tuple[int, ...], reduction: int, weight: bool = False,
                  dtype: str = "float32") -> Sample:
    def sample(m: Any, d: str) -> Any:
        x = make(m, d, shape, dtype)
        t = _targets(m, d, () if len(shape) == 1 else (shape[0], *shape[2:]))
        classes = shape[1] if len(shape) > 1 else shape[0]
        w = make(m, d, (classes,), dtype, seed=2, low=0.1, high=2.0) if weight else None
        out, total = _forward(m, x, t, w, reduction)
        g = make(m, d, tuple(out.shape), dtype, seed=3)
        if m is torch:
            op = (torch.ops.aten.nll_loss2d_backward if len(shape) == 4
                  else torch.ops.aten.nll_loss_backward)
            return op(g, x, t, w, reduction, IGNORED, total)
        op = losses.NLL_LOSS2D_BACKWARD if len(shape) == 4 else losses.NLL_LOSS_BACKWARD
        return op(g, x, t, w, total, reduction=reduction, ignore_index=IGNORED)

    return sample


def _functional(m: Any) -> Any:
    return torch.nn.functional if m is torch else losses


def _cross_entropy(shape: tuple[int, ...], weight: bool = False, **options: Any) -> Sample:
    def sample(m: Any, d: str) -> Any:
        x = make(m, d, shape)
        t = _targets(m, d, () if len(shape) == 1 else (shape[0], *shape[2:]))
        w = make(m, d, (C,), seed=2, low=0.1, high=2.0) if weight else None
        return _functional(m).cross_entropy(x, t, w, ignore_index=IGNORED, **options)

    return sample


SAMPLES: dict[str, list[Sample]] = {
    "nll_loss_forward": [
        _nll((4, C), losses.MEAN),
        _nll((4, C), losses.SUM, weight=True),
        _nll((4, C), losses.NONE, weight=True),
        _nll((C,), losses.MEAN),
        _nll((C,), losses.NONE, weight=True),
        _nll((4, C), losses.MEAN, dtype="float16"),
        _nll((4, C), losses.NONE, dtype="bfloat16"),
        _nll((4, C), losses.MEAN, dtype="float64", weight=True),
        _nll((0, C), losses.MEAN),
        _nll((0, C), losses.NONE),
        _cross_entropy((4, C)),
        _cross_entropy((4, C), label_smoothing=0.1, weight=True),
    ],
    "nll_loss2d_forward": [
        _nll((2, C, 3, 2), losses.MEAN),
        _nll((2, C, 3, 2), losses.NONE, weight=True),
        _nll((2, C, 3, 2), losses.SUM, dtype="float16"),
        _nll((0, C, 3, 2), losses.MEAN),
        _cross_entropy((2, C, 3), reduction="none"),
        _cross_entropy((2, C, 2, 2, 2), label_smoothing=0.2),
    ],
    "nll_loss_backward": [
        _nll_backward((4, C), losses.MEAN),
        _nll_backward((4, C), losses.NONE, weight=True),
        _nll_backward((C,), losses.SUM, weight=True),
        _nll_backward((4, C), losses.MEAN, dtype="bfloat16", weight=True),
        _nll_backward((4, C), losses.SUM, dtype="float64"),
    ],
    "nll_loss2d_backward": [
        _nll_backward((2, C, 3, 2), losses.MEAN, weight=True),
        _nll_backward((2, C, 3, 2), losses.NONE),
        _nll_backward((2, C, 1, 3), losses.SUM, dtype="float16"),
    ],
}
