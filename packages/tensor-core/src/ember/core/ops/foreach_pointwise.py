"""torch's foreach forms of the optimizers' fused updates: ``_foreach_addcmul``,
``_foreach_addcdiv``, ``_foreach_lerp`` and their in-place forms.

``_foreach_addcmul(self, tensor1, tensor2, value=1)`` takes, by torch's overloads, a number
``value``, a list of numbers (one per tensor) or a 1-d tensor of them as its fourth
argument; ``_foreach_lerp(self, tensors1, weight)`` a number, a list of numbers or a list of
weight tensors. Every result is the per-tensor op's (``addcmul(self[i], tensor1[i],
tensor2[i], value=...)``, ``lerp(self[i], tensors1[i], weight...)``), in one dispatch where
``foreach_lists`` allows it; the in-place forms return ``self``, as torch's do.

The primitives: ``_foreach_addcmul_(self, tensor1, tensor2)`` and ``_foreach_addcmul(self,
tensor1, tensor2, out)`` (params ``value`` or ``values``, a tuple), likewise addcdiv;
``_foreach_lerp_(self, tensors1, weights)`` and ``_foreach_lerp(self, tensors1, weights,
out)`` (``weights`` a tensor list, or None and params ``value`` or ``values``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import dtypes as _dt
from ..dispatch import Op
from ..tensor import Tensor
from . import fused_updates
from .foreach_lists import (
    check_overlaps,
    checked_before_writes,
    fresh,
    into,
    kernel_of,
    nonempty,
    number,
    number_list,
    one_dispatch,
    plain_numbers,
    register_pair,
    results,
    same_lengths,
    tensor_list,
    writable,
)
from .operands import LOW_PRECISION, checked_scalar

_LOW = frozenset(LOW_PRECISION)
_F32 = _dt.float32


def _fit(numbers: list[Any], dt: _dt.dtype) -> bool:
    """Whether the per-tensor op takes ``numbers`` as they are: ints and floats that its
    kernel's computation dtype holds (float32 for float16 and bfloat16)."""
    if not plain_numbers(numbers):
        return False
    computed = _F32 if dt.np in _LOW else dt
    try:
        for v in numbers:
            checked_scalar(v, computed)
    except RuntimeError:
        return False
    return True


class _Update:
    """One ternary foreach op: the per-tensor primitives whose kernels the one-dispatch path
    runs (``op`` out of place, ``op_`` in place, on ``x``, ``a`` and a third operand: an
    array, or the number of params ``value`` or ``values``), and the per-tensor function
    and method of torch's slow path."""

    def __init__(self, name: str, op: Op, op_: Op, function: Callable[..., Tensor],
                 method: Callable[..., Any]):
        self.name, self.tensor_op, self.tensor_op_ = name, op, op_
        self.function, self.method = function, method
        self.op_, self.op = register_pair(name, self._inplace_forward, self._forward, 3)

    @staticmethod
    def _thirds(n: int, third: Any, one: Any, many: Any) -> list[Any]:
        if third is not None:
            return third  # type: ignore[no-any-return]
        return [one] * n if many is None else list(many)

    def _inplace_forward(self, self_: list[Any], a: list[Any], b: Any, *, value: Any = None,
                         values: Any = None) -> None:
        write = kernel_of(self.tensor_op_, self_[0])
        for x, y, c in zip(self_, a, self._thirds(len(self_), b, value, values)):
            write(x, y, c)

    def _forward(self, self_: list[Any], a: list[Any], b: Any, out: list[Any], *,
                 value: Any = None, values: Any = None) -> None:
        write = into(kernel_of(self.tensor_op, self_[0]))
        for o, x, y, c in zip(out, self_, a, self._thirds(len(self_), b, value, values)):
            write(o, x, y, c)


