"""torch's foreach ops of one tensor list: the unary ops (``_foreach_sqrt``, ``_foreach_exp``...
and their in-place forms), ``_foreach_zero_``, ``_foreach_copy_``, ``_foreach_norm`` and
``_foreach_max``.

Each result is the per-tensor op's (``sqrt(self[i])``, ``linalg.vector_norm(self[i], ord,
dtype=dtype)``, ``max(self[i])``), in one dispatch where ``foreach_lists`` allows it; the
in-place forms return ``self``, as torch's do. The primitives: ``_foreach_<op>_(self)`` and
``_foreach_<op>(self, out)``; ``_foreach_zero_(self)``, ``_foreach_copy_(self, src)``,
``_foreach_norm(self, out)`` (param ``p``, the order as a float) and ``_foreach_max(self,
out)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .. import dtypes as _dt
from ..dispatch import REGISTRY
from ..tensor import Tensor
from . import copying, minmax, norms, unary
from .foreach_lists import (
    check_overlaps,
    checked_before_writes,
    fresh,
    into,
    kernel_of,
    meta_of,
    nonempty,
    number,
    one_dispatch,
    register_pair,
    results,
    same_lengths,
    tensor_list,
    writable,
)

_REAL = frozenset(_dt.ALL_DTYPES) - {d for d in _dt.ALL_DTYPES if d.category == 3}


class _Unary:
    """One unary foreach op: the per-tensor function and method (torch's slow path) and
    the per-tensor primitives whose kernels the one-dispatch path runs."""

    def __init__(self, name: str, function: Callable[..., Tensor], method: Callable[..., Any]):
        self.name, self.function, self.method = name, function, method
        self.tensor_op, self.tensor_op_ = REGISTRY[name], REGISTRY[name + "_"]
        self.op_, self.op = register_pair(name, self._inplace_forward, self._forward, 1)

    def _inplace_forward(self, self_: list[Any]) -> None:
        write = kernel_of(self.tensor_op_, self_[0])
        for x in self_:
            write(x)

    def _forward(self, self_: list[Any], out: list[Any]) -> None:
        write = into(kernel_of(self.tensor_op, self_[0]))
        for o, x in zip(out, self_):
            write(o, x)

    def _result_dtype(self, t: Tensor) -> _dt.dtype:
        rule = self.tensor_op.table["meta"]
        return _dt.from_numpy_dtype(rule(meta_of(t)).dtype)

    def inplace(self, self_: Any) -> Any:
        op = f"_foreach_{self.name}_"
        ts = tensor_list(op, self_, 0)
        nonempty(op, ts)
        if one_dispatch(ts) is not None and writable(op, ts):
            self.op_.door((ts,), None)  # type: ignore[union-attr]
            return self_
        checked_before_writes(op, ts, [], self._result_dtype)
        for t in ts:
            self.method(t)
        return self_

    def functional(self, self_: Any) -> list[Tensor]:
        op = f"_foreach_{self.name}"
        ts = tensor_list(op, self_, 0)
        nonempty(op, ts)
        dt = one_dispatch(ts)
        if dt is None:
            return [self.function(t) for t in ts]
        out = results(self.tensor_op.table["meta"], [ts], dt)
        self.op.door((ts, out), None)  # type: ignore[union-attr]
        return fresh(out)


_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
          "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
          "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
OPS = {name: _Unary(name, getattr(unary, name), unary.METHODS[name + "_"]) for name in _UNARY}


def _public(name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    unary_op = OPS[name]

    def functional(self: Any) -> list[Tensor]:
        return unary_op.functional(self)

    def inplace_form(self: Any) -> Any:
        return unary_op.inplace(self)

    functional.__name__ = functional.__qualname__ = f"_foreach_{name}"
    inplace_form.__name__ = inplace_form.__qualname__ = f"_foreach_{name}_"
    functional.__doc__ = (f"torch._foreach_{name}: ``{name}`` of each tensor of ``self``; a list "
                          "of new tensors.")
    inplace_form.__doc__ = (f"torch._foreach_{name}_: ``{name}_`` of each tensor of ``self``; "
                            "returns ``self``.")
    return functional, inplace_form


_PUBLIC = {f"_foreach_{name}{form}": fn for name in _UNARY
           for form, fn in zip(("", "_"), _public(name))}
globals().update(_PUBLIC)


# ----------------------------------------------------------------------------- zero_, copy_

def _zero_forward(self: list[Any]) -> None:
    write = kernel_of(copying.ZERO_, self[0])
    for x in self:
        write(x, value=0)


def _copy_forward(self: list[Any], src: list[Any]) -> None:
    write = kernel_of(copying.COPY_, self[0])
    for x, s in zip(self, src):
        write(x, s)


ZERO_, _ = register_pair("zero", _zero_forward, None, 0)
COPY_, _ = register_pair("copy", _copy_forward, None, 0)


def _foreach_zero_(self: Any) -> Any:
    """torch._foreach_zero_: fills each tensor of ``self`` with zeros; returns ``self``."""
    op = "_foreach_zero_"
    ts = tensor_list(op, self, 0)
    nonempty(op, ts)
    if one_dispatch(ts, dtypes=None) is not None and writable(op, ts, "zero_"):
        ZERO_.door((ts,), None)  # type: ignore[union-attr]
        return self
    checked_before_writes(op, ts, [], None, "zero_")
    for t in ts:
        copying.zero_(t)
    return self


def _foreach_copy_(self: Any, src: Any, non_blocking: bool = False) -> Any:
    """torch._foreach_copy_: copies each tensor of ``src`` into its tensor of ``self``
    (broadcast, cast to its dtype, moved to its device); returns ``self``."""
    op = "_foreach_copy_"
    ts = tensor_list(op, self, 0)
    sources = tensor_list(op, src, 1, "src")
    nonempty(op, ts)
    same_lengths(op, ts, sources)
    if one_dispatch(ts + sources, (ts, sources), None) is not None and writable(op, ts):
        check_overlaps(op, ts, [sources])
        COPY_.door((ts, sources), None)  # type: ignore[union-attr]
        return self
    checked_before_writes(op, ts, [sources], None)
    for t, s in zip(ts, sources):
        copying.copy_(t, s, non_blocking)
    return self


# ----------------------------------------------------------------------------- norm, max

def _norm_forward(self: list[Any], out: list[Any], *, p: float) -> None:
    compute = kernel_of(norms.NORM, self[0])
    for o, x in zip(out, self):
        o[...] = compute(x, dim=None, keepdim=False, p=p)


def _max_forward(self: list[Any], out: list[Any]) -> None:
    compute = kernel_of(minmax.MAX_ALL, self[0])
    for o, x in zip(out, self):
        o[...] = compute(x)


_, NORM = register_pair("norm", None, _norm_forward, 1)
_, MAX = register_pair("max", None, _max_forward, 1)


def _foreach_norm(self: Any, ord: Any = 2, dtype: Any = None) -> list[Tensor]:
    """torch._foreach_norm: ``linalg.vector_norm(t, ord, dtype=dtype)`` of each tensor of
    ``self`` (its norm over all its elements), a list of 0-d tensors."""
    op = "_foreach_norm"
    ts = tensor_list(op, self, 0)
    ord = number(op, ord, "ord", 2)
    if ord.__class__ is not int and ord.__class__ is not float:
        raise RuntimeError(f"{op}: foreach_tensor_norm_slow expects ord to be integer or float")
    nonempty(op, ts)
    p = float(ord)
    if p == math.inf and any([not t._data.size for t in ts]):
        raise RuntimeError(f"{op} cannot compute the infinity norm on an empty tensor because "
                           "the operation does not have an identity")
    dt = one_dispatch(ts)
    if dt is None or dtype is not None and _dt.to_dtype(dtype) is not dt or (
            p < 0 and any([not t._data.size for t in ts])):
        return [norms.vector_norm(t, ord, dtype=dtype) for t in ts]
    out = results(norms.NORM.table["meta"], [ts], dt, elementwise=False)
    NORM.door((ts, out), {"p": p})  # type: ignore[union-attr]
    return fresh(out)


def _foreach_max(self: Any) -> list[Tensor]:
    """torch._foreach_max: the maximum of each tensor of ``self`` (NaN propagates), a list of
    0-d tensors."""
    op = "_foreach_max"
    ts = tensor_list(op, self, 0)
    nonempty(op, ts)
    if any([not t._data.size for t in ts]):
        raise RuntimeError(f"{op} cannot compute the maximum of an empty tensor; max over zero "
                           "elements is undefined.")
    dt = one_dispatch(ts, dtypes=_REAL)
    if dt is None:
        return [minmax.max(t) for t in ts]
    out = results(minmax.MAX_ALL.table["meta"], [ts], dt, elementwise=False)
    MAX.door((ts, out), None)  # type: ignore[union-attr]
    return fresh(out)


FUNCTIONS = [*_PUBLIC, "_foreach_zero_", "_foreach_copy_", "_foreach_norm", "_foreach_max"]
METHODS: dict[str, Any] = {}
