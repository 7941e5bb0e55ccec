"""SGD against torch.optim.SGD: every path, option combinations, groups, state dicts, errors."""

import pytest
import torch
from optim_oracle import check_optimizer, check_state_dict_crossing

import ember.core as ec
import ember.nn as enn
import ember.optim as eoptim

PATHS = [{"foreach": False}, {"foreach": True}, {"fused": True}, {}]
OPTIONS = [
    {"lr": 0.1},
    {"lr": 0.05, "momentum": 0.9},
    {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01},
    {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.1},
    {"lr": 0.02, "momentum": 0.5, "maximize": True, "weight_decay": 0.05},
    {"lr": 0.02, "weight_decay": 0.05, "maximize": True},
]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: ",".join(p) or "default")
@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_sgd_matches_torch(options, path):
    check_optimizer("SGD", {**options, **path})


@pytest.mark.parametrize("path", PATHS, ids=lambda p: ",".join(p) or "default")
def test_sgd_tensor_lr_and_groups(path):
    check_optimizer("SGD", {"lr": torch.tensor(0.05), "momentum": 0.9, **path})
    check_optimizer("SGD", {"lr": 0.1, **path},
                    groups=[{"lr": 0.01, "momentum": 0.9}, {"weight_decay": 0.1}])


@pytest.mark.parametrize("path", PATHS, ids=lambda p: ",".join(p) or "default")
def test_sgd_float64(path):
    check_optimizer("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, **path},
                    dtype=torch.float64, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: ",".join(p) or "default")
def test_sgd_state_dict_crosses_between_frameworks(path):
    check_state_dict_crossing("SGD", {"lr": 0.05, "momentum": 0.9, **path})


def test_sgd_lr_written_mid_run_is_used():
    from optim_oracle import Pair, assert_params_close, step_both
    pair = Pair()
    topt = torch.optim.SGD(pair.torch_params, lr=0.1, momentum=0.9)
    eopt = eoptim.SGD(pair.ember_params, lr=0.1, momentum=0.9)
    for step in range(6):
        if step == 3:
            topt.param_groups[0]["lr"] = 0.01
            eopt.param_groups[0]["lr"] = 0.01
        step_both(pair, topt, eopt, closure=False)
        assert_params_close(pair, step)


@pytest.mark.parametrize("kwargs, message", [
    ({"lr": -0.1}, "Invalid learning rate: -0.1"),
    ({"lr": 0.1, "momentum": -1}, "Invalid momentum value: -1"),
    ({"lr": 0.1, "weight_decay": -1}, "Invalid weight_decay value: -1"),
    ({"lr": 0.1, "nesterov": True}, "Nesterov momentum requires a momentum and zero dampening"),
    ({"lr": 0.1, "momentum": 0.9, "nesterov": True, "dampening": 0.1},
     "Nesterov momentum requires a momentum and zero dampening"),
    ({"lr": 0.1, "fused": True, "foreach": True},
     "`fused` and `foreach` cannot be `True` together."),
    ({"lr": 0.1, "fused": True, "differentiable": True},
     "`fused` does not support `differentiable`"),
])
def test_sgd_bad_options_raise_as_torch(kwargs, message):
    for lib, optim in ((torch, torch.optim), (ec, eoptim)):
        p = (torch.nn.Parameter(torch.ones(2)) if lib is torch else enn.Parameter(ec.ones(2)))
        with pytest.raises((ValueError, RuntimeError)) as info:
            optim.SGD([p], **kwargs)
        assert str(info.value) == message
        if lib is torch:
            expected = type(info.value)
        else:
            assert type(info.value) is expected


def test_fused_refuses_integer_parameters_as_torch():
    for lib, optim in ((torch, torch.optim), (ec, eoptim)):
        q = lib.ones(2, dtype=lib.int64)
        q.grad = lib.ones(2, dtype=lib.int64)
        with pytest.raises(RuntimeError, match=r"`fused=True` requires all the params to be "
                                               r"floating point Tensors of supported devices: "
                                               r"\[.*'cpu'.*\] but (torch|ember).int64 and cpu"):
            optim.SGD([q], lr=0.1, fused=True).step()
