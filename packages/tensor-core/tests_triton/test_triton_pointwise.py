"""The elementwise kernels (gelu exact and tanh, silu, silu_, sigmoid, sigmoid_, their
backwards and tanh's, dropout and its backward) against their ops' reference forwards and
torch: sizes of 1, 3, 1000 and 4097 elements (several blocks, the last one partial),
transposed (dense, kept as it is) and strided (copied) inputs, empty inputs, every
dtype."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from triton_oracle import DTYPES, LAYOUTS, check_kernel, host, make

import ember.core as ember
from ember.core.dispatch import REGISTRY
from ember.core.random import seeded_state

aten = torch.ops.aten
SIZES = [(1,), (3,), (1000,), (4097,)]
FUNCTIONS = {
    "gelu": ({"approximate": "none"}, lambda x: aten.gelu(x),
             lambda g, x: aten.gelu_backward(g, x)),
    "gelu_tanh": ({"approximate": "tanh"}, lambda x: aten.gelu(x, approximate="tanh"),
                  lambda g, x: aten.gelu_backward(g, x, approximate="tanh")),
    "silu": ({}, aten.silu, aten.silu_backward),
}


def _both(xp, function, x, dtype):
    """The forward, then the backward with a gradient laid out as the input."""
    params, forward, backward = FUNCTIONS[function]
    name = function.removesuffix("_tanh")
    check_kernel(name, [x], params, dtype, forward)
    g = xp.empty_like(x)
    g[...] = make(xp, x.shape, dtype, seed=5)
    check_kernel(f"{name}_backward", [g, x], params, dtype, backward)


@pytest.mark.parametrize("function", list(FUNCTIONS))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SIZES)
def test_activation(xp, function, dtype, shape):
    _both(xp, function, make(xp, shape, dtype, low=-8.0, high=8.0), dtype)


@pytest.mark.parametrize("function", list(FUNCTIONS))
@pytest.mark.parametrize("layout", LAYOUTS[1:])
def test_activation_non_contiguous(xp, function, layout):
    _both(xp, function, make(xp, (30, 40), "float32", layout=layout), "float32")


@pytest.mark.parametrize("function", list(FUNCTIONS))
@pytest.mark.parametrize("shape", [(0,), (3, 0)])
def test_activation_empty(xp, function, shape):
    _both(xp, function, make(xp, shape, "float32"), "float32")


def test_activation_specials(xp):
    """In float64: torch's float32 gelu gives NaN at +inf, where its float64 kernel and the
    reference give inf."""
    x = xp.asarray(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, 30.0, -30.0]))
    for function in FUNCTIONS:
        _both(xp, function, x, "float64")


@pytest.mark.parametrize("name", ["silu", "sigmoid"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_in_place(xp, name, dtype, layout):
    x = make(xp, (20, 50), dtype, layout=layout)
    expected = REGISTRY[name].forward(host(x))
    out = REGISTRY[f"{name}_"].kernels["cuda"](x)
    assert out is x
    np.testing.assert_allclose(host(x).astype(np.float64), expected.astype(np.float64),
                               rtol=1e-3 if dtype == "float16" else 1e-6, atol=1e-6)


def _from_output(xp, name, x, dtype):
    """The forward (sigmoid's kernel, tanh's reference), then the backward at its output,
    with a gradient laid out as that. float16 sigmoid's backward rounds each step to
    float16, as torch's CPU kernel does on float16 operands, which it is given."""
    if name == "sigmoid":
        y = check_kernel("sigmoid", [x], {}, dtype, torch.sigmoid)
    else:
        y = REGISTRY["tanh"].forward(x)
    g = xp.empty_like(y)
    g[...] = make(xp, x.shape, dtype, seed=5)
    backward = getattr(aten, f"{name}_backward")
    oracle = (lambda gt, yt: backward(gt.half(), yt.half())) \
        if name == "sigmoid" and dtype == "float16" else backward
    check_kernel(f"{name}_backward", [g, y], {}, dtype, oracle)


@pytest.mark.parametrize("name", ["sigmoid", "tanh"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SIZES)
def test_sigmoid_and_backwards_from_output(xp, name, dtype, shape):
    _from_output(xp, name, make(xp, shape, dtype, low=-8.0, high=8.0), dtype)


@pytest.mark.parametrize("name", ["sigmoid", "tanh"])
@pytest.mark.parametrize("layout", LAYOUTS[1:])
def test_sigmoid_and_backwards_from_output_non_contiguous(xp, name, layout):
    _from_output(xp, name, make(xp, (30, 40), "float32", layout=layout), "float32")


@pytest.mark.parametrize("name", ["sigmoid", "tanh"])
@pytest.mark.parametrize("shape", [(0,), (3, 0)])
def test_sigmoid_and_backwards_from_output_empty(xp, name, shape):
    _from_output(xp, name, make(xp, shape, "float32"), "float32")


def test_sigmoid_and_backwards_from_output_specials(xp):
    """exp(-x) overflowing to inf gives 0."""
    x = xp.asarray(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, 30.0, -30.0, 800.0,
                             -800.0]))
    for name in ("sigmoid", "tanh"):
        _from_output(xp, name, x, "float64")


