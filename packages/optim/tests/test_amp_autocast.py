"""ember.amp.autocast against torch.autocast: the output dtype of every op of torch's CPU
autocast lists that Ember has (torch run side by side), the CUDA lists applied to CPU
tensors (checked against the transcribed table), gradients, nesting, the weight cache,
custom_fwd/custom_bwd, the helpers and the deprecated aliases."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember.autograd as eag
import ember.core as ec
import ember.nn.functional as EF
from ember.amp import autocast as eautocast
from ember.amp import autocast_lists, autocast_mode
from ember.core.dispatch import engaged, state
from ember.core.dispatch_modes import PrimitiveNames
from ember.core.function_modes import _state as function_mode_state


@dataclass
class Case:
    name: str
    inputs: list[tuple[Any, ...]]  # ("f", shape) float, ("p", shape) positive, ("u", shape)
    # in (0, 1), ("i", shape, high) int64 in [0, high), ("s", values) int64 from values
    call: Callable[..., Any]


def f(*shape: int) -> tuple[Any, ...]:
    return ("f", shape)


def p(*shape: int) -> tuple[Any, ...]:
    return ("p", shape)


def u(*shape: int) -> tuple[Any, ...]:
    return ("u", shape)


def i(high: int, *shape: int) -> tuple[Any, ...]:
    return ("i", shape, high)


def s(*values: int) -> tuple[Any, ...]:
    return ("s", values)


def arrays(case: Case, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for spec in case.inputs:
        kind = spec[0]
        if kind == "f":
            out.append(rng.standard_normal(spec[1]).astype(np.float32))
        elif kind == "p":
            out.append((rng.random(spec[1]) + 0.5).astype(np.float32))
        elif kind == "u":
            out.append((rng.random(spec[1]) * 0.8 + 0.1).astype(np.float32))
        elif kind == "i":
            out.append(rng.integers(0, spec[2], spec[1]).astype(np.int64))
        else:
            out.append(np.array(spec[1], dtype=np.int64))
    return out



def _mha(L: Any, F: Any, q: Any, w: Any, b: Any, ow: Any, ob: Any) -> Any:
    return F.multi_head_attention_forward(q, q, q, 8, 2, w, b, None, None, False, 0.0, ow, ob,
                                          training=False, need_weights=False)[0]


CASES: list[Case] = [
    # lower precision (both lists)
    Case("conv1d", [f(2, 3, 8), f(4, 3, 3), f(4)], lambda L, F, x, w, b: F.conv1d(x, w, b)),
    Case("conv2d", [f(2, 3, 6, 6), f(4, 3, 3, 3), f(4)], lambda L, F, x, w, b: F.conv2d(x, w, b)),
    Case("conv3d", [f(1, 2, 4, 4, 4), f(3, 2, 2, 2, 2)], lambda L, F, x, w: F.conv3d(x, w)),
    Case("conv_transpose1d", [f(2, 3, 5), f(3, 4, 3)],
         lambda L, F, x, w: F.conv_transpose1d(x, w)),
    Case("conv_transpose2d", [f(2, 3, 4, 4), f(3, 2, 3, 3)],
         lambda L, F, x, w: F.conv_transpose2d(x, w)),
    Case("conv_transpose3d", [f(1, 2, 3, 3, 3), f(2, 2, 2, 2, 2)],
         lambda L, F, x, w: F.conv_transpose3d(x, w)),
    Case("prelu", [f(2, 3, 4), u(3)], lambda L, F, x, w: F.prelu(x, w)),
    Case("addmm", [f(3, 5), f(3, 4), f(4, 5)], lambda L, F, a, b, c: L.addmm(a, b, c)),
    Case("addmv", [f(3), f(3, 4), f(4)], lambda L, F, a, b, c: L.addmv(a, b, c)),
    Case("matmul", [f(2, 3, 4), f(4, 5)], lambda L, F, a, b: L.matmul(a, b)),
    Case("matmul_vec", [f(4), f(4)], lambda L, F, a, b: a @ b),
    Case("einsum", [f(3, 4), f(4, 5)], lambda L, F, a, b: L.einsum("ij,jk->ik", a, b)),
    Case("mm", [f(3, 4), f(4, 5)], lambda L, F, a, b: L.mm(a, b)),
    Case("mv", [f(3, 4), f(4)], lambda L, F, a, b: L.mv(a, b)),
    Case("linear", [f(2, 3, 4), f(5, 4), f(5)], lambda L, F, x, w, b: F.linear(x, w, b)),
    Case("linear_2d", [f(3, 4), f(5, 4), f(5)], lambda L, F, x, w, b: F.linear(x, w, b)),
    Case("linear_nobias", [f(3, 4), f(5, 4)], lambda L, F, x, w: F.linear(x, w)),
    Case("addbmm", [f(3, 5), f(2, 3, 4), f(2, 4, 5)], lambda L, F, a, b, c: L.addbmm(a, b, c)),
    Case("baddbmm", [f(2, 3, 5), f(2, 3, 4), f(2, 4, 5)],
         lambda L, F, a, b, c: L.baddbmm(a, b, c)),
    Case("bmm", [f(2, 3, 4), f(2, 4, 5)], lambda L, F, a, b: L.bmm(a, b)),
    Case("linalg_multi_dot", [f(3, 4), f(4, 5), f(5, 2)],
         lambda L, F, a, b, c: L.linalg.multi_dot([a, b, c])),
    Case("sdpa", [f(2, 2, 4, 8), f(2, 2, 4, 8), f(2, 2, 4, 8)],
         lambda L, F, q, k, v: F.scaled_dot_product_attention(q, k, v)),
    Case("multi_head_attention", [f(3, 2, 8), f(24, 8), f(24), f(8, 8), f(8)], _mha),
    Case("lstm_cell", [f(2, 3), f(2, 4), f(2, 4), f(16, 3), f(16, 4), f(16), f(16)],
         lambda L, F, x, h, c, wi, wh, bi, bh: L.lstm_cell(x, (h, c), wi, wh, bi, bh)[0]),
    Case("gru_cell", [f(2, 3), f(2, 4), f(12, 3), f(12, 4), f(12), f(12)],
         lambda L, F, x, h, wi, wh, bi, bh: L.gru_cell(x, h, wi, wh, bi, bh)),
    Case("rnn_tanh_cell", [f(2, 3), f(2, 4), f(4, 3), f(4, 4), f(4), f(4)],
         lambda L, F, x, h, wi, wh, bi, bh: L.rnn_tanh_cell(x, h, wi, wh, bi, bh)),
    Case("rnn_relu_cell", [f(2, 3), f(2, 4), f(4, 3), f(4, 4), f(4), f(4)],
         lambda L, F, x, h, wi, wh, bi, bh: L.rnn_relu_cell(x, h, wi, wh, bi, bh)),
    # fp32
    Case("acos", [u(3, 4)], lambda L, F, x: L.acos(x)),
    Case("asin", [u(3, 4)], lambda L, F, x: L.asin(x)),
    Case("cosh", [f(3, 4)], lambda L, F, x: L.cosh(x)),
    Case("erfinv", [u(3, 4)], lambda L, F, x: L.erfinv(x)),
    Case("exp", [f(3, 4)], lambda L, F, x: L.exp(x)),
    Case("expm1", [f(3, 4)], lambda L, F, x: L.expm1(x)),
    Case("log", [p(3, 4)], lambda L, F, x: L.log(x)),
    Case("log10", [p(3, 4)], lambda L, F, x: L.log10(x)),
    Case("log2", [p(3, 4)], lambda L, F, x: L.log2(x)),
    Case("log1p", [p(3, 4)], lambda L, F, x: L.log1p(x)),
    Case("reciprocal", [p(3, 4)], lambda L, F, x: L.reciprocal(x)),
    Case("rsqrt", [p(3, 4)], lambda L, F, x: L.rsqrt(x)),
    Case("sinh", [f(3, 4)], lambda L, F, x: L.sinh(x)),
    Case("tan", [u(3, 4)], lambda L, F, x: L.tan(x)),
    Case("pow_tensor_scalar", [p(3, 4)], lambda L, F, x: L.pow(x, 2.5)),
    Case("pow_tensor_tensor", [p(3, 4), f(3, 4)], lambda L, F, x, y: L.pow(x, y)),
    Case("pow_scalar", [f(3, 4)], lambda L, F, x: L.pow(2.0, x)),
    Case("pow_operator", [p(3, 4)], lambda L, F, x: x ** 2),
    Case("softplus", [f(3, 4)], lambda L, F, x: F.softplus(x)),
    Case("layer_norm", [f(2, 3, 4), f(4), f(4)], lambda L, F, x, w, b: F.layer_norm(x, (4,), w, b)),
    Case("layer_norm_noaffine", [f(2, 3, 4)], lambda L, F, x: F.layer_norm(x, (4,))),
    Case("rms_norm", [f(2, 3, 4), f(4)], lambda L, F, x, w: F.rms_norm(x, (4,), w)),
    Case("group_norm", [f(2, 4, 3), f(4), f(4)], lambda L, F, x, w, b: F.group_norm(x, 2, w, b)),
    Case("batch_norm", [f(4, 3, 2), f(3), p(3), f(3), f(3)],
         lambda L, F, x, m, v, w, b: F.batch_norm(x, m, v, w, b)),
    Case("instance_norm", [f(2, 3, 4)], lambda L, F, x: F.instance_norm(x)),
    Case("frobenius_norm", [f(3, 4)], lambda L, F, x: L.norm(x, dim=(0, 1))),
    Case("nuclear_norm", [f(3, 4)], lambda L, F, x: L.norm(x, p="nuc")),
    Case("norm", [f(3, 4)], lambda L, F, x: L.norm(x)),
    Case("norm_p", [f(3, 4)], lambda L, F, x: L.norm(x, 3, dim=1)),
    Case("tensor_norm", [f(3, 4)], lambda L, F, x: x.norm()),
    Case("cosine_similarity", [f(3, 4), f(3, 4)], lambda L, F, a, b: F.cosine_similarity(a, b)),
    Case("poisson_nll_loss", [f(3, 4), p(3, 4)], lambda L, F, a, b: F.poisson_nll_loss(a, b)),
    Case("cosine_embedding_loss", [f(3, 4), f(3, 4), s(1, -1, 1)],
         lambda L, F, a, b, y: F.cosine_embedding_loss(a, b, y)),
    Case("nll_loss", [f(3, 5), i(5, 3)], lambda L, F, x, t: F.nll_loss(x, t)),
    Case("nll_loss2d", [f(2, 5, 3, 3), i(5, 2, 3, 3)], lambda L, F, x, t: F.nll_loss(x, t)),
    Case("cross_entropy", [f(3, 5), i(5, 3)], lambda L, F, x, t: F.cross_entropy(x, t)),
    Case("cross_entropy_probs", [f(3, 5), u(3, 5)], lambda L, F, x, t: F.cross_entropy(x, t)),
    Case("hinge_embedding_loss", [f(3, 4), s(1, -1, 1, 1)],
         lambda L, F, a, y: F.hinge_embedding_loss(a, y.float())),
    Case("kl_div", [f(3, 4), u(3, 4)], lambda L, F, a, b: F.kl_div(a, b, reduction="batchmean")),
    Case("l1_loss", [f(3, 4), f(3, 4)], lambda L, F, a, b: F.l1_loss(a, b)),
    Case("smooth_l1_loss", [f(3, 4), f(3, 4)], lambda L, F, a, b: F.smooth_l1_loss(a, b)),
    Case("huber_loss", [f(3, 4), f(3, 4)], lambda L, F, a, b: F.huber_loss(a, b)),
    Case("mse_loss", [f(3, 4), f(3, 4)], lambda L, F, a, b: F.mse_loss(a, b)),
    Case("margin_ranking_loss", [f(4), f(4), s(1, -1, 1, 1)],
         lambda L, F, a, b, y: F.margin_ranking_loss(a, b, y.float())),
    Case("multilabel_margin_loss", [f(2, 4), s(3, 0, -1, 1, 2, 1, -1, 0)],
         lambda L, F, a, t: F.multilabel_margin_loss(a, t.view(2, 4))),
    Case("soft_margin_loss", [f(3, 4), s(1, -1, 1, 1)],
         lambda L, F, a, y: F.soft_margin_loss(a[:1], y.float().view(1, 4))),
    Case("triplet_margin_loss", [f(3, 4), f(3, 4), f(3, 4)],
         lambda L, F, a, b, c: F.triplet_margin_loss(a, b, c)),
    Case("multi_margin_loss", [f(3, 5), i(5, 3)], lambda L, F, x, t: F.multi_margin_loss(x, t)),
    Case("binary_cross_entropy_with_logits", [f(3, 4), u(3, 4)],
         lambda L, F, a, b: F.binary_cross_entropy_with_logits(a, b)),
    Case("binary_cross_entropy", [u(3, 4), u(3, 4)],
         lambda L, F, a, b: F.binary_cross_entropy(a, b)),
    Case("dist", [f(3, 4), f(3, 4)], lambda L, F, a, b: L.dist(a, b)),
    Case("pdist", [f(4, 3)], lambda L, F, a: F.pdist(a)),
    Case("cdist", [f(3, 4), f(2, 4)], lambda L, F, a, b: L.cdist(a, b)),
    Case("renorm", [f(3, 4)], lambda L, F, a: L.renorm(a, 2, 0, 1.0)),
    Case("logsumexp", [f(3, 4)], lambda L, F, a: L.logsumexp(a, 1)),
    Case("upsample_nearest1d", [f(1, 2, 4)], lambda L, F, x: F.interpolate(x, scale_factor=2)),
    Case("upsample_nearest2d", [f(1, 2, 3, 3)], lambda L, F, x: F.interpolate(x, scale_factor=2)),
    Case("upsample_nearest3d", [f(1, 2, 2, 2, 2)],
         lambda L, F, x: F.interpolate(x, scale_factor=2)),
    Case("upsample_nearest_exact2d", [f(1, 2, 3, 3)],
         lambda L, F, x: F.interpolate(x, scale_factor=2, mode="nearest-exact")),
    Case("upsample_linear1d", [f(1, 2, 4)],
         lambda L, F, x: F.interpolate(x, scale_factor=2, mode="linear")),
    Case("upsample_bilinear2d", [f(1, 2, 3, 3)],
         lambda L, F, x: F.interpolate(x, scale_factor=2, mode="bilinear")),
    Case("upsample_bilinear2d_aa", [f(1, 2, 6, 6)],
         lambda L, F, x: F.interpolate(x, size=(3, 3), mode="bilinear", antialias=True)),
    Case("upsample_trilinear3d", [f(1, 2, 2, 2, 2)],
         lambda L, F, x: F.interpolate(x, scale_factor=2, mode="trilinear")),
    Case("upsample_bicubic2d", [f(1, 2, 3, 3)],
         lambda L, F, x: F.interpolate(x, scale_factor=2, mode="bicubic")),
    # fp32 on CPU only
    Case("avg_pool3d", [f(1, 2, 4, 4, 4)], lambda L, F, x: F.avg_pool3d(x, 2)),
    Case("max_pool3d", [f(1, 2, 4, 4, 4)], lambda L, F, x: F.max_pool3d(x, 2)),
    Case("adaptive_avg_pool3d", [f(1, 2, 4, 4, 4)], lambda L, F, x: F.adaptive_avg_pool3d(x, 2)),
    Case("adaptive_max_pool3d", [f(1, 2, 4, 4, 4)], lambda L, F, x: F.adaptive_max_pool3d(x, 2)),
    Case("max_unpool2d", [f(1, 2, 4, 4)],
         lambda L, F, x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2)),
    Case("reflection_pad1d", [f(1, 2, 5)], lambda L, F, x: F.pad(x, (2, 1), mode="reflect")),
    Case("reflection_pad2d", [f(1, 2, 4, 4)], lambda L, F, x: F.pad(x, (1, 1, 2, 0), "reflect")),
    Case("replication_pad1d", [f(1, 2, 5)], lambda L, F, x: F.pad(x, (2, 1), mode="replicate")),
    Case("replication_pad2d", [f(1, 2, 4, 4)],
         lambda L, F, x: F.pad(x, (1, 1, 2, 0), mode="replicate")),
    Case("replication_pad3d", [f(1, 2, 3, 3, 3)],
         lambda L, F, x: F.pad(x, (1, 1, 1, 0, 0, 1), mode="replicate")),
    Case("grid_sample", [f(1, 2, 4, 4), u(1, 3, 3, 2)],
         lambda L, F, x, g: F.grid_sample(x, g, align_corners=False)),
    Case("polar", [p(3, 4), f(3, 4)], lambda L, F, a, b: L.polar(a, b)),
    Case("prod", [f(3, 4)], lambda L, F, x: L.prod(x)),
    Case("prod_dim", [f(3, 4)], lambda L, F, x: L.prod(x, 1)),
    Case("trace", [f(4, 4)], lambda L, F, x: L.trace(x)),
    Case("ctc_loss", [f(6, 2, 4), s(1, 2, 1, 3, 3, 2)],
         lambda L, F, x, t: F.ctc_loss(x.log_softmax(2), t.view(2, 3), [6, 5], [3, 2])),
    # fp32_set_opt_dtype (CUDA)
    Case("softmax", [f(3, 4)], lambda L, F, x: L.softmax(x, 1)),
    Case("F_softmax", [f(3, 4)], lambda L, F, x: F.softmax(x, dim=1)),
    Case("log_softmax", [f(3, 4)], lambda L, F, x: L.log_softmax(x, 1)),
    Case("tensor_softmax", [f(3, 4)], lambda L, F, x: x.softmax(-1)),
    Case("cumprod", [f(3, 4)], lambda L, F, x: L.cumprod(x, 1)),
    Case("cumsum", [f(3, 4)], lambda L, F, x: L.cumsum(x, 1)),
    Case("sum", [f(3, 4)], lambda L, F, x: L.sum(x)),
    Case("sum_dim", [f(3, 4)], lambda L, F, x: L.sum(x, 1)),
    Case("tensor_sum", [f(3, 4)], lambda L, F, x: x.sum(0)),
    Case("sum_dtype", [f(3, 4)], lambda L, F, x: L.sum(x, dtype=L.float16)),
    Case("linalg_vector_norm", [f(3, 4)], lambda L, F, x: L.linalg.vector_norm(x)),
    Case("linalg_matrix_norm", [f(3, 4)], lambda L, F, x: L.linalg.matrix_norm(x)),
    # promote
    Case("addcdiv", [f(3, 4), f(3, 4), p(3, 4)], lambda L, F, a, b, c: L.addcdiv(a, b, c)),
    Case("addcmul", [f(3, 4), f(3, 4), f(3, 4)], lambda L, F, a, b, c: L.addcmul(a, b, c)),
    Case("atan2", [f(3, 4), f(3, 4)], lambda L, F, a, b: L.atan2(a, b)),
    Case("bilinear", [f(3, 4), f(3, 5), f(2, 4, 5), f(2)],
         lambda L, F, a, b, w, c: F.bilinear(a, b, w, c)),
    Case("cross", [f(2, 3), f(2, 3)], lambda L, F, a, b: L.cross(a, b, dim=1)),
    Case("dot", [f(4), f(4)], lambda L, F, a, b: L.dot(a, b)),
    Case("vdot", [f(4), f(4)], lambda L, F, a, b: L.vdot(a, b)),
    Case("index_put", [f(4, 3), s(0, 2), f(2, 3)],
         lambda L, F, a, ix, v: L.index_put(a, (ix,), v)),
    Case("tensordot", [f(3, 4), f(4, 5)], lambda L, F, a, b: L.tensordot(a, b, dims=1)),
    Case("scatter_add", [f(3, 4), i(3, 2, 4), f(2, 4)],
         lambda L, F, a, ix, v: L.scatter_add(a, 0, ix, v)),
    Case("cat", [f(2, 3), f(2, 3)], lambda L, F, a, b: L.cat([a, b])),
    Case("stack", [f(2, 3), f(2, 3)], lambda L, F, a, b: L.stack([a, b])),
    Case("index_copy", [f(4, 3), s(0, 2), f(2, 3)],
         lambda L, F, a, ix, v: L.index_copy(a, 0, ix, v)),
    # in no list: fall through
    Case("add", [f(3, 4), f(3, 4)], lambda L, F, a, b: a + b),
    Case("relu", [f(3, 4)], lambda L, F, a: F.relu(a)),
    Case("gelu", [f(3, 4)], lambda L, F, a: F.gelu(a)),
    Case("tanh", [f(3, 4)], lambda L, F, a: L.tanh(a)),
    Case("sigmoid", [f(3, 4)], lambda L, F, a: L.sigmoid(a)),
    Case("mean", [f(3, 4)], lambda L, F, a: a.mean()),
    Case("max_pool2d", [f(1, 2, 4, 4)], lambda L, F, x: F.max_pool2d(x, 2)),
    Case("avg_pool2d", [f(1, 2, 4, 4)], lambda L, F, x: F.avg_pool2d(x, 2)),
    Case("embedding", [i(5, 3), f(5, 4)], lambda L, F, ix, w: F.embedding(ix, w)),
    Case("dropout_eval", [f(3, 4)], lambda L, F, a: F.dropout(a, 0.5, training=False)),
    Case("exp_", [f(3, 4)], lambda L, F, a: a.clone().exp_()),
    Case("sin", [f(3, 4)], lambda L, F, a: L.sin(a)),
    Case("sqrt", [p(3, 4)], lambda L, F, a: L.sqrt(a)),
    Case("var", [f(3, 4)], lambda L, F, a: a.var()),
    Case("where", [f(3, 4), f(3, 4)], lambda L, F, a, b: L.where(a > 0, a, b)),
]

# ops of torch's lists that Ember does not have yet: a test below fails once one appears,
# so that it joins the comparisons
MISSING = {"linalg_multi_dot", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
           "cdist", "renorm", "linalg_vector_norm", "linalg_matrix_norm"}
PRESENT = [c for c in CASES if c.name not in MISSING]
DTYPES = ("float32", "bfloat16", "float16", "float64")


def tensors(lib: Any, case: Case, dtype: str, grad: bool = False) -> list[Any]:
    out = []
    for a in arrays(case):
        t = lib.from_numpy(a.copy())
        if t.is_floating_point():
            t = t.to(getattr(lib, dtype))
            if grad:
                t.requires_grad_(True)
        out.append(t)
    return out


def run_torch(case: Case, region: str | None, dtype: str) -> Any:
    ts = tensors(torch, case, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if region is None:
            return case.call(torch, TF, *ts)
        with torch.autocast("cpu", dtype=getattr(torch, region)):
            return case.call(torch, TF, *ts)


def run_ember(case: Case, region: str | None, dtype: str, grad: bool = False) -> Any:
    ts = tensors(ec, case, dtype, grad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if region is None:
            return case.call(ec, EF, *ts), ts
        with eautocast("cpu", dtype=getattr(ec, region)):
            return case.call(ec, EF, *ts), ts


def dtype_name(dt: Any) -> str:
    return str(dt).replace("torch.", "")


def outcome(fn: Callable[[], Any]) -> tuple[str, str]:
    """('ok', dtype) or ('error', exception type and, for autocast's own errors, message)."""
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - the outcome is what the tests compare
        msg = str(e) if "autocast" in str(e) else ""
        return "error", f"{type(e).__name__}: {msg}"
    return "ok", dtype_name(out.dtype)


def _cpu_params() -> list[Any]:
    """Every case, region dtype and input dtype where torch's CPU kernels exist."""
    params = []
    for case in PRESENT:
        for region in ("bfloat16", "float16"):
            for dt in DTYPES:
                kind, got = outcome(lambda: run_torch(case, region, dt))
                if kind == "error" and "autocast" not in got:
                    continue  # torch has no CPU kernel of that dtype: no parity point
                params.append(pytest.param(case, region, dt, (kind, got),
                                           id=f"{case.name}-{region}-{dt}"))
    return params


@pytest.mark.parametrize("case,region,dtype,expected", _cpu_params())
def test_cpu_autocast_dtype_matches_torch(case, region, dtype, expected):
    kind, got = outcome(lambda: run_ember(case, region, dtype)[0])
    assert (kind, got) == expected


def test_missing_ops_are_still_missing():
    for case in CASES:
        if case.name in MISSING:
            with pytest.raises(AttributeError):
                case.call(ec, EF, *tensors(ec, case, "float32"))


# cases whose public entry reaches a public ember function: a bfloat16 activation meets
# float32 weights
MIXED_CASES = [c for c in PRESENT if c.name in {
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "sdpa", "bilinear", "grid_sample",
    "addmm", "addmv", "matmul", "matmul_vec", "einsum", "mm", "mv", "linear", "linear_2d",
    "linear_nobias", "addbmm", "baddbmm", "bmm", "multi_head_attention", "prelu", "tensordot",
    "layer_norm", "group_norm", "cat", "stack", "index_copy", "addcmul", "polar", "mse_loss",
    "cross_entropy"}]


@pytest.mark.parametrize("case", MIXED_CASES, ids=lambda c: c.name)
def test_cpu_autocast_mixed_dtypes_match_torch(case):
    def call(lib: Any, F: Any, region: Any) -> Any:
        ts = tensors(lib, case, "float32")
        first = next(i for i, t in enumerate(ts) if t.is_floating_point())
        ts[first] = ts[first].to(lib.bfloat16)
        with region("cpu"):
            return case.call(lib, F, *ts)

    assert outcome(lambda: call(ec, EF, eautocast)) == \
        outcome(lambda: call(torch, TF, torch.autocast))


def _close(a: Any, b: Any) -> None:
    np.testing.assert_allclose(np.asarray(a.detach().float().numpy(), dtype=np.float64),
                               b.detach().float().numpy().astype(np.float64),
                               rtol=1e-5, atol=1e-6)


FP32_VALUE_CASES = [c for c in PRESENT if c.name in {
    "exp", "log", "pow_tensor_scalar", "layer_norm", "softmax", "cumsum", "sum", "nll_loss",
    "cross_entropy", "mse_loss", "l1_loss", "smooth_l1_loss", "kl_div", "prod", "trace",
    "avg_pool3d", "adaptive_avg_pool3d", "binary_cross_entropy_with_logits",
    "multi_margin_loss"}]


@pytest.mark.parametrize("case", FP32_VALUE_CASES, ids=lambda c: c.name)
def test_cpu_autocast_float32_values_match_torch(case):
    """Ops that run in float32 from bfloat16 inputs: values at float32 rounding."""
    expected = run_torch(case, "bfloat16", "bfloat16")
    got = run_ember(case, "bfloat16", "bfloat16")[0]
    assert dtype_name(got.dtype) == dtype_name(expected.dtype)
    _close(got, expected)


LOWER_CASES = ["conv1d", "conv2d", "addmm", "matmul", "mm", "linear", "linear_2d", "bmm",
               "baddbmm", "addbmm", "einsum", "sdpa", "prelu", "tensordot"]


@pytest.mark.parametrize("name", LOWER_CASES)
@pytest.mark.parametrize("region", ["bfloat16", "float16"])
def test_lower_precision_equals_explicit_cast(name, region):
    """Under autocast, a lower-precision op gives exactly what it gives on its operands
    cast to the region's dtype by hand."""
    case = next(c for c in CASES if c.name == name)
    got = run_ember(case, region, "float32")[0]
    expected = run_ember(case, None, region)[0]
    assert got.dtype == expected.dtype == getattr(ec, region)
    np.testing.assert_array_equal(got.float().numpy(), expected.float().numpy())


# ---------------------------------------------------------------------- CUDA lists

# torch's CUDA policy of each case's op (autocast_mode.h, torch 2.13); a composite of no
# list is given the policy its decomposition ends in (cross_entropy: log_softmax, nll_loss)
L, F32, OPT, PROMOTE = "lower", "fp32", "opt", "promote"
CUDA_POLICY = {
    **dict.fromkeys(["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                     "conv_transpose3d", "prelu", "addmm", "addmv", "matmul", "matmul_vec",
                     "einsum", "mm", "mv", "linear", "linear_2d", "linear_nobias", "addbmm",
                     "baddbmm", "bmm", "sdpa", "multi_head_attention"], L),
    **dict.fromkeys(["acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2",
                     "log1p", "reciprocal", "rsqrt", "sinh", "tan", "pow_tensor_scalar",
                     "pow_tensor_tensor", "pow_scalar", "pow_operator", "softplus",
                     "layer_norm", "layer_norm_noaffine", "rms_norm", "group_norm",
                     "frobenius_norm", "nuclear_norm", "cosine_similarity", "poisson_nll_loss",
                     "cosine_embedding_loss", "nll_loss", "nll_loss2d", "hinge_embedding_loss",
                     "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss",
                     "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss",
                     "triplet_margin_loss", "multi_margin_loss",
                     "binary_cross_entropy_with_logits", "dist", "pdist", "logsumexp",
                     "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d",
                     "upsample_nearest_exact2d", "upsample_linear1d", "upsample_bilinear2d",
                     "upsample_bilinear2d_aa", "upsample_trilinear3d", "upsample_bicubic2d",
                     "cross_entropy", "cross_entropy_probs", "ctc_loss",
                     # norm: fp32_append_dtype
                     "norm", "norm_p", "tensor_norm"], F32),
    **dict.fromkeys(["softmax", "F_softmax", "log_softmax", "tensor_softmax", "cumprod",
                     "cumsum", "sum", "sum_dim", "tensor_sum", "sum_dtype", "prod",
                     "prod_dim"], OPT),
    **dict.fromkeys(["addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "vdot",
                     "index_put", "tensordot", "scatter_add", "grid_sample"], PROMOTE),
    "binary_cross_entropy": "banned",
}


def cuda_expected(case: Case, region: str, dtype: str) -> tuple[str, str]:
    """The transcribed table's answer for an op whose floating inputs are all ``dtype``."""
    policy = CUDA_POLICY.get(case.name)
    if policy == "banned":
        return "error", f"RuntimeError: {autocast_lists.BANNED_MESSAGE}"
    if policy is None:  # in no list: what the op gives without autocast
        return outcome(lambda: run_torch(case, None, dtype))
    if dtype == "float64":
        return outcome(lambda: run_torch(case, None, dtype))
    if case.name == "sum_dtype":
        return "ok", "float16"
    if policy == L:
        return "ok", region
    if policy in (F32, OPT):
        return "ok", "float32"
    if dtype == "float32":
        return "ok", "float32"
    if dtype != region:
        return "error", "RuntimeError: Unexpected floating ScalarType in at::autocast::prioritize"
    return "ok", region


@pytest.fixture
def cuda_lists_on_cpu(monkeypatch):
    """Apply the CUDA lists to CPU tensors (this machine may have no CUDA)."""
    monkeypatch.setitem(autocast_mode._POLICY_OF, "cpu", "cuda")


def _cuda_params() -> list[Any]:
    params = []
    for case in PRESENT:
        for dt in ("float32", "float16", "bfloat16", "float64"):
            kind, got = cuda_expected(case, "float16", dt)
            if kind == "error" and "autocast" not in got:
                continue
            if case.name in ("polar",) and dt != "float32":
                continue  # torch's polar takes float32 and float64 only
            if case.name == "upsample_bilinear2d_aa" and dt in ("float16", "bfloat16"):
                continue  # the CPU kernel refuses them before the op (as torch's does)
            params.append(pytest.param(case, dt, (kind, got), id=f"{case.name}-{dt}"))
    return params


@pytest.mark.parametrize("case,dtype,expected", _cuda_params())
def test_cuda_lists_dtype(cuda_lists_on_cpu, case, dtype, expected):
    kind, got = outcome(lambda: run_ember(case, "float16", dtype)[0])
    assert (kind, got) == expected


def test_cuda_table_covers_every_case():
    """Each case's op is in CUDA_POLICY or in none of torch's CUDA lists."""
    listed = {n for names in autocast_lists.TORCH_CUDA.values() for n in names}
    unlisted = {c.name for c in PRESENT} - set(CUDA_POLICY)
    assert not unlisted & listed


def test_cuda_region_without_cuda_warns_and_disables():
    if ec.cuda_available():
        pytest.fail("this check is for machines without CUDA; run the GPU session there")
    with pytest.warns(UserWarning, match="CUDA is not available or torch_xla is imported"):
        region = eautocast("cuda")
    assert region._enabled is False
    with region:
        assert not autocast_mode.is_autocast_enabled("cuda")
        assert engaged.count == 0


# ---------------------------------------------------------------------- behaviour

def test_gradients_reach_float32_leaves_in_float32():
    x = ec.randn(4, 3, requires_grad=True)
    w = ec.randn(5, 3, requires_grad=True)
    b = ec.randn(5, requires_grad=True)
    xt, wt, bt = (torch.from_numpy(t.detach().numpy().copy()).requires_grad_() for t in (x, w, b))
    with eautocast("cpu"):
        y = EF.linear(x, w, b)
        loss = EF.mse_loss(y, ec.zeros(4, 5))
    with torch.autocast("cpu"):
        yt = TF.linear(xt, wt, bt)
        losst = TF.mse_loss(yt, torch.zeros(4, 5))
    assert y.dtype == ec.bfloat16 and loss.dtype == ec.float32
    loss.backward()
    losst.backward()
    for e, t in ((x, xt), (w, wt), (b, bt)):
        assert e.grad.dtype == ec.float32
        # both take the same bfloat16 path: the gradients agree at bfloat16's resolution
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=2 ** -6, atol=2 ** -8)


