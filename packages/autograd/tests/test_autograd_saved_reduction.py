"""The reductions, scans, softmax and sorting ops save no more for backward than torch
does: each differentiable op of the family, with its input requiring grad or not."""

import math

import pytest
from autograd_oracle import check_saved

B = (2, 3, 4)
UNARY = {
    "sum": lambda m, x: x.sum(),
    "sum_dim": lambda m, x: x.sum((0, 2), keepdim=True),
    "nansum": lambda m, x: x.nansum(1),
    "mean": lambda m, x: x.mean(),
    "mean_dim": lambda m, x: x.mean(1),
    "nanmean": lambda m, x: x.nanmean(1),
    "prod": lambda m, x: x.prod(),
    "prod_dim": lambda m, x: x.prod(1, keepdim=True),
    "var": lambda m, x: x.var(1),
    "std": lambda m, x: x.std((0, 1), correction=0),
    "var_mean": lambda m, x: m.var_mean(x, 1),
    "std_mean": lambda m, x: m.std_mean(x, 2),
    "logsumexp": lambda m, x: x.logsumexp(1),
    "amax": lambda m, x: x.amax((0, 2)),
    "amin": lambda m, x: x.amin(1, keepdim=True),
    "max": lambda m, x: x.max(),
    "min": lambda m, x: x.min(),
    "aminmax": lambda m, x: m.aminmax(x),
    "aminmax_dim": lambda m, x: m.aminmax(x, dim=1, keepdim=True),
    "max_dim": lambda m, x: x.max(1),
    "min_dim": lambda m, x: x.min(0, keepdim=True),
    "norm": lambda m, x: x.norm(),
    "norm_1": lambda m, x: x.norm(1, 1),
    "norm_inf": lambda m, x: x.norm(math.inf, 2),
    "norm_3": lambda m, x: x.norm(3, (0, 1)),
    "norm_0": lambda m, x: x.norm(0),
    "nuclear_norm": lambda m, x: m.norm(x, "nuc", (1, 2)),
    "cumsum": lambda m, x: x.cumsum(1),
    "cumprod": lambda m, x: x.cumprod(2),
    "cummax": lambda m, x: x.cummax(1),
    "cummin": lambda m, x: x.cummin(0),
    "logcumsumexp": lambda m, x: x.logcumsumexp(1),
    "softmax": lambda m, x: x.softmax(1),
    "log_softmax": lambda m, x: x.log_softmax(-1),
    "sort": lambda m, x: x.sort(1),
    "msort": lambda m, x: x.msort(),
    "topk": lambda m, x: x.topk(2),
    "kthvalue": lambda m, x: x.kthvalue(2, 1),
    "median": lambda m, x: x.median(),
    "nanmedian": lambda m, x: x.nanmedian(),
    "median_dim": lambda m, x: x.median(1),
    "nanmedian_dim": lambda m, x: x.nanmedian(2, keepdim=True),
    "mode": lambda m, x: x.mode(1),
    "cumsum_": lambda m, x: (x * 1).cumsum_(1),
    "cumprod_": lambda m, x: (x * 1).cumprod_(0),
}


@pytest.mark.parametrize("needs", [(True,), (False,)])
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name, needs):
    check_saved(UNARY[name], [B], needs=needs, low=0.5, high=2.0)


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("p", [2, 1, math.inf, 3])
def test_dist(p, needs):
    check_saved(lambda m, x, y: m.dist(x, y, p), [B, (4,)], needs=needs)
