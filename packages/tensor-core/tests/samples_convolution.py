"""Dispatch-table samples of convolution and pooling (convolution.py, pooling.py): 1-d to
3-d, strided, padded, dilated, grouped, transposed, unbatched and channels-last inputs, and
the backward primitives with each gradient asked for or not.

torch's float32 CPU ``convolution_backward`` (oneDNN) gives gradients its mask did not ask
for in some combinations; its float64 kernel and meta rule honour the mask, as Ember's
does, so the samples with partial masks are float64."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import torch
from dispatch_oracle import make

from ember.core.ops import adaptive_pooling as AP
from ember.core.ops import pooling as P
from ember.core.ops.convolution import CONVOLUTION_BACKWARD

Sample = Callable[[Any, str], Any]


# the pooling modules' functions, as Ember's stand-in for torch.nn.functional's
_FUNCTIONAL = SimpleNamespace(**{name: getattr(module, name) for module in (P, AP)
                                 for name in dir(module) if not name.startswith("_")})


def _nn(m: Any) -> Any:
    """Where a framework keeps its functions that torch has in ``torch.nn.functional``."""
    return torch.nn.functional if m is torch else _FUNCTIONAL


def _input(m: Any, d: str, shape: tuple[int, ...], dtype: str, last: bool) -> Any:
    """A (N, C, H, W) input, laid out channels-last (a permuted (N, H, W, C) one) if asked."""
    if not last:
        return make(m, d, shape, dtype)
    n, c, h, w = shape
    return make(m, d, (n, h, w, c), dtype).permute(0, 3, 1, 2)


def _conv(x: tuple[int, ...], w: tuple[int, ...], bias: bool = True, stride: int = 1,
          padding: Any = 0, dilation: int = 1, groups: int = 1, transposed: bool = False,
          output_padding: int = 0, dtype: str = "float32", last: bool = False) -> Sample:
    def sample(m: Any, d: str) -> Any:
        xt = _input(m, d, x, dtype, last)
        wt = make(m, d, w, dtype, seed=1)
        n = w[1] * groups if transposed else w[0]
        b = make(m, d, (n,), dtype, seed=2) if bias else None
        nd = len(w) - 2
        return m.convolution(xt, wt, b, [stride] * nd, [padding] * nd, [dilation] * nd,
                             transposed, [output_padding] * nd, groups)

    return sample


def _conv_backward(x: tuple[int, ...], w: tuple[int, ...], mask: tuple[bool, bool, bool],
                   stride: int = 1, padding: int = 0, dilation: int = 1, groups: int = 1,
                   transposed: bool = False, output_padding: int = 0,
                   dtype: str = "float32") -> Sample:
    def sample(m: Any, d: str) -> Any:
        nd = len(w) - 2
        xt, wt = make(m, d, x, dtype), make(m, d, w, dtype, seed=1)
        ps = {"stride": (stride,) * nd, "padding": (padding,) * nd,
              "dilation": (dilation,) * nd, "transposed": transposed,
              "output_padding": (output_padding,) * nd, "groups": groups}
        y = m.convolution(xt, wt, None, *(list(ps[k]) for k in ("stride", "padding",
                                                                "dilation")),
                          transposed, list(ps["output_padding"]), groups)
        g = make(m, d, tuple(y.shape), dtype, seed=3)
        if m is torch:
            n = w[1] * groups if transposed else w[0]
            return torch.ops.aten.convolution_backward(
                g, xt, wt, [n], list(ps["stride"]), list(ps["padding"]), list(ps["dilation"]),
                transposed, list(ps["output_padding"]), groups, list(mask))
        return CONVOLUTION_BACKWARD(g, xt, wt, **ps, output_mask=mask)

    return sample


def _pool(fn: str, shape: tuple[int, ...], *args: Any, dtype: str = "float32",
          last: bool = False, **kwargs: Any) -> Sample:
    def sample(m: Any, d: str) -> Any:
        x = _input(m, d, shape, dtype, last)
        if fn in ("max_pool2d", "max_pool3d", "adaptive_max_pool2d") and m is torch:
            return getattr(torch.nn.functional, fn)(x, *args, return_indices=True, **kwargs)
        if fn in ("max_pool2d", "max_pool3d"):
            return getattr(P, fn + "_with_indices")(x, *args, **kwargs)
        return getattr(m if hasattr(torch, fn) else _nn(m), fn)(x, *args, **kwargs)

    return sample


def _max_backward(nd: int, shape: tuple[int, ...], k: int, st: int, p: int = 0,
                  ceil: bool = False) -> Sample:
    def sample(m: Any, d: str) -> Any:
        x = make(m, d, shape)
        kw = {"kernel_size": (k,) * nd, "stride": (st,) * nd, "padding": (p,) * nd,
              "dilation": (1,) * nd, "ceil_mode": ceil}
        fwd = _pool(f"max_pool{nd}d", shape, k, st, p, ceil_mode=ceil)(m, d)
        g = make(m, d, tuple(fwd[0].shape), seed=3)
        if m is torch:
            return getattr(torch.ops.aten, f"max_pool{nd}d_with_indices_backward")(
                g, x, *(list(v) if isinstance(v, tuple) else v for v in kw.values()), fwd[1])
        op = P.MAX_POOL2D_BACKWARD if nd == 2 else P.MAX_POOL3D_BACKWARD
        return op(g, x, fwd[1], **kw)

    return sample


def _avg_backward(nd: int, shape: tuple[int, ...], k: int, st: int, p: int = 0,
                  ceil: bool = False, include: bool = True) -> Sample:
    def sample(m: Any, d: str) -> Any:
        x = make(m, d, shape)
        kw = {"kernel_size": (k,) * nd, "stride": (st,) * nd, "padding": (p,) * nd,
              "ceil_mode": ceil, "count_include_pad": include, "divisor_override": None}
        fwd = _pool(f"avg_pool{nd}d", shape, k, st, p, ceil_mode=ceil,
                    count_include_pad=include)(m, d)
        g = make(m, d, tuple(fwd.shape), seed=3)
        if m is torch:
            return getattr(torch.ops.aten, f"avg_pool{nd}d_backward")(
                g, x, *(list(v) if isinstance(v, tuple) else v for v in kw.values()))
        op = P.AVG_POOL2D_BACKWARD if nd == 2 else P.AVG_POOL3D_BACKWARD
        return op(g, x, **kw)

    return sample


def _adaptive_backward(kind: str, shape: tuple[int, ...], out: tuple[int, int]) -> Sample:
    def sample(m: Any, d: str) -> Any:
        x = make(m, d, shape)
        fwd = _pool(f"adaptive_{kind}_pool2d", shape, out)(m, d)
        y = fwd[0] if kind == "max" else fwd
        g = make(m, d, tuple(y.shape), seed=3)
        if m is torch:
            if kind == "max":
                return torch.ops.aten.adaptive_max_pool2d_backward(g, x, fwd[1])
            return torch.ops.aten._adaptive_avg_pool2d_backward(g, x)
        if kind == "max":
            return AP.ADAPTIVE_MAX_POOL2D_BACKWARD(g, x, fwd[1])
        return AP.ADAPTIVE_AVG_POOL2D_BACKWARD(g, x)

    return sample


def _adaptive3d_backward(m: Any, d: str) -> Any:
    g, x = make(m, d, (2, 3, 2, 3, 2), seed=3), make(m, d, (2, 3, 5, 6, 4))
    if m is torch:
        return torch.ops.aten._adaptive_avg_pool3d_backward(g, x)
    return AP.ADAPTIVE_AVG_POOL3D_BACKWARD(g, x)


SAMPLES: dict[str, list[Sample]] = {
    "convolution": [
        _conv((2, 4, 7, 7), (6, 4, 3, 3), padding=1),
        _conv((1, 4, 9, 8), (6, 2, 3, 3), stride=2, groups=2, bias=False),
        _conv((2, 3, 9), (4, 3, 5), dilation=2, padding=2, dtype="float64"),
        _conv((1, 4, 5, 5, 4), (2, 4, 3, 3, 2), stride=2),
        _conv((2, 4, 5, 5), (4, 1, 3, 3), groups=4, padding=1),
        _conv((2, 4, 5, 5), (4, 3, 3, 3), transposed=True, stride=2, output_padding=1),
        _conv((2, 4, 6, 6), (6, 4, 3, 3), padding=1, last=True),
        _conv((2, 4, 6, 6), (4, 3, 3, 3), transposed=True, last=True),
        lambda m, d: m.conv2d(make(m, d, (4, 6, 6)), make(m, d, (2, 4, 3, 3), seed=1)),
        lambda m, d: m.conv1d(make(m, d, (2, 4, 6)), make(m, d, (3, 4, 2), seed=1),
                              padding="same"),
    ],
    "convolution_backward": [
        _conv_backward((2, 4, 7, 7), (6, 4, 3, 3), (True, True, True), padding=1),
        _conv_backward((1, 4, 9, 8), (6, 2, 3, 3), (True, False, True), stride=2, groups=2,
                       dtype="float64"),
        _conv_backward((2, 3, 9), (4, 3, 5), (False, True, False), dilation=2,
                       dtype="float64"),
        _conv_backward((2, 4, 5, 5), (4, 3, 3, 3), (True, True, True), transposed=True,
                       stride=2, output_padding=1),
    ],
    "max_pool2d_with_indices": [
        _pool("max_pool2d", (2, 3, 7, 7), 2),
        _pool("max_pool2d", (2, 3, 7, 7), 3, 2, 1, ceil_mode=True),
        _pool("max_pool2d", (3, 8, 8), 3, 1, 1, dilation=2, dtype="float64"),
        _pool("max_pool2d", (2, 3, 6, 6), 2, last=True),
        lambda m, d: m.max_pool1d(make(m, d, (2, 3, 9)), 3, 2),
    ],
    "max_pool3d_with_indices": [
        _pool("max_pool3d", (2, 2, 5, 6, 5), 2),
        _pool("max_pool3d", (2, 4, 4, 5), 3, 2, 1, ceil_mode=True),
    ],
    "avg_pool2d": [
        _pool("avg_pool2d", (2, 3, 7, 7), 2),
        _pool("avg_pool2d", (2, 3, 7, 7), 3, 2, 1, ceil_mode=True, count_include_pad=False),
        _pool("avg_pool2d", (3, 8, 8), 3, 2, divisor_override=4, dtype="float64"),
        _pool("avg_pool2d", (2, 3, 6, 6), 2, last=True),
        lambda m, d: m.avg_pool1d(make(m, d, (2, 3, 9)), 3, 2, 1),
    ],
    "avg_pool3d": [
        _pool("avg_pool3d", (2, 2, 5, 6, 5), 2),
        _pool("avg_pool3d", (2, 4, 4, 5), 3, 2, 1, ceil_mode=True),
    ],
    "_adaptive_avg_pool2d": [
        _pool("adaptive_avg_pool2d", (2, 3, 7, 5), (3, 2)),
        _pool("adaptive_avg_pool2d", (3, 8, 8), 4, dtype="float64"),
        lambda m, d: m.adaptive_avg_pool1d(make(m, d, (2, 3, 9)), 4),
    ],
    "_adaptive_avg_pool3d": [
        _pool("adaptive_avg_pool3d", (2, 3, 5, 6, 4), (3, 2, 4)),
        _pool("adaptive_avg_pool3d", (3, 4, 5, 6), 2, dtype="float64"),
        # a channels-last volume: torch's 3-d kernel gives row-major results, but for 1x1x1
        lambda m, d: _nn(m).adaptive_avg_pool3d(
            make(m, d, (2, 4, 5, 3, 6)).permute(0, 4, 1, 2, 3), (2, 3, 2)),
        lambda m, d: _nn(m).adaptive_avg_pool3d(
            make(m, d, (2, 4, 5, 3, 6)).permute(0, 4, 1, 2, 3), 1),
    ],
    "adaptive_max_pool2d": [
        _pool("adaptive_max_pool2d", (2, 3, 7, 5), (3, 2)),
        _pool("adaptive_max_pool2d", (3, 8, 8), 4, dtype="float64"),
        _pool("adaptive_max_pool2d", (2, 3, 6, 6), 4, last=True),
        lambda m, d: m.adaptive_max_pool1d(make(m, d, (2, 3, 9)), 4),
    ],
    "max_pool2d_with_indices_backward": [
        _max_backward(2, (2, 3, 7, 7), 3, 2, 1),
        _max_backward(2, (3, 8, 8), 2, 2, ceil=True),
    ],
    "max_pool3d_with_indices_backward": [_max_backward(3, (1, 2, 4, 5, 4), 2, 2)],
    "avg_pool2d_backward": [
        _avg_backward(2, (2, 3, 7, 7), 3, 2, 1, ceil=True, include=False),
        _avg_backward(2, (3, 8, 8), 2, 2),
    ],
    "avg_pool3d_backward": [_avg_backward(3, (1, 2, 4, 5, 4), 2, 1)],
    "_adaptive_avg_pool2d_backward": [_adaptive_backward("avg", (2, 3, 7, 5), (3, 2))],
    "adaptive_max_pool2d_backward": [_adaptive_backward("max", (2, 3, 7, 5), (3, 2))],
    "_adaptive_avg_pool3d_backward": [_adaptive3d_backward],
}
