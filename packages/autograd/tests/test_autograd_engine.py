"""The engine against torch: accumulation, retain_graph, create_graph, grad(), inputs=,
graph introspection, the errors torch raises, and whole programs (loops, recursion)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from autograd_oracle import E, check, inputs

import ember.autograd
from ember.autograd.graph import AccumulateGrad, Node

M = (3, 4)


class _Ember:
    """ember.core's ops plus ``autograd``: one program text for both frameworks."""

    autograd = ember.autograd

    def __getattr__(self, name: str) -> Any:
        return getattr(E, name)


EMBER = _Ember()


def both(program: Any, shapes: list[tuple[int, ...]], **opts: Any) -> None:
    """Run ``program(m, *leaves)`` in both frameworks; the leaves' ``.grad`` must agree."""
    es, ts = inputs(shapes, **opts)
    re, rt = program(EMBER, *es), program(torch, *ts)
    for a, b in zip(es, ts):
        if b.grad is None:
            assert a.grad is None
        else:
            check(a.grad, b.grad)
    if rt is not None:
        for a, b in zip(re, rt):
            check(a, b)


# ------------------------------------------------------------------------ accumulation

def test_grad_is_none_until_backward_then_accumulates_in_place() -> None:
    (x,), _ = inputs([M])
    assert x.grad is None
    (x * 2).sum().backward()
    first = x.grad
    np.testing.assert_array_equal(np.array(first), 2)
    (x * 3).sum().backward()
    assert x.grad is first
    np.testing.assert_array_equal(np.array(x.grad), 5)
    assert x.grad.grad_fn is None and not x.grad.requires_grad


def test_gradients_of_shared_subexpressions_and_aliases_do_not_alias() -> None:
    (x, y), _ = inputs([M, M])
    (x + y).sum().backward()
    x.grad.zero_()
    np.testing.assert_array_equal(np.array(y.grad), 1)


def test_leaf_grad_has_the_leaf_dtype_with_mixed_dtypes() -> None:
    def program(m: Any, x: Any, y: Any) -> None:
        (x.float() * y).sum().backward()

    both(program, [M, (4,)])


@pytest.mark.parametrize("retain", [True, False])
def test_retain_graph(retain: bool) -> None:
    def program(m: Any, x: Any) -> None:
        z = (x.exp() * x).sum()
        z.backward(retain_graph=retain)
        if retain:
            z.backward()
        else:
            with pytest.raises(RuntimeError, match="backward through the graph a second time"):
                z.backward()

    both(program, [M])


def test_graph_without_saved_tensors_can_run_twice() -> None:
    def program(m: Any, x: Any) -> None:
        z = (x + 1).sum()
        z.backward()
        z.backward()

    both(program, [M])


def test_create_graph_gives_differentiable_grads() -> None:
    def program(m: Any, x: Any) -> list[Any]:
        (g,) = m.autograd.grad((x ** 4).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x, create_graph=True)
        (ggg,) = m.autograd.grad(gg.sum(), x)
        return [g, gg, ggg]

    both(program, [M])


def test_backward_create_graph_leaves_a_differentiable_grad() -> None:
    (x,), _ = inputs([M])
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    (gg,) = ember.autograd.grad(x.grad.sum(), x)
    np.testing.assert_allclose(np.array(gg), 6 * np.array(x.detach()))


# ------------------------------------------------------------------------ grad()

def test_grad_with_grad_outputs_several_outputs_and_non_leaf_inputs() -> None:
    def program(m: Any, x: Any, y: Any) -> list[Any]:
        h = x * y
        a, b = h.exp(), (h * 2).sum(0)
        seeds = [m.ones(3, 4, dtype=x.dtype) * 0.5, m.arange(4, dtype=x.dtype)]
        return list(m.autograd.grad([a, b], [x, h, y], seeds))

    both(program, [M, (4,)])


def test_grad_does_not_touch_dot_grad_and_runs_only_what_it_needs() -> None:
    (x, y), _ = inputs([M, M])
    ran = []
    z = x.exp() * y.sin()
    y.register_hook(lambda g: ran.append("y"))
    ember.autograd.grad(z.sum(), x)
    assert x.grad is None and y.grad is None and ran == []


