"""The nll_loss kernels (1-d, 2-d and 4-d inputs, every reduction, weights, ignored
targets) and the flash attention forward and backward (masks, causal, head sizes, query
and key counts around the blocks) against their ops' reference forwards and torch, every
dtype."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from triton_oracle import DTYPES, check_kernel, host, make

from ember.core.dispatch import REGISTRY

aten = torch.ops.aten
NLL = {1: ("nll_loss_forward", "nll_loss_backward"), 2: ("nll_loss_forward", "nll_loss_backward"),
       4: ("nll_loss2d_forward", "nll_loss2d_backward")}
SHAPES = [((5,), ()), ((4, 3), (4,)), ((1, 1000), (1,)), ((3000, 3), (3000,)),
          ((2, 3, 2, 5), (2, 2, 5))]


def _targets(xp, target_shape, classes, ignore_index):
    t = np.random.default_rng(7).integers(0, classes, target_shape)
    if t.size > 1:
        t.reshape(-1)[1] = ignore_index
    return xp.asarray(t)


def _nll_both(xp, x, t, w, reduction, ignore_index, dtype):
    """The forward, then the backward. A float16 reduction adds in float32 (as torch's CUDA
    kernel), where the reference adds in float16 in torch's CPU order: its reference is
    computed from the operands in float32."""
    forward, backward = NLL[x.ndim]
    params = {"reduction": reduction, "ignore_index": ignore_index}
    reduced = reduction != 0 or x.ndim == 1
    check_kernel(forward, [x, t, w], params, dtype,
                 lambda xt, tt, wt: getattr(aten, forward)(xt, tt, wt, reduction, ignore_index),
                 widen_reference=reduced)
    out, total = REGISTRY[forward].forward(x, t, w, **params)
    g = make(xp, out.shape, dtype, seed=9)
    check_kernel(backward, [g, x, t, w, total], params, dtype,
                 lambda gt, xt, tt, wt, tw: getattr(aten, backward)(
                     gt, xt, tt, wt, reduction, ignore_index, tw))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,target_shape", SHAPES)
@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss(xp, dtype, shape, target_shape, reduction, weighted):
    classes = shape[0] if len(shape) == 1 else shape[1]
    x = make(xp, shape, dtype)
    w = make(xp, (classes,), dtype, seed=3, low=0.1, high=2.0) if weighted else None
    _nll_both(xp, x, _targets(xp, target_shape, classes, -100), w, reduction, -100, dtype)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss_strided_input_and_ignored_class(xp, reduction):
    x = make(xp, (6, 10), "float32", layout="strided")
    _nll_both(xp, x, _targets(xp, (6,), 10, 2), None, reduction, 2, "float32")


def test_nll_loss_every_target_ignored(xp):
    """The mean over no weight is NaN, as torch's."""
    x = make(xp, (3, 4), "float32")
    _nll_both(xp, x, xp.full((3,), -100, xp.int64), None, 1, -100, "float32")


def test_nll_loss_empty_batch(xp):
    _nll_both(xp, make(xp, (0, 4), "float32"), xp.zeros((0,), xp.int64), None, 1, -100,
              "float32")


@pytest.mark.parametrize("bad", [5, -1])
def test_nll_loss_target_out_of_bounds(xp, bad):
    x, t = make(xp, (3, 5), "float32"), xp.asarray(np.array([0, bad, 1]))
    for name in ("nll_loss_forward",):
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
            REGISTRY[name].kernels["cuda"](x, t, None, reduction=1, ignore_index=-100)
    g = xp.ones((), xp.float32)
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
        REGISTRY["nll_loss_backward"].kernels["cuda"](g, x, t, None, g, reduction=1,
                                                      ignore_index=-100)


# float16: the kernel rounds the probabilities to float16 for their product with the
# values (the tensor cores' inputs), as flash attention does, where the reference and
# torch's CPU kernel keep them in float32: up to 2**-11 of the largest |value| more.
_HALF = {"rtol": 1e-3, "atol": 1e-3 + 2 ** -11}


