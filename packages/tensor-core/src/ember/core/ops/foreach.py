"""torch's binary foreach ops: ``_foreach_add``, ``_foreach_sub``, ``_foreach_mul``,
``_foreach_div``, ``_foreach_maximum``, ``_foreach_minimum``, ``_foreach_clamp_min``,
``_foreach_clamp_max``, ``_foreach_pow`` and their in-place forms.

Each takes a list of tensors ``self`` and, by torch's overloads, a second tensor list (each
pair broadcast as the per-tensor op broadcasts it), a Python number, a list of numbers
(one per tensor) or, for add, mul and div, a 0-d tensor; add and sub take ``alpha`` with
the lists (add with the 0-d tensor too); pow also takes a number base with a list of
exponents (``_foreach_pow(2.0, tensors)``). Every result is the per-tensor op's
(``add(self[i], other[i], alpha=alpha)``, ``clamp_min(self[i], scalar)`` for maximum with a
number, as torch's CPU kernels compute them), in one dispatch where ``foreach_lists``
allows it; the in-place forms return ``self``, as torch's do.

The primitives ``_foreach_<op>_(self, other)`` and ``_foreach_<op>(self, other, out)`` take
the second operand as a tensor list, a 0-d tensor or None, and numbers as params
``scalar``, ``scalars`` (a tuple) and ``alpha``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import dtypes as _dt
from ..dispatch import REGISTRY, Op
from ..tensor import Tensor
from . import binary, pointwise
from .foreach_lists import (
    Operand,
    check_overlaps,
    checked_before_writes,
    fresh,
    into,
    kernel_of,
    nonempty,
    number,
    one_dispatch,
    plain_numbers,
    register_pair,
    results,
    second_operand,
    tensor_list,
    writable,
)
from .inplace import inplace
from .operands import LIMITS, checked_scalar, plain_number, scalar_to

_BF16, _F16 = _dt.bfloat16, _dt.float16
_BF16_NP = _BF16.np
_HALVES = (_F16.np, _BF16_NP)
_PAIR: Callable[[Any, Any], tuple[Any, ...]] = lambda x, y: (x, y)  # noqa: E731
_LOWER: Callable[[Any, Any], tuple[Any, ...]] = lambda x, y: (x, y, None)  # noqa: E731
_UPPER: Callable[[Any, Any], tuple[Any, ...]] = lambda x, y: (x, None, y)  # noqa: E731


class _Kernels:
    """How the per-tensor op computes one pair on arrays: its primitive ``op`` on the
    operands ``arrange(x, y)`` makes, and ``op_`` where it has one in place (else the result
    is written back)."""

    __slots__ = ("op", "arrange", "op_")

    def __init__(self, op: Op, arrange: Callable[[Any, Any], tuple[Any, ...]],
                 op_: Op | None = None):
        self.op, self.arrange, self.op_ = op, arrange, op_

    def writers(self, x: Any) -> tuple[Callable[..., None], Callable[..., None]]:
        """``(write_new(out, x, y), write_self(x, y))`` on ``x``'s device."""
        compute, arrange = kernel_of(self.op, x), self.arrange
        new = _into(compute)
        if self.op_ is not None:
            own = kernel_of(self.op_, x)

            def write_self(x: Any, y: Any) -> None:
                own(x, y)
        else:
            def write_self(x: Any, y: Any) -> None:
                new(x, *arrange(x, y))

        def write_new(out: Any, x: Any, y: Any) -> None:
            new(out, *arrange(x, y))

        return write_new, write_self


def _into(compute: Callable[..., Any]) -> Callable[..., None]:
    """``into(compute)``, for a kernel that is a ufunc but for a half-type array with a
    number (``compute.ufunc``: mul's and div's, which compute those in float32)."""
    ufunc = getattr(compute, "ufunc", None)
    if ufunc is None:
        return into(compute)

    def write(out: Any, x: Any, y: Any) -> None:
        if x.dtype in _HALVES and (y.__class__ is float or y.__class__ is int):
            out[...] = compute(x, y)
        else:
            ufunc(x, y, out=out)

    return write


