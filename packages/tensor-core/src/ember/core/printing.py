"""``repr`` of tensors, character for character as torch prints them.

A port of torch's ``_tensor_str`` onto host numpy arrays: one formatter per tensor picks
fixed, integer-valued (``1.``) or scientific notation from the finite nonzero values, every
element is padded to the widest one, rows wrap at ``linewidth``, and tensors above
``threshold`` elements show only ``edgeitems`` at each end of every dimension.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import dtypes as _dt

__all__ = ["set_printoptions", "get_printoptions", "printoptions"]


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """torch.set_printoptions: digits after the point (``precision``, 4), elements above
    which to summarize (``threshold``, 1000), items kept at each end when summarizing
    (``edgeitems``, 3), characters per line (``linewidth``, 80), a ``profile`` ('default',
    'short' or 'full') to start from, and ``sci_mode`` (None lets the values decide)."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions(): unknown profile {profile!r}; expected one "
                             f"of {sorted(_PROFILES)}")
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as keyword arguments for ``set_printoptions``."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Set print options for the duration of a ``with`` block."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """Chooses one notation and width for all the elements of a tensor."""

    def __init__(self, values: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            if values.size:
                self.max_width = max(len(str(v)) for v in (values.min().item(),
                                                           values.max().item()))
            return
        finite = values[np.isfinite(values) & (values != 0)]
        if finite.size == 0:
            return
        magnitude = np.abs(finite)
        low, high = float(magnitude.min()), float(magnitude.max())
        self.int_mode = bool((finite == np.ceil(finite)).all())
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        p = PRINT_OPTS.precision
        items = finite.tolist()
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{p}e}") for v in items)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in items)
        else:
            self.max_width = max(len(f"{v:.{p}f}") for v in items)

    def format(self, value: Any) -> str:
        if self.floating:
            p = PRINT_OPTS.precision
            if self.sci_mode:
                text = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{p}f}"
        else:
            text = f"{value}"
        return (self.max_width - len(text)) * " " + text


def _complex_str(value: complex, real: _Formatter, imag: _Formatter) -> str:
    imag_str = (imag.format(value.imag) + "j").lstrip()
    if imag_str[0] in "+-":  # a negative part, or -0.0
        return real.format(value.real) + imag_str
    return real.format(value.real) + "+" + imag_str


def _python_values(arr: np.ndarray) -> list[Any]:
    kind = arr.dtype.kind
    if kind in "fV" or arr.dtype == _dt.bfloat16.np:
        return arr.astype(np.float64).tolist()  # type: ignore[no-any-return]
    return arr.tolist()  # type: ignore[no-any-return]


def _vector_str(arr: np.ndarray, indent: int, summarize: bool, real: _Formatter,
                imag: _Formatter | None) -> str:
    element_length = real.max_width + 2
    if imag is not None:
        element_length += imag.max_width + 1
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))

    def fmt(values: np.ndarray) -> list[str]:
        if imag is not None:
            return [_complex_str(v, real, imag) for v in values.tolist()]
        return [real.format(v) for v in _python_values(values)]

    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * edge:
        data = fmt(arr[:edge]) + [" ..."] + fmt(arr[-edge:])
    else:
        data = fmt(arr)
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(arr: np.ndarray, indent: int, summarize: bool, real: _Formatter,
                imag: _Formatter | None) -> str:
    ndim = arr.ndim
    if ndim == 0:
        value = arr.item() if imag is not None else _python_values(arr.reshape(1))[0]
        return _complex_str(value, real, imag) if imag is not None else real.format(value)
    if ndim == 1:
        return _vector_str(arr, indent, summarize, real, imag)
    edge = PRINT_OPTS.edgeitems
    n = arr.shape[0]
    if summarize and n > 2 * edge:
        rows = [_nested_str(arr[i], indent + 1, summarize, real, imag) for i in range(edge)]
        rows.append("...")
        rows += [_nested_str(arr[i], indent + 1, summarize, real, imag)
                 for i in range(n - edge, n)]
    else:
        rows = [_nested_str(arr[i], indent + 1, summarize, real, imag) for i in range(n)]
    return "[" + ("," + "\n" * (ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _summarized(arr: np.ndarray) -> np.ndarray:
    """The elements a summarized print shows: ``edgeitems`` from each end of every dim."""
    edge = PRINT_OPTS.edgeitems
    if arr.ndim == 0:
        return arr
    if arr.ndim == 1:
        # torch keeps arr[:0] and arr[-0:] here: with no edge items the whole vector
        return np.concatenate([arr[:edge], arr[-edge:]]) if arr.shape[0] > 2 * edge else arr
    if not edge:
        return arr[(slice(0, 0),) * arr.ndim]
    for axis, n in enumerate(arr.shape):
        if n > 2 * edge:
            keep = np.r_[0:edge, n - edge:n]
            arr = np.take(arr, keep, axis=axis)
    return arr


def _body(arr: np.ndarray, indent: int) -> str:
    summarize = arr.size > PRINT_OPTS.threshold
    seen = _summarized(arr) if summarize else arr
    if arr.dtype.kind == "c":
        real = _Formatter(seen.real.astype(np.float64), True)
        imag = _Formatter(seen.imag.astype(np.float64), True)
        return _nested_str(arr, indent, summarize, real, imag)
    floating = arr.dtype.kind == "f" or arr.dtype == _dt.bfloat16.np
    if floating:
        seen = seen.astype(np.float64)
    return _nested_str(arr, indent, summarize, _Formatter(seen, floating), None)


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t: Any) -> str:
    """``repr(t)`` as torch writes it, e.g. ``tensor([1., 2.], dtype=torch.float64)``."""
    from .tensor import Tensor

    cls = type(t)
    prefix = "tensor(" if cls is Tensor or cls.__name__ == "Parameter" else cls.__name__ + "("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default = _dt.get_default_dtype()
    if t.device.type == "meta":  # no data to show
        suffixes.append(f"size={tuple(t._data.shape)}")
        if t.dtype is not default:
            suffixes.append(f"dtype={t.dtype!r}")
        return _add_suffixes(prefix + "...", suffixes + _grad_suffix(t), indent)
    arr = t._host()
    if arr.size == 0:
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
        if t.dtype is not default:
            suffixes.append(f"dtype={t.dtype!r}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(arr.shape)}")
        if t.dtype not in (default, default.to_complex(), _dt.int64, _dt.bool):
            suffixes.append(f"dtype={t.dtype!r}")
        body = _body(arr, indent)
    return _add_suffixes(prefix + body, suffixes + _grad_suffix(t), indent)


def _grad_suffix(t: Any) -> list[str]:
    grad_fn = t.grad_fn
    if grad_fn is not None:
        return [f"grad_fn=<{grad_fn.name().rsplit('::', 1)[-1]}>"]
    return ["requires_grad=True"] if t.requires_grad else []


PROTOCOL = {"__repr__": tensor_repr, "__str__": tensor_repr}
