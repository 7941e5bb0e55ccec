"""gelu and silu (torch.nn.functional's) and their fused backward kernels
(``torch.ops.aten.gelu_backward``/``silu_backward``) against torch; the native loops
against the numpy references they stand in for, at one thread and at the default count."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch_oracle import DTYPES_FLOAT, check, check_signs, pair

import ember.core as ember
from ember.core import native
from ember.core.dispatch import REGISTRY
from ember.core.ops import activations as A

needs_compiler = pytest.mark.skipif(native._compiler() is None, reason="no C compiler")

MODES = ["none", "tanh"]
SIZES = [0, 1, 3, 1000, 4097]
# the three functions, as (id, fn(nn, x)) with ``nn`` torch.nn.functional or the module
FUNCTIONS = [("gelu", lambda nn, x: nn.gelu(x)),
             ("gelu_tanh", lambda nn, x: nn.gelu(x, approximate="tanh")),
             ("silu", lambda nn, x: nn.silu(x))]
FUNCTION_IDS = [f[0] for f in FUNCTIONS]
# inputs where the formulas overflow, underflow or saturate, beside NaN and the infinities
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 0.5, -0.5, 5.0, -5.0, 10.0,
           -10.0, 30.0, -30.0, 88.0, -88.0, 100.0, -100.0, 1e4, -1e4]


def _backward(name: str, m: object, g: object, x: object, **params: str) -> object:
    op = getattr(torch.ops.aten, name) if m is torch else REGISTRY[name]
    return op(g, x, **params)


# ----------------------------------------------------------------------------- forward

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES_FLOAT)
@pytest.mark.parametrize("fn", [f[1] for f in FUNCTIONS], ids=FUNCTION_IDS)
def test_forward_matches_torch(fn, dtype, n):
    e, t = pair((n,), dtype, low=-6.0, high=6.0)
    check(fn(A, e), fn(F, t))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape", [(7, 5), (3, 4, 6)])
@pytest.mark.parametrize("fn", [f[1] for f in FUNCTIONS], ids=FUNCTION_IDS)
def test_non_contiguous_inputs_keep_their_layout(fn, shape, dtype):
    """A transposed (dense) input's result has its strides, as TensorIterator gives it;
    a stepped one's is row-major."""
    e, t = pair(shape, dtype, noncontiguous=True)
    for a, b in ((e, t), (e.transpose(0, 1), t.transpose(0, 1)), (e[..., ::2], t[..., ::2])):
        ours, theirs = fn(A, a), fn(F, b)
        check(ours, theirs)
        assert ours.stride() == theirs.stride()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", [f[1] for f in FUNCTIONS], ids=FUNCTION_IDS)
def test_non_finite_and_extreme_inputs(fn, dtype):
    x = np.array(SPECIAL * 2, dtype)  # (past the length torch's vector loops start at)
    theirs = fn(F, torch.from_numpy(x))
    if fn is FUNCTIONS[0][1] and dtype == "float32":
        # torch's vectorised float32 gelu gives NaN at +inf; its float64 kernel (and its
        # scalar one, for a one-element tensor) gives inf, as Ember's kernels do
        assert torch.isnan(theirs[x == np.inf]).all()
        theirs[x == np.inf] = float("inf")
    ours = fn(A, ember.from_numpy(x))
    check(ours, theirs)
    check_signs(ours, theirs)


def test_silu_computes_complex_inputs_as_torch():
    e, t = pair((3, 4), "complex64")
    check(A.silu(e), F.silu(t))
    check(A.silu(e.to(ember.complex128)), F.silu(t.to(torch.complex128)))


# ----------------------------------------------------------------------------- backward

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES_FLOAT)
@pytest.mark.parametrize("name,params", [("gelu_backward", {"approximate": "none"}),
                                         ("gelu_backward", {"approximate": "tanh"}),
                                         ("silu_backward", {}), ("sigmoid_backward", {}),
                                         ("tanh_backward", {})],
                         ids=["gelu", "gelu_tanh", "silu", "sigmoid", "tanh"])
