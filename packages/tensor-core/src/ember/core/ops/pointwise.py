"""Pointwise ops with several operands or parameters: clamp, where, nan_to_num,
float_power, heaviside (the optimizers' fused updates are in ``fused_updates``).

Primitives (operands arrive promoted: tensors in the result dtype, Python numbers weakly
typed; float16/bfloat16 are computed in float32 and rounded once, as torch's CPU kernels
do):

- ``clamp`` (``self``, ``min``, ``max``: tensors, numbers or None);
- ``where`` (``condition``, ``self``, ``other``; params ``dtype`` when both values are
  numbers, the dtype torch gives them);
- ``nan_to_num`` (``self``; params ``nan``, ``posinf``, ``neginf``);
- ``float_power`` (``self``, ``exponent``: float64 or complex128 tensors, or numbers);
- ``heaviside`` (``self``, ``values``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import xp_of
from ..dispatch import dispatch, register
from ..dtypes import scalar_type_name
from ..tensor import Tensor
from .binary import power
from .conversion import cast, to
from .copying import check_castable, copy_, write_out, write_out_exact
from .elementwise_factory import SAME_OUT
from .inplace import inplace
from .operands import (
    broadcast_shape,
    broadcasting,
    check_inplace_shape,
    check_operand,
    common_device,
    keeping_ties,
    not_implemented,
    plain_number,
    promote,
)

_F64, _C128, _BOOL = _dt.float64, _dt.complex128, _dt.bool
_NUMBERS = (bool, int, float, complex)


# ----------------------------------------------------------------------------- clamp

def _clamp(x: Any, lo: Any, hi: Any) -> Any:
    # maximum/minimum propagate NaN from either side, as torch's clamp does
    r = x if lo is None else keeping_ties(np.maximum, x, lo)
    if hi is not None:
        r = keeping_ties(np.minimum, r, hi)
    return _exactly(r, x.dtype)


def _exactly(r: Any, dt: np.dtype) -> Any:
    """``r`` in ``dt``: ml_dtypes' bfloat16 does not always take Python numbers as weakly
    typed (``where(c, 1.0, b)`` gives float32), so a result may need casting back."""
    return r if r.dtype == dt else r.astype(dt)


CLAMP = register("clamp", _clamp, meta.elementwise("promote"), "elementwise",
                 arg_names=("self", "min", "max"))


def clamp(input: Tensor, min: Any = None, max: Any = None, *, out: Tensor | None = None) -> Tensor:
    """torch.clamp: ``min(max(input, min), max)``; bounds are numbers or tensors, either None.

    The result dtype promotes input with the bounds (an int tensor clamped by 0.5 is float).
    """
    if input.__class__ is Tensor and (min is None or plain_number(min, input)) and (
            max is None or plain_number(max, input)) and (min is not None or max is not None):
        # the common case, kept flat: a float32/float64 tensor and Python-number bounds
        res = CLAMP.door((input, min, max), None)
        return res if out is None else write_out_exact("clamp", out, res, SAME_OUT)
    return _clamp_checked("clamp", input, min, max, out)


def clip(input: Tensor, min: Any = None, max: Any = None, *, out: Tensor | None = None) -> Tensor:
    """torch.clip: an alias of ``clamp``."""
    return _clamp_checked("clip", input, min, max, out)


def _clamp_checked(name: str, input: Tensor, min: Any, max: Any, out: Tensor | None) -> Tensor:
    if min is not None and max is not None and isinstance(min, Tensor) != isinstance(max, Tensor):
        min, max = _as_numbers(name, input, min, max)
    lo_t, hi_t = _check_bounds(input, min, max)
    (x, lo, hi), _, _ = promote("clamp", (input, min, max))
    res = broadcasting(CLAMP, (x, lo, hi))
    if out is None:
        return res
    if lo_t or hi_t:
        return write_out("clamp", out, res)
    return write_out_exact("clamp", out, res, SAME_OUT)


_OUT = "*, Tensor out = None"


def _as_numbers(name: str, input: Any, lo: Any, hi: Any) -> tuple[Any, Any]:
    """A tensor bound beside a number bound: torch's overloads take both as Tensors or both
    as Numbers, and a 0-d tensor that does not require grad passes as a Number."""
    bounds = []
    for bound in (lo, hi):
        if isinstance(bound, Tensor):
            if bound._data.ndim or bound._requires_grad:
                got = ", ".join(type(a).__name__ for a in (input, lo, hi))
                raise TypeError(
                    f"{name}() received an invalid combination of arguments - got ({got}), but "
                    "expected one of:\n"
                    f" * (Tensor input, Tensor min = None, Tensor max = None, {_OUT})\n"
                    f" * (Tensor input, Number min = None, Number max = None, {_OUT})\n")
            bound = bound.item()
        bounds.append(bound)
    return bounds[0], bounds[1]


def _bound_kinds(name: str) -> Any:
    """The in-place clamp's parse: a tensor bound beside a number bound is refused before
    anything else (``_as_numbers``)."""

    def parse(input: Any, min: Any = None, max: Any = None) -> None:
        if min is not None and max is not None and \
                isinstance(min, Tensor) != isinstance(max, Tensor):
            _as_numbers(name, input, min, max)

    return parse


def _check_bounds(input: Any, lo: Any, hi: Any) -> tuple[bool, bool]:
    """torch's checks of clamp's arguments; whether each bound is a tensor."""
    check_operand("clamp", "input", input, numbers=False)
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    lo_t, hi_t = isinstance(lo, Tensor), isinstance(hi, Tensor)
    for name, bound in (("min", lo), ("max", hi)):
        if bound is not None:
            check_operand("clamp", name, bound)
    dt = _dt.result_type(*[o for o in (input, lo, hi) if o is not None])
    if dt.category == 3:
        raise NotImplementedError("clamp is not supported for complex types")
    if dt is _BOOL and ((lo is None) == (hi is None) or not (lo_t or hi_t)):
        # torch's bool kernels clamp by one tensor bound only
        raise not_implemented("clamp_cpu" if lo_t else "clamp_scalar_cpu", dt)
    return lo_t, hi_t


def clamp_min(input: Tensor, min: Any, *, out: Tensor | None = None) -> Tensor:
    """torch.clamp_min: ``clamp(input, min=min)``."""
    _check_one_bound("clamp_min", input, min)
    return clamp(input, min, None, out=out)


def clamp_max(input: Tensor, max: Any, *, out: Tensor | None = None) -> Tensor:
    """torch.clamp_max: ``clamp(input, max=max)``."""
    _check_one_bound("clamp_max", input, max)
    return clamp(input, None, max, out=out)


# torch's clamp_min and clamp_max with a tensor bound are maximum and minimum
_ONE_BOUND_KERNELS = {"clamp_min": "maximum_cpu", "clamp_max": "minimum_cpu"}


def _check_one_bound(name: str, input: Any, bound: Any) -> None:
    """torch's ``clamp_min``/``clamp_max`` with a tensor bound are binary ops of their own,
    whose iterator checks the shapes before their kernel (maximum's, minimum's) checks the
    dtype (``clamp`` checks the dtype first)."""
    if isinstance(bound, Tensor) and isinstance(input, Tensor):
        broadcast_shape(name, input._data.shape, bound._data.shape)
        dt = _dt.result_type(input, bound)
        if dt.category == 3:
            raise not_implemented(_ONE_BOUND_KERNELS[name], dt)


def _one_bound_in_place(name: str) -> Any:
    """The in-place ``clamp_min_``/``clamp_max_``'s checks of a tensor bound, in torch's
    iterator's order: the shapes, the written shape, the result type's cast into self."""

    def parse(input: Any, bound: Any) -> None:
        if isinstance(bound, Tensor) and isinstance(input, Tensor):
            shape = broadcast_shape(name, input._data.shape, bound._data.shape)
            check_inplace_shape(name, input._data.shape, shape)
            check_castable(name, _dt.result_type(input, bound), input.dtype)

    return parse



# ----------------------------------------------------------------------------- where

def _where(condition: Any, x: Any, y: Any, *, dtype: _dt.dtype | None = None) -> Any:
    # a Python float beside a floating array: as an element of its dtype first, which is
    # what the weakly typed number becomes anyway (numpy's own casting of it is a slow loop,
    # 2x the whole where of a (64, 128) gradient, and ml_dtypes' bfloat16 promotes instead)
    if x.__class__ is float:
        if y.__class__ is not float and y.dtype.kind in "fcV":
            x = y.dtype.type(x)
    elif y.__class__ is float and x.dtype.kind in "fcV":
        y = x.dtype.type(y)
    r = xp_of(condition).where(condition, x, y)
    if dtype is not None:
        return r.astype(dtype.np, copy=False)
    return _exactly(r, (y if x.__class__ in _NUMBERS else x).dtype)


def _where_meta(condition: Any, x: Any, y: Any, *, dtype: _dt.dtype | None = None) -> Any:
    shape = meta.broadcast_shapes(*[o.shape for o in (condition, x, y) if hasattr(o, "shape")])
    dt = meta.result_dtype(x, y) if dtype is None else dtype
    return meta.strided(shape, dt, meta.elementwise_strides(shape, (condition, x, y)))


WHERE = register("where", _where, _where_meta, "elementwise",
                 arg_names=("condition", "self", "other"))
_WHERE_OUT = "Expected out type to be {expected} but got {out}"


def where(condition: Tensor, input: Any = None, other: Any = None, *,
          out: Tensor | None = None) -> Any:
    """torch.where(condition, input, other): ``input`` where condition holds, else ``other``.

    Either value may be a Python number; the result dtype promotes the two. With only
    ``condition``, the tuple of indices of its nonzero elements (``nonzero(as_tuple=True)``).
    """
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if condition.__class__ is Tensor and condition.dtype is _BOOL and _plain_values(
            condition, input, other):
        c, x, y, params = condition, input, other, None
    else:
        c, x, y, params = _where_operands(condition, input, other)
    res = broadcasting(WHERE, (c, x, y), params)
    return res if out is None else write_out_exact("where", out, res, _WHERE_OUT)


def _plain_values(condition: Tensor, x: Any, y: Any) -> bool:
    """The hot path of where: on condition's device, two tensors of one dtype, or a
    float32/float64 tensor and a Python number that fits it (formulas' masks)."""
    dev = condition.device
    if x.__class__ is Tensor:
        if y.__class__ is Tensor:
            return x.dtype is y.dtype and x.device is dev and y.device is dev
        return x.device is dev and plain_number(y, x)
    return y.__class__ is Tensor and y.device is dev and plain_number(x, y)


def _where_operands(condition: Any, input: Any, other: Any
                    ) -> tuple[Tensor, Any, Any, dict[str, Any] | None]:
    """where's operands checked and promoted, on one device, and its params."""
    check_operand("where", "condition", condition, numbers=False)
    if input is None or other is None:
        raise TypeError("where(): expected both input and other (or neither), got only one")
    cdt = condition.dtype
    if cdt is not _BOOL and cdt is not _dt.uint8:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {scalar_type_name(cdt)}")
    check_operand("where", "input", input)
    check_operand("where", "other", other)
    (x, y), dt, dev = promote("where", (input, other), [condition])
    # two numbers: the kernel is told the dtype torch gives them (numpy would differ)
    numbers = not isinstance(x, Tensor) and not isinstance(y, Tensor)
    return cast(condition, cdt, dev), x, y, {"dtype": dt} if numbers else None


def _tensor_where(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    """Tensor.where(condition, other): ``where(condition, self, other)``."""
    return where(condition, self, other)  # type: ignore[no-any-return]


# ----------------------------------------------------------------------------- nan_to_num

def _nan_to_num(x: Any, *, nan: float, posinf: float | None, neginf: float | None) -> Any:
    kind = x.dtype.kind
    if kind in "biu":
        return x.copy()
    if kind == "c":
        r = x.copy()
        r.real = _nan_to_num(x.real, nan=nan, posinf=posinf, neginf=neginf)
        r.imag = _nan_to_num(x.imag, nan=nan, posinf=posinf, neginf=neginf)
        return r
    xp, dt = xp_of(x), x.dtype
    inf = dt.type(np.inf)
    # replacements converted to the dtype as torch converts them (beyond its range: inf)
    r = xp.where(xp.isnan(x), dt.type(nan), x)
    r = xp.where(x == inf, dt.type(posinf), r)
    return xp.where(x == -inf, dt.type(neginf), r)


# torch writes it into ``empty_like(input)``: laid out like the input
NAN_TO_NUM = register("nan_to_num", _nan_to_num, meta.like_input, "elementwise",
                      arg_names=("self",))


def nan_to_num(input: Tensor, nan: float | None = 0.0, posinf: float | None = None,
               neginf: float | None = None, *, out: Tensor | None = None) -> Tensor:
    """torch.nan_to_num: NaN to ``nan``, +inf/-inf to ``posinf``/``neginf`` (default: the
    dtype's largest/lowest finite value). Integer and bool tensors come back as a copy."""
    check_operand("nan_to_num", "input", input, numbers=False)
    dt = input.dtype
    if dt.category >= 2:
        info = _dt.finfo(dt.to_real())
        posinf = float(info.max if posinf is None else posinf)
        neginf = float(info.min if neginf is None else neginf)
    params = {"nan": 0.0 if nan is None else float(nan), "posinf": posinf, "neginf": neginf}
    res = dispatch(NAN_TO_NUM, (input,), params)
    return res if out is None else write_out_exact(
        "nan_to_num", out, res, "dtype of out: {out} should be same as input: {expected}")


_nan_to_num_inplace = inplace(nan_to_num, "nan_to_num_")


def nan_to_num_(self: Tensor, nan: float | None = 0.0, posinf: float | None = None,
                neginf: float | None = None) -> Tensor:
    """In-place ``nan_to_num``; an integer or bool tensor is copied into itself, as torch
    copies it (a write of nothing, which even an expanded tensor takes)."""
    if isinstance(self, Tensor) and self.dtype.category < 2:
        return copy_(self, self)
    return _nan_to_num_inplace(self, nan, posinf, neginf)


# ----------------------------------------------------------------------------- float_power

FLOAT_POWER = register("float_power", power, meta.power(), "elementwise",
                       arg_names=("self", "exponent"))


def _float_power_dtype(input: Any, exponent: Any) -> _dt.dtype:
    for v in (input, exponent):
        if (v.dtype.category == 3) if isinstance(v, Tensor) else isinstance(v, complex):
            return _C128
    return _F64


def float_power(input: Any, exponent: Any, *, out: Tensor | None = None) -> Tensor:
    """torch.float_power: ``input ** exponent`` computed in float64 (complex128 for complex)."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power(): expected at least one Tensor argument, got "
                        f"{type(input).__name__} and {type(exponent).__name__}")
    check_operand("float_power", "input", input)
    check_operand("float_power", "exponent", exponent)
    dt = _float_power_dtype(input, exponent)
    dev = common_device("float_power", *[t for t in (input, exponent) if isinstance(t, Tensor)])
    # torch converts the tensors (``.to``: a copy of its own, not a promotion inside the
    # kernel) and the number (toDouble / toComplexDouble)
    number = complex if dt is _C128 else float
    x, y = (to(v, device=dev, dtype=dt) if isinstance(v, Tensor) else number(v)
            for v in (input, exponent))
    res = broadcasting(FLOAT_POWER, (x, y))
    return res if out is None else write_out_exact(
        "float_power", out, res, "the output given to float_power has dtype {out} but the "
        "operation's result requires dtype {expected}")


_float_power_inplace = inplace(float_power, "float_power_")


def float_power_(self: Tensor, exponent: Any) -> Tensor:
    """In-place float_power: ``self`` must already be float64 (complex128 for complex)."""
    dt = _float_power_dtype(self, exponent)
    if self.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{scalar_type_name(self.dtype)} but the operation's result requires "
                           f"dtype {scalar_type_name(dt)}")
    return _float_power_inplace(self, exponent)


# ----------------------------------------------------------------------------- heaviside

def _heaviside(x: Any, values: Any) -> Any:
    # NaN input gives 0, as in torch (numpy's heaviside gives NaN)
    return xp_of(x).where(x == 0, values, (x > 0).astype(x.dtype))


# recorded, as torch records it; its backward raises (no derivative is implemented)
HEAVISIDE = register("heaviside", _heaviside, meta.elementwise("promote"), "elementwise",
                     arg_names=("self", "values"))


def heaviside(input: Tensor, values: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.heaviside: 0 where input < 0, ``values`` where input == 0, 1 where input > 0."""
    check_operand("heaviside", "input", input, numbers=False)
    check_operand("heaviside", "values", values, numbers=False)
    dt = input.dtype
    if values.dtype is not dt:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if dt.category == 3:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    dev = common_device("heaviside", input, values)
    res = broadcasting(HEAVISIDE, (cast(input, dt, dev), cast(values, dt, dev)))
    return res if out is None else write_out_exact(
        "heaviside", out, res, "heaviside is not yet implemented for tensors with different "
        "dtypes.")


FUNCTIONS = [
    "clamp", "clip", "clamp_min", "clamp_max", "where", "nan_to_num", "float_power",
    "heaviside",
]


def _methods() -> dict[str, Any]:
    g = globals()
    methods: dict[str, Any] = {n: g[n] for n in FUNCTIONS}
    methods["where"] = _tensor_where
    for n in ("clamp_min", "clamp_max"):
        methods[n + "_"] = inplace(g[n], n + "_", parse=_one_bound_in_place(n + "_"))
    methods["heaviside_"] = inplace(heaviside, "heaviside_")
    methods["nan_to_num_"] = nan_to_num_
    methods.update(clamp_=inplace(clamp, "clamp_", parse=_bound_kinds("clamp_")),
                   clip_=inplace(clip, "clip_", parse=_bound_kinds("clip_")),
                   float_power_=float_power_)
    return methods


METHODS = _methods()
