"""ember.m.F.functional's activations against torch.m.F.functional: values and input
gradients in float32 and float64 on random inputs that include every kink and bound
(0, the slopes' and shrinkages' edges, softplus's threshold), the in-place forms and
autograd's refusals of them, dtypes, errors and warnings, and the random ones (rrelu,
gumbel_softmax) by their distributions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from functional_oracle import DTYPES, EMBER, TORCH, E, F, check, same_error
from values_oracle import compare_values

from ember.core.function_modes import TorchFunctionMode

# where the activations below bend, saturate or switch branches
KINKS = [-100.0, -20.0, -6.0, -3.0, -2.5, -1.0, -0.5, -0.2, 0.0, 0.2, 0.5, 1.0, 2.5, 3.0,
         5.0, 6.0, 20.0, 20.5, 100.0]


def _values(shape, dtype, seed=0):
    """Random values in [-8, 8] with the kinks in front, reshaped to ``shape``."""
    n = int(np.prod(shape))
    rng = np.random.default_rng(seed)
    values = np.concatenate([KINKS, rng.uniform(-8, 8, max(n - len(KINKS), 0))])[:n]
    return values.reshape(shape).astype(dtype)


ELEMENTWISE = {
    "relu": lambda m, x: m.F.relu(x),
    "relu6": lambda m, x: m.F.relu6(x),
    "leaky_relu": lambda m, x: m.F.leaky_relu(x),
    "leaky_relu slope": lambda m, x: m.F.leaky_relu(x, 0.2),
    "leaky_relu negative slope": lambda m, x: m.F.leaky_relu(x, -0.3),
    "elu": lambda m, x: m.F.elu(x),
    "elu alpha": lambda m, x: m.F.elu(x, 0.5),
    "elu negative alpha": lambda m, x: m.F.elu(x, -0.5),
    "selu": lambda m, x: m.F.selu(x),
    "celu": lambda m, x: m.F.celu(x),
    "celu alpha": lambda m, x: m.F.celu(x, 2.0),
    "gelu": lambda m, x: m.F.gelu(x),
    "gelu tanh": lambda m, x: m.F.gelu(x, approximate="tanh"),
    "silu": lambda m, x: m.F.silu(x),
    "mish": lambda m, x: m.F.mish(x),
    "hardswish": lambda m, x: m.F.hardswish(x),
    "hardsigmoid": lambda m, x: m.F.hardsigmoid(x),
    "hardtanh": lambda m, x: m.F.hardtanh(x),
    "hardtanh bounds": lambda m, x: m.F.hardtanh(x, -0.5, 3.0),
    "hardtanh_ crossed bounds": lambda m, x: m.F.hardtanh_(x * 1, 1.0, -1.0),
    "hardshrink": lambda m, x: m.F.hardshrink(x),
    "hardshrink lambd": lambda m, x: m.F.hardshrink(x, 1.0),
    "hardshrink negative lambd": lambda m, x: m.F.hardshrink(x, -0.5),
    "softshrink": lambda m, x: m.F.softshrink(x),
    "softshrink lambd": lambda m, x: m.F.softshrink(x, 1.0),
    "softshrink 0": lambda m, x: m.F.softshrink(x, 0.0),
    "tanhshrink": lambda m, x: m.F.tanhshrink(x),
    "threshold": lambda m, x: m.F.threshold(x, 0.5, -2.0),
    "threshold at 0": lambda m, x: m.F.threshold(x, 0.0, 0.0),
    "sigmoid": lambda m, x: m.F.sigmoid(x),
    "logsigmoid": lambda m, x: m.F.logsigmoid(x),
    "tanh": lambda m, x: m.F.tanh(x),
    "softplus": lambda m, x: m.F.softplus(x),
    "softplus beta threshold": lambda m, x: m.F.softplus(x, 2, 5),
    "softplus negative beta": lambda m, x: m.F.softplus(x, -1.5, 3),
    "softplus negative threshold": lambda m, x: m.F.softplus(x, 1, -1),
    "softsign": lambda m, x: m.F.softsign(x),
    "rrelu eval": lambda m, x: m.F.rrelu(x),
    "rrelu eval bounds": lambda m, x: m.F.rrelu(x, 0.1, 0.5),
}

IN_PLACE = {
    "relu_": lambda m, x: m.F.relu_(x),
    "relu inplace": lambda m, x: m.F.relu(x, inplace=True),
    "relu6 inplace": lambda m, x: m.F.relu6(x, inplace=True),
    "leaky_relu_": lambda m, x: m.F.leaky_relu_(x, 0.2),
    "leaky_relu inplace": lambda m, x: m.F.leaky_relu(x, 0.1, inplace=True),
    "elu_": lambda m, x: m.F.elu_(x, 0.7),
    "elu inplace": lambda m, x: m.F.elu(x, inplace=True),
    "selu_": lambda m, x: m.F.selu_(x),
    "selu inplace": lambda m, x: m.F.selu(x, inplace=True),
    "celu_": lambda m, x: m.F.celu_(x, 1.5),
    "celu inplace": lambda m, x: m.F.celu(x, 0.5, inplace=True),
    "silu inplace": lambda m, x: m.F.silu(x, inplace=True),
    "mish inplace": lambda m, x: m.F.mish(x, inplace=True),
    "hardswish inplace": lambda m, x: m.F.hardswish(x, inplace=True),
    "hardsigmoid inplace": lambda m, x: m.F.hardsigmoid(x, inplace=True),
    "hardtanh_": lambda m, x: m.F.hardtanh_(x, -2.5, 3.0),
    "hardtanh inplace": lambda m, x: m.F.hardtanh(x, inplace=True),
    "threshold_": lambda m, x: m.F.threshold_(x, 0.5, 3.0),
    "threshold inplace": lambda m, x: m.F.threshold(x, -1.0, 0.0, inplace=True),
    "rrelu_ eval": lambda m, x: m.F.rrelu_(x),
    "rrelu inplace eval": lambda m, x: m.F.rrelu(x, 0.2, 0.4, inplace=True),
}

# gelu's float32 kernel in torch takes an erf off by up to 1.5e-7 (tensor-core's note)
ATOL = {("gelu", "float32"): 3e-6}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(ELEMENTWISE) + list(IN_PLACE))
def test_values_and_gradients_match_torch(name, dtype):
    if name in IN_PLACE:
        def call(m, x):
            return IN_PLACE[name](m, x * 1)
    else:
        call = ELEMENTWISE[name]
    compare_values(call, [_values((6, 11), dtype)], atol=ATOL.get((name, dtype)))


@pytest.mark.parametrize("name", ["relu", "elu", "hardtanh", "softplus", "logsigmoid",
                                  "hardsigmoid", "hardswish", "softshrink", "threshold"])
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3)])
def test_zero_dim_and_empty_inputs(name, shape):
    compare_values(ELEMENTWISE[name], [_values(shape, "float64")])


@pytest.mark.parametrize("name", ["relu", "hardtanh", "softplus", "elu", "hardswish"])
def test_non_contiguous_input(name):
    x = _values((7, 6), "float64")
    compare_values(lambda m, t: ELEMENTWISE[name](m, t.transpose(0, 1)[::2]), [x])


def test_nan_passes_as_in_torch():
    x = np.array([np.nan, -1.0, 1.0])
    for name in ("relu", "hardtanh", "leaky_relu", "elu", "threshold", "softshrink",
                 "hardshrink", "softplus", "logsigmoid", "hardsigmoid", "hardswish"):
        compare_values(ELEMENTWISE[name], [x])


# ----------------------------------------------------------------------------- along a dim

ALONG_DIM = {
    "softmax": lambda m, x: m.F.softmax(x, 1),
    "softmax last": lambda m, x: m.F.softmax(x, -1),
    "softmax dtype": lambda m, x: m.F.softmax(x, 0, dtype=m.float64),
    "softmin": lambda m, x: m.F.softmin(x, 1),
    "softmin dtype": lambda m, x: m.F.softmin(x, 2, dtype=m.float64),
    "log_softmax": lambda m, x: m.F.log_softmax(x, 0),
    "log_softmax dtype": lambda m, x: m.F.log_softmax(x, 1, dtype=m.float64),
    "glu": lambda m, x: m.F.glu(x),
    "glu dim": lambda m, x: m.F.glu(x, 0),
    "glu negative dim": lambda m, x: m.F.glu(x, -2),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(ALONG_DIM))
def test_along_a_dim_matches_torch(name, dtype):
    compare_values(ALONG_DIM[name], [_values((4, 6, 2), dtype)])


@pytest.mark.parametrize("ndim", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("name", ["softmax", "softmin", "log_softmax"])
def test_implicit_dim_warns_and_picks_torchs_dim(name, ndim):
    x = _values((3, 2, 4, 2)[:ndim], "float64")
    with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name} has been "
                      "deprecated"):
        compare_values(lambda m, t: getattr(m.F, name)(t), [x])


# ----------------------------------------------------------------------------- prelu

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", [((5,), (1,)), ((4, 3), (3,)), ((2, 3, 4), (3,)),
                                    ((2, 3, 2, 2), (1,)), ((), (1,)), ((), ()),
                                    ((3, 2), ())], ids=str)
def test_prelu_matches_torch(shapes, dtype):
    x = _values(shapes[0], dtype)
    w = np.random.default_rng(3).uniform(-1, 1, shapes[1]).astype(dtype)
    compare_values(lambda m, a, b: m.F.prelu(a, b), [x, w])


# ----------------------------------------------------------------------------- in place

@pytest.mark.parametrize("name", list(IN_PLACE))
def test_in_place_forms_write_into_the_input_and_return_it(name):
    x = _values((3, 5), "float64")
    with torch.no_grad():
        expected = IN_PLACE[name](TORCH, torch.tensor(x))
    e = E.tensor(x)
    out = IN_PLACE[name](EMBER, e)
    assert out is e
    check(e, expected)


@pytest.mark.parametrize("name", list(IN_PLACE))
def test_in_place_forms_refuse_a_leaf_that_requires_grad(name):
    same_error(lambda m: IN_PLACE[name](m, m.tensor([-1.0, 0.5], requires_grad=True)))
    same_error(lambda m: IN_PLACE[name](m, m.tensor([-1.0, 0.5, 2.0], requires_grad=True)[:2]))


def test_in_place_bumps_the_version_and_keeps_views_in_step():
    base = E.tensor(_values((2, 4), "float64"))
    view = base[0]
    version = base._version
    F.elu_(view)
    assert base._version > version
    check(base[0], TORCH.F.elu(torch.tensor(_values((2, 4), "float64"))[0]))


@pytest.mark.parametrize("call", [lambda m, x: m.F.elu_(x * 1, -0.5),
                                  lambda m, x: m.F.celu_(x * 1, -0.5),
                                  lambda m, x: m.F.elu(x * 1, -0.2, inplace=True),
                                  lambda m, x: m.F.leaky_relu_(x * 1, -0.5),
                                  lambda m, x: m.F.leaky_relu(x * 1, -0.1, inplace=True)])
def test_in_place_negative_slope_refuses_in_backward(call):
    """torch differentiates its in-place elu and leaky_relu from the result, and refuses
    a negative slope when backward reaches them: the forward runs."""
    def run(m):
        x = m.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        out = call(m, x)
        out.sum().backward()

    same_error(run)
    with torch.no_grad():
        expected = call(TORCH, torch.tensor([-1.0, 0.0, 2.0]))
    check(call(EMBER, E.tensor([-1.0, 0.0, 2.0])), expected)


# ----------------------------------------------------------------------------- dtypes

DTYPE_CASES = {
    "relu": lambda m, x: m.F.relu(x), "relu6": lambda m, x: m.F.relu6(x),
    "relu6 inplace": lambda m, x: m.F.relu6(x.clone(), inplace=True),
    "hardtanh": lambda m, x: m.F.hardtanh(x, -1.5, 2.5),
    "hardtanh_": lambda m, x: m.F.hardtanh_(x.clone()),
    "threshold": lambda m, x: m.F.threshold(x, 0.5, 2.5),
    "threshold_": lambda m, x: m.F.threshold_(x.clone(), 1, 7),
    "leaky_relu": lambda m, x: m.F.leaky_relu(x), "elu": lambda m, x: m.F.elu(x),
    "selu": lambda m, x: m.F.selu(x), "celu": lambda m, x: m.F.celu(x),
    "mish": lambda m, x: m.F.mish(x), "hardswish": lambda m, x: m.F.hardswish(x),
    "hardsigmoid": lambda m, x: m.F.hardsigmoid(x), "hardshrink": lambda m, x: m.F.hardshrink(x),
    "softshrink": lambda m, x: m.F.softshrink(x), "tanhshrink": lambda m, x: m.F.tanhshrink(x),
    "sigmoid": lambda m, x: m.F.sigmoid(x), "logsigmoid": lambda m, x: m.F.logsigmoid(x),
    "tanh": lambda m, x: m.F.tanh(x), "softplus": lambda m, x: m.F.softplus(x),
    "softsign": lambda m, x: m.F.softsign(x), "softmax": lambda m, x: m.F.softmax(x, 0),
    "log_softmax": lambda m, x: m.F.log_softmax(x, 0), "glu": lambda m, x: m.F.glu(x),
    "rrelu": lambda m, x: m.F.rrelu(x), "rrelu training": lambda m, x: m.F.rrelu(x, training=True),
    "prelu": lambda m, x: m.F.prelu(x, m.tensor([0.25]).to(x.dtype)),
}


@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool", "float16", "bfloat16"])
@pytest.mark.parametrize("name", list(DTYPE_CASES))
def test_other_dtypes_as_torch(name, dtype):
    """Integer and bool inputs give torch's result or torch's error; half types keep
    their dtype. Half-type values are compared at the dtype's resolution: the composites
    round after each step where torch's kernels compute in float32 and round once."""
    def run(m):
        return DTYPE_CASES[name](m, m.tensor([-2, 0, 1, 3]).to(getattr(m, dtype)))

    try:
        expected = run(TORCH)
    except Exception:
        # tensor-core's softmax names its general kernel where torch names the last-dim one
        same_error(run, exact=name not in ("softmax", "log_softmax"))
        return
    if name == "rrelu training":
        assert run(EMBER).dtype is getattr(E, dtype)
        return
    check(run(EMBER), expected, rtol=1e-2 if dtype in ("float16", "bfloat16") else None,
          atol=1e-2 if dtype in ("float16", "bfloat16") else None)


