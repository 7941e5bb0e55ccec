"""The fused optimizer updates against torch's CPU kernels: many steps of every option,
bit for bit, in float32, float64, float16 and bfloat16 over tensors of odd sizes; the
layouts, errors, version counters, what a dispatch mode sees, the meta device; the native
loops against their numpy reference at one thread and two; and an AdamW step written
with Ember's ordinary in-place ops."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from dispatch_oracle import Recorder, replay, same

import ember.core as ember
from ember.core import native
from ember.core.dispatch import REGISTRY
from ember.core.dispatch_modes import TorchDispatchMode

SIZES = ((1,), (3,), (7,), (1000,), (1015,), (4097,))
DTYPES = ("float32", "float64", "float16", "bfloat16")
ADAM = dict(lr=1e-2, beta1=0.9, beta2=0.999, weight_decay=0.1, eps=1e-8, amsgrad=False,
            maximize=False)
SGD = dict(weight_decay=0.0, momentum=0.0, lr=0.1, dampening=0.0, nesterov=False,
           maximize=False)
needs_compiler = pytest.mark.skipif(native._compiler() is None, reason="no C compiler")


def _pairs(shapes, dtype, seed, scale=1.0, low=None):
    """Random tensors of ``shapes`` in both frameworks, equal values: (ember's, torch's)."""
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(low, scale, s) if low is not None else rng.normal(0, scale, s)
              for s in shapes]
    theirs = [torch.from_numpy(a.astype(np.float32)).to(getattr(torch, dtype)) for a in arrays]
    ours = [ember.from_numpy(t.float().numpy()).to(getattr(ember, dtype)) for t in theirs]
    return ours, theirs


def _bits(t):
    """The bits of a tensor of either framework, half types widened (exactly) to float32."""
    half = str(t.dtype).split(".")[-1] in ("float16", "bfloat16")
    a = (t.detach().float() if half else t.detach()).numpy()
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


def assert_same_bits(ours, theirs):
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_array_equal(_bits(a), _bits(b), err_msg=f"tensor {i}")


def _adam_step(m, name, lists, steps, grad_scale, found_inf, lr, options):
    for s in steps:
        s.add_(1)  # the caller counts the steps, as torch's optimizers do
    extra = {k: m.full((), v) for k, v in (("grad_scale", grad_scale),
                                            ("found_inf", found_inf)) if v is not None}
    getattr(m, name)(*lists, steps, **{**options, "lr": lr}, **extra)


ADAM_OPTIONS = [{}, {"amsgrad": True}, {"maximize": True}, {"beta1": 0.3},
                {"weight_decay": 0.0}, {"grad_scale": 1024.0}, {"tensor_lr": True},
                {"found_inf": 0.0}, {"amsgrad": True, "maximize": True, "grad_scale": 8.0}]


@pytest.mark.parametrize("name", ["_fused_adam_", "_fused_adamw_"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("options", ADAM_OPTIONS, ids=str)
def test_adam_steps_match_torch_bit_for_bit(name, dtype, options):
    """Ten steps; beta1 = 0.3 takes the first moment's lerp from its other end. Every
    element agrees, torch's scalar remainder included (the last elements of each tensor)."""
    options = dict(options)
    scale, found_inf = options.pop("grad_scale", None), options.pop("found_inf", None)
    tensor_lr = options.pop("tensor_lr", False)
    options = {**ADAM, **options}
    state = {}
    for k, seed, low in (("params", 0, None), ("exp_avgs", 1, None), ("exp_avg_sqs", 2, 0.0),
                         ("maxes", 3, 0.0)):
        state[k] = _pairs(SIZES, dtype, seed, 0.1 if k != "params" else 1.0, low)
    if not options["amsgrad"]:
        state["maxes"] = ([], [])
    steps = [ember.zeros(()) for _ in SIZES], [torch.zeros(()) for _ in SIZES]
    for step in range(10):
        grads = _pairs(SIZES, dtype, 10 + step, scale or 1.0)
        for side, m in enumerate((ember, torch)):
            lists = (state["params"][side], grads[side], state["exp_avgs"][side],
                     state["exp_avg_sqs"][side], state["maxes"][side])
            lr = m.tensor(options["lr"]) if tensor_lr else options["lr"]
            _adam_step(m, name, lists, steps[side], scale, found_inf, lr, options)
        assert_same_bits(grads[0], grads[1])
    for k in state:
        assert_same_bits(*state[k])


