"""Helpers of the foreach tests: the same tensor lists in Ember and torch, and the
comparison of a foreach op's results with the per-tensor op's and with torch's.

torch's foreach ops on the CPU are the per-tensor op applied to each tensor, and so are
Ember's: a result must be Ember's per-tensor result bit for bit (values, dtype, shape and
strides), and torch's foreach result bit for bit wherever Ember's per-tensor op gives
torch's per-tensor result bit for bit on the same tensor (where it does not, the two
foreach results differ as the per-tensor ones do: within the oracle's tolerance).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch_oracle import check, pair

import ember.core as ember

# shapes of one list: 2-d, 1-d, 0-d, empty, and an odd length (a vector loop's remainder)
SHAPES = [(3, 4), (5,), (), (0, 2), (17,)]
FLOATS = ["float32", "float64", "bfloat16", "float16"]


def lists(dtype: str, count: int = 1, *, seed: int = 0, shapes: list[Any] | None = None,
          low: Any = -2.0, high: Any = 2.0) -> tuple[list[list[Any]], list[list[Any]]]:
    """``count`` lists of tensors of ``shapes`` in each framework, alike; ``low`` and ``high``
    are bounds for all lists or a sequence of bounds, one per list."""
    shapes = SHAPES if shapes is None else shapes
    ours, theirs = [], []
    for k in range(count):
        lo = low[k] if isinstance(low, (list, tuple)) else low
        hi = high[k] if isinstance(high, (list, tuple)) else high
        made = [pair(s, dtype, seed=seed * 1000 + k * 100 + i, low=lo, high=hi)
                for i, s in enumerate(shapes)]
        ours.append([e for e, _ in made])
        theirs.append([t for _, t in made])
    return ours, theirs


def bits(x: Any) -> tuple[Any, ...]:
    """A tensor's dtype, shape, strides and the bytes of its values in row-major order."""
    if isinstance(x, ember.Tensor):
        arr = np.asarray(np.array(x))
        if x.dtype is ember.bfloat16:
            arr = arr.astype(np.float32)
    else:
        arr = (x.float() if x.dtype == torch.bfloat16 else x).detach().numpy()
    name = str(x.dtype).split(".")[-1]
    return name, tuple(x.shape), tuple(x.stride()), np.ascontiguousarray(arr).tobytes()


def agree(ours: list[Any], per_tensor: list[Any], theirs: list[Any],
          theirs_per_tensor: list[Any], where: str = "") -> None:
    """Ember's foreach results against its per-tensor results and torch's (see above)."""
    assert isinstance(ours, list) and len(ours) == len(per_tensor) == len(theirs), where
    for i, (o, p, t, tp) in enumerate(zip(ours, per_tensor, theirs, theirs_per_tensor)):
        at = f"{where}, tensor {i}"
        assert bits(o) == bits(p), f"{at}: differs from the per-tensor op's result"
        if bits(p) == bits(tp):
            assert bits(o) == bits(t), f"{at}: differs from torch's foreach result"
        else:
            check(o, t)
            assert o.stride() == t.stride(), at


def compared(foreach: Callable[..., Any], per_tensor: Callable[..., Any], form: str,
             make: Callable[[], tuple[list[Any], list[Any]]], where: str) -> None:
    """Run a foreach op and the per-tensor op in both frameworks on the operands ``make()``
    gives (afresh for each run: ``(ember's, torch's)``, the first of each a tensor list)
    and compare them with ``agree``. ``form`` '' calls the out-of-place forms
    (``foreach(m, '', operands)`` returns the results, ``per_tensor(m, '', operands, i)``
    the result for tensor ``i``); '_' the in-place ones (they return the first list, the result)."""
    runs = []
    for m, side in ((ember, 0), (torch, 1)):
        operands = make()[side]
        out = foreach(m, form, operands)
        if form == "_":  # torch's in-place foreach ops return the list given
            assert out is operands[0], f"{where}: {m.__name__}'s in-place op returned {out!r}"
        operands = make()[side]
        per = [per_tensor(m, form, operands, i) for i in range(len(operands[0]))]
        runs.append((out, operands[0] if form == "_" else per))
    (ours, ours_per), (theirs, theirs_per) = runs
    agree(ours, ours_per, theirs, theirs_per, where)
