"""Indexing ops against torch: getitem/setitem, gather/scatter, index_*, masked_*, nonzero,
take/put. Index tensors are random (fixed seeds) and built the same in both frameworks."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from dispatch_oracle import Recorder
from torch_oracle import check, check_same_error, random_array

import ember.core as ember
from ember.core import meta
from ember.core.dispatch import REGISTRY

RNG_SEED = 7


def make_pair(shape: tuple[int, ...], dtype: str = "float32", noncontiguous: bool = False,
              seed: int = 0) -> tuple[ember.Tensor, torch.Tensor]:
    """The same data in both; noncontiguous: a transposed view of a numpy buffer."""
    rng = np.random.default_rng(seed)
    arr = np.asarray(random_array(tuple(reversed(shape)) if noncontiguous else shape, dtype, rng))
    if noncontiguous:
        arr = arr.T
    e, t = ember.from_numpy(arr), torch.from_numpy(arr.copy())
    if dtype == "bfloat16":
        e, t = e.to(ember.bfloat16), t.to(torch.bfloat16)
    return e, t


def mod_tensor(m: Any, data: Any, dtype: str | None = None) -> Any:
    """``data`` (list or array) as a tensor of module ``m`` (ember or torch)."""
    arr = np.array(data)
    if dtype is not None:
        arr = arr.astype(dtype)
    return m.from_numpy(arr)


def is_view_of(view: ember.Tensor, base: ember.Tensor) -> bool:
    shared = view._vc is not None and view._vc is base._vc
    assert not shared or view._data.size == 0 or np.shares_memory(view._data, base._data)
    return shared


def ints(low: int, high: int, shape: tuple[int, ...], seed: int = RNG_SEED) -> np.ndarray:
    return np.random.default_rng(seed).integers(low, high, shape)


def perm_index(shape: tuple[int, ...], dim: int, size: int, seed: int = RNG_SEED) -> np.ndarray:
    """Distinct indices along ``dim`` (so scatter without reduce is deterministic)."""
    rng = np.random.default_rng(seed)
    keys = rng.random(shape[:dim] + (size,) + shape[dim + 1:])
    return np.argsort(keys, axis=dim).take(range(shape[dim]), axis=dim)


# ----------------------------------------------------------------------------- getitem

GETITEM = [  # (shape, index builder taking the module)
    ((4, 5, 6), lambda m: 0), ((4, 5, 6), lambda m: -1), ((4, 5, 6), lambda m: slice(1, 3)),
    ((4, 5, 6), lambda m: slice(None, None, 2)), ((4, 5, 6), lambda m: slice(-3, None)),
    ((4, 5, 6), lambda m: slice(10, 20)), ((4, 5, 6), lambda m: slice(3, 1)),
    ((4, 5, 6), lambda m: (slice(None), -1, slice(None))),
    ((4, 5, 6), lambda m: (slice(None), [-1], slice(None))),
    ((4, 5, 6), lambda m: (None, Ellipsis)), ((4, 5, 6), lambda m: (Ellipsis, None)),
    ((4, 5, 6), lambda m: (Ellipsis, 0)), ((4, 5, 6), lambda m: (1, 2, 3)),
    ((4, 5, 6), lambda m: (1, None, slice(None, None, 3), None, [0, -1])),
    ((4, 5, 6), lambda m: (0, slice(None), [1, 2])),
    ((4, 5, 6), lambda m: ([0, 1], slice(None), [1, 2])),
    ((4, 5, 6), lambda m: (slice(None), [0, 1], [1, 2])),
    ((4, 5, 6), lambda m: ([[0], [3]], [1, 2])), ((4, 5, 6), lambda m: (Ellipsis, [0, 4], 1)),
    ((4, 5, 6), lambda m: mod_tensor(m, [0, 3, 3])),
    ((4, 5, 6), lambda m: mod_tensor(m, [[0, -3]], "int32")),
    ((4, 5, 6), lambda m: np.array([2, 0])), ((4, 5, 6), lambda m: mod_tensor(m, 2)),
    ((4, 5, 6), lambda m: (slice(None), mod_tensor(m, -1))),
    ((4, 5, 6), lambda m: mod_tensor(m, [True, False, True, True])),
    ((4, 5, 6), lambda m: mod_tensor(m, ints(0, 2, (4, 5, 6)).astype(bool))),
    ((4, 5, 6), lambda m: (mod_tensor(m, ints(0, 2, (4, 5)).astype(bool)), slice(1, 4))),
    ((4, 5, 6), lambda m: (slice(None), mod_tensor(m, ints(0, 2, (5,)).astype(bool)), [2])),
    ((4, 5, 6), lambda m: (mod_tensor(m, ints(0, 2, (4,)).astype(bool)), 1, [2])),
    ((4, 5, 6), lambda m: True), ((4, 5, 6), lambda m: False), ((4, 5, 6), lambda m: (None, True)),
    ((4, 5, 6), lambda m: mod_tensor(m, True)), ((4, 5, 6), lambda m: []),
    ((4, 5, 6), lambda m: [True, False, True, True]), ((4, 5, 6), lambda m: np.int64(2)),
    ((4, 5, 6), lambda m: (slice(None),) * 3), ((4, 5, 6), lambda m: ((0, 1),)),
    ((4, 5, 6), lambda m: slice(mod_tensor(m, 1), mod_tensor(m, 3))),
    ((4, 5, 6), lambda m: (Ellipsis, Ellipsis)), ((4, 5, 6), lambda m: (Ellipsis, 1, Ellipsis)),
    ((4, 5, 6), lambda m: ()), ((4, 5, 6), lambda m: [[0, 1], [1, 0]]),
    ((2, 3, 5, 5), lambda m: (slice(None), slice(None), slice(None, 3), slice(None, 3))),
    ((), lambda m: None), ((), lambda m: Ellipsis), ((), lambda m: ()), ((), lambda m: True),
    ((), lambda m: False), ((0, 3), lambda m: (slice(None), 1)), ((0, 3), lambda m: []),
    ((0, 3), lambda m: (Ellipsis, [0, 2])), ((5,), lambda m: 4), ((5,), lambda m: [4, -5]),
]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64", "bool"])
@pytest.mark.parametrize("case", range(len(GETITEM)))
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_getitem(case: int, dtype: str, noncontiguous: bool) -> None:
    shape, build = GETITEM[case]
    e, t = make_pair(shape, dtype, noncontiguous and len(shape) > 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the list-as-tuple deprecation
        rt, re = t[build(torch)], e[build(ember)]
    check(re, rt)
    assert is_view_of(re, e) == (rt._base is not None), "view/copy differs from torch"


def test_getitem_view_writes_through() -> None:
    e = ember.zeros(3, 4)
    v = e[:, 1]
    v[0] = 100.0
    w = v[None]  # a view of a view shares the root's storage and counter
    w[0, 2] = 7.0
    assert e[0, 1].item() == 100.0 and e[2, 1].item() == 7.0
    assert e._version == v._version == w._version == 2
    assert v._base is e and w._base is e
    assert e[[0]]._base is None  # advanced indexing copies


GETITEM_ERRORS = [  # (shape, index builder, substring of ember's message)
    ((4, 5), lambda m: 5, "index 5 is out of bounds for dimension 0 with size 4"),
    ((4, 5), lambda m: (slice(None), -6), "index -6 is out of bounds for dimension 1 with size 5"),
    ((4, 5), lambda m: slice(None, None, -1), "step must be greater than zero"),
    ((4, 5), lambda m: slice(None, None, 0), "step must be greater than zero"),
    ((4, 5), lambda m: (0, 0, 0), "too many indices for tensor of dimension 2"),
    ((4, 5), lambda m: (Ellipsis, 0, 0, 0), "too many indices"),
    ((4, 5), lambda m: [9], "index 9 is out of bounds for dimension 0 with size 4"),
    ((4, 5), lambda m: (slice(None), [5]), "index 5 is out of bounds for dimension 0 with size 5"),
    ((4, 5), lambda m: ([0], [5]), "index 5 is out of bounds for dimension 1 with size 5"),
    ((4, 5), lambda m: mod_tensor(m, [1.0]), "tensors used as indices must be long"),
    ((4, 5), lambda m: mod_tensor(m, [1], "int8"), "tensors used as indices must be long"),
    ((4, 5), lambda m: 1.5, "only integers, slices"),
    ((4, 5), lambda m: ([0, 1], [0, 1, 2]), "shape mismatch: indexing tensors could not be"),
    ((4, 5), lambda m: mod_tensor(m, [True, False]), "The shape of the mask [2] at index 0"),
    ((4, 5), lambda m: mod_tensor(m, np.ones((4, 5, 1), bool)), "too many indices"),
    ((), lambda m: 0, "invalid index of a 0-dim tensor"),
    ((), lambda m: slice(None), "too many indices for tensor of dimension 0"),
]


@pytest.mark.parametrize("shape,build,message", GETITEM_ERRORS)
def test_getitem_errors(shape: tuple[int, ...], build: Callable[[Any], Any], message: str
                        ) -> None:
    e, t = make_pair(shape)
    with pytest.raises(Exception) as expected:
        t[build(torch)]
    with pytest.raises(expected.type, match=None) as got:
        e[build(ember)]
    assert message in str(got.value)


# ----------------------------------------------------------------------------- setitem

SETITEM = [  # (shape, dtype, index builder, value builder taking (module, dtype))
    ((4, 5, 6), "float32", lambda m: 0, lambda m, d: 1.5),
    ((4, 5, 6), "float32", lambda m: (slice(None), 1), lambda m, d: mod_tensor(m, ints(0, 9, (6,)), d)),
    ((8, 6), "float32", lambda m: (slice(None), slice(0, None, 2)),
     lambda m, d: mod_tensor(m, ints(0, 9, (8, 3)), "float64")),
    ((4, 5, 6), "float32", lambda m: mod_tensor(m, ints(0, 2, (4, 5, 6)).astype(bool)),
     lambda m, d: -float("inf")),
    ((4, 5, 6), "float32", lambda m: [0, 2], lambda m, d: mod_tensor(m, ints(0, 9, (5, 6)), d)),
    ((4, 5, 6), "float32", lambda m: (Ellipsis, [1]), lambda m, d: mod_tensor(m, ints(0, 9, (1, 1, 1)), d)),
    ((4, 5, 6), "float32", lambda m: 0, lambda m, d: mod_tensor(m, ints(0, 9, (1, 1, 5, 6)), d)),
    ((4, 5, 6), "float32", lambda m: None, lambda m, d: mod_tensor(m, 2.5, "float64")),
    ((4, 5, 6), "float32", lambda m: True, lambda m, d: 3),
    ((4, 5, 6), "float32", lambda m: (slice(1, 3), [0, 4], 2), lambda m, d: mod_tensor(m, ints(0, 9, (2, 1)), d)),
    ((4, 5, 6), "float32", lambda m: ([0, 3], slice(None), [1, 2]),
     lambda m, d: mod_tensor(m, ints(0, 9, (2, 5)), d)),
    ((4, 5, 6), "float32", lambda m: (mod_tensor(m, [True, False, True, False]), 0),
     lambda m, d: mod_tensor(m, ints(0, 9, (2, 6)), d)),
    ((4, 5, 6), "float32", lambda m: Ellipsis, lambda m, d: mod_tensor(m, ints(0, 9, (6,)), "int64")),
    ((4, 5), "int64", lambda m: 0, lambda m, d: 2.7),
    ((4, 5), "int64", lambda m: [1, 3], lambda m, d: -7),
    ((4, 5), "uint8", lambda m: 0, lambda m, d: -1),
    ((4, 5), "bool", lambda m: (slice(None), 2), lambda m, d: 2),
    ((4, 5), "bfloat16", lambda m: (1, slice(1, 4)), lambda m, d: 1.1),
    ((4, 5), "float16", lambda m: 0, lambda m, d: -1e6),  # overflows to -inf, unchecked
    ((4, 5), "float16", lambda m: mod_tensor(m, [[0, 1]]), lambda m, d: mod_tensor(m, ints(0, 9, (5,)), d)),
    # one element through one mask: torch's masked_fill_ of its item(), whatever its dtype
    ((4, 5), "bfloat16", lambda m: mod_tensor(m, ints(0, 2, (4, 5)).astype(bool)),
     lambda m, d: mod_tensor(m, 0.5, "float64")),
    ((4, 5), "float32", lambda m: (slice(None), mod_tensor(m, [True, False, True, True, False])),
     lambda m, d: mod_tensor(m, [[2]], "int64")),
    ((4, 5), "uint8", lambda m: mod_tensor(m, ints(0, 2, (4,)).astype(bool)),
     lambda m, d: mod_tensor(m, 2.5, "float32")),
    ((), "float32", lambda m: Ellipsis, lambda m, d: 4.0),
    ((), "float32", lambda m: None, lambda m, d: mod_tensor(m, [4.0], d)),
    ((0, 3), "float32", lambda m: (slice(None), 1), lambda m, d: 4.0),
]


@pytest.mark.parametrize("case", range(len(SETITEM)))
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_setitem(case: int, noncontiguous: bool) -> None:
    shape, dtype, index, value = SETITEM[case]
    e, t = make_pair(shape, dtype, noncontiguous and len(shape) > 1)
    t[index(torch)] = value(torch, dtype)
    before = e._version
    e[index(ember)] = value(ember, dtype)
    check(e, t)
    assert e._version == before + 1


def test_setitem_aliasing_and_views() -> None:
    e, t = make_pair((3, 4))
    e[0], t[0] = e[1], t[1]  # the value is a view of the destination's storage
    check(e, t)
    base = ember.zeros(2, 3)
    base[1][2] = 5.0  # writes through the view returned by base[1]
    assert base[1, 2].item() == 5.0 and base._version == 1


SETITEM_ERRORS = [  # (dtype, index builder, value builder)
    ("float32", lambda m: 5, lambda m: 1.0),
    ("float32", lambda m: 0, lambda m: mod_tensor(m, np.ones(4, np.float32))),
    ("float32", lambda m: 0, lambda m: mod_tensor(m, np.ones((2, 3, 5), np.float32))),
    ("float32", lambda m: [0], lambda m: mod_tensor(m, np.ones(5))),
    ("float32", lambda m: [0], lambda m: mod_tensor(m, np.ones((2, 5), np.float32))),
    ("float32", lambda m: mod_tensor(m, np.ones((3, 5), bool)), lambda m: mod_tensor(m, np.ones(2, np.float32))),
    ("uint8", lambda m: 0, lambda m: 300),
    ("int64", lambda m: 0, lambda m: float("nan")),
    ("float32", lambda m: 0, lambda m: 1e300),
    ("float32", lambda m: 0, lambda m: 1j),
    ("float32", lambda m: 0, lambda m: "a"),
    ("float32", lambda m: 0, lambda m: [1.0, 2.0]),
    ("float32", lambda m: slice(None, None, -1), lambda m: 0.0),
    ("float32", lambda m: [9], lambda m: 0.0),
    ("float32", lambda m: (0, 0, 0), lambda m: 0.0),
    # a one-element value through a mask is converted with the checks of a number
    ("uint8", lambda m: mod_tensor(m, np.ones((3, 5), bool)), lambda m: mod_tensor(m, -1.5)),
    ("bfloat16", lambda m: mod_tensor(m, np.ones(3, bool)), lambda m: mod_tensor(m, 1j)),
    # other values must have self's dtype
    ("float32", lambda m: mod_tensor(m, np.ones(3, bool)), lambda m: mod_tensor(m, [1.0, 2.0])),
    ("float32", lambda m: mod_tensor(m, True), lambda m: mod_tensor(m, 1.0)),
    ("float32", lambda m: mod_tensor(m, [0, 1]), lambda m: mod_tensor(m, 1.0)),
]


@pytest.mark.parametrize("dtype,index,value", SETITEM_ERRORS)
def test_setitem_errors_leave_self_unchanged(dtype: str, index: Callable[[Any], Any],
                                             value: Callable[[Any], Any]) -> None:
    e, t = make_pair((3, 5), dtype)
    with pytest.raises(Exception) as expected:
        t[index(torch)] = value(torch)
    with pytest.raises(expected.type):
        e[index(ember)] = value(ember)
    check(e, t)
    assert e._version == 0


# ----------------------------------------------------------------------------- ops

OPS: list[tuple[str, tuple[int, ...], Callable[..., Any]]] = [  # (id, input shape, f(m, x))
    ("gather0", (3, 4), lambda m, x: m.gather(x, 0, mod_tensor(m, ints(0, 3, (2, 4))))),
    ("gather1", (3, 4), lambda m, x: x.gather(-1, mod_tensor(m, ints(0, 4, (3, 6))))),
    ("gather_small", (3, 4, 2), lambda m, x: m.gather(x, 1, mod_tensor(m, ints(0, 4, (2, 5, 1))))),
    ("gather_i32", (3, 4), lambda m, x: m.gather(x, 1, mod_tensor(m, ints(0, 4, (3, 2)), "int32"))),
    ("gather_0d", (), lambda m, x: m.gather(x, 0, mod_tensor(m, [0, 0]))),
    ("gather_empty", (3, 4), lambda m, x: m.gather(x, 1, mod_tensor(m, np.zeros((0, 2), np.int64)))),
    ("scatter", (3, 4), lambda m, x: m.scatter(x, 0, mod_tensor(m, perm_index((2, 4), 0, 3)),
                                               x[:2] * 2 + 1)),
    ("scatter_dim1", (3, 5), lambda m, x: x.scatter(1, mod_tensor(m, perm_index((3, 2), 1, 5)),
                                                    x[:, 1:3] + x[:, 1:3])),
    ("scatter_value", (3, 4), lambda m, x: m.scatter(x, 1, mod_tensor(m, ints(0, 4, (3, 2))), 7)),
    ("scatter_add_red", (3, 4), lambda m, x: m.scatter(x, 0, mod_tensor(m, ints(0, 3, (3, 4))), x,
                                                       reduce="add")),
    ("scatter_mul_val", (3, 4), lambda m, x: m.scatter(x, 0, mod_tensor(m, ints(0, 3, (2, 4))), 2.0,
                                                       reduce="multiply")),
    ("scatter_add", (3, 4), lambda m, x: m.scatter_add(x, 0, mod_tensor(m, ints(0, 3, (5, 2))),
                                                       m.ones(5, 3, dtype=x.dtype))),
    ("scatter_add_0d", (), lambda m, x: m.scatter_add(x, 0, mod_tensor(m, 0), x)),
    *[(f"scatter_reduce_{r}_{s}", (4, 3), (lambda r, s: lambda m, x: m.scatter_reduce(
        x, 0, mod_tensor(m, ints(0, 2, (4, 3))), x * 2 + 1, r, include_self=s))(r, s))
      for r in ("sum", "prod", "mean", "amax", "amin") for s in (True, False)],
    ("index_select0", (4, 3), lambda m, x: m.index_select(x, 0, mod_tensor(m, [3, 0, 3]))),
    ("index_select1", (4, 3), lambda m, x: x.index_select(-1, mod_tensor(m, [2, 1], "int32"))),
    ("index_select_0d_idx", (4, 3), lambda m, x: m.index_select(x, 1, mod_tensor(m, 1))),
    ("index_select_0d", (), lambda m, x: m.index_select(x, 0, mod_tensor(m, [0]))),
    ("index_add", (4, 3), lambda m, x: m.index_add(x, 0, mod_tensor(m, [1, 1, 3]), x[:3])),
    ("index_add_alpha", (4, 3), lambda m, x: x.index_add(1, mod_tensor(m, [0, 2], "int32"),
                                                         x[:, :2], alpha=2)),
    ("index_copy", (4, 3), lambda m, x: m.index_copy(x, 0, mod_tensor(m, [3, 0]), x[1:3] * 2)),
    ("index_fill", (4, 3), lambda m, x: m.index_fill(x, 1, mod_tensor(m, [0, -1]), 5)),
    ("index_fill_t", (4, 3), lambda m, x: x.index_fill(0, mod_tensor(m, 2), mod_tensor(m, 1.0))),
    ("index_put", (4, 3), lambda m, x: m.index_put(x, (mod_tensor(m, [0, 3]), mod_tensor(m, [2, 0])),
                                                   x[0, :2])),
    ("index_put_acc", (4, 3), lambda m, x: m.index_put(x, (mod_tensor(m, [0, 0, 3]),), x[1:2],
                                                       accumulate=True)),
    ("index_put_mask", (4, 3), lambda m, x: m.index_put(
        x, (mod_tensor(m, ints(0, 2, (4, 3)).astype(bool)),), x[0, 0], accumulate=True)),
    ("masked_fill", (4, 3), lambda m, x: m.masked_fill(x, mod_tensor(m, ints(0, 2, (4, 3)).astype(bool)),
                                                       -float("inf") if x.is_floating_point() else 1)),
    ("masked_fill_bcast", (3,), lambda m, x: x.masked_fill(mod_tensor(m, ints(0, 2, (2, 3)).astype(bool)),
                                                           mod_tensor(m, 2.0))),
    ("masked_select", (4, 3), lambda m, x: m.masked_select(x, mod_tensor(m, ints(0, 2, (3,)).astype(bool)))),
    ("masked_select_0d", (), lambda m, x: m.masked_select(x, mod_tensor(m, True))),
    ("masked_scatter", (4, 3), lambda m, x: m.masked_scatter(
        x, mod_tensor(m, ints(0, 2, (4, 3)).astype(bool)), x * 2)),
    ("nonzero", (4, 3), lambda m, x: m.nonzero(x)),
    ("nonzero_tuple", (4, 3), lambda m, x: x.nonzero(as_tuple=True)),
    ("nonzero_0d", (), lambda m, x: (m.nonzero(x), m.nonzero(x, as_tuple=True))),
    ("nonzero_empty", (0, 2), lambda m, x: (m.nonzero(x), m.nonzero(x, as_tuple=True))),
    ("argwhere", (2, 3, 2), lambda m, x: m.argwhere(x)),
    ("take", (4, 3), lambda m, x: m.take(x, mod_tensor(m, [[0, -1], [11, 5]]))),
    ("take_0d", (), lambda m, x: x.take(mod_tensor(m, 0))),
    ("take_along_none", (4, 3), lambda m, x: m.take_along_dim(x, mod_tensor(m, [0, 11, 4]))),
    ("take_along_dim", (4, 3), lambda m, x: m.take_along_dim(x, mod_tensor(m, [[0], [2], [-1], [1]]), 1)),
    ("take_along_bcast", (1, 3), lambda m, x: x.take_along_dim(mod_tensor(m, [[0], [2]]), dim=1)),
    ("put", (4, 3), lambda m, x: m.put(x, mod_tensor(m, [0, -1, 5]), x[0])),
    ("put_acc", (4, 3), lambda m, x: x.put(mod_tensor(m, [[0, 0]]), x[1, :2], accumulate=True)),
    ("select", (4, 3), lambda m, x: m.select(x, 1, -1)),
]
FLOAT_INT = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8"]


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter:UserWarning")
@pytest.mark.parametrize("dtype", FLOAT_INT)
@pytest.mark.parametrize("name,shape,fn", OPS, ids=[o[0] for o in OPS])
def test_ops(name: str, shape: tuple[int, ...], fn: Callable[..., Any], dtype: str) -> None:
    e, t = make_pair(shape, dtype, noncontiguous=len(shape) == 2)
    check(fn(ember, e), fn(torch, t))
    check(e, t)  # the input is untouched


@pytest.mark.parametrize("name,fn", [
    ("scatter_reduce_sum", lambda m, x: x.scatter_reduce(0, mod_tensor(m, [0, 1, 0]), x, "sum")),
    ("scatter_reduce_prod", lambda m, x: x.scatter_reduce(0, mod_tensor(m, [0, 1, 0]), x, "prod")),
    ("scatter_reduce_amax", lambda m, x: x.scatter_reduce(0, mod_tensor(m, [2, 1, 2]), x, "amax",
                                                          include_self=False)),
    ("masked_fill", lambda m, x: x.masked_fill(mod_tensor(m, [True, False, True]), True)),
    ("index_put_acc", lambda m, x: x.index_put((mod_tensor(m, [0, 0]),), x[:2], accumulate=True)),
    ("nonzero", lambda m, x: x.nonzero()),
])
def test_ops_bool(name: str, fn: Callable[..., Any]) -> None:
    e, t = make_pair((3,), "bool")
    check(fn(ember, e), fn(torch, t))


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 0, 3), (1, 1)])
def test_nonzero_is_column_major_when_empty_too(shape: tuple[int, ...]) -> None:
    """torch fills a transposed (ndim, count) block: strides (1, count), (1, 0) when no
    element is nonzero."""
    for fn in (lambda m, x: m.nonzero(x), lambda m, x: m.argwhere(x)):
        for fill in (0, 1):
            ours, theirs = fn(ember, ember.full(shape, fill)), fn(torch, torch.full(shape, fill))
            check(ours, theirs)
            assert ours.stride() == theirs.stride()


INPLACE = [  # (method name, f(m, x) -> args)
    ("scatter_", lambda m, x: (0, mod_tensor(m, perm_index((2, 3), 0, 4)), x[:2] * 3)),
    ("scatter_add_", lambda m, x: (1, mod_tensor(m, ints(0, 3, (4, 5))), m.ones(4, 5, dtype=x.dtype))),
    ("scatter_reduce_", lambda m, x: (0, mod_tensor(m, ints(0, 4, (4, 3))), x, "amin")),
    ("index_add_", lambda m, x: (0, mod_tensor(m, [1, 1]), x[:2], )),
    ("index_copy_", lambda m, x: (1, mod_tensor(m, [2, 0]), x[:, :2] + 1)),
    ("index_fill_", lambda m, x: (1, mod_tensor(m, [1]), -2)),
    ("index_put_", lambda m, x: ((mod_tensor(m, [3, 3]),), x[0], True)),
    ("masked_fill_", lambda m, x: (mod_tensor(m, [True, False, True]), 0.5)),
    ("masked_scatter_", lambda m, x: (mod_tensor(m, [[True, False, True]]), x * 2)),
    ("put_", lambda m, x: (mod_tensor(m, [0, 7, -1]), x[1], True)),
]


@pytest.mark.parametrize("dtype", ["float32", "int64", "bfloat16"])
@pytest.mark.parametrize("name,args", INPLACE, ids=[i[0] for i in INPLACE])
def test_inplace(name: str, args: Callable[..., Any], dtype: str) -> None:
    e, t = make_pair((4, 3), dtype)
    rt = getattr(t, name)(*args(torch, t.clone()))
    re = getattr(e, name)(*args(ember, e.clone()))
    assert re is e and e._version == 1
    check(e, rt)


def test_masked_fill_attention_pattern() -> None:
    """nanoGPT: att.masked_fill(bias[:, :, :T, :T] == 0, float('-inf'))."""
    et, tt = make_pair((2, 2, 3, 3))
    bias = np.tril(np.ones((5, 5), np.float32)).reshape(1, 1, 5, 5)
    eb, tb = ember.from_numpy(bias), torch.from_numpy(bias)
    check(et.masked_fill(eb[:, :, :3, :3] == 0, float("-inf")),
          tt.masked_fill(tb[:, :, :3, :3] == 0, float("-inf")))


def test_scatter_reduce_mean_integer_rounding() -> None:
    x = np.array([1, 2, 3, -5], np.int64)
    for include_self in (True, False):
        args = (0, [0, 0, 1, 1, 3], [4, 7, -7, 2, 2])
        r = [m.scatter_reduce(mod_tensor(m, x), args[0], mod_tensor(m, args[1]),
                              mod_tensor(m, args[2]), "mean", include_self=include_self)
             for m in (ember, torch)]
        check(*r)


OP_ERRORS = [  # f(m, x) on a (3, 4) float32 input
    lambda m, x: m.gather(x, 0, mod_tensor(m, [[0.0]])),
    lambda m, x: m.gather(x, 0, mod_tensor(m, [0, 1])),
    lambda m, x: m.gather(x, 0, mod_tensor(m, np.zeros((2, 5), np.int64))),
    lambda m, x: m.gather(x, 0, mod_tensor(m, [[-1]])),
    lambda m, x: m.gather(x, 1, mod_tensor(m, [[0], [4]])),
    lambda m, x: m.gather(x, 2, mod_tensor(m, [[0]])),
    lambda m, x: m.gather(x, 0, [[0]]),
    lambda m, x: m.scatter(x, 0, mod_tensor(m, [[0]]), x.double()),
    lambda m, x: m.scatter(x, 0, mod_tensor(m, np.zeros((2, 2), np.int64)), x[:1, :2]),
    lambda m, x: m.scatter(x, 0, mod_tensor(m, [[3]]), x),
    lambda m, x: m.scatter(x, 0, mod_tensor(m, [[0]]), 1.0, reduce="max"),
    lambda m, x: m.scatter_add(x, 0, mod_tensor(m, [[0]]), x.double()),
    lambda m, x: m.scatter_reduce(x, 0, mod_tensor(m, [[0]]), x, "max2"),
    lambda m, x: m.index_select(x, 0, mod_tensor(m, [0], "int16")),
    lambda m, x: m.index_select(x, 0, mod_tensor(m, [[0]])),
    lambda m, x: m.index_select(x, 0, mod_tensor(m, [3])),
    lambda m, x: m.index_select(x, 0, mod_tensor(m, [-1])),
    lambda m, x: m.index_add(x, 0, mod_tensor(m, [3]), x[:1]),
    lambda m, x: m.index_add(x, 0, mod_tensor(m, [0]), x[:1].double()),
    lambda m, x: m.index_add(x, 0, mod_tensor(m, [0]), x[:2]),
    lambda m, x: m.index_add(x, 0, mod_tensor(m, [0]), x[:1, :3]),
    lambda m, x: m.index_add(x, 0, mod_tensor(m, [0], "int16"), x[:1]),
    lambda m, x: m.index_copy(x, 0, mod_tensor(m, [0], "int32"), x[:1]),
    lambda m, x: m.index_copy(x, 0, mod_tensor(m, [-1]), x[:1]),
    lambda m, x: m.index_copy(x, 0, mod_tensor(m, [0]), x[:1].double()),
    lambda m, x: m.index_fill(x, 1, mod_tensor(m, [0], "int32"), 1.0),
    lambda m, x: m.index_fill(x, 1, mod_tensor(m, [4]), 1.0),
    lambda m, x: m.index_fill(x, 1, mod_tensor(m, [0]), mod_tensor(m, [1.0])),
    lambda m, x: m.index_fill(x.byte(), 1, mod_tensor(m, [0]), 300),
    # a complex value into a real tensor, even with no index to fill (torch's own check)
    lambda m, x: m.index_fill(x, 1, mod_tensor(m, [], "int64"), 1j),
    lambda m, x: x.bool().index_fill_(1, mod_tensor(m, [0]), mod_tensor(m, 1 + 0j)),
    lambda m, x: m.index_put(x, (mod_tensor(m, [0]),), x[0].double()),
    lambda m, x: m.index_put(x, (mod_tensor(m, [0.0]),), x[0]),
    lambda m, x: m.index_put(x, (mod_tensor(m, [0]),) * 3, x[0, 0]),
    lambda m, x: m.index_put(x, (mod_tensor(m, [3]),), x[0, 0], accumulate=True),
    lambda m, x: m.index_put(x, (mod_tensor(m, [0, 0]),), x[0, :2], accumulate=True),
    lambda m, x: m.index_put(x, (mod_tensor(m, [0]),), 1.0),
    lambda m, x: m.masked_fill(x, mod_tensor(m, [1, 0, 1, 0], "uint8"), 1.0),
    lambda m, x: m.masked_fill(x, mod_tensor(m, [True, False, True]), 1.0),
    lambda m, x: m.masked_fill(x, mod_tensor(m, [True, False, True, False]), mod_tensor(m, [1.0])),
    lambda m, x: m.masked_fill(x.long(), mod_tensor(m, [True, False, True, False]), float("inf")),
    lambda m, x: m.masked_select(x, mod_tensor(m, [1, 0, 1, 0], "uint8")),
    lambda m, x: m.masked_scatter(x, mod_tensor(m, [True, False, True, False]), x[:1]),
    lambda m, x: m.masked_scatter(x, mod_tensor(m, [True, False, True, False]), x.double()),
    lambda m, x: m.take(x, mod_tensor(m, [12])),
    lambda m, x: m.take(x, mod_tensor(m, [-13])),
    lambda m, x: m.take(x, mod_tensor(m, [0], "int32")),
    lambda m, x: m.take_along_dim(x, mod_tensor(m, [[0]], "int32"), 1),
    lambda m, x: m.take_along_dim(x, mod_tensor(m, [0]), 1),
    lambda m, x: m.take_along_dim(x, mod_tensor(m, [[0, 1]]), 0),
    lambda m, x: m.take_along_dim(x, mod_tensor(m, [-1])),
    lambda m, x: m.put(x, mod_tensor(m, [0, 1]), x[0, :1]),
    lambda m, x: m.put(x, mod_tensor(m, [0]), x[0, :1].double()),
    lambda m, x: m.put(x, mod_tensor(m, [12]), x[0, :1]),
    lambda m, x: x.masked_fill_(mod_tensor(m, np.ones((2, 3, 4), bool)), 1.0),
    lambda m, x: x.scatter_(0, mod_tensor(m, [[0]]), x.double()),
    lambda m, x: x.index_put_((mod_tensor(m, [5]),), x[0, 0].clone()),
]


@pytest.mark.parametrize("case", range(len(OP_ERRORS)))
def test_op_errors(case: int) -> None:
    fn = OP_ERRORS[case]
    e, t = make_pair((3, 4))
    with pytest.raises(Exception) as expected:
        fn(torch, t)
    before = e.clone()
    with pytest.raises(expected.type):
        fn(ember, e)
    assert np.array_equal(np.array(e), np.array(before)) and e._version == 0


# Inputs failing two or more of an op's checks at once: the error is the one torch checks
# first (its type, and a phrase of its message). f(m) builds everything with module m.
ERROR_ORDER = [
    # masked_fill and index_fill fill with a 0-d tensor's item(), converted with its checks
    (lambda m: m.masked_fill(m.tensor(5, dtype=m.uint8), m.tensor(False), m.tensor(-1.5)),
     "cannot be converted to type uint8_t"),
    (lambda m: m.zeros(0, dtype=m.int8).masked_fill_(m.tensor(True), m.tensor(200)),
     "cannot be converted to type int8_t"),
    (lambda m: m.zeros(2, dtype=m.float16).masked_fill(m.tensor(True), m.tensor(1e10)),
     "without overflow"),
    (lambda m: m.zeros(2, dtype=m.uint8).index_fill_(0, m.tensor([0]), m.tensor(-1.5)),
     "cannot be converted to type uint8_t"),
    # scatter_reduce has no complex amax and amin (after the shapes, before the bounds)
    (lambda m: m.scatter_reduce(m.tensor(1j), 0, m.tensor(5), m.tensor(1j), "amax"),
     '"scatter_gather_tensor_cpu_reduce_amax" not implemented'),
    (lambda m: m.tensor(1j).scatter_reduce_(0, m.tensor(0), m.tensor(1j), "amin",
                                            include_self=False),
     '"scatter_gather_tensor_cpu_reduce_amin" not implemented'),
    (lambda m: m.scatter_reduce(m.tensor(1j), 0, m.tensor([[0]]), m.tensor(1j), "amax"),
     "Index tensor must have the same number of dimensions"),
    # index_copy: the index count against a 0-d source before the dtypes
    (lambda m: m.index_copy(m.tensor(7.0), 0, m.zeros(0, dtype=m.int64),
                            m.ones((), dtype=m.int16)), "When source is scalar"),
    (lambda m: m.tensor(8.0, dtype=m.float64).index_copy_(
        -1, m.zeros(0, dtype=m.int64), m.ones((), dtype=m.float32)), "When source is scalar"),
    (lambda m: m.index_copy(m.ones(3), 0, m.zeros(2, 2, dtype=m.int32),
                            m.ones(2, 2, dtype=m.int16)), "Index should have dimension"),
    (lambda m: m.index_copy(m.ones(3), 0, m.zeros(2, dtype=m.int32),
                            m.ones(2, 2, dtype=m.int16)), "dimensionality must match"),
    (lambda m: m.index_copy(m.ones(3, 4), 0, m.zeros(2, dtype=m.int32), m.ones(2, 4)),
     "Expected a long tensor for index"),
    (lambda m: m.index_copy(m.ones(3, 4), 0, m.zeros(2, dtype=m.int64),
                            m.ones(2, 3, dtype=m.float64)), "same dtype"),
    (lambda m: m.index_copy(m.ones(3, 4), 0, m.zeros(2, dtype=m.int64), m.ones(2, 3)),
     "same slice shapes"),
    (lambda m: m.index_copy(m.ones(3, 4), 0, m.zeros(2, dtype=m.int64), m.ones(3, 4)),
     "Number of indices (2)"),
    (lambda m: m.ones(3, 4).index_copy_(0, m.tensor([5]), m.ones(1, 4)), "out of bounds"),
    # index_add: source's size along dim is read before the shapes are compared
    (lambda m: m.tensor(3.0).index_add_(0, m.zeros(0, dtype=m.int64), m.ones(()), alpha=2),
     "Dimension specified as 0 but tensor has no dimensions"),
    (lambda m: m.index_add(m.tensor(1.0), -1, m.zeros(0, dtype=m.int64), m.ones(())),
     "Dimension specified as 0"),
    (lambda m: m.index_add(m.tensor(1.0), 0, m.zeros(0, dtype=m.int64),
                           m.ones((), dtype=m.int16)), "must have the same scalar type"),
    (lambda m: m.index_add(m.ones(3), 0, m.zeros(2, 2, dtype=m.int16),
                           m.ones(2, dtype=m.int16)), "Index is supposed to be a vector"),
    (lambda m: m.index_add(m.ones(3), 0, m.zeros(2, dtype=m.int16), m.ones(2, dtype=m.int16)),
     "Expected dtype int32/int64 for index"),
    (lambda m: m.index_add(m.ones(3, 4), 1, m.zeros(2, dtype=m.int32), m.ones(2)),
     "Indexing dim 1 is out of bounds of the source"),
    (lambda m: m.index_add(m.ones(3, 4), 1, m.zeros(2, dtype=m.int32), m.ones(4, 2)),
     "source tensor shape must match"),
    (lambda m: m.index_add(m.ones(()), 0, m.tensor([0, 0]), m.ones(2)),
     "source tensor shape must match"),
    (lambda m: m.index_add(m.ones(3), 0, m.tensor([0]), m.ones(())),
     "source tensor shape must match"),
    # index_select: the rank, the count for a 0-d input, the dtype, then the bounds, whose
    # error depends on the path torch's CPU kernel takes
    (lambda m: m.index_select(m.tensor(-6.0), 0, m.tensor([-1, 0, -1], dtype=m.int16)),
     "Index to scalar can have only 1 value"),
    (lambda m: m.index_select(m.tensor(-6.0), 0, m.tensor([[0]], dtype=m.int16)),
     "Index is supposed to be a vector"),
    (lambda m: m.index_select(m.tensor(-6.0), 0, m.tensor([0], dtype=m.int16)),
     "Expected dtype int32 or int64"),
    (lambda m: m.index_select(m.tensor([[3.0]]), -1, m.tensor([-1, 0])),
     "INDICES element is out of DATA bounds"),
    (lambda m: m.index_select(m.ones(2, 3, dtype=m.int64), 1, m.tensor([3])),
     "INDICES element is out of DATA bounds"),
    (lambda m: m.index_select(m.ones(2, 3).t(), 0, m.tensor([-1, 0])),
     "index out of range in self"),
    (lambda m: m.index_select(m.ones(3), 0, m.tensor([3])), "index out of range in self"),
    (lambda m: m.index_select(m.ones(0, 2), 0, m.tensor([1])),
     "self indexing axis dim should be positive"),
    (lambda m: m.index_select(m.ones(0, 2), 1, m.tensor([2])),
     "INDICES element is out of DATA bounds"),
    # take_along_dim of a 0-d input along a dim reads that dim's size
    (lambda m: m.take_along_dim(m.tensor(-1.5), m.tensor(0), 0), "Dimension specified as 0"),
    (lambda m: m.take_along_dim(m.tensor(-1.5), m.tensor([0]), 0),
     "should have the same number of dimensions"),
]


@pytest.mark.parametrize("case", range(len(ERROR_ORDER)))
def test_index_ops_check_in_torchs_order(case: int) -> None:
    fn, phrase = ERROR_ORDER[case]
    check_same_error(fn, phrase)


# an index without elements writes nothing: torch checks neither the shapes nor a number's
# range (nor, for scatter_reduce, a complex amax), only the source's dtype
SCATTERS_OF_NOTHING = [
    lambda m: m.scatter(m.tensor(-float("inf"), dtype=m.float64), -1, m.zeros(0, dtype=m.int64),
                        1j),
    lambda m: m.scatter(m.zeros(2, dtype=m.uint8), 0, m.zeros(0, dtype=m.int64), 300),
    lambda m: m.scatter(m.zeros(2, dtype=m.int8), 0, m.zeros(0, 2, dtype=m.int64), 1j,
                        reduce="multiply"),
    lambda m: m.scatter(m.zeros(2, dtype=m.int8), 0, m.zeros(0, 2, dtype=m.int64),
                        m.ones(3, dtype=m.int8)),
    lambda m: m.zeros(2, 3).scatter_(0, m.zeros(0, 5, 7, dtype=m.int64), m.ones(1, 1, 1)),
    lambda m: m.scatter_add(m.zeros(2), 0, m.zeros(0, 2, dtype=m.int64), m.ones(3)),
    lambda m: m.scatter_reduce(m.zeros(2, dtype=m.complex64), 0, m.zeros(0, dtype=m.int64),
                               m.ones(2, dtype=m.complex64), "amax"),
    lambda m: m.scatter_reduce(m.ones(2), 0, m.zeros(0, 2, dtype=m.int64), m.ones(3), "mean",
                               include_self=False),
]


@pytest.mark.parametrize("case", range(len(SCATTERS_OF_NOTHING)))
def test_scatter_through_an_empty_index_checks_nothing_it_would_write(case: int) -> None:
    fn = SCATTERS_OF_NOTHING[case]
    check(fn(ember), fn(torch))


@pytest.mark.parametrize("source", [(), (1,), (2,)])
def test_index_copy_into_0d_and_from_0d(source: tuple[int, ...]) -> None:
    index = [0] * (source[0] if source else 1)
    for x_shape in [(), (4,)]:
        got = ember.index_copy(ember.zeros(x_shape), 0, ember.tensor(index),
                               ember.full(source, 5.0))
        check(got, torch.index_copy(torch.zeros(x_shape), 0, torch.tensor(index),
                                    torch.full(source, 5.0)))


def test_take_along_dim_of_0d_without_dim() -> None:
    check(ember.take_along_dim(ember.tensor(-1.5), ember.tensor(0)),
          torch.take_along_dim(torch.tensor(-1.5), torch.tensor(0)))


def test_scatter_reduce_argument_is_deprecated_like_torch() -> None:
    e = ember.zeros(3)
    with pytest.warns(UserWarning, match="deprecated"):
        e.scatter(0, mod_tensor(ember, [0]), e[:1], reduce="add")


# ----------------------------------------------------------------------------- the dispatcher

def _calls(fn: Callable[[], Any]) -> list[Any]:
    """The primitive calls ``fn`` dispatches (operands snapshot as arrays)."""
    with Recorder() as recorder:
        fn()
    return recorder.calls


def test_getitem_dispatches_basic_then_advanced() -> None:
    x = ember.zeros(4, 5, 6).requires_grad_()
    out: list[Any] = []
    basic, advanced = _calls(lambda: out.append(x[1, None, -3:, [0, -1]]))
    assert basic.op.name == "getitem" and basic.params == {"index": (1, None, slice(2, 5, 1))}
    assert advanced.op.name == "index" and advanced.params == {}
    view, *entries = advanced.inputs
    assert view.shape == (1, 3, 6) and entries[:2] == [None, None]
    assert entries[2].tolist() == [0, -1] and np.array_equal(advanced.outputs, np.array(out[0].detach()))
    (call,) = _calls(lambda: x[0])
    assert call.op.name == "getitem" and call.params == {"index": 0}


@pytest.mark.parametrize("index,value,ops", [
    ((1, slice(1, 3)), 5.0, ["getitem", "fill_"]),
    ((slice(None), 1), lambda: ember.ones(3), ["getitem", "copy_"]),
    ([0, 2], lambda: ember.ones(4), ["index_put_"]),
    ((1, [0, 2]), 7.0, ["getitem", "index_put_"]),
])
def test_setitem_writes_in_place_into_the_view(index: Any, value: Any, ops: list[str]) -> None:
    """``x[i] = v``: the basic part is a view, the value is written into it in place."""
    x, t = ember.zeros(3, 4), torch.zeros(3, 4)
    v = value() if callable(value) else value
    calls = _calls(lambda: x.__setitem__(index, v))
    assert [c.op.name for c in calls] == ops
    assert all("index" not in c.params or c.op.name == "getitem" for c in calls)
    t[index] = torch.from_numpy(np.array(v)) if isinstance(v, ember.Tensor) else v
    check(x, t)
    assert x._version == 1


@pytest.mark.parametrize("name,call,expected_params", [
    ("gather", lambda x, i: x.gather(1, i), {"dim"}),
    ("scatter", lambda x, i: x.scatter(1, i, 2.0), {"dim", "reduce"}),
    ("scatter_add", lambda x, i: x.scatter_add(1, i, x), {"dim"}),
    ("scatter_reduce", lambda x, i: x.scatter_reduce(1, i, x, "amax"),
     {"dim", "reduce", "include_self"}),
    ("index_select", lambda x, i: x.index_select(0, i[0]), {"dim"}),
    ("index_add", lambda x, i: x.index_add(1, i[0], x), {"dim", "alpha"}),
    ("index_copy", lambda x, i: x.index_copy(1, i[0, :1], x[:, :1]), {"dim"}),
    ("index_fill", lambda x, i: x.index_fill(1, i[0], 3.0), {"dim"}),
    ("index_put", lambda x, i: x.index_put((i[0],), x[0], True), {"accumulate"}),
    ("masked_fill", lambda x, i: x.masked_fill(i == 0, 1.0), set()),
    ("masked_select", lambda x, i: x.masked_select(i == 0), set()),
    ("masked_scatter", lambda x, i: x.masked_scatter(i == 0, x), set()),
    ("take", lambda x, i: x.take(i), set()),
    ("take_along_dim", lambda x, i: x.take_along_dim(i, 1), {"dim"}),
    ("put", lambda x, i: x.put(i, x, True), {"accumulate"}),
])
def test_ops_take_index_tensors_as_operands(name: str, call: Callable[..., Any],
                                            expected_params: set[str]) -> None:
    """Index tensors and masks are operands of the primitive; its params are static."""
    x = ember.zeros(2, 2)
    index = ember.tensor([[0, 1], [1, 1]])
    out: list[Any] = []
    calls = _calls(lambda: out.append(call(x, index)))
    (primitive,) = [c for c in calls if c.op.name == name]
    assert np.array_equal(primitive.inputs[0], np.array(x))
    index_dtype = np.bool_ if name.startswith("masked") else np.int64
    assert any(isinstance(a, np.ndarray) and a.dtype == index_dtype for a in primitive.inputs[1:])
    assert set(primitive.params) == expected_params
    assert not any(isinstance(v, (ember.Tensor, np.ndarray)) for v in primitive.params.values())
    assert np.array_equal(primitive.outputs, np.array(out[0]))
    assert REGISTRY[name].differentiable


# ----------------------------------------------------------------------------- shape rules

def _operand(spec: Any, arrays: bool) -> Any:
    """A shape (float32), a (dtype, shape) pair, or a number/None as it is."""
    if isinstance(spec, tuple):
        dtype, shape = spec if isinstance(spec[0], str) else ("float32", spec)
        return np.zeros(shape, dtype) if arrays else meta.MetaArray(shape, dtype)
    return spec


@pytest.mark.parametrize("name,operands,params", [
    ("gather", ((3, 4), ("int64", (3, 2))), {"dim": 1}),
    ("index_select", ((3, 4), ("int64", (5,))), {"dim": 1}),
    ("take", ((3, 4), ("int64", (2, 2))), {}),
    ("scatter_add", ((3, 4), ("int64", (2, 4)), (2, 4)), {"dim": 0}),
    ("masked_fill", ((4,), ("bool", (3, 4)), 1.0), {}),
    ("getitem", ((3, 4, 5),), {"index": (1, None, slice(0, 4, 2))}),
    ("index", ((3, 4, 5), None, ("int64", (2, 1)), ("int64", (3,))), {}),
    ("index_put", ((3, 4), (4,), ("int64", (2,))), {"accumulate": False}),
])
def test_meta_rules_match_results(name: str, operands: tuple[Any, ...], params: dict[str, Any]
                                  ) -> None:
    op = REGISTRY[name]
    expected = op.forward(*[_operand(o, True) for o in operands], **params)
    got = op.meta(*[_operand(o, False) for o in operands], **params)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    if op.view:
        assert got.strides == expected.strides
    for dynamic in ("nonzero", "argwhere", "masked_select"):
        assert REGISTRY[dynamic].meta in meta.DYNAMIC_RULES


# ----------------------------------------------------------------------------- CUDA

class _OnCuda:
    """A module (ember or torch) whose new tensors live on CUDA."""

    def __init__(self, module: Any):
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def from_numpy(self, arr: np.ndarray) -> Any:
        return self._module.from_numpy(arr).cuda()

    def ones(self, *size: int, dtype: Any = None) -> Any:
        return self._module.ones(*size, dtype=dtype, device="cuda")


cuda_present = pytest.mark.skipif(not ember.cuda_available() or not torch.cuda.is_available(),
                                  reason="needs a CUDA device with CuPy and torch CUDA")


def cuda_pair(shape: tuple[int, ...], dtype: str = "float32") -> tuple[Any, Any]:
    e, t = make_pair(shape, dtype)
    return e.cuda(), t.cuda()


@pytest.mark.cuda
@cuda_present
@pytest.mark.parametrize("case", range(len(GETITEM)))
def test_getitem_cuda(case: int) -> None:
    shape, build = GETITEM[case]
    e, t = cuda_pair(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(e[build(_OnCuda(ember))], t[build(_OnCuda(torch))])


@pytest.mark.cuda
@cuda_present
@pytest.mark.parametrize("case", range(len(SETITEM)))
def test_setitem_cuda(case: int) -> None:
    shape, dtype, index, value = SETITEM[case]
    if dtype == "bfloat16":
        return  # CuPy has no bfloat16
    e, t = cuda_pair(shape, dtype)
    t[index(_OnCuda(torch))] = value(_OnCuda(torch), dtype)
    e[index(_OnCuda(ember))] = value(_OnCuda(ember), dtype)
    check(e, t)


@pytest.mark.cuda
@cuda_present
@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter:UserWarning")
@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("name,shape,fn", OPS, ids=[o[0] for o in OPS])
def test_ops_cuda(name: str, shape: tuple[int, ...], fn: Callable[..., Any], dtype: str) -> None:
    e, t = cuda_pair(shape, dtype)
    check(fn(_OnCuda(ember), e), fn(_OnCuda(torch), t))


@pytest.mark.cuda
@cuda_present
@pytest.mark.parametrize("fn", [
    lambda m, x: x[m.from_numpy(np.array([0, 9]))],
    lambda m, x: x[:, m.from_numpy(np.array([-7]))],
    lambda m, x: x.gather(1, m.from_numpy(np.array([[0], [5], [0]]))),
    lambda m, x: x.index_select(0, m.from_numpy(np.array([3]))),
    lambda m, x: x.take(m.from_numpy(np.array([12]))),
    lambda m, x: x.index_put((m.from_numpy(np.array([3])),), x[0, 0].clone(), accumulate=True),
])
def test_out_of_bounds_cuda(fn: Callable[..., Any]) -> None:
    """CuPy does not check bounds; Ember must, before any write (torch's CPU error types)."""
    e, t = make_pair((3, 4))
    with pytest.raises(Exception) as expected:
        fn(torch, t)
    with pytest.raises(expected.type):
        fn(_OnCuda(ember), e.cuda())


@pytest.mark.parametrize("dtype, value", [
    ("uint8", -1), ("uint8", -255), ("uint8", -256), ("uint8", 256), ("int8", 128),
    ("int8", -129), ("int32", 2**31), ("int64", 2**63), ("float32", 1e39), ("float32", -1e39),
    ("float32", float("inf")), ("float16", 1e5), ("bfloat16", 1e39), ("int64", 2.7),
    ("int32", float("nan")), ("bool", 2), ("float32", 1 + 0j), ("float32", 1 + 1j),
])
def test_fill_converts_the_value_as_torch_converts_a_scalar(dtype, value) -> None:
    """torch's checked Scalar conversion: out-of-range values raise, negative ints wrap into
    unsigned dtypes down to -max."""
    def fill(m):
        return m.zeros(2, dtype=getattr(m, dtype)).fill_(value)

    try:
        expected = fill(torch)
    except Exception as exc:
        with pytest.raises(type(exc), match="without overflow"):
            fill(ember)
        return
    got = fill(ember)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    np.testing.assert_array_equal(np.array(got).astype(np.float64),
                                  expected.double().numpy())


MASK_LAYOUTS = [  # (source shape, permutation, index builder taking the module)
    ((2, 2, 4), (2, 1, 0), lambda m: m.tensor([False, False, True, False])),
    ((2, 2, 4), (2, 1, 0), lambda m: m.tensor([True, False, True, True])),
    ((2, 3, 4), (2, 0, 1), lambda m: m.tensor([True, False, True, True])),
    ((2, 3, 4), (2, 0, 1), lambda m: (slice(None), m.tensor([[True, False, True],
                                                            [False, True, True]]))),
    ((2, 3, 4), (1, 2, 0), lambda m: (m.tensor([True, False, True]), m.tensor([1, 0]))),
]


@pytest.mark.parametrize("case", range(len(MASK_LAYOUTS)))
def test_mask_index_result_laid_out_as_torch(case: int) -> None:
    # torch indexes with the mask's nonzero columns: the result's layout follows the source's
    shape, perm, build = MASK_LAYOUTS[case]
    arr = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    e = ember.from_numpy(arr).permute(*perm)
    t = torch.from_numpy(arr.copy()).permute(*perm)
    got, expected = e[build(ember)], t[build(torch)]
    check(got, expected)
    assert got.stride() == expected.stride()


MASKED_LAYOUTS: list[Callable[[Any, Any], Any]] = [
    lambda m, x: x[m.tensor([False, False, True, False])],
    lambda m, x: x[m.tensor([True, False, True, True])],
    lambda m, x: x[m.tensor([[True, False], [False, True], [True, True], [False, False]])],
    lambda m, x: x[:, m.tensor([True, False])],
    lambda m, x: x[..., m.tensor([False, True])],
    lambda m, x: x[m.tensor([True, True, False, True]), :, m.tensor([1, 0, 1])],
    lambda m, x: x.transpose(0, 1)[m.tensor([True, True])],
    lambda m, x: x[m.tensor([False] * 4)],
    lambda m, x: x.contiguous()[m.tensor([True, False, True, True])],
]


@pytest.mark.parametrize("index", MASKED_LAYOUTS)
def test_mask_results_are_laid_out_as_torch(index: Callable[[Any, Any], Any]) -> None:
    # torch indexes with the mask's nonzero columns: the result keeps the source's order of
    # the dims it keeps (no meta rule knows a mask's count, so the kernel lays it out)
    values = random_array((2, 2, 4), "float64", np.random.default_rng(0))
    got = index(ember, ember.tensor(values).permute(2, 1, 0))
    expected = index(torch, torch.tensor(values).permute(2, 1, 0))
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert got.stride() == expected.stride() and got.is_contiguous() == expected.is_contiguous()


@pytest.mark.parametrize("key", [
    lambda L, x: x[:, L.tensor([0, 0, 0])],
    lambda L, x: x[:, :, L.tensor([0, 0, 0])],
    lambda L, x: x[L.tensor([0, 0]), :, L.tensor([0, 0])],
])
def test_advanced_index_results_follow_torchs_layout(key):
    """torch reshapes each index to the result's dims, whose size-1 dims then stride as
    unsqueeze's: that orders a permuted source's dims."""
    def run(L):
        return key(L, L.tensor([[[5.0], [4.0]], [[0.0], [3.0]]]).permute(2, 1, 0))

    assert run(ember).stride() == run(torch).stride()


@pytest.mark.parametrize("shape, permutation, dim, n", [
    ((1, 2, 3), (1, 2, 0), 1, 3), ((1, 1, 1, 2), (0, 3, 1, 2), 2, 2),
    ((1, 2, 1, 2), (1, 2, 3, 0), 2, 2), ((1, 1, 3, 3), (0, 2, 3, 1), 2, 3),
])
def test_an_index_of_a_view_with_odd_size_1_strides_follows_them(shape, permutation, dim, n):
    """A permuted source whose size-1 dims stride otherwise than a row-major array's (numpy
    calls it contiguous all the same): torch's index result follows those strides."""
    def run(L):
        x = L.arange(float(np.prod(shape)), dtype=L.float64).reshape(shape).permute(*permutation)
        return x[(slice(None),) * dim + (L.zeros(n, dtype=L.int64),)]

    ours, theirs = run(ember), run(torch)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours.stride() == theirs.stride() and ours.is_contiguous() == theirs.is_contiguous()


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_into_an_empty_dim_refuses_before_the_dtype(accumulate):
    """torch's AdvancedIndex refuses a non-empty index into a dim of size 0 first."""
    for L in (ember, torch):
        with pytest.raises(IndexError, match="out of bounds for dimension with size 0"):
            L.zeros(0, 3).index_put_((L.tensor([0, 0]),), L.tensor(2), accumulate=accumulate)
        with pytest.raises(RuntimeError, match="dtypes match"):
            L.zeros(3, 0).index_put_((L.tensor([1]),), L.tensor(2), accumulate=accumulate)
