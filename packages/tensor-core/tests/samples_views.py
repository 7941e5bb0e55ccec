"""Dispatch-table samples of the shape, view, joining, splitting and rearranging primitives
(shape.py, transposing.py, strided.py, joining.py, splitting.py, rearranging.py): 0-d,
empty, transposed and otherwise strided operands, and the params that change the
result's geometry (views' strides and offsets, channels-last joins)."""

from __future__ import annotations

from typing import Any

from dispatch_oracle import make


def _channels_last(m: Any, d: str, shape: tuple[int, ...], seed: int = 0) -> Any:
    n, c, h, w = shape
    return make(m, d, (n, h, w, c), seed=seed).permute(0, 3, 1, 2)


def _strided(m: Any, d: str) -> Any:
    """A (2, 6) view of a transposed buffer, with gaps between its elements."""
    return make(m, d, (4, 6), transposed=True).narrow(0, 0, 2)


def _in_place(method: str, *args: Any) -> Any:
    def sample(m: Any, d: str, shape: tuple[int, ...], transposed: bool = False) -> Any:
        x = make(m, d, shape, transposed=transposed)
        getattr(x, method)(*args)
        return x

    return sample


_squeeze_, _unsqueeze_ = _in_place("squeeze_"), _in_place("unsqueeze_", 1)
_t_, _transpose_ = _in_place("t_"), _in_place("transpose_", 0, 2)

