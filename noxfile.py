"""Build and test every Ember package alone, the stack together, and the built wheels.

``nox`` runs the default sessions, which together are the whole test suite: ``lint``, one
session per package (named after its directory, e.g. ``tensor-core``), ``stack``,
``no-compiler`` (the suite on the numpy reference kernels alone), ``triton`` (the Triton
kernels under Triton's interpreter) and ``wheels``. ``nox -s bench``, ``nox -s fuzz`` and
``nox -s gpu`` run on demand. Arguments after ``--`` go to pytest (or to each script in
bench/, or to the fuzzer), e.g. ``nox -s tensor-core -- -k matmul -x``.

Environments are virtualenvs filled by pip: pip finds the local CPU wheel of torch here,
where uv would download a multi-gigabyte CUDA build instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import nox
from nox.command import CommandFailed
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

nox.options.default_venv_backend = "virtualenv"

ROOT = Path(__file__).parent
ROOT_PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
TEST_DEPS = nox.project.dependency_groups(ROOT_PYPROJECT, "test")
LINT_DEPS = nox.project.dependency_groups(ROOT_PYPROJECT, "lint")

# Every directory under packages/ and the in-repo packages its pyproject.toml declares as
# dependencies, lowest layer first (DESIGN.md's layer diagram). A new package is one line;
# the sessions check this table against packages/ and the pyprojects.
PACKAGES: dict[str, tuple[str, ...]] = {
    "tensor-core": (),
    "autograd": ("tensor-core",),
    "nn": ("tensor-core", "autograd"),
    "optim": ("tensor-core", "autograd", "nn"),
}

# Scripts in bench/ that need a CUDA device start with this: `gpu` runs them, `bench` the rest.
GPU_BENCH_PREFIX = "gpu_"


def _project(package: str | None) -> dict[str, Any]:
    """The [project] table of a package, or of the root meta package for None."""
    pyproject = ROOT_PYPROJECT if package is None else nox.project.load_toml(
        ROOT / "packages" / package / "pyproject.toml")
    return pyproject["project"]


def _dist_names() -> dict[str, str]:
    """Distribution name (canonical) -> package directory, for every in-repo package."""
    return {canonicalize_name(_project(package)["name"]): package for package in PACKAGES}


def _split_requirements(package: str | None) -> tuple[set[str], list[str]]:
    """A package's dependencies: (in-repo package directories, third-party requirements)."""
    dists = _dist_names()
    in_repo: set[str] = set()
    third_party: list[str] = []
    for spec in _project(package).get("dependencies", []):
        name = canonicalize_name(Requirement(spec).name)
        if name in dists:
            in_repo.add(dists[name])
        elif name.startswith("ember"):
            raise ValueError(f"{package or 'the root'} pyproject.toml depends on {spec!r}, "
                             f"which is not in noxfile.py's PACKAGES table")
        else:
            third_party.append(spec)
    return in_repo, third_party


def _check_declared(session: nox.Session, packages: Iterable[str]) -> None:
    """Fail when PACKAGES disagrees with the in-repo dependencies a package declares.

    Installing a package that is listed here but not declared would hide the missing
    declaration: the package would pass here and fail for its users.
    """
    problems = []
    for package in packages:
        try:
            declared, _ = _split_requirements(package)
        except ValueError as err:
            problems.append(str(err))
            continue
        if declared != set(PACKAGES[package]):
            problems.append(f"packages/{package}/pyproject.toml declares in-repo dependencies "
                            f"{sorted(declared)}, PACKAGES lists {sorted(PACKAGES[package])}")
    if problems:
        session.error("noxfile.py's PACKAGES table is out of date: " + "; ".join(problems))


def _check_complete(session: nox.Session) -> None:
    """Fail unless PACKAGES lists every package and the meta package depends on all of them."""
    _check_declared(session, PACKAGES)
    on_disk = {path.parent.name for path in ROOT.glob("packages/*/pyproject.toml")}
    if on_disk != set(PACKAGES):
        session.error(f"packages/ holds {sorted(on_disk)} but noxfile.py's PACKAGES lists "
                      f"{sorted(PACKAGES)}: add each package with its in-repo dependencies")
    meta_declared, _ = _split_requirements(None)
    if meta_declared != set(PACKAGES):
        session.error(f"the root pyproject.toml (the `ember` meta package) must depend on every "
                      f"package, {sorted(PACKAGES)}, but declares {sorted(meta_declared)}")


