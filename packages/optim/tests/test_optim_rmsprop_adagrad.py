"""RMSprop and Adagrad against torch.optim: every path, option combinations, tensor lr,
groups, float64, complex parameters, state (``step`` included), state dicts, differentiable
steps, errors.

The learning rates are moderate on purpose: torch's CPU kernels round ``add(alpha=)``,
``addcmul`` and ``lerp`` as fused multiply-adds and Ember's core does not yet, a 1-ulp
difference per step that these normalised updates amplify on aggressive settings (a
maximised loss, lr 1e-2 with centred momentum) past float32 tolerances within 20 steps."""

import numpy as np
import pytest
import torch
from optim_oracle import check_optimizer, check_state_dict_crossing

import ember.core as ec
import ember.nn as enn
import ember.optim as eoptim

PATHS = [{"foreach": False}, {"foreach": True}, {}]
PATH_IDS = ["single", "foreach", "default"]
RMSPROP = [
    {"lr": 0.01},
    {"lr": 0.001, "momentum": 0.9},
    {"lr": 0.001, "centered": True, "alpha": 0.9},
    {"lr": 0.001, "momentum": 0.9, "centered": True, "weight_decay": 0.1},
    {"lr": 0.002, "maximize": True, "weight_decay": 0.05, "eps": 1e-4},
]
ADAGRAD = [
    {"lr": 0.1},
    {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.1},
    {"lr": 0.05, "maximize": True, "eps": 1e-3},
    {"lr": 0.05, "lr_decay": 0.1, "eps": 1e-6, "weight_decay": 0.02, "maximize": True},
]
CASES = [("RMSprop", o) for o in RMSPROP] + [("Adagrad", o) for o in ADAGRAD]
FUSED = {"fused": True}
RUNS = [(n, o, p) for n, o in CASES for p in PATHS + [FUSED] * (n == "Adagrad")]
ADAGRAD_RUNS = [("Adagrad", p) for p in PATHS + [FUSED]]
TENSOR_LR = {"RMSprop": {"lr": torch.tensor(0.005), "momentum": 0.5},
             "Adagrad": {"lr": torch.tensor(0.1), "lr_decay": 0.05}}
GROUPS = {"RMSprop": ({"lr": 0.005}, [{"lr": 0.001, "momentum": 0.9},
                                      {"centered": True, "alpha": 0.95}]),
          # a group's initial_accumulator_value is ignored by torch: the constructor's fills all
          "Adagrad": ({"lr": 0.1, "initial_accumulator_value": 0.5},
                      [{"lr": 0.05, "lr_decay": 0.1, "initial_accumulator_value": 0.0},
                       {"weight_decay": 0.1, "eps": 1e-5}])}
NAMES = ["RMSprop", "Adagrad"]


def assert_state_matches(topt, eopt):
    """Every state tensor (``step`` with its dtype) agrees with torch's."""
    tsd, esd = topt.state_dict()["state"], eopt.state_dict()["state"]
    assert sorted(tsd) == sorted(esd)
    for k in tsd:
        assert sorted(tsd[k]) == sorted(esd[k])
        for key, t in tsd[k].items():
            e = esd[k][key]
            assert str(e.dtype)[-7:] == str(t.dtype)[-7:] and tuple(e.shape) == tuple(t.shape)
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)


def path_id(path):
    return ",".join(path) or "default"


@pytest.mark.parametrize("name, options, path", RUNS,
                         ids=[f"{n}-{o}-{path_id(p)}" for n, o, p in RUNS])
def test_matches_torch(name, options, path):
    assert_state_matches(*check_optimizer(name, {**options, **path}))


@pytest.mark.parametrize("name, path", [("RMSprop", p) for p in PATHS] + ADAGRAD_RUNS,
                         ids=lambda v: path_id(v) if isinstance(v, dict) else v)
def test_tensor_lr_and_groups(name, path):
    check_optimizer(name, {**TENSOR_LR[name], **path})
    base, groups = GROUPS[name]
    assert_state_matches(*check_optimizer(name, {**base, **path}, groups=groups))


