"""The fused primitives of training: Ember against PyTorch, forward and forward+backward.

For each primitive, at a GPT-block size (8, 64, 128), about 1e6 and about 1.6e7 float32
elements: the median time of Ember and of torch measured in alternating rounds, with the
same thread count on both sides (torch's intra-op threads set to Ember's), and the ratio
(Ember / torch: below 1.0 means Ember is faster). Each framework runs in a worker process
of its own, the rounds alternating between them (``workers``).
"fwd" runs under no_grad; "fwd+bwd" runs the forward recording a graph and
``autograd.grad`` of it for every input that requires one; an optimizer's fused update
(``adamw``: ``_fused_adamw_`` over the twelve parameter tensors of a transformer block of
about the size's element count) has one pass, "step". The last lines give the
geometric means. The first line gives the time ``native.build_all()`` takes in a fresh
interpreter with an empty kernel cache (the cold compile of every native kernel) and again
with that cache filled (a warm start).

    python bench/kernels.py [--quick] [--only NAME[,NAME...]]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from workers import Worker, compare, serve  # noqa: E402

# (rows, row length) of each size: the GPT block's (8 * 64, 128), then rows of 256 and 1024
SIZES = {"gpt (8,64,128)": (8, 64, 128), "1e6": (4096, 256), "1.6e7": (16384, 1024)}


# causal attention's (batch, heads, sequence, head dim) at each size: the GPT block's, then
# about 1e6 and 1.6e7 elements of the score matrix
ATTENTION = {(8, 64, 128): (8, 4, 64, 32), (4096, 256): (4, 4, 256, 64),
             (16384, 1024): (4, 4, 1024, 64)}

# interpolation's (batch, channels, height, width) at each size, doubled along both spatial
# dims: outputs of the size's element count
IMAGES = {(8, 64, 128): (8, 8, 16, 16), (4096, 256): (8, 32, 32, 32),
          (16384, 1024): (8, 32, 128, 128)}


def _functional(lib: Any) -> Any:
    """torch.nn.functional, or where Ember keeps the same functions."""
    if lib.__name__ == "torch":
        return lib.nn.functional
    from ember.core.ops import activations, attention, interpolation, losses

    return SimpleNamespace(**{name: getattr(module, name)
                              for module in (activations, attention, interpolation, losses)
                              for name in dir(module) if not name.startswith("_")})


def primitives(lib: Any, shape: tuple[int, ...]) -> dict[str, tuple[Callable[..., Any], list[Any]]]:
    """Each primitive as ``(fn, inputs)``: ``fn(*inputs)`` computes it."""
    rng = np.random.default_rng(0)
    n = shape[-1]

    def t(*s: int) -> Any:
        return lib.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)

    x, w, b = t(*shape), t(n), t(n)

    def c() -> Any:
        return t(shape[1])

    # a vocabulary of 1000 rows of the size's row length, looked up for every other row
    table = t(1000, n)
    tokens = lib.tensor(rng.integers(0, 1000, int(np.prod(shape[:-1]))))
    # a classifier's logits, one row per row of the size, and a class for each
    logits = t(int(np.prod(shape[:-1])), n)
    classes = lib.tensor(rng.integers(0, n, int(np.prod(shape[:-1]))))
    F = _functional(lib)
    return {
        "softmax": (lambda x: lib.softmax(x, -1), [x]),
        "log_softmax": (lambda x: lib.log_softmax(x, -1), [x]),
        "layer_norm": (lambda x, w, b: lib.layer_norm(x, (n,), w, b), [x, w, b]),
        "rms_norm": (lambda x, w: lib.rms_norm(x, (n,), w), [x, w]),
        "gelu": (lambda x: F.gelu(x), [x]),
        "gelu tanh": (lambda x: F.gelu(x, approximate="tanh"), [x]),
        "silu": (lambda x: F.silu(x), [x]),
        "dropout": (lambda x: lib.dropout(x, 0.1, True), [x]),
        # batch and group norms take dim 1 as the channels: 64, 256 or 1024 of them
        "batch_norm": (lambda x, w, b: lib.batch_norm(x, w, b, None, None, True, 0.1, 1e-5,
                                                      False), [x, c(), c()]),
        "group_norm": (lambda x, w, b: lib.group_norm(x, 8, w, b), [x, c(), c()]),
        "attention": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                      [t(*ATTENTION[shape]), t(*ATTENTION[shape]), t(*ATTENTION[shape])]),
        "embedding": (lambda w: lib.embedding(w, tokens), [table]),
        "cross_entropy": (lambda x: F.cross_entropy(x, classes), [logits]),
        "nll_loss": (lambda x: F.nll_loss(x, classes), [logits]),
        "bilinear": (lambda x: F.interpolate(x, scale_factor=2.0, mode="bilinear"),
                     [t(*IMAGES[shape])]),
        "nearest": (lambda x: F.interpolate(x, scale_factor=2.0), [t(*IMAGES[shape])]),
    }


UPDATES = ("adamw",)


def updates(lib: Any, shape: tuple[int, ...]) -> dict[str, Callable[[], Any]]:
    """Each of ``UPDATES`` as a step of no arguments, over a transformer block's parameters
    (width w: 12 w**2 + 13 w elements) of about ``shape``'s element count."""
    rng = np.random.default_rng(0)
    w = round((int(np.prod(shape)) / 12) ** 0.5)
    shapes = [(3 * w, w), (3 * w,), (w, w), (w,), (4 * w, w), (4 * w,), (w, 4 * w), (w,),
              (w,), (w,), (w,), (w,)]

    def t(scale: float) -> list[Any]:
        return [lib.from_numpy((rng.standard_normal(s) * scale).astype(np.float32))
                for s in shapes]

    params, grads, exp_avgs = t(1.0), t(1.0), t(0.1)
    exp_avg_sqs = [x.abs() for x in t(0.01)]
    steps = [lib.full((), 10.0) for _ in shapes]
    return {"adamw": lambda: lib._fused_adamw_(
        params, grads, exp_avgs, exp_avg_sqs, [], steps, lr=1e-3, beta1=0.9, beta2=0.999,
        weight_decay=0.01, eps=1e-8, amsgrad=False, maximize=False)}


