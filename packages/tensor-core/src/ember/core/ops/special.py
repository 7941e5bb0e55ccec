"""Special functions NumPy lacks (erf, erfinv, lgamma, digamma), vectorized over xp arrays."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])
_lgamma = np.vectorize(math.lgamma, otypes=[np.float64])


def erf(x: Any) -> Any:
    return _erf(x).astype(x.dtype)


def erfc(x: Any) -> Any:
    return _erfc(x).astype(x.dtype)


def lgamma(x: Any) -> Any:
    return _lgamma(x).astype(x.dtype)


def erfinv(x: Any) -> Any:
    raise NotImplementedError


def digamma(x: Any) -> Any:
    raise NotImplementedError


def xlogy(x: Any, y: Any) -> Any:
    return np.where(x == 0, 0, x * np.log(y))
