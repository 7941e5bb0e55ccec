"""A transformer block's training step written from tensor primitives (no nn yet), run with
Ember and with torch from the same weights: the loss and every gradient must agree."""

import math

import numpy as np
import pytest
import torch

import ember

B, T, C, H, V = 2, 5, 8, 2, 11


def weights(lib):
    rng = np.random.default_rng(0)

    def w(*shape, scale=0.2):
        return lib.tensor((rng.standard_normal(shape) * scale).astype(np.float32),
                          requires_grad=True)

    return {"wte": w(V, C), "wpe": w(T, C), "ln_w": w(C, scale=1.0), "ln_b": w(C),
            "attn": w(C, 3 * C), "proj": w(C, C), "fc": w(C, 4 * C), "out": w(4 * C, C),
            "head": w(C, V)}


def loss_of(lib, p, idx, targets):
    x = p["wte"][idx] + p["wpe"][lib.arange(T)]
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    x_ln = (x - mu) / lib.sqrt(var + 1e-5) * p["ln_w"] + p["ln_b"]
    q, k, v = (x_ln @ p["attn"]).split(C, dim=2)
    q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // H))
    mask = lib.tril(lib.ones(T, T)).view(1, 1, T, T)
    att = att.masked_fill(mask == 0, float("-inf")).softmax(dim=-1)
    y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
    x = x + y @ p["proj"]
    h = x @ p["fc"]
    x = x + (0.5 * h * (1 + lib.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h ** 3)))) @ p["out"]
    logits = x @ p["head"]
    logp = logits.view(-1, V).log_softmax(-1)
    return -logp.gather(1, targets.view(-1, 1)).mean()


@pytest.mark.parametrize("steps", [1, 3])
def test_training_steps_match_torch(steps):
    rng = np.random.default_rng(1)
    idx_np = rng.integers(0, V, (B, T))
    tgt_np = rng.integers(0, V, (B, T))
    results = {}
    for lib in (ember, torch):
        p = weights(lib)
        idx, tgt = lib.tensor(idx_np), lib.tensor(tgt_np)
        losses = []
        for _ in range(steps):
            loss = loss_of(lib, p, idx, tgt)
            loss.backward()
            with lib.no_grad():
                for w in p.values():
                    w.add_(w.grad, alpha=-0.1)
                    w.grad.zero_()
            losses.append(loss.item())
        results[lib.__name__] = (losses, {k: np.asarray(v.detach()) for k, v in p.items()})
    (e_losses, e_params), (t_losses, t_params) = results["ember"], results["torch"]
    np.testing.assert_allclose(e_losses, t_losses, rtol=1e-5)
    for name in e_params:
        np.testing.assert_allclose(e_params[name], t_params[name], rtol=1e-4, atol=1e-6,
                                   err_msg=name)