SGD_OPTIONS = [{}, {"momentum": 0.9}, {"momentum": 0.9, "dampening": 0.1},
               {"momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
               {"weight_decay": 0.1}, {"maximize": True, "momentum": 0.5},
               {"momentum": 0.9, "grad_scale": 64.0}, {"momentum": 0.9, "tensor_lr": True}]


def _sgd_steps(dtype, options, sizes=SIZES, compute=None):
    """Ten SGD steps in both frameworks (torch's in ``compute``'s dtype where given,
    on upcast copies rounded back each step); the buffers start at the first gradients."""
    options = dict(options)
    scale, tensor_lr = options.pop("grad_scale", None), options.pop("tensor_lr", False)
    options = {**SGD, **options}
    params = _pairs(sizes, dtype, 0)
    buffers = _pairs(sizes, dtype, 1) if options["momentum"] else ([], [])
    for step in range(10):
        grads = _pairs(sizes, dtype, 10 + step, scale or 1.0)
        for side, m in enumerate((ember, torch)):
            p, g, b = params[side], grads[side], buffers[side]
            if compute is not None and m is torch:
                p, g, b = ([t.to(compute) for t in ts] for ts in (p, g, b))
            extra = {"grad_scale": m.full((), scale)} if scale is not None else {}
            lr = m.tensor(options["lr"]) if tensor_lr else options["lr"]
            m._fused_sgd_(p, g, b, **{**options, "lr": lr}, is_first_step=step == 0, **extra)
            if compute is not None and m is torch:
                for ours, theirs in ((params[1], p), (grads[1], g), (buffers[1], b)):
                    for target, value in zip(ours, theirs):
                        target.copy_(value)
        assert_same_bits(grads[0], grads[1])
    assert_same_bits(*params)
    assert_same_bits(*buffers)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", SGD_OPTIONS, ids=str)
def test_sgd_steps_match_torch_bit_for_bit(dtype, options):
    _sgd_steps(dtype, options)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("options", SGD_OPTIONS, ids=str)
def test_half_sgd_steps_are_torchs_float32_steps_rounded(dtype, options):
    """torch 2.13's CPU kernel for float16/bfloat16 SGD leaves all but the last elements of
    each tensor unchanged (its vector loop stores no parameter, and reads the momentum
    buffers as float32). Ember computes in float32 and rounds once, as torch's remainder
    loop does: torch's float32 step on upcast copies, rounded. (These sizes have fewer
    than 8 elements past their last 16: the float32 kernel's remainder is the half one's.)"""
    _sgd_steps(dtype, options, ((1,), (3,), (7,), (1015,), (1025,), (4097,)), torch.float32)


def test_found_inf_skips_the_whole_step_only_at_exactly_one():
    for value in (1.0, 0.5):
        p, g, m, v = (_pairs(SIZES, "float32", seed)[0] for seed in range(4))
        before = [t.clone() for t in p + g + m + v]
        ember._fused_adamw_(p, g, m, v, [], [ember.ones(()) for _ in SIZES], **ADAM,
                            grad_scale=ember.full((), 2.0), found_inf=ember.full((), value))
        unchanged = all(bool((a == b).all()) for a, b in zip(p + g + m + v, before))
        assert unchanged == (value == 1.0)


# ----------------------------------------------------------------------------- Adagrad

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kwargs", [
    {"lr": 0.1, "lr_decay": 0.03, "weight_decay": 0.07, "eps": 1e-3, "maximize": True},
    {"lr": 0.05, "lr_decay": 0.0, "weight_decay": 0.0, "eps": 1e-10, "maximize": False},
])
@pytest.mark.parametrize("extra", ["none", "grad_scale", "found_inf", "tensor_lr"])
def test_fused_adagrad_primitive_is_bitwise_torch(dtype, kwargs, extra):
    """Ember's ``_fused_adagrad_`` gives torch's bits: tensors of several sizes (vector
    bodies and remainders, one past the size the native loop threads from), different
    steps, a scale, a skipped step, a tensor lr."""
    rng = np.random.default_rng(1)
    sizes, steps = [1, 7, 8, 37, 300001], [1.0, 2.0, 5.0, 5.0, 11.0]
    data = [[rng.standard_normal(n) for n in sizes] for _ in range(3)]
    data[2] = [np.abs(x) for x in data[2]]
    scale = {"grad_scale": 4.0} if extra == "grad_scale" else \
        {"found_inf": 1.0} if extra == "found_inf" else {}
    out = []
    for lib, fn in ((torch, torch._fused_adagrad_), (ember, ember._fused_adagrad_)):
        dt = getattr(lib, dtype)
        p, g, s = ([lib.tensor(x, dtype=lib.float64).to(dt) for x in xs] for xs in data)
        st = [lib.tensor(v) for v in steps]
        kw = {**kwargs, **{k: lib.tensor(v) for k, v in scale.items()}}
        if extra == "tensor_lr":
            kw["lr"] = lib.tensor(kw["lr"])
        fn(p, g, s, st, **kw)
        out.append([x.to(lib.float64).numpy() for x in p + g + s])
    for t, e in zip(*out):
        np.testing.assert_array_equal(e, t)



