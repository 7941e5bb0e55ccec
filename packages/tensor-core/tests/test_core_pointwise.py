"""Pointwise ops with several operands (clamp, where, lerp, addcmul, isclose, softmax...),
compared with torch on random inputs of every dtype, broadcasting, 0-d, empty and
non-contiguous shapes; where torch raises, Ember must raise the same exception type and
leave its inputs unchanged."""

import numpy as np
import pytest
import torch
from dispatch_oracle import Recorder
from torch_oracle import check, check_same_error, check_signs, pair

import ember.core as ember

ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
       "float64", "complex64", "complex128"]
SHAPES = [(), (0,), (5,), (3, 4), (2, 3, 4)]
SPECIAL = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.5, -2.5, 0.25, 1e30]


def run(fn, operands, **kw):
    """Compare ``fn(ember, *e)`` with ``fn(torch, *t)``; when torch raises, Ember must raise the
    same type and keep its operands unchanged."""
    es, ts = zip(*operands) if operands else ((), ())
    before = [np.array(e).copy() for e in es]
    try:
        expected = fn(torch, *ts)
    except Exception as exc:  # the exception type torch raises is what Ember must raise
        with pytest.raises(type(exc)):
            fn(ember, *es)
        for e, b in zip(es, before):
            assert np.array(e).tobytes() == b.tobytes()
        return
    check(fn(ember, *es), expected, **kw)


def special(dtype, shape=(len(SPECIAL),)):
    """NaN, infinities, signed zeros and ordinary values, in both frameworks."""
    arr = np.resize(np.array(SPECIAL, dtype=np.float64), shape)
    if dtype.startswith("complex"):
        arr = arr + 1j * np.roll(arr, 1)
    return from_numpy(arr, dtype)


def from_numpy(arr, dtype):
    t = torch.from_numpy(np.asarray(arr).copy())
    return ember.tensor(np.asarray(arr)).to(getattr(ember, dtype)), t.to(getattr(torch, dtype))


# ----------------------------------------------------------------------------- one operand

UNARY = {
    "clamp": lambda L, x: L.clamp(x, -1, 1.5),
    "clamp_min_only": lambda L, x: L.clamp(x, min=0.5),
    "clamp_max_only": lambda L, x: L.clamp(x, max=1),
    "clamp_crossed": lambda L, x: L.clamp(x, min=2, max=1),
    "clamp_bool_bound": lambda L, x: L.clamp(x, min=True),
    "clip": lambda L, x: L.clip(x, -2.5, 0),
    "clamp_min": lambda L, x: L.clamp_min(x, 0.5),
    "clamp_max": lambda L, x: L.clamp_max(x, 1),
    "method_clamp": lambda L, x: x.clamp(min=-1),
    "nan_to_num": lambda L, x: L.nan_to_num(x),
    "nan_to_num_args": lambda L, x: L.nan_to_num(x, 1.0, 2.0, -3.0),
    "logit": lambda L, x: L.logit(x),
    "logit_eps": lambda L, x: x.logit(0.2),
    "sinc": lambda L, x: L.sinc(x),
    "deg2rad": lambda L, x: L.deg2rad(x),
    "rad2deg": lambda L, x: x.rad2deg(),
    "positive": lambda L, x: L.positive(x),
    "float_power_int": lambda L, x: L.float_power(x, 2),
    "float_power_float": lambda L, x: x.float_power(0.5),
    "float_power_scalar_base": lambda L, x: L.float_power(2, x),
    "float_power_complex": lambda L, x: L.float_power(x, 1j),
    "lerp_self": lambda L, x: L.lerp(x, x * 2, 0.75),
    "where_scalars": lambda L, x: L.where(x > 0, 1.0, 0.0),
    "where_int_scalars": lambda L, x: L.where(x > 0, 1, 0),
    "where_tensor_scalar": lambda L, x: L.where(x > 0, x, 2.5),
    "where_scalar_tensor": lambda L, x: L.where(x > 0, -1, x),
    "where_method": lambda L, x: x.where(x > 0, 7),
    "addcmul_self": lambda L, x: L.addcmul(x, x, x, value=2),
    "addcmul_float_value": lambda L, x: L.addcmul(x, x, x, value=0.5),
    "addcdiv_self": lambda L, x: L.addcdiv(x, x, x * 0 + 3, value=0.5),
    "isclose_self": lambda L, x: L.isclose(x, x),
    "allclose_self": lambda L, x: L.allclose(x, x, equal_nan=True),
    "equal_self": lambda L, x: L.equal(x, x),
}


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", list(UNARY))
def test_one_operand(name, dtype):
    for shape in SHAPES:
        run(UNARY[name], [pair(shape, dtype)])
    run(UNARY[name], [pair((3, 4), dtype, noncontiguous=True)])


