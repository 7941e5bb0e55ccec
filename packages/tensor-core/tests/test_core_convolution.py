"""Convolution and pooling against torch: forward and the fused backward primitives in
float32 and float64 over odd kernels, strides, padding, dilation, groups (depthwise too),
transposed with output padding, unbatched and non-contiguous inputs; their errors; the
native loops against the numpy reference."""

from __future__ import annotations

import os
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch_oracle import check, check_same_error

import ember.core as ember
from ember.core import native
from ember.core.dispatch_modes import TorchDispatchMode
from ember.core.ops import adaptive_pooling as AP
from ember.core.ops import convolution as C
from ember.core.ops import pooling as P
from ember.core.ops import pooling_native as PN
from ember.core.ops.convolution import CONVOLUTION_BACKWARD

# (spatial dims, kernel, stride, padding, dilation, groups, transposed, output_padding)
CONVS = [(1, 1, 1, 0, 1, 1, False, 0), (2, 3, 1, 1, 1, 1, False, 0),
         (2, 5, 2, 2, 1, 1, False, 0), (2, 3, 2, 1, 2, 2, False, 0),
         (2, 3, 1, 1, 1, 4, False, 0), (3, 3, 2, 1, 1, 1, False, 0),
         (1, 3, 2, 1, 1, 2, True, 1), (2, 3, 2, 1, 1, 1, True, 1),
         (2, 5, 3, 2, 2, 2, True, 2), (3, 2, 2, 0, 1, 1, True, 0),
         # an output padding past the stride (a dilation wider than it): the output's last
         # positions are in no input position's window
         (1, 2, 1, 0, 2, 1, True, 1), (2, 3, 1, 1, 3, 2, True, 2)]


def _pair(shape, dtype, seed, noncontiguous=False):
    """Ember's and torch's copies of one random array. float32 data are small integers: the
    sums of products are then exact in any order (BLAS and oneDNN add in different orders,
    which moves float32 sums of hundreds of terms by more than float32's tolerance)."""
    rng = np.random.default_rng(seed)
    a = (rng.integers(-3, 4, shape) if dtype == "float32" else
         rng.standard_normal(shape)).astype(dtype)
    if noncontiguous:
        wide = np.repeat(a, 2, axis=-1)
        return ember.from_numpy(wide.copy())[..., ::2], torch.from_numpy(wide.copy())[..., ::2]
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _shapes(case, batch):
    nd, k, _, _, _, g, transposed, _ = case
    spatial = (9, 8, 7)[:nd]
    cin = 4
    w = (cin, 6 // g if g < 4 else 1) if transposed else (6 if g < 4 else 4, cin // g)
    return (batch, cin) + spatial, w + (k,) * nd, (w[1] * g if transposed else w[0],)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("case", CONVS, ids=[str(c) for c in CONVS])
def test_convolution_and_its_backward_match_torch(case, batch, dtype):
    nd, _, s, p, d, g, transposed, op = case
    xs, ws, bs = _shapes(case, batch)
    (xe, xt), (we, wt), (be, bt) = (_pair(xs, dtype, 0, noncontiguous=True),
                                    _pair(ws, dtype, 1), _pair(bs, dtype, 2))
    ye = ember.convolution(xe, we, be, s, p, d, transposed, op, g)
    yt = torch.convolution(xt, wt, bt, [s] * nd, [p] * nd, [d] * nd, transposed, [op] * nd, g)
    check(ye, yt)
    ge, gt = _pair(tuple(yt.shape), dtype, 3)
    params = {"stride": (s,) * nd, "padding": (p,) * nd, "dilation": (d,) * nd,
              "transposed": transposed, "output_padding": (op,) * nd, "groups": g}
    got = CONVOLUTION_BACKWARD(ge, xe, we, **params, output_mask=(True, True, True))
    want = torch.ops.aten.convolution_backward(gt, xt, wt, list(bs), [s] * nd, [p] * nd,
                                               [d] * nd, transposed, [op] * nd, g,
                                               [True, True, True])
    for a, b in zip(got, want):
        check(a, b)


@pytest.mark.parametrize("batch,groups", [(1, 3), (2, 1)])
def test_a_transposed_convolution_may_give_an_empty_output_as_torchs(batch, groups):
    """torch's oneDNN kernel (float32 batches, grouped float32 inputs) gives an empty output
    where its slow kernel refuses one."""
    x = np.ones((batch, 3, 1, 2), np.float32)
    w = np.linspace(-1, 1, 9, dtype=np.float32).reshape(3, 1, 3, 1)
    args = (None, 1, 1, 0, groups, 2)
    check(ember.conv_transpose2d(ember.from_numpy(x), ember.from_numpy(w), *args),
          torch.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), *args))


