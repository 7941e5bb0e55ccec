"""The oracle for optimizers and schedulers: the same model, data and initial weights in Ember
and in torch, stepped side by side; state dicts carried from one to the other.

``check_optimizer(name, kwargs)`` runs 20 steps of ``ember.optim.<name>`` and
``torch.optim.<name>`` with the same options and compares every parameter after every step
(to within float32 rounding) and the learning rates; ``check_state_dict_crossing`` saves a
state dict from one framework mid-run, loads it into the other and checks that both go on
alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import ember.core as ec
import ember.nn as enn
import ember.optim as eoptim

STEPS = 20


def to_ember(value: Any) -> Any:
    """A torch object (tensors anywhere inside dicts, lists, tuples) as Ember's."""
    if isinstance(value, torch.Tensor):
        return ec.tensor(value.detach().numpy().copy(), dtype=getattr(ec, str(value.dtype)[6:]))
    if isinstance(value, dict):
        return {k: to_ember(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_ember(v) for v in value)
    return value


def to_torch(value: Any) -> Any:
    """An Ember object (tensors anywhere inside dicts, lists, tuples) as torch's."""
    if isinstance(value, ec.Tensor):
        return torch.from_numpy(np.array(value.detach().numpy()))
    if isinstance(value, dict):
        return {k: to_torch(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_torch(v) for v in value)
    return value


class Pair:
    """A small MLP (two Linear layers, one without bias, and an extra 0-d parameter and a
    3-d one) built once in torch and copied into Ember, with a fixed regression batch."""

    def __init__(self, seed: int = 0, dtype: torch.dtype = torch.float32) -> None:
        g = torch.Generator().manual_seed(seed)
        shapes = [(6, 5), (6,), (3, 6), (), (2, 3, 2)]
        # drawn in float64 and rounded, so that every dtype starts from the same weights
        self.torch_params = [(torch.randn(s, generator=g, dtype=torch.float64) * 0.5).to(dtype)
                             .requires_grad_() for s in shapes]
        self.ember_params = [enn.Parameter(to_ember(p.detach())) for p in self.torch_params]
        self.x = torch.randn(8, 5, generator=g, dtype=torch.float64).to(dtype)
        self.y = torch.randn(8, 3, generator=g, dtype=torch.float64).to(dtype)
        self.ex, self.ey = to_ember(self.x), to_ember(self.y)

    @staticmethod
    def _loss(lib: Any, params: list[Any], x: Any, y: Any) -> Any:
        w1, b1, w2, s, t = params
        h = lib.tanh(x @ w1.t() + b1)
        out = (h @ w2.t()) * s + t.mean()
        return ((out - y) ** 2).mean() + (t ** 2).sum() * 0.1

    def torch_loss(self) -> torch.Tensor:
        return self._loss(torch, self.torch_params, self.x, self.y)

    def ember_loss(self) -> Any:
        return self._loss(ec, self.ember_params, self.ex, self.ey)

    def torch_closure(self, opt: Any) -> Callable[[], torch.Tensor]:
        def closure() -> torch.Tensor:
            opt.zero_grad()
            loss = self.torch_loss()
            loss.backward()
            return loss
        return closure

    def ember_closure(self, opt: Any) -> Callable[[], Any]:
        def closure() -> Any:
            opt.zero_grad()
            loss = self.ember_loss()
            loss.backward()
            return loss
        return closure

    def groups(self, kwargs_per_group: list[dict[str, Any]] | None) -> tuple[Any, Any]:
        """The parameters as one group, or split into groups with their own options."""
        if not kwargs_per_group:
            return self.torch_params, self.ember_params
        cuts = np.array_split(np.arange(len(self.torch_params)), len(kwargs_per_group))
        tg = [{"params": [self.torch_params[i] for i in c], **kw}
              for c, kw in zip(cuts, kwargs_per_group)]
        eg = [{"params": [self.ember_params[i] for i in c], **to_ember(kw)}
              for c, kw in zip(cuts, kwargs_per_group)]
        return tg, eg


def assert_params_close(pair: Pair, step: int, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    for i, (t, e) in enumerate(zip(pair.torch_params, pair.ember_params)):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"parameter {i} after step {step}")


def lrs(opt: Any) -> list[float]:
    return [float(g["lr"]) for g in opt.param_groups]


def step_both(pair: Pair, topt: Any, eopt: Any, closure: bool) -> None:
    if closure:
        tl = topt.step(pair.torch_closure(topt))
        el = eopt.step(pair.ember_closure(eopt))
        np.testing.assert_allclose(float(el.detach()), float(tl.detach()), rtol=1e-5, atol=1e-7)
        return
    topt.zero_grad()
    pair.torch_loss().backward()
    topt.step()
    eopt.zero_grad()
    pair.ember_loss().backward()
    eopt.step()


def check_optimizer(name: str, kwargs: dict[str, Any], *, groups: list[dict[str, Any]] | None
                    = None, closure: bool = False, steps: int = STEPS,
                    dtype: torch.dtype = torch.float32, rtol: float = 1e-5,
                    atol: float = 1e-6) -> tuple[Any, Any]:
    """``steps`` steps of torch.optim.<name>(**kwargs) and ember.optim.<name>(**kwargs) on the
    same ``Pair``: the parameters and learning rates agree after each step."""
    pair = Pair(dtype=dtype)
    tparams, eparams = pair.groups(groups)
    topt = getattr(torch.optim, name)(tparams, **kwargs)
    eopt = getattr(eoptim, name)(eparams, **to_ember(kwargs))
    for step in range(steps):
        step_both(pair, topt, eopt, closure)
        assert_params_close(pair, step, rtol, atol)
        assert lrs(eopt) == lrs(topt)
    return topt, eopt


def check_state_dict_crossing(name: str, kwargs: dict[str, Any], *, closure: bool = False,
                              rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Run 10 steps in torch, load torch's state dict into a fresh Ember optimizer over the
    same weights, and run 10 more in both; then the same from Ember into torch. The state
    dicts' layout (keys, group options) agrees too."""
    for source in ("torch", "ember"):
        pair = Pair(seed=1)
        topt = getattr(torch.optim, name)(pair.torch_params, **kwargs)
        eopt = getattr(eoptim, name)(pair.ember_params, **to_ember(kwargs))
        for _ in range(STEPS // 2):
            step_both(pair, topt, eopt, closure)
        tsd, esd = topt.state_dict(), eopt.state_dict()
        assert [sorted(g) for g in esd["param_groups"]] == \
            [sorted(g) for g in tsd["param_groups"]]
        assert {k: sorted(v) for k, v in esd["state"].items()} == \
            {k: sorted(v) for k, v in tsd["state"].items()}
        fresh = Pair(seed=1)
        for t, e, tf, ef in zip(pair.torch_params, pair.ember_params, fresh.torch_params,
                                fresh.ember_params):
            with torch.no_grad():
                tf.copy_(t)
            ef.data = e.detach().clone()
        topt2 = getattr(torch.optim, name)(fresh.torch_params, **kwargs)
        eopt2 = getattr(eoptim, name)(fresh.ember_params, **to_ember(kwargs))
        if source == "torch":
            topt2.load_state_dict(tsd)
            eopt2.load_state_dict(to_ember(tsd))
        else:
            topt2.load_state_dict(to_torch(esd))
            eopt2.load_state_dict(esd)
        for step in range(STEPS // 2, STEPS):
            step_both(fresh, topt2, eopt2, closure)
            assert_params_close(fresh, step, rtol, atol)
