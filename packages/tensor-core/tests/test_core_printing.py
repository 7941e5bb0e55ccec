"""``repr`` of tensors against torch's, string for string, on the same data."""

import numpy as np
import pytest
import torch

import ember.core as ember
from ember.core.device import device
from ember.core.printing import get_printoptions, printoptions, set_printoptions
from ember.core.tensor import make

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool", "complex64", "complex128"]


def both(arr, dtype=None):
    arr = np.asarray(arr)
    e, t = ember.from_numpy(arr.copy()), torch.from_numpy(arr.copy())
    if dtype is not None:
        e, t = e.to(getattr(ember, dtype)), t.to(getattr(torch, dtype))
    return e, t


def same_repr(e, t):
    assert repr(e) == repr(t), f"\nember: {e!r}\ntorch: {t!r}"
    assert str(e) == str(t)


@pytest.fixture(autouse=True)
def default_print_options():
    yield
    torch.set_printoptions(profile="default", sci_mode=None)
    set_printoptions(profile="default", sci_mode=None)


rng = np.random.default_rng(0)
VALUES = {
    "integers": np.array([1.0, 2.0, -3.0]),
    "fractions": np.array([1.5, -2.25, 0.125]),
    "scalar": np.array(3.0),
    "scalar_fraction": np.array(-0.3333),
    "tiny": np.array([1e-5, 2e-5]),
    "huge": np.array([1e10, 1.0]),
    "wide_ratio": np.array([0.001, 2.0]),
    "big_integers": np.array([123456789.0, 1.0]),
    "nonfinite": np.array([np.nan, np.inf, -np.inf, 1.0]),
    "nonfinite_fraction": np.array([np.nan, -np.inf, 1.5]),
    "only_nan": np.array([np.nan, np.nan]),
    "zeros": np.array([0.0, -0.0]),
    "signed_ints": np.array([1, 2, -300]),
    "normal_2d": rng.standard_normal((3, 4)),
    "normal_3d": rng.standard_normal((2, 3, 4)),
    "normal_4d": rng.standard_normal((2, 1, 2, 3)),
    "long_vector": rng.standard_normal(30) * 100,
    "wide_rows": rng.standard_normal((4, 25)),
    "small_sci": rng.standard_normal(5) * 1e-6,
    "mixed_scale": rng.standard_normal((3, 3)) * np.array([1e-3, 1.0, 1e3]),
    "int_matrix": rng.integers(-1000, 1000, (5, 7)),
    "column": rng.standard_normal((6, 1)),
    "row": rng.standard_normal((1, 6)),
    "one": np.array([7.0]),
}


# nan and inf have no integer value: those pairs are left out
REAL_CASES = [(name, dtype) for name in VALUES for dtype in DTYPES
              if np.isfinite(VALUES[name]).all() or dtype.startswith(("float", "bfloat", "complex"))]


@pytest.mark.parametrize("name, dtype", REAL_CASES)
def test_repr_matches_torch(name, dtype):
    same_repr(*both(VALUES[name], dtype))


COMPLEX = {
    "mixed": rng.standard_normal(4) + 1j * rng.standard_normal(4),
    "axes": np.array([1 + 0j, 0 - 1j, -2.5 + 0.5j]),
    "scalar": np.array(1 + 2j),
    "nan_parts": np.array([np.nan + 1j, 1 + np.inf * 1j]),
    "sci_imag": np.array([1 + 1e-6j, 2 + 3e-5j]),
    "matrix": rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)),
    "long": rng.standard_normal(20) + 1j * rng.standard_normal(20),
    "negative_zero_imag": np.array([complex(1.0, -0.0), complex(-1.0, 0.0)]),
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", list(COMPLEX))
def test_complex_repr_matches_torch(name, dtype):
    same_repr(*both(COMPLEX[name], dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3, 1), (1, 0)])
def test_empty_repr_matches_torch(shape, dtype):
    same_repr(*both(np.zeros(shape), dtype))


@pytest.mark.parametrize("shape", [(1001,), (2000,), (40, 40), (11, 11, 11), (3, 400), (400, 3),
                                   (2, 3, 200), (1, 1, 1001)])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
