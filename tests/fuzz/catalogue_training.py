"""Catalogue entries: the fused primitives of training that torch names at the top level
(the norms, dropout, embedding, convolution and max pooling). Their parameters are
literals built from the input's shape and dtype, so each call is one step of a program."""

from __future__ import annotations

import math

from .entries import Build, Family
from .gen import Call, Gen, call, is_float, is_int

FAMILY = Family()
add = FAMILY.add


def _values(shape: tuple[int, ...], dtype: str, low: float = 0.5, high: float = 1.5) -> str:
    """A literal tensor of ``shape`` and ``dtype`` with distinct values in [low, high]."""
    n = math.prod(shape)
    flat = f"torch.linspace({low}, {high}, {n}, dtype={dtype})"
    return flat if len(shape) == 1 else f"{flat}.reshape({shape!r})"


def _float_input(g: Gen, ndim: int, most: int = 8) -> tuple[str, tuple[int, ...], str] | None:
    """A float tensor of the program with ``ndim`` to ``most`` dims (now and then any
    tensor, for the error paths), its shape, and the dtype its parameters take: its own,
    float32 for another."""
    x = g.pick(lambda t: is_float(t) and ndim <= t.dim() <= most, strict=True)
    if x is None or g.coin(0.05):
        x = g.pick() if g.coin(0.2) else None
    if x is None:
        return None
    t = g.t(x)
    return x, tuple(t.shape), str(t.dtype) if is_float(t) else "torch.float32"


def _eps(g: Gen) -> str:
    return g.choice(["1e-05", "0.1", "1e-12"])


# ----------------------------------------------------------------------------- norms

def _layer_norm(rms: bool) -> Build:
    def build(g: Gen) -> Call | None:
        picked = _float_input(g, 1)
        if picked is None:
            return None
        x, shape, dt = picked
        k = g.int(1, min(2, len(shape))) if shape else 1
        ns = shape[len(shape) - k:] if shape else (1,)
        weight = _values(ns, dt) if g.coin(0.7) else "None"
        if rms:
            eps = g.choice(["None", _eps(g)])
            return call(f"{{out}} = torch.rms_norm({{0}}, {list(ns)!r}, {weight}, {eps})", x)
        bias = _values(ns, dt, -0.5, 0.5) if g.coin(0.6) else "None"
        return call(f"{{out}} = torch.layer_norm({{0}}, {list(ns)!r}, {weight}, {bias}, "
                    f"{_eps(g)})", x)

    return build


def _group_norm(g: Gen) -> Call | None:
    picked = _float_input(g, 2)
    if picked is None:
        return None
    x, shape, dt = picked
    c = shape[1] if len(shape) > 1 else 1
    divisors = [d for d in range(1, c + 1) if c % d == 0] or [1]
    groups = g.choice(divisors + ([c + 1] if g.coin(0.1) else []))
    weight = _values((c,), dt) if g.coin(0.7) else "None"
    bias = _values((c,), dt, -0.5, 0.5) if g.coin(0.6) else "None"
    return call(f"{{out}} = torch.group_norm({{0}}, {groups}, {weight}, {bias}, {_eps(g)})", x)


def _batch_norm(g: Gen) -> Call | None:
    picked = _float_input(g, 2)
    if picked is None:
        return None
    x, shape, dt = picked
    c = shape[1] if len(shape) > 1 else 1
    training = g.coin(0.6)
    if training and g.coin(0.3):
        mean = var = "None"
    else:  # running statistics: a literal each, updated in place when training
        mean, var = _values((c,), dt, -0.5, 0.5), _values((c,), dt, 0.5, 2.0)
    weight = _values((c,), dt) if g.coin(0.7) else "None"
    bias = _values((c,), dt, -0.5, 0.5) if g.coin(0.6) else "None"
    momentum = g.choice(["0.1", "0.5"])
    return call(f"{{out}} = torch.batch_norm({{0}}, {weight}, {bias}, {mean}, {var}, "
                f"{training}, {momentum}, {_eps(g)}, False)", x)


add("torch.layer_norm", _layer_norm(rms=False))
add("torch.rms_norm", _layer_norm(rms=True))
add("torch.group_norm", _group_norm)
add("torch.batch_norm", _batch_norm)

# ----------------------------------------------------------------------------- dropout


def _dropout(g: Gen) -> Call | None:
    x = g.pick(is_float, strict=g.coin(0.9))
    if x is None:
        return None
    # values the generators agree on: every element kept (p = 0) or none (p = 1), or no
    # training; a p in between draws Ember's numbers, not torch's
    train = g.coin(0.7)
    p = g.choice(["0.0", "1.0"]) if train else g.choice(["0.0", "0.5", "1.0"])
    return call(f"{{out}} = torch.dropout({{0}}, {p}, {train})", x)


