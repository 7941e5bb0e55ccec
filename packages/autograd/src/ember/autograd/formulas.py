"""The table of vector-Jacobian products: one entry per differentiable primitive, by name.

A formula ``vjp(node, grad)`` returns one gradient per input of the op (None where an
input gets none); ``grad`` is the output's gradient, or a list with one entry (or None)
per output for ops with several. It reads the op's inputs through ``node.saved(i)``
(checked against in-place modification), its outputs through ``node.result(i)`` and its
non-tensor arguments from ``node.params``. Formulas are written with Ember ops, so with
``create_graph=True`` they are recorded and can be differentiated again. They may return
gradients of the broadcast shape or the promoted dtype: the engine sums and casts.

Each entry declares what its formula reads (``saved`` input indices, ``result``): the
record hook keeps the outputs only for formulas that read them, and packs exactly these
tensors when ``saved_tensors_hooks`` are active. One-line formulas are written inline;
longer ones live in the ``vjp_*`` modules.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import ember.core as E

from . import vjp_elementwise as ew
from . import vjp_indexing as ix
from . import vjp_linalg as la
from . import vjp_reduction as rd
from . import vjp_views as vw

__all__ = ["Formula", "FORMULAS", "missing_formula", "OVERWRITE", "COPY", "COPY_SLICES"]

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_HALF_SQRT_PI = math.sqrt(math.pi) / 2.0


class Formula:
    """A VJP and what it reads: ``saved`` input indices (or a function of the node giving
    them, where it depends on which inputs need a gradient), ``result`` (the outputs).

    ``name``: the node's name when it is not CamelCase(op) + "Backward0"; a function of the
    node where torch's name depends on the call (``SumBackward0`` vs ``SumBackward1``).
    """

    __slots__ = ("vjp", "saved", "saves_result", "name", "node_class", "variants")

    def __init__(self, vjp: Callable[..., Any],
                 saved: tuple[int, ...] | Callable[[Any], tuple[int, ...]] = (),
                 result: bool = False, name: str | Callable[[Any], str] | None = None):
        self.vjp = vjp
        self.saved = saved
        self.saves_result = result
        self.name = name
        self.node_class: Any = None
        self.variants = callable(name)

    def default_name(self, opname: str) -> str:
        if isinstance(self.name, str):
            return self.name
        return "".join(p.capitalize() for p in re.split(r"_+", opname) if p) + "Backward0"


F = Formula
X, XY, R = (0,), (0, 1), True


def _crossed(n: Any) -> tuple[int, ...]:
    """Products: each operand is read only for the other one's gradient."""
    return tuple(i for i in (0, 1) if n.next[1 - i] is not None)


def _divided(n: Any) -> tuple[int, ...]:
    return (0, 1) if n.next[1] is not None else (1,)


def missing_formula(opname: str) -> Formula:
    """The entry for a differentiable op without a formula yet: its backward raises."""

    def vjp(node: Any, grad: Any) -> Any:
        raise NotImplementedError(f"the derivative for '{opname}' is not implemented.")

    return Formula(vjp)


def _zero(n: Any, g: Any) -> tuple[Any, ...]:
    return (ew.zeros(g),)


def _keep(n: Any, g: Any) -> tuple[Any, ...]:
    return (g,)


def _by_dim(base: str) -> Callable[[Any], str]:
    """torch numbers the overloads: ``SumBackward0`` reduces everything, ``1`` some dims."""

    def name(n: Any) -> str:
        return base + ("0" if n.params["dim"] is None and n.inputs[0]._data.ndim else "1")

    return name


def _matmul_name(n: Any) -> str:
    ranks = (n.inputs[0]._data.ndim, n.inputs[1]._data.ndim)
    return {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (2, 2): "MmBackward0",
            (3, 3): "BmmBackward0"}.get(ranks, "MatmulBackward0")


