"""What the dispatch table tests check of every primitive, and the inputs they use.

A *sample* is a small program ``sample(m, device)`` written against ``m`` (``ember.core``
or ``torch``) that builds its inputs with ``make`` on ``device`` and calls the public op
under test. Each ``samples_*.py`` module maps op names to samples; the table test runs
every registered op's samples:

- *replay*: run on the CPU under ``Recorder``, a TorchDispatchMode that snapshots each
  primitive call's operands and outputs (for an op that writes its operands and returns
  nothing, ``op.writes``: those operands after the call); each call is then run again
  through the registry (``REGISTRY[name].forward``) on copies of its operands and must
  give bit-identical outputs;
- *meta*: run on ``device="meta"`` in both frameworks; Ember's outputs must have torch's
  shapes, dtypes and strides (where torch raises on meta, Ember raises the same type).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
import torch

import ember.core as ember
from ember.core.dispatch import REGISTRY
from ember.core.dispatch_modes import TorchDispatchMode

Sample = Callable[[Any, str], Any]

# how ``make`` lays its tensors out beyond what a sample asks (``inputs_laid_out``)
LAYOUTS = ("as written", "permuted", "stepped", "expanded")
_layout = ["as written"]


@contextlib.contextmanager
def inputs_laid_out(layout: str) -> Iterator[None]:
    """Inside it, every tensor of two or more dims that ``make`` gives is laid out as
    ``layout`` (one of ``LAYOUTS``) with its shape unchanged: 'permuted' (a view of a
    row-major tensor with the dims in reverse), 'stepped' (every other element of its
    last dim: a slice with a step), 'expanded' (its first row repeated by ``expand``)."""
    _layout.append(layout)
    try:
        yield
    finally:
        _layout.pop()


def _relaid(m: Any, t: Any, shape: tuple[int, ...]) -> Any:
    layout = _layout[-1]
    if layout == "as written" or len(shape) < 2:
        return t
    if layout == "permuted":
        dims = tuple(reversed(range(len(shape))))
        return t.permute(*dims).contiguous().permute(*dims)
    if layout == "stepped":
        wide = m.stack([t, t], dim=-1).reshape(*shape[:-1], 2 * shape[-1])
        return wide[..., ::2]
    return t[:1].expand(*shape) if shape[0] else t


def make(m: Any, device: str, shape: tuple[int, ...], dtype: str = "float32", *, seed: int = 0,
         low: float = -3.0, high: float = 3.0, transposed: bool = False) -> Any:
    """A random tensor of ``m`` on ``device``; ``transposed``: laid out with reversed dims
    (a permuted view of a row-major tensor, then moved: its strides stay so on meta); laid
    out further as ``inputs_laid_out`` says."""
    if _layout[-1] != "as written" and not transposed:
        with inputs_laid_out("as written"):
            t = make(m, "cpu", shape, dtype, seed=seed, low=low, high=high)
        return _relaid(m, t, tuple(shape)).to(device)
    rng = np.random.default_rng(seed)
    full = tuple(reversed(shape)) if transposed else shape
    if dtype == "bool":
        arr = rng.random(full) > 0.5
    elif dtype.startswith(("int", "uint")):
        lo = 0 if dtype == "uint8" else int(low)
        arr = rng.integers(lo, max(int(high), lo + 1) + 1, size=full).astype(dtype)
    elif dtype.startswith("complex"):
        arr = (rng.uniform(low, high, full) + 1j * rng.uniform(low, high, full)).astype(dtype)
    else:
        arr = rng.uniform(low, high, full).astype(np.float32 if dtype == "bfloat16" else dtype)
    t = m.from_numpy(np.array(arr))
    if dtype == "bfloat16":
        t = t.to(m.bfloat16)
    if transposed:
        t = t.permute(*reversed(range(len(shape))))
    return t.to(device)


# ----------------------------------------------------------------------------- replay

@dataclass
class Call:
    op: Any
    inputs: list[Any]
    params: dict[str, Any]
    outputs: Any


def _snapshot(x: Any) -> Any:
    if isinstance(x, ember.Tensor):
        data = x._data
        return data.copy(order="K") if isinstance(data, np.ndarray) else data.get()
    if isinstance(x, (tuple, list)):
        return [_snapshot(v) for v in x]
    return x


class Recorder(TorchDispatchMode):
    """Records every primitive call: operands before, outputs after."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[Call] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        inputs = [_snapshot(a) for a in args]
        out = func(*args, **kwargs)
        written = out if out is not None or not func.writes else [args[i] for i in func.writes]
        self.calls.append(Call(func, inputs, dict(kwargs), _snapshot(written)))
        return out


def _bits(a: Any) -> tuple[Any, ...]:
    arr = np.asarray(a)  # (ascontiguousarray would make a 0-d array 1-d)
    return arr.dtype, arr.shape, arr.tobytes(order="C")


def same(actual: Any, expected: Any) -> bool:
    """Bit-identical arrays (NaN payloads included), item by item for sequences."""
    if isinstance(expected, list):
        return (isinstance(actual, (tuple, list)) and len(actual) == len(expected)
                and all(same(a, e) for a, e in zip(actual, expected)))
    if isinstance(expected, np.ndarray):
        return hasattr(actual, "dtype") and _bits(actual) == _bits(expected)
    return bool(actual == expected)


def replay(call: Call) -> Any:
    """Run ``call`` again through the registry (the CPU kernel the dispatcher chose, a
    native one where registered), on copies of its operands."""
    operands = [np.array(x, copy=True, order="K") if isinstance(x, np.ndarray)
                else [np.array(v, copy=True) for v in x] if isinstance(x, list) else x
                for x in call.inputs]
    op = REGISTRY[call.op.name]
    out = op.table["cpu"](*operands, **call.params)
    return out if out is not None or not op.writes else [operands[i] for i in op.writes]


# ----------------------------------------------------------------------------- meta

def _flat(x: Any) -> list[Any]:
    if isinstance(x, (tuple, list)):
        return [v for item in x for v in _flat(item)]
    return [x]


def meta_geometry(x: Any) -> list[Any]:
    """Shape, dtype and strides of each tensor of a result (other values as they are)."""
    out = []
    for v in _flat(x):
        if isinstance(v, (ember.Tensor, torch.Tensor)):
            out.append((tuple(v.shape), str(v.dtype).split(".")[-1], tuple(v.stride())))
        else:
            out.append(v)
    return out


def ml_bfloat16() -> Any:
    return ml_dtypes.bfloat16