SPECIAL_OPS = ["clamp", "clamp_min_only", "nan_to_num", "nan_to_num_args", "logit", "logit_eps",
               "sinc", "deg2rad", "float_power_float", "isclose_self", "allclose_self",
               "equal_self", "where_tensor_scalar"]


# complex NaNs and infinities are left out: numpy's and torch's kernels follow different
# conventions for them (see test_core_elementwise)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("name", SPECIAL_OPS)
def test_nan_inf_and_signed_zero(name, dtype):
    run(UNARY[name], [special(dtype)])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("fn", [
    lambda L, x: x.clamp(min=0.0), lambda L, x: x.clamp(max=0.0), lambda L, x: x.clamp(min=-0.0),
    lambda L, x: L.clamp(x, -0.0, 0.0), lambda L, x: L.clamp(x, 0.0, -0.0),
    lambda L, x: L.clamp_max(x, -0.0), lambda L, x: x.clone().clamp_(min=0),
])
def test_clamp_at_a_zero_bound_keeps_the_sign_of_zeros(fn, dtype):
    """torch's clamp gives the element itself where it equals the bound: -0.0 clamped at
    0.0 stays -0.0 (numpy's maximum gives one operand or the other by dtype)."""
    e, t = special(dtype)
    ours, theirs = fn(ember, e), fn(torch, t)
    check(ours, theirs)
    check_signs(ours, theirs)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_logit_and_lerp_in_their_domain(dtype):
    run(lambda L, x: L.logit(x), [pair((4, 5), dtype, low=0.0, high=1.0)])
    run(lambda L, x: L.logit(x, 1e-3), [pair((4, 5), dtype, low=-0.5, high=1.5)])
    e, t = pair((4, 5), dtype, seed=1, low=-0.5, high=1.5)
    run(lambda L, x, y, w: L.lerp(x, y, w), [pair((4, 5), dtype), pair((5,), dtype, seed=2), (e, t)])


def test_sinc_at_integers_and_zero():
    run(lambda L, x: L.sinc(x), [from_numpy(np.arange(-4, 5), "float32")])
    run(lambda L, x: L.sinc(x), [from_numpy(np.arange(-4, 5), "int64")])
    run(lambda L, x: L.sinc(x), [from_numpy(np.array([0.0, 1e-20, -1e-30]), "float64")])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_sinc_of_16_bit_floats_computes_in_float32(dtype):
    # torch rounds only the result: sinc(-3) is -0.0 in float16 (its reciprocal -inf)
    values = np.concatenate([np.arange(-4, 5), np.linspace(-10, 10, 2001)]).astype(np.float32)
    e, t = from_numpy(values, dtype)
    assert np.array_equal(ember.sinc(e).float().numpy(), torch.sinc(t).float().numpy())
    assert np.array_equal(e.clone().sinc_().float().numpy(), t.clone().sinc_().float().numpy())
    e, t = from_numpy(np.array([-3.0]), "float16")
    assert ember.sinc(e).reciprocal().tolist() == torch.sinc(t).reciprocal().tolist()


# ----------------------------------------------------------------------------- broadcasting

BROADCAST = [((3, 4), (4,), (3, 1)), ((2, 1, 4), (3, 1), ()), ((), (3,), (2, 1)),
             ((0, 3), (1, 3), ()), ((5,), (), (5,))]

