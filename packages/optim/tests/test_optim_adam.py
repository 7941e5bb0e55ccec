"""Adam and AdamW against torch.optim: every path, option combinations, tensor lr and betas,
groups, float64, state dicts, capturable and differentiable steps, complex parameters,
gradient scaling on the fused path, errors. The helpers here serve
test_optim_adam_family.py too."""

import importlib

import numpy as np
import pytest
import torch
from optim_oracle import check_optimizer, check_state_dict_crossing, to_ember

import ember.core as ec
import ember.optim as eoptim
import ember.optim.paths as epaths

PATHS = [{"foreach": False}, {"foreach": True}, {"fused": True}, {}]
UNFUSED_PATHS = [{"foreach": False}, {"foreach": True}, {}]
NAMES = ["Adam", "AdamW"]
OPTIONS = [
    {"lr": 0.01},
    {"lr": 0.02, "betas": (0.8, 0.99), "eps": 1e-6},
    {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True},
    {"lr": 0.01, "weight_decay": 0.05, "maximize": True},
    {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True, "maximize": True},
    {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
]


def path_id(path):
    return ",".join(path) or "default"


def options_for(name, options):
    """AdamW takes no ``decoupled_weight_decay`` (it is always on)."""
    return {k: v for k, v in options.items() if not (name == "AdamW" and
                                                     k == "decoupled_weight_decay")}


@pytest.fixture
def capturable_on_cpu(monkeypatch):
    """Both frameworks let ``capturable=True`` run on the CPU, so that its step math can be
    compared (torch's own CPU refusal is tested separately)."""
    for module in ("adam", "adamax", "nadam", "radam"):
        monkeypatch.setattr(importlib.import_module(f"torch.optim.{module}"),
                            "_get_capturable_supported_devices",
                            lambda supports_xla=True: ["cpu"])
    monkeypatch.setattr(epaths, "CAPTURABLE_DEVICES", ["cpu"])


def assert_same_error(run):
    """``run(lib, optim)`` raises in torch and in Ember: the same type and message."""
    errors = []
    for lib, optim in ((torch, torch.optim), (ec, eoptim)):
        with pytest.raises(Exception) as info:
            run(lib, optim)
        errors.append(info.value)
    assert type(errors[1]) is type(errors[0])
    assert str(errors[1]) == str(errors[0])


def construct(name, kwargs):
    """A ``run`` for ``assert_same_error`` building the optimizer over a parameter with a
    gradient, then stepping it."""
    def run(lib, optim):
        p = lib.ones(2, requires_grad=True)
        p.grad = lib.ones(2)
        getattr(optim, name)([p], **(kwargs if lib is torch else to_ember(kwargs))).step()
    return run


def differentiable_results(lib, optim, name, kwargs, steps):
    """``steps`` differentiable steps of a parameter cloned from a leaf with a gradient that
    requires grad; the updated parameter and the gradients of both leaves."""
    g = np.random.RandomState(0)
    w0, g0, c = g.randn(5), g.randn(5), g.randn(5)
    w, grad = lib.tensor(w0, requires_grad=True), lib.tensor(g0, requires_grad=True)
    p = w.clone()
    p.grad = grad
    opt = getattr(optim, name)([p], differentiable=True, **kwargs)
    for _ in range(steps):
        opt.step()
    (p * lib.tensor(c)).sum().backward()
    return p.detach().numpy(), w.grad.numpy(), grad.grad.numpy()


def check_differentiable(name, kwargs, steps):
    expected = differentiable_results(torch, torch.optim, name, kwargs, steps)
    actual = differentiable_results(ec, eoptim, name, kwargs, steps)
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12)


def check_complex(name, kwargs):
    """Complex parameters (a 0-d one too) with fixed gradients, stepped in both."""
    g = np.random.RandomState(3)
    values = [g.randn(3, 2) + 1j * g.randn(3, 2), np.array(0.5 - 0.25j)]
    grads = [[g.randn(*v.shape) + 1j * g.randn(*v.shape) for v in values] for _ in range(5)]
    results = []
    for lib, optim in ((torch, torch.optim), (ec, eoptim)):
        ps = [lib.tensor(v, dtype=lib.complex64, requires_grad=True) for v in values]
        opt = getattr(optim, name)(ps, **kwargs)
        for step_grads in grads:
            for p, gr in zip(ps, step_grads):
                p.grad = lib.tensor(gr, dtype=lib.complex64)
            opt.step()
        results.append([p.detach().numpy() for p in ps])
    for a, e in zip(results[1], results[0]):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)


