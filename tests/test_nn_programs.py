"""Whole programs with ember.nn: the models of ``nn_models`` trained for several steps in
Ember (``import ember as torch``) and in torch from the same initial weights (torch's,
loaded through the state dict), with a plain SGD update; their losses must agree step by
step. Also per-sample gradients with ``vmap``, ``grad`` and ``functional_call``, as in
torch's tutorial."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from nn_models import cnn, gpt, lstm_lm, seq2seq, vae

import ember

MODELS = {
    "gpt": (lambda lib: gpt(lib, vocab=23, block=16, layers=2, heads=2, width=32, batch=4),
            0.5),
    "cnn": (lambda lib: cnn(lib, batch=8, size=16), 0.05),
    "lstm": (lambda lib: lstm_lm(lib, vocab=20, embed=16, hidden=24, batch=4, seq=10), 0.5),
    "lstm packed": (lambda lib: lstm_lm(lib, vocab=20, embed=16, hidden=24, batch=4, seq=10,
                                        packed=True), 0.5),
    "vae": (lambda lib: vae(lib), 0.01),
    "seq2seq": (lambda lib: seq2seq(lib), 0.1),
}


def _train(lib, model, data, lr, steps):
    losses = []
    for _ in range(steps):
        loss = model.loss(lib, *data())
        loss.backward()
        with lib.no_grad():
            for p in model.parameters():
                p.add_(p.grad, alpha=-lr)
        model.zero_grad()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("name", list(MODELS))
def test_training_matches_torch(name):
    build, lr = MODELS[name]
    torch.manual_seed(0)
    tmodel, tdata = build(torch)
    emodel, edata = build(ember)
    tstate = tmodel.state_dict()
    assert list(tstate) == list(emodel.state_dict())
    emodel.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tstate.items()})
    t_losses = _train(torch, tmodel, tdata, lr, steps=4)
    e_losses = _train(ember, emodel, edata, lr, steps=4)
    assert t_losses[-1] < t_losses[0]  # the program trains
    np.testing.assert_allclose(e_losses, t_losses, rtol=2e-4, atol=1e-5)
    for (k, tv), (_, ev) in zip(tmodel.state_dict().items(), emodel.state_dict().items()):
        np.testing.assert_allclose(ev.numpy(), tv.numpy(), rtol=1e-3, atol=1e-5, err_msg=k)


def _per_sample_grads(lib):
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 3))
    rng = np.random.default_rng(3)
    data = lib.tensor(rng.standard_normal((4, 6)).astype(np.float32))
    targets = lib.tensor(rng.integers(0, 3, 4))
    return model, data, targets


def _vmapped(lib, model, data, targets):
    F = lib.nn.functional
    func = lib.func
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        predictions = func.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return F.cross_entropy(predictions, target.unsqueeze(0))

    per_sample = func.vmap(func.grad(compute_loss), in_dims=(None, None, 0, 0))
    return per_sample(params, buffers, data, targets)


def test_per_sample_gradients_match_torch():
    tmodel, tdata, ttargets = _per_sample_grads(torch)
    emodel, edata, etargets = _per_sample_grads(ember)
    emodel.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tmodel.state_dict().items()})
    t = _vmapped(torch, tmodel, tdata, ttargets)
    e = _vmapped(ember, emodel, edata, etargets)
    assert list(t) == list(e)
    for k in t:
        np.testing.assert_allclose(e[k].numpy(), t[k].numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    # each sample's gradient is the gradient of its own loss
    loss = ember.nn.functional.cross_entropy(emodel(edata[1:2]), etargets[1:2])
    loss.backward()
    np.testing.assert_allclose(e["0.weight"][1].numpy(), emodel[0].weight.grad.numpy(),
                               rtol=1e-5, atol=1e-6)


def test_top_level_reaches_nn_and_data():
    assert ember.nn.Linear and ember.nn.functional.relu and ember.nn.init.normal_
    assert ember.utils.data.DataLoader and ember.nn.utils.clip_grad_norm_
    assert ember.func.functional_call is ember.nn.utils.stateless.functional_call