# ----------------------------------------------------------------------------- errors

ERRORS = {
    "relu of a list": (lambda m: m.F.relu([1.0]), True),
    "relu_ of a list": (lambda m: m.F.relu_([1.0]), True),
    "relu6 of a list": (lambda m: m.F.relu6([1.0]), True),
    "elu of a list": (lambda m: m.F.elu([1.0]), True),
    "softplus of a list": (lambda m: m.F.softplus([1.0]), False),
    "tanhshrink of a list": (lambda m: m.F.tanhshrink([1.0]), True),
    "softmax of a list": (lambda m: m.F.softmax([1.0], 0), True),
    "softshrink negative lambd": (lambda m: m.F.softshrink(m.ones(2), -0.5), True),
    "softshrink negative lambd float64": (
        lambda m: m.F.softshrink(m.ones(2, dtype=m.float64), -1.0), True),
    "celu alpha 0": (lambda m: m.F.celu(m.ones(2), 0.0), True),
    "celu_ alpha 0": (lambda m: m.F.celu_(m.ones(2), 0.0), True),
    "rrelu lower above upper": (lambda m: m.F.rrelu(m.ones(2), 0.5, 0.1), True),
    "rrelu training lower above upper": (
        lambda m: m.F.rrelu(m.ones(2), 0.5, 0.1, training=True), True),
    "hardtanh min above max": (lambda m: m.F.hardtanh(m.ones(2), 2.0, 1.0), True),
    "hardtanh uint8 negative bound": (
        lambda m: m.F.hardtanh(m.ones(2, dtype=m.uint8)), True),
    "glu 0-d": (lambda m: m.F.glu(m.tensor(1.0)), True),
    "glu odd": (lambda m: m.F.glu(m.ones(3, 3)), True),
    "glu dim out of range": (lambda m: m.F.glu(m.ones(2, 2), 2), True),
    "prelu 0-d input": (lambda m: m.F.prelu(m.tensor(1.0), m.ones(2)), True),
    "prelu channels": (lambda m: m.F.prelu(m.ones(2, 3), m.ones(2)), True),
    "prelu 1-d channels": (lambda m: m.F.prelu(m.ones(3), m.ones(3)), True),
    "prelu 2-d weight": (lambda m: m.F.prelu(m.ones(2, 1), m.ones(1, 1)), True),
    "prelu dtypes": (lambda m: m.F.prelu(m.ones(2), m.ones(1, dtype=m.float64)), True),
    "prelu weight not a tensor": (lambda m: m.F.prelu(m.ones(3), 0.2), True),
    # tensor-core's softmax names itself in its IndexError, torch's does not
    "softmax dim": (lambda m: m.F.softmax(m.ones(3), 1), False),
    "log_softmax dim": (lambda m: m.F.log_softmax(m.ones(3, 2), -3), False),
    "gelu approximate": (lambda m: m.F.gelu(m.ones(2), approximate="x"), True),
    "gelu positional approximate": (lambda m: m.F.gelu(m.ones(2), "tanh"), False),
    "gumbel_softmax integer": (lambda m: m.F.gumbel_softmax(m.ones(3, dtype=m.int64)),
                               False),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_torch(name):
    program, exact = ERRORS[name]
    same_error(program, exact)


# ----------------------------------------------------------------------------- random ones

def test_rrelu_training_draws_slopes_in_the_bounds():
    x = E.tensor(_values((200, 50), "float64"), requires_grad=True)
    E.manual_seed(7)
    out = F.rrelu(x, 0.1, 0.3, training=True)
    E.manual_seed(7)
    again = F.rrelu(x, 0.1, 0.3, training=True)
    check(again, torch.tensor(np.array(out.detach())))
    xs, ys = np.array(x.detach()), np.array(out.detach())
    negative = xs < 0
    slopes = ys[negative] / xs[negative]
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.005 and slopes.std() > 0.05
    np.testing.assert_array_equal(ys[xs > 0], xs[xs > 0])
    out.backward(E.ones_like(out))
    grad = np.array(x.grad)
    np.testing.assert_allclose(grad[negative], slopes)
    np.testing.assert_array_equal(grad[xs > 0], 1.0)


def test_rrelu_training_in_place():
    x = E.tensor(_values((30, 10), "float32"))
    before = np.array(x)
    out = F.rrelu(x, 0.2, 0.25, training=True, inplace=True)
    assert out is x
    ratio = np.array(x)[before < 0] / before[before < 0]
    assert ratio.min() >= 0.2 - 1e-6 and ratio.max() <= 0.25 + 1e-6


def test_gumbel_softmax_samples_the_softmax():
    """The argmax of ``logits + Gumbel noise`` is distributed as ``softmax(logits)``."""
    probs = np.array([0.5, 0.3, 0.15, 0.05])
    logits = E.tensor(np.log(np.tile(probs, (6000, 1))))
    E.manual_seed(3)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(np.array(soft.sum(-1)), 1.0, rtol=1e-6)
    counts = np.bincount(np.array(soft.argmax(-1)), minlength=4) / 6000
    np.testing.assert_allclose(counts, probs, atol=4 * np.sqrt(0.25 / 6000))


def test_gumbel_softmax_hard_is_one_hot_with_the_soft_gradient():
    values = np.random.default_rng(0).standard_normal((5, 3, 4))
    samples, grads = [], []
    for hard in (False, True):
        logits = E.tensor(values, requires_grad=True)
        E.manual_seed(11)
        out = F.gumbel_softmax(logits, tau=2.0, hard=hard, dim=1)
        out.backward(E.tensor(np.arange(60.0).reshape(5, 3, 4)))
        samples.append(np.array(out.detach()))
        grads.append(np.array(logits.grad))
    soft, hard = samples
    assert set(np.unique(hard)) <= {0.0, 1.0}
    np.testing.assert_array_equal(hard.sum(1), 1.0)
    np.testing.assert_array_equal(hard.argmax(1), soft.argmax(1))
    np.testing.assert_allclose(grads[1], grads[0])


def test_gumbel_softmax_eps_is_deprecated():
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated and has no effect."):
        F.gumbel_softmax(E.ones(2, 3), eps=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        F.gumbel_softmax(E.ones(2, 3))


# ----------------------------------------------------------------------------- overrides

def test_torch_function_modes_see_the_functional_calls():
    seen = []

    class Recording(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    x = E.ones(2, 3)
    with Recording():
        F.hardtanh(x, -0.5, 0.5)
        F.softmax(x, dim=1)
        F.relu(x, inplace=True)
    assert seen[0] == "hardtanh" and "softmax" in seen and "relu" in seen