def test_nesting_disable_and_dtype_and_restore():
    a = ec.randn(3, 3)
    assert not autocast_mode.is_autocast_enabled("cpu")
    with eautocast("cpu"):
        assert autocast_mode.is_autocast_enabled("cpu")
        assert ec.mm(a, a).dtype == ec.bfloat16
        with eautocast("cpu", enabled=False):
            assert not autocast_mode.is_autocast_enabled("cpu")
            assert ec.mm(a, a).dtype == ec.float32
            with eautocast("cpu", dtype=ec.float16):
                assert autocast_mode.get_autocast_dtype("cpu") == ec.float16
                assert ec.mm(a, a).dtype == ec.float16
            assert autocast_mode.get_autocast_dtype("cpu") == ec.bfloat16
        assert ec.mm(a, a).dtype == ec.bfloat16
    assert ec.mm(a, a).dtype == ec.float32
    assert not autocast_mode.is_autocast_enabled("cpu")
    assert engaged.count == 0 and not state.autocast and not function_mode_state.modes


def test_state_restored_after_an_exception():
    with pytest.raises(ValueError, match="boom"):
        with eautocast("cpu"):
            raise ValueError("boom")
    assert not autocast_mode.is_autocast_enabled("cpu") and engaged.count == 0
    assert not autocast_mode._cache and autocast_mode._state.nesting == 0


