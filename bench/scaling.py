"""How cost grows with work: Ember against PyTorch at about 1e2, 1e5 and 4e6 elements.

The ops training spends its time in: add, exp, sum, softmax over rows of 256, a layer
norm written from primitives (rows of 256), and a batched matmul (16 matrices). Each
framework runs in a worker process of its own (``workers``), rounds alternating between
them, torch's intra-op threads set to Ember's native kernels' count (NumPy's BLAS threads
for matmul at their default); the thread count is printed. Ratios above 1.0 mean Ember is
slower.

    python bench/scaling.py [--quick]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from workers import Worker, compare, serve  # noqa: E402

SIZES = {"tiny": 128, "medium": 100_000, "large": 4_000_000}


def _rows(n: int) -> tuple[int, int]:
    return max(n // 256, 1), 256


def _batched(n: int) -> tuple[int, int, int]:
    side = max(int(round(math.sqrt(n / 16))), 1)
    return 16, side, side


def layer_norm(lib: object, x: object) -> object:
    mu = x.mean(-1, keepdim=True)  # type: ignore[attr-defined]
    var = ((x - mu) ** 2).mean(-1, keepdim=True)  # type: ignore[operator]
    return (x - mu) / lib.sqrt(var + 1e-5)  # type: ignore[attr-defined,operator]


def cases(lib: object, n: int) -> dict[str, Callable[[], object]]:
    rng = np.random.default_rng(0)

    def t(*shape: int) -> object:
        return lib.tensor(rng.standard_normal(shape).astype(np.float32))  # type: ignore[attr-defined]

    flat_a, flat_b = t(n), t(n)
    rows = t(*_rows(n))
    ma, mb = t(*_batched(n)), t(*_batched(n))
    return {
        "add": lambda: flat_a + flat_b,  # type: ignore[operator]
        "exp": lambda: flat_a.exp(),  # type: ignore[attr-defined]
        "sum": lambda: flat_a.sum(),  # type: ignore[attr-defined]
        "softmax": lambda: rows.softmax(-1),  # type: ignore[attr-defined]
        "layer norm (primitives)": lambda: layer_norm(lib, rows),
        "batched matmul": lambda: ma @ mb,  # type: ignore[operator]
    }


def _program(lib: object, fields: list[str]) -> Callable[[], object]:
    name, size = fields
    return cases(lib, SIZES[size])[name]


def _names(lib: object) -> list[str]:
    return list(cases(lib, 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (noisier)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        serve(args.worker, _names, _program)
        return

    from ember.core import native

    threads = native.get_num_threads()
    print(f"threads: {threads} on both sides, each framework in its own process")
    print(f"{'op':<26}{'size':>8}{'elements':>10}{'ember us':>12}{'torch us':>12}{'ratio':>8}")
    workers = Worker(__file__, "ember", threads), Worker(__file__, "torch", threads)
    ratios: dict[str, list[float]] = {}
    try:
        for size, n in SIZES.items():
            budget = 2e5 if args.quick else 1e6  # microseconds of work per measured round
            for name in workers[0].names():
                number = max(1, min(2000, int(budget / max(n / 500, 1))))
                e, t = compare(workers, (name, size), number, 3 if args.quick else 7)
                ratios.setdefault(size, []).append(e / t)
                elements = n if name != "batched matmul" else math.prod(_batched(n))
                print(f"{name:<26}{size:>8}{elements:>10}{e:>12.1f}{t:>12.1f}{e / t:>8.2f}",
                      flush=True)
    finally:
        for w in workers:
            w.close()
    for size, values in ratios.items():
        print(f"{'geometric mean ' + size:<56}{statistics.geometric_mean(values):>8.2f}")


if __name__ == "__main__":
    main()
