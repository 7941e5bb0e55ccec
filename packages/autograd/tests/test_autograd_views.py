"""In-place view ops in a graph (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``): the
tensor takes the view's shape and history, with torch's gradients and refusals."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from autograd_oracle import E, compare_grads

from ember.autograd import no_grad


def _on_view(m: Any, x: Any) -> Any:
    base = x * 1
    part = base.narrow(0, 1, 2)
    part.t_()
    return m.cat([part.reshape(-1) * 3, base.reshape(-1)])


CASES = {
    "t_": lambda m, x: (x * 1).t_(),
    "transpose_": lambda m, x: (x * 1).transpose_(0, 1) * 2,
    "swapdims_": lambda m, x: (x * 1).swapdims_(-1, 0).exp(),
    "unsqueeze_": lambda m, x: (x * 1).unsqueeze_(1).expand(3, 2, 4),
    "squeeze_": lambda m, x: (x * 1).unsqueeze(0).squeeze_(0).t(),
    "chained": lambda m, x: (x * 1).t_().unsqueeze_(0).squeeze_().t_(),
    "on_view": _on_view,
}


@pytest.mark.parametrize("name", list(CASES))
def test_grad_matches_torch(name: str) -> None:
    compare_grads(CASES[name], [(3, 4)])


REFUSED = {
    "leaf": lambda x: x.t_(),
    "view_of_leaf": lambda x: x.narrow(0, 0, 2).squeeze_(),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_leaves_refuse_and_stay_unchanged(name: str) -> None:
    x = E.ones(3, 4).requires_grad_()
    with pytest.raises(RuntimeError) as ours:
        REFUSED[name](x)
    with pytest.raises(RuntimeError) as theirs:
        REFUSED[name](torch.ones(3, 4).requires_grad_())
    assert str(ours.value) == str(theirs.value)
    assert x.shape == (3, 4) and x.stride() == (4, 1) and x._version == 0
    np.testing.assert_array_equal(np.array(x.detach()), np.ones((3, 4)))


def test_without_grad_mode_only_the_shape_changes() -> None:
    x = E.ones(3, 4).requires_grad_()
    with no_grad():
        x.t_()
    assert x.shape == (4, 3) and x.is_leaf and x.requires_grad and x._version == 1
