"""Dispatch-table samples of the products (products.py, contraction.py,
einsum_contraction.py): every rank combination of matmul and its fixed-rank forms, broadcast
batches and inputs, 0-d, empty and transposed operands, and the params that change a
result's geometry."""

from __future__ import annotations

from typing import Any

from dispatch_oracle import make


def _two(fn: Any, a: tuple[int, ...], b: tuple[int, ...], dtype: str = "float32",
         ta: bool = False, tb: bool = False) -> Any:
    """A sample calling ``fn(m, x, y)`` on random operands of shapes ``a`` and ``b``
    (``ta``/``tb``: laid out transposed)."""
    return lambda m, d: fn(m, make(m, d, a, dtype, transposed=ta),
                           make(m, d, b, dtype, seed=1, transposed=tb))


def _three(fn: Any, c: tuple[int, ...], a: tuple[int, ...], b: tuple[int, ...],
           dtype: str = "float32", transposed: bool = False) -> Any:
    return lambda m, d: fn(m, make(m, d, c, dtype, transposed=transposed),
                           make(m, d, a, dtype, seed=1, transposed=transposed),
                           make(m, d, b, dtype, seed=2, transposed=transposed))


def _matmul(m: Any, x: Any, y: Any) -> Any:
    return x @ y


MATMUL = [
    _two(_matmul, (3,), (3,)), _two(_matmul, (3,), (3, 4)), _two(_matmul, (2, 3), (3,)),
    _two(_matmul, (2, 3), (3, 4)), _two(_matmul, (2, 3), (3, 4), ta=True, tb=True),
    _two(_matmul, (0, 3), (3, 4)), _two(_matmul, (2, 0), (0, 4)), _two(_matmul, (2, 3), (3, 0)),
    _two(_matmul, (2, 2, 3), (3, 4)), _two(_matmul, (2, 2, 3), (3, 4), ta=True),
    _two(_matmul, (2, 2, 3), (3,)), _two(_matmul, (3,), (2, 3, 4)),
    _two(_matmul, (5, 3), (2, 3, 4)), _two(_matmul, (2, 2, 3), (2, 3, 4), tb=True),
    _two(_matmul, (2, 1, 2, 3), (3, 3, 4)), _two(_matmul, (1, 2, 3), (5, 3, 2), ta=True),
    _two(_matmul, (2, 3, 0), (0, 4)), _two(_matmul, (2, 3), (3, 4), "float16"),
    _two(_matmul, (2, 3), (3, 4), "int64"),
    _two(lambda m, x, y: m.mm(x, y), (2, 3), (3, 4), tb=True),
    _two(lambda m, x, y: m.bmm(x, y), (2, 2, 3), (2, 3, 4), ta=True),
    _two(lambda m, x, y: m.mv(x, y), (2, 3), (3,), ta=True),
    _two(lambda m, x, y: m.dot(x, y), (3,), (3,)),
    _two(lambda m, x, y: m.matmul(x, y), (1, 2, 3), (4, 3, 2)),
]

ADDMM = [
    _three(lambda m, c, x, y: m.addmm(c, x, y), (2, 4), (2, 3), (3, 4)),
    _three(lambda m, c, x, y: m.addmm(c, x, y, beta=0.5, alpha=2), (4,), (2, 3), (3, 4)),
    _three(lambda m, c, x, y: m.addmm(c, x, y, beta=0), (), (2, 3), (3, 4)),
    _three(lambda m, c, x, y: m.addmm(c, x, y), (2, 4), (2, 3), (3, 4), transposed=True),
    _three(lambda m, c, x, y: m.addmm(c, x, y, alpha=3), (0, 4), (0, 3), (3, 4)),
    _three(lambda m, c, x, y: m.addmm(c, x, y, beta=2), (2, 4), (2, 3), (3, 4), "int64"),
    _three(lambda m, c, x, y: m.addmv(c, x, y), (2,), (2, 3), (3,)),
    _three(lambda m, c, x, y: m.addmv(c, x, y, alpha=-1), (1,), (2, 3), (3,), transposed=True),
    _three(lambda m, c, x, y: m.baddbmm(c, x, y), (2, 2, 4), (2, 2, 3), (2, 3, 4)),
    _three(lambda m, c, x, y: m.baddbmm(c, x, y, beta=0.5), (4,), (2, 2, 3), (2, 3, 4),
           transposed=True),
    _three(lambda m, c, x, y: m.addmm(c, x, y), (2, 4), (2, 3), (3, 4), "bfloat16"),
]

