"""torch-like ``repr`` of tensors: ``tensor([1., 2.], dtype=torch.float64, requires_grad=True)``."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes as _dt


def tensor_repr(t: Any) -> str:
    arr = np.asarray(t._host())
    if t.dtype is _dt.bfloat16 or t.dtype is _dt.float16:
        arr = arr.astype(np.float32)
    body = np.array2string(arr, separator=", ", prefix="tensor(", precision=4)
    extras = []
    implied = (_dt.get_default_dtype(), _dt.int64, _dt.bool)
    if t.dtype not in implied or arr.size == 0:
        extras.append(f"dtype={t.dtype!r}")
    if t.device.type != "cpu":
        extras.append(f"device='{t.device}'")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"
