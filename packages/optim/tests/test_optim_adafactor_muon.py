"""Adafactor and Muon against torch.optim's: option combinations, both Adafactor paths,
groups, state dicts crossing frameworks, errors."""

import numpy as np
import optim_oracle
import pytest
import torch
from optim_oracle import Pair, check_optimizer, check_state_dict_crossing, to_ember

import ember.core as ec
import ember.nn as enn
import ember.optim as eoptim
from ember.optim.muon import _zeropower_via_newtonschulz


class MatrixPair(Pair):
    """Pair's protocol with 2-d parameters only (Muon's domain): a tall, a square and a
    wide matrix, so the Newton-Schulz iteration runs on both orientations."""

    def __init__(self, seed: int = 0, dtype: torch.dtype = torch.float32) -> None:
        g = torch.Generator().manual_seed(seed)
        shapes = [(6, 5), (6, 6), (3, 6)]
        self.torch_params = [(torch.randn(s, generator=g, dtype=torch.float64) * 0.5).to(dtype)
                             .requires_grad_() for s in shapes]
        self.ember_params = [enn.Parameter(to_ember(p.detach())) for p in self.torch_params]
        self.x = torch.randn(8, 5, generator=g, dtype=torch.float64).to(dtype)
        self.y = torch.randn(8, 3, generator=g, dtype=torch.float64).to(dtype)
        self.ex, self.ey = to_ember(self.x), to_ember(self.y)

    @staticmethod
    def _loss(lib, params, x, y):
        w1, w2, w3 = params
        h = lib.tanh(lib.tanh(x @ w1.t()) @ w2.t())
        return ((h @ w3.t() - y) ** 2).mean()


@pytest.fixture
def matrices(monkeypatch):
    monkeypatch.setattr(optim_oracle, "Pair", MatrixPair)


# ---------------------------------------------------------------- Adafactor

PATHS = [{"foreach": False}, {"foreach": True}, {}]
ADAFACTOR_OPTIONS = [
    {},
    {"lr": 0.05},
    {"lr": 0.02, "weight_decay": 0.1},
    {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-30, 1e-3), "d": 1.5},
    {"lr": 0.03, "maximize": True, "weight_decay": 0.05},
    # rho_t = min(lr, 1/sqrt(t)) switches from lr to 1/sqrt(t) at t=4; eps2 floors alpha
    {"lr": 0.5, "eps": (None, 0.5), "beta2_decay": 0.0},
]


def check_same_grads(kwargs, *, groups=None, closure=False, steps=optim_oracle.STEPS,
                     name="Adafactor", pair_class=Pair):
    """``steps`` steps of optimizer ``name`` in both frameworks from the same gradients
    (torch's, copied into Ember): the parameters and learning rates agree after each step.

    Adafactor divides each gradient by its running RMS, so where a gradient element
    passes through zero the autograd engines' float32 rounding (1e-8 absolute) reaches
    the update at full size: on ``Pair`` torch's own float32 run drifts 2e-6 from its
    float64 run by step 17, and Ember's independent backward drifts as far. The optimizer
    is what is under test, so it gets identical gradients; tolerances stay float32's."""
    pair = pair_class()
    tparams, eparams = pair.groups(groups)
    topt = getattr(torch.optim, name)(tparams, **kwargs)
    eopt = getattr(eoptim, name)(eparams, **to_ember(kwargs))

    def copy_grads():
        for t, e in zip(pair.torch_params, pair.ember_params):
            e.grad = to_ember(t.grad)

    def ember_closure():
        eopt.zero_grad()
        loss = pair.ember_loss()
        loss.backward()
        copy_grads()
        return loss

    for step in range(steps):
        if closure:
            tl = topt.step(pair.torch_closure(topt))
            el = eopt.step(ember_closure)
            np.testing.assert_allclose(float(el.detach()), float(tl.detach()), rtol=1e-5)
        else:
            topt.zero_grad()
            pair.torch_loss().backward()
            copy_grads()
            topt.step()
            eopt.step()
        optim_oracle.assert_params_close(pair, step)
        assert optim_oracle.lrs(eopt) == optim_oracle.lrs(topt)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: ",".join(p) or "default")
@pytest.mark.parametrize("options", ADAFACTOR_OPTIONS, ids=str)
def test_adafactor_matches_torch(options, path):
    check_same_grads({**options, **path})


@pytest.mark.parametrize("path", PATHS, ids=lambda p: ",".join(p) or "default")
def test_adafactor_tensor_lr_groups_closure(path):
    check_same_grads({"lr": torch.tensor(0.05), "weight_decay": 0.1, **path})
    check_same_grads({"lr": 0.02, **path},
                     groups=[{"lr": 0.05, "maximize": True}, {"weight_decay": 0.1, "d": 2.0}])
    check_same_grads({"lr": 0.05, **path}, closure=True)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: ",".join(p) or "default")