ADDBMM = [
    _three(lambda m, c, x, y: m.addbmm(c, x, y), (2, 4), (5, 2, 3), (5, 3, 4)),
    _three(lambda m, c, x, y: m.addbmm(c, x, y, beta=0.5, alpha=2), (4,), (5, 2, 3), (5, 3, 4),
           transposed=True),
    _three(lambda m, c, x, y: m.addbmm(c, x, y), (), (0, 2, 3), (0, 3, 4)),
    _three(lambda m, c, x, y: m.addbmm(c, x, y), (2, 4), (3, 2, 3), (3, 3, 4), "float16"),
]

VDOT = [
    _two(lambda m, x, y: m.vdot(x, y), (3,), (3,)),
    _two(lambda m, x, y: m.vdot(x, y), (4,), (4,), "complex64"),
    _two(lambda m, x, y: m.vdot(x, y), (0,), (0,), "float64"),
]

CROSS = [
    _two(lambda m, x, y: m.cross(x, y, dim=1), (2, 3), (2, 3)),
    _two(lambda m, x, y: m.cross(x, y, dim=1), (2, 3), (1, 3)),
    _two(lambda m, x, y: m.cross(x, y, dim=0), (3, 4), (3, 4), ta=True),
    _two(lambda m, x, y: m.cross(x, y, dim=-2), (4, 3, 5), (4, 3, 5), ta=True, tb=True),
    _two(lambda m, x, y: m.cross(x, y, dim=1), (0, 3), (0, 3)),
    _two(lambda m, x, y: x.cross(y, dim=0), (3,), (3,), "int64"),
]

OUTER = [
    _two(lambda m, x, y: m.outer(x, y), (3,), (4,)),
    _two(lambda m, x, y: m.outer(x, y), (0,), (4,)),
    _two(lambda m, x, y: m.outer(x, y), (3,), (0,)),
    _two(lambda m, x, y: m.ger(x, y), (3,), (1,)),
    lambda m, d: m.outer(make(m, d, (3,), "int64"), make(m, d, (2,), seed=1)),
]

KRON = [
    _two(lambda m, x, y: m.kron(x, y), (2, 3), (4,)),
    _two(lambda m, x, y: m.kron(x, y), (2, 3), (2, 4)),
    _two(lambda m, x, y: m.kron(x, y), (), (4,)),
    _two(lambda m, x, y: m.kron(x, y), (2, 1, 2), (3, 2)),
    _two(lambda m, x, y: m.kron(x, y), (0, 2), (2, 2)),
    # torch refuses one transposed operand (its product cannot be viewed), not two
    _two(lambda m, x, y: m.kron(x, y), (2, 3), (2, 4), ta=True, tb=True),
    lambda m, d: m.kron(make(m, d, (2,), "int32"), make(m, d, (3,), "float64", seed=1)),
]

TENSORDOT = [
    _two(lambda m, x, y: m.tensordot(x, y, 2), (2, 3, 4), (3, 4, 5)),
    _two(lambda m, x, y: m.tensordot(x, y, 0), (2, 3), (4, 5)),
    _two(lambda m, x, y: m.tensordot(x, y, ([1, 2], [1, 0])), (2, 3, 4), (4, 3), ta=True),
    _two(lambda m, x, y: m.tensordot(x, y, 1), (2, 1), (3, 4)),
    _two(lambda m, x, y: m.tensordot(x, y, 1), (0, 3), (3, 2), tb=True),
    _two(lambda m, x, y: m.inner(x, y), (2, 3), (4, 3)),
    _two(lambda m, x, y: m.inner(x, y), (3,), (4, 3), "int64"),
]

