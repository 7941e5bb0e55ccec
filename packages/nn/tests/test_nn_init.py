"""ember.nn.init against torch.nn.init: gains and fans equal torch's; the random fills by
their statistics on large seeded tensors (mean, std, bounds, truncation, sparsity); exact
results for the deterministic ones (constant, ones, zeros, eye, dirac with groups) and
orthogonal's (semi-)orthogonality and its sign convention; the same seed or generator gives
the same values; fills run outside the graph and return their tensor; torch's errors and
warnings."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.init as tinit

import ember.autograd  # noqa: F401  (importing it installs autograd)
import ember.core as E
import ember.nn.init as init

NONLINEARITIES = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d", "sigmoid", "tanh", "relu",
                  "leaky_relu", "selu"]
FAN_SHAPES = [(5, 3), (4, 6, 3), (8, 2, 3, 5), (2, 3, 1, 4, 2), (0, 3)]


@pytest.mark.parametrize("nonlinearity", NONLINEARITIES)
def test_calculate_gain(nonlinearity):
    assert init.calculate_gain(nonlinearity) == tinit.calculate_gain(nonlinearity)


@pytest.mark.parametrize("param", [None, 0, 0.2, 3, -1.5])
def test_calculate_gain_leaky_relu_slope(param):
    assert init.calculate_gain("leaky_relu", param) == tinit.calculate_gain("leaky_relu", param)
    assert init.calculate_gain("relu", param) == tinit.calculate_gain("relu", param)


def _same_error(call):
    with pytest.raises(Exception) as expected:
        call(tinit, torch)
    with pytest.raises(Exception) as got:
        call(init, E)
    assert type(got.value) is type(expected.value)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("call", [
    lambda i, m: i.calculate_gain("foo"),
    lambda i, m: i.calculate_gain("leaky_relu", "x"),
    lambda i, m: i.calculate_gain("leaky_relu", True),
    lambda i, m: i._calculate_fan_in_and_fan_out(m.empty(3)),
    lambda i, m: i._calculate_correct_fan(m.empty(3, 4), "fan_avg"),
    lambda i, m: i.kaiming_uniform_(m.empty(3)),
    lambda i, m: i.kaiming_normal_(m.empty(3, 4), mode="fan_both"),
    lambda i, m: i.xavier_normal_(m.empty(3)),
    lambda i, m: i.eye_(m.empty(3, 4, 2)),
    lambda i, m: i.dirac_(m.empty(3, 4)),
    lambda i, m: i.dirac_(m.empty(3, 4, 2), 2),
    lambda i, m: i.orthogonal_(m.empty(3)),
    lambda i, m: i.orthogonal_(m.empty(3, 3, dtype=m.float16)),
    lambda i, m: i.sparse_(m.empty(3, 4, 5), 0.1),
    lambda i, m: i.uniform_(m.empty(3, 4, dtype=m.int64)),
    lambda i, m: i.normal_(m.empty(3, 4, dtype=m.int64)),
    lambda i, m: i.trunc_normal_(m.empty(3, 4, dtype=m.int64)),
    lambda i, m: i.uniform_(m.empty(3), 2.0, 1.0),
])
def test_errors(call):
    _same_error(call)


@pytest.mark.parametrize("shape", FAN_SHAPES)
def test_fans(shape):
    assert init._calculate_fan_in_and_fan_out(E.empty(*shape)) == \
        tinit._calculate_fan_in_and_fan_out(torch.empty(*shape))
    for mode in ("fan_in", "fan_out", "FAN_OUT"):
        assert init._calculate_correct_fan(E.empty(*shape), mode) == \
            tinit._calculate_correct_fan(torch.empty(*shape), mode)


N = 200_000


def _moments(t):
    a = np.array(t, dtype=np.float64).ravel()
    return a.mean(), a.std(), a.min(), a.max()


def _close(value, expected, std, n=N, k=5.0):
    assert abs(value - expected) < k * std / math.sqrt(n), (value, expected)


def test_uniform_and_normal():
    E.manual_seed(0)
    mean, std, low, high = _moments(init.uniform_(E.empty(N), -1.5, 2.5))
    assert -1.5 <= low and high < 2.5
    _close(mean, 0.5, 4 / math.sqrt(12))
    mean, std, *_ = _moments(init.normal_(E.empty(N), 3.0, 0.5))
    _close(mean, 3.0, 0.5)
    _close(std, 0.5, 0.5 / math.sqrt(2))


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.5, 2.0, -1.0, 1.0),
                                          (0.0, 1.0, 1.0, 3.0), (0.0, 0.02, -0.04, 0.04)])
def test_trunc_normal_statistics(mean, std, a, b):
    E.manual_seed(1)
    t = init.trunc_normal_(E.empty(N, dtype=E.float64), mean, std, a, b)
    got_mean, got_std, low, high = _moments(t)
    assert a <= low and high <= b
    # the truncated normal's moments
    alpha, beta = (a - mean) / std, (b - mean) / std

    def pdf(x):
        return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)

    def cdf(x):
        return (1 + math.erf(x / math.sqrt(2))) / 2

    z = cdf(beta) - cdf(alpha)
    expected_mean = mean + std * (pdf(alpha) - pdf(beta)) / z
    variance = std ** 2 * (1 + (alpha * pdf(alpha) - beta * pdf(beta)) / z
                           - ((pdf(alpha) - pdf(beta)) / z) ** 2)
    _close(got_mean, expected_mean, math.sqrt(variance))
    _close(got_std, math.sqrt(variance), math.sqrt(variance))


def test_trunc_normal_float32_bounds_and_warning():
    E.manual_seed(2)
    t = init.trunc_normal_(E.empty(N), 0.0, 1.0, -0.1, 0.1)
    assert float(t.min()) >= np.float32(-0.1) and float(t.max()) <= np.float32(0.1)
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(E.empty(10), 5.0, 1.0, -1.0, 1.0)


@pytest.mark.parametrize("shape", [(300, 400), (40, 30, 3, 3)])
@pytest.mark.parametrize("gain", [1.0, 2.5])
def test_xavier(shape, gain):
    fan_in, fan_out = tinit._calculate_fan_in_and_fan_out(torch.empty(*shape))
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    n = math.prod(shape)
    E.manual_seed(3)
    mean, got, low, high = _moments(init.xavier_uniform_(E.empty(*shape), gain))
    bound = math.sqrt(3.0) * std
    assert -bound <= low and high <= bound
    _close(mean, 0.0, std, n)
    _close(got, std, std, n)
    mean, got, *_ = _moments(init.xavier_normal_(E.empty(*shape), gain))
    _close(mean, 0.0, std, n)
    _close(got, std, std / math.sqrt(2), n)


@pytest.mark.parametrize("shape", [(300, 400), (40, 30, 3, 3)])
@pytest.mark.parametrize("a,mode,nonlinearity", [(0, "fan_in", "leaky_relu"),
                                                 (math.sqrt(5), "fan_in", "leaky_relu"),
                                                 (0, "fan_out", "relu"), (0, "fan_in", "tanh")])
def test_kaiming(shape, a, mode, nonlinearity):
    fan = tinit._calculate_correct_fan(torch.empty(*shape), mode)
    std = tinit.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    n = math.prod(shape)
    E.manual_seed(4)
    mean, got, low, high = _moments(init.kaiming_uniform_(E.empty(*shape), a, mode, nonlinearity))
    assert -math.sqrt(3) * std <= low and high <= math.sqrt(3) * std
    _close(mean, 0.0, std, n)
    _close(got, std, std, n)
    mean, got, *_ = _moments(init.kaiming_normal_(E.empty(*shape), a, mode, nonlinearity))
    _close(mean, 0.0, std, n)
    _close(got, std, std / math.sqrt(2), n)


def test_kaiming_of_an_empty_tensor_warns_and_returns_it():
    for fn in (init.kaiming_uniform_, init.kaiming_normal_):
        t = E.empty(0, 3)
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            assert fn(t) is t


def test_deterministic_fills_equal_torchs():
    for name, args in (("constant_", (2.5,)), ("ones_", ()), ("zeros_", ())):
        out = getattr(init, name)(E.empty(3, 4), *args)
        np.testing.assert_array_equal(np.array(out),
                                      getattr(tinit, name)(torch.empty(3, 4), *args).numpy())
    for shape in ((3, 5), (5, 3), (4, 4)):
        np.testing.assert_array_equal(np.array(init.eye_(E.empty(*shape))),
                                      tinit.eye_(torch.empty(*shape)).numpy())


@pytest.mark.parametrize("shape,groups", [((4, 2, 3), 1), ((4, 2, 3), 2), ((6, 4, 3, 3), 3),
                                          ((3, 5, 3, 2, 3), 1), ((2, 2, 1, 1), 2),
                                          ((4, 1, 3, 4, 5), 4)])
def test_dirac(shape, groups):
    np.testing.assert_array_equal(np.array(init.dirac_(E.randn(*shape), groups)),
                                  tinit.dirac_(torch.randn(*shape), groups).numpy())


@pytest.mark.parametrize("shape", [(30, 50), (50, 30), (20, 20), (6, 4, 3, 3), (1, 7)])
@pytest.mark.parametrize("gain", [1.0, 3.0])
def test_orthogonal(shape, gain):
    E.manual_seed(5)
    q = np.array(init.orthogonal_(E.empty(*shape, dtype=E.float64), gain)).reshape(shape[0], -1)
    rows, cols = q.shape
    small = q @ q.T if rows <= cols else q.T @ q
    np.testing.assert_allclose(small, gain ** 2 * np.eye(min(rows, cols)), atol=1e-12)


def test_orthogonal_is_the_sign_corrected_q_of_the_drawn_matrix():
    gen = E.Generator().manual_seed(6)
    drawn = np.array(E.empty(5, 8, dtype=E.float64).normal_(0, 1, generator=gen))
    gen.manual_seed(6)
    q = np.array(init.orthogonal_(E.empty(5, 8, dtype=E.float64), generator=gen))
    # Q R = drawn.T with R's diagonal positive: q.T's columns are that Q
    r = np.linalg.solve(q.T.T @ q.T, q.T.T @ drawn.T)
    assert (np.diag(r) > 0).all()
    np.testing.assert_allclose(q.T @ r, drawn.T, atol=1e-12)
    np.testing.assert_allclose(np.triu(r), r, atol=1e-12)


@pytest.mark.parametrize("sparsity", [0.0, 0.1, 0.5, 0.9])
def test_sparse(sparsity):
    E.manual_seed(7)
    t = np.array(init.sparse_(E.empty(200, 300, dtype=E.float64), sparsity, std=0.5))
    zeros = (t == 0).sum(0)
    np.testing.assert_array_equal(zeros, math.ceil(sparsity * 200))
    kept = t[t != 0]
    _close(kept.mean(), 0.0, 0.5, kept.size)
    _close(kept.std(), 0.5, 0.5 / math.sqrt(2), kept.size)
    # which rows are zeroed differs from column to column
    if 0 < sparsity < 1:
        assert len({tuple(np.flatnonzero(t[:, j] == 0)) for j in range(300)}) > 250


RANDOM = [("uniform_", ()), ("normal_", ()), ("trunc_normal_", ()), ("xavier_uniform_", ()),
          ("xavier_normal_", ()), ("kaiming_uniform_", ()), ("kaiming_normal_", ()),
          ("orthogonal_", ()), ("sparse_", (0.3,))]


@pytest.mark.parametrize("name,args", RANDOM)
def test_same_seed_or_generator_same_values(name, args):
    fn = getattr(init, name)
    E.manual_seed(8)
    a = np.array(fn(E.empty(20, 30), *args))
    E.manual_seed(8)
    b = np.array(fn(E.empty(20, 30), *args))
    np.testing.assert_array_equal(a, b)
    c = np.array(fn(E.empty(20, 30), *args))
    assert not np.array_equal(a, c)
    g = np.array(fn(E.empty(20, 30), *args, generator=E.Generator().manual_seed(9)))
    h = np.array(fn(E.empty(20, 30), *args, generator=E.Generator().manual_seed(9)))
    np.testing.assert_array_equal(g, h)


ALL = RANDOM + [("constant_", (0.5,)), ("ones_", ()), ("zeros_", ()), ("eye_", ())]


@pytest.mark.parametrize("name,args", ALL)
def test_fills_a_parameter_outside_the_graph_and_returns_it(name, args):
    w = E.empty(6, 5, requires_grad=True)
    out = getattr(init, name)(w, *args)
    assert out is w
    assert w.requires_grad and w.grad_fn is None
    w.sum().backward()
    np.testing.assert_array_equal(np.array(w.grad), np.ones((6, 5), np.float32))


def test_dirac_of_a_parameter():
    w = E.empty(4, 2, 3, requires_grad=True)
    assert init.dirac_(w) is w and w.grad_fn is None


@pytest.mark.parametrize("old,new", [("uniform", "uniform_"), ("normal", "normal_"),
                                     ("constant", "constant_"), ("eye", "eye_"),
                                     ("dirac", "dirac_"), ("xavier_uniform", "xavier_uniform_"),
                                     ("xavier_normal", "xavier_normal_"),
                                     ("kaiming_uniform", "kaiming_uniform_"),
                                     ("kaiming_normal", "kaiming_normal_"),
                                     ("orthogonal", "orthogonal_"), ("sparse", "sparse_")])
def test_deprecated_aliases(old, new):
    shape = (4, 2, 3) if old == "dirac" else (4, 3)
    args = (0.5,) if old in ("constant", "sparse") else ()
    with pytest.warns(FutureWarning, match=f"`nn.init.{old}` is now deprecated in favor of "
                                           f"`nn.init.{new}`"):
        t = E.empty(*shape)
        assert getattr(init, old)(t, *args) is t
    assert getattr(init, old).__name__ == old


def test_names_are_torchs():
    assert sorted(init.__all__) == sorted(tinit.__all__)
