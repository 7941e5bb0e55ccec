"""The GPU check: every CUDA test, then GPU benchmarks against torch, then a short table.

Runs from a source checkout without installing (it puts the packages' src folders on
the path), so a GPU machine with torch, cupy and pytest needs nothing else:

    python bench/gpu_check.py

Where triton is installed too, the CUDA tests include the Triton kernels' own
(packages/tensor-core/tests_triton, run for real: no interpreter), and the benchmarks
each fused primitive's Triton kernel against torch's, at a large size. Each benchmark
times Ember and torch in alternating rounds (medians), so that drift in the GPU's clocks
falls on both.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "src", *sorted((ROOT / "packages").glob("*/src"))]


TRITON = importlib.util.find_spec("triton") is not None


def run_cuda_tests() -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(map(str, SOURCES)))
    env.pop("TRITON_INTERPRET", None)  # the Triton kernels run for real here
    tests = sorted(str(p) for p in (ROOT / "packages").glob("*/tests"))
    if TRITON:
        tests += sorted(str(p) for p in (ROOT / "packages").glob("*/tests_triton"))
    command = [sys.executable, "-m", "pytest", "-m", "cuda", "-o", "addopts=", "-q",
               "-p", "no:cacheprovider", *tests]
    proc = subprocess.run(command, env=env, capture_output=True, text=True)
    print(proc.stdout[-6000:], proc.stderr[-3000:], sep="\n")
    lines = [ln for ln in proc.stdout.splitlines() if " passed" in ln or " failed" in ln
             or " error" in ln or "no tests ran" in ln]
    return proc.returncode, lines[-1] if lines else "no summary"


def _once_ms(fn: Callable[[], object], sync: Callable[[], None]) -> float:
    start = time.perf_counter()
    fn()
    sync()
    return (time.perf_counter() - start) * 1e3


def paired_ms(ember_fn: Callable[[], object] | None, torch_fn: Callable[[], object],
              sync: Callable[[], None], rounds: int = 20) -> tuple[float, float]:
    """Median milliseconds of each (after synchronizing the device), in alternating rounds;
    NaN for Ember where it fails (reported: one failing op must not hide the others)."""
    try:
        for _ in range(3):
            ember_fn()
        sync()
    except Exception as exc:
        print(f"ember failed: {type(exc).__name__}: {exc}")
        ember_fn = None
    for _ in range(3):
        torch_fn()
    sync()
    ours, theirs = [], []
    for _ in range(rounds):
        if ember_fn is not None:
            ours.append(_once_ms(ember_fn, sync))
        theirs.append(_once_ms(torch_fn, sync))
    return statistics.median(ours) if ours else float("nan"), statistics.median(theirs)


def triton_cases(ember: Any, torch: Any, pair: Callable[..., tuple[Any, Any]]
                 ) -> dict[str, tuple[Callable[[], object], Callable[[], object]]]:
    """Each Triton kernel's primitive against torch's, at a large size (float32 unless
    named), called as the dispatcher calls them."""
    import numpy as np

    from ember.core.dispatch import REGISTRY as ops
    from ember.core.random import seeded_state

    aten = torch.ops.aten
    f = torch.nn.functional
    (ex, tx), (eg, tg) = pair(64, 1024, 1024), pair(64, 1024, 1024, seed=1)
    ey, ty = ops["softmax"](ex, dim=2), aten._softmax(tx, 2, False)
    ely, tly = ops["log_softmax"](ex, dim=2), aten._log_softmax(tx, 2, False)
    (en, tn), (egn, tgn) = pair(16384, 4096), pair(16384, 4096, seed=2)
    (ew, tw), (eb, tb) = pair(4096, seed=3), pair(4096, seed=4)
    ns = (4096,)
    _, emean, erstd = ops["native_layer_norm"](en, ew, eb, normalized_shape=ns, eps=1e-5)
    _, tmean, trstd = aten.native_layer_norm(tn, [4096], tw, tb, 1e-5)
    _, e_rms = ops["_fused_rms_norm"](en, ew, normalized_shape=ns, eps=1e-5)
    t_rms = torch.rsqrt(tn.square().mean(-1, keepdim=True) + 1e-5)
    (ed, td) = pair(16, 1024, 1024)
    cuda = ex.device
    state = seeded_state(0)
    _, emask, _ = ops["native_dropout"](state, ed, p=0.1, device=cuda)
    _, tmask = aten.native_dropout(td, 0.1, True)
    (el, tl), rows = pair(65536, 1000), 65536
    targets = np.random.default_rng(5).integers(0, 1000, rows)
    et, tt = ember.tensor(targets, device="cuda"), torch.tensor(targets, device="cuda")
    _, etotal = ops["nll_loss_forward"](el, et, None, reduction=1, ignore_index=-100)
    _, ttotal = aten.nll_loss_forward(tl, tt, None, 1, -100)
    eone, tone = ember.ones((), device="cuda"), torch.ones((), device="cuda")
    esig, tsig = ops["sigmoid"](ex), torch.sigmoid(tx)
    etanh, ttanh = ops["tanh"](ex), torch.tanh(tx)
    cases = {
        "log_softmax 64x1024x1024": (lambda: ops["log_softmax"](ex, dim=2),
                                     lambda: aten._log_softmax(tx, 2, False)),
        "softmax bwd 64x1024x1024": (
            lambda: ops["_softmax_backward_data"](eg, ey, dim=2),
            lambda: aten._softmax_backward_data(tg, ty, 2, ty.dtype)),
        "log_softmax bwd 64x1024x1024": (
            lambda: ops["_log_softmax_backward_data"](eg, ely, dim=2),
            lambda: aten._log_softmax_backward_data(tg, tly, 2, tly.dtype)),
        "layer_norm 16384x4096": (
            lambda: ops["native_layer_norm"](en, ew, eb, normalized_shape=ns, eps=1e-5),
            lambda: aten.native_layer_norm(tn, [4096], tw, tb, 1e-5)),
        "layer_norm bwd 16384x4096": (
            lambda: ops["native_layer_norm_backward"](egn, en, emean, erstd, ew,
                                                      normalized_shape=ns,
                                                      output_mask=(True, True, True)),
            lambda: aten.native_layer_norm_backward(tgn, tn, [4096], tmean, trstd, tw, tb,
                                                    [True, True, True])),
        "rms_norm 16384x4096": (
            lambda: ops["_fused_rms_norm"](en, ew, normalized_shape=ns, eps=1e-5),
            lambda: aten._fused_rms_norm(tn, [4096], tw, 1e-5)),
        "rms_norm bwd 16384x4096": (
            lambda: ops["_fused_rms_norm_backward"](egn, en, e_rms, ew, normalized_shape=ns,
                                                    output_mask=(True, True)),
            lambda: aten._fused_rms_norm_backward(tgn, tn, [4096], t_rms, tw, [True, True])),
        "gelu 64M": (lambda: ops["gelu"](ex, approximate="none"), lambda: f.gelu(tx)),
        "gelu tanh 64M": (lambda: ops["gelu"](ex, approximate="tanh"),
                          lambda: f.gelu(tx, approximate="tanh")),
        "gelu bwd 64M": (lambda: ops["gelu_backward"](eg, ex, approximate="none"),
                         lambda: aten.gelu_backward(tg, tx)),
        "silu 64M": (lambda: ops["silu"](ex), lambda: f.silu(tx)),
        "silu bwd 64M": (lambda: ops["silu_backward"](eg, ex),
                         lambda: aten.silu_backward(tg, tx)),
        "sigmoid 64M": (lambda: ops["sigmoid"](ex), lambda: torch.sigmoid(tx)),
        "sigmoid bwd 64M": (lambda: ops["sigmoid_backward"](eg, esig),
                            lambda: aten.sigmoid_backward(tg, tsig)),
        "tanh bwd 64M": (lambda: ops["tanh_backward"](eg, etanh),
                         lambda: aten.tanh_backward(tg, ttanh)),
        "mul 64M fp32": (lambda: ex * eg, lambda: tx * tg),
        "dropout 16M (host bits)": (
            lambda: ops["native_dropout"](state, ed, p=0.1, device=cuda),
            lambda: aten.native_dropout(td, 0.1, True)),
        "dropout bwd 16M": (lambda: ops["native_dropout_backward"](ed, emask, scale=1 / 0.9),
                            lambda: aten.native_dropout_backward(td, tmask, 1 / 0.9)),
        "nll_loss 65536x1000": (
            lambda: ops["nll_loss_forward"](el, et, None, reduction=1, ignore_index=-100),
            lambda: aten.nll_loss_forward(tl, tt, None, 1, -100)),
        "nll_loss bwd 65536x1000": (
            lambda: ops["nll_loss_backward"](eone, el, et, None, etotal, reduction=1,
                                             ignore_index=-100),
            lambda: aten.nll_loss_backward(tone, tl, tt, None, 1, -100, ttotal)),
    }
    for dtype in ("float32", "float16"):
        (eq, tq), (ek, tk), (ev, tv), (ego, tgo) = (pair(8, 16, 1024, 64, seed=s, dtype=dtype)
                                                    for s in (6, 7, 8, 9))
        for causal in (False, True):
            name = f"8x16x1024x64 {dtype}{' causal' if causal else ''}"
            cases[f"attention {name}"] = (
                lambda eq=eq, ek=ek, ev=ev, causal=causal: ops[
                    "_scaled_dot_product_flash_attention_for_cpu"](
                        eq, ek, ev, None, is_causal=causal, scale=0.125),
                lambda tq=tq, tk=tk, tv=tv, causal=causal: f.scaled_dot_product_attention(
                    tq, tk, tv, is_causal=causal, scale=0.125))
            eout, elog = ops["_scaled_dot_product_flash_attention_for_cpu"](
                eq, ek, ev, None, is_causal=causal, scale=0.125)
            # torch's backward alone: its graph kept, and run again each time
            tqkv = [t.detach().requires_grad_() for t in (tq, tk, tv)]
            tout = f.scaled_dot_product_attention(*tqkv, is_causal=causal, scale=0.125)
            cases[f"attention bwd {name}"] = (
                lambda eq=eq, ek=ek, ev=ev, ego=ego, eout=eout, elog=elog, causal=causal: ops[
                    "_scaled_dot_product_flash_attention_for_cpu_backward"](
                        ego, eq, ek, ev, eout, elog, None, is_causal=causal, scale=0.125),
                lambda tout=tout, tqkv=tqkv, tgo=tgo: torch.autograd.grad(
                    tout, tqkv, tgo, retain_graph=True))
    return cases


def benchmarks() -> list[tuple[str, float, float]]:
    for src in SOURCES:
        sys.path.insert(0, str(src))
    import cupy
    import numpy as np
    import torch

    import ember

    rows = []

    def pair(*shape: int, seed: int = 0, dtype: str = "float32") -> tuple[Any, Any]:
        host = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
        return ember.tensor(host, device="cuda"), torch.tensor(host, device="cuda")

    (ea, ta), (eb, tb) = pair(4096, 4096), pair(4096, 4096, seed=1)
    (ex, tx), (ey, ty) = pair(64, 1024, 1024), pair(64, 1024, 1024, seed=1)
    cases = {
        "matmul 4096^2 fp32": (lambda: ea @ eb, lambda: ta @ tb),
        "add 64M fp32": (lambda: ex + ey, lambda: tx + ty),
        "exp 64M fp32": (lambda: ex.exp(), lambda: tx.exp()),
        "sum 64M fp32": (lambda: ex.sum(), lambda: tx.sum()),
        "softmax 64x1024x1024": (lambda: ember.softmax(ex, -1), lambda: torch.softmax(tx, -1)),
        "tiny add (launch)": (lambda: ea[:2, :2] + eb[:2, :2], lambda: ta[:2, :2] + tb[:2, :2]),
    }

    if TRITON:
        cases.update(triton_cases(ember, torch, pair))

    def sync() -> None:  # the whole device: both frameworks' work
        cupy.cuda.Device().synchronize()

    for name, (fe, ft) in cases.items():
        print(name, end=": ", flush=True)
        try:
            e, t = paired_ms(fe, ft, sync)
        except Exception as exc:  # torch's side failed: report and go on
            print(f"torch failed: {type(exc).__name__}: {exc}")
            continue
        print(f"{e:.3f} ms, torch {t:.3f} ms")
        rows.append((name, e, t))
    return rows


def main() -> None:
    code, summary = run_cuda_tests()
    rows = benchmarks()
    print("\n== GPU check ==")
    print(f"CUDA tests: {summary} (exit {code})")
    print("Triton kernels: " + ("installed: tested and benchmarked" if TRITON else
                                "triton is not installed: not tested, cupy's reference ran"))
    print(f"{'benchmark':<40}{'ember ms':>10}{'torch ms':>10}{'ratio':>8}")
    for name, e, t in rows:
        print(f"{name:<40}{e:>10.3f}{t:>10.3f}{e / t:>8.2f}")
    sys.exit(code)


if __name__ == "__main__":
    main()