def _programs(lib: Any, fn: Callable[..., Any], inputs: list[Any]) -> tuple[Any, Any]:
    grad = lib.autograd.grad

    def forward() -> Any:
        with lib.no_grad():
            return fn(*inputs)

    seed = fn(*inputs).detach().clone().normal_()

    def forward_backward() -> Any:
        return grad(fn(*inputs), inputs, seed)

    return forward, forward_backward


_BUILD = ("import time; from ember.core import native; start = time.perf_counter(); "
          "ready = native.build_all(); print(time.perf_counter() - start, ready)")


def startup() -> str:
    """Cold and warm ``build_all`` times, each in a fresh interpreter."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "EMBER_CACHE_DIR": cache}
        runs = [subprocess.run([sys.executable, "-c", _BUILD], env=env, check=True,
                               capture_output=True, text=True).stdout.split()
                for _ in range(2)]
    (cold, ready), (warm, _) = runs
    return (f"native kernels: cold compile {float(cold):.2f} s, warm start "
            f"{float(warm) * 1e3:.1f} ms{'' if ready == 'True' else ' (some failed to build)'}")


def _names(lib: Any) -> list[str]:
    return [*primitives(lib, next(iter(SIZES.values()))), *UPDATES]


def _program(lib: Any, fields: list[str]) -> Callable[[], Any]:
    """The program ``fields`` = (name, size, pass) of ``lib``."""
    name, size, label = fields
    if name in UPDATES:
        return updates(lib, SIZES[size])[name]
    forward, forward_backward = _programs(lib, *primitives(lib, SIZES[size])[name])
    return forward_backward if label == "fwd+bwd" else forward


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (noisier)")
    parser.add_argument("--only", default="", help="comma-separated primitive names")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        serve(args.worker, _names, _program)
        return

    from ember.core import native

    threads = native.get_num_threads()
    print(startup())
    print(f"threads: {threads} on both sides, each framework in its own process")
    print(f"{'primitive':<14}{'size':>16}{'pass':>9}{'ember us':>11}{'torch us':>11}"
          f"{'ratio':>7}")
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    workers = Worker(__file__, "ember", threads), Worker(__file__, "torch", threads)
    rounds = 3 if args.quick else 7
    ratios: dict[str, list[float]] = {}
    try:
        for size, shape in SIZES.items():
            elements = int(np.prod(shape))  # (the attention's scores: about as many)
            number = max(1, int((2e5 if args.quick else 1e6) / max(elements / 200, 1)))
            for name in workers[0].names():
                if only and name not in only:
                    continue
                for label in ("step",) if name in UPDATES else ("fwd", "fwd+bwd"):
                    e, t = compare(workers, (name, size, label), number, rounds)
                    ratios.setdefault(label, []).append(e / t)
                    print(f"{name:<14}{size:>16}{label:>9}{e:>11.1f}{t:>11.1f}{e / t:>7.2f}",
                          flush=True)
    finally:
        for w in workers:
            w.close()
    every = [r for values in ratios.values() for r in values]
    for label, values in ratios.items():
        print(f"{'geometric mean ' + label:<50}{statistics.geometric_mean(values):>7.2f}")
    if every:
        print(f"{'geometric mean':<50}{statistics.geometric_mean(every):>7.2f}"
              f"   (max {max(every):.2f})")


if __name__ == "__main__":
    main()
