"""Dispatch-table samples of dropout.py: native_dropout of row-major, transposed and
half-type inputs (torch's values differ, being drawn from its own stream; the samples
compare layouts and replay Ember's draws), and its backward. (torch's meta rule refuses a
complex input its CPU kernel takes: test_core_dropout covers complex inputs.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from dispatch_oracle import make

from ember.core.ops.dropout import NATIVE_DROPOUT_BACKWARD

Sample = Callable[[Any, str], Any]


def _backward(m: Any, d: str, shape: tuple[int, ...], dtype: str = "float32") -> Any:
    g, mask = make(m, d, shape, dtype), make(m, d, shape, "bool", seed=5)
    if m is torch:
        return torch.ops.aten.native_dropout_backward(g, mask, 2.0)
    return NATIVE_DROPOUT_BACKWARD(g, mask, scale=2.0)


SAMPLES: dict[str, list[Sample]] = {
    "native_dropout": [
        lambda m, d: m.native_dropout(make(m, d, (3, 4)), 0.5, True),
        lambda m, d: m.native_dropout(make(m, d, (2, 3, 4), transposed=True), 0.2, True),
        lambda m, d: m.native_dropout(make(m, d, (3, 4), "float16"), 0.9, True),
        lambda m, d: m.dropout(make(m, d, (4, 4), "float64"), 0.5, True),
    ],
    "native_dropout_backward": [
        lambda m, d: _backward(m, d, (3, 4)),
        lambda m, d: _backward(m, d, (2, 3, 4), "float64"),
        lambda m, d: _backward(m, d, (0, 3)),
    ],
}