MULTI = {
    "clamp_tensors": lambda L, x, lo, hi: L.clamp(x, lo, hi),
    "clamp_min_tensor": lambda L, x, lo, hi: L.clamp(x, min=lo),
    "clamp_max_tensor": lambda L, x, lo, hi: L.clamp_max(x, hi),
    "where": lambda L, x, y, z: L.where(x > y, y, z),
    "where_cond_broadcasts": lambda L, x, y, z: L.where(z > 0, x, y),
    "lerp_scalar_weight": lambda L, x, y, z: L.lerp(x, y, 0.3),
    "lerp_tensor_weight": lambda L, x, y, z: L.lerp(x, y, z),
    "addcmul": lambda L, x, y, z: L.addcmul(x, y, z, value=-1.5),
    "addcdiv": lambda L, x, y, z: L.addcdiv(x, y, z * z + 1, value=2),
    "heaviside": lambda L, x, y, z: L.heaviside(x, y),
    "isclose": lambda L, x, y, z: L.isclose(x, y, rtol=0.5, atol=0.5),
    "allclose": lambda L, x, y, z: L.allclose(x, y, rtol=10, atol=10),
    "equal": lambda L, x, y, z: L.equal(x, y),
    "float_power": lambda L, x, y, z: L.float_power(x, y),
}


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", list(MULTI))
def test_broadcasting_operands(name, dtype):
    for shapes in BROADCAST:
        run(MULTI[name], [pair(s, dtype, seed=i) for i, s in enumerate(shapes)])
    run(MULTI[name], [pair((3, 4), dtype, seed=i, noncontiguous=i != 1) for i in range(3)])


MIXED = [("int64", "float32"), ("int32", "int64"), ("float16", "float32"), ("float32", "float64"),
         ("bool", "int8"), ("uint8", "int8"), ("bfloat16", "float16"), ("float32", "complex64")]


@pytest.mark.parametrize("a,b", MIXED)
@pytest.mark.parametrize("name", list(MULTI))
def test_mixed_dtypes_promote_like_torch(name, a, b):
    run(MULTI[name], [pair((3, 4), a), pair((4,), b, seed=1), pair((3, 1), a, seed=2)])
    run(MULTI[name], [pair((3, 4), a), pair((), b, seed=1), pair((), b, seed=2)])


def test_heaviside_at_zero_and_nan():
    x = from_numpy(np.array([-1.5, -0.0, 0.0, 2.0, np.nan]), "float32")
    run(lambda L, x, v: L.heaviside(x, v), [x, from_numpy(np.array([0.5]), "float32")])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "complex64",
                                   "int64", "uint8", "int8", "bool"])
@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_near_values(dtype, equal_nan):
    base = np.array([1.0, 2.0, -3.0, 100.0, 0.0, 1e-9, np.inf, -np.inf, np.nan, 1.0])
    near = np.array([1.0 + 1e-6, 2.1, -3.0, 100.001, 1e-9, 0.0, np.inf, np.inf, np.nan, np.nan])
    if dtype in ("int64", "uint8", "int8", "bool"):
        base, near = np.array([1, 0, 3, 100, 5, 127]), np.array([2, 0, 1, 101, 5, 0])
    x, y = from_numpy(base, dtype), from_numpy(near, dtype)
    for rtol, atol in [(1e-5, 1e-8), (0.0, 0.0), (0.1, 0.0), (0.0, 2.0)]:
        run(lambda L, x, y: L.isclose(x, y, rtol, atol, equal_nan), [x, y])
        run(lambda L, x, y: L.allclose(x, y, rtol, atol, equal_nan), [x, y])


@pytest.mark.parametrize("fn", [
    lambda L, x, y: L.isclose(x.to("meta"), y.to("meta")).stride(),
    lambda L, x, y: L.allclose(x.to("meta"), y.to("meta")),
    lambda L, x, y: L.equal(x.to("meta"), y.to("meta")),
    lambda L, x, y: L.equal(x.to("meta"), y)])
def test_closeness_on_meta_tensors(fn):
    """isclose has a meta rule; allclose and equal read values, so on meta tensors they raise
    as torch's do."""
    run(fn, [pair((3, 4), "float32"), pair((3, 4), "float32", seed=1)])


def test_equal_across_shapes_and_dtypes():
    run(lambda L, x, y: L.equal(x, y), [pair((3,), "float32"), pair((3,), "float64")])
    run(lambda L, x, y: L.equal(x, y.to(x.dtype)), [pair((3,), "float32"), pair((3,), "float64")])
    run(lambda L, x, y: L.equal(x, y), [pair((3,), "float32"), pair((1,), "float32")])
    run(lambda L, x: L.equal(x, x.int()), [from_numpy(np.array([1.0, 2.0]), "float32")])
    run(lambda L, x: L.equal(x, x), [from_numpy(np.array([np.nan]), "float32")])


