"""ember.nn.functional.pad against torch.nn.functional.pad: every mode over 1 to 3 dims
of batched and unbatched inputs, negative pads, values, dtypes, gradients in float32 and
float64, and torch's errors."""

from __future__ import annotations

import numpy as np
import pytest
from functional_oracle import DTYPES, compare, same_error

PADS = {1: [(1, 2), (0, 3), (-1, 2), (2, -1)],
        2: [(1, 2, 0, 1), (2, 0, -1, 1), (1, 1, 1, 1)],
        3: [(1, 0, 2, 1, 1, 1), (0, 1, -1, 1, 1, 0)]}
SHAPES = {1: [(2, 3, 5), (3, 5)], 2: [(2, 3, 4, 5), (3, 4, 5)], 3: [(1, 2, 3, 4, 5), (2, 3, 4, 5)]}
CASES = [(nd, shape, p) for nd in PADS for shape in SHAPES[nd] for p in PADS[nd]]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("nd,shape,pads", CASES)
def test_pad(nd, shape, pads, mode, dtype):
    compare(lambda m, x: m.F.pad(x, pads, mode=mode), [shape], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pads,value", [((1, 2), 0.5), ((1, 1, 2, 0, 1, 1, 0, 2), -3.0),
                                        ((-1, -2), None), ((0, 0), None), ((), None),
                                        ((-1, 2, 3, -1), 2.0)])
def test_constant_pad_any_dims(pads, value, dtype):
    compare(lambda m, x: m.F.pad(x, pads, value=value), [(2, 3, 4, 5)], dtype)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "uint8"])
def test_pad_other_dtypes(dtype):
    values = np.random.default_rng(0).integers(0, 5, (2, 3, 4)).astype(dtype)
    for mode, value in (("constant", 1.7), ("constant", None), ("circular", None)):
        compare(lambda m: m.F.pad(m.tensor(values), (1, 2), mode=mode, value=value), [])
    if dtype != "bool":
        for mode in ("reflect", "replicate"):
            compare(lambda m: m.F.pad(m.tensor(values), (1, 2), mode=mode), [])


def test_pad_empty_and_zero_dim_inputs():
    compare(lambda m, x: m.F.pad(x, (1, 2), mode="reflect"), [(0, 3, 4)])
    compare(lambda m, x: m.F.pad(x, (1, 2), mode="circular"), [(2, 0, 4)])
    compare(lambda m, x: m.F.pad(x, ()), [()])


@pytest.mark.parametrize("call", [
    lambda m: m.F.pad(m.ones(2, 3, 4), (1, 2, 3)),
    lambda m: m.F.pad(m.ones(2, 3, 4), (1, 2, 3, 4, 5, 6, 7, 8)),
    lambda m: m.F.pad(m.ones(2, 3, 4), (1, 2), mode="foo"),
    lambda m: m.F.pad(m.ones(2, 3), (1.0, 2)),
    lambda m: m.F.pad(m.ones(2, 3, 4), (-5, 2)),
    lambda m: m.F.pad(m.ones(2, 3, 4), (1, 2), mode="reflect", value=1.0),
    lambda m: m.F.pad(m.ones(4), (1, 2), mode="reflect"),
    lambda m: m.F.pad(m.ones(2, 3, 4, 5), (1, 2), mode="replicate"),
    lambda m: m.F.pad(m.ones(2, 3, 4), (1, 2, 1, 1, 1, 1), mode="circular"),
    lambda m: m.F.pad(m.ones(2, 3, 4), (4, 2), mode="reflect"),
    lambda m: m.F.pad(m.ones(2, 3, 4), (-3, -2), mode="reflect"),
    lambda m: m.F.pad(m.ones(2, 3, 4), (-3, -2), mode="replicate"),
    lambda m: m.F.pad(m.ones(2, 3, 4), (-3, -2), mode="circular"),
    lambda m: m.F.pad(m.ones(2, 3, 4), (5, 0), mode="circular"),
    lambda m: m.F.pad(m.ones(2, 0, 4), (1, 2), mode="reflect"),
    lambda m: m.F.pad(m.ones(2, 3, 4, 4, dtype=m.bool), (1, 1, 1, 1), mode="reflect"),
    lambda m: m.F.pad(m.ones(2, 3, 4, dtype=m.bool), (1, 1), mode="replicate"),
])
def test_pad_errors(call):
    same_error(call)
