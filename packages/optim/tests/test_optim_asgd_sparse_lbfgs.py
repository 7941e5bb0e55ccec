"""ASGD, SparseAdam and LBFGS against torch.optim: paths, options, groups, float64, complex
parameters, state dicts, errors.

LBFGS runs many closure evaluations per step and its iteration amplifies rounding (a 1-ulp
change of torch's own starting weights moves torch's float32 result by ~1e-5 within two or
three steps). So it is compared tightly in float64 over many steps, at float32 rounding for
the first steps only, and over longer float32 runs by how close each framework stays to
torch's float64 answer; the discrete course of the iteration (evaluations, iterations) must
agree exactly throughout."""

import numpy as np
import pytest
import torch
from optim_oracle import (
    STEPS,
    Pair,
    assert_params_close,
    check_optimizer,
    check_state_dict_crossing,
    step_both,
    to_ember,
    to_torch,
)

import ember.core as ec
import ember.nn as enn
import ember.optim as eoptim

ASGD_PATHS = [{"foreach": False}, {"foreach": True}, {}]
ASGD_OPTIONS = [
    {"lr": 0.05},
    {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 3, "weight_decay": 0.1},
    {"lr": 0.1, "lambd": 1e-3, "t0": 0},
    {"lr": 0.05, "t0": 5, "maximize": True, "weight_decay": 0.05},
]
path_id = lambda p: ",".join(p) or "default"  # noqa: E731


def _params(lib, *shape_dtype):
    if lib is torch:
        return [torch.nn.Parameter(torch.ones(2, dtype=d)) for d in shape_dtype]
    return [enn.Parameter(ec.ones(2, dtype=getattr(ec, str(d)[6:]))) for d in shape_dtype]


def _raises_as_torch(make, expected_message):
    """``make(lib, optim)`` raises the same exception type and message in both frameworks."""
    with pytest.raises(Exception) as tinfo:
        make(torch, torch.optim)
    with pytest.raises(Exception) as einfo:
        make(ec, eoptim)
    assert type(einfo.value) is type(tinfo.value)
    assert str(einfo.value) == str(tinfo.value) == expected_message


# ----------------------------------------------------------------------------------- ASGD

@pytest.mark.parametrize("path", ASGD_PATHS, ids=path_id)
@pytest.mark.parametrize("options", ASGD_OPTIONS, ids=str)
def test_asgd_matches_torch(options, path):
    # gradient ascent grows the loss without bound: past ~12 steps torch's own two paths
    # part by more than float32 rounding, so maximize runs 10 steps
    check_optimizer("ASGD", {**options, **path}, steps=10 if options.get("maximize") else 20)


@pytest.mark.parametrize("path", ASGD_PATHS, ids=path_id)
def test_asgd_tensor_lr_groups_float64(path):
    check_optimizer("ASGD", {"lr": torch.tensor(0.05), "t0": 2, "lambd": 0.1, **path})
    check_optimizer("ASGD", {"lr": 0.05, "t0": 4, **path},
                    groups=[{"lr": 0.01, "t0": 1}, {"weight_decay": 0.1, "alpha": 0.6}])
    # eta, mu and step are float32 state whatever the parameters' dtype, and the multi-tensor
    # path computes eta in float32 where the per-parameter one uses Python floats: so the
    # default path (torch's per-parameter loop, Ember's multi-tensor path) agrees to float32
    # rounding only, the explicit paths to float64 rounding
    tight = {"rtol": 1e-12, "atol": 1e-13} if path else {}
    check_optimizer("ASGD", {"lr": 0.05, "t0": 3, "lambd": 0.01, "weight_decay": 0.01, **path},
                    dtype=torch.float64, **tight)


@pytest.mark.parametrize("path", ASGD_PATHS, ids=path_id)
def test_asgd_state_dict_crosses_between_frameworks(path):
    check_state_dict_crossing("ASGD", {"lr": 0.05, "t0": 3, "lambd": 0.01, **path})


def test_asgd_state_as_torch_keeps_it():
    pair = Pair()
    topt = torch.optim.ASGD(pair.torch_params, lr=0.05, t0=1)
    eopt = eoptim.ASGD(pair.ember_params, lr=0.05, t0=1)
    for _ in range(3):
        step_both(pair, topt, eopt, closure=False)
    for tp, ep in zip(pair.torch_params, pair.ember_params):
        ts, es = topt.state[tp], eopt.state[ep]
        assert list(es) == list(ts) == ["step", "eta", "mu", "ax"]
        for key in ("step", "eta", "mu"):
            assert es[key].dim() == 0 and str(es[key].dtype) == str(ts[key].dtype)
            np.testing.assert_allclose(float(es[key]), float(ts[key]), rtol=1e-6)


