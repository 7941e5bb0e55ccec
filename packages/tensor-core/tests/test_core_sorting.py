"""Sorting, selection and uniqueness ops against torch: values, indices, dtypes, errors."""

from __future__ import annotations

import pickle
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import torch
from dispatch_oracle import Recorder, same
from torch_oracle import DTYPES_ALL, DTYPES_FLOAT, DTYPES_INT, check, check_same_error, pair

import ember.core as ember
from ember.core import REGISTRY, meta
from ember.core import return_types as rt

REAL = DTYPES_FLOAT + DTYPES_INT  # what topk, kthvalue, median, searchsorted accept
SHAPES = [(), (0,), (7,), (3, 5), (2, 3, 4), (0, 3)]


def both(arr: np.ndarray, dtype: str, noncontiguous: bool = False) -> tuple[Any, Any]:
    """``arr`` as an ember and a torch tensor of ``dtype`` (transposed views if asked)."""
    src = np.asarray(arr).astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    if noncontiguous and src.ndim > 1:
        src = np.ascontiguousarray(src.T).T
    t = torch.from_numpy(src.astype(np.float32) if dtype == "bfloat16" else src.copy())
    if dtype == "bfloat16":
        t = t.to(torch.bfloat16)
    return ember.from_numpy(src), t


def tied(shape: tuple[int, ...], dtype: str, seed: int = 0, nan: bool = True,
         noncontiguous: bool = False) -> tuple[Any, Any]:
    """Few distinct values (many ties), -0.0 beside 0.0, and NaNs for float dtypes."""
    rng = np.random.default_rng(seed)
    lo = 0 if dtype in ("uint8", "bool") else -3
    arr = rng.integers(lo, 4, shape).astype(np.float64)
    if dtype == "bool":
        arr = arr > 1
    elif dtype in DTYPES_FLOAT:
        arr[arr == 0] = np.where(rng.random(int((arr == 0).sum())) < 0.5, -0.0, 0.0)
        if nan:
            arr[rng.random(shape) < 0.15] = np.nan
    return both(np.asarray(arr), dtype, noncontiguous)


