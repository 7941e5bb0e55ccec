"""The one-pass optimizer steps (``optimizer_steps``): each native loop gives its numpy
reference's bits, at one thread and two, for every combination of its flags, in float32,
float64, bfloat16 and float16, over tensors of odd sizes, one past the size the loops
thread from, a permuted and a strided one; and the checks before anything is written.
The optimizer tests (packages/optim) compare the steps with torch's per-parameter loops."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from dispatch_oracle import same

import ember.core as ember
from ember.core import native
from ember.core.ops.optimizer_steps import NATIVE, STEPS

needs_compiler = pytest.mark.skipif(native._compiler() is None, reason="no C compiler")
BY_NAME = {step.name: step for step in STEPS}
SIZES = [(70001,), (3,), (4 * 65536 + 5,), (40, 30), (1,), (0,)]
DTYPES = ("float32", "float64", "bfloat16", "float32", "float16", "float32")

# each step's options: the flags' values come from these, every combination
OPTIONS = {
    "_fused_rmsprop_": [dict(lr=0.01, alpha=a, eps=1e-8, weight_decay=wd, momentum=mom,
                             centered=c, maximize=mx)
                        for a, wd, mom, c, mx in itertools.product(
                            (0.99, 0.3), (0.0, 0.1), (0.0, 0.9), (False, True), (False, True))],
    "_fused_adadelta_": [dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=wd, maximize=mx)
                         for wd, mx in itertools.product((0.0, 0.1), (False, True))],
    "_fused_adamax_": [dict(lr=2e-3, beta1=b1, beta2=0.999, eps=1e-8, weight_decay=wd,
                            maximize=mx)
                       for b1, wd, mx in itertools.product((0.9, 0.3), (0.0, 0.1),
                                                           (False, True))],
    "_fused_nadam_": [dict(lr=2e-3, beta1=b1, beta2=0.999, eps=1e-8, weight_decay=wd,
                           momentum_decay=4e-3, decoupled_weight_decay=dec, maximize=mx)
                      for b1, wd, dec, mx in itertools.product((0.9, 0.3), (0.0, 0.1),
                                                               (False, True), (False, True))],
    "_fused_radam_": [dict(lr=1e-3, beta1=b1, beta2=0.999, eps=1e-8, weight_decay=wd,
                           decoupled_weight_decay=dec, maximize=mx)
                      for b1, wd, dec, mx in itertools.product((0.9, 0.3), (0.0, 0.1),
                                                               (False, True), (False, True))],
    "_fused_asgd_": [dict(lambd=1e-4, weight_decay=wd, maximize=mx)
                     for wd, mx in itertools.product((0.0, 0.1), (False, True))],
    "_fused_rprop_": [dict(etaminus=0.5, etaplus=1.2, step_size_min=1e-6, step_size_max=0.05,
                           maximize=mx) for mx in (False, True)],
}
# the 0-d state each step reads, one value per tensor: steps before and after RAdam's
# rectification starts, ASGD tensors still averaging and not yet
SCALARS = {"state_steps": [3.0, 1.0, 12.0, 6.0, 2.0, 3.0],
           "mu_products": [0.7, 0.9, 0.2, 0.5, 0.8, 0.7],
           "mus": [1.0, 0.5, 0.25, 1.0, 0.1, 1.0], "etas": [0.01, 0.02, 0.005, 0.01, 0.01, 0.01]}


def _arrays(step, params, seed):
    """Every operand of one call as arrays: the lists (absent ones empty), then the 0-d
    state lists."""
    rng = np.random.default_rng(seed)
    flags = step.flags(params)
    lists = []
    for k, operand in enumerate(step.operands):
        if operand.when is not None and not flags[operand.when]:
            lists.append([])
            continue
        arrays = []
        for i, (s, dt) in enumerate(zip(SIZES, DTYPES)):
            # states that torch keeps nonnegative (averages of squares, step sizes) are so
            values = rng.normal(0, 1, s) if k < 2 or operand.alias in ("m", "ga", "b", "ax",
                                                                       "prev") \
                else rng.uniform(0, 0.1, s)
            a = values.astype(np.float32).astype(getattr(ember, dt).np)
            if i == 3 and k == 0:
                a = np.ascontiguousarray(a.T).T
            if i == 3 and k == 1:
                a = np.repeat(a, 2, axis=1)[:, ::2]
            arrays.append(a)
        lists.append(arrays)
    scalars = [[np.full((), v, np.float32) for v in SCALARS[name]] for name in step.scalar_lists]
    return lists, scalars


@needs_compiler
@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_native_loops_give_their_references_bits_at_one_thread_and_two(name):
    step = BY_NAME[name]
    op = step.op[0]
    assert op.table["cpu"] is not op.forward and NATIVE(f"{name}_f32") is not None
    for n, params in enumerate(OPTIONS[name]):
        results = []
        for run, threads in (("reference", None), ("native", 1), ("native", 2)):
            lists, scalars = _arrays(step, params, n)
            kernel = op.forward if run == "reference" else op.table["cpu"]
            before = ember.get_num_threads()
            try:
                ember.set_num_threads(threads or before)
                assert kernel(*lists, *scalars, **params) is None
            finally:
                ember.set_num_threads(before)
            results.append([a for arrays in lists for a in arrays])
        for a, b, c in zip(*results):
            assert same(b, a) and same(c, a), (params, a.dtype, a.shape)


def test_every_step_has_options_here():
    assert sorted(OPTIONS) == sorted(BY_NAME)


def _tensors(step, params, seed=0):
    lists, scalars = _arrays(step, params, seed)
    return [[ember.from_numpy(a.copy()) for a in arrays] for arrays in lists + scalars]


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_bad_lists_are_refused_before_anything_is_written(name):
    step = BY_NAME[name]
    params = OPTIONS[name][-1]
    lists = _tensors(step, params)
    before = [t.clone() for t in lists[0]]
    bad = [list(ts) for ts in lists]
    bad[2] = bad[2][:-1]  # a state list one tensor short
    with pytest.raises(RuntimeError, match="expected 6 tensors in"):
        getattr(ember, name)(*bad, **params)
    bad = [list(ts) for ts in lists]
    bad[2][1] = ember.zeros(4, dtype=bad[2][1].dtype)  # a state tensor of another shape
    with pytest.raises(RuntimeError, match=r"has shape \(4,\), expected self\[1\]'s \(3,\)"):
        getattr(ember, name)(*bad, **params)
    with pytest.raises(TypeError, match="keyword arguments"):
        getattr(ember, name)(*lists, **{**params, "bogus": 1})
    assert all(same(a.numpy(), b.numpy()) for a, b in zip(lists[0], before))
