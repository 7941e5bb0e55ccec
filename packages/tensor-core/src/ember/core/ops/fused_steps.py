"""One-pass steps of the optimizers torch has no fused kernel for, written once.

Torch's per-parameter loop of RMSprop, Adadelta, Adamax, NAdam, RAdam, ASGD or Rprop makes
four to ten passes over each parameter's memory, one per tensor op; a fused step makes one.
Each step here is a primitive over lists of tensors that writes its update into them and
returns nothing (the dispatcher's ``writes``, as ``fused_optimizers``' Adam and SGD), which
Ember's optimizers take on their default path for floating-point tensors.

A step is a ``Step``: statements on one element of each list, from which come both its
reference kernel (numpy/cupy: each statement over whole arrays, ``Step.reference``) and its
native CPU loop (``fused_steps_native``). Both round alike, so they give the same bits:
every product, sum, quotient and root is rounded apart, in the order torch's per-parameter
loop computes it, in the parameters' dtype (float16 and bfloat16 in float32, rounded once
when stored), with a fused multiply-add where torch's kernel makes one (``add(alpha=)``).
Their results are torch's loop's to within a rounding per op. Numbers that depend on a
tensor's step (bias corrections, ASGD's eta) are computed in double from the 0-d state
tensors by the step's ``per_tensor`` and rounded to the dtype, as torch's loop takes them
as Python numbers.

An expression may use ``+ - * /``, comparisons, ``sqrt``, ``fma(a, b, c)`` (``a * b + c``
rounded once), ``where(c, a, b)``, ``maximum`` (NaN-propagating), ``absolute``, ``sign``
(0 for zeros and NaN, as torch's) and ``clamp(x, lo, hi)``: both languages read them alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..device import xp_of
from ..dispatch import Op, register
from .fused_optimizers import _F32, _LOW, _checked, _flat, _store, _tensor_list, fma

__all__ = ["Step", "Operand", "register_step"]


@dataclass(frozen=True)
class Operand:
    """A tensor list of a step: its argument ``name``, the ``alias`` its element has in the
    statements, whether the step writes it, and the flag without which it is absent (an
    empty list)."""

    name: str
    alias: str
    written: bool = False
    when: str | None = None


@dataclass(frozen=True)
class Step:
    """An optimizer's fused step.

    ``operands``: the tensor lists (the parameters first); ``scalar_lists``: lists of 0-d
    state tensors (``state_steps``...) that only ``per_tensor`` reads; ``params``: the
    primitive's number and flag params, in order; ``numbers(params)``: the constants the
    statements use, ``number_names`` (doubles, joined in the dtype); ``flags(params)``:
    the conditions that statements and operands name; ``per_tensor(scalars, params)``:
    for each tensor, the numbers ``per_tensor_names`` its statements use beyond the
    constants, from each scalar list's values; ``statements``: ``(condition, target,
    expression)``, run in order where the condition holds ('' always, else flags joined
    by ``&``, ``!name`` where one is not set); a target that is no alias is a temporary."""

    name: str
    operands: tuple[Operand, ...]
    params: tuple[str, ...]
    number_names: tuple[str, ...]
    numbers: Callable[[dict[str, Any]], dict[str, float]]
    flags: Callable[[dict[str, Any]], dict[str, bool]]
    statements: tuple[tuple[str, str, str], ...]
    scalar_lists: tuple[str, ...] = ()
    per_tensor: Callable[[dict[str, list[float]], dict[str, Any]], dict[str, list[float]]] | None \
        = None
    per_tensor_names: tuple[str, ...] = ()
    doc: str = ""
    op: list[Op] = field(default_factory=list, compare=False)

    @property
    def flag_names(self) -> tuple[str, ...]:
        return tuple(sorted({term.lstrip("!") for f, _, _ in self.statements if f
                             for term in f.split("&")}
                            | {o.when for o in self.operands if o.when}))

    def present(self, flags: dict[str, bool]) -> list[Operand]:
        return [o for o in self.operands if o.when is None or flags[o.when]]

    def runs(self, flag: str, flags: dict[str, bool]) -> bool:
        """Whether a statement's condition holds: '' always; terms joined by ``&``, each a
        flag or ``!flag``."""
        return all(not flags[term[1:]] if term.startswith("!") else flags[term]
                   for term in flag.split("&") if term)

    def tensor_numbers(self, scalar_lists: list[list[Any]], params: dict[str, Any],
                       n: int) -> dict[str, list[float]]:
        """Each tensor's own numbers, from its 0-d state tensors' values."""
        if self.per_tensor is None:
            return {}
        values = {name: [float(t.reshape(-1)[0]) for t in ts]
                  for name, ts in zip(self.scalar_lists, scalar_lists)}
        out = self.per_tensor(values, params)
        assert all(len(v) == n for v in out.values())
        return out

    def reference(self, *operands: Any, **params: Any) -> None:
        """The reference kernel: ``operands`` are the arrays of every list (absent ones
        empty), then those of the scalar lists."""
        flags = self.flags(params)
        lists = dict(zip([o.name for o in self.operands], operands))
        scalar_lists = list(operands[len(self.operands):])
        params_list = lists[self.operands[0].name]
        numbers = self.numbers(params)
        own = self.tensor_numbers(scalar_lists, params, len(params_list))
        present = self.present(flags)
        for i, p in enumerate(params_list):
            if not p.size:
                continue
            work = _F32 if p.dtype in _LOW else p.dtype
            t = work.type
            xp = xp_of(p)
            env: dict[str, Any] = {**_functions(xp), **{k: t(v) for k, v in numbers.items()},
                                   **{k: t(v[i]) for k, v in own.items()}}
            for o in present:
                env[o.alias] = _flat(lists[o.name][i], work)
            with np.errstate(all="ignore"):
                for flag, target, expr in self.statements:
                    if self.runs(flag, flags):
                        env[target] = xp.asarray(eval(expr, env), dtype=work)  # noqa: S307
            for o in present:
                if o.written:
                    _store(lists[o.name][i], env[o.alias])


def _functions(xp: Any) -> dict[str, Any]:
    """The statements' functions over arrays, as the native loop's macros compute them."""
    return {
        "sqrt": xp.sqrt, "fma": fma, "where": xp.where, "maximum": xp.maximum,
        "absolute": xp.absolute,
        "sign": lambda x: (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype),
        "clamp": lambda x, lo, hi: xp.where(x < lo, lo, xp.where(x > hi, hi, x)).astype(
            x.dtype),
    }


def _meta(*operands: Any, **params: Any) -> None:
    """The meta rule of a step: it writes its lists in place, whose shapes stay."""


def register_step(step: Step) -> Callable[..., None]:
    """Register ``step``'s primitive and return its public function:
    ``fn(*lists, *scalar_lists, **params)``, lists in ``step.operands`` order (an absent one
    empty), every param by keyword."""
    n_lists = len(step.operands)
    op = register(step.name, step.reference, _meta, "library", False,
                  writes=tuple(i for i, o in enumerate(step.operands) if o.written),
                  arg_names=tuple(o.name for o in step.operands) + step.scalar_lists)
    step.op.append(op)

    def fn(*lists: Any, **params: Any) -> None:
        name = step.name
        expected = n_lists + len(step.scalar_lists)
        if len(lists) != expected:
            raise TypeError(f"{name}() takes {expected} tensor lists, {len(lists)} given")
        missing = [k for k in step.params if k not in params]
        if missing or len(params) != len(step.params):
            raise TypeError(f"{name}() takes the keyword arguments {list(step.params)}, got "
                            f"{sorted(params)}")
        flags = step.flags(params)
        names = [o.name for o in step.operands] + list(step.scalar_lists)
        values = {arg: _tensor_list(name, arg, v) for arg, v in zip(names, lists)}
        n = len(values[step.operands[0].name])
        one_each = (n, f"one for each of the {n} tensors of self")
        sizes = {o.name: one_each if o.when is None or flags[o.when] else (0, f"not {o.when}")
                 for o in step.operands[1:]}
        arrays = {o.name: values[o.name] for o in step.operands}
        _checked(name, arrays, sizes, 0.0, None, None,
                 tuple(o.name for o in step.operands if o.written))
        for arg in step.scalar_lists:
            ts = values[arg]
            if len(ts) != n or any(t._data.size != 1 for t in ts):
                raise RuntimeError(f"{name}: expected {n} one-element tensors in {arg}")
        op.door(tuple(values[arg] for arg in names), params)

    fn.__name__ = fn.__qualname__ = step.name
    fn.__doc__ = step.doc
    return fn
