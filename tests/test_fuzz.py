"""The differential fuzzer (tests/fuzz) on a fixed budget: torch agrees with itself on every
case, Ember's disagreements with torch are exactly those of the known-failures table, the
catalogue reaches every primitive of the registry, and a broken op is found and shrunk."""

import numpy as np
import pytest
import torch
from fuzz.catalogue import NOT_REACHED, VALUES_NOT_COMPARED
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
from fuzz.program import run

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
    missing = sorted(set(REGISTRY) - set(reached) - set(NOT_REACHED))
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


def test_the_reproducer_runs_in_both_frameworks():
    cases = run_cases(5, 5)
    for c in cases:
        for framework in ("torch", "ember"):
            source = c.program.source(framework)
            assert source.splitlines()[1] == ("import torch" if framework == "torch"
                                              else "import ember as torch")
        # what the reproducer's lines compute is what the runs compared
        ns = {"torch": torch, "np": np}
        exec("\n".join(c.program.input_code()), ns)
        assert len(run(c.program, torch)) == len(c.program.steps) + 1
