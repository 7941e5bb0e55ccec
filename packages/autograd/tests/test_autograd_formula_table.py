"""The formula table against the op registry: every differentiable op has a formula, and
every one is exercised by a case of the formula tests."""

from __future__ import annotations

import pytest
import torch
from autograd_oracle import E, first, inputs, ops_in_graph
from test_autograd_formulas_elementwise import CASES as ELEMENTWISE
from test_autograd_formulas_structural import CASES as STRUCTURAL
from test_autograd_saved_factories import SAMPLED, sampled

from ember.autograd.formulas import FORMULAS
from ember.core.dispatch import REGISTRY

# in-place primitives are recorded by the out-of-place op they compute (``mul_`` as mul);
# users' custom ops ("namespace::name") carry their own formulas
DIFFERENTIABLE = sorted(name for name, op in REGISTRY.items()
                        if op.differentiable and not op.mutates and "::" not in name)


def test_every_differentiable_op_has_a_formula() -> None:
    assert [name for name in DIFFERENTIABLE if name not in FORMULAS] == []


def test_every_formula_is_for_a_registered_differentiable_op() -> None:
    assert [name for name in FORMULAS if name not in DIFFERENTIABLE and "::" not in name] == []


# ops torch records without a derivative: the output requires grad, and backward raises
UNDIFFERENTIATED = [
    ("floor_divide", lambda m, x: m.floor_divide(x, 2)),
    ("floor_divide_tensors", lambda m, x: x // x.exp()),
    ("floor_divide_method", lambda m, x: x.floor_divide(x.exp())),
    ("heaviside", lambda m, x: m.heaviside(x, x.exp())),
    ("bincount", lambda m, x: m.bincount(m.tensor([0, 1, 1, 3]), weights=x[0])),
    ("unique", lambda m, x: m.unique(x)),
    ("unique_outputs", lambda m, x: m.unique(x, return_inverse=True, return_counts=True)[0]),
    ("unique_dim", lambda m, x: m.unique(x, dim=1)),
    ("unique_consecutive", lambda m, x: m.unique_consecutive(x)),
]


@pytest.mark.parametrize("fn", [c[1] for c in UNDIFFERENTIATED],
                         ids=[c[0] for c in UNDIFFERENTIATED])
def test_recorded_ops_without_a_derivative_raise_on_backward(fn) -> None:
    (x,), (t,) = inputs([(3, 4)])
    oe, ot = fn(E, x), fn(torch, t)
    assert oe.requires_grad and ot.requires_grad
    assert oe.grad_fn.name() == ot.grad_fn.name()
    with pytest.raises(Exception) as torch_error:
        ot.sum().backward()
    with pytest.raises(type(torch_error.value), match=str(torch_error.value).split("\n")[0]):
        oe.sum().backward()


def test_every_differentiable_op_is_tested_against_torch() -> None:
    seen: set[str] = set()
    for _, fn, shapes, opts in ELEMENTWISE + STRUCTURAL:
        es, _ = inputs(shapes, low=opts.get("low", -2.0), high=opts.get("high", 2.0))
        seen |= ops_in_graph(first(fn(E, *es)))
    for _, fn in UNDIFFERENTIATED:
        seen |= ops_in_graph(fn(E, inputs([(3, 4)])[0][0]))
    for expr, shapes in SAMPLED:
        seen |= ops_in_graph(sampled(E, expr, shapes)[0])
    assert [name for name in DIFFERENTIABLE if name not in seen] == []


def test_non_differentiable_ops_are_not_recorded() -> None:
    (x,), _ = inputs([(3, 4)])
    for out in (x > 0, x.argmax(), x.isnan(), x.sort(1)[1], x.long(),
                x.argsort(), x.nonzero(), E.eq(x, x)):
        assert not out.requires_grad and out.grad_fn is None