@pytest.mark.parametrize("fn", ["conv1d", "conv2d", "conv3d"])
@pytest.mark.parametrize("padding", ["same", "valid", 1])
def test_public_convolutions_match_torch(fn, padding):
    nd = int(fn[-2])
    (xe, xt), (we, wt) = _pair((3,) + (7,) * nd, "float64", 0), \
        _pair((2, 3) + (2,) * nd, "float64", 1)
    check(getattr(ember, fn)(xe, we, padding=padding, dilation=1),
          getattr(torch, fn)(xt, wt, padding=padding, dilation=1))
    tfn = "conv_transpose" + fn[-2:]
    (ve, vt) = _pair((3,) + (5,) * nd, "float64", 2)
    check(getattr(ember, tfn)(ve, we.transpose(0, 1), stride=2, output_padding=1),
          getattr(torch, tfn)(vt, wt.transpose(0, 1), stride=2, output_padding=1))


POOLS = [((2, 3, 9, 8), dict(kernel_size=2)),
         ((2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1)),
         ((2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
         ((3, 9, 8), dict(kernel_size=(3, 2), stride=(1, 2), padding=(1, 0)))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", POOLS, ids=[str(c[1]) for c in POOLS])
def test_pools_and_their_backward_match_torch(case, dtype):
    shape, kw = case
    for fn, ef, tf, extra in [
            ("max", P.max_pool2d_with_indices, F.max_pool2d, {"dilation": 1}),
            ("max dilated", P.max_pool2d_with_indices, F.max_pool2d, {"dilation": 2}),
            ("avg", P.avg_pool2d, F.avg_pool2d, {}),
            ("avg no pad", P.avg_pool2d, F.avg_pool2d, {"count_include_pad": False}),
            ("avg divisor", P.avg_pool2d, F.avg_pool2d, {"divisor_override": 5})]:
        args = {**kw, **extra}
        xe, xt = _pair(shape, dtype, 0, noncontiguous=True)
        xt.requires_grad_()
        with _Recorder():
            oe = ef(xe, **args)
        ot = tf(xt, **args, **({"return_indices": True} if fn.startswith("max") else {}))
        check(oe, ot)
        ye, yt = (oe[0], ot[0]) if isinstance(ot, tuple) else (oe, ot)
        ge, gt = _pair(tuple(yt.shape), dtype, 3)
        check(_backward(ye, xe, ge), torch.autograd.grad(yt, xt, gt)[0])


def _backward(y, x, g):
    """The fused backward primitive of the pool that made ``y`` from ``x`` (recorded by a
    TorchDispatchMode: tensor-core has no autograd of its own)."""
    call = _last_call(y)
    backward = {"max_pool2d_with_indices": P.MAX_POOL2D_BACKWARD,
                "avg_pool2d": P.AVG_POOL2D_BACKWARD,
                "_adaptive_avg_pool2d": AP.ADAPTIVE_AVG_POOL2D_BACKWARD,
                "adaptive_max_pool2d": AP.ADAPTIVE_MAX_POOL2D_BACKWARD}[call[0].name]
    extra = (call[2][1],) if call[0].name.startswith(("max", "adaptive_max")) else ()
    params = {} if call[0].name.startswith(("_adaptive", "adaptive")) else call[1]
    return backward(g, x, *extra, **params)


_CALLS: dict[int, tuple] = {}


def _last_call(y):
    return _CALLS[id(y)]


class _Recorder(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        outs = out if isinstance(out, tuple) else (out,)
        _CALLS[id(outs[0])] = (func, dict(kwargs or {}), outs)
        return out


@pytest.mark.parametrize("out", [(3, 4), 4, (9, 8), (1, 1), (2, None)])
def test_adaptive_pools_match_torch(out):
    for ef, tf in [(AP.adaptive_avg_pool2d, F.adaptive_avg_pool2d),
                   (AP.adaptive_max_pool2d, lambda x, o: F.adaptive_max_pool2d(x, o, True))]:
        xe, xt = _pair((2, 3, 9, 8), "float32", 0)
        xt.requires_grad_()
        with _Recorder():
            oe = ef(xe, out)
        ot = tf(xt, out)
        check(oe, ot)
        ye, yt = (oe[0], ot[0]) if isinstance(ot, tuple) else (oe, ot)
        ge, gt = _pair(tuple(yt.shape), "float32", 3)
        if out == (1, 1) and ef is AP.adaptive_avg_pool2d:
            continue  # a mean, as torch's
        check(_backward(ye, xe, ge), torch.autograd.grad(yt, xt, gt)[0])


def test_max_pool_keeps_torchs_first_maximum_and_last_nan():
    a = np.array([[[[1.0, 1.0, np.nan, 2.0], [np.nan, 1.0, -np.inf, -np.inf]]]])
    for kw in ({"kernel_size": 2}, {"kernel_size": 2, "stride": 1, "padding": 1}):
        check(P.max_pool2d_with_indices(ember.tensor(a), **kw),
              F.max_pool2d(torch.tensor(a), return_indices=True, **kw))
    b = np.full((1, 1, 3, 3), -np.inf)
    check(P.max_pool2d_with_indices(ember.tensor(b), 2, 1, 1),
          F.max_pool2d(torch.tensor(b), 2, 1, 1, return_indices=True))


def test_one_dim_pools_match_torch():
    xe, xt = _pair((2, 3, 11), "float64", 0)
    check(ember.max_pool1d_with_indices(xe, 3, 2, 1), torch.max_pool1d_with_indices(xt, 3, 2, 1))
    check(ember.avg_pool1d(xe, 3, 2, 1, True, False), torch.avg_pool1d(xt, 3, 2, 1, True, False))
    check(ember.adaptive_avg_pool1d(xe, 4), torch.adaptive_avg_pool1d(xt, 4))
    check(ember.adaptive_max_pool1d(xe, 4), torch.adaptive_max_pool1d(xt, 4))


X4 = lambda m: m.ones(2, 4, 9, 9)  # noqa: E731
ERRORS = [
    (lambda m: m.conv2d(m.ones(1, 2, 4, 9, 9), m.ones(6, 4, 3, 3)), "Expected 3D (unbatched)"),
    (lambda m: m.conv2d(m.ones(2, 5, 9, 9), m.ones(6, 4, 3, 3)), "to have 4 channels"),
    (lambda m: m.conv2d(X4(m), m.ones(5, 2, 3, 3), groups=2), "divisible by 2"),
    (lambda m: m.conv2d(X4(m), m.ones(6, 4, 3, 3), groups=0), "non-positive groups"),
    (lambda m: m.conv2d(m.ones(2, 4, 2, 2), m.ones(6, 4, 3, 3)), "Kernel size can't"),
    (lambda m: m.conv2d(X4(m), m.ones(6, 4, 3, 3), stride=0), "non-positive stride"),
    (lambda m: m.conv2d(X4(m), m.ones(6, 4, 3, 3), padding=-1), "negative padding"),
    (lambda m: m.conv2d(X4(m), m.ones(6, 4, 3, 3), dilation=0), "non-positive dilation"),
    (lambda m: m.conv2d(X4(m), m.ones(6, 4, 3, 3), m.ones(5)), "expected bias to be"),
    (lambda m: m.conv_transpose2d(m.ones(2, 5, 9, 9), m.ones(4, 6, 3, 3)), "transposed=1"),
    (lambda m: m.conv_transpose2d(X4(m), m.ones(4, 6, 3, 3), output_padding=1),
     "output padding must be smaller"),
    (lambda m: m.conv2d(X4(m), m.ones(6, 4, 3, 3), stride=2, padding="same"),
     "not supported for strided"),
    (lambda m: m.conv2d(X4(m), m.ones(6, 4, 3, 3), padding="foo"), "Invalid padding string"),
    (lambda m: m.conv2d(X4(m), m.ones(6, 4, 3, 3), stride=(1, 2, 3)), "expected stride to be"),
    (lambda m: m.conv2d(X4(m), m.ones(6, 4, 3, 3, dtype=m.float64)), "should be the same"),
    (lambda m: m.conv2d(X4(m).double(), m.ones(6, 4, 3, 3)),
     "expected scalar type Double but found Float"),
    (lambda m: m.conv_transpose1d(m.ones(1, 0, 2), m.ones(0, 1, 1), None, 1, 0, 0, 1, 2),
     "expected weight to be at least 1 at dimension 0"),
    (lambda m: m.conv2d(m.ones(1, 1, 0, 1), m.ones(2, 1, 1, 1), None, 2, 1),
     "Only zero batch or zero channel inputs are supported"),
    (lambda m: m.conv_transpose1d(m.ones(1, 1, 1), m.ones(1, 1, 1), None, 1, 1),
     "Calculated output size per channel: (1 x -1)"),
    (lambda m: m.conv_transpose1d(m.ones(1, 1, 2), m.ones(1, 1, 1), None, 1, 1),
     "Calculated output size per channel: (1 x 0)"),
    (lambda m: m.conv_transpose1d(m.ones(2, 1, 2).double(), m.ones(1, 2, 1).double(), None, 1,
                                  1), "Calculated output size per channel: (1 x 0)"),
    (lambda m: m.max_pool1d(m.tensor(0), 3), "Expected 2D or 3D"),
    (lambda m: m.conv_transpose1d(m.ones(1, 2, 4).to(m.int8), m.ones(2, 2, 3).to(m.int8)),
     "slow_conv_transpose2d_out_cpu"),
    (lambda m: m.conv1d(m.ones(1, 2, 8).to(m.int16), m.ones(2, 2, 3).to(m.int16), None, 1, 0,
                        2), "slow_conv_dilated<>"),
    (lambda m: m.conv1d(m.ones(1, 2, 8).bool(), m.ones(2, 2, 3).bool()), "slow_conv2d_cpu"),
    (lambda m: m.conv1d(m.ones(1, 2, 8).int(), m.ones(2, 2, 3).int(), m.ones(2), 1, 0, 2),
     "Input type (int) and bias type (float) should be the same"),
    (lambda m: m.conv_transpose1d(m.ones(1, 2, 4).byte(), m.ones(2, 2, 3).byte(), m.ones(2)),
     "slow_conv_transpose2d_out_cpu"),
    (lambda m: m.max_pool2d(X4(m), 2, padding=2), "pad should be at most half"),
    (lambda m: m.max_pool2d(m.ones(1, 1, 2, 2), 3), "Output size is too small"),
    (lambda m: m.max_pool2d(X4(m), 2, stride=0), "stride should not be zero"),
    (lambda m: m.max_pool2d(X4(m), 2, dilation=0), "dilation should be greater than zero"),
    (lambda m: m.max_pool1d(m.ones(1, 2, 4).long(), 2), "max_pool1d_impl"),
    # a dilated kernel passes the first padding check, not the kernel's own (undilated) one
    (lambda m: m.max_pool1d(m.ones(2, 4, 8), 3, 1, 2, 2), "max_pool1d() padding should be"),
    (lambda m: m.max_pool1d_with_indices(m.ones(2, 4, 8), 3, 1, 2, 2),
     "padW = 2, padH = 0, kW = 3, kH = 1"),
    (lambda m: m.max_pool2d(X4(m), 3, 1, 2, 2), "padW = 2, padH = 2, kW = 3, kH = 3"),
    (lambda m: m.max_pool3d(m.ones(1, 2, 8, 8, 8), 3, 1, 2, 2), "kT: 3 kW: 3 kH: 3 padT: 2"),
    # empty dims other than the batch's, each kernel with its own message
    (lambda m: m.max_pool2d(m.ones(0, 2, 2), 2), "optional 0 dim batch size for input, but "
                                                  "got:[0, 2, 2]"),
    (lambda m: m.max_pool2d(m.ones(1, 0, 2, 2), 2), "but got:[1, 0, 2, 2]"),
    (lambda m: m.max_pool3d(m.ones(1, 2, 2, 0, 2), 2),
     "max_pool3d_with_indices_out_cpu_template(): Expected input's non-batch dimensions"),
    (lambda m: m.max_pool1d(m.ones(2, 3, 0), 2), "max_pool1d: Expected 2D or 3D (batch mode)"),
    (lambda m: m.max_pool1d_with_indices(m.ones(3), 2), "Expected 2 to 3 dimensions"),
    (lambda m: m.max_pool1d_with_indices(m.ones(2, 3, 0), 2), "but got:[2, 3, 1, 0]"),
]


@pytest.mark.parametrize("fn,phrase", ERRORS, ids=[e[1] for e in ERRORS])
def test_errors_match_torch(fn, phrase):
    check_same_error(fn, phrase)


@pytest.mark.parametrize("phrase,fn", [
    ("Expected 3D or 4D tensor", lambda nn: nn.adaptive_avg_pool2d(ember.ones(9), 2)),
    ("output_size must be 2", lambda nn: nn.adaptive_avg_pool2d(ember.ones(2, 4, 9, 9),
                                                                (2, 2, 2))),
    ("dimension 1 being empty", lambda nn: nn.adaptive_max_pool2d(ember.ones(2, 0, 4, 4), 2)),
    ("input image (T: 4 H: 3 W: 6) smaller than kernel size (kT: 4 kH: 4 kW: 4)",
     lambda nn: nn.avg_pool3d(ember.ones(2, 2, 4, 3, 6), 4, 1, 1)),
])
def test_nn_level_errors_match_torch(phrase, fn):
    with pytest.raises(RuntimeError) as expected:
        fn(_TorchInputs())
    assert phrase in str(expected.value)
    with pytest.raises(RuntimeError) as got:
        fn(_EMBER_NN)
    assert phrase in str(got.value)


_EMBER_NN = SimpleNamespace(**{n: getattr(m, n) for m in (AP, P) for n in dir(m)
                               if not n.startswith("_")})


class _TorchInputs:
    """torch.nn.functional, taking Ember tensors (as numpy arrays) for the same program."""

    def __getattr__(self, name):
        f = getattr(F, name)
        return lambda x, *a: f(torch.from_numpy(np.asarray(x)), *a)


NO_NATIVE = pytest.mark.skipif(
    native._compiler() is None or os.environ.get("EMBER_NATIVE") == "0",
    reason="native kernels off")
NATIVE_POOLS = [((2, 3, 9, 8), (2, 2), (2, 2), (0, 0), (1, 1), False),
                ((2, 3, 9, 8), (3, 3), (2, 2), (1, 1), (2, 2), True),
                ((40, 30, 19, 18), (3, 3), (2, 2), (1, 1), (1, 1), True),
                ((3, 9, 8), (3, 2), (1, 2), (1, 0), (1, 1), False)]


@NO_NATIVE
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", NATIVE_POOLS, ids=[str(c) for c in NATIVE_POOLS])
def test_native_max_pool_is_the_reference_bit_for_bit_at_any_thread_count(case, dtype):
    shape, k, s, p, d, ceil = case
    params = {"kernel_size": k, "stride": s, "padding": p, "dilation": d, "ceil_mode": ceil}
    rng = np.random.default_rng(0)
    # few distinct values: ties everywhere, NaNs and windows of only -inf among them
    a = rng.integers(-2, 3, shape).astype(dtype)
    a[a == 2], a[a == -2] = np.nan, -np.inf
    want, want_idx = P._max_pool(a, **params)
    assert PN._KERNELS(f"max_pool2d_{PN._SUFFIX[a.dtype]}") is not None
    g = rng.integers(-3, 4, want.shape).astype(dtype)  # sums exact in any order
    want_dx = P._max_pool_backward(g, a, want_idx, **params)
    before = ember.get_num_threads()
    try:
        for threads in (1, before):
            ember.set_num_threads(threads)
            y, idx = P.MAX_POOL2D(ember.from_numpy(a), **params)
            np.testing.assert_array_equal(y.numpy(), want)
            np.testing.assert_array_equal(idx.numpy(), want_idx)
            dx = P.MAX_POOL2D_BACKWARD(ember.from_numpy(g), ember.from_numpy(a), idx, **params)
            np.testing.assert_array_equal(dx.numpy(), want_dx)
    finally:
        ember.set_num_threads(before)


@NO_NATIVE
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", [c for c in CONVS if c[0] < 3], ids=[str(c) for c in CONVS
                                                                   if c[0] < 3])
def test_native_col2im_is_the_reference_bit_for_bit_at_any_thread_count(case, dtype):
    nd, _, s, p, d, g, transposed, op = case
    xs, ws, _ = _shapes(case, 3)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype)
    args = ((s,) * nd, (p,) * nd, (d,) * nd, g)
    if transposed:  # the adjoint runs as the forward
        size = C._transposed_size(xs[2:], ws[2:], *args[:3], (op,) * nd)
        y, wz = x, w
    else:
        size, y, wz = xs[2:], C._correlate(x, w, *args), w
        y = rng.standard_normal(y.shape).astype(dtype)
    assert C._KERNELS(f"col2im_{C._SUFFIX[y.dtype]}") is not None
    before = ember.get_num_threads()
    try:
        got = []
        for threads in (1, before):
            ember.set_num_threads(threads)
            got.append(C._adjoint(y, wz, size, *args, C._native_col2im))
    finally:
        ember.set_num_threads(before)
    want = C._adjoint(y, wz, size, *args, C._col2im)
    for a in got:
        np.testing.assert_array_equal(a, want)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
def test_max_pool_takes_nan_in_every_float_dtype(dtype):
    """A window holding NaN gives NaN and its index, as torch's loop does (bfloat16's numpy
    dtype is of a kind of its own, not "f")."""
    x = np.array([[[1.0, np.nan], [2.0, 3.0]], [[1.0, 5.0], [np.nan, 3.0]]], np.float32)
    for m in (torch, ember):
        t = m.tensor(x).to(getattr(m, dtype))
        out, idx = F.max_pool2d(t, 2, return_indices=True) if m is torch else \
            P.max_pool2d_with_indices(t, 2)
        assert np.isnan(out.float().numpy()).all() and idx.flatten().tolist() == [1, 2], m
