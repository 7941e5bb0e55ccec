"""Dispatch-table samples of channel_norms.py: batch norm in training (with and without
running statistics) and evaluation, channels-last and half inputs, group norm, and the
backward primitives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from dispatch_oracle import make

from ember.core.ops.channel_norms import BATCH_NORM_BACKWARD, GROUP_NORM_BACKWARD

Sample = Callable[[Any, str], Any]


def _stats(m: Any, d: str, dtype: str = "float32") -> tuple[Any, Any]:
    return make(m, d, (3,), dtype, seed=3), make(m, d, (3,), dtype, seed=4, low=0.5, high=2.0)


def _batch_norm(shape: tuple[int, ...], training: bool, running: bool = True,
                dtype: str = "float32", transposed: bool = False) -> Sample:
    def sample(m: Any, d: str) -> Any:
        rm, rv = _stats(m, d, dtype) if running else (None, None)
        x = make(m, d, shape, dtype, transposed=transposed)
        return m.native_batch_norm(x, make(m, d, (3,), dtype, seed=1),
                                   make(m, d, (3,), dtype, seed=2), rm, rv, training, 0.1, 1e-5)

    return sample


def _batch_norm_backward(train: bool) -> Sample:
    def sample(m: Any, d: str) -> Any:
        x, g, w = make(m, d, (2, 3, 4)), make(m, d, (2, 3, 4), seed=5), make(m, d, (3,))
        rm, rv = _stats(m, d)
        _, mean, invstd = m.native_batch_norm(x, w, None, rm.clone(), rv.clone(), train, 0.1,
                                              1e-5)
        if m is torch:
            return torch.ops.aten.native_batch_norm_backward(g, x, w, rm, rv, mean, invstd,
                                                             train, 1e-5, [True, True, True])
        return BATCH_NORM_BACKWARD(g, x, w, rm, rv, mean, invstd, train=train, eps=1e-5,
                                   output_mask=(True, True, True))

    return sample


def _group_norm_backward(m: Any, d: str) -> Any:
    x, g, w = make(m, d, (2, 6, 5)), make(m, d, (2, 6, 5), seed=5), make(m, d, (6,))
    _, mean, rstd = m.native_group_norm(x, w, None, 2, 6, 5, 3, 1e-5)
    if m is torch:
        return torch.ops.aten.native_group_norm_backward(g, x, mean, rstd, w, 2, 6, 5, 3,
                                                         [True, True, True])
    return GROUP_NORM_BACKWARD(g, x, mean, rstd, w, group=3, output_mask=(True, True, True))


SAMPLES: dict[str, list[Sample]] = {
    "_native_batch_norm_legit_functional": [
        _batch_norm((4, 3), True),
        _batch_norm((2, 3, 4, 5), True, running=False, transposed=True),
        _batch_norm((2, 3, 5), True, dtype="float64"),
    ],
    "_native_batch_norm_legit_no_training": [
        _batch_norm((4, 3, 2), False),
        _batch_norm((2, 3, 4, 5), False, transposed=True),
    ],
    "native_batch_norm_backward": [_batch_norm_backward(True), _batch_norm_backward(False)],
    "native_group_norm": [
        lambda m, d: m.group_norm(make(m, d, (2, 6, 5)), 3, make(m, d, (6,))),
        lambda m, d: m.group_norm(make(m, d, (2, 4, 3, 3), "float64", transposed=True), 2),
    ],
    "native_group_norm_backward": [_group_norm_backward],
}
