"""Catalogue entries: shapes and views, strided views, joins, splits and rearrangements."""

from __future__ import annotations

from typing import Any

import numpy as np

from .entries import Family
from .gen import (
    Call,
    Gen,
    call,
    index_literal,
)

FAMILY = Family()
add, simple = FAMILY.add, FAMILY.simple

# ----------------------------------------------------------------------------- shapes


def _new_shape(g: Gen, x: str) -> str:
    shape = list(g.t(x).shape)
    n = int(np.prod(shape, dtype=np.int64))
    r = g.rng.random()
    if r < 0.3:
        return "-1"
    if r < 0.5 and n:
        divisors = [d for d in range(1, n + 1) if n % d == 0]
        d = g.choice(divisors)
        return f"{d}, -1"
    if r < 0.7:
        return ", ".join(map(str, shape + [1])) if shape else "1"
    if r < 0.85 and len(shape) >= 2:
        return ", ".join(map(str, [shape[0] * shape[1]] + shape[2:]))
    return ", ".join(map(str, reversed(shape))) if shape else "()"


simple("torch.reshape", "{out} = torch.reshape({0}, ({e},))", extra=_new_shape)
simple("Tensor.reshape", "{out} = {0}.reshape({e})", extra=_new_shape)
simple("Tensor.view", "{out} = {0}.view({e})", extra=_new_shape)
simple("Tensor.view(dtype)", "{out} = {0}.view({e})",
       extra=lambda g, x: g.choice({1: ["torch.int8", "torch.uint8", "torch.bool"],
                                    2: ["torch.float16", "torch.bfloat16", "torch.int16"],
                                    4: ["torch.float32", "torch.int32"],
                                    8: ["torch.float64", "torch.int64", "torch.complex64"],
                                    16: ["torch.complex128"]}[
           g.t(x).element_size()] + ["torch.float32"]))
simple("torch.flatten", "{out} = torch.flatten({0}{e})",
       extra=lambda g, x: g.choice(["", ", 1", f", {g.dim(x)}", ", 0, -1"]))
simple("torch.ravel", "{out} = torch.ravel({0})")
simple("torch.unflatten", "{out} = torch.unflatten({0}, {e})", ndim=1,
       extra=lambda g, x: (lambda d: f"{d}, ({g.size(x, d)}, 1)" if g.coin(0.5)
                           else f"{d}, (1, -1)")(g.dim(x)))
simple("torch.squeeze", "{out} = torch.squeeze({0}{e})",
       extra=lambda g, x: g.choice(["", f", {g.dim(x)}", f", {g.dims(x)}"]))
simple("Tensor.squeeze_", "{out} = {0}.squeeze_({e})", inplace=True,
       extra=lambda g, x: g.choice(["", f"{g.dim(x)}"]))
simple("torch.unsqueeze", "{out} = torch.unsqueeze({0}, {e})",
       extra=lambda g, x: str(g.int(-g.t(x).dim() - 1, g.t(x).dim())))
simple("Tensor.unsqueeze_", "{out} = {0}.unsqueeze_({e})", inplace=True,
       extra=lambda g, x: str(g.int(0, g.t(x).dim())))


def _expand_to(g: Gen, x: str) -> str:
    shape = list(g.t(x).shape)
    out = [g.choice([s, 3, 2]) if s == 1 else s for s in shape]
    if g.coin(0.4):
        out = [g.int(1, 3)] + out
    if g.coin(0.2) and out:
        out[-1] = -1
    return ", ".join(map(str, out)) if out else "2"


simple("Tensor.expand", "{out} = {0}.expand({e})", extra=_expand_to)
simple("torch.broadcast_to", "{out} = torch.broadcast_to({0}, ({e},))", extra=_expand_to)
add("Tensor.expand_as", lambda g: (lambda x: None if x is None else call(
    "{out} = {0}.expand_as({1})", x, g.partner(x) or x))(g.pick()))
add("Tensor.view_as", lambda g: (lambda x: None if x is None else call(
    "{out} = {1}.view_as({0})", x, g.pick(lambda t: t.numel() == g.t(x).numel()) or x))(
    g.pick()))
add("Tensor.reshape_as", lambda g: (lambda x: None if x is None else call(
    "{out} = {1}.reshape_as({0})", x, g.pick(lambda t: t.numel() == g.t(x).numel()) or x))(
    g.pick()))
