"""Every op of ops/binary.py and ops/unary.py against torch: all dtypes, broadcasting, 0-d, empty and
non-contiguous operands, Python scalars on either side (reflected operators too), type
promotion, in-place forms and ``out=``. Where torch raises, Ember must raise the same
exception type and leave its operands unchanged."""

import itertools
import operator

import ml_dtypes
import numpy as np
import pytest
import torch
from torch_oracle import TOL, check, check_signs, dtype_name, random_array

import ember.core as ember

ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
       "float64", "complex64", "complex128"]
SHAPES = [(), (0,), (5,), (3, 4), (2, 3, 4)]
BROADCAST = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (3,)), ((5,), ()),
             ((0, 3), (1, 3)), ((), ()), ((3,), (4,))]
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, 1e-30, 88.0, -100.0]


def operand(shape, dtype, seed=0, *, noncontiguous=False, nonzero=False, low=-3.0, high=3.0):
    """The same random data as an Ember and a torch tensor; ``noncontiguous`` gives a
    transposed (or strided) view; ``nonzero`` replaces zeros with ones (integer divisors)."""
    rng = np.random.default_rng(seed)
    full = tuple(reversed(shape)) if len(shape) > 1 else (shape[0] * 2,) if shape else ()
    arr = np.asarray(random_array(full if noncontiguous else shape, dtype, rng, low, high))
    if nonzero:
        arr = np.where(arr == 0, np.ones((), arr.dtype), arr)
    if noncontiguous:
        arr = arr.T if len(shape) > 1 else arr[::2]
    return _both(arr, dtype)


def _both(arr, dtype):
    t = torch.from_numpy(np.array(arr, order="C")).to(getattr(torch, dtype))
    if dtype == "bfloat16":
        arr = arr.astype(ml_dtypes.bfloat16)
    elif arr.dtype != np.dtype(dtype):
        arr = arr.astype(dtype)
    e = ember.from_numpy(arr)
    assert e.dtype is getattr(ember, dtype)
    return e, t


def special(dtype, shift=0):
    """NaN, infinities, signed zeros, tiny and large values (rotated by ``shift``)."""
    arr = np.roll(np.array(SPECIAL), shift)
    if dtype.startswith("complex"):
        arr = arr + 1j * np.roll(arr, 3)
    return _both(arr, dtype)


def run(fn, operands, **kw):
    """Compare ``fn(ember, *e)`` with ``fn(torch, *t)``; when torch raises, Ember must raise the
    same type and keep its operands unchanged."""
    es, ts = zip(*operands) if operands else ((), ())
    before = [np.array(e).copy() for e in es]
    try:
        expected = fn(torch, *ts)
    except Exception as exc:  # the exception type torch raises is what Ember must raise
        if "ComplexHalf" in str(exc):
            return  # NumPy has no complex32: Ember computes these in complex64 instead
        with pytest.raises(type(exc)):
            fn(ember, *es)
        for e, b in zip(es, before):
            assert np.array(e).tobytes() == b.tobytes()
        return
    if isinstance(expected, torch.Tensor) and expected.dtype == torch.complex32:
        # Ember promotes float16 with complex to complex64, so only torch's result carries
        # float16 rounding
        expected = expected.to(torch.complex64)
        kw = {"rtol": 1e-3, "atol": 1e-3, **kw}
    actual = fn(ember, *es)
    if isinstance(expected, torch.Tensor) and expected.is_complex():
        # numpy's allclose wants infinite complex entries exactly equal: compare the parts
        assert dtype_name(actual.dtype) == dtype_name(expected.dtype)
        assert tuple(actual.shape) == tuple(expected.shape)
        rtol, atol = TOL[dtype_name(expected.dtype)]
        a, e = np.array(actual), expected.numpy()
        for part in (np.real, np.imag):
            np.testing.assert_allclose(part(a), part(e), rtol=kw.get("rtol", rtol),
                                       atol=kw.get("atol", atol))
        return
    check(actual, expected, **kw)


# ----------------------------------------------------------------------------- binary ops

BINARY = ["add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide",
          "floor_divide", "remainder", "fmod", "pow", "maximum", "minimum", "fmax", "fmin",
          "atan2", "arctan2", "hypot", "copysign", "logaddexp", "logaddexp2", "xlogy", "eq", "ne",
          "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
          "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
          "bitwise_left_shift", "bitwise_right_shift"]
# integer division by zero raises in torch: these ops get divisors without zeros
DIVIDING = {"floor_divide", "remainder", "fmod"}


def _divisor_kw(name):
    return {"nonzero": name in DIVIDING or name.startswith("bitwise_")}


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", BINARY)
def test_binary(name, dtype):
    fn = lambda L, x, y: getattr(L, name)(x, y)  # noqa: E731
    kw = _divisor_kw(name)
    if name.startswith("bitwise_") and "shift" in name:
        kw["low"], kw["high"] = 0, 3  # negative shifts are undefined behaviour in torch
    for i, (a, b) in enumerate(BROADCAST):
        run(fn, [operand(a, dtype, i), operand(b, dtype, i + 50, **kw)])
    run(fn, [operand((3, 4), dtype, 1, noncontiguous=True),
             operand((3, 4), dtype, 2, noncontiguous=True, **kw)])
    if hasattr(torch.Tensor, name):
        run(lambda L, x, y: getattr(x, name)(y), [operand((3, 4), dtype), operand((4,), dtype, 1, **kw)])


# Complex NaNs and infinities are left out of the special-value tests: numpy's and torch's
# kernels follow different conventions there, both within C99's latitude (add and sub,
# where Ember follows torch's, are tested below).
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name", [n for n in BINARY if not n.startswith("bitwise")])
def test_binary_special_values(name, dtype):
    for shift in range(0, len(SPECIAL), 2):
        run(lambda L, x, y: getattr(L, name)(x, y), [special(dtype), special(dtype, shift)])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("fn", [
    lambda L, x, y: L.remainder(x, y), lambda L, x, y: x % y, lambda L, x, y: x.clone().remainder_(y),
    lambda L, x, y: L.remainder(x, -0.5), lambda L, x, y: L.remainder(2.0, y),
])
def test_remainder_signs_of_zeros_and_infinities(fn, dtype):
    """torch's remainder is fmod moved into the divisor's sign where the two differ: a zero
    keeps fmod's sign, the dividend's (numpy's remainder gives it the divisor's)."""
    grid = np.array([0.0, -0.0, 3.0, -3.0, 1.5, -1.5, 1.0, -1.0, 2.0])
    x, y = np.meshgrid(grid, np.array([0.5, -0.5, 1.5, -1.5, np.inf, -np.inf, 1.0]))
    (ex, tx), (ey, ty) = _both(x, dtype), _both(y, dtype)
    ours, theirs = fn(ember, ex, ey), fn(torch, tx, ty)
    check(ours, theirs)
    check_signs(ours, theirs)