def test_disabled_region_is_a_true_no_op():
    a = ec.randn(3, 3)
    before = engaged.count
    with eautocast("cpu", enabled=False):
        assert engaged.count == before and not state.autocast
        assert not function_mode_state.modes
        with PrimitiveNames() as seen:
            out = ec.mm(a, a)
        assert seen.names == ["matmul"]
    assert out.dtype == ec.float32
    np.testing.assert_array_equal(out.numpy(), ec.mm(a, a).numpy())


def test_decorator_form():
    @eautocast("cpu")
    def f(x):
        """Doc."""
        return ec.mm(x, x)

    assert f(ec.randn(2, 2)).dtype == ec.bfloat16
    assert f.__name__ == "f" and f.__doc__ == "Doc."
    assert not autocast_mode.is_autocast_enabled("cpu")
    with pytest.raises(TypeError) as e:
        eautocast("cpu")(3)
    with pytest.raises(TypeError) as t:
        torch.autocast("cpu")(3)
    assert str(e.value) == str(t.value)


def test_region_is_thread_local():
    seen = {}

    def other():
        a = ec.randn(2, 2)
        seen["enabled"] = autocast_mode.is_autocast_enabled("cpu")
        seen["dtype"] = ec.mm(a, a).dtype

    with eautocast("cpu"):
        th = threading.Thread(target=other)
        th.start()
        th.join()
        assert ec.mm(ec.randn(2, 2), ec.randn(2, 2)).dtype == ec.bfloat16
    assert seen == {"enabled": False, "dtype": ec.float32}


