"""The convolution layers against torch.nn's: the same weights give the same outputs,
input and parameter gradients and ``repr`` (float32 and float64) over strides, paddings
(ints, tuples, 'same' with even kernels, 'valid'), dilations, groups, padding modes, no
bias and unbatched inputs; transposed ones with output_padding and output_size; the
default initialisation's bounds; torch's exception types; and the Lazy forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from nn_oracle import compare_modules, pair_modules

import ember.core as E
import ember.nn as enn

DTYPES = ["float32", "float64"]


def _input(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _same_error(program):
    """``program(nn, lib)`` raises under torch; under Ember it raises the same type."""
    with pytest.raises(Exception) as expected:
        program(torch.nn, torch)
    with pytest.raises(Exception) as got:
        program(enn, E)
    assert type(got.value) is type(expected.value), (expected.value, got.value)


CONVS = [
    # (layer, constructor args, constructor kwargs, input shape)
    ("Conv1d", (3, 4, 3), {}, (2, 3, 9)),
    ("Conv1d", (4, 6, 4), {"stride": 2, "padding": 3, "dilation": 2, "groups": 2}, (2, 4, 11)),
    ("Conv1d", (3, 2, 4), {"padding": "same", "dilation": 3}, (2, 3, 10)),
    ("Conv1d", (3, 2, 3), {"padding": "valid", "bias": False}, (3, 7)),
    ("Conv1d", (2, 3, 3), {"padding": 2, "padding_mode": "reflect"}, (2, 2, 6)),
    ("Conv1d", (2, 3, 4), {"padding": "same", "padding_mode": "circular"}, (2, 2, 7)),
    ("Conv2d", (3, 4, 3), {}, (2, 3, 6, 7)),
    ("Conv2d", (3, 4, (2, 3)), {"stride": (2, 1), "padding": (1, 2)}, (2, 3, 7, 6)),
    ("Conv2d", (2, 3, (2, 4)), {"padding": "same"}, (1, 2, 5, 6)),
    ("Conv2d", (2, 3, 2), {"padding": "same", "dilation": (1, 2)}, (1, 2, 5, 6)),
    ("Conv2d", (4, 8, 3), {"groups": 4, "dilation": 2, "padding": 1}, (2, 4, 7, 7)),
    ("Conv2d", (6, 4, 3), {"groups": 2, "stride": 2, "bias": False}, (1, 6, 8, 9)),
    ("Conv2d", (3, 4, 3), {"padding": 1}, (3, 5, 6)),
    ("Conv2d", (2, 3, 3), {"padding": (1, 2), "padding_mode": "reflect"}, (2, 2, 5, 6)),
    ("Conv2d", (2, 3, 3), {"padding": 2, "padding_mode": "replicate", "stride": 2},
     (2, 2, 5, 6)),
    ("Conv2d", (2, 3, 3), {"padding": 1, "padding_mode": "circular", "groups": 1},
     (2, 2, 4, 5)),
    ("Conv2d", (2, 4, 4), {"padding": "same", "padding_mode": "reflect", "groups": 2},
     (2, 2, 6, 6)),
    ("Conv2d", (2, 3, 3), {"padding": 1, "padding_mode": "replicate"}, (2, 5, 5)),
    ("Conv3d", (2, 3, 3), {}, (2, 2, 4, 5, 5)),
    ("Conv3d", (2, 4, (2, 3, 1)), {"stride": (1, 2, 1), "padding": (1, 0, 2), "groups": 2},
     (1, 2, 4, 5, 3)),
    ("Conv3d", (2, 3, 2), {"padding": "same", "dilation": 2}, (1, 2, 4, 5, 4)),
    ("Conv3d", (2, 2, 3), {"padding": 1, "padding_mode": "circular", "bias": False},
     (2, 3, 4, 4)),
    ("Conv3d", (2, 2, 3), {"padding": (1, 0, 1), "padding_mode": "reflect"}, (1, 2, 3, 4, 4)),
]


# (torch warns that an even kernel's 'same' padding copies the input; so does Ember's pad)
@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, args, kwargs, shape", CONVS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CONVS)])
def test_convolution_matches_torch(name, args, kwargs, shape, dtype):
    t, e = pair_modules(lambda nn: getattr(nn, name)(*args, **kwargs), dtype=dtype)
    compare_modules(t, e, [_input(shape, dtype)])


TRANSPOSED = [
    # (layer, constructor args, constructor kwargs, input shape, forward output_size)
    ("ConvTranspose1d", (3, 4, 3), {}, (2, 3, 5), None),
    ("ConvTranspose1d", (4, 6, 3), {"stride": 3, "padding": 1, "output_padding": 2,
                                    "groups": 2, "dilation": 2}, (2, 4, 5), None),
    ("ConvTranspose1d", (3, 2, 3), {"stride": 2, "bias": False}, (3, 4), [10]),
    ("ConvTranspose1d", (3, 2, 3), {"stride": 3, "padding": 1}, (2, 3, 4), [2, 2, 12]),
    ("ConvTranspose2d", (3, 4, 3), {}, (2, 3, 4, 5), None),
    ("ConvTranspose2d", (3, 4, (2, 3)), {"stride": (2, 3), "padding": (1, 0),
                                         "output_padding": (1, 2)}, (2, 3, 4, 3), None),
    ("ConvTranspose2d", (4, 6, 3), {"groups": 2, "dilation": (2, 1), "bias": False},
     (1, 4, 3, 4), None),
    ("ConvTranspose2d", (3, 2, 3), {"stride": 2, "padding": 1}, (2, 3, 4, 4), (8, 7)),
    ("ConvTranspose2d", (3, 2, 3), {"stride": 2}, (3, 3, 4), [2, 8, 10]),
    ("ConvTranspose3d", (2, 3, 3), {}, (1, 2, 3, 3, 4), None),
    ("ConvTranspose3d", (2, 4, (2, 3, 2)), {"stride": (2, 1, 2), "padding": (0, 1, 1),
                                            "output_padding": (1, 0, 1), "groups": 2},
     (2, 2, 3, 3, 3), None),
    ("ConvTranspose3d", (2, 2, 2), {"stride": 2, "dilation": 2}, (2, 2, 2, 3), [6, 5, 8]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, args, kwargs, shape, output_size", TRANSPOSED,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(TRANSPOSED)])
def test_transposed_convolution_matches_torch(name, args, kwargs, shape, output_size, dtype):
    t, e = pair_modules(lambda nn: getattr(nn, name)(*args, **kwargs), dtype=dtype)
    compare_modules(t, e, [_input(shape, dtype)],
                    kwargs=None if output_size is None else {"output_size": output_size})


def test_conv_forward_takes_other_weights():
    # (what weight standardisation and other reparametrisations call)
    t, e = pair_modules(lambda nn: nn.Conv2d(2, 3, 3, padding=1, padding_mode="circular"))
    x = _input((1, 2, 4, 4), "float32")
    w = _input((3, 2, 3, 3), "float32", seed=1)
    want = t._conv_forward(torch.tensor(x), torch.tensor(w), None)
    got = e._conv_forward(E.tensor(x), E.tensor(w), None)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name, args, fan_in", [
    ("Conv1d", (8, 32, 5), 8 * 5),
    ("Conv2d", (12, 64, 3, 1, 0, 1, 4), 3 * 9),
    ("Conv3d", (4, 16, (2, 3, 3)), 4 * 18),
    ("ConvTranspose2d", (48, 12, 3, 1, 0, 0, 3), 4 * 9),
    ("ConvTranspose3d", (32, 6, 2), 6 * 8),
])
def test_default_initialisation_is_torchs(name, args, fan_in):
    layer = getattr(enn, name)(*args)
    bound = 1 / math.sqrt(fan_in)
    w = layer.weight.detach().numpy()
    b = layer.bias.detach().numpy()
    assert tuple(layer.weight.shape) == tuple(getattr(torch.nn, name)(*args).weight.shape)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.06 * bound / math.sqrt(3)
    assert abs(w.mean()) < 0.1 * bound
    assert np.abs(b).max() <= bound and len(np.unique(b)) == b.size
    assert layer.weight.requires_grad and layer.bias.requires_grad


def test_factory_kwargs_give_dtype():
    layer = enn.Conv2d(2, 3, 3, dtype=E.float64)
    assert layer.weight.dtype is E.float64 and layer.bias.dtype is E.float64


def test_reset_parameters_redraws():
    layer = enn.ConvTranspose1d(4, 4, 3)
    before = layer.weight.detach().numpy().copy()
    layer.reset_parameters()
    assert not np.array_equal(before, layer.weight.detach().numpy())


@pytest.mark.parametrize("build", [
    lambda nn: nn.Conv2d(4, 4, 3, groups=0),
    lambda nn: nn.Conv2d(3, 4, 3, groups=2),
    lambda nn: nn.Conv2d(4, 3, 3, groups=2),
    lambda nn: nn.Conv1d(2, 2, 3, padding="full"),
    lambda nn: nn.Conv2d(2, 2, 3, stride=2, padding="same"),
    lambda nn: nn.Conv3d(2, 2, 3, padding_mode="mirror"),
    lambda nn: nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect"),
    lambda nn: nn.ConvTranspose1d(4, 3, 3, groups=2),
    lambda nn: nn.LazyConv2d(4, 3, groups=0),
    lambda nn: nn.LazyConv1d(4, 3, padding="same", stride=2),
    lambda nn: nn.LazyConvTranspose3d(4, 3, padding_mode="circular"),
], ids=["groups0", "in%groups", "out%groups", "padding-string", "same-strided",
        "padding-mode", "transposed-mode", "transposed-groups", "lazy-groups0", "lazy-same",
        "lazy-transposed-mode"])
def test_constructor_errors_match_torch(build):
    _same_error(lambda nn, lib: build(nn))


@pytest.mark.parametrize("build, shape, kwargs", [
    (lambda nn: nn.Conv2d(3, 4, 3), (3, 5), {}),
    (lambda nn: nn.Conv2d(3, 4, 3), (1, 2, 3, 5, 5), {}),
    (lambda nn: nn.Conv2d(3, 4, 3), (1, 2, 5, 5), {}),
    (lambda nn: nn.Conv1d(3, 4, 5), (1, 3, 4), {}),
    (lambda nn: nn.Conv1d(2, 2, 3, padding=3, padding_mode="reflect"), (1, 2, 3), {}),
    (lambda nn: nn.Conv3d(2, 2, 2, groups=2), (1, 3, 3, 3, 3), {}),
    (lambda nn: nn.ConvTranspose2d(3, 4, 3), (1, 2, 4, 4), {}),
    (lambda nn: nn.ConvTranspose1d(3, 4, 3), (3,), {}),
    (lambda nn: nn.ConvTranspose2d(3, 4, 3, stride=2), (1, 3, 4, 4), {"output_size": [9]}),
    (lambda nn: nn.ConvTranspose2d(3, 4, 3, stride=2), (1, 3, 4, 4),
     {"output_size": [12, 9]}),
    (lambda nn: nn.ConvTranspose1d(3, 4, 3, stride=2), (3, 4), {"output_size": [8]}),
    (lambda nn: nn.LazyConv2d(4, 3), (3, 5), {}),
    (lambda nn: nn.LazyConv1d(4, 3, groups=2), (1, 3, 5), {}),
    (lambda nn: nn.LazyConvTranspose2d(4, 3), (1, 2, 3, 4, 4), {}),
], ids=["conv2d-2d-input", "conv2d-5d-input", "channels", "kernel-too-big",
        "reflect-too-wide", "grouped-channels", "transposed-channels", "transposed-1d-input",
        "output-size-length", "output-size-range", "output-size-unbatched",
        "lazy-2d-input", "lazy-groups", "lazy-transposed-5d"])
def test_forward_errors_match_torch(build, shape, kwargs):
    x = _input(shape, "float32")
    _same_error(lambda nn, lib: build(nn)(lib.tensor(x), **kwargs))


LAZY = [
    ("LazyConv1d", (4, 3), {"padding": 1}, (2, 3, 6), "Conv1d"),
    ("LazyConv2d", (6, 3), {"groups": 3, "padding": "same", "padding_mode": "reflect"},
     (2, 3, 5, 5), "Conv2d"),
    ("LazyConv2d", (4, 2), {"bias": False, "stride": 2}, (3, 5, 5), "Conv2d"),
    ("LazyConv3d", (2, 2), {"dilation": 2}, (1, 2, 4, 4, 4), "Conv3d"),
    ("LazyConvTranspose1d", (4, 3), {"stride": 2, "output_padding": 1}, (2, 3, 4),
     "ConvTranspose1d"),
    ("LazyConvTranspose2d", (4, 3), {"groups": 2, "bias": False}, (2, 4, 3, 3),
     "ConvTranspose2d"),
    ("LazyConvTranspose3d", (2, 2), {"stride": 2}, (3, 2, 2, 2), "ConvTranspose3d"),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, args, kwargs, shape, becomes", LAZY,
                         ids=[c[0] + str(i) for i, c in enumerate(LAZY)])
def test_lazy_convolution_infers_in_channels(name, args, kwargs, shape, becomes, dtype):
    x = _input(shape, dtype)

    def build(nn):
        lib = torch if nn is torch.nn else E
        layer = getattr(nn, name)(*args, **kwargs, dtype=getattr(lib, dtype))
        assert layer.has_uninitialized_params()
        layer(lib.tensor(x))
        return layer

    t, e = pair_modules(build)
    assert type(e) is getattr(enn, becomes)
    assert e.in_channels == t.in_channels
    assert e.weight.dtype is getattr(E, dtype)
    compare_modules(t, e, [x])


@pytest.mark.parametrize("name, args, kwargs", [(c[0], c[1], c[2]) for c in LAZY])
def test_lazy_convolution_before_its_first_input_is_torchs(name, args, kwargs):
    t, e = getattr(torch.nn, name)(*args, **kwargs), getattr(enn, name)(*args, **kwargs)
    assert repr(e) == repr(t)
    assert list(e.state_dict()) == list(t.state_dict())
    assert type(e.weight) is enn.UninitializedParameter


def test_lazy_convolution_takes_its_shapes_from_a_state_dict():
    source = torch.nn.Conv2d(3, 4, 3, bias=True)
    t = torch.nn.LazyConv2d(4, 3)
    e = enn.LazyConv2d(4, 3)
    t.load_state_dict(source.state_dict())
    e.load_state_dict({k: E.tensor(v.numpy()) for k, v in source.state_dict().items()})
    assert tuple(e.weight.shape) == tuple(t.weight.shape) == (4, 3, 3, 3)
    compare_modules(t, e, [_input((1, 3, 5, 5), "float32")])


def test_lazy_convolution_initialises_as_torch():
    layer = enn.LazyConvTranspose2d(32, 3, groups=2)
    layer(E.tensor(_input((1, 16, 2, 2), "float32")))
    bound = 1 / math.sqrt(16 * 9)
    w = layer.weight.detach().numpy()
    assert w.shape == (16, 16, 3, 3)
    assert 0.95 * bound < np.abs(w).max() <= bound
    assert np.abs(layer.bias.detach().numpy()).max() <= bound
