"""ember.amp.GradScaler against torch.amp.GradScaler("cpu"): the same model trained side by side
(same parameters, scale and growth tracker after every step), skipped steps, growth, unscale_
with clipping, the fused SGD path, state dicts crossing frameworks, errors, and the disabled
scaler; the two primitives against torch's."""

from __future__ import annotations

import math
import pickle
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from optim_oracle import Pair, assert_params_close, to_ember, to_torch

import ember.core as ec
import ember.nn as enn
import ember.nn.utils as enn_utils
import ember.optim as eoptim
from ember.amp.grad_scaler import (
    CudaGradScaler,
    GradScaler,
    _amp_foreach_non_finite_check_and_unscale_,
    _amp_update_scale_,
)
from ember.core.device import cuda_available

Corrupt = Callable[[int, list[Any]], None]


def scalers(**kwargs: Any) -> tuple[Any, GradScaler]:
    return torch.amp.GradScaler("cpu", **kwargs), GradScaler("cpu", **kwargs)


def sgds(pair: Pair, **kwargs: Any) -> tuple[Any, Any]:
    return (torch.optim.SGD(pair.torch_params, **kwargs),
            eoptim.SGD(pair.ember_params, **kwargs))


def assert_scalers_equal(tsc: Any, esc: GradScaler) -> None:
    assert esc.get_scale() == tsc.get_scale()
    assert esc._get_growth_tracker() == tsc._get_growth_tracker()
    assert esc.state_dict() == tsc.state_dict()


def one_step(sc: Any, opt: Any, loss: Callable[[], Any], params: list[Any], step: int,
             corrupt: Corrupt | None, clip: float | None, clip_fn: Callable[..., Any]) -> Any:
    opt.zero_grad()
    sc.scale(loss()).backward()
    if corrupt is not None:
        corrupt(step, params)
    if clip is not None:
        sc.unscale_(opt)
        clip_fn(params, clip)
    out = sc.step(opt)
    sc.update()
    return out


def train(pair: Pair, tsc: Any, esc: GradScaler, topt: Any, eopt: Any, steps: int = 20, *,
          corrupt: Corrupt | None = None, clip: float | None = None) -> list[float]:
    """``steps`` iterations of scale/backward/step/update in both frameworks; parameters,
    scale and growth tracker agree after each. Returns the scales."""
    scales = []
    for step in range(steps):
        one_step(tsc, topt, pair.torch_loss, pair.torch_params, step, corrupt, clip,
                 torch.nn.utils.clip_grad_norm_)
        one_step(esc, eopt, pair.ember_loss, pair.ember_params, step, corrupt, clip,
                 enn_utils.clip_grad_norm_)
        assert_params_close(pair, step)
        assert_scalers_equal(tsc, esc)
        scales.append(esc.get_scale())
    return scales


def grad_times_inf(at: set[int]) -> Corrupt:
    def corrupt(step: int, params: list[Any]) -> None:
        if step in at:
            params[0].grad.mul_(float("inf"))
    return corrupt


def grad_nan(at: set[int]) -> Corrupt:
    def corrupt(step: int, params: list[Any]) -> None:
        if step in at:
            params[2].grad[1, 4] = float("nan")
    return corrupt


def em(t: Any) -> Any:
    """``to_ember`` that also takes bfloat16 (numpy has none: through float32, exactly)."""
    if isinstance(t, torch.Tensor) and t.dtype == torch.bfloat16:
        return to_ember(t.float()).to(ec.bfloat16)
    return to_ember(t)


def th(e: Any) -> Any:
    """``to_torch`` that also takes bfloat16."""
    if isinstance(e, ec.Tensor) and e.dtype == ec.bfloat16:
        return to_torch(e.float()).to(torch.bfloat16)
    return to_torch(e)


def snapshot(params: list[Any]) -> list[np.ndarray]:
    return [np.array(p.detach().numpy()) for p in params]


# ------------------------------------------------------------------ training

