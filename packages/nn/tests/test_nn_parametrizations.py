"""ember.nn.utils.parametrizations against torch's: weight_norm (g and v, the old
``weight_g``/``weight_v`` state dicts), spectral_norm (u and v after training-mode
forwards from the same start, evaluation leaving them), orthogonal (every map, square,
tall, wide and batched matrices, with and without the trivialization: the weights are
orthogonal and equal torch's for the same original, gradients too), removal, and the
errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.utils.parametrizations as tPs
import torch.nn.utils.parametrize as tP
from nn_oracle import check_close, compare_modules, pair_modules, to_ember

import ember.core as E
import ember.nn as enn
import ember.nn.utils.parametrizations as ePs
import ember.nn.utils.parametrize as eP

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _seeded():
    """The same random weights (and spectral_norm's random vectors) every run."""
    torch.manual_seed(0)
    E.manual_seed(0)


def _x(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _api(nn):
    """(lib, parametrizations, parametrize) of ``torch.nn`` or ``ember.nn``."""
    return (torch, tPs, tP) if nn is torch.nn else (E, ePs, eP)


def _registered_from_the_same_weights(build, parametrize):
    """``build(nn)`` in both libraries, Ember's holding torch's values, then each
    parametrized with ``parametrize(nn, Ps, module)``: what registration computes
    (right_inverse, initial buffers) comes from the same tensors."""
    t, e = build(torch.nn), build(enn)
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    return parametrize(torch.nn, tPs, t), parametrize(enn, ePs, e)


# ---------------------------------------------------------------- weight_norm

WEIGHT_NORM_CASES = [(lambda nn: nn.Linear(5, 3), 0, (4, 5)), (lambda nn: nn.Linear(5, 3), 1, (4, 5)),
                     (lambda nn: nn.Linear(5, 3), None, (4, 5)),
                     (lambda nn: nn.Conv2d(2, 3, 3), 0, (2, 2, 5, 5)),
                     (lambda nn: nn.Conv2d(2, 3, 3), 2, (2, 2, 5, 5)),
                     (lambda nn: nn.Conv1d(2, 3, 3), -1, (2, 2, 6))]


@pytest.mark.parametrize("build, dim, shape", WEIGHT_NORM_CASES)
def test_weight_norm_g_v_outputs_and_gradients_match_torch(build, dim, shape):
    t, e = _registered_from_the_same_weights(build, lambda nn, Ps, m: Ps.weight_norm(m, dim=dim))
    tsd, esd = t.state_dict(), e.state_dict()
    assert list(esd) == list(tsd) == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    for k in tsd:
        check_close(tsd[k], esd[k], k)
    check_close(t.weight, e.weight, "weight")
    compare_modules(t, e, [_x(*shape)])


def test_weight_norm_loads_the_hook_based_state_dict():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3))
    state = old.state_dict()
    assert "weight_g" in state
    t = tPs.weight_norm(torch.nn.Linear(4, 3))
    e = ePs.weight_norm(enn.Linear(4, 3))
    t.load_state_dict(state)
    e.load_state_dict({k: to_ember(v) for k, v in state.items()})
    check_close(t.weight, e.weight, "weight from weight_g/weight_v")
    check_close(old.weight, e.weight, "the hook-based weight")


@pytest.mark.parametrize("leave", [True, False])
def test_weight_norm_removal_matches_torch(leave):
    t, e = pair_modules(lambda nn: _api(nn)[1].weight_norm(nn.Linear(4, 3)))
    for m, P in ((t, tP), (e, eP)):
        m.parametrizations.weight.original0.data.mul_(2.0)  # g away from ||v||
        if leave:
            P.remove_parametrizations(m, "weight")
    if not leave:
        with pytest.raises(ValueError) as te:
            tP.remove_parametrizations(t, "weight", leave_parametrized=False)
        with pytest.raises(ValueError) as ee:
            eP.remove_parametrizations(e, "weight", leave_parametrized=False)
        assert str(ee.value) == str(te.value)
        return
    assert type(e) is enn.Linear and list(e.state_dict()) == list(t.state_dict())
    check_close(t.weight, e.weight, "weight left parametrized")
    compare_modules(t, e, [_x(2, 4)])


