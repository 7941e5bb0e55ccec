"""ember.optim.swa_utils against torch.optim.swa_utils: the same model trained by SGD in both,
averaged (SWA, EMA, per-tensor and multi-tensor averaging, with and without buffers), the
SWALR learning rates, and the batch-norm statistics update_bn recomputes."""

import warnings

import numpy as np
import pytest
import torch
import torch.optim.lr_scheduler as TL
import torch.optim.swa_utils as TS
from optim_oracle import lrs, to_ember, to_torch

import ember.core as ec
import ember.nn as enn
import ember.optim as eoptim
import ember.optim.lr_scheduler as EL
import ember.optim.swa_utils as ES
from ember.utils.data import DataLoader, TensorDataset

STEPS = 20


def models(seed=0):
    """The same MLP with a batch norm in torch and in Ember, and a batch of data."""
    torch.manual_seed(seed)
    t = torch.nn.Sequential(torch.nn.Linear(5, 6), torch.nn.BatchNorm1d(6), torch.nn.Tanh(),
                            torch.nn.Linear(6, 3))
    e = enn.Sequential(enn.Linear(5, 6), enn.BatchNorm1d(6), enn.Tanh(), enn.Linear(6, 3))
    e.load_state_dict(to_ember(t.state_dict()))
    g = torch.Generator().manual_seed(seed + 1)
    x, y = torch.randn(16, 5, generator=g), torch.randn(16, 3, generator=g)
    return t, e, x, y


def sgd_step(lib, model, opt, x, y, i):
    opt.zero_grad()
    rows = slice(i % 2 * 8, i % 2 * 8 + 8)
    ((model(x[rows]) - y[rows]) ** 2).mean().backward()
    opt.step()


def assert_close(e, t, what):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6,
                               err_msg=what)


def assert_same_state(eavg, tavg):
    tstate = tavg.state_dict()
    estate = eavg.state_dict()
    assert list(estate) == list(tstate)
    for k in tstate:
        assert estate[k].dtype == to_ember(tstate[k]).dtype, k
        assert_close(estate[k], tstate[k], k)


AVERAGES = [
    ("swa", lambda S: {}),
    ("swa-avg-fn", lambda S: {"avg_fn": S.get_swa_avg_fn()}),
    ("swa-multi", lambda S: {"multi_avg_fn": S.get_swa_multi_avg_fn()}),
    ("ema-avg-fn", lambda S: {"avg_fn": S.get_ema_avg_fn(0.9)}),
    ("ema-multi", lambda S: {"multi_avg_fn": S.get_ema_multi_avg_fn(0.8)}),
    ("custom", lambda S: {"avg_fn": lambda a, m, n: a * 0.25 + m * 0.75}),
]


# (SWA's multi-tensor average of the integer num_batches_tracked raises: tested below)
@pytest.mark.parametrize("average, use_buffers", [
    (a, b) for name, a in AVERAGES for b in (False, True) if (name, b) != ("swa-multi", True)])
def test_averaged_model_matches_torch(average, use_buffers):
    t, e, x, y = models()
    ex, ey = to_ember(x), to_ember(y)
    tavg = TS.AveragedModel(t, use_buffers=use_buffers, **average(TS))
    eavg = ES.AveragedModel(e, use_buffers=use_buffers, **average(ES))
    topt = torch.optim.SGD(t.parameters(), lr=0.05, momentum=0.9)
    eopt = eoptim.SGD(e.parameters(), lr=0.05, momentum=0.9)
    for i in range(STEPS):
        sgd_step(torch, t, topt, x, y, i)
        sgd_step(ec, e, eopt, ex, ey, i)
        if i % 3 == 0:
            tavg.update_parameters(t)
            eavg.update_parameters(e)
            assert_same_state(eavg, tavg)
    assert int(eavg.n_averaged) == int(tavg.n_averaged) == 7
    tavg.eval(), eavg.eval()
    assert_close(eavg(ex), tavg(x), "averaged model's output")
    # the averaged copy is its own: the model's weights are untouched by averaging
    assert eavg.module[0].weight is not e[0].weight


def test_swa_multi_avg_with_integer_buffers_raises_as_torch():
    messages = []
    for S, model in ((TS, models()[0]), (ES, models()[1])):
        avg = S.AveragedModel(model, multi_avg_fn=S.get_swa_multi_avg_fn(), use_buffers=True)
        avg.update_parameters(model)
        with pytest.raises(RuntimeError) as info:
            avg.update_parameters(model)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("batches", ["tuples", "tensors"])
