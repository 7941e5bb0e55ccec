"""Dropout against torch: the share of elements dropped, the kept ones scaled exactly as
torch scales them (torch's own backward applies Ember's mask for the comparison), the
layouts, the special values of p and train, errors; replays from a seed and the native
loop against its numpy reference."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_oracle import check, check_same_error

import ember.core as ember
from ember.core import native
from ember.core.ops import dropout as dropout_ops


def _pair(shape, dtype="float32", seed=0):
    x = np.random.default_rng(seed).normal(0, 1, shape).astype(dtype)
    return ember.from_numpy(x.copy()), torch.from_numpy(x)


def _scale(p):
    return 0.0 if p == 1 else 1 / (1 - p)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64"])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("shape", [(3000,), (40, 70), (5, 1, 9)])
def test_kept_elements_are_scaled_as_torch_scales_them(dtype, p, shape):
    xe, xt = _pair(shape, "float32")
    xe, xt = xe.to(getattr(ember, dtype)), xt.to(getattr(torch, dtype))
    out, mask = ember.native_dropout(xe, p, True)
    assert mask.dtype == ember.bool and out.dtype == xe.dtype
    mask_t = torch.from_numpy(np.array(mask))
    check(out, torch.ops.aten.native_dropout_backward(xt, mask_t, _scale(p)))
    n = mask.numel()
    dropped = n - int(mask.sum())
    # the count of dropped elements is Binomial(n, p): within 5 standard deviations
    assert abs(dropped - n * p) <= 5 * (n * p * (1 - p)) ** 0.5 + 1


def test_dropout_takes_torchs_special_paths():
    xe, xt = _pair((4, 5))
    for p, train in ((0.5, False), (0.0, True)):
        assert ember.dropout(xe, p, train) is xe and torch.dropout(xt, p, train) is xt
    check(ember.dropout(xe, 1.0, True), torch.dropout(xt, 1.0, True))  # -0.0 included
    check(ember.dropout(xe.long(), 1.0, True), torch.dropout(xt.long(), 1.0, True))
    check(ember.native_dropout(xe, 0.5, False), torch.native_dropout(xt, 0.5, False))
    check(ember.native_dropout(xe, 1.0, True), torch.native_dropout(xt, 1.0, True))
    check(ember.native_dropout(xe, 0.0, True), torch.native_dropout(xt, 0.0, True))
    empty_e, empty_t = ember.zeros(0, 3), torch.zeros(0, 3)
    check(ember.dropout(empty_e, 0.5, True), torch.dropout(empty_t, 0.5, True))
    check(ember.native_dropout(empty_e, 0.5, True), torch.native_dropout(empty_t, 0.5, True))


def test_non_finite_inputs_stay_so_where_kept_and_give_nan_where_dropped():
    x = ember.tensor([np.inf, -np.inf, np.nan, -1.0] * 50)
    out, mask = ember.native_dropout(x, 0.5, True)
    xt = torch.from_numpy(np.array(x))
    check(out, torch.ops.aten.native_dropout_backward(xt, torch.from_numpy(np.array(mask)), 2.0))


@pytest.mark.parametrize("layout", ["transposed", "stepped", "expanded"])
def test_results_are_laid_out_as_torchs(layout):
    make = {"transposed": lambda m: m.ones(6, 4).t(),
            "stepped": lambda m: m.ones(4, 12)[:, ::2],
            "expanded": lambda m: m.ones(1, 6).expand(4, 6)}[layout]
    for e, t in zip(ember.native_dropout(make(ember), 0.5, True),
                    torch.native_dropout(make(torch), 0.5, True)):
        assert e.stride() == t.stride() and e.shape == t.shape
    assert ember.dropout(make(ember), 0.5, True).stride() == torch.dropout(
        make(torch), 0.5, True).stride()


def test_a_seed_replays_the_mask_and_the_stream_moves_on():
    x = ember.ones(50, 40)
    ember.manual_seed(7)
    first, second = ember.dropout(x, 0.5, True), ember.dropout(x, 0.5, True)
    ember.manual_seed(7)
    assert ember.equal(ember.dropout(x, 0.5, True), first)
    assert not ember.equal(first, second)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_backward_primitive_matches_torch(dtype):
    ge, gt = _pair((30, 17), dtype)
    mask = np.random.default_rng(1).random((30, 17)) < 0.7
    check(dropout_ops.NATIVE_DROPOUT_BACKWARD(ge, ember.from_numpy(mask), scale=1 / 0.7),
          torch.ops.aten.native_dropout_backward(gt, torch.from_numpy(mask), 1 / 0.7))


@pytest.mark.parametrize("case,phrase", [
    (lambda m: m.dropout(m.ones(3), 1.5, True), "between 0 and 1, but got 1.5"),
    (lambda m: m.dropout(m.ones(3), -0.1, True), "between 0 and 1"),
    (lambda m: m.native_dropout(m.ones(3), 1.5, True), "p to be in [0, 1], but got p=-0.5"),
    (lambda m: m.dropout(m.ones(3).long(), 0.5, True), "output type Long"),
    (lambda m: m.native_dropout(m.ones(3).bool(), 0.5, True), "output type Bool"),
    (lambda m: m.dropout(m.ones(3).to(m.complex64), 0.5, True), "bernoulli_scalar_cpu_"),
    (lambda m: m.dropout([1.0], 0.5, True), "must be Tensor"),
])
def test_errors_match_torch(case, phrase):
    check_same_error(case, phrase)


@pytest.mark.skipif(native._compiler() is None, reason="no C compiler")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_native_loop_agrees_with_its_reference_at_any_thread_count(dtype):
    op = dropout_ops.NATIVE_DROPOUT
    assert op.table["cpu"] is not op.forward
    x = np.random.default_rng(2).normal(0, 1, (300, 301)).astype(dtype)  # threads from 65536
    x[0, :4] = [np.nan, np.inf, -np.inf, -2.0]
    state = ember.default_generator.get_state()._data
    before = ember.get_num_threads()
    fast = op.table["cpu"](state.copy(), x, p=0.3, device=ember.device("cpu"))
    reference = op.forward(state.copy(), x, p=0.3, device=ember.device("cpu"))
    try:
        ember.set_num_threads(1)
        single = op.table["cpu"](state.copy(), x, p=0.3, device=ember.device("cpu"))
    finally:
        ember.set_num_threads(before)
    for a, b, c in zip(fast, reference, single):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    g = x[::-1].copy()
    back = dropout_ops.NATIVE_DROPOUT_BACKWARD
    np.testing.assert_array_equal(back.table["cpu"](g, fast[1], scale=1 / 0.7),
                                  back.forward(g, fast[1], scale=1 / 0.7))