def test_float64_and_integers_are_left_alone():
    d = ec.randn(3, 3, dtype=ec.float64)
    i = ec.ones(3, 3, dtype=ec.int64)
    with eautocast("cpu"):
        assert ec.mm(d, d).dtype == ec.float64
        assert ec.mm(i, i).dtype == ec.int64
        assert ec.prod(d).dtype == ec.float64


def test_promote_mixed_lower_dtypes_error_matches_torch():
    a = np.ones((2, 2), np.float32)
    with torch.autocast("cpu"), pytest.raises(RuntimeError) as t:
        torch.cat([torch.from_numpy(a).half(), torch.from_numpy(a).bfloat16()])
    with eautocast("cpu"), pytest.raises(RuntimeError) as e:
        ec.cat([ec.from_numpy(a).half(), ec.from_numpy(a).bfloat16()])
    assert str(e.value) == str(t.value)


# ---------------------------------------------------------------------- weight cache

def test_weight_cast_is_cached_inside_the_outermost_region():
    w = ec.randn(3, 5, requires_grad=True)
    x = ec.randn(4, 3)
    with eautocast("cpu"):
        with PrimitiveNames() as seen:
            ec.mm(x, w)
            ec.mm(x, w)
        assert seen.names.count("to_copy") == 3  # the weight once, the input twice
        cast = autocast_mode._cache[id(w)][1]
        assert cast.dtype == ec.bfloat16
        with eautocast("cpu"):
            ec.mm(x, w)
        assert autocast_mode._cache[id(w)][1] is cast  # an inner exit keeps the cache
    assert not autocast_mode._cache


