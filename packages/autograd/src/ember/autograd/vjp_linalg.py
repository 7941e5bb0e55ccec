"""VJPs of products: matmul (and the mm/bmm/mv/dot forms dispatching it), addmm (and
addmv/baddbmm), addbmm, vdot, outer, kron, tensordot, einsum (a pairwise contraction),
cross, trace. Each product keeps an operand only for the other operand's gradient, as
torch's do; shapes come from the node's metadata."""

from __future__ import annotations

from typing import Any

import ember.core as E
from ember.core.tensor import Tensor

from .formula import Formula, crossed
from .vjp_elementwise import needs

Grads = tuple[Any, ...]

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _mT(t: Tensor) -> Tensor:
    return t.transpose(-1, -2)


def product_grads(x: Tensor, y: Tensor, g: Tensor, want_x: bool, want_y: bool
                  ) -> tuple[Tensor | None, Tensor | None]:
    """Gradients of ``x @ y`` (any ranks >= 1); batch dims may come back broadcast."""
    nx, ny = x.ndim, y.ndim
    gx = gy = None
    if nx == 1 and ny == 1:
        gx = g * y if want_x else None
        gy = g * x if want_y else None
    elif ny == 1:  # (..., m, k) @ (k,)
        gx = g.unsqueeze(-1) * y if want_x else None
        if want_y:
            gy = _mT(x).matmul(g) if nx == 2 else (_mT(x).matmul(g.unsqueeze(-1))).squeeze(-1)
    elif nx == 1:  # (k,) @ (..., k, n)
        if want_x:
            gx = y.matmul(g) if ny == 2 else (y.matmul(g.unsqueeze(-1))).squeeze(-1)
        gy = x.unsqueeze(-1) * g.unsqueeze(-2) if want_y else None
    else:
        gx = g.matmul(_mT(y)) if want_x else None
        if want_y:
            if ny == 2 and nx > 2:
                # fold the batch into rows: one matrix product, no (batch, k, n) temporary
                k, cols = x.shape[-1], g.shape[-1]
                gy = _mT(x.reshape(-1, k)).matmul(g.reshape(-1, cols))
            else:
                gy = _mT(x).matmul(g)
    return gx, gy


def matmul(n: Any, g: Tensor) -> Grads:
    want_x, want_y = needs(n, 0), needs(n, 1)
    x = n.saved(0) if want_y else n.inputs[0]
    y = n.saved(1) if want_x else n.inputs[1]
    return product_grads(x, y, g, want_x, want_y)


def addmm(n: Any, g: Tensor) -> Grads:
    p = n.params
    beta, alpha = p["beta"], p["alpha"]
    gi = (g if beta == 1 else g * beta) if needs(n, 0) else None
    want1, want2 = needs(n, 1), needs(n, 2)
    m1 = n.saved(1) if want2 else n.inputs[1]
    m2 = n.saved(2) if want1 else n.inputs[2]
    g1, g2 = product_grads(m1, m2, g, want1, want2)
    if alpha != 1:
        g1 = None if g1 is None else g1 * alpha
        g2 = None if g2 is None else g2 * alpha
    return gi, g1, g2


def addbmm(n: Any, g: Tensor) -> Grads:
    p = n.params
    beta, alpha = p["beta"], p["alpha"]
    gi = (g if beta == 1 else g * beta) if needs(n, 0) else None
    g1 = g.unsqueeze(0).matmul(_mT(n.saved(2))) * alpha if needs(n, 1) else None
    g2 = _mT(n.saved(1)).matmul(g.unsqueeze(0)) * alpha if needs(n, 2) else None
    return gi, g1, g2


def vdot(n: Any, g: Tensor) -> Grads:
    gx = g * n.saved(1) if needs(n, 0) else None
    gy = g * n.saved(0) if needs(n, 1) else None
    return gx, gy


def outer(n: Any, g: Tensor) -> Grads:
    gx = (g * n.saved(1)).sum(-1) if needs(n, 0) else None
    gy = (g * n.saved(0).unsqueeze(-1)).sum(0) if needs(n, 1) else None
    return gx, gy


def kron(n: Any, g: Tensor) -> Grads:
    shape_a, shape_b = n.metas[0][0], n.metas[1][0]
    rank = max(len(shape_a), len(shape_b))
    sa = (1,) * (rank - len(shape_a)) + tuple(shape_a)
    sb = (1,) * (rank - len(shape_b)) + tuple(shape_b)
    pairs = g.reshape([v for i in range(rank) for v in (sa[i], sb[i])])
    ga = gb = None
    if needs(n, 0):
        spread_b = n.saved(1).reshape([v for s in sb for v in (1, s)])
        ga = (pairs * spread_b).sum(tuple(range(1, 2 * rank, 2))).reshape(shape_a)
    if needs(n, 1):
        spread_a = n.saved(0).reshape([v for s in sa for v in (s, 1)])
        gb = (pairs * spread_a).sum(tuple(range(0, 2 * rank, 2))).reshape(shape_b)
    return ga, gb


