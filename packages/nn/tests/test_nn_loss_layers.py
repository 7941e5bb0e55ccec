"""The loss modules against torch.nn's: the loss and the gradients of every floating input
(float32 and float64) for each loss over its options and the three reductions; class
weights and ``pos_weight`` as buffers (state dict keys, ``.to()``); the legacy
``size_average``/``reduce``; NLLLoss2d's deprecation; ``repr`` and torch's exception
types."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest
import torch
from nn_oracle import compare_modules, pair_modules

import ember.core as E
import ember.nn as enn

DTYPES = ["float32", "float64"]
REDUCTIONS = ["none", "mean", "sum"]
RNG = np.random.default_rng(0)


def _lib(nn):
    return torch if nn is torch.nn else E


def _normal(*shape):
    return RNG.standard_normal(shape)


def _uniform(*shape, low=0.05, high=0.95):
    return RNG.uniform(low, high, shape)


def _signs(*shape):
    return np.where(RNG.standard_normal(shape) > 0, 1.0, -1.0)


def _classes(*shape, high):
    return RNG.integers(0, high, shape).astype("int64")


def _log_probs(*shape, dim=1):
    x = RNG.standard_normal(shape)
    return x - np.log(np.exp(x).sum(dim, keepdims=True))


def _probs(*shape, dim=1):
    x = np.exp(RNG.standard_normal(shape))
    return x / x.sum(dim, keepdims=True)


def _same_error(program):
    with pytest.raises(Exception) as expected:
        program(torch.nn, torch)
    with pytest.raises(Exception) as got:
        program(enn, E)
    assert type(got.value) is type(expected.value), (expected.value, got.value)


class _PerLibrary:
    """A constructor argument made for the library of ``nn``: ``make(nn)``."""

    def __init__(self, make):
        self.make = make


def _weight(values):
    """A ``weight=...`` tensor of the library ``nn`` belongs to."""
    return _PerLibrary(lambda nn: _lib(nn).tensor(np.asarray(values, "float32")))


# (layer, constructor kwargs, inputs, whether the layer takes ``reduction``)
LOSSES = [
    ("L1Loss", {}, [_normal(3, 4), _normal(3, 4)], True),
    ("MSELoss", {}, [_normal(2, 3, 2), _normal(2, 3, 2)], True),
    ("SmoothL1Loss", {"beta": 0.5}, [_normal(3, 4), _normal(3, 4)], True),
    ("SmoothL1Loss", {}, [_normal(5), _normal(5)], True),
    ("HuberLoss", {"delta": 0.7}, [_normal(3, 4), _normal(3, 4)], True),
    ("BCELoss", {}, [_uniform(3, 4), _uniform(3, 4)], True),
    ("BCELoss", {"weight": _weight([0.5, 1.0, 2.0, 0.1])}, [_uniform(3, 4), _uniform(3, 4)],
     True),
    ("BCEWithLogitsLoss", {}, [_normal(3, 4), _uniform(3, 4)], True),
    ("BCEWithLogitsLoss", {"weight": _weight([0.5, 1.0, 2.0, 0.1]),
                           "pos_weight": _weight([1.5, 0.2, 3.0, 1.0])},
     [_normal(3, 4), _uniform(3, 4)], True),
    ("CrossEntropyLoss", {}, [_normal(4, 5), _classes(4, high=5)], True),
    ("CrossEntropyLoss", {"weight": _weight([1.0, 2.0, 0.5, 0.3, 1.1]), "ignore_index": 2},
     [_normal(6, 5), _classes(6, high=5)], True),
    ("CrossEntropyLoss", {"label_smoothing": 0.2},
     [_normal(3, 4, 2, 2), _classes(3, 2, 2, high=4)], True),
    ("CrossEntropyLoss", {"label_smoothing": 0.1, "weight": _weight([1.0, 2.0, 0.5])},
     [_normal(4, 3), _probs(4, 3)], True),
    ("CrossEntropyLoss", {}, [_normal(5), np.array(3)], True),
    ("NLLLoss", {}, [_log_probs(4, 5), _classes(4, high=5)], True),
    ("NLLLoss", {"weight": _weight([1.0, 2.0, 0.5]), "ignore_index": 0},
     [_log_probs(3, 3, 2), _classes(3, 2, high=3)], True),
    ("KLDivLoss", {}, [_log_probs(3, 4), _probs(3, 4)], True),
    ("KLDivLoss", {"reduction": "batchmean"}, [_log_probs(3, 4), _probs(3, 4)], False),
    ("KLDivLoss", {"log_target": True}, [_log_probs(3, 4), _log_probs(3, 4)], True),
    ("PoissonNLLLoss", {}, [_normal(3, 4), _uniform(3, 4, high=4.0)], True),
    ("PoissonNLLLoss", {"log_input": False, "full": True, "eps": 1e-4},
     [_uniform(3, 4, high=3.0), _uniform(3, 4, high=4.0)], True),
    ("GaussianNLLLoss", {}, [_normal(3, 4), _normal(3, 4), _uniform(3, 4, high=2.0)], True),
    ("GaussianNLLLoss", {"full": True, "eps": 1e-3},
     [_normal(3, 4), _normal(3, 4), _uniform(3, 1, high=2.0)], True),
    ("GaussianNLLLoss", {}, [_normal(3, 4), _normal(3, 4), _uniform(3, high=2.0)], True),
    ("HingeEmbeddingLoss", {"margin": 0.5}, [_normal(3, 4), _signs(3, 4)], True),
    ("SoftMarginLoss", {}, [_normal(3, 4), _signs(3, 4)], True),  # target: no grad
    ("MultiLabelSoftMarginLoss", {}, [_normal(3, 4), _uniform(3, 4)], True),
    ("MultiLabelSoftMarginLoss", {"weight": _weight([0.5, 1.0, 2.0, 0.1])},
     [_normal(3, 4), (_signs(3, 4) > 0).astype("float64")], True),
    ("MultiLabelMarginLoss", {},
     [_normal(3, 4), np.array([[3, 0, -1, 1], [1, 2, 3, -1], [0, -1, 2, 2]])], True),
    ("MultiMarginLoss", {}, [_normal(4, 5), _classes(4, high=5)], True),
    ("MultiMarginLoss", {"p": 2, "margin": 0.5, "weight": _weight([1.0, 2.0, 0.5, 0.3, 1.1])},
     [_normal(4, 5), _classes(4, high=5)], True),
    ("CosineEmbeddingLoss", {"margin": 0.2}, [_normal(4, 3), _normal(4, 3), _signs(4)], True),
    ("MarginRankingLoss", {"margin": 0.3}, [_normal(5), _normal(5), _signs(5)], True),
    ("TripletMarginLoss", {}, [_normal(4, 3), _normal(4, 3), _normal(4, 3)], True),
    ("TripletMarginLoss", {"margin": 0.5, "p": 1.0, "swap": True},
     [_normal(4, 3), _normal(4, 3), _normal(4, 3)], True),
    ("TripletMarginWithDistanceLoss", {}, [_normal(4, 3), _normal(4, 3), _normal(4, 3)], True),
    ("TripletMarginWithDistanceLoss",
     {"distance_function": _PerLibrary(
         lambda nn: lambda a, b: 1.0 - nn.functional.cosine_similarity(a, b)),
      "margin": 0.4, "swap": True},
     [_normal(4, 3), _normal(4, 3), _normal(4, 3)], True),
    ("CTCLoss", {}, [_log_probs(6, 2, 4, dim=2), _classes(2, 3, high=3) + 1,
                     np.array([6, 5]), np.array([3, 2])], True),
    ("CTCLoss", {"blank": 3, "zero_infinity": True},
     [_log_probs(4, 3, 4, dim=2), _classes(3, 4, high=3), np.array([4, 4, 2]),
      np.array([2, 4, 1])], True),
]


# torch refuses a target that requires grad to these
_TARGET_WITHOUT_GRAD = {"SoftMarginLoss"}


def _build(name, kwargs, reduction=None):
    def build(nn):
        made = {k: v.make(nn) if isinstance(v, _PerLibrary) else v for k, v in kwargs.items()}
        if reduction is not None:
            made["reduction"] = reduction
        loss = getattr(nn, name)(**made)
        return _detached_target(nn, loss) if name in _TARGET_WITHOUT_GRAD else loss
    return build


def _detached_target(nn, loss):
    class DetachedTarget(nn.Module):
        def __init__(self):
            super().__init__()
            self.loss = loss

        def forward(self, input, target):
            return self.loss(input, target.detach())
    return DetachedTarget()


CASES = [(name, kwargs, inputs, r) for name, kwargs, inputs, takes in LOSSES
         for r in (REDUCTIONS if takes else [None])]


def _cast(a, dtype):
    return a.astype(dtype) if np.issubdtype(a.dtype, np.floating) else a


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, kwargs, inputs, reduction", CASES,
                         ids=[f"{c[0]}-{i}-{c[3]}" for i, c in enumerate(CASES)])
def test_loss_matches_torch(name, kwargs, inputs, reduction, dtype):
    t, e = pair_modules(_build(name, kwargs, reduction), dtype=dtype)
    # kl_div's 'mean' warns (both libraries) that it is not the KL divergence's mean
    kl_mean = name == "KLDivLoss" and reduction == "mean"
    with pytest.warns(UserWarning, match="'batchmean' divides only") if kl_mean \
            else contextlib.nullcontext():
        compare_modules(t, e, [_cast(np.asarray(a), dtype) for a in inputs])


def test_weights_are_buffers():
    for name, kwargs, keys in [("CrossEntropyLoss", {}, []),
                               ("CrossEntropyLoss", {"weight": _weight([1.0, 2.0])}, ["weight"]),
                               ("NLLLoss", {"weight": _weight([1.0, 2.0])}, ["weight"]),
                               ("BCEWithLogitsLoss", {"pos_weight": _weight([2.0])},
                                ["pos_weight"]),
                               ("BCEWithLogitsLoss", {"weight": _weight([1.0]),
                                                      "pos_weight": _weight([2.0])},
                                ["weight", "pos_weight"]),
                               ("MultiMarginLoss", {"weight": _weight([1.0, 3.0])}, ["weight"])]:
        t, e = _build(name, kwargs)(torch.nn), _build(name, kwargs)(enn)
        assert list(t.state_dict()) == list(e.state_dict()) == keys
        assert [n for n, _ in e.named_buffers()] == keys and list(e.parameters()) == []
        e.double()
        assert all(b.dtype == E.float64 for b in e.buffers())
    assert enn.CrossEntropyLoss().weight is None


def test_linear_cross_entropy_loss_matches_torch():
    for kwargs, inputs in [
            ({}, [_normal(4, 3), _classes(4, high=5)]),
            ({"bias": True, "label_smoothing": 0.1, "ignore_index": 1},
             [_normal(6, 3), _classes(6, high=5)]),
            ({"out_features": (2,), "reduction": "sum", "weight": _weight([1, 2, 3, 4, 5])},
             [_normal(4, 3), _classes(4, 2, high=5)])]:
        for dtype in DTYPES:
            t, e = pair_modules(_build("LinearCrossEntropyLoss", {"in_features": 3,
                                                                  "num_classes": 5, **kwargs}),
                                dtype=dtype)
            compare_modules(t, e, [_cast(a, dtype) for a in inputs])


def test_legacy_size_average_and_reduce():
    for args, expected in [({"size_average": False}, "sum"), ({"reduce": False}, "none"),
                           ({"size_average": True, "reduce": True}, "mean"),
                           ({"size_average": False, "reduce": False}, "none")]:
        for name in ("MSELoss", "L1Loss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
                     "KLDivLoss", "SmoothL1Loss", "SoftMarginLoss", "MultiMarginLoss",
                     "MarginRankingLoss", "TripletMarginLoss", "PoissonNLLLoss"):
            for nn in (torch.nn, enn):
                with pytest.warns(UserWarning, match=f"please use reduction='{expected}'"):
                    m = getattr(nn, name)(**args)
                assert m.reduction == expected, (name, args)
    with pytest.warns(UserWarning, match="reduction='sum'"):
        t, e = pair_modules(lambda nn: nn.MSELoss(size_average=False))
    compare_modules(t, e, [_normal(3, 2), _normal(3, 2)])


def test_nll_loss_2d_is_deprecated_nll_loss():
    for nn in (torch.nn, enn):
        with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
            m = nn.NLLLoss2d(ignore_index=1)
        assert isinstance(m, nn.NLLLoss) and m.ignore_index == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, e = pair_modules(lambda nn: nn.NLLLoss2d())
    compare_modules(t, e, [_log_probs(2, 3, 2, 2), _classes(2, 2, 2, high=3)])


def test_repr_and_settings_match_torch():
    for name, kwargs, _, _ in LOSSES:
        t, e = _build(name, kwargs)(torch.nn), _build(name, kwargs)(enn)
        t, e = getattr(t, "loss", t), getattr(e, "loss", e)
        assert repr(t) == repr(e), name
        for attr in ("reduction", "ignore_index", "label_smoothing", "margin", "p", "eps",
                     "swap", "full", "log_input", "log_target", "beta", "delta", "blank",
                     "zero_infinity"):
            assert getattr(t, attr, None) == getattr(e, attr, None), (name, attr)
    t = torch.nn.LinearCrossEntropyLoss(3, 4, bias=True)
    e = enn.LinearCrossEntropyLoss(3, 4, bias=True)
    assert repr(t) == repr(e) and list(t.state_dict()) == list(e.state_dict())


@pytest.mark.parametrize("program", [
    lambda nn, lib: nn.MultiMarginLoss(p=3),
    lambda nn, lib: nn.MultiMarginLoss(weight=lib.ones(2, 2)),
    lambda nn, lib: nn.TripletMarginLoss(margin=0.0),
    lambda nn, lib: nn.TripletMarginWithDistanceLoss(margin=-1.0),
    lambda nn, lib: nn.HuberLoss(delta="1"),
    lambda nn, lib: nn.LinearCrossEntropyLoss(3, 4, weight=lib.ones(3)),
    lambda nn, lib: nn.LinearCrossEntropyLoss(3, 4, label_smoothing=1.5),
    lambda nn, lib: nn.MSELoss(reduction="average")(lib.ones(2), lib.ones(2)),
    lambda nn, lib: nn.CrossEntropyLoss()(lib.ones(2, 3), lib.tensor([0, 3])),
    lambda nn, lib: nn.CrossEntropyLoss()(lib.ones(2, 3), lib.tensor([0.0, 1.0])),
    lambda nn, lib: nn.NLLLoss()(lib.ones(2, 3), lib.tensor([0, 1, 2])),
    lambda nn, lib: nn.BCELoss()(lib.ones(2) * 2, lib.ones(2)),
    lambda nn, lib: nn.KLDivLoss(reduction="batch")(lib.ones(2), lib.ones(2)),
    lambda nn, lib: nn.GaussianNLLLoss()(lib.ones(2, 3), lib.ones(2, 3), -lib.ones(2, 3)),
    lambda nn, lib: nn.MultiMarginLoss()(lib.ones(2, 3), lib.tensor([0.0, 1.0])),
    lambda nn, lib: nn.CTCLoss()(lib.zeros(3, 1, 2), lib.ones(1, 2, dtype=lib.int64),
                                 lib.tensor([5]), lib.tensor([2])),
], ids=["multimargin-p", "multimargin-weight", "triplet-margin", "distance-margin",
        "huber-delta", "lce-weight", "lce-smoothing", "reduction", "ce-range", "ce-float",
        "nll-batch", "bce-range", "kl-reduction", "gaussian-var", "multimargin-target",
        "ctc-lengths"])
def test_errors_match_torch(program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same_error(program)
