"""The differentiable primitive of the factory family, ``complex``, saves no more for backward
than torch does, with each part requiring grad or not (the other factories and samplers are
not differentiable), and the samplers that torch differentiates record its nodes."""

import numpy as np
import pytest
import torch
from autograd_oracle import check_saved

import ember.core as E


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("shapes", [[(3, 4), (4,)], [(), (2, 3)]])
def test_complex(needs, shapes):
    check_saved(lambda m, x, y: m.complex(x, y), shapes, needs=needs)



# normal, bernoulli and poisson are differentiable in torch with zero gradients: their
# results require grad when a tensor operand does, under torch's node names
SAMPLED = [
    ("m.normal(x, 1.)", [(3,)]), ("m.normal(1., x)", [(3,)]), ("m.normal(x, y)", [(2, 3), (3,)]),
    ("m.normal(x, y.detach())", [(3,), (3,)]), ("m.normal(x.detach(), y)", [(3,), ()]),
    ("m.normal(x, 1.)", [()]), ("m.bernoulli(x.abs().clamp(0, 1))", [(2, 2)]),
    ("m.bernoulli(x.abs().clamp(0, 1))", [()]), ("m.poisson(x.abs())", [(4,)]),
    ("m.poisson(x.abs())", [()]),
]


def sampled(m, expr, shapes):
    """``expr``'s result in framework ``m`` on leaves ``x``, ``y`` of ``shapes``, and the
    leaves."""
    leaves = [m.tensor(np.full(s, 0.5), requires_grad=True) for s in shapes]
    return eval(expr, dict(zip("xy", leaves), m=m)), leaves


@pytest.mark.parametrize("expr, shapes", SAMPLED)
def test_samplers_record_zero_gradients_as_torch(expr, shapes):
    results = []
    for m in (E, torch):
        out, leaves = sampled(m, expr, shapes)
        assert out.requires_grad
        name = type(out.grad_fn).__name__
        out.backward(m.ones_like(out))
        results.append((name, [None if t.grad is None else (tuple(t.grad.shape), t.grad.tolist())
                               for t in leaves]))
    assert results[0] == results[1]
