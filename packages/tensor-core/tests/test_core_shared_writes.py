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
    # torch zeros the triangle's complement in place through up to 3 dims (a shared element
    # any alias of which lies outside the triangle becomes 0), copies larger batches back
    ("triu_", lambda m: (lambda b: (b, b.expand(1, 2)))(m.tensor([[2.]])),
     lambda m, e: e.triu_(-1)),
    ("tril_", lambda m: (lambda b: (b, b.expand(2, 1)))(m.tensor([[2.5]])),
     lambda m, e: e.tril_(1)),
    ("tril_ of rows", lambda m: (lambda b: (b, b.expand(3, 2)))(m.tensor([[2.5, 1.]])),
     lambda m, e: e.tril_(0)),
    ("triu_ batch", lambda m: (lambda b: (b, b.expand(2, 2, 2)))(m.tensor([[[1., 2.], [3., 4.]]])),
     lambda m, e: e.triu_(0)),
    ("tril_ 4-d, first dim expanded", lambda m: (lambda b: (b, b.expand(2, 1, 2, 2)))(
        m.tensor([[[[1., 2.], [3., 4.]]]])), lambda m, e: e.tril_(0)),
    ("tril_ 4-d, second dim expanded", lambda m: (lambda b: (b, b.expand(1, 2, 2, 2)))(
        m.tensor([[[[1., 2.], [3., 4.]]]])), lambda m, e: e.tril_(0)),
    # torch's memory check comes before the dtype checks of the in-place binary ops
    ("bitwise_or_ float", _expanded, lambda m, e: e.bitwise_or_(e)),
    ("__irshift__ float", _expanded, lambda m, e: e.__irshift__(e)),
    ("bitwise_left_shift_ float16", lambda m: (lambda b: (b, b.expand(2, 4)))(
        m.zeros(1, 1, dtype=m.float16)), lambda m, e: e.bitwise_left_shift_(m.tensor(8.))),
    ("gt_ complex", lambda m: (lambda b: (b, b.expand(3)))(m.zeros(1, dtype=m.complex64)),
     lambda m, e: e.gt_(m.ones(3))),
    ("size-0 fill_", lambda m: (lambda b: (b, b.expand(3, 0)))(m.zeros(1, 0)),
     lambda m, e: e.fill_(1.)),
    ("size-0 add_", lambda m: (lambda b: (b, b.expand(0, 3)))(m.zeros(0, 1)),
     lambda m, e: e.add_(1)),
    ("size-0 copy_", lambda m: (lambda b: (b, b.expand(3, 0)))(m.zeros(1, 0)),
     lambda m, e: e.copy_(m.ones(3, 0))),
    # torch's copy_ of the very elements of self returns at once, before the memory check;
    # its nan_to_num_ of integers is such a copy
    ("copy_ itself", _expanded, lambda m, e: e.copy_(e)),
    ("copy_ a view of the same elements", _rows, lambda m, e: e.copy_(e[:])),
    ("copy_ itself in another dtype", _expanded, lambda m, e: e.copy_(e.view(m.int32))),
    ("nan_to_num_ int64", lambda m: (lambda b: (b, b.expand(2, 1)))(m.tensor([[-2]])),
     lambda m, e: e.nan_to_num_(neginf=-5.0)),
    ("nan_to_num_ bool", lambda m: (lambda b: (b, b.expand(1, 2)))(m.tensor([[True]])),
     lambda m, e: e.nan_to_num_(1.0, 2.0, -3.0)),
    ("nan_to_num_ float", _expanded, lambda m, e: e.nan_to_num_(0.0)),
    # torch's x[mask] = v of a one-element v is masked_fill_(mask, v.item())
    ("setitem mask, 0-d value of another dtype", _expanded,
     lambda m, e: e.__setitem__(m.tensor([True, False, True]), m.tensor(2.5, dtype=m.float64))),
    # torch has no bool addcmul kernel: the memory is checked first
    ("bool addcmul_", lambda m: (lambda b: (b, b.expand(2)))(m.tensor([False])),
     lambda m, e: e.addcmul_(e, e)),
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


