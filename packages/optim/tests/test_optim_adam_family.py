"""Adamax, NAdam and RAdam against torch.optim: both paths and the default, option
combinations, tensor lr, groups, float64, state dicts, capturable and differentiable steps,
complex parameters, the state's counters, errors."""

import pytest
import torch
from optim_oracle import check_optimizer, check_state_dict_crossing
from test_optim_adam import (
    UNFUSED_PATHS,
    assert_same_error,
    capturable_on_cpu,  # noqa: F401 (a fixture)
    check_complex,
    check_differentiable,
    check_state_steps,
    construct,
    path_id,
)

NAMES = ["Adamax", "NAdam", "RAdam"]
OPTIONS = {
    "Adamax": [{"lr": 0.01}, {"lr": 0.02, "betas": (0.8, 0.99), "eps": 1e-4},
               {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.01, "maximize": True},
               {"lr": 0.01, "weight_decay": 0.1, "maximize": True}],
    "NAdam": [{"lr": 0.01}, {"lr": 0.01, "betas": (0.8, 0.99), "momentum_decay": 0.02},
              {"lr": 0.01, "weight_decay": 0.1, "maximize": True},
              {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
              {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True,
               "maximize": True, "momentum_decay": 0.0}],
    # beta2 0.9 rectifies from the third step on, 0.999 from the seventh
    "RAdam": [{"lr": 0.01}, {"lr": 0.01, "betas": (0.8, 0.9), "eps": 1e-6},
              {"lr": 0.01, "weight_decay": 0.1, "maximize": True},
              {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
              {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True,
               "maximize": True, "betas": (0.9, 0.9)}],
}
CASES = [(name, options) for name in NAMES for options in OPTIONS[name]]
STRONG = {"Adamax": {"lr": 0.01, "weight_decay": 0.1},
          "NAdam": {"lr": 0.01, "weight_decay": 0.1, "momentum_decay": 0.01},
          "RAdam": {"lr": 0.01, "weight_decay": 0.1, "betas": (0.9, 0.9)}}


@pytest.mark.parametrize("path", UNFUSED_PATHS, ids=path_id)
@pytest.mark.parametrize("name, options", CASES, ids=str)
def test_family_matches_torch(name, options, path):
    check_optimizer(name, {**options, **path})


@pytest.mark.parametrize("path", UNFUSED_PATHS, ids=path_id)
@pytest.mark.parametrize("name", NAMES)
def test_family_tensor_lr_and_groups(name, path):
    check_optimizer(name, {**STRONG[name], "lr": torch.tensor(0.01), **path})
    check_optimizer(name, {"lr": 0.01, **path},
                    groups=[{"lr": 0.03, "betas": (0.5, 0.9)}, {"weight_decay": 0.2},
                            {"eps": 1e-3, "maximize": True}], closure=True)


@pytest.mark.parametrize("path", UNFUSED_PATHS, ids=path_id)
@pytest.mark.parametrize("name", NAMES)
def test_family_float64(name, path):
    check_optimizer(name, {**STRONG[name], **path}, dtype=torch.float64, rtol=1e-12,
                    atol=1e-13)


@pytest.mark.parametrize("path", UNFUSED_PATHS, ids=path_id)
@pytest.mark.parametrize("name", NAMES)
def test_family_state_dict_crosses_between_frameworks(name, path):
    check_state_dict_crossing(name, {**STRONG[name], **path})


@pytest.mark.parametrize("path", UNFUSED_PATHS, ids=path_id)
@pytest.mark.parametrize("tensor_lr", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_family_capturable_steps_match_torch(name, tensor_lr, path, capturable_on_cpu):  # noqa: F811
    lr = torch.tensor(0.01) if tensor_lr else 0.01
    check_optimizer(name, {**STRONG[name], "lr": lr, "maximize": tensor_lr, **path,
                           "capturable": True})


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_family_capturable_refused_on_cpu_as_torch(name, foreach):
    assert_same_error(construct(name, {"capturable": True, "foreach": foreach}))


@pytest.mark.parametrize("name, kwargs, steps", [
    ("Adamax", {"lr": 0.1, "weight_decay": 0.1}, 1), ("Adamax", {"lr": 0.1}, 1),
    ("NAdam", {"lr": 0.1, "weight_decay": 0.1}, 3),
    ("NAdam", {"lr": 0.1, "weight_decay": 0.1, "decoupled_weight_decay": True}, 3),
    ("RAdam", {"lr": 0.1, "betas": (0.9, 0.9), "maximize": True}, 4),
    ("RAdam", {"lr": 0.1, "weight_decay": 0.1}, 2),
], ids=str)
def test_family_differentiable_step_has_torch_gradients(name, kwargs, steps):
    check_differentiable(name, kwargs, steps)


@pytest.mark.parametrize("path", UNFUSED_PATHS, ids=path_id)
@pytest.mark.parametrize("name", NAMES)
def test_family_complex_parameters(name, path):
    check_complex(name, {**STRONG[name], **path})


@pytest.mark.parametrize("default_dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("name", NAMES)
def test_family_state_counters_kept_as_torch(name, default_dtype):
    import ember.core as ec
    torch.set_default_dtype(default_dtype)
    ec.set_default_dtype(getattr(ec, str(default_dtype)[6:]))
    try:
        check_state_steps(name, {})
    finally:
        torch.set_default_dtype(torch.float32)
        ec.set_default_dtype(ec.float32)


@pytest.mark.parametrize("kwargs", [
    {"lr": -0.1}, {"eps": -1e-3}, {"betas": (1.5, 0.9)}, {"betas": (0.9, 1.0)},
    {"betas": (-0.1, 0.9)}, {"weight_decay": -0.5}, {"lr": torch.tensor([0.01, 0.02])},
], ids=str)
@pytest.mark.parametrize("name", NAMES)
def test_family_bad_options_raise_as_torch(name, kwargs):
    assert_same_error(construct(name, kwargs))


def test_nadam_bad_momentum_decay_raises_as_torch():
    assert_same_error(construct("NAdam", {"momentum_decay": -0.1}))