# ----------------------------------------------------------------------------- softmax

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax(fn, dtype):
    for shape in SHAPES:
        for dim in range(-max(len(shape), 1), max(len(shape), 1)):
            run(lambda L, x: getattr(L, fn)(x, dim), [pair(shape, dtype)])
            run(lambda L, x: getattr(x, fn)(dim, L.float64), [pair(shape, dtype)])
    run(lambda L, x: getattr(L, fn)(x, 0, dtype=L.float32), [pair((3, 4), dtype, noncontiguous=True)])


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_is_stable(fn):
    big = from_numpy(np.array([[1000.0, 0.0, -1000.0], [-np.inf, 0.0, 1.0],
                               [-np.inf, -np.inf, -np.inf]]), "float32")
    run(lambda L, x: getattr(L, fn)(x, 1), [big])
    run(lambda L, x: getattr(L, fn)(x, 0), [pair((4, 3), "float32", low=-80, high=80)])


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_errors(fn):
    run(lambda L, x: getattr(L, fn)(x, 2), [pair((3, 4), "float32")])
    run(lambda L, x: getattr(L, fn)(x, -3), [pair((3, 4), "float32")])
    run(lambda L, x: getattr(L, fn)(x, 1), [pair((), "float32")])
    run(lambda L, x: getattr(L, fn)(x, None), [pair((3,), "float32")])
    run(lambda L, x: getattr(L, fn)(x, 0), [pair((3,), "int64")])


# ----------------------------------------------------------------------------- in place, out=

INPLACE = {
    "clamp_": lambda x, y: x.clamp_(-1, 1),
    "clamp_tensor_": lambda x, y: x.clamp_(min=y),
    "clip_": lambda x, y: x.clip_(max=0.5),
    "clamp_min_": lambda x, y: x.clamp_min_(y),
    "clamp_max_": lambda x, y: x.clamp_max_(0),
    "lerp_": lambda x, y: x.lerp_(y, 0.25),
    "nan_to_num_": lambda x, y: x.nan_to_num_(),
    "addcmul_": lambda x, y: x.addcmul_(y, y, value=2),
    "addcdiv_": lambda x, y: x.addcdiv_(y, y * y + 1),
    "logit_": lambda x, y: x.logit_(0.1),
    "sinc_": lambda x, y: x.sinc_(),
    "deg2rad_": lambda x, y: x.deg2rad_(),
    "rad2deg_": lambda x, y: x.rad2deg_(),
    "heaviside_": lambda x, y: x.heaviside_(y),
    "float_power_": lambda x, y: x.float_power_(2),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8",
                                   "bool", "complex64"])
@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace(name, dtype):
    fn = INPLACE[name]
    for shapes in [((3, 4), (4,)), ((), ()), ((0, 2), (2,)), ((4,), (3, 4))]:
        (ex, tx), (ey, ty) = pair(shapes[0], dtype), pair(shapes[1], dtype, seed=1)
        before = np.array(ex).copy()
        try:
            expected = fn(tx, ty)
        except Exception as exc:  # Ember raises as torch does, leaving the target unchanged
            with pytest.raises(type(exc)):
                fn(ex, ey)
            assert np.array(ex).tobytes() == before.tobytes()
            continue
        result = fn(ex, ey)
        assert result is ex
        check(ex, expected)


def test_inplace_dtype_errors_leave_input_unchanged():
    x = ember.tensor([1, 2, 3])
    for bad in (lambda: x.clamp_(min=0.5), lambda: x.float_power_(2), lambda: x.sinc_(),
                lambda: x.deg2rad_(), lambda: x.lerp_(x, 0.5), lambda: x.logit_()):
        with pytest.raises(RuntimeError):
            bad()
        assert x.tolist() == [1, 2, 3] and x.dtype is ember.int64
    f = ember.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="float_power_ has dtype Float"):
        f.float_power_(2)
    assert f.tolist() == [1.0, 2.0]


OUT = {
    "clamp": lambda L, x, y, o: L.clamp(x, -1, 1, out=o),
    "where": lambda L, x, y, o: L.where(x > 0, x, y, out=o),
    "lerp": lambda L, x, y, o: L.lerp(x, y, 0.5, out=o),
    "addcmul": lambda L, x, y, o: L.addcmul(x, y, y, out=o),
    "addcdiv": lambda L, x, y, o: L.addcdiv(x, y, y * y + 1, out=o),
    "nan_to_num": lambda L, x, y, o: L.nan_to_num(x, out=o),
    "logit": lambda L, x, y, o: L.logit(x, out=o),
    "sinc": lambda L, x, y, o: L.sinc(x, out=o),
    "heaviside": lambda L, x, y, o: L.heaviside(x, y, out=o),
    "float_power": lambda L, x, y, o: L.float_power(x, 2, out=o),
}


