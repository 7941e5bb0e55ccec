"""Every formula case of the elementwise and structural tables (reductions among them) in
complex128, against torch: torch's VJP of a holomorphic op is the gradient times the
conjugate derivative, of the others (abs, sgn, vdot...) what its formula states. The
cases run are those torch differentiates with complex inputs (its own errors and real-only
ops are out, decided once at collection)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import test_autograd_formulas_elementwise as elementwise
import test_autograd_formulas_structural as structural
import torch
from autograd_oracle import compare_grads, first, inputs


def _domain(opts: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in opts.items() if k in ("low", "high")}


def _torch_differentiates(fn: Any, shapes: list[tuple[int, ...]], opts: dict[str, Any]) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ts = inputs(shapes, "complex128", **_domain(opts))[1]
            out = first(fn(torch, *ts))
            if not out.requires_grad:
                return False
            torch.autograd.grad(out, ts, torch.ones_like(out), allow_unused=True)
    except (RuntimeError, TypeError, ValueError, NotImplementedError, IndexError):
        return False
    return True


CASES = [pytest.param(fn, shapes, opts, id=cid)
         for module in (elementwise, structural)
         for cid, fn, shapes, opts in module.CASES
         if _torch_differentiates(fn, shapes, opts)]


def test_the_complex_table_is_not_empty():
    assert len(CASES) > 100


@pytest.mark.parametrize(("fn", "shapes", "opts"), CASES)
def test_complex_gradients_match_torch(fn, shapes, opts):
    compare_grads(fn, shapes, "complex128", **_domain(opts))


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_acosh_gradient_takes_torchs_branch_off_its_real_domain(dtype):
    # below 1 torch's real formula stays (x^2 - 1).rsqrt() (finite below -1); its complex
    # one multiplies two rsqrts, whose branch differs where Re(x^2) < 1 and Im(x^2) > 0
    compare_grads(lambda m, x: x.acosh(), [(64,)], dtype, low=-3.0, high=-1.1)
    if dtype == "complex128":
        compare_grads(lambda m, x: x.acosh(), [(64,)], dtype, low=-1.0, high=1.0)
