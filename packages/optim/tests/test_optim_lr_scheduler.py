"""ember.optim.lr_scheduler against torch.optim.lr_scheduler: the learning rates (and cycled
momentums) after every step equal torch's exactly, SGD's parameters agree, state dicts cross
between the frameworks, and warnings and errors are torch's."""

import math
import warnings
from collections import Counter

import pytest
import torch
import torch.optim.lr_scheduler as TL
from optim_oracle import Pair, assert_params_close, lrs, step_both, to_ember, to_torch

import ember.core as ec
import ember.nn as enn
import ember.optim as eoptim
import ember.optim.lr_scheduler as EL

STEPS = 25
SGD = {"lr": 0.1, "momentum": 0.9}
TWO_GROUPS = [{"lr": 0.1}, {"lr": 0.05, "momentum": 0.5}]


class Scale:
    """A callable object (not a function): its ``__dict__`` goes into state dicts."""

    def __init__(self, base: float) -> None:
        self.base = base

    def __call__(self, x: float) -> float:
        return self.base ** x


def lam(e):
    return 0.95 ** e


# (id, factory(L, optimizer) -> scheduler, groups, metrics for ReduceLROnPlateau)
PLATEAU = [1.0, 0.9, 0.9, 0.91, 0.9, 0.95, 0.89, 0.89, 0.9, 0.9, 0.9, 0.88, 0.7, 0.7, 0.7,
           0.7, 0.7, 0.7, 0.71, 0.69, 0.69, 0.69, 0.69, 0.69, 0.69]
CASES = [
    ("lambda", lambda L, o: L.LambdaLR(o, lam), None),
    ("lambda-list", lambda L, o: L.LambdaLR(o, [lam, lambda e: 1 / (e + 1)]), TWO_GROUPS),
    ("multiplicative", lambda L, o: L.MultiplicativeLR(o, lambda e: 0.9 if e < 10 else 1.05),
     None),
    ("step", lambda L, o: L.StepLR(o, step_size=3, gamma=0.5), None),
    ("step-1", lambda L, o: L.StepLR(o, 1, 0.9), TWO_GROUPS),
    ("multistep", lambda L, o: L.MultiStepLR(o, [2, 5, 5, 9], gamma=0.3), None),
    ("constant", lambda L, o: L.ConstantLR(o, factor=0.5, total_iters=4), None),
    ("constant-default", lambda L, o: L.ConstantLR(o), TWO_GROUPS),
    ("linear", lambda L, o: L.LinearLR(o, start_factor=0.25, total_iters=10), None),
    ("linear-down", lambda L, o: L.LinearLR(o, 1.0, 0.1, 7), TWO_GROUPS),
    ("exponential", lambda L, o: L.ExponentialLR(o, 0.9), None),
    ("polynomial", lambda L, o: L.PolynomialLR(o, total_iters=12, power=2.0), None),
    ("polynomial-1", lambda L, o: L.PolynomialLR(o), TWO_GROUPS),
    ("cosine", lambda L, o: L.CosineAnnealingLR(o, T_max=7, eta_min=0.001), None),
    ("cosine-10", lambda L, o: L.CosineAnnealingLR(o, 10), TWO_GROUPS),
    ("warm-restarts", lambda L, o: L.CosineAnnealingWarmRestarts(o, 4, T_mult=2, eta_min=0.01),
     None),
    ("warm-restarts-1", lambda L, o: L.CosineAnnealingWarmRestarts(o, 3), TWO_GROUPS),
    ("cyclic", lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=4), None),
    ("cyclic-tri2", lambda L, o: L.CyclicLR(o, 0.01, 0.2, 3, 2, mode="triangular2",
                                            base_momentum=0.7, max_momentum=0.95), TWO_GROUPS),
    ("cyclic-exp", lambda L, o: L.CyclicLR(o, [0.01, 0.02], [0.1, 0.3], 5, mode="exp_range",
                                           gamma=0.9), TWO_GROUPS),
    ("cyclic-fn", lambda L, o: L.CyclicLR(o, 0.01, 0.1, 3, scale_fn=Scale(0.97),
                                          scale_mode="iterations", cycle_momentum=False), None),
    ("onecycle", lambda L, o: L.OneCycleLR(o, max_lr=0.5, total_steps=STEPS + 1), None),
    ("onecycle-linear", lambda L, o: L.OneCycleLR(o, [0.2, 0.1], epochs=5, steps_per_epoch=6,
                                                  anneal_strategy="linear"), TWO_GROUPS),
    ("onecycle-3phase", lambda L, o: L.OneCycleLR(o, 0.3, STEPS + 1, pct_start=0.25,
                                                  three_phase=True, div_factor=10.0,
                                                  final_div_factor=100.0), None),
    ("onecycle-nomomentum", lambda L, o: L.OneCycleLR(o, 0.3, STEPS, cycle_momentum=False),
     None),
    ("sequential", lambda L, o: L.SequentialLR(
        o, [L.ConstantLR(o, 0.1, total_iters=2), L.ExponentialLR(o, 0.9)], milestones=[2]),
     None),
    ("sequential-3", lambda L, o: L.SequentialLR(
        o, [L.LinearLR(o, 0.2, total_iters=5), L.CosineAnnealingLR(o, 8),
            L.StepLR(o, 2, 0.5)], milestones=[5, 13]), TWO_GROUPS),
    ("chained", lambda L, o: L.ChainedScheduler(
        [L.ConstantLR(o, 0.1, total_iters=3), L.ExponentialLR(o, 0.9)]), None),
    ("chained-3", lambda L, o: L.ChainedScheduler(
        [L.LinearLR(o, 0.5, total_iters=4), L.MultiStepLR(o, [6, 12], 0.5),
         L.CosineAnnealingLR(o, 9, 0.01)], o), TWO_GROUPS),
    ("plateau", lambda L, o: L.ReduceLROnPlateau(o, patience=2), None),
    ("plateau-max-abs", lambda L, o: L.ReduceLROnPlateau(
        o, "max", factor=0.5, patience=1, threshold=0.01, threshold_mode="abs", cooldown=2,
        min_lr=[0.03, 0.01]), TWO_GROUPS),
    ("plateau-min-abs", lambda L, o: L.ReduceLROnPlateau(
        o, factor=0.3, patience=0, threshold=0.05, threshold_mode="abs", min_lr=0.002,
        eps=1e-3), None),
    ("plateau-max-rel", lambda L, o: L.ReduceLROnPlateau(o, "max", 0.2, 1, threshold=0.1,
                                                         cooldown=1), None),
]


