"""Creation ops against torch: each case is one expression run with ``m`` = ember and torch."""

import warnings

import numpy as np
import pytest
import torch
from torch_oracle import check

import ember.core as ember
from ember.core.dispatch_modes import PrimitiveNames
from ember.core.meta import MetaArray

MODULES = {"np": np}


def run(expr, m):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.range and copy-construct warnings
        return eval(expr, {**MODULES, "m": m})


def outcome(expr, m):
    try:
        return run(expr, m), None
    except Exception as exc:  # the oracle's exception type is what we compare
        return None, type(exc)


def same(expr, values=True):
    t, t_err = outcome(expr, torch)
    assert t_err is None, f"torch raised {t_err} on {expr}"
    e = run(expr, ember)
    if values:
        check(e, t)
    else:
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
    return e, t


def same_error(expr):
    _, t_err = outcome(expr, torch)
    assert t_err is not None, f"torch accepted {expr}"
    with pytest.raises(t_err):
        run(expr, ember)


FROM_DATA = [
    "m.tensor(3)", "m.tensor(2.5)", "m.tensor(True)", "m.tensor(1+2j)", "m.tensor(-2**63)",
    "m.tensor([1, 2, 3])", "m.tensor([1, 2.5])", "m.tensor([True, False])", "m.tensor([True, 1])",
    "m.tensor([True, 1.5])", "m.tensor([1, 2j])", "m.tensor([[1, 2], [3, 4]])",
    "m.tensor(((1, 2), (3, 4)))", "m.tensor([[1, 2], range(3, 5)])", "m.tensor(range(4))",
    "m.tensor([[[1.5]], [[2.5]]])", "m.tensor([])", "m.tensor([[]])", "m.tensor([[], []])",
    "m.tensor([[], [1]])", "m.tensor([[], [1.5]], dtype=m.int32)",
    "m.tensor([m.tensor(1.), m.tensor(2.)])", "m.tensor([m.tensor(1., dtype=m.float64), 2.])",
    "m.tensor([m.tensor(1), 2.5])", "m.tensor([m.tensor(True), 2])",
    "m.tensor([m.tensor(1, dtype=m.int8), m.tensor(1, dtype=m.uint8)])",
    "m.tensor([[1, 2], m.tensor([3, 4])])", "m.tensor([m.tensor([1.5])])",
    "m.tensor([[1, 2], np.array([3.5, 4])])",
    "m.tensor([np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)])",
    "m.tensor(np.float64(1.5))", "m.tensor(np.float32(1.5))", "m.tensor([np.float64(1.), 2.])",
    "m.tensor([np.float32(1.), 2.])", "m.tensor([np.int32(1), 2])", "m.tensor(np.array(2.5))",
    "m.tensor(np.arange(6.).reshape(2, 3))", "m.tensor(np.arange(6, dtype=np.int16))",
    "m.tensor(np.zeros((2, 0)))", "m.tensor(np.array([True, False]))",
    "m.tensor(np.arange(12.).reshape(3, 4).T)", "m.tensor(memoryview(b'ab'))",
    "m.tensor([1.5, 2], dtype=m.int32)", "m.tensor([1, 2], dtype=m.bool)",
    "m.tensor([1.5], dtype=m.bool)", "m.tensor([-1], dtype=m.uint8)",
    "m.tensor([-1.7, 2.7], dtype=m.int8)", "m.tensor([1e39], dtype=m.float32)",
    "m.tensor([70000], dtype=m.float16)", "m.tensor([2**70], dtype=m.float64)",
    "m.tensor([1, 2], dtype=m.complex128)", "m.tensor(3.5, dtype=m.bfloat16)",
    "m.tensor(np.array([300]), dtype=m.uint8)", "m.tensor(m.tensor([1, 2]), dtype=m.float64)",
    "m.tensor([[1.5, 2.5]], requires_grad=True)", "m.tensor([1, 2], device='cpu')",
]


