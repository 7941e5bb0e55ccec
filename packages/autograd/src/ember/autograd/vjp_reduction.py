"""VJPs of reductions, scans and the value-selecting ops (max with dim, sort, topk...).

``dim`` params follow tensor-core's reduction module: a tuple of non-negative dims, or
None for all dims (and for every reduction of a 0-d tensor). A reduction of the sum
family (sum, nansum, mean, nanmean, prod, amax, amin) over every element with the default
options has no params at all.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

import ember.core as E
from ember.core.dispatch import dispatch, grad_mode
from ember.core.ops.softmax import LOG_SOFTMAX_BACKWARD, SOFTMAX_BACKWARD
from ember.core.tensor import Tensor, make

from .formula import XY, Formula, R, X
from .vjp_elementwise import needs

Grads = tuple[Any, ...]


def input_shape(n: Any, i: int = 0) -> tuple[int, ...]:
    """The shape input ``i`` had (also after the node was freed)."""
    return n.metas[i][0]  # type: ignore[no-any-return]


def kept(shape: tuple[int, ...], dims: Any) -> tuple[int, ...]:
    """``shape`` with the reduced dims kept as size 1."""
    if dims is None:
        return (1,) * len(shape)
    if isinstance(dims, int):
        dims = (dims,)
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def restore(t: Tensor, shape: tuple[int, ...], dims: Any, keepdim: bool) -> Tensor:
    """A reduced ``t`` (gradient or result) broadcast back over the input's ``shape``."""
    if dims is None:
        return t.expand(shape) if t._data.shape != shape else t
    if not keepdim:
        t = t.reshape(kept(shape, dims))
    return t.expand(shape)


def _count(shape: tuple[int, ...], dims: Any) -> int:
    if dims is None:
        return math.prod(shape)
    return math.prod(shape[d] for d in dims)


_WHOLE = {"dim": None, "keepdim": False, "dtype": None}


def reduced(n: Any) -> dict[str, Any]:
    """The node's params; those of a reduction over everything when it has none."""
    return n.params or _WHOLE


def by_dim(base: str) -> Callable[[Any], str]:
    """torch numbers the overloads: ``SumBackward0`` reduces everything, ``1`` some dims
    (``formula.by_dim`` for nodes that may have no params)."""

    def name(n: Any) -> str:
        return base + ("0" if reduced(n)["dim"] is None and len(n.metas[0][0]) else "1")

    return name


# ----------------------------------------------------------------------------- sums, means

def sum_(n: Any, g: Tensor) -> Grads:
    p = reduced(n)
    return (restore(g, input_shape(n), p["dim"], p["keepdim"]),)


def nansum(n: Any, g: Tensor) -> Grads:
    p = reduced(n)
    x = n.saved(0)
    # torch multiplies by the mask: an infinite or NaN gradient gives NaN at a NaN entry
    return (restore(g, x.shape, p["dim"], p["keepdim"]) * ~x.isnan(),)


def mean(n: Any, g: Tensor) -> Grads:
    p = reduced(n)
    shape = input_shape(n)
    return (restore(g, shape, p["dim"], p["keepdim"]) / _count(shape, p["dim"]),)


def nanmean(n: Any, g: Tensor) -> Grads:
    p = reduced(n)
    x = n.saved(0)
    present = ~x.isnan()
    count = present.sum(p["dim"], keepdim=True)
    spread = restore(g, x.shape, p["dim"], p["keepdim"]) / count
    return (spread * present,)  # torch's nansum backward: NaN where no entry is present


def _exclusive_products(x: Tensor, dim: int) -> Tensor:
    """The product of all other entries along ``dim``, exact with zeros (no division)."""
    size = x.shape[dim]
    if size == 1:
        return E.ones_like(x)
    ones = E.ones_like(x.narrow(dim, 0, 1))
    before = E.cat([ones, x.narrow(dim, 0, size - 1)], dim).cumprod(dim)
    after = E.cat([ones, x.narrow(dim, 1, size - 1).flip(dim)], dim).cumprod(dim).flip(dim)
    return before * after


