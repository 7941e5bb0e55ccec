"""nll_loss and cross_entropy in the graph against torch: their nodes (names, next
functions), the primitives a TorchDispatchMode sees forward and backward, the weight that
may not require grad, the fused backward a first-order backward runs (and the ops a
graph-building one composes instead, to the same values), what they save, and gradients of
every path at the sizes the native loops take."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from autograd_oracle import E, check, check_saved, pair
from torch.utils._python_dispatch import TorchDispatchMode

import ember.autograd
from ember.core.dispatch_modes import PrimitiveNames
from ember.core.ops import losses


def _nn(m):
    return F if m is torch else losses


def _leaves(shape, dtype="float64", **options):
    e, t = pair(shape, dtype, **options)
    return e.requires_grad_(), t.requires_grad_()


def _targets(m, shape, classes, seed=0, ignored=0.2):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, classes, shape)
    return m.tensor(np.where(rng.random(shape) < ignored, -100, t))


def _chain(node):
    names = []
    while node is not None:
        names.append(node.name())
        nxt = [f for f, _ in node.next_functions if f is not None]
        node = nxt[0] if nxt else None
    return names


CALLS = {
    "1d": ((5,), (), {}),
    "2d": ((6, 5), (6,), {}),
    "2d weighted sum": ((6, 5), (6,), {"weight": True, "reduction": "sum"}),
    "2d none": ((6, 5), (6,), {"reduction": "none"}),
    "3d": ((2, 5, 3), (2, 3), {}),
    "3d none": ((2, 5, 3), (2, 3), {"reduction": "none"}),
    "4d weighted": ((2, 5, 3, 2), (2, 3, 2), {"weight": True}),
    "5d none": ((2, 5, 2, 2, 2), (2, 2, 2, 2), {"reduction": "none"}),
    "smoothed": ((6, 5), (6,), {"label_smoothing": 0.2, "weight": True}),
}


def _call(m, fn, x, target_shape, options, seed=0):
    options = dict(options)
    if options.pop("weight", False):
        options["weight"] = m.tensor(np.linspace(0.5, 2.0, x.shape[-1] if x.ndim == 1
                                                 else x.shape[1]), dtype=x.dtype)
    return getattr(_nn(m), fn)(x, _targets(m, target_shape, 5, seed), **options)


@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("name", list(CALLS))
def test_nodes_and_gradients_are_torchs(name, fn):
    shape, target_shape, options = CALLS[name]
    if fn == "nll_loss" and "label_smoothing" in options:
        pytest.skip("cross_entropy's argument")
    xe, xt = _leaves(shape)
    ye, yt = _call(E, fn, xe * 1, target_shape, options), _call(torch, fn, xt * 1,
                                                               target_shape, options)
    check(ye, yt)
    if "label_smoothing" in options:
        # torch's C++ scales by the smoothing with mul.Scalar (MulBackward1); Ember's product
        # with a number is MulBackward0, as torch's ``x * 0.9`` from Python is
        assert ye.grad_fn.name() == yt.grad_fn.name() == "AddBackward0"
    else:
        assert _chain(ye.grad_fn) == _chain(yt.grad_fn)
    g = np.random.default_rng(1).standard_normal(tuple(yt.shape))
    check(ember.autograd.grad(ye, xe, E.tensor(g))[0], torch.autograd.grad(yt, xt,
                                                                            torch.tensor(g))[0])


class _Names(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("shape,target_shape", [((6, 5), (6,)), ((5,), ()),
                                                ((2, 5, 3, 2), (2, 3, 2))])
def test_a_dispatch_mode_sees_torchs_loss_primitives(shape, target_shape):
    seen = []
    for m, mode in ((E, PrimitiveNames), (torch, _Names)):
        x = _leaves(shape)[0 if m is E else 1]
        with mode() as names:
            _nn(m).cross_entropy(x, _targets(m, target_shape, 5)).backward()
        seen.append([n for n in names.names if "nll" in n or "softmax" in n])
    assert seen[0] == [n.lstrip("_") if n == "_log_softmax" else n for n in seen[1]]
    assert seen[0][-1] == "_log_softmax_backward_data"


def test_a_weight_that_requires_grad_is_refused_as_torch():
    for call in (lambda m, x, t, w: _nn(m).nll_loss(x, t, w),
                 lambda m, x, t, w: _nn(m).cross_entropy(x, t, w, label_smoothing=0.1),
                 lambda m, x, t, w: _nn(m).nll_loss(x.detach().view(2, 5, 3, 1), t.view(2, 3, 1),
                                                    w)):
        errors = []
        for m in (E, torch):
            x = m.zeros(6, 5, requires_grad=True)
            t, w = m.zeros(6, dtype=m.long), m.ones(5, requires_grad=True)
            with pytest.raises(RuntimeError) as error:
                call(m, x, t, w)
            errors.append(str(error.value))
            with (ember.autograd.no_grad() if m is E else torch.no_grad()):
                call(m, x, t, w)
        assert errors[0] == errors[1]
        assert "is not differentiable with respect to argument 'weight'" in errors[0]


def test_probability_targets_and_their_weight_get_gradients_as_torch():
    (xe, xt), (pe, pt), (we, wt) = _leaves((4, 5)), _leaves((4, 5), low=0.0, high=1.0), \
        _leaves((5,), low=0.1, high=2.0)
    ye = losses.cross_entropy(xe, pe, we, label_smoothing=0.3)
    yt = F.cross_entropy(xt, pt, wt, label_smoothing=0.3)
    check(ye, yt)
    check(ember.autograd.grad(ye, (xe, pe, we)), torch.autograd.grad(yt, (xt, pt, wt)))


def test_a_1d_target_of_a_1d_input_has_torchs_backward_error():
    errors = []
    for m in (E, torch):
        x = m.zeros(5, requires_grad=True)
        loss = _nn(m).nll_loss(x, m.tensor([1]))
        with pytest.raises(RuntimeError) as error:
            loss.backward()
        errors.append(str(error.value))
    assert errors[0] == errors[1] == "size mismatch (got input: [5], target: [1])"


@pytest.mark.parametrize("name", ["2d", "2d weighted sum", "2d none", "4d weighted", "1d"])
def test_a_first_order_backward_runs_the_fused_kernel_and_a_graph_the_same_values(name):
    shape, target_shape, options = CALLS[name]
    fused = "nll_loss2d_backward" if len(shape) == 4 else "nll_loss_backward"
    xe, _ = _leaves(shape)
    with PrimitiveNames() as seen:
        (first,) = ember.autograd.grad(_call(E, "nll_loss", xe, target_shape, options).sum(),
                                       xe)
    assert fused in seen.names
    with PrimitiveNames() as seen:
        (graph,) = ember.autograd.grad(_call(E, "nll_loss", xe, target_shape, options).sum(),
                                       xe, create_graph=True)
    assert fused not in seen.names and "scatter" in seen.names
    np.testing.assert_array_equal(np.array(graph.detach()), np.array(first))


def test_losses_save_no_more_than_torch():
    targets = {m: m.tensor([1, 0, -100, 3]) for m in (E, torch)}
    check_saved(lambda m, x: _nn(m).cross_entropy(x, targets[torch if m is torch else E]),
                [(4, 5)])
    check_saved(lambda m, x: _nn(m).cross_entropy(x, targets[torch if m is torch else E],
                                                  label_smoothing=0.1), [(4, 5)])


@pytest.mark.parametrize("rows,classes", [(512, 128), (70000, 3)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradients_at_the_native_loops_sizes_match_torch(rows, classes, dtype):
    """Past the sizes the native loops thread from."""
    xe, xt = _leaves((rows, classes), dtype)
    te, tt = (_targets(m, (rows,), classes, seed=2) for m in (E, torch))
    for reduction in ("mean", "none"):
        ye = losses.cross_entropy(xe, te, reduction=reduction)
        yt = F.cross_entropy(xt, tt, reduction=reduction)
        check(ye, yt)
        g = np.random.default_rng(3).standard_normal(tuple(yt.shape)).astype(dtype)
        check(ember.autograd.grad(ye, xe, E.tensor(g))[0],
              torch.autograd.grad(yt, xt, torch.tensor(g))[0])
