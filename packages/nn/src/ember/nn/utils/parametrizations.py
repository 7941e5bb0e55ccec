"""torch.nn.utils.parametrizations: ``orthogonal``, ``spectral_norm`` and ``weight_norm``
as parametrizations (``parametrize.register_parametrization``), with torch's modules
(``_Orthogonal``, ``_SpectralNorm``, ``_WeightNorm``), buffers and state-dict keys.
"""

from __future__ import annotations

from enum import Enum, auto
from typing import Any

import ember.autograd as ag
import ember.core as E
from ember.core import Tensor

from ..functional import normalize
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize
from .matrix_functions import geqrf, householder_product, make_orthogonal, matrix_exp, solve
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.size(-2), q.size(-1)
    eye = E.eye(k, dtype=q.dtype, device=q.device)
    eps = 10.0 * n * E.finfo(q.dtype).eps
    return bool(E.allclose(q.mH @ q, eye, atol=eps))


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    base: Tensor

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        # Householder reflectors cannot parametrize the unitary matrices: n(n-1) real
        # parameters for n^2 degrees of freedom
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        if weight.is_complex() and use_trivialization:
            raise NotImplementedError("orthogonal: a complex tensor with "
                                      "use_trivialization=True needs a complex QR "
                                      "(geqrf), which is not supported yet")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        # X is tall (n >= k)
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            # n k - k (k - 1) / 2 parameters: the lower triangle
            X = X.tril()
            if n != k:
                X = E.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:
                eye = E.eye(n, dtype=A.dtype, device=A.device)
                Q = solve(E.add(eye, A, alpha=-0.5), E.add(eye, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder_product(A, tau)
            # the diagonal of X holds the signs, 1 or -1, neither differentiated nor
            # updated: hence the cast
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        with ag.no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            # without the trivialization only the Householder map can be inverted
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            # the QR decomposition's reflectors, with the signs of diag(R) (flipped where
            # no reflection was needed) on the diagonal, so that diag(R) > 0
            A, tau = geqrf(Q)
            A.diagonal(dim1=-2, dim2=-1).sign_()
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else make_orthogonal(Q)
        else:
            # complete Q to an n x n orthogonal matrix
            N = E.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = make_orthogonal(E.cat([Q, N], dim=-1))
        self.base = Q
        # -Id, so that the Householder map of zeros is the identity
        neg_id = E.zeros_like(Q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Apply an orthogonal or unitary parametrization to a matrix or a batch of matrices:
    ``module.name`` (m x n) then has orthonormal columns (m >= n) or rows (m < n).
    ``orthogonal_map``: ``"matrix_exp"`` or ``"cayley"`` of a skew-symmetric matrix, or
    ``"householder"`` (a product of reflectors); by default ``"matrix_exp"`` for square
    or complex matrices, else ``"householder"``. ``use_trivialization=True`` keeps the
    dynamic trivialization's base under ``module.parametrizations.name[0].base``. The
    initial value is the original tensor if orthogonal, else its Q factor. Returns
    ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    # 1-d tensors (maps onto the sphere) would surprise more than help
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.size(-2) == weight.size(-1)
                          or weight.is_complex() else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Apply weight normalization to a parameter in the given module: ``name`` becomes
    ``g * v / ||v||``, the magnitude ``g`` under ``parametrizations.name.original0`` and
    the direction ``v`` under ``original1``, the norm taken per slice along ``dim``
    (``None``: over the whole tensor). State dicts of the hook-based ``weight_norm``
    (``name_g``, ``name_v``) load into it. Returns ``module``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict: dict[str, Any], prefix: str,
                                 local_metadata: Any, strict: bool, missing_keys: list[str],
                                 unexpected_keys: list[str], error_msgs: list[str]) -> None:
        g_key = f"{prefix}{name}_g"
        v_key = f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    _u: Tensor
    _v: Tensor

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            # a vector needs no estimate (see forward)
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            # start from reasonable singular vectors
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # u and v are updated in place, so that module replicas sharing them see the
        # update; forward uses clones, so that two forwards can be backpropagated through
        with ag.no_grad():
            for _ in range(n_power_iterations):
                normalize(E.mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
                normalize(E.mv(weight_mat.H, self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = E.vdot(u, E.mv(weight_mat, v))
        return weight / sigma  # type: ignore[no-any-return]

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Apply spectral normalization to a parameter in the given module: ``name`` becomes
    itself divided by its largest singular value ``sigma`` (the tensor seen as a matrix
    with ``dim`` first; a vector is divided by its norm), estimated by
    ``n_power_iterations`` of the power method on the buffers
    ``parametrizations.name[0]._u`` and ``_v`` on each access in training mode.
    ``dim`` defaults to 0, or 1 for ConvTranspose modules. Returns ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d,
                                       ConvTranspose3d)) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
