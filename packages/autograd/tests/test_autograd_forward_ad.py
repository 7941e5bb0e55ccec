"""Forward-mode AD (``ember.autograd.forward_ad``) against ``torch.autograd.forward_ad``.

Every program of the VJP tables (elementwise and structural) is run on dual tensors in
both frameworks, and the output tangents compared; then the level semantics: what
``make_dual``/``unpack_dual`` return, errors, ``no_grad``, in-place ops, reverse over
forward.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import test_autograd_formulas_elementwise as elementwise
import test_autograd_formulas_structural as structural
import torch
import torch.autograd.forward_ad as tfw
from autograd_oracle import TOP as ember
from autograd_oracle import E, check, data_options, first, pair

import ember.autograd.forward_ad as fwd

# forward-mode AD of complex results is not supported yet: these raise
COMPLEX = {"complex", "polar", "conj_physical"}
CASES = [c for c in elementwise.CASES + structural.CASES if c[0] not in COMPLEX]
COMPLEX_CASES = [c for c in elementwise.CASES + structural.CASES if c[0] in COMPLEX]
IDS = [c[0] for c in CASES]
# torch's double-backward JVP is the oracle where its forward AD gives no tangent (None), and
# where its forward formula is the true derivative while its backward is a chosen gradient
# (embedding's padding row and frequency scaling), which Ember's tangents transpose
TORCH_FORWARD_MISSING = {"scatter_reduce_prod", "embedding_padded", "attention",
                         "attention_causal_gqa", "attention_masked"}


def _tangents(shapes: list[tuple[int, ...]], dtype: str
              ) -> tuple[list[E.Tensor], list[torch.Tensor]]:
    pairs = [pair(s, dtype, seed=50 + i) for i, s in enumerate(shapes)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _primals(shapes: list[tuple[int, ...]], dtype: str, opts: dict[str, Any],
             noncontiguous: bool = False) -> tuple[list[E.Tensor], list[torch.Tensor]]:
    pairs = [pair(s, dtype, seed=i, noncontiguous=noncontiguous and len(s) > 1,
                  **{"low": -2.0, "high": 2.0, **data_options(opts)})
             for i, s in enumerate(shapes)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def compare_tangents(fn: Any, shapes: list[tuple[int, ...]], dtype: str, opts: dict[str, Any],
                     noncontiguous: bool = False, torch_forward: bool = True) -> None:
    """The output and its tangent equal torch's for random primals and tangents."""
    pe, pt = _primals(shapes, dtype, opts, noncontiguous)
    te, tt = _tangents(shapes, dtype)
    with fwd.dual_level():
        oe = first(fn(E, *[fwd.make_dual(p, t) for p, t in zip(pe, te)]))
        primal_e, tangent_e = fwd.unpack_dual(oe)
    if torch_forward:
        with tfw.dual_level():
            ot = first(fn(torch, *[tfw.make_dual(p, t) for p, t in zip(pt, tt)]))
            primal_t, tangent_t = tfw.unpack_dual(ot)
    else:
        primal_t, tangent_t = torch.autograd.functional.jvp(
            lambda *a: first(fn(torch, *a)), tuple(pt), tuple(tt))
    check(primal_e, primal_t.resolve_conj())
    assert tangent_e is not None
    check(tangent_e, tangent_t.resolve_conj())


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_tangent_matches_torch(case: Any, dtype: str) -> None:
    name, fn, shapes, opts = case
    compare_tangents(fn, shapes, dtype, opts, torch_forward=name not in TORCH_FORWARD_MISSING)


@pytest.mark.parametrize("case", COMPLEX_CASES, ids=[c[0] for c in COMPLEX_CASES])
def test_complex_tangent_is_refused(case: Any) -> None:
    _, fn, shapes, opts = case
    pe, _ = _primals(shapes, "float64", opts)
    te, _ = _tangents(shapes, "float64")
    with fwd.dual_level():
        out = first(fn(E, *[fwd.make_dual(p, t) for p, t in zip(pe, te)]))
        with pytest.raises(NotImplementedError, match="complex"):
            fwd.unpack_dual(out)


NONCONTIGUOUS = [c for c in CASES if all(len(s) > 1 for s in c[2])
                 and c[3].get("noncontiguous", True)]


@pytest.mark.parametrize("case", NONCONTIGUOUS, ids=[c[0] for c in NONCONTIGUOUS])
def test_tangent_noncontiguous(case: Any) -> None:
    name, fn, shapes, opts = case
    compare_tangents(fn, shapes, "float64", opts, noncontiguous=True,
                     torch_forward=name not in TORCH_FORWARD_MISSING)


# ---------------------------------------------------------------------- level semantics

def test_make_dual_returns_a_view_carrying_the_tangent() -> None:
    x, t = E.randn(3), E.randn(3)
    with fwd.dual_level() as level:
        assert level == 0
        d = fwd.make_dual(x, t)
        assert d._base is x
        unpacked = fwd.unpack_dual(d)
        assert isinstance(unpacked, fwd.UnpackedDualTensor)
        assert unpacked.tangent is t
        assert unpacked.primal._base is x and unpacked.primal is not x
        assert not unpacked.primal.requires_grad
        assert fwd.unpack_dual(unpacked.primal).tangent is None
        assert fwd.unpack_dual(x).tangent is None
        y = d.sin()
    # leaving the level forgets every tangent
    assert fwd.unpack_dual(y) == (y, None)
    assert fwd.unpack_dual(d).tangent is None