FORMULAS: dict[str, Formula] = {
    # ------------------------------------------------------------------ conversion, copying
    "to_copy": F(lambda n, g: (g,)),
    "clone": F(lambda n, g: (g,)),
    "expand_copy": F(lambda n, g: (g,)),
    # ------------------------------------------------------------------ arithmetic
    "add": F(lambda n, g: (g, g)),
    "sub": F(lambda n, g: (g, -g if ew.needs(n, 1) else None)),
    "mul": F(lambda n, g: (g * n.saved(1) if ew.needs(n, 0) else None,
                           g * n.saved(0) if ew.needs(n, 1) else None), _crossed),
    "div": F(ew.div, _divided),
    "remainder": F(ew.remainder, XY),
    "fmod": F(ew.fmod, XY),
    "pow": F(ew.pow, XY, R, name=ew.pow_name),
    "float_power": F(ew.pow, XY, R, name=ew.pow_name),
    "maximum": F(ew.maximum, XY),
    "minimum": F(ew.minimum, XY),
    "fmax": F(ew.fmax, XY),
    "fmin": F(ew.fmin, XY),
    "atan2": F(ew.atan2, XY),
    "hypot": F(ew.hypot, XY, R),
    "copysign": F(ew.copysign, X, R),
    "logaddexp": F(ew.logaddexp, XY),
    "logaddexp2": F(ew.logaddexp2, XY),
    "xlogy": F(ew.xlogy, XY),
    "complex": F(ew.complex_),
    "addcmul": F(ew.addcmul, (1, 2)),
    "addcdiv": F(ew.addcdiv, (1, 2)),
    "lerp": F(ew.lerp, (0, 1, 2),
              name=lambda n: "LerpBackward1" if isinstance(n.inputs[2], E.Tensor)
              else "LerpBackward0"),
    # ------------------------------------------------------------------ unary
    "neg": F(lambda n, g: (-g,)),
    "abs": F(lambda n, g: (g * n.saved(0).sgn(),), X),
    "sign": F(_zero),
    "sgn": F(_zero),
    "floor": F(_zero),
    "ceil": F(_zero),
    "trunc": F(_zero),
    "round": F(_zero),
    "frac": F(lambda n, g: (g,)),
    "exp": F(lambda n, g: (g * n.result(),), result=R),
    "exp2": F(lambda n, g: (g * (n.result() * _LN2),), result=R),
    "expm1": F(lambda n, g: (g * (n.result() + 1),), result=R),
    "log": F(lambda n, g: (g / n.saved(0),), X),
    "log2": F(lambda n, g: (g / (n.saved(0) * _LN2),), X),
    "log10": F(lambda n, g: (g / (n.saved(0) * _LN10),), X),
    "log1p": F(lambda n, g: (g / (n.saved(0) + 1),), X),
    "sqrt": F(lambda n, g: (g / (2 * n.result()),), result=R),
    "rsqrt": F(lambda n, g: (-0.5 * g * n.result().pow(3),), result=R),
    "sin": F(lambda n, g: (g * n.saved(0).cos(),), X),
    "cos": F(lambda n, g: (g * -n.saved(0).sin(),), X),
    "tan": F(lambda n, g: (g * (1 + n.result().pow(2)),), result=R),
    "asin": F(lambda n, g: (g * (-n.saved(0) * n.saved(0) + 1).rsqrt(),), X),
    "acos": F(lambda n, g: (g * -(-n.saved(0) * n.saved(0) + 1).rsqrt(),), X),
    "atan": F(lambda n, g: (g / (n.saved(0) * n.saved(0) + 1),), X),
    "sinh": F(lambda n, g: (g * n.saved(0).cosh(),), X),
    "cosh": F(lambda n, g: (g * n.saved(0).sinh(),), X),
    "tanh": F(lambda n, g: (g * (1 - n.result() * n.result()),), result=R),
    "asinh": F(lambda n, g: (g * (n.saved(0).pow(2) + 1).rsqrt(),), X),
    "acosh": F(lambda n, g: (g * (n.saved(0).pow(2) - 1).rsqrt(),), X),
    "atanh": F(lambda n, g: (g / (1 - n.saved(0).pow(2)),), X),
    "sigmoid": F(lambda n, g: (g * (1 - n.result()) * n.result(),), result=R),
    "erf": F(lambda n, g: (_TWO_OVER_SQRT_PI * (-n.saved(0).pow(2)).exp() * g,), X),
    "erfc": F(lambda n, g: (-_TWO_OVER_SQRT_PI * (-n.saved(0).pow(2)).exp() * g,), X),
    "erfinv": F(lambda n, g: (_HALF_SQRT_PI * n.result().pow(2).exp() * g,), result=R),
    "lgamma": F(lambda n, g: (g * n.saved(0).digamma(),), X),
    "digamma": F(lambda n, g: (g * ew.trigamma(n.saved(0)),), X),
    "reciprocal": F(lambda n, g: (-g * (n.result() * n.result()),), result=R),
    "square": F(lambda n, g: (g * (2 * n.saved(0)),), X, name="PowBackward0"),
    "relu": F(lambda n, g: (E.where(n.result() <= 0, 0.0, g),), result=R),
    "sinc": F(ew.sinc, X),
    "deg2rad": F(lambda n, g: (g * (math.pi / 180),), name="Deg2RadBackward0"),
    "rad2deg": F(lambda n, g: (g * (180 / math.pi),), name="Rad2DegBackward0"),
    "logit": F(ew.logit, X),
    "nan_to_num": F(lambda n, g: (E.where(n.saved(0).isfinite(), g, 0.0),), X),
    # ------------------------------------------------------------------ pointwise
    "clamp": F(ew.clamp, (0, 1, 2), name=ew.clamp_name),
    "where": F(ew.where, X),
    "softmax": F(ew.softmax, result=R),
    "log_softmax": F(ew.log_softmax, result=R),
    # ------------------------------------------------------------------ reductions, scans
    "sum": F(rd.sum_, name=_by_dim("SumBackward")),
    "nansum": F(rd.nansum, X),
    "mean": F(rd.mean, name=_by_dim("MeanBackward")),
    "nanmean": F(rd.nanmean, X),
    "prod": F(rd.prod, X, name=_by_dim("ProdBackward")),
    "var": F(rd.var, X),
    "std": F(rd.std, X, R),
    "amax": F(rd.amax, X, R),
    "amin": F(rd.amax, X, R),
    "max": F(rd.max_dim, result=R, name="MaxBackward0"),
    "min": F(rd.max_dim, result=R, name="MinBackward0"),
    "logsumexp": F(rd.logsumexp, X, R),
    "norm": F(rd.norm, X, R, name="LinalgVectorNormBackward0"),
    "nuclear_norm": F(rd.nuclear_norm, X, name="LinalgMatrixNormBackward0"),
    "cumsum": F(rd.cumsum),
    "cumprod": F(rd.cumprod, X, R),
    "cummax": F(rd.cummax, result=R),
    "cummin": F(rd.cummax, result=R),
    "logcumsumexp": F(rd.logcumsumexp, X, R),
    # ------------------------------------------------------------------ sorting
    "sort": F(rd.sort, result=R),
    "topk": F(rd.topk, result=R),
    "kthvalue": F(rd.kthvalue, result=R),
    "median": F(rd.median, X, R),
    "nanmedian": F(rd.median, X, R),
    "median_dim": F(rd.max_dim, result=R, name="MedianBackward1"),
    "nanmedian_dim": F(rd.max_dim, result=R, name="NanmedianBackward1"),
    "mode": F(rd.max_dim, result=R),
    # ------------------------------------------------------------------ views, shapes
    "view": F(vw.reshape),
    "reshape": F(vw.reshape, name="UnsafeViewBackward0"),
    "squeeze": F(vw.reshape),
    "unsqueeze": F(vw.reshape),
    "permute": F(vw.permute),
    "expand": F(_keep),
    "narrow": F(vw.narrow),
    "diagonal": F(vw.diagonal),
    "unfold": F(vw.unfold),
    "as_strided": F(vw.as_strided),
    "conj_physical": F(vw.conj_physical),
    "getitem": F(vw.getitem),
    # ------------------------------------------------------------------ joining
    "cat": F(vw.cat),
    "stack": F(vw.stack),
    "split": F(vw.split),
    "unbind": F(vw.unbind),
    "repeat": F(vw.repeat),
    "repeat_interleave": F(vw.repeat_interleave),
    "flip": F(vw.flip),
    "roll": F(vw.roll),
    "tril": F(vw.tril),
    "triu": F(vw.triu),
    "diag_embed": F(vw.diag_embed),
    # ------------------------------------------------------------------ indexing
    "index": F(ix.index),
    "setitem": F(ix.setitem, name="CopySlices"),
    "index_put": F(ix.index_put),
    "masked_fill": F(ix.masked_fill),
    "masked_select": F(ix.masked_select),
    "masked_scatter": F(ix.masked_scatter),
    "gather": F(ix.gather),
    "scatter": F(ix.scatter),
    "scatter_add": F(ix.scatter_add),
    "scatter_reduce": F(ix.scatter_reduce, XY, R),
    "index_select": F(ix.index_select),
    "index_add": F(ix.index_add),
    "index_copy": F(ix.index_copy),
    "index_fill": F(ix.index_fill),
    "take": F(ix.take),
    "take_along_dim": F(ix.take_along_dim),
    "put": F(ix.put),
    # ------------------------------------------------------------------ linear algebra
    "matmul": F(la.matmul, _crossed, name=_matmul_name),
    "addmm": F(la.addmm, (1, 2)),
    "addbmm": F(la.addbmm, (1, 2)),
    "vdot": F(la.vdot, XY),
    "outer": F(la.outer, XY),
    "kron": F(la.kron, XY),
    "tensordot": F(la.tensordot, XY),
    "einsum": F(la.einsum, tuple(range(26))),
    "cross": F(la.cross, XY),
    "trace": F(la.trace),
}

# Nodes autograd makes itself for in-place writes (not ops of the registry).
OVERWRITE = Formula(lambda n, g: (ew.zeros(g),))
COPY = Formula(lambda n, g: (ew.zeros(g) if ew.needs(n, 0) else None, g))
COPY_SLICES = Formula(vw.copy_slices)