COMPLEX_CORNERS = [complex(a, b) for a in (0.0, -0.0, 1.0, -2.0, np.inf, -np.inf, np.nan)
                   for b in (0.0, -0.0, 1.0, -2.0, np.inf, -np.inf, np.nan)]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("fn", [
    lambda L, x, y, r: x + y, lambda L, x, y, r: x - y, lambda L, x, y, r: L.add(x, y, alpha=2),
    lambda L, x, y, r: L.sub(x, y, alpha=-1.5j), lambda L, x, y, r: x.clone().add_(y),
    lambda L, x, y, r: x.clone().sub_(y, alpha=3), lambda L, x, y, r: L.rsub(x, y),
    lambda L, x, y, r: x + r, lambda L, x, y, r: r - x, lambda L, x, y, r: x - float("inf"),
    lambda L, x, y, r: float("nan") + x,
    lambda L, x, y, r: x.clone().__isub__(complex(-0.0, -0.0)),
])
def test_complex_add_and_sub_are_input_plus_alpha_times_other(fn, dtype):
    """torch adds ``alpha * other`` as a complex product even for alpha 1 (sub adds
    ``-alpha * other``): a NaN or infinite part of other spreads to both parts, and zeros
    take the product's signs."""
    x, y = np.meshgrid(np.array(COMPLEX_CORNERS), np.array(COMPLEX_CORNERS))
    (ex, tx), (ey, ty) = _both(x, dtype), _both(y, dtype)
    er, tr = _both(y.real, "float32" if dtype == "complex64" else "float64")
    ours, theirs = fn(ember, ex, ey, er), fn(torch, tx, ty, tr)
    check(ours, theirs)
    check_signs(ours, theirs)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64"])
@pytest.mark.parametrize("number", [1.5, -3.0, 2, 1j])
def test_reflected_true_division_is_reciprocal_times_the_number(number, dtype):
    """torch's ``number / tensor`` is ``tensor.reciprocal() * number``: its roundings, and
    nan + nanj for a complex zero (numpy's division gives inf + nanj)."""
    e, t = operand((40,), dtype, 3)
    e[:2], t[:2] = 0, 0
    exact = {} if dtype == "complex64" else {"rtol": 0, "atol": 0}  # complex: numpy's 1 / z
    check(number / e, number / t, **exact)


@pytest.mark.parametrize("fn", [
    lambda L, x, y: x / y, lambda L, x, y: L.xlogy(x, y), lambda L, x, y: L.atan2(x, y),
    lambda L, x, y: L.copysign(x, y), lambda L, x, y: L.true_divide(y, x),
    lambda L, x, y: L.hypot(x.float(), y),
])
def test_integer_operands_of_float_results_are_cast_from_their_own_dtype(fn):
    """An int64 0-d tensor beside uint8 promotes to uint8, but a float result casts each
    operand to float from its own dtype: -5 stays -5.0 (through uint8 it would be 251)."""
    run(fn, [_both(np.array([0, 3, 200], dtype="uint8"), "uint8"),
             _both(np.array(-5), "int64")])
    run(fn, [_both(np.array([3, -7], dtype="int8"), "int8"), _both(np.array(300), "int64")])


@pytest.mark.parametrize("rounding_mode", [None, "trunc", "floor"])
@pytest.mark.parametrize("dtype", ALL)
def test_div_rounding_modes(rounding_mode, dtype):
    fn = lambda L, x, y: L.div(x, y, rounding_mode=rounding_mode)  # noqa: E731
    for i, (a, b) in enumerate(BROADCAST):
        run(fn, [operand(a, dtype, i), operand(b, dtype, i + 50, nonzero=True)])
    run(lambda L, x: L.div(x, 2, rounding_mode=rounding_mode), [operand((7,), dtype, low=-9, high=9)])
    run(lambda L, x: L.div(x, -2.5, rounding_mode=rounding_mode), [operand((7,), dtype)])


def test_div_bad_rounding_mode():
    x = ember.ones(2)
    with pytest.raises(RuntimeError, match="rounding_mode"):
        ember.div(x, x, rounding_mode="round")


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int8", "bool"])
@pytest.mark.parametrize("name", ["floor_divide", "remainder", "fmod"])
def test_integer_division_by_zero(name, dtype):
    run(lambda L, x, y: getattr(L, name)(x, y * 0), [operand((3,), dtype), operand((3,), dtype)])


@pytest.mark.parametrize("dtype", ALL)
def test_alpha(dtype):
    for name in ("add", "sub", "rsub"):
        for alpha in (2, -1, 0.5, True):
            run(lambda L, x, y: getattr(L, name)(x, y, alpha=alpha),
                [operand((3, 4), dtype), operand((4,), dtype, 1)])


# ----------------------------------------------------------------------------- Python scalars

SCALARS = [2, -1, 0, 2.5, -0.5, True, False, 1 + 2j, 300]
OPERATORS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "&": operator.and_,
    "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift,
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge,
}


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("symbol", list(OPERATORS))
def test_operators_with_python_scalars(symbol, dtype):
    op = OPERATORS[symbol]
    for scalar in SCALARS:
        if symbol in ("//", "%") and scalar in (0, False):
            continue  # integer division by zero is covered above
        if symbol in ("<<", ">>") and isinstance(scalar, int) and not 0 <= scalar < 8:
            continue  # shifts by negative or too-large amounts are undefined in torch
        if symbol == "**" and scalar == 0 and dtype.startswith("complex"):
            continue  # 0 ** z is a pole: NaN in numpy, inf in torch (see special values)
        # torch rounds a reduced-precision tensor mixed with a complex number coarsely
        kw = TOL[dtype] if isinstance(scalar, complex) and dtype in ("float16", "bfloat16") else {}
        kw = dict(zip(("rtol", "atol"), kw))
        for shape in [(), (3, 4)]:
            run(lambda L, x: op(x, scalar), [operand(shape, dtype, nonzero=True)], **kw)
            run(lambda L, x: op(scalar, x), [operand(shape, dtype, nonzero=True)], **kw)