@pytest.mark.parametrize("how", ["no_grad_leaf", "view", "cache_disabled", "nonleaf"])
def test_what_is_not_cached(how):
    w = ec.randn(3, 5, requires_grad=how != "no_grad_leaf")
    if how == "view":
        w = w[:2]
    if how == "nonleaf":
        w = w * 2
    with eautocast("cpu", cache_enabled=how != "cache_disabled"):
        ec.mm(ec.randn(2, w.shape[0]), w)
        assert not autocast_mode._cache


def test_cache_enabled_default_follows_the_helper():
    autocast_mode.set_autocast_cache_enabled(False)
    try:
        region = eautocast("cpu")
        assert region._cache_enabled is False
        assert torch.autocast("cpu", cache_enabled=None)._cache_enabled is True
    finally:
        autocast_mode.set_autocast_cache_enabled(True)


def test_cached_weight_gets_both_gradients():
    w = ec.randn(3, 3, requires_grad=True)
    x = ec.randn(2, 3)
    with eautocast("cpu"):
        y = ec.mm(x, w) + ec.mm(x, w)
    y.float().sum().backward()
    with eautocast("cpu"):
        w2 = w.detach().clone().requires_grad_()
        z = ec.mm(x, w2)
    (2 * z.float()).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), w2.grad.numpy())
    assert w.grad.dtype == ec.float32