def _torch_attention(causal):
    """torch's CPU kernel, which takes 4-d operands of one head size and a float mask
    (a bool one becomes 0 where kept, -inf elsewhere), and stops the process on empty ones
    (a floating-point exception). Its log-sum-exp of a query that sees no key is 0, where
    the reference's (which its backward reads) is -inf: only the outputs are compared
    there."""

    def attention(q, k, v, mask):
        if q.shape[-1] != v.shape[-1] or not q.numel() or not k.numel():
            return None
        if mask is not None and mask.dtype == torch.bool:
            mask = torch.zeros(mask.shape, dtype=q.dtype).masked_fill(~mask, -torch.inf)
        three = q.ndim == 3
        if three:
            q, k, v = q[None], k[None], v[None]
        out, lse = aten._scaled_dot_product_flash_attention_for_cpu(
            q, k, v, 0.0, causal, attn_mask=mask, scale=0.4)
        if mask is not None and (mask == -torch.inf).all(-1).any():
            lse = None
        return (out[0], None if lse is None else lse[0]) if three else (out, lse)

    return attention


def _attention(xp, q_shape, k_shape, ev, dtype, mask=None, causal=False, layout="contiguous"):
    q = make(xp, q_shape, dtype, layout=layout, low=-1.0, high=1.0)
    k = make(xp, k_shape, dtype, seed=1, low=-1.0, high=1.0)
    v = make(xp, (*k_shape[:-1], ev), dtype, seed=2, low=-1.0, high=1.0)
    params = {"is_causal": causal, "scale": 0.4}
    check_kernel("_scaled_dot_product_flash_attention_for_cpu", [q, k, v, mask], params,
                 dtype, _torch_attention(causal), **(_HALF if dtype == "float16" else {}))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("length,width", [(1, 1), (3, 5), (17, 70), (70, 33)])
@pytest.mark.parametrize("causal", [False, True])
def test_attention(xp, dtype, length, width, causal):
    _attention(xp, (2, 2, length, 8), (2, 2, width, 8), 8, dtype, causal=causal)


@pytest.mark.parametrize("dtype", DTYPES)
def test_attention_masks(xp, dtype):
    rng = np.random.default_rng(4)
    keep = rng.random((20, 40)) > 0.4
    keep[3] = False  # a query that sees no key: 0, and a log-sum-exp of -inf
    _attention(xp, (2, 3, 20, 16), (2, 3, 40, 16), 16, dtype, mask=xp.asarray(keep))
    added = make(xp, (2, 1, 20, 40), dtype, seed=5)
    _attention(xp, (2, 3, 20, 16), (2, 3, 40, 16), 16, dtype, mask=added)


@pytest.mark.parametrize("e,ev", [(4, 4), (20, 12), (64, 64), (130, 24)])
def test_attention_head_sizes(xp, e, ev):
    _attention(xp, (1, 1, 9, e), (1, 1, 11, e), ev, "float32")


def test_attention_transposed_and_three_dims(xp):
    _attention(xp, (2, 3, 4, 8), (2, 3, 4, 8), 8, "float32", causal=True, layout="transposed")
    _attention(xp, (3, 6, 8), (3, 5, 8), 8, "float64")


def test_attention_empty(xp):
    _attention(xp, (1, 2, 0, 8), (1, 2, 5, 8), 8, "float32")
    _attention(xp, (0, 2, 3, 8), (0, 2, 5, 8), 8, "float32")


def _torch_attention_backward(causal):
    """torch's CPU backward on the same operands, where its kernel takes them (as its
    forward, above). Its log-sum-exp of a query that sees no key is 0, which it is given
    for the reference's -inf (the query's probabilities are 0 either way)."""

    def backward(g, q, k, v, out, lse, mask):
        if q.shape[-1] != v.shape[-1] or not q.numel() or not k.numel():
            return None
        if mask is not None and mask.dtype == torch.bool:
            mask = torch.zeros(mask.shape, dtype=q.dtype).masked_fill(~mask, -torch.inf)
        lse = lse.masked_fill(lse == -torch.inf, 0.0)
        shapes = [a.shape for a in (q, k, v)]
        if q.ndim != 4:  # the leading dims folded into heads
            g, q, k, v, out = (a.reshape(1, -1, *a.shape[-2:]) for a in (g, q, k, v, out))
            lse = lse.reshape(1, -1, lse.shape[-1])
        grads = aten._scaled_dot_product_flash_attention_for_cpu_backward(
            g, q, k, v, out, lse, 0.0, causal, attn_mask=mask, scale=0.4)
        return tuple(d.reshape(shape) for d, shape in zip(grads, shapes))

    return backward