def einsum_operand_grad(equation: str, shapes: list[tuple[int, ...]],
                        operands: list[Tensor | None], g: Tensor, i: int) -> Tensor:
    """The gradient of operand ``i`` of a spelled-out einsum whose terms repeat no label: an
    einsum of the output's gradient with the other operands (``operands[i]`` is not read;
    ``shapes`` are every operand's). A label only the target holds gets a ones operand."""
    lhs, rhs = equation.split("->")
    terms = lhs.split(",")
    sizes: dict[str, int] = {}
    for term, shape in zip(terms, shapes):
        for label, size in zip(term, shape):
            if sizes.get(label, 1) == 1:
                sizes[label] = size
    others = [(t, op) for j, (t, op) in enumerate(zip(terms, operands)) if j != i]
    available = set(rhs).union(*(set(t) for t, _ in others))
    alone = [label for label in terms[i] if label not in available]
    ones = [E.ones(sizes[label], dtype=g.dtype, device=g.device) for label in alone]
    spec = ",".join([rhs] + [t for t, _ in others] + alone) + "->" + terms[i]
    # in the gradient's (the promoted) dtype: torch's contractions take one dtype, and an
    # einsum torch computes by products alone (an outer product) took operands of two
    others_in = [op if op.dtype is g.dtype else op.to(g.dtype) for _, op in others]  # type: ignore[union-attr]
    return E.einsum(spec, g, *others_in, *ones)  # type: ignore[no-any-return]


def _pair_grads(n: Any, equation: str, g: Tensor) -> Grads:
    """Both operands' gradients of a two-operand einsum, each from the other operand."""
    shapes = [m[0] for m in n.metas]
    gx = einsum_operand_grad(equation, shapes, [None, n.saved(1)], g, 0) if needs(n, 0) else None
    gy = einsum_operand_grad(equation, shapes, [n.saved(0), None], g, 1) if needs(n, 1) else None
    return gx, gy


def einsum(n: Any, g: Tensor) -> Grads:
    return _pair_grads(n, n.params["equation"], g)


def tensordot(n: Any, g: Tensor) -> Grads:
    p = n.params
    dims_a, dims_b = p["dims_a"], p["dims_b"]
    letters = iter(_LETTERS)
    ta = [next(letters) for _ in n.metas[0][0]]
    tb = [next(letters) for _ in n.metas[1][0]]
    for da, db in zip(dims_a, dims_b):
        tb[db] = ta[da]
    out = [c for d, c in enumerate(ta) if d not in dims_a] + \
          [c for d, c in enumerate(tb) if d not in dims_b]
    return _pair_grads(n, f"{''.join(ta)},{''.join(tb)}->{''.join(out)}", g)


def cross(n: Any, g: Tensor) -> Grads:
    d = n.params["dim"]
    gx = E.cross(n.saved(1), g, dim=d) if needs(n, 0) else None
    gy = E.cross(g, n.saved(0), dim=d) if needs(n, 1) else None
    return gx, gy


def trace(n: Any, g: Tensor) -> Grads:
    rows, cols = n.metas[0][0]
    # g on the diagonal and zeros elsewhere, as torch fills it (a product would give an
    # infinite g NaNs off the diagonal)
    return (E.where(E.eye(rows, cols, dtype=E.bool, device=g.device), g, 0.0),)


def _matmul_name(n: Any) -> str:
    ranks = (len(n.metas[0][0]), len(n.metas[1][0]))
    return {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (2, 2): "MmBackward0",
            (3, 3): "BmmBackward0"}.get(ranks, "MatmulBackward0")


def _addmm_name(n: Any) -> str:
    """addmv and baddbmm dispatch addmm: torch names their nodes after them."""
    if len(n.metas[2][0]) == 1:
        return "AddmvBackward0"
    return "BaddbmmBackward0" if len(n.metas[1][0]) == 3 else "AddmmBackward0"


def _mats_crossed(edges: tuple[Any, ...]) -> tuple[int, ...]:
    """The two factors of ``beta * input + alpha * m1 @ m2``, each read for the other's
    gradient (``input`` is never read)."""
    return tuple(i for i in (1, 2) if edges[3 - i] is not None)


F = Formula
FORMULAS: dict[str, Formula] = {
    # ------------------------------------------------------------------ linear algebra
    "matmul": F(matmul, crossed, name=_matmul_name),
    "addmm": F(addmm, _mats_crossed, name=_addmm_name),
    "addbmm": F(addbmm, _mats_crossed),
    "vdot": F(vdot, crossed, conjugates=True),
    # torch's outer is a product of the column ``input`` and the row ``vec2``
    "outer": F(outer, crossed, name="MulBackward0"),
    "kron": F(kron, crossed),
    "tensordot": F(tensordot, crossed),
    "einsum": F(einsum, crossed),
    "cross": F(cross, crossed, name="LinalgCrossBackward0"),
    "trace": F(trace),
}
