"""The ``_foreach_*`` ops around their values: torch's errors (the same exception type, a
message naming the op), nothing written when an in-place op raises, version counters,
one dispatch for the float cases and the per-tensor ops for the others, broadcasting and
promotion within pairs, the results' layouts, the meta device, what the ops return."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
from foreach_oracle import agree, bits, lists

import ember.core as ember
from ember.core.dispatch_modes import PrimitiveNames


def _two(m: Any, dtype: str = "float32") -> list[Any]:
    return [m.ones(2, 3, dtype=getattr(m, dtype)), m.arange(4, dtype=getattr(m, dtype))]


# (case, the call, a phrase of torch's message that Ember's must have too)
ERRORS = [
    ("empty list", lambda m: m._foreach_add([], 1.0), "at least one tensor"),
    ("empty list in place", lambda m: m._foreach_mul_([], [1.0]), "at least one tensor"),
    ("empty unary", lambda m: m._foreach_sqrt([]), "at least one tensor"),
    ("empty norm", lambda m: m._foreach_norm([]), "at least one tensor"),
    ("empty zero_", lambda m: m._foreach_zero_([]), "at least one tensor"),
    ("empty pow base", lambda m: m._foreach_pow(2.0, []), "at least one tensor"),
    ("list lengths", lambda m: m._foreach_add(_two(m), _two(m)[:1]),
     "same number of tensors, got 2 and 1"),
    ("copy_ lengths", lambda m: m._foreach_copy_(_two(m), _two(m)[:1]),
     "same number of tensors, got 2 and 1"),
    ("addcmul lengths", lambda m: m._foreach_addcmul(_two(m), _two(m), _two(m)[:1]),
     "same number of tensors, got 2 and 1"),
    ("lerp weights", lambda m: m._foreach_lerp(_two(m), _two(m), _two(m)[:1]),
     "same number of tensors, got 2 and 1"),
    ("scalar list length", lambda m: m._foreach_add(_two(m), [1.0]),
     "same number of elements as scalar list"),
    ("empty scalar list", lambda m: m._foreach_sub_(_two(m), []),
     "same number of elements as scalar list"),
    ("addcmul scalars", lambda m: m._foreach_addcmul(_two(m), _two(m), _two(m), [1.0]),
     "same number of elements as scalar list"),
    ("tensor not 0-d", lambda m: m._foreach_mul(_two(m), m.ones(1)),
     "scalar tensor expected to be 0 dim but it has 1 dimensions and 1 elements"),
    ("packed scalars 0-d", lambda m: m._foreach_addcdiv(_two(m), _two(m), _two(m),
                                                        m.tensor(2.0)),
     "Expected packed scalar Tensor to be of dimension 1. Got 0 instead."),
    ("packed scalars length", lambda m: m._foreach_addcmul(_two(m), _two(m), _two(m),
                                                           m.ones(3)),
     "Expected length of scalars to match input of length 2 but got 3 instead."),
    ("not a list", lambda m: m._foreach_add(m.ones(2), 1.0), None),
    ("not a tensor", lambda m: m._foreach_add([m.ones(2), 3], 1.0),
     "expected Tensor as element 1 in argument 0, but got int"),
    ("number in a tensor list", lambda m: m._foreach_add(_two(m), [m.ones(2, 3), 2.0]),
     "expected Tensor as element 1 in argument 1, but got float"),
    ("a string", lambda m: m._foreach_mul(_two(m), "x"), None),
    ("alpha with a number", lambda m: m._foreach_add(_two(m), 1.0, alpha=2), None),
    ("alpha of mul", lambda m: m._foreach_mul(_two(m), _two(m), alpha=2), None),
    ("a tensor for sub", lambda m: m._foreach_sub(_two(m), m.ones(1)), None),
    ("a tensor that requires grad", lambda m: m._foreach_maximum(
        _two(m), m.tensor(1.0, requires_grad=True)), None),
    ("float alpha of integers", lambda m: m._foreach_add(_two(m, "int64"), _two(m, "int64"),
                                                         alpha=2.5),
     "For integral input tensors, argument alpha must not be a floating point number."),
    ("bool alpha", lambda m: m._foreach_add(_two(m), _two(m), alpha=True),
     "Boolean alpha only supported for Boolean results."),
    ("float into int", lambda m: m._foreach_add_(_two(m, "int64"), 1.5),
     "result type Float can't be cast to the desired output type Long"),
    ("division into int", lambda m: m._foreach_div_(_two(m, "int64"), _two(m, "int64")),
     "result type Float can't be cast to the desired output type Long"),
    ("sqrt into int", lambda m: m._foreach_sqrt_(_two(m, "int64")),
     "result type Float can't be cast to the desired output type Long"),
    ("maximum into int", lambda m: m._foreach_maximum_(_two(m, "int64"), 1.5),
     "result type Float can't be cast to the desired output type"),
    ("complex into float", lambda m: m._foreach_add_(_two(m), 1j),
     "result type ComplexFloat can't be cast to the desired output type Float"),
    ("in place grows", lambda m: m._foreach_add_([m.ones(3)], [m.ones(2, 3)]),
     "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    ("no broadcast", lambda m: m._foreach_add([m.ones(2, 3)], [m.ones(2)]),
     "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1"),
    ("write into shared memory", lambda m: m._foreach_add_([m.ones(1).expand(3)], 1.0),
     "more than one element of the written-to tensor refers to a single memory location"),
    ("unary into shared memory", lambda m: m._foreach_exp_([m.ones(1).expand(3)]),
     "more than one element of the written-to tensor refers to a single memory location"),
    ("partial overlap", lambda m: (lambda b: m._foreach_add_([b[1:]], [b[:-1]]))(m.arange(4.0)),
     "some elements of the input tensor and the written-to tensor refer to a single memory"),
    ("sub of bool", lambda m: m._foreach_sub([m.ones(2, dtype=m.bool)], 1),
     "Subtraction, the `-` operator, with a bool tensor is not supported."),
    ("neg of bool", lambda m: m._foreach_neg([m.ones(2, dtype=m.bool)]),
     "Negation, the `-` operator, on a bool tensor is not supported."),
    ("negative integer power", lambda m: m._foreach_pow([m.tensor([2, 3])], -1),
     "Integers to negative integer powers are not allowed."),
    ("negative integer powers", lambda m: m._foreach_pow_([m.tensor([2, 3])], [-1]),
     "Integers to negative integer powers are not allowed."),
    ("integer lerp", lambda m: m._foreach_lerp(_two(m, "int64"), _two(m, "int64"), 0.5),
     "\"lerp_kernel_scalar\" not implemented for 'Long'"),
    ("lerp dtypes", lambda m: m._foreach_lerp(_two(m), _two(m, "float64"), 0.5),
     "expected dtype float for `end` but got dtype double"),
    ("integer addcdiv", lambda m: m._foreach_addcdiv(_two(m, "int64"), _two(m, "int64"),
                                                     _two(m, "int64")),
     "Integer division with addcdiv is no longer supported"),
    ("clamp bound overflows", lambda m: m._foreach_clamp_min(_two(m, "float16"), 1e6),
     "value cannot be converted to type c10::Half without overflow"),
    ("infinity norm of nothing", lambda m: m._foreach_norm([m.ones(2), m.ones(0)], math.inf),
     "_foreach_norm cannot compute the infinity norm on an empty tensor"),
    ("negative norm of nothing", lambda m: m._foreach_norm([m.ones(0)], -1),
     "cannot compute the -1 norm on an empty tensor"),
    ("bool order", lambda m: m._foreach_norm(_two(m), True),
     "expects ord to be integer or float"),
    ("string order", lambda m: m._foreach_norm(_two(m), "fro"), None),
    ("integer norm", lambda m: m._foreach_norm(_two(m, "int64")),
     "Expected a floating point or complex tensor as input. Got Long"),
    ("narrowing norm", lambda m: m._foreach_norm(_two(m, "float64"), 2, dtype=m.float32),
     "should be convertible without narrowing to the specified dtype (Float)"),
    ("max of nothing", lambda m: m._foreach_max([m.ones(2), m.ones(0)]),
     "_foreach_max cannot compute the maximum of an empty tensor"),
    ("max of complex", lambda m: m._foreach_max([m.ones(2, dtype=m.complex64)]),
     "\"max_all\" not implemented for 'ComplexFloat'"),
    ("devices", lambda m: m._foreach_add([m.ones(2)], [m.ones(2, device="meta")]), None),
]


@pytest.mark.parametrize(("call", "phrase"), [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_errors_are_torchs(call, phrase):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(Exception) as ours:
        call(ember)
    assert type(ours.value) is type(theirs.value), (ours.value, theirs.value)
    if phrase is not None:
        assert phrase in str(theirs.value), theirs.value
        assert phrase in str(ours.value), ours.value


def test_errors_name_the_op():
    for call, name in ((lambda: ember._foreach_add([], 1.0), "_foreach_add"),
                       (lambda: ember._foreach_mul_(_two(ember), [1.0]), "_foreach_mul_"),
                       (lambda: ember._foreach_lerp_(_two(ember), [ember.ones(1)], 0.5),
                        "_foreach_lerp_"),
                       (lambda: ember._foreach_add(ember.ones(2), 1.0), "_foreach_add"),
                       (lambda: ember._foreach_norm([ember.ones(0)], math.inf), "_foreach_norm")):
        with pytest.raises((RuntimeError, TypeError), match=name):
            call()


# ----------------------------------------------------------------------------- nothing written

@pytest.mark.parametrize("call", [
    lambda m, ts: m._foreach_add_(ts, 1.5),  # the int64 tensor at the end cannot take it
    lambda m, ts: m._foreach_sqrt_(ts),
    lambda m, ts: m._foreach_mul_(ts, [m.ones(2)] * 2 + [m.ones(3)]),  # the last grows
    lambda m, ts: m._foreach_addcmul_(ts, ts, [m.ones(2), m.ones(2), m.ones(2, 5)]),
], ids=["cast", "unary cast", "shape", "ternary shape"])
def test_an_in_place_op_that_raises_writes_nothing(call):
    """torch writes the tensors before the one that raises; Ember checks them all first."""
    def made(m: Any) -> list[Any]:
        return [m.ones(2), m.ones(2, dtype=m.float64), m.ones(2, dtype=m.int64)]

    with pytest.raises(Exception) as theirs:
        call(torch, made(torch))
    ts = made(ember)
    with pytest.raises(type(theirs.value)):
        call(ember, ts)
    assert [t.tolist() for t in ts] == [[1.0, 1.0], [1.0, 1.0], [1, 1]]
    assert [t._version for t in ts] == [0, 0, 0]


# ----------------------------------------------------------------------------- versions

@pytest.mark.parametrize("dtype", ["float32", "int64"])  # one dispatch, and the per-tensor ops
def test_versions(dtype):
    for m in (ember, torch):
        ts, others = _two(m, dtype), _two(m, dtype)
        view = ts[1][1:]
        m._foreach_add_(ts, others)
        m._foreach_zero_(ts)
        assert [t._version for t in ts] == [2, 2] and view._version == 2, m.__name__
        assert [t._version for t in others] == [0, 0], m.__name__
        assert [t._version for t in m._foreach_mul(ts, others)] == [0, 0], m.__name__
        assert [t._version for t in m._foreach_norm(_two(m))] == [0, 0], m.__name__


def test_in_place_forms_return_self_as_given():
    for m in (ember, torch):
        ts = _two(m)
        for out in (m._foreach_add_(ts, 1.0), m._foreach_sqrt_(ts), m._foreach_zero_(ts),
                    m._foreach_copy_(ts, ts), m._foreach_lerp_(ts, ts, 0.5),
                    m._foreach_addcmul_(ts, ts, ts)):
            assert out is ts, m.__name__
        tup = tuple(_two(m))
        assert m._foreach_mul_(tup, 2.0) is tup


# ----------------------------------------------------------------------------- the paths

FAST = [
    ("_foreach_add_", lambda m, a, b: m._foreach_add_(a, b, alpha=-0.1)),
    ("_foreach_add_", lambda m, a, b: m._foreach_add_(a, m.tensor(1.0), alpha=1.0)),
    ("_foreach_mul", lambda m, a, b: m._foreach_mul(a, 0.9)),
    ("_foreach_div_", lambda m, a, b: m._foreach_div_(a, [2.0, 3.0])),
    ("_foreach_maximum_", lambda m, a, b: m._foreach_maximum_(a, b)),
    ("_foreach_pow", lambda m, a, b: m._foreach_pow(0.9, a)),
    ("_foreach_sqrt", lambda m, a, b: m._foreach_sqrt(a)),
    ("_foreach_neg_", lambda m, a, b: m._foreach_neg_(a)),
    ("_foreach_addcdiv_", lambda m, a, b: m._foreach_addcdiv_(a, b, b, value=-0.01)),
    ("_foreach_addcmul", lambda m, a, b: m._foreach_addcmul(a, b, b, m.tensor([1.0, 2.0]))),
    ("_foreach_lerp_", lambda m, a, b: m._foreach_lerp_(a, b, 0.1)),
    ("_foreach_lerp", lambda m, a, b: m._foreach_lerp(a, b, b)),
    ("_foreach_zero_", lambda m, a, b: m._foreach_zero_(a)),
    ("_foreach_copy_", lambda m, a, b: m._foreach_copy_(a, b)),
    ("_foreach_norm", lambda m, a, b: m._foreach_norm(a)),
    ("_foreach_max", lambda m, a, b: m._foreach_max(a)),
]


@pytest.mark.parametrize(("name", "call"), FAST, ids=[f"{n}-{i}" for i, (n, _) in enumerate(FAST)])
def test_one_float_dtype_is_one_dispatch(name, call):
    (a, b), _ = lists("float32", 2, seed=1, shapes=[(3, 4), (5,)], low=0.5)
    with PrimitiveNames() as seen:
        call(ember, a, b)
    assert seen.names == [name]


def test_parameters_written_under_no_grad_are_one_dispatch():
    params = [ember.ones(3, requires_grad=True), ember.ones(2, requires_grad=True)]
    grads = [ember.ones(3), ember.ones(2)]
    from ember.core import grad_mode

    grad_mode.enabled = False
    try:
        with PrimitiveNames() as seen:
            ember._foreach_add_(params, grads, alpha=-0.5)
    finally:
        grad_mode.enabled = True
    assert seen.names == ["_foreach_add_"]
    assert [p.tolist() for p in params] == [[0.5] * 3, [0.5] * 2]


@pytest.mark.parametrize("call", [
    lambda m: m._foreach_add_(_two(m, "int64"), 1),  # an integer dtype
    lambda m: m._foreach_mul([m.ones(2), m.ones(2, dtype=m.float64)], 2.0),  # two dtypes
    lambda m: m._foreach_add([m.ones(2, 3)], [m.ones(3)]),  # pairs that broadcast
    lambda m: m._foreach_mul(_two(m), True),  # a bool number
    lambda m: m._foreach_mul(_two(m), m.tensor(2.0, dtype=m.float64)),  # another 0-d dtype
], ids=["int", "dtypes", "broadcast", "bool", "0-d dtype"])
def test_other_cases_run_the_per_tensor_ops(call):
    with PrimitiveNames() as seen:
        call(ember)
    assert not [n for n in seen.names if n.startswith("_foreach")], seen.names
    assert seen.names


# ----------------------------------------------------------------------------- pairs

PAIRS = [
    lambda m: m._foreach_add([m.ones(2, 3), m.arange(3.0)], [m.arange(3.0), m.ones(2, 1)]),
    lambda m: m._foreach_mul([m.ones(2, 3), m.ones(4, dtype=m.bfloat16)],
                              [m.arange(3, dtype=m.float64), m.tensor(3.0)]),
    lambda m: m._foreach_div([m.arange(4), m.ones(2, dtype=m.float16)], m.tensor(3)),
    lambda m: m._foreach_add([m.arange(4), m.ones(2, dtype=m.bool)], 2.5),
    lambda m: m._foreach_maximum([m.arange(4), m.ones(3)], [m.ones(4, dtype=m.float16),
                                                             m.arange(3)]),
    lambda m: m._foreach_sub([m.arange(4, dtype=m.uint8)], -1),
    lambda m: m._foreach_add([m.ones(2, dtype=m.int8)], 300),
    lambda m: m._foreach_mul([m.ones(2, dtype=m.bfloat16)], m.tensor(3.5)),
    lambda m: m._foreach_pow([m.arange(3.0), m.arange(3)], [m.arange(3), m.tensor(2.0)]),
    lambda m: m._foreach_lerp([m.ones(2, 3)], [m.arange(3.0)], [m.tensor(0.25)]),
    lambda m: m._foreach_addcmul([m.ones(2, 3)], [m.arange(3.0)], [m.ones(2, 1)], 0.5),
    lambda m: m._foreach_abs([m.tensor([-2, 3]), m.tensor([-1.5])]),
    lambda m: m._foreach_add(_two(m), np.float32(0.1)),
    lambda m: m._foreach_mul(_two(m), [np.float64(2.0), 3]),
    lambda m: m._foreach_add(_two(m), 1j),
    lambda m: m._foreach_add([m.ones(2), m.ones(2, device="meta")], 1.0)[:1],
    lambda m: m._foreach_norm([m.ones(2, dtype=m.complex64), m.arange(3.0)]),
    lambda m: m._foreach_norm([m.ones(2, dtype=m.float16)], 2, dtype=m.float32),
    lambda m: m._foreach_max([m.tensor([True, False]), m.arange(3)]),
]


@pytest.mark.parametrize("call", PAIRS, ids=[str(i) for i in range(len(PAIRS))])
def test_pairs_broadcast_and_promote_as_torch(call):
    """Each pair follows the per-tensor op's broadcasting and type promotion, as torch's slow
    path does (these cases run the per-tensor ops)."""
    ours, theirs = call(ember), call(torch)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        if t.device.type == "meta":
            assert (o.shape, str(o.dtype)[6:], o.device.type) == (t.shape, str(t.dtype)[6:],
                                                                   "meta")
        else:
            assert bits(o) == bits(t), (o, t)


IN_PLACE_PAIRS = [
    (lambda m: [m.ones(2, 3), m.ones(2, dtype=m.int32)],
     lambda m, ts: m._foreach_copy_(ts, [m.arange(3.0), m.tensor([1.7, -2.2])])),
    (lambda m: [m.ones(2, 3), m.ones(3, dtype=m.bfloat16)],
     lambda m, ts: m._foreach_add_(ts, [m.arange(3.0), m.arange(3, dtype=m.float64)], alpha=2)),
    (lambda m: [m.arange(4.0)], lambda m, ts: m._foreach_clamp_max_(
        ts, [m.tensor(1.5, dtype=m.float64)])),
    (lambda m: [m.full((2,), -2.5, dtype=m.float64), m.full((1,), 3.25).expand(1)],
     lambda m, ts: m._foreach_neg_(ts)),
    (lambda m: [m.ones(1).expand(3)], lambda m, ts: m._foreach_zero_(ts)),
    (lambda m: [m.ones(2, 3)], lambda m, ts: m._foreach_lerp_(ts, [m.arange(3.0)],
                                                              [m.tensor(0.25)])),
]


@pytest.mark.parametrize(("make", "call"), IN_PLACE_PAIRS,
                         ids=[str(i) for i in range(len(IN_PLACE_PAIRS))])
def test_in_place_pairs_promote_as_torch(make, call):
    ours, theirs = make(ember), make(torch)
    call(ember, ours)
    call(torch, theirs)
    assert [bits(o) for o in ours] == [bits(t) for t in theirs]


# ----------------------------------------------------------------------------- layouts, meta

def _laid_out(m: Any, layout: str) -> list[Any]:
    base = m.arange(24.0).reshape(2, 3, 4)
    if layout == "permuted":
        return [base.permute(2, 0, 1), base[0].t()]
    if layout == "stepped":
        return [base[:, :, ::2], base[0, ::2]]
    return [base[:1].expand(2, 3, 4), base[0, :1].expand(3, 4)]


@pytest.mark.parametrize("layout", ["permuted", "stepped", "expanded"])
def test_result_layouts_are_torchs(layout):
    calls = [lambda m, a: m._foreach_add(a, a), lambda m, a: m._foreach_mul(a, 2.0),
             lambda m, a: m._foreach_sqrt(a), lambda m, a: m._foreach_pow(2.0, a),
             lambda m, a: m._foreach_addcmul(a, a, a), lambda m, a: m._foreach_lerp(a, a, 0.5),
             lambda m, a: m._foreach_maximum(a, [t.contiguous() for t in a]),
             lambda m, a: m._foreach_norm(a), lambda m, a: m._foreach_max(a)]
    for call in calls:
        ours, theirs = call(ember, _laid_out(ember, layout)), call(torch, _laid_out(torch, layout))
        agree(ours, ours, theirs, theirs, layout)


def test_meta_tensors():
    for m in (ember, torch):
        a = [m.empty(2, 3, device="meta"), m.empty(0, device="meta")]
        assert [tuple(t.shape) for t in m._foreach_add(a, a)] == [(2, 3), (0,)]
        assert [t.device.type for t in m._foreach_sqrt(a)] == ["meta", "meta"]
        m._foreach_mul_(a, 2.0)
        m._foreach_addcmul_(a, a, a, 0.5)


def test_values_of_an_optimizer_step():
    """An Adam step written with foreach ops (torch's own ``_multi_tensor_adam``, capturable
    off), on parameters, as torch's optimizer calls them: torch's values."""
    runs = []
    made = lists("float32", 4, seed=2, low=(-1, -1, -0.1, 0.0), high=(1, 1, 0.1, 0.1))
    for m, (params, grads, avgs, sqs) in zip((ember, torch), made):
        steps = [m.tensor(3.0) for _ in params]
        m._foreach_add_(steps, m.tensor(1.0), alpha=1.0)
        m._foreach_lerp_(avgs, grads, 0.1)
        m._foreach_mul_(sqs, 0.999)
        m._foreach_addcmul_(sqs, grads, grads, 0.001)
        bc1 = [1 - 0.9 ** s.item() for s in steps]
        bc2 = [(1 - 0.999 ** s.item()) ** 0.5 for s in steps]
        denom = m._foreach_sqrt(sqs)
        m._foreach_div_(denom, bc2)
        m._foreach_add_(denom, 1e-8)
        m._foreach_addcdiv_(params, avgs, denom, [-1e-3 / b for b in bc1])
        runs.append(params)
    agree(runs[0], runs[0], runs[1], runs[1], "adam")