@pytest.mark.parametrize("out_dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("out_shape", [(0,), (3, 4), (2,)])
@pytest.mark.parametrize("name", list(OUT))
def test_out(name, out_shape, out_dtype):
    fn = OUT[name]
    out = (ember.zeros(out_shape, dtype=getattr(ember, out_dtype)),
           torch.zeros(out_shape, dtype=getattr(torch, out_dtype)))  # resizable, unlike pair's
    operands = [pair((3, 4), "float32"), pair((4,), "float32", seed=1), out]
    run(lambda L, x, y, o: (fn(L, x, y, o), o), operands)


# ----------------------------------------------------------------------------- errors

def test_clamp_errors():
    x = ember.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        ember.clamp(x)
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        ember.clamp(x, ember.tensor([0.0]), 1.0)
    with pytest.raises(TypeError):
        ember.clamp(x, "a")
    with pytest.raises(NotImplementedError, match="complex"):
        ember.clamp(ember.tensor([1j]), 0)
    with pytest.raises(RuntimeError, match="must match the size"):
        ember.clamp(x, min=ember.zeros(3))
    run(lambda L, x: L.clamp(x, max=300), [pair((3,), "uint8")])
    run(lambda L, x: L.clamp(x, min=-1), [pair((3,), "uint8")])
    run(lambda L, x: L.clamp(x, min=2**40), [pair((3,), "int32")])


MIXED_BOUNDS = [
    lambda L, x: L.clamp(x, L.tensor([2.0, 2.0, 2.0]), 4),
    lambda L, x: L.clamp(x, 2, L.tensor([4.0, 4.0, 4.0])),
    lambda L, x: L.clamp(x, min=L.tensor([2.0]), max=4.0),
    lambda L, x: L.clip(x, min=2, max=L.tensor([4.0])),
    lambda L, x: x.clamp(L.tensor([2.0]), 4),
    lambda L, x: x.clone().clamp_(min=2, max=L.tensor([4.0])),
    lambda L, x: x.clone().clip_(L.tensor([2.0]), 4),
    # a 0-d tensor that does not require grad passes as a Number
    lambda L, x: L.clamp(x, 2, L.tensor(4.0)),
    lambda L, x: L.clamp(x, L.tensor(2.0, dtype=L.float64), 4),
    lambda L, x: L.clip(x, L.tensor(2), max=4.5),
    lambda L, x: x.clone().clamp_(L.tensor(2.0), 4),
    lambda L, x: x.clone().clip_(min=2, max=L.tensor(4.0)),
    lambda L, x: L.clamp(x.int(), L.tensor(2.5), 4),
    lambda L, x: L.clamp(x.to(L.uint8), L.tensor(300), 4),
    lambda L, x: L.clamp(x, L.tensor(2.0, requires_grad=True), 4),
    lambda L, x: L.clamp(x, 2, L.tensor(4.0, requires_grad=True)),
]


@pytest.mark.parametrize("fn", MIXED_BOUNDS)
def test_clamp_with_a_tensor_bound_and_a_number_bound(fn):
    run(fn, [(ember.tensor([1.0, 3.0, 5.0]), torch.tensor([1.0, 3.0, 5.0]))])


def test_clamp_mixed_bounds_error_names_the_call():
    with pytest.raises(TypeError, match=r"clip\(\) received an invalid combination of arguments "
                                        r"- got \(Tensor, Tensor, int\)"):
        ember.clip(ember.ones(2), ember.zeros(2), 1)


def test_where_errors_and_one_argument_form():
    x = ember.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="boolean tensor, but got a tensor with dtype Float"):
        ember.where(x, x, x)
    with pytest.raises(TypeError):
        ember.where(x > 1, x)
    with pytest.raises(TypeError):
        ember.where(True, x, x)
    run(lambda L, c, x: L.where(c.to(L.uint8), x, 0.0), [pair((4,), "bool"), pair((4,), "float32")])
    run(lambda L, x: L.where(x > 1, x, 300), [pair((3,), "uint8")])
    run(lambda L, c: L.where(c), [pair((3, 4), "bool")])