def _vector(m: Any) -> Any:
    return m.arange(4.)


def _square(m: Any) -> Any:
    return m.arange(9.).reshape(3, 3)


# (name, the written tensor's storage, the in-place write reading from it)
OVERLAPS: list[tuple[str, Callable[[Any], Any], Callable[[Any, Any], Any]]] = [
    ("add_ shifted", _vector, lambda m, x: x[1:].add_(x[:-1])),
    ("add_ itself", _vector, lambda m, x: x.add_(x)),
    ("add_ the same view again", _vector, lambda m, x: x[1:].add_(x[1:])),
    ("add_ an equal view", _vector, lambda m, x: x[:2].add_(x[:2].view(2))),
    ("add_ disjoint halves", _vector, lambda m, x: x[:2].add_(x[2:])),
    ("add_ interleaved (not dense)", _vector, lambda m, x: x[::2].add_(x[1::2])),
    ("add_ transposed self", _square, lambda m, x: x.add_(x.t())),
    ("add_ a row of itself", _square, lambda m, x: x.add_(x[0])),
    ("add_ an element of itself", _vector, lambda m, x: x.add_(x[0])),
    ("add_ expanded element (not dense)", _vector, lambda m, x: x.add_(x[:1].expand(4))),
    ("sub_ alpha shifted", _vector, lambda m, x: x[1:].sub_(x[:-1], alpha=2)),
    ("mul_ number", _vector, lambda m, x: x[1:].mul_(2)),
    ("atan2_ shifted", _vector, lambda m, x: x[1:].atan2_(x[:-1])),
    ("eq_ shifted", _vector, lambda m, x: x[1:].eq_(x[:-1])),
    ("pow_ shifted", _vector, lambda m, x: x[1:].pow_(x[:-1])),
    ("lerp_ shifted", _vector, lambda m, x: x[1:].lerp_(x[:-1], 0.5)),
    # the overlap is refused before the kernel's dtype check (lerp has no integer kernel)
    ("lerp_ an integer view of itself", lambda m: m.tensor(6),
     lambda m, x: m.atleast_3d(x).lerp_(x, 0.5)),
    ("addcmul_ shifted", _vector, lambda m, x: x[1:].addcmul_(m.ones(3), x[:-1])),
    ("clamp_ shifted bound", _vector, lambda m, x: x[1:].clamp_(min=x[:-1])),
    ("copy_ shifted", _vector, lambda m, x: x[1:].copy_(x[:-1])),
    ("copy_ itself", _vector, lambda m, x: x.copy_(x)),
    ("copy_ a view of the same elements", _vector, lambda m, x: x.copy_(x[:])),
    ("copy_ transposed self", _square, lambda m, x: x.copy_(x.t())),
    ("setitem shifted", _vector, lambda m, x: x.__setitem__(slice(1, None), x[:-1])),
    # a value of the target's shape is copied as it is (its leading size-1 dim kept)
    ("setitem a permuted self into itself", lambda m: m.tensor([[3.0], [5.0]]).permute(1, 0),
     lambda m, x: x.__setitem__(slice(None, None, 1), x)),
    ("setitem a permuted self's row into itself", lambda m: m.tensor([[3.0], [5.0]])
     .permute(1, 0), lambda m, x: x.__setitem__(slice(None, None, 1), x[0])),
    # a 0-d value fills (torch's fill_ with a tensor copies an element of self first)
    ("setitem None, a 0-d self", lambda m: m.tensor(7.), lambda m, x: x.__setitem__(None, x)),
    ("setitem slice, an element of itself", _vector,
     lambda m, x: x.__setitem__(slice(0, 2), x[1])),
    ("fill_ an element of itself", _vector, lambda m, x: x.fill_(x[1])),
    ("index_put_ shifted values", _vector,
     lambda m, x: x[1:].index_put_((m.tensor([0, 1]),), x[:2])),
    ("index_put_ itself", _vector, lambda m, x: x.index_put_((m.tensor([0, 1, 2, 3]),), x)),
    # a one-element value written through a mask is read first (torch's masked_fill_ of
    # its item()); a longer one may not be part of the written tensor
    ("setitem mask, an element of itself", _vector,
     lambda m, x: x.__setitem__(x != 0, x[1:2])),
    ("setitem mask, itself", _vector, lambda m, x: x.__setitem__(x != 0, x)),
    ("index_put_ mask, an element of itself", _vector,
     lambda m, x: x.index_put_((x > 1,), x[3:])),
    ("index_put_ mask accumulating an element of itself", _vector,
     lambda m, x: x.index_put_((x > 1,), x[3:], accumulate=True)),
    ("index_add_ shifted source", _vector,
     lambda m, x: x[1:].index_add_(0, m.tensor([0, 1]), x[:2])),
    ("scatter_ shifted source", _vector, lambda m, x: x[1:].scatter_(0, m.tensor([0, 1]), x[:2])),
    ("out= shifted", _vector, lambda m, x: m.add(x[:-1], 1, out=x[1:])),
    ("out= itself", _vector, lambda m, x: m.add(x, 1, out=x)),
    ("out= other operand shifted", _vector, lambda m, x: m.mul(m.ones(3), x[:-1], out=x[1:])),
    ("out= of a unary op shifted", _vector, lambda m, x: m.neg(x[:-1], out=x[1:])),
    ("out= of a unary op itself", _vector, lambda m, x: m.exp(x, out=x)),
    ("cat out= its inputs", _vector, lambda m, x: m.cat([x[:2], x[2:]], out=x)),
    ("index_select out= shifted", _vector,
     lambda m, x: m.index_select(x, 0, m.tensor([0, 1]), out=x[1:3])),
]


