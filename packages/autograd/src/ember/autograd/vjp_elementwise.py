"""VJPs of elementwise and pointwise primitives too long for a line of the table.

Each takes ``(node, grad)`` and returns one gradient per input; see ``formulas.py``.
Masks pick gradients with ``where`` rather than multiplying by 0/1, so that an infinite
or NaN gradient elsewhere does not leak into the zeroed entries (torch does the same).
"""

from __future__ import annotations

import cmath
import math
from typing import Any

import ember.core as E
from ember.core.dispatch import REGISTRY, dispatch, grad_mode
from ember.core.ops.dropout import NATIVE_DROPOUT_BACKWARD
from ember.core.tensor import Tensor, make

from .formula import XY, Formula, R, X, tensor_operand

Grads = tuple[Any, ...]
_CONJ = REGISTRY["conj_physical"]


def needs(n: Any, i: int) -> bool:
    """Whether input ``i`` of the node gets a gradient."""
    return n.next[i] is not None


def zeros(g: Tensor) -> Tensor:
    return E.zeros_like(g)


def number(value: Any) -> Any:
    """A formula's scalar parameter (a 0-d numpy value) as a Python number."""
    return value.item() if hasattr(value, "item") else value


# ----------------------------------------------------------------------------- binary

def div(n: Any, g: Tensor) -> Grads:
    y = n.saved(1)
    gx = g / y if needs(n, 0) else None
    gy = -g * ((n.saved(0) / y) / y) if needs(n, 1) else None  # torch's order of roundings
    return gx, gy


def remainder(n: Any, g: Tensor) -> Grads:
    gy = -g * E.div(n.saved(0), n.saved(1), rounding_mode="floor") if needs(n, 1) else None
    return g, gy


def fmod(n: Any, g: Tensor) -> Grads:
    gy = -g * E.div(n.saved(0), n.saved(1), rounding_mode="trunc") if needs(n, 1) else None
    return g, gy


def pow(n: Any, g: Tensor) -> Grads:
    """Also float_power's: pow of its operands converted to float64 (complex128)."""
    x, e = n.inputs
    gx = ge = None
    if needs(n, 0):
        x, e = n.saved(0), n.saved(1)
        if isinstance(e, Tensor):
            gx = E.where(e == 0, 0.0, g * (e * x.pow(e - 1)))
        else:
            gx = zeros(g) if e == 0 else g * (e * x.pow(e - 1))
    if needs(n, 1):
        x, e = n.saved(0), n.saved(1)
        out = n.result()
        if isinstance(x, Tensor):
            cond = (x == 0) & _real_non_negative(e)
            # torch takes the log of the base promoted to the result's dtype
            ge = g * E.where(cond, 0.0, out * x.to(out.dtype).log())
        elif x.__class__ is bool and out.dtype.category != 3:
            # torch takes the log of the base as a Scalar, which has none for a bool (but a
            # complex one: it is converted to the complex result's dtype)
            raise RuntimeError("pow(): the derivative for the exponent is not implemented for "
                               "a bool base")
        elif x == 0:
            ge = g * E.where(_real_non_negative(e), 0.0, out * -math.inf)
        elif out.dtype.category == 3:  # torch takes a complex log of the number then
            ge = g * (out * cmath.log(x))
        else:
            ge = g * (out * (math.log(x) if x > 0 else math.nan))
    return gx, ge


def _real_non_negative(e: Tensor) -> Tensor:
    """Where ``e`` is real and not negative (for a complex ``e``: its imaginary part is 0)."""
    return e >= 0 if e.dtype.category < 3 else e.abs() == e


def pow_name(n: Any) -> str:
    x, e = n.inputs
    if not isinstance(x, Tensor):
        return "PowBackward2"
    return "PowBackward1" if isinstance(e, Tensor) else "PowBackward0"


def maximum(n: Any, g: Tensor) -> Grads:
    x, y = n.saved(0), n.saved(1)
    half = E.where(x == y, g / 2, g)
    gx = E.where(x < y, 0.0, half) if needs(n, 0) else None
    gy = E.where(x > y, 0.0, half) if needs(n, 1) else None
    return gx, gy


def minimum(n: Any, g: Tensor) -> Grads:
    x, y = n.saved(0), n.saved(1)
    half = E.where(x == y, g / 2, g)
    gx = E.where(x > y, 0.0, half) if needs(n, 0) else None
    gy = E.where(x < y, 0.0, half) if needs(n, 1) else None
    return gx, gy


def fmax(n: Any, g: Tensor) -> Grads:
    x, y = n.saved(0), n.saved(1)
    to_x = (x >= y) | y.isnan()
    return E.where(to_x, g, 0.0), E.where(to_x, 0.0, g)


def fmin(n: Any, g: Tensor) -> Grads:
    x, y = n.saved(0), n.saved(1)
    to_x = (x <= y) | y.isnan()
    return E.where(to_x, g, 0.0), E.where(to_x, 0.0, g)


