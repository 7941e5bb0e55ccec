"""Dispatch-table samples of the reductions, scans, softmax, sorting and searching primitives
(reduction.py, minmax.py, norms.py, scan.py, softmax.py, sorting.py, searching.py): full and
per-dim reductions with and without keepdim, transposed, 0-d and empty inputs, and the
params that change a result's dtype or shape (``dtype``, ``k``, ``out_int32``...)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from dispatch_oracle import make

from ember.core.ops import softmax as softmax_ops

Sample = Callable[[Any, str], Any]
B = (2, 3, 4)


def _reduction(call: Callable[..., Any], dtype: str = "float32", tuple_dims: bool = True,
               empty: bool = True) -> list[Sample]:
    """Samples of ``call(m, x, *args)``, a reduction taking ``dim`` and ``keepdim``: every
    element, one dim of a transposed input, dims kept, a 0-d input and an empty one."""
    samples = [
        lambda m, d: call(m, make(m, d, (3, 4), dtype)),
        lambda m, d: call(m, make(m, d, B, dtype, transposed=True), 1),
        lambda m, d: call(m, make(m, d, B, dtype, transposed=True),
                          (0, 2) if tuple_dims else 2, True),
        lambda m, d: call(m, make(m, d, (), dtype)),
    ]
    if empty:
        samples.append(lambda m, d: call(m, make(m, d, (0, 3), dtype), 1))
    return samples


def _scan(call: Callable[..., Any], dtype: str = "float32") -> list[Sample]:
    """Samples of ``call(m, x, dim)`` along one dim: transposed, 0-d and empty inputs."""
    return [
        lambda m, d: call(m, make(m, d, B, dtype, transposed=True), 1),
        lambda m, d: call(m, make(m, d, (3, 4), dtype, transposed=True), 0),
        lambda m, d: call(m, make(m, d, (), dtype), 0),
        lambda m, d: call(m, make(m, d, (0, 3), dtype), 1),
    ]


def _selection(call: Callable[..., Any]) -> list[Sample]:
    """Samples of ``call(m, x, dim, keepdim)`` selecting one entry along ``dim``."""
    return [
        lambda m, d: call(m, make(m, d, (3, 4)), 1, False),
        lambda m, d: call(m, make(m, d, B, transposed=True), 1, True),
        lambda m, d: call(m, make(m, d, B, transposed=True), 0, False),
        lambda m, d: call(m, make(m, d, ()), 0, False),
        lambda m, d: call(m, make(m, d, (0, 3)), 1, False),
    ]


def _softmax_backward(name: str) -> list[Sample]:
    """Samples of the fused backward of ``name`` along one dim: of a transposed output,
    of an expanded gradient, a half type's, of 0-d and empty outputs."""
    op = getattr(softmax_ops, name.upper() + "_BACKWARD")

    def call(shape: tuple[int, ...], dim: int, dtype: str = "float32",
             transposed: bool = False, expanded: bool = False) -> Sample:
        def sample(m: Any, d: str) -> Any:
            y = getattr(make(m, d, shape, dtype, transposed=transposed), name)(dim)
            g = make(m, d, shape, dtype, seed=1)
            if expanded:
                g = g[:1].expand(*shape)
            if m is torch:
                aten = getattr(torch.ops.aten, f"_{name}_backward_data")
                return aten(g, y, dim, y.dtype)
            return op(g, y, dim=dim)

        return sample

    return [call((3, 4), 1), call(B, 0, transposed=True), call((3, 4), 1, expanded=True),
            call((3, 4), 0, "float16"), call((), 0, "float64"), call((0, 3), 1)]


def _sorted(m: Any, d: str, shape: tuple[int, ...], dtype: str = "float32") -> Any:
    return m.sort(make(m, d, shape, dtype, seed=3)).values