def test_summarized_repr_matches_torch(shape, dtype):
    values = np.random.default_rng(1).standard_normal(shape) * 10
    same_repr(*both(values, dtype))


def test_noncontiguous_and_integer_valued_large_floats():
    values = np.arange(24.0).reshape(4, 6)
    same_repr(ember.from_numpy(values.T), torch.from_numpy(values.T))
    same_repr(*both(np.arange(2000.0)))
    same_repr(*both(np.arange(0, 1e9, 1e7)))


OPTIONS = [
    dict(precision=2), dict(precision=8), dict(threshold=5), dict(edgeitems=1, threshold=10),
    dict(edgeitems=0, threshold=10), dict(linewidth=40), dict(linewidth=200), dict(sci_mode=True),
    dict(sci_mode=False), dict(profile="short"), dict(profile="full"),
    dict(profile="short", precision=6),
]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_print_options_match_torch(options):
    torch.set_printoptions(**options)
    set_printoptions(**options)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    for name in ["fractions", "normal_2d", "normal_3d", "long_vector", "tiny", "int_matrix",
                 "scalar", "integers"]:
        same_repr(*both(VALUES[name]))
    same_repr(*both(np.arange(1500.0).reshape(30, 50)))
    same_repr(*both(np.random.default_rng(2).standard_normal(50) + 1j))
    same_repr(*both(np.zeros((0, 2)), "int64"))


def test_printoptions_context_restores():
    with printoptions(precision=1):
        assert repr(ember.tensor([1.25])) == "tensor([1.2])"
    assert repr(ember.tensor([1.25])) == "tensor([1.2500])"


def test_bad_profile_is_a_value_error():
    with pytest.raises(ValueError, match="profile"):
        set_printoptions(profile="nope")


# --------------------------------------------------------------------------- suffixes

class _Node:
    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name


@pytest.mark.parametrize("name", ["scalar", "normal_2d", "long_vector", "wide_rows"])
def test_autograd_suffixes_match_torch(name):
    e, t = both(VALUES[name], "float32")
    e.requires_grad_(True)
    t.requires_grad_(True)
    same_repr(e, t)
    e64, t64 = both(VALUES[name], "float64")
    t_out = t64.requires_grad_(True) * 2
    e_out = e64 * 2
    e_out._grad_fn = _Node(t_out.grad_fn.name())  # the node name autograd reports
    e_out._requires_grad = True
    same_repr(e_out, t_out)


def test_cuda_device_suffix():
    class HostArray(np.ndarray):
        def get(self):  # what cupy arrays answer
            return np.asarray(self)

    data = np.array([1.0, 2.5], dtype=np.float32).view(HostArray)
    t = make(data, ember.float32, device("cuda", 0))
    assert repr(t) == "tensor([1.0000, 2.5000], device='cuda:0')"
    t64 = make(np.zeros(2).view(HostArray), ember.float64, device("cuda", 1))
    t64._requires_grad = True
    assert repr(t64) == "tensor([0., 0.], device='cuda:1', dtype=torch.float64, requires_grad=True)"


def test_subclass_prefix_and_default_dtype():
    class Special(ember.Tensor):
        pass

    s = ember.Tensor([1.0, 2.0])
    s.__class__ = Special
    assert repr(s) == "Special([1., 2.])"
    try:
        torch.set_default_dtype(torch.float64)
        ember.set_default_dtype(ember.float64)
        for dtype in ["float32", "float64", "complex64", "complex128"]:
            same_repr(*both(VALUES["fractions"], dtype))
            same_repr(*both(np.zeros((0,)), dtype))
    finally:
        torch.set_default_dtype(torch.float32)
        ember.set_default_dtype(ember.float32)


@pytest.mark.cuda
@pytest.mark.skipif(not ember.cuda_available() or not torch.cuda.is_available(),
                    reason="needs a CUDA device with CuPy and torch CUDA")
@pytest.mark.parametrize("name", ["integers", "normal_2d", "int_matrix", "scalar"])
def test_cuda_repr_matches_torch(name):
    e, t = both(VALUES[name])
    same_repr(e.cuda(), t.cuda())
    e16, t16 = both(VALUES[name], "float16")
    same_repr(e16.cuda().requires_grad_(), t16.cuda().requires_grad_())