add("torch.dropout", _dropout)

# ----------------------------------------------------------------------------- embedding


def _embedding(g: Gen) -> Call | None:
    picked = _float_input(g, 2, 2)
    if picked is None:
        return None
    w, shape, _ = picked
    rows = shape[0] if shape else 0
    count = g.int(1, 6)
    bad = g.coin(0.05)  # an index out of range: torch's IndexError
    indices = [g.int(0, max(rows - 1, 0)) for _ in range(count)] + ([rows] if bad else [])
    literal = f"torch.tensor({indices!r})"
    if g.coin(0.3) and count > 1:
        literal = f"torch.tensor({[indices, indices[::-1]]!r})"
    padding = f", {g.int(-rows, rows - 1)}" if g.coin(0.3) and rows else ""
    return call(f"{{out}} = torch.embedding({{0}}, {literal}{padding})", w)


def _embedding_by_tensor(g: Gen) -> Call | None:
    """An index tensor of the program (its values wrapped into the table's rows)."""
    w = g.pick(is_float, ndim=2, strict=True)
    i = g.pick(is_int, strict=True)
    if w is None or i is None:
        return None
    rows = g.size(w, 0)
    if rows == 0:
        return None
    return call(f"{{out}} = torch.embedding({{0}}, {{1}}.long().remainder({rows}))", w, i)


add("torch.embedding", _embedding)
add("torch.embedding", _embedding_by_tensor)

# ----------------------------------------------------------------------------- convolution


def _conv(nd: int, transposed: bool) -> Build:
    name = f"conv_transpose{nd}d" if transposed else f"conv{nd}d"

    def build(g: Gen) -> Call | None:
        picked = _float_input(g, nd + 1, nd + 2)
        if picked is None:
            return None
        x, shape, dt = picked
        batched = len(shape) > nd + 1
        c = shape[1] if batched else (shape[0] if shape else 1)
        # (torch's CPU kernel of a dilated half-type convolution can crash the process:
        # conv2d of float16 ones (3, 4, 3, 1) by (2, 4, 1, 1), stride 2, padding 1,
        # dilation 2; conv1d of (1, 2, 1) by (2, 1, 1) grouped in 2 likewise)
        half = dt in ("torch.float16", "torch.bfloat16")
        groups = g.choice([d for d in (1, 2, 3) if c % d == 0])
        out = groups * g.int(1, 2)
        k = tuple(g.int(1, 3) for _ in range(nd))
        wshape = (c, out // groups, *k) if transposed else (out, c // groups, *k)
        weight = _values(wshape, dt, -1.0, 1.0)
        bias = _values((out,), dt, -0.5, 0.5) if g.coin(0.5) else "None"
        stride = g.int(1, 2)
        dilation = 1 if half else g.int(1, 2)
        padding = g.choice(["0", "1", "'same'", "'valid'"]) if not transposed and \
            stride == 1 else str(g.int(0, 1))
        tail = f", {stride}, {padding}"
        if transposed:
            extra = g.int(0, max(stride, dilation) - 1)
            tail += f", {extra}, {groups}, {dilation}"
        else:
            tail += f", {dilation}, {groups}"
        return call(f"{{out}} = torch.{name}({{0}}, {weight}, {bias}{tail})", x)

    return build


for _nd in (1, 2):
    add(f"torch.conv{_nd}d", _conv(_nd, transposed=False))
    add(f"torch.conv_transpose{_nd}d", _conv(_nd, transposed=True))

# ----------------------------------------------------------------------------- max pooling


def _max_pool(nd: int) -> Build:
    def build(g: Gen) -> Call | None:
        picked = _float_input(g, nd + 1, nd + 2)
        if picked is None:
            return None
        x, _, _ = picked
        k = g.int(1, 3)
        stride = g.choice(["", f", {g.int(1, 2)}"])
        padding = f", padding={g.int(0, k // 2)}" if g.coin(0.4) else ""
        dilation = f", dilation={g.int(1, 2)}" if g.coin(0.3) else ""
        ceil = ", ceil_mode=True" if g.coin(0.3) else ""
        return call(f"{{out}} = torch.max_pool{nd}d({{0}}, {k}{stride}{padding}{dilation}"
                    f"{ceil})", x)

    return build


add("torch.max_pool1d", _max_pool(1))
add("torch.max_pool2d", _max_pool(2))
add("torch.max_pool3d", _max_pool(3))
