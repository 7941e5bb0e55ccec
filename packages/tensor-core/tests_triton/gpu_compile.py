"""Compile every Triton kernel for a GPU without one: the launches a set of calls makes
are compiled for an H100/H200 (sm_90) by Triton's own compiler and ``ptxas``, which ship
with triton, instead of being run. It proves what the interpreter cannot: that the
kernels type-check and lower for the GPU (float64 dots, the exponentials' dtypes, the
launch's signatures as Triton's launcher specializes them) and that their tiles fit a
block's shared memory.

Run without ``TRITON_INTERPRET`` (``python gpu_compile.py``); it prints one line per
compiled specialization and exits non-zero where one fails.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.runtime.jit import mangle_type

import ember.core as ember
from ember.core.random import seeded_state
from ember.core.triton_kernels import (
    activations,
    attention,
    dropout,
    elementwise,
    launching,
    losses,
    normalization,
    softmax,
)

TARGET = GPUTarget("cuda", 90, 32)
SHARED_MEMORY = 232448  # bytes a block may use on sm_90
MODULES = (softmax, normalization, activations, dropout, losses, attention, elementwise)
_compiled: dict[Any, Any] = {}
failures: list[str] = []


def compile_launch(kernel: Any, grid: tuple[int, ...], *args: Any, num_warps: int = 4,
                   num_stages: int = 3) -> None:
    """``launching.launch``'s stand-in: the kernel compiled for the signature Triton's
    launcher would give these arguments (an integer 1 specialized to a constant)."""
    signature, constexprs = {}, {}
    for param, arg in zip(kernel.params, args, strict=True):
        if param.is_constexpr or (type(arg) is int and arg == 1):
            constexprs[param.name] = arg
            signature[param.name] = "constexpr"
        elif param.annotation_type:
            signature[param.name] = param.annotation_type
        else:
            signature[param.name] = mangle_type(
                launching.Pointer(arg) if isinstance(arg, np.ndarray) else arg)
    key = (kernel.fn.__name__, tuple(signature.items()), repr(sorted(constexprs.items())),
           num_warps, num_stages)
    if key in _compiled:
        return
    name = f"{kernel.fn.__module__}.{kernel.fn.__name__}{list(signature.values())}"
    try:
        compiled = triton.compile(ASTSource(kernel, signature, constexprs), target=TARGET,
                                  options={"num_warps": num_warps, "num_stages": num_stages,
                                           "enable_fp_fusion": True})
    except Exception as exc:  # report every failing specialization, not only the first
        failures.append(f"{name}: {type(exc).__name__}: {str(exc)[-2000:]}")
        return
    _compiled[key] = compiled
    shared = compiled.metadata.shared
    print(f"{name} {constexprs} shared={shared}")
    if shared > SHARED_MEMORY:
        failures.append(f"{name} {constexprs}: {shared} bytes of shared memory, over "
                        f"{SHARED_MEMORY}")


def _calls(dtype: str) -> None:
    rng = np.random.default_rng(0)

    def a(*shape: int, kind: str = dtype) -> Any:
        return rng.standard_normal(shape).astype(kind)

    for rows, n in ((1, 1), (4, 3), (4, 4097)):  # (a 1 is specialized to a constant)
        x = a(rows, n)
        for fn in (softmax.softmax, softmax.log_softmax):
            fn(x, dim=1)
        softmax.softmax_backward(x, x, dim=1)
        softmax.log_softmax_backward(x, x, dim=1)
        w = a(n)
        stats = a(rows, 1)
        normalization.layer_norm(x, w, w, normalized_shape=(n,), eps=1e-5)
        normalization.layer_norm(x, None, None, normalized_shape=(n,), eps=1e-5)
        normalization.layer_norm_backward(x, x, stats, stats, w, normalized_shape=(n,),
                                          output_mask=(True, True, True))
        normalization.rms_norm(x, w, normalized_shape=(n,), eps=1e-5)
        normalization.rms_norm_backward(x, x, stats, w, normalized_shape=(n,),
                                        output_mask=(True, True))
    softmax.softmax(a(4, 5, 3), dim=1)
    if dtype == "float16":
        x, w = a(4, 40), a(40, kind="float32")
        normalization.layer_norm(x, w, w, normalized_shape=(40,), eps=1e-5)
        normalization.layer_norm_backward(x, x, a(4, 1, kind="float32"),
                                          a(4, 1, kind="float32"), w, normalized_shape=(40,),
                                          output_mask=(True, True, True))
    x = a(3000)
    for approximate in ("none", "tanh"):
        activations.gelu(x, approximate=approximate)
        activations.gelu_backward(x, x, approximate=approximate)
    activations.silu(x)
    activations.silu_backward(x, x)
    activations.silu_(x)
    activations.sigmoid(x)
    activations.sigmoid_(x)
    activations.sigmoid_backward(x, x)
    activations.tanh_backward(x, x)
    elementwise.exp(x)
    elementwise.add(x, x)
    elementwise.mul(x, x)
    dropout.native_dropout(seeded_state(1)._data, x, p=0.2, device=ember.device("cuda"))
    dropout.native_dropout_backward(x, x > 0, scale=1.25)
    x, t = a(6, 10), rng.integers(0, 10, 6)
    for reduction, w in ((0, None), (1, a(10)), (2, None)):
        losses.nll_loss(x, t, w, reduction=reduction, ignore_index=-100)
        losses.nll_loss_backward(a(6) if reduction == 0 else a(), x, t, w, a(),
                                 reduction=reduction, ignore_index=-100)
    losses.nll_loss(a(2, 10, 3, 3), rng.integers(0, 10, (2, 3, 3)), None, reduction=1,
                    ignore_index=-100)
    q = a(2, 2, 70, 64)
    cases = [(q, None, True), (q, rng.random((70, 70)) > 0.5, False), (q, a(2, 1, 70, 70), False),
             (a(1, 1, 70, 256), None, False), (a(1, 1, 1, 1), None, True)]
    for q, mask, causal in cases:
        out, lse = attention.attention(q, q, q, mask, is_causal=causal, scale=0.125)
        attention.attention_backward(q, q, q, q, out, lse, mask, is_causal=causal, scale=0.125)


def main() -> int:
    if launching.INTERPRETED:
        print("run without TRITON_INTERPRET: this compiles the kernels for a GPU")
        return 2
    for module in MODULES:
        module.launch = compile_launch  # type: ignore[attr-defined]
    for dtype in ("float32", "float64", "float16"):
        _calls(dtype)
    print(f"{len(_compiled)} specializations compiled for {TARGET}")
    for failure in failures:
        print("FAILED", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
