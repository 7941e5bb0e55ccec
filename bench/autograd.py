"""Autograd overhead: Ember against PyTorch, measured side by side, as ratios.

- tiny graph: a 5-op chain on 1-element tensors, forward and ``.backward()``;
- MLP: a 784-128-10 two-layer perceptron, forward and backward at batch 64.

    python bench/autograd.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from overhead import compare_us  # noqa: E402


def tiny_chain(lib: object) -> Callable[[], object]:
    x = lib.tensor([0.5], requires_grad=True)  # type: ignore[attr-defined]
    w = lib.tensor([1.5], requires_grad=True)  # type: ignore[attr-defined]

    def step() -> None:
        y = ((x * w + 1.0).tanh() * x).exp().sum()
        y.backward()

    return step


def mlp(lib: object) -> Callable[[], object]:
    rng = np.random.default_rng(0)

    def param(*shape: int) -> object:
        host = (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
        return lib.tensor(host, requires_grad=True)  # type: ignore[attr-defined]

    w1, b1, w2, b2 = param(784, 128), param(128), param(128, 10), param(10)
    x = lib.tensor(rng.standard_normal((64, 784)).astype(np.float32))  # type: ignore[attr-defined]
    y = lib.tensor(rng.standard_normal((64, 10)).astype(np.float32))  # type: ignore[attr-defined]

    def step() -> None:
        h = (x @ w1 + b1).relu()
        loss = ((h @ w2 + b2 - y) ** 2).mean()
        loss.backward()

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (noisier)")
    args = parser.parse_args()
    scale = 10 if args.quick else 1

    import torch

    import ember

    cases = {"5-op chain + backward": (tiny_chain, 20000 // scale),
             "MLP 784-128-10 b64 fwd+bwd": (mlp, 2000 // scale)}
    print(f"{'autograd case':<28}{'ember us':>10}{'torch us':>10}{'ratio':>8}")
    ratios = []
    for name, (build, number) in cases.items():
        e, t = compare_us(build(ember), build(torch), number, 11)
        ratios.append(e / t)
        print(f"{name:<28}{e:>10.1f}{t:>10.1f}{e / t:>8.2f}")
    print(f"{'geometric mean':<48}{statistics.geometric_mean(ratios):>8.2f}")


if __name__ == "__main__":
    main()
