"""ember.nn.utils.parametrize against torch.nn.utils.parametrize: registration (the class
swap, ``original`` keeping its identity, ``right_inverse`` at registration and on
assignment, several originals, chains, buffers), state dicts both ways, outputs and
gradients, removal both ways, ``cached``, transfer, and the errors, each program run on
torch and on Ember and compared."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch
import torch.nn.utils.parametrize as tP
from nn_oracle import check_close, compare_modules, pair_modules, to_ember

import ember.core as E
import ember.nn as enn
import ember.nn.utils.parametrize as eP

LIBS = {"torch": (torch.nn, torch, tP), "ember": (enn, E, eP)}
BOTH = pytest.mark.parametrize("nn, lib, P", list(LIBS.values()), ids=list(LIBS))
RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _seeded():
    """The same random weights (and spectral_norm's random vectors) every run."""
    torch.manual_seed(0)
    E.manual_seed(0)


def _x(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _both(program):
    return [program(*LIBS[k]) for k in LIBS]


def _parametrizations(nn):
    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):
            return A.triu()

    class Double(nn.Module):
        def forward(self, X):
            return X * 2.0

        def right_inverse(self, X):
            return X / 2.0

    class Halves(nn.Module):
        """Depends on two tensors: the weight is their sum."""

        def forward(self, a, b):
            return a + b

        def right_inverse(self, X):
            return X * 0.25, X * 0.75

    class NoInverse(nn.Module):
        def forward(self, X):
            return X.tanh()

    return Symmetric, Double, Halves, NoInverse


def _parametrized_linear(nn, P, *names):
    Symmetric, Double, Halves, NoInverse = _parametrizations(nn)
    kinds = {"symmetric": Symmetric, "double": Double, "halves": Halves, "noinverse": NoInverse}
    m = nn.Linear(4, 4)
    for name in names:
        P.register_parametrization(m, "weight", kinds[name]())
    return m


@pytest.mark.parametrize("names", [("symmetric",), ("double",), ("halves",), ("noinverse",),
                                   ("symmetric", "double"), ("halves", "double", "symmetric")])
def test_outputs_gradients_and_state_dict_match_torch(names):
    t, e = pair_modules(lambda nn: _parametrized_linear(nn, tP if nn is torch.nn else eP, *names))
    assert type(e).__name__ == type(t).__name__ == "ParametrizedLinear"
    check_close(t.weight, e.weight, "parametrized weight")
    compare_modules(t, e, [_x(3, 4)])
    # and back: Ember's state dict loads into torch
    t2 = _parametrized_linear(torch.nn, tP, *names)
    t2.load_state_dict({k: torch.tensor(v.numpy()) for k, v in e.state_dict().items()})
    check_close(t2.weight, e.weight, "weight after loading Ember's state dict into torch")


@BOTH
def test_registration_moves_the_original_and_swaps_the_class(nn, lib, P):
    m = nn.Linear(4, 4)
    weight = m.weight
    Symmetric, Double, Halves, _ = _parametrizations(nn)
    P.register_parametrization(m, "weight", Double())
    assert m.parametrizations.weight.original is weight  # identity kept for optimizers
    assert isinstance(m.parametrizations.weight, P.ParametrizationList)
    assert P.is_parametrized(m) and P.is_parametrized(m, "weight")
    assert not P.is_parametrized(m, "bias")
    assert P.type_before_parametrizations(m) is nn.Linear
    assert type(m).__bases__ == (nn.Linear,) and isinstance(m, nn.Linear)
    assert [n for n, _ in m.named_parameters()] == ["bias", "parametrizations.weight.original"]
    assert "weight" not in m._parameters
    P.register_parametrization(m, "bias", Double())
    assert type(m).__bases__ == (nn.Linear,)  # one swap per module
    # the subclass is the module's own: another Linear is untouched
    assert not hasattr(type(nn.Linear(2, 2)), "weight")
    assert P.type_before_parametrizations(nn.Linear(2, 2)) is nn.Linear


def _registration_values(nn, lib, P):
    lib.manual_seed(0)
    m = nn.Linear(3, 3)
    w = m.weight.detach().clone()
    Symmetric, Double, Halves, _ = _parametrizations(nn)
    P.register_parametrization(m, "weight", Double())
    out = {"original": m.parametrizations.weight.original.detach().numpy().copy(),
           "w": w.numpy()}
    h = nn.Linear(3, 3)
    h.weight.data = w.clone()
    P.register_parametrization(h, "weight", Halves())
    out["halves"] = [getattr(h.parametrizations.weight, f"original{i}").detach().numpy().copy()
                     for i in range(2)]
    out["halves_requires_grad"] = [getattr(h.parametrizations.weight, f"original{i}").requires_grad
                                   for i in range(2)]
    out["halves_types"] = [type(getattr(h.parametrizations.weight, f"original{i}")).__name__
                           for i in range(2)]
    a = lib.tensor(np.arange(9.0, dtype=np.float32).reshape(3, 3))
    s = nn.Linear(3, 3)
    P.register_parametrization(s, "weight", Symmetric())
    s.weight = a + a.mT  # assignment: right_inverse into original
    out["assigned"] = s.weight.detach().numpy().copy()
    out["assigned_original"] = s.parametrizations.weight.original.detach().numpy().copy()
    h.weight = a  # several originals: right_inverse's tuple
    out["assigned_halves"] = [getattr(h.parametrizations.weight, f"original{i}").detach().numpy().copy()
                              for i in range(2)]
    return out


def test_right_inverse_at_registration_and_assignment_match_torch():
    t, e = _both(_registration_values)
    # each library's own random weight, related to its originals in the same way
    for lib_out in (t, e):
        np.testing.assert_allclose(lib_out["original"] * 2.0, lib_out["w"], rtol=1e-6)
        np.testing.assert_allclose(lib_out["halves"][0], lib_out["w"] * 0.25, rtol=1e-6)
        np.testing.assert_allclose(lib_out["halves"][1], lib_out["w"] * 0.75, rtol=1e-6)
    for key in ("halves_requires_grad", "halves_types", "assigned", "assigned_original"):
        np.testing.assert_equal(e[key], t[key])
    np.testing.assert_allclose(e["assigned_halves"], t["assigned_halves"])


def test_a_buffer_can_be_parametrized():
    def build(nn):
        P = tP if nn is torch.nn else eP
        m = nn.BatchNorm1d(4)
        P.register_parametrization(m, "running_var", _parametrizations(nn)[1]())
        return m

    t, e = pair_modules(build)
    assert "parametrizations.running_var.original" in e.state_dict()
    assert "parametrizations.running_var.original" in dict(e.named_buffers())
    compare_modules(t, e, [_x(5, 4)], train=False)
    check_close(t.running_var, e.running_var, "parametrized buffer")


def _removal(nn, lib, P, names, leave):
    m = _parametrized_linear(nn, P, *names)
    for p in m.parameters():
        p.data.copy_(lib.tensor(np.linspace(-1, 1, p.numel(), dtype=np.float32).reshape(p.shape)))
    original = m.parametrizations.weight.original if hasattr(m.parametrizations.weight, "original") else None
    try:
        P.remove_parametrizations(m, "weight", leave_parametrized=leave)
    except ValueError as ex:
        return type(ex).__name__, str(ex)
    out = {"class": type(m).__name__, "keys": list(m.state_dict()),
           "weight": m.weight.detach().numpy().copy(), "is_param": isinstance(m.weight, nn.Parameter),
           "has_parametrizations": hasattr(m, "parametrizations"),
           "requires_grad": m.weight.requires_grad}
    if original is not None:
        out["same_object"] = m.weight is original
    return out


@pytest.mark.parametrize("names", [("symmetric",), ("symmetric", "double"), ("halves",)])
@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations_matches_torch(names, leave):
    t, e = _both(lambda nn, lib, P: _removal(nn, lib, P, names, leave))
    if isinstance(t, tuple):
        assert e == t
        return
    np.testing.assert_allclose(e.pop("weight"), t.pop("weight"), rtol=1e-6)
    assert e == t


@BOTH
def test_removing_one_of_two_keeps_the_class(nn, lib, P):
    Double = _parametrizations(nn)[1]
    m = nn.Linear(2, 2)
    P.register_parametrization(m, "weight", Double())
    P.register_parametrization(m, "bias", Double())
    subclass = type(m)
    P.remove_parametrizations(m, "weight")
    assert type(m) is subclass and list(m.parametrizations) == ["bias"]
    assert "weight" not in subclass.__dict__ and isinstance(m.weight, nn.Parameter)
    P.remove_parametrizations(m, "bias", leave_parametrized=False)
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    assert "bias" not in subclass.__dict__


def _cache_counts(nn, lib, P):
    calls = []

    class Counting(nn.Module):
        def forward(self, X):
            calls.append(1)
            return X * 1.0

    m = nn.Linear(2, 2)
    P.register_parametrization(m, "weight", Counting())
    counts = [len(calls)]
    m.weight
    m.weight
    counts.append(len(calls))
    with P.cached():
        a = m.weight
        with P.cached():
            b = m.weight
        c = m.weight
        counts.append(len(calls))
        same = a is b is c
    m.weight
    counts.append(len(calls))
    return counts, same


def test_cached_computes_once_per_block_as_torch():
    t, e = _both(_cache_counts)
    assert e == t and t[1] is True


@BOTH
def test_transfer_parametrizations_and_params(nn, lib, P):
    Symmetric, Double, Halves, _ = _parametrizations(nn)
    src = nn.Linear(3, 3)
    P.register_parametrization(src, "weight", Symmetric())
    P.register_parametrization(src, "weight", Double())
    P.register_parametrization(src, "bias", Halves())
    dst = nn.Linear(3, 3)
    assert P.transfer_parametrizations_and_params(src, dst, "weight") is dst
    assert dst.parametrizations.weight.original is src.parametrizations.weight.original
    assert [type(p).__name__ for p in dst.parametrizations.weight] == ["Symmetric", "Double"]
    assert not P.is_parametrized(dst, "bias")
    P.transfer_parametrizations_and_params(src, dst)
    assert dst.parametrizations.bias.original1 is src.parametrizations.bias.original1
    # a module without the tensor gets it
    empty = nn.Module()
    P.transfer_parametrizations_and_params(src, empty, "weight")
    assert lib.equal(empty.weight, src.weight)
    assert P.transfer_parametrizations_and_params(nn.Linear(2, 2), empty) is empty


@BOTH
def test_deepcopy_works_and_pickling_refuses(nn, lib, P):
    m = _parametrized_linear(nn, P, "symmetric")
    c = copy.deepcopy(m)
    assert type(c) is type(m) and c.parametrizations.weight.original is not m.parametrizations.weight.original
    assert lib.equal(c.weight, m.weight)
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(m)


def _errors(nn, lib, P):
    Symmetric, Double, Halves, NoInverse = _parametrizations(nn)

    class Shrink(nn.Module):
        def forward(self, X):
            return X[:1]

    class ToDouble(nn.Module):
        def forward(self, X):
            return X.double()

    class BadInverse(nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return X.double()

    class NotTensor(nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return 3

    class ReturnsNumber(nn.Module):
        def forward(self, X):
            return 1.0

    cases = {
        "no such tensor": lambda: P.register_parametrization(nn.Linear(2, 2), "nope", Double()),
        "shape": lambda: P.register_parametrization(nn.Linear(2, 2), "weight", Shrink()),
        "dtype": lambda: P.register_parametrization(nn.Linear(2, 2), "weight", ToDouble()),
        "inverse dtype": lambda: P.register_parametrization(nn.Linear(2, 2), "weight", BadInverse()),
        "inverse type": lambda: P.register_parametrization(nn.Linear(2, 2), "weight", NotTensor()),
        "not a tensor": lambda: P.register_parametrization(nn.Linear(2, 2), "weight", ReturnsNumber()),
        "chained shape": lambda: P.register_parametrization(_parametrized_linear(nn, P, "double"), "weight", Shrink()),
        "chained dtype": lambda: P.register_parametrization(_parametrized_linear(nn, P, "double"), "weight", ToDouble()),
        "chained inverse": lambda: P.register_parametrization(_parametrized_linear(nn, P, "double"), "weight", BadInverse()),
        "remove unparametrized": lambda: P.remove_parametrizations(nn.Linear(2, 2), "weight"),
        "remove other": lambda: P.remove_parametrizations(_parametrized_linear(nn, P, "double"), "bias"),
        "assign without inverse": lambda: setattr(_parametrized_linear(nn, P, "noinverse"), "weight", lib.ones(4, 4)),
        "assign a parameter": lambda: setattr(_parametrized_linear(nn, P, "double"), "weight", nn.Parameter(lib.ones(4, 4))),
        "assign halves wrong dtype": lambda: setattr(_parametrized_linear(nn, P, "halves"), "weight", lib.ones(4, 4, dtype=lib.float64)),
        "empty list": lambda: P.ParametrizationList([], lib.ones(2)),
    }
    out = {}
    for name, case in cases.items():
        try:
            case()
            out[name] = None
        except Exception as ex:  # noqa: BLE001
            out[name] = (type(ex).__name__, str(ex))
    # unsafe lets the shape change
    m = nn.Linear(2, 2)
    P.register_parametrization(m, "weight", Shrink(), unsafe=True)
    out["unsafe shape"] = tuple(m.weight.shape)
    return out


def test_errors_match_torch():
    t, e = _both(_errors)
    assert e == t
    assert all(v is not None for k, v in t.items() if k != "unsafe shape")


def test_gradients_reach_the_original_through_the_chain():
    # the original is what an optimizer updates
    t = _parametrized_linear(torch.nn, tP, "symmetric", "double")
    e = _parametrized_linear(enn, eP, "symmetric", "double")
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    (t.weight ** 2).sum().backward()
    (e.weight ** 2).sum().backward()
    check_close(t.parametrizations.weight.original.grad, e.parametrizations.weight.original.grad, "original grad")
