"""One entry of autograd's formula table: a VJP and what it reads.

The table itself is ``formulas.FORMULAS``, gathered from the ``vjp_*`` modules; the
helpers here declare what entries save.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ember.core.tensor import Tensor

__all__ = ["Formula", "X", "XY", "R", "crossed", "divided", "own",
           "tensor_operand", "missing_formula", "not_implemented", "NOT_IMPLEMENTED", "keep",
           "by_dim"]


class Formula:
    """A VJP and what it reads: ``saved`` input indices and ``result`` (whether it reads
    the outputs, or which of them for ops with several: ``(1,)``, the indices of max),
    each either fixed or a function of the node's edges where it depends on which inputs
    need a gradient (an edge is None for an input that gets none; ``result``'s also of the
    operands). Only what is declared is kept: torch saves no more for the same formula.

    ``name``: the node's name when it is not CamelCase(op) + "Backward0"; a function of the
    node where torch's name depends on the call (``SumBackward0`` vs ``SumBackward1``).
    ``setup``: called as ``setup(node, operands, outputs)`` when the node is made (a custom
    op's ``setup_context``: what it saves, it keeps itself). ``listed``: the operands the
    node's ``next_functions`` lists, where torch's schema makes them tensors (its arithmetic
    takes numbers as tensors); by default, the floating-point tensor operands.
    ``scalar_first``: the entry of the call whose first operand is a number, where torch's
    overload for it (``remainder.Scalar_Tensor``) has a derivative of its own or none.
    ``passes_complex``: the VJP may give a real input a complex gradient, which the engine
    then refuses as torch's does (where, lerp, logaddexp, a sum to a complex dtype, a custom
    Function); otherwise the engine takes the real part, as torch's other formulas for real
    and complex operands do themselves.
    ``outputs``: the outputs that are differentiable, for ops with several where torch's
    are not all (the mean and rstd of ``native_layer_norm``); by default every floating one.
    ``conjugates``: the VJP applies torch's conjugates itself (a non-holomorphic op's:
    ``abs``, a custom Function's). The others are written as the gradient times the
    derivative, ``g * f'(z)``; torch's VJP of a holomorphic op is ``g * conj(f'(z))``,
    which the engine computes as ``conj(vjp(conj(g)))`` for a complex gradient (a real
    coefficient is its own conjugate: linear ops are unchanged).
    """

    __slots__ = ("vjp", "saved", "saves_result", "name", "node_class", "variants", "setup",
                 "listed", "scalar_first", "passes_complex", "conjugates", "outputs")

    def __init__(self, vjp: Callable[..., Any],
                 saved: tuple[int, ...] | Callable[[Any], tuple[int, ...]] = (),
                 result: bool | tuple[int, ...] | Callable[[Any, Any], bool] = False,
                 name: str | Callable[[Any], str] | None = None,
                 setup: Callable[..., None] | None = None,
                 listed: tuple[int, ...] | None = None, passes_complex: bool = False,
                 conjugates: bool = False, outputs: tuple[int, ...] | None = None):
        self.vjp = vjp
        self.outputs = outputs
        self.passes_complex = passes_complex
        self.conjugates = conjugates
        self.setup = setup
        self.listed = listed
        self.saved = saved
        self.saves_result = result
        self.name = name
        self.node_class: Any = None
        self.variants = callable(name)
        self.scalar_first: Formula | None = None

    def default_name(self, opname: str) -> str:
        if isinstance(self.name, str):
            return self.name
        return "".join(p.capitalize() for p in re.split(r"_+", opname) if p) + "Backward0"


F = Formula
X, XY, R = (0,), (0, 1), True


def crossed(edges: tuple[Any, ...]) -> tuple[int, ...]:
    """Products: each operand is read only for the other one's gradient."""
    if edges[1] is None:
        return (1,) if edges[0] is not None else ()
    return (0, 1) if edges[0] is not None else (0,)


def tensor_operand(index: int) -> Callable[[tuple[Any, ...], tuple[Any, ...]], bool]:
    """A ``result`` declaration: the outputs are kept when operand ``index`` is a tensor,
    needing a gradient or not (torch keeps an op's outputs whenever its overload's
    formulas read them, and checks their version at backward)."""

    def when(edges: tuple[Any, ...], args: tuple[Any, ...]) -> bool:
        return isinstance(args[index], Tensor)

    return when


def own(edges: tuple[Any, ...]) -> tuple[int, ...]:
    """Each input is read only for its own gradient."""
    return tuple(i for i, e in enumerate(edges) if e is not None)


def divided(edges: tuple[Any, ...]) -> tuple[int, ...]:
    """Quotients: the divisor always, the dividend for the divisor's gradient."""
    return (0, 1) if edges[1] is not None else (1,)


def missing_formula(opname: str) -> Formula:
    """The entry for a differentiable op without a formula yet: its backward raises."""

    def vjp(node: Any, grad: Any) -> Any:
        raise NotImplementedError(f"the derivative for '{opname}' is not implemented.")

    return Formula(vjp)


def not_implemented(opname: str) -> Formula:
    """The entry for an op torch records without a derivative (``floor_divide``): its
    backward raises torch's RuntimeError."""

    def vjp(node: Any, grad: Any) -> Any:
        raise RuntimeError(f"derivative for aten::{opname} is not implemented")

    return Formula(vjp, name=NOT_IMPLEMENTED)


NOT_IMPLEMENTED = "torch::autograd::NotImplemented"  # the name of their nodes


def keep(n: Any, g: Any) -> tuple[Any, ...]:
    """The identity: the gradient passes as it is."""
    return (g,)


def by_dim(base: str) -> Callable[[Any], str]:
    """torch numbers the overloads: ``SumBackward0`` reduces everything, ``1`` some dims."""

    def name(n: Any) -> str:
        return base + ("0" if n.params["dim"] is None and len(n.metas[0][0]) else "1")

    return name