@pytest.mark.parametrize("dtype", ALL)
def test_reflected_operators(dtype):
    for fn in [lambda L, x: 2 - x, lambda L, x: 10.0 / x, lambda L, x: x ** 2, lambda L, x: 2 ** x,
               lambda L, x: x ** 0.5, lambda L, x: x ** 3, lambda L, x: 1.5 ** x, lambda L, x: -x,
               lambda L, x: abs(x), lambda L, x: ~x, lambda L, x: +x, lambda L, x: 7 // x,
               lambda L, x: 7 % x, lambda L, x: 1 << x, lambda L, x: 64 >> x, lambda L, x: 3 & x,
               lambda L, x: 3 | x, lambda L, x: 3 ^ x, lambda L, x: 2.5 * x, lambda L, x: 1 + x]:
        run(fn, [operand((3, 4), dtype, low=0, high=3, nonzero=True)])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8"])
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow", "maximum", "eq", "atan2",
                                  "remainder", "bitwise_and", "logical_or", "xlogy", "copysign"])
def test_functions_with_scalar_operands(name, dtype):
    for scalar in [2, 2.5, True, -3]:
        run(lambda L, x: getattr(L, name)(x, scalar), [operand((3, 4), dtype, nonzero=True)])
        run(lambda L, x: getattr(L, name)(scalar, x), [operand((3, 4), dtype, nonzero=True)])


def test_numpy_scalars_act_like_python_numbers():
    # (np.bool_ is left out: torch reads it as a float, which Ember does not copy)
    for scalar in [np.float64(2.5), np.int64(3), np.float32(0.5)]:
        run(lambda L, x: x * scalar, [operand((3,), "float32")])
        run(lambda L, x: L.add(x, scalar), [operand((3,), "int32")])


def test_non_number_operands_are_type_errors():
    x = ember.ones(3)
    for bad in ("a", [1, 2, 3], None, object()):
        with pytest.raises(TypeError):
            ember.add(x, bad)
        with pytest.raises(TypeError):
            x * bad if bad is not None else ember.mul(x, bad)
    with pytest.raises(TypeError):
        ember.add(1, 2)


# ----------------------------------------------------------------------------- promotion

PROMOTION = [
    (("int64", (3,)), 2.5), (("int32", (3,)), 2.5), (("uint8", (3,)), -1.5), (("bool", (3,)), 2),
    (("bool", (3,)), 2.5), (("bool", (3,)), True), (("float16", (3,)), 2.5),
    (("float16", (3,)), 70000.0), (("bfloat16", (3,)), 1e30), (("int8", (3,)), 2),
    (("float32", (3,)), 1j), (("int64", (3,)), 1j), (("float64", (3,)), 1j),
    (("float32", (3,)), ("float64", ())), (("float32", (3,)), ("int64", (3,))),
    (("int32", (3,)), ("int64", (3,))), (("int32", (3,)), ("int64", ())),
    (("int8", (3,)), ("uint8", (3,))), (("bool", (3,)), ("bool", (3,))),
    (("float16", (3,)), ("bfloat16", (3,))), (("float16", ()), ("int64", (3,))),
    (("uint8", (3,)), ("int8", ())), (("int64", ()), ("float32", ())),
    (("bool", ()), ("float16", (3,))), (("float16", (3,)), ("complex64", ())),
    (("float64", (3,)), ("complex64", (3,))), (("int64", (3,)), ("float16", ())),
]


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "eq", "pow", "atan2",
                                  "floor_divide", "remainder", "logaddexp", "bitwise_or"])
@pytest.mark.parametrize("a,b", PROMOTION, ids=str)
def test_promotion(name, a, b):
    def make(spec, seed):
        return operand(spec[1], spec[0], seed, nonzero=True, low=1, high=3)

    fn = lambda L, x, *y: getattr(L, name)(x, y[0] if y else b)  # noqa: E731
    operands = [make(a, 0)] + ([make(b, 1)] if isinstance(b, tuple) else [])
    run(fn, operands)
    run(lambda L, x, *y: getattr(L, name)(y[0] if y else b, x), operands)


# ----------------------------------------------------------------------------- unary ops

UNARY = ["neg", "negative", "abs", "absolute", "sign", "sgn", "exp", "exp2", "expm1", "log",
         "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan",
         "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
         "arcsinh", "arccosh", "arctanh", "sigmoid", "erf", "erfc", "erfinv", "lgamma", "digamma",
         "reciprocal", "square", "relu", "floor", "ceil", "trunc", "fix", "frac", "round",
         "isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit", "logical_not",
         "bitwise_not"]


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", UNARY)
def test_unary(name, dtype):
    fn = lambda L, x: getattr(L, name)(x)  # noqa: E731
    for i, shape in enumerate(SHAPES):
        run(fn, [operand(shape, dtype, i)])
    run(fn, [operand((3, 4), dtype, noncontiguous=True)])
    run(fn, [operand((7,), dtype, noncontiguous=True, low=-0.99, high=0.99)])
    run(lambda L, x: getattr(x, name)(), [operand((3, 4), dtype, 7, low=0.01, high=5)])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_special_values(name, dtype):
    run(lambda L, x: getattr(L, name)(x), [special(dtype)])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_relu_keeps_negative_zero(dtype):
    e, t = special(dtype)
    for fn in (lambda L, x: L.relu(x), lambda L, x: x.clone().relu_()):
        ours, theirs = fn(ember, e), fn(torch, t)
        check(ours, theirs)
        check_signs(ours, theirs)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_sigmoid_of_16_bit_floats_rounds_once(dtype):
    """torch's sigmoid is ``1 / (1 + exp(-x))``, of float16 and bfloat16 computed in
    float32 and rounded once: the same values exactly."""
    values = [-100.0, 100.0, np.inf, -np.inf, *np.linspace(-12, 12, 241)]
    e, t = _both(np.array(values), dtype)
    check(ember.sigmoid(e), torch.sigmoid(t), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64"])
def test_round_decimals(dtype):
    # (torch refuses integer tensors whenever decimals is passed, even 0: Ember accepts 0)
    for decimals in (1, 2, -1):
        run(lambda L, x: L.round(x, decimals=decimals), [operand((20,), dtype, low=-50, high=50)])
    run(lambda L, x: L.round(x), [operand((20,), dtype, low=-50, high=50)])
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.25, 0.35])
    run(lambda L, x: L.round(x), [_both(halves, "float64")])


# ----------------------------------------------------------------------------- in place, out=