@pytest.mark.parametrize("path", ASGD_PATHS, ids=path_id)
def test_asgd_complex_parameters_as_torch(path):
    # torch steps complex parameters through view_as_real; the same real arithmetic here
    g = torch.Generator().manual_seed(0)
    tp = torch.randn(4, dtype=torch.complex64, generator=g).requires_grad_()
    ep = enn.Parameter(to_ember(tp.detach()))
    kwargs = {"lr": 0.1, "t0": 1, "weight_decay": 0.1, **path}
    topt, eopt = torch.optim.ASGD([tp], **kwargs), eoptim.ASGD([ep], **kwargs)
    for _ in range(5):
        grad = torch.randn(4, dtype=torch.complex64, generator=g)
        tp.grad, ep.grad = grad, to_ember(grad)
        topt.step()
        eopt.step()
        for t, e in ((tp, ep), (topt.state[tp]["ax"], eopt.state[ep]["ax"])):
            np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)


def test_asgd_differentiable_step_backpropagates_as_torch():
    grads = []
    for lib, optim in ((torch, torch.optim), (ec, eoptim)):
        w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        p = w.clone()
        p.grad = lib.tensor([0.3, 0.2, -0.4]) * w
        opt = optim.ASGD([p], lr=0.1, t0=0, weight_decay=0.1, differentiable=True)
        opt.step()
        opt.step()
        (p * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        grads.append(np.array(w.grad.numpy()))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


@pytest.mark.parametrize("kwargs, message", [
    ({"lr": -0.1}, "Invalid learning rate: -0.1"),
    ({"weight_decay": -1}, "Invalid weight_decay value: -1"),
    ({"lr": [0.1, 0.2]}, "Tensor lr must be 1-element"),
])
def test_asgd_bad_options_raise_as_torch(kwargs, message):
    def make(lib, optim):
        kw = {k: lib.tensor(v) if isinstance(v, list) else v for k, v in kwargs.items()}
        optim.ASGD(_params(lib, torch.float32), **kw)
    _raises_as_torch(make, message)


@pytest.mark.parametrize("kwargs, message", [
    ({"capturable": True, "foreach": False}, "If capturable=True, params, mus, etas, and "
     "state_steps must be on supported devices: ['cuda', 'xpu', 'hpu', 'privateuseone', "
     "'xla']."),
    ({"capturable": True, "foreach": True}, "If capturable=True, params, mus, etas, and "
     "state_steps must be on supported devices: ['cuda', 'xpu', 'hpu', 'privateuseone']."),
    ({"differentiable": True, "foreach": True}, "_foreach ops don't support autograd"),
])
def test_asgd_step_refuses_as_torch(kwargs, message):
    def make(lib, optim):
        (p,) = _params(lib, torch.float32)
        p.grad = lib.ones(2)
        optim.ASGD([p], **kwargs).step()
    _raises_as_torch(make, message)


# ------------------------------------------------------------------------------ SparseAdam

@pytest.mark.parametrize("kwargs, message", [
    ({"lr": 0.0}, "Invalid learning rate: 0.0"),
    ({"lr": [0.1, 0.2]}, "Tensor lr must be 1-element"),
    ({"eps": 0.0}, "Invalid epsilon value: 0.0"),
    ({"betas": (1.0, 0.999)}, "Invalid beta parameter at index 0: 1.0"),
    ({"betas": (-0.1, 0.999)}, "Invalid beta parameter at index 0: -0.1"),
    ({"betas": (0.9, 1.0)}, "Invalid beta parameter at index 1: 1.0"),
])
def test_sparse_adam_bad_options_raise_as_torch(kwargs, message):
    def make(lib, optim):
        kw = {k: lib.tensor(v) if isinstance(v, list) else v for k, v in kwargs.items()}
        optim.SparseAdam(_params(lib, torch.float32), **kw)
    _raises_as_torch(make, message)


def test_sparse_adam_refuses_complex_parameters_as_torch():
    def make(lib, optim):
        a, b, c = _params(lib, torch.float32, torch.complex64, torch.complex64)
        optim.SparseAdam([{"params": [a]}, {"params": [b, c], "lr": 0.1}])
    _raises_as_torch(make, "Complex params at indices [[1, 0], [1, 1]]: SparseAdam does not "
                           "support complex parameters")


def _embedding_run(nn, optim, make, kwargs, weight, batches):
    """An embedding of a few rows trained by SparseAdam (``nn.Embedding(sparse=True)``:
    torch's gradients sparse, Ember's dense, the rows looked up holding them); the weights
    after each step."""
    emb = nn.Embedding(*weight.shape, sparse=True)
    emb.weight.data = make(weight.copy())
    opt = optim.SparseAdam(emb.parameters(), **kwargs)
    course = []
    for ids in batches:
        opt.zero_grad()
        out = emb(make(np.array(ids)))
        ((out * out).sum() * 0.5).backward()
        opt.step()
        course.append(np.array(emb.weight.detach().numpy()))
    return course, opt


@pytest.mark.parametrize("kwargs", [{"lr": 0.1}, {"lr": 0.05, "betas": (0.8, 0.99)},
                                    {"lr": 0.02, "eps": 1e-3, "maximize": True}])
def test_sparse_adam_updates_the_rows_looked_up_as_torch(kwargs):
    """20 steps over batches that leave rows out: only the rows looked up (and their
    moments) move, as torch's SparseAdam moves them on its sparse gradients."""
    rng = np.random.default_rng(3)
    weight = rng.normal(0, 1, (7, 3)).astype(np.float32)
    batches = [rng.integers(0, 5, size=4).tolist() for _ in range(STEPS)]
    theirs, topt = _embedding_run(torch.nn, torch.optim, torch.from_numpy, kwargs, weight,
                                  batches)
    ours, eopt = _embedding_run(enn, eoptim, ec.from_numpy, kwargs, weight, batches)
    for step, (t, e) in enumerate(zip(theirs, ours)):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6, err_msg=f"step {step}")
    np.testing.assert_array_equal(ours[-1][5:], weight[5:])  # never looked up
    tsd, esd = topt.state_dict(), to_torch(eopt.state_dict())
    assert esd["param_groups"] == tsd["param_groups"]
    assert esd["state"][0]["step"] == tsd["state"][0]["step"] == STEPS
    for key in ("exp_avg", "exp_avg_sq"):
        torch.testing.assert_close(esd["state"][0][key], tsd["state"][0][key], rtol=1e-5,
                                   atol=1e-6)