def prod(n: Any, g: Tensor) -> Grads:
    """torch's prod_backward: ``grad * result / x`` when no entry is 0 (a NaN spreads to
    every gradient, as in torch), else the exact products of the other entries."""
    p = reduced(n)
    x = n.saved(0)
    dim, keepdim = p["dim"], p["keepdim"]
    if x.ndim == 0:
        return (g,)
    out = n.result()
    zeros = int((x == 0).sum())
    if dim is None:
        if not zeros:
            return (g * (out / x),)
        if zeros > 1 and not grad_mode.enabled:  # torch skips the exact products then
            return (E.zeros_like(x),)
        flat = x.reshape(-1)
        return (g * _exclusive_products(flat, 0).reshape(x.shape),)
    d = dim[0] if isinstance(dim, tuple) else dim
    g = restore(g, x.shape, (d,), keepdim)
    if not zeros:
        return (g * (restore(out, x.shape, (d,), keepdim) / x),)
    return (g * _exclusive_products(x, d),)


# ----------------------------------------------------------------------------- var, std

def _centered(x: Tensor, dims: Any) -> Tensor:
    return x - x.mean(dims, keepdim=True)


def var(n: Any, g: Tensor) -> Grads:
    return (_var_backward(n, g),)


def _var_backward(n: Any, g: Tensor) -> Tensor:
    """torch's var_backward: ``2 / (N - correction) * grad * (x - mean)``. Over every
    element with ``N <= correction`` the factor is infinite: NaN where x is its mean (inf *
    0), inf elsewhere; over some dims an ``N - correction`` of 0 gives inf the same way."""
    p = n.params
    x = n.saved(0)
    dims = p["dim"]
    dof = _count(x.shape, dims) - p["correction"]
    if dims is None and dof <= 0:
        return g * E.where(x == x.mean(), math.nan, math.inf)
    scale = 2.0 / dof if dof else math.inf
    return restore(g, x.shape, dims, p["keepdim"]) * _centered(x, dims) * scale


def std(n: Any, g: Tensor) -> Grads:
    # var's gradient of grad / (2 std), taken as 0 where std is 0, as torch's std_backward
    out = n.result()
    return (_var_backward(n, E.where(out == 0, 0.0, g / (2 * out))),)


def var_mean(n: Any, g: Any) -> Grads:
    """torch's var_mean_backward: var's gradient plus mean's, of the outputs given one."""
    g_var, g_mean = g
    return _with_mean(n, None if g_var is None else _var_backward(n, g_var), g_mean)


def std_mean(n: Any, g: Any) -> Grads:
    """torch's std_mean_backward: std's gradient plus mean's, of the outputs given one."""
    g_std, g_mean = g
    return _with_mean(n, None if g_std is None else std(n, g_std)[0], g_mean)


def _with_mean(n: Any, spread: Tensor | None, g_mean: Tensor | None) -> Grads:
    if g_mean is None:
        return (spread,)
    of_mean = mean(n, g_mean)[0]
    return (of_mean if spread is None else spread + of_mean,)


# ----------------------------------------------------------------------------- max, min

def _spread_over_ties(g: Tensor, x: Tensor, out: Tensor, dims: Any, keepdim: bool) -> Tensor:
    """The gradient of an extreme shared evenly among the entries that attain it, as
    torch's scale_grad_by_count: ``grad / count * hit``, so a NaN extreme (which no entry
    equals) gives NaN over its slice (0 / 0)."""
    hit = E.eq(x, restore(out, x.shape, dims, keepdim))
    count = hit.sum(dims, keepdim=True)
    return restore(g, x.shape, dims, keepdim) / count * hit


def amax(n: Any, g: Tensor) -> Grads:
    p = reduced(n)
    return (_spread_over_ties(g, n.saved(0), n.result(), p["dim"], p["keepdim"]),)


def aminmax(n: Any, g: Any) -> Grads:
    """Each extreme's gradient shared among the entries that attain it, then summed."""
    p = n.params
    x = n.saved(0)
    parts = [_spread_over_ties(gi, x, n.result(i), p["dim"], p["keepdim"])
             for i, gi in enumerate(g) if gi is not None]
    if not parts:
        return (None,)
    return (parts[0] if len(parts) == 1 else parts[0] + parts[1],)


