"""The same ops on CUDA (CuPy) as on the CPU (NumPy): one xp code path serves both.

Each case runs an op on CUDA tensors and compares with torch on CUDA. Skipped where no
CUDA device is present; `nox -s gpu` runs them on a machine with one.
"""

import numpy as np
import pytest
import torch
from torch_oracle import check, pair

import ember.core as ember

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(
    not ember.cuda_available() or not torch.cuda.is_available(),
    reason="needs a CUDA device with CuPy and torch CUDA")]


def cuda_pair(shape, dtype="float32", **kw):
    e, t = pair(shape, dtype, **kw)
    return e.cuda(), t.cuda()


CASES = {
    "add": lambda m, a, b: a + b,
    "sub_scalar": lambda m, a, b: 2.5 - a,
    "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / (b.abs() + 1),
    "pow": lambda m, a, b: a.abs() ** 1.5,
    "exp": lambda m, a, b: a.exp(),
    "tanh": lambda m, a, b: m.tanh(a),
    "sigmoid": lambda m, a, b: m.sigmoid(a),
    "erf": lambda m, a, b: m.erf(a),
    "maximum": lambda m, a, b: m.maximum(a, b),
    "gt": lambda m, a, b: a > b,
    "where": lambda m, a, b: m.where(a > 0, a, b),
    "clamp": lambda m, a, b: a.clamp(-1, 1),
    "sum": lambda m, a, b: a.sum(),
    "sum_dim": lambda m, a, b: a.sum(1, keepdim=True),
    "mean": lambda m, a, b: a.mean(-1),
    "var": lambda m, a, b: a.var(0),
    "max_dim": lambda m, a, b: a.max(1),
    "argmax": lambda m, a, b: a.argmax(1),
    "amax": lambda m, a, b: a.amax(0),
    "min_all": lambda m, a, b: a.min(),
    "all_any": lambda m, a, b: ((a > 0).all(1), (b > 0).any()),
    "norm_inf": lambda m, a, b: m.norm(a, float("inf")),
    "logsumexp": lambda m, a, b: a.logsumexp(1),
    "cumsum": lambda m, a, b: a.cumsum(0),
    "softmax": lambda m, a, b: m.softmax(a, 1),
    "sort": lambda m, a, b: m.sort(a, 1),
    "topk": lambda m, a, b: m.topk(a, 2),
    "matmul": lambda m, a, b: a @ b.t(),
    "bmm": lambda m, a, b: m.bmm(a.unsqueeze(0), b.t().unsqueeze(0)),
    "einsum": lambda m, a, b: m.einsum("ij,kj->ik", a, b),
    "view_transpose": lambda m, a, b: a.view(4, 3).t().contiguous(),
    "cat": lambda m, a, b: m.cat([a, b], 1),
    "stack": lambda m, a, b: m.stack([a, b]),
    "getitem": lambda m, a, b: a[1:, ::2],
    "getitem_mask": lambda m, a, b: a[a > 0],
    "getitem_index": lambda m, a, b: a[m.tensor([2, 0], device=a.device)],
    "gather": lambda m, a, b: a.gather(1, m.tensor([[0], [1], [3]], device=a.device)),
    "masked_fill": lambda m, a, b: a.masked_fill(b > 0, -1.0),
    "tril": lambda m, a, b: m.tril(a),
    "to_half": lambda m, a, b: a.half() * 2,
    "nonzero": lambda m, a, b: (a > 0).nonzero(),
}


@pytest.mark.parametrize("name", list(CASES))
def test_op_on_cuda_matches_torch(name):
    (ea, ta), (eb, tb) = cuda_pair((3, 4), seed=1), cuda_pair((3, 4), seed=2)
    out = CASES[name](ember, ea, eb)
    expected = CASES[name](torch, ta, tb)
    outs = out if isinstance(out, tuple) else (out,)
    for o in outs:
        assert o.device.type == "cuda", f"{name} left the GPU: {o.device}"
    check(out, expected)


def test_device_moves_and_errors():
    e, t = pair((2, 3))
    g = e.to("cuda")
    assert g.device == ember.device("cuda", 0) and str(g.device) == str(t.cuda().device)
    assert np.array_equal(g.cpu().numpy(), e.numpy())
    with pytest.raises(RuntimeError, match="cuda:0 and cpu|cpu and cuda:0"):
        g + e
    assert (g + ember.tensor(1.0)).device.type == "cuda"  # a 0-d CPU tensor acts as a scalar


def test_bfloat16_on_cuda_is_refused_clearly():
    with pytest.raises(TypeError, match="bfloat16.*CUDA"):
        ember.zeros(2, device="cuda").to(ember.bfloat16)
    with pytest.raises(TypeError, match="bfloat16.*CUDA"):
        ember.zeros(2, dtype=ember.bfloat16, device="cuda")


def test_in_place_and_views_on_cuda():
    e = ember.zeros(3, 4, device="cuda")
    v = e[1]
    v.add_(2)
    assert e.sum().item() == 8 and e._version == 1
    e[:, 0] = 5
    assert e.cpu().numpy()[:, 0].tolist() == [5, 5, 5]


def test_random_on_cuda_is_reproducible():
    ember.manual_seed(0)
    a = ember.randn(100, device="cuda")
    ember.manual_seed(0)
    b = ember.randn(100, device="cuda")
    assert a.device.type == "cuda" and ember.equal(a, b)


def test_dlpack_between_ember_and_torch_on_cuda():
    e, t = cuda_pair((5,))
    check(ember.from_dlpack(t), t)
    check(e, torch.from_dlpack(e))
