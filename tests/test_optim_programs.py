"""Whole training programs with ember.optim: the models of ``nn_models`` trained in Ember
(``import ember as torch``) and in torch from the same initial weights, each with an
optimizer, a learning-rate schedule and gradient clipping as public programs use them; the
losses must agree step by step and the weights at the end."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from nn_models import cnn, gpt, lstm_lm

import ember


def _gpt_adamw(lib, model):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    opt = lib.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                           {"params": rest, "weight_decay": 0.0}], lr=3e-3, betas=(0.9, 0.95))
    return opt, lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6)


def _cnn_sgd(lib, model):
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True,
                        weight_decay=5e-4)
    return opt, lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=6)


def _lstm_adam(lib, model):
    opt = lib.optim.Adam(model.parameters(), lr=1e-2, amsgrad=True)
    return opt, lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)


PROGRAMS = {
    "gpt adamw cosine": (lambda lib: gpt(lib, vocab=23, block=16, layers=2, heads=2,
                                         width=32, batch=4), _gpt_adamw),
    "cnn sgd onecycle": (lambda lib: cnn(lib, batch=8, size=16), _cnn_sgd),
    "lstm adam step": (lambda lib: lstm_lm(lib, vocab=20, embed=16, hidden=24, batch=4,
                                           seq=10), _lstm_adam),
}


def _train(lib, model, data, make_optimizer, steps=6):
    opt, sched = make_optimizer(lib, model)
    losses = []
    for _ in range(steps):
        loss = model.loss(lib, *data())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
    return losses, sched.get_last_lr()


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_training_with_an_optimizer_matches_torch(name):
    build, make_optimizer = PROGRAMS[name]
    torch.manual_seed(0)
    tmodel, tdata = build(torch)
    emodel, edata = build(ember)
    emodel.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tmodel.state_dict().items()})
    t_losses, t_lr = _train(torch, tmodel, tdata, make_optimizer)
    e_losses, e_lr = _train(ember, emodel, edata, make_optimizer)
    assert t_losses[-1] < t_losses[0]  # the program trains
    np.testing.assert_allclose(e_losses, t_losses, rtol=2e-4, atol=1e-5)
    np.testing.assert_allclose(e_lr, t_lr, rtol=1e-12)
    for (k, tv), (_, ev) in zip(tmodel.state_dict().items(), emodel.state_dict().items()):
        np.testing.assert_allclose(ev.numpy(), tv.numpy(), rtol=1e-3, atol=1e-5, err_msg=k)


def _mixed_precision(lib, model, x, y, steps=12, inf_at=5):
    """A float16 autocast region with a GradScaler, the scaler's growth every 4 clean steps;
    at step ``inf_at`` the loss is multiplied by inf, so the scaler skips that step and
    backs off."""
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=4)
    losses, scales, weights = [], [], []
    for step in range(steps):
        with lib.autocast("cpu", dtype=lib.float16):
            out = model(x)
            assert out.dtype == lib.float16
            loss = lib.nn.functional.mse_loss(out, y)  # float32 under autocast
        if step == inf_at:
            loss = loss * float("inf")
        opt.zero_grad(set_to_none=True)
        before = model[0].weight.detach().clone()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
        scales.append(scaler.get_scale())
        weights.append(bool((model[0].weight.detach() == before).all()))
    return losses, scales, weights


def test_mixed_precision_training_with_a_grad_scaler_matches_torch():
    torch.manual_seed(0)
    tmodel = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(),
                                 torch.nn.Linear(32, 4))
    emodel = ember.nn.Sequential(ember.nn.Linear(16, 32), ember.nn.Tanh(),
                                 ember.nn.Linear(32, 4))
    emodel.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tmodel.state_dict().items()})
    x, y = torch.randn(64, 16), torch.randn(64, 4)
    t_losses, t_scales, t_unchanged = _mixed_precision(torch, tmodel, x, y)
    e_losses, e_scales, e_unchanged = _mixed_precision(
        ember, emodel, ember.tensor(x.numpy()), ember.tensor(y.numpy()))
    clean = [i for i, v in enumerate(t_losses) if np.isfinite(v)]
    assert t_losses[clean[-1]] < t_losses[0] and e_losses[clean[-1]] < e_losses[0]  # trains
    # the forced inf: the step skipped (weights unchanged), the scale halved, as in torch
    assert e_unchanged == t_unchanged and e_unchanged[5] and not any(e_unchanged[:5])
    assert e_scales == t_scales and e_scales[5] == e_scales[4] / 2
    np.testing.assert_allclose([e_losses[i] for i in clean], [t_losses[i] for i in clean],
                               rtol=2e-3)