INPLACE_BINARY = ["add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow",
                  "atan2", "hypot", "copysign", "xlogy", "eq", "ne", "lt", "le", "gt", "ge",
                  "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
                  "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "subtract",
                  "multiply", "divide", "true_divide", "greater", "less", "not_equal"]
INPLACE_UNARY = ["neg", "abs", "sign", "sgn", "exp", "exp2", "expm1", "log", "log2", "log10",
                 "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
                 "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc", "erfinv",
                 "lgamma", "digamma", "reciprocal", "square", "relu", "floor", "ceil", "trunc",
                 "frac", "round", "logical_not", "bitwise_not", "negative", "absolute", "fix"]


def run_inplace(fn, target, *others):
    """``fn(x, *others)`` mutates and returns x in both; errors leave x unchanged."""
    (ex, tx), rest = target, others
    before = np.array(ex).copy()
    try:
        expected = fn(tx, *[t for _, t in rest])
    except Exception as exc:  # Ember raises as torch does, leaving the target unchanged
        with pytest.raises(Exception) as raised:
            fn(ex, *[e for e, _ in rest])
        # the very type: torch's shape and memory checks come before its dtype checks, whose
        # NotImplementedError is a subclass of the RuntimeError they raise
        assert type(raised.value) is type(exc), f"{raised.value!r}, torch: {exc!r}"
        assert np.array(ex).tobytes() == before.tobytes()
        return
    result = fn(ex, *[e for e, _ in rest])
    assert result is ex
    check(ex, expected)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32",
                                   "uint8", "bool", "complex64"])
@pytest.mark.parametrize("name", INPLACE_BINARY)
def test_inplace_binary(name, dtype):
    fn = lambda x, y: getattr(x, name + "_")(y)  # noqa: E731
    kw = _divisor_kw(name)
    for a, b in [((3, 4), (4,)), ((3, 4), (3, 4)), ((), ()), ((4,), (3, 4))]:
        run_inplace(fn, operand(a, dtype), operand(b, dtype, 1, low=0, **kw))
    for other in (2, 1.5, True):
        run_inplace(lambda x: getattr(x, name + "_")(other), operand((3, 4), dtype))
    run_inplace(fn, operand((3, 4), dtype), operand((4,), "float64", 1, **kw))
    run_inplace(fn, operand((3, 4), dtype), operand((), "int64", 1, **kw))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "uint8", "bool",
                                   "complex64"])
@pytest.mark.parametrize("name", INPLACE_UNARY)
def test_inplace_unary(name, dtype):
    run_inplace(lambda x: getattr(x, name + "_")(), operand((3, 4), dtype, low=0.01, high=0.99))


@pytest.mark.parametrize("symbol", ["+=", "-=", "*=", "/=", "//=", "%=", "**=", "&=", "|=", "^=",
                                    "<<=", ">>="])
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool"])
def test_augmented_assignment(symbol, dtype):
    code = compile(f"x {symbol} y", "<aug>", "exec")

    def fn(x, y):
        scope = {"x": x, "y": y}
        exec(code, scope)
        return scope["x"]

    for y in [2, 1.5, True]:
        run_inplace(lambda x: fn(x, y), operand((3, 4), dtype, low=0, nonzero=True))
    run_inplace(fn, operand((3, 4), dtype, low=0), operand((4,), dtype, 1, low=0, nonzero=True))


def test_inplace_dtype_error_leaves_tensor_unchanged():
    x = ember.tensor([1, 2, 3])
    data = x._data
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output "
                                           "type Long"):
        x.add_(1.5)
    with pytest.raises(RuntimeError):
        x.div_(2)
    with pytest.raises(RuntimeError):
        x.sqrt_()
    with pytest.raises(RuntimeError):
        x.add_(ember.ones(2, 3))
    assert x.tolist() == [1, 2, 3] and x._data is data and x._version == 0
    x.add_(2)
    assert x.tolist() == [3, 4, 5] and x._version == 1


# torch checks an in-place write's memory, then the operand's shape, then the result type's
# cast, and only then the kernel's dtypes
INPLACE_CHECK_ORDER = [
    lambda L: L.tensor(complex(-2.5, 0.5)).greater_(L.tensor([0.5], dtype=L.float64)),
    lambda L: L.tensor(-3.0, dtype=L.float64).bitwise_right_shift_(L.zeros(2, 2, dtype=L.float64)),
    lambda L: L.tensor([[1.5]]).expand(2, 1).bitwise_or_(L.ones(1)),
    lambda L: L.tensor([[1.5]]).expand(2, 1).bitwise_or_(L.ones(3)),
    lambda L: L.ones(4, 1).__ior__(L.ones(1, dtype=L.float64)[:0]),
    lambda L: L.ones(2, dtype=L.bool).hypot_(L.ones(2, dtype=L.int64)),
    lambda L: L.ones(2, dtype=L.int64).hypot_(L.ones(2, dtype=L.int64)),
    lambda L: L.ones(2, dtype=L.int64).atan2_(L.ones(2, dtype=L.int64)),
    lambda L: L.ones(2, dtype=L.int64).__ilshift__(1.5),
    lambda L: L.ones(2, dtype=L.float16).lt_(L.ones(3)),
    # the argument parser's refusal of a number comes before everything
    lambda L: L.tensor([-0.5], dtype=L.float64).expand(2).logical_and_(1.5),
    lambda L: L.tensor([[[1.5]]]).expand(1, 2, 1).logical_xor_(0.5),
    lambda L: L.ones(1).expand(3).hypot_(1.5),
]
# torch's iterator checks the operands' shapes before its kernel refuses their dtype; an
# op's own refusal (maximum of complex tensors) comes before both
BINARY_CHECK_ORDER = [
    lambda L: L.bitwise_xor(L.zeros(4, 1, 1), L.zeros(2, 1, 1)),
    lambda L: L.ones(1, 3) | L.ones(1, 2),
    lambda L: L.hypot(L.ones(3, dtype=L.int64), L.ones(2, dtype=L.int64)),
    lambda L: L.ones(3, 2, 1, dtype=L.complex64).copysign(L.ones(3, 2, 1, 3, dtype=L.complex64)),
    lambda L: L.logaddexp(L.ones(4, 1, dtype=L.int64), L.ones(2, 1, dtype=L.int64)),
    lambda L: L.ones(2, 1, dtype=L.bfloat16).bitwise_left_shift(L.ones(2, 3, dtype=L.bfloat16)
                                                                [:1].expand(2, 3)[:, :2].t()),
    lambda L: L.bitwise_right_shift(L.ones(4, 3, 3, dtype=L.float16), L.ones(2, 1, 1,
                                                                             dtype=L.float64)),
    lambda L: L.bitwise_left_shift(L.ones(4, dtype=L.complex64), 2),
    lambda L: L.maximum(L.ones(3, dtype=L.complex64), L.ones(2, dtype=L.complex64)),
]


