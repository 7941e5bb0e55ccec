"""The view, shape, joining, splitting and rearranging primitives save no more for backward
than torch does, with each tensor operand requiring grad or not."""

import pytest
from autograd_oracle import check_saved

M = (3, 4)

UNARY = {
    "view": lambda m, x: x.view(4, 3),
    "reshape": lambda m, x: x.t().reshape(12),
    "squeeze": lambda m, x: x.unsqueeze(1).squeeze(1),
    "unsqueeze": lambda m, x: x.unsqueeze(0),
    "permute": lambda m, x: x.permute(1, 0),
    "transpose": lambda m, x: x.transpose(0, 1),
    "expand": lambda m, x: x[:, :1].expand(3, 5),
    "narrow": lambda m, x: x.narrow(1, 1, 2),
    "diagonal": lambda m, x: x.diagonal(1),
    "unfold": lambda m, x: x.unfold(1, 2, 1),
    "as_strided": lambda m, x: x.as_strided((2, 2), (1, 2), 1),
    "conj_physical": lambda m, x: x.to(m.complex128).mH,
    "split": lambda m, x: x.split([1, 3], 1)[1],
    "chunk": lambda m, x: x.chunk(2, 1)[0],
    "unbind": lambda m, x: x.unbind(1)[2],
    "repeat": lambda m, x: x.repeat(2, 1, 3),
    "repeat_interleave": lambda m, x: x.repeat_interleave(2, 1),
    "repeat_interleave_tensor": lambda m, x: x.repeat_interleave(m.tensor([1, 1, 2]), 0),
    "flip": lambda m, x: x.flip(1),
    "roll": lambda m, x: x.roll(1, 1),
    "tril": lambda m, x: x.tril(),
    "triu": lambda m, x: x.triu(1),
    "diag_embed": lambda m, x: m.diag_embed(x),
    "t_": lambda m, x: (x * 1).t_(),
    "squeeze_": lambda m, x: (x * 1).unsqueeze(0).squeeze_(0),
}


@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name):
    check_saved(UNARY[name], [M])


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("name", ["cat", "stack"])
def test_joining(name, needs):
    check_saved(lambda m, x, y: getattr(m, name)([x, y], 1), [M, M], needs=needs)
