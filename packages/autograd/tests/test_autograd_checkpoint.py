"""ember.utils.checkpoint against torch.utils.checkpoint: same gradients, one rerun, RNG
state restored for the rerun."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as torch_checkpoint
from autograd_oracle import E, check, inputs

from ember.utils import checkpoint as ember_checkpoint


def block(m: Any, calls: list[int], noisy: bool = False) -> Any:
    def fn(x: Any, w: Any, scale: float) -> Any:
        calls.append(1)
        out = (x @ w).tanh() * scale
        if noisy:
            out = out * m.rand(x.shape, dtype=x.dtype)  # must be the same when rerun
        return out.exp()

    return fn


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_matches_torch_and_reruns_once(use_reentrant: bool) -> None:
    results = []
    for m, ckpt in ((E, ember_checkpoint), (torch, torch_checkpoint)):
        (x, w), (tx, tw) = inputs([(3, 4), (4, 4)])
        x, w = (x, w) if m is E else (tx, tw)
        calls: list[int] = []
        y = ckpt.checkpoint(block(m, calls), x, w, 0.5, use_reentrant=use_reentrant)
        (y * y).sum().backward()
        results.append((y, x.grad, w.grad, len(calls)))
    (ye, gxe, gwe, ne), (yt, gxt, gwt, nt) = results
    check(ye, yt)
    check(gxe, gxt)
    check(gwe, gwt)
    assert ne == nt == 2


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_rerun_sees_the_same_random_numbers(use_reentrant: bool) -> None:
    grads = []
    for checkpointed in (True, False):
        (x, w), _ = inputs([(3, 4), (4, 4)])
        E.manual_seed(0)
        fn = block(E, [], noisy=True)
        if checkpointed:
            y = ember_checkpoint.checkpoint(fn, x, w, 0.5, use_reentrant=use_reentrant)
            E.rand(5)  # the generator moves on before backward
        else:
            y = fn(x, w, 0.5)
        (y * y).sum().backward()
        grads.append((x.grad, w.grad))
    for a, b in zip(*grads):
        check(a, torch.from_numpy(np.array(b)))


def test_non_reentrant_checkpoint_keeps_no_intermediates() -> None:
    (x, w), _ = inputs([(3, 4), (4, 4)])
    y = ember_checkpoint.checkpoint(lambda a, b: (a @ b).tanh(), x, w, use_reentrant=False)
    assert not any(isinstance(i, E.Tensor) for i in y.grad_fn.inputs)


def test_missing_use_reentrant_warns_like_torch() -> None:
    (x,), _ = inputs([(3,)])
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed "
                                         "explicitly"):
        ember_checkpoint.checkpoint(lambda a: a.sin(), x)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        ember_checkpoint.checkpoint(lambda a: a.sin(), E.ones(2), use_reentrant=True)


def test_checkpoint_sequential_matches_plain_run() -> None:
    fns = [lambda a: a.sin(), lambda a: a * 3, lambda a: a.exp(), lambda a: a.tanh()]
    (x,), _ = inputs([(3, 4)])
    y = ember_checkpoint.checkpoint_sequential(fns, 2, x, use_reentrant=False)
    y.sum().backward()
    expected = x.grad
    x.grad = None
    z = x
    for fn in fns:
        z = fn(z)
    z.sum().backward()
    check(expected, torch.from_numpy(np.array(x.grad)))