# ----------------------------------------------------------------------------- native

def _mixed_update(dtypes, seed):
    """Operands of one call as arrays: tensors of every dtype, sizes past the size the loops
    thread from, a permuted parameter and a stepped gradient."""
    rng = np.random.default_rng(seed)
    sizes = [(70001,), (3,), (4 * 65536 + 5,), (40, 30), (1,)]
    out = []
    for k in range(5):
        arrays = []
        for i, (s, dt) in enumerate(zip(sizes, dtypes)):
            a = (rng.normal(0, 1, s) if k in (0, 1) else rng.uniform(0, 0.1, s)).astype(
                np.float32).astype(getattr(ember, dt).np)
            if i == 3 and k == 0:
                a = np.ascontiguousarray(a.T).T
            if i == 3 and k == 1:
                a = np.repeat(a, 2, axis=1)[:, ::2]
            arrays.append(a)
        out.append(arrays)
    return out


@needs_compiler
@pytest.mark.parametrize("name", ["_fused_adam_", "_fused_adamw_", "_fused_sgd_",
                                  "_fused_adagrad_"])
@pytest.mark.parametrize("amsgrad_or_nesterov", [False, True])
@pytest.mark.parametrize("scaled_and_maximized", [False, True])
def test_native_loops_give_their_references_bits_at_one_thread_and_two(
        name, amsgrad_or_nesterov, scaled_and_maximized):
    op = REGISTRY[name]
    assert op.table["cpu"] is not op.forward
    dtypes = ("float32", "float64", "bfloat16", "float32", "float16")
    amsgrad, scaled = amsgrad_or_nesterov, scaled_and_maximized
    scale = np.full((), 2.0, np.float32) if scaled else None
    if name == "_fused_sgd_":
        params = dict(weight_decay=0.01, momentum=0.9, dampening=0.1,
                      nesterov=amsgrad_or_nesterov, maximize=scaled, is_first_step=False)
    elif name == "_fused_adagrad_":
        params = dict(lr_decay=0.01, weight_decay=0.1 * amsgrad, eps=1e-10, maximize=scaled)
    else:
        params = dict(beta1=0.9, beta2=0.999, weight_decay=0.1, eps=1e-8, amsgrad=amsgrad,
                      maximize=scaled)
    results = []
    for run, threads in (("reference", None), ("native", 1), ("native", 2)):
        p, g, m, v, x = _mixed_update(dtypes, 0)
        steps = [np.full((), 3.0, np.float32) for _ in p]
        operands = [p, g, m] if name == "_fused_sgd_" else [p, g, v, steps] \
            if name == "_fused_adagrad_" else [p, g, m, v, x if amsgrad else [], steps]
        kernel = op.forward if run == "reference" else op.table["cpu"]
        before = ember.get_num_threads()
        try:
            ember.set_num_threads(threads or before)
            assert kernel(*operands, 0.01, scale, None, **params) is None
        finally:
            ember.set_num_threads(before)
        results.append([a for written in operands[:5] for a in written
                        if written is not steps])
    for a, b, c in zip(*results):
        assert same(b, a) and same(c, a)