class _Binary:
    """One binary foreach op: its per-tensor function and method for tensor pairs and for
    numbers (torch's slow path), the kernels the one-dispatch path runs for each, and how
    a number joins the kernel."""

    def __init__(self, name: str, kinds: tuple[str, ...], tensors: tuple[Any, Any, _Kernels],
                 numbers: tuple[Any, Any, _Kernels], *, alpha: bool = False,
                 bfloat16_numbers: bool = False, clamped_numbers: bool = False,
                 result: Callable[..., _dt.dtype] = _dt.result_type):
        self.name, self.kinds, self.alpha = name, kinds, alpha
        self.tensors, self.numbers = tensors, numbers
        self.bfloat16_numbers, self.clamped_numbers = bfloat16_numbers, clamped_numbers
        self.result = result
        self.op_, self.op = register_pair(name, self._inplace_forward, self._forward, 2)

    # --------------------------------------------------------------- kernels

    def _operands(self, self_: list[Any], other: Any, scalar: Any, scalars: Any,
                  alpha: Any) -> tuple[list[Any], _Kernels]:
        """The second operand of each array, as the per-tensor kernels take it (``alpha``
        times the tensor, as the per-tensor op scales it first; a bfloat16 number as a
        bfloat16 scalar), and the kernels of the overload."""
        n = len(self_)
        if other is None:
            values = [scalar] * n if scalars is None else list(scalars)
            if self.bfloat16_numbers and self_[0].dtype == _BF16_NP:
                values = [_BF16_NP.type(v) for v in values]
            return values, self.numbers[2]
        ys = other if other.__class__ is list else [other] * n
        if alpha.__class__ is not int or alpha != 1:
            scale = kernel_of(binary.MUL, ys[0])
            ys = [scale(y, alpha) for y in ys]
        return ys, self.tensors[2]

    def _inplace_forward(self, self_: list[Any], other: Any, *, scalar: Any = None,
                         scalars: Any = None, alpha: Any = 1) -> None:
        ys, kernels = self._operands(self_, other, scalar, scalars, alpha)
        _, write_self = kernels.writers(self_[0])
        for x, y in zip(self_, ys):
            write_self(x, y)

    def _forward(self, self_: list[Any], other: Any, out: list[Any], *, scalar: Any = None,
                 scalars: Any = None, alpha: Any = 1) -> None:
        ys, kernels = self._operands(self_, other, scalar, scalars, alpha)
        write_new, _ = kernels.writers(self_[0])
        for o, x, y in zip(out, self_, ys):
            write_new(o, x, y)

    # --------------------------------------------------------------- arguments

    def parse(self, op: str, self_: Any, other: Any, alpha: Any) -> tuple[list[Tensor], Operand]:
        ts = tensor_list(op, self_, 0)
        nonempty(op, ts)
        kind, value = second_operand(op, ts, other, "tensor" in self.kinds)
        if alpha.__class__ is not int or alpha != 1:
            if not self.alpha:
                raise TypeError(f"{op}() got an unexpected keyword argument 'alpha'")
            if kind in ("scalar", "scalars"):
                raise TypeError(f"{op}(): alpha is given with a {_KIND_NAMES[kind]}: torch's "
                                "overloads take alpha only with a tensor list or a tensor")
            number(op, alpha, "alpha", 3)
        return ts, (kind, value)

    def dispatched(self, ts: list[Tensor], kind: str, value: Any, alpha: Any
                   ) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
        """The primitive's operands and params for the one-dispatch path, or None."""
        if kind == "list":
            dt = one_dispatch(ts + value, (ts, value))
        else:
            dt = one_dispatch(ts + [value] if kind == "tensor" else ts)
        if dt is None:
            return None
        if kind in ("list", "tensor"):
            if alpha.__class__ is not int or alpha != 1:
                if alpha.__class__ is not float and alpha.__class__ is not int:
                    return None
                try:  # the per-tensor op checks that alpha (sub's: -alpha) fits the dtype
                    checked_scalar(-alpha if self.name == "sub" else alpha, dt)
                except RuntimeError:
                    return None
            return (ts, value), {"alpha": alpha}
        numbers = [value] if kind == "scalar" else list(value)
        if not plain_numbers(numbers):
            return None
        if self.clamped_numbers:  # as clamp converts its bounds: checked, in the dtype
            numbers = [v if plain_number(v, ts[0]) else scalar_to(
                f"_foreach_{self.name}", v, dt).item() for v in numbers]
        elif self.name == "pow" and dt.itemsize == 2:
            lo, hi = LIMITS[dt]
            if not all([lo <= v <= hi for v in numbers]):
                return None  # pow refuses the exponent (the per-tensor op raises)
        if kind == "scalar":
            return (ts, None), {"scalar": numbers[0]}
        return (ts, None), {"scalars": tuple(numbers)}

    # --------------------------------------------------------------- the two forms

    def inplace(self, self_: Any, other: Any, alpha: Any) -> Any:
        op = f"_foreach_{self.name}_"
        ts, (kind, value) = self.parse(op, self_, other, alpha)
        call = self.dispatched(ts, kind, value, alpha)
        if call is not None and writable(op, ts):
            if kind != "scalar" and kind != "scalars":
                check_overlaps(op, ts, [value] if kind == "list" else [[value] * len(ts)])
            self.op_.door(*call)  # type: ignore[union-attr]
            return self_
        seconds = _seconds(ts, kind, value)
        checked_before_writes(op, ts, [seconds], self.result)
        method = (self.tensors if kind in ("list", "tensor") else self.numbers)[1]
        extra = {"alpha": alpha} if self.alpha and kind in ("list", "tensor") else {}
        for t, o in zip(ts, seconds):
            method(t, o, **extra)
        return self_

    def functional(self, self_: Any, other: Any, alpha: Any) -> list[Tensor]:
        op = f"_foreach_{self.name}"
        ts, (kind, value) = self.parse(op, self_, other, alpha)
        call = self.dispatched(ts, kind, value, alpha)
        seconds = _seconds(ts, kind, value)
        if call is not None:
            arranged = (self.tensors if kind in ("list", "tensor") else self.numbers)[2]
            rule = arranged.op.table["meta"]
            out = results(lambda x, y: rule(*arranged.arrange(x, y)), [ts, seconds],
                          ts[0].dtype)
            self.op.door((*call[0], out), call[1])  # type: ignore[union-attr]
            return fresh(out)
        function = (self.tensors if kind in ("list", "tensor") else self.numbers)[0]
        extra = {"alpha": alpha} if self.alpha and kind in ("list", "tensor") else {}
        return [function(t, o, **extra) for t, o in zip(ts, seconds)]