def test_dual_level_errors() -> None:
    x = E.randn(3)
    with pytest.raises(RuntimeError, match="no level exists"):
        fwd.make_dual(x, E.randn(3))
    with pytest.raises(RuntimeError, match="Dual level|not the last one"):
        fwd.exit_dual_level()
    with fwd.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwd.enter_dual_level()
        with pytest.raises(RuntimeError, match=r"size \[3\] while the given forward gradient "
                                               r"is of size \[4\]"):
            fwd.make_dual(x, E.randn(4))
        with pytest.raises(ValueError, match="primal to be floating point"):
            fwd.make_dual(E.arange(3), E.randn(3))
        with pytest.raises(ValueError, match="tangent to be floating point"):
            fwd.make_dual(x, E.arange(3))
        d = fwd.make_dual(x, E.randn(3))
        with pytest.raises(RuntimeError, match="already has a forward gradient"):
            fwd.make_dual(d * 2, E.randn(3))
        with pytest.raises(TypeError):
            fwd.unpack_dual(3.0)  # type: ignore[arg-type]
        assert fwd.unpack_dual(d.int()).tangent is None
    # the failed calls left the level closed and x untouched
    assert not x.requires_grad and x.grad_fn is None
    lvl = fwd.enter_dual_level()
    fwd.exit_dual_level(level=lvl)


def test_dual_level_as_decorator() -> None:
    x, t = E.randn(3, dtype=E.float64), E.randn(3, dtype=E.float64)

    @fwd.dual_level()
    def tangent_of_exp() -> Any:
        return fwd.unpack_dual(fwd.make_dual(x, t).exp()).tangent

    check(tangent_of_exp(), torch.tensor((x.exp() * t).numpy()))


def _both(fn: Any, shapes: list[tuple[int, ...]]) -> tuple[Any, Any]:
    """``fn(m, fw, *primals, *tangents)`` run inside a dual level of each framework
    (``m`` is the top-level module: ``ember`` or ``torch``)."""
    pe, pt = _primals(shapes, "float64", {})
    te, tt = _tangents(shapes, "float64")
    with fwd.dual_level():
        re = fn(ember, fwd, *pe, *te)
    with tfw.dual_level():
        rt = fn(torch, tfw, *pt, *tt)
    return re, rt


def test_tangents_flow_under_no_grad() -> None:
    def fn(m: Any, fw: Any, x: Any, t: Any) -> Any:
        d = fw.make_dual(x, t)
        with m.no_grad():
            y = (d * d).exp().sum(0)
        return fw.unpack_dual(y).tangent

    check(*_both(fn, [(3, 4)]))


def test_inplace_ops_update_tangents() -> None:
    def fn(m: Any, fw: Any, x: Any, y: Any, tx: Any, ty: Any) -> Any:
        dx, dy = fw.make_dual(x, tx), fw.make_dual(y, ty)
        z = dx.clone()
        z.mul_(dy)
        z[0].add_(dx[1].sin())
        buffer = m.zeros(3, 4, dtype=x.dtype)
        buffer[1:].copy_(z[1:] * 2)
        return fw.unpack_dual(z).tangent, fw.unpack_dual(buffer).tangent

    (ze, be), (zt, bt) = _both(fn, [(3, 4), (3, 4)])
    check(ze, zt)
    check(be, bt)


def test_several_duals_and_intermediates() -> None:
    def fn(m: Any, fw: Any, x: Any, y: Any, tx: Any, ty: Any) -> Any:
        dx, dy = fw.make_dual(x, tx), fw.make_dual(y, ty)
        h = (dx @ dy.t()).tanh()
        out = m.cat([h.softmax(1), dx[:, :2]], 1).log_softmax(0)
        return [fw.unpack_dual(v).tangent for v in (h, out, dy[1])]

    for a, b in zip(*_both(fn, [(3, 4), (5, 4)])):
        check(a, b)


def test_reverse_over_forward() -> None:
    """The tangent is differentiable with respect to a primal that requires grad."""

    def fn(m: Any, fw: Any, x: Any, t: Any) -> Any:
        x = x.clone().requires_grad_()
        y = (fw.make_dual(x, t).sin() * 3).sum()
        primal, tangent = fw.unpack_dual(y)
        assert primal.requires_grad and tangent.requires_grad
        return m.autograd.grad(tangent, x)[0]

    check(*_both(fn, [(3, 4)]))


def test_tangent_of_a_graph_free_dual_has_no_history() -> None:
    x, t = E.randn(3, 4), E.randn(3, 4)
    with fwd.dual_level():
        primal, tangent = fwd.unpack_dual(fwd.make_dual(x, t).exp().sum(1))
    assert tangent is not None
    assert not primal.requires_grad and not tangent.requires_grad
    assert tangent.grad_fn is None
    np.testing.assert_allclose(tangent.numpy(), (x.exp() * t).sum(1).numpy(), rtol=1e-6)


def test_backward_inside_a_level_is_unchanged() -> None:
    x = E.randn(3, dtype=E.float64).requires_grad_()
    with fwd.dual_level():
        d = fwd.make_dual(x, E.ones(3, dtype=E.float64))
        (d * d).sum().backward()
    assert x.grad is not None and not x.grad.requires_grad
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())
