"""scaled_dot_product_attention against torch: outputs and the fused backward's gradients
with causal, bool and float masks, broadcast batch dims, grouped heads, rows that see no
key, half types, blocks of queries smaller than the sequence; errors; the native row
loops against their numpy reference."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch_oracle import check, check_same_error

import ember.core as ember
from ember.core import native
from ember.core.ops import attention as attention_ops

sdpa = attention_ops.scaled_dot_product_attention


def _arrays(shapes, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(0, 1, s).astype(dtype) for s in shapes]


def _both(arrays, dtype=None):
    es = [ember.from_numpy(a.copy()) for a in arrays]
    ts = [torch.from_numpy(a.copy()) for a in arrays]
    if dtype is not None:
        es = [e.to(getattr(ember, dtype)) for e in es]
        ts = [t.to(getattr(torch, dtype)) for t in ts]
    return es, ts


def _mask(kind, length, width):
    rng = np.random.default_rng(9)
    if kind == "bool":
        m = rng.random((length, width)) > 0.3
        m[1] = False  # a query that sees no key
        return m
    if kind == "float":
        return rng.normal(0, 1, (2, 1, length, width)).astype(np.float32)
    return None


CASES = [
    ((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 8), {}),
    ((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 6), {"is_causal": True}),
    ((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 8), {"mask": "bool"}),
    ((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 8), {"mask": "float", "scale": 0.3}),
    ((2, 3, 5, 8), (3, 7, 8), (3, 7, 8), {}),
    ((2, 4, 5, 8), (2, 2, 7, 8), (2, 2, 7, 8), {"enable_gqa": True}),
    ((64, 16), (64, 16), (64, 16), {"is_causal": True}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", CASES, ids=range(len(CASES)))
@pytest.mark.parametrize("blocks", ["whole", "blocks of 2 queries"])
def test_attention_and_its_fused_backward_match_torch(dtype, shapes, blocks, monkeypatch):
    qs, ks, vs, options = shapes
    if blocks != "whole":
        monkeypatch.setattr(attention_ops, "_BLOCK_ELEMENTS", 2 * 3 * 2 * 7)
    options = dict(options)
    mask = _mask(options.pop("mask", None), qs[-2], ks[-2])
    (qe, ke, ve), (qt, kt, vt) = _both(_arrays([qs, ks, vs], dtype))
    me = None if mask is None else ember.from_numpy(mask)
    mt = None if mask is None else torch.from_numpy(mask)
    for t in (qt, kt, vt):
        t.requires_grad_()
    ot = F.scaled_dot_product_attention(qt, kt, vt, mt, **options)
    check(sdpa(qe, ke, ve, me, **options), ot)
    if qs[:-2] != ks[:-2]:
        return  # broadcast or grouped heads: the autograd tests take these
    (g,) = _arrays([tuple(ot.shape)], dtype, seed=4)
    scale = options.get("scale", 1 / qs[-1] ** 0.5)
    causal = options.get("is_causal", False)
    out, lse = attention_ops.ATTENTION(qe, ke, ve, me, is_causal=causal, scale=scale)
    grads = attention_ops.ATTENTION_BACKWARD(ember.from_numpy(g), qe, ke, ve, out, lse, me,
                                             is_causal=causal, scale=scale)
    check(list(grads), list(torch.autograd.grad(ot, (qt, kt, vt), torch.from_numpy(g))))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_types_compute_in_float32_as_torch(dtype):
    (qe, ke, ve), (qt, kt, vt) = _both(_arrays([(2, 3, 9, 8)] * 3), dtype)
    check(sdpa(qe, ke, ve, is_causal=True), F.scaled_dot_product_attention(qt, kt, vt,
                                                                           is_causal=True))


def test_the_backward_primitive_matches_torchs_flash_backward():
    (q, k, v, g), (qt, kt, vt, gt) = _both(_arrays([(2, 3, 6, 8)] * 4))
    out, lse = attention_ops.ATTENTION(q, k, v, None, is_causal=True, scale=0.35)
    out_t, lse_t = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        qt, kt, vt, 0.0, True, scale=0.35)
    check([out, lse], [out_t, lse_t])
    check(list(attention_ops.ATTENTION_BACKWARD(g, q, k, v, out, lse, None, is_causal=True,
                                                scale=0.35)),
          list(torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
              gt, qt, kt, vt, out_t, lse_t, 0.0, True, scale=0.35)))


def test_the_backward_primitive_of_an_empty_batch_gives_empty_gradients():
    """(torch's CPU kernel stops the process on empty operands: no oracle here)"""
    q, k, v = (ember.zeros(0, 2, n, 8) for n in (3, 5, 5))
    out, lse = attention_ops.ATTENTION(q, k, v, None, is_causal=False, scale=0.35)
    grads = attention_ops.ATTENTION_BACKWARD(out, q, k, v, out, lse, None, is_causal=False,
                                             scale=0.35)
    assert [tuple(d.shape) for d in grads] == [(0, 2, 3, 8), (0, 2, 5, 8), (0, 2, 5, 8)]


def test_dropout_takes_the_math_path_and_drops_weights():
    (q, k, v), _ = _both(_arrays([(2, 5, 8)] * 3))
    ember.manual_seed(0)
    a = sdpa(q, k, v, dropout_p=0.5)
    ember.manual_seed(0)
    assert ember.equal(a, sdpa(q, k, v, dropout_p=0.5))
    assert not ember.allclose(a, sdpa(q, k, v))


@pytest.mark.parametrize("case,phrase", [
    (lambda m, f: f(m.ones(2, 3, 4), m.ones(2, 3, 4).double(), m.ones(2, 3, 4)),
     "to have the same dtype"),
    (lambda m, f: f(m.ones(2, 3, 4), m.ones(2, 3, 4), m.ones(2, 3, 4),
                    attn_mask=m.ones(3, 3).long()), "Expected attn_mask dtype"),
    (lambda m, f: f(m.ones(2, 3, 4), m.ones(2, 3, 5), m.ones(2, 3, 5)),
     "Expected size for first two dimensions of batch2"),
    (lambda m, f: f(m.ones(2, 3, 4), m.ones(2, 3, 4), m.ones(2, 3, 4),
                    attn_mask=m.ones(3, 3).double()), "Expected attn_mask dtype"),
    (lambda m, f: f(m.ones(2, 2, 5, 4), m.ones(3, 2, 6, 4), m.ones(3, 2, 6, 4)),
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton"),
])
def test_errors_match_torch(case, phrase):
    check_same_error(lambda m: case(m, F.scaled_dot_product_attention if m is torch else sdpa),
                     phrase)


@pytest.mark.skipif(native._compiler() is None, reason="no C compiler")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_native_rows_agree_with_the_numpy_reference(dtype, monkeypatch):
    q, k, v, g = _arrays([(4, 64, 16), (4, 80, 16), (4, 80, 16), (4, 64, 16)], dtype)
    mask = np.random.default_rng(3).random((64, 80)) > 0.2
    mask[5] = False
    fast = attention_ops._attention(q, k, v, mask, is_causal=True, scale=0.25)
    back = attention_ops._attention_backward(g, q, k, v, *fast, mask, is_causal=True,
                                             scale=0.25)
    monkeypatch.setattr(attention_ops._KERNELS, "_bound", {})  # every loop in numpy
    slow = attention_ops._attention(q, k, v, mask, is_causal=True, scale=0.25)
    slow_back = attention_ops._attention_backward(g, q, k, v, *slow, mask, is_causal=True,
                                                  scale=0.25)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-12,
                                                                     "atol": 1e-13}
    for a, b in zip((*fast, *back), (*slow, *slow_back)):
        np.testing.assert_allclose(a, b, **tol)
