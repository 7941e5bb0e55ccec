"""Dispatch-table samples of interpolation (interpolation.py): every mode at each rank, up
and down, sizes and scale factors, align_corners both ways, antialiased, channels-last,
empty-batch, half-precision and uint8 inputs, and the backward primitives (torch's
``torch.ops.aten.upsample_*_backward``; Ember's registered primitives stand beside them).
torch has the forward forms as ``torch.nn.functional.interpolate``. (torch's meta functions
of the nearest modes raise a TypeError on an empty batch, so empty batches are sampled with
the interpolating modes.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from dispatch_oracle import make

from ember.core.ops import interpolation as I

Sample = Callable[[Any, str], Any]


def nn(m: Any) -> Any:
    """torch.nn.functional, or the module Ember's nn package takes interpolate from."""
    return torch.nn.functional if m is torch else I


def _input(m: Any, d: str, shape: tuple[int, ...], dtype: str, last: bool) -> Any:
    """An (N, C, *spatial) input, laid out channels-last if asked (a permuted copy)."""
    if not last:
        return make(m, d, shape, dtype)
    spatial = tuple(range(2, len(shape)))
    x = make(m, d, (shape[0],) + shape[2:] + (shape[1],), dtype)
    return x.permute(0, len(shape) - 1, *(i - 1 for i in spatial))


def _interp(mode: str, shape: tuple[int, ...], dtype: str = "float32", last: bool = False,
            **kwargs: Any) -> Sample:
    return lambda m, d: nn(m).interpolate(_input(m, d, shape, dtype, last), mode=mode,
                                          **kwargs)


def _backward(name: str, out: tuple[int, ...], size: tuple[int, ...], scale: float | None = None,
              align_corners: bool | None = None, dtype: str = "float32",
              last: bool = False) -> Sample:
    nd = len(out)

    def sample(m: Any, d: str) -> Any:
        g = _input(m, d, size[:2] + out, dtype, last)
        scales = [scale] * nd
        aligned = [] if align_corners is None else [align_corners]
        if m is torch:
            return getattr(torch.ops.aten, name + "_backward")(g, list(out), list(size),
                                                               *aligned, *scales)
        params = dict(zip(I._SCALES[nd], scales))
        if align_corners is not None:
            params["align_corners"] = align_corners
        return I.BACKWARD_OPS[name](g, output_size=out, input_size=size, **params)

    return sample


B1, B2, B3 = (2, 3, 7), (2, 3, 5, 6), (2, 3, 4, 5, 3)

