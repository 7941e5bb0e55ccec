"""The fused optimizer updates under grad mode, as torch's: they have no derivative and no
autograd kernel, so a leaf that requires grad is written without the in-place refusal
(torch's optimizers call them under no_grad), stays a leaf, and a tensor with a history
keeps it; the in-place foreach ops, which torch differentiates, refuse it."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from autograd_oracle import E

_SGD = dict(weight_decay=0.0, momentum=0.0, lr=0.5, dampening=0.0, nesterov=False,
            maximize=False, is_first_step=False)
_ADAM = dict(lr=1e-2, beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False,
             maximize=False)


def _updated(lib: Any, name: str) -> tuple[Any, Any]:
    leaf = lib.tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
    made = leaf * 3
    for p in (leaf, made):
        grads = [lib.ones(2)]
        if name == "_fused_sgd_":
            lib._fused_sgd_([p], grads, [], **_SGD)
        else:
            getattr(lib, name)([p], grads, [lib.zeros(2)], [lib.zeros(2)], [], [lib.ones(())],
                               **_ADAM)
    return leaf, made


def test_the_updates_write_what_requires_grad_without_recording_as_torch_does():
    for name in ("_fused_sgd_", "_fused_adam_", "_fused_adamw_"):
        (leaf, made), (leaf_t, made_t) = _updated(E, name), _updated(torch, name)
        np.testing.assert_array_equal(leaf.detach().numpy(), leaf_t.detach().numpy())
        np.testing.assert_array_equal(made.detach().numpy(), made_t.detach().numpy())
        assert leaf.is_leaf and leaf.requires_grad and leaf.grad_fn is None
        assert type(made.grad_fn).__name__ == type(made_t.grad_fn).__name__ == "MulBackward0"


def test_an_in_place_foreach_op_refuses_a_leaf_that_requires_grad_as_torch():
    """Unlike the fused updates, torch's foreach ops are differentiable: in grad mode the
    in-place ones refuse a leaf that requires grad, as the per-tensor ops do."""
    messages = []
    for lib in (torch, E):
        with np.testing.assert_raises(RuntimeError) as info:
            lib._foreach_add_([lib.ones(2, requires_grad=True)], 1.0)
        assert type(info.exception) is RuntimeError
        messages.append(str(info.exception))
    assert messages[0] == messages[1]