def test_sparse_adam_state_dict_of_torch_sparse_run_crosses():
    emb = torch.nn.Embedding(5, 3, sparse=True)
    topt = torch.optim.SparseAdam(emb.parameters(), lr=0.1, betas=(0.8, 0.99))
    emb(torch.tensor([1, 3, 3])).sum().backward()
    topt.step()
    tsd = topt.state_dict()
    eopt = eoptim.SparseAdam([enn.Parameter(to_ember(emb.weight.detach()))], lr=0.1,
                             betas=(0.8, 0.99))
    assert eopt.state_dict()["param_groups"] == \
        torch.optim.SparseAdam([torch.nn.Parameter(emb.weight.detach().clone())], lr=0.1,
                               betas=(0.8, 0.99)).state_dict()["param_groups"]
    eopt.load_state_dict(to_ember(tsd))
    esd = to_torch(eopt.state_dict())
    assert esd["param_groups"] == tsd["param_groups"] and esd["state"][0]["step"] == 1
    for key in ("exp_avg", "exp_avg_sq"):
        torch.testing.assert_close(esd["state"][0][key], tsd["state"][0][key], rtol=0, atol=0)


# ----------------------------------------------------------------------------------- LBFGS

LBFGS_OPTIONS = [
    {"lr": 0.5, "history_size": 3, "max_iter": 5},
    {"lr": 0.3, "max_iter": 4, "history_size": 10, "max_eval": 3},
    {"line_search_fn": "strong_wolfe"},
    {"line_search_fn": "strong_wolfe", "history_size": 4, "max_iter": 7, "lr": 0.8},
    {"line_search_fn": "strong_wolfe", "max_iter": 3, "tolerance_change": 1e-3},
    {"max_iter": 6, "lr": 0.4, "tolerance_grad": 0.05},
]


