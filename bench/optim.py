"""The optimizer step: Ember against PyTorch on a model of 100 parameter tensors (50 weight
matrices of 447x447 and their 50 biases: 10.0 million numbers), every path of each
optimizer, each framework in a worker process of its own (``workers.py``), the same thread
count on both sides, rounds alternating.

Ember's paths are ``default`` (what ``foreach=None, fused=None`` picks), ``for-loop``
(``foreach=False``), ``foreach`` and ``fused``; torch's are ``default`` (its per-parameter
loop on the CPU), ``foreach`` and ``fused``. Each ratio is Ember's milliseconds per step over
torch's default path's (below 1.0 means Ember is faster); the last column is Ember's default
against torch's foreach path.

    python bench/optim.py [--quick] [--only SGD,Adam]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workers import Worker, serve  # noqa: E402

# name: (options, has a fused path)
OPTIMIZERS: dict[str, tuple[dict[str, Any], bool]] = {
    "SGD": ({"lr": 1e-3, "momentum": 0.9}, True),
    "Adam": ({"lr": 1e-3}, True),
    "AdamW": ({"lr": 1e-3, "weight_decay": 0.01}, True),
    "Adagrad": ({"lr": 1e-3}, True),
    "RMSprop": ({"lr": 1e-3}, False),
    "Adadelta": ({"lr": 1e-3}, False),
    "Adamax": ({"lr": 1e-3}, False),
    "NAdam": ({"lr": 1e-3}, False),
    "RAdam": ({"lr": 1e-3}, False),
    "ASGD": ({"lr": 1e-3}, False),
    "Rprop": ({"lr": 1e-3}, False),
}
PATHS = {"default": {}, "for-loop": {"foreach": False}, "foreach": {"foreach": True},
         "fused": {"fused": True}}
EMBER_PATHS = ("default", "for-loop", "foreach", "fused")
TORCH_PATHS = ("default", "foreach", "fused")
WIDTH, TENSORS = 447, 100


def _names(lib: Any) -> list[str]:
    return list(OPTIMIZERS)


def _program(lib: Any, fields: list[str]) -> Callable[[], Any]:
    name, path = fields
    gen = lib.Generator().manual_seed(0)
    params = []
    for i in range(TENSORS):
        shape = (WIDTH, WIDTH) if i % 2 == 0 else (WIDTH,)
        p = lib.nn.Parameter(lib.randn(shape, generator=gen) * 0.1)
        p.grad = lib.randn(shape, generator=gen) * 0.01
        params.append(p)
    options, _ = OPTIMIZERS[name]
    opt = getattr(lib.optim, name)(params, **options, **PATHS[path])
    return opt.step


def _paths(name: str, paths: tuple[str, ...]) -> list[str]:
    return [p for p in paths if p != "fused" or OPTIMIZERS[name][1]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (noisier)")
    parser.add_argument("--only", default="", help="comma-separated optimizer names")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        serve(args.worker, _names, _program)
        return

    from ember.core import native

    threads = native.get_num_threads()
    numel = sum(WIDTH * WIDTH if i % 2 == 0 else WIDTH for i in range(TENSORS))
    print(f"threads: {threads} on both sides, each framework in its own process; "
          f"{TENSORS} tensors, {numel / 1e6:.1f} M numbers; ms per step, ratio = "
          f"Ember / torch default")
    header = "".join(f"{'e ' + p:>11}" for p in EMBER_PATHS) + \
        "".join(f"{'t ' + p:>11}" for p in TORCH_PATHS)
    print(f"{'optimizer':<10}{header}{'default':>9}{'best':>7}{'vs t fe':>9}")
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    ember, torch = Worker(__file__, "ember", threads), Worker(__file__, "torch", threads)
    number, rounds = (2, 3) if args.quick else (5, 7)
    defaults = []
    try:
        for name in OPTIMIZERS:
            if only and name not in only:
                continue
            runs = [(ember, (name, p)) for p in _paths(name, EMBER_PATHS)] + \
                [(torch, (name, p)) for p in _paths(name, TORCH_PATHS)]
            for worker, fields in runs:  # build, warm caches and threads
                worker.time(fields, 1)
            timed = [[worker.time(fields, number) for worker, fields in runs]
                     for _ in range(rounds)]
            ms = {(w is ember, f[1]): statistics.median(r[i] for r in timed) / 1e3
                  for i, (w, f) in enumerate(runs)}
            cells = "".join(f"{ms[(True, p)]:>11.2f}" if (True, p) in ms else f"{'-':>11}"
                            for p in EMBER_PATHS) + \
                "".join(f"{ms[(False, p)]:>11.2f}" if (False, p) in ms else f"{'-':>11}"
                        for p in TORCH_PATHS)
            base = ms[(False, "default")]
            best = min(v for (is_ember, _), v in ms.items() if is_ember)
            default = ms[(True, "default")] / base
            defaults.append(default)
            print(f"{name:<10}{cells}{default:>9.2f}{best / base:>7.2f}"
                  f"{ms[(True, 'default')] / ms[(False, 'foreach')]:>9.2f}", flush=True)
    finally:
        ember.close()
        torch.close()
    if defaults:
        geomean = statistics.geometric_mean(defaults)
        print(f"Ember default / torch default: geometric mean {geomean:.2f}, "
              f"worst {max(defaults):.2f} (target: each at most 1.0)")


if __name__ == "__main__":
    main()