# ----------------------------------------------------------------------------- layouts

def _adam_both(params, grads, **options):
    """One AdamW step of both frameworks' ``params`` with state laid out as each param."""
    for m, ps, gs in ((ember, params[0], grads[0]), (torch, params[1], grads[1])):
        m._fused_adamw_(ps, gs, [m.zeros_like(p) for p in ps],
                        [m.zeros_like(p) for p in ps], [], [m.ones(()) for _ in ps],
                        **{**ADAM, **options})


def test_permuted_parameters_with_state_of_their_layout_match_torch():
    """torch updates a tensor's memory in order: right where all of one tensor's operands
    share its layout (torch's zeros_like(memory_format=preserve_format) state). The size
    has no remainder, where the memory order would matter."""
    base = _pairs(((24, 16),), "float32", 0)
    params = [[t.t() for t in side] for side in base]
    grads = [[t.t() for t in side] for side in _pairs(((24, 16),), "float32", 1)]
    _adam_both(params, grads)
    assert_same_bits(*base)


def test_strided_parameters_are_updated_element_by_element():
    """A stepped parameter (torch's kernel reads its memory as if dense: wrong) is updated
    as a row-major one is; the elements between its own are left alone."""
    wide = _pairs(((5, 14),), "float32", 0)[0][0]
    kept = wide.clone()
    param = wide[:, ::2]
    dense = _pairs(((5, 7),), "float32", 0)
    dense[1][0].copy_(torch.from_numpy(param.numpy().copy()))
    grads = _pairs(((5, 7),), "float32", 1)
    ember._fused_adamw_([param], grads[0], [ember.zeros(5, 7)], [ember.zeros(5, 7)], [],
                        [ember.ones(())], **ADAM)
    torch._fused_adamw_(dense[1], grads[1], [torch.zeros(5, 7)], [torch.zeros(5, 7)], [],
                        [torch.ones(())], **ADAM)
    assert_same_bits([param], dense[1])
    assert bool((wide[:, 1::2] == kept[:, 1::2]).all())


def test_expanded_operands_are_read_but_not_written():
    """An expanded gradient is read as its elements (torch's kernel reads past its memory:
    compared here with its dense copy); a written tensor whose elements share memory is
    refused."""
    p, g = _pairs(((3,),), "float32", 0), _pairs(((1,),), "float32", 1)
    _adam_both(p, [[g[0][0].expand(3)], [g[1][0].expand(3).contiguous()]])
    assert_same_bits(*p)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        ember._fused_adamw_([ember.zeros(1).expand(3)], [ember.zeros(3)], [ember.zeros(3)],
                            [ember.zeros(3)], [], [ember.ones(())], **ADAM)


# ----------------------------------------------------------------------------- errors

def _adam_call(m, p=None, g=None, e=None, s=None, x=(), steps=None, **options):
    """An AdamW step of one tensor of 3 zeros, but for the lists given."""
    lists = [[m.zeros(3)] if t is None else t for t in (p, g, e, s)]
    m._fused_adamw_(*lists, list(x), [m.ones(())] if steps is None else steps,
                    **{**ADAM, **options})


