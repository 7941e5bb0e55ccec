"""Tensors that are the same tensor seen again: ``detach``, ``alias`` and ``as_subclass``.

Primitives (views of their operand, with its shape and strides): ``alias`` (in the graph:
its gradient is the identity) and ``detach`` (out of the graph).
"""

from __future__ import annotations

from typing import Any

from ..dispatch import dispatch, register
from ..meta import MetaArray
from ..tensor import Tensor


def _same_view(x: Any) -> Any:
    return x.view()


def _same_view_meta(x: Any) -> MetaArray:
    return MetaArray(x.shape, x.dtype, x.strides, x.offset)


ALIAS = register("alias", _same_view, _same_view_meta, "view", view=True, arg_names=("self",))
DETACH = register("detach", _same_view, _same_view_meta, "view", differentiable=False, view=True,
                  arg_names=("self",))

FUNCTIONS = ["detach"]


def detach(input: Tensor) -> Tensor:
    """A view of the same storage, out of the autograd graph."""
    return dispatch(DETACH, (input,), None)  # type: ignore[no-any-return]


def alias(input: Tensor) -> Tensor:
    """A view of the same storage and history (``AliasBackward0``)."""
    return dispatch(ALIAS, (input,), None)  # type: ignore[no-any-return]


def as_subclass(self: Tensor, cls: type) -> Tensor:
    """The same tensor (storage and history) as an instance of the subclass ``cls``."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass(): argument 'cls' must be a subclass of Tensor, not "
                        f"{cls!r}")
    out = alias(self)
    out.__class__ = cls
    return out


METHODS = {"detach": detach, "as_subclass": as_subclass}