def _assert_same_course(topt, eopt):
    ts, es = topt.state[topt._params[0]], eopt.state[eopt._params[0]]
    assert (es["func_evals"], es["n_iter"]) == (ts["func_evals"], ts["n_iter"])
    assert len(es.get("old_dirs", [])) == len(ts.get("old_dirs", []))


@pytest.mark.parametrize("options", LBFGS_OPTIONS, ids=str)
def test_lbfgs_float64_matches_torch_tightly(options):
    # the runs that converge to a loss near 1e-9 grow rounding to ~1e-10 by step 20 (as
    # torch's own run does when its weights move by one ulp), so they stop at step 8
    steps = 20 if options.get("line_search_fn") and "lr" not in options else 8
    topt, eopt = check_optimizer("LBFGS", options, closure=True, dtype=torch.float64,
                                 steps=steps, rtol=1e-9, atol=1e-10)
    _assert_same_course(topt, eopt)


@pytest.mark.parametrize("options", LBFGS_OPTIONS, ids=str)
def test_lbfgs_float32_first_steps_match_torch(options):
    options = {**options, "max_iter": min(options.get("max_iter", 20), 3)}
    topt, eopt = check_optimizer("LBFGS", options, closure=True, steps=2)
    _assert_same_course(topt, eopt)


@pytest.mark.parametrize("options", LBFGS_OPTIONS[:4], ids=str)
def test_lbfgs_float32_stays_as_close_to_float64_as_torch(options):
    """Eight full steps in float32: Ember's weights are no farther from torch's float64 run
    than a few times torch's own float32 weights are, and the course agrees exactly."""
    p32, p64 = Pair(dtype=torch.float32), Pair(dtype=torch.float64)
    t32, e32 = torch.optim.LBFGS(p32.torch_params, **options), \
        eoptim.LBFGS(p32.ember_params, **options)
    t64 = torch.optim.LBFGS(p64.torch_params, **options)
    for step in range(8):
        t32.step(p32.torch_closure(t32))
        e32.step(p32.ember_closure(e32))
        t64.step(p64.torch_closure(t64))
        _assert_same_course(t32, e32)
        for tp, ep, ref in zip(p32.torch_params, p32.ember_params, p64.torch_params):
            ref = ref.detach().numpy()
            torch_err = np.abs(tp.detach().numpy() - ref).max()
            ember_err = np.abs(np.array(ep.detach().numpy(), dtype=np.float64) - ref).max()
            assert ember_err <= 4 * torch_err + 1e-6, (step, ember_err, torch_err)


