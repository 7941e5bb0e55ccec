"""Reductions and scans against torch: every call on every dtype and shape.

Each line of ``CALLS`` is run with ``m`` = torch and ``m`` = ember on the same data; where
torch raises, Ember must raise the same exception type and leave its input unchanged.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import torch
from dispatch_oracle import Recorder, same
from torch_oracle import check, check_same_error, check_signs, random_array

import ember.core as ember
from ember.core import meta
from ember.core.dispatch import REGISTRY

INF = math.inf
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool",
          "complex64"]
# (shape, noncontiguous): 0-d, empty, and views whose strides are not C order.
SHAPES = [((), False), ((0,), False), ((5,), False), ((2, 3, 4), False), ((0, 3), False),
          ((3, 4), True), ((2, 3, 4), True), ((6,), True)]


def make_pair(shape: tuple[int, ...], dtype: str, noncontiguous: bool = False, seed: int = 0,
              low: float = -3.0, high: float = 3.0) -> tuple[ember.Tensor, torch.Tensor]:
    """The same data in both; non-contiguous ones are transposed or strided numpy views."""
    rng = np.random.default_rng(seed)
    full = shape
    if noncontiguous:
        full = tuple(reversed(shape)) if len(shape) > 1 else (shape[0] * 2,)
    base = np.asarray(random_array(full, dtype, rng, low, high))  # bool 0-d: a numpy scalar
    t = torch.from_numpy(base.copy())
    if dtype == "bfloat16":
        t = t.to(torch.bfloat16)
        base = base.astype(ml_dtypes.bfloat16)
    e = ember.from_numpy(base)
    if noncontiguous and len(shape) > 1:
        e, t = ember.from_numpy(base.T), t.permute(*reversed(range(len(shape))))
    elif noncontiguous:
        e, t = ember.from_numpy(base[::2]), t[::2]
    assert e.is_contiguous() != noncontiguous or 0 in shape
    return e, t


def compare(fn: Any, e: ember.Tensor, t: torch.Tensor, **tol: Any) -> None:
    before = np.array(e, copy=True)
    try:
        expected = fn(torch, t)
    except Exception as exc:  # torch refuses: Ember must refuse the same way
        with pytest.raises(Exception) as raised:
            fn(ember, e)
        assert type(raised.value) is type(exc), f"{raised.value!r}, torch: {exc!r}"
        np.testing.assert_array_equal(np.array(e).reshape(-1).view(np.uint8),
                                      before.reshape(-1).view(np.uint8))  # bitwise, NaN too
        return
    check(fn(ember, e), expected, **tol)


CALLS = {
    "sum": lambda m, x: x.sum(),
    "sum_dim": lambda m, x: m.sum(x, -1),
    "sum_dims_keepdim": lambda m, x: m.sum(x, (0, -1), keepdim=True),
    "sum_dim1": lambda m, x: m.sum(x, dim=1),
    "sum_empty_dims": lambda m, x: x.sum(dim=[]),
    "sum_dtype": lambda m, x: x.sum(0, dtype=m.float64),
    "sum_dtype_int": lambda m, x: m.sum(x, dtype=m.int32),
    "nansum": lambda m, x: m.nansum(x),
    "nansum_dim": lambda m, x: m.nansum(x, -1, True),
    "mean": lambda m, x: x.mean(),
    "mean_dim": lambda m, x: m.mean(x, -1, keepdim=True),
    "mean_dims": lambda m, x: m.mean(x, (0, -1)),
    "mean_dtype": lambda m, x: x.mean(dtype=m.float64),
    "nanmean": lambda m, x: m.nanmean(x, 0),
    "nanmean_dtype_int": lambda m, x: m.nanmean(x, dtype=m.int64),
    "nanmean_dtype_complex": lambda m, x: m.nanmean(x, 0, dtype=m.complex64),
    "nansum_dtype_complex": lambda m, x: m.nansum(x, dtype=m.complex128),
    "prod": lambda m, x: x.prod(),
    "prod_dim": lambda m, x: m.prod(x, -1, True),
    "prod_dtype": lambda m, x: x.prod(0, dtype=m.float64),
    "prod_tuple": lambda m, x: m.prod(x, (0,)),
    "var": lambda m, x: x.var(),
    "var_dim": lambda m, x: m.var(x, -1),
    "var_dims_correction": lambda m, x: m.var(x, (0, -1), keepdim=True, correction=2),
    "std_legacy": lambda m, x: x.std(0, True, True),
    "std_unbiased": lambda m, x: x.std(False),
    "std_correction": lambda m, x: m.std(x, -1, correction=0),
    "std_both": lambda m, x: m.std(x, unbiased=True, correction=1),
    "var_mean": lambda m, x: m.var_mean(x, -1),
    "std_mean": lambda m, x: m.std_mean(x, (0, -1), correction=0),
    "max": lambda m, x: x.max(),
    "max_dim": lambda m, x: m.max(x, -1),
    "min_dim_keepdim": lambda m, x: m.min(x, 0, keepdim=True),
    "max_dim_kw": lambda m, x: x.max(dim=0),
    "max_tuple": lambda m, x: m.max(x, (0,)),
    "max_binary": lambda m, x: m.max(x, m.zeros_like(x)),
    "min_binary_keyword": lambda m, x: x.min(other=m.ones_like(x)),
    "min": lambda m, x: m.min(x),
    "amax": lambda m, x: m.amax(x),
    "amax_dims": lambda m, x: m.amax(x, (0, -1), True),
    "amin_dim": lambda m, x: m.amin(x, -1),
    "aminmax": lambda m, x: m.aminmax(x),
    "aminmax_dim": lambda m, x: m.aminmax(x, dim=-1, keepdim=True),
    "aminmax_dim0": lambda m, x: m.aminmax(x, dim=0),
    "argmax": lambda m, x: x.argmax(),
    "argmax_dim": lambda m, x: m.argmax(x, -1),
    "argmin_dim_keepdim": lambda m, x: m.argmin(x, 0, keepdim=True),
    "argmax_keepdim": lambda m, x: x.argmax(keepdim=True),
    "logsumexp": lambda m, x: m.logsumexp(x, -1),
    "logsumexp_dims": lambda m, x: m.logsumexp(x, (0, -1), keepdim=True),
    "norm": lambda m, x: x.norm(),
    "norm_1": lambda m, x: m.norm(x, 1),
    "norm_inf_dim": lambda m, x: m.norm(x, INF, -1),
    "norm_neginf": lambda m, x: m.norm(x, -INF),
    "norm_0": lambda m, x: m.norm(x, 0),
    "norm_p_dims": lambda m, x: m.norm(x, 3.5, (0, -1), True),
    "norm_negative_p": lambda m, x: m.norm(x, -1.5),
    "norm_fro_dim": lambda m, x: m.norm(x, "fro", -1),
    "norm_nuc": lambda m, x: m.norm(x, "nuc"),
    "norm_nuc_dims": lambda m, x: m.norm(x, "nuc", (-1, 0), keepdim=True),
    "norm_dtype": lambda m, x: m.norm(x, dtype=m.float64),
    "dist": lambda m, x: m.dist(x, m.ones_like(x)),
    "dist_inf": lambda m, x: m.dist(x, m.ones_like(x), INF),
    "dist_0": lambda m, x: m.dist(x, m.zeros_like(x), 0),
    "all": lambda m, x: x.all(),
    "any_dim": lambda m, x: m.any(x, -1),
    "all_dims_keepdim": lambda m, x: m.all(x, (0, -1), keepdim=True),
    "any_no_dims": lambda m, x: m.any(x, dim=()),
    "count_nonzero": lambda m, x: m.count_nonzero(x),
    "count_nonzero_dim": lambda m, x: m.count_nonzero(x, -1),
    "count_nonzero_dims": lambda m, x: m.count_nonzero(x, (0, -1)),
    "cumsum": lambda m, x: m.cumsum(x, -1),
    "cumsum_dtype": lambda m, x: x.cumsum(0, dtype=m.float64),
    "cumprod": lambda m, x: m.cumprod(x, -1),
    "cummax": lambda m, x: m.cummax(x, -1),
    "cummin": lambda m, x: x.cummin(0),
    "logcumsumexp": lambda m, x: m.logcumsumexp(x, -1),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(CALLS))
def test_against_torch(name: str, dtype: str) -> None:
    for shape, noncontiguous in SHAPES:
        e, t = make_pair(shape, dtype, noncontiguous)
        try:
            compare(CALLS[name], e, t)
        except Exception as exc:
            raise AssertionError(f"{name} {dtype} shape={shape} noncontiguous={noncontiguous}: "
                                 f"{type(exc).__name__}: {exc}") from exc


SPECIAL_VALUES = [math.nan, INF, -INF, 0.0, -0.0, 1.0, -2.0, 2.0, 2.0, math.nan, -INF, 3.0]
NAN_CALLS = ["sum", "nansum", "nansum_dim", "mean_dim", "nanmean", "max_dim", "min", "amax_dims",
             "argmax_dim", "argmin_dim_keepdim", "logsumexp", "cummax", "cummin",
             "logcumsumexp", "cumsum", "norm_inf_dim", "norm", "var_dim", "all", "any_dim",
             "count_nonzero_dim"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("name", NAN_CALLS)
def test_special_values(name: str, dtype: str) -> None:
    """NaN and infinities: propagation, which index max/argmax/cummax report, -inf rows."""
    rng = np.random.default_rng(1)
    arr = rng.permutation(np.array(SPECIAL_VALUES * 2)).reshape(4, 6).astype(dtype)
    arr[0] = -INF  # a row with nothing but -inf
    compare(CALLS[name], ember.from_numpy(arr.copy()), torch.from_numpy(arr.copy()))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["sum", "mean", "sum_dim", "cumsum", "var", "norm", "logsumexp"])
def test_half_precision_accumulates_in_float32(name: str, dtype: str) -> None:
    """Long float16/bfloat16 reductions: accumulating in the narrow type would drift."""
    e, t = make_pair((8, 1024), dtype, low=0.0, high=1.0)
    compare(CALLS[name], e, t)


@pytest.mark.parametrize("call", [
    lambda m: m.tensor([True, False]).cumsum_(0),
    lambda m: m.tensor([[False]]).cumprod_(1),
    lambda m: m.cumsum(m.tensor([1, 2]), 0, dtype=m.bool),
    lambda m: m.cumprod(m.tensor([1.5, 2.0]), 0, dtype=m.bool),
    lambda m: m.cumsum(m.tensor([1.5, 2.0]), 0, out=m.zeros(2, dtype=m.bool)),
    lambda m: m.cumsum(m.tensor([1.5, 2.0]), 3, dtype=m.bool),  # the dim is checked first
    lambda m: m.zeros(1, 0, dtype=m.bool).cumsum_(-2),  # empty and 0-d: copied, unchecked
    lambda m: m.tensor(False).cumprod_(-1),
])
def test_scans_refuse_bool_results(call: Any) -> None:
    try:
        expected = call(torch)
    except Exception as exc:
        with pytest.raises(Exception) as raised:
            call(ember)
        assert type(raised.value) is type(exc)
        if type(exc) is NotImplementedError:
            assert str(raised.value) == str(exc)
        return
    assert call(ember).shape == expected.shape


def test_logsumexp_is_stable() -> None:
    e, t = make_pair((3, 7), "float32", low=500.0, high=1000.0)
    check(ember.logsumexp(e, 1), torch.logsumexp(t, 1))
    check(ember.logsumexp(-e, 1), torch.logsumexp(-t, 1))
    check(ember.logcumsumexp(-e, 1), torch.logcumsumexp(-t, 1))


def test_logsumexp_of_integers_is_default_float() -> None:
    e, t = make_pair((3, 4), "int64")
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    try:
        check(ember.logsumexp(e, 0), torch.logsumexp(t, 0))
    finally:
        ember.set_default_dtype(ember.float32)
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("correction", [0, 1, 2, 3, 0.5])
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.filterwarnings("ignore:std\\(\\)|var\\(\\):UserWarning")
def test_var_degrees_of_freedom(n: int, correction: float) -> None:
    """N - correction <= 0 gives inf or nan as in torch."""
    e, t = make_pair((4, n), "float64")
    check(ember.var(e, 1, correction=correction), torch.var(t, 1, correction=correction))
    check(ember.std(e, 1, correction=correction), torch.std(t, 1, correction=correction))


def test_max_with_dim_returns_named_tuple() -> None:
    e, t = make_pair((3, 4), "float32")
    r = ember.max(e, 1)
    assert type(r).__name__ == "max" and isinstance(r, tuple)
    values, indices = r
    check(r.values, torch.max(t, 1).values)
    check(r.indices, torch.max(t, 1).indices)
    assert values is r.values and indices is r.indices
    assert repr(r).startswith("torch.return_types.max(\nvalues=tensor(")
    assert type(ember.cummin(e, 0)).__name__ == "cummin"
    mn, mx = ember.aminmax(e)
    check(mn, torch.aminmax(t).min)
    check(mx, torch.aminmax(t).max)


def test_full_sum_is_a_0d_array() -> None:
    """The hot path must give a 0-d ndarray, never a numpy scalar."""
    for dtype in DTYPES:
        e, _ = make_pair((4, 4), dtype)
        for r in (e.sum(), e.mean() if dtype.startswith(("float", "complex")) else e.prod(),
                  e.amax() if dtype != "complex64" else e.any(), e.count_nonzero()):
            assert type(r._data) is np.ndarray and r._data.shape == ()


def test_out_argument() -> None:
    e, t = make_pair((3, 4), "float32")
    out = ember.empty(0)
    assert ember.sum(e, 1, out=out) is out
    check(out, torch.sum(t, 1))
    values, indices = ember.empty(0), ember.empty(0, dtype=ember.int64)
    r = ember.max(e, 0, out=(values, indices))
    assert r.values is values and r.indices is indices
    check(indices, torch.max(t, 0).indices)
    out = ember.empty(2)
    with pytest.warns(UserWarning, match="was resized"):  # torch resizes, with this warning
        ember.cumsum(e, 0, out=out)
    check(out, torch.cumsum(t, 0))


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "float16"])
@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
def test_inplace_scans(name: str, dtype: str) -> None:
    e, t = make_pair((3, 4), dtype)
    base = e
    version = e._version
    r = getattr(e, name)(1)
    assert r is base and e._version == version + 1
    check(e, getattr(t, name)(1))  # in place: int32 stays int32
    with pytest.raises(RuntimeError):
        getattr(torch.ones(3, dtype=torch.int32), name)(0, dtype=torch.int64)
    with pytest.raises(RuntimeError):
        getattr(ember.ones(3, dtype=ember.int32), name)(0, dtype=ember.int64)


def test_reductions_dispatch_their_primitives() -> None:
    """Each reduction dispatches its primitive with its input and the params its forward
    and autograd's formula read, and returns the primitive's outputs."""
    e = ember.ones(2, 3)
    with Recorder() as recorder:
        s = e.sum()
        m = ember.mean(e, -1, keepdim=True)
        v = ember.std(e, (0, 1), correction=0)
        mx = ember.max(e, 1)
        n = ember.norm(e, 3, 0)
        c = ember.cumsum(e, 1, dtype=ember.float64)
    assert [(call.op.name, call.params) for call in recorder.calls] == [
        ("sum", {}),  # every element, default options: the forward's defaults
        ("mean", {"dim": (1,), "keepdim": True, "dtype": None}),
        ("std", {"dim": (0, 1), "keepdim": False, "correction": 0.0}),
        ("max", {"dim": 1, "keepdim": False}),
        ("norm", {"dim": (0,), "keepdim": False, "p": 3.0}),
        ("cumsum", {"dim": 1, "dtype": ember.float64}),
    ]
    assert all(same(call.inputs, [np.array(e)]) for call in recorder.calls)
    outs = [call.outputs for call in recorder.calls]
    for out, result in zip(outs, (s, m, v, mx, n, c)):
        expected = [np.array(r) for r in result] if isinstance(result, tuple) else np.array(result)
        assert same(out, expected)


@pytest.mark.parametrize("name,kwargs", [
    ("sum", {"dim": (0, 2), "keepdim": False, "dtype": None}),
    ("sum", {"dim": None, "keepdim": True, "dtype": ember.float16}),
    ("mean", {"dim": (1,), "keepdim": True, "dtype": None}),
    ("var", {"dim": (2,), "keepdim": False, "correction": 1.0}),
    ("var_mean", {"dim": (0, 2), "keepdim": True, "correction": 0.0}),
    ("std_mean", {"dim": None, "keepdim": False, "correction": 1.0}),
    ("amax", {"dim": (0, 1), "keepdim": True}),
    ("max", {"dim": 1, "keepdim": False}),
    ("argmax", {"dim": None, "keepdim": True}),
    ("logsumexp", {"dim": (0,), "keepdim": False}),
    ("norm", {"dim": None, "keepdim": False, "p": 2.0}),
    ("all", {"dim": (), "keepdim": False}),
    ("count_nonzero", {"dim": (1,)}),
    ("cumsum", {"dim": 2, "dtype": None}),
    ("cummax", {"dim": 0}),
])
@pytest.mark.parametrize("dtype", ["float32", "int32", "complex64"])
def test_meta_rules_match_forward(name: str, kwargs: dict[str, Any], dtype: str) -> None:
    """The data-free shape/dtype rule agrees with what the forward computes."""
    op = REGISTRY[name]
    arr = random_array((2, 3, 4), dtype, np.random.default_rng(0))
    if dtype == "complex64" and name in ("amax", "max", "argmax", "cummax"):
        return  # torch refuses these for complex, so no rule is needed
    spec = op.meta(meta.MetaArray((2, 3, 4), arr.dtype), **kwargs)
    out = op.forward(arr, **kwargs)
    for s, o in zip(spec if isinstance(spec, tuple) else (spec,),
                    out if isinstance(out, tuple) else (out,)):
        assert s.shape == np.shape(o) and s.dtype == np.asarray(o).dtype


# float32 deviations of 1e20 square past float32's range: torch accumulates var/std in
# double and takes the square root before rounding, so its std is finite (and its std of
# 1e-30s is not zero)
WIDE_VALUES = [[1e20, -1e20, 3e20], [1e25, -1e25, 3e25, 1.0], [1e30, 2e30, 3e30],
               [1e-30, 2e-30, 3e-30], [1e-45, 2e-45, 3e-45], [3e38, -3e38]]


@pytest.mark.parametrize("values", WIDE_VALUES)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "complex64"])
@pytest.mark.parametrize("fn", [
    lambda L, x: L.std(x), lambda L, x: L.var(x), lambda L, x: x.std(correction=0),
    lambda L, x: L.std(x.reshape(1, -1), dim=1, keepdim=True),
    lambda L, x: L.std(x.reshape(-1, 1).expand(-1, 2), dim=0),
    lambda L, x: L.std_mean(x), lambda L, x: L.var_mean(x, 0),
])
def test_var_std_accumulate_in_double(fn, dtype, values):
    e = ember.tensor(values, dtype=getattr(ember, dtype))
    t = torch.tensor(values, dtype=getattr(torch, dtype))
    check(fn(ember, e), fn(torch, t), rtol=1e-5 if dtype != "bfloat16" else 1.6e-2)


@pytest.mark.parametrize("fn", [
    lambda L: L.ones(1).var(), lambda L: L.ones(0).std(), lambda L: L.ones(3).var(correction=5),
    lambda L: L.ones(2, 0).var(1), lambda L: L.ones(2, 3).std(0, correction=2),
    lambda L: L.var_mean(L.ones(1)), lambda L: L.std_mean(L.ones(2, 3), 1, correction=3),
    lambda L: L.ones(3).var(), lambda L: L.ones(2, 3).std(0),
])
def test_var_std_warn_without_degrees_of_freedom(fn) -> None:
    def messages(L: Any) -> list[str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn(L)
        return [str(w.message).split(" (Triggered")[0] for w in caught
                if w.category is UserWarning]

    assert messages(ember) == messages(torch)


# torch's var_mean and std_mean compute their mean with the spread, by Welford's running
# update: an infinity turns it NaN unless the infinity is the last element reduced
INFINITE = [[-1.0, 1.0, -INF, 2.0], [-INF, -INF], [1.0, 2.0, INF], [INF, 1.0], [1.0, INF, -INF],
            [math.nan, 1.0], [2.0, -0.0, 3.0, INF, 1.0, 0.5]]


@pytest.mark.parametrize("values", INFINITE)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "complex64"])
@pytest.mark.parametrize("fn", [
    lambda L, x: L.var_mean(x), lambda L, x: L.std_mean(x, 0, correction=0),
    lambda L, x: L.var_mean(x.reshape(1, -1), 1, keepdim=True),
    lambda L, x: L.std_mean(x.reshape(-1, 1).expand(-1, 2).t(), 1),
    lambda L, x: L.var_mean(L.stack([x, x.flip(0)]).t(), (0, 1)),
    lambda L, x: L.std_mean(L.stack([x, x.flip(0)]).t(), 0),
])
@pytest.mark.filterwarnings("ignore:std_mean\\(\\)|var_mean\\(\\):UserWarning")
def test_var_mean_of_infinities(fn, dtype, values) -> None:
    arr = np.array(values)
    if dtype == "complex64":  # the parts' means apart, as torch's kernel computes them
        arr = arr + 1j * arr[::-1]
    e, t = ember.tensor(arr), torch.tensor(arr)
    e, t = e.to(getattr(ember, dtype)), t.to(getattr(torch, dtype))
    ours, theirs = fn(ember, e), fn(torch, t)
    assert type(ours) is type(theirs) is tuple
    check(ours, theirs)


COMPLEX_CORNERS = [complex(a, b) for a in (0.0, -0.0, 1.0, -3.0, INF, -INF, math.nan)
                   for b in (0.0, -0.0, 2.5, -1.0, INF, -INF, math.nan)]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_logcumsumexp_steps_as_torch(dtype) -> None:
    """torch's complex logcumsumexp adds ``log1p(exp(min - max))`` to the operand of the
    larger real part, step by step from -inf: the imaginary parts add up unwrapped (3 pi
    where the principal log gives pi), and NaN, infinities and signed zeros follow its
    special cases."""
    rng = np.random.default_rng(0)
    arr = rng.choice(np.array(COMPLEX_CORNERS), size=(40, 5)).astype(dtype)
    arr[0] = [complex(3, -2), complex(3, 2), complex(-4.2, -9.1), complex(-4.2, 9.1), 1j]
    e, t = ember.from_numpy(arr), torch.from_numpy(arr)
    for dim in (0, 1):
        ours, theirs = ember.logcumsumexp(e, dim), torch.logcumsumexp(t, dim)
        check(ours, theirs, atol=1e-5)
        check_signs(ours, theirs)
    check(ember.logcumsumexp(e[0, 0], 0), torch.logcumsumexp(t[0, 0], 0))


def test_low_precision_nanmean_rounds_its_sum_before_dividing():
    """torch's nanmean is nansum(x) / count: the bfloat16 sum is rounded before the
    division (one rounding of the quotient alone differs)."""
    data = [[[0.3493, 0.5, 1.0], [2.0, 0.5, 1.8789], [-2.5, -1.0, -1.0]],
            [[3.0, 0.5, -2.4364], [2.5, -1.5, 2.5], [-0.6852, -2.5, 1.0]]]
    ours, theirs = (L.nanmean(L.tensor(data).to(L.bfloat16), 2).float() for L in (ember, torch))
    np.testing.assert_array_equal(np.asarray(ours), theirs.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float16", "complex64", "float64"])
def test_cumsum_of_negative_zeros_starts_from_positive_zero(dtype) -> None:
    """torch's running sum starts from +0, so a leading run of -0.0 sums to +0.0 (which
    ``1 / x`` and a backward through ``log`` tell apart)."""
    arr = np.array([[-0.0, -0.0, 2.0, -2.0], [1.0, -1.0, -0.0, 0.0]], dtype=dtype)
    if dtype == "complex64":
        arr = arr + np.complex64(complex(-0.0, -0.0))
    for dim in (0, 1):
        ours, theirs = ember.cumsum(ember.tensor(arr), dim), torch.cumsum(torch.tensor(arr), dim)
        check(ours, theirs)
        check_signs(ours, theirs)


@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
def test_complex_spread_with_no_degrees_of_freedom_left_is_nan_where_a_part_is_constant(name):
    """torch adds the parts' variances: a part that does not vary gives 0 / 0 there."""
    arr = np.array([[1 + 2j, 1 + 2j], [3 + 2j, 1 + 1j]], dtype=np.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "degrees of freedom is <= 0"
        ours = getattr(ember, name)(ember.tensor(arr), 0, correction=2)
        theirs = getattr(torch, name)(torch.tensor(arr), 0, correction=2)
    for o, t in zip(ours if isinstance(ours, tuple) else (ours,),
                    theirs if isinstance(theirs, tuple) else (theirs,)):
        check(o, t)


@pytest.mark.parametrize("operands", [("bool", "complex64"), ("bool", "bool"), ("int64", "bool")])
def test_dist_of_a_bool_tensor_refuses_its_subtraction_first(operands):
    """torch's dist is the norm of ``input - other``: sub's refusal of bool comes first."""
    def fn(L):
        a, b = (L.ones(2, dtype=getattr(L, d)) for d in operands)
        return L.dist(a, b)

    check_same_error(fn, "Subtraction, the `-` operator")


@pytest.mark.parametrize("values", [[[math.inf, math.nan]], [[math.nan, 2.0], [1.0, 3.0]]])
def test_nuclear_norm_that_lapack_cannot_converge_on_raises_torchs_linalg_error(values):
    """LAPACK fails on the same non-finite inputs in both (others give NaN): torch's error
    is its ``_LinAlgError``, a RuntimeError, never numpy's own."""
    errors = []
    for m in (torch, ember):
        with pytest.raises(RuntimeError) as got:
            m.norm(m.tensor(values, dtype=m.float64), "nuc")
        errors.append((type(got.value).__name__, str(got.value)))
    assert errors[0] == errors[1]
    for m in (torch, ember):  # an inf alone converges, to NaN
        assert math.isnan(float(m.norm(m.tensor([[1.0, math.inf]], dtype=m.float64), "nuc")))


# ----------------------------------------------------------------------------- native sums

@pytest.mark.skipif(ember.native._compiler() is None, reason="no C compiler")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,dim", [((300001,), None), ((70, 1000), None),
                                       ((70, 1000), (1,)), ((3, 40000), (1,)),
                                       ((5, 4, 9000), (1, 2)), ((200000, 1), (1,))])
def test_large_sums_and_means_run_the_native_loop_as_torch_at_any_thread_count(shape, dim,
                                                                                  dtype):
    """Blocks summed in double and added in order: the same bits at 1 thread and at many,
    and within torch's float32 rounding of its own (pairwise) sums."""
    from ember.core.ops import reduction_native

    x = np.random.default_rng(7).standard_normal(shape).astype(dtype)
    xe, xt = ember.from_numpy(x), torch.from_numpy(x)
    before = ember.get_num_threads()
    for keepdim in (False, True):
        kwargs = {} if dim is None else {"dim": dim, "keepdim": keepdim}
        for name in ("sum", "mean"):
            assert reduction_native.row_sums(x, dim, keepdim, name == "mean") is not None
            ours = getattr(xe, name)(**kwargs)
            check(ours, getattr(xt, name)(**kwargs), rtol=1e-5 if dtype == "float32" else None)
            try:
                ember.set_num_threads(1)
                np.testing.assert_array_equal(np.asarray(getattr(xe, name)(**kwargs)),
                                              np.asarray(ours))
            finally:
                ember.set_num_threads(before)