def _same_error(fn):
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(Exception) as raised:
        fn(ember)
    assert type(raised.value) is type(expected.value), f"{raised.value!r}, {expected.value!r}"
    op, _, text = str(raised.value).partition(": ")
    assert text == str(expected.value) or str(raised.value) == str(expected.value)


@pytest.mark.parametrize("fn", INPLACE_CHECK_ORDER)
def test_inplace_checks_in_torch_order(fn):
    _same_error(fn)


@pytest.mark.parametrize("fn", BINARY_CHECK_ORDER)
def test_binary_checks_in_torch_order(fn):
    _same_error(fn)


@pytest.mark.parametrize("name", ["bitwise_or", "bitwise_xor", "bitwise_and", "add", "mul"])
def test_inplace_into_uint8_of_an_int64_operand_wraps(name):
    # torch computes in int64 and wraps into self's uint8 (NumPy's same_kind cast refuses)
    e, t = ember.tensor(np.array([3, 200], np.uint8)), torch.tensor(np.array([3, 200], np.uint8))
    getattr(e, name + "_")(ember.tensor([-8, 300]))
    getattr(t, name + "_")(torch.tensor([-8, 300]))
    assert e.tolist() == t.tolist()


def test_inplace_through_a_view_changes_the_base():
    base = ember.zeros(2, 3)
    row = base[0]
    row.add_(1.5)
    row.mul_(ember.tensor([1.0, 2.0, 3.0]))
    assert base.tolist() == [[1.5, 3.0, 4.5], [0.0, 0.0, 0.0]]
    assert base._version == row._version == 2


OUT_OPS = ["add", "sub", "mul", "div", "pow", "maximum", "eq", "atan2", "exp", "neg", "sqrt",
           "floor", "logical_not"]


@pytest.mark.parametrize("out_dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("out_shape", [(0,), (3, 4), (4,)])
@pytest.mark.parametrize("name", OUT_OPS)
def test_out(name, out_shape, out_dtype):
    unary = name in ("exp", "neg", "sqrt", "floor", "logical_not")

    def fn(L, x, y, o):
        r = getattr(L, name)(x, out=o) if unary else getattr(L, name)(x, y, out=o)
        assert r is o
        return o

    out = (ember.zeros(out_shape, dtype=getattr(ember, out_dtype)),
           torch.zeros(out_shape, dtype=getattr(torch, out_dtype)))  # resizable, unlike from_numpy
    # the op computes in float32 whatever out's dtype: float32's tolerance applies
    run(fn, [operand((3, 4), "float32", low=0.1), operand((4,), "float32", 1), out],
        **dict(zip(("rtol", "atol"), TOL["float32"])))


# ----------------------------------------------------------------------------- corner values

def _u8(L, v):
    return L.tensor(v, dtype=L.uint8)


ALPHA = [
    # alpha scales other in the result dtype: uint8 * -1 must not wrap before a float add
    lambda L: L.add(L.tensor([1.0], dtype=L.float64), _u8(L, [3]), alpha=-1),
    lambda L: L.sub(L.tensor([1.0], dtype=L.float64), _u8(L, [3]), alpha=-1),
    lambda L: L.tensor([1.0], dtype=L.float64).add_(_u8(L, [3]), alpha=-1),
    lambda L: L.tensor([1.0], dtype=L.float64).sub_(_u8(L, [3]), alpha=-2),
    lambda L: L.rsub(_u8(L, [3]), L.tensor([1.0], dtype=L.float64), alpha=-2),
    lambda L: L.add(L.tensor([1.5]), _u8(L, [200]), alpha=2),
    lambda L: L.add(L.tensor([1.5], dtype=L.float16), _u8(L, 3), alpha=-1),
    lambda L: L.add(L.tensor([100000], dtype=L.int32), L.tensor([3], dtype=L.int16), alpha=30000),
    lambda L: L.add(L.tensor([1], dtype=L.int8), _u8(L, [3]), alpha=300),
    lambda L: L.add(L.tensor([1.0], dtype=L.complex64), _u8(L, [3]), alpha=-1),
    lambda L: L.add(L.tensor([1.0], dtype=L.float64), L.tensor([3.0]), alpha=0.1),
    lambda L: L.add(L.tensor([1.0], dtype=L.float64), _u8(L, [3]), alpha=-1,
                    out=L.empty(1, dtype=L.float64)),
    # alpha is converted to the result dtype with torch's check; sub checks -alpha
    lambda L: L.add(L.tensor([1.0]), L.tensor([2.0]), alpha=1e40),
    lambda L: L.add(L.tensor([1.0], dtype=L.float64), L.tensor([2.0]), alpha=1e40),
    lambda L: L.add(_u8(L, [1]), _u8(L, [1]), alpha=256),
    lambda L: L.add(_u8(L, [1]), _u8(L, [1]), alpha=-255),
    lambda L: L.tensor([1], dtype=L.int8).add_(L.tensor([1], dtype=L.int8), alpha=128),
    lambda L: L.tensor([1], dtype=L.int8).sub_(L.tensor([1], dtype=L.int8), alpha=128),
    lambda L: L.sub(L.tensor([1], dtype=L.int8), L.tensor([1], dtype=L.int8), alpha=-128),
    lambda L: L.add(L.tensor([1.0], dtype=L.float16), L.tensor([1.0], dtype=L.float16),
                    alpha=1e5),
]


@pytest.mark.parametrize("fn", ALPHA)
def test_alpha_in_the_result_dtype(fn):
    run(lambda L: fn(L), [])


@pytest.mark.parametrize("dtype", ["int8", "int16"])
@pytest.mark.parametrize("fn", [
    lambda L, x: L.div(x, 3, rounding_mode="trunc"),
    lambda L, x: L.div(x, -1, rounding_mode="trunc"),
    lambda L, x: L.div(x, L.tensor([-1, 3, 2, -2], dtype=x.dtype), rounding_mode="trunc"),
    lambda L, x: x.clone().div_(-3, rounding_mode="trunc"),
    lambda L, x: L.div(x, -1, rounding_mode="floor"),
    lambda L, x: x // -1,
    lambda L, x: L.floor_divide(x, L.tensor([-1, 3, 2, -2], dtype=x.dtype)),
    lambda L, x: x.clone().floor_divide_(-1),
    lambda L, x: L.remainder(x, -1),
    lambda L, x: L.fmod(x, -3),
    lambda L, x: x.clone().remainder_(3),
    lambda L, x: x.clone().fmod_(-1),
])
def test_integer_division_of_the_minimum(fn, dtype):
    low = -128 if dtype == "int8" else -32768
    values = [low, 100, -7, 7]
    run(fn, [(ember.tensor(values, dtype=getattr(ember, dtype)),
              torch.tensor(values, dtype=getattr(torch, dtype)))])


@pytest.mark.parametrize("divisor", [False, True, 0, 0.0])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "bool"])
@pytest.mark.parametrize("fn", [
    lambda L, x, d: x / d, lambda L, x, d: x // d, lambda L, x, d: x % d,
    lambda L, x, d: L.fmod(x, d), lambda L, x, d: L.div(x, d, rounding_mode="trunc"),
    lambda L, x, d: L.div(x, d, rounding_mode="floor"), lambda L, x, d: L.true_divide(x, d),
    lambda L, x, d: x.clone().floor_divide_(d), lambda L, x, d: x.clone().remainder_(d),
    lambda L, x, d: x.clone().fmod_(d), lambda L, x, d: x.clone().div_(d, rounding_mode="trunc"),
    lambda L, x, d: x // L.tensor([d]), lambda L, x, d: x % L.tensor([d]),
    lambda L, x, d: L.fmod(x, L.tensor([d])),
])
def test_zero_and_bool_divisors(fn, dtype, divisor):
    """Integer division by zero raises by the dtype the op computes in, not the divisor's:
    ``float_tensor // False`` is inf."""
    values = [1, -1, 0]
    run(lambda L, x: fn(L, x, divisor),
        [(ember.tensor(values, dtype=getattr(ember, dtype)),
          torch.tensor(values, dtype=getattr(torch, dtype)))])


