"""Catalogue entries: indexing, gather/scatter, index and masked ops."""

from __future__ import annotations

from typing import Any

import numpy as np

from .entries import Family
from .gen import (
    Call,
    Gen,
    call,
    index_literal,
    is_bool,
    is_number,
    is_real,
)

FAMILY = Family()
add, simple = FAMILY.add, FAMILY.simple

# ----------------------------------------------------------------------------- indexing


def _basic_index(g: Gen, x: str) -> str:
    shape = tuple(g.t(x).shape)
    parts = []
    for i, n in enumerate(shape[:g.int(1, max(len(shape), 1))]):
        r = g.rng.random()
        if r < 0.3 and n:
            parts.append(str(g.int(-n, n - 1)))
        elif r < 0.5:
            parts.append(f"{g.int(0, n)}:")
        elif r < 0.7:
            parts.append(f"::{g.int(1, 3)}")
        elif r < 0.8:
            parts.append(f"{g.int(-n, n)}:{g.int(-n, n)}:{g.int(1, 2)}")
        elif r < 0.9:
            parts.append("None")
        else:
            parts.append(":")
        if i == 0 and g.coin(0.1):
            parts.append("...")
    if not parts:
        parts = [g.choice(["...", "None", "()"])]
    return ", ".join(parts)


def _advanced_index(g: Gen, x: str) -> tuple[str, tuple[str, ...]]:
    shape = tuple(g.t(x).shape)
    r = g.rng.random()
    if r < 0.25 or not shape:
        m = g.choice(["{0} > 0", "{0} != 0"]) if is_real(g.t(x)) else "{0} != 0"
        if is_bool(g.t(x)):
            m = "{0}"
        return m, ()
    if r < 0.35:
        mask = g.rng.random(shape[0]) > 0.5
        return index_literal(mask), ()
    n = shape[0]
    idx = g.rng.integers(-n, n, g.int(0, 4)) if n else np.zeros(0, np.int64)
    lit = index_literal(idx, "int64") if g.coin(0.8) else repr(idx.tolist())
    if len(shape) >= 2 and g.coin(0.4):
        m = shape[1]
        idx2 = g.rng.integers(-m, m, len(idx)) if m else np.zeros(len(idx), np.int64)
        if g.coin(0.5):
            return f"{lit}, {index_literal(idx2, 'int64')}", ()
        return f":, {index_literal(idx2, 'int64')}", ()
    return lit, ()


def _getitem(g: Gen) -> Call | None:
    x = g.pick()
    if x is None:
        return None
    if g.coin(0.6):
        return call(f"{{out}} = {{0}}[{_basic_index(g, x)}]", x)
    idx, _ = _advanced_index(g, x)
    return call(f"{{out}} = {{0}}[{idx}]", x)


def _unique_index(g: Gen, x: str) -> str:
    """Distinct indices along dim 0 (torch leaves duplicate writes unspecified)."""
    n = g.size(x, 0)
    k = g.int(0, n)
    idx = g.rng.permutation(n)[:k]
    return index_literal(idx, "int64")


def _setitem(g: Gen) -> Call | None:
    x = g.pick(recent=True)
    if x is None:
        return None
    r = g.rng.random()
    if r < 0.5:
        idx = _basic_index(g, x)
    elif r < 0.7 and g.t(x).dim():
        idx = _unique_index(g, x)
    else:
        idx, _ = _advanced_index(g, x)
        if "{0}" in idx:
            idx = idx.replace("{0}", "{0}.detach()")
        elif g.t(x).dim():
            idx = _unique_index(g, x)
    if g.coin(0.6):
        value, args = g.scalar(x), ()
    else:
        y = g.pick()
        value, args = ("{1}" if y is not None else "1"), ((y,) if y is not None else ())
        if y is not None and g.coin(0.5):
            value = "{1}.sum()" if is_number(g.t(y)) else "{1}.any()"
    return call(f"{{out}} = {{0}}; {{out}}[{idx}] = {value}", x, *args)


add("Tensor.__getitem__", _getitem)
add("Tensor.__setitem__", _setitem, inplace=True)


