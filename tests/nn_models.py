"""Models written against the torch API as their users write them, built with ``lib`` =
torch or ember: the whole-program tests train them in both frameworks from the same
weights, and ``bench/models.py`` times them.

Each builder returns ``(model, batch)``: ``batch()`` gives the inputs of one step as numpy
arrays (the same every call for one seed), and ``model.loss(lib, *inputs)`` the loss.
"""

from __future__ import annotations

import math

import numpy as np


def _tensors(lib, arrays):
    return [lib.tensor(a) for a in arrays]


def gpt(lib, vocab=65, block=64, layers=4, heads=4, width=128, batch=8, dropout=0.0, seed=0):
    """A character-level causal transformer LM in nanoGPT's style: token and position
    embeddings, pre-norm blocks with fused-QKV causal attention (scaled_dot_product_attention)
    and a GELU MLP, a final LayerNorm and a head tied to the token embedding."""
    nn, F = lib.nn, lib.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(width, 3 * width)
            self.c_proj = nn.Linear(width, width)
            self.resid_dropout = nn.Dropout(dropout)

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(width, dim=2)
            q = q.view(B, T, heads, C // heads).transpose(1, 2)
            k = k.view(B, T, heads, C // heads).transpose(1, 2)
            v = v.view(B, T, heads, C // heads).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout if self.training
                                               else 0.0, is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(width, 4 * width)
            self.gelu = nn.GELU(approximate="tanh")
            self.c_proj = nn.Linear(4 * width, width)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(width)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(width)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab, width),
                wpe=nn.Embedding(block, width),
                drop=nn.Dropout(dropout),
                h=nn.ModuleList([Block() for _ in range(layers)]),
                ln_f=nn.LayerNorm(width),
            ))
            self.lm_head = nn.Linear(width, vocab, bias=False)
            self.transformer.wte.weight = self.lm_head.weight  # weight tying
            self.apply(self._init_weights)
            for name, p in self.named_parameters():
                if name.endswith("c_proj.weight"):
                    nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * layers))

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            b, t = idx.size()
            pos = lib.arange(0, t, dtype=lib.long)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for blk in self.transformer.h:
                x = blk(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            if targets is None:
                return logits, None
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
            return logits, loss

        def loss(self, lib, idx, targets):
            return self(idx, targets)[1]

    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, vocab, (batch, block + 1))

    def data():
        return _tensors(lib, [tokens[:, :-1], tokens[:, 1:]])

    return GPT(), data


def cnn(lib, batch=16, channels=3, size=32, classes=10, seed=0):
    """A small VGG-style classifier: conv-BN-ReLU blocks, max and adaptive average
    pooling, dropout and a linear head, trained with cross entropy."""
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(channels, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16),
                nn.ReLU(inplace=True), nn.MaxPool2d(2),
                nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
                nn.MaxPool2d(2),
                nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                nn.AdaptiveAvgPool2d((1, 1)))
            self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.0), nn.Linear(64, classes))

        def forward(self, x):
            return self.classifier(self.features(x))

        def loss(self, lib, x, y):
            return nn.functional.cross_entropy(self(x), y)

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, channels, size, size)).astype(np.float32)
    y = rng.integers(0, classes, batch)
    return Net(), lambda: _tensors(lib, [x, y])


