"""gradcheck and gradgradcheck: they pass correct gradients and catch wrong ones, like
torch's."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from autograd_oracle import E, inputs

import ember.autograd
from ember.autograd import GradcheckError, gradcheck, gradgradcheck


def _wrong_backward(autograd: Any) -> Any:
    class Doubled(autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * 3

    return Doubled


def _first_order_only(autograd: Any) -> Any:
    class Square(autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (x,) = ctx.saved_tensors
            return grad * 2 * x.detach()  # right value, but no second derivative

    return Square


def test_correct_gradients_pass() -> None:
    (x, y), _ = inputs([(3, 4), (4,)])
    assert gradcheck(lambda a, b: (a * b).exp(), (x, y))
    assert gradcheck(lambda a, b: (a.sum(0), a @ b), (x, y))  # several outputs
    assert gradcheck(lambda a, b: (a * b).tanh(), (x, y), fast_mode=True)
    assert gradgradcheck(lambda a, b: (a * b).sin(), (x, y))


@pytest.mark.parametrize("fast_mode", [False, True])
def test_wrong_gradients_fail_like_torch(fast_mode: bool) -> None:
    (x,), (tx,) = inputs([(3,)])
    for check, fn, leaf in ((gradcheck, _wrong_backward(ember.autograd).apply, x),
                            (torch.autograd.gradcheck, _wrong_backward(torch.autograd).apply,
                             tx)):
        with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to "
                                               "input 0"):
            check(fn, (leaf,), fast_mode=fast_mode)
        assert check(fn, (leaf,), raise_exception=False, fast_mode=fast_mode) is False
    with pytest.raises(GradcheckError):
        gradcheck(_wrong_backward(ember.autograd).apply, (x,))


def test_wrong_second_derivative_fails_like_torch() -> None:
    (x,), (tx,) = inputs([(3,)])
    assert gradcheck(_first_order_only(ember.autograd).apply, (x,))
    for check, fn, leaf in ((gradgradcheck, _first_order_only(ember.autograd).apply, x),
                            (torch.autograd.gradgradcheck, _first_order_only(torch.autograd).apply,
                             tx)):
        assert check(fn, (leaf,), raise_exception=False) is False


def test_argument_errors_and_warnings() -> None:
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda a: a * 2, (E.ones(2, dtype=E.float64),))
    x = E.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="is not a double precision"):
        gradcheck(lambda a: a * 2, (x,), raise_exception=False)
