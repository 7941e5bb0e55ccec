"""Dispatch-table samples of optimizer_steps.py: one step of each optimizer over lists of
1-d float32 tensors of odd sizes, with the options that turn its flags on (the written
lists are the samples' results). torch has none of these ops: its side of a sample gives
the lists unwritten, whose geometry an in-place step keeps, on the meta device too.
test_core_optimizer_steps covers the values, flags, dtypes and layouts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from dispatch_oracle import make
from test_core_optimizer_steps import BY_NAME, OPTIONS, SCALARS

Sample = Callable[[Any, str], Any]
_SIZES = ((3,), (1,), (17,))


def _sample(name: str) -> Sample:
    step = BY_NAME[name]
    params = OPTIONS[name][-1]

    def sample(m: Any, d: str) -> Any:
        flags = step.flags(params)
        lists = [[make(m, d, s, seed=10 * k + i, low=0.01, high=0.5)
                  for i, s in enumerate(_SIZES)]
                 if o.when is None or flags[o.when] else [] for k, o in enumerate(step.operands)]
        scalars = [[m.full((), SCALARS[arg][i], device=d) for i in range(len(_SIZES))]
                   for arg in step.scalar_lists]
        if m is not torch:
            getattr(m, name)(*lists, *scalars, **params)
        return [t for o, ts in zip(step.operands, lists) if o.written for t in ts]

    return sample


SAMPLES: dict[str, list[Sample]] = {name: [_sample(name)] for name in OPTIONS}