def test_half_sigmoid_backward_rounds_each_step(xp):
    """Bit for bit the reference's, where rounding once to float16 differs."""
    y = xp.asarray(np.linspace(0.0, 1.0, 4097).astype(np.float16))
    g = make(xp, y.shape, "float16", seed=5)
    got = host(REGISTRY["sigmoid_backward"].kernels["cuda"](g, y))
    np.testing.assert_array_equal(got, REGISTRY["sigmoid_backward"].forward(host(g), host(y)))
    g32, y32 = (host(a).astype(np.float32) for a in (g, y))
    assert (got != (g32 * (1 - y32) * y32).astype(np.float16)).any()


def test_backwards_from_output_take_what_the_kernels_do_not_to_the_reference(xp):
    """An output of another layout than the gradient's, or broadcasting."""
    g = make(xp, (30, 40), "float32")
    for y in (make(xp, (30, 40), "float32", layout="transposed"), make(xp, (40,), "float32")):
        for name in ("sigmoid_backward", "tanh_backward"):
            check_kernel(name, [g, y], {}, "float32", getattr(aten, name))


def _dropout(xp, x, p, dtype):
    """The op's outputs on fresh state; its values against torch's for the same mask."""
    state = seeded_state(11)._data
    out, mask, _ = check_kernel("native_dropout", [state, x], {"p": p, "device": ember.device(
        "cuda")}, dtype, lambda s, xt: (aten.native_dropout_backward(
            xt, torch.from_numpy(host(mask_of(x, p))), 1 / (1 - p) if p < 1 else 0.0), None))
    return out, mask


def mask_of(x, p):
    """The reference's mask for ``x`` on the state ``_dropout`` uses."""
    return REGISTRY["native_dropout"].forward(seeded_state(11)._data, x, p=p,
                                              device=ember.device("cuda"))[1]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SIZES)
@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_dropout(xp, dtype, shape, p):
    x = make(xp, shape, dtype)
    _, mask = _dropout(xp, x, p, dtype)
    g = make(xp, shape, dtype, seed=3)
    scale = 1 / (1 - p) if p < 1 else 0.0
    check_kernel("native_dropout_backward", [g, mask], {"scale": scale}, dtype,
                 lambda gt, mt: aten.native_dropout_backward(gt, mt, scale))


@pytest.mark.parametrize("layout", LAYOUTS[1:])
def test_dropout_non_contiguous(xp, layout):
    x = make(xp, (30, 40), "float32", layout=layout)
    _, mask = _dropout(xp, x, 0.5, "float32")
    check_kernel("native_dropout_backward", [x, mask], {"scale": 2.0}, "float32",
                 lambda gt, mt: aten.native_dropout_backward(gt, mt, 2.0))


def test_dropout_empty(xp):
    _dropout(xp, make(xp, (0, 3), "float32"), 0.5, "float32")


BINARY = {"add": torch.add, "mul": torch.mul}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SIZES)
def test_exp_add_mul(xp, dtype, shape):
    x, y = make(xp, shape, dtype), make(xp, shape, dtype, seed=1)
    check_kernel("exp", [x], {}, dtype, torch.exp)
    for name, fn in BINARY.items():
        check_kernel(name, [x, y], {}, dtype, fn)


@pytest.mark.parametrize("layout", LAYOUTS[1:])
def test_exp_add_mul_non_contiguous(xp, layout):
    x, y = (make(xp, (30, 40), "float32", seed=s, layout=layout) for s in (0, 1))
    check_kernel("exp", [x], {}, "float32", torch.exp)
    for name, fn in BINARY.items():
        check_kernel(name, [x, y], {}, "float32", fn)


def test_add_mul_take_what_the_kernel_does_not_to_the_reference(xp):
    """Operands of two layouts, broadcasting, a number, integers, empty arrays."""
    x = make(xp, (30, 40), "float32")
    cases = [[x, make(xp, (30, 40), "float32", layout="transposed")],
             [x, make(xp, (40,), "float32")], [x, 2.5],
             [xp.arange(6).reshape(2, 3), xp.arange(6).reshape(2, 3)],
             [make(xp, (0, 3), "float32"), make(xp, (0, 3), "float32")]]
    for operands in cases:
        for name, fn in BINARY.items():
            check_kernel(name, operands, {}, "float32", fn)
