"""Cases, the self-check, shrinking and the known-failures table.

Case ``i`` of seed ``s`` is the program generated from ``numpy.random.default_rng([s, i])``:
a case is reproducible alone. Each case runs in Ember and in torch (Ember against torch);
the self-check runs it twice in torch, each time from freshly built inputs, and must agree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

import ember
from ember.core.dispatch import REGISTRY

from .catalogue import ENTRIES, NOT_REACHED, REACHED_BY, Entry
from .compare import Disagreement, compare_runs
from .generate import generate
from .inputs import reshaped
from .program import Program, Step, run

KNOWN_FAILURES = Path(__file__).with_name("known_failures.txt")
CI_SEED, CI_CASES = 0, 300


@dataclass
class Case:
    index: int
    program: Program
    disagreement: Disagreement | None
    self_check: Disagreement | None


def disagreement(program: Program, module: object = ember) -> Disagreement | None:
    """The first difference of ``module``'s run of ``program`` from torch's."""
    return compare_runs(program, run(program, module), run(program, torch))


def run_case(seed: int, index: int, entries: list[Entry] | None = None) -> Case:
    program = generate(np.random.default_rng([seed, index]), entries)
    expected = run(program, torch)
    again = run(program, torch)
    actual = run(program, ember)
    return Case(index, program, compare_runs(program, actual, expected),
                compare_runs(program, again, expected))


def run_cases(seed: int, cases: int, entries: list[Entry] | None = None) -> list[Case]:
    return [run_case(seed, i, entries) for i in range(cases)]


def select_entries(ops: Iterable[str] | None) -> list[Entry] | None:
    """The catalogue entries named in ``ops`` (all of them for None)."""
    if not ops:
        return None
    wanted = set(ops)
    chosen = [e for e in ENTRIES if e.op in wanted]
    missing = wanted - {e.op for e in chosen}
    if missing:
        raise ValueError(f"no catalogue entry is named {sorted(missing)}")
    return chosen


# ----------------------------------------------------------------------------- shrinking

def _drop_step(program: Program, k: int) -> Program:
    """``program`` without step ``k`` and the later steps that use what it made."""
    dropped = {program.steps[k].out}
    kept: list[Step] = []
    for i, step in enumerate(program.steps):
        if i == k or dropped & set(step.args):
            dropped.add(step.out)
            continue
        kept.append(step)
    return replace(program, steps=tuple(kept))


def _used_inputs(program: Program) -> set[int]:
    text = "\n".join(s.code() for s in program.steps)
    return {i for i in range(len(program.inputs)) if f"x{i}" in text or f"l{i}" in text}


def _drop_input(program: Program, i: int) -> Program | None:
    """``program`` without input ``i`` (later inputs renamed down)."""
    if i in _used_inputs(program) or len(program.inputs) == 1:
        return None
    rename = {}
    for j in range(i + 1, len(program.inputs)):
        rename[f"x{j}"] = f"x{j - 1}"
        rename[f"l{j}"] = f"l{j - 1}"
    steps = tuple(replace(s, args=tuple(rename.get(a, a) for a in s.args))
                  for s in program.steps)
    if any(f"x{j}" in s.template or f"l{j}" in s.template for s in steps
           for j in range(len(program.inputs))):
        return None
    inputs = program.inputs[:i] + program.inputs[i + 1:]
    return Program(inputs, steps)


def _input_variants(program: Program) -> Iterable[Program]:
    for i, inp in enumerate(program.inputs):
        def with_input(new: object, i: int = i) -> Program:
            inputs = list(program.inputs)
            inputs[i] = new  # type: ignore[call-overload]
            return replace(program, inputs=tuple(inputs))

        if inp.layout != "contiguous":
            yield with_input(reshaped(inp, inp.shape, layout="contiguous"))
        if inp.requires_grad:
            yield with_input(replace(inp, requires_grad=False))
        for d, n in enumerate(inp.shape):
            if n > 1:
                yield with_input(reshaped(inp, inp.shape[:d] + (1,) + inp.shape[d + 1:]))
                yield with_input(reshaped(inp, inp.shape[:d] + (n - 1,) + inp.shape[d + 1:]))
        if inp.shape:
            yield with_input(reshaped(inp, inp.shape[1:]))
        for dtype in ("float64", "float32", "int64"):
            if dtype != inp.dtype:
                yield with_input(reshaped(inp, inp.shape, dtype=dtype))
        flat = inp.base.reshape(-1)
        if flat.size and flat.dtype.kind in "fc" and not np.all(np.isfinite(flat)):
            yield with_input(replace(inp, base=np.nan_to_num(inp.base, posinf=1, neginf=-1)))
        if flat.size and flat.dtype.kind in "fciu" and np.any(flat != np.round(flat.real)):
            yield with_input(replace(inp, base=np.round(inp.base)))


def _rewired(program: Program) -> Iterable[Program]:
    """``program`` with one step reading an input where it read an earlier result."""
    inputs = [f"x{i}" for i in range(len(program.inputs))]
    for k, step in enumerate(program.steps):
        for j, arg in enumerate(step.args):
            if arg in inputs:
                continue
            for name in inputs:
                args = step.args[:j] + (name,) + step.args[j + 1:]
                steps = list(program.steps)
                steps[k] = replace(step, args=args)
                yield replace(program, steps=tuple(steps))


def _candidates(program: Program) -> Iterable[Program]:
    for k in reversed(range(len(program.steps))):
        yield _drop_step(program, k)
    yield from _rewired(program)
    for i in reversed(range(len(program.inputs))):
        dropped = _drop_input(program, i)
        if dropped is not None:
            yield dropped
    yield from _input_variants(program)


def shrink(program: Program, fails: Callable[[Program], bool], budget: int = 400) -> Program:
    """A smaller program for which ``fails`` still holds (greedy, first improvement)."""
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        for candidate in _candidates(program):
            tries += 1
            try:
                still = fails(candidate)
            except Exception:  # noqa: BLE001 - a candidate the harness cannot run
                still = False
            if still:
                program = candidate
                improved = True
                break
            if tries >= budget:
                break
    return program


def shrink_case(program: Program, found: Disagreement, module: object = ember) -> Program:
    """``program`` shrunk while it disagrees with torch in the same group."""
    def fails(candidate: Program) -> bool:
        got = disagreement(candidate, module)
        return got is not None and got.group == found.group

    return shrink(program, fails)


def reproducer(program: Program, found: Disagreement | None = None) -> str:
    """Code that shows the disagreement with ``import torch`` and ``import ember as torch``."""
    lines = program.source().splitlines()
    lines[1] = "import torch  # or: import ember as torch"
    if found is not None:
        lines.append(f"# {found.cls} at {found.op}: Ember {found.detail}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- known failures

def read_known(path: Path = KNOWN_FAILURES) -> dict[int, tuple[str, str]]:
    known = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            index, op, cls = line.split()
            known[int(index)] = (op, cls)
    return known


def write_known(cases: list[Case], seed: int, path: Path = KNOWN_FAILURES) -> None:
    header = [
        f"# Ember-vs-torch disagreements of the fuzzer's CI budget: seed {seed}, "
        f"{len(cases)} cases (tests/test_fuzz.py).",
        "# The test is strict both ways: a disagreement not listed here fails it, and so does a",
        "# listed case that now agrees. After a fix, regenerate this file with",
        f"#     python -m tests.fuzz --cases {len(cases)} --seed {seed} --write-known",
        "# and commit it with the fix: the list only shrinks as fixes land. Regenerate it too",
        "# after changing the catalogue (or the elementwise modules' FUNCTIONS, which it takes",
        "# whole): the programs of the cases change with it.",
        "# case  op  class",
    ]
    rows = [f"{c.index} {c.disagreement.op} {c.disagreement.cls}" for c in cases
            if c.disagreement is not None]
    path.write_text("\n".join(header + rows) + "\n")


# ----------------------------------------------------------------------------- coverage

def reached_primitives(programs_per_entry: int = 4, seed: int = 0) -> dict[str, set[str]]:
    """Primitive name -> the catalogue entries whose calls reached it in Ember, from a few
    programs drawn from each entry alone."""
    from ember.core.dispatch_modes import PrimitiveNames

    reached: dict[str, set[str]] = {}

    def draw(n: int, entry: Entry, i: int) -> None:
        names = PrimitiveNames()
        run(generate(np.random.default_rng([seed, n, i]), [entry]), ember, names)
        for name in names.names:
            reached.setdefault(name, set()).add(entry.op)

    for n, entry in enumerate(ENTRIES):
        for i in range(programs_per_entry):
            draw(n, entry, i)
    # a primitive not reached yet: more programs of the entries named after it
    for name in sorted({n for n in REGISTRY if "::" not in n} - set(reached) - set(NOT_REACHED)):
        label = REACHED_BY.get(name, name.removesuffix("_") if name in REGISTRY else name)
        for n, entry in enumerate(ENTRIES):
            public = entry.op.split(".")[-1].split("(")[0].strip("_")
            if public == label.strip("_") and (entry.op.endswith("_") == name.endswith("_")
                                               or name in REACHED_BY):
                for i in range(programs_per_entry, 40):
                    if name in reached:
                        break
                    draw(n, entry, i)
    return reached