add("torch.broadcast_tensors", lambda g: (lambda x: None if x is None else call(
    "{out} = torch.broadcast_tensors({0}, {1})", x, g.partner(x) or x))(g.pick()))
for _name in ("atleast_1d", "atleast_2d", "atleast_3d"):
    simple(f"torch.{_name}", f"{{out}} = torch.{_name}({{0}})")


def _perm(g: Gen, x: str) -> str:
    n = g.t(x).dim()
    return ", ".join(map(str, g.rng.permutation(n).tolist())) if n else ""


simple("torch.permute", "{out} = torch.permute({0}, ({e},))", ndim=1, extra=_perm)
simple("Tensor.permute", "{out} = {0}.permute({e})", extra=_perm)


def _two_dims(g: Gen, x: str) -> str:
    return f"{g.dim(x)}, {g.dim(x)}"


for _name in ("transpose", "swapaxes", "swapdims", "movedim", "moveaxis"):
    simple(f"torch.{_name}", f"{{out}} = torch.{_name}({{0}}, {{e}})", extra=_two_dims)
for _name in ("transpose_", "swapaxes_", "swapdims_"):
    simple(f"Tensor.{_name}", f"{{out}} = {{0}}.{_name}({{e}})", extra=_two_dims, inplace=True)
simple("torch.t", "{out} = torch.t({0})", lambda t: t.dim() <= 2)
simple("Tensor.t_", "{out} = {0}.t_()", lambda t: t.dim() <= 2, inplace=True)
simple("torch.adjoint", "{out} = torch.adjoint({0})", ndim=2)
for _name in ("T", "mT", "H", "mH"):
    simple(f"Tensor.{_name}", f"{{out}} = {{0}}.{_name}",
           (lambda t: t.dim() <= 2) if _name in ("T", "H") else None,
           ndim=2 if _name.startswith("m") else 0)

# ----------------------------------------------------------------------------- strided


def _narrow(g: Gen, x: str) -> str:
    d = g.dim(x)
    n = g.size(x, d)
    start = g.int(0, n)
    return f"{d}, {start}, {g.int(0, n - start)}"


simple("torch.narrow", "{out} = torch.narrow({0}, {e})", ndim=1, extra=_narrow)
simple("torch.diagonal", "{out} = torch.diagonal({0}, {e})", ndim=2,
       extra=lambda g, x: f"{g.int(-2, 2)}, {g.dim(x)}, {g.dim(x)}" if g.coin(0.5)
       else str(g.int(-2, 2)))
simple("Tensor.unfold", "{out} = {0}.unfold({e})",
       extra=lambda g, x: (lambda d: f"{d}, {g.int(1, max(g.size(x, d), 1))}, {g.int(1, 2)}")(
           g.dim(x)))


def _as_strided_call(g: Gen) -> Call | None:
    x = g.pick()
    if x is None:
        return None
    n = g.t(x).numel()
    if n == 0:
        return call("{out} = torch.as_strided({0}.clone(), (0, 2), (1, 1))", x)
    for _ in range(4):
        rows, cols = g.int(1, n), g.int(1, n)
        sr, sc = g.choice([cols, 1, 0, 2]), g.choice([1, rows, 0])
        if (rows - 1) * sr + (cols - 1) * sc < n:
            off = g.int(0, n - 1 - (rows - 1) * sr - (cols - 1) * sc)
            return call(f"{{out}} = torch.as_strided({{0}}.clone(), ({rows}, {cols}), "
                        f"({sr}, {sc}), {off})", x)
    return None


add("torch.as_strided", _as_strided_call)

# ----------------------------------------------------------------------------- joining


