"""The dropouts of ember.nn.functional: the fraction dropped and the scale of the rest by
statistics on large seeded inputs, whole channels dropped together in the channel-wise
forms, alpha dropout's mean and variance, exact results for p = 0, p = 1 and evaluation,
in-place forms, gradients (the mask times the scale), the same mask for the same seed, and
torch's errors and warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from functional_oracle import EMBER, E, F, check, same_error

import ember.autograd as ag

CHANNEL_FORMS = [("dropout1d", (40, 50, 30)), ("dropout2d", (40, 50, 5, 6)),
                 ("dropout3d", (20, 50, 2, 3, 5)), ("feature_alpha_dropout", (40, 50, 6))]


@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])
def test_dropout_statistics_and_gradient(p):
    E.manual_seed(0)
    x = E.ones(200, 500, dtype=E.float64, requires_grad=True)
    y = F.dropout(x, p)
    kept = np.array(y.detach()) != 0
    assert abs(kept.mean() - (1 - p)) < 4 * np.sqrt(p * (1 - p) / kept.size)
    np.testing.assert_allclose(np.array(y.detach())[kept], 1 / (1 - p))
    y.backward(E.full_like(y, 3.0))
    np.testing.assert_allclose(np.array(x.grad), np.where(kept, 3 / (1 - p), 0.0))


@pytest.mark.parametrize("name,shape", CHANNEL_FORMS)
def test_channel_dropout_drops_whole_channels(name, shape):
    E.manual_seed(1)
    p = 0.4
    x = E.randn(*shape, dtype=E.float64)
    y = np.array(getattr(F, name)(x, p, True))
    per_channel = y.reshape(shape[0], shape[1], -1)
    dropped = (per_channel == per_channel[..., :1]).all(-1) if "alpha" in name else \
        (per_channel == 0).all(-1)
    assert abs(dropped.mean() - p) < 4 * np.sqrt(p * (1 - p) / dropped.size)
    if "alpha" not in name:
        ratio = per_channel[~dropped] / np.array(x).reshape(per_channel.shape)[~dropped]
        np.testing.assert_allclose(ratio, 1 / (1 - p))


@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout"])
def test_alpha_dropout_keeps_mean_and_variance(name):
    E.manual_seed(2)
    p = 0.3
    x = E.randn(400, 500, dtype=E.float64)
    y = np.array(getattr(F, name)(x, p, True))
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    # a dropped element becomes SELU's saturation -alpha, then scaled by a and shifted
    alpha = 1.7580993408473766
    a = 1 / np.sqrt((alpha ** 2 * p + 1) * (1 - p))
    dropped = np.isclose(y, -a * alpha * (1 - p), rtol=0, atol=1e-12)
    # (a 2-d input's channels are its elements)
    assert abs(dropped.mean() - p) < 4 * np.sqrt(p * (1 - p) / dropped.size)


ALL = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
       "feature_alpha_dropout"]
SHAPES = {"dropout": (3, 4), "dropout1d": (3, 4, 5), "dropout2d": (2, 3, 4, 5),
          "dropout3d": (2, 3, 2, 2, 2), "alpha_dropout": (3, 4), "feature_alpha_dropout": (3, 4, 5)}


@pytest.mark.parametrize("name", ALL)
def test_p0_and_evaluation_return_the_input(name):
    x = E.randn(*SHAPES[name])
    fn = getattr(F, name)
    assert fn(x, 0.0, True) is x
    assert fn(x, 0.5, False) is x
    assert fn(x, 0.5, False, inplace=True) is x


@pytest.mark.parametrize("name", ALL)
def test_p1_zeroes_like_torch(name):
    rng = np.random.default_rng(3)
    values = rng.standard_normal(SHAPES[name])
    out = getattr(F, name)(E.tensor(values), 1.0, True)
    expected = getattr(torch.nn.functional, name)(torch.tensor(values), 1.0, True)
    check(out, expected)
    assert (np.signbit(np.array(out)) == np.signbit(expected.numpy())).all()


@pytest.mark.parametrize("name", ALL)
def test_same_seed_same_values_and_in_place(name):
    values = np.random.default_rng(4).standard_normal(SHAPES[name])
    E.manual_seed(5)
    a = getattr(F, name)(E.tensor(values), 0.5, True)
    E.manual_seed(5)
    b = getattr(F, name)(E.tensor(values), 0.5, True)
    np.testing.assert_array_equal(np.array(a), np.array(b))
    x = E.tensor(values)
    E.manual_seed(5)
    c = getattr(F, name)(x, 0.5, True, inplace=True)
    assert c is x or name in ("dropout1d", "dropout3d") and c.data_ptr() == x.data_ptr()
    np.testing.assert_array_equal(np.array(x), np.array(a))


@pytest.mark.parametrize("name", ALL)
def test_channel_and_alpha_gradients_are_the_noise(name):
    values = np.random.default_rng(6).standard_normal(SHAPES[name])
    x = E.tensor(values, requires_grad=True)
    E.manual_seed(7)
    y = getattr(F, name)(x, 0.4, True)
    (g,) = ag.grad(y.sum(), x)
    # the output is x * noise (+ a shift): its gradient is the noise, whose value the
    # output at x = 1 shows
    E.manual_seed(7)
    shift = np.array(getattr(F, name)(E.zeros(*SHAPES[name], dtype=E.float64), 0.4, True))
    E.manual_seed(7)
    noise = np.array(getattr(F, name)(E.ones(*SHAPES[name], dtype=E.float64), 0.4, True)) - shift
    np.testing.assert_allclose(np.array(g), noise, rtol=1e-12)


def test_in_place_on_a_leaf_is_refused():
    same_error(lambda m: m.F.dropout(m.ones(3, requires_grad=True), 0.5, True, inplace=True))
    same_error(lambda m: m.F.alpha_dropout(m.ones(3, 2, requires_grad=True), 0.5, True,
                                           inplace=True))


@pytest.mark.parametrize("call", [
    lambda m: m.F.dropout(m.ones(3), 1.5),
    lambda m: m.F.dropout2d(m.ones(2, 3, 4), -0.1),
    lambda m: m.F.alpha_dropout(m.ones(3), 2.0),
    lambda m: m.F.dropout1d(m.ones(2, 3, 4, 5)),
    lambda m: m.F.feature_alpha_dropout(m.ones(4), 0.5, True),
    lambda m: m.F.dropout(m.ones(3, dtype=m.int64), 0.5, True),
    lambda m: m.F.dropout2d(m.ones(2, 3, 4, 4, dtype=m.int64), 0.5, True),
    lambda m: m.F.alpha_dropout(m.ones(3, 4, dtype=m.int64), 0.5, True),
])
def test_errors(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(call)


@pytest.mark.parametrize("name,shape,phrase", [
    ("dropout2d", (2, 3), "Received a 2-D input to dropout2d"),
    ("dropout2d", (2, 3, 4), "Received a 3D input to dropout2d"),
    ("dropout3d", (2, 3, 4), "Received a 3-D input to dropout3d"),
])
def test_deprecation_warnings(name, shape, phrase):
    for fn in (getattr(torch.nn.functional, name), getattr(F, name)):
        with pytest.warns(UserWarning, match=phrase):
            fn(torch.ones(*shape) if fn.__module__.startswith("torch") else E.ones(*shape))


def test_unbatched_channel_forms_keep_their_shape():
    for name, shape in (("dropout1d", (3, 4)), ("dropout3d", (3, 2, 2, 2))):
        assert tuple(getattr(EMBER.F, name)(E.ones(*shape), 0.5, True).shape) == shape
