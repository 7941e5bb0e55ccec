"""The normalization layers against torch.nn's: LayerNorm, GroupNorm, RMSNorm,
LocalResponseNorm, CrossMapLRN2d, BatchNorm1d/2d/3d, SyncBatchNorm and InstanceNorm1d/2d/3d
with their options; outputs, input and parameter gradients, running statistics after each
of several training steps (momentum a float and None), eval on the running statistics,
default initialisation, state dict keys and versions, the Lazy forms, and torch's
exception types."""

from __future__ import annotations

import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch
from nn_oracle import check_close, compare_modules, pair_modules, to_ember

import ember.core as E
import ember.nn as enn

DTYPES = ["float32", "float64"]


def _input(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (1.5 * rng.standard_normal(shape) + 0.5).astype(dtype)


def _same_error(program):
    """``program(nn, lib)`` raises under torch; under Ember it raises the same type."""
    with pytest.raises(Exception) as expected:
        program(torch.nn, torch)
    with pytest.raises(Exception) as got:
        program(enn, E)
    assert type(got.value) is type(expected.value), (expected.value, got.value)


def _perturbed(name, *args, **kwargs):
    """``nn.<name>(*args, **kwargs)`` whose torch instance has random parameters (Ember's
    receives them through the state dict), so the affine part is tested too."""
    def build(nn):
        m = getattr(nn, name)(*args, **kwargs)
        if nn is torch.nn:
            gen = torch.Generator().manual_seed(1)
            with torch.no_grad():
                for p in m.parameters():
                    p.add_(0.5 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
        return m
    return build


# --------------------------------------------------------------------------- per-sample

PER_SAMPLE = [
    # (layer, constructor args, constructor kwargs, input shape)
    ("LayerNorm", (4,), {}, (3, 4)),
    ("LayerNorm", ([3, 4],), {"eps": 1e-3}, (2, 3, 4)),
    ("LayerNorm", ((2, 3),), {"elementwise_affine": False}, (4, 2, 3)),
    ("LayerNorm", (5,), {"bias": False}, (2, 3, 5)),
    ("GroupNorm", (2, 4), {}, (3, 4, 5)),
    ("GroupNorm", (3, 6), {"eps": 1e-3}, (2, 6, 3, 2)),
    ("GroupNorm", (1, 3), {"affine": False}, (2, 3, 2, 2, 2)),
    ("GroupNorm", (4, 4), {"bias": False}, (2, 4, 3)),
    ("GroupNorm", (2, 4), {}, (2, 4)),
    ("RMSNorm", (4,), {}, (3, 4)),
    ("RMSNorm", ([2, 4],), {"eps": 1e-3}, (3, 2, 4)),
    ("RMSNorm", (3,), {"elementwise_affine": False}, (2, 3)),
    ("LocalResponseNorm", (2,), {}, (2, 5, 4)),
    ("LocalResponseNorm", (3,), {"alpha": 0.1, "beta": 0.5, "k": 2.0}, (2, 6, 3, 3)),
    ("LocalResponseNorm", (5,), {"alpha": 0.2}, (1, 7, 2, 2, 3)),
    ("CrossMapLRN2d", (3,), {"alpha": 0.1}, (2, 4, 3, 3)),
    ("CrossMapLRN2d", (5,), {"alpha": 0.3, "beta": 0.6, "k": 2}, (2, 7, 2, 3)),
    ("CrossMapLRN2d", (4,), {"alpha": 0.3}, (1, 6, 3, 2)),
    ("CrossMapLRN2d", (6,), {"alpha": 0.5}, (2, 3, 2, 2)),
    ("CrossMapLRN2d", (2,), {"alpha": 0.5}, (2, 1, 2, 2)),
]


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, args, kwargs, shape", PER_SAMPLE,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(PER_SAMPLE)])
def test_per_sample_norm_matches_torch(name, args, kwargs, shape, dtype, train):
    t, e = pair_modules(_perturbed(name, *args, **kwargs), dtype=dtype)
    compare_modules(t, e, [_input(shape, dtype)], train=train)


@pytest.mark.parametrize("name, args, kwargs", [
    ("LayerNorm", (4,), {}), ("LayerNorm", ((2, 3),), {"bias": False}),
    ("LayerNorm", (3,), {"elementwise_affine": False}), ("GroupNorm", (2, 4), {}),
    ("GroupNorm", (2, 4), {"affine": False}), ("RMSNorm", ([2, 3],), {}),
    ("RMSNorm", (2,), {"elementwise_affine": False})])
def test_default_parameters_and_keys(name, args, kwargs):
    t, e = getattr(torch.nn, name)(*args, **kwargs), getattr(enn, name)(*args, **kwargs)
    assert list(t.state_dict()) == list(e.state_dict())
    for (n, p), (_, q) in zip(t.named_parameters(), e.named_parameters()):
        check_close(p, q, n)
    assert [n for n, _ in t.named_parameters()] == [n for n, _ in e.named_parameters()]
    assert getattr(e, "normalized_shape", None) == getattr(t, "normalized_shape", None)
    assert repr(t) == repr(e)
    for p in e.parameters():
        p.data.fill_(3.0)
    e.reset_parameters()
    for (n, p), (_, q) in zip(t.named_parameters(), e.named_parameters()):
        check_close(p, q, n)


def test_cross_map_lrn_backward_refuses_size_one():
    x = _input((2, 3, 2, 2), "float64")
    for nn, lib in ((torch.nn, torch), (enn, E)):
        leaf = lib.tensor(x, requires_grad=True)
        out = nn.CrossMapLRN2d(1, alpha=0.1)(leaf)
        with pytest.raises(RuntimeError, match="exceeds dimension size"):
            out.sum().backward()
    t, e = pair_modules(lambda nn: nn.CrossMapLRN2d(1, alpha=0.1))
    compare_modules(t, e, [_input((2, 3, 2, 2), "float32")], grad=False)


@pytest.mark.parametrize("program", [
    lambda nn, lib: nn.GroupNorm(3, 4),
    lambda nn, lib: nn.GroupNorm(2, 4)(lib.ones(2, 6, 3)),
    lambda nn, lib: nn.GroupNorm(2, 4)(lib.ones(4)),
    lambda nn, lib: nn.LayerNorm(4)(lib.ones(2, 3)),
    lambda nn, lib: nn.LayerNorm((2, 4))(lib.ones(4, 2)),
    lambda nn, lib: nn.RMSNorm(4)(lib.ones(2, 3)),
    lambda nn, lib: nn.LocalResponseNorm(2)(lib.ones(2, 3)),
    lambda nn, lib: nn.CrossMapLRN2d(3)(lib.ones(2, 3, 4)),
    lambda nn, lib: nn.CrossMapLRN2d(0)(lib.ones(1, 2, 3, 4)),
], ids=["groups", "group-channels", "group-1d", "layer-shape", "layer-order", "rms-shape",
        "lrn-2d", "crossmap-3d", "crossmap-size0"])
def test_per_sample_errors_match_torch(program):
    _same_error(program)


# --------------------------------------------------------------------------- batch norm

BATCH = [
    # (layer, constructor kwargs, input shape)
    ("BatchNorm1d", {}, (5, 3)),
    ("BatchNorm1d", {"momentum": 0.3}, (4, 3, 6)),
    ("BatchNorm1d", {"momentum": None, "eps": 1e-3}, (4, 3)),
    ("BatchNorm2d", {}, (3, 4, 3, 2)),
    ("BatchNorm2d", {"affine": False}, (2, 4, 3, 3)),
    ("BatchNorm2d", {"track_running_stats": False}, (2, 4, 2, 3)),
    ("BatchNorm2d", {"affine": False, "track_running_stats": False}, (2, 4, 2, 3)),
    ("BatchNorm2d", {"bias": False, "momentum": None}, (2, 4, 2, 3)),
    ("BatchNorm3d", {}, (2, 3, 2, 3, 2)),
    ("BatchNorm3d", {"momentum": None}, (2, 3, 2, 2, 2)),
    ("SyncBatchNorm", {}, (4, 3)),
    ("SyncBatchNorm", {"momentum": None}, (2, 3, 4, 2)),
    ("SyncBatchNorm", {"track_running_stats": False}, (2, 3, 2, 2, 2)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, kwargs, shape", BATCH,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(BATCH)])
def test_batch_norm_steps_match_torch(name, kwargs, shape, dtype):
    """Several training steps (running statistics compared after each), then eval on the
    running statistics, then training again."""
    t, e = pair_modules(_perturbed(name, shape[1], **kwargs), dtype=dtype)
    for step in range(4):
        compare_modules(t, e, [_input(shape, dtype, seed=step)], train=True, seed=step)
        if t.num_batches_tracked is not None:
            assert int(e.num_batches_tracked) == int(t.num_batches_tracked) == step + 1
    compare_modules(t, e, [_input(shape, dtype, seed=9)], train=False)
    compare_modules(t, e, [_input(shape, dtype, seed=10)], train=True)


def test_momentum_none_is_the_cumulative_average():
    m = enn.BatchNorm1d(2, momentum=None)
    batches = [_input((6, 2), "float64", seed=s) for s in range(5)]
    m.double()
    for x in batches:
        m(E.tensor(x))
    np.testing.assert_allclose(m.running_mean.numpy(), np.mean([b.mean(0) for b in batches], 0),
                               rtol=1e-12)
    np.testing.assert_allclose(m.running_var.numpy(),
                               np.mean([b.var(0, ddof=1) for b in batches], 0), rtol=1e-12)


def test_batch_norm_buffers_keys_and_reset():
    for kwargs in ({}, {"affine": False}, {"track_running_stats": False}, {"bias": False}):
        t, e = torch.nn.BatchNorm2d(3, **kwargs), enn.BatchNorm2d(3, **kwargs)
        assert list(t.state_dict()) == list(e.state_dict())
        assert [n for n, _ in t.named_buffers()] == [n for n, _ in e.named_buffers()]
        assert e.state_dict()._metadata[""] == {"version": 2}
        assert repr(t) == repr(e)
    e = enn.BatchNorm2d(3)
    assert e.num_batches_tracked.dtype == E.int64 and e.num_batches_tracked.dim() == 0
    assert e.running_mean.tolist() == [0.0] * 3 and e.running_var.tolist() == [1.0] * 3
    e(E.tensor(_input((2, 3, 2, 2), "float32")))
    e.reset_running_stats()
    assert e.running_mean.tolist() == [0.0] * 3 and e.running_var.tolist() == [1.0] * 3
    assert int(e.num_batches_tracked) == 0
    e.weight.data.fill_(2.0)
    e.reset_parameters()
    assert e.weight.tolist() == [1.0] * 3 and e.bias.tolist() == [0.0] * 3
    f = enn.BatchNorm1d(2, dtype=E.float64)
    assert f.weight.dtype == f.running_var.dtype == E.float64
    assert f.num_batches_tracked.dtype == E.int64


def test_version_one_checkpoint_keeps_num_batches_tracked():
    for nn, lib in ((torch.nn, torch), (enn, E)):
        m = nn.BatchNorm1d(2)
        m.num_batches_tracked.fill_(5)
        state = OrderedDict((k, v) for k, v in m.state_dict().items()
                            if k != "num_batches_tracked")
        state._metadata = OrderedDict({"": {"version": 1}})
        result = m.load_state_dict(state)
        assert result.missing_keys == [] and int(m.num_batches_tracked) == 5
        state._metadata = OrderedDict({"": {"version": 2}})
        with pytest.raises(RuntimeError, match='Missing key.*"num_batches_tracked"'):
            m.load_state_dict(state)


def test_eval_without_running_stats_uses_the_batch():
    t, e = pair_modules(lambda nn: nn.BatchNorm2d(3, track_running_stats=False))
    compare_modules(t, e, [_input((2, 3, 2, 2), "float32")], train=False)
    # statistics tracked but set to None afterwards: eval normalizes by the batch, as torch
    t, e = pair_modules(lambda nn: nn.BatchNorm1d(3))
    for m in (t, e):
        m.running_mean = None
        m.running_var = None
    compare_modules(t, e, [_input((4, 3), "float32")], train=False)


@pytest.mark.parametrize("program", [
    lambda nn, lib: nn.BatchNorm1d(3)(lib.ones(2, 3, 4, 5)),
    lambda nn, lib: nn.BatchNorm1d(3)(lib.ones(3)),
    lambda nn, lib: nn.BatchNorm2d(3)(lib.ones(2, 3, 4)),
    lambda nn, lib: nn.BatchNorm3d(3)(lib.ones(2, 3, 4, 4)),
    lambda nn, lib: nn.BatchNorm1d(3)(lib.ones(1, 3)),
    lambda nn, lib: nn.BatchNorm2d(3)(lib.ones(2, 4, 2, 2)),
    lambda nn, lib: nn.BatchNorm1d(3, eps=0.0)(lib.ones(2, 3)),
    lambda nn, lib: nn.SyncBatchNorm(3)(lib.ones(3)),
    lambda nn, lib: nn.SyncBatchNorm(0)(lib.ones(2, 0)),
], ids=["1d-4d", "1d-1d", "2d-3d", "3d-4d", "one-value", "channels", "eps", "sync-1d",
        "sync-no-channels"])
def test_batch_norm_errors_match_torch(program):
    _same_error(program)


def test_sync_batch_norm_is_batch_norm_and_converts():
    def net(nn):
        inner = nn.Sequential(nn.BatchNorm2d(3, momentum=None), nn.ReLU())
        return nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2, affine=False), inner)

    t, e = net(torch.nn), net(enn)
    e.eval()
    original = e[2][0]
    tc = torch.nn.SyncBatchNorm.convert_sync_batchnorm(t)
    ec = enn.SyncBatchNorm.convert_sync_batchnorm(e, process_group="group")
    assert repr(tc) == repr(ec)
    assert list(tc.state_dict()) == list(ec.state_dict())
    converted = ec[2][0]
    assert type(converted) is enn.SyncBatchNorm and converted.process_group == "group"
    assert converted.weight is original.weight and converted.running_mean is original.running_mean
    assert converted.num_batches_tracked is original.num_batches_tracked
    assert not converted.training and type(ec[1]) is enn.SyncBatchNorm
    lone = enn.BatchNorm1d(2)
    assert type(enn.SyncBatchNorm.convert_sync_batchnorm(lone)) is enn.SyncBatchNorm
    assert enn.SyncBatchNorm.convert_sync_batchnorm(enn.ReLU()).__class__ is enn.ReLU


LAZY = [("LazyBatchNorm1d", "BatchNorm1d", {}, (4, 3)),
        ("LazyBatchNorm2d", "BatchNorm2d", {"affine": False}, (2, 3, 2, 2)),
        ("LazyBatchNorm3d", "BatchNorm3d", {"momentum": None}, (2, 3, 2, 1, 2)),
        ("LazyInstanceNorm1d", "InstanceNorm1d", {}, (2, 3, 5)),
        ("LazyInstanceNorm2d", "InstanceNorm2d", {"track_running_stats": False}, (2, 3, 2, 3)),
        ("LazyInstanceNorm3d", "InstanceNorm3d", {"affine": False}, (2, 3, 2, 2, 3))]


@pytest.mark.parametrize("lazy, eager, kwargs, shape", LAZY, ids=[c[0] for c in LAZY])
def test_lazy_norms_become_their_eager_class(lazy, eager, kwargs, shape):
    t, e = getattr(torch.nn, lazy)(**kwargs), getattr(enn, lazy)(**kwargs)
    assert [n for n, _ in t.named_parameters()] == [n for n, _ in e.named_parameters()]
    assert [n for n, _ in t.named_buffers()] == [n for n, _ in e.named_buffers()]
    assert e.has_uninitialized_params()
    x = _input(shape, "float32")
    check_close(t(torch.tensor(x)), e(E.tensor(x)), "first output")
    assert type(e) is getattr(enn, eager) and e.num_features == t.num_features
    assert list(t.state_dict()) == list(e.state_dict())
    for (n, b), (_, c) in zip(t.state_dict().items(), e.state_dict().items()):
        check_close(b, c, n)
    assert repr(t) == repr(e)
    # a fresh lazy module takes its shapes from a checkpoint
    fresh = getattr(enn, lazy)(**kwargs)
    fresh.load_state_dict(e.state_dict())
    assert type(fresh) is getattr(enn, lazy) and not fresh.has_uninitialized_params()


# --------------------------------------------------------------------------- instance norm

INSTANCE = [
    # (layer, constructor kwargs, input shape)
    ("InstanceNorm1d", {}, (2, 3, 5)),
    ("InstanceNorm1d", {"affine": True}, (3, 6)),
    ("InstanceNorm1d", {"track_running_stats": True, "momentum": 0.3}, (2, 3, 4)),
    ("InstanceNorm2d", {"affine": True, "track_running_stats": True}, (2, 3, 3, 2)),
    ("InstanceNorm2d", {"affine": True, "bias": False}, (3, 2, 4)),
    ("InstanceNorm2d", {"track_running_stats": True, "momentum": None}, (3, 3, 4)),
    ("InstanceNorm3d", {"eps": 1e-3}, (2, 3, 2, 2, 3)),
    ("InstanceNorm3d", {"affine": True, "track_running_stats": True}, (3, 2, 3, 2)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, kwargs, shape", INSTANCE,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(INSTANCE)])
def test_instance_norm_steps_match_torch(name, kwargs, shape, dtype):
    channels = shape[1] if len(shape) == int(name[-2]) + 2 else shape[0]
    t, e = pair_modules(_perturbed(name, channels, **kwargs), dtype=dtype)
    for step in range(3):
        compare_modules(t, e, [_input(shape, dtype, seed=step)], train=True, seed=step)
    compare_modules(t, e, [_input(shape, dtype, seed=7)], train=False)


def test_instance_norm_channel_mismatch():
    x = _input((2, 5, 4), "float32")
    for nn, lib in ((torch.nn, torch), (enn, E)):
        with pytest.warns(UserWarning, match="does not match num_features"):
            nn.InstanceNorm1d(3)(lib.tensor(x))
    _same_error(lambda nn, lib: nn.InstanceNorm1d(3, affine=True)(lib.tensor(x)))
    _same_error(lambda nn, lib: nn.InstanceNorm2d(3)(lib.ones(3, 4)))
    _same_error(lambda nn, lib: nn.InstanceNorm3d(3)(lib.ones(1, 3, 2, 2, 2, 2)))
    _same_error(lambda nn, lib: nn.InstanceNorm1d(3)(lib.ones(2, 3, 1)))
    with warnings.catch_warnings():  # a lazy one takes dim 1 even of an unbatched input
        warnings.simplefilter("ignore")
        _same_error(lambda nn, lib: nn.LazyInstanceNorm3d(affine=False)(lib.ones(3, 2, 2, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enn.InstanceNorm1d(5)(E.tensor(x))


def test_instance_norm_old_checkpoint_with_running_stats():
    for nn, lib in ((torch.nn, torch), (enn, E)):
        m = nn.InstanceNorm1d(2, affine=True)
        state = OrderedDict(m.state_dict())
        state["running_mean"] = lib.zeros(2)
        state["running_var"] = lib.ones(2)
        state._metadata = OrderedDict({"": {}})
        with pytest.raises(RuntimeError, match='Unexpected running stats buffer.s. '
                                               '"running_mean" and "running_var"'):
            m.load_state_dict(state)
        state._metadata = OrderedDict({"": {"version": 2}})
        with pytest.raises(RuntimeError, match="Unexpected key"):
            m.load_state_dict(state)


def test_instance_norm_defaults_and_keys():
    for name in ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"):
        for kwargs in ({}, {"affine": True}, {"track_running_stats": True}):
            t, e = getattr(torch.nn, name)(4, **kwargs), getattr(enn, name)(4, **kwargs)
            assert list(t.state_dict()) == list(e.state_dict())
            assert repr(t) == repr(e)
            for (n, b), (_, c) in zip(t.state_dict().items(), e.state_dict().items()):
                check_close(b, c, n)


def test_norms_run_in_half_precision():
    x = torch.randn(2, 3, 4)
    for build in (lambda nn: nn.LayerNorm(4), lambda nn: nn.GroupNorm(3, 3)):
        t, e = pair_modules(build, dtype="bfloat16")
        check_close(t(x.to(torch.bfloat16)), e(to_ember(x.to(torch.bfloat16))), "bfloat16")