def test_grad_allow_unused_and_materialize_grads() -> None:
    (x, y), _ = inputs([M, M])
    z = (x * 2).sum()
    with pytest.raises(RuntimeError, match="index 1 appears to not have been used"):
        ember.autograd.grad(z, [x, y], retain_graph=True)
    gx, gy = ember.autograd.grad(z, [x, y], retain_graph=True, allow_unused=True)
    assert gy is None
    gx, gy = ember.autograd.grad(z, [x, y], materialize_grads=True)
    np.testing.assert_array_equal(np.array(gy), 0)
    with pytest.raises(ValueError, match="allow_unused to be True"):
        ember.autograd.grad(z, [x, y], allow_unused=False, materialize_grads=True)


def test_grad_is_grads_batched() -> None:
    def program(m: Any, x: Any) -> list[Any]:
        y = x.exp() * 2
        seeds = m.eye(12, dtype=x.dtype).reshape(12, 3, 4)
        return list(m.autograd.grad(y, x, seeds, is_grads_batched=True))

    both(program, [M])


def test_backward_inputs_accumulates_only_there() -> None:
    def program(m: Any, x: Any, y: Any) -> list[Any]:
        h = x * y
        h.retain_grad()
        (h.exp()).sum().backward(inputs=[y, h])
        return [h.grad]

    both(program, [M, M])


# ------------------------------------------------------------------------ introspection

def test_grad_fn_names_and_next_functions_match_torch() -> None:
    def names(m: Any, x: Any, w: Any) -> list[str]:
        outs = [x + 1, x * x, x - w, x / w, x.exp(), -x, x.sum(), x.sum(1), x.mean(), x.mean(0),
                x ** 2, x ** w, 2 ** x, x @ w.t(), x.view(12), x.reshape(4, 3), x.clone(),
                x.double(), x.max(1)[0], x.amax(), x.abs(), x.relu(), x.tanh(), x.sigmoid(),
                x.softmax(1), x.log_softmax(1), m.cat([x, w]), m.stack([x, w]),
                m.where(x > 0, x, w), x.clamp(0, 1), x.sqrt(), x.expand(2, 3, 4), x.permute(1, 0),
                x.t(), (x * 1).zero_(), (x * 1).fill_(2.0), (x * 1).fill_(w[0, 0])]
        return [type(o.grad_fn).__name__ for o in outs]

    (x, w), (tx, tw) = inputs([M, M])
    assert names(E, x, w) == names(torch, tx, tw)
    y = x * w
    assert y.grad_fn.name() == "MulBackward0" and isinstance(y.grad_fn, Node)
    (acc_x, nx), (acc_w, nw) = y.grad_fn.next_functions
    assert isinstance(acc_x, AccumulateGrad) and acc_x.variable is x and (nx, nw) == (0, 0)
    assert acc_x.name() == "torch::autograd::AccumulateGrad" and acc_x.next_functions == ()
    assert (x * 3).grad_fn.next_functions[0][0] is acc_x
    assert (x + 1).grad_fn.next_functions[1] == (None, 0)
    z = y.exp()
    assert z.grad_fn.next_functions[0][0] is y.grad_fn
    assert x.is_leaf and not y.is_leaf and E.zeros(2).is_leaf


def test_multi_output_nodes_number_their_outputs() -> None:
    def program(m: Any, x: Any) -> list[Any]:
        parts = x.split([1, 3], 1)
        values, indices = x.max(1)
        assert parts[1].grad_fn is parts[0].grad_fn
        assert not indices.requires_grad
        (parts[1].sum() * 2 + values.sum()).backward()
        return [parts[1].output_nr if hasattr(parts[1], "output_nr") else 1]

    both(program, [M])


