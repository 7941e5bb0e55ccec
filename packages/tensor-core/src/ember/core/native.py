"""The native CPU toolchain: C sources compiled at first use with the system C compiler,
cached on disk, loaded as CPython extensions (or with ctypes); and the thread count their
OpenMP loops use.

``library(source)`` gives the loaded shared object of ``source``, compiled with ``$CC``
(else ``cc``, ``gcc`` or ``clang``) and ``-O3 -march=native -fopenmp``, linked with glibc's
vector math (without either where the toolchain has none: OpenMP pragmas are then
ignored, and an object that needs a missing vector function fails to load: None). The object
is cached under ``$EMBER_CACHE_DIR`` (else ``$XDG_CACHE_HOME/ember/native``, else
``~/.cache/ember/native``), keyed by the source, the compiler and its version, the flags
and the CPU, so that a changed toolchain or a cache copied to another machine never loads
a stale or foreign object; it is written under a temporary name and renamed, so that
processes compiling at once (test workers) never load half a file.

``extension(name, source)`` builds a CPython extension module the same way, with this
interpreter's headers; ``Kernels`` binds a source's functions at their first use, built as
such a module with a fast-call wrapper per function that takes arrays where the C function
takes pointers (ctypes where there are no headers).

Where there is no compiler, compiling fails, or ``EMBER_NATIVE=0``, ``library`` returns
None (``reason()`` says why) and callers keep their numpy kernels: everything still works.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import hashlib
import importlib.machinery
import importlib.util
import os
import platform
import shutil
import subprocess
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["library", "extension", "Kernels", "POINTERS", "build_all", "reason",
           "set_num_threads", "get_num_threads"]

_FLAGS = ("-O3", "-march=native", "-fno-math-errno", "-shared", "-fPIC")
_OPENMP = "-fopenmp"
# OpenMP, and glibc's vector variants of exp and friends (libmvec, which ``omp declare
# simd`` declarations call), where the toolchain has them: the first that builds
_ATTEMPTS = ((_OPENMP, "-lmvec"), (_OPENMP,), ("-lmvec",), ())
_loaded: dict[str, Any] = {}  # a CDLL or an extension module by key; None: failed
_state: dict[str, str | None] = {"reason": None}
_toolchain: list[tuple[str, str] | None] = []  # [(compiler, its version line)] once found


def _compiler() -> tuple[str, str] | None:
    """The C compiler and its version line, found once per process."""
    if not _toolchain:
        found = None
        for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
            path = shutil.which(name) if name else None
            if path is None:
                continue
            try:
                out = subprocess.run([path, "--version"], capture_output=True, text=True,
                                     timeout=30, check=True).stdout
            except (OSError, subprocess.SubprocessError):
                continue
            found = (path, out.splitlines()[0] if out else "")
            break
        _toolchain.append(found)
    return _toolchain[0]


def _cpu() -> str:
    """What ``-march=native`` compiles for: the machine and its model name."""
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{platform.machine()} {model or platform.processor()}"


def _cache_dir() -> Path:
    root = os.environ.get("EMBER_CACHE_DIR")
    if root:
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ember" / "native"


def reason() -> str | None:
    """Why the last ``library`` call gave None (no compiler, a failed compile,
    ``EMBER_NATIVE=0``), or None."""
    return _state["reason"]


def _built(source: str, extra: tuple[str, ...] = (), tag: str = "",
           attempts: tuple[tuple[str, ...], ...] = _ATTEMPTS) -> tuple[str, Path] | None:
    """The cache key and path of the shared object of C ``source``, compiled where the
    cache has none; None where native code is off or cannot be built (``reason()``)."""
    if os.environ.get("EMBER_NATIVE", "1") == "0":
        _state["reason"] = "EMBER_NATIVE=0"
        return None
    toolchain = _compiler()
    if toolchain is None:
        _state["reason"] = "no C compiler on PATH (cc, gcc, clang or $CC)"
        return None
    cc, version = toolchain
    key = hashlib.sha256("\0".join((source, cc, version, " ".join(_FLAGS + extra),
                                    repr(attempts), tag, _cpu())).encode()).hexdigest()[:32]
    path = _cache_dir() / f"{key}.so"
    if key not in _loaded and not path.exists():
        try:
            _compile(cc, source, path, extra, attempts)
        except (OSError, subprocess.SubprocessError) as error:
            _state["reason"] = f"compiling failed: {error}"
            _loaded[key] = None
            return None
    return key, path


def library(source: str) -> ctypes.CDLL | None:
    """The shared object of C ``source``, compiled (or found in the cache) and loaded;
    None where native kernels are off or cannot be built."""
    built = _built(source)
    if built is None:
        return None
    key, path = built
    if key not in _loaded:
        try:
            with _brief_spinning():
                _loaded[key] = ctypes.CDLL(str(path))
            _state["reason"] = None
        except OSError as error:
            _state["reason"] = f"loading failed: {error}"
            _loaded[key] = None
    return _loaded[key]


# An OpenMP thread that finishes a loop spins for GOMP's default 300000 turns (about a
# millisecond) before it sleeps, and so do the BLAS threads numpy's matmul wakes: on a
# machine with few cores each then starves the other (a matmul followed by a layer norm
# at a GPT block's size took 8 ms instead of 0.13). Ember's OpenMP threads spin for 1000
# turns, which keeps back-to-back kernels as fast: libgomp reads GOMP_SPINCOUNT when it
# loads (with the first kernel); a wait policy or spin count the user set stands.
_SPIN = {"GOMP_SPINCOUNT": "1000"}


@contextlib.contextmanager
def _brief_spinning() -> Iterator[None]:
    chosen = any(os.environ.get(name) for name in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY"))
    if not chosen:
        os.environ.update(_SPIN)
    try:
        yield
    finally:
        if not chosen:
            for name in _SPIN:
                os.environ.pop(name, None)


def _python_headers() -> str | None:
    """The folder holding this interpreter's Python.h, or None (``reason()`` says so)."""
    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").exists():
        _state["reason"] = "no Python.h for this interpreter"
        return None
    return include