def test_lbfgs_tensor_lr():
    for options in ({"lr": torch.tensor(0.5), "max_iter": 3},
                    {"lr": torch.tensor([0.8]), "max_iter": 3, "line_search_fn": "strong_wolfe"}):
        check_optimizer("LBFGS", options, closure=True, steps=2)
        check_optimizer("LBFGS", options, closure=True, dtype=torch.float64, steps=8,
                        rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("options", [
    {"lr": 0.5, "history_size": 3, "max_iter": 3},
    {"line_search_fn": "strong_wolfe", "history_size": 5, "max_iter": 2},
    {"line_search_fn": "strong_wolfe", "history_size": 3, "max_iter": 3, "lr": 0.5},
], ids=str)
def test_lbfgs_state_dict_crosses_between_frameworks(options):
    """check_state_dict_crossing in float64 (20 float32 LBFGS steps drift past float32
    rounding, see above): 4 steps in one framework, its state dict loaded into a fresh
    optimizer of the other, 4 more steps in both."""
    for source in ("torch", "ember"):
        pair = Pair(seed=1, dtype=torch.float64)
        topt = torch.optim.LBFGS(pair.torch_params, **options)
        eopt = eoptim.LBFGS(pair.ember_params, **options)
        for _ in range(4):
            step_both(pair, topt, eopt, closure=True)
        tsd, esd = topt.state_dict(), eopt.state_dict()
        assert esd["param_groups"] == tsd["param_groups"]
        assert sorted(esd["state"][0]) == sorted(tsd["state"][0])
        for key in ("func_evals", "n_iter"):
            assert esd["state"][0][key] == tsd["state"][0][key]
        assert len(esd["state"][0]["old_dirs"]) == len(tsd["state"][0]["old_dirs"])
        fresh = Pair(seed=1, dtype=torch.float64)
        for t, e, tf, ef in zip(pair.torch_params, pair.ember_params, fresh.torch_params,
                                fresh.ember_params):
            with torch.no_grad():
                tf.copy_(t)
            ef.data = e.detach().clone()
        topt2 = torch.optim.LBFGS(fresh.torch_params, **options)
        eopt2 = eoptim.LBFGS(fresh.ember_params, **options)
        if source == "torch":
            topt2.load_state_dict(tsd)
            eopt2.load_state_dict(to_ember(tsd))
        else:
            topt2.load_state_dict(to_torch(esd))
            eopt2.load_state_dict(esd)
        for step in range(4, 8):
            step_both(fresh, topt2, eopt2, closure=True)
            assert_params_close(fresh, step, rtol=1e-9, atol=1e-10)
        _assert_same_course(topt2, eopt2)


def test_lbfgs_refusals_as_torch():
    def groups(lib, optim):
        a, b = _params(lib, torch.float32, torch.float32)
        optim.LBFGS([{"params": [a]}, {"params": [b]}])

    def bad_line_search(lib, optim):
        (p,) = _params(lib, torch.float32)
        opt = optim.LBFGS([p], line_search_fn="backtracking")

        def closure():
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss
        opt.step(closure)

    _raises_as_torch(groups, "LBFGS doesn't support per-parameter options (parameter groups)")
    _raises_as_torch(bad_line_search, "only 'strong_wolfe' is supported")
    _raises_as_torch(lambda lib, optim: optim.LBFGS(_params(lib, torch.float32), lr=-1.0),
                     "Invalid learning rate: -1.0")
    _raises_as_torch(lambda lib, optim: optim.LBFGS(_params(lib, torch.float32),
                                                    lr=lib.tensor([1.0, 2.0])),
                     "Tensor lr must be 1-element")


def _complex_lbfgs_run(lib, optim, dtype, options, steps):
    """LBFGS over two complex parameters (a 0-d one too), a real one and a complex one the
    loss leaves out (no gradient): the parameters and ``d`` after each step."""
    g = np.random.RandomState(5)
    cdtype, rdtype = {"complex64": (lib.complex64, lib.float32),
                      "complex128": (lib.complex128, lib.float64)}[dtype]
    values = [g.randn(3, 2) + 1j * g.randn(3, 2), np.array(0.5 - 0.25j), g.randn(4),
              g.randn(2) + 1j * g.randn(2)]
    ps = [lib.tensor(v, dtype=rdtype if v.dtype.kind == "f" else cdtype, requires_grad=True)
          for v in values]
    centres = [lib.tensor(g.randn(*v.shape) + 1j * g.randn(*v.shape), dtype=cdtype)
               for v in values[:2]]
    opt = optim.LBFGS(ps, **options)

    def closure():
        opt.zero_grad()
        loss = ps[2].pow(2).sum() * 0.5
        for p, c in zip(ps[:2], centres):
            diff = (p - c).abs()
            loss = loss + (diff ** 2).sum() + 0.25 * (diff ** 4).sum()
        loss.backward()
        return loss

    course = []
    for _ in range(steps):
        opt.step(closure)
        state = opt.state[ps[0]]
        course.append(([p.detach().numpy().copy() for p in ps], state["d"].numpy().copy(),
                       (state["func_evals"], state["n_iter"], len(state["old_dirs"]))))
    return course


@pytest.mark.parametrize("dtype, steps, rtol, atol", [("complex128", 20, 1e-9, 1e-10),
                                                      ("complex64", 2, 1e-5, 1e-6)])
@pytest.mark.parametrize("options", LBFGS_OPTIONS[:4], ids=str)
def test_lbfgs_complex_parameters_as_torch(options, dtype, steps, rtol, atol):
    # torch flattens a complex parameter (and its gradient) as its interleaved real and
    # imaginary components, so dot products and line searches run over those real numbers
    if dtype == "complex64":
        options = {**options, "max_iter": min(options.get("max_iter", 20), 3)}
    expected = _complex_lbfgs_run(torch, torch.optim, dtype, options, steps)
    actual = _complex_lbfgs_run(ec, eoptim, dtype, options, steps)
    for (e_params, e_d, e_course), (a_params, a_d, a_course) in zip(expected, actual):
        assert a_course == e_course
        assert a_d.shape == e_d.shape and a_d.dtype == e_d.dtype
        np.testing.assert_allclose(a_d, e_d, rtol=rtol, atol=atol)
        for a, e in zip(a_params, e_params):
            assert a.dtype == e.dtype
            np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)
