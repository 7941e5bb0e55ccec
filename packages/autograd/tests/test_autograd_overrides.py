"""The door's extension points with autograd installed: a subclass view keeps its history,
and dispatch modes see primitives after autograd, the ones backward runs included."""

from __future__ import annotations

import numpy as np
from autograd_oracle import E

from ember.core.dispatch_modes import PrimitiveNames


def test_as_subclass_keeps_history() -> None:
    class Tagged(E.Tensor):
        pass

    x = E.ones(2, requires_grad=True)
    y = x.as_subclass(Tagged)
    assert type(y) is Tagged and y.grad_fn is not None and y.grad_fn.name() == "AliasBackward0"


def test_subclass_leaf_in_second_place_gets_its_gradient() -> None:
    """A leaf of a subclass that opts out of overriding (as nn's Parameter does) is an
    operand like any other, first or second."""
    from ember.core.function_modes import disabled_torch_function_impl

    class Weight(E.Tensor):
        __torch_function__ = disabled_torch_function_impl

    x = E.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    w = E.ones(2, 2).as_subclass(Weight).requires_grad_()
    ((x @ w) * w).sum().backward()
    np.testing.assert_allclose(np.asarray(w.grad), [[7.0, 7.0], [13.0, 13.0]])  # torch's
    np.testing.assert_allclose(np.asarray(x.grad), [[2.0, 2.0], [2.0, 2.0]])


def test_dispatch_mode_sees_primitives_after_autograd_including_backward() -> None:
    log = PrimitiveNames()
    x = E.ones(3, requires_grad=True)
    with log:
        y = (x * 2).exp().sum()
        y.backward()
    assert log.names[:3] == ["mul", "exp", "sum"]
    backward = log.names[3:]
    assert "mul" in backward and "exp" not in backward  # exp's gradient reuses its result
    np.testing.assert_allclose(np.asarray(x.grad), 2 * np.exp(2.0) * np.ones(3), rtol=1e-6)
