"""Eager overhead on tiny tensors: Ember against PyTorch, measured side by side.

Prints, per op, the median latency of each framework and their ratio (Ember / torch:
below 1.0 means Ember is faster), then the import time of both packages.

    python bench/overhead.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np


def _run_us(fn: Callable[[], object], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number * 1e6


def compare_us(ours: Callable[[], object], theirs: Callable[[], object], number: int,
               repeat: int) -> tuple[float, float]:
    """Median microseconds per call of each, measured in alternating rounds so that drift
    in the machine's speed falls on both alike."""
    for fn in (ours, theirs):  # warm caches and lazy paths
        _run_us(fn, number // 10 + 1)
    rounds = [(_run_us(ours, number), _run_us(theirs, number)) for _ in range(repeat)]
    return statistics.median(r[0] for r in rounds), statistics.median(r[1] for r in rounds)


def cases(lib: object) -> dict[str, Callable[[], object]]:
    """The same tiny-op programs for ``lib`` (ember or torch)."""
    rng = np.random.default_rng(0)
    a = lib.tensor(rng.standard_normal((4, 4)).astype(np.float32))  # type: ignore[attr-defined]
    b = lib.tensor(rng.standard_normal((4, 4)).astype(np.float32))  # type: ignore[attr-defined]
    cat = lib.cat  # type: ignore[attr-defined]
    return {
        "add": lambda: a + b,
        "scalar mul": lambda: a * 2.0,
        "sum": lambda: a.sum(),
        "maximum": lambda: lib.maximum(a, b),  # type: ignore[attr-defined]
        "view": lambda: a.view(16),
        "4x4 matmul": lambda: a @ b,
        "getitem int": lambda: a[0],
        "getitem slice": lambda: a[:, 1:3],
        "cat": lambda: cat([a, b]),
        "transpose": lambda: a.t(),
        "exp": lambda: a.exp(),
        "add_ in-place": lambda: a.add_(b),
        "comparison": lambda: a > b,
        "mean dim": lambda: a.mean(1),
        "zeros": lambda: lib.zeros(4, 4),  # type: ignore[attr-defined]
        "randn": lambda: lib.randn(4, 4),  # type: ignore[attr-defined]
        "expand": lambda: a[:1].expand(4, 4),
        "to float64": lambda: a.to(lib.float64),  # type: ignore[attr-defined]
    }


def import_seconds(module: str, runs: int) -> float:
    """Median wall time of ``import module`` in a fresh interpreter, with the bytecode cache
    as users have it (written by a first, untimed import; pip writes it for wheels)."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    times = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  check=True, env=env).stdout) for _ in range(runs + 1)]
    return statistics.median(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (noisier)")
    args = parser.parse_args()
    number, repeat = (2000, 5) if args.quick else (20000, 9)

    import torch

    import ember

    ours, theirs = cases(ember), cases(torch)
    print(f"{'op (4x4 float32)':<18}{'ember us':>10}{'torch us':>10}{'ratio':>8}")
    ratios = []
    for name in ours:
        e, t = compare_us(ours[name], theirs[name], number, repeat)
        ratios.append(e / t)
        print(f"{name:<18}{e:>10.2f}{t:>10.2f}{e / t:>8.2f}")
    print(f"{'geometric mean':<38}{statistics.geometric_mean(ratios):>8.2f}")
    runs = 3 if args.quick else 7
    ie, it = import_seconds("ember", runs), import_seconds("torch", runs)
    print(f"{'import (s)':<18}{ie:>10.3f}{it:>10.3f}{ie / it:>8.2f}")


if __name__ == "__main__":
    main()
