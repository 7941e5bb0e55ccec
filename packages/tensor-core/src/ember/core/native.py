"""The native CPU toolchain: C sources compiled at first use with the system C compiler,
cached on disk, loaded with ctypes; and the thread count their OpenMP loops use.

``library(source)`` gives the loaded shared object of ``source``, compiled with ``$CC``
(else ``cc``, ``gcc`` or ``clang``) and ``-O3 -march=native -fopenmp``, linked with glibc's
vector math (without either where the toolchain has none: OpenMP pragmas are then
ignored, and an object that needs a missing vector function fails to load: None). The object
is cached under ``$EMBER_CACHE_DIR`` (else ``$XDG_CACHE_HOME/ember/native``, else
``~/.cache/ember/native``), keyed by the source, the compiler and its version, the flags
and the CPU, so that a changed toolchain or a cache copied to another machine never loads
a stale or foreign object; it is written under a temporary name and renamed, so that
processes compiling at once (test workers) never load half a file.

Where there is no compiler, compiling fails, or ``EMBER_NATIVE=0``, ``library`` returns
None (``reason()`` says why) and callers keep their numpy kernels: everything still works.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["library", "Kernels", "reason", "set_num_threads", "get_num_threads"]

_FLAGS = ("-O3", "-march=native", "-fno-math-errno", "-shared", "-fPIC")
_OPENMP = "-fopenmp"
# OpenMP, and glibc's vector variants of exp and friends (libmvec, which ``omp declare
# simd`` declarations call), where the toolchain has them: the first that builds
_ATTEMPTS = ((_OPENMP, "-lmvec"), (_OPENMP,), ("-lmvec",), ())
_loaded: dict[str, ctypes.CDLL | None] = {}
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


def library(source: str) -> ctypes.CDLL | None:
    """The shared object of C ``source``, compiled (or found in the cache) and loaded;
    None where native kernels are off or cannot be built."""
    if os.environ.get("EMBER_NATIVE", "1") == "0":
        _state["reason"] = "EMBER_NATIVE=0"
        return None
    toolchain = _compiler()
    if toolchain is None:
        _state["reason"] = "no C compiler on PATH (cc, gcc, clang or $CC)"
        return None
    cc, version = toolchain
    key = hashlib.sha256("\0".join((source, cc, version, " ".join(_FLAGS), repr(_ATTEMPTS),
                                    _cpu())).encode()).hexdigest()[:32]
    if key in _loaded:
        return _loaded[key]
    lib = None
    try:
        path = _cache_dir() / f"{key}.so"
        if not path.exists():
            _compile(cc, source, path)
        lib = ctypes.CDLL(str(path))
        _state["reason"] = None
    except (OSError, subprocess.SubprocessError) as error:
        _state["reason"] = f"compiling failed: {error}"
    _loaded[key] = lib
    return lib


def _compile(cc: str, source: str, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as work:
        src = Path(work) / "kernel.c"
        src.write_text(source, encoding="utf-8")
        out = Path(work) / "kernel.so"
        for extra in _ATTEMPTS:
            done = subprocess.run([cc, *_FLAGS, "-o", str(out), str(src), *extra, "-lm"],
                                  capture_output=True, text=True, timeout=120)
            if done.returncode == 0:
                break
        else:
            raise subprocess.SubprocessError(done.stderr.strip()[-500:])
        os.replace(out, path)  # atomic: another process sees the whole file or none


class Kernels:
    """The functions of one C source, compiled, loaded and given their argument types at
    the first call that asks for one (``kernels("name")``; None where native kernels are
    off or cannot be built: the caller runs its reference)."""

    __slots__ = ("source", "signatures", "_bound")

    def __init__(self, source: str, signatures: dict[str, list[Any]]):
        self.source = source
        self.signatures = signatures
        self._bound: dict[str, Any] | None = None

    def __call__(self, name: str) -> Any:
        bound = self._bound
        if bound is None:
            bound = self._bound = {}
            lib = library(self.source)
            if lib is not None:
                for fn_name, argtypes in self.signatures.items():
                    fn = getattr(lib, fn_name)
                    fn.argtypes = argtypes
                    fn.restype = None
                    bound[fn_name] = fn
        return bound.get(name)


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
