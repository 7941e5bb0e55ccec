"""Padding layers: constant (and zero), reflection, replication and circular padding of
the last 1, 2 or 3 dims, over ``F.pad``. ``padding`` is an int (every side) or a tuple
(left, right[, top, bottom[, front, back]]), last dim first, as torch's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ember.core as E

from .. import functional as F
from .module import Module
from .utils import _ntuple, _pair, _quadruple

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d",
           "ZeroPad2d", "ZeroPad3d"]

_sextuple = _ntuple(6, "_sextuple")


class _CircularPadNd(Module):
    padding: Sequence[int]
    _dims: int  # the padded dims; the input has one or two more

    def forward(self, input: E.Tensor) -> E.Tensor:
        if input.ndim != self._dims + 1 and input.ndim != self._dims + 2:
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got "
                             f"{input.ndim}D input)")
        return F.pad(input, self.padding, "circular")

    def extra_repr(self) -> str:
        return f"{self.padding}"


class CircularPad1d(_CircularPadNd):
    """torch.nn.CircularPad1d: the last dim of a 2-D or 3-D input padded by wrapping
    around."""

    _dims = 1

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _pair(padding)


class CircularPad2d(_CircularPadNd):
    """torch.nn.CircularPad2d: the last 2 dims of a 3-D or 4-D input padded by wrapping
    around."""

    _dims = 2

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _quadruple(padding)


class CircularPad3d(_CircularPadNd):
    """torch.nn.CircularPad3d: the last 3 dims of a 4-D or 5-D input padded by wrapping
    around."""

    _dims = 3

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _sextuple(padding)


class _ConstantPadNd(Module):
    padding: Sequence[int]

    def __init__(self, value: float) -> None:
        super().__init__()
        self.value = value

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """torch.nn.ConstantPad1d: the last dim padded with ``value`` (negative pads crop)."""

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(value)
        self.padding = _pair(padding)


class ConstantPad2d(_ConstantPadNd):
    """torch.nn.ConstantPad2d: the last 2 dims padded with ``value`` (negative pads
    crop)."""

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(value)
        self.padding = _quadruple(padding)


class ConstantPad3d(_ConstantPadNd):
    """torch.nn.ConstantPad3d: the last 3 dims padded with ``value`` (negative pads
    crop)."""

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(value)
        self.padding = _sextuple(padding)


class ZeroPad1d(ConstantPad1d):
    """torch.nn.ZeroPad1d: the last dim padded with zeros (negative pads crop)."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """torch.nn.ZeroPad2d: the last 2 dims padded with zeros (negative pads crop)."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """torch.nn.ZeroPad3d: the last 3 dims padded with zeros (negative pads crop)."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ReflectionPadNd(Module):
    padding: Sequence[int]

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.pad(input, self.padding, "reflect")

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_ReflectionPadNd):
    """torch.nn.ReflectionPad1d: the last dim of a 2-D or 3-D input padded by its mirror
    image about the edge element."""

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _pair(padding)


class ReflectionPad2d(_ReflectionPadNd):
    """torch.nn.ReflectionPad2d: the last 2 dims of a 3-D or 4-D input padded by their
    mirror image about the edge elements."""

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _quadruple(padding)


class ReflectionPad3d(_ReflectionPadNd):
    """torch.nn.ReflectionPad3d: the last 3 dims of a 4-D or 5-D input padded by their
    mirror image about the edge elements."""

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _sextuple(padding)


class _ReplicationPadNd(Module):
    padding: Sequence[int]

    def forward(self, input: E.Tensor) -> E.Tensor:
        return F.pad(input, self.padding, "replicate")

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReplicationPad1d(_ReplicationPadNd):
    """torch.nn.ReplicationPad1d: the last dim of a 2-D or 3-D input padded by repeating
    its edge elements."""

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _pair(padding)


class ReplicationPad2d(_ReplicationPadNd):
    """torch.nn.ReplicationPad2d: the last 2 dims of a 3-D or 4-D input padded by
    repeating their edge elements."""

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _quadruple(padding)


class ReplicationPad3d(_ReplicationPadNd):
    """torch.nn.ReplicationPad3d: the last 3 dims of a 4-D or 5-D input padded by
    repeating their edge elements."""

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _sextuple(padding)
