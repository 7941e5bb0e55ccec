"""A program's inputs: one numpy array each, turned into a tensor by ``torch.tensor(arr)``
in either framework, then given a layout by the same view ops (transposed, permuted,
sliced with a step or an offset, expanded), and for float64 leaves ``requires_grad``."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool", "complex64"]
LAYOUTS = ["contiguous", "transposed", "permuted", "stepped", "offset", "expanded"]


@dataclass(frozen=True)
class Input:
    """An input tensor ``x{i}``: ``base`` (a numpy array) made a tensor, then viewed so
    that it has ``shape``; ``requires_grad`` on the tensor made from ``base`` (the leaf)."""

    dtype: str
    shape: tuple[int, ...]
    layout: str
    base: np.ndarray
    perm: tuple[int, ...] = ()
    expanded_dims: tuple[int, ...] = ()
    requires_grad: bool = False

    def leaf(self, i: int) -> str:
        """The name of the tensor made from ``base`` (the autograd leaf)."""
        return f"l{i}" if self.view_code() and self.requires_grad else f"x{i}"

    def view_code(self) -> str:
        """The view ops that give the base tensor this input's layout."""
        if self.layout == "transposed":
            return ".t()" if len(self.shape) == 2 else \
                f".permute({', '.join(map(str, reversed(range(len(self.shape)))))})"
        if self.layout == "permuted":
            return f".permute({', '.join(map(str, self.perm))})"
        if self.layout == "stepped":
            return "[..., ::2]"
        if self.layout == "offset":
            return "[1:]"
        if self.layout == "expanded":
            return f".expand({', '.join(map(str, self.shape))})"
        return ""

    def code(self, i: int) -> list[str]:
        """Python lines that build ``x{i}`` (and its leaf) with ``torch`` and ``np``."""
        arr = _literal(self.base)
        lines = [f"A{i} = {arr}"]
        made = f"torch.tensor(A{i})"
        if self.dtype == "bfloat16":
            made += ".to(torch.bfloat16)"
        if self.requires_grad:
            made = f"torch.tensor(A{i}, requires_grad=True)"
        view = self.view_code()
        if view and self.requires_grad:
            lines += [f"l{i} = {made}", f"x{i} = l{i}{view}"]
        else:
            lines.append(f"x{i} = {made}{view}")
        return lines


def _number(v: object) -> str:
    if isinstance(v, bool):
        return repr(v)
    if isinstance(v, complex):
        return f"complex({_number(v.real)}, {_number(v.imag)})"
    if isinstance(v, float):
        if np.isnan(v):
            return "np.nan"
        if np.isinf(v):
            return "np.inf" if v > 0 else "-np.inf"
        return repr(v)
    return repr(v)


def _nested(v: object) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_nested(x) for x in v) + "]"
    return _number(v)


def _literal(arr: np.ndarray) -> str:
    """``np.array(...)`` code that rebuilds ``arr`` exactly (bfloat16 bases are float32)."""
    if arr.size == 0:
        return f"np.zeros({tuple(arr.shape)!r}, dtype='{arr.dtype}')"
    return f"np.array({_nested(arr.tolist())}, dtype='{arr.dtype}')"


def _values(rng: np.random.Generator, dtype: str, shape: tuple[int, ...],
            special: bool) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == "bool":
        flat = rng.random(n) > 0.5
    elif dtype.startswith(("int", "uint")):
        lo, hi = (0, 10) if dtype == "uint8" else (-8, 9)
        flat = rng.integers(lo, hi, n).astype(dtype)
        if special and n:
            info = np.iinfo(dtype)
            flat[rng.integers(0, n)] = rng.choice([info.min + 1, info.max])  # torch: INT_MIN // -1 traps
    else:
        real = np.where(rng.random(n) < 0.7, rng.integers(-6, 7, n) / 2,
                        np.round(rng.uniform(-3, 3, n), 4))
        if dtype == "complex64":
            imag = rng.integers(-4, 5, n) / 2
            flat = (real + 1j * imag).astype(np.complex64)
        else:
            flat = real.astype(np.float32 if dtype == "bfloat16" else dtype)
            if special and n:
                at = rng.integers(0, n, size=min(n, 2))
                flat[at] = rng.choice([np.nan, np.inf, -np.inf, -0.0], size=len(at))
    return np.asarray(flat).reshape(shape)


def base_shape(shape: tuple[int, ...], layout: str, perm: tuple[int, ...],
               expanded_dims: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of the array whose view (by ``layout``) has ``shape``."""
    if layout == "transposed":
        return tuple(reversed(shape))
    if layout == "permuted":
        out = [0] * len(shape)
        for i, p in enumerate(perm):
            out[p] = shape[i]
        return tuple(out)
    if layout == "stepped":
        return shape[:-1] + (shape[-1] * 2,)
    if layout == "offset":
        return (shape[0] + 1,) + shape[1:]
    if layout == "expanded":
        return tuple(1 if d in expanded_dims else s for d, s in enumerate(shape))
    return shape


def layout_fits(shape: tuple[int, ...], layout: str) -> bool:
    if layout in ("transposed", "permuted"):
        return len(shape) >= 2
    return layout == "contiguous" or len(shape) >= 1


def make_input(rng: np.random.Generator, dtype: str, shape: tuple[int, ...], layout: str,
               requires_grad: bool = False, special: bool = False) -> Input:
    """A random input of ``dtype`` and ``shape`` laid out by ``layout``."""
    perm: tuple[int, ...] = ()
    expanded: tuple[int, ...] = ()
    if layout == "permuted":
        perm = tuple(int(p) for p in rng.permutation(len(shape)))
    if layout == "expanded":
        expanded = tuple(d for d in range(len(shape)) if rng.random() < 0.6) or (0,)
    base = _values(rng, dtype, base_shape(shape, layout, perm, expanded), special)
    return Input(dtype, shape, layout, base, perm, expanded, requires_grad)


def reshaped(inp: Input, shape: tuple[int, ...], layout: str | None = None,
             dtype: str | None = None) -> Input:
    """``inp`` with another shape, layout or dtype, its values reused (for shrinking)."""
    layout = layout or inp.layout
    dtype = dtype or inp.dtype
    if not layout_fits(shape, layout):
        layout = "contiguous"
    perm = inp.perm if layout == "permuted" and len(inp.perm) == len(shape) else \
        tuple(reversed(range(len(shape))))
    expanded = tuple(d for d in inp.expanded_dims if d < len(shape)) or (0,)
    new_base = base_shape(shape, layout, perm, expanded)
    flat = inp.base.reshape(-1)
    if dtype != inp.dtype:
        flat = _cast(flat, dtype)
    size = int(np.prod(new_base, dtype=np.int64))
    values = np.resize(flat, size) if flat.size else np.zeros(size, flat.dtype)
    return replace(inp, dtype=dtype, shape=shape, layout=layout, perm=perm,
                   expanded_dims=expanded, base=values.reshape(new_base),
                   requires_grad=inp.requires_grad and dtype == "float64")


def _cast(flat: np.ndarray, dtype: str) -> np.ndarray:
    target = np.float32 if dtype == "bfloat16" else np.dtype(dtype)
    if flat.dtype.kind == "c" and np.dtype(target).kind != "c":
        flat = flat.real
    if np.dtype(target).kind in "iub":
        flat = np.nan_to_num(flat.astype(np.float64) if flat.dtype.kind == "f" else flat)
        if np.dtype(target).kind != "b":
            info = np.iinfo(target)
            flat = np.clip(np.round(flat), max(info.min, -8), min(info.max, 9))
    return flat.astype(target)
