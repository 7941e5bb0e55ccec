"""The normalizations of ember.nn.functional against torch.nn.functional: batch_norm and
instance_norm (training and evaluation, running statistics updated in place, with and
without affine parameters), layer_norm, group_norm, rms_norm, local_response_norm and
normalize, values and gradients of the input and parameters in float32 and float64, and
errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from functional_oracle import DTYPES, EMBER, TORCH, E, check, compare, same_error


def _stats(m, c, dtype):
    rng = np.random.default_rng(7)
    mean, var = rng.standard_normal(c), rng.uniform(0.5, 2.0, c)
    dt = getattr(m, dtype)
    return m.tensor(mean, dtype=dt), m.tensor(var, dtype=dt)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 4, 3), (2, 3, 2, 2, 3)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(shape, training, dtype):
    stats = {}

    def fn(m, x, w, b):
        rm, rv = _stats(m, shape[1], dtype)
        out = m.F.batch_norm(x, rm, rv, w, b, training=training, momentum=0.3, eps=1e-4)
        stats[m] = (rm, rv)
        return out

    compare(fn, [shape, (shape[1],), (shape[1],)], dtype)
    for e, t in zip(stats[EMBER], stats[TORCH]):
        check(e, t)


@pytest.mark.parametrize("dtype", DTYPES)
def test_batch_norm_without_parameters_or_running_stats(dtype):
    compare(lambda m, x: m.F.batch_norm(x, None, None, training=True), [(4, 3, 2)], dtype)
    compare(lambda m, x: m.F.batch_norm(x, *_stats(m, 3, dtype)), [(4, 3, 2)], dtype)


@pytest.mark.parametrize("call", [
    lambda m: m.F.batch_norm(m.ones(1, 3), m.zeros(3), m.ones(3), training=True),
    lambda m: m.F.batch_norm(m.ones(2, 3), m.zeros(3), m.ones(3), training=True, eps=0.0),
    lambda m: m.F.batch_norm(m.ones(2, 3), m.zeros(3), m.ones(3), eps=-1.0),
    lambda m: m.F.batch_norm(m.ones(2, 3), m.zeros(4), m.ones(3)),
])
def test_batch_norm_errors(call):
    same_error(call)


def test_batch_norm_eval_without_running_stats():
    same_error(lambda m: m.F.batch_norm(m.ones(2, 3), None, None), exact=False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 3), (1, 2, 2, 2, 3)])
@pytest.mark.parametrize("use_input_stats", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_instance_norm(shape, use_input_stats, affine, dtype):
    stats = {}

    def fn(m, x, w, b):
        rm, rv = _stats(m, shape[1], dtype)
        stats[m] = (rm, rv)
        return m.F.instance_norm(x, rm, rv, w if affine else None, b if affine else None,
                                 use_input_stats=use_input_stats, momentum=0.2, eps=1e-4)

    compare(fn, [shape, (shape[1],), (shape[1],)], dtype)
    for e, t in zip(stats[EMBER], stats[TORCH]):
        check(e, t)


def test_instance_norm_without_running_stats():
    compare(lambda m, x: m.F.instance_norm(x), [(2, 3, 6)])


@pytest.mark.parametrize("call", [
    lambda m: m.F.instance_norm(m.ones(3, 4)),
    lambda m: m.F.instance_norm(m.ones(3, 4, 1)),
    lambda m: m.F.instance_norm(m.ones(3, 4, 5), use_input_stats=False),
    lambda m: m.F.instance_norm(m.ones(3, 4, 5), weight=m.ones(3)),
    lambda m: m.F.instance_norm(m.ones(3, 4, 5), m.zeros(3), m.ones(3)),
    lambda m: m.F.instance_norm(m.ones(3, 4, 5), m.zeros(4), None),
    lambda m: m.F.instance_norm(m.ones(3, 4, 5, dtype=m.int64)),
])
def test_instance_norm_errors(call):
    same_error(call)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,normalized", [((4, 5), (5,)), ((2, 3, 4), (3, 4)),
                                              ((2, 3, 4), [4])])
def test_layer_norm(shape, normalized, dtype):
    compare(lambda m, x, w, b: m.F.layer_norm(x, normalized, w, b, eps=1e-3),
            [shape, tuple(normalized), tuple(normalized)], dtype)
    compare(lambda m, x: m.F.layer_norm(x, normalized), [shape], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
# (groups of at least 3 elements: the gradient of a 2-element group is all cancellation,
# float32 rounding amplified by its large 1/std)
@pytest.mark.parametrize("shape,groups", [((2, 6), 2), ((2, 6, 5), 2), ((3, 4, 2, 3), 4),
                                          ((2, 4, 2, 2, 2), 1)])
def test_group_norm(shape, groups, dtype):
    compare(lambda m, x, w, b: m.F.group_norm(x, groups, w, b, eps=1e-3),
            [shape, (shape[1],), (shape[1],)], dtype)
    compare(lambda m, x: m.F.group_norm(x, groups), [shape], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,normalized", [((4, 5), (5,)), ((2, 3, 4), (3, 4))])
@pytest.mark.parametrize("eps", [None, 1e-3])
def test_rms_norm(shape, normalized, eps, dtype):
    compare(lambda m, x, w: m.F.rms_norm(x, normalized, w, eps), [shape, normalized], dtype)
    compare(lambda m, x: m.F.rms_norm(x, normalized, eps=eps), [shape], dtype)


@pytest.mark.parametrize("call", [
    lambda m: m.F.layer_norm(m.ones(2, 3, 4), 4),
    lambda m: m.F.layer_norm(m.ones(2, 3, 4), (3,)),
    lambda m: m.F.layer_norm(m.ones(2, 3, 4), (4,), m.ones(3)),
    lambda m: m.F.rms_norm(m.ones(2, 3, 4), 4),
    lambda m: m.F.group_norm(m.ones(3), 1),
    lambda m: m.F.group_norm(m.ones(1, 2), 2),
    lambda m: m.F.group_norm(m.ones(2, 6, 3), 0),
    lambda m: m.F.group_norm(m.ones(2, 6, 3), 4),
])
def test_norm_errors(call):
    same_error(call)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 6, 5), (2, 5, 3, 4), (1, 6, 2, 2, 3)])
@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_local_response_norm(shape, size, dtype):
    compare(lambda m, x: m.F.local_response_norm(x, size, alpha=0.3, beta=0.6, k=1.5),
            [shape], dtype)


def test_local_response_norm_integers_and_empty():
    compare(lambda m: m.F.local_response_norm(m.arange(24).view(2, 3, 4), 2), [])
    compare(lambda m, x: m.F.local_response_norm(x, 2), [(0, 3, 4)])
    same_error(lambda m: m.F.local_response_norm(m.ones(2, 3), 2))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [{}, {"p": 1.0}, {"p": 3.0, "dim": 0}, {"p": float("inf")},
                                {"dim": (1, 2)}, {"eps": 10.0}, {"dim": -1}])
def test_normalize(kw, dtype):
    compare(lambda m, x: m.F.normalize(x, **kw), [(2, 3, 4)], dtype)


def test_normalize_into_out_and_errors():
    xt = torch.randn(3, 4)
    xe = E.tensor(xt.numpy())
    oe, ot = E.empty(3, 4), torch.empty(3, 4)
    assert EMBER.F.normalize(xe, out=oe) is oe
    TORCH.F.normalize(xt, out=ot)
    check(oe, ot)
    same_error(lambda m: m.F.normalize(m.ones(2, 3, dtype=m.int64)))
