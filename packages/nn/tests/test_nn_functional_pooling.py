"""The pools of ember.nn.functional against torch.nn.functional: max (values, indices,
``ceil_mode``, padding, dilation), unpooling, average (``count_include_pad``,
``divisor_override``), Lp, adaptive average and max (``None`` sizes, NaN and tied windows)
and fractional max pooling (given samples, output ratios), at 1 to 3 spatial dims: values
and input gradients in float32 and float64, and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from functional_oracle import DTYPES, EMBER, TORCH, E, check, compare, same_error

SHAPES = {1: (2, 3, 9), 2: (2, 3, 7, 8), 3: (2, 2, 5, 6, 7)}
UNBATCHED = {1: (3, 9), 2: (3, 7, 8), 3: (2, 5, 6, 7)}


def _pool(m, nd, kind):
    return getattr(m.F, f"{kind}{nd}d")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("kw", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
                                {"kernel_size": 2, "dilation": 2, "ceil_mode": True},
                                {"kernel_size": 3, "stride": 2, "ceil_mode": True}])
@pytest.mark.parametrize("return_indices", [False, True])
def test_max_pool(nd, kw, return_indices, dtype):
    compare(lambda m, x: _pool(m, nd, "max_pool")(x, return_indices=return_indices, **kw),
            [SHAPES[nd]], dtype)
    compare(lambda m, x: getattr(m.F, f"max_pool{nd}d_with_indices")(x, **kw), [UNBATCHED[nd]],
            dtype)


@pytest.mark.parametrize("nd", [2, 3])
def test_max_pool_integers(nd):
    values = np.random.default_rng(0).integers(-9, 9, SHAPES[nd])
    compare(lambda m: _pool(m, nd, "max_pool")(m.tensor(values), 2, return_indices=True), [])


@pytest.mark.parametrize("call", [
    lambda m: m.F.max_pool1d(m.ones(2, 3, 4, dtype=m.int64), 2),
    lambda m: m.F.max_pool2d(m.ones(2, 3, 4, 4), 2, padding=2),
    lambda m: m.F.max_pool2d(m.ones(2, 3, 4, 4), 0),
    lambda m: m.F.max_pool2d(m.ones(2, 3, 4, 4), 5),
    lambda m: m.F.max_pool3d(m.ones(3, 4, 4), 2),
])
def test_max_pool_errors(call):
    same_error(call)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("kw", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
                                {"kernel_size": 2, "stride": 1}])
@pytest.mark.parametrize("batched", [True, False])
def test_max_unpool(nd, kw, batched, dtype):
    def fn(m, x):
        out, idx = _pool(m, nd, "max_pool")(x, return_indices=True, **kw)
        return _pool(m, nd, "max_unpool")(out * 2, idx, output_size=x.shape[-nd:], **kw)

    compare(fn, [SHAPES[nd] if batched else UNBATCHED[nd]], dtype)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_output_size(nd):
    def fn(m, x):
        out, idx = _pool(m, nd, "max_pool")(x, 2, return_indices=True)
        size = tuple(s // 2 * 2 + 1 for s in x.shape[2:])
        return (_pool(m, nd, "max_unpool")(out, idx, 2, output_size=size),
                _pool(m, nd, "max_unpool")(out, idx, 2, output_size=tuple(x.shape[:2]) + size))

    compare(fn, [SHAPES[nd]])


def _pooled(m, nd=2):
    x = m.tensor(np.random.default_rng(1).standard_normal(SHAPES[nd]))
    return _pool(m, nd, "max_pool")(x, 2, return_indices=True)


@pytest.mark.parametrize("call", [
    lambda m: m.F.max_unpool2d(_pooled(m)[0][0, 0], _pooled(m)[1][0, 0], 2),
    lambda m: m.F.max_unpool2d(_pooled(m)[0], _pooled(m)[1].int(), 2),
    lambda m: m.F.max_unpool2d(_pooled(m)[0], _pooled(m)[1][:, :, :2], 2),
    lambda m: m.F.max_unpool2d(_pooled(m)[0], _pooled(m)[1], 2, output_size=(9, 7)),
    lambda m: m.F.max_unpool2d(_pooled(m)[0], _pooled(m)[1], 2, output_size=(7, 7, 7)),
    lambda m: m.F.max_unpool2d(_pooled(m)[0], _pooled(m)[1], 2, padding=4),
    lambda m: m.F.max_unpool2d(_pooled(m)[0].long(), _pooled(m)[1], 2),
    lambda m: m.F.max_unpool2d(_pooled(m)[0][:, :0], _pooled(m)[1][:, :0], 2),
    lambda m: m.F.max_unpool3d(_pooled(m, 3)[0][0, 0], _pooled(m, 3)[1][0, 0], 2),
    lambda m: m.F.max_unpool3d(_pooled(m, 3)[0], _pooled(m, 3)[1], 2, stride=0),
])
def test_max_unpool_errors(call):
    same_error(call)


@pytest.mark.parametrize("call", [
    lambda m: m.F.max_unpool2d(_pooled(m)[0], _pooled(m)[1] * 100, 2),
    lambda m: m.F.max_unpool2d(_pooled(m)[0], -_pooled(m)[1] - 1, 2),
    lambda m: m.F.max_unpool3d(_pooled(m, 3)[0], _pooled(m, 3)[1] * 100, 2),
])
def test_max_unpool_invalid_indices(call):
    # (torch's threads race to name one of the invalid indices)
    same_error(call, exact=False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("kw", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
                                {"kernel_size": 3, "padding": 1, "count_include_pad": False},
                                {"kernel_size": 3, "stride": 2, "ceil_mode": True},
                                {"kernel_size": 2, "divisor_override": 3}])
def test_avg_pool(nd, kw, dtype):
    if nd == 1 and "divisor_override" in kw:
        kw = {"kernel_size": 2}
    compare(lambda m, x: _pool(m, nd, "avg_pool")(x, **kw), [SHAPES[nd]], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("norm_type,low", [(1, -2.0), (2, -2.0), (3, -2.0), (1.5, 0.1),
                                           (float("inf"), -2.0)])
@pytest.mark.parametrize("kw", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2,
                                                     "ceil_mode": True}])
def test_lp_pool(nd, norm_type, low, kw, dtype):
    compare(lambda m, x: _pool(m, nd, "lp_pool")(x, norm_type, **kw), [SHAPES[nd]], dtype,
            low=low)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("size", [1, 3, 4, "none"])
@pytest.mark.parametrize("batched", [True, False])
def test_adaptive_avg_pool(nd, size, batched, dtype):
    out = (size if nd == 1 else (3, None) if nd == 2 else (2, None, 3)) if size == "none" \
        else size
    if nd == 1 and size == "none":
        out = 5
    compare(lambda m, x: _pool(m, nd, "adaptive_avg_pool")(x, out),
            [SHAPES[nd] if batched else UNBATCHED[nd]], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("size", [1, 3, 4, "none"])
@pytest.mark.parametrize("batched", [True, False])
def test_adaptive_max_pool(nd, size, batched, dtype):
    out = (5 if nd == 1 else (3, None) if nd == 2 else (2, None, 3)) if size == "none" else size
    compare(lambda m, x: _pool(m, nd, "adaptive_max_pool")(x, out, return_indices=True),
            [SHAPES[nd] if batched else UNBATCHED[nd]], dtype)
    compare(lambda m, x: getattr(m.F, f"adaptive_max_pool{nd}d_with_indices")(x, out),
            [SHAPES[nd]], dtype)


def test_adaptive_max_pool3d_of_empty_size():
    # (values only: torch's backward refuses an empty gradient)
    for size in (0, (0, 2, 2)):
        check(EMBER.F.adaptive_max_pool3d(E.ones(2, 2, 3, 4, 5), size, return_indices=True),
              TORCH.F.adaptive_max_pool3d(torch.ones(2, 2, 3, 4, 5), size, return_indices=True))


@pytest.mark.parametrize("values", [
    [[0.5, np.nan, 2.0, np.nan], [1.0, 1.0, -1.0, 3.0], [np.nan, 7.0, 7.0, 0.0]],
    [[1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 0.0, 2.0], [3.0, 3.0, 3.0, 3.0]]])
def test_adaptive_max_pool3d_nan_and_ties(values):
    # torch's loop: the first largest value of a window, or its last NaN
    data = np.array(values, dtype=np.float64).reshape(1, 1, 3, 2, 2).repeat(2, 4)
    out_e = EMBER.F.adaptive_max_pool3d(E.tensor(data), (2, 1, 2), return_indices=True)
    out_t = TORCH.F.adaptive_max_pool3d(torch.tensor(data), (2, 1, 2), return_indices=True)
    check(out_e, out_t)


@pytest.mark.parametrize("call", [
    lambda m: m.F.adaptive_max_pool3d(m.ones(4, 6, 6), 2),
    lambda m: m.F.adaptive_max_pool3d(m.ones(2, 3, 4, 6, 6, dtype=m.int64), 2),
    lambda m: m.F.adaptive_max_pool3d(m.ones(2, 3, 0, 6, 6), 2),
    lambda m: m.F.adaptive_max_pool3d(m.ones(2, 3, 4, 6, 6), (2, 3)),
    lambda m: m.F.adaptive_avg_pool2d(m.ones(3), (2, None)),
    lambda m: m.F.adaptive_max_pool2d(m.ones(3, 4), (2, None)),
    lambda m: m.F.adaptive_max_pool1d(m.ones(2, 3, 4), None),
])
def test_adaptive_errors(call):
    same_error(call)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nd,shape,kernel,size", [
    (2, (2, 3, 10, 12), 3, (4, 5)), (2, (2, 3, 10, 12), (2, 3), 6), (2, (3, 9, 9), 2, (4, 4)),
    (3, (2, 2, 8, 9, 10), 2, (4, 5, 6)), (3, (2, 7, 8, 6), (2, 3, 2), 3)])
def test_fractional_max_pool(nd, shape, kernel, size, dtype):
    batch = shape[0] if len(shape) == nd + 2 else 1
    samples = np.random.default_rng(2).random((batch, shape[-nd - 1], nd))

    def fn(m, x):
        u = m.tensor(samples, dtype=x.dtype)
        return getattr(m.F, f"fractional_max_pool{nd}d")(x, kernel, size, return_indices=True,
                                                        _random_samples=u)

    compare(fn, [shape], dtype)


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_max_pool_ratio_and_default_samples(nd):
    shape = SHAPES[nd]
    samples = np.random.default_rng(3).random((shape[0], shape[1], nd))
    compare(lambda m, x: getattr(m.F, f"fractional_max_pool{nd}d")(
        x, 2, output_ratio=0.5 if nd == 3 else (0.5, 0.75),
        _random_samples=m.tensor(samples)), [shape])
    E.manual_seed(0)
    a = getattr(EMBER.F, f"fractional_max_pool{nd}d")(E.ones(*shape), 2, output_size=3)
    assert tuple(a.shape) == shape[:2] + (3,) * nd


def _samples(m, *shape, dtype=None):
    return m.rand(*shape, dtype=dtype or m.float32)


@pytest.mark.parametrize("call", [
    lambda m: m.F.fractional_max_pool2d(m.ones(2, 3, 10, 12), 3),
    lambda m: m.F.fractional_max_pool2d(m.ones(2, 3, 10, 12), 3, output_ratio=0.5),
    lambda m: m.F.fractional_max_pool2d(m.ones(2, 3, 10, 12), 3, output_ratio=(0.5, 0.5, 0.5)),
    lambda m: m.F.fractional_max_pool2d(m.ones(2, 3, 10, 12), 3, (9, 5),
                                        _random_samples=_samples(m, 2, 3, 2)),
    lambda m: m.F.fractional_max_pool2d(m.ones(2, 3, 10, 12), (3, 3, 3), (4, 5),
                                        _random_samples=_samples(m, 2, 3, 2)),
    lambda m: m.F.fractional_max_pool2d(m.ones(2, 3, 10, 12), 3, (4, 5, 6),
                                        _random_samples=_samples(m, 2, 3, 2)),
    lambda m: m.F.fractional_max_pool2d(m.ones(3, 8), 2, (4, 5),
                                        _random_samples=_samples(m, 2, 3)),
    lambda m: m.F.fractional_max_pool2d(m.ones(2, 0, 10, 12), 3, (4, 5),
                                        _random_samples=_samples(m, 2, 0, 2)),
    lambda m: m.F.fractional_max_pool2d(m.ones(2, 3, 10, 12), 3, (4, 5),
                                        _random_samples=_samples(m, 1, 3, 2)),
    lambda m: m.F.fractional_max_pool2d(m.ones(2, 3, 10, 12), 3, (4, 5),
                                        _random_samples=_samples(m, 2, 2, 2)),
    lambda m: m.F.fractional_max_pool2d(m.ones(2, 3, 10, 12), 3, (4, 5),
                                        _random_samples=_samples(m, 2, 3, 1)),
    lambda m: m.F.fractional_max_pool2d(m.ones(2, 3, 10, 12), 3, (4, 5),
                                        _random_samples=_samples(m, 2, 3)),
    lambda m: m.F.fractional_max_pool2d(m.ones(2, 3, 10, 12), 3, (4, 5),
                                        _random_samples=_samples(m, 2, 3, 2, dtype=m.float64)),
    lambda m: m.F.fractional_max_pool3d(m.ones(3, 8, 9), 2, (4, 5, 6),
                                        _random_samples=_samples(m, 1, 3, 3)),
    lambda m: m.F.fractional_max_pool3d(m.ones(2, 3, 8, 9, 10), 2, (4, 9, 6),
                                        _random_samples=_samples(m, 2, 3, 3)),
    lambda m: m.F.fractional_max_pool3d(m.ones(2, 3, 8, 9, 10), (2, 2), (4, 5, 6),
                                        _random_samples=_samples(m, 2, 3, 3)),
])
def test_fractional_errors(call):
    same_error(call)
