"""torch's efficient zero gradient (``ZeroGrad``), and which nodes keep it one.

sgn's gradient of a real input is a zero tensor that torch's mul, div, add and views pass
on as such, where every other op makes it a tensor of zeros: a NaN or an inf a node saved
then does not turn the gradient into NaN (``0 * nan``) through the nodes that keep it.
The engine (``engine.GraphTask.run_zeros``) passes a ``ZeroGrad`` through a node without
its formula where ``kept_zeros`` says torch's formula keeps it, and materialises it where
a hook, a target or a leaf's ``.grad`` sees it.
"""

from __future__ import annotations

from typing import Any

import ember.core as E
from ember.core import dtypes as _dt
from ember.core.tensor import Tensor

from .formula import NOT_IMPLEMENTED
from .graph import Node, saved_operand

__all__ = ["ZeroGrad", "ZERO", "KEEP_ZERO", "kept_zeros", "zero_count", "materialized",
           "added"]


class ZeroGrad:
    """A gradient known to be zero, as torch's efficient zero tensor (sgn's gradient of a
    real input): the nodes it reaches pass it on without running their formulas, so a NaN
    or an inf they saved does not turn it into NaN (``0 * nan``), and it becomes a tensor of
    zeros only where a hook, a target of ``autograd.grad`` or a leaf's ``.grad`` sees it.
    A formula returns ``ZERO``; the engine gives what it sends on the input's ``meta``
    (shape, dtype, device)."""

    __slots__ = ("meta",)

    def __init__(self, meta: tuple[Any, Any, Any] | None):
        self.meta = meta

    def materialize(self) -> Tensor:
        shape, dtype, device = self.meta  # type: ignore[misc]
        return E.zeros(shape, dtype=dtype, device=device)  # type: ignore[no-any-return]


ZERO = ZeroGrad(None)


def added(old: Any, g: Any) -> Any:
    """``old + g`` for gradients that either may be a ``ZeroGrad``."""
    if g.__class__ is ZeroGrad:
        return old
    return g if old.__class__ is ZeroGrad else old + g


# The ops whose formulas keep torch's zero tensor a zero tensor for every input: those
# built from the ops it has kernels for (mul, div, add, the views of the same elements) and
# no other; through any other node the zero becomes a plain tensor of zeros.
KEEP_ZERO = frozenset((
    "abs", "acos", "acosh", "add", "addcdiv", "addcmul", "addmm", "amax", "asin", "asinh",
    "atan", "atan2", "atanh", "cat", "clone", "copysign", "cos", "cosh", "deg2rad", "digamma",
    "erf", "erfc", "erfinv", "exp", "exp2", "expm1", "fmod", "frac", "hypot", "lerp", "lgamma",
    "log", "log10", "log1p", "log2", "logaddexp", "logsumexp", "mul", "nansum", "norm", "prod",
    "rad2deg", "remainder", "reshape", "rsqrt", "sgn", "sin", "sinh", "sqrt", "square",
    "squeeze", "stack", "tan", "unsqueeze", "var", "vdot", "view"))
_ALL_KEPT = (True,) * 8
_BOOL = _dt.bool


def kept_zeros(node: Node) -> tuple[bool, ...] | None:
    """For each input of ``node``, whether a zero gradient stays ``ZeroGrad`` through it;
    None where its formula must run (on zeros)."""
    if node.op is None or node.formula.name == NOT_IMPLEMENTED or any(
            a.__class__ is Tensor and saved_operand(a).dtype is _BOOL for a in node.args):
        # (a bool operand: torch's formula runs, and refuses it where it does; a node
        # recorded without a derivative raises on zeros too)
        return None
    name = node.op.name
    if name in KEEP_ZERO:
        return _ALL_KEPT
    args = node.args
    if name == "sum":  # over every element: the gradient's expand; with dims, a copy
        return None if node.params else _ALL_KEPT
    if name == "pow":  # of a number exponent or base; two tensors' takes logs and copies
        return _ALL_KEPT if _is_number(args[0]) or _is_number(args[1]) else None
    if name == "matmul":  # of two vectors: torch's dot
        return _ALL_KEPT if len(node.metas[0][0]) == len(node.metas[1][0]) == 1 else None
    if name in ("sub", "div") and not _is_number(args[0]):
        return (True, False)  # the divisor's and the subtrahend's negate
    return None


def _is_number(arg: Any) -> bool:
    """Whether a node's operand was a number (its tensors are None or saved)."""
    return arg is not None and not isinstance(arg, Tensor)


def zero_count(node: Node, g: Any) -> int:
    """How many of the node's output gradients are ``ZeroGrad`` (None counts as one)."""
    if node.n_out == 1:
        return 1 if g.__class__ is ZeroGrad else 0
    zeros = sum(1 for x in g if x.__class__ is ZeroGrad)
    return zeros + sum(1 for x in g if x is None) if zeros else 0


def materialized(node: Node, g: Any) -> Any:
    """The node's output gradients with each ``ZeroGrad`` made a tensor of zeros."""
    if node.n_out == 1:
        return g.materialize() if g.__class__ is ZeroGrad else g
    return [x.materialize() if x.__class__ is ZeroGrad else x for x in g]