class _Addc(_Update):
    """addcmul and addcdiv: ``self + value * tensor1 (*|/) tensor2`` with tensor lists and a
    value for every tensor."""

    def _inplace_forward(self, self_: list[Any], a: list[Any], b: Any, *, value: Any = None,
                         values: Any = None) -> None:
        write = kernel_of(self.tensor_op_, self_[0])
        for x, y, z, v in zip(self_, a, b, self._thirds(len(self_), None, value, values)):
            write(x, y, z, value=v)

    def _forward(self, self_: list[Any], a: list[Any], b: Any, out: list[Any], *,
                 value: Any = None, values: Any = None) -> None:
        write = into(kernel_of(self.tensor_op, self_[0]))
        for o, x, y, z, v in zip(out, self_, a, b, self._thirds(len(self_), None, value,
                                                                 values)):
            write(o, x, y, z, value=v)

    def parse(self, op: str, self_: Any, tensor1: Any, tensor2: Any, scalars: Any
              ) -> tuple[list[Tensor], list[Tensor], list[Tensor], list[Any]]:
        ts = tensor_list(op, self_, 0)
        t1 = tensor_list(op, tensor1, 1, "tensor1")
        t2 = tensor_list(op, tensor2, 2, "tensor2")
        nonempty(op, ts)
        same_lengths(op, ts, t1, t2)
        if scalars.__class__ is list or scalars.__class__ is tuple:
            return ts, t1, t2, list(number_list(op, ts, scalars, 3))
        if isinstance(scalars, Tensor):
            ndim, n = scalars._data.ndim, scalars._data.size
            if ndim != 1:
                raise RuntimeError(f"{op}: Expected packed scalar Tensor to be of dimension 1. "
                                   f"Got {ndim} instead.")
            if n != len(ts):
                raise RuntimeError(f"{op}: Expected length of scalars to match input of length "
                                   f"{len(ts)} but got {n} instead.")
            return ts, t1, t2, scalars.tolist()
        return ts, t1, t2, [number(op, scalars, "value", 4)] * len(ts)

    def call(self, ts: list[Tensor], t1: list[Tensor], t2: list[Tensor], values: list[Any]
             ) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
        dt = one_dispatch(ts + t1 + t2, (ts, t1, t2))
        if dt is None or not _fit(values, dt):
            return None
        if all([v == values[0] and v.__class__ is values[0].__class__ for v in values]):
            return (ts, t1, t2), {"value": values[0]}
        return (ts, t1, t2), {"values": tuple(values)}

    def inplace(self, self_: Any, tensor1: Any, tensor2: Any, scalars: Any) -> Any:
        op = f"_foreach_{self.name}_"
        ts, t1, t2, values = self.parse(op, self_, tensor1, tensor2, scalars)
        call = self.call(ts, t1, t2, values)
        if call is not None and writable(op, ts):
            check_overlaps(op, ts, [t1, t2])
            self.op_.door(*call)  # type: ignore[union-attr]
            return self_
        checked_before_writes(op, ts, [t1, t2], _dt.result_type)
        for t, a, b, v in zip(ts, t1, t2, values):
            self.method(t, a, b, value=v)
        return self_

    def functional(self, self_: Any, tensor1: Any, tensor2: Any, scalars: Any
                   ) -> list[Tensor]:
        op = f"_foreach_{self.name}"
        ts, t1, t2, values = self.parse(op, self_, tensor1, tensor2, scalars)
        call = self.call(ts, t1, t2, values)
        if call is None:
            return [self.function(t, a, b, value=v) for t, a, b, v in zip(ts, t1, t2, values)]
        out = results(self.tensor_op.table["meta"], [ts, t1, t2], ts[0].dtype)
        self.op.door((*call[0], out), call[1])  # type: ignore[union-attr]
        return fresh(out)


