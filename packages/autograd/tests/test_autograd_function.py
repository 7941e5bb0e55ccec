"""``ember.autograd.Function`` against ``torch.autograd.Function``: the same class body,
defined once per framework, must give the same outputs, gradients and errors."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from autograd_oracle import E, check, inputs

import ember.autograd

M = (3, 4)


def define(autograd: Any, m: Any) -> dict[str, Any]:
    """The same custom Functions, written against one framework's ``autograd`` and ops."""
    Function, once = autograd.Function, autograd.function.once_differentiable

    class Exp(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (y,) = ctx.saved_tensors
            return grad * y

    class ScaledMul(Function):
        @staticmethod
        def forward(ctx: Any, x: Any, y: Any, scale: float) -> Any:
            ctx.save_for_backward(x, y)
            ctx.scale = scale
            ctx.seen = ctx.needs_input_grad
            return x * y * scale

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            x, y = ctx.saved_tensors
            assert ctx.seen == ctx.needs_input_grad
            gx = grad * y * ctx.scale if ctx.needs_input_grad[0] else None
            gy = grad * x * ctx.scale if ctx.needs_input_grad[1] else None
            return gx, gy, None

    class Cube(Function):  # the setup_context style
        @staticmethod
        def forward(x: Any) -> Any:
            return x ** 3

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (x,) = ctx.saved_tensors
            return grad * 3 * x * x

    class MaxWithIndex(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            values, indices = x.max(1)
            ctx.mark_non_differentiable(indices)
            ctx.save_for_backward(indices)
            ctx.shape = x.shape
            return values, indices

        @staticmethod
        def backward(ctx: Any, grad_values: Any, grad_indices: Any) -> Any:
            (indices,) = ctx.saved_tensors
            return m.zeros(ctx.shape, dtype=grad_values.dtype).scatter(
                1, indices.unsqueeze(1), grad_values.unsqueeze(1))

    class Split(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx: Any, ga: Any, gb: Any) -> Any:
            total = 0
            if ga is not None:
                total = total + ga * 2
            if gb is not None:
                total = total + gb * 3
            return total

    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad

    class Identity(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * 2

    class OnceExp(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        @once
        def backward(ctx: Any, grad: Any) -> Any:
            (y,) = ctx.saved_tensors
            return grad * y

    class TooMany(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 1

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad, grad

    return {k: v for k, v in locals().items() if isinstance(v, type)}


EMBER_FNS = define(ember.autograd, E)
TORCH_FNS = define(torch.autograd, torch)


def both(program: Any, shapes: list[tuple[int, ...]]) -> None:
    es, ts = inputs(shapes)
    re, rt = program(EMBER_FNS, E, *es), program(TORCH_FNS, torch, *ts)
    for a, b in zip(re, rt):
        check(a, b)
    for a, b in zip(es, ts):
        if b.grad is None:
            assert a.grad is None
        else:
            check(a.grad, b.grad)


def test_save_for_backward_of_an_output_and_names() -> None:
    def program(fns: Any, m: Any, x: Any) -> list[Any]:
        y = fns["Exp"].apply(x * 1)
        assert type(y.grad_fn).__name__ == "ExpBackward" and y.grad_fn.name() == "ExpBackward"
        (y * y).sum().backward()
        return [y]

    both(program, [M])


def test_non_tensor_arguments_and_needs_input_grad() -> None:
    def program(fns: Any, m: Any, x: Any, y: Any) -> list[Any]:
        out = fns["ScaledMul"].apply(x, y.detach(), 2.5)
        out.sum().backward()
        return [out]

    both(program, [M, M])


def test_setup_context_style() -> None:
    def program(fns: Any, m: Any, x: Any) -> list[Any]:
        out = fns["Cube"].apply(x)
        out.sum().backward()
        return [out]

    both(program, [M])


def test_mark_non_differentiable_and_materialized_grads() -> None:
    def program(fns: Any, m: Any, x: Any) -> list[Any]:
        values, indices = fns["MaxWithIndex"].apply(x)
        assert not indices.requires_grad and values.requires_grad
        values.sum().backward()
        return [values, indices]

    both(program, [M])


def test_set_materialize_grads_false_gives_none() -> None:
    def program(fns: Any, m: Any, x: Any) -> list[Any]:
        a, b = fns["Split"].apply(x)
        b.sum().backward()
        return [a, b]

    both(program, [M])


def test_mark_dirty_and_inputs_returned_as_is() -> None:
    def program(fns: Any, m: Any, x: Any) -> list[Any]:
        h = x * 1
        out = fns["AddOneInPlace"].apply(h)
        assert out is h and h.grad_fn.name() == "AddOneInPlaceBackward"
        same = fns["Identity"].apply(x)
        assert same is not x and same.grad_fn is not None
        (out.sum() + same.sum()).backward()
        return [out, same]

    both(program, [M])
    (x,), _ = inputs([M])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        EMBER_FNS["AddOneInPlace"].apply(x)


def test_double_backward_through_a_function_and_once_differentiable() -> None:
    def program(fns: Any, m: Any, x: Any) -> list[Any]:
        autograd = torch.autograd if m is torch else ember.autograd
        (g,) = autograd.grad(fns["Exp"].apply(x).sum(), x, create_graph=True)
        (gg,) = autograd.grad(g.sum(), x)
        return [g, gg]

    both(program, [M])
    for fns, autograd, m in ((EMBER_FNS, ember.autograd, E), (TORCH_FNS, torch.autograd, torch)):
        x = m.ones(3, requires_grad=True)
        seed = m.ones(3, requires_grad=True)  # backward differentiates only through this
        (g,) = autograd.grad(fns["OnceExp"].apply(x), x, seed, create_graph=True)
        assert g.requires_grad
        with pytest.raises(RuntimeError, match="trying to differentiate twice a function that "
                                               "was marked with @once_differentiable"):
            g.sum().backward()


def test_errors_match_torch() -> None:
    for fns, m in ((EMBER_FNS, E), (TORCH_FNS, torch)):
        x = m.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match=r"function TooManyBackward returned an incorrect "
                                               r"number of gradients \(expected 1, got 2\)"):
            fns["TooMany"].apply(x).sum().backward()
        h = x * 1
        y = fns["ScaledMul"].apply(h, h, 1.0)
        with m.no_grad() if m is torch else ember.autograd.no_grad():
            h.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        y = fns["Exp"].apply(x)
        y.sum().backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.sum().backward()
        assert not fns["Exp"].apply(m.ones(2)).requires_grad


def test_gradcheck_of_a_custom_function() -> None:
    (x, y), _ = inputs([M, M])
    assert ember.autograd.gradcheck(lambda a, b: EMBER_FNS["ScaledMul"].apply(a, b, 0.5), (x, y))
    assert ember.autograd.gradgradcheck(EMBER_FNS["Exp"].apply, (x,))


def test_a_complex_gradient_into_a_real_input_is_refused():
    """The engine takes no real part of what a custom Function's backward gives a real
    input: torch's engine refuses a complex gradient there."""
    for autograd, m in ((ember.autograd, E), (torch.autograd, torch)):
        class Twice(autograd.Function):
            @staticmethod
            def forward(ctx: Any, a: Any) -> Any:
                return a * 2

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g * (1 + 1j)

        x = m.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="input_is_complex == grad_is_complex"):
            Twice.apply(x).sum().backward()