@pytest.mark.parametrize("expr", FROM_DATA)
def test_tensor_from_data(expr):
    e, t = same(expr)
    assert e.requires_grad == t.requires_grad


@pytest.mark.parametrize("default", ["float64", "float32"])
def test_inference_follows_the_default_dtype(default):
    try:
        torch.set_default_dtype(getattr(torch, default))
        ember.set_default_dtype(getattr(ember, default))
        for expr in ["m.tensor([1.5])", "m.tensor(1j)", "m.tensor([])", "m.tensor([1, 2])",
                     "m.full((2,), 1.5)", "m.arange(3.)", "m.linspace(0, 1, 3)", "m.zeros(2)"]:
            same(expr)
    finally:
        torch.set_default_dtype(torch.float32)
        ember.set_default_dtype(ember.float32)


ERRORS = [
    "m.tensor([[1, 2], [1, 2, 3]])", "m.tensor([np.zeros(2), np.zeros(3)])",
    "m.tensor([[1, 2], 3])", "m.tensor([1, [2, 3]])", "m.tensor([1, 2**63])", "m.tensor(2**63)",
    "m.tensor('abc')", "m.tensor(['abc'])", "m.tensor(b'ab')", "m.tensor(None)",
    "m.tensor([None])", "m.tensor([1, None])", "m.tensor([1, 'a'])", "m.tensor(object())",
    "m.tensor({1: 2})", "m.tensor([None], dtype=m.float32)", "m.tensor([1 + 1j], dtype=m.float32)",
    "m.tensor([-1.5, 2.7], dtype=m.uint8)", "m.tensor([300, -1], dtype=m.uint8)",
    "m.tensor([-256], dtype=m.uint8)", "m.tensor([128], dtype=m.int8)",
    "m.tensor([float('nan')], dtype=m.int64)", "m.tensor([np.int64(300)], dtype=m.uint8)",
    "m.tensor([m.tensor([1, 2]), m.tensor([3, 4])])",
    "m.tensor([m.zeros(2, 3), m.zeros(2, 3)])", "m.tensor(np.array(['a']))",
    "m.tensor(1, requires_grad=True)", "m.zeros(2, -1)", "m.zeros(2, 3.0)", "m.zeros((2, 3.0))",
    "m.zeros('a')", "m.zeros(None)", "m.zeros()", "m.zeros(m.tensor(2.))", "m.zeros(True)",
    "m.zeros((2,), (3,))", "m.ones(2, requires_grad=True, dtype=m.int64)", "m.empty(-1)",
    "m.full(2, 1.)", "m.full((2,), 300, dtype=m.uint8)",
    "m.full((2,), float('nan'), dtype=m.int64)", "m.full((2,), 1e10, dtype=m.float16)",
    "m.full((2,), 1 + 1j, dtype=m.float32)", "m.full((2,), 'a')", "m.full((2,), None)",
    "m.full_like(m.ones(2, dtype=m.int32), 1e20)", "m.zeros_like([1, 2])",
    "m.eye(-1)", "m.eye(2, -1)", "m.eye(2.0)", "m.scalar_tensor([1])", "m.scalar_tensor(1 + 2j)",
    "m.arange(0, 5, -1)", "m.arange(0, 5, 0)", "m.arange(float('inf'))",
    "m.arange(float('nan'))", "m.arange(1e20, dtype=m.float32)", "m.arange(5, dtype=m.bool)",
    "m.arange(1 + 1j)", "m.arange('a')", "m.linspace(0, 1, -1)", "m.linspace(0, 1, 3.0)",
    "m.logspace(0, 1, -1)",
    "m.complex(m.ones(2, dtype=m.float64), m.zeros(2))",
    "m.complex(m.ones(2, dtype=m.int64), m.zeros(2, dtype=m.int64))",
    "m.complex(m.ones(2), m.zeros(3))", "m.polar(m.ones(2), m.zeros(2, dtype=m.float64))",
    "m.polar(m.ones(2, dtype=m.float16), m.zeros(2, dtype=m.float16))",
    "m.polar(m.ones(2, dtype=m.float16), m.zeros(3, dtype=m.float16))",
    "m.polar(m.ones(2, dtype=m.float16), m.zeros(2))",
    "m.Tensor(2.5)", "m.Tensor(-1)", "m.Tensor(2, -1)", "m.Tensor('a')", "m.Tensor(None)",
    "m.Tensor([[1, 2], [3]])", "m.Tensor(2, dtype=m.int64)", "m.Tensor(2, 3, requires_grad=True)",
    "m.LongTensor(m.ones(2))", "m.ByteTensor([300])",
    "m.from_numpy([1])", "m.from_numpy(np.array(['a']))", "m.from_numpy(np.arange(3.)[::-1])",
    "m.from_numpy(np.array([1, 2], dtype='>i4'))", "m.asarray(np.arange(3.)[::-1])",
    "m.asarray(np.zeros(2), dtype=m.float32, copy=False)",
    "m.empty_strided((2, 3), (1,))", "m.empty_strided((2, 3), (-1, 1))",
    "m.empty_strided((2, 3), (1.5, 1))", "m.empty_strided(2, (1,))",
    "m.empty(2, 3, memory_format=m.channels_last)", "m.empty(2, memory_format=m.preserve_format)",
    "m.zeros_like(m.ones(2, 3, 4, 5), memory_format=m.channels_last_3d)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_match_torch(expr):
    same_error(expr)


def test_ragged_message_names_the_dim():
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at dim 1 \(got 3\)"):
        ember.tensor([[1, 2], [1, 2, 3]])


SHAPED = [
    "m.zeros(2, 3)", "m.zeros((2, 3))", "m.zeros([2, 3])", "m.zeros(m.Size([2, 3]))",
    "m.zeros(size=(2,))", "m.zeros([])", "m.zeros(())", "m.zeros(0, 3)", "m.zeros(np.int64(2))",
    "m.zeros(m.tensor(2))", "m.zeros(2, dtype=m.int32)", "m.ones(3, 1, dtype=m.bool)",
    "m.ones(2, dtype=m.complex64)", "m.ones(2, 2, requires_grad=True)",
    "m.ones(2, 3, out=m.empty(2, 3))", "m.zeros(2, out=m.empty(0))", "m.full((2,), True)", "m.full((2,), 1)", "m.full((2,), 1.5)",
    "m.full((2,), 1 + 2j)", "m.full((2,), np.float64(1.5))", "m.full((2,), np.int32(1))",
    "m.full((2,), m.tensor(1))", "m.full((2,), m.tensor(1.5, dtype=m.float64))",
    "m.full([2, 3], 1.)", "m.full((2,), -1, dtype=m.uint8)", "m.full((2,), 1.5, dtype=m.int64)",
    "m.full((), 7)", "m.zeros_like(m.ones(2, 3, dtype=m.int32))",
    "m.ones_like(m.ones(2, 3), dtype=m.int8)", "m.full_like(m.ones(2, 3, dtype=m.int32), 2.7)",
    "m.full_like(m.ones(2), float('inf'))", "m.zeros_like(m.ones(2), requires_grad=True)",
    "m.eye(3)", "m.eye(2, 3, dtype=m.int64)", "m.eye(0)", "m.eye(2, dtype=m.bool)",
    "m.eye(3, 1)", "m.scalar_tensor(3)", "m.scalar_tensor(True)",
    "m.scalar_tensor(3, dtype=m.int64)", "m.scalar_tensor(m.tensor(3))",
]


@pytest.mark.parametrize("expr", SHAPED)
def test_filled(expr):
    e, t = same(expr)
    assert e.requires_grad == t.requires_grad


@pytest.mark.parametrize("expr", [
    "m.empty(2, 3)", "m.empty((0, 2), dtype=m.int64)", "m.empty_like(m.ones(2, dtype=m.int8))",
    "m.empty_strided((2, 3), (3, 1))", "m.Tensor(2, 3)", "m.Tensor(m.Size([2, 3]))",
    "m.LongTensor(3)", "m.LongTensor(2, 3)", "m.IntTensor(m.Size([4]))", "m.Tensor()",
    "m.LongTensor()", "m.HalfTensor()",
])
def test_uninitialized_shapes_and_dtypes(expr):
    same(expr, values=False)


LEGACY = [
    "m.Tensor([1, 2])", "m.Tensor([True])", "m.Tensor((2, 3))", "m.Tensor(np.array([1, 2]))",
    "m.Tensor(m.tensor([1, 2]))", "m.LongTensor([1.7, 2])", "m.LongTensor(np.array([1.5]))",
    "m.LongTensor(m.ones(2, dtype=m.int64))", "m.FloatTensor([1, 2])", "m.DoubleTensor([1, 2])",
    "m.BoolTensor([1, 0])", "m.ByteTensor([1, 0])", "m.IntTensor([1, 0])",
    "m.ShortTensor([1, 0])", "m.CharTensor([1, 0])", "m.HalfTensor([1, 0])",
    "m.BFloat16Tensor([1, 0])",
]


@pytest.mark.parametrize("expr", LEGACY)
def test_legacy_constructors(expr):
    same(expr)


def test_legacy_types_work_with_isinstance_and_alias_tensors():
    assert isinstance(ember.LongTensor([1]), ember.LongTensor)
    assert isinstance(ember.ones(2), ember.FloatTensor)
    assert not isinstance(ember.ones(2, dtype=ember.int64), ember.FloatTensor)
    assert type(ember.LongTensor([1])) is ember.Tensor
    x = ember.ones(2)
    alias = ember.Tensor(x)
    assert alias is not x and alias.data_ptr() == x.data_ptr()


# --------------------------------------------------------------------------- ranges

RANGES = [
    "m.arange(5)", "m.arange(5.)", "m.arange(1, 5, 2)", "m.arange(0, 1, 0.1)",
    "m.arange(0, 1, 0.1, dtype=m.float64)", "m.arange(5, 0, -1)", "m.arange(10, 0, -3)",
    "m.arange(5, 5)", "m.arange(np.int64(5))", "m.arange(np.float32(5))",
    "m.arange(m.tensor(5))", "m.arange(m.tensor(5.))", "m.arange(True)",
    "m.arange(0, 5, dtype=m.uint8)", "m.arange(0, 2.5, dtype=m.int64)",
    "m.arange(-2.5, 2.5, dtype=m.int64)", "m.arange(-2.5, 2.5, dtype=m.int32)",
    "m.arange(0.5, 3, 1, dtype=m.int64)", "m.arange(0, 10, 3, dtype=m.float16)",
    "m.arange(0, 10, 3, dtype=m.bfloat16)", "m.arange(start=1, end=4)", "m.arange(end=4)",
    "m.arange(-3, 3, dtype=m.float32)", "m.arange(4, out=m.empty(0, dtype=m.int64))",
    "m.range(0, 1, 0.25)", "m.range(0, 4)", "m.range(0, 4, dtype=m.int64)", "m.range(5, 1, -2)",
    "m.linspace(0, 1, 5)", "m.linspace(0, 1, 1)", "m.linspace(0, 1, 0)",
    "m.linspace(0, 10, 4, dtype=m.int64)", "m.linspace(-10, 10, 7, dtype=m.int64)",
    "m.linspace(2.7, -3.5, 9, dtype=m.int32)", "m.linspace(0, 1, 5, dtype=m.float64)",
    "m.linspace(m.tensor(0.), m.tensor(1.), 3)", "m.linspace(0, 1 + 1j, 3)",
    "m.linspace(0, 1, 3, dtype=m.complex64)", "m.linspace(-1, 1, 7, dtype=m.float16)",
    "m.linspace(-1, 1, 7, dtype=m.bfloat16)", "m.logspace(0, 2, 3)",
    "m.logspace(0, 2, 3, base=2)", "m.logspace(0, 2, 3, 2)", "m.logspace(0, 2, 3, dtype=m.int64)",
    "m.logspace(0, 1, 1)", "m.logspace(0, 1, 0)", "m.logspace(-2, 2, 9, dtype=m.float64)",
    "m.logspace(0.5, 3.5, 7, dtype=m.int32)",
]


@pytest.mark.parametrize("expr", RANGES)
def test_ranges(expr):
    same(expr)


def _random_ranges(seed, count=60):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        start = float(rng.uniform(-10, 10))
        step = float(rng.uniform(0.01, 1.3)) * (1 if rng.random() < 0.8 else -1)
        end = start + step * float(rng.integers(1, 300)) + float(rng.uniform(0, 0.9)) * step
        yield start, end, step


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_arange_float_values_match_torch(dtype):
    for start, end, step in _random_ranges(1):
        e = ember.arange(start, end, step, dtype=getattr(ember, dtype))
        t = torch.arange(start, end, step, dtype=getattr(torch, dtype))
        if dtype == "float64":
            np.testing.assert_array_equal(np.array(e), t.numpy(), err_msg=f"{start} {end} {step}")
        else:
            check(e, t)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("fn", ["linspace", "logspace"])
def test_linspace_logspace_values_match_torch(fn, dtype):
    rng = np.random.default_rng(2)
    for _ in range(60):
        start, end = (float(v) for v in rng.uniform(-5, 5, 2))
        steps = int(rng.integers(2, 300))
        e = getattr(ember, fn)(start, end, steps, dtype=getattr(ember, dtype))
        t = getattr(torch, fn)(start, end, steps, dtype=getattr(torch, dtype))
        if dtype == "float64":
            np.testing.assert_array_equal(np.array(e), t.numpy(), err_msg=f"{start} {end} {steps}")
        else:
            check(e, t)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_linspace_of_half_types_rounds_each_step_as_torch(dtype):
    """torch computes the step and each point in the dtype's own arithmetic (every
    operation rounded to it): ``linspace(-1, 1, 7)`` in float16 has -0.667, not -2/3's
    nearest -0.6665."""
    rng = np.random.default_rng(4)
    for _ in range(60):
        start, end = (float(v) for v in rng.normal(0, 50, 2))
        steps = int(rng.integers(2, 2000))
        e = ember.linspace(start, end, steps, dtype=getattr(ember, dtype)).float()
        t = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).float()
        np.testing.assert_array_equal(np.array(e), t.numpy(), err_msg=f"{start} {end} {steps}")


