"""Dispatch-table samples of casts and moves (conversion.py), writes (copying.py) and
aliases (aliasing.py)."""

from __future__ import annotations

from typing import Any

from dispatch_oracle import make


def _copy(m: Any, d: str, transposed: bool) -> Any:
    x = make(m, d, (3, 4), transposed=transposed)
    return x.copy_(make(m, d, (4,), "int64", seed=1))


SAMPLES: dict[str, list[Any]] = {
    "to_copy": [
        lambda m, d: make(m, d, (3, 4)).to(m.float64),
        lambda m, d: make(m, d, (3, 4), transposed=True).to(m.int32),
        lambda m, d: make(m, d, (), "int64").double(),
        lambda m, d: make(m, d, (0, 2)).half(),
        lambda m, d: make(m, d, (2, 3), "bool").to(m.float32, copy=True),
    ],
    "clone": [
        lambda m, d: make(m, d, (3, 4), transposed=True).clone(),
        lambda m, d: m.clone(make(m, d, (3, 4), transposed=True),
                             memory_format=m.contiguous_format),
        lambda m, d: make(m, d, (3, 4), transposed=True).contiguous(),
        lambda m, d: make(m, d, ()).clone(),
        lambda m, d: make(m, d, (2, 3, 4, 5)).clone(memory_format=m.channels_last),
        lambda m, d: make(m, d, (2, 3, 4, 5), transposed=True).contiguous(
            memory_format=m.channels_last),
        lambda m, d: make(m, d, (2, 3, 2, 4, 5)).to(m.float64,
                                                     memory_format=m.channels_last_3d),
    ],
    "copy_": [
        lambda m, d: _copy(m, d, False),
        lambda m, d: _copy(m, d, True),
        # out= of the wrong shape resizes (torch cannot resize memory from numpy: zeros)
        lambda m, d: m.add(make(m, d, (3,)), 1, out=m.zeros(2, device=d)),
    ],
    "fill": [
        # the out-of-place form of fill_: what autograd computes an in-place fill as
        lambda m, d: m.pow(make(m, d, (3, 4), "bool"), False),
    ],
    "fill_": [
        lambda m, d: make(m, d, (3, 4), transposed=True).fill_(2.5),
    ],
    "zero_": [
        lambda m, d: make(m, d, (2, 3), "int64").zero_(),
        lambda m, d: make(m, d, (3, 4), transposed=True).zero_(),
    ],
    "resize_": [
        lambda m, d: m.zeros(3, 4, device=d).resize_(0),
        lambda m, d: m.zeros(3, device=d).resize_(2, 5),
    ],
    "alias": [
        lambda m, d: make(m, d, (3, 4), transposed=True).as_subclass(m.Tensor),
    ],
    "detach": [
        lambda m, d: make(m, d, (3, 4), transposed=True).detach(),
        lambda m, d: make(m, d, ()).detach(),
    ],
}