@pytest.mark.parametrize("kwargs", [
    {"growth_interval": 5},
    {"init_scale": 1000.5, "growth_factor": 1.7, "backoff_factor": 0.3, "growth_interval": 3},
    {},
])
def test_training_matches_torch(kwargs: dict[str, Any]) -> None:
    pair = Pair()
    tsc, esc = scalers(**kwargs)
    topt, eopt = sgds(pair, lr=0.05, momentum=0.9)
    scales = train(pair, tsc, esc, topt, eopt)
    if kwargs.get("growth_interval") == 5:
        assert scales[-1] == 2.0**16 * 2**4


@pytest.mark.parametrize("corrupt", [grad_times_inf({3, 4, 11}), grad_nan({6})])
def test_nonfinite_grads_skip_step_and_back_off(corrupt: Corrupt) -> None:
    pair = Pair()
    tsc, esc = scalers(growth_interval=4)
    topt, eopt = sgds(pair, lr=0.05, momentum=0.5)
    bad = {step for step in range(20) if _corrupts(corrupt, step)}
    before: list[np.ndarray] = []
    last_scale = esc.get_scale()

    def check(step: int, params: list[Any]) -> None:
        nonlocal before, last_scale
        corrupt(step, params)
        if params is pair.ember_params:
            before = snapshot(params)
            last_scale = esc.get_scale()

    for step in range(20):
        one_step(tsc, topt, pair.torch_loss, pair.torch_params, step, corrupt, None,
                 torch.nn.utils.clip_grad_norm_)
        one_step(esc, eopt, pair.ember_loss, pair.ember_params, step, check, None,
                 enn_utils.clip_grad_norm_)
        assert_params_close(pair, step)
        assert_scalers_equal(tsc, esc)
        if step in bad:
            for b, p in zip(before, pair.ember_params):
                np.testing.assert_array_equal(p.detach().numpy(), b)
            assert esc.get_scale() == last_scale * 0.5
            assert esc._get_growth_tracker() == 0


def _corrupts(corrupt: Corrupt, step: int) -> bool:
    params = [enn.Parameter(ec.ones(3, 5)) for _ in range(3)]
    for p in params:
        p.grad = ec.ones(3, 5)
    corrupt(step, params)
    return not all(bool(ec.isfinite(p.grad).all()) for p in params)


