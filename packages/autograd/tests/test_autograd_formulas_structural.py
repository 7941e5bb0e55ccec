"""VJPs of reductions, scans, sorting, views and shapes, joining, indexing and products
against torch, and by gradcheck (same table format as the elementwise file)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
from autograd_oracle import E, compare_grads, data_options, first, functional, inputs
from recurrent_cases import CASES as RECURRENT_CASES

import ember.autograd

POS = {"low": 0.5, "high": 2.0}
NO_GRADCHECK = {"gradcheck": False}
CONTIGUOUS = {"noncontiguous": False}  # torch itself refuses these on transposed inputs
M, V, B = (3, 4), (4,), (2, 3, 4)


def _idx(m: Any, values: Any) -> Any:
    return m.tensor(values)


def _setitem(index: Any) -> Any:
    def fn(m: Any, x: Any, v: Any) -> Any:
        y = x * 1
        y[index(m) if callable(index) else index] = v
        return y

    return fn


def _inplace_view(m: Any, x: Any, y: Any) -> Any:
    z = x * 1
    z[:, 1:3].mul_(y)
    return z


def _spread_and_mean(pair: Any) -> Any:
    spread, mean = pair
    return spread + 2 * mean


def _copy_into_buffer(m: Any, x: Any) -> Any:
    buf = m.zeros(3, 4, dtype=x.dtype)
    buf[1].copy_(x.exp())
    return buf


CASES: list[tuple[str, Any, list[tuple[int, ...]], dict[str, Any]]] = [
    # ---------------------------------------------------------------- reductions
    ("sum", lambda m, x: x.sum(), [M], {}),
    ("sum_dims", lambda m, x: x.sum((0, 2)), [B], {}),
    ("sum_keepdim", lambda m, x: x.sum(1, keepdim=True), [B], {}),
    ("sum_0d", lambda m, x: x.sum(), [()], {}),
    ("sum_empty", lambda m, x: x.sum(0), [(0, 3)], {}),
    ("nansum", lambda m, x: x.log().nansum(1), [M], NO_GRADCHECK),
    ("mean", lambda m, x: x.mean(), [M], {}),
    ("mean_dim", lambda m, x: x.mean(-1, keepdim=True), [B], {}),
    ("nanmean", lambda m, x: x.log().nanmean(1), [M], NO_GRADCHECK),
    ("prod", lambda m, x: x.prod(), [M], {}),
    ("prod_dim", lambda m, x: x.prod(1), [B], {}),
    ("prod_zero", lambda m, x: (x * (x > -1.5)).prod(1), [M], NO_GRADCHECK),
    ("var", lambda m, x: x.var(1), [M], {}),
    ("var_correction", lambda m, x: x.var((0, 1), correction=0, keepdim=True), [B], {}),
    ("std", lambda m, x: x.std(), [M], {}),
    ("std_dim", lambda m, x: x.std(0), [M], {}),
    # var_mean and std_mean: one node for both outputs, either or both differentiated
    ("var_mean", lambda m, x: _spread_and_mean(m.var_mean(x, 1)), [M], {}),
    ("var_mean_mean", lambda m, x: m.var_mean(x, (0, 2), keepdim=True)[1], [B], {}),
    ("std_mean", lambda m, x: _spread_and_mean(m.std_mean(x, correction=0)), [M], {}),
    ("std_mean_mean", lambda m, x: m.std_mean(x, 0)[1], [M], {}),
    ("amax", lambda m, x: x.amax(1), [M], {}),
    ("amin", lambda m, x: x.amin((0, 1)), [B], {}),
    ("aminmax", lambda m, x: sum(m.aminmax(x, dim=1)), [M], {}),
    ("max_all", lambda m, x: x.max(), [M], {}),
    ("min_all", lambda m, x: x.min(), [M], {}),
    ("max_all_ties", lambda m, x: m.cat([x, x]).max(), [M], NO_GRADCHECK),
    ("max_dim", lambda m, x: x.max(1), [M], {}),
    ("min_dim_keepdim", lambda m, x: x.min(0, keepdim=True), [M], {}),
    ("max_0d", lambda m, x: x.max(0), [()], {}),
    ("logsumexp", lambda m, x: x.logsumexp(1), [M], {}),
    ("norm", lambda m, x: x.norm(), [M], {}),
    ("norm_dim", lambda m, x: x.norm(dim=1), [M], {}),
    ("norm_p1", lambda m, x: x.norm(p=1, dim=0), [M], {}),
    ("norm_p3", lambda m, x: x.norm(p=3, dim=1), [M], {}),
    ("norm_p_half", lambda m, x: x.norm(p=0.5), [M], {}),
    ("norm_p1_5", lambda m, x: x.norm(p=1.5, dim=1), [M], {}),
    ("norm_inf", lambda m, x: x.norm(p=float("inf"), dim=1), [M], {}),
    ("norm_p0", lambda m, x: x.norm(p=0) + x.sum(), [M], {}),
    ("nuclear_norm", lambda m, x: m.norm(x, "nuc"), [M], {}),
    ("dist", lambda m, x, y: m.dist(x, y), [M, (4,)], {}),
    ("dist_p3", lambda m, x, y: m.dist(x, y, 3), [M, (3, 1)], {}),
    ("dist_inf", lambda m, x, y: m.dist(x, y, float("inf")), [M, M], {}),
    ("cumsum", lambda m, x: x.cumsum(1), [M], {}),
    ("cumprod", lambda m, x: x.cumprod(1), [M], {}),
    ("cumprod_zero", lambda m, x: (x * (x > -1)).cumprod(1), [M], NO_GRADCHECK),
    ("cummax", lambda m, x: x.cummax(1), [M], {}),
    ("cummin", lambda m, x: x.cummin(0), [M], {}),
    ("logcumsumexp", lambda m, x: x.logcumsumexp(1), [M], {}),
    # ---------------------------------------------------------------- sorting
    ("sort", lambda m, x: x.sort(1), [M], {}),
    ("sort_descending", lambda m, x: x.sort(0, descending=True), [M], {}),
    ("topk", lambda m, x: x.topk(2, 1), [M], {}),
    ("kthvalue", lambda m, x: x.kthvalue(2, 1), [M], {}),
    ("median", lambda m, x: x.median(), [M], {}),
    ("median_dim", lambda m, x: x.median(1), [M], {}),
    ("nanmedian", lambda m, x: x.nanmedian(), [M], {}),
    ("nanmedian_dim", lambda m, x: x.nanmedian(0), [M], {}),
    ("mode", lambda m, x: x.mode(1), [M], {}),
    # ---------------------------------------------------------------- views and shapes
    ("view", lambda m, x: x.view(4, 3), [M], CONTIGUOUS),
    ("reshape_copy", lambda m, x: x.t().reshape(-1), [M], {}),
    ("squeeze", lambda m, x: x.squeeze(1), [(3, 1, 4)], {}),
    ("unsqueeze", lambda m, x: x.unsqueeze(1), [M], {}),
    ("permute", lambda m, x: x.permute(2, 0, 1), [B], {}),
    ("transpose", lambda m, x: x.transpose(0, 2), [B], {}),
    ("expand", lambda m, x: x.expand(2, 3, 4), [(3, 1)], {}),
    ("narrow", lambda m, x: x.narrow(1, 1, 2), [M], {}),
    ("diagonal", lambda m, x: x.diagonal(1), [M], {}),
    ("unfold", lambda m, x: x.unfold(1, 2, 1), [M], {}),
    ("as_strided", lambda m, x: x.as_strided((2, 2), (1, 2), 1), [M], {}),
    ("alias", lambda m, x: x.as_subclass(type(x)) * 2, [M], {}),
    ("conj_physical", lambda m, x, y: m.complex(x, y).mH * 2, [M, M], NO_GRADCHECK),
    ("getitem", lambda m, x: x[1:, ::2], [M], {}),
    ("getitem_int", lambda m, x: x[1, None], [M], {}),
    # ---------------------------------------------------------------- joining
    ("cat", lambda m, x, y: m.cat([x, y], 1), [M, (3, 2)], {}),
    ("stack", lambda m, x, y: m.stack([x, y], 1), [M, M], {}),
    ("split", lambda m, x: x.split([1, 3], 1)[1], [M], {}),
    ("chunk_all", lambda m, x: m.cat(x.chunk(2, 1)[::-1], 1), [M], {}),
    ("unbind", lambda m, x: x.unbind(1)[2], [M], {}),
    ("repeat", lambda m, x: x.repeat(2, 1, 3), [M], {}),
    ("repeat_interleave", lambda m, x: x.repeat_interleave(2, 1), [M], {}),
    ("repeat_interleave_tensor", lambda m, x: x.repeat_interleave(_idx(m, [1, 0, 2]), 0),
     [M], {}),
    ("flip", lambda m, x: x.flip(1), [M], {}),
    ("roll", lambda m, x: x.roll(1, 1), [M], {}),
    ("roll_flat", lambda m, x: x.roll(5), [M], {}),
    ("tril", lambda m, x: x.tril(), [M], {}),
    ("triu", lambda m, x: x.triu(1), [M], {}),
    ("diag_embed", lambda m, x: m.diag_embed(x), [M], {}),
    # ---------------------------------------------------------------- indexing
    ("index", lambda m, x: x[_idx(m, [0, 2, 0])], [M], {}),
    ("index_mask", lambda m, x: x[x > 0], [M], {}),
    ("index_mixed", lambda m, x: x[1:, _idx(m, [0, 3])], [M], {}),
    ("setitem_slice", _setitem((slice(None), 1)), [M, (3,)], {}),
    ("setitem_index", _setitem(lambda m: _idx(m, [0, 2])), [M, V], {}),
    ("setitem_leading_ones", _setitem((slice(None), 1)), [M, (1, 3)], {}),
    ("setitem_broadcast", _setitem((slice(0, 2),)), [M, (1, 4)], {}),
    ("inplace_view", _inplace_view, [M, (3, 2)], {}),
    ("copy_into_buffer", _copy_into_buffer, [V], {}),
    ("index_put", lambda m, x, y: x.index_put((_idx(m, [0, 2]),), y), [M, V], {}),
    ("index_put_acc", lambda m, x, y: x.index_put((_idx(m, [0, 0]),), y, accumulate=True),
     [M, V], {}),
    ("masked_fill", lambda m, x: x.masked_fill(x > 0, 2.0), [M], {}),
    ("masked_fill_tensor", lambda m, x, v: x.masked_fill(x > 0, v), [M, ()], {}),
    ("masked_select", lambda m, x: x.masked_select(x > 0), [M], {}),
    ("masked_scatter", lambda m, x, y: x.masked_scatter(x > 0, y), [M, (13,)], {}),
    ("gather", lambda m, x: x.gather(1, _idx(m, [[0, 0], [1, 2], [3, 3]])), [M], {}),
    ("scatter", lambda m, x, y: x.scatter(1, _idx(m, [[0, 1], [1, 2], [3, 0]]), y),
     [M, (3, 2)], {}),
    ("scatter_value", lambda m, x: x.scatter(1, _idx(m, [[0, 1], [1, 2], [3, 0]]), 1.5),
     [M], {}),
    ("scatter_add", lambda m, x, y: x.scatter_add(1, _idx(m, [[0, 0], [1, 2], [3, 0]]), y),
     [M, (3, 2)], {}),
    ("scatter_reduce_sum", lambda m, x, y: x.scatter_reduce(
        1, _idx(m, [[0, 0], [1, 2], [3, 0]]), y, "sum", include_self=False), [M, (3, 2)], {}),
    ("scatter_reduce_mean", lambda m, x, y: x.scatter_reduce(
        1, _idx(m, [[0, 0], [1, 2], [3, 0]]), y, "mean"), [M, (3, 2)], {}),
    ("scatter_reduce_prod", lambda m, x, y: x.scatter_reduce(
        1, _idx(m, [[0, 0], [1, 2], [3, 0]]), y, "prod"), [M, (3, 2)], {}),
    ("scatter_reduce_amax", lambda m, x, y: x.scatter_reduce(
        1, _idx(m, [[0, 0], [1, 2], [3, 0]]), y, "amax"), [M, (3, 2)], {}),
    ("index_select", lambda m, x: x.index_select(1, _idx(m, [0, 2, 2])), [M], {}),
    ("index_add", lambda m, x, y: x.index_add(1, _idx(m, [0, 2]), y, alpha=2), [M, (3, 2)], {}),
    ("index_copy", lambda m, x, y: x.index_copy(1, _idx(m, [0, 2]), y), [M, (3, 2)], {}),
    ("index_fill", lambda m, x: x.index_fill(1, _idx(m, [0, 2]), 1.5), [M], {}),
    ("take", lambda m, x: x.take(_idx(m, [[0, 5], [5, 11]])), [M], {}),
    ("take_along_dim", lambda m, x: m.take_along_dim(x, _idx(m, [[0], [2], [1]]), 1), [M], {}),
    ("take_along_dim_flat", lambda m, x: m.take_along_dim(x, _idx(m, [0, 5, 5])), [M],
     CONTIGUOUS),
    ("put", lambda m, x, y: x.put(_idx(m, [0, 5]), y), [M, (2,)], {}),
    ("put_acc", lambda m, x, y: x.put(_idx(m, [5, 5]), y, accumulate=True), [M, (2,)], {}),
    # ---------------------------------------------------------------- products
    ("matmul", lambda m, x, y: x @ y, [M, (4, 5)], {}),
    ("matmul_batch_2d", lambda m, x, y: x @ y, [B, (4, 5)], {}),
    ("matmul_broadcast", lambda m, x, y: x @ y, [B, (1, 4, 5)], {}),
    ("mv", lambda m, x, y: x @ y, [M, V], {}),
    ("batch_mv", lambda m, x, y: x @ y, [B, V], {}),
    ("vm", lambda m, x, y: x @ y, [V, (2, 4, 5)], {}),
    ("vm_2d", lambda m, x, y: x @ y, [(3,), M], {}),
    ("dot", lambda m, x, y: x @ y, [V, V], {}),
    ("addmm", lambda m, x, y, z: m.addmm(x, y, z, beta=0.5, alpha=2), [(3, 5), M, (4, 5)], {}),
    ("addmv", lambda m, x, y, z: m.addmv(x, y, z), [(3,), M, V], {}),
    ("baddbmm", lambda m, x, y, z: m.baddbmm(x, y, z), [(2, 3, 5), B, (2, 4, 5)], {}),
    ("addbmm", lambda m, x, y, z: m.addbmm(x, y, z, beta=0.5, alpha=2), [(3, 5), B, (2, 4, 5)],
     {}),
    ("vdot", lambda m, x, y: m.vdot(x, y), [V, V], {}),
    ("outer", lambda m, x, y: m.outer(x, y), [(3,), V], {}),
    ("kron", lambda m, x, y: m.kron(x, y), [(2, 3), (3, 2)], {}),
    ("kron_ranks", lambda m, x, y: m.kron(x, y), [(2,), (3, 2)], {}),
    ("tensordot", lambda m, x, y: m.tensordot(x, y, dims=([1, 2], [0, 1])), [B, (3, 4, 5)], {}),
    ("einsum", lambda m, x, y: m.einsum("bij,bjk->bik", x, y), [B, (2, 4, 5)], {}),
    ("einsum_diagonal", lambda m, x: m.einsum("ii->i", x), [(3, 3)], {}),
    ("einsum_sum_out", lambda m, x, y: m.einsum("ij,k->", x, y), [M, (2,)], {}),
    ("einsum_ellipsis", lambda m, x, y: m.einsum("...ij,jk", x, y), [B, (4, 2)], {}),
    ("cross", lambda m, x, y: m.cross(x, y, dim=1), [(4, 3), (4, 3)], {}),
    ("trace", lambda m, x: m.trace(x), [M], {}),
    # ---------------------------------------------------------------- convolution, pooling
    ("conv2d", lambda m, x, w, b: m.conv2d(x, w, b, stride=2, padding=1, groups=2),
     [(2, 4, 6, 5), (6, 2, 3, 3), (6,)], {}),
    ("conv1d_dilated", lambda m, x, w: m.conv1d(x, w, padding="same", dilation=2),
     [(2, 3, 7), (4, 3, 3)], {}),
    ("conv3d_unbatched", lambda m, x, w: m.conv3d(x, w), [(2, 4, 3, 4), (3, 2, 2, 1, 2)], {}),
    ("conv_transpose2d", lambda m, x, w, b: m.conv_transpose2d(x, w, b, stride=2, padding=1,
                                                               output_padding=1, groups=2),
     [(2, 4, 4, 3), (4, 3, 3, 3), (6,)], {}),
    ("max_pool2d", lambda m, x: m.max_pool2d(x, 3, 2, 1, ceil_mode=True), [(2, 3, 6, 7)], {}),
    ("max_pool1d", lambda m, x: m.max_pool1d(x, 3, 1, 1), [(2, 3, 7)], {}),
    ("max_pool3d", lambda m, x: m.max_pool3d(x, 2), [(2, 3, 4, 4)], {}),
    ("avg_pool1d", lambda m, x: m.avg_pool1d(x, 3, 2, 1, True, False), [(2, 3, 8)], {}),
    ("avg_pool3d", lambda m, x: (m._C._nn if m is torch else m.ops.pooling).avg_pool3d(
        x, 3, 2, 1, divisor_override=7), [(1, 2, 4, 5, 4)], {}),
    ("adaptive_avg_pool1d", lambda m, x: m.adaptive_avg_pool1d(x, 3), [(2, 3, 7)], {}),
    ("adaptive_max_pool1d", lambda m, x: m.adaptive_max_pool1d(x, 3)[0], [(2, 3, 7)], {}),
    # ---------------------------------------------------------------- interpolation
    *[(f"interpolate_{mode}_{len(shape) - 2}d{'_aa' if 'antialias' in kw else ''}",
       lambda m, x, mode=mode, kw=kw: functional(m).interpolate(x, mode=mode, **kw), [shape],
       {}) for mode, shape, kw in [
        ("nearest", (2, 3, 5), {"scale_factor": 1.5}),
        ("nearest", (2, 2, 3, 4), {"size": (5, 3)}),
        ("nearest", (1, 2, 2, 3, 2), {"scale_factor": 2.0}),
        ("nearest-exact", (2, 3, 5), {"size": 7}),
        ("nearest-exact", (2, 2, 3, 4), {"scale_factor": 0.7}),
        ("nearest-exact", (1, 2, 2, 3, 2), {"size": (3, 2, 4)}),
        ("linear", (2, 3, 5), {"scale_factor": 1.5, "align_corners": True}),
        ("bilinear", (2, 2, 3, 4), {"size": (5, 3)}),
        ("bicubic", (2, 2, 4, 4), {"scale_factor": 1.5, "align_corners": True}),
        ("trilinear", (1, 2, 2, 3, 2), {"scale_factor": 1.5}),
        ("area", (1, 2, 4, 3, 5), {"size": (2, 2, 3)}),
        ("bilinear", (2, 2, 5, 6), {"scale_factor": 0.5, "antialias": True}),
        ("bicubic", (2, 2, 5, 6), {"size": (3, 7), "antialias": True}),
        ("lanczos", (2, 2, 5, 6), {"scale_factor": 0.6, "antialias": True})]],
    *RECURRENT_CASES,
]

IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_grad_matches_torch(case: Any, dtype: str) -> None:
    _, fn, shapes, opts = case
    compare_grads(fn, shapes, dtype, **data_options(opts))


NONCONTIGUOUS = [c for c in CASES
                 if all(len(s) > 1 for s in c[2]) and c[3].get("noncontiguous", True)]


@pytest.mark.parametrize("case", NONCONTIGUOUS, ids=[c[0] for c in NONCONTIGUOUS])
def test_grad_noncontiguous(case: Any) -> None:
    _, fn, shapes, opts = case
    compare_grads(fn, shapes, "float64", noncontiguous=True, **data_options(opts))


GRADCHECKED = [c for c in CASES if c[3].get("gradcheck", True)]


@pytest.mark.parametrize("case", GRADCHECKED, ids=[c[0] for c in GRADCHECKED])
def test_gradcheck(case: Any) -> None:
    _, fn, shapes, opts = case
    es, _ = inputs(shapes, "float64", **data_options(opts))
    assert ember.autograd.gradcheck(lambda *a: first(fn(E, *a)), es)


def test_cumprod_along_a_dim_of_size_1_passes_the_gradient_through():
    """Each output is its input there: an infinite input gets the gradient itself (torch
    returns it without dividing by the input)."""
    grads = []
    for m in (E, torch):
        x = m.tensor([[[2.0]], [[-math.inf]], [[0.5]]], dtype=m.float64, requires_grad=True)
        (x.cumprod(-1) * m.tensor([[[1.0]], [[2.0]], [[3.0]]], dtype=m.float64)).sum().backward()
        grads.append(np.asarray(x.grad))
    np.testing.assert_array_equal(*grads)


def test_cumprod_with_zeros_and_infinities_gives_torchs_gradient():
    """With a zero in a slice (and no graph to build) torch's formula masks each part:
    before the first zero, the zero-free formula; at it, the products up to the next zero;
    after it, 0. An inf past the first zero then gives 0 there, not ``inf * 0``."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        shape = tuple(int(n) for n in rng.integers(1, 5, rng.integers(1, 4)))
        a = rng.standard_normal(shape)
        a[rng.random(shape) < 0.3] = 0.0
        a[rng.random(shape) < 0.1] = math.inf
        g = rng.standard_normal(shape)
        dim = int(rng.integers(0, len(shape)))
        grads = []
        for m in (E, torch):
            x = m.tensor(a, requires_grad=True)
            x.cumprod(dim).backward(m.tensor(g))
            grads.append(np.asarray(x.grad))
        np.testing.assert_allclose(*grads, rtol=1e-12, atol=1e-12, err_msg=f"{a} {dim}")


@pytest.mark.parametrize("equation", ["i,j->ij", "i,j->j", "ij,j->ij"])
def test_einsum_of_two_dtypes_differentiates_in_the_promoted_one(equation):
    """An einsum torch computes by products alone takes operands of two dtypes; each
    gradient is contracted in the result's dtype, then cast to its operand's."""
    grads = []
    for m in (E, torch):
        x = m.tensor([-7.0, -8.0], requires_grad=True)
        y = m.tensor([2.0, 0.5], dtype=m.float64, requires_grad=True)
        a = x if equation.startswith("i,") else x.reshape(2, 1).expand(2, 2) * 1
        out = m.einsum(equation, a, y)
        (out * m.arange(out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
        grads.append((np.asarray(x.grad), str(x.grad.dtype), np.asarray(y.grad)))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    assert grads[0][1].split(".")[-1] == grads[1][1].split(".")[-1]
    np.testing.assert_array_equal(grads[0][2], grads[1][2])
