"""Adadelta and Rprop against torch.optim: every path, option combinations, tensor lr,
groups, float64, complex parameters, state (``step`` included), state dicts, differentiable
steps, errors."""

import numpy as np
import pytest
import torch
from optim_oracle import check_optimizer, check_state_dict_crossing
from test_optim_rmsprop_adagrad import (
    PATH_IDS,
    PATHS,
    assert_raises_as_torch,
    assert_state_matches,
    check_complex_as_torch,
    differentiable_results,
)

ADADELTA = [
    {},
    {"lr": 0.5, "rho": 0.8, "eps": 1e-5, "weight_decay": 0.1},
    {"maximize": True, "weight_decay": 0.05},
    {"lr": 0.3, "rho": 0.5, "eps": 1e-4, "weight_decay": 0.05, "maximize": True},
]
RPROP = [
    {},
    {"lr": 0.005, "etas": (0.3, 1.7), "step_sizes": (1e-4, 0.05)},
    {"lr": 0.005, "etas": (0.4, 1.5), "step_sizes": (1e-4, 0.02), "maximize": True},
    {"lr": 0.05, "step_sizes": (0.01, 1.0)},
]
CASES = [("Adadelta", o) for o in ADADELTA] + [("Rprop", o) for o in RPROP]
TENSOR_LR = {"Adadelta": {"lr": torch.tensor(0.5), "rho": 0.95},
             "Rprop": {"lr": torch.tensor(0.01), "maximize": True}}
GROUPS = {"Adadelta": ({"lr": 0.5}, [{"lr": 1.0, "rho": 0.8}, {"weight_decay": 0.1,
                                                                "eps": 1e-5}]),
          "Rprop": ({"lr": 0.01}, [{"lr": 0.05, "etas": (0.3, 1.5)},
                                   {"step_sizes": (1e-3, 0.02), "maximize": True}])}
NAMES = ["Adadelta", "Rprop"]


@pytest.mark.parametrize("path", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("name, options", CASES, ids=[f"{n}-{o}" for n, o in CASES])
def test_matches_torch(name, options, path):
    assert_state_matches(*check_optimizer(name, {**options, **path}))


@pytest.mark.parametrize("path", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("name", NAMES)
def test_tensor_lr_and_groups(name, path):
    check_optimizer(name, {**TENSOR_LR[name], **path})
    base, groups = GROUPS[name]
    assert_state_matches(*check_optimizer(name, {**base, **path}, groups=groups))


@pytest.mark.parametrize("path", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("name, options", [CASES[3], CASES[5]], ids=NAMES)
def test_float64(name, options, path):
    check_optimizer(name, {**options, **path}, dtype=torch.float64, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("path", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("name, options", [CASES[1], CASES[6]], ids=NAMES)
def test_state_dict_crosses_between_frameworks(name, options, path):
    check_state_dict_crossing(name, {**options, **path})


def test_closure_loss_is_returned():
    check_optimizer("Adadelta", {"weight_decay": 0.1}, closure=True, steps=5)
    check_optimizer("Rprop", {"lr": 0.02}, closure=True, steps=5)


@pytest.mark.parametrize("name, kwargs, steps, graph", [
    ("Adadelta", {"weight_decay": 0.1}, 2, True),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "maximize": True}, 2, True),
    ("Rprop", {"lr": 0.1, "maximize": True}, 1, False),  # sign(): no gradient to the grads
])
def test_differentiable_step_backpropagates_as_torch(name, kwargs, steps, graph):
    theirs, ours = differentiable_results(name, kwargs, steps)
    assert bool(np.abs(theirs[2]).max() > 0) is graph
    for t, e in zip(theirs, ours):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name, kwargs", [
    ("Adadelta", {"lr": -0.1}), ("Adadelta", {"lr": torch.tensor([0.1, 0.2])}),
    ("Adadelta", {"rho": 1.5}), ("Adadelta", {"rho": -0.1}), ("Adadelta", {"eps": -1e-6}),
    ("Adadelta", {"weight_decay": -0.1}),
    ("Rprop", {"lr": -0.1}), ("Rprop", {"lr": torch.tensor([0.1, 0.2])}),
    ("Rprop", {"etas": (1.5, 1.2)}), ("Rprop", {"etas": (0.0, 1.2)}),
    ("Rprop", {"etas": (0.5, 1.0)}),
])
def test_bad_options_raise_as_torch(name, kwargs):
    assert_raises_as_torch(name, kwargs)


@pytest.mark.parametrize("path", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("name", NAMES)
def test_capturable_on_cpu_raises_as_torch(name, path):
    assert_raises_as_torch(name, {"capturable": True, **path}, step=True)


@pytest.mark.parametrize("name", NAMES)
def test_foreach_refuses_differentiable_as_torch(name):
    assert_raises_as_torch(name, {"foreach": True, "differentiable": True}, step=True)


# Rprop's sign of ``grad * prev`` and its step sizes (``lr`` in both components) are taken
# per real component, as torch's ``view_as_real`` makes them
COMPLEX = [("Adadelta", ADADELTA[0]), ("Adadelta", ADADELTA[3]), ("Rprop", RPROP[0]),
           ("Rprop", RPROP[2]), ("Rprop", RPROP[3])]


@pytest.mark.parametrize("path", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("name, options", COMPLEX, ids=[f"{n}-{o}" for n, o in COMPLEX])
def test_complex_parameters_as_torch(name, options, path):
    check_complex_as_torch(name, {**options, **path})