def _with_dependencies(package: str) -> list[str]:
    """The package and every in-repo package it needs, lowest layer first."""
    needed: list[str] = []

    def visit(name: str) -> None:
        for dependency in PACKAGES[name]:
            visit(dependency)
        if name not in needed:
            needed.append(name)

    visit(package)
    return needed


def _editable(packages: Iterable[str]) -> list[str]:
    return [arg for package in packages for arg in ("-e", f"packages/{package}")]


def _test_dirs(packages: Iterable[str]) -> list[str]:
    return [f"packages/{package}/tests" for package in packages]


def _isolate(session: nox.Session) -> None:
    """Keep the caller's PYTHONPATH (often src/ during development) out of the session.

    With it, ``import ember`` would find the source tree instead of what the session
    installed, and a package's tests would pass alone only because the meta package leaked in.
    """
    session.env["PYTHONPATH"] = None


def _package_session(package: str) -> Callable[[nox.Session], None]:
    def test_package(session: nox.Session) -> None:
        _isolate(session)
        _check_declared(session, _with_dependencies(package))
        session.install(*_editable(_with_dependencies(package)), *TEST_DEPS)
        session.run("pytest", *_test_dirs([package]), *session.posargs)

    test_package.__doc__ = (f"packages/{package} alone: only it and the in-repo packages it "
                            f"declares (no `ember` meta package), then its tests.")
    return test_package


for _package in PACKAGES:
    nox.session(name=_package)(_package_session(_package))


@nox.session
def stack(session: nox.Session) -> None:
    """Every package and the `ember` meta package, editable; every test in the repository."""
    _isolate(session)
    _check_complete(session)
    session.install(*_editable(PACKAGES), "-e", ".", *TEST_DEPS)
    session.run("pytest", "tests", *_test_dirs(PACKAGES), *session.posargs)


def _optional_requirement(package: str, extra: str, name: str) -> str:
    """The requirement on ``name`` that a package's optional dependencies ``extra`` list."""
    for spec in _project(package)["optional-dependencies"][extra]:
        if canonicalize_name(Requirement(spec).name) == name:
            return str(spec)
    raise ValueError(f"packages/{package}/pyproject.toml's [{extra}] extra lists no {name}")


@nox.session
def triton(session: nox.Session) -> None:
    """The Triton kernels' tests (packages/tensor-core/tests_triton, which no other session
    collects) under Triton's interpreter (``TRITON_INTERPRET=1``: on the CPU, through
    numpy), with tensor-core and the triton its ``cuda`` extra names (not cupy: no GPU
    needed), including their compilation for a GPU. ``bench/gpu_check.py`` runs the same
    tests for real on a GPU."""
    _isolate(session)
    _check_declared(session, _with_dependencies("tensor-core"))
    session.install(*_editable(_with_dependencies("tensor-core")), *TEST_DEPS,
                    _optional_requirement("tensor-core", "cuda", "triton"))
    session.env["TRITON_INTERPRET"] = "1"
    session.run("pytest", "packages/tensor-core/tests_triton", *session.posargs)


_NO_NATIVE_CODE = """
from ember.core import native
assert native.library("int x;") is None, "a C compiler was found"
"""


@nox.session(name="no-compiler")
def no_compiler(session: nox.Session) -> None:
    """The whole test suite with no C compiler to be found (PATH holds the session's own
    bin directory alone, CC is empty): every op runs its numpy reference kernel."""
    _isolate(session)
    _check_complete(session)
    session.install(*_editable(PACKAGES), "-e", ".", *TEST_DEPS)
    session.env["PATH"] = str(session.bin)
    session.env["CC"] = ""
    session.run("python", "-c", _NO_NATIVE_CODE)
    session.run("pytest", "tests", *_test_dirs(PACKAGES), *session.posargs)


@nox.session(default=False)
def fuzz(session: nox.Session) -> None:
    """The differential fuzzer against torch, on the stack as `stack` installs it.

    Arguments after ``--`` go to ``python -m tests.fuzz``, e.g. ``nox -s fuzz -- --cases
    10000 --seed 1`` (``--help`` lists the others; ``--write-known`` rewrites the table of
    known failures that tests/test_fuzz.py checks).
    """
    _isolate(session)
    _check_complete(session)
    session.install(*_editable(PACKAGES), "-e", ".", *TEST_DEPS)
    session.run("python", "-m", "tests.fuzz", *session.posargs)


