"""Special functions NumPy lacks (erf, erfc, erfinv, lgamma, digamma, xlogy), vectorized.

Every function takes a floating xp array and returns one of the same dtype, computed
with whole-array NumPy operations (no per-element Python): float16 and bfloat16 are
computed in float32, as torch does, and lgamma and digamma in float64 for every dtype
(both cancel badly next to their zeros). Branches are evaluated on the whole array and
chosen with ``where``, so floating-point warnings of the unchosen branches are silenced.

- erf, erfc: W. J. Cody's rational Chebyshev approximations (CALERF, Math. Comp. 1969),
  accurate to a few ulp over the whole range, with exp(-x^2) split so that erfc keeps
  its relative accuracy in the tail.
- erfinv: Giles' single-precision approximation ("Approximating the erfinv function",
  GPU Computing Gems, 2011) refined by Halley steps on erf, or near +-1 on log(erfc),
  where 1 - |x| is exact.
- lgamma: Cody and Hillstrom's rational approximations (ALGAMA) with Stirling's series
  above 12 and the reflection formula below 0.
- digamma: the Cephes algorithm torch uses (recurrence up to 10, then the asymptotic
  series; reflection below 0), so results agree with torch's near the root at 1.46.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import dtypes as _dt

__all__ = ["erf", "erfc", "erfinv", "lgamma", "digamma", "xlogy"]

_HALF_PRECISION = {_dt.float16.np, _dt.bfloat16.np}
_RSQRT_PI = 0.5641895835477562869480794515607725858440
_TWO_RSQRT_PI = 2 * _RSQRT_PI


def _work(x: Any) -> Any:
    """float16/bfloat16 arrays are computed in float32."""
    return x.astype(np.float32) if x.dtype in _HALF_PRECISION else x


def _work64(x: Any) -> Any:
    """lgamma and digamma cancel badly near their zeros; float64 keeps every dtype exact."""
    return x.astype(np.float64, copy=False)


def _ratio(t: Any, num: tuple[float, ...], den: tuple[float, ...], start: float = 1.0) -> Any:
    """num(t) / den(t) by Horner's rule, coefficients highest degree first (Cody's form)."""
    n = np.zeros_like(t)
    d = np.full_like(t, start)
    for p, q in zip(num, den):
        n = n * t + p
        d = d * t + q
    return n / d


# ----------------------------------------------------------------------------- erf, erfc

_ERF_THRESHOLD = 0.46875
_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
      3.20937758913846947e03, 1.85777706184603153e-1)
_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
      2.84423683343917062e03)
_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
      2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
      2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
      1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
      3.43936767414372164e03, 1.23033935480374942e03)
_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
      1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_Q = (2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1,
      6.05183413124413191e-2, 2.33520497626869185e-3)


def _cody_ratio(t: Any, num: tuple[float, ...], den: tuple[float, ...]) -> Any:
    """Cody's rational form: num/den with the leading coefficient num[-1] and den monic,
    both evaluated in place (these run on whole activations: allocations dominate)."""
    n = num[-1] * t
    d = t + den[0]
    n += num[0]
    for i in range(1, len(den)):
        n *= t
        n += num[i]
        d *= t
        d += den[i]
    return n, d


def _erf_small(x: Any) -> Any:
    """erf(x) for |x| <= 0.46875."""
    z = x * x
    n, d = _cody_ratio(z, _A, _B)
    n *= x
    n /= d
    return n


def _erfc_large(y: Any) -> Any:
    """erfc(y) for y = |x| > 0.46875."""
    n, d = _cody_ratio(y, _C, _D)
    r = n / d
    beyond = y > 4.0
    if beyond.any():
        z = 1.0 / (y * y)
        n, d = _cody_ratio(z, _P, _Q)
        n *= z
        n /= d
        tail = (_RSQRT_PI - n) / y
        r = np.where(beyond, tail, r)
    # exp(-y*y) with y*y split into an exact part and a small one: a rounded y*y would
    # cost erfc its relative accuracy in the tail. erfc(30) is 0 even in float64.
    yc = np.minimum(y, 30.0)
    head = np.trunc(yc * 16.0)
    head /= 16.0
    low = yc - head
    yc += head
    low *= yc
    np.negative(low, out=low)
    r *= np.exp(low, out=low)
    np.square(head, out=head)
    np.negative(head, out=head)
    r *= np.exp(head, out=head)
    return r


def _erf_erfc(x: Any, want_erf: bool, want_erfc: bool) -> tuple[Any, Any]:
    """erf(x) and/or erfc(x) of a 1-d float32/float64 array, each to full relative accuracy."""
    y = np.abs(x)
    central = y <= _ERF_THRESHOLD
    small = _erf_small(x)
    tail = _erfc_large(y)
    erf_ = erfc_ = None
    if want_erf:
        erf_ = np.where(central, small, np.copysign(1.0 - tail, x))
    if want_erfc:
        small = np.subtract(1.0, small, out=small)
        erfc_ = np.where(central, small, np.where(x < 0, 2.0 - tail, tail))
    return erf_, erfc_


def erf(x: Any) -> Any:
    """The error function, elementwise."""
    with np.errstate(all="ignore"):
        r = _erf_erfc(_work(x).reshape(-1), True, False)[0]
        return r.reshape(x.shape).astype(x.dtype, copy=False)


def erfc(x: Any) -> Any:
    """The complementary error function 1 - erf(x), accurate in the tail."""
    with np.errstate(all="ignore"):
        r = _erf_erfc(_work(x).reshape(-1), False, True)[1]
        return r.reshape(x.shape).astype(x.dtype, copy=False)


# ----------------------------------------------------------------------------- erfinv

_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  2.1858087e-04, -1.25372503e-03, -4.17768164e-03, 2.46640727e-01,
                  1.50140941e00)
_GILES_TAIL = (-2.00214257e-04, 1.00950558e-04, 1.34934322e-03, -3.67342844e-03,
               5.73950773e-03, -7.6224613e-03, 9.43887047e-03, 1.00167406e00, 2.83297682e00)


def _horner(t: Any, coefficients: tuple[float, ...]) -> Any:
    p = np.full_like(t, coefficients[0])
    for c in coefficients[1:]:
        p = p * t + c
    return p


def erfinv(x: Any) -> Any:
    """The inverse error function: erfinv(+-1) = +-inf, nan outside [-1, 1]."""
    w = _work(x).reshape(-1)
    with np.errstate(all="ignore"):
        a = np.abs(w)
        q = 1.0 - a  # exact for a >= 0.5, where the tail is solved through erfc
        lw = -np.log(q * (1.0 + a))
        t = a * np.where(lw < 5.0, _horner(lw - 2.5, _GILES_CENTRAL),
                         _horner(np.sqrt(lw) - 3.0, _GILES_TAIL))
        tail = a > 0.5
        log_q = np.log(q)
        for _ in range(3 if w.dtype == np.float64 else 2):
            erf_t, erfc_t = _erf_erfc(t, True, True)
            slope = _TWO_RSQRT_PI * np.exp(-t * t)
            # Halley steps (cubic convergence). Centre: on f = erf(t) - a, whose f''/f' is
            # -2t. Tail: on g = log(erfc(t)) - log(1 - a), nearly linear in t however close
            # a is to 1, with g' = -v and g'' = v (2t - v).
            u = (erf_t - a) / slope
            g = np.log(erfc_t) - log_q
            v = slope / erfc_t
            t = np.where(tail, t + (g / v) / (1.0 - g * (2.0 * t - v) / (2.0 * v)),
                         t - u / (1.0 + t * u))
        t = np.where(a == 1.0, np.inf, t)
        r = np.where(a > 1.0, np.nan, np.copysign(t, w))
        return r.reshape(x.shape).astype(x.dtype, copy=False)


# ----------------------------------------------------------------------------- lgamma

_LG_D1 = -5.772156649015328605195174e-1
_LG_P1 = (4.945235359296727046734888e0, 2.018112620856775083915565e2,
          2.290838373831346393026739e3, 1.131967205903380828685045e4,
          2.855724635671635335736389e4, 3.848496228443793359990269e4,
          2.637748787624195437963534e4, 7.225813979700288197698961e3)
_LG_Q1 = (6.748212550303777196073036e1, 1.113332393857199323513008e3,
          7.738757056935398733233834e3, 2.763987074403340708898585e4,
          5.499310206226157329794414e4, 6.161122180066002127833352e4,
          3.635127591501940507276287e4, 8.785536302431013170870835e3)
_LG_D2 = 4.227843350984671393993777e-1
_LG_P2 = (4.974607845568932035012064e0, 5.424138599891070494101986e2,
          1.550693864978364947665077e4, 1.847932904445632425417223e5,
          1.088204769468828767498470e6, 3.338152967987029735917223e6,
          5.106661678927352456275255e6, 3.074109054850539556250927e6)
_LG_Q2 = (1.830328399370592604055942e2, 7.765049321445005871323047e3,
          1.331903827966074194402448e5, 1.136705821321969608938755e6,
          5.267964117437946917577538e6, 1.346701454311101692290052e7,
          1.782736530353274213975932e7, 9.533095591844353613395747e6)
_LG_D4 = 1.791759469228055000094023e0
_LG_P4 = (1.474502166059939948905062e4, 2.426813369486704502836312e6,
          1.214755574045093227939592e8, 2.663432449630976949898078e9,
          2.940378956634553899906876e10, 1.702665737765398868392998e11,
          4.926125793377430887588120e11, 5.606251856223951465078242e11)
_LG_Q4 = (2.690530175870899333379843e3, 6.393885654300092398984238e5,
          4.135599930241388052042842e7, 1.120872109616147941376570e9,
          1.488613728678813811542398e10, 1.016803586272438228077304e11,
          3.417476345507377132798597e11, 4.463158187419713286462081e11)
_LG_STIRLING = (-1.910444077728e-03, 8.4171387781295e-04, -5.952379913043012e-04,
                7.93650793500350248e-04, -2.777777777777681622553e-03,
                8.333333333333333331554247e-02, 5.7083835261e-03)
_LOG_SQRT_2PI = 0.9189385332046727417803297
_LOG_PI = math.log(math.pi)


def _lgamma_positive(y: Any) -> Any:
    """log(Gamma(y)) for y > 0 (Cody and Hillstrom's ALGAMA)."""
    near_zero = y < 0.6796875
    xm1 = np.where(near_zero, y, (y - 0.5) - 0.5)
    corr = np.where(near_zero, -np.log(y), 0.0)
    r1 = corr + xm1 * (_LG_D1 + xm1 * _ratio(xm1, _LG_P1, _LG_Q1))
    # On (0.5, 0.68) Cody expands around 1 with the coefficients of the (1.5, 4] range.
    xm2 = np.where(y <= 1.5, (y - 0.5) - 0.5, y - 2.0)
    r2 = xm2 * (_LG_D2 + xm2 * _ratio(xm2, _LG_P2, _LG_Q2))
    r2 = np.where(y <= 1.5, corr + r2, r2)
    xm4 = y - 4.0
    r4 = _LG_D4 + xm4 * _ratio(xm4, _LG_P4, _LG_Q4, start=-1.0)
    ysq = y * y
    s = np.full_like(ysq, _LG_STIRLING[6])
    for c in _LG_STIRLING[:6]:
        s = s / ysq + c
    log_y = np.log(y)
    stirling = s / y + _LOG_SQRT_2PI - 0.5 * log_y + y * (log_y - 1.0)
    first = (y <= 0.5) | (y >= 0.6796875)
    return np.where(y <= 1.5, np.where(first, r1, r2),
                    np.where(y <= 4.0, r2, np.where(y <= 12.0, r4, stirling)))


def lgamma(x: Any) -> Any:
    """log|Gamma(x)|: +inf at the poles (0 and the negative integers) and at +-inf."""
    w = _work64(x)
    with np.errstate(all="ignore"):
        neg = w <= 0
        y = np.where(neg, 1.0 - w, w)
        pos = _lgamma_positive(y)
        # |Gamma(x) Gamma(1-x)| = pi / |sin(pi x)|; x minus its nearest integer is exact
        # and keeps sin's argument small.
        sin_pi = np.sin(np.pi * np.abs(w - np.round(w)))
        reflected = _LOG_PI - np.log(sin_pi) - pos
        r = np.where(neg, reflected, pos)
        # sin(pi x) of a subnormal x loses its digits; there log|Gamma(x)| is -log|x| exactly
        r = np.where(np.abs(w) < 1e-300, -np.log(np.abs(w)), r)
        r = np.where(np.isinf(w), np.inf, r)
        return r.astype(x.dtype, copy=False)


# ----------------------------------------------------------------------------- digamma

_PSI_10 = 2.25175258906672110764
_PSI_ASYMPTOTIC = (8.33333333333333333333e-2, -2.10927960927960927961e-2,
                   7.57575757575757575758e-3, -4.16666666666666666667e-3,
                   3.96825396825396825397e-3, -8.33333333333333333333e-3,
                   8.33333333333333333333e-2)


def digamma(x: Any) -> Any:
    """psi(x) = d/dx log Gamma(x): -inf at +0, +inf at -0, nan at negative integers."""
    w = _work64(x)
    with np.errstate(all="ignore"):
        neg = w < 0
        reflection = np.pi / np.tan(np.pi * (w - np.trunc(w)))
        y = np.where(neg, 1.0 - w, w)
        acc = np.zeros_like(y)
        for _ in range(10):  # y > 0, so ten steps of the recurrence reach y >= 10
            small = y < 10.0
            acc = acc - np.where(small, 1.0 / y, 0.0)
            y = np.where(small, y + 1.0, y)
        z = 1.0 / (y * y)
        series = np.log(y) - 0.5 / y - z * _horner(z, _PSI_ASYMPTOTIC)
        r = acc + np.where(y == 10.0, _PSI_10, series)
        r = np.where(neg, r - reflection, r)
        r = np.where(neg & (w == np.trunc(w)), np.nan, r)
        r = np.where(w == 0, np.copysign(np.inf, -w), r)
        return r.astype(x.dtype, copy=False)


# ----------------------------------------------------------------------------- xlogy

def xlogy(x: Any, y: Any) -> Any:
    """x * log(y), with 0 where x == 0 unless y is nan. Either may be a Python number."""
    like = x if hasattr(x, "dtype") else y
    out_dtype = like.dtype
    work = np.dtype(np.float32) if out_dtype in _HALF_PRECISION else out_dtype
    x = x.astype(work, copy=False) if hasattr(x, "dtype") else work.type(x)
    y = y.astype(work, copy=False) if hasattr(y, "dtype") else work.type(y)
    with np.errstate(all="ignore"):
        r = np.where((x == 0) & ~np.isnan(y), 0, x * np.log(y))
        return r.astype(out_dtype, copy=False)
