"""Dispatch-table samples of embedding.py: lookups of int64 and int32 indices of several
shapes, of a transposed weight, and the dense backward with padding and frequency
scaling."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from dispatch_oracle import make

from ember.core.ops.embedding import EMBEDDING_BACKWARD

Sample = Callable[[Any, str], Any]


def _indices(m: Any, d: str, shape: tuple[int, ...], num: int, dtype: str = "int64") -> Any:
    return make(m, d, shape, dtype, low=0, high=num - 1, seed=4)


def _backward(shape: tuple[int, ...], padding_idx: int, scale: bool,
              dtype: str = "float32") -> Sample:
    def sample(m: Any, d: str) -> Any:
        g, i = make(m, d, (*shape, 5), dtype), _indices(m, d, shape, 6)
        if m is torch:
            return torch.ops.aten.embedding_dense_backward(g, i, 6, padding_idx, scale)
        return EMBEDDING_BACKWARD(g, i, num_weights=6, padding_idx=padding_idx,
                                  scale_grad_by_freq=scale)

    return sample


SAMPLES: dict[str, list[Sample]] = {
    "embedding": [
        lambda m, d: m.embedding(make(m, d, (6, 5)), _indices(m, d, (3, 4), 6)),
        lambda m, d: m.embedding(make(m, d, (6, 5), transposed=True),
                                 _indices(m, d, (4,), 6, "int32")),
        lambda m, d: m.embedding(make(m, d, (6, 5), "float64"), _indices(m, d, (), 6)),
        lambda m, d: m.embedding(make(m, d, (6, 5)), _indices(m, d, (0, 2), 6), 2),
    ],
    "embedding_dense_backward": [
        _backward((3, 4), -1, False),
        _backward((7,), 2, True, "float64"),
        _backward((0,), 1, False),
    ],
}
