"""Dropout's backward: the gradient through the mask Ember drew, against torch's own
backward given that mask; second order; what the node saves (the bool mask only)."""

from __future__ import annotations

import numpy as np
import torch

import ember.autograd
import ember.core as E


def test_gradient_is_torchs_backward_of_the_same_mask():
    x = E.randn(40, 30, requires_grad=True)
    out, mask = E.native_dropout(x, 0.4, True)
    g = E.randn(40, 30)
    (grad,) = ember.autograd.grad(out, x, g)
    expected = torch.ops.aten.native_dropout_backward(
        torch.from_numpy(np.array(g)), torch.from_numpy(np.array(mask)), 1 / 0.6)
    np.testing.assert_array_equal(np.array(grad), expected.numpy())
    assert out.grad_fn.name() == "NativeDropoutBackward0"
    assert not mask.requires_grad


def test_second_order_goes_through_the_same_mask():
    x = E.randn(20, 10, requires_grad=True, dtype=E.float64)
    E.manual_seed(1)
    y = E.dropout(x, 0.5, True)
    (g,) = ember.autograd.grad((y * y).sum(), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    kept = np.array(y.detach()) != 0
    np.testing.assert_allclose(np.array(g.detach()), 2 * np.array(x.detach()) * 4 * kept)
    np.testing.assert_allclose(np.array(gg), 8.0 * kept)


def test_the_node_saves_the_bool_mask_alone():
    x = E.randn(8, 8, requires_grad=True)
    y = E.dropout(x, 0.3, True)
    saved = y.grad_fn._saved_result1
    assert saved.dtype == E.bool and saved.shape == x.shape
    packed = []
    with ember.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        E.dropout(x, 0.3, True)
    assert [t.dtype for t in packed] == [E.bool]
