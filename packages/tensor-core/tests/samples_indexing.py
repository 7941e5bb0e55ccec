"""Dispatch-table samples of the indexing primitives (indexing.py, gather_scatter.py,
masked.py): views and copies by basic and advanced indices, writes through setitem, the
ops along one dim and the masked ops, with 0-d, empty, broadcast and transposed operands.
Index tensors are built on the CPU with fixed values, then moved (on meta they keep only
their shapes)."""

from __future__ import annotations

from typing import Any

import numpy as np
from dispatch_oracle import make


def ix(m: Any, d: str, values: Any, dtype: str = "int64") -> Any:
    """An index tensor (or a mask, ``dtype='bool'``) of ``values`` on ``d``."""
    return m.tensor(np.array(values, dtype)).to(d)


def _setitem(shape: tuple[int, ...], index: Any, value: Any, transposed: bool = False) -> Any:
    """``x[index(m, d)] = value(m, d)`` on a fresh tensor; the sample returns ``x``."""

    def sample(m: Any, d: str) -> Any:
        x = make(m, d, shape, transposed=transposed)
        x[index(m, d)] = value(m, d) if callable(value) else value
        return x

    return sample


_M, _B = (3, 4), (2, 3, 4)
_ROWS = [[0, 1], [1, 2], [3, 0]]  # an index along dim 1 of a (3, 4) tensor, distinct by row