def _join(name: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick()
        if x is None:
            return None
        shape = tuple(g.t(x).shape)
        same = [n for n in g.pool if tuple(g.t(n).shape) == shape]
        near = [n for n in g.pool if g.t(n).dim() == len(shape) and len(shape) and
                tuple(g.t(n).shape)[1:] == shape[1:]]
        y = g.choice(near if name in ("cat", "concat", "concatenate", "vstack", "row_stack")
                     and near and g.coin(0.5) else same)
        if name in ("cat", "concat", "concatenate"):
            d = ", 0" if g.coin(0.5) else (f", {g.dim(x)}" if g.t(x).dim() else "")
            return call(f"{{out}} = torch.{name}([{{0}}, {{1}}]{d})", x, y)
        if name == "stack":
            d = g.int(-len(shape) - 1, len(shape))
            return call(f"{{out}} = torch.stack([{{0}}, {{1}}], {d})", x, y)
        return call(f"{{out}} = torch.{name}([{{0}}, {{1}}])", x, y)

    return build


for _name in ("cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack",
              "dstack", "column_stack"):
    add(f"torch.{_name}", _join(_name))
add("torch.meshgrid", lambda g: (lambda x: None if x is None else call(
    "{out} = torch.meshgrid({0}, {1}, indexing=" + g.choice(["'ij'", "'xy'"]) + ")",
    x, g.pick(lambda t: t.dim() == 1) or x))(g.pick(lambda t: t.dim() == 1)))

# ----------------------------------------------------------------------------- splitting


def _split(name: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(ndim=1)
        if x is None:
            return None
        d = g.dim(x)
        n = g.size(x, d)
        if name == "split":
            if g.coin(0.5) and n:
                a = g.int(0, n)
                return call(f"{{out}} = torch.split({{0}}, [{a}, {n - a}], {d})", x)
            return call(f"{{out}} = torch.split({{0}}, {g.int(1, 3)}, {d})", x)
        if name in ("tensor_split", "chunk"):
            return call(f"{{out}} = torch.{name}({{0}}, {g.int(1, 3)}, {d})", x)
        if name == "unbind":
            return call(f"{{out}} = torch.unbind({{0}}, {d})", x)
        return call(f"{{out}} = torch.{name}({{0}}, {g.choice([1, 2])})", x)

    return build


for _name in ("split", "tensor_split", "chunk", "unbind", "hsplit", "vsplit", "dsplit"):
    add(f"torch.{_name}", _split(_name))

# ----------------------------------------------------------------------------- rearranging


def _reps(g: Gen, x: str, at_least: int = 0) -> str:
    n = max(g.t(x).dim(), at_least) + g.int(0, 1)
    return ", ".join(str(g.int(0 if g.coin(0.1) else 1, 2)) for _ in range(max(n, 1)))


simple("Tensor.repeat", "{out} = {0}.repeat({e})",
       extra=lambda g, x: _reps(g, x, g.t(x).dim()))
simple("torch.tile", "{out} = torch.tile({0}, ({e},))", extra=_reps)


def _repeat_interleave(g: Gen) -> Call | None:
    x = g.pick()
    if x is None:
        return None
    if g.coin(0.5) or not g.t(x).dim():
        return call(f"{{out}} = torch.repeat_interleave({{0}}, {g.int(0, 3)}"
                    f"{', ' + str(g.dim(x)) if g.t(x).dim() and g.coin(0.6) else ''})", x)
    d = g.dim(x)
    reps = index_literal(g.rng.integers(0, 3, g.size(x, d)), "int64")
    return call(f"{{out}} = {{0}}.repeat_interleave({reps}, {d})", x)


add("torch.repeat_interleave", _repeat_interleave)
simple("torch.flip", "{out} = torch.flip({0}, {e})", extra=lambda g, x: g.dims(x)
       if g.t(x).dim() else "[]")
simple("torch.fliplr", "{out} = torch.fliplr({0})", ndim=2)
simple("torch.flipud", "{out} = torch.flipud({0})", ndim=1)
simple("torch.roll", "{out} = torch.roll({0}, {e})",
       extra=lambda g, x: g.choice([str(g.int(-3, 3)), f"{g.int(-3, 3)}, {g.dim(x)}"])
       if g.t(x).dim() else "1")
simple("torch.rot90", "{out} = torch.rot90({0}, {e})", ndim=2,
       extra=lambda g, x: f"{g.int(-2, 3)}, [{g.dim(x)}, {g.dim(x)}]")
for _name in ("tril", "triu"):
    simple(f"torch.{_name}", f"{{out}} = torch.{_name}({{0}}, {{e}})", ndim=2,
           extra=lambda g, x: str(g.int(-2, 2)))
    simple(f"Tensor.{_name}_", f"{{out}} = {{0}}.{_name}_({{e}})", ndim=2, inplace=True,
           extra=lambda g, x: str(g.int(-2, 2)))
simple("torch.diag_embed", "{out} = torch.diag_embed({0}{e})", ndim=1,
       extra=lambda g, x: g.choice(["", ", 1", ", -1, 0, 2", ", 0, -2, -1"]))
simple("torch.diag", "{out} = torch.diag({0}, {e})", lambda t: 1 <= t.dim() <= 2, ndim=1,
       extra=lambda g, x: str(g.int(-2, 2)))