def select_back(g: Tensor, indices: Tensor, shape: tuple[int, ...], dim: int,
                keepdim: bool) -> Tensor:
    """Zeros of ``shape`` holding ``g`` at ``indices`` along ``dim`` (max, sort, topk...)."""
    if not shape:
        return g.reshape(())
    if not keepdim:
        g, indices = g.unsqueeze(dim), indices.unsqueeze(dim)
    return E.zeros(shape, dtype=g.dtype, device=g.device).scatter(dim, indices, g)


def max_dim(n: Any, g: Any) -> Grads:
    p = n.params
    if g[0] is None:
        return (None,)
    return (select_back(g[0], n.result(1), input_shape(n), p["dim"], p["keepdim"]),)


def kthvalue(n: Any, g: Any) -> Grads:
    return max_dim(n, g)


def sort(n: Any, g: Any) -> Grads:
    if g[0] is None:
        return (None,)
    return (select_back(g[0], n.result(1), input_shape(n), n.params["dim"], True),)


def median(n: Any, g: Tensor) -> Grads:
    """torch's evenly_distribute_backward (also ``max(input)``, ``min(input)``): the
    gradient shared among the entries equal to the result, or among the NaNs when it is
    NaN."""
    x = n.saved(0)
    out = n.result()
    hit = E.where(out.isnan(), x.isnan(), x == out)
    return (E.where(hit, g / hit.sum(), 0.0),)


# ----------------------------------------------------------------------------- logsumexp, norms

def logsumexp(n: Any, g: Tensor) -> Grads:
    p = n.params
    x = n.saved(0)
    dims, keepdim = p["dim"], p["keepdim"]
    return (restore(g, x.shape, dims, keepdim) * (x - restore(n.result(), x.shape, dims,
                                                              keepdim)).exp(),)


def norm(n: Any, g: Tensor) -> Grads:
    par = n.params
    return (_norm_grad(n.saved(0), g, n.result(), par["dim"], par["keepdim"], par["p"]),)


def dist(n: Any, g: Tensor) -> Grads:
    """torch's dist backward: the norm's of the difference, negated for ``other``."""
    gd = _norm_grad(n.saved(0) - n.saved(1), g, n.result(), None, False, n.params["p"])
    if gd is None:
        return None, None
    return gd if needs(n, 0) else None, -gd if needs(n, 1) else None


def _norm_grad(x: Tensor, g: Tensor, out: Tensor, dims: Any, keepdim: bool, p: float) -> Any:
    """torch's norm_backward: the gradient of the p-norm ``out`` of ``x`` over ``dims``."""
    if p == 0.0:
        return None  # torch's norm_backward gives no gradient (None) for the count of nonzeros
    if p == 1.0:
        return x.sgn() * restore(g, x.shape, dims, keepdim)
    if math.isinf(p):
        # amax of |x| respecting NaNs (torch's mask: the entries equal to the norm or NaN)
        a = x.abs()
        hit = E.eq(a, restore(out, x.shape, dims, keepdim)) | a.isnan()
        share = restore(g, x.shape, dims, keepdim) / hit.sum(dims, keepdim=True) * hit
        return x.sgn() * share
    ge = restore(g, x.shape, dims, keepdim)
    oe = restore(out, x.shape, dims, keepdim)
    if p == 2.0:
        return x * E.where(oe == 0, 0.0, ge / oe)
    if p < 1.0:
        scaled = x.sgn() * E.where(x == 0, 0.0, x.abs().pow(p - 1))
        return scaled * ge * oe.pow(1 - p)
    scaled = x.sgn() * x.abs().pow(p - 1) if p < 2.0 else x * x.abs().pow(p - 2)
    return scaled * E.where(oe == 0, 0.0, ge / oe.pow(p - 1))