# --------------------------------------------------------------------------- complex

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 1), (3,)), ((), (2,)), ((0,), (1,))])
def test_complex_and_polar(dtype, shapes):
    rng = np.random.default_rng(3)
    a, b = (rng.uniform(-2, 2, s).astype(dtype) for s in shapes)
    for fn in ("complex", "polar"):
        check(getattr(ember, fn)(ember.from_numpy(a), ember.from_numpy(b)),
              getattr(torch, fn)(torch.from_numpy(a), torch.from_numpy(b)))


def test_complex_keeps_signed_zeros_and_nan():
    real = np.array([0.0, -0.0, np.nan], dtype=np.float32)
    imag = np.array([-0.0, np.nan, 1.0], dtype=np.float32)
    e = np.array(ember.complex(ember.from_numpy(real), ember.from_numpy(imag)))
    t = torch.complex(torch.from_numpy(real), torch.from_numpy(imag)).numpy()
    for part in ("real", "imag"):
        ep, tp = getattr(e, part), getattr(t, part)
        np.testing.assert_array_equal(np.signbit(ep), np.signbit(tp))
        np.testing.assert_array_equal(ep, tp)


# --------------------------------------------------------------------------- sharing memory

def test_from_numpy_shares_memory_both_ways():
    arr = np.arange(6.0).reshape(2, 3)
    t = ember.from_numpy(arr)
    assert t.dtype is ember.float64 and t.shape == (2, 3)
    arr[0, 0] = 10.0
    assert t.tolist()[0][0] == 10.0
    t.numpy()[1, 2] = -1.0
    assert arr[1, 2] == -1.0
    for dtype in ["float32", "float16", "int8", "uint8", "int16", "int32", "int64", "bool",
                  "complex64", "complex128"]:
        a = np.zeros(3, dtype=dtype)
        e = ember.from_numpy(a)
        assert str(e.dtype) == str(torch.from_numpy(a).dtype)
        assert np.shares_memory(e.numpy(), a)


