"""The Triton kernels' tests run in one of two modes, fixed for the whole run:

- under Triton's interpreter (``TRITON_INTERPRET=1`` in the environment, as ``nox -s
  triton`` sets it): the kernels run on numpy arrays on the CPU;
- on a CUDA GPU (no interpreter; cupy and a device present, as ``bench/gpu_check.py``
  runs them): the same tests on cupy arrays, marked ``cuda``.

Each test taking ``xp`` gets the array module of the mode. Anywhere else the run stops
with a usage error saying so, rather than skipping every test.
"""

from __future__ import annotations

import pytest

try:
    from ember.core.triton_kernels import available
    from ember.core.triton_kernels.launching import INTERPRETED
except ImportError as exc:  # triton is not installed
    raise pytest.UsageError(f"tests_triton need triton ({exc}): `nox -s triton` installs it "
                            "and runs them under its interpreter") from exc


def _modes() -> list[object]:
    if INTERPRETED:
        import numpy

        return [pytest.param(numpy, id="interpreted")]
    import ember.core as ember

    if not ember.cuda_available():
        raise pytest.UsageError("tests_triton run under Triton's interpreter "
                                "(TRITON_INTERPRET=1; `nox -s triton`) or on a CUDA GPU")
    import cupy

    return [pytest.param(cupy, id="cuda", marks=pytest.mark.cuda)]


MODES = _modes()
if not available():
    raise pytest.UsageError("the Triton kernels are switched off (EMBER_TRITON=0)")


def pytest_configure(config: pytest.Config) -> None:
    # the interpreter computes on numpy, which warns of what a GPU computes silently
    config.addinivalue_line("filterwarnings", "ignore:(overflow|divide by zero|invalid value) "
                            "encountered:RuntimeWarning:triton")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "xp" in metafunc.fixturenames:
        metafunc.parametrize("xp", MODES)