def nuclear_norm(n: Any, g: Tensor) -> Grads:
    """d||A||_* = U V^T. No SVD op exists yet, so U V^T is computed from the data: correct
    to first order, a constant under create_graph."""
    p = n.params
    x = n.saved(0)
    d0, d1 = p["dim"]
    moved = np.moveaxis(np.asarray(x), (d0, d1), (-2, -1))
    u, _, vt = np.linalg.svd(moved, full_matrices=False)
    uvt = np.moveaxis(u @ vt, (-2, -1), (d0, d1))
    direction = make(x.device.xp.asarray(uvt.astype(x.dtype.np)), x.dtype, x.device)
    return (restore(g, x.shape, (d0, d1), p["keepdim"]) * direction,)


# ----------------------------------------------------------------------------- scans

def cumsum(n: Any, g: Tensor) -> Grads:
    if g.ndim == 0:
        return (g,)
    d = n.params["dim"]
    return (_reversed_cumsum(g, d),)


def _reversed_cumsum(t: Tensor, d: int) -> Tensor:
    """The sums of ``t`` from each position to the end of dim ``d`` (torch's
    reversed_cumsum, flipped both ways)."""
    return t.flip(d).cumsum(d).flip(d)


def cumprod(n: Any, g: Tensor) -> Grads:
    x = n.saved(0)
    d = n.params["dim"]
    if x.numel() <= 1 or x.shape[d] == 1:  # each output is its input (torch's shortcut too)
        return (g,)
    zero = x == 0
    if not bool(zero.any()):
        out = n.result()
        return (_reversed_cumsum(g * out, d) / x,)
    if not grad_mode.enabled:
        return (_cumprod_zeros_backward(g, x, n.result(), d, zero),)
    # With zeros and a graph to build: grad_i = prod(x_<i) * sum_{j>=i} g_j prod(x_(i..j]),
    # as an (n, n) table
    xm, gm = x.movedim(d, -1), g.movedim(d, -1)
    size = xm.shape[-1]
    ones = E.ones_like(xm.narrow(-1, 0, 1))
    before = E.cat([ones, xm.narrow(-1, 0, size - 1)], -1).cumprod(-1)
    later = E.ones(size, size, dtype=E.bool, device=x.device).triu(1)
    table = E.where(later, xm.unsqueeze(-2), 1.0).cumprod(-1)
    upper = E.ones(size, size, dtype=E.bool, device=x.device).triu(0)
    total = E.where(upper, table * gm.unsqueeze(-2), 0.0).sum(-1)
    return ((before * total).movedim(-1, d),)


def _cumprod_zeros_backward(g: Tensor, x: Tensor, out: Tensor, d: int, zero: Tensor) -> Tensor:
    """torch's O(n) cumprod backward for slices holding zeros (it is not differentiable
    again): before the first zero ``z1`` the zero-free formula over ``[0, z1)``; at ``z1``
    ``prod(x[:z1]) * sum_{z1<=j<z2} g_j prod(x(z1..j])``; after it 0."""
    w = out * g
    seen = zero.cumsum(d)
    before = seen == 0
    grad = E.where(before, _reversed_cumsum(w.masked_fill(~before, 0.0), d) / x, 0.0)
    between = seen == 1
    first = between.max(d, keepdim=True).indices  # 0 where a slice has no zero
    at_first = E.zeros_like(between).scatter(d, first, True) & between
    span = between & ~at_first
    prefix = out.gather(d, (first - 1).clamp(min=0)).masked_fill(first == 0, 1.0)
    tail = (x.masked_fill(~span, 1.0).cumprod(d) * g.masked_fill(~between, 0.0)).sum(
        d, keepdim=True)
    return E.where(at_first, tail * prefix, grad)


def cummax(n: Any, g: Any) -> Grads:
    if g[0] is None:
        return (None,)
    shape = input_shape(n)
    if not shape:
        return (g[0],)
    zeros = E.zeros(shape, dtype=g[0].dtype, device=g[0].device)
    return (zeros.scatter_add(n.params["dim"], n.result(1), g[0]),)


