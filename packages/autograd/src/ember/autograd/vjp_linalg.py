"""VJPs of products: matmul (and the mm/bmm/mv/dot forms recorded as it), addmm, addbmm,
vdot, outer, kron, tensordot, einsum, cross, trace."""

from __future__ import annotations

from typing import Any

import ember.core as E
from ember.core.tensor import Tensor

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
    a, b = n.saved(0), n.saved(1)
    rank = max(a.ndim, b.ndim)
    sa = (1,) * (rank - a.ndim) + tuple(a.shape)
    sb = (1,) * (rank - b.ndim) + tuple(b.shape)
    pairs = g.reshape([v for i in range(rank) for v in (sa[i], sb[i])])
    a_axes = tuple(range(0, 2 * rank, 2))
    b_axes = tuple(range(1, 2 * rank, 2))
    ga = gb = None
    if needs(n, 0):
        spread_b = b.reshape([v for s in sb for v in (1, s)])
        ga = (pairs * spread_b).sum(b_axes).reshape(a.shape)
    if needs(n, 1):
        spread_a = a.reshape([v for s in sa for v in (s, 1)])
        gb = (pairs * spread_a).sum(a_axes).reshape(b.shape)
    return ga, gb


def einsum_operand_grad(equation: str, operands: list[Tensor], g: Tensor, i: int) -> Tensor:
    """The gradient of operand ``i`` of a spelled-out einsum: an einsum of the output's
    gradient with the other operands. Labels the target has alone get a ones operand;
    a repeated label (a diagonal) gets a fresh label tied to it by an identity matrix."""
    lhs, rhs = equation.split("->")
    terms = lhs.split(",")
    sizes: dict[str, int] = {}
    for term, op in zip(terms, operands):
        for label, size in zip(term, op.shape):
            sizes[label] = max(sizes.get(label, 1), size)
    others = [(t, op) for j, (t, op) in enumerate(zip(terms, operands)) if j != i]
    available = set(rhs).union(*(set(t) for t, _ in others))
    fresh = [c for c in _LETTERS if c not in equation]
    extra_terms: list[str] = []
    extra_ops: list[Tensor] = []
    out_labels: list[str] = []
    for label in terms[i]:
        if label in out_labels:
            tied = fresh.pop()
            out_labels.append(tied)
            extra_terms.append(label + tied)
            extra_ops.append(E.eye(sizes[label], dtype=g.dtype, device=g.device))
            continue
        out_labels.append(label)
        if label not in available:
            extra_terms.append(label)
            extra_ops.append(E.ones(sizes[label], dtype=g.dtype, device=g.device))
    spec = ",".join([rhs] + [t for t, _ in others] + extra_terms) + "->" + "".join(out_labels)
    return E.einsum(spec, g, *[op for _, op in others], *extra_ops)  # type: ignore[no-any-return]


def einsum(n: Any, g: Tensor) -> Grads:
    equation = n.params["equation"]
    count = len(n.inputs)
    if not any(needs(n, i) for i in range(count)):
        return (None,) * count
    operands = [n.saved(i) for i in range(count)]
    return tuple(einsum_operand_grad(equation, operands, g, i) if needs(n, i) else None
                 for i in range(count))


def tensordot(n: Any, g: Tensor) -> Grads:
    p = n.params
    a, b = n.saved(0), n.saved(1)
    dims_a, dims_b = p["dims_a"], p["dims_b"]
    letters = iter(_LETTERS)
    ta = [next(letters) for _ in range(a.ndim)]
    tb = [next(letters) for _ in range(b.ndim)]
    for da, db in zip(dims_a, dims_b):
        tb[db] = ta[da]
    out = [c for d, c in enumerate(ta) if d not in dims_a] + \
          [c for d, c in enumerate(tb) if d not in dims_b]
    equation = f"{''.join(ta)},{''.join(tb)}->{''.join(out)}"
    return tuple(einsum_operand_grad(equation, [a, b], g, i) if needs(n, i) else None
                 for i in range(2))


def cross(n: Any, g: Tensor) -> Grads:
    d = n.params["dim"]
    gx = E.cross(n.saved(1), g, dim=d) if needs(n, 0) else None
    gy = E.cross(g, n.saved(0), dim=d) if needs(n, 1) else None
    return gx, gy


def trace(n: Any, g: Tensor) -> Grads:
    rows, cols = n.inputs[0]._data.shape
    return (g * E.eye(rows, cols, dtype=g.dtype, device=g.device),)