SAMPLES: dict[str, list[Sample]] = {
    "upsample_nearest1d": [
        _interp("nearest", B1, size=11),
        _interp("nearest", B1, scale_factor=0.6, dtype="float64"),
        _interp("nearest", B1, size=14, dtype="uint8"),
    ],
    "upsample_nearest2d": [
        _interp("nearest", B2, size=(9, 4)),
        _interp("nearest", B2, scale_factor=1.5, dtype="float64"),
        _interp("nearest", (1, 5, 6, 7), scale_factor=2.0, last=True),
        _interp("nearest", (2, 2, 70, 3), size=(140, 7), dtype="bfloat16"),
        _interp("nearest", B2, scale_factor=0.5, dtype="uint8"),
    ],
    "upsample_nearest3d": [
        _interp("nearest", B3, size=(5, 3, 7)),
        _interp("nearest", (1, 4, 3, 4, 5), scale_factor=1.5, last=True, dtype="float64"),
    ],
    "_upsample_nearest_exact1d": [
        _interp("nearest-exact", B1, size=10),
        _interp("nearest-exact", B1, scale_factor=0.7, dtype="float16"),
    ],
    "_upsample_nearest_exact2d": [
        _interp("nearest-exact", B2, size=(8, 13)),
        _interp("nearest-exact", (1, 5, 6, 7), scale_factor=1.7, last=True),
    ],
    "_upsample_nearest_exact3d": [
        _interp("nearest-exact", B3, scale_factor=(2.0, 0.5, 1.5), dtype="float64"),
    ],
    "upsample_linear1d": [
        _interp("linear", B1, size=12),
        _interp("linear", (0, 3, 7), scale_factor=2.0),
        _interp("linear", B1, size=4, align_corners=True, dtype="float64"),
        _interp("linear", B1, scale_factor=1.3, dtype="bfloat16"),
    ],
    "upsample_bilinear2d": [
        _interp("bilinear", B2, size=(9, 4)),
        _interp("bilinear", B2, scale_factor=2.0, align_corners=True, dtype="float64"),
        _interp("bilinear", (1, 5, 6, 7), scale_factor=(0.6, 1.4), last=True),
        _interp("bilinear", (2, 2, 40, 50), size=(90, 70)),
        _interp("bilinear", B2, size=(7, 7), dtype="float16"),
        _interp("bilinear", (0, 3, 5, 6), scale_factor=2.0),
        _interp("bilinear", B2, size=(9, 4), dtype="uint8"),
        lambda m, d: nn(m).interpolate(make(m, d, (2, 3, 6, 5)).transpose(2, 3), size=(4, 9),
                                       mode="bilinear"),
    ],
    "upsample_bicubic2d": [
        _interp("bicubic", B2, size=(9, 4)),
        _interp("bicubic", (1, 5, 6, 7), scale_factor=1.5, dtype="uint8", last=True),
        _interp("bicubic", B2, scale_factor=1.5, align_corners=True, dtype="float64"),
        _interp("bicubic", (1, 5, 6, 7), size=(3, 4), last=True),
        _interp("bicubic", B2, scale_factor=2.0, recompute_scale_factor=True,
                dtype="bfloat16"),
    ],
    "upsample_trilinear3d": [
        _interp("trilinear", B3, size=(5, 3, 7)),
        _interp("trilinear", B3, scale_factor=1.5, align_corners=True, dtype="float64"),
        _interp("trilinear", (1, 4, 3, 4, 5), size=(2, 6, 3), last=True),
    ],
    "_upsample_bilinear2d_aa": [
        _interp("bilinear", (2, 3, 9, 8), scale_factor=0.4, antialias=True),
        _interp("bilinear", (1, 5, 6, 7), size=(9, 3), antialias=True, align_corners=True,
                last=True, dtype="float64"),
        _interp("bilinear", (2, 3, 9, 8), size=(4, 5), antialias=True, dtype="uint8"),
    ],
    "_upsample_bicubic2d_aa": [
        _interp("bicubic", (2, 3, 9, 8), scale_factor=0.4, antialias=True),
        _interp("bicubic", (1, 5, 6, 7), size=(9, 3), antialias=True, last=True,
                dtype="uint8"),
    ],
    "_upsample_lanczos2d_aa": [
        _interp("lanczos", (2, 3, 9, 8), scale_factor=0.4, antialias=True, dtype="float64"),
        _interp("lanczos", (1, 5, 6, 7), size=(9, 3), antialias=True, last=True),
    ],
    "upsample_nearest1d_backward": [
        _backward("upsample_nearest1d", (11,), B1),
        _backward("upsample_nearest1d", (4,), B1, 0.6, dtype="float64"),
    ],
    "upsample_nearest2d_backward": [
        _backward("upsample_nearest2d", (9, 4), B2),
        _backward("upsample_nearest2d", (10, 12), B2, 2.0, last=True),
        _backward("upsample_nearest2d", (7, 9), B2, dtype="bfloat16"),
    ],
    "upsample_nearest3d_backward": [
        _backward("upsample_nearest3d", (5, 3, 7), B3),
        _backward("upsample_nearest3d", (6, 7, 4), B3, 1.5, last=True, dtype="float64"),
    ],
    "_upsample_nearest_exact1d_backward": [_backward("_upsample_nearest_exact1d", (10,), B1)],
    "_upsample_nearest_exact2d_backward": [
        _backward("_upsample_nearest_exact2d", (8, 13), B2),
        _backward("_upsample_nearest_exact2d", (3, 4), B2, 0.7, last=True, dtype="float64"),
    ],
    "_upsample_nearest_exact3d_backward": [
        _backward("_upsample_nearest_exact3d", (5, 3, 7), B3, dtype="float16"),
    ],
    "upsample_linear1d_backward": [
        _backward("upsample_linear1d", (12,), B1),
        _backward("upsample_linear1d", (4,), B1, align_corners=True, dtype="float64"),
    ],
    "upsample_bilinear2d_backward": [
        _backward("upsample_bilinear2d", (9, 4), B2, align_corners=False),
        _backward("upsample_bilinear2d", (10, 12), B2, 2.0, True, dtype="float64"),
        _backward("upsample_bilinear2d", (3, 8), B2, align_corners=False, last=True),
        _backward("upsample_bilinear2d", (7, 7), B2, align_corners=False, dtype="float16"),
    ],
    "upsample_bicubic2d_backward": [
        _backward("upsample_bicubic2d", (9, 4), B2, align_corners=False),
        _backward("upsample_bicubic2d", (7, 9), B2, 1.5, True, last=True, dtype="float64"),
    ],
    "_upsample_bilinear2d_aa_backward": [
        _backward("_upsample_bilinear2d_aa", (4, 3), B2, align_corners=False),
        _backward("_upsample_bilinear2d_aa", (9, 12), B2, 2.0, True, last=True),
    ],
    "_upsample_bicubic2d_aa_backward": [
        _backward("_upsample_bicubic2d_aa", (4, 3), B2, 0.7, False, dtype="float64"),
        _backward("_upsample_bicubic2d_aa", (9, 12), B2, align_corners=True, last=True),
    ],
    "_upsample_lanczos2d_aa_backward": [
        _backward("_upsample_lanczos2d_aa", (3, 2), B2, align_corners=False),
        _backward("_upsample_lanczos2d_aa", (9, 12), B2, 2.0, False, last=True),
    ],
    "upsample_trilinear3d_backward": [
        _backward("upsample_trilinear3d", (5, 3, 7), B3, align_corners=False),
        _backward("upsample_trilinear3d", (6, 7, 4), B3, 1.5, True, last=True),
    ],
}
