"""The image functions of ember.nn.functional against torch.nn.functional: interpolate and
its upsample aliases, pixel_shuffle, pixel_unshuffle, channel_shuffle, unfold and fold
(kernel, dilation, padding and stride combinations, unbatched inputs, second derivatives),
grid_sample (every mode, padding mode and align_corners, 2-d and 3-d, gradients of the
input and the grid) and affine_grid: values and gradients in float32 and float64, and
errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from functional_oracle import DTYPES, EMBER, TORCH, E, check, compare, leaves, same_error

import ember.autograd as ag


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode,shape", [("nearest", (2, 3, 4, 5)), ("bilinear", (2, 3, 4, 5)),
                                        ("bicubic", (1, 2, 4, 5)), ("linear", (2, 3, 6)),
                                        ("trilinear", (1, 2, 3, 4, 5)), ("area", (2, 3, 6, 4))])
def test_interpolate(mode, shape, dtype):
    ac = {} if mode in ("nearest", "area") else {"align_corners": True}
    compare(lambda m, x: m.F.interpolate(x, scale_factor=1.5, mode=mode, **ac), [shape], dtype)
    compare(lambda m, x: m.F.interpolate(x, size=3, mode=mode), [shape], dtype)


def test_upsample_aliases_warn_and_resize():
    for name in ("upsample", "upsample_nearest", "upsample_bilinear"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compare(lambda m, x: getattr(m.F, name)(x, scale_factor=2), [(1, 2, 3, 4)])
        with pytest.warns(UserWarning, match="is deprecated"):
            getattr(EMBER.F, name)(E.ones(1, 2, 3, 4), scale_factor=2)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,r", [((2, 8, 3, 4), 2), ((5, 2, 9, 2, 3), 3), ((4, 2, 3), 2),
                                     ((2, 3, 4, 5), 1)])
def test_pixel_shuffle(shape, r, dtype):
    compare(lambda m, x: m.F.pixel_shuffle(x, r), [shape], dtype)
    unshuffled = shape[:-3] + (shape[-3] // (r * r), shape[-2] * r, shape[-1] * r)
    compare(lambda m, x: m.F.pixel_unshuffle(x, r), [unshuffled], dtype)


def test_pixel_shuffle_integers():
    compare(lambda m: m.F.pixel_shuffle(m.arange(96).view(2, 4, 3, 4), 2), [])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,groups", [((2, 6, 3, 4), 3), ((2, 6, 5), 2), ((1, 4, 2, 2, 2), 4),
                                          ((2, 5, 3), 1)])
def test_channel_shuffle(shape, groups, dtype):
    compare(lambda m, x: m.F.channel_shuffle(x, groups), [shape], dtype)
    # (values only: torch has no derivative of native_channel_shuffle)
    xt = torch.randn(*shape)
    xe = E.tensor(xt.numpy())
    check(EMBER.F.native_channel_shuffle(xe, groups), TORCH.F.native_channel_shuffle(xt, groups))


@pytest.mark.parametrize("call", [
    lambda m: m.F.pixel_shuffle(m.ones(8, 3), 2),
    lambda m: m.F.pixel_shuffle(m.ones(2, 7, 3, 4), 2),
    lambda m: m.F.pixel_shuffle(m.ones(2, 8, 3, 4), 0),
    lambda m: m.F.pixel_shuffle(m.ones(2, 8, 3, 4), 2.0),
    lambda m: m.F.pixel_unshuffle(m.ones(2, 2, 5, 6), 2),
    lambda m: m.F.pixel_unshuffle(m.ones(2, 2, 4, 5), 2),
    lambda m: m.F.pixel_unshuffle(m.ones(4, 6), 2),
    lambda m: m.F.pixel_unshuffle(m.ones(2, 2, 4, 6), -1),
    lambda m: m.F.channel_shuffle(m.ones(2, 6), 3),
    lambda m: m.F.channel_shuffle(m.ones(2, 7, 3), 3),
    lambda m: m.F.channel_shuffle(m.ones(2, 6, 3), 0),
])
def test_shuffle_errors(call):
    same_error(call)


UNFOLDS = [{"kernel_size": 2}, {"kernel_size": 3, "padding": 1, "stride": 2},
           {"kernel_size": (2, 3), "dilation": (2, 1), "padding": (1, 0), "stride": (1, 2)},
           {"kernel_size": 1}, {"kernel_size": (3, 2), "dilation": 2, "stride": 3}]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", UNFOLDS)
@pytest.mark.parametrize("shape", [(2, 3, 7, 8), (3, 6, 7)])
def test_unfold_and_fold(kw, shape, dtype):
    compare(lambda m, x: m.F.unfold(x, **kw), [shape], dtype)
    cols = tuple(TORCH.F.unfold(torch.ones(shape), **kw).shape)
    compare(lambda m, c: m.F.fold(c, shape[-2:], **kw), [cols], dtype)


@pytest.mark.parametrize("kw", UNFOLDS[1:3])
def test_unfold_and_fold_second_order(kw):
    shape = (2, 3, 7, 8)
    cols = tuple(TORCH.F.unfold(torch.ones(shape), **kw).shape)
    for fn, size in ((lambda m, x: m.F.unfold(x, **kw), shape),
                     (lambda m, c: m.F.fold(c, shape[-2:], **kw), cols)):
        (xe,), (xt,) = leaves([size])
        ye, yt = fn(EMBER, xe), fn(TORCH, xt)
        (ge,) = ag.grad((ye * ye).sum(), [xe], create_graph=True)
        (gt,) = torch.autograd.grad((yt * yt).sum(), [xt], create_graph=True)
        check(ag.grad((ge * ge.exp()).sum(), [xe])[0],
              torch.autograd.grad((gt * gt.exp()).sum(), [xt])[0])


def test_unfold_bool_and_empty_batch():
    values = np.random.default_rng(0).random((2, 3, 4, 5)) > 0.5
    compare(lambda m: m.F.unfold(m.tensor(values), 2), [])
    compare(lambda m, x: m.F.unfold(x, 2), [(0, 3, 4, 5)])


@pytest.mark.parametrize("call", [
    lambda m: m.F.unfold(m.ones(2, 3, 6, 7), 8),
    lambda m: m.F.unfold(m.ones(2, 3, 6, 7), 0),
    lambda m: m.F.unfold(m.ones(2, 3, 6, 7), 2, stride=0),
    lambda m: m.F.unfold(m.ones(2, 3, 6, 7), 2, dilation=0),
    lambda m: m.F.unfold(m.ones(2, 3, 6, 7), 2, padding=-1),
    lambda m: m.F.unfold(m.ones(2, 3, 6, 7), 2, dilation=0, stride=0),
    lambda m: m.F.unfold(m.ones(2, 3, 6, 7, dtype=m.int64), 2),
    lambda m: m.F.unfold(m.ones(2, 0, 6, 7), 2),
    lambda m: m.F.unfold(m.ones(2, 3, 6, 7), (2, 2, 2)),
    lambda m: m.F.fold(m.ones(2, 12, 12, 1), (4, 5), 2),
    lambda m: m.F.fold(m.ones(2, 11, 12), (4, 5), 2),
    lambda m: m.F.fold(m.ones(11, 12), (4, 5), 2),
    lambda m: m.F.fold(m.ones(2, 12, 11), (4, 5), 2),
    lambda m: m.F.fold(m.ones(2, 12, 12, dtype=m.int64), (4, 5), 2),
    lambda m: m.F.fold(m.ones(2, 12, 12), (4, 5), 0),
    lambda m: m.F.fold(m.ones(2, 12, 12), (4, 5), 2, stride=0, dilation=0),
    lambda m: m.F.fold(m.ones(2, 0, 12), (4, 5), 2),
    lambda m: m.F.fold(m.ones(2, 4, 1), (1, 1), 2),
    lambda m: m.F.fold(m.ones(2, 4, 1), (4, 5, 6), 2),
])
def test_unfold_and_fold_errors(call):
    same_error(call)


def test_unfold_of_two_dims():
    # (IndexError, its message worded by Ember's Tensor.size)
    same_error(lambda m: m.F.unfold(m.ones(6, 7), 3), exact=False)


GRIDS = [(mode, pm, ac) for mode in ("bilinear", "nearest", "bicubic")
         for pm in ("zeros", "border", "reflection") for ac in (False, True)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode,padding_mode,align_corners", GRIDS)
def test_grid_sample(mode, padding_mode, align_corners, dtype):
    compare(lambda m, x, g: m.F.grid_sample(x, g, mode, padding_mode, align_corners),
            [(2, 3, 5, 6), (2, 4, 7, 2)], dtype, low=-1.3, high=1.3)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode,padding_mode,align_corners",
                         [g for g in GRIDS if g[0] != "bicubic"])
def test_grid_sample_3d(mode, padding_mode, align_corners, dtype):
    compare(lambda m, x, g: m.F.grid_sample(x, g, mode, padding_mode, align_corners),
            [(2, 2, 4, 5, 3), (2, 3, 2, 4, 3)], dtype, low=-1.3, high=1.3)


def test_grid_sample_far_outside_and_unit_sizes():
    for padding_mode in ("zeros", "border", "reflection"):
        compare(lambda m, x, g: m.F.grid_sample(x, g * 4, padding_mode=padding_mode,
                                                align_corners=False),
                [(1, 2, 3, 4), (1, 5, 5, 2)])
        compare(lambda m, x, g: m.F.grid_sample(x, g, padding_mode=padding_mode,
                                                align_corners=True), [(1, 2, 1, 4), (1, 3, 3, 2)])


def test_grid_sample_default_align_corners_warns():
    for m in (TORCH, EMBER):
        with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
            m.F.grid_sample(m.ones(1, 1, 2, 2), m.zeros(1, 1, 1, 2))


@pytest.mark.parametrize("call", [
    lambda m: m.F.grid_sample(m.ones(2, 3, 5, 6), m.ones(2, 4, 7, 2), mode="foo"),
    lambda m: m.F.grid_sample(m.ones(2, 3, 5, 6), m.ones(2, 4, 7, 2), padding_mode="foo"),
    lambda m: m.F.grid_sample(m.ones(2, 3, 5, 6), m.ones(4, 7, 2), align_corners=False),
    lambda m: m.F.grid_sample(m.ones(2, 3, 5, 6), m.ones(1, 4, 7, 2), align_corners=False),
    lambda m: m.F.grid_sample(m.ones(2, 3, 5, 6), m.ones(2, 4, 7, 3), align_corners=False),
    lambda m: m.F.grid_sample(m.ones(2, 3, 0, 6), m.ones(2, 4, 7, 2), align_corners=False),
    lambda m: m.F.grid_sample(m.ones(2, 3, 5, 6), m.ones(2, 4, 7, 2, dtype=m.float64),
                              align_corners=False),
    lambda m: m.F.grid_sample(m.ones(2, 3, 5, 6, dtype=m.int64),
                              m.ones(2, 4, 7, 2, dtype=m.int64), align_corners=False),
    lambda m: m.F.grid_sample(m.ones(2, 3, 4, 5, 6), m.ones(2, 3, 3, 3, 3), mode="bicubic",
                              align_corners=False),
    lambda m: m.F.grid_sample(m.ones(2, 3, 4, 5), m.ones(2, 3, 3, 3, 2), align_corners=False),
])
def test_grid_sample_errors(call):
    same_error(call)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 1, 3), (2, 3, 4, 5, 6), (2, 1, 2, 1, 3)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(size, align_corners, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(lambda m, theta: m.F.affine_grid(theta, size, align_corners),
                [(2, 2, 3) if len(size) == 4 else (2, 3, 4)], dtype)


def test_affine_grid_into_grid_sample():
    theta = np.random.default_rng(1).uniform(-1, 1, (2, 2, 3))
    compare(lambda m, x: m.F.grid_sample(x, m.F.affine_grid(m.tensor(theta), x.shape, False),
                                         align_corners=False), [(2, 3, 5, 6)])


@pytest.mark.parametrize("call", [
    lambda m: m.F.affine_grid(m.ones(2, 2, 3, dtype=m.int64), [2, 3, 4, 5], False),
    lambda m: m.F.affine_grid(m.ones(2, 3, 3), [2, 3, 4, 5], False),
    lambda m: m.F.affine_grid(m.ones(2, 2, 3), [2, 3, 4, 5, 6], False),
    lambda m: m.F.affine_grid(m.ones(2, 2, 3), [2, 3, 4], False),
    lambda m: m.F.affine_grid(m.ones(2, 2, 3), [2, 3, 0, 5], False),
])
def test_affine_grid_errors(call):
    same_error(call)


def test_affine_grid_batch_mismatch_is_refused():
    # (by the batched product; its message names Ember's or torch's bmm)
    same_error(lambda m: m.F.affine_grid(m.ones(2, 2, 3), [3, 3, 4, 5], False), exact=False)


def test_affine_grid_of_a_size_tensor():
    check(EMBER.F.affine_grid(E.eye(2, 3).unsqueeze(0), E.ones(1, 1, 2, 3).shape, True),
          TORCH.F.affine_grid(torch.eye(2, 3).unsqueeze(0), torch.Size([1, 1, 2, 3]), True))