def test_operand_errors():
    x, i = ember.tensor([1.0, 2.0]), ember.tensor([1, 2])
    with pytest.raises(RuntimeError, match="expected dtype float for `end` but got dtype double"):
        ember.lerp(x, x.double(), 0.5)
    with pytest.raises(TypeError):
        ember.lerp(x, 1.0, 0.5)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        ember.addcdiv(x, i, i)
    with pytest.raises(RuntimeError, match="different dtypes"):
        ember.heaviside(x, x.double())
    with pytest.raises(TypeError):
        ember.heaviside(x, 0.5)
    with pytest.raises(RuntimeError, match="Float did not match Double"):
        ember.isclose(x, x.double())
    with pytest.raises(RuntimeError, match="rtol must be greater"):
        ember.isclose(x, x, rtol=-1)
    with pytest.raises(TypeError):
        ember.allclose(x, 1.0)
    with pytest.raises(TypeError):
        ember.float_power(2, 3)
    with pytest.raises(RuntimeError, match="bool tensor is not supported"):
        ember.positive(ember.tensor([True]))
    assert ember.positive(x) is x
    run(lambda L, x: L.addcmul(x, x, x, value=1j), [pair((3,), "float32")])
    run(lambda L, x: L.addcmul(x, x, x, value=-1), [pair((3,), "uint8")])


# ----------------------------------------------------------------------------- the dispatcher

DISPATCHED = [
    ("clamp", lambda x, y: ember.clamp(x, min=y)),
    ("clamp", lambda x, y: x.clamp(-0.5, 0.5)),
    ("where", lambda x, y: ember.where(x > 0, x, y)),
    ("where", lambda x, y: ember.where(x > 0, 0.0, x)),
    ("lerp", lambda x, y: ember.lerp(x, y, 0.5)),
    ("addcmul", lambda x, y: ember.addcmul(x, y, y)),
    ("addcdiv", lambda x, y: ember.addcdiv(x, y, y)),
    ("nan_to_num", lambda x, y: ember.nan_to_num(x)),
    ("float_power", lambda x, y: ember.float_power(x, y)),
    ("logit", lambda x, y: ember.logit(x)),
    ("sinc", lambda x, y: ember.sinc(x)),
    ("deg2rad", lambda x, y: ember.deg2rad(x)),
    ("rad2deg", lambda x, y: ember.rad2deg(x)),
    ("softmax", lambda x, y: ember.softmax(x, -1)),
    ("log_softmax", lambda x, y: x.log_softmax(0)),
    # not differentiable, or in place on a tensor outside the graph
    ("heaviside", lambda x, y: ember.heaviside(x, y)),
    ("isclose", lambda x, y: ember.isclose(x, y)),
    ("lerp_", lambda x, y: y.lerp_(x.detach(), 0.5)),
    ("addcmul_", lambda x, y: y.addcmul_(x.detach(), y, value=2)),
    ("addcdiv_", lambda x, y: y.addcdiv_(x.detach(), y, value=2)),
]


@pytest.mark.parametrize("name,fn", DISPATCHED)
def test_dispatches_its_primitive(name, fn):
    """The public op reaches the dispatcher as its primitive, with x's values among the
    operands (what autograd and every mode see), and returns that call's output."""
    x = ember.tensor([0.25, -0.5, 0.75], dtype=ember.float64).requires_grad_()
    y = ember.tensor([0.5, 0.5, 2.0], dtype=ember.float64)
    values = x.detach().numpy().tobytes()
    with Recorder() as recorder:
        out = fn(x, y)
    call = recorder.calls[-1]
    op = ember.REGISTRY[name]
    assert call.op is op, [c.op.name for c in recorder.calls]
    assert any(isinstance(a, np.ndarray) and a.tobytes() == values for a in call.inputs)
    assert np.array(out.detach()).tobytes() == np.ascontiguousarray(call.outputs).tobytes()
    assert op.kind in ("elementwise", "reduction")
    if op.mutates:
        assert out is y and op.functional.differentiable
    else:
        # torch records heaviside (its backward raises), not isclose
        assert op.differentiable == (name != "isclose")