def test_growth_after_growth_interval() -> None:
    pair = Pair()
    tsc, esc = scalers(init_scale=4.0, growth_factor=3.0, growth_interval=3)
    topt, eopt = sgds(pair, lr=0.01)
    scales = train(pair, tsc, esc, topt, eopt, steps=10)
    assert scales == [4.0 * 3.0 ** ((n + 1) // 3) for n in range(10)]
    trackers = []
    for _ in range(4):
        eopt.zero_grad()
        esc.scale(pair.ember_loss()).backward()
        esc.step(eopt)
        esc.update()
        trackers.append(esc._get_growth_tracker())
    assert trackers == [2, 0, 1, 2]


def test_scale_does_not_grow_past_float32() -> None:
    tsc, esc = scalers(init_scale=3e38, growth_interval=1)
    for sc, lib, make in ((tsc, torch, torch.nn.Parameter), (esc, ec, enn.Parameter)):
        p = make(lib.ones(2))
        opt = (torch.optim.SGD if lib is torch else eoptim.SGD)([p], lr=0.1)
        for _ in range(2):
            sc.scale((p * 1e-38).sum()).backward()
            sc.step(opt)
            sc.update()
    assert_scalers_equal(tsc, esc)
    assert esc.get_scale() == float(np.float32(3e38))


def test_unscale_then_clip_grad_norm_then_step() -> None:
    pair = Pair()
    tsc, esc = scalers(growth_interval=6)
    topt, eopt = sgds(pair, lr=0.1, momentum=0.9, nesterov=True)
    train(pair, tsc, esc, topt, eopt, corrupt=grad_times_inf({5}), clip=0.05)


def test_unscale_gives_torchs_grads() -> None:
    pair = Pair()
    tsc, esc = scalers(init_scale=12345.0)
    topt, eopt = sgds(pair, lr=0.1)
    tsc.scale(pair.torch_loss()).backward()
    esc.scale(pair.ember_loss()).backward()
    tsc.unscale_(topt)
    esc.unscale_(eopt)
    for t, e in zip(pair.torch_params, pair.ember_params):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-7)
    assert esc._found_inf_per_device(eopt)[ec.device("cpu")].item() == 0.0


def test_two_optimizers_one_with_inf_backs_off() -> None:
    pair = Pair()
    tsc, esc = scalers(growth_interval=2)
    topts = [torch.optim.SGD(pair.torch_params[:2], lr=0.1),
             torch.optim.SGD(pair.torch_params[2:], lr=0.1)]
    eopts = [eoptim.SGD(pair.ember_params[:2], lr=0.1),
             eoptim.SGD(pair.ember_params[2:], lr=0.1)]
    for step in range(6):
        for sc, opts, loss, params in ((tsc, topts, pair.torch_loss, pair.torch_params),
                                       (esc, eopts, pair.ember_loss, pair.ember_params)):
            for opt in opts:
                opt.zero_grad()
            sc.scale(loss()).backward()
            if step == 3:
                params[3].grad.mul_(float("inf"))
            for opt in opts:
                sc.step(opt)
            sc.update()
        assert_params_close(pair, step)
        assert_scalers_equal(tsc, esc)


# ---------------------------------------------------------------- fused SGD

@pytest.mark.parametrize("unscale_first", [False, True])
def test_fused_sgd_gets_grad_scale_and_found_inf(unscale_first: bool) -> None:
    pair = Pair()
    tsc, esc = scalers(growth_interval=4)
    topt, eopt = sgds(pair, lr=0.05, momentum=0.9, fused=True)
    assert eopt._step_supports_amp_scaling
    seen: list[tuple[float | None, float]] = []

    def spy(opt: Any, args: Any, kwargs: Any) -> None:
        scale = getattr(opt, "grad_scale", None)
        seen.append((None if scale is None else scale.item(), opt.found_inf.item()))

    eopt.register_step_pre_hook(spy)
    corrupt = grad_times_inf({2, 9})
    for step in range(16):
        for sc, opt, loss, params in ((tsc, topt, pair.torch_loss, pair.torch_params),
                                      (esc, eopt, pair.ember_loss, pair.ember_params)):
            opt.zero_grad()
            sc.scale(loss()).backward()
            corrupt(step, params)
            if unscale_first:
                sc.unscale_(opt)
            sc.step(opt)
            sc.update()
            assert not hasattr(opt, "grad_scale") and not hasattr(opt, "found_inf")
        assert_params_close(pair, step)
        assert_scalers_equal(tsc, esc)
        for t, e in zip(pair.torch_params, pair.ember_params):
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert [f for _, f in seen] == [1.0 if s in (2, 9) else 0.0 for s in range(16)]
    if unscale_first:
        assert all(s is None for s, _ in seen)
    else:
        assert seen[0][0] == 2.0**16 and seen[3][0] == 2.0**15


# --------------------------------------------------------------- state dicts

def test_state_dict_crossing() -> None:
    for source in ("torch", "ember"):
        pair = Pair(seed=1)
        tsc, esc = scalers(growth_interval=3)
        topt, eopt = sgds(pair, lr=0.05, momentum=0.9)
        train(pair, tsc, esc, topt, eopt, steps=7, corrupt=grad_times_inf({2}))
        tsd, esd = tsc.state_dict(), esc.state_dict()
        assert esd == tsd
        assert [type(v) for v in esd.values()] == [type(v) for v in tsd.values()]
        tsc2, esc2 = scalers(init_scale=8.0, growth_interval=100)
        tsc2.load_state_dict(tsd if source == "torch" else esd)
        esc2.load_state_dict(tsd if source == "torch" else esd)
        assert_scalers_equal(tsc2, esc2)
        train(pair, tsc2, esc2, topt, eopt, steps=7, corrupt=grad_times_inf({4}))


def test_load_state_dict_after_first_scale_fills_the_tensors() -> None:
    tsc, esc = scalers()
    tsc.scale(torch.ones(()))
    esc.scale(ec.ones(()))
    sd = {"scale": 1024.0, "growth_factor": 4.0, "backoff_factor": 0.25,
          "growth_interval": 7, "_growth_tracker": 5}
    tsc.load_state_dict(sd)
    esc.load_state_dict(sd)
    assert_scalers_equal(tsc, esc)
    assert esc.scale(ec.ones(())).item() == 1024.0
    assert (esc.get_growth_factor(), esc.get_backoff_factor(), esc.get_growth_interval()) == \
        (4.0, 0.25, 7)


def test_pickle_round_trip() -> None:
    pair = Pair()
    tsc, esc = scalers(growth_interval=2)
    topt, eopt = sgds(pair, lr=0.05)
    train(pair, tsc, esc, topt, eopt, steps=5)
    state = esc.__getstate__()
    assert state["_scale"] is None and state["_growth_tracker"] is None
    assert state["_init_scale"] == tsc.__getstate__()["_init_scale"]
    tsc2, esc2 = pickle.loads(pickle.dumps(tsc)), pickle.loads(pickle.dumps(esc))
    assert_scalers_equal(tsc2, esc2)
    train(pair, tsc2, esc2, topt, eopt, steps=3)


def test_getstate_mid_iteration_raises() -> None:
    pair = Pair()
    tsc, esc = scalers()
    topt, eopt = sgds(pair, lr=0.05)
    tsc.scale(pair.torch_loss()).backward()
    esc.scale(pair.ember_loss()).backward()
    tsc.step(topt)
    esc.step(eopt)
    assert_same_error(lambda: tsc.__getstate__(), lambda: esc.__getstate__())


# ------------------------------------------------------------------ scale()

def test_scale_nested_outputs() -> None:
    tsc, esc = scalers(init_scale=3.0)
    tvals = [torch.tensor([1.0, 2.0]), (torch.tensor(3.0), [torch.tensor([[4.0]])])]
    tout, eout = tsc.scale(tvals), esc.scale(to_ember(tvals))
    assert type(eout) is list and type(eout[1]) is tuple and type(eout[1][1]) is list
    np.testing.assert_array_equal(to_torch(eout)[1][1][0].numpy(), tout[1][1][0].numpy())
    assert [e.tolist() for e in [eout[0], eout[1][0]]] == [t.tolist() for t in [tout[0],
                                                                                  tout[1][0]]]
    lazy = esc.scale(t for t in [ec.tensor(1.0), ec.tensor(2.0)])
    assert not isinstance(lazy, (list, tuple))
    assert [v.item() for v in lazy] == [3.0, 6.0]
    assert esc.get_scale() == tsc.get_scale() == 3.0


def test_scale_is_differentiable_and_keeps_dtype() -> None:
    tsc, esc = scalers()
    for dtype in ("float32", "float64", "float16", "bfloat16"):
        t = torch.tensor([0.5, -1.25e-3], dtype=getattr(torch, dtype), requires_grad=True)
        e = em(t.detach()).requires_grad_()
        ts, es = tsc.scale(t), esc.scale(e)
        assert str(es.dtype) == str(ts.dtype)
        np.testing.assert_array_equal(th(es.detach()).float().numpy(),
                                      ts.detach().float().numpy())
        ts.sum().backward()
        es.sum().backward()
        np.testing.assert_array_equal(th(e.grad).float().numpy(), t.grad.float().numpy())


def test_scale_lazily_makes_scale_on_outputs_device() -> None:
    esc = GradScaler("cpu", init_scale=5.0)
    assert esc._scale is None and esc.get_scale() == 5.0
    esc.scale([ec.tensor(1.0)])
    assert esc._scale is not None and esc._scale.dtype == ec.float32
    assert esc._growth_tracker is not None and esc._growth_tracker.dtype == ec.int32


# ------------------------------------------------------------------- update

def test_update_with_new_scale() -> None:
    pair = Pair()
    tsc, esc = scalers(growth_interval=2)
    topt, eopt = sgds(pair, lr=0.05)
    train(pair, tsc, esc, topt, eopt, steps=3)
    for sc, lib in ((tsc, torch), (esc, ec)):
        sc.scale(lib.ones(()))
        sc.update(100.5)
    assert_scalers_equal(tsc, esc)
    source = ec.tensor(7.25)
    tsc.update(torch.tensor(7.25))
    esc.update(source)
    source.fill_(1.0)  # copied, not kept
    assert_scalers_equal(tsc, esc)
    train(pair, tsc, esc, topt, eopt, steps=3)


# ------------------------------------------------------------------- errors

def assert_same_error(torch_fn: Callable[[], Any], ember_fn: Callable[[], Any]) -> None:
    with pytest.raises(Exception) as t_err:
        torch_fn()
    with pytest.raises(Exception) as e_err:
        ember_fn()
    assert type(e_err.value) is type(t_err.value)
    assert str(e_err.value) == str(t_err.value)


def _scaled_backward(pair: Pair, tsc: Any, esc: GradScaler) -> None:
    tsc.scale(pair.torch_loss()).backward()
    esc.scale(pair.ember_loss()).backward()


def test_unscale_twice_raises() -> None:
    pair = Pair()
    tsc, esc = scalers()
    topt, eopt = sgds(pair, lr=0.1)
    _scaled_backward(pair, tsc, esc)
    tsc.unscale_(topt)
    esc.unscale_(eopt)
    assert_same_error(lambda: tsc.unscale_(topt), lambda: esc.unscale_(eopt))


def test_unscale_after_step_and_step_twice_raise() -> None:
    pair = Pair()
    tsc, esc = scalers()
    topt, eopt = sgds(pair, lr=0.1)
    _scaled_backward(pair, tsc, esc)
    tsc.step(topt)
    esc.step(eopt)
    assert_same_error(lambda: tsc.unscale_(topt), lambda: esc.unscale_(eopt))
    assert_same_error(lambda: tsc.step(topt), lambda: esc.step(eopt))
    tsc.update()
    esc.update()
    _scaled_backward(pair, tsc, esc)
    tsc.unscale_(topt)  # fine again after update
    esc.unscale_(eopt)


def test_step_with_closure_raises() -> None:
    pair = Pair()
    tsc, esc = scalers()
    topt, eopt = sgds(pair, lr=0.1)
    _scaled_backward(pair, tsc, esc)
    assert_same_error(lambda: tsc.step(topt, closure=lambda: None),
                      lambda: esc.step(eopt, closure=lambda: None))


def test_before_scale_raises() -> None:
    pair = Pair()
    tsc, esc = scalers()
    topt, eopt = sgds(pair, lr=0.1)
    assert_same_error(lambda: tsc.step(topt), lambda: esc.step(eopt))
    assert_same_error(lambda: tsc.unscale_(topt), lambda: esc.unscale_(eopt))
    assert_same_error(lambda: tsc.update(), lambda: esc.update())


def test_update_without_step_raises() -> None:
    tsc, esc = scalers()
    tsc.scale(torch.ones(()))
    esc.scale(ec.ones(()))
    assert_same_error(lambda: tsc.update(), lambda: esc.update())


def test_bad_factors_raise() -> None:
    for kwargs in ({"growth_factor": 1.0}, {"backoff_factor": 1.0}):
        assert_same_error(lambda: torch.amp.GradScaler("cpu", **kwargs),
                          lambda: GradScaler("cpu", **kwargs))


def test_unscale_fp16_grads_raises() -> None:
    tp = torch.nn.Parameter(torch.ones(3, dtype=torch.float16))
    ep = enn.Parameter(ec.ones(3, dtype=ec.float16))
    tsc, esc = scalers()
    topt, eopt = torch.optim.SGD([tp], lr=0.1), eoptim.SGD([ep], lr=0.1)
    tsc.scale(tp.float().sum()).backward()
    esc.scale(ep.float().sum()).backward()
    assert_same_error(lambda: tsc.step(topt), lambda: esc.step(eopt))


def test_bad_new_scale_and_state_dict_raise() -> None:
    tsc, esc = scalers()
    tsc.scale(torch.ones(()))
    esc.scale(ec.ones(()))
    assert_same_error(lambda: tsc.update(torch.ones(2)), lambda: esc.update(ec.ones(2)))
    assert_same_error(lambda: tsc.update(torch.ones((), requires_grad=True)),
                      lambda: esc.update(ec.ones((), requires_grad=True)))
    assert_same_error(lambda: tsc.load_state_dict({}), lambda: esc.load_state_dict({}))
    assert_same_error(lambda: tsc.scale(3), lambda: esc.scale(3))
    assert_same_error(lambda: tsc.scale([torch.ones(()), 2.0]),
                      lambda: esc.scale([ec.ones(()), 2.0]))


# ------------------------------------------------------------------ disabled

def test_disabled_is_a_no_op() -> None:
    pair = Pair()
    tsc, esc = scalers(enabled=False)
    topt, eopt = sgds(pair, lr=0.05, momentum=0.9)
    loss = pair.ember_loss()
    assert esc.scale(loss) is loss
    outs = [loss]
    assert esc.scale(outs) is outs
    train(pair, tsc, esc, topt, eopt, steps=5)
    assert not esc.is_enabled()
    assert esc.get_scale() == 1.0 and esc._get_growth_tracker() == 0
    assert esc.state_dict() == {}
    esc.load_state_dict({})
    esc.unscale_(eopt)
    esc.update()
    assert not hasattr(esc, "_scale")
    calls: list[tuple[Any, ...]] = []

    class Recorder:
        def step(self, *args: Any, **kwargs: Any) -> str:
            calls.append((args, kwargs))
            return "stepped"

    assert esc.step(Recorder(), 1, closure=None) == "stepped"
    assert calls == [((1,), {"closure": None})]
    assert pickle.loads(pickle.dumps(esc)).is_enabled() is False


def test_cuda_device_without_cuda_disables_with_a_warning() -> None:
    if cuda_available():
        assert GradScaler("cuda").is_enabled()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            alias = CudaGradScaler(init_scale=8.0)
        assert [w.category for w in caught] == [FutureWarning]
        assert alias.is_enabled() and alias.get_scale() == 8.0
        return
    with pytest.warns(UserWarning) as t_caught:
        tsc = torch.amp.GradScaler("cuda")
    with pytest.warns(UserWarning) as e_caught:
        esc = GradScaler("cuda")
    assert [str(w.message) for w in e_caught] == [str(w.message) for w in t_caught]
    assert not esc.is_enabled() and not tsc.is_enabled()
    assert esc.get_scale() == 1.0


def test_deprecated_cuda_alias_warns_like_torch() -> None:
    def messages(make: Callable[[], Any]) -> list[tuple[type, str]]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            make()
        return [(w.category, str(w.message)) for w in caught]

    assert messages(lambda: CudaGradScaler(enabled=False)) == \
        messages(lambda: torch.cuda.amp.GradScaler(enabled=False))
    with pytest.warns(FutureWarning):
        alias = CudaGradScaler(growth_interval=9, enabled=False)
    assert isinstance(alias, GradScaler) and alias._device == "cuda"


def test_getters_and_setters() -> None:
    esc = GradScaler("cpu", init_scale=2.0, growth_factor=3.0, backoff_factor=0.25,
                     growth_interval=11)
    assert (esc.get_scale(), esc.get_growth_factor(), esc.get_backoff_factor(),
            esc.get_growth_interval(), esc._get_growth_tracker()) == (2.0, 3.0, 0.25, 11, 0)
    esc.set_growth_factor(5.0)
    esc.set_backoff_factor(0.125)
    esc.set_growth_interval(1)
    assert esc.state_dict() == {"scale": 2.0, "growth_factor": 5.0, "backoff_factor": 0.125,
                                "growth_interval": 1, "_growth_tracker": 0}
    assert esc.is_enabled()


# --------------------------------------------- optimizers that handle scaling

def test_optimizer_taking_grad_scaler_kwarg() -> None:
    got: list[Any] = []

    def make(base: type) -> type:
        class Custom(base):  # type: ignore[misc, valid-type]
            _step_supports_amp_scaling = True

            def step(self, closure: Any = None, grad_scaler: Any = None) -> str:
                got.append(grad_scaler)
                return "custom"
        return Custom

    tsc, esc = scalers()
    tp, ep = torch.nn.Parameter(torch.ones(2)), enn.Parameter(ec.ones(2))
    topt = make(torch.optim.SGD)([tp], lr=0.1)
    eopt = make(eoptim.SGD)([ep], lr=0.1)
    tsc.scale(tp.sum()).backward()
    esc.scale(ep.sum()).backward()
    with pytest.warns(FutureWarning) as t_caught:
        assert tsc.step(topt) == "custom"
    with pytest.warns(FutureWarning) as e_caught:
        assert esc.step(eopt) == "custom"
    assert [str(w.message) for w in e_caught] == [str(w.message) for w in t_caught]
    assert got == [tsc, esc]


# --------------------------------------------------------------- primitives

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("inv", [1.0, 1 / 3, 2.0**-16, 0.0])
def test_non_finite_check_and_unscale_matches_torch(dtype: str, inv: float) -> None:
    g = torch.Generator().manual_seed(0)
    tdtype = getattr(torch, dtype)
    grads = [(torch.randn(s, generator=g, dtype=torch.float64) * 1e3).to(tdtype)
             for s in [(4, 5), (), (0, 3), (7,)]]
    for poison in (None, float("inf"), float("-inf"), float("nan")):
        tg = [t.clone() for t in grads]
        if poison is not None:
            tg[3][2] = poison
        eg = [em(t) for t in tg]
        tf, ef = torch.zeros(()), ec.zeros(())
        tinv = torch.tensor(inv, dtype=torch.float32)
        torch._amp_foreach_non_finite_check_and_unscale_(tg, tf, tinv)
        _amp_foreach_non_finite_check_and_unscale_(eg, ef, to_ember(tinv))
        assert ef.item() == tf.item() == (0.0 if poison is None else 1.0)
        for t, e in zip(tg, eg):
            np.testing.assert_array_equal(th(e).float().numpy(), t.float().numpy())
    tf, ef = torch.full((), 0.25), ec.full((), 0.25)
    torch._amp_foreach_non_finite_check_and_unscale_([torch.ones(2)], tf, torch.ones(()))
    _amp_foreach_non_finite_check_and_unscale_([ec.ones(2)], ef, ec.ones(()))
    assert ef.item() == tf.item() == 0.25  # left alone when all is finite


@pytest.mark.parametrize("factors", [(2.0, 0.5, 3), (1.1, 0.3, 2), (3.7, 0.77, 1),
                                     (1.0001, 0.9999, 4)])
def test_update_scale_matches_torch(factors: tuple[float, float, int]) -> None:
    rng = np.random.default_rng(1)
    ts, tt = torch.full((), 65536.123), torch.zeros((), dtype=torch.int32)
    es, et = ec.full((), 65536.123), ec.zeros((), dtype=ec.int32)
    for _ in range(60):
        found = float(rng.choice([0.0, 0.0, 0.0, 1.0, 2.0, 0.5]))
        out = _amp_update_scale_(es, et, ec.full((), found), *factors)
        torch._amp_update_scale_(ts, tt, torch.full((), found), *factors)
        assert out is es
        assert es.item() == ts.item() and et.item() == tt.item()


def test_primitive_errors_match_torch() -> None:
    s, gt, fi = torch.full((), 4.0), torch.zeros((), dtype=torch.int32), torch.zeros(())
    bad_updates = [(s.double(), gt.long(), fi.double()), (torch.ones(2), gt, fi),
                   (s, torch.ones(2, dtype=torch.int64), torch.ones(2)), (s, gt, torch.ones(2)),
                   (s.double(), gt, fi), (s, gt, fi.double())]
    for args in bad_updates:
        assert_same_error(lambda: torch._amp_update_scale_(*args, 2.0, 0.5, 3),
                          lambda: _amp_update_scale_(*to_ember(args), 2.0, 0.5, 3))
    grads = [torch.ones(2)]
    bad_unscales = [(torch.zeros(2).double(), s.double()), (torch.zeros(2), torch.ones(2)),
                    (fi, torch.ones(2).double()), (fi.double(), s), (fi, s.double())]
    for f, inv in bad_unscales:
        assert_same_error(
            lambda: torch._amp_foreach_non_finite_check_and_unscale_(grads, f, inv),
            lambda: _amp_foreach_non_finite_check_and_unscale_(to_ember(grads), to_ember(f),
                                                               to_ember(inv)))
    _amp_foreach_non_finite_check_and_unscale_([], ec.zeros(()), ec.ones(()))


def test_found_inf_is_set_not_added() -> None:
    ef = ec.zeros(())
    for _ in range(2):
        _amp_foreach_non_finite_check_and_unscale_([ec.tensor([math.inf])], ef, ec.ones(()))
    assert ef.item() == 1.0
