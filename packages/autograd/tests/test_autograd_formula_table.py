"""The formula table against the op registry: every differentiable op has a formula, and
every one is exercised by a case of the formula tests."""

from __future__ import annotations

from autograd_oracle import E, first, inputs, ops_in_graph
from test_autograd_formulas_elementwise import CASES as ELEMENTWISE
from test_autograd_formulas_structural import CASES as STRUCTURAL

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


def test_every_differentiable_op_is_tested_against_torch() -> None:
    seen: set[str] = set()
    for _, fn, shapes, opts in ELEMENTWISE + STRUCTURAL:
        es, _ = inputs(shapes, low=opts.get("low", -2.0), high=opts.get("high", 2.0))
        seen |= ops_in_graph(first(fn(E, *es)))
    assert [name for name in DIFFERENTIABLE if name not in seen] == []


def test_non_differentiable_ops_are_not_recorded() -> None:
    (x,), _ = inputs([(3, 4)])
    for out in (x > 0, x.argmax(), x.floor_divide(2), x.isnan(), x.sort(1)[1], x.long(),
                x.argsort(), x.nonzero(), E.eq(x, x)):
        assert not out.requires_grad and out.grad_fn is None