# ---------------------------------------------------------------- spectral_norm

SPECTRAL_CASES = [(lambda nn: nn.Linear(5, 3), {}, (4, 5)),
                  (lambda nn: nn.Linear(5, 3), {"dim": 1, "n_power_iterations": 3}, (4, 5)),
                  (lambda nn: nn.Conv2d(2, 3, 3), {"eps": 1e-6}, (2, 2, 5, 5)),
                  (lambda nn: nn.ConvTranspose2d(3, 2, 3), {}, (2, 3, 4, 4)),
                  (lambda nn: nn.Conv1d(2, 4, 2), {"dim": -2}, (2, 2, 5))]


@pytest.mark.parametrize("build, kwargs, shape", SPECTRAL_CASES)
def test_spectral_norm_power_iteration_matches_torch(build, kwargs, shape):
    # Ember's u and v are torch's (copied with the state dict), then each training
    # forward updates them in both
    t, e = pair_modules(lambda nn: _api(nn)[1].spectral_norm(build(nn), **kwargs))
    assert [k for k in e.state_dict() if "_u" in k or "_v" in k] == ["parametrizations.weight.0._u", "parametrizations.weight.0._v"]
    u = e.parametrizations.weight[0]._u
    for _ in range(3):
        compare_modules(t, e, [_x(*shape)], train=True)
    assert e.parametrizations.weight[0]._u is u  # updated in place
    before = e.parametrizations.weight[0]._u.clone()
    compare_modules(t, e, [_x(*shape)], train=False)
    assert E.equal(e.parametrizations.weight[0]._u, before)
    t.eval()
    e.eval()
    check_close(t.weight, e.weight, "weight in evaluation")


def test_spectral_norm_initial_vectors_come_from_the_power_method():
    # 15 iterations at construction and one in registration's check from random
    # vectors: u is the top left singular vector, so sigma is the largest singular value
    rng = np.random.default_rng(1)
    left = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    right = np.linalg.qr(rng.standard_normal((6, 4)))[0]
    w = (left * np.array([3.0, 1.0, 0.5, 0.2])) @ right.T
    m = enn.Linear(6, 4)
    m.weight.data.copy_(E.tensor(w.astype(np.float32)))
    E.manual_seed(0)
    ePs.spectral_norm(m)
    sigma = E.vdot(m.parametrizations.weight[0]._u, E.mv(m.parametrizations.weight.original, m.parametrizations.weight[0]._v))
    np.testing.assert_allclose(float(sigma), 3.0, rtol=1e-5)
    check_close(torch.tensor(w.astype(np.float32) / 3.0), m.weight, "normalized weight")


def test_spectral_norm_of_a_vector_normalizes_it():
    t, e = pair_modules(lambda nn: _api(nn)[1].spectral_norm(nn.Linear(3, 4), name="bias"))
    assert not list(e.buffers())
    check_close(t.bias, e.bias, "normalized bias")
    compare_modules(t, e, [_x(2, 3)])


# ---------------------------------------------------------------- orthogonal