def lstm_lm(lib, vocab=50, embed=64, hidden=128, layers=2, batch=16, seq=32, packed=False,
            seed=0):
    """An LSTM language model: embedding, a 2-layer LSTM (over packed sequences of
    different lengths with ``packed``) and a linear decoder."""
    nn = lib.nn
    utils = lib.nn.utils.rnn

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, embed)
            self.rnn = nn.LSTM(embed, hidden, num_layers=layers, batch_first=True)
            self.decoder = nn.Linear(hidden, vocab)

        def forward(self, tokens, lengths=None):
            x = self.embed(tokens)
            if lengths is None:
                out, _ = self.rnn(x)
            else:
                packed_in = utils.pack_padded_sequence(x, lengths, batch_first=True,
                                                       enforce_sorted=False)
                out, _ = self.rnn(packed_in)
                out, _ = utils.pad_packed_sequence(out, batch_first=True, total_length=seq)
            return self.decoder(out)

        def loss(self, lib, tokens, targets, lengths=None):
            logits = self(tokens, lengths)
            return nn.functional.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1),
                                               ignore_index=-100)

    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, vocab, (batch, seq + 1))
    inputs, targets = tokens[:, :-1], tokens[:, 1:].copy()
    if not packed:
        return LM(), lambda: _tensors(lib, [inputs, targets])
    lengths = rng.integers(seq // 2, seq + 1, batch)
    lengths[0] = seq
    for i, n in enumerate(lengths):
        targets[i, n:] = -100
    return LM(), lambda: [*_tensors(lib, [inputs, targets]), lib.tensor(lengths)]


def vae(lib, batch=32, features=64, hidden=48, latent=8, seed=0):
    """A variational autoencoder: an MLP encoder to mean and log-variance, the
    reparameterisation with noise given as an input (so both frameworks draw the same),
    a decoder to logits, binary cross entropy plus the KL term."""
    nn, F = lib.nn, lib.nn.functional

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Sequential(nn.Linear(features, hidden), nn.ReLU())
            self.mu = nn.Linear(hidden, latent)
            self.logvar = nn.Linear(hidden, latent)
            self.dec = nn.Sequential(nn.Linear(latent, hidden), nn.Tanh(),
                                     nn.Linear(hidden, features))

        def forward(self, x, noise):
            h = self.enc(x)
            mu, logvar = self.mu(h), self.logvar(h)
            z = mu + noise * lib.exp(0.5 * logvar)
            return self.dec(z), mu, logvar

        def loss(self, lib, x, noise):
            logits, mu, logvar = self(x, noise)
            recon = F.binary_cross_entropy_with_logits(logits, x, reduction="sum")
            kld = -0.5 * lib.sum(1 + logvar - mu.pow(2) - logvar.exp())
            return (recon + kld) / x.shape[0]

    rng = np.random.default_rng(seed)
    x = (rng.random((batch, features)) < 0.3).astype(np.float32)
    noise = rng.standard_normal((batch, latent)).astype(np.float32)
    return VAE(), lambda: _tensors(lib, [x, noise])


def seq2seq(lib, vocab=30, d_model=32, heads=4, layers=2, batch=4, src_len=9, tgt_len=7,
            seed=0):
    """An ``nn.Transformer`` translation model: embeddings, the full encoder-decoder with
    a causal target mask and padding masks, and a linear generator."""
    nn, F = lib.nn, lib.nn.functional

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_embed = nn.Embedding(vocab, d_model, padding_idx=0)
            self.tgt_embed = nn.Embedding(vocab, d_model, padding_idx=0)
            self.transformer = nn.Transformer(d_model, heads, layers, layers, 64, dropout=0.0,
                                              batch_first=True)
            self.generator = nn.Linear(d_model, vocab)

        def forward(self, src, tgt):
            mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
            out = self.transformer(self.src_embed(src), self.tgt_embed(tgt), tgt_mask=mask,
                                   src_key_padding_mask=src == 0,
                                   tgt_key_padding_mask=tgt == 0,
                                   memory_key_padding_mask=src == 0)
            return self.generator(out)

        def loss(self, lib, src, tgt_in, tgt_out):
            logits = self(src, tgt_in)
            return F.cross_entropy(logits.reshape(-1, vocab), tgt_out.reshape(-1),
                                   ignore_index=0)

    rng = np.random.default_rng(seed)
    src = rng.integers(1, vocab, (batch, src_len))
    src[1, -3:] = 0
    tgt = rng.integers(1, vocab, (batch, tgt_len + 1))
    tgt[2, -2:] = 0
    return Seq2Seq(), lambda: _tensors(lib, [src, tgt[:, :-1], tgt[:, 1:]])