SAMPLES: dict[str, list[Any]] = {
    "view": [
        lambda m, d: make(m, d, (3, 4)).view(12),
        lambda m, d: make(m, d, (4, 3), transposed=True).view(4, 1, 3),
        lambda m, d: make(m, d, (4, 1), transposed=True).view(-1, 1),
        lambda m, d: make(m, d, ()).view(1, 1),
        lambda m, d: make(m, d, (0, 4)).view(2, 0, 2),
        lambda m, d: make(m, d, (2, 3, 4)).narrow(1, 1, 2).view(2, 8),
    ],
    "reshape": [
        lambda m, d: make(m, d, (3, 4), transposed=True).reshape(12),
        lambda m, d: make(m, d, (2, 3, 4), transposed=True).reshape(4, -1),
    ],
    "view_dtype": [
        lambda m, d: make(m, d, (3, 4)).view(m.float16),
        lambda m, d: make(m, d, (3, 4), transposed=True).view(m.int32),
        lambda m, d: make(m, d, (3, 8)).narrow(1, 2, 4).view(m.float64),
        lambda m, d: make(m, d, ()).view(m.int32),
    ],
    "squeeze": [
        lambda m, d: make(m, d, (1, 3, 1, 4)).squeeze(),
        lambda m, d: make(m, d, (4, 1, 3), transposed=True).squeeze(1),
        lambda m, d: make(m, d, ()).squeeze(),
        lambda m, d: make(m, d, (0, 1)).squeeze((0, 1)),
    ],
    "unsqueeze": [
        lambda m, d: make(m, d, (3, 4)).unsqueeze(1),
        lambda m, d: make(m, d, (3, 4), transposed=True).unsqueeze(-1),
        lambda m, d: make(m, d, (3, 4), transposed=True).unsqueeze(0),
        lambda m, d: make(m, d, ()).unsqueeze(0),
        lambda m, d: make(m, d, (0, 2)).unsqueeze(1),
    ],
    "expand": [
        lambda m, d: make(m, d, (3, 1)).expand(2, 3, 4),
        lambda m, d: make(m, d, (3, 1)).expand(1, 3, 4),
        lambda m, d: make(m, d, (4, 1), transposed=True).expand(4, 5),
        lambda m, d: make(m, d, ()).expand(2, 3),
        lambda m, d: make(m, d, (0, 1)).expand(0, 3),
        lambda m, d: make(m, d, (2, 3)).narrow(1, 1, 1).expand(2, 2, 4),
    ],
    "squeeze_": [
        lambda m, d: _squeeze_(m, d, (1, 3, 1)),
        lambda m, d: _squeeze_(m, d, (3, 1, 4), transposed=True),
    ],
    "unsqueeze_": [
        lambda m, d: _unsqueeze_(m, d, (3, 4)),
        lambda m, d: _unsqueeze_(m, d, (3, 4), transposed=True),
    ],
    "permute_": [
        lambda m, d: _t_(m, d, (3, 4)),
        lambda m, d: _transpose_(m, d, (2, 3, 4), transposed=True),
    ],
    "t": [
        lambda m, d: make(m, d, (3, 4), transposed=True).t(),
        lambda m, d: make(m, d, (3,)).t(),
        lambda m, d: make(m, d, ()).t(),
    ],
    "permute": [
        lambda m, d: make(m, d, (2, 3, 4)).permute(2, 0, 1),
        lambda m, d: make(m, d, (2, 3, 4)).narrow(2, 1, 2).transpose(0, 2),
        lambda m, d: make(m, d, (2, 0, 4)).mT,
        lambda m, d: m.movedim(make(m, d, (2, 3, 4)), 0, -1),
        lambda m, d: make(m, d, ()).permute(()),
    ],
    # torch's H and mH are lazy conjugate views, which keep the view's strides: the samples
    # keep to dense operands, whose conjugated copy has them too
    "conj_physical": [
        lambda m, d: make(m, d, (3, 4), "complex64").mH,
        lambda m, d: m.adjoint(make(m, d, (2, 3, 4), "complex128", transposed=True)),
    ],
    "narrow": [
        lambda m, d: make(m, d, (3, 4)).narrow(1, 1, 2),
        lambda m, d: make(m, d, (3, 4), transposed=True).narrow(0, 1, 2),
        lambda m, d: make(m, d, (3, 4)).narrow(0, 3, 0),
    ],
    "diagonal": [
        lambda m, d: make(m, d, (3, 4)).diagonal(1),
        lambda m, d: make(m, d, (3, 4), transposed=True).diagonal(-1),
        lambda m, d: make(m, d, (2, 3, 4)).diagonal(0, 0, 2),
        lambda m, d: make(m, d, (3, 4)).diagonal(5),
    ],
    "unfold": [
        lambda m, d: make(m, d, (3, 4)).unfold(1, 2, 1),
        lambda m, d: make(m, d, (5, 4), transposed=True).unfold(0, 2, 2),
        lambda m, d: make(m, d, ()).unfold(0, 1, 1),
    ],
    "as_strided": [
        lambda m, d: make(m, d, (3, 4)).as_strided((2, 2), (1, 2), 1),
        lambda m, d: make(m, d, (3, 4), transposed=True).as_strided((2, 3), (3, 1)),
        lambda m, d: make(m, d, (3, 4)).as_strided((2, 3), (0, 1), 2),
        lambda m, d: make(m, d, (3, 4)).narrow(0, 1, 2).as_strided((0, 2), (1, 1)),
    ],
    "split": [
        lambda m, d: make(m, d, (5, 4)).split(2),
        lambda m, d: make(m, d, (3, 4), transposed=True).split([1, 3], 1),
        lambda m, d: make(m, d, (3, 4)).chunk(2, 1),
        lambda m, d: make(m, d, (0, 3)).split(2),
    ],
    "unbind": [
        lambda m, d: make(m, d, (3, 4)).unbind(1),
        lambda m, d: make(m, d, (3, 4), transposed=True).unbind(),
        lambda m, d: make(m, d, (3,)).unbind(),
        lambda m, d: make(m, d, (0, 3)).unbind(1),
    ],
    "cat": [
        lambda m, d: m.cat([make(m, d, (3, 4)), make(m, d, (2, 4), seed=1)]),
        lambda m, d: m.cat([make(m, d, (3, 4), transposed=True),
                            make(m, d, (3, 2), transposed=True, seed=1)], 1),
        lambda m, d: m.cat([make(m, d, (0,)), make(m, d, (3, 4), seed=1)], -1),
        lambda m, d: m.cat([make(m, d, (2, 3), "int64"), make(m, d, (2, 3), seed=1)]),
        lambda m, d: m.cat([_channels_last(m, d, (2, 3, 4, 5)),
                            _channels_last(m, d, (2, 2, 4, 5), seed=1)], 1),
        lambda m, d: m.cat([_channels_last(m, d, (2, 3, 4, 5)),
                            make(m, d, (2, 3, 4, 5), seed=1)]),
        lambda m, d: m.cat([make(m, d, (0, 4)), make(m, d, (0, 4), seed=1)]),
    ],
    "stack": [
        lambda m, d: m.stack([make(m, d, (3, 4)), make(m, d, (3, 4), seed=1)]),
        lambda m, d: m.stack([make(m, d, (3, 4), transposed=True),
                              make(m, d, (3, 4), seed=1)], -1),
        lambda m, d: m.stack([make(m, d, ()), make(m, d, (), "float64", seed=1)]),
        lambda m, d: m.stack([make(m, d, (0, 2)), make(m, d, (0, 2), seed=1)], 1),
    ],
    "repeat": [
        lambda m, d: make(m, d, (3, 4)).repeat(2, 1, 3),
        lambda m, d: make(m, d, (3, 4), transposed=True).repeat(2, 2),
        lambda m, d: make(m, d, ()).repeat(3),
        lambda m, d: make(m, d, (0, 2)).repeat(2, 2),
    ],
    "repeat_interleave": [
        lambda m, d: make(m, d, (3, 4)).repeat_interleave(2, 1),
        lambda m, d: make(m, d, (3, 4), transposed=True).repeat_interleave(3),
        lambda m, d: make(m, d, (3, 4)).repeat_interleave(
            make(m, d, (3,), "int64", low=0, high=2), 0),
        lambda m, d: make(m, d, (3, 4)).repeat_interleave(m.tensor([2], device=d), 1,
                                                          output_size=8),
        lambda m, d: m.repeat_interleave(make(m, d, (4,), "int64", low=0, high=3)),
    ],
    "flip": [
        lambda m, d: make(m, d, (3, 4)).flip(0),
        lambda m, d: make(m, d, (3, 4), transposed=True).flip(0, 1),
        lambda m, d: _strided(m, d).flip(1),
        lambda m, d: m.flip(make(m, d, ()), []),
        lambda m, d: make(m, d, (3, 4), transposed=True).rot90(),
    ],
    "roll": [
        lambda m, d: make(m, d, (3, 4)).roll(1, 0),
        lambda m, d: make(m, d, (3, 4), transposed=True).roll(1),
        lambda m, d: make(m, d, (3, 4), transposed=True).roll((1, -1), (0, 1)),
    ],
    "tril": [
        lambda m, d: make(m, d, (3, 4)).tril(),
        lambda m, d: make(m, d, (3, 4), transposed=True).tril(1),
        lambda m, d: make(m, d, (0, 3)).tril(),
    ],
    "triu": [
        lambda m, d: make(m, d, (2, 3, 4)).triu(-1),
        lambda m, d: make(m, d, (3, 4), transposed=True).triu(),
    ],
    "diag_embed": [
        lambda m, d: m.diag_embed(make(m, d, (3, 4))),
        lambda m, d: m.diag_embed(make(m, d, (3, 4), transposed=True), 1, 0, 2),
        lambda m, d: m.diag(make(m, d, (3,)), -1),
    ],
}