class _Batched:
    """A module with a (2, 4, 3) weight: a batch of tall matrices."""

    @staticmethod
    def build(nn):
        lib = _api(nn)[0]

        class Batched(nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = nn.Parameter(lib.randn(2, 4, 3))

            def forward(self, x):
                return x @ self.weight

        return Batched()


ORTHOGONAL_SHAPES = {"square": ((lambda nn: nn.Linear(4, 4)), (3, 4)),
                     "tall": ((lambda nn: nn.Linear(3, 5)), (3, 3)),
                     "wide": ((lambda nn: nn.Linear(5, 3)), (3, 5)),
                     "batched": (_Batched.build, (2, 5, 4))}
MAPS = ["matrix_exp", "cayley", "householder"]


def _assert_orthogonal(w):
    w = w.detach().numpy().astype(np.float64)
    if w.shape[-2] < w.shape[-1]:
        w = np.swapaxes(w, -1, -2)
    np.testing.assert_allclose(np.swapaxes(w, -1, -2) @ w, np.broadcast_to(np.eye(w.shape[-1]), w.shape[:-2] + (w.shape[-1],) * 2), atol=1e-5)


@pytest.mark.parametrize("shape", list(ORTHOGONAL_SHAPES))
@pytest.mark.parametrize("orthogonal_map", MAPS)
@pytest.mark.parametrize("trivialization", [True, False])
def test_orthogonal_weights_and_gradients_match_torch(shape, orthogonal_map, trivialization):
    build, x_shape = ORTHOGONAL_SHAPES[shape]

    def parametrized(nn):
        m = _api(nn)[1].orthogonal(build(nn), orthogonal_map=orthogonal_map, use_trivialization=trivialization)
        original = m.parametrizations.weight.original
        # away from the starting point, where the maps' arguments vanish; the diagonal
        # holds Householder's signs (not updated by it, cast to int)
        if nn is torch.nn:
            noise = torch.randn(original.shape) * 0.5
            noise.diagonal(dim1=-2, dim2=-1).zero_()
            with torch.no_grad():
                original.add_(noise)
        return m

    t, e = pair_modules(parametrized)
    expected = ["parametrizations.weight.original"] + (["parametrizations.weight.0.base"] if trivialization else [])
    assert [k for k in e.state_dict() if k.startswith("parametrizations")] == expected
    check_close(t.weight, e.weight, "orthogonal weight")
    _assert_orthogonal(e.weight)
    compare_modules(t, e, [_x(*x_shape)])


@pytest.mark.parametrize("shape", list(ORTHOGONAL_SHAPES))
@pytest.mark.parametrize("orthogonal_map", MAPS)
@pytest.mark.parametrize("trivialization", [True, False])
def test_orthogonal_initial_value_matches_torch(shape, orthogonal_map, trivialization):
    # from the same unparametrized weight: the Q factor of its QR decomposition (with
    # the trivialization, or for Householder without), else the map of the weight
    build = ORTHOGONAL_SHAPES[shape][0]
    t, e = _registered_from_the_same_weights(
        build, lambda nn, Ps, m: Ps.orthogonal(m, orthogonal_map=orthogonal_map, use_trivialization=trivialization))
    check_close(t.weight, e.weight, "initial weight", atol=1e-5, rtol=1e-4)
    check_close(t.parametrizations.weight.original, e.parametrizations.weight.original, "original", atol=1e-5, rtol=1e-4)
    if trivialization and shape == "square":
        check_close(t.parametrizations.weight[0].base, e.parametrizations.weight[0].base, "base", atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("orthogonal_map", MAPS)
def test_orthogonal_assignment_matches_torch(orthogonal_map):
    t, e = pair_modules(lambda nn: _api(nn)[1].orthogonal(nn.Linear(4, 4), orthogonal_map=orthogonal_map))
    a = _x(4, 4)
    q = np.linalg.qr(a.astype(np.float64))[0].astype(np.float32)
    for value in (q, a):  # orthogonal: kept; else orthogonalized
        t.weight = torch.tensor(value)
        e.weight = E.tensor(value)
        check_close(t.weight, e.weight, "assigned weight", atol=1e-5, rtol=1e-4)
        check_close(t.parametrizations.weight[0].base, e.parametrizations.weight[0].base, "base", atol=1e-5, rtol=1e-4)
        _assert_orthogonal(e.weight)


def test_orthogonal_double_precision_matches_torch_closely():
    t, e = pair_modules(lambda nn: _api(nn)[1].orthogonal(nn.Linear(6, 6), orthogonal_map="matrix_exp"), dtype="float64")
    with torch.no_grad():
        t.parametrizations.weight.original.copy_(torch.randn(6, 6, dtype=torch.float64) * 2)
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    check_close(t.weight, e.weight, "float64 weight")
    compare_modules(t, e, [_x(2, 6, dtype=np.float64)])


@pytest.mark.parametrize("leave", [True, False])
def test_orthogonal_removal_matches_torch(leave):
    t, e = pair_modules(lambda nn: _api(nn)[1].orthogonal(nn.Linear(3, 5), orthogonal_map="householder"))
    w = t.weight.detach().clone()
    tP.remove_parametrizations(t, "weight", leave_parametrized=leave)
    eP.remove_parametrizations(e, "weight", leave_parametrized=leave)
    check_close(t.weight, e.weight, "weight after removal")
    if leave:
        np.testing.assert_allclose(e.weight.detach().numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    assert list(e.state_dict()) == list(t.state_dict()) == ["bias", "weight"]


class _Complex:
    """A module holding one complex (3, 3) weight."""

    @staticmethod
    def build(nn, value):
        lib = _api(nn)[0]

        class Complex(nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = nn.Parameter(lib.tensor(value))

        return Complex()


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley"])
def test_orthogonal_unitary_maps_match_torch(orthogonal_map):
    value = (_x(3, 3) + 1j * _x(3, 3)).astype(np.complex64)
    grad = (_x(3, 3) + 1j * _x(3, 3)).astype(np.complex64)
    results = []
    for nn in (torch.nn, enn):
        lib, Ps, _ = _api(nn)
        m = Ps.orthogonal(_Complex.build(nn, value), orthogonal_map=orthogonal_map, use_trivialization=False)
        (m.weight * lib.tensor(grad)).abs().sum().backward()
        results.append((m.weight, m.parametrizations.weight.original.grad))
    (tw, tg), (ew, eg) = results
    check_close(tw, ew, "unitary weight", rtol=1e-5, atol=1e-5)
    check_close(tg, eg, "original grad", rtol=1e-5, atol=1e-5)
    w = ew.detach().numpy()
    np.testing.assert_allclose(w.conj().T @ w, np.eye(3), atol=1e-5)


def test_orthogonal_complex_with_trivialization_is_refused():
    # its QR (geqrf) needs complex ops ember.core lacks; torch's householder refusal
    # comes first
    value = np.eye(3, dtype=np.complex64)
    with pytest.raises(NotImplementedError, match="complex"):
        ePs.orthogonal(_Complex.build(enn, value))
    with pytest.raises(ValueError) as te:
        tPs.orthogonal(_Complex.build(torch.nn, value), orthogonal_map="householder")
    with pytest.raises(ValueError) as ee:
        ePs.orthogonal(_Complex.build(enn, value), orthogonal_map="householder")
    assert str(ee.value) == str(te.value)


# ---------------------------------------------------------------- errors

def _errors(nn):
    lib, Ps, P = _api(nn)

    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.vector = nn.Parameter(lib.ones(3))

    def assign(m, value):
        m.weight = value

    cases = {
        "orthogonal missing": lambda: Ps.orthogonal(nn.Linear(2, 2), name="nope"),
        "orthogonal vector": lambda: Ps.orthogonal(Holder(), name="vector"),
        "orthogonal map": lambda: Ps.orthogonal(nn.Linear(2, 2), orthogonal_map="qr"),
        "orthogonal assign shape": lambda: assign(Ps.orthogonal(nn.Linear(3, 3)), lib.ones(2, 3)),
        "orthogonal assign exp": lambda: assign(Ps.orthogonal(nn.Linear(3, 3), use_trivialization=False), lib.eye(3)),
        "orthogonal assign cayley": lambda: assign(Ps.orthogonal(nn.Linear(3, 3), "cayley", use_trivialization=False), lib.eye(3)),
        "spectral missing": lambda: Ps.spectral_norm(nn.Linear(2, 2), name="nope"),
        "spectral dim": lambda: Ps.spectral_norm(nn.Linear(2, 2), dim=2),
        "spectral negative dim": lambda: Ps.spectral_norm(nn.Linear(2, 2), dim=-3),
        "spectral iterations": lambda: Ps.spectral_norm(nn.Linear(2, 2), n_power_iterations=0),
        "weight norm missing": lambda: Ps.weight_norm(nn.Linear(2, 2), name="nope"),
    }
    out = {}
    for name, case in cases.items():
        try:
            case()
            out[name] = None
        except Exception as ex:  # noqa: BLE001
            out[name] = (type(ex).__name__, str(ex))
    return out


def test_errors_match_torch():
    t, e = _errors(torch.nn), _errors(enn)
    assert e == t
    assert all(v is not None for v in t.values())
