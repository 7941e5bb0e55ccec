"""Formula cases of the reduction family beyond the shared structural table: aminmax (both
outputs, ties shared evenly as torch shares them), and what the nodes keep of a call."""

from __future__ import annotations

from typing import Any

import pytest
from autograd_oracle import E, compare_grads, inputs

import ember.autograd


def _both(r: Any) -> Any:
    return r[0] * 2 + r[1]


AMINMAX = [
    ("all", lambda m, x: _both(m.aminmax(x)), [(3, 4)]),
    ("dim", lambda m, x: _both(m.aminmax(x, dim=1)), [(3, 4)]),
    ("dim_keepdim", lambda m, x: _both(m.aminmax(x, dim=0, keepdim=True)), [(2, 3, 4)]),
    ("min_only", lambda m, x: m.aminmax(x, dim=1).min, [(3, 4)]),
    ("max_only", lambda m, x: m.aminmax(x, dim=-1).max, [(3, 4)]),
    ("ties", lambda m, x: _both(m.aminmax(m.cat([x, x], 1), dim=1)), [(3, 4)]),
    ("0d", lambda m, x: _both(m.aminmax(x, dim=0)), [()]),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", AMINMAX, ids=[c[0] for c in AMINMAX])
def test_aminmax_grad_matches_torch(case: Any, dtype: str) -> None:
    _, fn, shapes = case
    compare_grads(fn, shapes, dtype)
    compare_grads(fn, shapes, "float64", noncontiguous=True)


def test_aminmax_gradcheck() -> None:
    (x,), _ = inputs([(3, 4)])
    assert ember.autograd.gradcheck(lambda a: _both(E.aminmax(a, dim=1)), (x,))


def test_nodes_keep_the_params_of_the_call() -> None:
    """A reduction's node keeps its op's params (as torch's nodes answer ``_saved_dim``...),
    none for a reduction of everything with the default options; nothing is recorded where
    no input requires grad."""
    (x,), (t,) = inputs([(2, 3)])
    assert x.sum().grad_fn.params is None  # every element with the default options
    assert x.sum(dtype=E.float64).grad_fn.params == {"dim": None, "keepdim": False,
                                                     "dtype": E.float64}
    assert E.mean(x, -1, keepdim=True).grad_fn.params == {"dim": (1,), "keepdim": True,
                                                           "dtype": None}
    assert E.std(x, (0, 1), correction=0).grad_fn.params == {"dim": (0, 1), "keepdim": False,
                                                             "correction": 0.0}
    assert E.norm(x, 3, 0).grad_fn.params == {"dim": (0,), "keepdim": False, "p": 3.0}
    assert E.cumsum(x, 1, dtype=E.float64).grad_fn.params == {"dim": 1, "dtype": E.float64}
    # (torch keeps topk's dim as the caller gave it, unwrapped: not compared)
    for ours, theirs in ((x.max(1), t.max(1)), (x.sort(0, True), t.sort(0, True)),
                         (x.kthvalue(1, 0, True), t.kthvalue(1, 0, True))):
        node, ref = ours[0].grad_fn, theirs[0].grad_fn
        assert type(node).__name__ == type(ref).__name__
        assert node._saved_dim == ref._saved_dim
        assert ours[1].grad_fn is None and not ours[1].requires_grad
    assert E.sum(E.ones(3)).grad_fn is None
    with ember.autograd.no_grad():
        assert x.softmax(1).grad_fn is None