def _shares(result, source):
    return np.shares_memory(np.asarray(result.detach().numpy() if hasattr(result, "detach")
                                       else result), source)


@pytest.mark.parametrize("expr", [
    "m.as_tensor(a)", "m.as_tensor(a, dtype=m.float64)", "m.as_tensor(a, dtype=m.float32)",
    "m.asarray(a)", "m.asarray(a, copy=True)", "m.asarray(a, copy=False)",
    "m.asarray(a, dtype=m.float32)", "m.tensor(a)", "m.as_tensor(a.T)", "m.asarray(a[:, 1])",
])
def test_numpy_sharing_matches_torch(expr):
    a = np.arange(6.0).reshape(2, 3)
    MODULES["a"] = a
    try:
        e, t = same(expr)
        assert _shares(e, a) == _shares(t, a)
    finally:
        del MODULES["a"]


def test_tensor_inputs_alias_or_copy_like_torch():
    for m in (ember, torch):
        x = m.ones(2)
        assert m.as_tensor(x) is x and m.asarray(x) is x
        assert m.as_tensor(x, dtype=m.float64).dtype == m.float64
        assert m.asarray(x, copy=True).data_ptr() != x.data_ptr()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.tensor(tensor) warns
            y = m.tensor(x)
            g = m.ones(2, requires_grad=True)
            assert not m.tensor(g).requires_grad
        assert y.data_ptr() != x.data_ptr()
        assert m.as_tensor(g).requires_grad
        assert m.asarray([1.0, 2.0], requires_grad=True).requires_grad