SAMPLES: dict[str, list[Sample]] = {
    # ------------------------------------------------------------------ sums and means
    "sum": _reduction(lambda m, x, *a: m.sum(x, *a)) + [
        lambda m, d: make(m, d, B, "int32").sum(1),
        lambda m, d: make(m, d, (3, 4), "bool").sum(),
        lambda m, d: m.sum(make(m, d, B, transposed=True), 2, dtype=m.float64),
        lambda m, d: make(m, d, (3, 4), "float16").sum(0, keepdim=True),
        lambda m, d: make(m, d, (3, 4)).sum(dim=[]),
    ],
    "nansum": _reduction(lambda m, x, *a: m.nansum(x, *a)) + [
        lambda m, d: m.nansum(make(m, d, (3, 4), "int64"), 0),
    ],
    "mean": _reduction(lambda m, x, *a: m.mean(x, *a)) + [
        lambda m, d: make(m, d, (3, 4)).mean(-1),
        lambda m, d: m.mean(make(m, d, B, transposed=True), 0, dtype=m.float64),
        lambda m, d: make(m, d, (3, 4), "complex64").mean(1),
        lambda m, d: make(m, d, (3, 4), "bfloat16").mean(),
    ],
    "nanmean": _reduction(lambda m, x, *a: m.nanmean(x, *a)),
    "prod": _reduction(lambda m, x, *a: m.prod(x, *a), tuple_dims=False) + [
        lambda m, d: make(m, d, (3, 4), "int32").prod(),
        lambda m, d: m.prod(make(m, d, (3, 4)), 1, dtype=m.float64),
    ],
    # ------------------------------------------------------------------ var, std
    "var": _reduction(lambda m, x, *a: m.var(x, *a)) + [
        lambda m, d: m.var(make(m, d, B, transposed=True), (0, 1), correction=0),
        lambda m, d: make(m, d, (3, 4), "complex64").var(1),
    ],
    "std": _reduction(lambda m, x, *a: m.std(x, *a)) + [
        lambda m, d: make(m, d, (3, 4), "complex64").std(0, keepdim=True),
        lambda m, d: make(m, d, (3, 4), "float16").std(1, correction=2),
    ],
    "var_mean": [
        lambda m, d: m.var_mean(make(m, d, B), 1),
        lambda m, d: m.var_mean(make(m, d, (3, 4), "complex64"), correction=0),
        lambda m, d: m.var_mean(make(m, d, B, transposed=True), (0, 2), keepdim=True),
    ],
    "std_mean": [
        lambda m, d: m.std_mean(make(m, d, B, transposed=True), (0, 2)),
        lambda m, d: m.std_mean(make(m, d, (3, 4), "float16"), 0),
        lambda m, d: m.std_mean(make(m, d, ())),
    ],
    "logsumexp": [
        lambda m, d: m.logsumexp(make(m, d, (3, 4)), (0, 1)),
        lambda m, d: m.logsumexp(make(m, d, B, transposed=True), 1),
        lambda m, d: m.logsumexp(make(m, d, B, transposed=True), (0, 2), True),
        lambda m, d: m.logsumexp(make(m, d, ()), 0),
        lambda m, d: m.logsumexp(make(m, d, (0, 3)), 1),
        lambda m, d: m.logsumexp(make(m, d, (3, 4), "int64"), 1),
    ],
    # ------------------------------------------------------------------ logical
    "all": _reduction(lambda m, x, *a: m.all(x, *a), "bool") + [
        lambda m, d: make(m, d, (3, 4), "uint8").all(1),
        lambda m, d: m.all(make(m, d, (3, 4), transposed=True), dim=()),
    ],
    "any": _reduction(lambda m, x, *a: m.any(x, *a)) + [
        lambda m, d: make(m, d, B, "uint8", transposed=True).any(2, keepdim=True),
    ],
    "count_nonzero": [
        lambda m, d: m.count_nonzero(make(m, d, (3, 4), "int64")),
        lambda m, d: m.count_nonzero(make(m, d, B, transposed=True), 1),
        lambda m, d: m.count_nonzero(make(m, d, B, "bool", transposed=True), (0, 2)),
        lambda m, d: m.count_nonzero(make(m, d, ())),
        lambda m, d: m.count_nonzero(make(m, d, (0, 3)), 0),
    ],
    # ------------------------------------------------------------------ max and min
    "amax": _reduction(lambda m, x, *a: m.amax(x, *a), empty=False) + [
        lambda m, d: m.amax(make(m, d, (0, 3)), 1),
        lambda m, d: make(m, d, (3, 4), "int32").amax(0),
    ],
    "amin": _reduction(lambda m, x, *a: m.amin(x, *a), empty=False),
    "max_all": [
        lambda m, d: make(m, d, B, transposed=True).max(),
        lambda m, d: m.max(make(m, d, (3, 4), "int32")),
        lambda m, d: m.max(make(m, d, ())),
    ],
    "min_all": [
        lambda m, d: make(m, d, (3, 4)).min(),
        lambda m, d: m.min(make(m, d, B, "uint8", transposed=True)),
    ],
    "aminmax": [
        lambda m, d: m.aminmax(make(m, d, (3, 4))),
        lambda m, d: m.aminmax(make(m, d, B, transposed=True), dim=1),
        lambda m, d: m.aminmax(make(m, d, B, transposed=True), dim=0, keepdim=True),
        lambda m, d: m.aminmax(make(m, d, (3, 4)), keepdim=True),
        lambda m, d: m.aminmax(make(m, d, ()), dim=0),
    ],
    "max": _selection(lambda m, x, dim, keepdim: m.max(x, dim, keepdim)) + [
        lambda m, d: make(m, d, (3, 4), "int64").max(dim=0),
    ],
    "min": _selection(lambda m, x, dim, keepdim: m.min(x, dim, keepdim)),
    "argmax": _selection(lambda m, x, dim, keepdim: m.argmax(x, dim, keepdim)) + [
        lambda m, d: m.argmax(make(m, d, B, transposed=True)),
        lambda m, d: m.argmax(make(m, d, (3, 4)), keepdim=True),
    ],
    "argmin": _selection(lambda m, x, dim, keepdim: m.argmin(x, dim, keepdim)) + [
        lambda m, d: make(m, d, (3, 4), "int32").argmin(),
    ],
    # ------------------------------------------------------------------ norms
    "norm": _reduction(lambda m, x, *a: m.norm(x, 2, *a)) + [
        lambda m, d: m.norm(make(m, d, B, transposed=True), 1, (0, 1)),
        lambda m, d: m.norm(make(m, d, (3, 4)), float("inf"), 1, True),
        lambda m, d: m.norm(make(m, d, (3, 4)), 0),
        lambda m, d: m.norm(make(m, d, (3, 4)), 3.5, 0),
        lambda m, d: m.norm(make(m, d, (3, 4), "complex64"), dim=1),
        lambda m, d: m.norm(make(m, d, (3, 4)), dtype=m.float64),
    ],
    "dist": [
        lambda m, d: m.dist(make(m, d, (3, 4)), make(m, d, (4,), seed=1), 3),
        lambda m, d: m.dist(make(m, d, (3, 4), "float64", transposed=True), make(m, d, (3, 4), "float64")),
        lambda m, d: m.dist(make(m, d, (2, 3), "complex64"), make(m, d, (3,), "complex64", seed=1),
                            float("inf")),
        lambda m, d: m.dist(make(m, d, (0, 3)), make(m, d, (3,), seed=1), 1),
    ],
    "nuclear_norm": [
        lambda m, d: m.norm(make(m, d, (3, 4)), "nuc"),
        lambda m, d: m.norm(make(m, d, (3, 4), transposed=True), "nuc"),
        lambda m, d: m.norm(make(m, d, B, transposed=True), "nuc", (2, 0), True),
        lambda m, d: m.norm(make(m, d, B, "complex64"), "nuc", (1, 2)),
    ],
    # ------------------------------------------------------------------ scans
    "cumsum": _scan(lambda m, x, dim: m.cumsum(x, dim)) + [
        lambda m, d: make(m, d, (3, 4), "int32").cumsum(1),
        lambda m, d: make(m, d, (3, 4), "bool", transposed=True).cumsum(0),
        lambda m, d: m.cumsum(make(m, d, (3, 4)), 1, dtype=m.float64),
        lambda m, d: make(m, d, (3, 4)).cumsum_(0),
    ],
    "cumprod": _scan(lambda m, x, dim: m.cumprod(x, dim)) + [
        lambda m, d: make(m, d, (3, 4), "int64", transposed=True).cumprod(1),
        lambda m, d: make(m, d, (3, 4), "int32").cumprod_(1),
    ],
    "cummax": _scan(lambda m, x, dim: m.cummax(x, dim)) + [
        lambda m, d: make(m, d, (3, 4), "int64").cummax(1),
    ],
    "cummin": _scan(lambda m, x, dim: m.cummin(x, dim)),
    "logcumsumexp": _scan(lambda m, x, dim: m.logcumsumexp(x, dim)) + [
        lambda m, d: make(m, d, (3, 4), "complex64").logcumsumexp(1),
    ],
    # ------------------------------------------------------------------ softmax
    "softmax": _scan(lambda m, x, dim: m.softmax(x, dim)) + [
        lambda m, d: make(m, d, (3, 4), "float16", transposed=True).softmax(-1),
        lambda m, d: m.softmax(make(m, d, (3, 4)), 1, dtype=m.float64),
    ],
    "log_softmax": _scan(lambda m, x, dim: m.log_softmax(x, dim)) + [
        lambda m, d: make(m, d, (3, 4), "bfloat16").log_softmax(0),
    ],
    "_softmax_backward_data": _softmax_backward("softmax"),
    "_log_softmax_backward_data": _softmax_backward("log_softmax"),
    # ------------------------------------------------------------------ sorting
    "sort": [
        lambda m, d: m.sort(make(m, d, (3, 4))),
        lambda m, d: m.sort(make(m, d, B, transposed=True), 1, descending=True),
        lambda m, d: make(m, d, (1, 4)).expand(3, 4).sort(0),
        lambda m, d: m.sort(make(m, d, ()), 0),
        lambda m, d: m.sort(make(m, d, (0, 3), transposed=True), 0),
        lambda m, d: m.msort(make(m, d, (3, 4), "int32", transposed=True)),
    ],
    "argsort": [
        lambda m, d: m.argsort(make(m, d, (3, 4))),
        lambda m, d: m.argsort(make(m, d, B, transposed=True), 0, descending=True),
        lambda m, d: make(m, d, (1, 4)).expand(3, 4).argsort(1),
        lambda m, d: m.argsort(make(m, d, ())),
        lambda m, d: m.argsort(make(m, d, (0, 3)), 1),
    ],
    "topk": [
        lambda m, d: m.topk(make(m, d, (3, 4)), 2),
        lambda m, d: m.topk(make(m, d, B, transposed=True), 2, 1, largest=False),
        lambda m, d: m.topk(make(m, d, (3, 300)), 5, sorted=False),
        lambda m, d: m.topk(make(m, d, (3, 4)), 0, 0),
        lambda m, d: m.topk(make(m, d, ()), 1),
        lambda m, d: m.topk(make(m, d, (0, 3)), 2),
    ],
    "kthvalue": [
        lambda m, d: m.kthvalue(make(m, d, (3, 4)), 2),
        lambda m, d: m.kthvalue(make(m, d, B, transposed=True), 3, 1, True),
        lambda m, d: m.kthvalue(make(m, d, B, "int64", transposed=True), 1, 0),
        lambda m, d: m.kthvalue(make(m, d, ()), 1),
        lambda m, d: m.kthvalue(make(m, d, (0, 3)), 2, 1),
    ],
    "median": [
        lambda m, d: m.median(make(m, d, (3, 4))),
        lambda m, d: make(m, d, B, "int32", transposed=True).median(),
        lambda m, d: m.median(make(m, d, ())),
        lambda m, d: m.median(make(m, d, (0, 3))),
    ],
    "nanmedian": [
        lambda m, d: m.nanmedian(make(m, d, (3, 4))),
        lambda m, d: m.nanmedian(make(m, d, B, transposed=True).log()),
        lambda m, d: m.nanmedian(make(m, d, ())),
    ],
    "median_dim": _selection(lambda m, x, dim, keepdim: m.median(x, dim, keepdim)),
    "nanmedian_dim": _selection(lambda m, x, dim, keepdim: m.nanmedian(x.log(), dim, keepdim)),
    "mode": _selection(lambda m, x, dim, keepdim: m.mode(x.round(), dim, keepdim)) + [
        lambda m, d: m.mode(make(m, d, (3, 5), "int64", low=0, high=2)),
    ],
    # ------------------------------------------------------------------ searching
    "unique": [
        lambda m, d: m.unique(make(m, d, (3, 4), "int64", low=0, high=3)),
        lambda m, d: m.unique(make(m, d, (3, 4), low=0, high=2).round(), return_inverse=True,
                              return_counts=True),
        lambda m, d: m.unique(make(m, d, (4, 3), "int32", low=0, high=1, transposed=True),
                              dim=1, return_counts=True),
        lambda m, d: m.unique(make(m, d, (0, 3))),
    ],
    "unique_consecutive": [
        lambda m, d: m.unique_consecutive(make(m, d, (6,), "int64", low=0, high=1)),
        lambda m, d: make(m, d, (3, 4), "int64", low=0, high=1).unique_consecutive(
            return_inverse=True, return_counts=True),
        lambda m, d: m.unique_consecutive(make(m, d, (4, 3), "int32", low=0, high=1), dim=0,
                                          return_inverse=True),
    ],
    "searchsorted": [
        lambda m, d: m.searchsorted(_sorted(m, d, (6,)), make(m, d, (3, 4), transposed=True)),
        lambda m, d: m.searchsorted(_sorted(m, d, (2, 5)), make(m, d, (2, 3)), right=True),
        lambda m, d: m.searchsorted(_sorted(m, d, (6,), "int64"), 1.5, out_int32=True),
        lambda m, d: m.searchsorted(_sorted(m, d, (6,)), make(m, d, (), "float64"),
                                    side="right"),
        lambda m, d: m.searchsorted(make(m, d, (5,)), make(m, d, (3,), seed=1),
                                    sorter=m.argsort(make(m, d, (5,)))),
        lambda m, d: m.searchsorted(_sorted(m, d, (6,)), make(m, d, (0,))),
    ],
    "bucketize": [
        lambda m, d: m.bucketize(make(m, d, (3, 4), transposed=True), _sorted(m, d, (5,))),
        lambda m, d: m.bucketize(make(m, d, (4,), "int64"), _sorted(m, d, (5,)), right=True,
                                 out_int32=True),
        lambda m, d: m.bucketize(0.5, _sorted(m, d, (5,))),
    ],
    "bincount": [
        lambda m, d: m.bincount(make(m, d, (6,), "int64", low=0, high=4)),
        lambda m, d: m.bincount(make(m, d, (6,), "int32", low=0, high=4),
                                make(m, d, (6,), seed=1), minlength=8),
        lambda m, d: m.bincount(make(m, d, (0,), "int64", low=0, high=4), minlength=3),
    ],
    "histc": [
        lambda m, d: m.histc(make(m, d, (3, 4)), 5, -2, 2),
        lambda m, d: make(m, d, B, "float64", transposed=True).histc(7),
        lambda m, d: m.histc(make(m, d, ()), 3, 0, 1),
    ],
    "isin": [
        lambda m, d: m.isin(make(m, d, (3, 4), "int64", transposed=True),
                            make(m, d, (5,), "int64", seed=1)),
        lambda m, d: m.isin(make(m, d, (3, 4), "int64"), 2, invert=True),
        lambda m, d: m.isin(1, make(m, d, (5,), "int32")),
        lambda m, d: m.isin(make(m, d, (2, 3), "int32"), make(m, d, (4,), "int64", seed=1)),
    ],
}
