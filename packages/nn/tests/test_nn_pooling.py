"""The pooling layers against torch.nn's: outputs, indices, input gradients and ``repr``
(float32 and float64) of max pooling (strides, paddings, dilations, ceil_mode,
return_indices), its inverse MaxUnpool (with output_size), average pooling
(count_include_pad, divisor_override), LPPool and adaptive pooling, over 1 to 3 dims and
unbatched inputs; and torch's exception types for bad arguments and inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from nn_oracle import check_close, compare_modules, pair_modules

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


POOLS = [
    # (layer, constructor args, constructor kwargs, input shape)
    ("MaxPool1d", (3,), {}, (2, 3, 10)),
    ("MaxPool1d", (3, 2, 1), {"dilation": 2, "ceil_mode": True, "return_indices": True},
     (2, 2, 11)),
    ("MaxPool1d", (2,), {"return_indices": True}, (3, 7)),
    ("MaxPool2d", (2,), {}, (2, 3, 6, 7)),
    ("MaxPool2d", ((3, 2), (2, 1), (1, 0)), {"return_indices": True}, (2, 2, 7, 5)),
    ("MaxPool2d", (3, 2), {"padding": 1, "dilation": (1, 2), "ceil_mode": True},
     (1, 2, 8, 9)),
    ("MaxPool2d", (2,), {"ceil_mode": True, "return_indices": True}, (3, 5, 5)),
    ("MaxPool3d", (2,), {}, (1, 2, 4, 5, 6)),
    ("MaxPool3d", (3, 2, 1), {"ceil_mode": True, "return_indices": True}, (2, 5, 4, 6)),
    ("MaxPool3d", ((2, 1, 2),), {"dilation": (1, 2, 1), "return_indices": True},
     (1, 1, 4, 5, 4)),
    ("AvgPool1d", (3,), {}, (2, 3, 10)),
    ("AvgPool1d", (3, 2, 1), {"ceil_mode": True, "count_include_pad": False}, (2, 7)),
    ("AvgPool2d", (2,), {}, (2, 3, 6, 7)),
    ("AvgPool2d", ((3, 2), (2, 1), (1, 1)), {"ceil_mode": True}, (2, 2, 6, 5)),
    ("AvgPool2d", (3, 2, 1), {"count_include_pad": False, "divisor_override": 4},
     (3, 7, 6)),
    ("AvgPool3d", (2,), {}, (1, 2, 4, 5, 6)),
    ("AvgPool3d", (3, 2, 1), {"ceil_mode": True, "count_include_pad": False},
     (2, 5, 4, 6)),
    ("AvgPool3d", ((2, 1, 2),), {"divisor_override": 3}, (1, 1, 4, 5, 4)),
    ("LPPool1d", (2, 3), {}, (2, 3, 10)),
    ("LPPool1d", (3, 2, 1), {"ceil_mode": True}, (2, 2, 9)),
    ("LPPool2d", (2, 2), {}, (2, 3, 6, 7)),
    ("LPPool2d", (3, (3, 2), (2, 1)), {"ceil_mode": True}, (3, 7, 6)),
    ("LPPool3d", (2, 2), {}, (1, 2, 4, 4, 6)),
    ("LPPool3d", (2, (2, 1, 2), 1), {}, (2, 3, 4, 3)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 10)),
    ("AdaptiveAvgPool1d", (3,), {}, (3, 7)),
    ("AdaptiveAvgPool2d", ((3, 4),), {}, (2, 3, 7, 9)),
    ("AdaptiveAvgPool2d", ((None, 2),), {}, (2, 5, 7)),
    ("AdaptiveAvgPool2d", (1,), {}, (2, 4, 5, 5)),
    ("AdaptiveAvgPool3d", ((2, 3, None),), {}, (1, 2, 5, 7, 3)),
    ("AdaptiveAvgPool3d", (2,), {}, (2, 5, 3, 4)),
    ("AdaptiveMaxPool1d", (4,), {}, (2, 3, 10)),
    ("AdaptiveMaxPool1d", (3,), {"return_indices": True}, (3, 7)),
    ("AdaptiveMaxPool2d", ((3, 4),), {"return_indices": True}, (2, 3, 7, 9)),
    ("AdaptiveMaxPool2d", ((None, 2),), {}, (2, 5, 7)),
    ("AdaptiveMaxPool3d", ((2, 3, None),), {"return_indices": True}, (1, 2, 5, 7, 3)),
    ("AdaptiveMaxPool3d", (2,), {}, (2, 5, 3, 4)),
]


def _compare_with_indices(t, e, x):
    """compare_modules for a pool that returns (values, int64 indices): the values and
    the input gradient within tolerance, the indices exactly."""
    tx, ex = torch.tensor(x, requires_grad=True), E.tensor(x).requires_grad_(True)
    (tv, ti), (ev, ei) = t(tx), e(ex)
    check_close(tv, ev, "values")
    assert ei.dtype is E.int64 and tuple(ei.shape) == tuple(ti.shape)
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    g = _input(tuple(tv.shape), x.dtype, seed=1)
    tv.backward(torch.tensor(g))
    ev.backward(E.tensor(g))
    check_close(tx.grad, ex.grad, "input grad")
    assert repr(t) == repr(e)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, args, kwargs, shape", POOLS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(POOLS)])
def test_pooling_matches_torch(name, args, kwargs, shape, dtype):
    t, e = pair_modules(lambda nn: getattr(nn, name)(*args, **kwargs))
    if kwargs.get("return_indices"):
        _compare_with_indices(t, e, _input(shape, dtype))
    else:
        compare_modules(t, e, [_input(shape, dtype)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_type", [1, 1.5])
def test_lp_pool_of_positive_inputs_matches_torch(norm_type, dtype):
    # (a fractional power of a negative input is NaN in both; positive inputs test it)
    t, e = pair_modules(lambda nn: nn.LPPool2d(norm_type, 2, 1))
    compare_modules(t, e, [np.abs(_input((2, 2, 4, 5), dtype)) + 0.1])


UNPOOLS = [
    # (nd, kernel_size, stride, padding, input shape, forward output_size)
    (1, 2, None, 0, (2, 3, 8), None),
    (1, 3, 2, 1, (2, 9), [10]),
    (2, 2, None, 0, (2, 3, 6, 6), None),
    (2, (3, 2), (2, 1), (1, 0), (1, 2, 7, 5), [1, 2, 8, 5]),
    (2, 2, 2, 0, (3, 5, 5), (5, 5)),
    (3, 2, None, 0, (1, 2, 4, 4, 6), None),
    (3, 3, 2, 1, (2, 5, 4, 6), [6, 4, 5]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nd, kernel, stride, padding, shape, output_size", UNPOOLS)
def test_max_unpool_matches_torch(nd, kernel, stride, padding, shape, output_size, dtype):
    pool = getattr(torch.nn, f"MaxPool{nd}d")(kernel, stride, padding, return_indices=True)
    values, indices = pool(torch.tensor(_input(shape, dtype)))
    t, e = pair_modules(lambda nn: getattr(nn, f"MaxUnpool{nd}d")(kernel, stride, padding))
    compare_modules(t, e, [values.numpy(), indices.numpy()],
                    kwargs=None if output_size is None else {"output_size": output_size})


def test_max_pool_then_unpool_in_ember_alone():
    x = E.tensor(_input((1, 1, 4, 4), "float32"))
    values, indices = enn.MaxPool2d(2, return_indices=True)(x)
    restored = enn.MaxUnpool2d(2)(values, indices)
    kept = restored.numpy() != 0
    assert kept.sum() == 4
    np.testing.assert_array_equal(restored.numpy()[kept], x.numpy()[kept])


def test_stride_defaults_to_kernel_size_as_torchs():
    for name in ("MaxPool2d", "AvgPool2d", "MaxUnpool2d", "AvgPool1d", "MaxUnpool3d"):
        assert repr(getattr(enn, name)(3)) == repr(getattr(torch.nn, name)(3))
    assert enn.LPPool2d(2, 3).stride is None


@pytest.mark.parametrize("build, shape", [
    (lambda nn: nn.MaxPool2d(2), (4, 4)),
    (lambda nn: nn.MaxPool2d(2), (1, 1, 1, 4, 4)),
    (lambda nn: nn.MaxPool2d(4, padding=3), (1, 1, 8, 8)),
    (lambda nn: nn.MaxPool1d(5), (1, 1, 3)),
    (lambda nn: nn.MaxPool3d(2, stride=0), (1, 1, 4, 4, 4)),
    (lambda nn: nn.AvgPool2d(2, padding=2), (1, 1, 6, 6)),
    (lambda nn: nn.AvgPool1d(3), (1, 1, 2)),
    (lambda nn: nn.AvgPool3d(2), (1, 4, 4)),
    (lambda nn: nn.AvgPool2d(2, divisor_override=0), (1, 1, 4, 4)),
    (lambda nn: nn.LPPool2d(2, 3), (1, 1, 2, 2)),
    (lambda nn: nn.AdaptiveAvgPool2d((2, 2, 2)), (1, 1, 4, 4)),
    (lambda nn: nn.AdaptiveAvgPool1d(2), (4,)),
    (lambda nn: nn.AdaptiveMaxPool2d(2), (1, 4, 4, 4, 4)),
    (lambda nn: nn.AdaptiveMaxPool3d((2, 2)), (1, 1, 4, 4, 4)),
], ids=["maxpool-1d-input", "maxpool-5d-input", "pad-over-half-kernel", "kernel-too-big",
        "stride-0", "avg-pad-over-half", "avg-kernel-too-big", "avg3d-3d-input",
        "divisor-0", "lp-kernel-too-big", "adaptive-size-length", "adaptive-1d-input",
        "adaptive-max-5d", "adaptive-max-size-length"])
def test_pooling_errors_match_torch(build, shape):
    x = _input(shape, "float32")
    _same_error(lambda nn, lib: build(nn)(lib.tensor(x)))


@pytest.mark.parametrize("output_size", [[9], [3, 3], [1, 1, 6, 6]])
def test_max_unpool_refuses_output_sizes_as_torch(output_size):
    values, indices = torch.nn.MaxPool2d(2, return_indices=True)(
        torch.tensor(_input((1, 1, 4, 4), "float32")))

    def program(nn, lib):
        nn.MaxUnpool2d(2)(lib.tensor(values.numpy()), lib.tensor(indices.numpy()),
                          output_size=output_size)

    _same_error(program)


FRACTIONAL = [
    # (dims, kernel_size, output_size, output_ratio, input shape)
    (2, 2, (3, 4), None, (2, 3, 7, 9)),
    (2, (3, 2), None, (0.5, 0.7), (1, 2, 8, 7)),
    (3, 2, (2, 3, 2), None, (1, 2, 5, 6, 4)),
    (3, (2, 1, 2), None, 0.6, (2, 1, 5, 5, 6)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nd, kernel, output_size, output_ratio, shape", FRACTIONAL)
def test_fractional_max_pool_with_given_samples_matches_torch(nd, kernel, output_size,
                                                              output_ratio, shape, dtype):
    samples = np.random.default_rng(1).uniform(size=(shape[0], shape[1], nd)).astype(dtype)

    def build(nn):
        lib = torch if nn is torch.nn else E
        return getattr(nn, f"FractionalMaxPool{nd}d")(
            kernel, output_size, output_ratio, return_indices=True,
            _random_samples=lib.tensor(samples))

    t, e = pair_modules(build)
    _compare_with_indices(t, e, _input(shape, dtype))


def test_fractional_max_pool_draws_its_windows():
    x = _input((2, 3, 9, 8), "float32")
    t = torch.nn.FractionalMaxPool2d(3, output_ratio=0.5)(torch.tensor(x))
    e = enn.FractionalMaxPool2d(3, output_ratio=0.5)(E.tensor(x))
    assert tuple(e.shape) == tuple(t.shape) == (2, 3, 4, 4)
    assert np.isin(e.numpy(), x).all()
    assert repr(enn.FractionalMaxPool2d(2, 3)) == repr(torch.nn.FractionalMaxPool2d(2, 3))


@pytest.mark.parametrize("build", [
    lambda nn: nn.FractionalMaxPool2d(2),
    lambda nn: nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5),
    lambda nn: nn.FractionalMaxPool2d(2, output_ratio=(0.5, 1.0)),
    lambda nn: nn.FractionalMaxPool3d(2, output_ratio=1.5),
    lambda nn: nn.FractionalMaxPool3d((2, 0, 2), output_size=2),
], ids=["no-size", "size-and-ratio", "ratio-1", "ratio-3d", "kernel-0"])
def test_fractional_max_pool_constructor_errors_match_torch(build):
    _same_error(lambda nn, lib: build(nn))