class _Power(_Binary):
    """pow, whose out-of-place form also takes a number base with a list of exponents
    (torch's ``ScalarAndTensor`` overload: the primitive's ``self`` is then the exponents,
    and param ``base`` the number)."""

    def _forward(self, self_: list[Any], other: Any, out: list[Any], *, scalar: Any = None,
                 scalars: Any = None, alpha: Any = 1, base: Any = None) -> None:
        if base is None:
            super()._forward(self_, other, out, scalar=scalar, scalars=scalars, alpha=alpha)
            return
        compute = kernel_of(binary.POW, self_[0])
        for o, e in zip(out, self_):
            o[...] = compute(base, e)


_KIND_NAMES = {"scalar": "Number", "scalars": "list of Numbers"}


def _seconds(ts: list[Tensor], kind: str, value: Any) -> list[Any]:
    """The second operand of each tensor."""
    if kind == "list" or kind == "scalars":
        return list(value)
    return [value] * len(ts)


def _true_division(t: Any, o: Any) -> _dt.dtype:
    dt = _dt.result_type(t, o)
    return _dt.get_default_dtype() if dt.category < 2 else dt


_M, _P = binary.METHODS, pointwise.METHODS
_ALL = ("list", "tensor", "scalar", "scalars")
_NO_TENSOR = ("list", "scalar", "scalars")


def _arith(name: str, kinds: tuple[str, ...], function: Any, method: Any, **options: Any
           ) -> _Binary:
    """add, sub, mul, div, pow: one primitive and its in-place form for every overload."""
    kernels = _Kernels(REGISTRY[name], _PAIR, REGISTRY[name + "_"])
    pair = (function, method, kernels)
    return (_Power if name == "pow" else _Binary)(name, kinds, pair, pair, **options)


def _bounded(name: str, side: str, binary_op: Op | None = None,
             function: Any = None) -> _Binary:
    """maximum and minimum (``binary_op``: theirs with tensors, clamp's with numbers, as
    torch computes them), clamp_min and clamp_max (clamp's with both)."""
    bound = f"clamp_{side}"
    numbers = (getattr(pointwise, bound), _P[bound + "_"],
               _Kernels(pointwise.CLAMP, _LOWER if side == "min" else _UPPER))
    tensors = numbers if binary_op is None else (
        function, inplace(function, f"_foreach_{name}_"), _Kernels(binary_op, _PAIR))
    return _Binary(name, _NO_TENSOR, tensors, numbers, clamped_numbers=True)


