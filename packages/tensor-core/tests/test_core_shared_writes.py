"""Writes into memory that several elements share (expanded tensors), and in-place ops whose
input overlaps the written-to tensor: what torch writes, warns about and refuses."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import ember.core as ember


def _expanded(m: Any) -> tuple[Any, Any]:
    """A tensor of one element and its (3,) expansion."""
    base = m.zeros(1)
    return base, base.expand(3)


def _rows(m: Any) -> tuple[Any, Any]:
    """A (2, 1) tensor and its (2, 3) expansion."""
    base = m.arange(2.).reshape(2, 1)
    return base, base.expand(2, 3)


# (name, the base and its expansion, the write)
WRITES: list[tuple[str, Callable[[Any], tuple[Any, Any]], Callable[[Any, Any], Any]]] = [
    ("setitem int", _expanded, lambda m, e: e.__setitem__(1, 5.)),
    ("setitem int of rows", _rows, lambda m, e: e.__setitem__(1, 5.)),
    ("setitem column", _rows, lambda m, e: e.__setitem__((slice(None), 1), 7.)),
    ("setitem column tensor", _rows, lambda m, e: e.__setitem__((slice(None), 1),
                                                                   m.tensor([3., 4.]))),
    ("setitem slice", _expanded, lambda m, e: e.__setitem__(slice(0, 2), 5.)),
    ("setitem all", _expanded, lambda m, e: e.__setitem__(slice(None), m.ones(3))),
    ("setitem ellipsis", _expanded, lambda m, e: e.__setitem__(Ellipsis, 5.)),
    ("setitem None", _expanded, lambda m, e: e.__setitem__(None, 5.)),
    ("setitem empty slice", _expanded, lambda m, e: e.__setitem__(slice(0, 0), 5.)),
    ("setitem mask", _expanded, lambda m, e: e.__setitem__(m.tensor([True, False, True]), 5.)),
    ("setitem index tensor", _expanded, lambda m, e: e.__setitem__(m.tensor([0, 2]), 5.)),
    ("setitem list", _expanded, lambda m, e: e.__setitem__([0, 2], m.tensor([1., 2.]))),
    ("fill_", _expanded, lambda m, e: e.fill_(2.)),
    ("fill_ (5, 1)", lambda m: (lambda b: (b, b.expand(5, 1)))(m.zeros(1)),
     lambda m, e: e.fill_(3.)),
    ("fill_ tensor", _expanded, lambda m, e: e.fill_(m.tensor(2.))),
    ("zero_", _rows, lambda m, e: e.zero_()),
    ("copy_", _expanded, lambda m, e: e.copy_(m.ones(3))),
    ("masked_fill_", _rows, lambda m, e: e.masked_fill_(
        m.tensor([[True, False, False], [False, False, False]]), 5.)),
    ("index_put_", _expanded, lambda m, e: e.index_put_((m.tensor([0]),), m.tensor(1.))),
    ("index_put_ accumulate", _expanded, lambda m, e: e.index_put_(
        (m.tensor([0, 1]),), m.tensor([1., 2.]), accumulate=True)),
    ("index_fill_", _expanded, lambda m, e: e.index_fill_(0, m.tensor([0]), 2.)),
    ("add_", _expanded, lambda m, e: e.add_(1)),
    ("mul_ tensor", _rows, lambda m, e: e.mul_(m.ones(2, 3))),
    ("exp_", _expanded, lambda m, e: e.exp_()),
    ("clamp_", _expanded, lambda m, e: e.clamp_(0, 1)),
    ("uniform_", _expanded, lambda m, e: e.uniform_()),
    ("scatter_", _expanded, lambda m, e: e.scatter_(0, m.tensor([0]), 2.)),
    ("index_add_", _expanded, lambda m, e: e.index_add_(0, m.tensor([0]), m.tensor([2.]))),
    ("lerp_", _expanded, lambda m, e: e.lerp_(m.ones(3), 0.5)),
    ("add_ of a row", _rows, lambda m, e: e[1].add_(1)),
    ("out=", _expanded, lambda m, e: m.add(m.ones(3), 1, out=e)),
    ("size-0 fill_", lambda m: (lambda b: (b, b.expand(3, 0)))(m.zeros(1, 0)),
     lambda m, e: e.fill_(1.)),
    ("size-0 add_", lambda m: (lambda b: (b, b.expand(0, 3)))(m.zeros(0, 1)),
     lambda m, e: e.add_(1)),
    ("size-0 copy_", lambda m: (lambda b: (b, b.expand(3, 0)))(m.zeros(1, 0)),
     lambda m, e: e.copy_(m.ones(3, 0))),
]


def _run(m: Any, make: Callable[[Any], tuple[Any, Any]], write: Callable[[Any, Any], Any]
         ) -> tuple[Any, list[str], Any]:
    """The base's values after the write, the warnings it gave, and what it raised."""
    base, expanded = make(m)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            write(m, expanded)
            raised = None
        except Exception as exc:
            raised = exc
    said = [str(w.message).split(" (Triggered")[0] for w in caught]
    return base.numpy().copy(), [s for s in said if "expanded tensors" in s], raised


@pytest.mark.parametrize("name,make,write", WRITES, ids=[w[0] for w in WRITES])
def test_writes_into_shared_memory_as_torch(name: str, make: Any, write: Any) -> None:
    values, said, raised = _run(ember, make, write)
    expected_values, expected_said, expected = _run(torch, make, write)
    if expected is not None:
        assert type(raised) is type(expected), f"{name}: {raised!r}, torch: {expected!r}"
        op, _, text = str(raised).partition(": ")  # Ember's message names the op first
        assert text == str(expected) and op.isidentifier(), f"{name}: {raised}"
    else:
        assert raised is None, f"{name}: {raised!r}"
    np.testing.assert_array_equal(values, expected_values)
    # the deprecation warnings of the indexed writes (torch's x[mask] = v warns twice, as
    # index_put_ and as the masked_fill_ it runs: Ember's once, as index_put_)
    assert said == expected_said[:len(said)] and bool(said) == bool(expected_said), name
