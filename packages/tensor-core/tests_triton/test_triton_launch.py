"""How the Triton kernels are registered and launched: every op of the table has its
``cuda`` kernel, importing ember.core imports neither triton nor cupy, ``EMBER_TRITON=0``
keeps the reference forwards, and every kernel compiles for a GPU (sm_90) with the
signatures its launches give it, in tiles that fit a block's shared memory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from ember.core.dispatch import REGISTRY
from ember.core.triton_kernels import KERNELS
from ember.core.triton_kernels.launching import Pointer

HERE = Path(__file__).parent


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **env}, check=False)


def test_every_kernel_is_registered_for_cuda():
    for name, (module, function) in KERNELS.items():
        kernel = REGISTRY[name].kernels.get("cuda")
        assert kernel is not None and kernel.__name__ == function, (name, module)


def test_importing_ember_core_imports_neither_triton_nor_cupy():
    done = _python("import sys, ember.core\n"
                   "from ember.core.dispatch import REGISTRY\n"
                   "assert 'cuda' in REGISTRY['softmax'].kernels\n"
                   "print(sorted(m for m in ('triton', 'cupy') if m in sys.modules))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_switched_off_the_reference_forwards_stay():
    done = _python("from ember.core.dispatch import REGISTRY\n"
                   "print(any('cuda' in op.kernels for op in REGISTRY.values()))",
                   EMBER_TRITON="0")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_pointer_gives_the_address_and_the_dtype():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)[:, 1:]
    p = Pointer(a)
    assert p.data_ptr() == a.ctypes.data and p.dtype == np.float32
    assert Pointer(a > 1).dtype == np.uint8  # bool arrays are read as bytes
    # the interpreter's host copy is the array's own memory
    assert p.untyped_storage().cpu().data_ptr() == p.data_ptr()


def test_every_kernel_compiles_for_a_gpu():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, str(HERE / "gpu_compile.py")], capture_output=True,
                          text=True, env=env, check=False)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert "specializations compiled" in done.stdout
