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
from typing import Any

import ember.core as E

from . import vjp_activations as ac
from . import vjp_attention as at
from . import vjp_channel_norms as cn
from . import vjp_convolution as cv
from . import vjp_elementwise as ew
from . import vjp_indexing as ix
from . import vjp_interpolation as ip
from . import vjp_linalg as la
from . import vjp_losses as ls
from . import vjp_normalization as nm
from . import vjp_recurrent as rc
from . import vjp_reduction as rd
from . import vjp_views as vw
from .formula import (
    XY,
    Formula,
    R,
    X,
    crossed,
    divided,
    missing_formula,
    not_implemented,
    own,
    tensor_operand,
)
from .zero_grads import ZERO

__all__ = ["Formula", "FORMULAS", "INPLACE_FORMULAS", "missing_formula", "OVERWRITE", "COPY",
           "FILL", "COPY_SLICES", "VIEW_OF_BASE"]

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_HALF_SQRT_PI = math.sqrt(math.pi) / 2.0


F = Formula


def _zero(n: Any, g: Any) -> tuple[Any, ...]:
    return (ew.zeros(g),)


def _sgn(n: Any, g: Any) -> tuple[Any, ...]:
    """torch's sgn_backward: an efficient zero for a real input; for a complex one, written
    in torch's convention (conjugates included), ``(g - sgn**2 * conj(g)) / (2 |x|)``, 0
    where x is 0."""
    x = n.saved(0)
    if x.dtype.category != 3:
        return (ZERO,)
    s, size = n.result(), x.abs()
    return (E.where(size == 0, 0.0, (g - s * s * ew.conj(g)) / (2.0 * size)),)


def _acosh(n: Any, g: Any) -> tuple[Any, ...]:
    """torch's acosh backward: ``(x^2 - 1).rsqrt()`` for a real x (finite below -1 too);
    for a complex x the two factors' rsqrt, whose branch differs from the square's where
    Re(x^2) < 1 and Im(x^2) > 0."""
    x = n.saved(0)
    if x.dtype.category != 3:
        return (g * (x.pow(2) - 1).rsqrt(),)
    return (g * ((x - 1).rsqrt() * (x + 1).rsqrt()),)


def _zeros(n: Any, g: Any) -> tuple[Any, ...]:
    return ew.zeros(g), ew.zeros(g) if ew.needs(n, 1) else None


def _unique_name(n: Any) -> str:
    # torch's overloads: _unique2 without dim, unique_dim with one
    if n.op.name == "unique_consecutive":
        return "unique_consecutive"
    return "_unique2" if n.params.get("dim") is None else "unique_dim"


def _unique(n: Any, g: Any) -> tuple[Any, ...]:
    raise NotImplementedError(f"the derivative for '{_unique_name(n)}' is not implemented.")


def _sampled(n: Any, g: Any) -> tuple[Any, ...]:
    """The samplers' operands (after the generator state) get zero gradients: torch's
    derivatives of normal, bernoulli and poisson do not follow the draw."""
    zero = None if g[0] is None else ew.zeros(g[0])
    return (None, *(zero if ew.needs(n, i) else None for i in range(1, len(n.next))))


def _normal_name(n: Any) -> str:
    # torch's overloads: Tensor_float (1), float_Tensor (2), Tensor_Tensor (3)
    mean, std = (m is not None for m in n.metas[1:3])
    return f"NormalBackward{1 if not std else 2 if not mean else 3}"


