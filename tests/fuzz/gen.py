"""What a catalogue entry sees while a program is generated: the program's tensors so far
(live torch tensors, so that an entry picks dims, sizes and indices that fit) and the
random stream."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

DTYPE_CODE = {name: f"torch.{name}" for name in (
    "float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
    "bool", "complex64")}


@dataclass(frozen=True)
class Call:
    template: str
    args: tuple[str, ...]
    meta_only: bool = False


def call(template: str, *args: str, meta_only: bool = False) -> Call:
    return Call(template, args, meta_only)


def is_float(t: Any) -> bool:
    return bool(t.dtype.is_floating_point)


def is_complex(t: Any) -> bool:
    return bool(t.is_complex())


_RANGE = {"int64": 2.0 ** 62, "int32": 2.0 ** 31, "int16": 2.0 ** 15, "int8": 127,
          "uint8": 255}


def cast_defined(t: Any, target: str) -> bool:
    """torch leaves float -> int casts of NaN, infinities and values out of the target's
    range undefined (C++ undefined behaviour), also inside an op (a sum's ``dtype=``): the
    catalogue casts only defined values."""
    if target not in _RANGE or not (is_float(t) or is_complex(t)):
        return True
    import torch

    v = torch.view_as_real(t.resolve_conj()).detach() if is_complex(t) else t.detach().double()
    lo = 0 if target == "uint8" else -_RANGE[target]
    return bool(torch.isfinite(v).all()) and bool(((v > lo - 1) & (v < _RANGE[target])).all())


def is_bool(t: Any) -> bool:
    return str(t.dtype) == "torch.bool"


def is_int(t: Any) -> bool:
    return not (is_float(t) or is_complex(t) or is_bool(t))


def is_real(t: Any) -> bool:
    return not is_complex(t)


def is_number(t: Any) -> bool:
    return not is_bool(t)


def nan_free(t: Any) -> bool:
    """No NaN among the values: the sign of a NaN an op returns is unspecified (IEEE 754),
    so the ops that read signs (``signbit``, ``copysign``'s second operand) get none."""
    return not (is_float(t) or is_complex(t)) or not bool(t.isnan().any())


def _complex_half(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` promote to complex32: a float16 tensor with dims and a 0-d
    complex one. torch marks that dtype experimental (most of its kernels refuse it) and
    Ember has none (a known difference)."""
    for x, y in ((a, b), (b, a)):
        if str(x.dtype) == "torch.float16" and x.dim() and y.dtype.is_complex and not y.dim():
            return True
    return False


class Gen:
    def __init__(self, rng: np.random.Generator, ns: dict[str, Any], pool: list[str]):
        self.rng = rng
        self.ns = ns
        self.pool = pool

    def t(self, name: str) -> Any:
        return self.ns[name]

    def coin(self, p: float = 0.5) -> bool:
        return bool(self.rng.random() < p)

    def choice(self, seq: Any) -> Any:
        return seq[int(self.rng.integers(0, len(seq)))]

    def int(self, lo: int, hi: int) -> int:
        """An int in [lo, hi]."""
        return int(self.rng.integers(lo, hi + 1))

    def pick(self, pred: Any = None, *, ndim: int = 0, recent: bool = False,
             strict: bool = False) -> str | None:
        """A tensor of the program with at least ``ndim`` dims, satisfying ``pred`` (most
        of the time: sometimes any tensor, so that error paths are tried too, unless
        ``strict``); ``recent`` prefers the latest results."""
        names = [n for n in self.pool if self.t(n).dim() >= ndim]
        good = [n for n in names if pred is None or pred(self.t(n))]
        if good and (strict or self.coin(0.9)):
            names = good
        elif strict:
            return None
        if not names:
            return None
        if recent and self.coin(0.6):
            return names[-1]
        return self.choice(names)

    def partner(self, name: str, pred: Any = None) -> str | None:
        """Another tensor, preferably one that broadcasts with ``name``; never one that
        promotes with it to complex32 (see ``_complex_half``)."""
        x = self.t(name)
        shape = tuple(x.shape)
        fits = [n for n in self.pool if _broadcasts(shape, tuple(self.t(n).shape))
                and (pred is None or pred(self.t(n)))]
        if fits and self.coin(0.9):
            fits = [n for n in fits if not _complex_half(x, self.t(n))]
            return self.choice(fits) if fits else None
        other = self.pick(pred)
        return None if other is None or _complex_half(x, self.t(other)) else other

    def dim(self, name: str) -> int:
        """A valid dim of ``name`` (0 for a 0-d tensor), sometimes negative."""
        n = max(self.t(name).dim(), 1)
        d = self.int(0, n - 1)
        return d - n if self.coin(0.3) else d

    def dims(self, name: str) -> str:
        """Some distinct dims of ``name`` as a tuple literal."""
        n = self.t(name).dim()
        if n == 0:
            return "()" if self.coin(0.3) else "0"
        k = self.int(1, n)
        picked = sorted(self.rng.choice(n, size=k, replace=False).tolist())
        return f"({', '.join(map(str, picked))},)"

    def size(self, name: str, dim: int) -> int:
        t = self.t(name)
        return int(t.shape[dim]) if t.dim() else 1

    def scalar(self, name: str | None = None) -> str:
        """A Python number suited to ``name``'s dtype (sometimes of another kind)."""
        t = None if name is None else self.t(name)
        if t is not None and is_bool(t) and self.coin(0.7):
            return self.choice(["True", "False"])
        if t is not None and is_int(t) and self.coin(0.7):
            return self.choice(["2", "-1", "0", "3", "7"])
        # (no complex number with float16: they promote to torch's complex32, see
        # ``_complex_half``)
        wide = self.coin(0.05) and (t is None or str(t.dtype) != "torch.float16")
        return self.choice(["2", "-1", "0.5", "2.5", "-3.0", "0", "True", "1.5", "1j"]
                           if wide else ["2", "-1", "0.5", "2.5", "-3.0", "0", "True", "1.5"])

    def dtype(self) -> str:
        return self.choice(list(DTYPE_CODE.values()))

    def shape_like(self, name: str) -> str:
        shape = tuple(self.t(name).shape)
        return repr(shape) if len(shape) != 1 else f"({shape[0]},)"


def _broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(a), reversed(b)))


def index_literal(values: Any, dtype: str = "") -> str:
    """``torch.tensor(...)`` code of an index tensor."""
    arr = np.asarray(values)
    if arr.size == 0:
        return f"torch.zeros({tuple(arr.shape)!r}, dtype=torch.{dtype or 'int64'})"
    text = repr(arr.tolist())
    return f"torch.tensor({text}{', dtype=torch.' + dtype if dtype else ''})"
