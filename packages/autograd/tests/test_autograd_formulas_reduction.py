"""Formula cases of the reduction family beyond the shared structural table: aminmax (both
outputs, ties shared evenly as torch shares them), and what the nodes keep of a call."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch
from autograd_oracle import E, compare_grads, compare_value_grads, inputs

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


NAN = float("nan")
ROW = [1.0, NAN, 0.5]
GRID = [[1.0, NAN], [0.5, 2.0]]
# torch's formulas with NaN inputs: amax/amin (scale_grad_by_count) give NaN over a slice
# whose extreme is NaN; max()/min()/median() (evenly_distribute_backward) share the
# gradient among the NaNs; prod without zeros is grad * result / x (NaN everywhere)
NAN_CASES = [
    ("max_all", lambda m, x: x.max(), [ROW]),
    ("min_all", lambda m, x: x.min(), [ROW]),
    ("max_all_two_nans", lambda m, x: x.max(), [[NAN, NAN, 0.5]]),
    ("amax", lambda m, x: x.amax(), [ROW]),
    ("amin", lambda m, x: x.amin(), [ROW]),
    ("amax_dim", lambda m, x: x.amax(1), [GRID]),
    ("amin_dims", lambda m, x: x.amin((0, 1), keepdim=True), [GRID]),
    ("aminmax", lambda m, x: m.aminmax(x)[0], [[[1.0, NAN], [NAN, 2.0]]]),
    ("aminmax_dim", lambda m, x: m.aminmax(x, dim=1)[1], [GRID]),
    ("max_dim", lambda m, x: x.max(1)[0], [GRID]),
    ("min_dim", lambda m, x: x.min(0)[0], [GRID]),
    ("prod", lambda m, x: x.prod(), [ROW]),
    ("prod_dim", lambda m, x: x.prod(1), [GRID]),
    ("prod_zero", lambda m, x: x.prod(), [[1.0, NAN, 0.0]]),
    ("prod_zeros", lambda m, x: x.prod(), [[0.0, 2.0, 0.0]]),
    ("prod_dim_zeros", lambda m, x: x.prod(0), [[[0.0, 2.0], [0.0, NAN]]]),
    ("prod_empty", lambda m, x: x.prod(), [[]]),
    ("median", lambda m, x: x.median(), [ROW]),
    ("cummax", lambda m, x: x.cummax(0)[0], [ROW]),
    ("sort", lambda m, x: m.sort(x)[0] * m.tensor([1.0, 2.0, 3.0], dtype=x.dtype), [ROW]),
    ("norm", lambda m, x: x.norm(), [ROW]),
    ("norm_inf", lambda m, x: x.norm(p=float("inf")), [ROW]),
    ("norm_inf_dim", lambda m, x: x.norm(p=float("inf"), dim=1), [GRID]),
    ("norm_1", lambda m, x: x.norm(p=1), [ROW]),
    # the count of nonzeros: torch gives no gradient at all (None)
    ("norm_0", lambda m, x: x.norm(p=0), [[1.0, 0.0, NAN]]),
    ("norm_0_dim", lambda m, x: m.norm(x, 0, 0), [[[1.0, 0.0], [-0.0, 2.0]]]),
]


@pytest.mark.parametrize("fn, values", [c[1:] for c in NAN_CASES], ids=[c[0] for c in NAN_CASES])
def test_nan_gradients_match_torch(fn: Any, values: Any) -> None:
    compare_value_grads(fn, *values)


def test_prod_grad_of_grad_with_a_nan() -> None:
    def fn(m: Any, x: Any) -> Any:
        return m.autograd.grad(x.prod(), x, create_graph=True)[0]

    x = [[1.0, NAN], [2.0, 3.0]]
    ts = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    es = E.tensor(x, dtype=E.float64, requires_grad=True)
    torch.autograd.grad(ts.prod(), ts, create_graph=True)[0].sum().backward()
    ember.autograd.grad(es.prod(), es, create_graph=True)[0].sum().backward()
    np.testing.assert_allclose(np.array(es.grad), ts.grad.numpy())


# torch's var_backward: over every element with N <= correction the factor 2 / (N -
# correction) is infinite (NaN where x is its mean); over some dims 2 / 0 is inf
VAR_CASES = [
    ("var_one", lambda m, x: x.var(), [[1.0]]),
    ("std_one", lambda m, x: x.std(), [[1.0]]),
    ("var_mean_one", lambda m, x: m.var_mean(x)[0], [[1.0]]),
    ("std_mean_one", lambda m, x: m.std_mean(x)[0], [[1.0]]),
    ("var_correction_n", lambda m, x: x.var(correction=3), [[1.0, 1.0, 1.0]]),
    ("var_correction_n_spread", lambda m, x: x.var(correction=3), [[1.0, 2.0, 4.0]]),
    ("var_correction_above_n", lambda m, x: x.var(correction=5), [[1.0, 2.0, 4.0]]),
    ("std_correction_n", lambda m, x: x.std(correction=3), [[1.0, 2.0, 4.0]]),
    ("var_dim_one", lambda m, x: x.var(1), [[[1.0], [2.0]]]),
    ("std_dim_one", lambda m, x: x.std(1), [[[1.0], [2.0]]]),
    ("var_dim_correction_above_n", lambda m, x: x.var(0, correction=4), [[1.0, 2.0, 4.0]]),
    ("var_empty", lambda m, x: x.var(), [[]]),
    ("std_empty", lambda m, x: x.std(), [[]]),
    ("var_0d", lambda m, x: x.var(), [3.0]),
]


@pytest.mark.parametrize("fn, values", [c[1:] for c in VAR_CASES], ids=[c[0] for c in VAR_CASES])
def test_var_std_gradients_without_degrees_of_freedom(fn: Any, values: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns that the degrees of freedom are <= 0
        compare_value_grads(fn, *values)


def test_nan_skipping_means_and_trace_propagate_infinite_gradients_as_torch():
    """torch's nansum backward multiplies by the mask (NaN where an infinite gradient meets
    a NaN entry) and its trace backward fills the diagonal (no NaN off it)."""
    results = []
    for L in (E, torch):
        x = L.tensor(0.0, dtype=L.float64, requires_grad=True)
        (x * x).remainder(0).nanmean(0).backward()
        m = L.tensor([[-0.0], [float("nan")], [2.5], [-1.0]], dtype=L.float64, requires_grad=True)
        L.float_power(L.trace(m), L.tensor([[-3.0]])).sum().backward()
        results.append(str([x.grad.item(), m.grad.flatten().tolist()]))
    assert results[0] == results[1]
