"""A transformer block's training step written from tensor primitives (no nn yet), run with
Ember and with torch from the same weights: the loss and every gradient must agree."""

import numpy as np
import pytest
import torch
from gpt_block import data, training_step, weights

import ember


@pytest.mark.parametrize("steps", [1, 3])
def test_training_steps_match_torch(steps):
    results = {}
    for lib in (ember, torch):
        p = weights(lib)
        idx, tgt = data(lib)
        losses = [training_step(lib, p, idx, tgt).item() for _ in range(steps)]
        results[lib.__name__] = (losses, {k: np.asarray(v.detach()) for k, v in p.items()})
    (e_losses, e_params), (t_losses, t_params) = results["ember"], results["torch"]
    np.testing.assert_allclose(e_losses, t_losses, rtol=1e-5)
    for name in e_params:
        np.testing.assert_allclose(e_params[name], t_params[name], rtol=1e-4, atol=1e-6,
                                   err_msg=name)
