"""The catalogue's families beyond the elementwise ones: pointwise with several operands,
reductions, scans, sorting and searching, shapes and views, joins and splits, indexing,
products, casts and copies, factories and the random ops."""

from __future__ import annotations

from typing import Any

import numpy as np

from .catalogue import add
from .gen import (
    DTYPE_CODE,
    Call,
    Gen,
    call,
    index_literal,
    is_bool,
    is_complex,
    is_float,
    is_int,
    is_number,
    is_real,
)


def simple(op: str, template: str, pred: Any = None, ndim: int = 0, *, extra: Any = None,
           inplace: bool = False, meta_only: bool = False) -> None:
    """An entry calling ``template`` on one tensor; ``extra(g, x)`` fills ``{e}``."""

    def build(g: Gen) -> Call | None:
        x = g.pick(pred, ndim=ndim, recent=inplace)
        if x is None:
            return None
        text = template
        if extra is not None:
            e = extra(g, x)
            if e is None:
                return None
            text = template.replace("{e}", e)
        return call(text, x, meta_only=meta_only)

    add(op, build, inplace)


def _kw(*parts: str) -> str:
    return ", ".join(p for p in parts if p)


def _real_float(t: Any) -> bool:
    return bool(is_float(t))


# ----------------------------------------------------------------------------- pointwise

def _bound(g: Gen, x: str) -> tuple[str, tuple[str, ...]]:
    if g.coin(0.3):
        y = g.partner(x, is_real)
        if y is not None:
            return "{1}", (y,)
    return g.choice(["-1", "0.5", "1.5", "0", "2"]), ()


