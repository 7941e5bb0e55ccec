"""torch.nn.modules.utils' argument helpers: ``_single``, ``_pair``, ``_triple`` and
``_quadruple`` turn an int into a tuple of that many (an iterable is taken as a tuple, as
given), and ``_reverse_repeat_tuple`` turns a per-dim padding into ``F.pad``'s order.
Code written against torch imports them from here (``from torch.nn.modules.utils import
_pair``)."""

from __future__ import annotations

import collections.abc
from collections.abc import Callable
from itertools import repeat
from typing import Any

__all__: list[str] = []


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple[Any, ...]]:
    def parse(x: Any) -> tuple[Any, ...]:
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t: Any, n: int) -> tuple[Any, ...]:
    """``t`` reversed, each element repeated ``n`` times: a per-dim padding (first dim
    first) as ``F.pad``'s (last dim first, (left, right) each)."""
    return tuple(x for x in reversed(t) for _ in range(n))
