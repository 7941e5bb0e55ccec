"""Catalogue entries: ops along dims: softmax, reductions, scans, sorting and searching."""

from __future__ import annotations

from typing import Any

import numpy as np

from .entries import Family
from .gen import (
    Call,
    Gen,
    call,
    cast_defined,
    index_literal,
    is_complex,
    is_float,
    is_number,
    is_real,
)

FAMILY = Family()
add, simple = FAMILY.add, FAMILY.simple


def _kw(*parts: str) -> str:
    return ", ".join(p for p in parts if p)


# ----------------------------------------------------------------------------- softmax


def _dim(g: Gen, x: str) -> str:
    return str(g.dim(x))


def _softmax_extra(g: Gen, x: str) -> str:
    return _dim(g, x) + (", dtype=torch.float64" if g.coin(0.2) else "")


for _name in ("softmax", "log_softmax"):
    simple(f"torch.{_name}", f"{{out}} = torch.{_name}({{0}}, {{e}})", is_float,
           extra=_softmax_extra)
    simple(f"Tensor.{_name}", f"{{out}} = {{0}}.{_name}({{e}})", is_float, extra=_softmax_extra)

# ----------------------------------------------------------------------------- reductions


def _reduce_args(g: Gen, x: str, tuple_dims: bool = True, dtype_ok: bool = False) -> str:
    r = g.rng.random()
    parts = []
    if r < 0.3:
        pass
    elif r < 0.7 or not tuple_dims:
        parts.append(_dim(g, x))
    else:
        parts.append(g.dims(x))
    if parts and g.coin(0.4):
        parts.append("keepdim=True")
    if dtype_ok and g.coin(0.15):
        dtype = g.choice(["float64", "int64", "float32"])
        if cast_defined(g.t(x), dtype):
            parts.append(f"dtype=torch.{dtype}")
    return ", ".join(parts)


_REDUCTIONS = {
    "sum": (None, True, True), "nansum": (is_real, True, True), "mean": (is_float, True, True),
    "nanmean": (is_float, True, True), "prod": (None, False, True),
    "logsumexp": (is_real, True, False), "all": (None, True, False),
    "any": (None, True, False), "amax": (is_real, True, False),
    "amin": (is_real, True, False), "count_nonzero": (None, True, False),
}
for _name, (_pred, _tuples, _dt) in _REDUCTIONS.items():
    def _red(g: Gen, name: str = _name, pred: Any = _pred, tuples: bool = _tuples,
             dt: bool = _dt, method: bool = False) -> Call | None:
        x = g.pick(pred)
        if x is None:
            return None
        args = _reduce_args(g, x, tuples, dt)
        if name in ("logsumexp",) and not args:
            args = _dim(g, x)
        if name == "count_nonzero":
            args = args.replace(", keepdim=True", "")
        if method:
            return call(f"{{out}} = {{0}}.{name}({args})", x)
        return call(f"{{out}} = torch.{name}({{0}}{', ' + args if args else ''})", x)

    add(f"torch.{_name}", _red)
    add(f"Tensor.{_name}", lambda g, f=_red: f(g, method=True))