def check_state_steps(name, kwargs):
    """The ``step`` counters are kept as torch keeps them: dtype, shape, device."""
    results = []
    for lib, optim in ((torch, torch.optim), (ec, eoptim)):
        p = lib.ones(2, requires_grad=True)
        p.grad = lib.ones(2)
        opt = getattr(optim, name)([p], **kwargs)
        opt.step()
        results.append({k: (str(v.dtype)[-7:], tuple(v.shape), v.device.type, float(v))
                        for k, v in opt.state[p].items() if v.dim() == 0})
    assert results[1] == results[0]


# ------------------------------------------------------------------------------------ tests

@pytest.mark.parametrize("path", PATHS, ids=path_id)
@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("name", NAMES)
def test_adam_matches_torch(name, options, path):
    check_optimizer(name, {**options_for(name, options), **path})


@pytest.mark.parametrize("path", [{"foreach": False}, {"fused": True}, {}], ids=path_id)
@pytest.mark.parametrize("name", NAMES)
def test_adam_tensor_lr_and_betas(name, path):
    check_optimizer(name, {"lr": torch.tensor(0.01), "weight_decay": 0.1, **path})
    check_optimizer(name, {"lr": torch.tensor([0.02]), "amsgrad": True,
                           "betas": (torch.tensor(0.8), torch.tensor([0.95])), **path})


@pytest.mark.parametrize("path", PATHS, ids=path_id)
@pytest.mark.parametrize("name", NAMES)
def test_adam_groups_with_own_options(name, path):
    check_optimizer(name, {"lr": 0.01, **path},
                    groups=[{"lr": 0.03, "amsgrad": True}, {"betas": (0.5, 0.9)},
                            {"weight_decay": 0.2, "eps": 1e-4}], closure=True)


