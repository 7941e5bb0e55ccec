"""Catalogue entries: products (matmul and its relatives, einsum, tensordot...)."""

from __future__ import annotations

from typing import Any

from .entries import Family
from .gen import (
    Call,
    Gen,
    call,
    is_number,
)

FAMILY = Family()
add, simple = FAMILY.add, FAMILY.simple

# ----------------------------------------------------------------------------- products


def _mat_partner(g: Gen, x: str, rank: int) -> tuple[str, tuple[str, ...]]:
    """A right operand for ``x @ .``: a tensor of the program whose shape fits, else a view
    of ``x`` itself."""
    t = g.t(x)
    k = t.shape[-1] if t.dim() else 1
    fits = [n for n in g.pool if g.t(n).dim() == rank and g.t(n).dtype == t.dtype and
            (g.t(n).shape[0 if rank == 1 else -2] == k)]
    if fits and g.coin(0.5):
        return "{1}", (g.choice(fits),)
    if rank == 1:
        return "{0}[" + ", ".join(["0"] * (t.dim() - 1) + [":"]) + "]", ()
    return "{0}.mT", ()


def _matmul(name: str) -> Any:
    def build(g: Gen) -> Call | None:
        need = {"mm": 2, "bmm": 3, "mv": 2, "dot": 1, "vdot": 1}.get(name, 1)
        x = g.pick(is_number, ndim=need)
        if x is None:
            return None
        t = g.t(x)
        if name in ("mm", "bmm", "mv") and t.dim() != need:
            return None
        if name in ("dot", "vdot"):
            if t.dim() != 1:
                return None
            y = g.pick(lambda u: u.dim() == 1 and u.shape == t.shape, strict=True) or x
            return call(f"{{out}} = torch.{name}({{0}}, {{1}})", x, y)
        rank = 1 if name == "mv" or (name in ("matmul", "@") and g.coin(0.3)) else \
            (3 if name == "bmm" else 2)
        other, args = _mat_partner(g, x, rank if name != "bmm" else 3)
        if name == "bmm" and other == "{1}":
            other = "{0}.mT"
            args = ()
        if name == "@":
            return call(f"{{out}} = {{0}} @ {other}", x, *args)
        return call(f"{{out}} = torch.{name}({{0}}, {other})", x, *args)

    return build


for _name in ("matmul", "mm", "bmm", "mv", "dot", "vdot"):
    add(f"torch.{_name}", _matmul(_name))
add("Tensor.__matmul__", _matmul("@"))


def _addmm(name: str, form: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(lambda t: is_number(t) and t.dim() == (3 if "b" in name[:5] else 2),
                   strict=True)
        if x is None:
            return None
        t = g.t(x)
        kw = g.choice(["", ", beta=0.5, alpha=2", ", beta=0", ", alpha=-1"])
        dt = str(t.dtype)
        if name == "addmv":
            m = t.shape[0]
            inp = f"torch.ones({m}, dtype={dt})"
            body = "{0}, {0}[0]"
        elif name == "addmm":
            inp = f"torch.ones({t.shape[0]}, dtype={dt})"
            body = "{0}, {0}.mT"
        elif name == "baddbmm":
            inp = f"torch.ones({t.shape[1]}, dtype={dt})"
            body = "{0}, {0}.mT"
        else:  # addbmm
            inp = f"torch.ones({t.shape[1]}, {t.shape[1]}, dtype={dt})"
            body = "{0}, {0}.mT"
        if form == "inplace":
            return call(f"{{out}} = {inp}; {{out}}.{name}_({body}{kw})", x)
        return call(f"{{out}} = torch.{name}({inp}, {body}{kw})", x)

    return build


for _name in ("addmm", "addmv", "addbmm", "baddbmm"):
    add(f"torch.{_name}", _addmm(_name, "function"))
    add(f"Tensor.{_name}_", _addmm(_name, "inplace"), inplace=True)


def _cross(g: Gen) -> Call | None:
    x = g.pick(lambda t: is_number(t) and 3 in tuple(t.shape), strict=True)
    if x is None:
        return None
    d = tuple(g.t(x).shape).index(3)
    y = g.pick(lambda t: tuple(t.shape) == tuple(g.t(x).shape), strict=True) or x
    return call(f"{{out}} = torch.cross({{0}}, {{1}}.flip(0), dim={d})", x, y)


add("torch.cross", _cross)
add("torch.outer", lambda g: (lambda x: None if x is None else call(
    "{out} = torch.outer({0}, {1})", x, g.pick(lambda t: t.dim() == 1) or x))(
    g.pick(lambda t: t.dim() == 1)))
add("torch.ger", lambda g: (lambda x: None if x is None else call(
    "{out} = torch.ger({0}, {0}.flip(0))", x))(g.pick(lambda t: t.dim() == 1)))
add("torch.inner", lambda g: (lambda x: None if x is None else call(
    "{out} = torch.inner({0}, {1})", x, g.pick(
        lambda t: t.dim() and g.t(x).dim() and t.shape[-1] == g.t(x).shape[-1]) or x))(
    g.pick(is_number)))
add("torch.kron", lambda g: (lambda x: None if x is None else call(
    "{out} = torch.kron({0}, {1})", x, g.pick(is_number) or x))(g.pick(is_number)))
simple("torch.trace", "{out} = torch.trace({0})", lambda t: t.dim() == 2 and is_number(t),
       ndim=2)


def _tensordot(g: Gen) -> Call | None:
    x = g.pick(is_number, ndim=1)
    if x is None:
        return None
    t = g.t(x)
    r = g.rng.random()
    if r < 0.3:
        return call("{out} = torch.tensordot({0}, {1}, 0)", x, g.pick(is_number) or x)
    if r < 0.6:
        return call("{out} = torch.tensordot({0}, {0}, " + str(t.dim()) + ")", x)
    return call("{out} = torch.tensordot({0}, {0}.mT, ([-1], [-2]))" if t.dim() >= 2 else
                "{out} = torch.tensordot({0}, {0}, ([0], [0]))", x)


add("torch.tensordot", _tensordot)

_EINSUM_ONE = {1: ["i->i", "i->", "i"], 2: ["ij->ji", "ij->", "ij->j", "ij", "ii->i"],
               3: ["ijk->kji", "ijk->ik", "bij->bji", "...j->j", "iij->ji"]}
_EINSUM_TWO = {1: ["i,i->", "i,j->ij", "i,i->i"], 2: ["ij,ij->ij", "ij,ij->ji", "ij,ij",
                                                     "ij,ij->j", "ij,kj->ik"],
               3: ["bij,bij->bi", "...j,...j->...", "bij,bkj->bik"]}


def _einsum(g: Gen) -> Call | None:
    x = g.pick(is_number)
    if x is None:
        return None
    n = g.t(x).dim()
    if n == 0 or n > 3:
        return call("{out} = torch.einsum('...->...', {0})", x)
    if g.coin(0.5):
        eq = g.choice(_EINSUM_ONE[n])
        return call(f"{{out}} = torch.einsum('{eq}', {{0}})", x)
    eq = g.choice(_EINSUM_TWO[n])
    y = g.pick(lambda t: tuple(t.shape) == tuple(g.t(x).shape), strict=True) or x
    return call(f"{{out}} = torch.einsum('{eq}', {{0}}, {{1}})", x, y)


add("torch.einsum", _einsum)