@pytest.mark.parametrize("name,make,write", OVERLAPS, ids=[w[0] for w in OVERLAPS])
def test_overlapping_in_place_operands_as_torch(name: str, make: Any, write: Any) -> None:
    results = []
    for m in (ember, torch):
        x = make(m)
        try:
            write(m, x)
            raised = None
        except Exception as exc:
            raised = exc
        results.append((x.numpy().copy(), raised))
    (values, raised), (expected_values, expected) = results
    if expected is not None:
        assert type(raised) is type(expected), f"{name}: {raised!r}, torch: {expected!r}"
        op, _, text = str(raised).partition(": ")
        assert text == str(expected) and op.isidentifier(), f"{name}: {raised}"
    else:
        assert raised is None, f"{name}: {raised!r}"
    np.testing.assert_allclose(values, expected_values, rtol=1e-6)  # refused: nothing written


# torch checks the written-to memory before the dtype its kernel needs (the op's own up-front
# refusals, as ceil's of complex tensors, come first)
CHECK_ORDER = ["lgamma_()", "digamma_()", "erfinv_()", "exp_()", "ceil_()", "trunc_()",
               "sign_()", "logit_()", "sigmoid_()", "abs_()", "sqrt_()", "erf_()", "frac_()",
               "bitwise_not_()", "sin_()", "round_()", "round_(decimals=1)", "atan2_(o)",
               "mul_(2)", "fmod_(2)", "remainder_(o)", "pow_(o)"]


@pytest.mark.parametrize("dtype", ["complex64", "bool", "int64", "float32"])
@pytest.mark.parametrize("call", CHECK_ORDER)
def test_shared_memory_is_checked_before_the_kernel_dtype(call: str, dtype: str) -> None:
    errors = []
    for m in (ember, torch):
        x = m.tensor(np.ones((1, 1), dtype=dtype)).expand(2, 1)
        before = np.array(x).copy()
        with pytest.raises(Exception) as caught:
            eval(f"x.{call}", {"x": x, "o": m.ones(2, 1)})
        np.testing.assert_array_equal(np.array(x), before)
        errors.append(type(caught.value))
    assert errors[0] is errors[1]
