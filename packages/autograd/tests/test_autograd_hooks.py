"""Hooks against torch: tensor hooks (leaf and not), post-accumulate hooks, node hooks and
prehooks, saved_tensors_hooks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from autograd_oracle import E, check, inputs

import ember.autograd

M = (3, 4)


def _run_both(program: Any, shapes: list[tuple[int, ...]]) -> None:
    """``program(autograd, m, *leaves)`` returns (log, tensors); both must agree."""
    es, ts = inputs(shapes)
    log_e, outs_e = program(ember.autograd, E, *es)
    log_t, outs_t = program(torch.autograd, torch, *ts)
    assert log_e == log_t
    for a, b in zip(list(outs_e) + [x.grad for x in es], list(outs_t) + [x.grad for x in ts]):
        if b is None:
            assert a is None
        else:
            check(a, b)


def test_tensor_hooks_replace_gradients_and_can_be_removed() -> None:
    def program(autograd: Any, m: Any, x: Any) -> Any:
        log = []
        y = x * 2
        hy = y.register_hook(lambda g: g * 10)
        y.register_hook(lambda g: log.append("y2") or None)
        x.register_hook(lambda g: log.append("x") or g + 1)
        (y * y).sum().backward(retain_graph=True)
        hy.remove()
        (y * y).sum().backward()
        return log, []

    _run_both(program, [M])


def test_hooks_on_retained_and_captured_gradients() -> None:
    def program(autograd: Any, m: Any, x: Any) -> Any:
        y = x.exp()
        y.retain_grad()
        y.register_hook(lambda g: g * 3)
        z = (y * x).sum()
        (gy,) = autograd.grad(z, y, retain_graph=True)
        z.backward()
        return [], [gy, y.grad]

    _run_both(program, [M])


def test_post_accumulate_grad_hook() -> None:
    def program(autograd: Any, m: Any, x: Any) -> Any:
        log = []

        def hook(t: Any) -> None:
            log.append(float(t.grad.sum()))

        handle = x.register_post_accumulate_grad_hook(hook)
        (x * 2).sum().backward()
        (x * 3).sum().backward()
        handle.remove()
        (x * 4).sum().backward()
        return log, []

    _run_both(program, [M])


def test_hook_registration_errors() -> None:
    for m in (E, torch):
        t = m.ones(2)
        with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                               "require gradient"):
            t.register_hook(lambda g: g)
        with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has "
                                               "requires_grad=False"):
            t.retain_grad()
        y = m.ones(2, requires_grad=True) * 2
        with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered "
                                               "on non-leaf tensors"):
            y.register_post_accumulate_grad_hook(lambda t: None)


def test_node_hooks_and_prehooks() -> None:
    def program(autograd: Any, m: Any, x: Any) -> Any:
        log = []
        y = x * 2
        node = y.grad_fn

        def pre(grad_outputs: Any) -> Any:
            log.append(("pre", len(grad_outputs)))
            return (grad_outputs[0] * 3,)

        def post(grad_inputs: Any, grad_outputs: Any) -> Any:
            log.append(("post", [g is None for g in grad_inputs], len(grad_outputs)))
            return (grad_inputs[0] + 1, None)

        node.register_prehook(pre)
        handle = node.register_hook(post)
        acc = node.next_functions[0][0]
        acc.register_prehook(lambda go: log.append(("acc", len(go))) or None)
        y.sum().backward(retain_graph=True)
        handle.remove()
        y.sum().backward()
        return log, []

    _run_both(program, [M])


def test_saved_tensors_hooks_pack_what_torch_packs() -> None:
    def program(autograd: Any, m: Any, x: Any) -> Any:
        packed = []

        def pack(t: Any) -> Any:
            packed.append(tuple(t.shape))
            return ("box", t)

        def unpack(box: Any) -> Any:
            return box[1] * 2  # visible in the gradients

        with autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x.exp()
            z = (y * x).sum() + (x + 1).sin().sum() + (x * 2).sum()
        z.backward()
        return packed, []

    _run_both(program, [M])


def test_saved_tensors_hooks_release_inputs_and_can_be_disabled() -> None:
    (x,), _ = inputs([M])
    with ember.autograd.graph.saved_tensors_hooks(lambda t: np.array(t.detach()),
                                                  lambda a: E.tensor(a)):
        y = x.sin()
    assert not any(isinstance(i, E.Tensor) for i in y.grad_fn.inputs)
    y.sum().backward()
    np.testing.assert_allclose(np.array(x.grad), np.cos(np.array(x.detach())))
    with ember.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"), \
                ember.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass
