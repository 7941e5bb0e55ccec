"""The hook-based ember.nn.utils.weight_norm and spectral_norm against torch's: parameters
and buffers (``weight_g``/``weight_v``, ``weight_orig``/``weight_u``/``weight_v``),
state-dict keys and metadata, outputs, gradients, the power iteration over several
training-mode forwards from the same vectors, removal, the deprecation warning, loading a
state dict saved before spectral_norm's version 1, and the errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from nn_oracle import check_close, compare_modules, pair_modules, to_ember

import ember.core as E
import ember.nn as enn
import ember.nn.utils as eutils

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _seeded():
    """The same random weights (and spectral_norm's random vectors) every run."""
    torch.manual_seed(0)
    E.manual_seed(0)


def _x(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _utils(nn):
    return torch.nn.utils if nn is torch.nn else eutils


@pytest.mark.parametrize("build, dim, shape", [(lambda nn: nn.Linear(5, 3), 0, (4, 5)),
                                               (lambda nn: nn.Linear(5, 3), None, (4, 5)),
                                               (lambda nn: nn.Conv2d(2, 3, 3), 1, (2, 2, 5, 5)),
                                               (lambda nn: nn.Conv2d(2, 3, 3), 2, (2, 2, 5, 5))])
def test_weight_norm_matches_torch(build, dim, shape):
    t, e = build(torch.nn), build(enn)
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.nn.utils.weight_norm(t, dim=dim)
        eutils.weight_norm(e, dim=dim)
    assert list(e.state_dict()) == list(t.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert [n for n, _ in e.named_parameters()] == ["bias", "weight_g", "weight_v"]
    check_close(t.weight_g, e.weight_g, "weight_g")
    check_close(t.weight_v, e.weight_v, "weight_v")
    assert not isinstance(e.weight, enn.Parameter) and "weight" not in e._parameters
    for _ in range(2):
        compare_modules(t, e, [_x(*shape)])
        for m in (t, e):  # a step on g: the next forward recomputes the weight
            m.weight_g.data.sub_(m.weight_g.grad.data * 0.1)
            m.zero_grad()
    check_close(t.weight, e.weight, "weight recomputed in forward")


def test_weight_norm_warns_and_is_removed_as_torch():
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        e = eutils.weight_norm(enn.Linear(3, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        t = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2))
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    t.weight_g.data.mul_(3.0)
    e.weight_g.data.mul_(3.0)
    assert torch.nn.utils.remove_weight_norm(t) is t
    assert eutils.remove_weight_norm(e) is e
    assert list(e.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    assert isinstance(e.weight, enn.Parameter) and not e._forward_pre_hooks
    check_close(t.weight, e.weight, "weight after removal")


def _spectral_normed(build, **kwargs):
    return lambda nn: _utils(nn).spectral_norm(build(nn), **kwargs)


@pytest.mark.parametrize("build, kwargs, shape", [(lambda nn: nn.Linear(5, 3), {}, (4, 5)),
                                                  (lambda nn: nn.Linear(5, 3), {"n_power_iterations": 3}, (4, 5)),
                                                  (lambda nn: nn.Conv2d(2, 3, 3), {"dim": 1}, (2, 2, 5, 5)),
                                                  (lambda nn: nn.ConvTranspose1d(3, 2, 3), {}, (2, 3, 6))])
def test_spectral_norm_matches_torch(build, kwargs, shape):
    # pair_modules copies torch's random u and v into Ember's buffers
    t, e = pair_modules(_spectral_normed(build, **kwargs))
    assert list(e.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert e.state_dict()._metadata[""]["spectral_norm"] == {"weight.version": 1}
    u = e.weight_u
    for _ in range(3):
        compare_modules(t, e, [_x(*shape)], train=True)
    assert e.weight_u is u
    before = e.weight_v.clone()
    compare_modules(t, e, [_x(*shape)], train=False)
    assert E.equal(before, e.weight_v)
    check_close(t.weight, e.weight, "weight")
    torch.nn.utils.remove_spectral_norm(t)
    eutils.remove_spectral_norm(e)
    assert list(e.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    assert not e._forward_pre_hooks and not e._state_dict_hooks and not e._load_state_dict_pre_hooks
    check_close(t.weight, e.weight, "weight after removal")


def test_spectral_norm_state_dict_without_metadata_loads_as_current():
    t, e = pair_modules(_spectral_normed(lambda nn: nn.Linear(4, 3)))
    plain = {k: to_ember(v) for k, v in t.state_dict().items()}  # a dict: no metadata
    fresh = eutils.spectral_norm(enn.Linear(4, 3))
    fresh.load_state_dict(plain)
    assert E.equal(fresh.weight_v, e.weight_v)


def test_spectral_norm_state_dict_before_version_1_matches_torch():
    # such a dict holds the normalized ``weight`` and no ``weight_v``: v is solved for
    t, e = pair_modules(_spectral_normed(lambda nn: nn.Linear(6, 4)), dtype="float64")
    t(torch.tensor(_x(2, 6, dtype=np.float64)))
    legacy = t.state_dict()
    legacy["weight"] = t.weight.detach().clone()
    del legacy["weight_v"]
    legacy._metadata[""]["spectral_norm"]["weight.version"] = 0
    e_legacy = type(legacy)({k: to_ember(v) for k, v in legacy.items()})
    e_legacy._metadata = legacy._metadata
    t2 = torch.nn.utils.spectral_norm(torch.nn.Linear(6, 4)).double()
    e2 = eutils.spectral_norm(enn.Linear(6, 4)).double()
    t2.load_state_dict(legacy)
    e2.load_state_dict(e_legacy)
    check_close(t2.weight_v, e2.weight_v, "solved weight_v")
    e2.eval()
    t2.eval()
    compare_modules(t2, e2, [_x(2, 6, dtype=np.float64)], train=False)
    # and a wide matrix, through the other Gram matrix
    wide = eutils.spectral_norm(enn.Linear(3, 5)).double()
    twide = torch.nn.utils.spectral_norm(torch.nn.Linear(3, 5)).double()
    state = twide.state_dict()
    state["weight"] = twide.weight_orig.detach() / 2.5
    del state["weight_v"]
    state._metadata[""]["spectral_norm"]["weight.version"] = 0
    e_state = type(state)({k: to_ember(v) for k, v in state.items()})
    e_state._metadata = state._metadata
    twide.load_state_dict(state)
    wide.load_state_dict(e_state)
    check_close(twide.weight_v, wide.weight_v, "solved weight_v (wide)")


def _errors(nn):
    utils = _utils(nn)

    def twice(fn):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            m = fn(nn.Linear(2, 2))
            fn(m)

    no_bias = nn.Linear(2, 2, bias=False)
    lazy = nn.LazyLinear(2)
    cases = {
        "weight norm twice": lambda: twice(utils.weight_norm),
        "spectral norm twice": lambda: twice(utils.spectral_norm),
        "remove weight norm": lambda: utils.remove_weight_norm(nn.Linear(2, 2)),
        "remove spectral norm": lambda: utils.remove_spectral_norm(nn.Linear(2, 2)),
        "spectral iterations": lambda: utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0),
        "spectral None": lambda: utils.spectral_norm(no_bias, name="bias"),
        "spectral missing": lambda: utils.spectral_norm(nn.Linear(2, 2), name="nope"),
        "spectral lazy": lambda: utils.spectral_norm(lazy),
        "weight norm lazy": lambda: utils.weight_norm(nn.LazyLinear(2)),
    }
    out = {}
    for name, case in cases.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                case()
            out[name] = None
        except Exception as ex:  # noqa: BLE001
            out[name] = (type(ex).__name__, str(ex))
    return out


def test_errors_match_torch():
    t, e = _errors(torch.nn), _errors(enn)
    assert e == t
    assert all(v is not None for v in t.values())
