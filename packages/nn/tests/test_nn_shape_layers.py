"""The layers that rearrange, pad, resize or compare tensors, against torch.nn's: padding
(zero, constant, reflection, replication, circular; 1 to 3 dims, negative pads), pixel and
channel shuffles, Fold and Unfold, Upsample and its fixed forms, PairwiseDistance and
CosineSimilarity. Outputs, input gradients and ``repr`` in float32 and float64, batched and
unbatched inputs, and torch's exception types."""

from __future__ import annotations

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


LAYERS = [
    # (layer, constructor args, constructor kwargs, input shapes)
    ("ZeroPad1d", (2,), {}, [(2, 3, 4)]),
    ("ZeroPad1d", ((1, -2),), {}, [(3, 5)]),
    ("ZeroPad2d", ((1, 0, 2, 3),), {}, [(2, 2, 3, 4)]),
    ("ZeroPad2d", ((-1, 2, 0, -1),), {}, [(2, 4, 4)]),
    ("ZeroPad3d", (1,), {}, [(1, 2, 2, 3, 2)]),
    ("ConstantPad1d", ((2, 1), 3.5), {}, [(2, 3, 4)]),
    ("ConstantPad2d", (1, -1.0), {}, [(2, 3, 4)]),
    ("ConstantPad3d", ((1, 0, 0, 2, 1, 1), 0.5), {}, [(1, 2, 2, 3, 2)]),
    ("ReflectionPad1d", ((2, 3),), {}, [(2, 3, 5)]),
    ("ReflectionPad1d", (1,), {}, [(3, 4)]),
    ("ReflectionPad2d", ((1, 2, 3, 0),), {}, [(2, 2, 4, 5)]),
    ("ReflectionPad2d", (2,), {}, [(2, 3, 4)]),
    ("ReflectionPad3d", ((1, 0, 2, 1, 0, 1),), {}, [(1, 2, 3, 4, 3)]),
    ("ReplicationPad1d", ((3, 1),), {}, [(2, 3, 4)]),
    ("ReplicationPad2d", ((2, 0, 1, 3),), {}, [(2, 2, 3, 3)]),
    ("ReplicationPad2d", (1,), {}, [(2, 3, 4)]),
    ("ReplicationPad3d", (1,), {}, [(2, 2, 3, 2)]),
    ("CircularPad1d", ((2, 1),), {}, [(2, 3, 4)]),
    ("CircularPad2d", ((1, 2, 0, 3),), {}, [(2, 2, 3, 4)]),
    ("CircularPad2d", (1,), {}, [(2, 3, 4)]),
    ("CircularPad3d", ((1, 0, 1, 1, 2, 0),), {}, [(1, 2, 3, 3, 2)]),
    ("PixelShuffle", (2,), {}, [(2, 8, 3, 2)]),
    ("PixelShuffle", (3,), {}, [(2, 2, 9, 2, 1)]),
    ("PixelShuffle", (2,), {}, [(4, 2, 3)]),
    ("PixelUnshuffle", (2,), {}, [(2, 3, 4, 6)]),
    ("PixelUnshuffle", (3,), {}, [(1, 3, 6)]),
    ("ChannelShuffle", (3,), {}, [(2, 6, 3, 2)]),
    ("ChannelShuffle", (2,), {}, [(2, 4, 5)]),
    ("Unfold", (2,), {}, [(2, 3, 4, 5)]),
    ("Unfold", ((2, 3),), {"dilation": (2, 1), "padding": 1, "stride": (1, 2)},
     [(2, 2, 5, 6)]),
    ("Unfold", (3,), {"padding": (1, 0)}, [(2, 4, 5)]),
    ("Fold", ((4, 5), 2), {}, [(2, 12, 12)]),
    ("Fold", ((5, 6), (2, 3)), {"dilation": (2, 1), "padding": 1, "stride": (1, 2)},
     [(2, 12, 15)]),
    ("Fold", ((3, 4), 2), {"padding": (1, 0)}, [(8, 12)]),
    ("Upsample", (), {"scale_factor": 2}, [(2, 3, 5)]),
    ("Upsample", ((5, 7),), {"mode": "nearest"}, [(2, 3, 3, 4)]),
    ("Upsample", (), {"scale_factor": (1.5, 2.0), "mode": "nearest-exact"}, [(1, 2, 4, 3)]),
    ("Upsample", (7,), {"mode": "linear"}, [(2, 3, 4)]),
    ("Upsample", (), {"scale_factor": 1.7, "mode": "linear", "align_corners": True},
     [(2, 3, 4)]),
    ("Upsample", ((5, 6),), {"mode": "bilinear"}, [(2, 2, 3, 4)]),
    ("Upsample", (), {"scale_factor": 2.5, "mode": "bilinear", "align_corners": True},
     [(1, 2, 3, 4)]),
    ("Upsample", (), {"scale_factor": 1.5, "mode": "bilinear",
                      "recompute_scale_factor": True}, [(1, 2, 3, 5)]),
    ("Upsample", ((6, 5),), {"mode": "bicubic"}, [(1, 2, 4, 3)]),
    ("Upsample", (), {"scale_factor": (2, 1, 1.5), "mode": "trilinear"},
     [(1, 2, 2, 3, 4)]),
    ("Upsample", ((3, 4, 5),), {"mode": "nearest"}, [(1, 2, 2, 3, 2)]),
    ("UpsamplingNearest2d", (), {"scale_factor": 2}, [(2, 3, 3, 2)]),
    ("UpsamplingNearest2d", ((5, 3),), {}, [(1, 2, 3, 2)]),
    ("UpsamplingBilinear2d", ((5, 6),), {}, [(2, 2, 3, 4)]),
    ("UpsamplingBilinear2d", (), {"scale_factor": 3}, [(1, 2, 2, 3)]),
    ("PairwiseDistance", (), {}, [(4, 5), (4, 5)]),
    ("PairwiseDistance", (1.0,), {"keepdim": True}, [(4, 5), (5,)]),
    ("PairwiseDistance", (3,), {"eps": 1e-3}, [(2, 3, 4), (3, 4)]),
    ("PairwiseDistance", (float("inf"),), {}, [(4, 5), (4, 5)]),
    ("PairwiseDistance", (), {}, [(5,), (5,)]),
    ("CosineSimilarity", (), {}, [(4, 5), (4, 5)]),
    ("CosineSimilarity", (-1,), {}, [(2, 3, 4), (3, 4)]),
    ("CosineSimilarity", (0, 0.5), {}, [(3, 2), (3, 1)]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, args, kwargs, shapes", LAYERS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(LAYERS)])
def test_layer_matches_torch(name, args, kwargs, shapes, dtype):
    t, e = pair_modules(lambda nn: getattr(nn, name)(*args, **kwargs))
    compare_modules(t, e, [_input(s, dtype, seed=i) for i, s in enumerate(shapes)])


def test_upsample_holds_its_arguments_as_torchs():
    for kwargs in ({"scale_factor": 2}, {"scale_factor": (2, 3)}, {"size": 4},
                   {"scale_factor": 0}):
        t, e = torch.nn.Upsample(**kwargs), enn.Upsample(**kwargs)
        assert (e.name, e.size, e.scale_factor, e.mode, e.align_corners,
                e.recompute_scale_factor) == (t.name, t.size, t.scale_factor, t.mode,
                                              t.align_corners, t.recompute_scale_factor)
        assert repr(e) == repr(t)
    assert enn.UpsamplingBilinear2d(4).align_corners is True


def test_padding_layers_hold_their_padding_as_torchs():
    for name, padding in [("ZeroPad2d", 3), ("ConstantPad3d", (1, 2, 3, 4, 5, 6)),
                          ("ReflectionPad1d", 2), ("CircularPad3d", 1)]:
        args = (padding, 0.0) if name.startswith("Constant") else (padding,)
        t, e = getattr(torch.nn, name)(*args), getattr(enn, name)(*args)
        assert e.padding == t.padding
        assert repr(e) == repr(t)


@pytest.mark.parametrize("build, shapes", [
    (lambda nn: nn.CircularPad2d(1), [(4,)]),
    (lambda nn: nn.CircularPad1d(1), [(1, 2, 3, 4)]),
    (lambda nn: nn.CircularPad1d(5), [(1, 2, 3)]),
    (lambda nn: nn.ReflectionPad1d(3), [(1, 2, 3)]),
    (lambda nn: nn.ReflectionPad2d(1), [(1, 1, 2, 3, 3)]),
    (lambda nn: nn.ReplicationPad3d(1), [(3, 3)]),
    (lambda nn: nn.ZeroPad1d((-3, -2)), [(1, 4)]),
    (lambda nn: nn.PixelShuffle(2), [(1, 6, 2, 2)]),
    (lambda nn: nn.PixelShuffle(2), [(4, 2)]),
    (lambda nn: nn.PixelUnshuffle(2), [(1, 1, 3, 4)]),
    (lambda nn: nn.ChannelShuffle(4), [(1, 6, 2, 2)]),
    (lambda nn: nn.Unfold(2), [(1, 1, 2, 3, 3)]),
    (lambda nn: nn.Unfold(4), [(1, 1, 3, 3)]),
    (lambda nn: nn.Fold((4, 5), 2), [(2, 12, 11)]),
    (lambda nn: nn.Fold((4, 5), 2), [(2, 10, 12)]),
    (lambda nn: nn.Upsample(size=4, scale_factor=2), [(1, 1, 3)]),
    (lambda nn: nn.Upsample(scale_factor=2, mode="bilinear"), [(1, 1, 3)]),
    (lambda nn: nn.Upsample(scale_factor=2, mode="cubic"), [(1, 1, 3, 3)]),
    (lambda nn: nn.Upsample(size=(2, 2)), [(1, 1, 3)]),
    (lambda nn: nn.Upsample(scale_factor=2, mode="nearest", align_corners=True),
     [(1, 1, 3)]),
    (lambda nn: nn.CosineSimilarity(), [(3, 4), (3, 5)]),
    (lambda nn: nn.PairwiseDistance(), [(3, 4), (2, 4)]),
], ids=["circular-1d-input", "circular-4d-input", "circular-wraps-twice",
        "reflect-too-wide", "reflect-5d-input", "replicate-2d-input", "crop-too-much",
        "shuffle-channels", "shuffle-2d-input", "unshuffle-height", "channel-groups",
        "unfold-5d-input", "unfold-kernel-too-big", "fold-blocks", "fold-channels",
        "size-and-scale", "bilinear-1d", "bad-mode", "size-length", "nearest-corners",
        "cosine-shapes", "pairwise-shapes"])
def test_forward_errors_match_torch(build, shapes):
    xs = [_input(s, "float32", seed=i) for i, s in enumerate(shapes)]
    _same_error(lambda nn, lib: build(nn)(*(lib.tensor(x) for x in xs)))