def extension(name: str, source: str, openmp: bool = False) -> ModuleType | None:
    """The CPython extension module ``name`` built from C ``source`` (which defines
    ``PyInit_<name>``) with this interpreter's headers (and OpenMP and vector math where
    ``openmp`` asks and the toolchain has them); None where the headers are missing or
    native code is off or cannot be built."""
    built = _extension_built(source, openmp)
    if built is None:
        return None
    key, path = built
    if key not in _loaded:
        try:
            loader = importlib.machinery.ExtensionFileLoader(name, str(path))
            spec = importlib.util.spec_from_loader(name, loader)
            assert spec is not None
            with _brief_spinning():  # (the object, and libgomp with it, loads here)
                module = importlib.util.module_from_spec(spec)
                loader.exec_module(module)
            _loaded[key] = module
            _state["reason"] = None
        except (ImportError, OSError) as error:
            _state["reason"] = f"loading failed: {error}"
            _loaded[key] = None
    return _loaded[key]  # type: ignore[no-any-return]


def _extension_built(source: str, openmp: bool) -> tuple[str, Path] | None:
    """The cache key and path of extension ``source``'s object, compiled where the cache has
    none (``extension``'s first step: a compile runs in a process of its own)."""
    include = _python_headers()
    if include is None:
        return None
    return _built(source, (f"-I{include}",), str(sysconfig.get_config_var("EXT_SUFFIX")),
                  _ATTEMPTS if openmp else ((),))