def make(factory, groups=None, sgd=SGD, lr=None):
    """The pair, torch and Ember SGD over it, and the two schedulers."""
    pair = Pair()
    tparams, eparams = pair.groups(groups)
    kwargs = dict(sgd, **({"lr": lr} if lr is not None else {}))
    topt = torch.optim.SGD(tparams, **kwargs)
    eopt = eoptim.SGD(eparams, **to_ember(kwargs))
    return pair, topt, eopt, factory(TL, topt), factory(EL, eopt)


def step_sched(sched, i):
    if isinstance(sched, (TL.ReduceLROnPlateau, EL.ReduceLROnPlateau)):
        sched.step(PLATEAU[i % len(PLATEAU)])
    else:
        sched.step()


def same_lrs(topt, eopt, tsched, esched):
    assert lrs(eopt) == lrs(topt)
    assert [g.get("momentum") for g in eopt.param_groups] == \
        [g.get("momentum") for g in topt.param_groups]
    assert [float(v) for v in esched.get_last_lr()] == [float(v) for v in tsched.get_last_lr()]
    assert getattr(esched, "last_epoch", None) == getattr(tsched, "last_epoch", None)


def plain(state):
    """A state dict with the tensors as numbers, comparable across frameworks."""
    if isinstance(state, (torch.Tensor, ec.Tensor)):
        return ("tensor", float(state))
    if isinstance(state, dict):
        return {k: plain(v) for k, v in state.items()}
    if isinstance(state, (list, tuple)):
        return type(state)(plain(v) for v in state)
    return state


