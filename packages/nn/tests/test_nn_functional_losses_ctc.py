"""ctc_loss of ember.nn.functional against torch.nn.functional: the loss and torch's
gradient (``exp(log_probs) - posterior``, which log_softmax inputs hide and raw ones
show) in float32 and float64 for each reduction, with and without zero_infinity, with
repeated labels, empty targets and inputs; the argument forms torch takes; its errors."""

from __future__ import annotations

import numpy as np
import pytest
from functional_oracle import DTYPES, same_error
from values_oracle import compare_values

REDUCTIONS = ["none", "mean", "sum"]


def _rng(seed=0):
    return np.random.default_rng(seed)


def _ctc_case(dtype, seed=0):
    rng = _rng(seed)
    steps, batch, classes, longest = 8, 5, 5, 3
    log_probs = rng.standard_normal((steps, batch, classes)).astype(dtype)
    targets = rng.integers(1, classes, (batch, longest))
    targets[1, 1] = targets[1, 0]  # a repeated label needs a blank between
    return log_probs, targets, [8, 7, 4, 0, 3], [3, 2, 0, 0, 3]


@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("normalized", [True, False], ids=["log_softmax", "raw"])
def test_ctc_loss_matches_torch(normalized, dtype, reduction, zero_infinity):
    """Sample 4 cannot fit its target in its input (an infinite loss): with
    ``zero_infinity`` it is zeroed; without, it is left out of the comparison."""
    log_probs, targets, ins, outs = _ctc_case(dtype)
    if not zero_infinity:
        ins[4] = 6

    def call(m, lp):
        lp = lp.log_softmax(2) if normalized else lp
        return m.F.ctc_loss(lp, m.tensor(targets), m.tensor(ins), m.tensor(outs),
                            reduction=reduction, zero_infinity=zero_infinity)

    compare_values(call, [log_probs])


@pytest.mark.parametrize("layout", ["concatenated", "tuples", "unbatched", "unbatched 0-d",
                                    "int32 targets", "blank last", "empty targets"])
def test_ctc_loss_argument_forms(layout):
    log_probs, targets, ins, outs = _ctc_case("float64", 1)
    blank = 0

    def call(m, lp):
        lengths = (m.tensor(ins), m.tensor(outs))
        tg = m.tensor(targets)
        if layout == "concatenated":
            tg = m.cat([tg[i, :n] for i, n in enumerate(outs)])
        elif layout == "tuples":
            lengths = (tuple(ins), tuple(outs))
        elif layout.startswith("unbatched"):
            one = (lambda v: m.tensor(v)) if layout.endswith("0-d") else (lambda v: [v])
            return m.F.ctc_loss(lp[:, 0], tg[0], one(ins[0]), one(outs[0]), reduction="sum")
        elif layout == "int32 targets":
            tg = tg.to(m.int32)
        elif layout == "blank last":
            tg = tg - 1
        else:
            tg, lengths = tg[:, :0], (m.tensor(ins), m.zeros(5, dtype=m.int64))
        return m.F.ctc_loss(lp.log_softmax(2), tg, *lengths, reduction="none",
                            blank=4 if layout == "blank last" else blank)

    compare_values(call, [log_probs])


# ----------------------------------------------------------------------------- errors

def _ctc_error(change):
    def program(m):
        args = {"log_probs": m.zeros(6, 3, 5).log_softmax(2),
                "targets": m.ones(3, 3, dtype=m.int64),
                "input_lengths": m.tensor([6, 5, 4]), "target_lengths": m.tensor([3, 2, 0]),
                "blank": 0, "reduction": "mean"}
        change(args, m)
        return m.F.ctc_loss(**args)

    return program


CTC_ERRORS = {
    "float lengths": lambda a, m: a.update(input_lengths=m.tensor([6.0, 5.0, 4.0])),
    "bool target lengths": lambda a, m: a.update(target_lengths=m.tensor([True] * 3)),
    "half log_probs": lambda a, m: a.update(log_probs=a["log_probs"].half()),
    "4-d log_probs": lambda a, m: a.update(log_probs=a["log_probs"][None]),
    "3-d targets": lambda a, m: a.update(targets=a["targets"][None]),
    "blank": lambda a, m: a.update(blank=5),
    "input_lengths size": lambda a, m: a.update(input_lengths=m.tensor([6, 5])),
    "target_lengths size": lambda a, m: a.update(target_lengths=m.tensor([1, 2, 3, 0])),
    "negative target length": lambda a, m: a.update(target_lengths=m.tensor([-1, 2, 0])),
    "long target length": lambda a, m: a.update(target_lengths=m.tensor([4, 2, 0])),
    "concatenated size": lambda a, m: a.update(targets=m.ones(3, dtype=m.int64)),
    "padded batch": lambda a, m: a.update(targets=m.ones(2, 3, dtype=m.int64)),
    "negative input length": lambda a, m: a.update(input_lengths=m.tensor([-1, 5, 4])),
    "long input length": lambda a, m: a.update(input_lengths=m.tensor([7, 5, 4])),
    "reduction": lambda a, m: a.update(reduction="x"),
}


@pytest.mark.parametrize("name", list(CTC_ERRORS))
def test_errors_as_torch(name):
    same_error(_ctc_error(CTC_ERRORS[name]))