def test_from_dlpack_roundtrips():
    arr = np.arange(4.0, dtype=np.float32)
    e = ember.from_dlpack(arr)  # numpy producer
    assert e.dtype is ember.float32 and np.shares_memory(e.numpy(), arr)
    back = np.from_dlpack(e)  # ember producer
    assert np.shares_memory(back, arr)
    again = ember.from_dlpack(e)
    assert again.data_ptr() == e.data_ptr()
    t = torch.arange(3, dtype=torch.int32)
    from_torch = ember.from_dlpack(t)
    from_torch.numpy()[0] = 7
    assert t[0].item() == 7
    check(ember.from_dlpack(torch.utils.dlpack.to_dlpack(t)), t)


# --------------------------------------------------------------------------- devices

CUDA_CASES = [
    "m.tensor([[1.5, 2], [3, 4]], device=DEV)", "m.zeros(2, 3, device=DEV)",
    "m.ones(2, dtype=m.int64, device=DEV)", "m.full((2,), 7, device=DEV)",
    "m.arange(0, 1, 0.1, device=DEV)", "m.linspace(-1, 1, 9, device=DEV)",
    "m.logspace(0, 2, 5, device=DEV)", "m.eye(3, device=DEV)", "m.scalar_tensor(2, device=DEV)",
    "m.zeros_like(m.ones(2, 2, device=DEV))", "m.as_tensor(np.arange(3.), device=DEV)",
]


