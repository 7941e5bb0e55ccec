"""Programs and their runs: a program is inputs plus 1-5 steps, each one line of Python
against ``torch`` (``import torch`` or ``import ember as torch``). A run executes the lines
one by one and records, after each step, the exception it raised or a snapshot of every
tensor the program holds (values, dtype, shape, strides, contiguity, requires_grad) and of
the leaves' gradients."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from .inputs import Input


@dataclass(frozen=True)
class Step:
    """One public call: ``template`` formatted with the names of ``args`` and ``out``.

    ``meta_only``: the result's values are random or uninitialized (random ops, ``empty``),
    so only its shape, dtype and strides are compared."""

    op: str
    template: str
    args: tuple[str, ...]
    out: str
    meta_only: bool = False

    def code(self) -> str:
        return self.template.format(*self.args, out=self.out)


@dataclass(frozen=True)
class Program:
    inputs: tuple[Input, ...]
    steps: tuple[Step, ...]

    def leaves(self) -> list[str]:
        return [inp.leaf(i) for i, inp in enumerate(self.inputs) if inp.requires_grad]

    def input_code(self) -> list[str]:
        return [line for i, inp in enumerate(self.inputs) for line in inp.code(i)]

    def source(self, framework: str = "torch") -> str:
        """The program as a script for ``import torch`` (or ``import ember as torch``)."""
        head = "import torch" if framework == "torch" else "import ember as torch"
        return "\n".join(["import numpy as np", head, *self.input_code(),
                          *(s.code() for s in self.steps)])


@dataclass
class Snap:
    """What a run shows of one tensor."""

    dtype: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    contiguous: bool
    requires_grad: bool
    values: np.ndarray | None


@dataclass
class Outcome:
    """One step of a run: the exception's type name, or the snapshot after it."""

    error: str | None = None
    message: str = ""
    values: dict[str, Any] = field(default_factory=dict)
    grads: dict[str, Any] = field(default_factory=dict)


@lru_cache(maxsize=8192)
def _compiled(code: str) -> Any:
    return compile(code, "<fuzz>", "exec")


def _dtype_name(dtype: Any) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _array(t: Any) -> np.ndarray:
    # force=True: torch's lazy conjugate and negative bits resolved, and its ZeroTensors
    # (the gradients of some formulas) materialized
    t = t.detach()
    if _dtype_name(t.dtype) == "bfloat16":
        arr = np.asarray(t.float().numpy(force=True) if hasattr(t, "resolve_conj")
                         else t.numpy(force=True))
        return np.array(arr, dtype=np.float32)
    return np.array(t.numpy(force=True), copy=True)


def snapshot(value: Any, tensor_type: type, meta_only: bool = False) -> Any:
    """A comparable picture of a step's value: Snap for tensors, lists for sequences."""
    if isinstance(value, tensor_type):
        values = None if meta_only else _array(value)
        return Snap(_dtype_name(value.dtype), tuple(value.shape), tuple(value.stride()),
                    bool(value.is_contiguous()), bool(value.requires_grad), values)
    if isinstance(value, (tuple, list)):
        return [snapshot(v, tensor_type, meta_only) for v in value]
    if isinstance(value, (bool, int, float, complex, str)) or value is None:
        return value
    return type(value).__name__


def _base_names(program: Program) -> list[str]:
    names = [f"x{i}" for i in range(len(program.inputs))]
    names += [inp.leaf(i) for i, inp in enumerate(program.inputs)
              if inp.leaf(i) not in names]
    return names


def run(program: Program, module: Any, steps_mode: Any = None) -> list[Outcome]:
    """Run ``program`` with ``torch`` bound to ``module``; one Outcome per step (the
    first for the inputs). ``steps_mode``: a context (a dispatch mode) entered around
    each step, not around building the inputs or reading results back."""
    ns: dict[str, Any] = {"torch": module, "np": np}
    tensor_type = module.Tensor
    leaves = program.leaves()
    names = _base_names(program)
    meta = {s.out for s in program.steps if s.meta_only}
    outcomes = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(_compiled("\n".join(program.input_code())), ns)
        except Exception as err:  # noqa: BLE001 - an input Ember cannot build is a finding
            return [Outcome(type(err).__name__, str(err))]
        outcomes.append(_observe(ns, names, leaves, meta, tensor_type))
        for step in program.steps:
            try:
                if steps_mode is None:
                    exec(_compiled(step.code()), ns)
                else:
                    with steps_mode:
                        exec(_compiled(step.code()), ns)
            except Exception as err:  # noqa: BLE001
                outcomes.append(Outcome(type(err).__name__, str(err)[:300]))
                continue
            if step.out not in names and step.out in ns:
                names.append(step.out)
            outcomes.append(_observe(ns, names, leaves, meta, tensor_type))
    return outcomes


def _observe(ns: dict[str, Any], names: list[str], leaves: list[str], meta: set[str],
             tensor_type: type) -> Outcome:
    out = Outcome()
    for name in names:
        if name in ns:
            try:
                out.values[name] = snapshot(ns[name], tensor_type, name in meta)
            except Exception as err:  # noqa: BLE001 - reading a result back failed
                out.values[name] = f"<unreadable: {type(err).__name__}>"
    for name in leaves:
        grad = ns[name].grad if name in ns else None
        out.grads[name] = None if grad is None else snapshot(grad, tensor_type)
    return out
