"""The GPU check: every CUDA test, then GPU benchmarks against torch, then a short table.

Runs from a source checkout without installing (it puts the packages' src folders on
the path), so a GPU machine with torch, cupy and pytest needs nothing else:

    python bench/gpu_check.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "src", *sorted((ROOT / "packages").glob("*/src"))]


def run_cuda_tests() -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(map(str, SOURCES)))
    tests = sorted(str(p) for p in (ROOT / "packages").glob("*/tests"))
    command = [sys.executable, "-m", "pytest", "-m", "cuda", "-o", "addopts=", "-q",
               "-p", "no:cacheprovider", *tests]
    proc = subprocess.run(command, env=env, capture_output=True, text=True)
    print(proc.stdout[-6000:], proc.stderr[-3000:], sep="\n")
    lines = [ln for ln in proc.stdout.splitlines() if " passed" in ln or " failed" in ln
             or " error" in ln or "no tests ran" in ln]
    return proc.returncode, lines[-1] if lines else "no summary"


def gpu_time_ms(fn: Callable[[], object], sync: Callable[[], None], repeat: int = 20) -> float:
    for _ in range(3):
        fn()
    sync()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        sync()
        runs.append((time.perf_counter() - start) * 1e3)
    return statistics.median(runs)


def benchmarks() -> list[tuple[str, float, float]]:
    for src in SOURCES:
        sys.path.insert(0, str(src))
    import cupy
    import numpy as np
    import torch

    import ember

    rows = []
    rng = np.random.default_rng(0)

    def pair(*shape: int) -> tuple[object, object]:
        host = rng.standard_normal(shape).astype(np.float32)
        return ember.tensor(host, device="cuda"), torch.tensor(host, device="cuda")

    (ea, ta), (eb, tb) = pair(4096, 4096), pair(4096, 4096)
    (ex, tx), (ey, ty) = pair(64, 1024, 1024), pair(64, 1024, 1024)
    cases = {
        "matmul 4096^2 fp32": (lambda: ea @ eb, lambda: ta @ tb),
        "add 64M fp32": (lambda: ex + ey, lambda: tx + ty),
        "exp 64M fp32": (lambda: ex.exp(), lambda: tx.exp()),
        "sum 64M fp32": (lambda: ex.sum(), lambda: tx.sum()),
        "softmax 64x1024x1024": (lambda: ember.softmax(ex, -1), lambda: torch.softmax(tx, -1)),
        "tiny add (launch)": (lambda: ea[:2, :2] + eb[:2, :2], lambda: ta[:2, :2] + tb[:2, :2]),
    }

    def sync_ember() -> None:
        cupy.cuda.Device().synchronize()

    for name, (fe, ft) in cases.items():
        try:
            e = gpu_time_ms(fe, sync_ember)
        except Exception as exc:  # report and go on: one failing op must not hide the others
            print(f"{name}: ember failed: {type(exc).__name__}: {exc}")
            e = float("nan")
        t = gpu_time_ms(ft, torch.cuda.synchronize)
        rows.append((name, e, t))
    return rows


def main() -> None:
    code, summary = run_cuda_tests()
    rows = benchmarks()
    print("\n== GPU check ==")
    print(f"CUDA tests: {summary} (exit {code})")
    print(f"{'benchmark':<24}{'ember ms':>10}{'torch ms':>10}{'ratio':>8}")
    for name, e, t in rows:
        print(f"{name:<24}{e:>10.3f}{t:>10.3f}{e / t:>8.2f}")
    sys.exit(code)


if __name__ == "__main__":
    main()