class _Lerp(_Update):
    """lerp: ``self + weight * (tensors1 - self)``, the weight a number, a number for every
    tensor or a tensor for every tensor."""

    def parse(self, op: str, self_: Any, tensors1: Any, weight: Any
              ) -> tuple[list[Tensor], list[Tensor], str, list[Any]]:
        ts = tensor_list(op, self_, 0)
        ends = tensor_list(op, tensors1, 1, "tensors1")
        nonempty(op, ts)
        same_lengths(op, ts, ends)
        if weight.__class__ is list or weight.__class__ is tuple:
            if weight and any([isinstance(w, Tensor) for w in weight]):
                weights = tensor_list(op, weight, 2, "weights")
                same_lengths(op, ts, weights)
                return ts, ends, "list", weights
            return ts, ends, "scalars", list(number_list(op, ts, weight, 2))
        return ts, ends, "scalar", [number(op, weight, "weight", 3)] * len(ts)

    def call(self, ts: list[Tensor], ends: list[Tensor], kind: str, weights: list[Any]
             ) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
        if kind == "list":
            dt = one_dispatch(ts + ends + weights, (ts, ends, weights))
            return None if dt is None else ((ts, ends, weights), {})
        dt = one_dispatch(ts + ends, (ts, ends))
        if dt is None or not _fit(weights, dt):
            return None
        if kind == "scalar":
            return (ts, ends, None), {"value": weights[0]}
        return (ts, ends, None), {"values": tuple(weights)}

    def inplace(self, self_: Any, tensors1: Any, weight: Any) -> Any:
        op = "_foreach_lerp_"
        ts, ends, kind, weights = self.parse(op, self_, tensors1, weight)
        call = self.call(ts, ends, kind, weights)
        if call is not None and writable(op, ts):
            check_overlaps(op, ts, [ends, weights] if kind == "list" else [ends])
            self.op_.door(*call)  # type: ignore[union-attr]
            return self_
        checked_before_writes(op, ts, [ends, weights], _dt.result_type)
        for t, e, w in zip(ts, ends, weights):
            self.method(t, e, w)
        return self_

    def functional(self, self_: Any, tensors1: Any, weight: Any) -> list[Tensor]:
        op = "_foreach_lerp"
        ts, ends, kind, weights = self.parse(op, self_, tensors1, weight)
        call = self.call(ts, ends, kind, weights)
        if call is None:
            return [self.function(t, e, w) for t, e, w in zip(ts, ends, weights)]
        out = results(self.tensor_op.table["meta"], [ts, ends, weights], ts[0].dtype)
        self.op.door((*call[0], out), call[1])  # type: ignore[union-attr]
        return fresh(out)


ADDCMUL = _Addc("addcmul", fused_updates.ADDCMUL, fused_updates.ADDCMUL_, fused_updates.addcmul,
                fused_updates.addcmul_)
ADDCDIV = _Addc("addcdiv", fused_updates.ADDCDIV, fused_updates.ADDCDIV_, fused_updates.addcdiv,
                fused_updates.addcdiv_)
LERP = _Lerp("lerp", fused_updates.LERP, fused_updates.LERP_, fused_updates.lerp,
             fused_updates.lerp_)


def _foreach_addcmul(self: Any, tensor1: Any, tensor2: Any, value: Any = 1) -> list[Tensor]:
    """torch._foreach_addcmul: ``addcmul(self[i], tensor1[i], tensor2[i], value=...)`` of each
    tensor; ``value`` a number, a list of numbers or a 1-d tensor of them (torch's
    ``scalars``); a list of new tensors."""
    return ADDCMUL.functional(self, tensor1, tensor2, value)


def _foreach_addcmul_(self: Any, tensor1: Any, tensor2: Any, value: Any = 1) -> Any:
    """torch._foreach_addcmul_: ``_foreach_addcmul`` written into ``self``; returns ``self``."""
    return ADDCMUL.inplace(self, tensor1, tensor2, value)


def _foreach_addcdiv(self: Any, tensor1: Any, tensor2: Any, value: Any = 1) -> list[Tensor]:
    """torch._foreach_addcdiv: ``addcdiv(self[i], tensor1[i], tensor2[i], value=...)`` of each
    tensor; ``value`` as for ``_foreach_addcmul``; a list of new tensors."""
    return ADDCDIV.functional(self, tensor1, tensor2, value)


def _foreach_addcdiv_(self: Any, tensor1: Any, tensor2: Any, value: Any = 1) -> Any:
    """torch._foreach_addcdiv_: ``_foreach_addcdiv`` written into ``self``; returns ``self``."""
    return ADDCDIV.inplace(self, tensor1, tensor2, value)


def _foreach_lerp(self: Any, tensors1: Any, weight: Any) -> list[Tensor]:
    """torch._foreach_lerp: ``lerp(self[i], tensors1[i], weight)`` of each tensor; ``weight`` a
    number, a list of numbers or a list of tensors; a list of new tensors."""
    return LERP.functional(self, tensors1, weight)


def _foreach_lerp_(self: Any, tensors1: Any, weight: Any) -> Any:
    """torch._foreach_lerp_: ``_foreach_lerp`` written into ``self``; returns ``self``."""
    return LERP.inplace(self, tensors1, weight)


FUNCTIONS = ["_foreach_addcmul", "_foreach_addcmul_", "_foreach_addcdiv", "_foreach_addcdiv_",
             "_foreach_lerp", "_foreach_lerp_"]
METHODS: dict[str, Any] = {}
