"""Custom ops (``ember.library``) written as torch's custom-op tutorial writes them: eager,
on meta tensors, with backward, seen by dispatch modes, and kernels replaced per device."""

import itertools

import numpy as np
import pytest
import torch
from autograd_oracle import TOP, check

import ember.core as E
import ember.library as library
from ember.core.dispatch import REGISTRY
from ember.core.dispatch_modes import PrimitiveNames

_names = itertools.count()


def numpy_sin_op(m, lib_module, ns):
    """The tutorial's op, defined against ``m`` (torch or Ember's namespace)."""
    Tensor = m.Tensor

    @lib_module.custom_op(f"{ns}::numpy_sin", mutates_args=())
    def numpy_sin(x: Tensor) -> Tensor:
        x_np = x.cpu().numpy()
        y_np = np.sin(x_np)
        return m.from_numpy(y_np).to(device=x.device)

    @numpy_sin.register_fake
    def _(x):
        return m.empty_like(x)

    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos()

    numpy_sin.register_autograd(backward, setup_context=setup_context)
    return numpy_sin


@pytest.fixture
def ns():
    return f"tutorial{next(_names)}"


def test_eager_and_backward_match_torch(ns):
    ours, theirs = numpy_sin_op(TOP, library, ns), numpy_sin_op(torch, torch.library, ns)
    data = np.random.default_rng(0).standard_normal((3, 4))
    x, tx = E.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    y, ty = ours(x), theirs(tx)
    check(y, ty)
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
    y.sum().backward()
    ty.sum().backward()
    check(x.grad, tx.grad)


def test_meta_tensors_use_the_fake_rule(ns):
    op = numpy_sin_op(TOP, library, ns)
    x = E.ones(3, 4).t().to("meta")
    y = op(x)
    assert y.is_meta and tuple(y.shape) == (4, 3) and y.stride() == (1, 4)


def test_it_goes_through_the_door(ns):
    op = numpy_sin_op(TOP, library, ns)
    x = E.ones(2, requires_grad=True)
    with PrimitiveNames() as seen:
        op(x).sum().backward()
    assert f"{ns}::numpy_sin" in seen.names
    assert library.ops.__getattr__(ns).numpy_sin is REGISTRY[f"{ns}::numpy_sin"]


def test_opcheck(ns):
    op = numpy_sin_op(TOP, library, ns)
    result = library.opcheck(op, (E.ones(3),))
    assert set(result.values()) == {"SUCCESS"}


def test_register_kernel_for_a_device(ns):
    op = numpy_sin_op(TOP, library, ns)

    @op.register_kernel("cpu")
    def _(x):
        return x * 0 + 7

    np.testing.assert_array_equal(np.asarray(op(E.ones(2))), [7.0, 7.0])


def test_library_impl_replaces_a_builtin_kernel_for_one_device():
    lib = library.Library("aten", "IMPL")
    lib.impl("exp", lambda x: x * 0 - 1, "CPU")
    try:
        np.testing.assert_array_equal(np.asarray(E.exp(E.zeros(2))), [-1.0, -1.0])
    finally:
        lib._destroy()
    np.testing.assert_array_equal(np.asarray(E.exp(E.zeros(2))), [1.0, 1.0])


def test_define_and_impl_from_a_schema(ns):
    lib = library.Library(ns, "DEF")
    lib.define("scale(Tensor x, float alpha=2.0) -> Tensor")
    lib.impl("scale", lambda x, alpha: x * alpha, "CompositeExplicitAutograd")
    try:
        out = library.ops.__getattr__(ns).scale(E.ones(2), alpha=3.0)
        np.testing.assert_array_equal(np.asarray(out), [3.0, 3.0])
    finally:
        lib._destroy()
    assert f"{ns}::scale" not in REGISTRY