# ---------------------------------------------------------------------- custom functions

def _functions(amp: Any, autograd: Any, lib: Any, log: list[Any]) -> Any:
    class MyMM(autograd.Function):
        @staticmethod
        @amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
        def forward(ctx, a, b):
            log.append(("fwd", a.dtype, b.dtype, lib.is_autocast_enabled("cpu")))
            ctx.save_for_backward(a, b)
            return a.mm(b)

        @staticmethod
        @amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            log.append(("bwd", g.dtype, lib.is_autocast_enabled("cpu")))
            return g.mm(b.t()), a.t().mm(g)

    class Plain(autograd.Function):
        @staticmethod
        @amp.custom_fwd(device_type="cpu")
        def forward(ctx, a):
            log.append(("fwd", a.dtype, lib.is_autocast_enabled("cpu"), a.mm(a).dtype))
            return a * 2

        @staticmethod
        @amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            log.append(("bwd", lib.is_autocast_enabled("cpu"), lib.get_autocast_dtype("cpu")))
            return g * 2

    return MyMM, Plain


class _EmberLib:
    float32 = ec.float32
    is_autocast_enabled = staticmethod(autocast_mode.is_autocast_enabled)
    get_autocast_dtype = staticmethod(autocast_mode.get_autocast_dtype)


