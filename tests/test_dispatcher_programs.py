"""Whole programs through the dispatcher: a transformer block's training step is recorded
primitive by primitive and replayed bit for bit; it saves no more for backward than torch;
the profiler counts what a dispatch mode sees; FlopCounterMode gives torch's totals."""

import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode as TorchFlopCounterMode

import ember
import ember.profiler
from ember.utils.flop_counter import FlopCounterMode

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "packages" / "tensor-core" / "tests"))
from dispatch_oracle import Recorder, replay, same  # noqa: E402
from gpt_block import block_loss, data, training_step, weights  # noqa: E402


def test_a_training_step_replays_through_the_registry():
    p = weights(ember)
    idx, tgt = data(ember)
    gen = ember.Generator().manual_seed(0)
    with Recorder() as recorder:
        training_step(ember, p, idx, tgt, gen)
    names = Counter(c.op.name for c in recorder.calls)
    for needed in ("index", "matmul", "softmax", "masked_fill", "uniform", "arange", "add_",
                   "zero_", "gather"):
        assert needed in names, f"{needed} not among {sorted(names)}"
    bad = [c.op.name for c in recorder.calls if not same(replay(c), c.outputs)]
    assert bad == []


def saved_bytes(lib, fn):
    total = [0]

    def pack(t):
        total[0] += t.numel() * t.element_size()
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return total[0]


def mlp_loss(lib):
    rng = np.random.default_rng(0)
    w1 = lib.tensor(rng.standard_normal((784, 128)).astype(np.float32), requires_grad=True)
    b1 = lib.tensor(np.zeros(128, np.float32), requires_grad=True)
    w2 = lib.tensor(rng.standard_normal((128, 10)).astype(np.float32), requires_grad=True)
    x = lib.tensor(rng.standard_normal((64, 784)).astype(np.float32))
    return lambda: (((x @ w1 + b1).relu() @ w2).log_softmax(-1)[:, 0]).mean()


def test_saves_no_more_than_torch():
    counts = {}
    for lib in (ember, torch):
        p = weights(lib)
        idx, tgt = data(lib)
        gen = lib.Generator().manual_seed(0)
        counts[lib] = (saved_bytes(lib, lambda: block_loss(lib, p, idx, tgt, gen)),
                       saved_bytes(lib, mlp_loss(lib)))
    assert counts[ember][0] <= counts[torch][0], counts
    assert counts[ember][1] <= counts[torch][1], counts


def test_the_profiler_counts_what_a_dispatch_mode_sees():
    idx, tgt = data(ember)
    with Recorder() as recorder:
        training_step(ember, weights(ember), idx, tgt, ember.Generator().manual_seed(0))
    with ember.profiler.profile() as prof:
        training_step(ember, weights(ember), idx, tgt, ember.Generator().manual_seed(0))
    expected = Counter(f"ember::{c.op.name}" for c in recorder.calls)
    assert {e.key: e.count for e in prof.key_averages()} == dict(expected)
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
    header = table.splitlines()[1].split()
    assert header == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU",
                      "total", "CPU", "time", "avg", "#", "of", "Calls"]
    assert table.splitlines()[-1].startswith("Self CPU time total: ")


def attention(lib, q, k, v):
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    return att.softmax(-1) @ v


@pytest.mark.parametrize("program", ["mlp", "attention"])
def test_flop_counts_match_torch(program):
    totals = {}
    for lib, counter in ((ember, FlopCounterMode), (torch, TorchFlopCounterMode)):
        rng = np.random.default_rng(0)

        def t(*shape):
            return lib.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)

        with counter(display=False) as flops:
            if program == "mlp":
                x, w1, w2 = t(32, 64), t(64, 128), t(128, 10)
                out = (x @ w1).relu() @ w2
            else:
                q, k, v = t(2, 4, 16, 8), t(2, 4, 16, 8), t(2, 4, 16, 8)
                out = attention(lib, q, k, v)
            out.sum().backward()
        totals[lib] = flops.get_total_flops()
    assert totals[ember] == totals[torch] > 0