LERP_ERROR_ORDER = [  # (f(m), a phrase of torch's message): the error torch checks first
    (lambda m: m.lerp(m.tensor([[1, 6, -3]]), m.ones(3, 1, 3, dtype=m.int64),
                      m.tensor([1.0], dtype=m.float64)), "for `weight`"),
    (lambda m: m.lerp(m.ones(2, dtype=m.int64), m.ones(3, dtype=m.int64),
                      m.tensor([1], dtype=m.int64)), "must match the size"),
    (lambda m: m.lerp(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64),
                      m.tensor([1], dtype=m.int64)), '"lerp_kernel_tensor" not implemented'),
    (lambda m: m.lerp(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64), 1),
     '"lerp_kernel_scalar" not implemented'),
    (lambda m: m.lerp(m.ones(2), m.ones(3, dtype=m.float64), m.tensor(1.0)), "for `end`"),
    (lambda m: m.tensor(True).lerp_(m.tensor(True), m.tensor([True])),
     "doesn't match the broadcast shape"),
    (lambda m: m.tensor(-8).lerp_(m.ones(2, 1, dtype=m.int64), 2),
     "doesn't match the broadcast shape"),
    (lambda m: m.tensor([[1]]).expand(2, 1).lerp_(m.ones(2, 1, dtype=m.int64), 2),
     "more than one element of the written-to tensor"),
    (lambda m: m.ones(2, dtype=m.int64).lerp_(m.ones(2, dtype=m.int64),
                                              m.tensor(0.5, dtype=m.float64)),
     "can't be cast to the desired output type"),
]


@pytest.mark.parametrize("case", range(len(LERP_ERROR_ORDER)))
def test_lerp_checks_in_torchs_order(case):
    fn, phrase = LERP_ERROR_ORDER[case]
    check_same_error(fn, phrase)


ADDC_ERROR_ORDER = [  # (f(m), a phrase of torch's message): the error torch checks first
    # torch has no bool addcmul kernel: it refuses one after the memory and the shapes
    (lambda m: (lambda x: x.addcmul_(x, x))(m.tensor([False]).expand(2)),
     "more than one element of the written-to tensor"),
    (lambda m: m.zeros(3, dtype=m.bool).addcmul_(m.zeros(4, dtype=m.bool),
                                                 m.zeros(3, dtype=m.bool)), "must match the size"),
    (lambda m: m.addcmul(m.zeros(3, dtype=m.bool), m.zeros(4, dtype=m.bool),
                         m.zeros(3, dtype=m.bool)), "must match the size"),
    (lambda m: m.zeros(1, dtype=m.bool).addcmul_(m.zeros(2, dtype=m.bool),
                                                 m.zeros(2, dtype=m.bool)),
     "doesn't match the broadcast shape"),
    (lambda m: m.zeros(3, dtype=m.bool).addcmul(m.zeros(3, dtype=m.bool),
                                                m.zeros(3, dtype=m.bool)),
     '"addcmul_cpu_out" not implemented'),
    (lambda m: m.ones(3, dtype=m.int64).addcdiv_(m.ones(4, dtype=m.int64),
                                                 m.ones(3, dtype=m.int64)),
     "Integer division with addcdiv"),
    # float16 updates computed in float32 must fit self too
    (lambda m: (lambda x: x.addcdiv_(x, m.tensor([-2])))(m.tensor(-3.0, dtype=m.float16)),
     "doesn't match the broadcast shape"),
    (lambda m: (lambda x: x.addcmul_(x, m.tensor([-2.0], dtype=m.bfloat16)))(
        m.tensor(-3.0, dtype=m.bfloat16)), "doesn't match the broadcast shape"),
    (lambda m: (lambda x: x.lerp_(x, m.tensor([0.5], dtype=m.float16)))(
        m.tensor(-3.0, dtype=m.float16)), "doesn't match the broadcast shape"),
]


@pytest.mark.parametrize("case", range(len(ADDC_ERROR_ORDER)))
def test_addcmul_addcdiv_check_in_torchs_order(case):
    fn, phrase = ADDC_ERROR_ORDER[case]
    check_same_error(fn, phrase)


def test_lerp_promotes_with_a_0d_weight():
    # a 0-d float weight takes part in the promotion: integer inputs give a float result
    for weight in (0.25, 0.75):
        got = ember.lerp(ember.tensor([1, 3]), ember.tensor([2, 8]),
                         ember.tensor(weight, dtype=ember.float64))
        expected = torch.lerp(torch.tensor([1, 3]), torch.tensor([2, 8]),
                              torch.tensor(weight, dtype=torch.float64))
        check(got, expected)
    check(ember.lerp(ember.ones(2), ember.zeros(2), ember.tensor(0.5 + 1j)),
          torch.lerp(torch.ones(2), torch.zeros(2), torch.tensor(0.5 + 1j)))


