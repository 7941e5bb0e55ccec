"""Distances: torch.nn.functional's cosine_similarity, pairwise_distance and pdist,
composed of norms so that autograd gives torch's gradients."""

from __future__ import annotations

import ember.core as E
from ember.autograd import no_grad
from ember.core import Tensor
from ember.core.dtypes import scalar_type_name

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]

def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """torch.nn.functional.cosine_similarity: ``sum(x1 / max(||x1||, eps) * x2 /
    max(||x2||, eps))`` over ``dim``, the inputs broadcast together (integer inputs taken in
    the floating common dtype)."""
    common = E.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{scalar_type_name(common)}")
    a = x1 if x1.dtype.is_floating_point else x1.to(common)
    b = x2 if x2.dtype.is_floating_point else x2.to(common)
    a, b = E.broadcast_tensors(a, b)
    # the norms are clamped in place outside the graph: the gradient flows as through the
    # unclamped norms, as torch's
    na = a.norm(2, dim, keepdim=True).clone()
    nb = b.norm(2, dim, keepdim=True).clone()
    with no_grad():
        na.clamp_min_(eps)
        nb.clamp_min_(eps)
    return ((a / na) * (b / nb)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """torch.nn.functional.pairwise_distance: ``||x1 - x2 + eps||_p`` over the last dim of
    the broadcast inputs."""
    last = max(x1.ndim, x2.ndim) - 1
    return (x1 - x2 + eps).norm(p, last, keepdim=keepdim)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """torch.nn.functional.pdist: the p-norm distance between each pair of rows of the
    (N, M) ``input``, the upper triangle of the distance matrix row by row
    (N * (N - 1) / 2 values)."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    pairs = E.ones(n, n, dtype=E.bool, device=input.device).triu(1).nonzero()
    rows, cols = pairs[:, 0], pairs[:, 1]
    return (input.index_select(0, rows) - input.index_select(0, cols)).norm(p, 1)
