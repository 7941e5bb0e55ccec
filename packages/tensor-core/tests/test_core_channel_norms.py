"""Batch and group normalization against torch: training and evaluation outputs, the
running statistics, the backward primitives, channels-last layouts, half types with
float32 parameters, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_oracle import check, check_same_error

import ember.core as ember
from ember.core.ops import channel_norms as ops


def _pairs(shapes, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(0.5, 2, s).astype(dtype) for s in shapes]
    return [(ember.from_numpy(a.copy()), torch.from_numpy(a.copy())) for a in arrays]


SHAPES = [(4, 3), (4, 3, 7), (2, 3, 5, 4), (2, 3, 2, 3, 2), (1, 3, 1)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_norm_and_running_statistics_match_torch(shape, training, dtype):
    (xe, xt), (we, wt), (be, bt), (me, mt), (ve, vt) = _pairs(
        [shape, (3,), (3,), (3,), (3,)], dtype)
    ve, vt = ve.abs(), vt.abs()
    check(ember.native_batch_norm(xe, we, be, me, ve, training, 0.2, 1e-5),
          torch.native_batch_norm(xt, wt, bt, mt, vt, training, 0.2, 1e-5))
    check([me, ve], [mt, vt])
    check(ember.batch_norm(xe, None, None, None, None, True, 0.1, 1e-3, False),
          torch.batch_norm(xt, None, None, None, None, True, 0.1, 1e-3, False))


@pytest.mark.parametrize("shape", SHAPES[1:4])
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("mask", [(True, True, True), (True, False, False),
                                  (False, True, True)])
def test_batch_norm_backward_matches_torch(shape, train, mask):
    (xe, xt), (ge, gt), (we, wt), (me, mt), (ve, vt) = _pairs(
        [shape, shape, (3,), (3,), (3,)], "float64")
    ve, vt = ve.abs(), vt.abs()
    _, se, ie = ember.native_batch_norm(xe, we, None, me.clone(), ve.clone(), train, 0.1, 1e-5)
    _, st, it = torch.native_batch_norm(xt, wt, None, mt.clone(), vt.clone(), train, 0.1, 1e-5)
    check(list(ops.BATCH_NORM_BACKWARD(ge, xe, we, me, ve, se, ie, train=train, eps=1e-5,
                                       output_mask=mask)),
          list(torch.ops.aten.native_batch_norm_backward(gt, xt, wt, mt, vt, st, it, train,
                                                         1e-5, list(mask))))


@pytest.mark.parametrize("shape,groups", [((4, 6, 5), 3), ((2, 6, 3, 3), 6), ((3, 4), 1),
                                          ((2, 4, 0), 2), ((0, 0), 2), ((0, 4, 3), 2)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_group_norm_and_its_backward_match_torch(shape, groups, dtype):
    c = shape[1]
    (xe, xt), (ge, gt), (we, wt), (be, bt) = _pairs([shape, shape, (c,), (c,)], dtype)
    oe = ember.native_group_norm(xe, we, be, shape[0], c, 0, groups, 1e-5)
    ot = torch.native_group_norm(xt, wt, bt, shape[0], c, int(np.prod(shape[2:])), groups,
                                 1e-5)
    check(oe, ot)
    check(ember.group_norm(xe, groups), torch.group_norm(xt, groups))
    if xe.numel():
        hw = int(np.prod(shape[2:]))
        check(list(ops.GROUP_NORM_BACKWARD(ge, xe, oe[1], oe[2], we, group=groups,
                                           output_mask=(True, True, True))),
              list(torch.ops.aten.native_group_norm_backward(gt, xt, ot[1], ot[2], wt,
                                                             shape[0], c, hw, groups,
                                                             [True, True, True])))


def test_channels_last_and_half_inputs_match_torch():
    (xe, xt), (we, wt), (be, bt) = _pairs([(2, 3, 4, 5), (3,), (3,)])
    xe, xt = (x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2) for x in (xe, xt))
    for e, t in zip(ember.native_batch_norm(xe, we, be, None, None, True, 0.1, 1e-5),
                    torch.native_batch_norm(xt, wt, bt, None, None, True, 0.1, 1e-5)):
        check(e, t)
        assert e.stride() == t.stride()
    check(ember.native_batch_norm(xe.half(), we, be, None, None, True, 0.1, 1e-5),
          torch.native_batch_norm(xt.half(), wt, bt, None, None, True, 0.1, 1e-5))
    (ye, yt), (ve, vt) = _pairs([(2, 6, 5), (6,)])
    check(ember.native_group_norm(ye.bfloat16(), ve, None, 2, 6, 5, 3, 1e-5),
          torch.native_group_norm(yt.bfloat16(), vt, None, 2, 6, 5, 3, 1e-5))


@pytest.mark.skipif(ember.native._compiler() is None, reason="no C compiler")
@pytest.mark.parametrize("shape", [(1, 1), (1, 1, 3), (2, 4, 1)])
def test_native_group_norm_of_constant_groups_rounds_as_torchs(shape):
    """x at its group's mean, a large rstd (eps 1e-12): torch's loop computes (x - mean) *
    rstd without parameters (exactly 0), and x * scale + shift with them (a fused
    multiply-add's rounding), as the native loop does (the reference's (x - mean) * rstd *
    w + b gives 0 there, within its tolerance of torch)."""
    x = np.full(shape, -2.514699935913086, np.float32)
    c = shape[1]
    for params in ((None, None), (np.ones(c, np.float32), np.zeros(c, np.float32))):
        e = [None if p is None else ember.from_numpy(p) for p in params]
        t = [None if p is None else torch.from_numpy(p) for p in params]
        check(ember.group_norm(ember.from_numpy(x), 1, *e, 1e-12),
              torch.group_norm(torch.from_numpy(x), 1, *t, 1e-12), rtol=0, atol=0)


@pytest.mark.parametrize("shape,c", [((0,), 4), ((0, 3), 4), ((2, 3, 0), 3)])
def test_batch_norm_of_an_empty_input_is_torchs_copy_times_the_first_weight(shape, c):
    for training in (True, False):
        check(ember.batch_norm(ember.zeros(shape), ember.linspace(0.5, 1.5, c),
                               ember.linspace(-1, 1, c), ember.zeros(c), ember.ones(c), training,
                               0.1, 1e-5, False),
              torch.batch_norm(torch.zeros(shape), torch.linspace(0.5, 1.5, c),
                               torch.linspace(-1, 1, c), torch.zeros(c), torch.ones(c), training,
                               0.1, 1e-5, False))


@pytest.mark.parametrize("case,phrase", [
    (lambda m: m.batch_norm(m.ones(4, 3), m.ones(4), None, None, None, True, 0.1, 1e-5,
                            False), "weight should contain 3 elements not 4"),
    (lambda m: m.batch_norm(m.ones(4, 3).long(), None, None, None, None, True, 0.1, 1e-5,
                            False), "not implemented for 'Long'"),
    (lambda m: m.batch_norm(m.ones(4, 3).double(), m.ones(3), None, None, None, True, 0.1,
                            1e-5, False), "share same datatype"),
    (lambda m: m.group_norm(m.ones(4, 3, 5), 2), "divisible by num_groups"),
    (lambda m: m.group_norm(m.ones(4, 6, 5).long(), 3), "GroupNormKernelImpl"),
    (lambda m: m.group_norm(m.ones(4, 6, 5), 3, m.ones(5)), "Expected weight to be a vector"),
    (lambda m: m.group_norm(m.tensor(2.0), 1, m.ones(1)), "tensor has no dimensions"),
    (lambda m: m.group_norm(m.ones(4), 1), "Dimension out of range"),
    (lambda m: m.group_norm(m.ones(2, 4).long(), 2, m.ones(4)), "share same datatype"),
    (lambda m: m.batch_norm(m.zeros(2, 0), m.ones(0), None, m.ones(0), m.ones(0), False, 0.1,
                            1e-5, False), "index 0"),
])
def test_errors_match_torch(case, phrase):
    check_same_error(case, phrase)


@pytest.mark.skipif(ember.native._compiler() is None, reason="no C compiler")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_native_group_norm_agrees_with_its_reference_at_any_thread_count(dtype):
    rng = np.random.default_rng(5)
    # past the size the loops thread from
    x, g = (rng.normal(0, 2, (8, 64, 520)).astype(dtype) for _ in range(2))
    w, b = (rng.normal(0, 1, 64).astype(dtype) for _ in range(2))
    mask = (True, True, True)
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-12,
                                                                      "atol": 1e-12}
    forward, backward = ops.GROUP_NORM, ops.GROUP_NORM_BACKWARD
    assert forward.table["cpu"] is not forward.forward
    before = ember.get_num_threads()
    runs = []
    try:
        for threads in (1, before):
            ember.set_num_threads(threads)
            out = forward.table["cpu"](x, w, b, group=8, eps=1e-5)
            runs.append((*out, *backward.table["cpu"](g, x, out[1], out[2], w, group=8,
                                                      output_mask=mask)))
    finally:
        ember.set_num_threads(before)
    ref = forward.forward(x, w, b, group=8, eps=1e-5)
    ref = (*ref, *backward.forward(g, x, ref[1], ref[2], w, group=8, output_mask=mask))
    for run in runs:
        for a, r in zip(run, ref):
            np.testing.assert_allclose(a, r, **tol)


@pytest.mark.skipif(ember.native._compiler() is None, reason="no C compiler")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(3000, 100), (8, 64, 520)])  # (threaded sizes)
def test_native_batch_norm_agrees_with_its_reference_at_any_thread_count(dtype, shape):
    rng = np.random.default_rng(6)
    x, g = (rng.normal(0.5, 2, shape).astype(dtype) for _ in range(2))
    c = shape[1]
    w, b, rm = (rng.normal(0, 1, c).astype(dtype) for _ in range(3))
    rv = rng.random(c).astype(dtype) + 0.5
    mask = (True, True, True)
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-11,
                                                                      "atol": 1e-12}
    calls = [
        (ops.BATCH_NORM, (x, w, b, rm, rv), {"momentum": 0.1, "eps": 1e-5}),
        (ops.BATCH_NORM_EVAL, (x, w, b, rm, rv), {"eps": 1e-5}),
    ]
    _, mean, invstd, _, _ = ops.BATCH_NORM.forward(x, w, b, rm, rv, momentum=0.1, eps=1e-5)
    for train in (True, False):
        calls.append((ops.BATCH_NORM_BACKWARD, (g, x, w, rm, rv, mean, invstd),
                      {"train": train, "eps": 1e-5, "output_mask": mask}))
    before = ember.get_num_threads()
    for op, args, params in calls:
        assert op.table["cpu"] is not op.forward
        ref = op.forward(*args, **params)
        try:
            for threads in (1, before):
                ember.set_num_threads(threads)
                for a, r in zip(op.table["cpu"](*args, **params), ref):
                    np.testing.assert_allclose(a, r, **tol)
        finally:
            ember.set_num_threads(before)