_ERRORS = [
    (lambda m: _adam_call(m, g=[m.zeros(3), m.zeros(3)]), RuntimeError),
    (lambda m: _adam_call(m, e=[]), RuntimeError),
    (lambda m: _adam_call(m, steps=[]), RuntimeError),
    (lambda m: _adam_call(m, amsgrad=True), RuntimeError),
    (lambda m: _adam_call(m, x=[m.zeros(3)]), RuntimeError),
    (lambda m: _adam_call(m, g=[m.zeros(3, dtype=m.float64)]), RuntimeError),
    (lambda m: _adam_call(m, s=[m.zeros(3, dtype=m.float64)]), RuntimeError),
    (lambda m: _adam_call(m, *([[m.zeros(3, dtype=m.int64)]] * 4)), NotImplementedError),
    (lambda m: _adam_call(m, *([[m.zeros(3, dtype=m.complex64)]] * 4)), NotImplementedError),
    (lambda m: _adam_call(m, [], [], [], [], steps=[]), NotImplementedError),
    (lambda m: _adam_call(m, steps=[m.ones(2)]), RuntimeError),
    (lambda m: _adam_call(m, steps=[m.ones(0)]), RuntimeError),
    (lambda m: _adam_call(m, grad_scale=m.ones((), dtype=m.float64)), RuntimeError),
    (lambda m: _adam_call(m, found_inf=m.zeros((), dtype=m.float64)), RuntimeError),
    (lambda m: _adam_call(m, lr=m.ones(2)), RuntimeError),
    (lambda m: _adam_call(m, p=m.zeros(3)), TypeError),
    (lambda m: _adam_call(m, lr="0.1"), TypeError),
    (lambda m: m._fused_sgd_([], [], [], **SGD, is_first_step=False), NotImplementedError),
    (lambda m: m._fused_sgd_([m.zeros(3)], [m.zeros(3)], [], **{**SGD, "momentum": 0.9},
                             is_first_step=False), RuntimeError),
    (lambda m: m._fused_sgd_([m.zeros(3)], [m.zeros(3)], [m.zeros(3)], **SGD,
                             is_first_step=False), RuntimeError),
    (lambda m: m._fused_sgd_([m.zeros(3, dtype=m.int32)], [m.zeros(3, dtype=m.int32)], [],
                             **SGD, is_first_step=False), NotImplementedError),
]


@pytest.mark.parametrize("case", range(len(_ERRORS)))
def test_errors_are_torchs(case):
    fn, kind = _ERRORS[case]
    with pytest.raises(kind) as theirs:
        fn(torch)
    with pytest.raises(Exception) as ours:
        fn(ember)
    assert type(ours.value) is type(theirs.value), ours.value
    assert str(ours.value).startswith(("_fused_", "\"fused_")), ours.value


def test_what_torchs_kernel_assumes_is_refused_before_anything_is_written():
    """Shapes that differ from their parameter's, devices that differ (torch's kernel reads
    past the memory or dispatches elsewhere): refused, the tensors before the bad one
    unchanged."""
    p = [ember.ones(3), ember.ones(3)]
    for bad, match in (({"e": [ember.zeros(3), ember.zeros(4)]}, r"exp_avgs\[1\] has shape"),
                       ({"s": [ember.zeros(3), ember.zeros(3, device="meta")]}, "devices")):
        state = {"g": [ember.ones(3)] * 2, "e": [ember.zeros(3)] * 2, "s": [ember.zeros(3)] * 2,
                 "steps": [ember.ones(())] * 2, **bad}
        with pytest.raises(RuntimeError, match=match):
            _adam_call(ember, p, **state)
        assert all(bool((t == 1).all()) for t in p)


# ----------------------------------------------------------------------------- dispatch

def test_every_written_tensor_gets_its_version_bumped():
    base = ember.zeros(2, 3)
    p, g, e, s, x = [base[0], ember.zeros(4)], *(
        [ember.zeros(3), ember.zeros(4)] for _ in range(4))
    steps = [ember.ones(()), ember.ones(())]
    versions = [t._version for t in (base, *p, *g, *e, *s, *x, *steps)]
    ember._fused_adam_(p, g, e, s, x, steps, **{**ADAM, "amsgrad": True})
    after = [t._version for t in (base, *p, *g, *e, *s, *x, *steps)]
    assert after == [v + 1 for v in versions[:-2]] + versions[-2:]  # steps are only read


def test_an_op_that_writes_operands_is_registered_without_a_derivative():
    from ember.core.dispatch import register

    for flags in ({"differentiable": True}, {"differentiable": False, "mutates": True}):
        with pytest.raises(ValueError, match="written operands"):
            register("_written_twice_", lambda *a: None, None, writes=(0,), **flags)
    assert "_written_twice_" not in REGISTRY