@pytest.mark.parametrize("name, options, path", [r for r in RUNS if r[1] in (RMSPROP[3], ADAGRAD[1])], ids=lambda v: path_id(v) if isinstance(v, dict) else str(v))
def test_float64(name, options, path):
    check_optimizer(name, {**options, **path}, dtype=torch.float64, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name, options, path", [r for r in RUNS if r[1] in (RMSPROP[3], ADAGRAD[1])], ids=lambda v: path_id(v) if isinstance(v, dict) else str(v))
def test_state_dict_crosses_between_frameworks(name, options, path):
    check_state_dict_crossing(name, {**options, **path})


def test_closure_loss_is_returned():
    check_optimizer("RMSprop", {"lr": 0.001, "momentum": 0.9}, closure=True, steps=5)
    check_optimizer("Adagrad", {"lr": 0.1}, closure=True, steps=5)


def differentiable_results(name, kwargs, steps):
    """Steps of ``differentiable=True`` on a clone of a leaf with gradients built from
    another leaf; then the values and the gradients of both leaves, in each framework."""
    rng = np.random.default_rng(0)
    w0, g0, g1 = (rng.standard_normal(5) for _ in range(3))
    out = []
    for lib, optim in ((torch, torch.optim), (ec, eoptim)):
        w = lib.tensor(w0, dtype=lib.float64, requires_grad=True)
        gw = lib.tensor(g0, dtype=lib.float64, requires_grad=True)
        p = w.clone()
        opt = getattr(optim, name)([p], differentiable=True, **kwargs)
        for g in (gw * 1.0, gw * lib.tensor(g1, dtype=lib.float64))[:steps]:
            p.grad = g
            opt.step()
        (p ** 2).sum().backward()
        out.append([p.detach().numpy().copy(), w.grad.numpy().copy(), gw.grad.numpy().copy()])
    return out


@pytest.mark.parametrize("name, kwargs, steps", [
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 0.1}, 1),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.1, "maximize": True}, 2),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.1, "weight_decay": 0.1}, 2),
])
def test_differentiable_step_backpropagates_as_torch(name, kwargs, steps):
    theirs, ours = differentiable_results(name, kwargs, steps)
    assert np.abs(theirs[2]).max() > 0  # the step really depends on the gradient's graph
    for t, e in zip(theirs, ours):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-15)


def raised(lib, optim, name, kwargs, step=False):
    p = torch.nn.Parameter(torch.ones(2)) if lib is torch else enn.Parameter(ec.ones(2))
    try:
        opt = getattr(optim, name)([p], **kwargs)
        if step:
            p.grad = lib.ones(2)
            opt.step()
    except Exception as error:  # noqa: BLE001 - the error itself is compared
        return error
    raise AssertionError(f"{name}({kwargs}) raised nothing")


def assert_raises_as_torch(name, kwargs, step=False):
    theirs = raised(torch, torch.optim, name, kwargs, step)
    ours = raised(ec, eoptim, name, to_ember_kwargs(kwargs), step)
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs)


def to_ember_kwargs(kwargs):
    return {k: ec.tensor(v.numpy()) if isinstance(v, torch.Tensor) else v
            for k, v in kwargs.items()}


@pytest.mark.parametrize("name, kwargs", [
    ("RMSprop", {"lr": -0.1}), ("RMSprop", {"lr": torch.tensor([0.1, 0.2])}),
    ("RMSprop", {"eps": -1e-8}), ("RMSprop", {"momentum": -0.5}),
    ("RMSprop", {"weight_decay": -1}), ("RMSprop", {"alpha": -0.9}),
    ("Adagrad", {"lr": -0.1}), ("Adagrad", {"lr": torch.tensor([0.1, 0.2])}),
    ("Adagrad", {"lr_decay": -1}), ("Adagrad", {"weight_decay": -0.1}),
    ("Adagrad", {"initial_accumulator_value": -0.5}), ("Adagrad", {"eps": -1e-10}),
    ("Adagrad", {"fused": True, "foreach": True}),
    ("Adagrad", {"fused": True, "differentiable": True}),
])
def test_bad_options_raise_as_torch(name, kwargs):
    assert_raises_as_torch(name, kwargs)


@pytest.mark.parametrize("path", PATHS, ids=PATH_IDS)
def test_capturable_on_cpu_raises_as_torch(path):
    assert_raises_as_torch("RMSprop", {"capturable": True, **path}, step=True)