def _index_put(form: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(ndim=1, recent=form == "inplace")
        if x is None:
            return None
        acc = g.coin(0.4)
        if acc:
            idx = index_literal(g.rng.integers(0, max(g.size(x, 0), 1), g.int(0, 3)), "int64")
        else:
            idx = _unique_index(g, x)
        v = g.choice(["torch.tensor(1.5)", "torch.tensor(2)", "torch.tensor(True)"])
        kw = ", accumulate=True" if acc else ""
        if form == "function":
            return call(f"{{out}} = torch.index_put({{0}}, ({idx},), {v}{kw})", x)
        return call(f"{{out}} = {{0}}.index_put_(({idx},), {v}{kw})", x)

    return build


add("torch.index_put", _index_put("function"))
add("Tensor.index_put_", _index_put("inplace"), inplace=True)

# ----------------------------------------------------------------------------- gather/scatter


def _along(g: Gen, x: str, unique: bool) -> tuple[int, str, tuple[int, ...]]:
    """A dim and an int64 index tensor for gather/scatter along it, shaped like ``x``
    but at most as large; ``unique``: no two entries of a column equal."""
    t = g.t(x)
    shape = tuple(t.shape) or ()
    d = g.dim(x) if shape else 0
    dd = d % len(shape) if shape else 0
    ishape = tuple(g.int(0, s) if i != dd else g.int(0, s) for i, s in enumerate(shape))
    n = shape[dd] if shape else 1
    if not shape:
        return 0, index_literal(np.zeros((), np.int64), "int64"), ()
    if unique:
        k = min(ishape[dd], n)
        ishape = ishape[:dd] + (k,) + ishape[dd + 1:]
        cols = int(np.prod([s for i, s in enumerate(ishape) if i != dd], dtype=np.int64))
        vals = np.stack([g.rng.permutation(n)[:k] for _ in range(cols)], axis=-1) if cols \
            else np.zeros((k, 0), np.int64)
        rest = [s for i, s in enumerate(ishape) if i != dd]
        vals = np.moveaxis(vals.reshape((k, *rest)), 0, dd)
    else:
        vals = g.rng.integers(0, max(n, 1), ishape) if n else np.zeros(ishape, np.int64)
    return d, index_literal(vals, "int64"), ishape


def _gather(g: Gen) -> Call | None:
    x = g.pick()
    if x is None:
        return None
    d, idx, _ = _along(g, x, False)
    if g.coin(0.3):
        return call(f"{{out}} = torch.take_along_dim({{0}}, {idx}, {d})", x)
    return call(f"{{out}} = torch.gather({{0}}, {d}, {idx})", x)


add("torch.gather", _gather)


def _scatter(name: str, form: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(is_number, recent=form == "inplace")
        if x is None:
            return None
        d, idx, ishape = _along(g, x, name == "scatter")
        dt = str(g.t(x).dtype)
        src = f"torch.ones({ishape!r}, dtype={dt})" if g.coin(0.5) else \
            f"torch.arange({int(np.prod(ishape, dtype=np.int64))}).reshape({ishape!r}).to({dt})"
        if name == "scatter" and g.coin(0.3):
            src = g.scalar(x)
        kw = ""
        if name == "scatter_reduce":
            kw = f", {g.choice(['sum', 'prod', 'mean', 'amax', 'amin'])!r}"
            kw += ", include_self=False" if g.coin(0.4) else ""
        suffix = "_" if form == "inplace" else ""
        if form == "function":
            return call(f"{{out}} = torch.{name}({{0}}, {d}, {idx}, {src}{kw})", x)
        return call(f"{{out}} = {{0}}.{name}{suffix}({d}, {idx}, {src}{kw})", x)

    return build


for _name in ("scatter", "scatter_add", "scatter_reduce"):
    add(f"torch.{_name}", _scatter(_name, "function"))
    add(f"Tensor.{_name}_", _scatter(_name, "inplace"), inplace=True)


def _index_dim_op(name: str, form: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(is_number, recent=form == "inplace")
        if x is None:
            return None
        d = g.dim(x)
        n = g.size(x, d)
        if name == "index_select":
            idx = index_literal(g.rng.integers(-n, n, g.int(0, 3)) if n else [], "int64")
            return call(f"{{out}} = torch.index_select({{0}}, {d}, {idx})", x)
        k = g.int(0, n)
        idx_vals = g.rng.permutation(n)[:k] if name == "index_copy" else \
            g.rng.integers(0, max(n, 1), k if n else 0)
        idx = index_literal(idx_vals, "int64")
        dt = str(g.t(x).dtype)
        shape = list(g.t(x).shape) or []
        if shape:
            shape[d] = len(idx_vals)
        if name == "index_fill":
            rest = g.scalar(x)
        else:
            rest = f"torch.ones({tuple(shape)!r}, dtype={dt})"
            if name == "index_add" and g.coin(0.4):
                rest += ", alpha=2"
        suffix = "_" if form == "inplace" else ""
        head = f"torch.{name}({{0}}, " if form == "function" else f"{{0}}.{name}{suffix}("
        return call(f"{{out}} = {head}{d}, {idx}, {rest})", x)

    return build


for _name in ("index_select", "index_add", "index_copy", "index_fill"):
    add(f"torch.{_name}", _index_dim_op(_name, "function"))
    if _name != "index_select":
        add(f"Tensor.{_name}_", _index_dim_op(_name, "inplace"), inplace=True)


def _take(g: Gen) -> Call | None:
    x = g.pick()
    if x is None:
        return None
    n = g.t(x).numel()
    idx = index_literal(g.rng.integers(-n, n, (g.int(0, 2), g.int(0, 3))) if n else
                        np.zeros((0,), np.int64), "int64")
    return call(f"{{out}} = torch.take({{0}}, {idx})", x)


def _put(form: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(is_number, recent=form == "inplace")
        if x is None:
            return None
        n = g.t(x).numel()
        acc = g.coin(0.4)
        idx_vals = (g.rng.integers(-n, n, g.int(0, 3)) if acc else
                    g.rng.permutation(n)[:g.int(0, min(n, 3))]) if n else np.zeros(0, np.int64)
        src = f"torch.ones({len(idx_vals)}, dtype={g.t(x).dtype})"
        kw = ", accumulate=True" if acc else ""
        head = "torch.put({0}, " if form == "function" else "{0}.put_("
        return call(f"{{out}} = {head}{index_literal(idx_vals, 'int64')}, {src}{kw})", x)

    return build


add("torch.take", _take)
add("torch.put", _put("function"))
add("Tensor.put_", _put("inplace"), inplace=True)
simple("torch.select", "{out} = torch.select({0}, {e})", ndim=1,
       extra=lambda g, x: (lambda d: None if not g.size(x, d) else
                           f"{d}, {g.int(-g.size(x, d), g.size(x, d) - 1)}")(g.dim(x)))

# ----------------------------------------------------------------------------- masked


def _mask(g: Gen, x: str) -> tuple[str, tuple[str, ...]]:
    m = g.partner(x)
    if m is None:
        return "({0} != 0)", ()
    t = g.t(m)
    if is_bool(t):
        return "{1}", (m,)
    return ("({1} > 0)" if is_real(t) else "({1} != 0)"), (m,)


def _masked(name: str, form: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(recent=form == "inplace")
        if x is None:
            return None
        mask, args = _mask(g, x)
        suffix = "_" if form == "inplace" else ""
        head = f"torch.{name}({{0}}, " if form == "function" else f"{{0}}.{name}{suffix}("
        if name == "masked_fill":
            v = g.scalar(x) if g.coin(0.7) else "torch.tensor(-1.5)"
            return call(f"{{out}} = {head}{mask}, {v})", x, *args)
        if name == "masked_select":
            return call(f"{{out}} = {head}{mask})", x, *args)
        n = 2 * max(g.t(x).numel(), 1) + 2
        src = f"torch.arange({n}).to({g.t(x).dtype})"
        return call(f"{{out}} = {head}{mask}, {src})", x, *args)

    return build


for _name in ("masked_fill", "masked_select", "masked_scatter"):
    add(f"torch.{_name}", _masked(_name, "function"))
    if _name != "masked_select":
        add(f"Tensor.{_name}_", _masked(_name, "inplace"), inplace=True)
simple("torch.nonzero", "{out} = torch.nonzero({0}{e})",
       extra=lambda g, x: g.choice(["", ", as_tuple=True"]))
simple("torch.argwhere", "{out} = torch.argwhere({0})")
