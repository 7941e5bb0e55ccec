"""What a catalogue entry is, and the family that collects the entries of one op family in
the order they are written (the catalogue joins the families in a fixed order: a seeded
run draws its steps by position)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .gen import Call, Gen, call

Build = Callable[[Gen], Call | None]


@dataclass(frozen=True)
class Entry:
    op: str  # the public name, as a label: torch.add, Tensor.add_, Tensor.__iadd__, ...
    build: Build
    inplace: bool = False  # writes into its first operand


class Family:
    """The entries of one op family, in the order ``add`` and ``simple`` write them."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def add(self, op: str, fn: Build, inplace: bool = False) -> None:
        self.entries.append(Entry(op, fn, inplace))

    def simple(self, op: str, template: str, pred: Any = None, ndim: int = 0, *,
               extra: Any = None, inplace: bool = False, meta_only: bool = False) -> None:
        """An entry calling ``template`` on one tensor; ``extra(g, x)`` fills ``{e}`` (None:
        no call this time)."""

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

        self.add(op, build, inplace)