def atan2(n: Any, g: Tensor) -> Grads:
    x, y = n.saved(0), n.saved(1)
    # as torch: no gradient where x^2 + y^2 is 0 (at the origin, or where it underflows)
    squares = x * x + y * y
    recip = E.where(squares == 0, 0.0, squares.reciprocal())
    return g * y * recip if needs(n, 0) else None, g * -x * recip if needs(n, 1) else None


def hypot(n: Any, g: Tensor) -> Grads:
    out = n.result()
    gx = g * n.saved(0) / out if needs(n, 0) else None
    gy = g * n.saved(1) / out if needs(n, 1) else None
    return gx, gy


def copysign(n: Any, g: Tensor) -> Grads:
    gx = gy = None
    if needs(n, 0):
        x = n.saved(0)
        gx = g * E.where(x == 0, 0.0, n.result() / x)
    if needs(n, 1):
        gy = zeros(g)
    return gx, gy


def logaddexp(n: Any, g: Tensor) -> Grads:
    x, y = n.saved(0), n.saved(1)
    gx = g / (1 + (y - x).exp()) if needs(n, 0) else None
    gy = g / (1 + (x - y).exp()) if needs(n, 1) else None
    return gx, gy


def logaddexp2(n: Any, g: Tensor) -> Grads:
    x, y = n.saved(0), n.saved(1)
    gx = g / (1 + (y - x).exp2()) if needs(n, 0) else None
    gy = g / (1 + (x - y).exp2()) if needs(n, 1) else None
    return gx, gy


def xlogy(n: Any, g: Tensor) -> Grads:
    x, y = n.saved(0), n.saved(1)
    gx = gy = None
    if needs(n, 0):
        gx = E.where((x == 0) & (y <= 0), 0.0, E.xlogy(g, y))
    if needs(n, 1):
        gy = g * x / y
    return gx, gy


def conj(g: Tensor) -> Tensor:
    """The conjugate of ``g`` (itself when real)."""
    if g.dtype.category != 3:
        return g
    return dispatch(_CONJ, (g,), None)  # type: ignore[no-any-return]


def polar(n: Any, g: Tensor) -> Grads:
    """torch's polar_backward, in its convention (conjugates included; the engine takes the
    real parts): ``conj(g) * sgn(result)`` and ``conj(g) * result * i``."""
    r, gc = n.result(), conj(g)
    return (gc * r.sgn() if needs(n, 0) else None,
            gc * (r * 1j) if needs(n, 1) else None)


def complex_(n: Any, g: Tensor) -> Grads:
    """torch.complex(real, imag): the parts of the gradient. Ember has no real/imag ops yet,
    so the parts are read from the data (not differentiable again)."""
    real_dtype = g.dtype.to_real()
    gr = make(g._data.real.copy(), real_dtype, g.device) if needs(n, 0) else None
    gi = make(g._data.imag.copy(), real_dtype, g.device) if needs(n, 1) else None
    return gr, gi


# ----------------------------------------------------------------------------- unary

def trigamma(x: Tensor) -> Tensor:
    """psi'(x) from Ember ops: reflection below 1/2, recurrence up to 6, then the asymptotic
    series (double precision to ~1e-12)."""
    reflect = x < 0.5
    z = E.where(reflect, 1 - x, x)
    acc = E.zeros_like(z)
    for _ in range(6):
        small = z < 6
        acc = acc + E.where(small, 1 / (z * z), 0.0)
        z = E.where(small, z + 1, z)
    inv = 1 / z
    inv2 = inv * inv
    series = inv + inv2 / 2 + inv * inv2 * (1 / 6 - inv2 * (1 / 30 - inv2 * (1 / 42 - inv2 / 30)))
    value = acc + series
    sin = (x * math.pi).sin()
    return E.where(reflect, -value + math.pi ** 2 / (sin * sin), value)


def logit(n: Any, g: Tensor) -> Grads:
    x = n.saved(0)
    eps = n.params["eps"]
    # torch's kernel gives g * inf at 0 and 1, whatever the sign of the zero: the divisor's
    # zeros are made positive (a where on the gradient itself would put its unselected
    # infinities into a second derivative)
    divisor = x * (1 - x)
    core = g / E.where(divisor == 0, 0.0, divisor)
    if eps is None:
        return (E.where((x < 0) | (x > 1), math.nan, core),)
    return (E.where((x < eps) | (x > 1 - eps), 0.0, core),)


def sinc(n: Any, g: Tensor) -> Grads:
    x = n.saved(0)
    x_pi = x * math.pi
    x2_pi = x * x * math.pi
    return (E.where(x2_pi == 0, 0.0, g * ((x_pi * x_pi.cos() - x_pi.sin()) / x2_pi)),)


# ----------------------------------------------------------------------------- pointwise