_CORE: dict[str, Formula] = {
    # ------------------------------------------------------------------ conversion, copying
    "to_copy": F(lambda n, g: (g,)),
    "clone": F(lambda n, g: (g,)),
    "alias": F(lambda n, g: (g,)),
    # ------------------------------------------------------------------ arithmetic
    "add": F(lambda n, g: (g, g)),
    "sub": F(lambda n, g: (g, -g if ew.needs(n, 1) else None)),
    "mul": F(lambda n, g: (g * n.saved(1) if ew.needs(n, 0) else None,
                           g * n.saved(0) if ew.needs(n, 1) else None), crossed),
    "div": F(ew.div, divided),
    # rounding division: differentiable with a zero gradient, saving what true division's
    # formula reads (torch's has both modes); floor_divide is recorded with none implemented
    "div_trunc": F(_zeros, divided, name="DivBackward2"),
    "div_floor": F(_zeros, divided, name="DivBackward2"),
    "floor_divide": not_implemented("floor_divide"),
    "heaviside": not_implemented("heaviside"),
    "bincount": not_implemented("bincount"),
    "unique": F(_unique, name=lambda n: "UniqueDimBackward0" if n.params.get("dim") is not None
                else "Unique2Backward0"),
    "unique_consecutive": F(_unique, name="UniqueConsecutiveBackward0"),
    "normal": F(_sampled, name=_normal_name),
    "bernoulli": F(_sampled),
    "poisson": F(_sampled),
    "remainder": F(ew.remainder, lambda e: XY if e[1] is not None else ()),
    "fmod": F(ew.fmod, lambda e: XY if e[1] is not None else ()),
    "pow": F(ew.pow, XY, tensor_operand(1), name=ew.pow_name),
    "maximum": F(ew.maximum, XY),
    "minimum": F(ew.minimum, XY),
    "fmax": F(ew.fmax, XY),
    "fmin": F(ew.fmin, XY),
    "atan2": F(ew.atan2, XY),
    "hypot": F(ew.hypot, own, R),
    "copysign": F(ew.copysign, lambda e: X if e[0] is not None else (), R),
    "logaddexp": F(ew.logaddexp, XY, passes_complex=True),
    "logaddexp2": F(ew.logaddexp2, XY, passes_complex=True),
    "xlogy": F(ew.xlogy, XY),
    # ------------------------------------------------------------------ unary
    "neg": F(lambda n, g: (-g,)),
    "abs": F(lambda n, g: (g * n.saved(0).sgn(),), X, conjugates=True),
    "sign": F(_zero),
    # torch saves the input and the result (its complex formula reads them): a write into
    # either since refuses the backward
    "sgn": F(_sgn, X, result=R, conjugates=True),
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
    "asinh": F(lambda n, g: (g * (n.saved(0).pow(2) + 1).rsqrt(),), X),
    "acosh": F(_acosh, X),
    "atanh": F(lambda n, g: (g / (1 - n.saved(0).pow(2)),), X),
    "erf": F(lambda n, g: (_TWO_OVER_SQRT_PI * (-n.saved(0).pow(2)).exp() * g,), X),
    "erfc": F(lambda n, g: (-_TWO_OVER_SQRT_PI * (-n.saved(0).pow(2)).exp() * g,), X),
    # torch saves the input and computes erfinv again: an in-place write to the result is
    # no error
    "erfinv": F(lambda n, g: (_HALF_SQRT_PI * n.saved(0).erfinv().pow(2).exp() * g,), X),
    "lgamma": F(lambda n, g: (g * n.saved(0).digamma(),), X),
    "digamma": F(lambda n, g: (g * ew.trigamma(n.saved(0)),), X),
    "reciprocal": F(lambda n, g: (-g * (n.result() * n.result()),), result=R),
    "square": F(lambda n, g: (g * (2 * n.saved(0)),), X, name="PowBackward0"),
    "relu": F(lambda n, g: (E.where(n.result() <= 0, 0.0, g),), result=R),
    "sinc": F(ew.sinc, X),
    "deg2rad": F(lambda n, g: (g * (math.pi / 180),), name="Deg2RadBackward0"),
    "rad2deg": F(lambda n, g: (g * (180 / math.pi),), name="Rad2DegBackward0"),
    "logit": F(ew.logit, X),
}

# torch's binary arithmetic takes its numbers as tensors: these nodes list both operands
for _name in ("add", "sub", "mul", "div", "div_trunc", "div_floor", "remainder",
              "fmod", "pow", "maximum", "minimum", "fmax", "fmin", "atan2", "hypot", "copysign",
              "logaddexp", "logaddexp2", "xlogy"):
    _CORE[_name].listed = (0, 1)
# a number's remainder by a tensor (remainder.Scalar_Tensor) has no derivative in torch
_CORE["remainder"].scalar_first = not_implemented("remainder")
# a number minus a tensor is torch's rsub.Scalar: its node lists the tensor alone
_CORE["sub"].scalar_first = F(_CORE["sub"].vjp, name="RsubBackward1")

FORMULAS: dict[str, Formula] = {**_CORE, **ew.FORMULAS, **rd.FORMULAS, **vw.FORMULAS,
                                **ix.FORMULAS, **la.FORMULAS, **nm.FORMULAS, **at.FORMULAS,
                                **cn.FORMULAS, **cv.FORMULAS, **ip.FORMULAS, **ac.FORMULAS,
                                **ls.FORMULAS, **rc.FORMULAS}

# Nodes autograd makes itself for in-place writes (not ops of the registry).
# in-place forms whose derivative torch does not implement (their functional forms have
# one): the node the functional op records gets this formula instead
INPLACE_FORMULAS: dict[str, Formula] = {
    f"{name}_": missing_formula(f"inplace version of {name}")
    for name in ("acosh", "asinh", "atanh")
}
OVERWRITE = Formula(lambda n, g: (ew.zeros(g),) * len(n.next))
COPY = Formula(lambda n, g: (ew.zeros(g) if ew.needs(n, 0) else None, g))
# fill_ with a 0-d tensor: copy_'s formula, but a complex gradient into a real value is
# refused (torch's FillBackward3 sums it; its engine refuses it, where copy_ takes its real part)
FILL = Formula(COPY.vjp, passes_complex=True)
COPY_SLICES = Formula(vw.copy_slices)
VIEW_OF_BASE = Formula(vw.view_of_base)