EINSUM = [
    _two(lambda m, x, y: m.einsum("ij,jk->ik", x, y), (2, 3), (3, 4)),
    _two(lambda m, x, y: m.einsum("ij,jk", x, y), (2, 3), (3, 4), ta=True, tb=True),
    _two(lambda m, x, y: m.einsum("i,i", x, y), (3,), (3,)),
    _two(lambda m, x, y: m.einsum("i,j->ij", x, y), (3,), (2,)),
    _two(lambda m, x, y: m.einsum("i,j->ij", x, y), (3,), (0,)),
    _two(lambda m, x, y: m.einsum("bij,bjk->bik", x, y), (2, 2, 3), (2, 3, 4)),
    _two(lambda m, x, y: m.einsum("...ij,...jk->...ik", x, y), (5, 1, 2, 3), (4, 3, 4)),
    _two(lambda m, x, y: m.einsum("...ij,...jk", x, y), (5, 2, 3), (3, 4), ta=True),
    _two(lambda m, x, y: m.einsum("ij,ij->ij", x, y), (2, 3), (1, 3), ta=True),
    _two(lambda m, x, y: m.einsum("ij,jk->ik", x, y), (2, 1), (3, 4), ta=True),
    _two(lambda m, x, y: m.einsum("ij,kj->jik", x, y), (2, 3), (4, 3)),
    _two(lambda m, x, y: m.einsum("ij,kj->jik", x, y), (2, 3), (4, 3), tb=True),
    _two(lambda m, x, y: m.einsum("ij,ij->ji", x, y), (2, 3), (2, 3), ta=True),
    _two(lambda m, x, y: m.einsum("ij,jk->ki", x, y), (2, 3), (3, 4)),
    _two(lambda m, x, y: m.einsum("abj,jc->acb", x, y), (2, 3, 4), (4, 5)),
    _two(lambda m, x, y: m.einsum("ij,k->k", x, y), (2, 3), (3,)),
    _two(lambda m, x, y: m.einsum("ij,jk->ik", x, y), (2, 0), (0, 3)),
    _two(lambda m, x, y: m.einsum("bhqd,bhkd->bhqk", x, y), (2, 3, 4, 5), (2, 3, 6, 5)),
    _two(lambda m, x, y: m.einsum("ii,i->i", x, y), (3, 3), (3,)),
    _two(lambda m, x, y: m.einsum("ij,jk->ik", x, y), (2, 3), (3, 4), "float16"),
    lambda m, d: m.einsum("i,->i", make(m, d, (3,)), make(m, d, (), seed=1)),
    lambda m, d: m.einsum("ij,jk,kl->li", make(m, d, (2, 3)), make(m, d, (3, 4), seed=1),
                          make(m, d, (4, 5), seed=2)),
    lambda m, d: m.einsum("i,j,k->kji", make(m, d, (2,)), make(m, d, (3,), seed=1),
                          make(m, d, (4,), seed=2, transposed=True)),
    # with the einsums of one operand, which are views or sums of it
    lambda m, d: (m.einsum("ii->i", make(m, d, (3, 3))),
                  m.einsum("ijk->kji", make(m, d, (2, 3, 4))),
                  m.einsum("iij->ji", make(m, d, (3, 3, 2), transposed=True)),
                  m.einsum("ij->", make(m, d, (2, 3), "int32")),
                  m.einsum("ij,jk", make(m, d, (2, 3)), make(m, d, (3, 4), seed=1))),
]

TRACE = [
    lambda m, d: m.trace(make(m, d, (3, 3))),
    lambda m, d: m.trace(make(m, d, (2, 4), transposed=True)),
    lambda m, d: m.trace(make(m, d, (3, 3), "int32")),
    lambda m, d: make(m, d, (0, 3), "float64").trace(),
]

SAMPLES = {
    "matmul": MATMUL, "addmm": ADDMM, "addbmm": ADDBMM, "vdot": VDOT, "cross": CROSS,
    "outer": OUTER, "kron": KRON, "tensordot": TENSORDOT, "einsum": EINSUM, "trace": TRACE,
}