def test_backward_kernels_match_torch(name, params, dtype, n):
    (ge, gt), (xe, xt) = pair((n,), dtype, seed=1), pair((n,), dtype, low=-6.0, high=6.0)
    check(_backward(name, ember, ge, xe, **params), _backward(name, torch, gt, xt, **params))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,params", [("gelu_backward", {"approximate": "none"}),
                                         ("gelu_backward", {"approximate": "tanh"}),
                                         ("silu_backward", {}), ("sigmoid_backward", {}),
                                         ("tanh_backward", {})],
                         ids=["gelu", "gelu_tanh", "silu", "sigmoid", "tanh"])
def test_backward_kernels_at_non_finite_inputs(name, params, dtype):
    x = np.array(SPECIAL * 2, dtype)
    g = np.linspace(-2, 2, x.size).astype(dtype)
    ours = _backward(name, ember, ember.from_numpy(g), ember.from_numpy(x), **params)
    theirs = _backward(name, torch, torch.from_numpy(g), torch.from_numpy(x), **params)
    check(ours, theirs)


@pytest.mark.parametrize("name,params", [("gelu_backward", {"approximate": "tanh"}),
                                         ("silu_backward", {}), ("sigmoid_backward", {}),
                                         ("tanh_backward", {})],
                         ids=["gelu", "silu", "sigmoid", "tanh"])
def test_backward_kernels_lay_out_results_as_torch(name, params):
    (ge, gt), (xe, xt) = pair((6, 5), seed=1, noncontiguous=True), pair((6, 5), noncontiguous=True)
    for g, x, gg, xx in ((ge, xe, gt, xt), (ge.contiguous(), xe, gt.contiguous(), xt)):
        ours, theirs = _backward(name, ember, g, x, **params), _backward(name, torch, gg, xx, **params)
        check(ours, theirs)
        assert ours.stride() == theirs.stride()


# ----------------------------------------------------------------------------- in place

@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_silu_in_place_writes_its_input(dtype, noncontiguous):
    e, t = pair((5, 6), dtype, noncontiguous=noncontiguous)
    version = e._version
    assert A.silu(e, inplace=True) is e
    assert F.silu(t, inplace=True) is t
    check(e, t)
    assert e._version == version + 1
    assert e.stride() == t.stride()


def test_silu_in_place_through_a_view_changes_its_base():
    e, t = pair((4, 6))
    A.silu(e[1:3, ::2], True)
    F.silu(t[1:3, ::2], True)
    check(e, t)


# ----------------------------------------------------------------------------- errors

def _raises_as_torch(fn):
    """The same error type and torch's message (which Ember's may prefix with the op)."""
    with pytest.raises(Exception) as theirs:
        fn(F, torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(A, ember)
    assert str(ours.value).endswith(str(theirs.value))


# (id, call, whether torch computes it for complex inputs)
_KERNEL_CALLS = [
    ("gelu", lambda nn, x: nn.gelu(x), False),
    ("gelu_tanh", lambda nn, x: nn.gelu(x, approximate="tanh"), False),
    ("gelu_empty", lambda nn, x: nn.gelu(x[:0]), False),
    ("silu", lambda nn, x: nn.silu(x), True),
    ("silu_", lambda nn, x: nn.silu(x, inplace=True), True),
]


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "complex64"])
@pytest.mark.parametrize("call,complex_ok", [c[1:] for c in _KERNEL_CALLS],
                         ids=[c[0] for c in _KERNEL_CALLS])
def test_dtypes_without_a_kernel_raise_as_torch(call, complex_ok, dtype):
    if dtype == "complex64" and complex_ok:
        pytest.skip("torch computes silu of complex tensors")
    _raises_as_torch(lambda nn, m: call(nn, m.ones(3, dtype=getattr(m, dtype))))


@pytest.mark.parametrize("call", [
    lambda nn, m: nn.gelu(m.ones(3), approximate="foo"),
    lambda nn, m: nn.gelu(m.ones(3), approximate="Tanh"),
    lambda nn, m: nn.gelu(m.ones(3, dtype=m.int64), approximate="sigmoid"),
    lambda nn, m: nn.gelu(m.ones(3), approximate=None),
    lambda nn, m: nn.gelu(m.ones(3), approximate=1),
    lambda nn, m: nn.gelu([1.0, 2.0]),
    lambda nn, m: nn.gelu(2.0),
    lambda nn, m: nn.silu(None),
    lambda nn, m: nn.silu(m.ones(1, 3).expand(2, 3), inplace=True),
])
def test_bad_arguments_raise_as_torch(call):
    _raises_as_torch(call)