def _clamp(name: str, form: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(is_real, recent=form == "inplace")
        if x is None:
            return None
        lo, args = _bound(g, x)
        if name in ("clamp_min", "clamp_max"):
            inner = lo
        elif g.coin(0.3):
            inner = g.choice([f"min={lo}", f"max={lo}"])
        else:
            hi = g.choice(["2", "1.5", "None", "3"]) if not args else "2"
            inner = f"{lo}, {hi}"
        if form == "function":
            return call(f"{{out}} = torch.{name}({{0}}, {inner})", x, *args)
        suffix = "_" if form == "inplace" else ""
        return call(f"{{out}} = {{0}}.{name}{suffix}({inner})", x, *args)

    return build


for _name in ("clamp", "clip", "clamp_min", "clamp_max"):
    add(f"torch.{_name}", _clamp(_name, "function"))
    add(f"Tensor.{_name}", _clamp(_name, "method"))
    add(f"Tensor.{_name}_", _clamp(_name, "inplace"), inplace=True)


def _where(g: Gen) -> Call | None:
    c = g.pick()
    if c is None:
        return None
    cond = "{0}" if is_bool(g.t(c)) else "({0} > 0)" if is_real(g.t(c)) else "({0} != 0)"
    x = g.partner(c)
    other = g.choice(["0", "1.5", "-1", "True"])
    if x is None or g.coin(0.2):
        return call(f"{{out}} = torch.where({cond}, {g.choice(['2', '1.5'])}, {other})", c)
    if g.coin(0.5):
        y = g.partner(x)
        return call(f"{{out}} = torch.where({cond}, {{1}}, {{2}})", c, x, y or x)
    if g.coin(0.5):
        return call(f"{{out}} = {{1}}.where({cond}, {other})", c, x)
    return call(f"{{out}} = torch.where({cond}, {{1}}, {other})", c, x)


add("torch.where", _where)
add("torch.where(cond)", lambda g: (lambda c: None if c is None else call(
    "{out} = torch.where({0})", c))(g.pick(ndim=1)))


def _nan_to_num(suffix: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(is_number, recent=bool(suffix))
        if x is None:
            return None
        kw = g.choice(["", "0.0", "nan=1.0, posinf=2.0", "neginf=-5.0", "1.0, 2.0, -3.0"])
        head = "torch.nan_to_num({0}" + (", " if kw else "") if not suffix else \
            f"{{0}}.nan_to_num{suffix}("
        return call("{out} = " + head + kw + ")", x)

    return build


add("torch.nan_to_num", _nan_to_num(""))
add("Tensor.nan_to_num_", _nan_to_num("_"), inplace=True)


def _two_tensor(name: str, form: str, pred: Any = None, scalar_ok: bool = True) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(pred, recent=form == "inplace")
        if x is None:
            return None
        if scalar_ok and g.coin(0.3):
            other, args = g.scalar(x), ()
        else:
            y = g.partner(x, pred)
            if y is None:
                return None
            other, args = "{1}", (y,)
        if form == "function":
            return call(f"{{out}} = torch.{name}({{0}}, {other})", x, *args)
        return call(f"{{out}} = {{0}}.{name}{'_' if form == 'inplace' else ''}({other})",
                    x, *args)

    return build


for _name, _scalar in (("float_power", True), ("heaviside", False)):
    add(f"torch.{_name}", _two_tensor(_name, "function", is_real, _scalar))
    add(f"Tensor.{_name}_", _two_tensor(_name, "inplace", is_real, _scalar), inplace=True)


def _isclose(g: Gen) -> Call | None:
    x = g.pick()
    y = None if x is None else g.partner(x)
    if y is None:
        return None
    kw = g.choice(["", "rtol=0.5, atol=0.5", "0.0, 0.0, True", "atol=1.0, equal_nan=True"])
    return call(f"{{out}} = torch.isclose({{0}}, {{1}}{', ' + kw if kw else ''})", x, y)


add("torch.isclose", _isclose)
add("torch.allclose", lambda g: (lambda x: None if x is None else call(
    "{out} = torch.allclose({0}, {1}, atol=0.5, equal_nan=True)", x, g.partner(x) or x))(
    g.pick()))
add("torch.equal", lambda g: (lambda x: None if x is None else call(
    "{out} = torch.equal({0}, {1})", x, g.partner(x) or x))(g.pick()))


def _ternary(name: str, form: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(is_number, recent=form == "inplace")
        if x is None:
            return None
        a = g.partner(x, is_number)
        if a is None:
            return None
        if name == "lerp":
            if g.coin(0.5):
                third, args = g.choice(["0.25", "0.5", "2"]), (a,)
            else:
                third, args = "{2}", (a, g.partner(x, is_float) or a)
            kw = ""
        else:
            third, args = "{2}", (a, g.partner(x, is_number) or a)
            kw = g.choice(["", ", value=0.5", ", value=-2", ", value=3"])
        if form == "function":
            return call(f"{{out}} = torch.{name}({{0}}, {{1}}, {third}{kw})", x, *args)
        return call(f"{{out}} = {{0}}.{name}{'_' if form == 'inplace' else ''}"
                    f"({{1}}, {third}{kw})", x, *args)

    return build


for _name in ("lerp", "addcmul", "addcdiv"):
    add(f"torch.{_name}", _ternary(_name, "function"))
    add(f"Tensor.{_name}", _ternary(_name, "method"))
    add(f"Tensor.{_name}_", _ternary(_name, "inplace"), inplace=True)

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
        parts.append("dtype=" + g.choice(["torch.float64", "torch.int64", "torch.float32"]))
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
                                    8: ["torch.float64", "torch.int64", "torch.complex64"]}[
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

# ----------------------------------------------------------------------------- conversion

_CAST_METHODS = {"float": "float32", "double": "float64", "half": "float16",
                 "bfloat16": "bfloat16", "long": "int64", "int": "int32", "short": "int16",
                 "char": "int8", "byte": "uint8", "bool": "bool", "cfloat": "complex64"}
_RANGE = {"int64": 2.0 ** 62, "int32": 2.0 ** 31, "int16": 2.0 ** 15, "int8": 127,
          "uint8": 255}


def _cast_defined(t: Any, target: str) -> bool:
    """torch leaves float -> int casts of NaN, infinities and values out of the target's
    range undefined (C++ undefined behaviour): the catalogue casts only defined values."""
    if target not in _RANGE or not (is_float(t) or is_complex(t)):
        return True
    import torch

    v = torch.view_as_real(t).detach() if is_complex(t) else t.detach().double()
    lo = 0 if target == "uint8" else -_RANGE[target]
    return bool(torch.isfinite(v).all()) and bool(((v > lo - 1) & (v < _RANGE[target])).all())


def _to(g: Gen) -> Call | None:
    x = g.pick()
    if x is None:
        return None
    target = g.choice(list(_CAST_METHODS.values()))
    if not _cast_defined(g.t(x), target):
        return None
    form = g.rng.random()
    if form < 0.4:
        return call(f"{{out}} = {{0}}.to(torch.{target}{', copy=True' if g.coin(0.2) else ''})",
                    x)
    if form < 0.8:
        method = {v: k for k, v in _CAST_METHODS.items()}[target]
        return call(f"{{out}} = {{0}}.{method}()", x)
    return call(f"{{out}} = {{0}}.type(torch.{target})", x)


add("Tensor.to", _to)
add("Tensor.type_as", lambda g: (lambda x, y: None if x is None or y is None or
                                 not _cast_defined(g.t(x), str(g.t(y).dtype).split(".")[-1])
                                 else call("{out} = {0}.type_as({1})", x, y))(
    g.pick(), g.pick()))
simple("torch.clone", "{out} = torch.clone({0}{e})",
       extra=lambda g, x: g.choice(["", ", memory_format=torch.contiguous_format",
                                    ", memory_format=torch.preserve_format"]))
simple("Tensor.contiguous", "{out} = {0}.contiguous()")
simple("torch.detach", "{out} = torch.detach({0})")
simple("Tensor.detach", "{out} = {0}.detach()")
simple("Tensor.as_subclass", "{out} = {0}.as_subclass(torch.Tensor)")
simple("Tensor.cpu", "{out} = {0}.cpu()")

# ----------------------------------------------------------------------------- copying


def _copy_(g: Gen) -> Call | None:
    x = g.pick(recent=True)
    if x is None:
        return None
    y = g.partner(x)
    if y is None or not _cast_defined(g.t(y), str(g.t(x).dtype).split(".")[-1]):
        return None
    return call("{out} = {0}.copy_({1})", x, y)


add("Tensor.copy_", _copy_, inplace=True)


def _fill_(g: Gen) -> Call | None:
    x = g.pick(recent=True)
    if x is None:
        return None
    v = g.scalar(x) if g.coin(0.7) else g.choice(["torch.tensor(2.5)", "torch.tensor(3)",
                                                   "torch.tensor(-1)"])
    return call(f"{{out}} = {{0}}.fill_({v})", x)


add("Tensor.fill_", _fill_, inplace=True)
simple("Tensor.zero_", "{out} = {0}.zero_()", inplace=True)
simple("Tensor.resize_", "{out} = {0}.clone().resize_({e})", meta_only=True,
       extra=lambda g, x: g.choice(["0", "2, 3", f"{max(g.t(x).numel(), 1)}", "1"]))

# ----------------------------------------------------------------------------- factories


def _shape_literal(g: Gen) -> str:
    return g.choice(["(2, 3)", "(0, 3)", "()", "(4,)", "(3, 1)"])


def _factory(name: str) -> Any:
    def build(g: Gen) -> Call | None:
        dt = ", dtype=" + g.dtype() if g.coin(0.4) else ""
        s = _shape_literal(g)
        if name == "full":
            return call(f"{{out}} = torch.full({s}, {g.scalar()}{dt})")
        if name == "empty":
            return call(f"{{out}} = torch.empty({s}{dt})", meta_only=True)
        if name == "empty_strided":
            return call(f"{{out}} = torch.empty_strided((2, 3), {g.choice(['(1, 2)', '(3, 1)', '(0, 1)'])}"
                        f"{dt})", meta_only=True)
        if name == "eye":
            return call(f"{{out}} = torch.eye({g.int(0, 3)}{', ' + str(g.int(0, 4)) if g.coin() else ''}"
                        f"{dt})")
        if name == "scalar_tensor":
            return call(f"{{out}} = torch.scalar_tensor({g.scalar()}{dt})")
        if name == "tensor":
            return call(f"{{out}} = torch.tensor({g.choice(['[1, 2]', '[1.5, -2.0]', '[[True], [False]]', '3', '[]', '[1, 2.5]', '[1j, 2]'])}{dt})")
        return call(f"{{out}} = torch.{name}({s}{dt})")

    return build


for _name in ("zeros", "ones", "full", "empty", "empty_strided", "eye", "scalar_tensor",
              "tensor"):
    add(f"torch.{_name}", _factory(_name))


def _like(name: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick()
        if x is None:
            return None
        dt = ", dtype=" + g.dtype() if g.coin(0.3) else ""
        mf = ", memory_format=torch.contiguous_format" if g.coin(0.2) else ""
        meta = name in ("empty_like", "rand_like", "randn_like", "randint_like")
        if name == "full_like":
            return call(f"{{out}} = torch.full_like({{0}}, {g.scalar()}{dt}{mf})", x)
        if name == "randint_like":
            return call(f"{{out}} = torch.randint_like({{0}}, 10{dt if 'complex' not in dt else ''})",
                        x, meta_only=True)
        return call(f"{{out}} = torch.{name}({{0}}{dt}{mf})", x, meta_only=meta)

    return build


for _name in ("zeros_like", "ones_like", "full_like", "empty_like", "rand_like",
              "randn_like", "randint_like"):
    add(f"torch.{_name}", _like(_name))


def _new(name: str) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick()
        if x is None:
            return None
        s = _shape_literal(g)
        if name == "new_full":
            return call(f"{{out}} = {{0}}.new_full({s}, {g.scalar(x)})", x)
        if name == "new_tensor":
            return call("{out} = {0}.new_tensor([1, 2])", x)
        return call(f"{{out}} = {{0}}.{name}({s})", x, meta_only=name == "new_empty")

    return build


for _name in ("new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"):
    add(f"Tensor.{_name}", _new(_name))


def _complex(g: Gen) -> Call | None:
    x = g.pick(lambda t: is_float(t) and str(t.dtype) in ("torch.float32", "torch.float64"))
    if x is None:
        return None
    y = g.partner(x, is_float) or x
    if str(g.t(x).dtype) == str(g.t(y).dtype) == "torch.float16":
        return None  # torch's complex32 is experimental; Ember refuses it (a known difference)
    return call("{out} = torch.complex({0}, {1})", x, y)


add("torch.complex", _complex)
add("torch.polar", lambda g: (lambda x: None if x is None else call(
    "{out} = torch.polar({0}.abs(), {1})", x, g.partner(x, is_float) or x))(
    g.pick(lambda t: str(t.dtype) in ("torch.float32", "torch.float64"))))


def _range(name: str) -> Any:
    def build(g: Gen) -> Call | None:
        dt = ", dtype=" + g.choice(["torch.float64", "torch.int64", "torch.float16",
                                     "torch.int32"]) if g.coin(0.3) else ""
        integral = "int" in dt
        if name == "arange":
            args = g.choice(["5", "10, 0, -3", "5, 5", "0, 10, 3"] + (
                [] if integral else ["0, 1, 0.1", "-2.5, 2.5"]))
        elif name == "range":
            # torch 2.13 traps (SIGFPE) on a fractional step cast to an integral zero
            args = g.choice(["0, 4", "5, 1, -2"] + ([] if integral else ["0, 1, 0.25"]))
        elif name == "linspace":
            args = g.choice(["0, 1, 5", "0, 1, 0", "0, 1, 1", "-10, 10, 7", "-1, 1, 7"])
        else:
            args = g.choice(["0, 2, 3", "0, 2, 3, base=2", "0.5, 3.5, 7", "0, 1, 0"])
        return call(f"{{out}} = torch.{name}({args}{dt})")

    return build


for _name in ("arange", "range", "linspace", "logspace"):
    add(f"torch.{_name}", _range(_name))

# ----------------------------------------------------------------------------- random ops


def _random(template: str, pred: Any = None) -> Any:
    def build(g: Gen) -> Call | None:
        x = g.pick(pred)
        if x is None:
            return None
        return call(template, x, meta_only=True)

    return build


for _name, _tmpl, _pred in (
        ("Tensor.uniform_", "{out} = {0}.clone().uniform_(-2, 2)", is_float),
        ("Tensor.normal_", "{out} = {0}.clone().normal_(1.0, 3.0)", is_float),
        ("Tensor.bernoulli_", "{out} = {0}.clone().bernoulli_(0.5)", None),
        ("Tensor.random_", "{out} = {0}.clone().random_(0, 5)", is_real),
        ("Tensor.exponential_", "{out} = {0}.clone().exponential_(2.0)", is_float),
        ("Tensor.geometric_", "{out} = {0}.clone().geometric_(0.3)", is_float),
        ("Tensor.cauchy_", "{out} = {0}.clone().cauchy_()", is_float),
        ("Tensor.log_normal_", "{out} = {0}.clone().log_normal_(0.5, 0.25)", is_float),
        ("torch.bernoulli", "{out} = torch.bernoulli({0}.abs().clamp(0, 1))", is_float),
        ("torch.multinomial", "{out} = torch.multinomial({0}.abs() + 0.1, 2, True)",
         lambda t: is_float(t) and 1 <= t.dim() <= 2 and t.shape[-1] > 0),
        ("torch.poisson", "{out} = torch.poisson({0}.abs())", is_float),
        ("torch.normal", "{out} = torch.normal({0}, 1.0)", is_float)):
    add(_name, _random(_tmpl, _pred))
for _name, _tmpl in (("torch.rand", "{out} = torch.rand(2, 3)"),
                     ("torch.randn", "{out} = torch.randn(3)"),
                     ("torch.randint", "{out} = torch.randint(0, 10, (3, 2))"),
                     ("torch.randperm", "{out} = torch.randperm(4)")):
    add(_name, lambda g, t=_tmpl: call(t, meta_only=True))

__all__ = ["DTYPE_CODE", "is_int"]