@pytest.mark.parametrize("was_training", [True, False])
def test_update_bn_matches_torch(batches, was_training):
    t, e, x, y = models(seed=3)
    tavg, eavg = TS.AveragedModel(t), ES.AveragedModel(e)
    topt = torch.optim.SGD(t.parameters(), lr=0.1)
    eopt = eoptim.SGD(e.parameters(), lr=0.1)
    ex, ey = to_ember(x), to_ember(y)
    for i in range(6):
        sgd_step(torch, t, topt, x, y, i)
        sgd_step(ec, e, eopt, ex, ey, i)
        tavg.update_parameters(t)
        eavg.update_parameters(e)
    data = torch.randn(20, 5, generator=torch.Generator().manual_seed(7)) * 2 + 1
    if batches == "tuples":
        tloader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data, data), 6)
        eloader = DataLoader(TensorDataset(to_ember(data), to_ember(data)), 6)
    else:
        tloader, eloader = list(data.split(6)), [to_ember(b) for b in data.split(6)]
    for model in (tavg, eavg):
        model.train(was_training)
        model.module[1].momentum = 0.3
    TS.update_bn(tloader, tavg)
    ES.update_bn(eloader, eavg)
    tbn, ebn = tavg.module[1], eavg.module[1]
    assert_close(ebn.running_mean, tbn.running_mean, "running_mean")
    assert_close(ebn.running_var, tbn.running_var, "running_var")
    assert int(ebn.num_batches_tracked) == int(tbn.num_batches_tracked) == 4
    assert ebn.momentum == 0.3 and eavg.training is was_training
    ES.update_bn(eloader, enn.Linear(5, 2))  # no batch norm: nothing to do


SWALRS = [
    ("cos", {"swa_lr": 0.01}, None),
    ("linear", {"swa_lr": 0.02, "anneal_epochs": 5, "anneal_strategy": "linear"}, None),
    ("no-anneal", {"swa_lr": 0.03, "anneal_epochs": 0}, None),
    ("one-epoch", {"swa_lr": 0.005, "anneal_epochs": 1, "anneal_strategy": "linear"}, None),
    ("groups", {"swa_lr": [0.01, 0.2], "anneal_epochs": 7}, [{"lr": 0.1}, {"lr": 0.05}]),
]


def swalr_pair(kwargs, groups, lr=0.1):
    tparams = [torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(3))]
    eparams = [enn.Parameter(to_ember(p.detach())) for p in tparams]
    if groups:
        tparams = [{"params": [p], **g} for p, g in zip(tparams, groups)]
        eparams = [{"params": [p], **g} for p, g in zip(eparams, groups)]
    topt = torch.optim.SGD(tparams, lr=lr)
    eopt = eoptim.SGD(eparams, lr=to_ember(lr))
    return topt, eopt, TS.SWALR(topt, **kwargs), ES.SWALR(eopt, **kwargs)


@pytest.mark.parametrize("kwargs, groups", [s[1:] for s in SWALRS], ids=[s[0] for s in SWALRS])
def test_swalr_matches_torch(kwargs, groups):
    topt, eopt, tsched, esched = swalr_pair(kwargs, groups)
    assert lrs(eopt) == lrs(topt)
    for i in range(STEPS):
        topt.step(), eopt.step()
        tsched.step(), esched.step()
        assert lrs(eopt) == lrs(topt), i
        assert esched.get_last_lr() == tsched.get_last_lr()
        if i == STEPS // 2:
            sd = esched.state_dict()
            assert "anneal_func" not in sd and sd.keys() == tsched.state_dict().keys()
            tsched.load_state_dict(to_torch(sd))
            esched.load_state_dict(to_ember(tsched.state_dict()))


def test_swalr_after_cosine_annealing_and_tensor_lr():
    for lr in (0.1, torch.tensor(0.1)):
        topt, eopt, tswa, eswa = swalr_pair({"swa_lr": 0.02, "anneal_epochs": 4}, None, lr)
        tcos, ecos = TL.CosineAnnealingLR(topt, 10), EL.CosineAnnealingLR(eopt, 10)
        for i in range(STEPS):
            topt.step(), eopt.step()
            (tswa if i >= 8 else tcos).step()
            (eswa if i >= 8 else ecos).step()
            assert lrs(eopt) == lrs(topt), i
        assert isinstance(eopt.param_groups[0]["lr"], ec.Tensor) == isinstance(lr, torch.Tensor)


ERRORS = [
    (lambda S, m, o: S.SWALR(o, 0.1, anneal_strategy="exp"), ValueError),
    (lambda S, m, o: S.SWALR(o, 0.1, anneal_epochs=-1), ValueError),
    (lambda S, m, o: S.SWALR(o, 0.1, anneal_epochs=2.5), ValueError),
    (lambda S, m, o: S.SWALR(o, [0.1, 0.2]), ValueError),
    (lambda S, m, o: S.get_ema_multi_avg_fn(1.5), ValueError),
    (lambda S, m, o: S.get_ema_avg_fn(-0.1), ValueError),
    (lambda S, m, o: S.AveragedModel(m, avg_fn=S.get_swa_avg_fn(),
                                     multi_avg_fn=S.get_swa_multi_avg_fn()), AssertionError),
]


@pytest.mark.parametrize("fn, exc", ERRORS)
def test_errors_as_torch(fn, exc):
    messages = []
    for S, model in ((TS, models()[0]), (ES, models()[1])):
        opt = (torch.optim if S is TS else eoptim).SGD(model.parameters(), lr=0.1)
        with pytest.raises(exc) as info:
            fn(S, model, opt)
        assert type(info.value) is exc
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_swalr_get_lr_outside_step_warns():
    for sched in swalr_pair({"swa_lr": 0.01}, None)[2:]:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            sched.get_lr()
        assert [str(w.message) for w in record] == [
            "To get the last learning rate computed by the scheduler, please use "
            "`get_last_lr()`."]