def test_adafactor_end_to_end_with_own_gradients(path):
    # Ember's own backward too, at options where the drift above stays under float32's
    check_optimizer("Adafactor", {"lr": 0.02, "weight_decay": 0.1, **path})


@pytest.mark.parametrize("path", PATHS, ids=lambda p: ",".join(p) or "default")
def test_adafactor_float64(path):
    # eps1=None takes float64's machine epsilon
    check_optimizer("Adafactor", {"lr": 0.05, "weight_decay": 0.01, **path},
                    dtype=torch.float64, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("foreach, first, eps1", [
    (False, torch.float64, None), (False, torch.float32, None),
    (True, torch.float64, 1e-20), (True, torch.float32, 1e-20)])
def test_adafactor_mixed_dtypes(foreach, first, eps1):
    # the loop fixes eps1=None by the first parameter's dtype and keeps it for the rest;
    # tiny gradients make eps1 matter. (The multi-tensor path fixes it by the first dtype
    # group it meets, and torch's groups come out of a C++ hash map in no set order:
    # there eps1 is given.)
    other = torch.float32 if first is torch.float64 else torch.float64
    shapes_dtypes = [((3, 4), first), ((4,), other), ((2, 3), other), ((5,), first)]
    g = torch.Generator().manual_seed(3)
    tparams = [torch.randn(s, generator=g, dtype=dt).requires_grad_() for s, dt in shapes_dtypes]
    eparams = [enn.Parameter(to_ember(p.detach())) for p in tparams]
    topt = torch.optim.Adafactor(tparams, lr=0.1, eps=(eps1, 1e-3), foreach=foreach)
    eopt = eoptim.Adafactor(eparams, lr=0.1, eps=(eps1, 1e-3), foreach=foreach)
    for step in range(6):
        for tp, ep in zip(tparams, eparams):
            grad = torch.randn(tp.shape, generator=g, dtype=tp.dtype) * 1e-9
            tp.grad, ep.grad = grad, to_ember(grad)
        topt.step()
        eopt.step()
        for i, (tp, ep) in enumerate(zip(tparams, eparams)):
            np.testing.assert_allclose(ep.detach().numpy(), tp.detach().numpy(), rtol=1e-5,
                                       atol=1e-6, err_msg=f"parameter {i} after step {step}")


@pytest.mark.parametrize("path", PATHS, ids=lambda p: ",".join(p) or "default")
def test_adafactor_state_dict_crosses_between_frameworks(path):
    check_state_dict_crossing("Adafactor", {"lr": 0.05, "weight_decay": 0.1, **path})


def test_adafactor_state_layout():
    pair = Pair()
    opt = eoptim.Adafactor(pair.ember_params)
    pair.ember_loss().backward()
    opt.step()
    w1, b1, _, s, t = pair.ember_params
    assert sorted(opt.state[w1]) == ["col_var", "row_var", "step"]
    assert opt.state[w1]["row_var"].shape == (6, 1)
    assert opt.state[w1]["col_var"].shape == (1, 5)
    assert opt.state[t]["row_var"].shape == (2, 3, 1)
    assert opt.state[t]["col_var"].shape == (2, 1, 2)
    assert sorted(opt.state[b1]) == sorted(opt.state[s]) == ["step", "variance"]
    assert opt.state[w1]["step"].dtype == ec.float32 and opt.state[w1]["step"].dim() == 0


def _raises_as_torch(make):
    """``make(lib, optim, optimizer_name_prefix)`` raises the same type and message in both."""
    found = []
    for lib, optim in ((torch, torch.optim), (ec, eoptim)):
        with pytest.raises(Exception) as info:
            make(lib, optim)
        found.append((type(info.value), str(info.value)))
    assert found[1] == found[0]
    return found[0]


def _param(lib, *shape, dtype=None):
    t = lib.ones(shape) if dtype is None else lib.ones(shape, dtype=dtype)
    return torch.nn.Parameter(t) if lib is torch else enn.Parameter(t)


@pytest.mark.parametrize("kwargs, message", [
    ({"lr": -0.1}, "Learning rate should be >= 0 but is: -0.1"),
    ({"beta2_decay": 0.5}, "beta2_decay should be <= 0 but is: 0.5"),
    ({"eps": (-1.0, 1e-3)}, "epsilon1 should be >= 0 but is: -1.0"),
    ({"eps": (None, -1e-3)}, "epsilon2 should be >= 0 but is: -0.001"),
    ({"d": 0.5}, "Clipping threshold d should be >= 1 but is: 0.5"),
    ({"weight_decay": -1}, "weight_decay should be >= 0 but is: -1"),
])
def test_adafactor_bad_options_raise_as_torch(kwargs, message):
    kind, text = _raises_as_torch(lambda lib, optim: optim.Adafactor([_param(lib, 2)], **kwargs))
    assert kind is ValueError and text == message


def test_adafactor_bad_inputs_raise_as_torch():
    kind, text = _raises_as_torch(
        lambda lib, optim: optim.Adafactor([_param(lib, 2)], lr=lib.tensor([0.1, 0.2])))
    assert (kind, text) == (ValueError, "Tensor lr must be 1-element")

    def complex_step(lib, optim):
        p = _param(lib, 2, dtype=lib.complex64)
        p.grad = lib.ones(2, dtype=lib.complex64)
        optim.Adafactor([p]).step()
    assert _raises_as_torch(complex_step)[0] is RuntimeError

    def scaled_step(lib, optim):
        p = _param(lib, 2, 2)
        p.grad = lib.ones(2, 2)
        opt = optim.Adafactor([p], foreach=lib is ec)
        opt.grad_scale = lib.tensor(2.0)
        opt.step()
    assert _raises_as_torch(scaled_step)[0] is AssertionError


# ---------------------------------------------------------------- Muon

MUON_OPTIONS = [
    {},
    {"lr": 0.02},
    {"lr": 0.02, "momentum": 0.9, "nesterov": False, "weight_decay": 0.0},
    {"lr": 0.01, "adjust_lr_fn": "match_rms_adamw", "weight_decay": 0.05},
    {"lr": 0.02, "adjust_lr_fn": "original", "ns_steps": 3,
     "ns_coefficients": (2.0, -1.5, 0.5), "eps": 1e-5},
    {"lr": 0.03, "momentum": 0.0},
]


def check_muon(kwargs, **options):
    """Muon from the same gradients: the iteration rounds the momentum to bfloat16, so
    float32 gradients differing in their last bit (the two autograd engines) put an element
    on the other side of a bfloat16 rounding now and then, an ulp (0.4%) of the update.
    With identical gradients the small matrices' iteration is bitwise torch's (see
    test_newton_schulz_is_bitwise_torch), so the tolerances stay float32's."""
    check_same_grads(kwargs, name="Muon", pair_class=MatrixPair, **options)


@pytest.mark.parametrize("options", MUON_OPTIONS, ids=str)
def test_muon_matches_torch(options):
    check_muon(options)


def test_muon_tensor_lr_groups_closure():
    check_muon({"lr": torch.tensor(0.02)})
    check_muon({"lr": 0.02}, groups=[{"lr": 0.01, "nesterov": False}, {"weight_decay": 0.0},
                                     {"adjust_lr_fn": "match_rms_adamw", "momentum": 0.5}])
    check_muon({"lr": 0.02}, closure=True)


@pytest.mark.usefixtures("matrices")
def test_muon_float64_params_end_to_end():
    # Ember's own backward: float64 gradients differ by 1e-16, too little to cross a
    # bfloat16 rounding; the update then lands on float64 weights exactly as in torch
    check_optimizer("Muon", {"lr": 0.02, "weight_decay": 0.05}, dtype=torch.float64,
                    rtol=1e-12, atol=1e-13)
    check_optimizer("Muon", {"lr": 0.01, "nesterov": False, "adjust_lr_fn": "match_rms_adamw"},
                    dtype=torch.float64, rtol=1e-12, atol=1e-13)


@pytest.mark.usefixtures("matrices")
def test_muon_state_dict_crosses_between_frameworks():
    check_state_dict_crossing("Muon", {"lr": 0.02, "weight_decay": 0.05})


@pytest.mark.parametrize("shape", [(3, 6), (6, 3), (4, 7), (5, 5), (6, 6)])
@pytest.mark.parametrize("steps", [1, 5])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_newton_schulz_is_bitwise_torch(shape, steps, dtype):
    # same input, same bfloat16 output: each product sums in float32 and its addmm fuses
    # beta * input into one rounding, as torch's CPU kernel does (the polynomial cancels
    # to near zero off the diagonal, where any other rounding moves a bfloat16 ulp)
    from torch.optim._muon import _zeropower_via_newtonschulz as torch_ns
    gen = torch.Generator().manual_seed(7)
    for _ in range(40):
        _check_newton_schulz(torch_ns, torch.randn(shape, generator=gen, dtype=dtype), steps)


def _check_newton_schulz(torch_ns, g, steps):
    coeffs = (3.4445, -4.7750, 2.0315)
    expected = torch_ns(g, coeffs, steps, 1e-7)
    got = _zeropower_via_newtonschulz(to_ember(g), coeffs, steps, 1e-7)
    assert got.dtype == ec.bfloat16 and tuple(got.shape) == tuple(g.shape)
    np.testing.assert_array_equal(got.float().numpy(), expected.float().numpy())


@pytest.mark.parametrize("kwargs, message", [
    ({"lr": -0.1}, "Learning rate should be >= 0 but is: -0.1"),
    ({"momentum": -0.5}, "momentum should be >= 0 but is: -0.5"),
    ({"weight_decay": -1}, "weight decay should be >= 0 but is: -1"),
    ({"adjust_lr_fn": "bad"}, "Adjust learning rate function bad is not supported"),
])
def test_muon_bad_options_raise_as_torch(kwargs, message):
    kind, text = _raises_as_torch(lambda lib, optim: optim.Muon([_param(lib, 2, 2)], **kwargs))
    assert kind is ValueError and text == message


@pytest.mark.parametrize("shape", [(3,), (2, 3, 4), ()])
def test_muon_rejects_non_matrices_as_torch(shape):
    kind, text = _raises_as_torch(lambda lib, optim: optim.Muon([_param(lib, *shape)]))
    assert kind is ValueError and text.startswith("Muon only supports 2D parameters")


@pytest.mark.parametrize("kwargs", [{"ns_steps": 100}, {"ns_coefficients": (1.0, 2.0)}])
def test_muon_bad_iteration_raises_at_step_as_torch(kwargs):
    def step(lib, optim):
        p = _param(lib, 2, 3)
        p.grad = lib.ones(2, 3)
        optim.Muon([p], **kwargs).step()
    assert _raises_as_torch(step)[0] is ValueError


def test_muon_complex_raises_as_torch():
    def step(lib, optim):
        p = _param(lib, 2, 2, dtype=lib.complex64)
        p.grad = lib.ones(2, 2, dtype=lib.complex64)
        optim.Muon([p]).step()
    assert _raises_as_torch(step) == (RuntimeError, "Muon does not support complex parameters")


def test_muon_state_layout_and_group_defaults():
    p = _param(ec, 3, 4)
    opt = eoptim.Muon([p])
    p.grad = ec.ones(3, 4)
    opt.step()
    assert list(opt.state[p]) == ["momentum_buffer"]
    tp = _param(torch, 3, 4)
    assert sorted(opt.state_dict()["param_groups"][0]) == \
        sorted(torch.optim.Muon([tp]).state_dict()["param_groups"][0])


@pytest.mark.parametrize("shape", [(32, 48), (48, 32), (16, 128)])
def test_newton_schulz_larger_matrices_within_a_bfloat16_ulp(shape):
    # torch's CPU bfloat16 kernel (oneDNN) sums long products in a blocked order of its
    # own, so now and then an intermediate element rounds to the neighbouring bfloat16
    # (torch's own bfloat16 x @ x.T differs from float32-then-round in ~1e-4 of the
    # elements at this size): the results agree to a bfloat16 ulp (2**-8) in norm
    from torch.optim._muon import _zeropower_via_newtonschulz as torch_ns
    gen = torch.Generator().manual_seed(11)
    coeffs = (3.4445, -4.7750, 2.0315)
    for _ in range(5):
        g = torch.randn(shape, generator=gen)
        expected = torch_ns(g, coeffs, 5, 1e-7).double().numpy()
        got = _zeropower_via_newtonschulz(to_ember(g), coeffs, 5, 1e-7).double().numpy()
        assert np.linalg.norm(got - expected) <= 2 ** -8 * np.linalg.norm(expected)


@pytest.mark.parametrize("nesterov", [True, False])
def test_muon_momentum_is_bitwise_torch(nesterov):
    # the momentum feeds a bfloat16 rounding, so it must be torch's to the last bit
    pair = MatrixPair()
    topt = torch.optim.Muon(pair.torch_params, lr=0.02, momentum=0.9, nesterov=nesterov)
    eopt = eoptim.Muon(pair.ember_params, lr=0.02, momentum=0.9, nesterov=nesterov)
    for _ in range(8):
        topt.zero_grad()
        pair.torch_loss().backward()
        for t, e in zip(pair.torch_params, pair.ember_params):
            e.grad = to_ember(t.grad)
        topt.step()
        eopt.step()
        for t, e in zip(pair.torch_params, pair.ember_params):
            np.testing.assert_array_equal(eopt.state[e]["momentum_buffer"].numpy(),
                                          topt.state[t]["momentum_buffer"].numpy())