def test_retain_grad_and_retains_grad() -> None:
    def program(m: Any, x: Any) -> list[Any]:
        y = x * 2
        assert not y.retains_grad and not x.retains_grad
        y.retain_grad()
        x.retain_grad()  # a no-op on leaves
        assert y.retains_grad and not x.retains_grad
        z = (y * y).sum()
        z.backward(retain_graph=True)
        z.backward()
        return [y.grad]

    both(program, [M])


# ------------------------------------------------------------------------ errors

def test_errors_match_torch() -> None:
    (x,), _ = inputs([M])
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar "
                                           "outputs$"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad and "
                                           "does not have a grad_fn$"):
        E.zeros(3).sum().backward()
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        E.zeros(3, dtype=E.int64).requires_grad_()
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of "
                                           r"torch.Size\(\[2\]\) and output\[0\] has a shape of "
                                           r"torch.Size\(\[3, 4\]\)"):
        (x * 2).backward(E.ones(2))
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require"):
        ember.autograd.grad((x * 2).sum(), E.ones(2))
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (x * 2).sum().backward(inputs=[])


def test_modified_saved_tensor_raises_torch_error() -> None:
    (x,), _ = inputs([(3,)], "float32")
    h = x * 2
    z = h * h
    h.add_(1)
    with pytest.raises(RuntimeError) as err:
        z.sum().backward()
    assert str(err.value).startswith(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [3]], which is output 0 of Add, is at version 1; expected "
        "version 0 instead.")
    y = x.exp()
    y.mul_(2)
    with pytest.raises(RuntimeError, match=r"output 0 of Exp, is at version 1; expected version "
                                           "0"):
        y.sum().backward()
    leaf = x.detach().double().requires_grad_()
    z = leaf * leaf
    with ember.autograd.no_grad():
        leaf.add_(1)
    with pytest.raises(RuntimeError, match=r"\[torch.DoubleTensor \[3\]\] is at version 1; "
                                           "expected version 0"):
        z.sum().backward()


# ------------------------------------------------------------------------ zero gradients

ZERO_GRADIENT_PROGRAMS = {
    "sgn then a product": lambda m, x, w: (x * w).sgn().sum().backward(),
    "through the ops after it": lambda m, x, w: (x * w).sgn().exp().flip(0).cumsum(0).sum()
    .backward(),
    "added to a gradient": lambda m, x, w: ((x * w).sgn() + x * w).sum().backward(),
    "beside a gradient": lambda m, x, w: ((x * w).sgn() / x).sum().backward(),
    "through a node that copies it": lambda m, x, w: (x * w).flip(0).sgn().sum()
    .backward(),
    "one output of several": lambda m, x, w: sum(
        o.sgn() * w for o in (x * w).unsqueeze(0).expand(2, 2).unbind(0)).sum().backward(),
    "seen by a hook": lambda m, x, w: _hooked(x * w).sgn().sum().backward(),
    "retained": lambda m, x, w: _retained(x * w).sgn().sum().backward(),
    "autograd.grad": lambda m, x, w: m.autograd.grad((x * w).sgn().sum(), x)[0],
}


def _hooked(t: Any) -> Any:
    t.register_hook(lambda g: print(g))  # it sees zeros, and leaves them zero
    return t


def _retained(t: Any) -> Any:
    t.retain_grad()
    return t


