"""gelu, silu, sigmoid and tanh in the graph against torch: their nodes (names, saved tensors and params,
next functions), silu's in-place form, which fused backward kernel a first-order backward
runs (and that a graph-building one composes ops instead), and gradients at the sizes and
values the native loops take."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from autograd_oracle import E, check, pair

import ember.autograd
from ember.core.dispatch_modes import PrimitiveNames
from ember.core.ops import activations as A

CALLS = [("gelu", lambda nn, x: nn.gelu(x)),
         ("gelu_tanh", lambda nn, x: nn.gelu(x, approximate="tanh")),
         ("silu", lambda nn, x: nn.silu(x)),
         ("sigmoid", lambda nn, x: x.sigmoid()),
         ("tanh", lambda nn, x: x.tanh())]
IDS = [c[0] for c in CALLS]
FUSED = {"gelu": "gelu_backward", "gelu_tanh": "gelu_backward", "silu": "silu_backward",
         "sigmoid": "sigmoid_backward", "tanh": "tanh_backward"}


def _leaves(shape, dtype="float64", **options):
    e, t = pair(shape, dtype, **options)
    return e.requires_grad_(), t.requires_grad_()


def _names(node):
    return [None if f is None else type(f).__name__ for f, _ in node.next_functions]


@pytest.mark.parametrize("fn", [c[1] for c in CALLS], ids=IDS)
def test_nodes_are_torchs(fn):
    xe, xt = _leaves((3, 4))
    ye, yt = fn(A, xe * 2), fn(F, xt * 2)
    assert ye.grad_fn.name() == yt.grad_fn.name()
    assert _names(ye.grad_fn) == _names(yt.grad_fn) == ["MulBackward0"]
    saved = "_saved_result" if hasattr(yt.grad_fn, "_saved_result") else "_saved_self"
    check(getattr(ye.grad_fn, saved), getattr(yt.grad_fn, saved))  # (sigmoid's, tanh's)
    if yt.grad_fn.name() == "GeluBackward0":
        assert ye.grad_fn._saved_approximate == yt.grad_fn._saved_approximate


def test_silu_in_place_is_torchs_node_reading_the_old_values():
    xe, xt = _leaves((3, 4))
    ye, yt = xe * 2, xt * 2
    A.silu(ye, inplace=True)
    F.silu(yt, inplace=True)
    assert ye.grad_fn.name() == yt.grad_fn.name() == "SiluBackward0"
    saved = "_saved_result" if hasattr(yt.grad_fn, "_saved_result") else "_saved_self"
    check(getattr(ye.grad_fn, saved), getattr(yt.grad_fn, saved))  # (sigmoid's, tanh's)  # (a copy: self is overwritten)
    assert ye._version == yt._version
    g = np.random.default_rng(1).standard_normal((3, 4))
    ye.backward(E.tensor(g))
    yt.backward(torch.tensor(g))
    check(xe.grad, xt.grad)


def test_a_saved_input_written_in_place_refuses_the_backward_as_torch():
    errors = []
    for nn, m in ((A, E), (F, torch)):
        x = m.ones(3, dtype=m.float64, requires_grad=True)
        y = x * 2
        out = nn.silu(y)
        nn.silu(y, inplace=True)
        with pytest.raises(RuntimeError) as refused:
            out.sum().backward()
        errors.append(str(refused.value))
    assert "modified by an inplace operation" in errors[0]
    assert "modified by an inplace operation" in errors[1]


def test_in_place_silu_of_a_complex_tensor_takes_torchs_unconjugated_gradient():
    """torch refuses silu's history of a complex result, but records silu_ of one, its
    gradient ``g * f'(z)`` without the conjugate its other complex formulas take."""
    grads = []
    for nn, m in ((A, E), (F, torch)):
        z = m.tensor([1 + 2j, -0.5 + 0.3j, 2 - 1j], requires_grad=True)
        y = z * 1
        nn.silu(y, inplace=True)
        y.backward(m.tensor([0.3 - 0.7j, 1.1 + 0.2j, -0.4 + 0.5j]))
        grads.append(np.array(z.grad.detach()) if m is E else z.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


@pytest.mark.parametrize("name,fn", CALLS, ids=IDS)
def test_a_first_order_backward_runs_the_fused_kernel(name, fn):
    xe, _ = _leaves((3, 4))
    with PrimitiveNames() as seen:
        ember.autograd.grad(fn(A, xe).sum(), xe)
    assert FUSED[name] in seen.names
    with PrimitiveNames() as seen:
        (g,) = ember.autograd.grad(fn(A, xe).sum(), xe, create_graph=True)
    assert FUSED[name] not in seen.names and g.requires_grad


@pytest.mark.parametrize("name,fn", CALLS, ids=IDS)
def test_graph_building_and_fused_gradients_agree(name, fn):
    xe, _ = _leaves((5, 7), low=-5.0, high=5.0)
    (fused,) = ember.autograd.grad(fn(A, xe).sum(), xe)
    (composed,) = ember.autograd.grad(fn(A, xe).sum(), xe, create_graph=True)
    np.testing.assert_allclose(np.array(composed.detach()), np.array(fused), rtol=1e-14,
                               atol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", [c[1] for c in CALLS], ids=IDS)
def test_gradients_at_the_native_loops_sizes_match_torch(fn, dtype):
    """Past the sizes the loops thread from, transposed, and through NaN, inf and the
    values the formulas saturate at."""
    rng = np.random.default_rng(2)
    for shape, transposed in (((4097,), False), ((129, 64), True)):
        data = rng.uniform(-8.0, 8.0, shape).astype(dtype)
        data.flat[:5] = [np.nan, np.inf, -np.inf, 30.0, -30.0]
        g = rng.standard_normal(shape).astype(dtype)
        grads = []
        for nn, m in ((A, E), (F, torch)):
            x = m.from_numpy(data.T.copy()).t() if transposed else m.from_numpy(data.copy())
            x.requires_grad_()
            grads.append(m.autograd.grad(fn(nn, x), x, m.from_numpy(g))[0] if m is torch
                         else ember.autograd.grad(fn(nn, x), x, E.from_numpy(g))[0])
        check(*grads)


@pytest.mark.parametrize("call", [
    lambda nn, m: nn.silu(m.ones(3, dtype=m.complex64, requires_grad=True)),
    lambda nn, m: nn.silu(m.ones(3, requires_grad=True), inplace=True),
], ids=["complex silu with a history", "in place into a leaf that requires grad"])
def test_refusals_of_autograd_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(F, torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(A, E)
    assert str(ours.value).endswith(str(theirs.value))