# Proves the tests below import the installed wheels, not the source tree.
_ASSERT_INSTALLED = """
import sys, sysconfig
from pathlib import Path
import ember, ember.core
site = Path(sysconfig.get_paths()["purelib"]).resolve()
for module in (ember, ember.core):
    if not Path(module.__file__).resolve().is_relative_to(site):
        sys.exit(f"{module.__name__} was imported from {module.__file__}, not from {site}")
"""


@nox.session
def wheels(session: nox.Session) -> None:
    """Build every wheel, install only from them, and run tests/ against the installed wheels.

    Catches what editable installs hide: a module or data file missing from a wheel, or a
    dependency missing from a wheel's metadata.
    """
    _isolate(session)
    _check_complete(session)
    wheel_dir = Path(session.create_tmp()) / "wheels"
    shutil.rmtree(wheel_dir, ignore_errors=True)
    session.run("pip", "wheel", "--no-deps", "--wheel-dir", str(wheel_dir),
                *(f"packages/{package}" for package in PACKAGES), ".")
    third_party = {spec for package in [None, *PACKAGES]
                   for spec in _split_requirements(package)[1]}
    session.install(*sorted(third_party), *TEST_DEPS)
    # A reused venv still holds last run's wheels, all version 0.1.0: pip would keep them.
    dists = [_project(None)["name"], *(_project(package)["name"] for package in PACKAGES)]
    session.run("pip", "uninstall", "--yes", *dists, silent=True)
    # --no-index: every ember distribution must come from the wheels just built (never from
    # an index), and every dependency a wheel declares must already be installed above.
    session.install("--no-index", "--find-links", str(wheel_dir), _project(None)["name"])
    session.run("python", "-c", _ASSERT_INSTALLED)
    session.run("pytest", "tests", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff on the whole tree, mypy on every package's sources, import-linter's layers.

    The `ember` meta package is not installed here: its regular ``ember/__init__.py`` would
    hide the packages' namespace portions from import-linter, which would then see no layers.
    """
    _isolate(session)
    _check_complete(session)
    session.install(*LINT_DEPS, *_editable(PACKAGES))
    checks = [
        ["ruff", "check", "."],
        ["mypy", "src/ember", *(f"packages/{package}/src/ember" for package in PACKAGES)],
        ["lint-imports", "--no-cache"],
    ]
    failed = []
    for check in checks:
        try:
            session.run(*check)
        except CommandFailed:
            failed.append(check[0])
    if failed:
        session.error(f"{', '.join(failed)} reported problems (output above)")


def _bench_scripts(gpu: bool) -> list[str]:
    return [str(path.relative_to(ROOT)) for path in sorted(ROOT.glob("bench/*.py"))
            if path.name.startswith(GPU_BENCH_PREFIX) == gpu]


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Every CPU benchmark in bench/; each prints its ratios against PyTorch."""
    scripts = _bench_scripts(gpu=False)
    if not scripts:
        session.skip("no CPU benchmarks in bench/: nothing run")
    _isolate(session)
    _check_complete(session)
    session.install(*_editable(PACKAGES), "-e", ".", *TEST_DEPS)
    for script in scripts:
        session.run("python", script, *session.posargs)


def _gpu_present() -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=False)
    return listing.returncode == 0 and "GPU" in listing.stdout


@nox.session(default=False, venv_backend="none")
def gpu(session: nox.Session) -> None:
    """The GPU check: bench/gpu_*.py (gpu_check.py runs every `cuda` test, then GPU benchmarks).

    Runs in the Python that runs nox, which must already have cupy, torch and pytest: a GPU
    machine often has no package index to install them from. Without a GPU the session is
    skipped (exit status 0, reported as "skipped", never as a pass); EMBER_REQUIRE_GPU=1
    makes a missing GPU an error instead.
    """
    if not _gpu_present():
        message = "no CUDA GPU present (nvidia-smi lists none): nothing run"
        if os.environ.get("EMBER_REQUIRE_GPU") == "1":
            session.error(message)
        session.skip(message)
    scripts = _bench_scripts(gpu=True)
    if not scripts:
        session.error("no GPU check in bench/ (bench/gpu_*.py): nothing to run")
    for script in scripts:
        session.run(sys.executable, script, *session.posargs)
