"""ember.nn.functional against torch.nn.functional on given values: where
``functional_oracle.compare`` draws random inputs of given shapes, ``compare_values`` takes
the arrays themselves, so that a test can put kinks, bounds, ties and NaN where it wants
them.

    compare_values(lambda m, x, y: m.F.huber_loss(x, y, delta=0.5), [x, y])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from functional_oracle import EMBER, TORCH, E, check

__all__ = ["compare_values"]

_FLOAT64_RTOL, _FLOAT64_ATOL = 1e-10, 1e-12


def compare_values(call: Callable[..., Any], arrays: Sequence[np.ndarray],
                   grads: Sequence[int] | None = None, seed: int = 0,
                   atol: float | None = None) -> None:
    """``call(m, *tensors)`` with ``m`` = TORCH and EMBER on tensors holding ``arrays``:
    the result (dtype, shape, values), then, for the same random output gradient, the
    gradients of the tensors at the indices ``grads`` (default: every floating one)."""
    if grads is None:
        grads = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    ts = [torch.tensor(a, requires_grad=i in grads) for i, a in enumerate(arrays)]
    es = [E.tensor(a, requires_grad=i in grads) for i, a in enumerate(arrays)]
    out_t, out_e = call(TORCH, *ts), call(EMBER, *es)
    # float64: tighter than torch_oracle's default, at what a few roundings of a composite
    # against torch's kernel can give
    rtol = _FLOAT64_RTOL if out_t.dtype == torch.float64 else None
    atol = _FLOAT64_ATOL if atol is None and out_t.dtype == torch.float64 else atol
    check(out_e, out_t.detach(), rtol=rtol, atol=atol)
    if not grads:
        return
    grad = np.random.default_rng(seed + 1).standard_normal(tuple(out_t.shape))
    grad = grad.astype(arrays[0].dtype)
    out_t.backward(torch.tensor(grad))
    out_e.backward(E.tensor(grad))
    for i in grads:
        check(es[i].grad, ts[i].grad, rtol=rtol, atol=atol)
