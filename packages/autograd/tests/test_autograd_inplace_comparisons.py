"""In-place comparisons and the other in-place ops whose autograd torch specifies apart from
their functional forms: ``eq_`` and its kin overwrite ``self`` with a zero-gradient history
(torch's ``EqBackward1``: zeros to self's old history and to ``other``), refuse leaves as
every in-place op does, and refuse them before their own dtype checks; ``atanh_`` and kin
have no derivative; ``resize_`` refuses tensors that require grad."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from autograd_oracle import E


def _leaf(lib: Any, value: Any = 2.0) -> Any:
    return lib.tensor(np.array(value), requires_grad=True)


def _overwritten(lib: Any) -> Any:
    x = _leaf(lib, 0.0)
    v = lib.rad2deg(x)
    v.gt_(x)
    v.sum().backward()
    return x.grad, v


def _other_requires_grad(lib: Any) -> Any:
    x = _leaf(lib)
    y = lib.tensor(-1.0)
    y.eq_(x)
    y.sum().backward()
    return x.grad, y


def _greater_equal_after_atan2(lib: Any) -> Any:
    x = _leaf(lib, -2.0)
    y = lib.tensor([1.5, 1.0145], dtype=lib.float64)
    y.atan2_(x)
    y.greater_equal_(x)
    (y * lib.arange(2, dtype=y.dtype)).sum().backward()
    return x.grad, y


def _view_of_a_graph_tensor(lib: Any) -> Any:
    x = lib.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    b = x * 2
    b[:, ::2].le_(3.0)
    (b * lib.arange(12, dtype=b.dtype).reshape(3, 4)).sum().backward()
    return x.grad, b


def _broadcast_other(lib: Any) -> Any:
    x = _leaf(lib, 1.0)
    w = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    y = (x * lib.ones(3, 2, dtype=lib.float64)).ne_(w)
    y.sum().backward()
    return x.grad, w.grad, y


def _scalar_other(lib: Any) -> Any:
    x = _leaf(lib)
    y = (x * 1).lt_(3.0)
    y.backward()
    return x.grad, y


def _view_written_by_comparison(lib: Any) -> Any:
    x = _leaf(lib)
    y = lib.tensor(np.array(1.5, dtype=np.float32))
    y.greater_(x)
    v = lib.tensor(np.array([-2.0, 1.728, 2.5], dtype=np.float32))[1:]
    v.greater_(y)  # the view's base takes the comparison's history (CopySlices)
    (v * lib.arange(2, dtype=v.dtype)).sum().backward()
    return x.grad, v


PROGRAMS: dict[str, Callable[[Any], Any]] = {
    "view_written_by_comparison": _view_written_by_comparison,
    "overwritten": _overwritten,
    "other_requires_grad": _other_requires_grad,
    "greater_equal_after_atan2": _greater_equal_after_atan2,
    "view_of_a_graph_tensor": _view_of_a_graph_tensor,
    "broadcast_other": _broadcast_other,
    "scalar_other": _scalar_other,
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_comparisons_in_place_have_zero_gradient_histories(name: str) -> None:
    ours, theirs = PROGRAMS[name](E), PROGRAMS[name](torch)
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    result, expected = ours[-1], theirs[-1]
    assert result.requires_grad == expected.requires_grad
    assert type(result.grad_fn).__name__ == type(expected.grad_fn).__name__


REFUSED: dict[str, Callable[[Any], Any]] = {
    "eq_ leaf": lambda lib: (lambda x: x.eq_(x))(_leaf(lib)),
    "le_ leaf": lambda lib: _leaf(lib).le_(1.0),
    "lt_ view of a leaf": lambda lib: lib.tensor(np.ones((2, 4)), requires_grad=True)[
        ..., ::2].lt_(lib.tensor(-5.0)),
    # before the dtype checks the kernel would make
    "bitwise_xor_ leaf": lambda lib: (lambda x: x.bitwise_xor_(x))(_leaf(lib, -0.0)),
    "bitwise_or_ leaf, bad shape": lambda lib: _leaf(lib, [1.0, 2.0]).bitwise_or_(lib.ones(3)),
    "gt_ complex view of a leaf": lambda lib: lib.tensor(np.ones(2, complex),
                                                         requires_grad=True)[:1].gt_(1.0),
    "resize_": lambda lib: _leaf(lib, -1.0).clone().resize_(0),
    "resize_ to its own shape": lambda lib: _leaf(lib, -1.0).clone().resize_(()),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_in_place_refusals_as_torch(name: str) -> None:
    with pytest.raises(Exception) as theirs:
        REFUSED[name](torch)
    with pytest.raises(Exception) as ours:
        REFUSED[name](E)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


def test_logical_ops_in_place_keep_self_history_and_leaves() -> None:
    # torch records nothing for them: a leaf may be written, a graph tensor keeps its node
    for lib in (E, torch):
        x = _leaf(lib, [1.0, 0.0])
        x.logical_and_(lib.ones(2))
        y = x * 1
        y.logical_or_(lib.zeros(2))
        assert type(y.grad_fn).__name__ == "MulBackward0"


@pytest.mark.parametrize("name", ["acosh_", "asinh_", "atanh_"])
def test_inverse_hyperbolic_in_place_have_no_derivative(name: str) -> None:
    def program(lib: Any) -> None:
        x = lib.tensor([0.5, 0.2], dtype=lib.float64, requires_grad=True)
        y = lib.maximum(x, x)
        getattr(y, name)()
        y.sum().backward()

    with pytest.raises(Exception) as theirs:
        program(torch)
    with pytest.raises(Exception) as ours:
        program(E)
    assert type(ours.value) is type(theirs.value) is NotImplementedError
    assert str(ours.value) == str(theirs.value)


def test_sgn_saves_its_input_and_result() -> None:
    # a write into sgn's result since makes its backward refuse, as torch's sgn_backward
    for lib in (E, torch):
        x = _leaf(lib, 1.0)
        s = x.sgn()
        assert s.grad_fn._saved_result.tolist() == 1.0
        s.xlogy_(True)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            s.sum().backward()


INTEGER_WITH_HISTORY = {
    "promoted by a product": lambda lib, i, j: j * i,
    "promoted by clamp_min": lambda lib, i, j: j.clamp_min(i),
    "promoted by maximum": lambda lib, i, j: lib.maximum(j, i),
    "promoted by where": lambda lib, i, j: lib.where(i > 0, j, i),
    "its own dtype": lambda lib, i, j: i + i,
    "compared": lambda lib, i, j: i < j,
    "floor_divide": lambda lib, i, j: j // i,
    "floor_divide, its own dtype": lambda lib, i, j: i // i,
    "to float": lambda lib, i, j: i * 1.5,
    "cast": lambda lib, i, j: i.long(),
    # values and indices, both integer: refused as one integer output is
    "max with a dim": lambda lib, i, j: i.max(0).values,
    "median with a dim": lambda lib, i, j: i.median(0).values,
    "sort": lambda lib, i, j: i.sort(0).values,
    "argsort (sort's indices)": lambda lib, i, j: i.argsort(0),
    "argmax": lambda lib, i, j: i.argmax(0),
}


@pytest.mark.parametrize("name", list(INTEGER_WITH_HISTORY))
def test_an_integer_tensor_with_a_history_as_an_operand(name: str) -> None:
    """torch promotes inside its kernels, so an op sees the integer operand's history
    whatever dtype it computes in: a differentiable op with an integer result refuses it
    ("Autograd not support dtype"), a comparison or floor_divide records nothing."""
    outcomes = []
    for lib in (E, torch):
        i = lib.tensor(9, dtype=lib.uint8)
        i.greater_(lib.tensor(0.0, requires_grad=True))
        try:
            out = INTEGER_WITH_HISTORY[name](lib, i, lib.tensor(1))
            outcomes.append((out.dtype.is_floating_point, out.requires_grad))
        except RuntimeError as error:
            outcomes.append(str(error))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("name", ["reciprocal", "float", "pow"])
def test_backward_into_an_integer_tensor_with_a_history_raises(name: str) -> None:
    """torch's engine refuses a gradient for an integer input (an internal assert, a
    RuntimeError); Ember refuses it with the same type, naming the dtypes."""
    for lib in (E, torch):
        i = lib.tensor([1, 2])
        x = lib.tensor([1.0, 3.0], requires_grad=True)
        i.ne_(x)
        out = {"reciprocal": lambda: i.reciprocal(), "float": lambda: i.float() * x,
               "pow": lambda: i ** x}[name]()
        with pytest.raises(RuntimeError, match="isDifferentiableType"):
            out.sum().backward()