_GRID_SHAPES = [(3, 4), (1, 4), (3, 1), (4,), (), (2, 3, 4), (1, 3, 4), (2, 1, 4), (0, 4)]
_GRID_LAYOUTS = ["row-major", "transposed", "permuted", "stepped"]


def _laid_out(lib, shape, layout):
    arr = np.arange(float(np.prod(shape)), dtype=np.float32).reshape(shape)
    if layout == "transposed" and len(shape) >= 2:
        return lib.tensor(np.ascontiguousarray(arr.swapaxes(-1, -2))).transpose(-1, -2)
    if layout == "permuted" and len(shape) == 3:
        return lib.tensor(np.ascontiguousarray(arr.transpose(2, 0, 1))).permute(1, 2, 0)
    if layout == "stepped":
        return lib.tensor(np.repeat(arr, 2, axis=-1))[..., ::2]
    return lib.tensor(arr)


def _significant_strides(t):
    return tuple(s for n, s in zip(t.shape, t.stride()) if n > 1)


@pytest.mark.parametrize("name", ["add", "mul", "maximum"])
def test_broadcast_results_follow_torchs_layout(name):
    """Every pair of the shapes and layouts above: the result's strides (over dims longer
    than 1, the ones that matter) are torch's, which follow the operands' layouts."""
    wrong = []
    for (sa, sb), (la, lb) in itertools.product(
            itertools.product(_GRID_SHAPES, repeat=2), itertools.product(_GRID_LAYOUTS, repeat=2)):
        try:
            np.broadcast_shapes(sa, sb)
        except ValueError:
            continue
        theirs = getattr(torch, name)(_laid_out(torch, sa, la), _laid_out(torch, sb, lb))
        ours = getattr(ember, name)(_laid_out(ember, sa, la), _laid_out(ember, sb, lb))
        if theirs.numel() and _significant_strides(ours) != _significant_strides(theirs):
            wrong.append((sa, la, sb, lb, ours.stride(), theirs.stride()))
    assert not wrong


# Operands whose size-1 dims have strides numpy would not give them (views, and casts of
# views, which keep them as torch's do): TensorIterator's dim sort reads those strides, so
# a broadcast through a size-1 dim of the result can come out permuted.
_SIZE_1_STRIDES = {
    "unfolded": lambda L: (L.tensor([[[-2.5]], [[1.0]]]), L.tensor([[[-2.5]], [[1.0]]]).unfold(2, 1, 2)),
    "permuted, expanded bfloat16": lambda L: (
        L.tensor([[[0.0, 2.0]]], dtype=L.float64).permute(2, 1, 0),
        L.tensor([[[1.5]]]).to(L.bfloat16).expand(1, 3, 1)),
    "permuted bool": lambda L: (
        L.tensor([[[1.0]], [[0.0]]]),
        L.tensor([[[[True]]], [[[False]]], [[[False]]], [[[True]]]]).permute(1, 3, 0, 2)),
    "swapped in place": lambda L: (
        L.tensor([[9.0], [4.0]], dtype=L.float64).permute(1, 0),
        L.tensor([[[2.5, 1.0]]]).to(L.bfloat16).swapaxes_(-1, -3)),
    "cast of a permuted view": lambda L: (
        L.ones(2, 1, 3)[:, :, :1].permute(2, 1, 0).double(), L.ones(2, 1, 1, 2)),
    "promoted unfolded, stepped view": lambda L: (
        L.tensor(np.array([[1.0], [-5.0]], dtype=np.float32)),  # an array of numpy's own
        L.tensor([[[[4, -6], [2, -8]]], [[[-2, -8], [-7, 6]]]])[..., ::2].unfold(1, 1, 1)),
}


@pytest.mark.parametrize("name", ["sub", "lt", "atan2", "floor_divide", "where", "maximum"])
@pytest.mark.parametrize("case", list(_SIZE_1_STRIDES))
def test_broadcasts_read_the_strides_of_size_1_dims(case, name):
    """A broadcast of row-major operands whose size-1 dims have other strides than numpy's
    (a permuted, unfolded or swapped view's, a cast's of one) is laid out as torch's."""
    def call(L):
        x, y = _SIZE_1_STRIDES[case](L)
        if name == "where":
            return L.where(x > y, x, y)
        return getattr(L, name)(x, y)

    try:
        theirs = call(torch)
    except RuntimeError:  # sub of a bool tensor
        with pytest.raises(RuntimeError):
            call(ember)
        return
    ours = call(ember)
    check(ours, theirs)
    assert _significant_strides(ours) == _significant_strides(theirs), (ours.stride(),
                                                                        theirs.stride())


