"""Data-free shape/dtype rules: what an op returns, computed from shapes and dtypes alone.

The compiler traces with these; ops that have none are evaluated on zero-strided
placeholder arrays (no memory, no data), and ops whose output shape depends on values
(``nonzero``, ``unique``, ``masked_select``) are marked ``dynamic``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from . import dtypes as _dt

__all__ = ["Spec", "elementwise", "reduction", "evaluate", "DYNAMIC"]


class Spec(NamedTuple):
    """What a tensor looks like to a shape rule: its shape and dtype."""

    shape: tuple[int, ...]
    dtype: _dt.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)


def _broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*shapes))


def _operand_dtype_view(x: Any) -> Any:
    # result_type groups by ndim, so give it a stand-in with the same ndim and dtype.
    if isinstance(x, Spec):
        return _SpecOperand(x)
    return x


class _SpecOperand:
    __slots__ = ("dtype", "ndim", "_data")

    def __init__(self, spec: Spec):
        self.dtype = spec.dtype
        self.ndim = spec.ndim
        self._data = None


def elementwise(result: str) -> Callable[..., Spec]:
    """Broadcasting rule; ``result`` is 'promote', 'float' (ints become the default float),
    or 'bool'."""

    def rule(*operands: Any, **params: Any) -> Spec:
        shapes = [o.shape for o in operands if isinstance(o, Spec)]
        dt = _dt.result_type(*[_operand_dtype_view(o) for o in operands])
        if result == "float" and dt.category < 2:
            dt = _dt.get_default_dtype()
        elif result == "bool":
            dt = _dt.bool
        return Spec(_broadcast(*shapes), dt)

    return rule


def reduction(result: str = "same") -> Callable[..., Spec]:
    """Rule of a reduction over ``dim`` (None: all) with ``keepdim``; ``result`` is 'same',
    'sum' (bool/int become int64), 'float', 'bool' or 'index' (int64)."""

    def rule(x: Spec, dim: Any = None, keepdim: bool = False, **params: Any) -> Spec:
        n = x.ndim
        dims = range(n) if dim is None else [d % max(n, 1) for d in
                                             ((dim,) if isinstance(dim, int) else dim)]
        shape = tuple(1 if i in dims else s for i, s in enumerate(x.shape)
                      if keepdim or i not in dims)
        dt = x.dtype
        if result == "sum" and dt.category < 2:
            dt = _dt.int64
        elif result == "float" and dt.category < 2:
            dt = _dt.get_default_dtype()
        elif result == "bool":
            dt = _dt.bool
        elif result == "index":
            dt = _dt.int64
        return Spec(shape, dt)

    return rule


DYNAMIC = "dynamic"


def evaluate(forward: Callable[..., Any], *operands: Any, **params: Any) -> Spec:
    """Fallback rule: run the xp forward on zero-strided placeholders of the right shape."""
    args = [np.broadcast_to(np.zeros((), o.dtype.np), o.shape) if isinstance(o, Spec) else o
            for o in operands]
    out = forward(*args, **params)
    return Spec(tuple(out.shape), _dt.from_numpy_dtype(out.dtype))