@pytest.mark.parametrize("factory, groups", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_lrs_and_params_match_torch(factory, groups):
    pair, topt, eopt, tsched, esched = make(factory, groups)
    same_lrs(topt, eopt, tsched, esched)
    for i in range(STEPS):
        step_both(pair, topt, eopt, closure=False)
        step_sched(tsched, i)
        step_sched(esched, i)
        same_lrs(topt, eopt, tsched, esched)
        assert_params_close(pair, i)
    assert plain(esched.state_dict()) == plain(tsched.state_dict())


@pytest.mark.parametrize("factory, groups", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_state_dict_crosses_between_frameworks(factory, groups):
    for source in ("torch", "ember"):
        pair, topt, eopt, tsched, esched = make(factory, groups)
        for i in range(STEPS // 2):
            step_both(pair, topt, eopt, closure=False)
            step_sched(tsched, i)
            step_sched(esched, i)
        _, topt2, eopt2, tsched2, esched2 = make(factory, groups)
        if source == "torch":
            osd, ssd = topt.state_dict(), tsched.state_dict()
        else:
            osd, ssd = to_torch(eopt.state_dict()), to_torch(esched.state_dict())
        topt2.load_state_dict(osd)
        eopt2.load_state_dict(to_ember(osd))
        esched2.load_state_dict(to_ember(ssd))  # (CyclicLR's load pops a key, as torch's)
        tsched2.load_state_dict(ssd)
        same_lrs(topt2, eopt2, tsched2, esched2)
        for i in range(STEPS // 2, STEPS):
            for opt, sched in ((topt, tsched), (topt2, tsched2), (eopt2, esched2)):
                opt.step()
                step_sched(sched, i)
            same_lrs(topt2, eopt2, tsched2, esched2)
            assert lrs(topt2) == lrs(topt)  # the restored run goes on as the original


TENSOR_CASES = ["lambda", "multiplicative", "step", "multistep", "constant", "linear",
                "exponential", "polynomial", "cosine", "warm-restarts", "sequential",
                "chained", "plateau"]


@pytest.mark.parametrize("name", TENSOR_CASES)
def test_tensor_lr_stays_a_tensor_filled_in_place(name):
    factory = dict((c[0], c[1]) for c in CASES)[name]
    pair, topt, eopt, tsched, esched = make(factory, lr=torch.tensor(0.1))
    elr = eopt.param_groups[0]["lr"]
    for i in range(STEPS):
        step_both(pair, topt, eopt, closure=False)
        step_sched(tsched, i)
        step_sched(esched, i)
        same_lrs(topt, eopt, tsched, esched)
        assert eopt.param_groups[0]["lr"] is elr
        last = esched.get_last_lr()[0]
        assert isinstance(last, ec.Tensor) and last is not elr
        assert_params_close(pair, i)


def test_warm_restarts_fractional_epochs():
    epochs = [0, 0.3, 0.7, 1.0, 1.5, 2.9, 3.0, 3.4, 5.5, 7.2, 7.0, 11.9, 12.0, 12.5, 20.25,
              27.99, 28.0, 2.5, 40.0, 60.5, 0.1, 13.0, 100.0, 6.0, 44.4]
    for t_mult in (1, 2, 3):
        _, topt, eopt, tsched, esched = make(
            lambda L, o, m=t_mult: L.CosineAnnealingWarmRestarts(o, 3, m, eta_min=0.001))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for e in epochs:
                topt.step()
                eopt.step()
                tsched.step(e)
                esched.step(e)
                same_lrs(topt, eopt, tsched, esched)
                assert (esched.T_cur, esched.T_i) == (tsched.T_cur, tsched.T_i)


@pytest.mark.parametrize("name", ["step", "multistep", "constant", "linear", "exponential",
                                  "polynomial", "cosine", "lambda"])
def test_step_with_epoch_uses_the_closed_form(name):
    factory = dict((c[0], c[1]) for c in CASES)[name]
    _, topt, eopt, tsched, esched = make(factory)
    for e in [1, 2, 4, 3, 9, 10, 6, 15, 0, 20, 14]:
        topt.step()
        eopt.step()
        for sched in (tsched, esched):
            with pytest.warns(UserWarning) as record:
                sched.step(e)
            assert [str(w.message) for w in record] == [EL.EPOCH_DEPRECATION_WARNING]
        same_lrs(topt, eopt, tsched, esched)


def warnings_of(fn):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)) for w in record]


def both(fn):
    """``fn(L, optimizer)``'s warnings in torch and in Ember."""
    out = []
    for L, optim, param in ((TL, torch.optim, lambda: torch.nn.Parameter(torch.ones(2))),
                            (EL, eoptim, lambda: enn.Parameter(ec.ones(2)))):
        opt = optim.SGD([param()], lr=0.1, momentum=0.9)
        out.append(warnings_of(lambda: fn(L, opt)))
    return out


def test_scheduler_before_optimizer_warns_as_torch():
    def early(L, opt):
        sched = L.StepLR(opt, 2)
        sched.step()
        opt.step()
        sched.step()

    def in_order(L, opt):
        sched = L.ExponentialLR(opt, 0.9)
        for _ in range(3):
            opt.step()
            sched.step()

    def overridden(L, opt):
        sched = L.StepLR(opt, 2)
        opt.step = lambda *a, **k: None
        opt.step()
        sched.step()

    def two_schedulers(L, opt):
        s1, s2 = L.StepLR(opt, 2), L.ExponentialLR(opt, 0.9)
        opt.step()
        s1.step()
        s2.step()

    t, e = both(early)
    assert t == e and len(t) == 1 and "Detected call of `lr_scheduler.step()` before " \
        "`optimizer.step()`" in t[0][1]
    assert both(in_order) == [[], []]
    t, e = both(overridden)
    assert t == e and len(t) == 1 and t[0][1].startswith("Seems like `optimizer.step()` has")
    assert both(two_schedulers) == [[], []]


def test_get_lr_outside_step_warns_and_optimizer_step_stays_hooked():
    t, e = both(lambda L, opt: L.StepLR(opt, 2).get_lr())
    assert t == e == [(UserWarning, "To get the last learning rate computed by the "
                                    "scheduler, please use `get_last_lr()`.")]
    calls = []
    opt = eoptim.SGD([enn.Parameter(ec.ones(2))], lr=0.1)
    opt.register_step_post_hook(lambda *a: calls.append(1))
    EL.StepLR(opt, 2)
    opt.step()
    assert calls == [1] and opt._opt_called


def test_lr_lambda_objects_state_dict_and_aliases():
    for L, optim, p in ((TL, torch.optim, torch.nn.Parameter(torch.ones(2))),
                        (EL, eoptim, enn.Parameter(ec.ones(2)))):
        sched = L.LambdaLR(optim.SGD([p], lr=0.1), [Scale(0.9)])
        sd = sched.state_dict()
        assert sd["lr_lambdas"] == [{"base": 0.9}]
        sched2 = L.LambdaLR(optim.SGD([p], lr=0.1), [Scale(0.5)])
        sched2.load_state_dict(sd)
        assert sched2.lr_lambdas[0].base == 0.9
        assert issubclass(L._LRScheduler, L.LRScheduler) and L._LRScheduler.__name__ == \
            "_LRScheduler"
    assert EL.MultiStepLR(eoptim.SGD([p], lr=0.1), [3, 3, 1]).milestones == Counter([3, 3, 1])


def step_n(sched, n):
    for _ in range(n):
        sched.step()


ERRORS = [
    (lambda L, o: L.StepLR(object(), 2), TypeError),
    (lambda L, o: L.StepLR(o, 2, last_epoch=3), KeyError),
    (lambda L, o: L.LambdaLR(o, [lam, lam]), ValueError),
    (lambda L, o: L.MultiplicativeLR(o, 0.9), TypeError),
    (lambda L, o: L.ConstantLR(o, factor=1.5), ValueError),
    (lambda L, o: L.LinearLR(o, start_factor=0), ValueError),
    (lambda L, o: L.LinearLR(o, end_factor=1.5), ValueError),
    (lambda L, o: L.SequentialLR(o, [], []), ValueError),
    (lambda L, o: L.SequentialLR(o, [L.StepLR(o, 2)], [3]), ValueError),
    (lambda L, o: L.SequentialLR(o, [L.ReduceLROnPlateau(o)], []), ValueError),
    (lambda L, o: L.SequentialLR(o, [1], []), TypeError),
    (lambda L, o: L.ChainedScheduler([]), ValueError),
    (lambda L, o: L.ChainedScheduler([L.StepLR(type(o)(o.param_groups[0]["params"]), 2)], o),
     ValueError),
    (lambda L, o: L.ReduceLROnPlateau(o, factor=1.0), ValueError),
    (lambda L, o: L.ReduceLROnPlateau(o, mode="avg"), ValueError),
    (lambda L, o: L.ReduceLROnPlateau(o, threshold_mode="x"), ValueError),
    (lambda L, o: L.ReduceLROnPlateau(o, min_lr=[0.1, 0.2]), ValueError),
    (lambda L, o: L.CyclicLR(o, 0.01, 0.1, mode="bad"), ValueError),
    (lambda L, o: L.CyclicLR(o, [0.01, 0.02], 0.1), ValueError),
    (lambda L, o: L.CosineAnnealingWarmRestarts(o, 0), ValueError),
    (lambda L, o: L.CosineAnnealingWarmRestarts(o, 2, T_mult=1.5), ValueError),
    (lambda L, o: L.CosineAnnealingWarmRestarts(o, 2, eta_min="0"), ValueError),
    (lambda L, o: L.CosineAnnealingWarmRestarts(o, 2).step(-1), ValueError),
    (lambda L, o: L.OneCycleLR(o, 0.1), ValueError),
    (lambda L, o: L.OneCycleLR(o, 0.1, total_steps=0), ValueError),
    (lambda L, o: L.OneCycleLR(o, 0.1, epochs=0, steps_per_epoch=2), ValueError),
    (lambda L, o: L.OneCycleLR(o, 0.1, epochs=2, steps_per_epoch=1.5), ValueError),
    (lambda L, o: L.OneCycleLR(o, 0.1, 10, pct_start=1), ValueError),
    (lambda L, o: L.OneCycleLR(o, 0.1, 10, anneal_strategy="exp"), ValueError),
    (lambda L, o: step_n(L.OneCycleLR(o, 0.1, 2), 3), ValueError),
]


@pytest.mark.parametrize("fn, exc", ERRORS)
def test_errors_as_torch(fn, exc):
    messages = []
    for L, optim, p in ((TL, torch.optim, torch.nn.Parameter(torch.ones(2))),
                        (EL, eoptim, enn.Parameter(ec.ones(2)))):
        opt = optim.SGD([p], lr=0.1, momentum=0.9)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(exc) as info:
                fn(L, opt)
        assert type(info.value) is exc
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_cycle_momentum_needs_momentum_and_plateau_groups_added():
    class NoMomentum(eoptim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

        def step(self, closure=None):
            return None

    with pytest.raises(ValueError, match="optimizer must support momentum or beta1 with "
                                         "`cycle_momentum` option enabled"):
        EL.CyclicLR(NoMomentum([enn.Parameter(ec.ones(2))]), 0.01, 0.1)
    opt = eoptim.SGD([enn.Parameter(ec.ones(2))], lr=0.1)
    sched = EL.ReduceLROnPlateau(opt, patience=0, min_lr=[0.0])
    opt.add_param_group({"params": [enn.Parameter(ec.ones(1))]})
    sched.step(1.0)
    with pytest.raises(RuntimeError, match=r"The number of param groups in the `optimizer` "
                                           r"\(2\) differs from when `ReduceLROnPlateau` was "
                                           r"initialized \(1\)"):
        sched.step(2.0)
    assert math.isinf(EL.ReduceLROnPlateau(opt).best)


@pytest.mark.parametrize("make_sched", [
    lambda L, o: L.CyclicLR(o, 0.01, 0.1, 3, mode="triangular2", base_momentum=0.8,
                            max_momentum=0.95),
    lambda L, o: L.OneCycleLR(o, 0.2, STEPS + 1, three_phase=True),
], ids=["cyclic", "onecycle"])
def test_cycle_momentum_cycles_beta1(make_sched):
    """An optimizer with ``betas`` (as Adam's) gets its first beta cycled."""
    def betas_optimizer(optim, param):
        class WithBetas(optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, {"lr": 0.1, "betas": (0.9, 0.999)})

            def step(self, closure=None):
                return None
        return WithBetas([param])

    topt = betas_optimizer(torch.optim, torch.nn.Parameter(torch.ones(2)))
    eopt = betas_optimizer(eoptim, enn.Parameter(ec.ones(2)))
    tsched, esched = make_sched(TL, topt), make_sched(EL, eopt)
    for _ in range(STEPS):
        topt.step(), eopt.step()
        tsched.step(), esched.step()
        assert lrs(eopt) == lrs(topt)
        assert eopt.param_groups[0]["betas"] == topt.param_groups[0]["betas"]
        assert eopt.param_groups[0]["betas"][1] == 0.999