def test_the_meta_device_takes_any_dtype_as_torch():
    for m, nn in ((torch, F), (ember, A)):
        x = m.ones(2, 3, dtype=m.int64, device="meta")
        assert nn.gelu(x).dtype == m.int64 and nn.silu(x).shape == (2, 3)


def test_functions_stay_off_the_top_level_as_torch():
    assert not hasattr(torch, "gelu") and not hasattr(torch, "silu")
    assert not hasattr(ember, "gelu") and not hasattr(ember, "silu")


# ----------------------------------------------------------------------------- native

_CASES = [("gelu", {"approximate": "none"}), ("gelu", {"approximate": "tanh"}), ("silu", {}),
          ("gelu_backward", {"approximate": "none"}), ("gelu_backward", {"approximate": "tanh"}),
          ("silu_backward", {}), ("sigmoid", {}), ("sigmoid_backward", {}),
          ("tanh_backward", {})]


def _operands(name: str, dtype: str, n: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(3)
    x = rng.normal(0, 4, n).astype(dtype)
    x[:len(SPECIAL)] = SPECIAL[:n]
    return (rng.normal(size=n).astype(dtype), x) if name.endswith("backward") else (x,)


@needs_compiler
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,params", _CASES, ids=[f"{n}-{p}" for n, p in _CASES])
def test_native_loops_agree_with_their_references_at_any_thread_count(name, params, dtype):
    """Within a few roundings of each quantity the formulas add up (the references take
    numpy's exp and Cody's erf; 1 + erf(x) of a negative x keeps an absolute error of its
    rounding, relative to 1); bit-identical at one thread and at many (past the size the
    loops thread from)."""
    op = REGISTRY[name]
    assert op.table["cpu"] is not op.forward
    for n in (1, 3, 1000, 4097, 3 * A.GRAIN * max(2, ember.get_num_threads()) + 7):
        arrays = _operands(name, dtype, n)
        ours, reference = op.table["cpu"](*arrays, **params), op.forward(*arrays, **params)
        x = np.abs(arrays[-1].astype(np.float64))
        g = np.abs(arrays[0].astype(np.float64)) if len(arrays) == 2 else 1.0
        eps = np.finfo(dtype).eps
        scale = np.abs(reference) + g * (1 + x)
        finite = np.isfinite(scale)
        difference = np.abs(ours.astype(np.float64) - reference)
        assert (difference[finite] <= 8 * eps * scale[finite]).all(), name
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(reference))
        before = ember.get_num_threads()
        try:
            ember.set_num_threads(1)
            np.testing.assert_array_equal(op.table["cpu"](*arrays, **params), ours)
        finally:
            ember.set_num_threads(before)


@needs_compiler
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_native_loops_take_dense_inputs_in_memory_order(dtype):
    """A permuted input (neither row- nor column-major) runs the native loop over its
    memory, its result laid out alike."""
    if A._native("gelu", np.dtype(dtype)) is None:
        pytest.skip(f"no native kernels: {native.reason()}")
    x = np.random.default_rng(0).normal(size=(4, 5, 6)).astype(dtype).transpose(1, 0, 2)
    assert not x.flags.c_contiguous and not x.flags.f_contiguous
    for name, params in (("gelu", {"approximate": "none"}), ("silu", {})):
        op = REGISTRY[name]
        ours = op.table["cpu"](x, **params)
        assert ours.strides == x.strides
        np.testing.assert_array_equal(ours, op.table["cpu"](np.ascontiguousarray(x), **params))


def test_native_kernels_off_run_the_references(monkeypatch):
    """Where native kernels cannot be built, every op runs its numpy reference."""
    for loops in (A._GELU_LOOPS, A._SILU_LOOPS, A._GELU_BACKWARD_LOOPS, A._SILU_BACKWARD_LOOPS):
        monkeypatch.setitem(loops, np.dtype(np.float32), None)
    e, t = pair((4097,), "float32")
    check(A.gelu(e), F.gelu(t))
    check(A.silu(e), F.silu(t))
