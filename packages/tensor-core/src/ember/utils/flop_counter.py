"""``FlopCounterMode``: the floating-point operations of the primitives run inside it.

A TorchDispatchMode, so it counts what the dispatcher runs, backward included. As in
torch, only matrix products (and, when they exist, convolutions and attention) count:
``2 * m * k * n`` per product, and a product torch computes as a matrix-vector or dot
product (``x @ v`` with a 1-d ``v``) counts nothing. Formulas take the operands' shapes
(None for non-tensors), ``out_shape`` and the op's params; ``register_flop_formula``
adds one for an op (a custom op, say).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from ember.core.dispatch import REGISTRY, Op
from ember.core.dispatch_modes import TorchDispatchMode
from ember.core.tensor import Tensor

__all__ = ["FlopCounterMode", "register_flop_formula", "matmul_flop"]

FLOP_REGISTRY: dict[Op, Any] = {}  # formulas, or _Raw ones taking the arguments as they are


def _op(target: Any) -> Op:
    return REGISTRY[target] if isinstance(target, str) else target  # type: ignore[no-any-return]


def register_flop_formula(targets: Any, get_raw: bool = False
                          ) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Decorate ``formula(*shapes, out_shape=None, **params)`` (or, with ``get_raw``,
    ``formula(*args, out_val=None, **params)``) as the flop count of ``targets`` (ops or
    op names)."""

    def register(formula: Callable[..., int]) -> Callable[..., int]:
        for target in targets if isinstance(targets, (list, tuple)) else [targets]:
            FLOP_REGISTRY[_op(target)] = formula if not get_raw else _Raw(formula)
        return formula

    return register


class _Raw:
    __slots__ = ("formula",)

    def __init__(self, formula: Callable[..., int]):
        self.formula = formula


def _product_flops(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """torch's count for ``a @ b``: only the cases it computes as mm or bmm."""
    if len(b) == 1 or (len(a) == 1 and len(b) > 2):
        return 0  # dot or matrix-vector products
    if len(a) == 1:
        a = (1, *a)
    m, k = a[-2], a[-1]
    n = b[-1]
    batch = math.prod(_broadcast(a[:-2], b[:-2]))
    return 2 * batch * m * k * n


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    return tuple(max(x, y) for x, y in zip(a, b))


@register_flop_formula("matmul")
def matmul_flop(a_shape: tuple[int, ...], b_shape: tuple[int, ...], *args: Any,
                out_shape: Any = None, **params: Any) -> int:
    return _product_flops(tuple(a_shape), tuple(b_shape))


@register_flop_formula("addmm")
def _addmm_flop(self_shape: Any, a_shape: tuple[int, ...], b_shape: tuple[int, ...],
                *args: Any, out_shape: Any = None, **params: Any) -> int:
    return _product_flops(tuple(a_shape), tuple(b_shape))


@register_flop_formula("addbmm")
def _addbmm_flop(self_shape: Any, a_shape: tuple[int, ...], b_shape: tuple[int, ...],
                 *args: Any, out_shape: Any = None, **params: Any) -> int:
    return _product_flops(tuple(a_shape), tuple(b_shape))


class _Counter(TorchDispatchMode):
    def __init__(self, owner: FlopCounterMode):
        super().__init__()
        self.owner = owner

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        owner = self.owner
        formula = owner.formulas.get(func)
        if formula is not None:
            if isinstance(formula, _Raw):
                flops = formula.formula(*args, out_val=out, **kwargs)
            else:
                shapes = [tuple(a._data.shape) if isinstance(a, Tensor) else None for a in args]
                first = out[0] if isinstance(out, tuple) else out
                out_shape = tuple(first._data.shape) if isinstance(first, Tensor) else None
                flops = formula(*shapes, out_shape=out_shape, **kwargs)
            for name in owner.module_names:
                owner.flop_counts[name][func] += flops
        return out


class FlopCounterMode:
    """torch.utils.flop_counter.FlopCounterMode: counts the flops of the primitives run
    inside ``with``; prints a table on exit unless ``display=False``.

    Counts are kept under ``"Global"``; ``mods``/``depth`` are accepted for torch's
    signature (per-module counts come with a module hierarchy to attribute them to).
    """

    def __init__(self, mods: Any = None, depth: int = 2, display: bool = True,
                 custom_mapping: dict[Any, Callable[..., int]] | None = None):
        self.depth = depth
        self.display = display
        self.flop_counts: dict[str, dict[Op, int]] = defaultdict(lambda: defaultdict(int))
        self.formulas: dict[Op, Any] = dict(FLOP_REGISTRY)
        for target, formula in (custom_mapping or {}).items():
            self.formulas[_op(target)] = formula
        self.module_names: list[str] = ["Global"]
        self._mode: _Counter | None = None

    def __enter__(self) -> FlopCounterMode:
        self.flop_counts.clear()
        self._mode = _Counter(self)
        self._mode.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._mode is not None
        self._mode.__exit__(*exc)
        self._mode = None
        if self.display:
            print(self.get_table(self.depth))

    def get_total_flops(self) -> int:
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict[str, dict[Any, int]]:
        """``{module name: {op: flops}}`` (``"Global"``: everything counted)."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth: int | None = None) -> str:
        """torch's table: each module's total and its ops, with their share of the total."""
        total = self.get_total_flops()
        suffix = _suffix(total)
        rows: list[list[str]] = []
        counts = self.flop_counts.get("Global", {})
        if counts:
            rows.append(["Global", _with_suffix(total, suffix), _percent(total, total)])
            rows += [[f" - {op}", _with_suffix(n, suffix), _percent(n, total)]
                     for op, n in counts.items()]
        if not rows:
            rows = [["Global", "0", "0%"]]
        return _simple_table(["Module", "FLOP", "% Total"], rows)


_SUFFIXES = ["", "K", "M", "B", "T"]


def _suffix(number: int) -> str:
    return _SUFFIXES[max(0, min(len(_SUFFIXES) - 1, (len(str(number)) - 2) // 3))]


def _with_suffix(number: int, suffix: str) -> str:
    return f"{number / 1000 ** _SUFFIXES.index(suffix):.3f}{suffix}"


def _percent(num: int, denom: int) -> str:
    return "0%" if denom == 0 else f"{num / denom:.2%}"


def _simple_table(header: list[str], rows: Iterable[list[str]]) -> str:
    """A table laid out as tabulate's "simple" format: first column left, the rest right."""
    rows = list(rows)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([line(header), "  ".join("-" * w for w in widths)] +
                     [line(r) for r in rows])
