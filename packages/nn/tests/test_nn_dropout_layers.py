"""The dropout layers against torch.nn's: exactness where they are deterministic (eval,
p=0, p=1), their training noise by its statistics (the fraction dropped, the scale of the
rest, whole channels for the channel-wise forms, the mean and variance alpha dropout
keeps), gradients through the same mask, ``inplace``, ``repr`` and torch's exception
types and warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from nn_oracle import check_close, compare_modules, pair_modules

import ember.core as E
import ember.nn as enn

DTYPES = ["float32", "float64"]
LAYERS = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
          "FeatureAlphaDropout"]
# an input shape each layer takes without a warning
SHAPES = {"Dropout": (4, 5, 3), "Dropout1d": (3, 4, 5), "Dropout2d": (2, 3, 4, 2),
          "Dropout3d": (2, 3, 2, 2, 2), "AlphaDropout": (4, 5), "FeatureAlphaDropout": (3, 4, 5)}


def _input(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _same_error(program):
    with pytest.raises(Exception) as expected:
        program(torch.nn, torch)
    with pytest.raises(Exception) as got:
        program(enn, E)
    assert type(got.value) is type(expected.value), (expected.value, got.value)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", LAYERS)
@pytest.mark.parametrize("p, train", [(0.5, False), (0.0, True), (0.0, False), (1.0, False)],
                         ids=["eval", "p0-train", "p0-eval", "p1-eval"])
def test_deterministic_cases_match_torch(name, p, train, dtype):
    t, e = pair_modules(lambda nn: getattr(nn, name)(p))
    compare_modules(t, e, [_input(SHAPES[name], dtype)], train=train)


@pytest.mark.parametrize("name", ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d"])
def test_p_one_drops_everything(name):
    t, e = pair_modules(lambda nn: getattr(nn, name)(1.0))
    compare_modules(t, e, [_input(SHAPES[name], "float32")], train=True)


def _train_step(module, x):
    leaf = E.tensor(x, requires_grad=True)
    out = module(leaf)
    out.backward(E.ones_like(out))
    return out.detach().numpy(), leaf.grad.numpy()


def _binomial_ok(count, n, p):
    """``count`` of ``n`` draws is within 5 standard deviations of ``n * p``."""
    return abs(count - n * p) <= 5 * np.sqrt(n * p * (1 - p)) + 1


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_statistics_and_gradient(p, dtype):
    E.manual_seed(0)
    x = np.full((200, 100), 2.0, dtype)
    out, grad = _train_step(enn.Dropout(p), x)
    dropped = out == 0
    assert _binomial_ok(dropped.sum(), x.size, p)
    np.testing.assert_allclose(out[~dropped], 2.0 / (1 - p), rtol=1e-6)
    # the gradient flows through the same mask, with the same scale
    np.testing.assert_allclose(grad, np.where(dropped, 0.0, 1.0 / (1 - p)), rtol=1e-6)
    out2, _ = _train_step(enn.Dropout(p), x)
    assert not np.array_equal(out2 == 0, dropped)  # a new mask each call


@pytest.mark.parametrize("name, shape", [
    ("Dropout1d", (40, 30, 7)), ("Dropout1d", (300, 7)), ("Dropout2d", (40, 30, 3, 2)),
    ("Dropout2d", (40, 30, 5)), ("Dropout3d", (40, 30, 2, 2, 2)), ("Dropout3d", (300, 2, 3, 2))])
def test_channel_dropout_drops_whole_channels(name, shape):
    E.manual_seed(1)
    p = 0.3
    x = np.full(shape, 1.5, "float32")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Dropout2d's note on 3-d inputs
        out, grad = _train_step(getattr(enn, name)(p), x)
    unbatched = len(shape) == {"Dropout1d": 2, "Dropout2d": 0, "Dropout3d": 4}[name]
    channels = out.reshape(shape[0], -1) if unbatched else out.reshape(shape[0] * shape[1], -1)
    zero = (channels == 0).all(1)
    kept = (channels == np.float32(1.5 / (1 - p))).all(1)
    assert np.all(zero | kept)
    assert _binomial_ok(zero.sum(), len(zero), p)
    expected = np.where(zero[:, None], 0.0, 1 / (1 - p))
    np.testing.assert_allclose(grad.reshape(channels.shape),
                               np.broadcast_to(expected, channels.shape), rtol=1e-6)


@pytest.mark.parametrize("p", [0.2, 0.5])
def test_alpha_dropout_keeps_mean_and_variance(p):
    E.manual_seed(2)
    x = _input((400, 250), "float64", seed=3)
    out, grad = _train_step(enn.AlphaDropout(p), x)
    assert abs(out.mean() - x.mean()) < 0.02 and abs(out.var() / x.var() - 1) < 0.03
    alpha = 1.7580993408473766
    a = 1 / np.sqrt((alpha ** 2 * p + 1) * (1 - p))
    dropped = np.isclose(out, a * (-alpha) + alpha * a * p, rtol=1e-12, atol=1e-12)
    assert _binomial_ok(dropped.sum(), x.size, p)
    np.testing.assert_allclose(out[~dropped], a * x[~dropped] + alpha * a * p, rtol=1e-12)
    np.testing.assert_allclose(grad, np.where(dropped, 0.0, a), rtol=1e-12)


def test_feature_alpha_dropout_drops_whole_channels():
    E.manual_seed(4)
    p = 0.4
    x = _input((50, 40, 6), "float64", seed=5)
    out, grad = _train_step(enn.FeatureAlphaDropout(p), x)
    alpha = 1.7580993408473766
    a = 1 / np.sqrt((alpha ** 2 * p + 1) * (1 - p))
    dropped_value = a * (-alpha) + alpha * a * p
    flat = out.reshape(2000, 6)
    zero = np.isclose(flat, dropped_value, rtol=1e-12, atol=1e-12).all(1)
    kept = np.isclose(flat, a * x.reshape(2000, 6) + alpha * a * p, rtol=1e-12).all(1)
    assert np.all(zero ^ kept)
    assert _binomial_ok(zero.sum(), 2000, p)
    np.testing.assert_allclose(grad.reshape(2000, 6),
                               np.broadcast_to(np.where(zero[:, None], 0.0, a), (2000, 6)),
                               rtol=1e-12)


@pytest.mark.parametrize("name", ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d"])
def test_inplace_writes_the_input(name):
    E.manual_seed(6)
    x = np.full(SHAPES[name], 3.0, "float32")
    leaf = E.tensor(x, requires_grad=True)
    inner = leaf * 1.0
    m = getattr(enn, name)(0.5, inplace=True)
    out = m(inner)
    assert out is inner
    out.backward(E.ones_like(out))
    np.testing.assert_allclose(leaf.grad.numpy(), out.detach().numpy() / 3.0, rtol=1e-6)
    assert repr(m) == repr(getattr(torch.nn, name)(0.5, inplace=True))
    evaluated = m.eval()(inner)
    assert evaluated is inner


def test_repr_and_no_state():
    for name in LAYERS:
        for args in ((), (0.2,), (0.7, True)):
            t, e = getattr(torch.nn, name)(*args), getattr(enn, name)(*args)
            assert repr(t) == repr(e)
            assert list(e.state_dict()) == [] and e.p == t.p and e.inplace == t.inplace


@pytest.mark.parametrize("program", [
    lambda nn, lib: nn.Dropout(-0.1),
    lambda nn, lib: nn.Dropout2d(1.5),
    lambda nn, lib: nn.AlphaDropout(2),
    lambda nn, lib: nn.Dropout1d()(lib.ones(2, 3, 4, 5)),
    lambda nn, lib: nn.Dropout1d()(lib.ones(3)),
    lambda nn, lib: nn.FeatureAlphaDropout()(lib.ones(3)),
    lambda nn, lib: nn.Dropout(inplace=True)(lib.ones(3, requires_grad=True)),
], ids=["negative", "above-one", "alpha-above-one", "1d-4d", "1d-1d", "feature-1d",
        "inplace-leaf"])
def test_errors_match_torch(program):
    _same_error(program)


@pytest.mark.parametrize("name, shape, message", [
    ("Dropout2d", (2, 3, 4), "Received a 3D input to dropout2d"),
    ("Dropout2d", (2, 3), "Received a 2-D input to dropout2d"),
    ("Dropout3d", (2, 3, 4), "Received a 3-D input to dropout3d"),
])
def test_deprecated_shapes_warn_as_torch(name, shape, message):
    for nn, lib in ((torch.nn, torch), (enn, E)):
        with pytest.warns(UserWarning, match=message):
            getattr(nn, name)()(lib.ones(*shape))


def test_eval_returns_values_unchanged_for_half_types():
    x = torch.randn(3, 4).to(torch.bfloat16)
    t, e = pair_modules(lambda nn: nn.Dropout(0.3))
    t.eval(), e.eval()
    check_close(t(x), e(E.tensor(x.float().numpy()).to(E.bfloat16)), "bfloat16")