@pytest.mark.parametrize("name", ZERO_GRADIENT_PROGRAMS)
def test_a_zero_gradient_stays_zero_through_saved_nans(name: str, capsys: Any) -> None:
    """sgn's gradient of a real input is torch's efficient zero tensor: the products it
    then meets (``0 * nan``) do not make it NaN, and a leaf, a hook or ``autograd.grad``
    sees plain zeros."""
    grads = []
    for m in (EMBER, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        w = m.tensor([float("nan"), 1.0])
        got = ZERO_GRADIENT_PROGRAMS[name](m, x, w)
        # (torch's leaf keeps the zero tensor itself, which numpy() gives only when forced)
        grads.append((None if x.grad is None else x.grad.numpy(force=True),
                      None if got is None else got.numpy(force=True)))
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)
    printed = capsys.readouterr().out.splitlines()
    assert printed[:len(printed) // 2] == printed[len(printed) // 2:]


def test_a_zero_gradient_still_runs_a_formula_that_refuses_a_bool_operand() -> None:
    for m in (EMBER, torch):
        x = m.tensor(2.0, dtype=m.float64, requires_grad=True)
        y = m.le(x, m.tensor(2.0)).logaddexp(x).sgn()
        with pytest.raises(RuntimeError, match="with a bool tensor is not supported"):
            y.sum().backward()


def test_a_zero_gradient_still_runs_a_node_recorded_without_a_derivative() -> None:
    for m in (EMBER, torch):
        x = m.tensor(0.5, dtype=m.float64, requires_grad=True)
        y = (-3.0 % x).rad2deg_().sgn()  # remainder.Scalar_Tensor has no derivative
        with pytest.raises(RuntimeError, match="derivative for aten::remainder is not"):
            y.sum().backward()


def test_a_zero_gradient_still_checks_the_saved_tensors_it_passes() -> None:
    for m in (EMBER, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        w = m.tensor([3.0, 1.0])
        y = (x * w).sgn()
        w.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


# ------------------------------------------------------------------------ programs

def test_data_dependent_loop() -> None:
    def program(m: Any, x: Any, w: Any) -> list[Any]:
        h, steps = x, 0
        while float(h.norm()) < 50 and steps < 20:
            h = (h @ w).tanh() * 3 + h
            steps += 1
        loss = h.sum() * steps
        loss.backward()
        return [loss]

    both(program, [(2, 4), (4, 4)])


def test_recursion_and_branches() -> None:
    def power_tower(m: Any, x: Any, depth: int) -> Any:
        if depth == 0:
            return x
        inner = power_tower(m, x, depth - 1)
        return inner.sin() * x if depth % 2 else inner * inner + x

    def program(m: Any, x: Any) -> list[Any]:
        loss = power_tower(m, x, 5).sum()
        loss.backward()
        return [loss]

    both(program, [M])


def test_rnn_writing_into_a_preallocated_buffer() -> None:
    def program(m: Any, x: Any, w: Any) -> list[Any]:
        out = m.zeros(5, 4, dtype=x.dtype)
        h = x
        for t in range(5):
            h = (h @ w).tanh()
            out[t] = h
        loss = (out * out).sum()
        loss.backward()
        return [out]

    both(program, [(4,), (4, 4)])


def test_in_place_ops_in_a_graph() -> None:
    def program(m: Any, x: Any, y: Any) -> list[Any]:
        a = x * 1
        a.add_(y)
        a.exp_()
        b = y * 2
        b[0].mul_(3)
        b[:, 1].zero_()
        c = x.clone()
        c.fill_(2.0)
        loss = a.sum() + (b * b).sum() + (c * x).sum()
        loss.backward()
        return [a, b, loss]

    both(program, [M, M])


def test_in_place_on_leaf_and_view_of_leaf_refused() -> None:
    (x,), _ = inputs([M])
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used "
                                           "in an in-place operation.$"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad is "
                                           "being used in an in-place operation.$"):
        x[0].mul_(2)
    with ember.autograd.no_grad():
        x.add_(1)  # allowed without grad mode (optimizer updates)
    x.detach().zero_()  # a detached alias is not in the graph
    np.testing.assert_array_equal(np.array(x.detach()), 0)


LEAF_WRITES_WITH_BAD_ARGUMENTS = [  # in-place ops whose own checks fail too
    lambda m, x: x.index_copy_(-1, m.zeros(0, dtype=m.int64), m.ones((), dtype=m.float64)),
    lambda m, x: x.index_add_(0, m.zeros(2, 2, dtype=m.int64), m.ones(2, dtype=m.float32)),
    lambda m, x: x.index_fill_(0, m.tensor([0], dtype=m.int32), 1.0),
    lambda m, x: x.scatter_(0, m.zeros(1, dtype=m.int64), m.ones(1, dtype=m.float64)),
    lambda m, x: x.bitwise_not_(),  # a kernel without float loops
    lambda m, x: x.copy_(x),  # copy_ of self returns at once, after autograd's check
    lambda m, x: x.fill_(m.ones(2)),  # a value that is not 0-d
    lambda m, x: x.exponential_(-1.0),  # the samplers' own argument checks
    lambda m, x: x.uniform_(2.0, 1.0),
    lambda m, x: x.random_(5, 2),
    lambda m, x: x.bernoulli_(2.0),
    lambda m, x: x.to(m.complex64).detach().requires_grad_().geometric_(0.5),  # their dtypes
    lambda m, x: x.to(m.complex64).detach().requires_grad_().cauchy_(),
    lambda m, x: x.to(m.complex64).detach().requires_grad_().logit_(),
]


@pytest.mark.parametrize("case", range(len(LEAF_WRITES_WITH_BAD_ARGUMENTS)))
def test_in_place_on_leaf_refused_before_the_ops_checks(case: int) -> None:
    # torch's autograd refuses the write before the op checks its arguments
    fn = LEAF_WRITES_WITH_BAD_ARGUMENTS[case]
    message = "a leaf Variable that requires grad is being used in an in-place operation."
    with pytest.raises(RuntimeError, match=message):
        fn(torch, torch.tensor(1.0, requires_grad=True))
    with pytest.raises(RuntimeError, match=message):
        fn(E, E.tensor(1.0, requires_grad=True))


WRITES_INTO_VIEWS_OF_LEAVES = [  # in-place ops into views of leaves whose own checks fail too
    lambda m, x: x.expand(3).exp_(),  # the written memory is shared
    lambda m, x: x.expand(3).bitwise_not_(),
    lambda m, x: x.expand(3).add_(m.ones(2)),
]


@pytest.mark.parametrize("case", range(len(WRITES_INTO_VIEWS_OF_LEAVES)))
def test_in_place_on_view_of_leaf_refused_before_the_ops_checks(case: int) -> None:
    fn = WRITES_INTO_VIEWS_OF_LEAVES[case]
    message = "a view of a leaf Variable that requires grad is being used in an in-place"
    with pytest.raises(RuntimeError, match=message):
        fn(torch, torch.ones(1, requires_grad=True))
    with pytest.raises(RuntimeError, match=message):
        fn(E, E.ones(1, requires_grad=True))


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_logical_not_in_place_writes_leaves(dtype: str) -> None:
    # torch's autograd records nothing of logical_not_ (as of logical_and_): no refusal
    for m in (torch, E):
        x = m.tensor([1.0, 0.0], dtype=getattr(m, dtype), requires_grad=True)
        assert x.logical_not_() is x
        assert x.requires_grad and x.grad_fn is None
        np.testing.assert_array_equal(x.detach().numpy(), [0, 1])
        view = m.tensor([1.0, 0.0], requires_grad=True)[:1]
        view.logical_not_()  # nor of views of leaves
        assert view.grad_fn is not None


def test_in_place_abs_of_a_complex_leaf_refused_as_a_leaf_write() -> None:
    message = "a leaf Variable that requires grad is being used in an in-place operation."
    for m in (torch, E):
        with pytest.raises(RuntimeError, match=message):
            m.ones(2, dtype=m.complex64, requires_grad=True).abs_()


# programs whose gradient's layout follows the ops they ran, not the leaf's
_GRAD_LAYOUTS = {
    "transposed product": lambda m, x: (x.t() * 2).sum(),
    "transposed exp": lambda m, x: x.t().exp().sum(),
    "permuted": lambda m, x: x.reshape(2, 3, 2).permute(2, 0, 1).sin().sum(),
    "expanded": lambda m, x: x[:, :1].expand(3, 4).sum(),
    "sum": lambda m, x: x.sum(),
    "softmax of the transpose": lambda m, x: x.t().softmax(0)[0].sum(),
    "cumsum of the transpose": lambda m, x: x.t().cumsum(0).sum(),
    "sort of the transpose": lambda m, x: x.t().sort(0)[0][0].sum(),
    "cast of the transpose": lambda m, x: x.t().float().sum(),
}


@pytest.mark.parametrize("leaf", ["row-major", "transposed"])
@pytest.mark.parametrize("name", sorted(_GRAD_LAYOUTS))
def test_gradient_layouts_as_torch(name: str, leaf: str) -> None:
    """``autograd.grad`` returns the gradient as the formulas laid it out; ``.grad`` obeys
    torch's layout contract (the leaf's strides where it is dense, else row-major)."""
    program = _GRAD_LAYOUTS[name]
    got = []
    for m in (EMBER, torch):
        base = m.arange(12., dtype=m.float64)
        x = (base.reshape(3, 4) if leaf == "row-major" else
             base.reshape(4, 3).t()).detach().requires_grad_()
        y = program(m, x)
        (g,) = m.autograd.grad(y, x, retain_graph=True)
        y.backward()
        got.append([(tuple(t.stride()), t.is_contiguous()) for t in (g, x.grad)])
    assert got[0] == got[1]


# A differentiable op whose result is an integer or bool tensor while an operand requires
# grad: torch refuses to record it ("Autograd not support dtype"), except a cast, which
# leaves the graph. An integer tensor gets history from an in-place comparison.
_INTEGER_RESULTS = {
    "sum to int": lambda m, x, i: x.sum(dtype=m.int64),
    "cumsum to int": lambda m, x, i: x.cumsum(0, dtype=m.int64),
    "cast to int": lambda m, x, i: x.to(m.int64),
    "add": lambda m, x, i: i + 1,
    "view": lambda m, x, i: i.view(2),
    "getitem": lambda m, x, i: i[0],
    "clone": lambda m, x, i: i.clone(),
    "sum": lambda m, x, i: i.sum(),
    "cast to float": lambda m, x, i: i.double(),
    "times a float": lambda m, x, i: i * 1.5,
    "comparison": lambda m, x, i: i == 1,
    "detach": lambda m, x, i: i.detach(),
}


@pytest.mark.parametrize("case", sorted(_INTEGER_RESULTS))
def test_differentiable_ops_refuse_integer_results(case: str) -> None:
    outcomes = []
    for m in (torch, E):
        x = m.ones(2, dtype=m.float64, requires_grad=True)
        i = m.tensor([1, 2])
        i.ne_(x)
        try:
            r = _INTEGER_RESULTS[case](m, x, i)
            outcomes.append(("ok", r.dtype.__repr__().split(".")[-1], r.requires_grad))
        except RuntimeError as e:
            outcomes.append(("RuntimeError", str(e)))
    assert outcomes[0] == outcomes[1]


_HOLOMORPHIC = {
    "mul": lambda L, z, w: z * w,
    "div": lambda L, z, w: z / w,
    "exp, log": lambda L, z, w: (z.exp() + w).log(),
    "matmul": lambda L, z, w: z.reshape(2, 2) @ w.reshape(2, 2),
    "real by complex": lambda L, z, w: z.abs() * w,
    "second order": lambda L, z, w: _autograd(L).grad((z * w).exp().abs().sum(), z,
                                                      create_graph=True)[0] * w,
}


def _autograd(L: Any) -> Any:
    return torch.autograd if L is torch else ember.autograd


@pytest.mark.parametrize("case", list(_HOLOMORPHIC))
def test_complex_gradients_are_conjugated_as_torchs(case):
    """torch's VJP of a holomorphic op is the gradient times the conjugate derivative: the
    engine conjugates around formulas written without it."""
    grads = []
    for L in (E, torch):
        z = L.tensor([1 + 2j, 3 - 1j, -0.5j, 2.0], requires_grad=True)
        w = L.tensor([2 - 1j, 1 + 1j, 0.5 + 0.5j, -1j], requires_grad=True)
        _HOLOMORPHIC[case](L, z, w).abs().sum().backward()
        grads.append([np.asarray(z.grad), np.asarray(w.grad)])
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)