@pytest.mark.cuda
@pytest.mark.skipif(not ember.cuda_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("expr", CUDA_CASES)
def test_creation_on_cuda(expr):
    e = eval(expr, {"m": ember, "np": np, "DEV": "cuda"})
    t = eval(expr, {"m": torch, "np": np, "DEV": "cpu"})
    assert e.device == ember.device("cuda", 0)
    check(e.cpu(), t)


@pytest.mark.cuda
@pytest.mark.skipif(ember.device_count() < 2, reason="needs two CUDA devices")
@pytest.mark.parametrize("expr", CUDA_CASES + ["m.empty(3, device=DEV)", "m.rand(3, device=DEV)",
                                               "m.randn_like(m.ones(2, device=DEV))"])
def test_creation_on_the_cuda_device_asked(expr):
    e = eval(expr, {"m": ember, "np": np, "DEV": "cuda:1"})
    assert e.device == ember.device("cuda", 1) and e._data.device.id == 1


# --------------------------------------------------------------------------- the dispatcher

DISPATCHED = [
    ("m.zeros(2, 3)", ["full"]), ("m.ones_like(x)", ["full"]), ("m.full((2,), 1.5)", ["full"]),
    ("m.full_like(x, 2)", ["full"]), ("x.new_zeros(2)", ["full"]), ("x.new_full((2,), 3.)", ["full"]),
    ("m.scalar_tensor(2)", ["full"]), ("m.empty(2)", ["empty"]), ("m.empty_like(x)", ["empty"]),
    ("m.empty_strided((2, 3), (1, 2))", ["empty"]), ("x.new_empty(2)", ["empty"]),
    ("m.Tensor(2, 3)", ["empty"]), ("m.eye(3)", ["eye"]), ("m.arange(5)", ["arange"]),
    ("m.arange(0, 1, 0.25)", ["arange"]), ("m.range(0, 3)", ["range"]),
    ("m.linspace(0, 1, 5)", ["linspace"]), ("m.logspace(0, 1, 5)", ["logspace"]),
    ("m.complex(x, x)", ["complex"]),
    # data is a constant: only a cast or a move dispatches (torch's lift_fresh is no op here)
    ("m.tensor([1, 2])", []), ("m.from_numpy(np.ones(2))", []), ("m.as_tensor(np.ones(2))", []),
    ("m.tensor(np.ones(2))", ["to_copy"]), ("m.tensor([1, 2], dtype=m.float32)", []),
    ("m.as_tensor(np.ones(2), dtype=m.float32)", ["to_copy"]),
    ("m.tensor([1, 2], device='meta')", ["to_copy"]),
]


@pytest.mark.parametrize("expr, primitives", DISPATCHED)
def test_factories_dispatch_their_primitive(expr, primitives):
    MODULES["x"] = ember.ones(2, 3)
    try:
        with PrimitiveNames() as seen:
            run(expr, ember)
    finally:
        del MODULES["x"]
    assert seen.names == primitives


DEFAULT_DEVICE = [
    "m.zeros(2)", "m.ones(2, 3)", "m.full((2,), 1.)", "m.empty(3)", "m.empty_strided((2,), (1,))",
    "m.eye(2)", "m.arange(3)", "m.arange(0., 1., .5)", "m.linspace(0, 1, 3)",
    "m.logspace(0, 1, 3)", "m.scalar_tensor(1.)", "m.tensor([1, 2])", "m.tensor(x)",
    "m.as_tensor([1, 2])", "m.as_tensor(x)", "m.as_tensor(np.ones(2))", "m.asarray([1., 2.])",
    "m.asarray(np.ones(2))", "m.from_numpy(np.ones(2))", "m.zeros_like(x)", "m.empty_like(x)",
    "x.new_zeros(2)", "x.new_tensor([1])", "m.complex(x, x)", "m.Tensor(2)", "m.Tensor([1, 2])",
    "m.LongTensor([1])", "m.rand(2)", "m.randn(2)", "m.randint(0, 3, (2,))", "m.randperm(3)",
    "m.rand_like(x)", "m.normal(x, 1.)", "m.bernoulli(x / 2)",
]


@pytest.mark.parametrize("expr", DEFAULT_DEVICE)
def test_factories_follow_the_default_device(expr):
    """``set_default_device`` and ``with device(...)`` reach the functions torch's reach;
    ``*_like`` forms, ``new_*`` methods and tensors' own ops keep their inputs' device."""
    for how in ("set_default_device", "with device"):
        devices = []
        for m in (ember, torch):
            MODULES["x"] = m.ones(2)
            try:
                if how == "with device":
                    with m.device("meta"):
                        devices.append(run(expr, m).device.type)
                else:
                    m.set_default_device("meta")
                    try:
                        devices.append(run(expr, m).device.type)
                    finally:
                        m.set_default_device(None)
            finally:
                del MODULES["x"]
        assert devices[0] == devices[1], how
    assert ember.get_default_device() == ember.device("cpu")


def test_every_factory_follows_the_default_device():
    """torch's ``range`` and ``normal(mean, std, size)`` stay on the CPU under a default
    device; Ember's follow it, as every other factory does."""
    with ember.device("meta"):
        made = [run("m.range(0, 2)", ember), ember.normal(0.0, 1.0, (2,))]
    assert [t.device.type for t in made] == ["meta", "meta"]


def test_meta_factories_allocate_nothing():
    huge = (10**6, 10**6)  # 4 TB of float32
    made = [ember.empty(*huge, device="meta"), ember.zeros(huge, device="meta"),
            ember.full(huge, 2.0, device="meta"), ember.empty_strided(huge, (1, 10**6),
                                                                      device="meta"),
            ember.arange(10**12, device="meta"), ember.rand(huge, device="meta"),
            ember.randn(*huge, device="meta"), ember.zeros_like(ember.empty(*huge,
                                                                            device="meta"))]
    for t in made:
        assert t.device.type == "meta" and isinstance(t._data, MetaArray)
    assert made[0].stride() == (10**6, 1) and made[3].stride() == (1, 10**6)
    with ember.device("meta"):
        assert isinstance(ember.ones(*huge)._data, MetaArray)


LAYOUTS = [
    "m.empty_strided((2, 3), (1, 2))", "m.empty_strided((2, 3), (10, 1))",
    "m.empty_strided((2, 3), (0, 1))", "m.empty_strided((0, 3), (10, 1))",
    "m.empty_strided((), ())", "m.empty(2, 3, 4, 5, memory_format=m.channels_last)",
    "m.empty(2, 3, 4, 5, 6, memory_format=m.channels_last_3d)",
    "m.empty(2, 3, memory_format=m.contiguous_format)",
    "m.empty_like(t)", "m.zeros_like(t)", "m.ones_like(t, dtype=m.int32)", "m.full_like(t, 2.)",
    "m.rand_like(t)", "m.randn_like(t)", "m.randint_like(t, 5)", "m.empty_like(s)",
    "m.zeros_like(e)", "m.empty_like(c)", "m.empty_like(t, memory_format=m.contiguous_format)",
    "m.zeros_like(m.ones(2, 3, 4, 5), memory_format=m.channels_last)", "m.tensor(t)",
    "m.tensor(np.arange(12.).reshape(3, 4).T)", "m.as_tensor(np.arange(12.).reshape(3, 4).T, "
    "dtype=m.float32)", "m.complex(t, t)", "m.complex(t, m.ones(3))", "m.zeros_like(m.ones(()))",
]


@pytest.mark.parametrize("expr", LAYOUTS)
@pytest.mark.parametrize("dev", ["cpu", "meta"])
def test_layouts_match_torch(expr, dev):
    """Strides asked for, memory formats, and ``*_like`` layouts of transposed (t), sliced
    (s), expanded (e) and channels-last (c) inputs."""
    strides = []
    for m in (ember, torch):
        base = m.ones(3, 4, device=dev)
        MODULES.update(t=base.t(), s=base[:, ::2], e=base.expand(2, 3, 4),
                       c=m.ones(2, 4, 5, 3, device=dev).permute(0, 3, 1, 2))
        try:
            with m.device(dev):
                out = run(expr, m)
        finally:
            for name in "tsec":
                del MODULES[name]
        strides.append((tuple(out.shape), out.stride(), out.device.type))
    assert strides[0] == strides[1]
