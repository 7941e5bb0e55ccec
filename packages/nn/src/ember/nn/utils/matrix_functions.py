"""The matrix functions that ``parametrizations.orthogonal`` and ``spectral_norm`` need,
composed from ember.core's ops (so that autograd differentiates them) while tensor-core
has no ``linalg``: ``matrix_exp``, ``solve`` without pivoting (the Cayley map's and a
Gram matrix's), ``householder_product`` and ``geqrf`` with LAPACK's conventions, and the
Q factor with a non-negative diagonal of R that torch takes from them. Each loops over
one matrix dimension in Python and works on whole (batched) rows or columns per step.
"""

from __future__ import annotations

import math

import ember.core as E
from ember.core import Tensor

__all__ = ["matrix_exp", "solve", "householder_product", "geqrf", "make_orthogonal"]

# Scaling and squaring: A / 2**s has a 1-norm of at most _THETA, where the Taylor
# polynomial of degree _DEGREE is within 2e-14 of exp (0.5**13 / 13!), below float64's
# rounding of the squarings that follow.
_THETA = 0.5
_DEGREE = 12


def matrix_exp(a: Tensor) -> Tensor:
    """torch.matrix_exp: the exponential of each square matrix in ``a`` (..., n, n)."""
    n = a.size(-1)
    eye = E.eye(n, dtype=a.dtype, device=a.device)
    if a.numel() == 0:
        return a + eye
    norm = float(a.detach().abs().sum(-2).amax().item())
    squarings = max(0, math.ceil(math.log2(norm / _THETA))) if norm > 0 else 0
    x = a / float(2 ** squarings)
    # Horner: I + x (I + x/2 (I + x/3 (... (I + x/d))))
    result = eye + x / float(_DEGREE)
    for k in range(_DEGREE - 1, 0, -1):
        result = eye + (x @ result) / float(k)
    for _ in range(squarings):
        result = result @ result
    return result


def solve(lhs: Tensor, rhs: Tensor) -> Tensor:
    """torch.linalg.solve's ``X`` with ``lhs @ X = rhs`` ((..., n, n) and (..., n, p)) by
    Gauss-Jordan elimination on the diagonal, without pivoting: for the matrices it is
    given here, whose leading blocks are all invertible and whose multipliers stay
    bounded. Those are the Cayley map's ``I - A/2`` with ``A`` skew-symmetric (its
    symmetric part is the identity) and symmetric positive definite Gram matrices."""
    n = lhs.size(-1)
    eye = E.eye(n, dtype=lhs.dtype, device=lhs.device)
    for j in range(n):
        pivot = lhs[..., j:j + 1, j:j + 1]
        pivot_row_lhs = lhs[..., j:j + 1, :] / pivot
        pivot_row_rhs = rhs[..., j:j + 1, :] / pivot
        # row j becomes the pivot row, every other row loses its multiple of it
        factor = lhs[..., :, j:j + 1] - eye[:, j:j + 1]
        lhs = lhs - factor * pivot_row_lhs
        rhs = rhs - factor * pivot_row_rhs
    return rhs


def _reflector(a: Tensor, j: int, rows: Tensor) -> Tensor:
    """The Householder vector stored in column ``j`` of ``a`` (..., m, n): zeros above row
    ``j``, 1 at row ``j``, ``a``'s entries below (as (..., m, 1))."""
    one_at_j = rows.eq(j).to(a.dtype)
    return E.where(rows > j, a[..., :, j:j + 1], one_at_j)


def householder_product(a: Tensor, tau: Tensor) -> Tensor:
    """torch.linalg.householder_product: the first n columns of ``H_1 ... H_k`` with
    ``H_i = I - tau_i v_i v_i^H``, ``v_i`` the i-th column of ``a`` (..., m, n) below
    the diagonal with a 1 on it, for ``tau`` (..., k)."""
    m, n = a.size(-2), a.size(-1)
    rows = E.arange(m, device=a.device).unsqueeze(-1)
    q = E.eye(m, n, dtype=a.dtype, device=a.device).expand(*a.shape[:-2], m, n)
    for i in range(tau.size(-1) - 1, -1, -1):
        v = _reflector(a, i, rows)
        q = q - tau[..., i:i + 1].unsqueeze(-1) * (v @ (v.mH @ q))
    return q


def geqrf(a: Tensor) -> tuple[Tensor, Tensor]:
    """torch.geqrf for real matrices (..., m, n): R on and above the diagonal, the
    Householder vectors below it, and their ``tau`` (..., min(m, n)), as LAPACK's
    ``geqrf`` computes them (``beta = -sign(alpha) ||x||``, ``tau = 0`` for a column that
    needs no reflection)."""
    if a.is_complex():
        raise NotImplementedError("geqrf: complex matrices are not supported (ember.core has "
                                  "no real/imag/conj to take the reflectors' phases)")
    m, n = a.size(-2), a.size(-1)
    rows = E.arange(m, device=a.device).unsqueeze(-1)
    cols = E.arange(n, device=a.device)
    r = a
    stored = E.zeros_like(a)
    taus = []
    for j in range(min(m, n)):
        alpha = r[..., j:j + 1, j:j + 1]
        below = E.where(rows > j, r[..., :, j:j + 1], 0.0)
        x_norm = below.norm(dim=-2, keepdim=True)
        trivial = x_norm == 0
        beta = -E.where(alpha >= 0, 1.0, -1.0) * E.hypot(alpha, x_norm)
        beta = E.where(trivial, alpha, beta)
        tau = E.where(trivial, 0.0, (beta - alpha) / E.where(trivial, 1.0, beta))
        v = E.where(rows > j, below / E.where(trivial, 1.0, alpha - beta),
                    rows.eq(j).to(a.dtype))
        # apply H = I - tau v v^T to the columns right of j; column j becomes beta e_j
        r = r - (cols > j).to(a.dtype) * tau * (v @ (v.mT @ r))
        r = E.where(rows.eq(j) & cols.eq(j), beta, r)
        stored = stored + v * cols.eq(j).to(a.dtype)
        taus.append(tau[..., 0, 0])
    if not taus:
        return a.clone(), a.new_zeros(*a.shape[:-2], 0)
    return r.triu() + stored.tril(-1), E.stack(taus, -1)


def make_orthogonal(a: Tensor) -> Tensor:
    """The Q factor of ``a = QR`` (``a`` tall, (..., m, n)) with a non-negative diagonal
    of R."""
    x, tau = geqrf(a)
    q = householder_product(x, tau)
    return q * x.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)
