"""Dispatch-table samples of layer and RMS normalization (normalization.py): one and two
normalized dims, with and without weight and bias, transposed, half-type, empty inputs,
and the backward primitives with each gradient asked for or not.

torch has no CPU kernel for ``_fused_rms_norm_backward`` (its CPU rms_norm is a
composite): its samples give, for torch, empty tensors laid out as its meta rule says.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from dispatch_oracle import make

from ember.core.ops.normalization import (
    FUSED_RMS_NORM,
    FUSED_RMS_NORM_BACKWARD,
    NATIVE_LAYER_NORM_BACKWARD,
)

Sample = Callable[[Any, str], Any]
EPS = 1e-5


def _params(m: Any, d: str, ns: tuple[int, ...], weight: bool, bias: bool,
            dtype: str = "float32") -> tuple[Any, Any]:
    return (make(m, d, ns, dtype, seed=1) if weight else None,
            make(m, d, ns, dtype, seed=2) if bias else None)


def _layer_norm(shape: tuple[int, ...], ns: tuple[int, ...], weight: bool = True,
                bias: bool = True, dtype: str = "float32", param_dtype: str | None = None,
                transposed: bool = False) -> Sample:
    def sample(m: Any, d: str) -> Any:
        w, b = _params(m, d, ns, weight, bias, param_dtype or dtype)
        x = make(m, d, shape, dtype, transposed=transposed)
        return m.native_layer_norm(x, ns, w, b, EPS)

    return sample


def _layer_norm_backward(shape: tuple[int, ...], ns: tuple[int, ...],
                         mask: tuple[bool, bool, bool], dtype: str = "float32") -> Sample:
    def sample(m: Any, d: str) -> Any:
        w, b = _params(m, d, ns, True, True, dtype)
        x, g = make(m, d, shape, dtype), make(m, d, shape, dtype, seed=3)
        _, mean, rstd = m.native_layer_norm(x, ns, w, b, EPS)
        if m is torch:
            return torch.ops.aten.native_layer_norm_backward(g, x, ns, mean, rstd, w, b,
                                                             list(mask))
        return NATIVE_LAYER_NORM_BACKWARD(g, x, mean, rstd, w, normalized_shape=ns,
                                          output_mask=mask)

    return sample


def _rms_norm(shape: tuple[int, ...], ns: tuple[int, ...], weight: bool = True,
              dtype: str = "float32", transposed: bool = False) -> Sample:
    def sample(m: Any, d: str) -> Any:
        w, _ = _params(m, d, ns, weight, False, dtype)
        return m.rms_norm(make(m, d, shape, dtype, transposed=transposed), ns, w)

    return sample


def _rms_norm_backward(shape: tuple[int, ...], ns: tuple[int, ...],
                       mask: tuple[bool, bool]) -> Sample:
    def sample(m: Any, d: str) -> Any:
        w, _ = _params(m, d, ns, True, False)
        x, g = make(m, d, shape), make(m, d, shape, seed=3)
        if m is torch:  # torch's meta rule, where its CPU has no kernel
            rstd = torch._fused_rms_norm(x, list(ns), w, EPS)[1]
            out = torch.ops.aten._fused_rms_norm_backward(
                *(t.to("meta") for t in (g, x)), list(ns), rstd.to("meta"), w.to("meta"),
                list(mask))
            return tuple(None if t is None else torch.empty_strided(
                t.shape, t.stride(), dtype=t.dtype, device=d) for t in out)
        rstd = FUSED_RMS_NORM(x, w, normalized_shape=ns, eps=EPS)[1]
        return FUSED_RMS_NORM_BACKWARD(g, x, rstd, w, normalized_shape=ns, output_mask=mask)

    return sample


SAMPLES: dict[str, list[Sample]] = {
    "native_layer_norm": [
        _layer_norm((3, 4), (4,)),
        _layer_norm((2, 3, 4), (3, 4), weight=False),
        _layer_norm((2, 3, 4), (4,), bias=False, transposed=True),
        _layer_norm((3, 4), (4,), weight=False, bias=False, dtype="float16"),
        _layer_norm((3, 4), (4,), dtype="bfloat16", param_dtype="float32"),
        _layer_norm((0, 4), (4,), dtype="float64"),
        _layer_norm((3, 0), (0,), bias=False),
        lambda m, d: m.layer_norm(make(m, d, (4,)), (4,)),
    ],
    "native_layer_norm_backward": [
        _layer_norm_backward((3, 4), (4,), (True, True, True)),
        _layer_norm_backward((2, 3, 4), (3, 4), (True, False, False), "float64"),
        _layer_norm_backward((2, 3, 4), (4,), (False, True, True)),
        _layer_norm_backward((0, 4), (4,), (True, True, True)),
    ],
    "_fused_rms_norm": [
        _rms_norm((3, 4), (4,)),
        _rms_norm((2, 3, 4), (3, 4), weight=False, transposed=True),
        _rms_norm((3, 4), (4,), dtype="float16"),
        _rms_norm((0, 4), (4,), dtype="float64"),
    ],
    "_fused_rms_norm_backward": [
        _rms_norm_backward((3, 4), (4,), (True, True)),
        _rms_norm_backward((2, 3, 4), (3, 4), (True, False)),
        _rms_norm_backward((2, 3, 4), (4,), (False, True)),
    ],
}