def test_complex_of_parts_passes_each_part_its_gradients_part():
    grads = []
    for L in (E, torch):
        x = L.tensor([2.0, -1.0], requires_grad=True)
        y = L.tensor([0.5, 3.0], requires_grad=True)
        (L.complex(x, y) * L.tensor([1 + 2j, 3 - 1j])).abs().sum().backward()
        grads.append([np.asarray(x.grad), np.asarray(y.grad)])
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_a_promoted_operand_links_its_node_to_the_operand_itself():
    """torch's kernels promote inside: the node's edge is the real leaf's AccumulateGrad,
    with no cast node between (an explicit ``.to`` keeps its ToCopyBackward0)."""
    for L in (E, torch):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        promoted = x * L.ones(2, dtype=L.float64)
        assert type(promoted.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"
        cast = x.to(L.float64) * L.ones(2, dtype=L.float64)
        assert type(cast.grad_fn.next_functions[0][0]).__name__ == "ToCopyBackward0"
        promoted.sum().backward()
        assert x.grad.dtype == L.float32


_NOT_REAL_PARTS = {
    "where": lambda L, x, z: L.where(L.tensor([True, False]), x, z),
    "logaddexp": lambda L, x, z: L.logaddexp(z, x),
    "lerp by a real weight": lambda L, x, z: z.lerp(z * 2, x[0]),
    "sum to complex": lambda L, x, z: x.sum(dtype=L.complex64) * z,
    "fill_ with a 0-d tensor": lambda L, x, z: z.clone().fill_(x[0]),
}


@pytest.mark.parametrize("case", list(_NOT_REAL_PARTS))
def test_formulas_that_take_no_real_part_refuse_a_complex_gradient_into_a_real_input(case):
    """(``copy_`` of a real tensor takes the real part instead, as torch's does: below.)"""
    for L in (E, torch):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        out = _NOT_REAL_PARTS[case](L, x, L.tensor([1 + 1j, 2j]))
        with pytest.raises(RuntimeError, match="input_is_complex == grad_is_complex"):
            out.abs().sum().backward()


def test_copy_of_a_real_tensor_into_a_complex_one_takes_its_gradients_real_part():
    grads = []
    for L in (E, torch):
        x = L.tensor([1.0, -2.0, 3.0], requires_grad=True)
        z = L.zeros(3, dtype=L.complex64).copy_(x)
        (z * L.tensor([1 + 2j, 3 - 1j, 2j])).abs().sum().backward()
        grads.append(np.asarray(x.grad))
    np.testing.assert_allclose(*grads, rtol=1e-6)


@pytest.mark.parametrize("exponent_dtype", ["float32", "float64"])
def test_float_power_converts_its_operands_with_copies_of_their_own(exponent_dtype):
    """torch's float_power is pow of ``.to(float64)`` conversions: a float32 operand's is a
    copy (written in place after, the operand leaves the backward alone, and the graph holds a
    ToCopyBackward0), a float64 one is the operand itself (a write into it refuses)."""
    outcomes = []
    for L in (E, torch):
        x = L.tensor([-1.0, 2.0], requires_grad=True)
        e = L.tensor([1.0, 3.0], dtype=getattr(L, exponent_dtype))
        y = L.float_power(x, e)
        names = [type(f).__name__ for f, _ in y.grad_fn.next_functions if f is not None]
        e.abs_()
        try:
            y.sum().backward()
            outcomes.append((names, np.asarray(x.grad).tolist()))
        except RuntimeError as error:
            outcomes.append((names, "modified by an inplace operation" in str(error)))
    assert outcomes[0] == outcomes[1]


def test_a_node_no_gradient_reaches_still_checks_its_saved_tensors():
    """norm(p=0) passes no gradient on; torch still runs the node before it, which unpacks
    (and so checks) what it saved: a write into exp's result since refuses the backward."""
    for L in (E, torch):
        x = L.tensor([[1.0, 2.0], [0.0, 3.0]], dtype=L.float64, requires_grad=True)
        y = x.exp()
        y.add_(1)  # written after exp saved it, before the norm reads it
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            L.norm(y, 0).backward()
        L.norm(x.exp(), 0).backward()
        assert x.grad is None