def _compile(cc: str, source: str, path: Path, extra: tuple[str, ...],
             attempts: tuple[tuple[str, ...], ...]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as work:
        src = Path(work) / "kernel.c"
        src.write_text(source, encoding="utf-8")
        out = Path(work) / "kernel.so"
        for linked in attempts:
            done = subprocess.run([cc, *_FLAGS, *extra, "-o", str(out), str(src), *linked,
                                   "-lm"], capture_output=True, text=True, timeout=120)
            if done.returncode == 0:
                break
        else:
            raise subprocess.SubprocessError(done.stderr.strip()[-500:])
        os.replace(out, path)  # atomic: another process sees the whole file or none


class Kernels:
    """The functions of one C source, compiled, loaded and bound at the first call that asks
    for one (``kernels("name")``; None where native kernels are off or cannot be built: the
    caller runs its reference).

    ``signatures`` gives each function's parameters as ctypes types (``c_void_p`` for a
    pointer, ``POINTERS`` for a ``void **`` that a list or tuple of arrays gives, one pointer
    per array, ``c_int64``, ``c_uint64``, ``c_int``, ``c_double``). The source is built as a
    CPython extension with a fast-call wrapper per function, so a bound function takes the
    arrays themselves where the C function takes pointers (their first elements'
    addresses, read through the buffer protocol; None is NULL) and costs a tenth of a
    microsecond to call, where ctypes' conversions cost a microsecond. Where this
    interpreter has no headers to build extensions, the plain shared object is loaded with
    ctypes behind the same calling convention."""

    __slots__ = ("source", "signatures", "_bound")

    def __init__(self, source: str, signatures: dict[str, list[Any]]):
        self.source = source
        self.signatures = signatures
        self._bound: dict[str, Any] | None = None
        _every_kernels.append(self)

    def __call__(self, name: str) -> Any:
        bound = self._bound
        if bound is None:
            bound = self._bound = self._bind()
        return bound.get(name)

    def _bind(self) -> dict[str, Any]:
        if _python_headers() is None:
            return _ctypes_bound(library(self.source), self.signatures)
        module = extension(*self.module_source(), openmp=True)
        return {} if module is None else {name: getattr(module, name)
                                          for name in self.signatures}

    def module_source(self) -> tuple[str, str]:
        """The extension module's name and C source: the functions and their wrappers."""
        name = "_ember_kernels_" + hashlib.sha256(self.source.encode()).hexdigest()[:16]
        return name, _extension_source(name, self.source, self.signatures)


_every_kernels: list[Kernels] = []

# a ``void **`` parameter: a list or tuple of arrays (or None), their first elements' addresses
POINTERS = ctypes.POINTER(ctypes.c_void_p)

# how a wrapper reads each ctypes parameter type from its Python argument
_READERS = {
    ctypes.c_void_p: ("void *{v};\n    if (!ember_pointer(args[{i}], &{v})) return NULL;", None),
    ctypes.c_int64: ("long long {v} = PyLong_AsLongLong(args[{i}]);", "{v} == -1"),
    ctypes.c_uint64: ("unsigned long long {v} = PyLong_AsUnsignedLongLong(args[{i}]);",
                      "{v} == (unsigned long long)-1"),
    ctypes.c_int: ("int {v} = (int)PyLong_AsLong(args[{i}]);", "{v} == -1"),
    ctypes.c_double: ("double {v} = PyFloat_AsDouble(args[{i}]);", "{v} == -1.0"),
}

_EXTENSION_HEAD = """#define PY_SSIZE_T_CLEAN
#include <Python.h>
"""

_POINTER_READER = """
static int ember_pointer(PyObject *o, void **p) {
    if (o == Py_None) { *p = NULL; return 1; }
    if (PyLong_Check(o)) { *p = PyLong_AsVoidPtr(o); return !PyErr_Occurred(); }
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_STRIDES) < 0) return 0;
    *p = view.buf;  /* the first element's address, for strided arrays too */
    PyBuffer_Release(&view);  /* the caller holds the array for the call */
    return 1;
}
"""
_TABLE_READER = """
/* the addresses of a list or tuple of arrays, in memory the caller frees (PyMem_Free) */
static void **ember_pointers(PyObject *o) {
    PyObject *seq = PySequence_Fast(o, "expected a list or tuple of arrays");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    void **p = (void **)PyMem_Malloc(sizeof(void *) * (size_t)(n > 0 ? n : 1));
    if (!p) { Py_DECREF(seq); PyErr_NoMemory(); return NULL; }
    for (Py_ssize_t k = 0; k < n; ++k) {
        if (!ember_pointer(PySequence_Fast_GET_ITEM(seq, k), &p[k])) {
            PyMem_Free(p);
            Py_DECREF(seq);
            return NULL;
        }
    }
    Py_DECREF(seq);
    return p;
}
"""


def _wrapper(name: str, argtypes: list[Any]) -> str:
    """A METH_FASTCALL function calling C ``name`` with its arguments read per
    ``argtypes``, without the GIL while it runs."""
    lines = [f"static PyObject *ember_call_{name}(PyObject *self, PyObject *const *args, "
             "Py_ssize_t n) {",
             f"    if (n != {len(argtypes)}) {{",
             f'        PyErr_Format(PyExc_TypeError, "{name}() takes {len(argtypes)} '
             'arguments (%zd given)", n);',
             "        return NULL;", "    }"]
    for i, argtype in enumerate(argtypes):
        if argtype is POINTERS:
            continue
        read, failed = _READERS[argtype]
        lines.append("    " + read.format(v=f"a{i}", i=i))
        if failed is not None:
            lines.append(f"    if ({failed.format(v=f'a{i}')} && PyErr_Occurred()) return NULL;")
    # the pointer tables last, so that a failed read frees only the tables read before it
    tables: list[str] = []
    for i in (i for i, argtype in enumerate(argtypes) if argtype is POINTERS):
        freed = "".join(f" PyMem_Free({t});" for t in tables)
        lines.append(f"    void **a{i} = ember_pointers(args[{i}]);")
        lines.append(f"    if (!a{i}) {{{freed} return NULL; }}")
        tables.append(f"a{i}")
    call = ", ".join(f"a{i}" for i in range(len(argtypes)))
    lines += ["    Py_BEGIN_ALLOW_THREADS", f"    {name}({call});", "    Py_END_ALLOW_THREADS",
              *(f"    PyMem_Free({t});" for t in tables), "    Py_RETURN_NONE;", "}"]
    return "\n".join(lines) + "\n"


def _extension_source(module_name: str, source: str, signatures: dict[str, list[Any]]) -> str:
    """``source`` with a fast-call wrapper per function of ``signatures`` and the init
    function of extension module ``module_name``."""
    table = "".join(f'    {{"{name}", (PyCFunction)(void (*)(void))ember_call_{name}, '
                    "METH_FASTCALL, NULL},\n" for name in signatures)
    tables = any(POINTERS in argtypes for argtypes in signatures.values())
    return (_EXTENSION_HEAD + source + _POINTER_READER + (_TABLE_READER if tables else "")
            + "".join(_wrapper(name, argtypes) for name, argtypes in signatures.items())
            + f"static PyMethodDef ember_methods[] = {{\n{table}    {{NULL, NULL, 0, NULL}}}};\n"
            f'static struct PyModuleDef ember_module = {{PyModuleDef_HEAD_INIT, "{module_name}", '
            "NULL, -1, ember_methods};\n"
            f"PyMODINIT_FUNC PyInit_{module_name}(void) {{\n"
            "    return PyModule_Create(&ember_module);\n}\n")


def _ctypes_bound(lib: ctypes.CDLL | None, signatures: dict[str, list[Any]]) -> dict[str, Any]:
    """The functions of ``lib`` behind the extension's calling convention: arrays where
    pointers go (numpy's ``ctypes.data``, a microsecond each)."""
    if lib is None:
        return {}
    bound = {}
    for name, argtypes in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = None
        pointers = [i for i, t in enumerate(argtypes) if t is ctypes.c_void_p]
        tables = [i for i, t in enumerate(argtypes) if t is POINTERS]
        bound[name] = _with_addresses(fn, pointers, tables)
    return bound


def _address(a: Any) -> Any:
    return a if a is None or a.__class__ is int else a.ctypes.data


def _with_addresses(fn: Any, pointers: list[int], tables: list[int]) -> Any:
    def call(*args: Any) -> None:
        values = list(args)
        for i in pointers:
            values[i] = _address(values[i])
        for i in tables:
            values[i] = (ctypes.c_void_p * max(len(values[i]), 1))(
                *[_address(a) for a in values[i]])
        fn(*values)

    return call


def build_all() -> bool:
    """Compile (or load from the cache) every native kernel Ember has, as their first calls
    would: True where all of them load. The compilers run side by side on the cores; the
    objects then load one after another (libgomp must load inside the spinning window)."""
    if _python_headers() is not None:
        with concurrent.futures.ThreadPoolExecutor(max(1, _default_threads())) as pool:
            list(pool.map(lambda k: _extension_built(k.module_source()[1], True),
                          _every_kernels))
    return all([kernels(next(iter(kernels.signatures))) is not None
                for kernels in _every_kernels])


# ----------------------------------------------------------------------------- threads

def _default_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # (not on Linux)
        return os.cpu_count() or 1


_threads = [_default_threads()]


def set_num_threads(n: int) -> None:
    """torch.set_num_threads: the threads a native kernel's parallel loops use."""
    if n.__class__ is not int:
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _threads[0] = n


def get_num_threads() -> int:
    """torch.get_num_threads: the threads native kernels use (the cores available to this
    process unless ``set_num_threads`` said otherwise)."""
    return _threads[0]
