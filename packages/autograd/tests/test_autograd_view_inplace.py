"""Views and in-place writes under autograd, as torch: a write into a storage (through its
base or any view of it) renews the history of every view of it read afterwards
(``AsStridedBackward0`` over the base's new history), and a base that comes to require
grad through a write makes its existing views require grad too."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
import torch
from autograd_oracle import E, compare_grads

import ember.autograd as ag


def _base_written(m: Any, x: Any) -> Any:
    b = x * 1
    v = b[0:2]
    b.mul_(3)
    return v


def _view_written_sibling_read(m: Any, x: Any) -> Any:
    b = x * 1
    left, right = b[:, :3], b[:, 2:]
    left.mul_(2)
    return right.exp()


def _view_of_view(m: Any, x: Any, w: Any) -> Any:
    buf = m.zeros(3, 4, dtype=m.float64)
    rows = buf[1:]
    cell = rows[:, 1:3]
    buf[:2].add_(w)
    return cell * 2


def _expanded(m: Any, x: Any) -> Any:
    b = x * 1
    e = b[:1].expand(3, 4)
    b.mul_(x)
    return e


def _written_twice(m: Any, x: Any, w: Any) -> Any:
    b = x * 1
    v = b.t()
    b[0].copy_(w[0])
    v.sin_()
    b[1:].mul_(2)
    return v + b.t()


def _stale_view_written(m: Any, x: Any) -> Any:
    b = x * 1
    v = b[1]
    b.mul_(2)
    v.pow_(2)
    return b


def _no_grad_write(m: Any, x: Any) -> Any:
    b = x * 1
    v = b[:, 1]
    with m.no_grad():
        b.add_(1)
    return v * b[:, 1]


def _leaf_written_without_grad(m: Any, x: Any) -> Any:
    v = x[1:]
    with m.no_grad():
        x.mul_(1)
    return v.exp()


PROGRAMS = {
    "base_written": (_base_written, [(3, 4)]),
    "view_written_sibling_read": (_view_written_sibling_read, [(3, 4)]),
    "view_of_view": (_view_of_view, [(3, 4), (2, 4)]),
    "expanded": (_expanded, [(3, 4)]),
    "written_twice": (_written_twice, [(3, 4), (3, 4)]),
    "stale_view_written": (_stale_view_written, [(3, 4)]),
    "no_grad_write": (_no_grad_write, [(3, 4)]),
    "leaf_written_without_grad": (_leaf_written_without_grad, [(3, 4)]),
}


def _torch_like(m: Any) -> Any:
    return torch if m is torch else _EmberTop


class _EmberTop:
    zeros = staticmethod(E.zeros)
    float64 = E.float64
    no_grad = ag.no_grad


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_grads_match_torch(name: str) -> None:
    fn, shapes = PROGRAMS[name]
    compare_grads(lambda m, *xs: fn(_torch_like(m), *xs), shapes)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_second_order_matches_torch(name: str) -> None:
    fn, shapes = PROGRAMS[name]

    def squared_grad(m: Any, *xs: Any) -> Any:
        out = fn(_torch_like(m), *xs)
        grads = (torch.autograd if m is torch else ag).grad(
            (out * out).sum(), xs, create_graph=True, allow_unused=True)
        return sum(g.sum() for g in grads if g is not None)

    compare_grads(squared_grad, shapes)


def _names(lib: Any, autograd: Any) -> list[str]:
    x = lib.ones(3, dtype=lib.float64, requires_grad=True)
    b = x * 1
    v, w = b[:2], b[1:]
    names = [type(v.grad_fn).__name__]
    b.mul_(2)
    names += [type(v.grad_fn).__name__, type(v.grad_fn.next_functions[0][0]).__name__]
    w.add_(1)
    names += [type(b.grad_fn).__name__, type(v.grad_fn).__name__,
              type(w.grad_fn.next_functions[0][0]).__name__]
    return names


def test_renewed_histories_are_named_as_torch() -> None:
    ours = _names(E, ag)
    theirs = _names(torch, torch.autograd)
    assert ours[1:] == theirs[1:]  # the view's first node: torch's SliceBackward0


def test_views_of_a_base_that_comes_to_require_grad_require_grad() -> None:
    for lib in (E, torch):
        buf = lib.zeros(4, dtype=lib.float64)
        left, middle, inner = buf[:2], buf[1:3], buf[1:3][1:]
        detached = buf.detach()
        left.mul_(lib.ones(2, dtype=lib.float64, requires_grad=True))
        assert (middle.requires_grad, inner.requires_grad, detached.requires_grad,
                buf.requires_grad) == (True, True, False, True), lib


def test_a_stale_view_is_a_root_of_backward() -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        b = x * 1
        v = b[1:]
        b.mul_(x)
        v.backward(lib.tensor([1.0, 10.0], dtype=lib.float64))
        return x.grad.tolist()

    assert run(E) == run(torch)


def test_a_detached_view_written_in_place_leaves_its_base_out_of_the_graph() -> None:
    for lib in (E, torch):
        base = lib.ones(3, dtype=lib.float64)
        d = base.detach()
        d.mul_(lib.ones(3, dtype=lib.float64, requires_grad=True))
        assert (d.requires_grad, base.requires_grad, base.grad_fn) == (True, False, None), lib


def _unbind_written(lib: Any) -> None:
    a, _ = (lib.ones(2, 3, requires_grad=True) * 1).unbind(0)
    a.mul_(2)


def _chunk_written(lib: Any) -> None:
    a, _ = (lib.ones(4, requires_grad=True) * 1).chunk(2)
    a.add_(1)


def _split_base_written(lib: Any) -> None:
    x = lib.ones(4, requires_grad=True) * 1
    a, _ = x.split(2)
    x.mul_(2)
    a.exp()


def _unbind_of_plain_tensor_written(lib: Any) -> None:
    a, _ = lib.ones(2, 3).unbind(0)
    a.mul_(lib.ones(3, requires_grad=True))


def _no_grad_view_written(lib: Any) -> None:
    x = lib.ones(3, requires_grad=True) * 1
    with (torch if lib is torch else ag).no_grad():
        v = x[:2]
    v.mul_(2)


def _no_grad_view_of_written_base(lib: Any) -> None:
    x = lib.ones(3, requires_grad=True) * 1
    with (torch if lib is torch else ag).no_grad():
        v = x[:2]
    x.mul_(2)
    v.grad_fn  # noqa: B018 - reading the history is what torch refuses


REFUSED = {
    "unbind_written": _unbind_written,
    "chunk_written": _chunk_written,
    "split_base_written": _split_base_written,
    "unbind_of_plain_tensor_written": _unbind_of_plain_tensor_written,
    "no_grad_view_written": _no_grad_view_written,
    "no_grad_view_of_written_base": _no_grad_view_of_written_base,
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_views_whose_history_cannot_be_rewritten_refuse_writes_as_torch(name: str) -> None:
    with pytest.raises(RuntimeError) as theirs:
        REFUSED[name](torch)
    with pytest.raises(RuntimeError) as ours:
        REFUSED[name](E)
    assert str(ours.value) == str(theirs.value)


def test_multi_output_views_are_written_without_grad_mode() -> None:
    for lib, no_grad in ((E, ag.no_grad), (torch, torch.no_grad)):
        a, b = (lib.ones(2, 3, requires_grad=True) * 1).unbind(0)
        with no_grad():
            a.add_(1)
        assert a.tolist() == [2.0, 2.0, 2.0], lib


def test_a_no_grad_view_requires_grad_but_passes_no_gradient_on() -> None:
    def run(lib: Any, no_grad: Any) -> Any:
        leaf = lib.ones(3, requires_grad=True)
        x = leaf * 1
        with no_grad():
            v = x[:2]
        out = (v * 2).sum()
        out.backward()
        return v.requires_grad, v.is_leaf, out.requires_grad, v.grad, leaf.grad

    assert run(E, ag.no_grad) == run(torch, torch.no_grad)


def _leaf(lib: Any, n: int = 3) -> Any:
    return lib.arange(1.0, n + 1, dtype=lib.float64).requires_grad_()


def _no_grad_of(lib: Any) -> Any:
    return torch.no_grad if lib is torch else ag.no_grad


def _result_modified(lib: Any) -> Any:
    x = _leaf(lib)
    y = x.sigmoid()
    y.mul_(2)
    y.sum().backward()
    return x.grad


def _result_modified_through_a_view(lib: Any) -> Any:
    x = _leaf(lib)
    y = x.exp()
    y[0].mul_(2)
    y.sum().backward()
    return x.grad


def _input_modified_through_a_view(lib: Any) -> Any:
    x = _leaf(lib)
    b = x * 1
    c = b * b
    b[1:].add_(1)
    c.sum().backward()
    return x.grad


def _input_modified_by_setitem(lib: Any) -> Any:
    x = _leaf(lib)
    y = x.sin()
    z = y * y
    y[0] = 5
    z.sum().backward()
    return x.grad


def _leaf_modified_without_grad(lib: Any) -> Any:
    x = _leaf(lib)
    y = x * x
    with _no_grad_of(lib)():
        x.mul_(2)
    y.sum().backward()
    return x.grad


def _modified_twice(lib: Any) -> Any:
    x = _leaf(lib)
    y = x.exp()
    z = y.sin()
    y.add_(1)
    y.add_(1)
    z.sum().backward()
    return x.grad


def _clone_modified(lib: Any) -> Any:
    x = _leaf(lib)
    y = x.clone()
    z = y.exp()
    y.add_(1)
    z.sum().backward()
    return x.grad


def _masked_fill_through_a_view(lib: Any) -> Any:
    x = _leaf(lib, 4)
    b = x * 1
    b.view(2, 2).masked_fill_(lib.tensor([[True, False], [False, True]]), 0.0)
    b.sum().backward()
    return x.grad


def _retained_grad_after_a_write(lib: Any) -> Any:
    x = _leaf(lib)
    y = x * 2
    y.retain_grad()
    y.add_(1)
    y.sum().backward()
    return y.grad, x.grad


def _erfinv_result_modified(lib: Any) -> Any:
    x = _leaf(lib)
    y = (x / 4).erfinv()
    y.div_(-1)  # erfinv's backward reads its input, not its result
    y.sum().backward()
    return x.grad.round(decimals=12)  # erfinv's last bits are not torch's


def _operand_cast_for_the_op_modified(lib: Any) -> Any:
    x = _leaf(lib)
    w = lib.tensor([0.5, -1.0, 2.0])  # float32: cast to float64 for the op, saved as it is
    y = lib.logaddexp(w, x)
    w.tanh_()
    y.sum().backward()
    return x.grad


def _factor_written_by_its_own_update(lib: Any) -> Any:
    x = _leaf(lib)
    w = lib.tensor([2.0, 1.0, 3.0])
    w.addcmul_(x, w)  # the saved factor w is the tensor the op writes
    w.sum().backward()
    return x.grad


def _saved_result_unread_by_the_formula(lib: Any) -> Any:
    x = lib.tensor([1.0, 0.0, 2.0], dtype=lib.float64, requires_grad=True)
    y = (x * 1).cumprod(0)  # with a zero, cumprod's formula reads the input alone
    y.mul_(2)
    y.sum().backward()
    return x.grad


def _logit_in_place_of_its_input(lib: Any) -> Any:
    x = lib.tensor([0.25, 0.5], dtype=lib.float64, requires_grad=True)
    y = x * 1
    y.logit_(1e-3)  # saves a clone of y as it was
    y.sum().backward()
    return x.grad


def _rounding_division_by_itself_in_place(lib: Any) -> Any:
    x = _leaf(lib)
    y = x * 1
    y.div_(y, rounding_mode="floor")  # its node saves y, as true division's would
    y.sum().backward()
    return x.grad


def _rounding_division_result_modified(lib: Any) -> Any:
    x = _leaf(lib)
    y = lib.div(x, 2.0, rounding_mode="floor")
    z = y * y
    y.add_(1)
    z.sum().backward()
    return x.grad


SAVED = {
    "operand_cast_for_the_op_modified": _operand_cast_for_the_op_modified,
    "factor_written_by_its_own_update": _factor_written_by_its_own_update,
    "saved_result_unread_by_the_formula": _saved_result_unread_by_the_formula,
    "logit_in_place_of_its_input": _logit_in_place_of_its_input,
    "rounding_division_by_itself_in_place": _rounding_division_by_itself_in_place,
    "rounding_division_result_modified": _rounding_division_result_modified,
    "result_modified": _result_modified,
    "erfinv_result_modified": _erfinv_result_modified,
    "result_modified_through_a_view": _result_modified_through_a_view,
    "input_modified_through_a_view": _input_modified_through_a_view,
    "input_modified_by_setitem": _input_modified_by_setitem,
    "leaf_modified_without_grad": _leaf_modified_without_grad,
    "modified_twice": _modified_twice,
    "clone_modified": _clone_modified,
    "masked_fill_through_a_view": _masked_fill_through_a_view,
    "retained_grad_after_a_write": _retained_grad_after_a_write,
}


def _outcome(fn: Any, lib: Any) -> Any:
    try:
        out = fn(lib)
    except RuntimeError as e:
        return "RuntimeError", str(e)
    return [t.tolist() for t in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("name", list(SAVED))
def test_saved_tensors_modified_in_place_as_torch(name: str) -> None:
    """Backward refuses a saved tensor written since it was saved, naming its node and
    versions as torch does; writes nothing saved depends on are fine."""
    assert _outcome(SAVED[name], E) == _outcome(SAVED[name], torch)


OUT_CALLS = {
    "mul": lambda lib, x: lib.mul(x, 2, out=lib.empty(3)),
    "sum": lambda lib, x: lib.sum(x, 0, out=lib.empty(())),
    "cat": lambda lib, x: lib.cat([x, x], out=lib.empty(6)),
    "out_requires_grad": lambda lib, x: lib.add(x.detach(), 1,
                                                 out=lib.ones(3, requires_grad=True)),
}


@pytest.mark.parametrize("name", list(OUT_CALLS))
def test_out_refuses_autograd_as_torch(name: str) -> None:
    """``out=`` cannot be differentiated: torch refuses it when an argument requires grad
    (and leaves ``out`` unchanged), and allows it without grad mode."""
    with pytest.raises(RuntimeError) as theirs:
        OUT_CALLS[name](torch, torch.ones(3, requires_grad=True))
    with pytest.raises(RuntimeError) as ours:
        OUT_CALLS[name](E, E.ones(3, requires_grad=True))
    assert str(ours.value) == str(theirs.value)
    with ag.no_grad():
        assert OUT_CALLS[name](E, E.ones(3, requires_grad=True)).requires_grad is (
            name == "out_requires_grad")


def _through_a_detached_slice(lib: Any) -> Any:
    x = lib.arange(12.0, dtype=lib.float64).reshape(3, 4).requires_grad_()
    b = x * 1
    d = b[1:].detach()
    v = d[:, 1:]
    seen = [d.storage_offset(), v.storage_offset(), v.requires_grad]
    y = lib.ones(2, dtype=lib.float64, requires_grad=True)
    v[:, 0] = y * 3
    seen += [d.requires_grad, type(d.grad_fn).__name__, type(b.grad_fn).__name__]
    (d * 2).sum().backward()
    return seen + [y.grad.tolist(), x.grad, d[0].as_strided((2,), (1,), 5).tolist()]


def test_views_of_a_detached_tensor_have_it_as_their_base() -> None:
    """A detached tensor starts a history of its own: writes into its views give it a
    CopySlices and leave the tensor it was detached from alone; its views still see the
    original storage (offsets, as_strided)."""
    assert _through_a_detached_slice(E) == _through_a_detached_slice(torch)


def test_an_integer_tensor_copied_into_gets_no_history_as_torch() -> None:
    """torch's copy_ (setitem's too) gives an integer tensor no history; fill_ with a 0-d
    tensor, like its other in-place ops, records its node all the same, as does setitem
    where it fills (a 0-d value into a region of another shape)."""

    def run(m: Any) -> Any:
        x = m.tensor([-2.0, 3.5], dtype=m.float64, requires_grad=True)
        n = m.tensor([7, 1])
        n.copy_(x)
        n[:1].copy_(x[1:])
        n[1] = x[0]
        filled = m.tensor([7, 1]).fill_(x[1])
        rows = m.tensor([[7], [1]])
        rows[0, :] = x[1]
        return (n.requires_grad, n.grad_fn, n.tolist(), n._version, filled.requires_grad,
                filled.grad_fn.name(), filled.tolist(), rows.grad_fn.name(), rows.tolist())

    assert run(E) == run(torch)


def test_backward_through_a_write_into_an_expanded_view_is_refused_as_torchs():
    """torch's CopySlices writes the gradient's region through the view: an expanded one
    (elements sharing memory) refuses it at backward."""
    outcomes = []
    for m in (torch, E):
        x = m.tensor(-0.5, dtype=m.float64, requires_grad=True)
        v = m.as_strided(x.clone(), (1, 3), (0, 0), 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch deprecates index_fill_ on expanded tensors
            v.index_fill_(-2, m.tensor([0]), -3.0)
        with pytest.raises(RuntimeError) as err:
            m.logaddexp2(v, x).sum().backward()
        outcomes.append(str(err.value))
    assert outcomes[0] == outcomes[1]


def test_inplace_write_under_autograd_refuses_operands_that_broadcast_beyond_self():
    """The recorded write computes the value out of place: its shape is checked as the
    kernel's own write checks it, before anything is written."""
    for L in (E, torch):
        x = L.tensor(2.0, dtype=L.float64, requires_grad=True)
        v = x.exp()
        with pytest.raises(RuntimeError, match=r"output with shape \[\] doesn't match"):
            v.div_(L.atleast_1d(x))
        assert v.item() == pytest.approx(math.exp(2.0))