def distinct(shape: tuple[int, ...], dtype: str, seed: int = 0) -> tuple[Any, Any]:
    """No ties, where ``dtype`` can hold that many distinct small integers."""
    n = int(np.prod(shape))
    rng = np.random.default_rng(seed)
    arr = rng.permutation(n).reshape(shape) - (0 if dtype == "uint8" else n // 2)
    return both(arr % EXACT.get(dtype, n + 1), dtype)


# How many consecutive integers a dtype holds exactly; bigger tensors repeat values.
EXACT = {"bfloat16": 256, "uint8": 256, "int8": 256, "float16": 2048}


def gathers(values: Any, indices: Any, src: Any, dim: int, keepdim: bool = True) -> None:
    """``indices`` point at ``values`` in ``src`` (where tie-breaking is unspecified)."""
    v, i, s = np.array(values, np.float64), np.array(indices), np.array(src, np.float64)
    if s.ndim == 0:
        assert (i == 0).all()
        return
    if not keepdim:
        v, i = np.expand_dims(v, dim), np.expand_dims(i, dim)
    np.testing.assert_array_equal(np.take_along_axis(s, i, dim), v)


# ----------------------------------------------------------------------------- sort family

@pytest.mark.parametrize("dtype", DTYPES_ALL)
@pytest.mark.parametrize("shape", SHAPES + [(1500,), (3, 700)])  # small and gathered paths
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_sort_argsort_msort_ties(dtype: str, shape: tuple[int, ...], noncontiguous: bool) -> None:
    e, t = tied(shape, dtype, noncontiguous=noncontiguous)
    for dim in (0, -1):
        for desc in (False, True):
            kw = {"dim": dim, "descending": desc, "stable": True}
            check(ember.sort(e, **kw), torch.sort(t, **kw))
            check(e.sort(dim=dim, descending=desc, stable=True),
                  t.sort(dim=dim, descending=desc, stable=True))
            check(ember.argsort(e, **kw), torch.argsort(t, **kw))
            check(e.argsort(dim, descending=desc), t.argsort(**kw))
    check(ember.msort(e), torch.msort(t))
    check(e.msort(), t.msort())


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("shape", [(), (0,), (9,), (4, 6), (0, 3), (300, 2), (2, 1200)])
def test_topk(dtype: str, shape: tuple[int, ...]) -> None:
    e, t = distinct(shape, dtype)
    unique_values = e.numel() <= EXACT.get(dtype, e.numel())
    for dim in (0, -1):
        n = shape[dim] if shape else 1
        for k in sorted({0, min(1, n), n // 3, n}):
            for largest in (True, False):
                r, ref = ember.topk(e, k, dim, largest), torch.topk(t, k, dim, largest)
                check(r.values, ref.values)
                if unique_values:  # torch leaves the order of tied indices unspecified
                    check(r.indices, ref.indices)
                gathers(r.values, r.indices, e, dim if shape else 0)
                # sorted=False: the same elements, in an order torch leaves unspecified
                u, uref = e.topk(k, dim, largest, False), t.topk(k, dim, largest, False)
                check(u.values.sort(dim).values, uref.values.sort(dim).values)


@pytest.mark.parametrize("dtype", DTYPES_FLOAT)
def test_topk_nan_and_ties(dtype: str) -> None:
    for shape in [(40,), (5, 700)]:
        e, t = tied(shape, dtype)
        for k in (1, 3, shape[-1] // 5):
            for largest in (True, False):
                r, ref = ember.topk(e, k, largest=largest), torch.topk(t, k, largest=largest)
                check(r.values, ref.values)  # tied indices are unspecified in torch
                gathers(r.values, r.indices, e, -1)


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("shape", [(), (9,), (4, 6), (0, 3), (3, 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue(dtype: str, shape: tuple[int, ...], keepdim: bool) -> None:
    e, t = distinct(shape, dtype)
    et, tt = tied(shape, dtype)
    for dim in (0, -1):
        n = shape[dim] if shape else 1
        if n == 0:
            continue
        for k in sorted({1, (n + 1) // 2, n}):
            check(ember.kthvalue(e, k, dim, keepdim), torch.kthvalue(t, k, dim, keepdim))
            r = et.kthvalue(k, dim, keepdim)
            check(r.values, tt.kthvalue(k, dim, keepdim).values)
            gathers(r.values, r.indices, et, dim if shape else 0, keepdim)


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("shape", [(), (1,), (8,), (9,), (4, 7), (3, 0), (2, 3, 5)])
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_median_nanmedian(dtype: str, shape: tuple[int, ...], noncontiguous: bool) -> None:
    e, t = tied(shape, dtype, noncontiguous=noncontiguous)
    if e.numel() or dtype in DTYPES_FLOAT:
        check(ember.median(e), torch.median(t))
        check(e.nanmedian(), t.nanmedian())
    for dim in (0, -1):
        if shape and shape[dim] == 0:
            continue
        for keepdim in (False, True):
            check(ember.median(e, dim, keepdim), torch.median(t, dim, keepdim))
            check(e.nanmedian(dim, keepdim=keepdim), t.nanmedian(dim, keepdim=keepdim))


@pytest.mark.parametrize("dtype", DTYPES_FLOAT)
def test_median_all_nan_and_empty(dtype: str) -> None:
    e, t = both(np.full((3, 5), np.nan), dtype)
    check(ember.median(e, 1), torch.median(t, 1))
    check(ember.nanmedian(e), torch.nanmedian(t))
    # torch's index into an all-NaN row comes from nth_element's internals
    r = ember.nanmedian(e, 1)
    check(r.values, torch.nanmedian(t, 1).values)
    gathers(r.values, r.indices, e, 1, keepdim=False)
    e, t = both(np.zeros((0, 2)), dtype)
    check(ember.median(e), torch.median(t))
    check(ember.nanmedian(e, 1), torch.nanmedian(t, 1))


@pytest.mark.parametrize("dtype", DTYPES_INT + ["bool"])
def test_median_of_empty_integer_tensor(dtype: str) -> None:
    # torch fills NaN converted to the dtype: the processor's conversion, which numpy's is
    e, t = both(np.zeros(0), dtype)
    check(ember.median(e), torch.median(t))
    check(ember.nanmedian(e), torch.nanmedian(t))


SELECTING = {  # (op, args after the input)
    "kthvalue": (lambda m, x: m.kthvalue(x, 1, 0)),
    "kthvalue last": (lambda m, x: m.kthvalue(x, 1)),
    "kthvalue k=2": (lambda m, x: m.kthvalue(x, 2, 0)),
    "mode": (lambda m, x: m.mode(x, 0)),
    "mode last": (lambda m, x: m.mode(x)),
    "median": (lambda m, x: m.median(x)),
    "median dim": (lambda m, x: m.median(x, 0)),
    "median last": (lambda m, x: m.median(x, -1)),
    "nanmedian": (lambda m, x: m.nanmedian(x)),
    "nanmedian dim": (lambda m, x: m.nanmedian(x, 0)),
}


@pytest.mark.parametrize("dtype", ["bool", "complex64", "int64", "float32"])
@pytest.mark.parametrize("shape", [(), (3,), (0,), (0, 1), (2, 0)])
@pytest.mark.parametrize("name", list(SELECTING))
def test_selecting_ops_check_dims_before_dtypes(name: str, shape: tuple[int, ...],
                                                dtype: str) -> None:
    # torch checks the dim's size (and k) before its kernels' dtypes; 0-d inputs are
    # copied whatever their dtype by kthvalue and mode, and so are empty ones by mode
    # and by median without dim (NaN in the dtype)
    fn = SELECTING[name]
    t = torch.zeros(shape, dtype=getattr(torch, dtype))
    e = ember.zeros(shape, dtype=getattr(ember, dtype))
    try:
        expected = fn(torch, t)
    except Exception as error:  # noqa: BLE001  (the error itself is compared)
        with pytest.raises(Exception) as got:
            fn(ember, e)
        assert type(got.value) is type(error)
        if isinstance(error, NotImplementedError):
            assert str(got.value) == str(error)  # the kernel torch names
        return
    got = fn(ember, e)
    if isinstance(expected, tuple):
        check(got.values, expected.values)
    else:
        check(got, expected)


@pytest.mark.parametrize("dtype", DTYPES_ALL)
@pytest.mark.parametrize("shape", [(), (1,), (6,), (10,), (4, 9), (3, 0), (2, 5, 3)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_mode(dtype: str, shape: tuple[int, ...], keepdim: bool) -> None:
    # torch breaks ties by the last occurrence only for rows short enough for its
    # insertion sort; longer rows are checked for the value and a matching index.
    e, t = tied(shape, dtype, nan=False)
    for dim in (0, -1):
        if shape and shape[dim] == 0:
            continue
        check(ember.mode(e, dim, keepdim), torch.mode(t, dim, keepdim))
    e, t = tied((3, 200), dtype, nan=False)
    r = e.mode(1, keepdim)
    check(r.values, t.mode(1, keepdim).values)
    gathers(r.values, r.indices, e, 1, keepdim)


def test_mode_smallest_of_equally_frequent() -> None:
    e, t = both(np.array([[1, 2, 2, 3, 3, 1, 0], [5, 4, 4, 5, 9, 9, 0]]), "int64")
    check(ember.mode(e), torch.mode(t))


# ----------------------------------------------------------------------------- uniqueness

@pytest.mark.parametrize("dtype", DTYPES_ALL)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_unique_flat(dtype: str, shape: tuple[int, ...], noncontiguous: bool) -> None:
    e, t = tied(shape, dtype, noncontiguous=noncontiguous)
    nan = np.isnan(np.array(e, np.float64))
    for sorted_ in (True, False):
        check(ember.unique(e, sorted_), torch.unique(t, sorted_))
        check(ember.unique(e, sorted_, return_counts=True),
              torch.unique(t, sorted_, return_counts=True))
        values, inverse = ember.unique(e, sorted_, return_inverse=True)
        ref = torch.unique(t, sorted_, return_inverse=True)[1]
        assert inverse.dtype is ember.int64 and tuple(inverse.shape) == tuple(ref.shape)
        # Every NaN is distinct, so which NaN slot an input NaN maps to is up to the sort.
        np.testing.assert_array_equal(np.array(inverse)[~nan], ref.numpy()[~nan])
        np.testing.assert_array_equal(np.array(values, np.float64)[np.array(inverse)],
                                      np.array(e, np.float64))
    for inv in (False, True):
        for counts in (False, True):
            check(e.unique_consecutive(inv, counts), t.unique_consecutive(inv, counts))
    check(e.unique(return_counts=True), t.unique(return_counts=True))


def _same_bits(ours: Any, theirs: Any) -> None:
    """Results equal with their strides, the signs of zeros and the places of NaNs."""
    for o, t in zip(ours, theirs):
        check(o, t)
        assert o.stride() == t.stride(), (o.stride(), t.stride())
        if t.dtype.is_floating_point:
            zeros = t.double().numpy() == 0
            np.testing.assert_array_equal(np.signbit(np.array(o, np.float64))[zeros],
                                          np.signbit(t.double().numpy())[zeros])


@pytest.mark.parametrize("dtype", DTYPES_ALL)
@pytest.mark.parametrize("shape", [(7,), (6, 2), (2, 6), (5, 3, 2), (0, 3), (3, 0), (6, 1),
                                   (40, 2), (3, 60)])
def test_unique_dim(dtype: str, shape: tuple[int, ...]) -> None:
    """Rows as torch sorts them with std::sort, which NaN (neither less nor greater than
    anything) leaves where its steps put them, and which orders equal rows differing in a
    zero's sign as its steps do; laid out as torch stacks them."""
    e, t = tied(shape, dtype, noncontiguous=True)
    e2, t2 = both(np.concatenate([np.array(e), np.array(e)], 0), dtype)  # repeated rows
    for dim in range(-len(shape), len(shape)):
        if 0 in shape and shape[dim] != 0:
            continue
        _same_bits(ember.unique(e, dim=dim, return_inverse=True, return_counts=True),
                   torch.unique(t, dim=dim, return_inverse=True, return_counts=True))
        _same_bits(ember.unique(e2, dim=dim, return_inverse=True),
                   torch.unique(t2, dim=dim, return_inverse=True))
        _same_bits(ember.unique_consecutive(e2, True, True, dim),
                   torch.unique_consecutive(t2, True, True, dim))


def test_unique_dim_of_permuted_and_expanded_inputs_is_laid_out_as_torchs() -> None:
    for L in (ember, torch):
        x = L.tensor([[[-1.5, 1.25]], [[-1.5, -2.5]]]).permute(2, 1, 0)
        y = L.tensor([[[[1.0, -0.0]]]]).expand(1, 1, 2, 2)
        got = [L.unique(x, return_counts=True, dim=1)[0].stride(),
               L.unique(y, return_inverse=True, dim=-4)[0].stride(),
               L.unique_consecutive(x, return_inverse=True, dim=1)[0].stride(),
               L.unique_consecutive(x.permute(0, 2, 1)[..., None], dim=-2).stride()]
        assert got == [(2, 4, 1), (4, 4, 2, 1), (2, 4, 1), (2, 1, 4, 1)], L


# ----------------------------------------------------------------------------- searching

@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("bshape,vshape", [((6,), (4,)), ((6,), ()), ((6,), (2, 3)),
                                            ((0,), (3,)), ((6,), (0,)), ((2, 5), (2, 4)),
                                            ((2, 3, 5), (2, 3, 4)), ((2, 0), (2, 3))])
def test_searchsorted_bucketize(dtype: str, bshape: tuple[int, ...],
                                vshape: tuple[int, ...]) -> None:
    be, bt = tied(bshape, dtype, nan=False, seed=1)
    be, bt = be.sort().values, bt.sort().values
    ve, vt = tied(vshape, dtype, seed=2)
    for right in (False, True):
        check(ember.searchsorted(be, ve, right=right), torch.searchsorted(bt, vt, right=right))
        side = "right" if right else "left"
        check(ember.searchsorted(be, ve, side=side, out_int32=True),
              torch.searchsorted(bt, vt, side=side, out_int32=True))
        if len(bshape) == 1:
            check(ember.bucketize(ve, be, right=right), torch.bucketize(vt, bt, right=right))
    unsorted_e, unsorted_t = tied(bshape, dtype, nan=False, seed=1)
    order_e, order_t = unsorted_e.argsort(), unsorted_t.argsort(stable=True)
    check(ember.searchsorted(unsorted_e, ve, sorter=order_e),
          torch.searchsorted(unsorted_t, vt, sorter=order_t))


@pytest.mark.parametrize("bdtype,vdtype", [("int64", "float32"), ("float16", "float32"),
                                           ("uint8", "int8"), ("float32", "float64"),
                                           ("bfloat16", "float16"), ("int32", "int64")])
def test_searchsorted_promotes(bdtype: str, vdtype: str) -> None:
    be, bt = both(np.array([-2, -1, 0, 0, 1.5, 3]) if "int" not in bdtype else
                  np.array([0, 1, 1, 2, 5]), bdtype)
    ve, vt = both(np.array([-1.5, 0, 1, 2.5, 7]) if "int" not in vdtype else
                  np.array([0, 1, 3, 5, 6]), vdtype)
    check(ember.searchsorted(be, ve), torch.searchsorted(bt, vt))
    ze, zt = both(np.array(1.0 if "int" not in vdtype else 1), vdtype)
    check(ember.searchsorted(be, ze), torch.searchsorted(bt, zt))  # 0-d: the weaker dtype
    check(ember.bucketize(ve, be, right=True), torch.bucketize(vt, bt, right=True))
    for scalar in (2, 2.5, -1.0):
        check(ember.searchsorted(be, scalar), torch.searchsorted(bt, scalar))
        check(ember.bucketize(scalar, be), torch.bucketize(scalar, bt))


@pytest.mark.parametrize("dtype", ["complex64", "bool"])
@pytest.mark.parametrize("bshape,vshape", [((2,), (0,)), ((2, 3), (2, 0)), ((0,), (0,))])
def test_searchsorted_of_no_values_refuses_no_dtype(dtype: str, bshape: tuple[int, ...],
                                                     vshape: tuple[int, ...]) -> None:
    # torch's kernel returns before it picks a loop for the dtype (it has no bool or complex
    # one) when there is no value to look up
    for sorted_dtype in (dtype, "float32"):
        be, bt = both(np.zeros(bshape), sorted_dtype)
        ve, vt = both(np.zeros(vshape), dtype)
        for out_int32 in (False, True):
            check(ember.searchsorted(be, ve, out_int32=out_int32),
                  torch.searchsorted(bt, vt, out_int32=out_int32))
        if len(bshape) == 1:
            check(ember.bucketize(ve, be), torch.bucketize(vt, bt))


@pytest.mark.parametrize("dtype", DTYPES_INT)
@pytest.mark.parametrize("n", [0, 1, 20])
def test_bincount(dtype: str, n: int) -> None:
    e, t = tied((n,), dtype, nan=False)
    e, t = e.abs(), t.abs()
    check(ember.bincount(e), torch.bincount(t))
    check(e.bincount(minlength=9), t.bincount(minlength=9))
    for wdtype in ["float32", "float64", "float16", "int64", "bool", "bfloat16"]:
        we, wt = pair((n,), wdtype, seed=3)
        check(ember.bincount(e, we, 2), torch.bincount(t, wt, 2))


@pytest.mark.parametrize("dtype", DTYPES_FLOAT)
@pytest.mark.parametrize("shape", [(), (0,), (50,), (7, 30)])
def test_histc(dtype: str, shape: tuple[int, ...]) -> None:
    e, t = pair(shape, dtype, low=-4, high=4)
    for bins, lo, hi in [(100, 0, 0), (7, -2, 3), (4, 0.1, 0.7), (5, -4, 4), (1, 0, 0)]:
        check(ember.histc(e, bins, lo, hi), torch.histc(t, bins, lo, hi))
    # elements exactly on bin edges, NaN ignored inside a given range
    e, t = both(np.array([-1, 0, 0.25, 0.5, 0.75, 1, 1.25, np.nan, 0.1, 0.3, 0.7]), dtype)
    for bins, lo, hi in [(4, 0, 1), (3, 0.1, 0.7), (10, 0, 1), (6, -1, 1.25)]:
        check(e.histc(bins, lo, hi), t.histc(bins, lo, hi))
    e, t = both(np.array([2.0, 2.0]), dtype)  # a one-point range widens to [v-1, v+1]
    check(e.histc(4), t.histc(4))


@pytest.mark.parametrize("expr", [
    "m.histc(m.zeros(2, dtype=m.uint8), 5, -2, 2)", "m.histc(m.zeros(2, dtype=m.int64), 5, -2, 2)",
    "m.histc(m.zeros(2, dtype=m.int8), 5, -200, 2)", "m.histc(m.zeros(2, dtype=m.uint8), 5, 0.5, 2)",
    "m.histc(m.zeros(2, dtype=m.float16), 5, -1e6, 2)", "m.histc(m.zeros(2), 5, -1e300, 2)",
    "m.histc(m.zeros(2, dtype=m.complex64), 5, -2, 2)", "m.histc(m.zeros(2, dtype=m.uint8), -1, 0, 2)",
    "m.histc(m.zeros(2, dtype=m.float16), 5, float('inf'), 2)",
])
def test_histc_converts_its_range_to_the_dtype_first(expr: str) -> None:
    """torch's errors, by exact type: min and max that overflow the input's dtype are a
    RuntimeError before any dtype's NotImplementedError."""
    errors = []
    for m in (ember, torch):
        with pytest.raises(Exception) as caught:
            eval(expr, {"m": m})
        errors.append(type(caught.value))
    assert errors[0] is errors[1]


@pytest.mark.parametrize("values, dtype, lo, hi, phrase", [
    ([32767], "int16", 1, 1, "without overflow"),  # the data's range widened: 32768
    ([], "uint8", 0, 0, "without overflow"),  # an empty range widened: -1
    ([127], "int8", 0, 0, "without overflow"),
    ([3], "int16", 3, 1, "max must be larger than min"),
    ([2 ** 54], "int64", 0, 0, "max must be larger than min"),  # +-1 vanishes in double
    ([3], "int16", float("inf"), 1, "is not finite"),
    ([3, 5], "int64", 0, 0, "histogram_cpu"),
    ([3], "uint8", 1, 2, "histogram_cpu"),
    ([2 ** 63 - 1, -8], "int64", 0, 0, "histogram_cpu"),  # the largest int64 is 2**63 in double
])
def test_histc_selects_its_edges_before_the_dtype_check(values: list[int], dtype: str,
                                                         lo: float, hi: float,
                                                         phrase: str) -> None:
    """torch selects the outer bin edges (the data's range where min == max, widened where
    empty), checks them and lays them out in the input's dtype before its kernel refuses
    an integer dtype."""
    check_same_error(lambda m: m.histc(m.tensor(np.array(values, dtype)), 4, lo, hi), phrase)


def test_histc_checks_the_edges_it_selects() -> None:
    """An equal min and max out of the dtype's range are replaced by the data's range."""
    e, t = both(np.array([3.0, 3.5]), "float32")
    check(ember.histc(e, 4, 1e300, 1e300), torch.histc(t, 4, 1e300, 1e300))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("value", [1e8, 3e38])
def test_histc_of_a_range_that_vanishes_in_the_dtype(dtype: str, value: float) -> None:
    """v +- 1 rounds to v in float32 (1e8) or even in double (3e38): no division by a zero
    width, the bins torch gives."""
    e, t = both(np.array([value, value]), dtype)
    for bins in [1, 2, 3, 7, 100]:
        check(e.histc(bins), t.histc(bins))


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("eshape,tshape", [((6,), (4,)), ((3, 4), (2, 3)), ((), (5,)),
                                           ((5,), ()), ((0,), (3,)), ((4,), (0,))])
def test_isin(dtype: str, eshape: tuple[int, ...], tshape: tuple[int, ...]) -> None:
    ee, et = tied(eshape, dtype, seed=4)
    te, tt = tied(tshape, dtype, seed=5)
    for invert in (False, True):
        check(ember.isin(ee, te, invert=invert), torch.isin(et, tt, invert=invert))
        check(ember.isin(ee, 2, invert=invert), torch.isin(et, 2, invert=invert))
        check(ember.isin(1, te, invert=invert), torch.isin(1, tt, invert=invert))


@pytest.mark.parametrize("edtype,tdtype", [("uint8", "int64"), ("int8", "int64"),
                                           ("int64", "float32"), ("float16", "float32"),
                                           ("float32", "float64")])
def test_isin_promotes(edtype: str, tdtype: str) -> None:
    ee, et = both(np.array([1, 2, 3]), edtype)
    for values in ([-255, 2], [257, 3], [1.0009765625, 2.5], [1.0000001, 3]):
        te, tt = both(np.array(values), tdtype)
        check(ember.isin(ee, te), torch.isin(et, tt))
        ze, zt = both(np.array(values[0]), tdtype)
        check(ember.isin(ee, ze), torch.isin(et, zt))  # a 0-d test tensor: the weaker dtype
    check(ember.isin(ee, 2.5), torch.isin(et, 2.5))
    check(ember.isin(2.5, ee), torch.isin(2.5, et))


# ----------------------------------------------------------------------------- errors


def operands(module: Any) -> dict[str, Any]:
    """The error cases' inputs, built from numpy in either framework."""
    arrays = {"x": np.arange(5.0), "s": np.array(2.0), "e": np.zeros(0), "x2": np.arange(2.0),
              "inf": np.array([1.0, np.inf]), "b": np.array([True, False]),
              "c": np.array([1 + 1j]), "m": np.ones((2, 2)), "z": np.ones((2, 0)),
              "i": np.array([1, 3]), "n": np.array([-1, 1]), "i2": np.array([[1, 3]])}
    return {k: module.from_numpy(v.astype(np.float32) if v.dtype == np.float64 else v)
            for k, v in arrays.items()}


ERRORS = [
    ("sort complex", lambda m, a: m.sort(a["c"]), RuntimeError),
    ("sort dim", lambda m, a: m.sort(a["x"], 1), IndexError),
    ("argsort complex", lambda m, a: m.argsort(a["c"]), RuntimeError),
    ("topk k>n", lambda m, a: m.topk(a["x"], 6), RuntimeError),
    ("topk k<0", lambda m, a: m.topk(a["x"], -1), RuntimeError),
    ("topk bool", lambda m, a: m.topk(a["b"], 1), RuntimeError),
    ("topk 0-d k=2", lambda m, a: m.topk(a["s"], 2), RuntimeError),
    ("kthvalue k=0", lambda m, a: m.kthvalue(a["x"], 0), RuntimeError),
    ("kthvalue k>n", lambda m, a: m.kthvalue(a["x"], 6), RuntimeError),
    ("kthvalue bool", lambda m, a: m.kthvalue(a["b"], 1), NotImplementedError),
    ("kthvalue empty dim", lambda m, a: m.kthvalue(a["e"], 1), IndexError),
    ("median bool", lambda m, a: m.median(a["b"]), NotImplementedError),
    ("median empty dim", lambda m, a: m.median(a["e"], 0), IndexError),
    ("median keepdim no dim", lambda m, a: m.median(a["x"], keepdim=True), TypeError),
    ("nanmedian complex", lambda m, a: m.nanmedian(a["c"], 0), NotImplementedError),
    ("mode complex", lambda m, a: m.mode(a["c"]), NotImplementedError),
    ("mode empty dim", lambda m, a: m.mode(a["e"]), IndexError),
    ("unique complex", lambda m, a: m.unique(a["c"]), NotImplementedError),
    ("unique 0-d dim", lambda m, a: m.unique(a["s"], dim=0), IndexError),
    ("unique dim range", lambda m, a: m.unique(a["m"], dim=2), IndexError),
    ("unique empty unselected", lambda m, a: m.unique(a["z"], dim=0), RuntimeError),
    ("unique_consecutive 0-d dim", lambda m, a: m.unique_consecutive(a["s"], dim=0), IndexError),
    ("searchsorted 0-d", lambda m, a: m.searchsorted(a["s"], a["x"]), RuntimeError),
    ("searchsorted side", lambda m, a: m.searchsorted(a["x"], a["x"], side="middle"), RuntimeError),
    ("searchsorted opposite", lambda m, a: m.searchsorted(a["x"], a["x"], side="left", right=True),
     RuntimeError),
    ("searchsorted lead dims", lambda m, a: m.searchsorted(a["m"], a["x"]), RuntimeError),
    ("searchsorted N-d scalar", lambda m, a: m.searchsorted(a["m"], 2), RuntimeError),
    ("searchsorted bool", lambda m, a: m.searchsorted(a["b"], a["b"]), NotImplementedError),
    ("searchsorted complex", lambda m, a: m.searchsorted(a["x"], a["c"]), NotImplementedError),
    ("searchsorted complex number", lambda m, a: m.searchsorted(a["x"], 1j),
     NotImplementedError),
    ("bucketize complex", lambda m, a: m.bucketize(a["c"], a["x"]), NotImplementedError),
    ("searchsorted sorter dtype", lambda m, a: m.searchsorted(a["x"], a["x"], sorter=a["x"]),
     RuntimeError),
    ("searchsorted sorter shape", lambda m, a: m.searchsorted(a["x"], a["x"], sorter=a["i"]),
     RuntimeError),
    ("searchsorted sorter range", lambda m, a: m.searchsorted(a["x2"], a["x"], sorter=a["i"]),
     RuntimeError),
    ("bucketize 2-d", lambda m, a: m.bucketize(a["x"], a["m"]), RuntimeError),
    ("bincount negative", lambda m, a: m.bincount(a["n"]), RuntimeError),
    ("bincount float", lambda m, a: m.bincount(a["x"]), NotImplementedError),
    ("bincount bool", lambda m, a: m.bincount(a["b"]), NotImplementedError),
    ("bincount 2-d", lambda m, a: m.bincount(a["i2"]), RuntimeError),
    ("bincount minlength", lambda m, a: m.bincount(a["i"], minlength=-1), RuntimeError),
    ("bincount weights", lambda m, a: m.bincount(a["i"], a["x"]), RuntimeError),
    ("histc int", lambda m, a: m.histc(a["i"]), NotImplementedError),
    ("histc bins", lambda m, a: m.histc(a["x"], 0), RuntimeError),
    ("histc max<min", lambda m, a: m.histc(a["x"], 4, 3, 1), RuntimeError),
    ("histc nan range", lambda m, a: m.histc(a["x"], 4, float("nan"), 1), RuntimeError),
    ("histc inf data", lambda m, a: m.histc(a["inf"]), RuntimeError),
    ("isin bool", lambda m, a: m.isin(a["b"], a["b"]), RuntimeError),
    ("isin complex", lambda m, a: m.isin(a["c"], a["c"]), RuntimeError),
    ("isin numbers", lambda m, a: m.isin(1, 1), TypeError),
]


@pytest.mark.parametrize("name,call,exc", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name: str, call: Any, exc: type) -> None:
    for module in (torch, ember):
        data = operands(module)
        before = {k: host(v).copy() for k, v in data.items()}
        with pytest.raises(exc):
            call(module, data)
        for k, v in data.items():
            np.testing.assert_array_equal(host(v), before[k])


def host(t: Any) -> np.ndarray:
    return t.numpy() if isinstance(t, torch.Tensor) else np.array(t)


def test_non_tensor_input_is_type_error() -> None:
    for fn in (ember.sort, ember.argsort, ember.median, ember.mode, ember.unique):
        with pytest.raises(TypeError, match=fn.__name__):
            fn([3, 1, 2])


# ----------------------------------------------------------------------------- plumbing

def test_return_types_behave_like_torch() -> None:
    e, t = pair((4,), "float32")
    r, ref = ember.sort(e), torch.sort(t)
    assert isinstance(r, tuple) and type(r).__name__ == type(ref).__name__ == "sort"
    values, indices = r
    assert values is r.values is r[0] and indices is r.indices is r[1]
    assert repr(r).replace("ember", "torch") == repr(ref)
    again = pickle.loads(pickle.dumps(r))
    assert type(again) is rt.sort
    check(tuple(again), tuple(ref))
    assert rt.aminmax(min=1, max=2).max == 2
    with pytest.raises(TypeError):
        rt.topk(1, 2, 3)


def test_out_arguments() -> None:
    e, t = pair((3, 5), "float32")
    ov, oi = ember.empty(0), ember.empty(0, dtype=ember.int64)
    r = ember.sort(e, 1, out=(ov, oi))
    assert type(r) is rt.sort and r.values is ov and r.indices is oi
    check(r, torch.sort(t, 1))
    ov2, oi2 = ember.empty(0), ember.empty(0, dtype=ember.int64)
    check(ember.topk(e, 2, out=[ov2, oi2]), torch.topk(t, 2))
    check(ember.median(e, 0, out=(ember.empty(0), ember.empty(0, dtype=ember.int64))),
          torch.median(t, 0))
    o = ember.empty(0)
    assert ember.msort(e, out=o) is o
    check(o, torch.msort(t))
    o = ember.empty(0, dtype=ember.int64)
    be, bt = both(np.array([-1.0, 0, 0.5, 2]), "float32")
    check(ember.searchsorted(be, e, out=o), torch.searchsorted(bt, t))


def test_ops_dispatch_values_and_indices() -> None:
    """Each op dispatches one primitive with the params its forward and autograd's formula
    read, and returns the primitive's outputs (values and indices alike)."""
    e = pair((3, 4), "float32")[0]
    expected = [
        (lambda: ember.sort(e, -1, True), "sort", {"dim": 1, "descending": True}),
        (lambda: ember.msort(e), "sort", {"dim": 0, "descending": False}),
        (lambda: ember.topk(e, 2, 0), "topk", {"k": 2, "dim": 0, "largest": True,
                                                "sorted": True}),
        (lambda: ember.kthvalue(e, 2), "kthvalue", {"k": 2, "dim": 1, "keepdim": False}),
        (lambda: ember.median(e, -1, True), "median_dim", {"dim": 1, "keepdim": True}),
        (lambda: ember.median(e), "median", {}),
        (lambda: ember.nanmedian(e, 0), "nanmedian_dim", {"dim": 0, "keepdim": False}),
        (lambda: ember.nanmedian(e), "nanmedian", {}),
        (lambda: ember.mode(e), "mode", {"dim": 1, "keepdim": False}),
    ]
    for call, name, params in expected:
        with Recorder() as recorder:
            result = call()
        assert [(c.op.name, c.params) for c in recorder.calls] == [(name, params)]
        recorded = recorder.calls[0]
        assert same(recorded.inputs, [np.array(e)])
        outputs = recorded.outputs if isinstance(recorded.outputs, list) else [recorded.outputs]
        if isinstance(result, tuple):
            assert same(outputs, [np.array(r) for r in result])
        else:  # median's value, or msort's: the values of a sort
            assert same(outputs[0], np.array(result))
        assert REGISTRY[name].differentiable
    with Recorder() as recorder:
        ember.argsort(e), ember.unique(e), ember.histc(e), ember.searchsorted(e, e)
    assert {c.op.name for c in recorder.calls} == {"argsort", "unique", "histc", "searchsorted"}
    for name in ("argsort", "searchsorted", "bucketize", "histc", "isin"):
        assert not REGISTRY[name].differentiable
    # torch records these (their backward raises: no derivative is implemented)
    for name in ("unique", "unique_consecutive", "bincount"):
        assert REGISTRY[name].differentiable


def test_shape_rules_match_results() -> None:
    spec = meta.MetaArray((3, 4), np.float16)
    e, row = pair((3, 4), "float16")[0], ember.tensor([-1.0, 0, 0.5, 1]).half()
    cases = [
        ("sort", (spec,), {"dim": 1, "descending": False}, ember.sort(e, 1)),
        ("topk", (spec,), {"k": 2, "dim": 0, "largest": True, "sorted": True},
         ember.topk(e, 2, 0)),
        ("kthvalue", (spec,), {"k": 2, "dim": 1, "keepdim": True}, ember.kthvalue(e, 2, 1, True)),
        ("median_dim", (spec,), {"dim": 0, "keepdim": False}, ember.median(e, 0)),
        ("mode", (spec,), {"dim": 1, "keepdim": False}, ember.mode(e, 1)),
        ("median", (spec,), {}, ember.median(e)),
        ("argsort", (spec,), {"dim": 1, "descending": True}, ember.argsort(e, 1, True)),
        ("histc", (spec,), {"bins": 7, "min": 0, "max": 0}, ember.histc(e, 7)),
        ("searchsorted", (meta.MetaArray((4,), np.float16), spec, None),
         {"right": False, "out_int32": True}, ember.searchsorted(row, e, out_int32=True)),
        ("isin", (spec, 2.0), {"invert": False}, ember.isin(e, 2.0)),
    ]
    for name, specs, params, result in cases:
        rule = REGISTRY[name].meta
        got = rule(*specs, **params)
        outs = result if isinstance(result, tuple) else (result,)
        got = got if isinstance(got, tuple) else (got,)
        assert [(tuple(s.shape), ember.dtypes.from_numpy_dtype(s.dtype)) for s in got] == [
            (tuple(o.shape), o.dtype) for o in outs], name
    for name in ("unique", "unique_consecutive", "bincount"):
        assert REGISTRY[name].meta == meta.DYNAMIC


def test_results_are_new_contiguous_tensors() -> None:
    # Like torch's, and never views of a bigger scratch array (kthvalue, median of ints).
    for dtype in ("float32", "int64"):
        e, _ = tied((3, 5, 4), dtype, nan=False, noncontiguous=True)
        results = [*ember.topk(e, 2, 1), *ember.kthvalue(e, 2, 1), *ember.median(e, 1),
                   *ember.nanmedian(e, 0, True), *ember.mode(e, 1)]
        for r in results:
            assert r._base is None and r.is_contiguous()
        # sort keeps a permuted input's layout, as torch does
        for r in results + [*ember.sort(e, 2, True), ember.argsort(e, 1)]:
            assert min(r.stride()) >= 0 and not np.shares_memory(np.array(r), np.array(e))


ISIN_LAYOUTS = [  # (elements, test elements) built with module m
    # few test elements in a layout with no flat view and no cast: torch's view(-1) fails
    lambda m: (m.tensor(-1.0, dtype=m.float64),
               m.tensor([[1.0], [-1.8], [2.5]]).expand(3, 3)),
    lambda m: (m.tensor([1.0, 2.5]), m.tensor([[1.0], [2.5]]).expand(2, 3)),
    # a cast copies them, many elements sort them, a transpose of a column has a flat view
    lambda m: (m.tensor([-1.0], dtype=m.float64),
               m.tensor([[1.0], [-1.8], [2.5]]).expand(3, 3)),
    lambda m: (m.arange(40.0), m.tensor([[1.0], [-1.8], [2.5]]).expand(3, 3)),
    lambda m: (m.tensor(2.5), m.tensor([[1.0], [2.5]]).t()),
    lambda m: (m.tensor(2.5), m.tensor([[1.0, 2.5], [3.0, 4.0]]).t()),
    lambda m: (m.tensor(2.5), m.ones(0, 3).t()),
    # a cast keeps a dense layout's strides: a permuted one still has no flat view
    lambda m: (m.tensor([[1.0, 2.0], [3.0, 4.0]]), m.tensor([[1, 2], [3, 5]]).permute(1, 0)),
    lambda m: (m.tensor([[1, 2], [3, 4]], dtype=m.int32), m.tensor([[1, 2], [3, 5]]).t()),
    lambda m: (m.tensor([[1.0, 2.0], [3.0, 4.0]]), m.arange(6).reshape(2, 3)[:, :2]),
    lambda m: (m.tensor([[1.0, 2.0], [3.0, 4.0]]), m.arange(6)[::2]),
]


@pytest.mark.parametrize("case", range(len(ISIN_LAYOUTS)))
def test_isin_test_elements_layout(case: int) -> None:
    te, tt = ISIN_LAYOUTS[case](torch)
    ee, et = ISIN_LAYOUTS[case](ember)
    try:
        expected = torch.isin(te, tt)
    except RuntimeError as error:
        assert "view size is not compatible" in str(error)
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            ember.isin(ee, et)
        return
    check(ember.isin(ee, et), expected)


@pytest.mark.parametrize(("shape", "dim", "phrase"), [
    ((0, 0), 0, "Number of zero sized dimensions is more than one"),
    ((0, 0, 2), 2, "they aren't selected"),
    ((2, 0), 0, "they aren't selected"),
])
@pytest.mark.parametrize("op", ["unique", "unique_consecutive"])
def test_unique_over_a_dim_of_an_empty_tensor_checks_its_zero_dims_in_torchs_order(
        op, shape, dim, phrase):
    check_same_error(lambda m: getattr(m, op)(m.zeros(*shape), dim=dim), phrase)
