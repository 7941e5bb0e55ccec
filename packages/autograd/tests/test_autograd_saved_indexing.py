"""The indexing primitives save no more for backward than torch does: for each
differentiable op of the family (indexing, setitem, masked ops, the ops along one dim),
with each tensor operand requiring grad or not."""

from typing import Any

import pytest
from autograd_oracle import check_saved

M, V = (3, 4), (4,)
ROWS = [[0, 0], [1, 2], [3, 0]]


def _i(m: Any, values: Any) -> Any:
    return m.tensor(values)


def _setitem(index: Any) -> Any:
    def fn(m: Any, x: Any, v: Any) -> Any:
        y = x * 1
        y[index(m)] = v
        return y

    return fn


ONE = {  # name: (f(m, x), shape of x)
    "index": (lambda m, x: x[_i(m, [0, 2, 0])], M),
    "index_mixed": (lambda m, x: x[1:, _i(m, [0, 3])], M),
    "index_mask": (lambda m, x: x[_i(m, [True, False, True])], M),
    "masked_fill": (lambda m, x: x.masked_fill(_i(m, [True, False, True, False]), 2.0), M),
    "masked_select": (lambda m, x: x.masked_select(_i(m, [True, False, True, False])), M),
    "gather": (lambda m, x: x.gather(1, _i(m, ROWS)), M),
    "scatter_value": (lambda m, x: x.scatter(1, _i(m, ROWS), 1.5), M),
    "index_select": (lambda m, x: x.index_select(1, _i(m, [0, 2, 2])), M),
    "index_fill": (lambda m, x: x.index_fill(1, _i(m, [0, 2]), 1.5), M),
    "take": (lambda m, x: x.take(_i(m, [[0, 5], [5, 11]])), M),
    "take_along_dim": (lambda m, x: m.take_along_dim(x, _i(m, [[0], [2], [1]]), 1), M),
    "take_along_dim_flat": (lambda m, x: m.take_along_dim(x, _i(m, [0, 5, 5])), M),
    "setitem_number": (lambda m, x: _setitem(lambda m: _i(m, [0, 2]))(m, x, 1.5), M),
    "scatter_inplace": (lambda m, x: (x * 1).scatter_(1, _i(m, ROWS), 1.5), M),
}

TWO = {  # name: (f(m, x, y), shapes)
    "index_put": (lambda m, x, y: x.index_put((_i(m, [0, 2]),), y), [M, V]),
    "index_put_acc": (lambda m, x, y: x.index_put((_i(m, [0, 0]),), y, accumulate=True),
                      [M, V]),
    "index_put_inplace": (lambda m, x, y: (x * 1).index_put_((_i(m, [0, 2]),), y), [M, V]),
    "setitem_index": (_setitem(lambda m: _i(m, [0, 2])), [M, V]),
    "setitem_mixed": (_setitem(lambda m: (slice(1, None), _i(m, [0, 3]))), [M, (2, 2)]),
    "setitem_slice": (_setitem(lambda m: (slice(None), 1)), [M, (3,)]),
    "masked_fill_tensor": (lambda m, x, v: x.masked_fill(_i(m, [True, False, True, False]), v),
                           [M, ()]),
    "masked_scatter": (lambda m, x, y: x.masked_scatter(_i(m, [True, False, True, False]), y),
                       [M, (6,)]),
    "scatter": (lambda m, x, y: x.scatter(1, _i(m, [[0, 1], [1, 2], [3, 0]]), y), [M, (3, 2)]),
    "scatter_add": (lambda m, x, y: x.scatter_add(1, _i(m, ROWS), y), [M, (3, 2)]),
    **{f"scatter_reduce_{r}": ((lambda r: lambda m, x, y: x.scatter_reduce(
        1, _i(m, ROWS), y, r, include_self=r != "sum"))(r), [M, (3, 2)])
       for r in ("sum", "prod", "mean", "amax", "amin")},
    "index_add": (lambda m, x, y: x.index_add(1, _i(m, [0, 2]), y, alpha=2), [M, (3, 2)]),
    "index_copy": (lambda m, x, y: x.index_copy(1, _i(m, [0, 2]), y), [M, (3, 2)]),
    "put": (lambda m, x, y: x.put(_i(m, [0, 5]), y), [M, (2,)]),
    "put_acc": (lambda m, x, y: x.put(_i(m, [5, 5]), y, accumulate=True), [M, (2,)]),
}


@pytest.mark.parametrize("name", ONE)
def test_one_operand(name: str) -> None:
    fn, shape = ONE[name]
    check_saved(fn, [shape])


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("name", TWO)
def test_two_operands(name: str, needs: tuple[bool, bool]) -> None:
    fn, shapes = TWO[name]
    check_saved(fn, shapes, needs=needs)