def test_pow_of_tensors_keeps_its_result_whichever_input_needs_a_gradient():
    """torch keeps an op's outputs whenever its formulas read them: a write into pow's
    result is refused at backward even where only the base needs a gradient."""
    for L in (E, torch):
        x = L.tensor([[[-2.0]]], dtype=L.float64, requires_grad=True)
        e = L.tensor(-3.0, dtype=L.float64)
        y = x.pow(e)
        y.swapaxes_(-3, 1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            e.clamp_min(y).sum().backward()


@pytest.mark.parametrize("op", ["unsqueeze_(1)", "t_()", "squeeze_()", "transpose_(0, 1)"])
def test_an_in_place_view_op_on_a_view_leaves_its_base_history(op: str) -> None:
    """No element changes: torch records the op on the view alone, so a view whose elements
    overlap (an as_strided one with a zero stride) still has a backward, and the base keeps
    its own node."""
    grads = []
    for m in (E, torch):
        x = m.tensor(np.arange(36.0).reshape(2, 2, 3, 3), requires_grad=True)
        c = x.clone()
        v = m.as_strided(c, (14, 28), (0, 1), 8)
        eval(f"v.{op}")  # noqa: S307
        (v.sum() + (c * 2).sum()).backward()
        assert c.grad_fn.name() == "CloneBackward0"
        grads.append(np.asarray(x.grad))
    np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("bounds", ["min=b", "max=b", "min=b, max=b * 3", "b"])
@pytest.mark.parametrize("op", ["clamp_", "clip_"])
def test_an_in_place_op_whose_tensor_requiring_grad_is_a_keyword(op: str, bounds: str) -> None:
    """``x.clamp_(min=b)`` with only ``b`` requiring grad: the op reads a clone of ``x``,
    so the write into ``x`` does not spoil what the backward reads."""
    grads = []
    for m in (E, torch):
        b = m.tensor(1.0, dtype=m.float64, requires_grad=True)
        x = m.tensor([-3.0, 2.0], dtype=m.float64)
        eval(f"x.{op}({bounds})")  # noqa: S307
        (x * m.tensor([1.0, 2.0], dtype=m.float64)).sum().backward()
        grads.append(b.grad.item())
    assert grads[0] == grads[1]
