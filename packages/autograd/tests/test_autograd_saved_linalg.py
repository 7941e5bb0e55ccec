"""The products save no more for backward than torch does: every differentiable op of
products.py, contraction.py and einsum_contraction.py, with each tensor operand requiring
grad or not."""

import itertools

import pytest
from autograd_oracle import check_saved

M, V, B = (3, 4), (4,), (2, 3, 4)

CASES = [
    ("mm", lambda m, x, y: x @ y, [M, (4, 5)]),
    ("mv", lambda m, x, y: x @ y, [M, V]),
    ("dot", lambda m, x, y: x @ y, [V, V]),
    ("vm", lambda m, x, y: x @ y, [(3,), M]),
    ("bmm", lambda m, x, y: m.bmm(x, y), [B, (2, 4, 5)]),
    ("matmul_batch_2d", lambda m, x, y: x @ y, [B, (4, 5)]),
    ("matmul_2d_batch", lambda m, x, y: x @ y, [(5, 3), (2, 3, 4)]),
    ("matmul_batch_vec", lambda m, x, y: x @ y, [B, V]),
    ("matmul_vec_batch", lambda m, x, y: x @ y, [(3,), B]),
    ("matmul_broadcast", lambda m, x, y: x @ y, [(2, 1, 3, 4), (5, 4, 2)]),
    ("addmm", lambda m, c, x, y: m.addmm(c, x, y, beta=0.5, alpha=2), [(3, 5), M, (4, 5)]),
    ("addmm_broadcast", lambda m, c, x, y: m.addmm(c, x, y), [(5,), M, (4, 5)]),
    ("addmv", lambda m, c, x, y: m.addmv(c, x, y), [(3,), M, V]),
    ("baddbmm", lambda m, c, x, y: m.baddbmm(c, x, y), [(2, 3, 5), B, (2, 4, 5)]),
    ("addbmm", lambda m, c, x, y: m.addbmm(c, x, y, beta=0.5, alpha=2), [(3, 5), B, (2, 4, 5)]),
    ("vdot", lambda m, x, y: m.vdot(x, y), [V, V]),
    ("outer", lambda m, x, y: m.outer(x, y), [(3,), V]),
    ("kron", lambda m, x, y: m.kron(x, y), [(2, 3), (3, 2)]),
    ("kron_ranks", lambda m, x, y: m.kron(x, y), [(2,), (3, 2)]),
    ("tensordot", lambda m, x, y: m.tensordot(x, y, dims=([1, 2], [0, 1])), [B, (3, 4, 5)]),
    ("tensordot_broadcast", lambda m, x, y: m.tensordot(x, y, 1), [(2, 3), (1, 4)]),
    ("inner", lambda m, x, y: m.inner(x, y), [M, (5, 4)]),
    ("einsum", lambda m, x, y: m.einsum("bij,bjk->bik", x, y), [B, (2, 4, 5)]),
    ("einsum_transposed_out", lambda m, x, y: m.einsum("ij,jk->ki", x, y), [M, (4, 5)]),
    ("einsum_product", lambda m, x, y: m.einsum("ij,ij->ji", x, y), [M, (1, 4)]),
    ("einsum_sum_alone", lambda m, x, y: m.einsum("ij,k->k", x, y), [M, (2,)]),
    ("einsum_broadcast_sum", lambda m, x, y: m.einsum("ij,jk->ik", x, y), [(3, 1), (4, 5)]),
    ("einsum_diagonal", lambda m, x, y: m.einsum("ii,i->i", x, y), [(3, 3), (3,)]),
    ("einsum_chain", lambda m, x, y, z: m.einsum("ij,jk,kl->il", x, y, z),
     [(2, 3), (3, 4), (4, 5)]),
    ("einsum_chain_wide", lambda m, x, y, z: m.einsum("ij,jk,kl->il", x, y, z),
     [(5, 2), (2, 6), (6, 3)]),
    ("einsum_ellipsis", lambda m, x, y: m.einsum("...ij,jk", x, y), [B, (4, 2)]),
    ("einsum_one", lambda m, x: m.einsum("ij->j", x), [M]),
    ("cross", lambda m, x, y: m.cross(x, y, dim=1), [(4, 3), (4, 3)]),
    ("cross_broadcast", lambda m, x, y: m.cross(x, y, dim=1), [(4, 3), (1, 3)]),
    ("trace", lambda m, x: m.trace(x), [M]),
]


def _needs(count: int) -> list[tuple[bool, ...]]:
    """Every choice of operands requiring grad, but none."""
    return [n for n in itertools.product((True, False), repeat=count) if any(n)]


PARAMS = [(name, fn, shapes, needs) for name, fn, shapes in CASES
          for needs in _needs(len(shapes))]


@pytest.mark.parametrize("name,fn,shapes,needs", PARAMS,
                         ids=[f"{p[0]}-{''.join('TF'[not n] for n in p[3])}" for p in PARAMS])
def test_saves_no_more_than_torch(name, fn, shapes, needs):
    check_saved(fn, shapes, needs=needs)