def clamp(n: Any, g: Tensor) -> Grads:
    x, lo, hi = n.saved(0), n.saved(1), n.saved(2)
    # a bound given as None clamps nothing on its side
    above: Any = None if lo is None else x >= lo
    below: Any = None if hi is None else x <= hi
    inside = above if below is None else below if above is None else above & below
    gx = E.where(inside, g, 0.0) if needs(n, 0) else None
    glo = ghi = None
    # a bound's gradient where x is strictly beyond it (a NaN x or bound gives it none, as
    # in torch); with min > max the result is max: min gets nothing
    if needs(n, 1):
        pick = x < lo if hi is None else (x < lo) & (lo < hi)
        glo = E.where(pick, g, 0.0)
    if needs(n, 2):
        pick = x > hi if lo is None else (x > hi) | (hi < lo)
        ghi = E.where(pick, g, 0.0)
    return gx, glo, ghi


def clamp_name(n: Any) -> str:
    tensors = n.metas[1] is not None or n.metas[2] is not None
    return "ClampBackward0" if tensors else "ClampBackward1"


def where(n: Any, g: Tensor) -> Grads:
    cond = n.saved(0)
    ga = E.where(cond, g, 0.0) if needs(n, 1) else None
    gb = E.where(cond, 0.0, g) if needs(n, 2) else None
    return None, ga, gb


def lerp_saved(edges: tuple[Any, ...]) -> tuple[int, ...]:
    """The weight for input's and end's gradients, input and end for the weight's."""
    ends = (2,) if edges[0] is not None or edges[1] is not None else ()
    return ends + ((0, 1) if edges[2] is not None else ())


def lerp(n: Any, g: Tensor) -> Grads:
    gx = ge = gw = None
    if needs(n, 0) or needs(n, 1):
        w = n.saved(2)
        gx = g * (1 - w) if needs(n, 0) else None
        ge = g * w if needs(n, 1) else None
    if needs(n, 2):
        gw = g * (n.saved(1) - n.saved(0))
    return gx, ge, gw


def lerp_name(n: Any) -> str:
    return "LerpBackward1" if n.metas[2] is not None else "LerpBackward0"


def addcmul_saved(edges: tuple[Any, ...]) -> tuple[int, ...]:
    """Each factor for the other one's gradient."""
    return tuple(i for i, other in ((1, 2), (2, 1)) if edges[other] is not None)


def addcmul(n: Any, g: Tensor) -> Grads:
    value = number(n.params["value"])
    # torch's order: the other factor times value first, in that factor's dtype
    g1 = g * (n.saved(2) * value) if needs(n, 1) else None
    g2 = g * (n.saved(1) * value) if needs(n, 2) else None
    return g, g1, g2


def addcdiv_saved(edges: tuple[Any, ...]) -> tuple[int, ...]:
    """The divisor always (torch saves it whatever needs a gradient, and checks its version
    at backward), the dividend for the divisor's gradient."""
    return (1, 2) if edges[2] is not None else (2,)


def addcdiv(n: Any, g: Tensor) -> Grads:
    # torch's formula, in its order, on the operands as they were: value / tensor2 is its
    # C++ Scalar / Tensor, computed in tensor2's dtype (which an integer tensor2 refuses)
    value = number(n.params["value"])
    g1 = g2 = None
    if needs(n, 1) or needs(n, 2):
        t2 = n.saved(2)
        g1 = g * E.full_like(t2, value).div_(t2) if needs(n, 1) else None
        g2 = -g * (n.saved(1) * value / (t2 * t2)) if needs(n, 2) else None
    return g, g1, g2


F = Formula
def native_dropout(n: Any, g: Any) -> Grads:
    """torch's native_dropout_backward: the gradient where the mask kept, times 1/(1-p)."""
    g = g[0]
    if g is None:
        return (None, None)
    p = n.params["p"]
    scale = 0.0 if p == 1 else 1 / (1 - p)
    mask = n.result(1)
    if not grad_mode.enabled:  # no graph to build: the fused backward
        return (None, dispatch(NATIVE_DROPOUT_BACKWARD, (g, mask), {"scale": scale}))
    return (None, g * (mask * scale))


FORMULAS: dict[str, Formula] = {
    "native_dropout": F(native_dropout, result=(1,), outputs=(0,)),
    # ------------------------------------------------------------------ pointwise
    "clamp": F(clamp, (0, 1, 2), name=clamp_name),
    "where": F(where, X, listed=(1, 2), passes_complex=True),
    "complex": F(complex_, conjugates=True),
    "polar": F(polar, result=R, conjugates=True),
    "addcmul": F(addcmul, addcmul_saved),
    "addcdiv": F(addcdiv, addcdiv_saved),
    "lerp": F(lerp, lerp_saved, name=lerp_name, passes_complex=True),
    "nan_to_num": F(lambda n, g: (E.where(n.saved(0).isfinite(), g, 0.0),), X),
    "float_power": F(pow, XY, tensor_operand(1), name=pow_name),
}