OPS = {op.name: op for op in (
    _arith("add", _ALL, binary.add, _M["add_"], alpha=True, bfloat16_numbers=True),
    _arith("sub", _NO_TENSOR, binary.sub, _M["sub_"], alpha=True, bfloat16_numbers=True),
    _arith("mul", _ALL, binary.mul, _M["mul_"]),
    _arith("div", _ALL, binary.div, _M["div_"], result=_true_division),
    _arith("pow", _NO_TENSOR, binary.pow, _M["pow_"], bfloat16_numbers=True),
    _bounded("maximum", "min", binary.MAXIMUM, binary.maximum),
    _bounded("minimum", "max", binary.MINIMUM, binary.minimum),
    _bounded("clamp_min", "min"),
    _bounded("clamp_max", "max"),
)}


# ----------------------------------------------------------------------------- public

def _public(name: str, second: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``_foreach_<name>`` and ``_foreach_<name>_`` as torch spells them."""
    binary_op = OPS[name]
    if binary_op.alpha:
        def functional(self: Any, other: Any, *, alpha: Any = 1) -> list[Tensor]:
            return binary_op.functional(self, other, alpha)

        def inplace_form(self: Any, other: Any, *, alpha: Any = 1) -> Any:
            return binary_op.inplace(self, other, alpha)
    else:
        def functional(self: Any, other: Any) -> list[Tensor]:  # type: ignore[misc]
            return binary_op.functional(self, other, 1)

        def inplace_form(self: Any, other: Any) -> Any:  # type: ignore[misc]
            return binary_op.inplace(self, other, 1)

    what = f"``{second}``" + " (times ``alpha``)" * binary_op.alpha
    overloads = "a tensor list, a number, a list of numbers" + (
        " or a 0-d tensor" if "tensor" in binary_op.kinds else "")
    for fn, form in ((functional, ""), (inplace_form, "_")):
        fn.__name__ = fn.__qualname__ = f"_foreach_{name}{form}"
    functional.__doc__ = (
        f"torch._foreach_{name}: ``{name}`` of each tensor of ``self`` with {what}: "
        f"{overloads}; a list of new tensors.")
    inplace_form.__doc__ = (f"torch._foreach_{name}_: ``_foreach_{name}`` written into ``self``; "
                            "returns ``self``.")
    return functional, inplace_form


_foreach_add, _foreach_add_ = _public("add", "other")
_foreach_sub, _foreach_sub_ = _public("sub", "other")
_foreach_mul, _foreach_mul_ = _public("mul", "other")
_foreach_div, _foreach_div_ = _public("div", "other")
_foreach_maximum, _foreach_maximum_ = _public("maximum", "other")
_foreach_minimum, _foreach_minimum_ = _public("minimum", "other")
_foreach_clamp_min, _foreach_clamp_min_ = _public("clamp_min", "other")
_foreach_clamp_max, _foreach_clamp_max_ = _public("clamp_max", "other")
_pow, _foreach_pow_ = _public("pow", "exponent")


def _foreach_pow(self: Any, exponent: Any) -> list[Tensor]:
    """torch._foreach_pow: each tensor of ``self`` to the power ``exponent`` (a tensor list,
    a number or a list of numbers), or the number ``self`` to the power of each tensor of
    ``exponent``; a list of new tensors."""
    if self.__class__ is list or self.__class__ is tuple:
        return _pow(self, exponent)  # type: ignore[no-any-return]
    op = "_foreach_pow"
    base = number(op, self, "self", 1)
    ts = tensor_list(op, exponent, 1, "exponent")
    nonempty(op, ts)
    pow_op = OPS["pow"].op
    dt = one_dispatch(ts)
    if dt is None or dt is _BF16 or base.__class__ not in (int, float):
        return [binary.pow(base, t) for t in ts]
    out = results(lambda e: binary.POW.table["meta"](base, e), [ts], dt)
    pow_op.door((ts, None, out), {"base": base})  # type: ignore[union-attr]
    return fresh(out)


FUNCTIONS = [f"_foreach_{name}{form}" for name in OPS for form in ("", "_")]
METHODS: dict[str, Any] = {}