def test_foreach_refuses_differentiable_as_torch():
    assert_raises_as_torch("RMSprop", {"foreach": True, "differentiable": True}, step=True)
    assert_raises_as_torch("Adagrad", {"foreach": True, "differentiable": True}, step=True)


def test_adagrad_state_exists_before_the_first_step_as_torch():
    topt = torch.optim.Adagrad([torch.nn.Parameter(torch.ones(3))],
                               initial_accumulator_value=0.25)
    eopt = eoptim.Adagrad([enn.Parameter(ec.ones(3))], initial_accumulator_value=0.25)
    tsd, esd = topt.state_dict(), eopt.state_dict()
    assert sorted(esd["state"][0]) == sorted(tsd["state"][0]) == ["step", "sum"]
    assert esd["state"][0]["step"].dtype == ec.float32 and esd["state"][0]["step"].dim() == 0
    np.testing.assert_array_equal(esd["state"][0]["sum"].numpy(), tsd["state"][0]["sum"].numpy())


def complex_run(lib, optim, name, kwargs, steps):
    """``steps`` steps over a complex parameter, a 0-d complex one and a real one in one
    group, with fixed gradients: the parameters and the state dict's tensors."""
    g = np.random.RandomState(3)
    values = [g.randn(3, 2) + 1j * g.randn(3, 2), np.array(0.5 - 0.25j), g.randn(4)]
    grads = [[g.randn(*v.shape) + 1j * g.randn(*v.shape) if v.dtype.kind == "c"
              else g.randn(*v.shape) for v in values] for _ in range(steps)]
    dtypes = [lib.complex64, lib.complex64, lib.float32]
    ps = [lib.tensor(v, dtype=d, requires_grad=True) for v, d in zip(values, dtypes)]
    opt = getattr(optim, name)(ps, **kwargs)
    for step_grads in grads:
        for p, gr, d in zip(ps, step_grads, dtypes):
            p.grad = lib.tensor(gr, dtype=d)
        opt.step()
    state = {(k, key): v.numpy().copy()
             for k, s in opt.state_dict()["state"].items() for key, v in s.items()}
    return [p.detach().numpy().copy() for p in ps], state


def check_complex_as_torch(name, kwargs, steps=20):
    """torch steps complex parameters (and their state) through ``view_as_real``: the same
    real arithmetic, so both components of every state tensor agree too."""
    (t_params, t_state) = complex_run(torch, torch.optim, name, kwargs, steps)
    (e_params, e_state) = complex_run(ec, eoptim, name, kwargs, steps)
    for e, t in zip(e_params, t_params):
        assert e.dtype == t.dtype and e.shape == t.shape
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)
    assert sorted(e_state) == sorted(t_state)
    for key, t in t_state.items():
        e = e_state[key]
        assert e.dtype == t.dtype and e.shape == t.shape, key
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6, err_msg=str(key))


COMPLEX = [("RMSprop", RMSPROP[0]), ("RMSprop", RMSPROP[3]), ("RMSprop", RMSPROP[4]),
           ("Adagrad", ADAGRAD[1]), ("Adagrad", ADAGRAD[3])]


@pytest.mark.parametrize("path", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("name, options", COMPLEX, ids=[f"{n}-{o}" for n, o in COMPLEX])
def test_complex_parameters_as_torch(name, options, path):
    check_complex_as_torch(name, {**options, **path})


def test_adagrad_fused_refuses_complex_parameters_as_torch():
    errors = []
    for lib, optim in ((torch, torch.optim), (ec, eoptim)):
        p = lib.zeros(2, dtype=lib.complex64, requires_grad=True)
        p.grad = lib.ones(2, dtype=lib.complex64)
        try:
            optim.Adagrad([p], fused=True).step()
        except RuntimeError as error:
            errors.append(error)
    assert len(errors) == 2 and type(errors[1]) is type(errors[0])
    assert str(errors[1]).startswith("`fused=True` requires all the params to be floating "
                                     "point Tensors of supported devices: ")
    # the list of devices with fused kernels is Ember's own; the rest is torch's message
    assert str(errors[1]).split("] but ")[1] == str(errors[0]).split("] but ")[1]