def test_casts_and_clones_keep_the_strides_of_size_1_dims():
    """torch's copies of a dense tensor keep its strides, its size-1 dims' too."""
    for L in (ember, torch):
        x = L.tensor([[[[True]]], [[[False]]]]).permute(1, 3, 0, 2)  # (1, 1, 2, 1), strides 1
        assert x.float().stride() == x.clone().stride() == x.stride() == (1, 1, 1, 1)
        assert x.clone(memory_format=L.contiguous_format).stride() == (2, 2, 1, 1)


COMPLEX_POW_VALUES = [0j, -0.0 + 0j, 1 + 0j, -1 + 0j, 2.5 - 2j, 1j, complex("inf"),
                      complex("nan"), -3 + 0.5j, complex(0, -0.0), 2 + 0j, 3 + 0j, -2 + 0j]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_pow_is_exp_of_exponent_times_log(dtype):
    """torch's complex pow is exp(y * log(x)), zeros and infinities included (0 ** z is
    inf + nanj for Re z < 0, nan + nanj for z == 0), with special scalar exponents."""
    xs = np.array(COMPLEX_POW_VALUES, dtype=dtype)
    x, y = np.meshgrid(xs, xs)
    base = np.array([True, False, True])
    operands = [(ember.tensor(a), torch.tensor(a)) for a in (x, y, base, base.astype("float32"))]
    (ex, tx), (ey, ty), (eb, tb), (ef, tf) = operands
    check(ember.pow(ex, ey), torch.pow(tx, ty))
    check(eb[:, None].pow(ey[0]), tb[:, None].pow(ty[0]))
    check(ember.pow(ef[:, None], ey[0]), torch.pow(tf[:, None], ty[0]))
    check(ember.pow(0, ey), torch.pow(0, ty))
    for s in [2, 3, 0.5, -1, -2, -0.5, 1.5, 0, 1, 0.0, True, False, 1j, 2 + 0j]:
        check(ember.pow(ex[0], s), torch.pow(tx[0], s))
        check(ex[0].clone().pow_(s), tx[0].clone().pow_(s))
        run(lambda L, b: L.pow(b, s), [(eb, tb)])  # noqa: B023 - run calls it at once


@pytest.mark.parametrize("fn", [
    lambda L, x, d: x // d, lambda L, x, d: x % d, lambda L, x, d: L.fmod(x, d),
    lambda L, x, d: L.div(x, d, rounding_mode="trunc"), lambda L, x, d: x.clone().floor_divide_(d),
    lambda L, x, d: L.floor_divide(x, L.tensor(d)), lambda L, x, d: L.remainder(x, L.tensor([d])),
])
def test_integer_division_with_an_empty_result_divides_nothing(fn):
    run(lambda L, x: fn(L, x, 0), [(ember.zeros((1, 0), dtype=ember.int64),
                                    torch.zeros((1, 0), dtype=torch.int64))])


def test_broadcast_errors_name_the_operands_shapes():
    for name in ["add", "floor_divide"]:
        with pytest.raises(RuntimeError, match=r"size of tensor a \(0\) must match the size of "
                                               r"tensor b \(3\) at non-singleton dimension 0"):
            getattr(ember, name)(ember.zeros(0, dtype=ember.int64), ember.ones(3, dtype=ember.int64))


@pytest.mark.parametrize("call", [
    "div_(o)", "div_(o, rounding_mode='trunc')", "div_(o, rounding_mode='floor')",
    "floor_divide_(o)", "remainder_(o)", "fmod_(o)", "pow_(o)", "atan2_(o)", "mul_(o)",
])
def test_inplace_results_that_would_grow_self_are_refused(call):
    """A (1, 1) operand broadcasts a (5,) self to (1, 5): torch refuses, self unchanged."""
    run(lambda L, x: eval(f"x.{call}", {"x": x, "o": L.ones(1, 1)}),
        [(ember.zeros(5), torch.zeros(5))])


# One operand whose dims numpy orders otherwise than TensorIterator: size-1 dims with
# strides of their own (numpy leaves them out of its order) and overlapping windows (two
# dims of one stride: TensorIterator puts the shorter inside).
_LONE_OPERANDS = {
    "unfolded windows": lambda L: L.tensor([[[[-1.5], [1.5], [3.0], [1.25]]]]).unfold(2, 3, 1),
    "permuted, size-1 dim": lambda L: L.tensor([[[-2.0], [1.0]], [[-2.0], [2.5]]]).permute(1, 2, 0),
    "permuted size-1 strides": lambda L: L.tensor([[[0.5], [2.0]]]).permute(0, 2, 1),
    "transposed": lambda L: L.tensor([[1.0, 2.0], [3.0, 4.0]]).t(),
    "a number expanded": lambda L: L.tensor(1.5).expand(3, 1, 4),
    "a number expanded, no size-1 dim": lambda L: L.tensor(1.5).expand(64, 10),
    # numpy moves an expanded dim outermost, TensorIterator leaves it where it is
    "expanded, then permuted": lambda L: L.tensor([[[1.0, 2.0, 3.0, 4.0], [0.5, 1.5, 2.5, 3.5]]])
    .expand(2, 2, 4).permute(2, 0, 1),
}


@pytest.mark.parametrize("layout", list(_LONE_OPERANDS))
@pytest.mark.parametrize("case", ["exp", "abs", "number", "0-d tensor", "0-d tensor first"])
def test_one_operand_results_follow_torchs_layout(case, layout):
    def run(L):
        x = _LONE_OPERANDS[layout](L)
        return {"exp": lambda: x.exp(), "abs": lambda: x.abs().exp(), "number": lambda: x * 2,
                "0-d tensor": lambda: x * L.tensor(2.0),
                "0-d tensor first": lambda: L.tensor(2.0) * x}[case]()

    assert run(ember).stride() == run(torch).stride()


def test_polar_lays_out_its_result_from_abs_and_angle():
    def run(L):
        x = L.tensor([[[-2.0], [1.0]], [[-2.0], [2.5]], [[-0.5], [-0.25]]]).permute(1, 2, 0)
        return L.polar(x.abs(), x.expand(2, 3, 3))

    ours, theirs = run(ember), run(torch)
    assert ours.stride() == theirs.stride()
    np.testing.assert_allclose(np.asarray(ours), theirs.numpy(), rtol=1e-6)