SAMPLES: dict[str, list[Any]] = {
    "getitem": [
        lambda m, d: make(m, d, _M)[1],
        lambda m, d: make(m, d, _M, transposed=True)[:, 1:3],
        lambda m, d: make(m, d, _B)[None, 1, ..., None],
        lambda m, d: make(m, d, _B, transposed=True)[1:, ::2, None],
        lambda m, d: make(m, d, ())[...],
        lambda m, d: make(m, d, (0, 3))[:, 2],
        lambda m, d: make(m, d, _M)[10:20],
        lambda m, d: make(m, d, _M)[ix(m, d, 2)],
    ],
    "index": [
        lambda m, d: make(m, d, _M)[ix(m, d, [0, 2, 0])],
        lambda m, d: make(m, d, _M, transposed=True)[:, ix(m, d, [3, 0], "int32")],
        lambda m, d: make(m, d, _B)[ix(m, d, [[0], [1]]), ix(m, d, [1, 2])],
        lambda m, d: make(m, d, _B, transposed=True)[ix(m, d, [1, 0]), :, ix(m, d, [3, 1])],
        lambda m, d: make(m, d, _B, transposed=True)[:, :, ix(m, d, [[0, 3]])],
        lambda m, d: make(m, d, _M)[ix(m, d, [True, False, True], "bool")],
        lambda m, d: make(m, d, _M)[True],
        lambda m, d: make(m, d, _M)[ix(m, d, np.zeros(0, np.int64))],
        lambda m, d: make(m, d, _M)[1:, [0, 3]],
    ],
    "index_put": [
        lambda m, d: m.index_put(make(m, d, _M), (ix(m, d, [0, 2]),), make(m, d, (4,))),
        lambda m, d: m.index_put(make(m, d, _M, transposed=True), (ix(m, d, [1, 1]),),
                                 make(m, d, (1, 4)), accumulate=True),
        lambda m, d: m.index_put(make(m, d, _M), (ix(m, d, [0, 2]), ix(m, d, [3, 1])),
                                 make(m, d, ())),
        lambda m, d: make(m, d, _M).index_put((ix(m, d, [[True, False, True, True]] * 3, "bool"),),
                                              make(m, d, ())),
    ],
    "index_put_": [
        lambda m, d: make(m, d, _M).index_put_((ix(m, d, [2, 0]),), make(m, d, (2, 4))),
        lambda m, d: make(m, d, _M, transposed=True).index_put_(
            (ix(m, d, [0, 0]), ix(m, d, [1, 1])), make(m, d, (2,)), accumulate=True),
        _setitem(_M, lambda m, d: ix(m, d, [0, 2]), 1.5),
        _setitem(_M, lambda m, d: (1, ix(m, d, [0, 3])), lambda m, d: make(m, d, (2,))),
        _setitem(_M, lambda m, d: (slice(None), [1, 2]), lambda m, d: make(m, d, (3, 1)), True),
        _setitem(_M, lambda m, d: ix(m, d, [True, False, True], "bool"), 0.0),
    ],
    "gather": [
        lambda m, d: make(m, d, _M).gather(1, ix(m, d, [[0, 0], [1, 2], [3, 3]])),
        lambda m, d: make(m, d, _M, transposed=True).gather(0, ix(m, d, [[0, 2, 1, 0]])),
        lambda m, d: make(m, d, _M).gather(0, ix(m, d, [[0, 1, 2], [2, 1, 0]]).t()),
        lambda m, d: make(m, d, ()).gather(0, ix(m, d, [0, 0])),
        lambda m, d: make(m, d, _M).gather(1, ix(m, d, np.zeros((0, 2), np.int64))),
    ],
    "scatter": [
        lambda m, d: make(m, d, _M).scatter(1, ix(m, d, _ROWS), make(m, d, (3, 2))),
        lambda m, d: make(m, d, _M, transposed=True).scatter(1, ix(m, d, _ROWS), 1.5),
        lambda m, d: make(m, d, _M).scatter(0, ix(m, d, [[0, 1, 0, 2]]), 2.0, reduce="multiply"),
        lambda m, d: make(m, d, ()).scatter(0, ix(m, d, 0), make(m, d, ())),
    ],
    "scatter_add": [
        lambda m, d: make(m, d, _M).scatter_add(1, ix(m, d, [[0, 0], [1, 2], [3, 0]]),
                                                make(m, d, (3, 2))),
        lambda m, d: make(m, d, _M, transposed=True).scatter_add(
            0, ix(m, d, [[0, 1, 0, 2], [0, 0, 1, 1]]), make(m, d, (2, 4), transposed=True)),
    ],
    "scatter_reduce": [
        (lambda r, s: lambda m, d: make(m, d, _M, transposed=s).scatter_reduce(
            1, ix(m, d, [[0, 0], [1, 2], [3, 0]]), make(m, d, (3, 2)), r, include_self=s))(r, s)
        for r in ("sum", "prod", "mean", "amax", "amin") for s in (True, False)
    ],
    "index_select": [
        lambda m, d: make(m, d, _M).index_select(1, ix(m, d, [0, 2, 2])),
        lambda m, d: make(m, d, _M, transposed=True).index_select(0, ix(m, d, [2, 0], "int32")),
        lambda m, d: make(m, d, _M).index_select(1, ix(m, d, 1)),
        lambda m, d: make(m, d, ()).index_select(0, ix(m, d, [0])),
        lambda m, d: make(m, d, (0, 3)).index_select(1, ix(m, d, [2])),
    ],
    "index_add": [
        lambda m, d: make(m, d, _M).index_add(1, ix(m, d, [0, 2, 0]), make(m, d, (3, 3))),
        lambda m, d: make(m, d, _M, transposed=True).index_add(0, ix(m, d, [2]),
                                                               make(m, d, (1, 4)), alpha=2),
    ],
    "index_copy": [
        lambda m, d: make(m, d, _M).index_copy(1, ix(m, d, [3, 0]), make(m, d, (3, 2))),
        lambda m, d: make(m, d, _M, transposed=True).index_copy(0, ix(m, d, [1]),
                                                                make(m, d, (1, 4))),
    ],
    "index_fill": [
        lambda m, d: make(m, d, _M).index_fill(1, ix(m, d, [0, -1]), 1.5),
        lambda m, d: make(m, d, _M, transposed=True).index_fill(0, ix(m, d, 2),
                                                                make(m, d, (), "float64")),
        lambda m, d: make(m, d, ()).index_fill(0, ix(m, d, [0]), 2),
    ],
    "take": [
        lambda m, d: make(m, d, _M).take(ix(m, d, [[0, -1], [11, 5]])),
        lambda m, d: make(m, d, _M, transposed=True).take(ix(m, d, [[0, 5, 7]]).t()),
        lambda m, d: make(m, d, ()).take(ix(m, d, 0)),
    ],
    "take_along_dim": [
        lambda m, d: m.take_along_dim(make(m, d, _M, transposed=True), ix(m, d, [[0], [2], [-1]]),
                                      1),
        lambda m, d: m.take_along_dim(make(m, d, (1, 3)), ix(m, d, [[0], [2]]), dim=1),
        lambda m, d: m.take_along_dim(make(m, d, _M), ix(m, d, [0, 11, 4])),
    ],
    "put": [
        lambda m, d: make(m, d, _M).put(ix(m, d, [0, -1, 5]), make(m, d, (3,))),
        lambda m, d: make(m, d, _M, transposed=True).put(ix(m, d, [[1, 1]]), make(m, d, (2,)),
                                                         accumulate=True),
    ],
    "masked_fill": [
        lambda m, d: make(m, d, _M).masked_fill(ix(m, d, [True, False, True, False], "bool"),
                                                -float("inf")),
        lambda m, d: make(m, d, (4,)).masked_fill(make(m, d, _M, "bool"), make(m, d, ())),
        lambda m, d: make(m, d, _M, transposed=True).masked_fill(
            make(m, d, _M, "bool", transposed=True), 2),
        lambda m, d: make(m, d, (), "int64").masked_fill(ix(m, d, True, "bool"), 7),
    ],
    "masked_select": [
        lambda m, d: make(m, d, _M).masked_select(make(m, d, (4,), "bool")),
    ],
    "masked_scatter": [
        lambda m, d: make(m, d, _M).masked_scatter(make(m, d, _M, "bool"), make(m, d, (12,))),
        lambda m, d: make(m, d, (4,)).masked_scatter(make(m, d, _M, "bool", transposed=True),
                                                     make(m, d, (3, 5), transposed=True)),
    ],
    "nonzero": [
        lambda m, d: make(m, d, _M, "int64", low=-1, high=1).nonzero(),
        lambda m, d: make(m, d, _M, "bool").nonzero(as_tuple=True),
    ],
    "argwhere": [
        lambda m, d: m.argwhere(make(m, d, (2, 3), "bool")),
    ],
}
