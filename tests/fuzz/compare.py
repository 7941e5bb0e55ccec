"""Comparing two runs of one program, step by step: the first difference is the case's
disagreement, classified as one of CLASSES and named after the step's op."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .program import Outcome, Program, Snap

CLASSES = ("value", "dtype", "shape", "stride", "requires_grad", "grad", "exception-type",
           "missing-error", "unexpected-error")

# (rtol, atol) by dtype; float16/bfloat16 results differ from torch's by rounding order, and
# a program chains several ops, so float32 allows a few more ulps than one op's tests do.
TOL = {"float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 2e-2), "float32": (1e-5, 1e-5),
       "float64": (1e-7, 1e-7), "complex64": (1e-5, 1e-5), "complex128": (1e-7, 1e-7)}


@dataclass(frozen=True)
class Disagreement:
    step: int  # 0: the inputs; k: the k-th step
    op: str
    cls: str
    detail: str

    @property
    def group(self) -> tuple[str, str]:
        return (self.op, self.cls)


def significant_strides(s: Snap) -> tuple[int | None, ...]:
    """Strides of the dims that have them: none of an empty tensor, none of a size-1 dim
    (torch's own tests compare strides so: torch._prims_common.check_significant_strides)."""
    if 0 in s.shape:
        return ()
    return tuple(st if n > 1 else None for st, n in zip(s.strides, s.shape))


def _values_close(a: np.ndarray, b: np.ndarray, dtype: str) -> bool:
    if dtype not in TOL:
        return bool(np.array_equal(a, b))
    rtol, atol = TOL[dtype]
    if np.iscomplexobj(a) or np.iscomplexobj(b):
        return (_values_close(np.real(a), np.real(b), "float32" if dtype == "complex64"
                              else "float64")
                and _values_close(np.imag(a), np.imag(b), "float32" if dtype == "complex64"
                                  else "float64"))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return bool(np.isclose(a64, b64, rtol=rtol, atol=atol, equal_nan=True).all())


def compare_value(actual: Any, expected: Any, with_requires_grad: bool = True
                  ) -> tuple[str, str] | None:
    """(class, detail) of the first difference between two snapshots, or None."""
    if isinstance(expected, Snap) or isinstance(actual, Snap):
        if not (isinstance(expected, Snap) and isinstance(actual, Snap)):
            return "dtype", f"{_kind(actual)} where torch gives {_kind(expected)}"
        if actual.shape != expected.shape:
            return "shape", f"shape {actual.shape}, torch {expected.shape}"
        if actual.dtype != expected.dtype:
            return "dtype", f"dtype {actual.dtype}, torch {expected.dtype}"
        if expected.values is not None and actual.values is not None and \
                not _values_close(actual.values, expected.values, expected.dtype):
            return "value", f"values {_short(actual.values)}, torch {_short(expected.values)}"
        if significant_strides(actual) != significant_strides(expected) or \
                actual.contiguous != expected.contiguous:
            return "stride", (f"stride {actual.strides} contiguous={actual.contiguous}, torch "
                              f"{expected.strides} contiguous={expected.contiguous}")
        if with_requires_grad and actual.requires_grad != expected.requires_grad:
            return "requires_grad", (f"requires_grad={actual.requires_grad}, torch "
                                     f"{expected.requires_grad}")
        return None
    if isinstance(expected, list) or isinstance(actual, list):
        if not (isinstance(expected, list) and isinstance(actual, list)):
            return "dtype", f"{_kind(actual)} where torch gives {_kind(expected)}"
        if len(actual) != len(expected):
            return "shape", f"{len(actual)} results, torch {len(expected)}"
        for a, e in zip(actual, expected):
            found = compare_value(a, e, with_requires_grad)
            if found:
                return found
        return None
    if type(actual) is not type(expected):
        return "dtype", f"{_kind(actual)} where torch gives {_kind(expected)}"
    if isinstance(expected, float) and isinstance(actual, float):
        same = np.isclose(actual, expected, rtol=1e-6, atol=1e-6, equal_nan=True)
    else:
        same = actual == expected
    return None if same else ("value", f"{actual!r}, torch {expected!r}")


def _kind(v: Any) -> str:
    return "a tensor" if isinstance(v, Snap) else type(v).__name__


def _short(a: np.ndarray) -> str:
    text = np.array2string(a, threshold=8, precision=4).replace("\n", "")
    return text if len(text) < 80 else text[:77] + "..."


def _op_of(program: Program, step: int) -> str:
    return "input" if step == 0 else program.steps[step - 1].op


def _bit_equal(a: Any, e: Any) -> bool:
    """Equal bit for bit: a zero's sign too (``atan2`` of -0.0 is another value), and a
    NaN's bits (which only count as a rounding difference)."""
    if isinstance(e, Snap) and isinstance(a, Snap):
        return a.values is None or e.values is None or bool(
            a.values.shape == e.values.shape and a.values.dtype == e.values.dtype
            and a.values.tobytes() == e.values.tobytes())
    if isinstance(e, list) and isinstance(a, list):
        return all(_bit_equal(x, y) for x, y in zip(a, e))
    return True


def compare_runs(program: Program, actual: list[Outcome], expected: list[Outcome]
                 ) -> Disagreement | None:
    """The first disagreement of run ``actual`` with run ``expected`` (torch's).

    Values that agree within tolerance but not bit for bit are *inexact*; a step that reads
    an inexact value may amplify the rounding difference (a division by a small number, a
    comparison that flips), so its value differences are not held against its op: its
    results count as inexact too. Shapes, dtypes, strides and errors are still compared."""
    inexact: set[str] = set()
    for k, (a, e) in enumerate(zip(actual, expected)):
        op = _op_of(program, k)
        step = program.steps[k - 1] if k else None
        tainted = step is not None and bool(inexact & {*step.args, step.out})
        if e.error or a.error:
            if e.error and a.error:
                if e.error != a.error:
                    return Disagreement(k, op, "exception-type",
                                        f"raises {a.error}: {a.message[:120]}; torch raises "
                                        f"{e.error}: {e.message[:120]}")
                continue
            if e.error:
                return Disagreement(k, op, "missing-error",
                                    f"does not raise; torch raises {e.error}: {e.message[:160]}")
            return Disagreement(k, op, "unexpected-error",
                                f"raises {a.error}: {a.message[:160]}; torch does not")
        # in the runs' order of names, not a set's (its order changes with the hash seed)
        for name in dict.fromkeys([*e.values, *a.values]):
            if name not in a.values or name not in e.values:
                return Disagreement(k, op, "value", f"{name} is defined in one run only")
            found = compare_value(a.values[name], e.values[name])
            if found and found[0] == "value" and (tainted or name in inexact):
                inexact.add(name)  # (a value that was inexact stays so at later steps)
                continue
            if found:
                return Disagreement(k, op, found[0], f"{name}: {found[1]}")
            if not _bit_equal(a.values[name], e.values[name]):
                inexact.add(name)
        for name, eg in e.grads.items():
            ag = a.grads.get(name)
            if (ag is None) != (eg is None):
                return Disagreement(k, op, "grad", f"{name}.grad is {_kind(ag)}, torch "
                                                   f"{_kind(eg)}")
            if eg is not None:
                found = compare_value(ag, eg, with_requires_grad=False)
                if found and found[0] == "value" and inexact:
                    continue  # gradients through inexact values (see above)
                if found:
                    return Disagreement(k, op, "grad", f"{name}.grad: {found[1]}")
    if len(actual) != len(expected):
        return Disagreement(min(len(actual), len(expected)) - 1, "input", "unexpected-error",
                            "the inputs could not be built")
    return None