@pytest.mark.parametrize("path", PATHS, ids=path_id)
@pytest.mark.parametrize("name", NAMES)
def test_adam_float64(name, path):
    check_optimizer(name, {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True, **path},
                    dtype=torch.float64, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("path", PATHS, ids=path_id)
@pytest.mark.parametrize("name", NAMES)
def test_adam_state_dict_crosses_between_frameworks(name, path):
    check_state_dict_crossing(name, {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1, **path})


@pytest.mark.parametrize("path", UNFUSED_PATHS, ids=path_id)
@pytest.mark.parametrize("options", [
    {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True},
    {"lr": torch.tensor(0.01), "maximize": True, "weight_decay": 0.1},
    {"lr": torch.tensor(0.01), "betas": (torch.tensor(0.8), torch.tensor(0.95))},
], ids=str)
@pytest.mark.parametrize("name", NAMES)
def test_adam_capturable_steps_match_torch(name, options, path, capturable_on_cpu):
    check_optimizer(name, {**options, **path, "capturable": True})


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_adam_capturable_refused_on_cpu_as_torch(name, foreach):
    assert_same_error(construct(name, {"capturable": True, "foreach": foreach}))


@pytest.mark.parametrize("kwargs, steps", [
    ({"lr": 0.1}, 3), ({"lr": 0.1, "weight_decay": 0.1, "maximize": True}, 3),
    ({"lr": 0.1, "amsgrad": True}, 1),
], ids=str)
@pytest.mark.parametrize("name", NAMES)
def test_adam_differentiable_step_has_torch_gradients(name, kwargs, steps):
    check_differentiable(name, kwargs, steps)


@pytest.mark.parametrize("path", UNFUSED_PATHS, ids=path_id)
@pytest.mark.parametrize("name", NAMES)
def test_adam_complex_parameters(name, path):
    check_complex(name, {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1, **path})


@pytest.mark.parametrize("default_dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("path", PATHS + [{"capturable": True, "fused": True}], ids=path_id)
def test_adam_step_state_kept_as_torch(path, default_dtype):
    torch.set_default_dtype(default_dtype)
    ec.set_default_dtype(getattr(ec, str(default_dtype)[6:]))
    try:
        check_state_steps("Adam", path)
    finally:
        torch.set_default_dtype(torch.float32)
        ec.set_default_dtype(ec.float32)


@pytest.mark.parametrize("found_inf", [0.0, 1.0])
@pytest.mark.parametrize("name", NAMES)
def test_adam_fused_gradient_scaling(name, found_inf):
    """What GradScaler hands a fused step: gradients unscaled, the step skipped (and its
    count kept) where an inf was found."""
    from optim_oracle import Pair, assert_params_close
    pair = Pair()
    topt = getattr(torch.optim, name)(pair.torch_params, lr=0.01, fused=True)
    eopt = getattr(eoptim, name)(pair.ember_params, lr=0.01, fused=True)
    for step in range(3):
        for opt, loss in ((topt, pair.torch_loss), (eopt, pair.ember_loss)):
            opt.zero_grad()
            (loss() * 4.0).backward()
            lib = torch if opt is topt else ec
            opt.grad_scale = lib.tensor(4.0)
            opt.found_inf = lib.tensor(found_inf if step == 1 else 0.0)
            opt.step()
        assert_params_close(pair, step)
    tp, ep = pair.torch_params[0], pair.ember_params[0]
    assert float(eopt.state[ep]["step"]) == float(topt.state[tp]["step"])


@pytest.mark.parametrize("kwargs", [
    {"lr": -0.1}, {"eps": -1e-3}, {"betas": (1.5, 0.9)}, {"betas": (0.9, 1.0)},
    {"betas": (-0.1, 0.9)}, {"weight_decay": -0.5},
    {"betas": (0.9, torch.tensor(0.99))}, {"betas": (0, 0.99)},
    {"lr": torch.tensor(0.01), "foreach": True},
    {"lr": torch.tensor([0.01, 0.02])},
    {"betas": (torch.tensor(0.9), torch.tensor(0.99)), "foreach": True},
    {"betas": (torch.tensor([0.9, 0.8]), torch.tensor(0.99)), "capturable": True},
    {"betas": (torch.tensor(0.9), torch.tensor([0.9, 0.8])), "capturable": True},
    {"fused": True, "foreach": True}, {"fused": True, "differentiable": True},
], ids=str)
@pytest.mark.parametrize("name", NAMES)
def test_adam_bad_options_raise_as_torch(name, kwargs):
    assert_same_error(construct(name, kwargs))


def test_adam_tensor_lr_set_later_refused_on_foreach_as_torch():
    def run(lib, optim):
        p = lib.ones(2, requires_grad=True)
        p.grad = lib.ones(2)
        opt = optim.Adam([p], lr=0.01, foreach=True)
        opt.param_groups[0]["lr"] = lib.tensor(0.01)
        opt.step()
    assert_same_error(run)


@pytest.mark.parametrize("dtype", ["int64", "complex64"])
@pytest.mark.parametrize("name", NAMES)
def test_adam_fused_refuses_other_than_real_floating_parameters_as_torch(name, dtype):
    for lib, optim in ((torch, torch.optim), (ec, eoptim)):
        q = lib.ones(2, dtype=getattr(lib, dtype))
        q.grad = lib.ones(2, dtype=getattr(lib, dtype))
        opt = getattr(optim, name)([q], lr=0.1, fused=True)
        with pytest.raises(RuntimeError, match=r"`fused=True` requires all the params to be "
                                               r"floating point Tensors of supported devices: "
                                               rf"\[.*'cpu'.*\] but (torch|ember).{dtype} and "
                                               r"cpu"):
            opt.step()


def test_adamw_is_an_adam_with_decoupled_decay():
    p = ec.ones(2, requires_grad=True)
    opt = eoptim.AdamW([p])
    assert isinstance(opt, eoptim.Adam)
    assert opt.defaults["decoupled_weight_decay"] is True
    assert opt.defaults["weight_decay"] == 1e-2
    assert sorted(opt.defaults) == sorted(torch.optim.AdamW([torch.ones(2)]).defaults)


def test_adam_functional_matches_class():
    """ember.optim.adam.adam, called as torch.optim.adam.adam is."""
    from torch.optim.adam import adam as tadam
    from torch.optim.adamw import adamw as tadamw

    from ember.optim.adam import adam
    from ember.optim.adamw import adamw
    g = np.random.RandomState(1)
    arrays = [g.randn(4, 3) for _ in range(3)]
    out = []
    for lib, fn in ((torch, tadam), (ec, adam), (torch, tadamw), (ec, adamw)):
        p, grad = lib.tensor(arrays[0]), lib.tensor(arrays[1])
        m, v, vmax = lib.zeros(4, 3, dtype=lib.float64), lib.tensor(arrays[2] ** 2), \
            lib.zeros(4, 3, dtype=lib.float64)
        fn([p], [grad], [m], [v], [vmax], [lib.tensor(2.0)], foreach=False, amsgrad=True,
           beta1=0.9, beta2=0.99, lr=0.1, weight_decay=0.1, eps=1e-8, maximize=False)
        out.append(p.numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-12)
    np.testing.assert_allclose(out[3], out[2], rtol=1e-12)
