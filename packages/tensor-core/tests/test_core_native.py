"""The native CPU toolchain (compile at first use, disk cache, binding as an extension or
through ctypes) and the kernels built on it, against torch and against the numpy reference
they stand in for."""

from __future__ import annotations

import ctypes
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch_oracle import check

import ember.core as ember
from ember.core import native
from ember.core.ops import softmax as softmax_module

_ADD_ONE = """
#include <stdint.h>
void add_one(double *x, int64_t n) {
    _Pragma("omp parallel for if(n > 1000)")
    for (int64_t i = 0; i < n; ++i) x[i] += 1;
}
"""
needs_compiler = pytest.mark.skipif(native._compiler() is None, reason="no C compiler")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("EMBER_NATIVE", raising=False)
    monkeypatch.setattr(native, "_loaded", {})
    return tmp_path


@needs_compiler
def test_a_source_compiles_once_and_is_loaded_from_the_cache(cache):
    lib = native.library(_ADD_ONE)
    assert lib is not None, native.reason()
    x = np.arange(5.0)
    lib.add_one(ctypes.c_void_p(x.ctypes.data), ctypes.c_int64(5))
    np.testing.assert_array_equal(x, np.arange(5.0) + 1)
    (built,) = cache.glob("*.so")
    stamp = built.stat().st_mtime_ns
    assert native.library(_ADD_ONE) is lib  # the process keeps what it loaded
    # another process finds the object on disk and does not compile again
    code = ("import ctypes, numpy as np; from ember.core import native; "
            f"lib = native.library({_ADD_ONE!r}); x = np.zeros(3); "
            "lib.add_one(ctypes.c_void_p(x.ctypes.data), ctypes.c_int64(3)); print(x.sum())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "EMBER_CACHE_DIR": str(cache)}, check=True)
    assert out.stdout.strip() == "3.0"
    assert built.stat().st_mtime_ns == stamp and len(list(cache.glob("*.so"))) == 1


_POINTERS = """
#include <stdint.h>
void where(void *a, void *b, void *c, void *d, int64_t n, double scale, int64_t *out) {
    out[0] = (int64_t)a; out[1] = (int64_t)b; out[2] = (int64_t)c; out[3] = (int64_t)d;
    out[4] = (int64_t)(n * scale);
}
"""
_WHERE = [ctypes.c_void_p] * 4 + [ctypes.c_int64, ctypes.c_double, ctypes.c_void_p]


def _pointers_read(kernels: native.Kernels) -> None:
    where = kernels("where")
    assert where is not None, native.reason()
    a = np.arange(12.0).reshape(3, 4)
    read_only = np.broadcast_to(np.ones(3), (3,))  # not writable: still readable
    permuted = a.T[1:]  # strided: the address of its first element
    out = np.zeros(5, np.int64)
    where(a, read_only, permuted, None, 3, 2.5, out)
    assert out.tolist() == [a.ctypes.data, read_only.ctypes.data, permuted.ctypes.data, 0, 7]
    where(a.ctypes.data, None, None, None, 1, 1.0, out)  # an address passes as it is
    assert out[0] == a.ctypes.data


@needs_compiler
def test_a_bound_kernel_takes_arrays_where_its_c_function_takes_pointers(cache):
    _pointers_read(native.Kernels(_POINTERS, {"where": _WHERE}))


@needs_compiler
def test_a_bound_kernel_checks_its_arguments(cache):
    where = native.Kernels(_POINTERS, {"where": _WHERE})("where")
    out = np.zeros(5, np.int64)
    with pytest.raises(TypeError, match=r"where\(\) takes 7 arguments \(6 given\)"):
        where(None, None, None, None, 1, 1.0)
    with pytest.raises(TypeError):
        where(None, None, None, None, "one", 1.0, out)
    with pytest.raises(TypeError):
        where(object(), None, None, None, 1, 1.0, out)  # no buffer to point at


@needs_compiler
def test_without_python_headers_kernels_load_through_ctypes(cache, monkeypatch):
    monkeypatch.setattr(native, "_python_headers", lambda: None)
    _pointers_read(native.Kernels(_POINTERS, {"where": _WHERE}))


_TABLES = """
#include <stdint.h>
void gather(void **a, void **b, int64_t n, double *out) {
    for (int64_t i = 0; i < n; ++i) out[i] = *(double *)a[i] + *(double *)b[i];
}
"""


@needs_compiler
@pytest.mark.parametrize("headers", [True, False])
def test_a_bound_kernel_takes_lists_of_arrays_where_its_c_function_takes_void_pointers(
        cache, monkeypatch, headers):
    """``POINTERS``: a list or tuple of arrays, the C function's ``void **`` (through the
    extension, and through ctypes where there are no headers)."""
    if not headers:
        monkeypatch.setattr(native, "_python_headers", lambda: None)
    gather = native.Kernels(_TABLES, {"gather": [native.POINTERS, native.POINTERS,
                                                  ctypes.c_int64, ctypes.c_void_p]})("gather")
    a = [np.array([1.0]), np.arange(4.0)[2:]]
    b = (np.array([10.0]), np.arange(8.0).reshape(2, 4).T[1])  # strided: its first element
    out = np.zeros(2)
    gather(a, b, 2, out)
    assert out.tolist() == [11.0, 3.0]
    gather([], (), 0, out)  # no tensors: nothing read
    if headers:
        with pytest.raises(TypeError):
            gather([object()], b, 1, out)


def test_the_spin_count_is_set_for_the_load_alone_and_a_users_choice_stands(monkeypatch):
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    with native._brief_spinning():
        assert os.environ["GOMP_SPINCOUNT"] == "1000"
    assert "GOMP_SPINCOUNT" not in os.environ
    monkeypatch.setenv("OMP_WAIT_POLICY", "active")
    with native._brief_spinning():
        assert "GOMP_SPINCOUNT" not in os.environ


@needs_compiler
@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads Linux's memory map")
def test_openmp_loads_with_the_first_kernels_inside_the_spinning_window(cache):
    """libgomp reads its spin count when it loads: that must happen inside the window."""
    code = f"""
import contextlib, ctypes, json
from ember.core import native
def openmp_loaded():
    return "libgomp" in open("/proc/self/maps").read()
window, seen = native._brief_spinning, []
@contextlib.contextmanager
def watched():
    with window():
        entering = openmp_loaded()
        yield
        seen.append([entering, openmp_loaded()])
native._brief_spinning = watched
before = openmp_loaded()
native.Kernels({_ADD_ONE!r}, {{"add_one": [ctypes.c_void_p, ctypes.c_int64]}})("add_one")
print(json.dumps([before, seen, openmp_loaded()]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "EMBER_CACHE_DIR": str(cache)}, check=True)
    before, seen, after = json.loads(out.stdout)
    assert not before
    if after:  # (a toolchain without OpenMP loads none)
        assert [False, True] in seen


def test_native_kernels_can_be_turned_off(cache, monkeypatch):
    monkeypatch.setenv("EMBER_NATIVE", "0")
    assert native.library(_ADD_ONE) is None
    assert native.reason() == "EMBER_NATIVE=0"


def test_no_compiler_means_no_native_kernel(cache, monkeypatch):
    monkeypatch.setattr(native, "_toolchain", [None])
    assert native.library(_ADD_ONE) is None
    assert "no C compiler" in native.reason()


def test_a_source_that_does_not_compile_gives_none(cache):
    if native._compiler() is None:
        pytest.skip("no C compiler")
    assert native.library("this is not C;") is None
    assert native.reason().startswith("compiling failed")


def test_threads_are_set_and_checked_as_torch_sets_them():
    before = ember.get_num_threads()
    assert before >= 1
    try:
        ember.set_num_threads(1)
        assert ember.get_num_threads() == 1
    finally:
        ember.set_num_threads(before)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(RuntimeError) as theirs:
            torch.set_num_threads(bad)
        with pytest.raises(RuntimeError) as ours:
            ember.set_num_threads(bad)
        assert str(ours.value) == str(theirs.value)


# ----------------------------------------------------------------------------- softmax

def _rows(n: int, shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).normal(0, 4, (*shape, n)).astype(dtype)
    if x.size >= 4 * n:  # rows with NaN, +inf, -inf and all -inf
        x.reshape(-1, n)[0, 0] = np.nan
        x.reshape(-1, n)[1, -1] = np.inf
        x.reshape(-1, n)[2, :] = -np.inf
        x.reshape(-1, n)[3, n // 2] = -np.inf
    return x


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 3, 256, 1000, 4097])
def test_softmax_rows_match_torch(name, dtype, n):
    x = _rows(n, (2, 3), dtype)
    check(getattr(ember, name)(ember.from_numpy(x), -1),
          getattr(torch, name)(torch.from_numpy(x), -1))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("layout", ["transposed", "dim 0", "0-d", "empty", "float16"])
def test_softmax_off_the_native_path_matches_torch(name, layout):
    """Layouts the native loop does not take (other dims, non-row-major rows, empty and
    0-d tensors, half types) run the reference forward."""
    x = _rows(5, (4,), "float32")
    make = {"transposed": lambda m: m.from_numpy(x).t(), "dim 0": lambda m: m.from_numpy(x),
            "0-d": lambda m: m.tensor(2.5), "empty": lambda m: m.zeros(3, 0),
            "float16": lambda m: m.from_numpy(x).half()}[layout]
    dim = 0 if layout == "dim 0" else -1
    check(getattr(ember, name)(make(ember), dim), getattr(torch, name)(make(torch), dim))


@needs_compiler
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_native_softmax_agrees_with_its_reference_and_with_any_thread_count(name):
    op = getattr(softmax_module, name.upper())
    x = _rows(300, (250,), "float64")  # past the size the loop threads from
    native_result = op.table["cpu"](x, dim=1)
    reference = op.forward(x, dim=1)
    # (log_softmax near 0 keeps the absolute error of log(sum), a few ulps of 1)
    np.testing.assert_allclose(native_result, reference, rtol=1e-13, atol=1e-14)
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        np.testing.assert_array_equal(op.table["cpu"](x, dim=1), native_result)
    finally:
        ember.set_num_threads(before)
    assert math.isnan(native_result[0, 0]) and np.isnan(native_result[0]).all()


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("n", [1, 3, 256, 1000, 4097])
def test_softmax_backward_rows_match_torch(name, dtype, n):
    y = getattr(torch, name)(torch.from_numpy(_rows(n, (2, 3), dtype)), -1)
    g = torch.from_numpy(np.random.default_rng(1).normal(0, 1, y.shape).astype(dtype))
    op = getattr(softmax_module, name.upper() + "_BACKWARD")
    aten = getattr(torch.ops.aten, f"_{name}_backward_data")
    check(op(ember.from_numpy(g.numpy()), ember.from_numpy(y.numpy()), dim=2),
          aten(g, y, 2, y.dtype))


@needs_compiler
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_native_softmax_backward_agrees_with_its_reference_and_any_thread_count(name):
    op = getattr(softmax_module, name.upper() + "_BACKWARD")
    rng = np.random.default_rng(2)
    y = getattr(softmax_module, name.upper()).forward(rng.normal(0, 2, (250, 300)), dim=1)
    g = rng.normal(0, 1, y.shape)
    fast = op.table["cpu"](g, y, dim=1)
    assert op.table["cpu"] is not op.forward
    np.testing.assert_allclose(fast, op.forward(g, y, dim=1), rtol=1e-12, atol=1e-14)
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        np.testing.assert_array_equal(op.table["cpu"](g, y, dim=1), fast)
    finally:
        ember.set_num_threads(before)
