"""The differential fuzzer (tests/fuzz) on a fixed budget: torch agrees with itself on every
case, Ember's disagreements with torch are exactly those of the known-failures table, the
catalogue reaches every primitive of the registry, and a broken op is found and shrunk."""

import warnings

import numpy as np
import pytest
import torch
from fuzz.catalogue import NOT_REACHED, VALUES_NOT_COMPARED
from fuzz.compare import compare_runs, compare_value
from fuzz.driver import (
    CI_CASES,
    CI_SEED,
    KNOWN_FAILURES,
    disagreement,
    reached_primitives,
    read_known,
    reproducer,
    run_cases,
    select_entries,
    shrink_case,
)
from fuzz.program import Outcome, Program, Snap, Step, run, snapshot

import ember
from ember.core.dispatch import REGISTRY


@pytest.fixture(scope="module")
def ci_cases():
    return run_cases(CI_SEED, CI_CASES)


def test_torch_agrees_with_itself_on_every_case(ci_cases):
    bad = [(c.index, c.self_check) for c in ci_cases if c.self_check is not None]
    assert bad == []


def test_disagreements_are_exactly_the_known_failures(ci_cases):
    found = {c.index: c.disagreement.group for c in ci_cases if c.disagreement is not None}
    known = read_known()
    new = {i: g for i, g in found.items() if known.get(i) != g}
    fixed = {i: g for i, g in known.items() if i not in found}
    hint = (f"regenerate {KNOWN_FAILURES.name}: python -m tests.fuzz --cases {CI_CASES} "
            f"--seed {CI_SEED} --write-known")
    assert new == {}, f"disagreements not in the table (or in another group): {new}; {hint}"
    assert fixed == {}, f"listed cases that now agree with torch: {fixed}; {hint}"


def test_the_catalogue_reaches_every_primitive():
    reached = reached_primitives(2)
    # custom ops (``namespace::name``, which other tests register through ember.library)
    # are the users', not Ember's primitives
    own = {name for name in REGISTRY if "::" not in name}
    missing = sorted(own - set(reached) - set(NOT_REACHED))
    assert missing == [], f"no catalogue entry reaches {missing}: add one, or say why in NOT_REACHED"
    assert sorted(set(NOT_REACHED) & set(reached)) == []
    assert set(VALUES_NOT_COMPARED) <= set(REGISTRY)


def test_a_broken_op_is_found_and_shrunk_to_a_short_reproducer(monkeypatch):
    sub = ember.sub
    monkeypatch.setattr(ember, "sub", lambda a, b, **kw: sub(a, b, **kw) + 1)
    cases = run_cases(3, 30, select_entries(["torch.sub", "torch.mul", "Tensor.t_"]))
    broken = [c for c in cases if c.disagreement is not None and c.disagreement.op == "torch.sub"]
    assert broken, "a wrong torch.sub was not noticed"
    first = broken[0]
    assert first.self_check is None
    small = shrink_case(first.program, first.disagreement)
    assert disagreement(small).group == ("torch.sub", "value")
    assert len(small.steps) == 1 and len(small.inputs) <= 2
    code = reproducer(small)
    assert "torch.sub(" in code and len(code.splitlines()) <= 2 + 2 * 2 + 1


def test_a_reproducer_is_a_script_for_either_framework(ci_cases):
    """The printed program runs alone, as `import torch` and as `import ember as torch`,
    and computes what the fuzzer compared."""
    clean = [c for c in ci_cases[:40] if all(o.error is None for o in run(c.program, torch))
             and c.disagreement is None and c.program.steps]
    assert len(clean) >= 10
    for c in clean[:10]:
        last = c.program.steps[-1].out
        for framework, module in (("torch", torch), ("ember", ember)):
            source = reproducer(c.program).replace(
                "import torch  # or: import ember as torch",
                "import torch" if framework == "torch" else "import ember as torch")
            ns = {}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # torch.range's deprecation, and the like
                exec(source, ns)
            assert ns["torch"] is module
            expected = run(c.program, module)[-1].values.get(last)
            got = snapshot(ns[last], module.Tensor) if last in ns else None
            assert compare_value(got, expected) is None


def test_an_inexact_value_stays_inexact_at_the_steps_after_it():
    """A step that reads an inexact value may amplify its rounding (``tan`` of a ``sinh``
    an ulp off); later steps that do not touch it see the same difference again, which is
    not theirs."""
    def snap(*values):
        return Snap("float32", (len(values),), (1,), True, False,
                    np.array(values, dtype=np.float32))

    steps = (Step("torch.sinh", "{out} = torch.sinh({0})", ("x0",), "v0"),
             Step("torch.tan", "{out} = torch.tan({0})", ("v0",), "v1"),
             Step("Tensor.neg", "{out} = {0}.neg()", ("x0",), "v2"))
    program = Program((), steps)

    def outcomes(sinh, tan):
        return [Outcome(values={"x0": snap(7.0)}),
                Outcome(values={"x0": snap(7.0), "v0": snap(sinh)}),
                Outcome(values={"x0": snap(7.0), "v0": snap(sinh), "v1": snap(tan)}),
                Outcome(values={"x0": snap(7.0), "v0": snap(sinh), "v1": snap(tan),
                                "v2": snap(-7.0)})]

    ulp = float(np.spacing(np.float32(548.3161)))
    assert compare_runs(program, outcomes(548.3161 + ulp, -9.2075),
                        outcomes(548.3161, -9.2023)) is None
    found = compare_runs(program, outcomes(548.3161, -9.2075), outcomes(548.3161, -9.2023))
    assert found is not None and found.op == "torch.tan"