def test_a_dispatch_mode_sees_one_call_with_its_lists():
    class Calls(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((func, types, args, kwargs))
            return func(*args, **(kwargs or {}))

    seen = []
    p, g = [ember.zeros(3), ember.zeros(1)], [ember.ones(3), ember.ones(1)]
    b = [ember.zeros(3), ember.zeros(1)]
    with Calls():
        ember._fused_sgd_(p, g, b, **{**SGD, "momentum": 0.9}, is_first_step=True)
    [(func, types, args, kwargs)] = seen
    assert func is REGISTRY["_fused_sgd_"] and types == ()
    assert [type(a) for a in args] == [list, list, list, float, type(None), type(None)]
    assert args[0][0] is p[0] and args[2][1] is b[1] and kwargs["is_first_step"] is True
    assert float(p[0][0]) == float(np.float32(-0.1)) and float(b[1][0]) == 1.0


def test_a_recorded_call_replays_its_writes():
    p, g, e, s = (_pairs(((5,), (2,)), "float32", seed)[0] for seed in range(4))
    steps, lr = [ember.full((), 2.0)] * 2, ember.tensor(0.01)
    with Recorder() as recorder:
        ember._fused_adamw_(p, g, e, s, [], steps, **{**ADAM, "lr": lr})
    [call] = recorder.calls
    assert call.op.name == "_fused_adamw_" and not same(call.outputs[0], call.inputs[0])
    assert same(replay(call), call.outputs)


def test_meta_tensors_keep_their_shapes():
    p = [ember.zeros(3, 4, device="meta"), ember.zeros(1, device="meta")]
    state = [[ember.zeros_like(t) for t in p] for _ in range(3)]
    ember._fused_adamw_(p, *state, [], [ember.ones((), device="meta")] * 2, **ADAM)
    assert [tuple(t.shape) for t in p + state[0]] == [(3, 4), (1,)] * 2
    assert all(t.device.type == "meta" and t._version == 1 for t in p)


# ----------------------------------------------------------------------------- composite

def test_adamw_from_ordinary_in_place_ops_agrees_with_the_fused_step():
    """torch's single-tensor AdamW (mul_, lerp_, mul_ then addcmul_, addcdiv_) rounds each op
    apart where the fused kernel fuses three: after twenty float32 steps the parameters and
    first moments (of the gradients' order, one) are within 4 roundings of one, the second
    moments within 4 roundings of themselves."""
    shapes = ((1,), (3,), (1000,), (4097,))
    fused, plain = (_pairs(shapes, "float32", 0)[0] for _ in range(2))
    state = {k: [[ember.zeros(s) for s in shapes] for _ in range(2)] for k in ("m", "v")}
    steps = [ember.zeros(()) for _ in shapes]
    lr, beta1, beta2, wd, eps = 1e-2, 0.9, 0.999, 0.1, 1e-8
    for step in range(1, 21):
        grads = _pairs(shapes, "float32", 10 + step)[0]
        for s in steps:
            s.add_(1)
        ember._fused_adamw_(fused, grads, state["m"][0], state["v"][0], [], steps, **ADAM)
        for p, g, m, v in zip(plain, grads, state["m"][1], state["v"][1]):
            p.mul_(1 - lr * wd)
            m.lerp_(g, 1 - beta1)
            v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            denom = (v.sqrt() / math.sqrt(1 - beta2 ** step)).add_(eps)
            p.addcdiv_(m, denom, value=-lr / (1 - beta1 ** step))
    eps32 = float(np.finfo(np.float32).eps)
    for ours, theirs, relative in ((fused, plain, False), (*state["m"], False),
                                   (*state["v"], True)):
        for a, b in zip(ours, theirs):
            a, b = a.numpy().astype(np.float64), b.numpy().astype(np.float64)
            scale = np.abs(b) if relative else np.maximum(np.abs(b), 1)
            assert (np.abs(a - b) <= 4 * eps32 * scale).all()
