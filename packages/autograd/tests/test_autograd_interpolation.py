"""Interpolation in the graph against torch: gradients of every mode at 1 to 3 spatial dims
(sizes and scale factors, align_corners both ways, antialiased, channels-last and
non-contiguous inputs, float32 and float64), torch's nodes and what they save, which backward a
first-order gradient runs (the backward primitive) and that a graph-building one composes
ops instead, second derivatives, forward mode, and gradcheck in float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from autograd_oracle import E, check, check_saved, compare_grads, functional, pair

import ember.autograd
import ember.func
from ember.core.dispatch_modes import PrimitiveNames
from ember.core.ops import interpolation as I

MODES = {1: ["nearest", "nearest-exact", "linear", "area"],
         2: ["nearest", "nearest-exact", "bilinear", "bicubic", "area"],
         3: ["nearest", "nearest-exact", "trilinear", "area"]}
CASES = [(nd, mode) for nd, modes in MODES.items() for mode in modes]
IDS = [f"{mode}-{nd}d" for nd, mode in CASES]
SHAPES = {1: (2, 3, 7), 2: (2, 3, 5, 6), 3: (2, 2, 4, 3, 5)}
RESIZES = [{"scale_factor": 1.7}, {"scale_factor": 0.6}, {"size": 4}]


def _aligned(mode):
    return [None] if mode in ("nearest", "nearest-exact", "area") else [False, True]


def _call(mode, ac, kw):
    return lambda m, x: functional(m).interpolate(x, mode=mode, align_corners=ac, **kw)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("nd,mode", CASES, ids=IDS)
def test_gradients_match_torch(nd, mode, dtype):
    for kw in RESIZES:
        for ac in _aligned(mode):
            compare_grads(_call(mode, ac, kw), [SHAPES[nd]], dtype)
            compare_grads(_call(mode, ac, kw), [SHAPES[nd]], dtype, noncontiguous=True)


@pytest.mark.parametrize("nd", [2, 3])
def test_channels_last_gradients_match_torch(nd):
    fmt = {2: (torch.channels_last, E.channels_last), 3: (torch.channels_last_3d,
                                                         E.channels_last_3d)}[nd]
    for mode in MODES[nd]:
        for ac in _aligned(mode):
            xe, xt = pair((2, 5) + SHAPES[nd][2:], "float64")
            xe = xe.contiguous(memory_format=fmt[1]).requires_grad_()
            xt = xt.contiguous(memory_format=fmt[0]).requires_grad_()
            ye = I.interpolate(xe, scale_factor=1.5, mode=mode, align_corners=ac)
            yt = F.interpolate(xt, scale_factor=1.5, mode=mode, align_corners=ac)
            g = np.random.default_rng(1).standard_normal(tuple(yt.shape))
            (ge,) = ember.autograd.grad(ye, xe, E.tensor(g))
            (gt,) = torch.autograd.grad(yt, xt, torch.tensor(g))
            check(ye, yt.detach())
            check(ge, gt)


NODES = [(nd, m) for nd, m in CASES if m != "area"]


@pytest.mark.parametrize("nd,mode", NODES, ids=[f"{m}-{nd}d" for nd, m in NODES])
def test_nodes_and_what_they_save_are_torchs(nd, mode):
    for kw in ({"scale_factor": 1.5}, {"size": 3}):
        xe, xt = pair(SHAPES[nd], "float64")
        xe.requires_grad_()
        xt.requires_grad_()
        ne = I.interpolate(xe * 2, mode=mode, **kw).grad_fn
        nt = F.interpolate(xt * 2, mode=mode, **kw).grad_fn
        assert ne.name() == nt.name()
        saved = [a for a in dir(nt) if a.startswith("_saved_")]
        for attr in saved:
            assert getattr(ne, attr) == getattr(nt, attr), attr
        assert [type(f).__name__ for f, _ in ne.next_functions] == ["MulBackward0"]
    check_saved(lambda m, x: functional(m).interpolate(x, scale_factor=1.5, mode=mode),
                [SHAPES[nd]])


@pytest.mark.parametrize("nd,mode", NODES, ids=[f"{m}-{nd}d" for nd, m in NODES])
def test_first_order_runs_the_backward_primitive_and_a_graph_composes_ops(nd, mode):
    xe, _ = pair(SHAPES[nd], "float64")
    xe.requires_grad_()
    name = I._MODES[(mode, nd)]
    with PrimitiveNames() as seen:
        (fused,) = ember.autograd.grad(I.interpolate(xe, scale_factor=1.5, mode=mode).sum(),
                                       xe)
    assert name + "_backward" in seen.names
    with PrimitiveNames() as seen:
        (composed,) = ember.autograd.grad(I.interpolate(xe, scale_factor=1.5, mode=mode).sum(),
                                          xe, create_graph=True)
    assert name + "_backward" not in seen.names
    np.testing.assert_allclose(np.array(composed.detach()), np.array(fused), rtol=1e-14,
                               atol=1e-14)


def _second(m, fn, x, w, v):
    (g,) = m.autograd.grad((fn(m, x) ** 2 * w).sum(), x, create_graph=True)
    return m.autograd.grad((g * v).sum(), x)[0]


@pytest.mark.parametrize("nd,mode", CASES, ids=IDS)
def test_second_derivatives_match_torch(nd, mode):
    rng = np.random.default_rng(3)
    for ac in _aligned(mode):
        fn = _call(mode, ac, {"scale_factor": 1.5})
        xe, xt = pair(SHAPES[nd], "float64")
        xe.requires_grad_()
        xt.requires_grad_()
        w = rng.standard_normal(tuple(fn(torch, xt).shape))
        v = rng.standard_normal(SHAPES[nd])
        check(_second(_Ember, fn, xe, E.tensor(w), E.tensor(v)),
              _second(torch, fn, xt, torch.tensor(w), torch.tensor(v)))


def test_forward_mode_matches_torch():
    xe, xt = pair((2, 3, 5, 6), "float64")
    te, tt = pair((2, 3, 5, 6), "float64", seed=1)
    for mode in ("nearest", "bilinear", "bicubic"):
        fe = lambda x: I.interpolate(x, size=(7, 4), mode=mode)  # noqa: E731
        ft = lambda x: F.interpolate(x, size=(7, 4), mode=mode)  # noqa: E731
        ye, je = ember.func.jvp(fe, (xe,), (te,))
        yt, jt = torch.func.jvp(ft, (xt,), (tt,))
        check(ye, yt)
        check(je, jt)


@pytest.mark.parametrize("nd,mode", CASES, ids=IDS)
def test_gradcheck_and_gradgradcheck(nd, mode):
    for ac in _aligned(mode):
        for kw in ({"scale_factor": 1.5}, {"size": 3}):
            xe, _ = pair(SHAPES[nd], "float64")
            xe.requires_grad_()
            fn = lambda x: I.interpolate(x, mode=mode, align_corners=ac, **kw)  # noqa: E731,B023
            assert ember.autograd.gradcheck(fn, (xe,))
            assert ember.autograd.gradgradcheck(lambda x: fn(x) ** 2, (xe,))  # noqa: B023


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_antialiased_gradients_match_torch(mode):
    for kw in ({"scale_factor": 0.4}, {"size": (7, 3)}, {"scale_factor": 1.6}):
        for ac in ([False] if mode == "lanczos" else [False, True]):
            call = lambda m, x: functional(m).interpolate(  # noqa: E731
                x, mode=mode, align_corners=ac, antialias=True, **kw)  # noqa: B023
            for dtype in ("float64", "float32"):
                compare_grads(call, [(2, 3, 9, 8)], dtype)
            xe, xt = pair((2, 3, 9, 8), "float64")
            xe.requires_grad_()
            xt.requires_grad_()
            rng = np.random.default_rng(4)
            w = rng.standard_normal(tuple(call(torch, xt).shape))
            v = rng.standard_normal((2, 3, 9, 8))
            check(_second(_Ember, call, xe, E.tensor(w), E.tensor(v)),
                  _second(torch, call, xt, torch.tensor(w), torch.tensor(v)))
            assert call(E, xe).grad_fn.name() == call(torch, xt).grad_fn.name()
            assert ember.autograd.gradcheck(lambda x: call(E, x), (xe,))  # noqa: B023


class _EmberWithAutograd:
    """ember.core's ops plus ``autograd``, so one program text serves both frameworks."""

    autograd = ember.autograd

    def __getattr__(self, name):
        return getattr(E, name)


_Ember = _EmberWithAutograd()