def _var(name: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(lambda t: is_float(t) or is_complex(t))
        if x is None:
            return None
        args = _reduce_args(g, x)
        if g.coin(0.4):
            args = _kw(args, f"correction={g.choice(['0', '1', '2'])}")
        if g.coin(0.15) and args and "correction" not in args:
            args = args + ", unbiased=False"
        return call(f"{{out}} = torch.{name}({{0}}{', ' + args if args else ''})", x)

    return build


for _name in ("var", "std", "var_mean", "std_mean"):
    add(f"torch.{_name}", _var(_name))


def _minmax(name: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(is_real)
        if x is None:
            return None
        r = g.rng.random()
        if r < 0.3:
            return call(f"{{out}} = torch.{name}({{0}})", x)
        if r < 0.45 and name in ("max", "min"):
            y = g.partner(x, is_real)
            return None if y is None else call(f"{{out}} = torch.{name}({{0}}, {{1}})", x, y)
        keep = ", keepdim=True" if g.coin(0.4) else ""
        if name == "aminmax":
            return call(f"{{out}} = torch.aminmax({{0}}, dim={_dim(g, x)}{keep})", x)
        return call(f"{{out}} = {{0}}.{name}({_dim(g, x)}{keep})", x)

    return build


for _name in ("max", "min", "argmax", "argmin", "aminmax"):
    add(f"torch.{_name}", _minmax(_name))


def _norm(g: Gen) -> Call | None:
    x = g.pick(lambda t: is_float(t) or is_complex(t))
    if x is None:
        return None
    p = g.choice(["2", "1", "float('inf')", "-float('inf')", "0", "3.5", "'fro'", "'nuc'"])
    if p == "'nuc'":
        if g.t(x).dim() < 2:
            return None
        return call(f"{{out}} = torch.norm({{0}}, 'nuc', {g.choice(['None', '(0, 1)', '(-1, 0)'])})",
                    x)
    r = g.rng.random()
    if r < 0.4:
        return call(f"{{out}} = torch.norm({{0}}, {p})", x)
    keep = ", keepdim=True" if g.coin(0.3) else ""
    dt = ", dtype=torch.float64" if g.coin(0.1) else ""
    return call(f"{{out}} = torch.norm({{0}}, {p}, {_dim(g, x)}{keep}{dt})", x)


add("torch.norm", _norm)
add("torch.dist", lambda g: (lambda x: None if x is None else call(
    "{out} = torch.dist({0}, {1}, " + g.choice(['2', '1', '3', "float('inf')"]) + ")",
    x, g.partner(x, is_float) or x))(g.pick(is_float)))

# ----------------------------------------------------------------------------- scans


def _scan(name: str, pred: Any, dtype_ok: bool) -> None:
    def extra(g: Gen, x: str) -> str:
        d = _dim(g, x)
        return d + (", dtype=torch.float64" if dtype_ok and g.coin(0.15) else "")

    simple(f"torch.{name}", f"{{out}} = torch.{name}({{0}}, {{e}})", pred, extra=extra)
    if name in ("cumsum", "cumprod"):
        simple(f"Tensor.{name}_", f"{{out}} = {{0}}.{name}_({{e}})", pred, extra=extra,
               inplace=True)


for _name, _pred, _dtok in (("cumsum", None, True), ("cumprod", is_number, True),
                            ("cummax", is_real, False), ("cummin", is_real, False),
                            ("logcumsumexp", is_float, False)):
    _scan(_name, _pred, _dtok)

# ----------------------------------------------------------------------------- sorting
# torch leaves the order of ties unspecified where it sorts without stable=True and in
# topk, kthvalue, median, nanmedian and mode: their indices are compared only where stable.


def _sort(g: Gen) -> Call | None:
    x = g.pick(is_real)
    if x is None:
        return None
    d = _dim(g, x)
    desc = ", descending=True" if g.coin(0.3) else ""
    if g.coin(0.5):
        return call(f"{{out}} = torch.sort({{0}}, dim={d}{desc}, stable=True)", x)
    return call(f"{{out}} = torch.sort({{0}}, {d}{desc}).values", x)


add("torch.sort", _sort)
simple("torch.argsort", "{out} = torch.argsort({0}, dim={e}, stable=True)", is_real,
       extra=lambda g, x: _dim(g, x) + (", descending=True" if g.coin(0.3) else ""))
simple("torch.msort", "{out} = torch.msort({0})", is_real)


def _topk(g: Gen) -> Call | None:
    x = g.pick(is_real)
    if x is None:
        return None
    d = g.dim(x)
    k = g.int(0, g.size(x, d))
    kw = g.choice(["", ", largest=False", ", sorted=True"])
    return call(f"{{out}} = torch.topk({{0}}, {k}, {d}{kw}).values", x)


def _kth(g: Gen) -> Call | None:
    x = g.pick(is_real)
    if x is None:
        return None
    d = g.dim(x)
    k = g.int(1, max(g.size(x, d), 1))
    keep = ", True" if g.coin(0.3) else ""
    return call(f"{{out}} = torch.kthvalue({{0}}, {k}, {d}{keep}).values", x)


add("torch.topk", _topk)
add("torch.kthvalue", _kth)


def _median_dim(g: Gen, x: str) -> str | None:
    """A dim for median/nanmedian, never an expanded one (stride 0, size > 1): torch's CPU
    kernel reads uninitialised memory there (its own runs disagree; docs/compatibility.md)."""
    t, d = g.t(x), g.dim(x)
    if t.dim() and t.stride(d) == 0 and t.shape[d] > 1:
        return None
    return str(d) + (", True" if g.coin(0.3) else "")


for _name in ("median", "nanmedian"):
    simple(f"torch.{_name}", f"{{out}} = torch.{_name}({{0}})", is_real)
    simple(f"torch.{_name}(dim)", f"{{out}} = torch.{_name}({{0}}, {{e}}).values", is_real,
           extra=_median_dim)
simple("torch.mode", "{out} = torch.mode({0}, {e}).values", is_real,
       extra=lambda g, x: _dim(g, x) + (", True" if g.coin(0.3) else ""))

# ----------------------------------------------------------------------------- searching


def _sorted_literal(g: Gen, n: int, integer: bool = False) -> str:
    vals = np.sort(g.rng.integers(-6, 7, n) / (1 if integer else 2))
    if integer:
        return index_literal(vals.astype(np.int64), "int64")
    return f"torch.tensor({vals.tolist()!r})"


def _unique(g: Gen) -> Call | None:
    x = g.pick(is_real)
    if x is None:
        return None
    kw = g.choice(["", "return_inverse=True", "return_counts=True",
                   "return_inverse=True, return_counts=True"])
    if g.coin(0.3) and g.t(x).dim():
        kw = _kw(kw, f"dim={g.dim(x)}")
    return call(f"{{out}} = torch.unique({{0}}{', ' + kw if kw else ''})", x)


def _unique_consecutive(g: Gen) -> Call | None:
    x = g.pick(is_real)
    if x is None:
        return None
    kw = g.choice(["", "return_inverse=True", "return_counts=True"])
    if g.coin(0.3) and g.t(x).dim():
        kw = _kw(kw, f"dim={g.dim(x)}")
    return call(f"{{out}} = torch.unique_consecutive({{0}}{', ' + kw if kw else ''})", x)


add("torch.unique", _unique)
add("torch.unique_consecutive", _unique_consecutive)


def _searchsorted(g: Gen) -> Call | None:
    x = g.pick(is_real)
    if x is None:
        return None
    seq = _sorted_literal(g, g.int(0, 6))
    kw = g.choice(["", ", right=True", ", side='right'", ", out_int32=True"])
    if g.coin(0.2):
        return call(f"{{out}} = torch.searchsorted({seq}, {g.choice(['1.5', '0'])}{kw})", x)
    return call(f"{{out}} = torch.searchsorted({seq}, {{0}}{kw})", x)


def _bucketize(g: Gen) -> Call | None:
    x = g.pick(is_real)
    if x is None:
        return None
    kw = g.choice(["", ", right=True", ", out_int32=True"])
    return call(f"{{out}} = torch.bucketize({{0}}, {_sorted_literal(g, g.int(1, 5))}{kw})", x)


def _bincount(g: Gen) -> Call | None:
    n = g.int(0, 6)
    idx = index_literal(g.rng.integers(0, 5, n), "int64")
    kw = g.choice(["", ", minlength=7"])
    w = g.pick(lambda t: is_float(t) and t.dim() == 1 and t.shape[0] == n, strict=True)
    if w is not None and g.coin(0.6):
        return call(f"{{out}} = torch.bincount({idx}, {{0}}{kw})", w)
    return call(f"{{out}} = torch.bincount({idx}{kw})")


add("torch.searchsorted", _searchsorted)
add("torch.bucketize", _bucketize)
add("torch.bincount", _bincount)
simple("torch.histc", "{out} = torch.histc({0}, {e})", is_float,
       extra=lambda g, x: g.choice(["5, -2, 2", "7", "3, 0, 1", "4, 1, 1"]))


def _isin(g: Gen) -> Call | None:
    x = g.pick(is_real)
    if x is None:
        return None
    if g.coin(0.5):
        y = g.pick(is_real)
        test, args = "{1}", (y or x,)
    else:
        test, args = g.choice(["2", "torch.tensor([0, 1, -1])", "0.5"]), ()
    inv = ", invert=True" if g.coin(0.3) else ""
    return call(f"{{out}} = torch.isin({{0}}, {test}{inv})", x, *args)


add("torch.isin", _isin)