def test_custom_fwd_bwd_match_torch():
    import ember.amp as eamp

    logs: dict[str, list[Any]] = {"torch": [], "ember": []}
    for name, amp, autograd, lib, lib_t in (("torch", torch.amp, torch.autograd, torch, torch),
                                            ("ember", eamp, eag, _EmberLib, ec)):
        MyMM, Plain = _functions(amp, autograd, lib, logs[name])
        a = lib_t.ones(2, 2).to(lib_t.bfloat16).requires_grad_()
        b = lib_t.ones(2, 2, requires_grad=True)
        region = torch.autocast if name == "torch" else eautocast
        with region("cpu"):
            out = MyMM.apply(a, b)
            p = Plain.apply(lib_t.ones(2, 2, requires_grad=True))
        logs[name].append(("out", out.dtype, p.dtype))
        out.float().sum().backward()
        with region("cpu", dtype=lib_t.float16):
            p = Plain.apply(lib_t.ones(2, 2, requires_grad=True))
        p.sum().backward()
        logs[name].append(("grads", a.grad.dtype, b.grad.dtype))
    assert [tuple(map(str, e)) for e in logs["ember"]] == \
        [tuple(map(str, e)) for e in logs["torch"]]


def test_custom_fwd_needs_a_string_device_type():
    import ember.amp as eamp

    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        eamp.custom_fwd(device_type=1)
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        eamp.custom_bwd(device_type=None)
    with pytest.raises(TypeError):
        eamp.custom_fwd(lambda ctx: 0)