def logcumsumexp(n: Any, g: Tensor) -> Grads:
    x = n.saved(0)
    if x.ndim == 0:
        return (g,)
    d = n.params["dim"]
    out = n.result()

    def reverse_lcse(t: Tensor) -> Tensor:
        return t.flip(d).logcumsumexp(d).flip(d)

    if g.dtype.category == 3:  # one log of the complex gradient (the engine conjugates)
        return ((reverse_lcse(g.log() - out) + x).exp(),)
    pos = E.where(g > 0, g.abs().log(), -math.inf)
    neg = E.where(g < 0, g.abs().log(), -math.inf)
    return ((reverse_lcse(pos - out) + x).exp() - (reverse_lcse(neg - out) + x).exp(),)


# ----------------------------------------------------------------------------- sorting

def topk(n: Any, g: Any) -> Grads:
    if g[0] is None:
        return (None,)
    return (select_back(g[0], n.result(1), input_shape(n), n.params["dim"], True),)


def softmax(n: Any, g: Tensor) -> Grads:
    y = n.result()
    dim = n.params["dim"]
    if not grad_mode.enabled:  # no graph to build: the fused backward
        return (dispatch(SOFTMAX_BACKWARD, (g, y), {"dim": dim}),)
    if y.ndim == 0:
        return ((g - g * y) * y,)
    return ((g - (g * y).sum(dim, keepdim=True)) * y,)


def log_softmax(n: Any, g: Tensor) -> Grads:
    y = n.result()
    dim = n.params["dim"]
    if not grad_mode.enabled:
        return (dispatch(LOG_SOFTMAX_BACKWARD, (g, y), {"dim": dim}),)
    if y.ndim == 0:
        return (g - y.exp() * g,)
    return (g - y.exp() * g.sum(dim, keepdim=True),)


F = Formula
INDICES = (1,)  # the value-selecting ops read their indices, as torch saves them
FORMULAS: dict[str, Formula] = {
    "softmax": F(softmax, result=R),
    "log_softmax": F(log_softmax, result=R),
    # ------------------------------------------------------------------ reductions, scans
    "sum": F(sum_, name=by_dim("SumBackward"), passes_complex=True),
    "nansum": F(nansum, X),
    "mean": F(mean, name=by_dim("MeanBackward")),
    "nanmean": F(nanmean, X),
    "prod": F(prod, X, R, name=by_dim("ProdBackward")),
    "var": F(var, X),
    "std": F(std, X, R),
    "var_mean": F(var_mean, X, conjugates=True),
    "std_mean": F(std_mean, X, (0,), conjugates=True),
    "amax": F(amax, X, R),
    "amin": F(amax, X, R),
    "max_all": F(median, X, R, name="MaxBackward1"),
    "min_all": F(median, X, R, name="MinBackward1"),
    "aminmax": F(aminmax, X, R),
    "max": F(max_dim, result=INDICES, name="MaxBackward0"),
    "min": F(max_dim, result=INDICES, name="MinBackward0"),
    "logsumexp": F(logsumexp, X, R),
    "norm": F(norm, X, R, name="LinalgVectorNormBackward0"),
    # torch's formula takes no real part: a complex difference's gradient into a real
    # operand is refused
    "dist": F(dist, XY, R, passes_complex=True),
    "nuclear_norm": F(nuclear_norm, X, name="LinalgMatrixNormBackward0"),
    "cumsum": F(cumsum),
    "cumprod": F(cumprod, X, R),
    "cummax": F(cummax, result=INDICES),
    "cummin": F(cummax, result=INDICES),
    "logcumsumexp": F(logcumsumexp, X, R),
    # ------------------------------------------------------------------ sorting
    "sort": F(sort, result=INDICES),
    "topk": F(topk, result=INDICES),
    "kthvalue": F(kthvalue, result=INDICES),
    "median": F(median, X, R),
    "nanmedian": F(median, X, R),
    "median_dim": F(max_dim, result=INDICES, name="MedianBackward1"),
    "nanmedian_dim": F(max_dim, result=INDICES, name="NanmedianBackward1"),
    "mode": F(max_dim, result=INDICES),
}
