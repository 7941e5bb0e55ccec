"""A GPT block written from tensor primitives (no nn yet), for whole-program tests that run
it with Ember and with torch: its weights, data, loss and an SGD training step."""

import math

import numpy as np

B, T, C, H, V = 2, 5, 8, 2, 11


def weights(lib):
    rng = np.random.default_rng(0)

    def w(*shape, scale=0.2):
        return lib.tensor((rng.standard_normal(shape) * scale).astype(np.float32),
                          requires_grad=True)

    return {"wte": w(V, C), "wpe": w(T, C), "ln_w": w(C, scale=1.0), "ln_b": w(C),
            "attn": w(C, 3 * C), "proj": w(C, C), "fc": w(C, 4 * C), "out": w(4 * C, C),
            "head": w(C, V)}


def data(lib):
    rng = np.random.default_rng(1)
    return lib.tensor(rng.integers(0, V, (B, T))), lib.tensor(rng.integers(0, V, (B, T)))


def block_loss(lib, p, idx, targets, generator=None):
    """Embedding lookup, layer norm, causal attention with a mask from a factory (and
    dropout drawn from ``generator`` when one is given), a tanh-GELU MLP, cross entropy."""
    x = p["wte"][idx] + p["wpe"][lib.arange(T)]
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    x_ln = (x - mu) / lib.sqrt(var + 1e-5) * p["ln_w"] + p["ln_b"]
    q, k, v = (x_ln @ p["attn"]).split(C, dim=2)
    q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // H))
    mask = lib.tril(lib.ones(T, T)).view(1, 1, T, T)
    att = att.masked_fill(mask == 0, float("-inf")).softmax(dim=-1)
    if generator is not None:
        keep = (lib.rand(att.shape, generator=generator) > 0.1).float()
        att = att * keep / 0.9
    y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
    x = x + y @ p["proj"]
    h = x @ p["fc"]
    x = x + (0.5 * h * (1 + lib.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h ** 3)))) @ p["out"]
    logits = x @ p["head"]
    logp = logits.view(-1, V).log_softmax(-1)
    return -logp.gather(1, targets.view(-1, 1)).mean()


def training_step(lib, p, idx, tgt, generator=None):
    """The loss, its backward, and an SGD update written with in-place ops."""
    loss = block_loss(lib, p, idx, tgt, generator)
    loss.backward()
    with lib.no_grad():
        for w in p.values():
            w.add_(w.grad, alpha=-0.1)
            w.grad.zero_()
    return loss