def test_float16_powers_are_pows_and_number_bases_give_row_major_results():
    """torch's Half kernel computes every exponent with pow (sqrt(-inf) would be nan), and
    pow(Scalar, Tensor) allocates its result row-major."""
    def run(L):
        x = L.tensor([-float("inf"), 3.3, -2.7, 0.3], dtype=L.float16)
        e = L.tensor([[[-3.0, 3.0], [2.0, 0.0]]]).to(L.bfloat16).permute(2, 1, 0)
        return [str(L.pow(x, p).tolist()) for p in (0.5, 2, 3)], (2 ** e).stride()

    assert run(ember) == run(torch)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("form", ["x * s", "s * x", "x / s", "x.mul_(s)", "x.div_(s)",
                                  "x + s", "x - s"])
def test_half_types_with_a_number_round_as_torch(dtype, form):
    """torch's CPU mul and true division of a float16 or bfloat16 tensor by a number
    compute in float with the number in float; add and sub round the number to the
    tensor's dtype first. Bit for bit, over numbers no half type holds exactly."""
    values = np.random.default_rng(6).normal(0, 10, 4000).astype(np.float32)
    for s in (0.6931471805599453, 0.1, 1 / 3, 3.7, 0.3, 1000003, -7):
        got = []
        for m in (torch, ember):
            x = m.tensor(values).to(getattr(m, dtype))
            got.append(eval(form, {"x": x, "s": s}).float().numpy())  # noqa: S307
        np.testing.assert_array_equal(*got, err_msg=f"{form} {s}")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("form", ["x * s", "x / s", "x.mul_(s)", "x.div_(s)", "x + s"])
@pytest.mark.parametrize("scalar_dtype", ["float32", "float64", "int64"])
def test_half_types_with_a_wider_0d_tensor_round_as_torch(dtype, form, scalar_dtype):
    """A 0-d CPU tensor of a wider dtype beside a half tensor keeps the half dtype; torch's
    mul and true division read it as a number in float (a float16 0.5 times a float32 65536
    is 32768, not inf: what a GradScaler's scale does to a float16 loss), add rounds it to
    the half type."""
    values = np.random.default_rng(7).normal(0, 10, 4000).astype(np.float32)
    for s in (65536.0, 0.6931471805599453, 1 / 3, 70000.0, -7):
        got = []
        for m in (torch, ember):
            x = m.tensor(values).to(getattr(m, dtype))
            s_t = m.tensor(s, dtype=getattr(m, scalar_dtype))
            out = eval(form, {"x": x, "s": s_t})  # noqa: S307
            assert out.dtype == getattr(m, dtype)
            got.append(out.float().numpy())
        np.testing.assert_array_equal(*got, err_msg=f"{form} {s}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("exponent", [0.5, -0.5, -1, -1.0, -2, 2, 3])
def test_special_exponents_are_torchs_kernels(dtype, exponent):
    """torch computes ``x ** 0.5``, ``** -0.5`` and ``** -1`` with its sqrt, rsqrt and
    reciprocal kernels (float, double, bfloat16; float16's is pow for every exponent), and
    ``** 2``, ``** 3``, ``** -2`` as products: ``(-inf) ** -0.5`` is nan, not pow's 0, and
    ``(-0.0) ** -0.5`` is -inf. Signs of zeros and infinities included."""
    # (exact roots: bfloat16's rsqrt of other values rounds once in torch's vectorised
    # loop and twice in its scalar one, compatibility.md)
    values = np.array([-np.inf, np.inf, -0.0, 0.0, np.nan, 4.0, 0.25, -4.0, 9.0, 0.0625],
                      dtype=np.float32)
    got = [np.asarray(m.tensor(values).to(getattr(m, dtype)).pow(exponent).float())
           for m in (torch, ember)]
    np.testing.assert_array_equal(*got)
    numbers = ~np.isnan(got[0])  # (a NaN's sign is unspecified: compatibility.md)
    np.testing.assert_array_equal(*(np.signbit(g[numbers]) for g in got))


@pytest.mark.parametrize("dtype", ["float64", "int64", "float32", "int32", "float16"])
@pytest.mark.parametrize("step", [1, 2, 4, 8, 16])
def test_neg_in_place_through_a_stride_writes_each_element_its_own_negation(dtype, step):
    """NumPy 2.4's in-place negative through a 32- or 64-byte stride wrote the negations of
    other elements (``x[2::8].neg_()`` of an arange: -3 where -10 belongs)."""
    got = []
    for m in (torch, ember):
        x = m.arange(1, 40 * step + 2).to(getattr(m, dtype))
        x[1::step][:33].neg_()
        got.append(np.asarray(x.float()))
    np.testing.assert_array_equal(*got)


@pytest.mark.parametrize("name", ["isfinite", "isinf", "isnan"])
@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
def test_isfinite_and_isinf_of_integers_keep_the_input_layout(name, dtype):
    """torch answers isfinite and isinf of an integer or bool tensor with ones_like and
    zeros_like, which keep its strides (a size-1 dim's too: a later cat reads them); of a
    float tensor, and isnan of any, through its iterator."""
    a = np.array([[[[0], [0]]], [[[0], [1]]]], dtype=dtype)
    got = []
    for m in (torch, ember):
        r = getattr(m, name)(m.from_numpy(a).permute(3, 2, 1, 0))
        got.append((r.stride(), m.cat([r, r], 0).stride(), r.tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_logaddexp_special_values_are_torchs(dtype):
    """torch's complex logaddexp: infinite real parts that tie give the smaller operand
    (``log(0) + log(0)`` is ``-inf``, not NaN) or ``log(exp(x) + exp(y))``, a NaN anywhere
    gives NaN, and a finite tie factors out the first operand."""
    values = [0j, complex(-np.inf, 0), complex(-np.inf, 1), complex(np.inf, 0),
              complex(np.inf, -2), complex(np.nan, 0), complex(0, np.nan), 1 + 2j, 1 - 2j,
              complex(-np.inf, np.nan), complex(-np.inf, -0.0)]
    pairs = np.array([(a, b) for a in values for b in values], dtype=dtype)
    got = [np.asarray(m.logaddexp(m.from_numpy(pairs[:, 0].copy()),
                                  m.from_numpy(pairs[:, 1].copy()))) for m in (torch, ember)]
    for part in (np.real, np.imag):
        np.testing.assert_allclose(part(got[1]), part(got[0]), rtol=1e-6)