# ---------------------------------------------------------------------- helpers and errors

def test_defaults_and_helpers_match_torch():
    for dev in ("cpu", "cuda"):
        assert str(autocast_mode.get_autocast_dtype(dev)) == str(torch.get_autocast_dtype(dev))
        assert autocast_mode.is_autocast_enabled(dev) == torch.is_autocast_enabled(dev)
    assert autocast_mode.is_autocast_enabled() is False
    assert autocast_mode.is_autocast_cache_enabled() is torch.is_autocast_cache_enabled()
    assert autocast_mode.is_autocast_available("cpu") and autocast_mode.is_autocast_available("cuda")
    assert not autocast_mode.is_autocast_available("meta")
    assert autocast_mode.autocast_increment_nesting() == 1
    assert autocast_mode.autocast_decrement_nesting() == 0
    autocast_mode.set_autocast_dtype("cpu", ec.float16)
    try:
        assert autocast_mode.get_autocast_dtype("cpu") == ec.float16
        assert eautocast("cpu").fast_dtype == ec.float16
    finally:
        autocast_mode.set_autocast_dtype("cpu", ec.bfloat16)


def test_set_autocast_enabled_by_hand():
    a = ec.randn(2, 2)
    autocast_mode.set_autocast_enabled("cpu", True)
    try:
        assert ec.mm(a, a).dtype == ec.bfloat16 and engaged.count == 1
    finally:
        autocast_mode.set_autocast_enabled("cpu", False)
    assert ec.mm(a, a).dtype == ec.float32 and engaged.count == 0
    for bad in ("cpu",):
        with pytest.raises(TypeError) as e:
            autocast_mode.set_autocast_enabled(bad)
        with pytest.raises(TypeError) as t:
            torch.set_autocast_enabled(bad)
        assert str(e.value) == str(t.value)
    with pytest.raises(TypeError) as e:
        autocast_mode.is_autocast_enabled(1)
    with pytest.raises(TypeError) as t:
        torch.is_autocast_enabled(1)
    assert str(e.value) == str(t.value)


@pytest.mark.parametrize("name,args", [
    ("get_autocast_cpu_dtype", ()), ("get_autocast_gpu_dtype", ()),
    ("is_autocast_cpu_enabled", ()), ("set_autocast_cpu_enabled", (False,)),
    ("set_autocast_cpu_dtype", ("bfloat16",)), ("set_autocast_gpu_dtype", ("float16",))])
def test_deprecated_helpers_warn_as_torch(name, args):
    targs = [getattr(torch, a) if isinstance(a, str) else a for a in args]
    eargs = [getattr(ec, a) if isinstance(a, str) else a for a in args]
    with pytest.warns(DeprecationWarning) as t:
        tout = getattr(torch, name)(*targs)
    with pytest.warns(DeprecationWarning) as e:
        eout = getattr(autocast_mode, name)(*eargs)
    assert str(t[0].message).startswith(str(e[0].message))
    assert str(eout) == str(tout)


def test_constructor_errors_match_torch():
    for args in ((1,), ("foo",), ("meta",)):
        with pytest.raises(Exception) as t:
            torch.autocast(*args)
        with pytest.raises(Exception) as e:
            eautocast(*args)
        assert type(e.value) is type(t.value)
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'meta'"):
        eautocast("meta", dtype=ec.float16)
    with pytest.warns(UserWarning) as t:
        torch.autocast("cpu", dtype=torch.float32)
    with pytest.warns(UserWarning) as e:
        region = eautocast("cpu", dtype=ec.float32)
    assert str(e[0].message) == str(t[0].message)
    assert region._enabled is False


def test_banned_binary_cross_entropy_under_cuda_lists(cuda_lists_on_cpu):
    p = ec.full((3,), 0.5)
    with eautocast("cpu", dtype=ec.float16), pytest.raises(RuntimeError) as e:
        EF.binary_cross_entropy(p, p)
    assert "unsafe to autocast" in str(e.value)


def test_torch_top_level_helpers_exist():
    """The top-level autocast helpers of torch that Ember implements (the lead exports
    them from ember): every one but the ipu and xla ones."""
    names = [n for n in dir(torch) if "autocast" in n and "ipu" not in n and "xla" not in n]
    missing = [n for n in names if n != "autocast" and not hasattr(autocast_mode, n)]
    assert not missing
