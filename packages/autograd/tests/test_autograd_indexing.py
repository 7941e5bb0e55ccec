"""``x[i] = v`` under autograd: an in-place write into the view ``x[basic]`` (``fill_``,
``copy_`` or ``index_put_``), which gives ``x`` torch's node (CopySlices for a write into
a view, IndexPutBackward0 for one into ``x`` itself); on meta tensors too, whose backward
computes shapes only."""

from typing import Any

import pytest
import torch
from autograd_oracle import E, inputs

import ember.autograd

M = (3, 4)


def _write(m: Any, x: Any, v: Any, index: Any) -> Any:
    y = x * 1
    y[index(m)] = v
    return y


INDICES = [
    lambda m: 0,
    lambda m: (slice(None), 1),
    lambda m: m.tensor([0, 2]),
    lambda m: (slice(1, None), m.tensor([0, 3])),
    lambda m: m.tensor([True, False, True]),
]


@pytest.mark.parametrize("index", INDICES)
@pytest.mark.parametrize("value", ["number", "tensor"])
def test_setitem_makes_torch_nodes(index: Any, value: str) -> None:
    (ex, ev), (tx, tv) = inputs([M, ()])
    ye = _write(E, ex, 2.0 if value == "number" else ev, index)
    yt = _write(torch, tx, 2.0 if value == "number" else tv, index)
    assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__


@pytest.mark.parametrize("index", INDICES[:4])
def test_setitem_on_meta_tensors_backpropagates(index: Any) -> None:
    grads = []
    for m, grad in ((E, ember.autograd.grad), (torch, torch.autograd.grad)):
        x = m.ones(*M).to("meta").requires_grad_()
        v = m.ones(()).to("meta").requires_grad_()
        y = _write(m, x, v, index)
        gx, gv = grad(y, [x, v], m.ones(*M).to("meta"))
        grads.append([(tuple(g.shape), g.stride(), g.device.type) for g in (gx, gv)])
    assert grads[0] == grads[1]


VIEW_INDICES = [0, slice(1, None), (0, slice(1, None)), (slice(None), 0), None, Ellipsis,
                (Ellipsis, 1), (0, 1), slice(None), (0, slice(None)), (slice(None), None),
                (None, 0), (slice(None), slice(None))]


@pytest.mark.parametrize("index", VIEW_INDICES, ids=repr)
def test_getitem_views_are_named_as_torch(index: Any) -> None:
    """An indexing view's node is named after the last view torch makes it of."""
    (ex,), (tx,) = inputs([M])
    assert type((ex * 1)[index].grad_fn).__name__ == type((tx * 1)[index].grad_fn).__name__


@pytest.mark.parametrize("shape, index, value", [
    ((3,), [0], 2),  # a values dtype index_put_ refuses
    ((0, 1), [0], 1.5),  # an index into a dim of size 0
    ((3,), [5], 1.5),  # an index out of range
])
def test_index_put_into_a_leaf_refuses_the_leaf_before_checking_its_arguments(
        shape, index, value):
    for L in (E, torch):
        x = L.zeros(*shape, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            x.index_put_((L.tensor(index),), L.tensor(value))
