"""Whole models, forward+backward: Ember against PyTorch, each in a worker process of its
own (``workers.py``), the same thread count on both sides, rounds alternating.

The models are the whole-program tests' (``tests/nn_models.py``), at benchmark sizes: a
GPT-style LM (4 layers, 4 heads, width 128, batch 8, 64 tokens), a CNN with BatchNorm and
pooling (batch 16, 3x32x32) and a 2-layer LSTM LM (hidden 128, batch 16, 32 steps). One
program is the loss, its backward and ``zero_grad``, as a training step without the
optimizer. Prints milliseconds per step and the ratio (Ember / torch: below 1.0 means
Ember is faster).

    python bench/models.py [--quick] [--only gpt,cnn,lstm]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from nn_models import cnn, gpt, lstm_lm  # noqa: E402
from workers import Worker, compare, serve  # noqa: E402

MODELS: dict[str, tuple[Callable[..., Any], float]] = {
    # name: (builder, the ratio the nn issue's target allows)
    "gpt": (lambda lib: gpt(lib), 1.0),
    "cnn": (lambda lib: cnn(lib), 1.25),
    "lstm": (lambda lib: lstm_lm(lib), 1.25),
}


def _names(lib: Any) -> list[str]:
    return list(MODELS)


def _program(lib: Any, fields: list[str]) -> Callable[[], Any]:
    lib.manual_seed(0)
    model, data = MODELS[fields[0]][0](lib)
    inputs = data()

    def step() -> None:
        model.loss(lib, *inputs).backward()
        model.zero_grad()

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (noisier)")
    parser.add_argument("--only", default="", help="comma-separated model names")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        serve(args.worker, _names, _program)
        return

    from ember.core import native

    threads = native.get_num_threads()
    print(f"threads: {threads} on both sides, each framework in its own process")
    print(f"{'model (fwd+bwd)':<18}{'ember ms':>10}{'torch ms':>10}{'ratio':>8}{'target':>8}")
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    workers = Worker(__file__, "ember", threads), Worker(__file__, "torch", threads)
    number, rounds = (3, 3) if args.quick else (10, 7)
    ratios = []
    try:
        for name, (_, target) in MODELS.items():
            if only and name not in only:
                continue
            e, t = compare(workers, (name,), number, rounds)
            ratios.append(e / t)
            print(f"{name:<18}{e / 1e3:>10.2f}{t / 1e3:>10.2f}{e / t:>8.2f}{target:>8.2f}",
                  flush=True)
    finally:
        for w in workers:
            w.close()
    if ratios:
        print(f"{'geometric mean':<38}{statistics.geometric_mean(ratios):>8.2f}")


if __name__ == "__main__":
    main()
