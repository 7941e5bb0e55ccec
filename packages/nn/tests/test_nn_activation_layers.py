"""The activation layers against torch.nn's: outputs, input and parameter gradients and
``repr`` (float32 and float64, train and eval) for each layer and its options, inputs
holding the kinks, ``inplace`` (the result is the input), PReLU's parameter and its
default, RReLU's random slopes by their range, the implicit softmax dim's warning, and
torch's exception types."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from nn_oracle import check_close, compare_modules, pair_modules, to_ember

import ember.core as E
import ember.nn as enn

DTYPES = ["float32", "float64"]


def _input(shape, dtype, seed=0, scale=2.0):
    return (scale * np.random.default_rng(seed).standard_normal(shape)).astype(dtype)


def _same_error(program):
    """``program(nn, lib)`` raises under torch; under Ember it raises the same type."""
    with pytest.raises(Exception) as expected:
        program(torch.nn, torch)
    with pytest.raises(Exception) as got:
        program(enn, E)
    assert type(got.value) is type(expected.value), (expected.value, got.value)


LAYERS = [
    # (layer, constructor args, constructor kwargs, input shape)
    ("Threshold", (0.1, 20.0), {}, (3, 4)),
    ("Threshold", (-0.5, -2.0), {}, (2, 3, 2)),
    ("ReLU", (), {}, (3, 5)),
    ("RReLU", (), {}, (4, 3)),
    ("RReLU", (0.2, 0.4), {}, (4, 3)),
    ("Hardtanh", (), {}, (3, 4)),
    ("Hardtanh", (-2.0, 0.5), {}, (3, 4)),
    ("ReLU6", (), {}, (2, 6)),
    ("Sigmoid", (), {}, (3, 4)),
    ("Hardsigmoid", (), {}, (3, 4)),
    ("Tanh", (), {}, (2, 3, 4)),
    ("SiLU", (), {}, (3, 4)),
    ("Mish", (), {}, (3, 4)),
    ("Hardswish", (), {}, (3, 4)),
    ("ELU", (), {}, (3, 4)),
    ("ELU", (0.5,), {}, (3, 4)),
    ("CELU", (), {}, (3, 4)),
    ("CELU", (2.0,), {}, (3, 4)),
    ("SELU", (), {}, (3, 4)),
    ("GLU", (), {}, (3, 4)),
    ("GLU", (0,), {}, (4, 3)),
    ("GELU", (), {}, (3, 4)),
    ("GELU", ("tanh",), {}, (3, 4)),
    ("GELU", (), {"approximate": "none"}, (2, 2, 3)),
    ("Hardshrink", (), {}, (3, 4)),
    ("Hardshrink", (1.5,), {}, (3, 4)),
    ("LeakyReLU", (), {}, (3, 4)),
    ("LeakyReLU", (0.2,), {}, (3, 4)),
    ("LogSigmoid", (), {}, (3, 4)),
    ("Softplus", (), {}, (3, 4)),
    ("Softplus", (2.0, 1.0), {}, (3, 4)),
    ("Softshrink", (), {}, (3, 4)),
    ("Softshrink", (1.2,), {}, (3, 4)),
    ("PReLU", (), {}, (2, 3, 4)),
    ("PReLU", (3, 0.1), {}, (2, 3, 4)),
    ("PReLU", (4,), {}, (2, 4)),
    ("PReLU", (), {}, (5,)),
    ("Softsign", (), {}, (3, 4)),
    ("Tanhshrink", (), {}, (3, 4)),
    ("Softmin", (1,), {}, (3, 4)),
    ("Softmax", (-1,), {}, (2, 3, 4)),
    ("Softmax", (0,), {}, (3, 4)),
    ("Softmax2d", (), {}, (2, 3, 4, 2)),
    ("Softmax2d", (), {}, (3, 4, 2)),
    ("LogSoftmax", (1,), {}, (2, 5, 3)),
]

# the layers with ``inplace``, set
INPLACE = [
    ("Threshold", (-0.5, -2.0), {"inplace": True}, (2, 3, 2)),
    ("ReLU", (True,), {}, (2, 3)),
    ("RReLU", (0.2, 0.4), {"inplace": True}, (4, 3)),
    ("Hardtanh", (-2.0, 0.5), {"inplace": True}, (3, 4)),
    ("ReLU6", (True,), {}, (2, 6)),
    ("Hardsigmoid", (True,), {}, (3, 4)),
    ("SiLU", (), {"inplace": True}, (3, 4)),
    ("Mish", (), {"inplace": True}, (3, 4)),
    ("Hardswish", (), {"inplace": True}, (3, 4)),
    ("ELU", (0.5, True), {}, (3, 4)),
    ("CELU", (2.0,), {"inplace": True}, (3, 4)),
    ("SELU", (True,), {}, (3, 4)),
    ("LeakyReLU", (0.2, True), {}, (3, 4)),
]

# RReLU's training slopes are random: test_rrelu_train_slopes checks them
COMPARED = [(*layer, train) for layer in LAYERS for train in (True, False)
            if not (layer[0] == "RReLU" and train)]


def _build(name, args, kwargs):
    return lambda nn: getattr(nn, name)(*args, **kwargs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, args, kwargs, shape, train", COMPARED,
                         ids=[f"{c[0]}-{i}-{'train' if c[4] else 'eval'}"
                              for i, c in enumerate(COMPARED)])
def test_activation_matches_torch(name, args, kwargs, shape, train, dtype):
    t, e = pair_modules(_build(name, args, kwargs), dtype=dtype)
    compare_modules(t, e, [_input(shape, dtype)], train=train)


@pytest.mark.parametrize("name, args, kwargs, shape", INPLACE,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(INPLACE)])
def test_inplace_writes_the_input_and_keeps_gradients(name, args, kwargs, shape):
    x = _input(shape, "float64")
    t, e = pair_modules(_build(name, args, kwargs), dtype="float64")
    t.eval(), e.eval()
    results = []
    for module, lib in ((t, torch), (e, E)):
        leaf = lib.tensor(x, requires_grad=True)
        inner = leaf * 1.0
        out = module(inner)
        assert out is inner
        out.backward(lib.tensor(x[::-1].copy()))
        results.append((out, leaf.grad))
    check_close(results[0][0], results[1][0], "output")
    check_close(results[0][1], results[1][1], "grad")
    assert repr(t) == repr(e)


# inputs on the kinks: 0 and the thresholds, where torch's gradients take a side
KINKS = [
    ("ReLU", (), np.array([-1.0, 0.0, 1.0])),
    ("ReLU6", (), np.array([-1.0, 0.0, 3.0, 6.0, 7.0])),
    ("Hardtanh", (-0.5, 0.5), np.array([-1.0, -0.5, 0.0, 0.5, 1.0])),
    ("LeakyReLU", (0.3,), np.array([-1.0, 0.0, 1.0])),
    ("ELU", (), np.array([-1.0, 0.0, 1.0])),
    ("CELU", (0.5,), np.array([-1.0, 0.0, 1.0])),
    ("SELU", (), np.array([-1.0, 0.0, 1.0])),
    ("Threshold", (0.5, -1.0), np.array([0.0, 0.5, 1.0])),
    ("Hardshrink", (0.5,), np.array([-0.5, 0.0, 0.5, 0.7])),
    ("Softshrink", (0.5,), np.array([-0.5, 0.0, 0.5, 0.7])),
    ("Hardsigmoid", (), np.array([-4.0, -3.0, 0.0, 3.0, 4.0])),
    ("Hardswish", (), np.array([-4.0, -3.0, 0.0, 3.0, 4.0])),
    ("PReLU", (), np.array([[-1.0, 0.0, 1.0]])),
    ("Softplus", (1.0, 2.0), np.array([1.0, 2.0, 3.0])),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, args, x", KINKS, ids=[k[0] for k in KINKS])
def test_gradients_at_the_kinks_are_torch(name, args, x, dtype):
    t, e = pair_modules(_build(name, args, {}), dtype=dtype)
    compare_modules(t, e, [x.astype(dtype)])


def test_prelu_parameter_and_defaults():
    for args in [(), (5,), (2, -0.3)]:
        t, e = pair_modules(_build("PReLU", args, {}))
        assert list(e.state_dict()) == ["weight"]
        check_close(t.weight, e.weight, "default weight")
        assert e.weight.requires_grad and isinstance(e.weight, enn.Parameter)
        assert e.num_parameters == t.num_parameters and e.init == t.init
    e = enn.PReLU(3, dtype=E.float64)
    assert e.weight.dtype == E.float64
    e.weight.data.fill_(7.0)
    e.reset_parameters()
    assert e.weight.tolist() == [0.25] * 3
    # one slope per channel of dim 1 (a 1-d input has one channel): other counts are refused
    _same_error(lambda nn, lib: nn.PReLU(3)(lib.ones(2, 4)))
    _same_error(lambda nn, lib: nn.PReLU(4)(lib.ones(4)))


@pytest.mark.parametrize("lower, upper", [(1.0 / 8, 1.0 / 3), (0.3, 0.3), (0.0, 0.9)])
def test_rrelu_train_slopes(lower, upper):
    x = E.tensor(np.concatenate([-np.linspace(0.1, 3, 4000), np.linspace(0.1, 3, 1000)]),
                 requires_grad=True)
    out = enn.RReLU(lower, upper)(x)
    out.sum().backward()
    slope = (out / x).detach().numpy()
    neg, pos = slope[:4000], slope[4000:]
    assert np.all(pos == 1.0)
    assert neg.min() >= lower - 1e-12 and neg.max() <= upper + 1e-12
    if upper > lower:  # uniform on [lower, upper]: its mean and spread
        assert abs(neg.mean() - (lower + upper) / 2) < 0.02 * (upper - lower) + 1e-3
        assert abs(neg.std() - (upper - lower) / np.sqrt(12)) < 0.03 * (upper - lower)
    # the gradient is the slope each element drew
    np.testing.assert_allclose(x.grad.numpy(), slope, rtol=1e-12)


def test_rrelu_eval_is_the_mean_slope():
    x = _input((50,), "float64")
    m = enn.RReLU(0.1, 0.5).eval()
    out = m(E.tensor(x)).numpy()
    np.testing.assert_allclose(out, np.where(x >= 0, x, 0.3 * x), rtol=1e-12)


@pytest.mark.parametrize("name", ["Softmax", "Softmin", "LogSoftmax"])
@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 3, 4), (2, 3, 4, 5)])
def test_implicit_softmax_dim_warns(name, shape):
    """Once, with torch's message (which frame it names depends on the frames between:
    torch's names its module.py, Ember's the caller's line unless an override check adds
    frames)."""
    x = _input(shape, "float32")
    seen = []
    for nn, lib in ((torch.nn, torch), (enn, E)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(nn, name)()(lib.tensor(x))
        assert len(caught) == 1 and "Implicit dimension choice" in str(caught[0].message)
        seen.append((out,))
    check_close(seen[0][0], seen[1][0], "output")


def test_repr_matches_torch():
    for name, args, kwargs, _ in LAYERS + INPLACE:
        assert repr(getattr(torch.nn, name)(*args, **kwargs)) == \
            repr(getattr(enn, name)(*args, **kwargs)), name
    assert repr(torch.nn.Softmax()) == repr(enn.Softmax()) == "Softmax(dim=None)"


def test_hardtanh_deprecated_names_and_bounds():
    for nn in (torch.nn, enn):
        with pytest.warns(FutureWarning, match="min_value"):
            m = nn.Hardtanh(min_value=-3.0)
        assert m.min_val == -3.0
        with pytest.warns(FutureWarning, match="max_value"):
            m = nn.Hardtanh(max_value=3.0)
        assert m.max_val == 3.0
    _same_error(lambda nn, lib: nn.Hardtanh(1.0, 1.0))
    _same_error(lambda nn, lib: nn.Hardtanh(2.0, -1.0))


@pytest.mark.parametrize("program", [
    lambda nn, lib: nn.Softmax2d()(lib.ones(2, 3)),
    lambda nn, lib: nn.Softmax2d()(lib.ones(1, 2, 3, 4, 5)),
    lambda nn, lib: nn.GLU()(lib.ones(2, 3)),
    lambda nn, lib: nn.GLU(dim=2)(lib.ones(2, 4)),
    lambda nn, lib: nn.GLU()(lib.tensor(1.0)),
    lambda nn, lib: nn.GELU("fast")(lib.ones(2)),
    lambda nn, lib: nn.ReLU(inplace=True)(lib.ones(2, requires_grad=True)),
    lambda nn, lib: nn.Softmax(dim=3)(lib.ones(2, 3)),
    lambda nn, lib: nn.GLU()(lib.ones(2, 4, dtype=lib.int64)),
    lambda nn, lib: nn.ReLU()([1.0]),
    lambda nn, lib: nn.GELU()(lib.ones(2, dtype=lib.int64)),
], ids=["softmax2d-2d", "softmax2d-5d", "glu-odd", "glu-dim", "glu-scalar", "gelu-mode",
        "inplace-leaf", "softmax-dim", "glu-int", "relu-list", "gelu-int"])
def test_errors_match_torch(program):
    _same_error(program)


def test_modules_have_no_state():
    for name, args, kwargs, _ in LAYERS + INPLACE:
        if name != "PReLU":
            e = getattr(enn, name)(*args, **kwargs)
            assert list(e.state_dict()) == [] and list(e.parameters()) == []


def test_integer_and_empty_inputs():
    for nn, lib in ((torch.nn, torch), (enn, E)):
        assert nn.ReLU()(lib.tensor([-2, 3])).tolist() == [0, 3]
        assert nn.Sigmoid()(lib.tensor([0, 0])).tolist() == [0.5, 0.5]
        assert tuple(nn.GELU()(lib.ones(0, 3)).shape) == (0, 3)
    x = to_ember(torch.randn(2, 3).to(torch.bfloat16))
    check_close(torch.nn.SiLU()(torch.tensor(x.float().numpy()).to(torch.bfloat16)),
                enn.SiLU()(x), "bfloat16")