def _half_rounding(g, q, k, v, out, mask, causal):
    """What the float16 kernels' rounding of the probabilities P and of the scores'
    gradients dS to float16, for their products, may add to dv = P^T g, dq = scale dS k and
    dk = scale dS^T q: 2**-11 of each term's magnitude, the largest such sum (in float64,
    from the operands)."""
    g, q, k, v, out = (host(a).astype(np.float64) for a in (g, q, k, v, out))
    s = 0.4 * q @ np.swapaxes(k, -1, -2)
    if mask is not None:
        mask = host(mask)
        s = np.where(mask, s, -np.inf) if mask.dtype == np.bool_ else s + mask
    if causal:
        s = np.where(np.tri(*s.shape[-2:], dtype=bool), s, -np.inf)
    top = s.max(-1, keepdims=True)
    p = np.exp(s - np.where(np.isfinite(top), top, 0))
    p /= np.maximum(p.sum(-1, keepdims=True), np.finfo(np.float64).tiny)
    ds = np.abs(p * (g @ np.swapaxes(v, -1, -2) - (g * out).sum(-1, keepdims=True)))
    terms = (np.swapaxes(p, -1, -2) @ np.abs(g), 0.4 * ds @ np.abs(k),
             0.4 * np.swapaxes(ds, -1, -2) @ np.abs(q))
    return 2.0 ** -11 * max(float(t.max(initial=0.0)) for t in terms)


def _attention_backward(xp, q_shape, k_shape, ev, dtype, mask=None, causal=False,
                        layout="contiguous", g_layout="contiguous"):
    """The backward at the forward kernel's out and log-sum-exp."""
    q = make(xp, q_shape, dtype, layout=layout, low=-1.0, high=1.0)
    k = make(xp, k_shape, dtype, seed=1, low=-1.0, high=1.0)
    v = make(xp, (*k_shape[:-1], ev), dtype, seed=2, low=-1.0, high=1.0)
    params = {"is_causal": causal, "scale": 0.4}
    out, lse = REGISTRY["_scaled_dot_product_flash_attention_for_cpu"].kernels["cuda"](
        q, k, v, mask, **params)
    g = make(xp, out.shape, dtype, seed=3, layout=g_layout, low=-1.0, high=1.0)
    tolerance = {}
    if dtype == "float16":
        tolerance = {"atol": 1e-3 + _half_rounding(g, q, k, v, out, mask, causal)}
    check_kernel("_scaled_dot_product_flash_attention_for_cpu_backward",
                 [g, q, k, v, out, lse, mask], params, dtype,
                 _torch_attention_backward(causal), **tolerance)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("length,width", [(1, 1), (3, 5), (17, 70), (70, 33)])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_backward(xp, dtype, length, width, causal):
    _attention_backward(xp, (2, 2, length, 8), (2, 2, width, 8), 8, dtype, causal=causal)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
def test_attention_backward_masks(xp, dtype, causal):
    rng = np.random.default_rng(4)
    keep = rng.random((20, 40)) > 0.4
    keep[3] = False  # a query that sees no key: no gradient from it
    _attention_backward(xp, (2, 3, 20, 16), (2, 3, 40, 16), 16, dtype, mask=xp.asarray(keep),
                        causal=causal)
    added = make(xp, (2, 1, 20, 40), dtype, seed=5)
    added[1, 0, 7] = -np.inf  # (a log-sum-exp of -inf, and scores of -inf)
    _attention_backward(xp, (2, 3, 20, 16), (2, 3, 40, 16), 16, dtype, mask=added,
                        causal=causal)


@pytest.mark.parametrize("e,ev", [(4, 4), (20, 12), (64, 64), (130, 24), (260, 260)])
def test_attention_backward_head_sizes(xp, e, ev):
    """Up to 256 in the kernels; wider heads run the reference."""
    _attention_backward(xp, (1, 1, 9, e), (1, 1, 11, e), ev, "float32")


def test_attention_backward_layouts_and_three_dims(xp):
    _attention_backward(xp, (2, 3, 4, 8), (2, 3, 4, 8), 8, "float32", causal=True,
                        layout="transposed", g_layout="strided")
    _attention_backward(xp, (3, 6, 8), (3, 5, 8), 8, "float64")
    _attention_backward(xp, (2, 2, 5, 3, 8), (2, 2, 5, 4, 8), 8, "float32", causal=True)


def test_attention_backward_empty(xp):
    _attention_backward(xp, (1, 2, 0, 8), (1, 2, 5, 8), 8, "float32")
    _attention_backward(xp, (0, 2, 3, 8), (0, 2, 5, 8), 8, "float32")