@pytest.mark.parametrize("method", ["clamp_min", "clamp_max", "clamp_min_", "clamp_max_"])
def test_clamp_by_one_tensor_bound_checks_shapes_before_complex(method):
    """torch's clamp_min/clamp_max with a tensor bound are binary ops: the shapes first;
    clamp with both bounds refuses complex first."""
    for L in (ember, torch):
        x = L.ones(3, 1, dtype=L.complex64)
        with pytest.raises(RuntimeError, match="must match the size"):
            getattr(x, method)(L.ones(4, 1, dtype=L.complex64))
        with pytest.raises(NotImplementedError, match="complex"):
            x.clamp(L.ones(4, 1, dtype=L.complex64), L.ones(4, 1, dtype=L.complex64))


@pytest.mark.parametrize("method", ["clamp_", "clip_"])
def test_inplace_clamp_parses_its_bounds_before_refusing_a_leaf(method):
    for L in (ember, torch):
        x = L.tensor(3.0, dtype=L.float64, requires_grad=True)
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            getattr(x, method)(x, 2)


def test_float16_to_a_complex_power_is_refused_as_complex32():
    for L in (ember, torch):
        with pytest.raises(NotImplementedError, match="ComplexHalf"):
            L.tensor(0.5, dtype=L.float16) ** 1j


@pytest.mark.parametrize("exponent", [0j, 1 + 0j, 2 + 0j, 3 + 0j, 0.5 + 0j, -1 + 0j, -2 + 0j,
                                      -0.5 + 0j, 2.5 + 0j, 2, 0, 1j])
@pytest.mark.parametrize("op", ["pow", "float_power"])
def test_complex_powers_by_a_number_take_torchs_special_exponents(op, exponent):
    """torch compares a Scalar exponent with its special ones (0, 1, 2, 3, 0.5, -1, -2, -0.5)
    by value, a complex one with no imaginary part too; float_power converts the number to
    complex first. Other exponents are its complex pow, exp(y * log(x))."""
    values = np.array([0j, 2 + 1j, -1 + 0j, complex(0.0, -3.0), 1e-3 - 2j], dtype=np.complex64)
    ours = getattr(ember, op)(ember.tensor(values), exponent)
    theirs = getattr(torch, op)(torch.tensor(values), exponent)
    check(ours, theirs)
    check_signs(ours, theirs)


@pytest.mark.parametrize("weight", [(0.3, "float64"), (0.5 + 1j, "complex64")])
def test_lerp_in_place_writes_a_castable_result_into_self(weight):
    """torch's lerp_ refuses only a result type self cannot take (complex into float): 0-d
    operands promote among themselves, and float64 writes into a float32 self."""
    value, dtype = weight

    def fn(L):
        x = L.tensor(0.25)
        x.lerp_(L.tensor(0.75), L.tensor(value, dtype=getattr(L, dtype)))
        return x

    try:
        expected = fn(torch)
    except RuntimeError:
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            fn(ember)
        return
    check(fn(ember), expected)


@pytest.mark.parametrize("call", [
    "c.clamp_max_(v)", "c.clamp_min_(v)", "c.clamp_max(v)", "c.clamp_min(m.tensor(0.5))",
    "c.clamp_min(0.5)", "c.clamp_(max=v)", "x.clamp_min(m.tensor(1j))",
    "x.clamp_min_(m.tensor([1j]))", "x.clamp_max_(m.ones(3))", "i.clamp_max_(m.tensor(1.5))",
])
def test_one_tensor_bound_checks_in_torchs_order(call):
    """clamp_min/clamp_max with a tensor bound are torch's maximum/minimum: the shapes,
    the written shape and the cast into self come before their kernels' dtype refusal
    ("maximum_cpu" for complex); a number bound is clamp's ("clamp is not supported for
    complex types")."""
    errors = []
    for m in (torch, ember):
        with pytest.raises(Exception) as got:
            eval(call, {"m": m, "c": m.tensor(1 + 1j, dtype=m.complex64),  # noqa: S307
                        "v": m.tensor([-1.5]), "x": m.tensor([1.0, 2.0]), "i": m.tensor([1, 2])})
        errors.append(got.value)
    theirs, ours = errors
    assert type(ours) is type(theirs) and str(theirs) in str(ours), (ours, theirs)
