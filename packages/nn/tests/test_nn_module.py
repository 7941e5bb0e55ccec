"""Module's contract against torch's: registration, traversal, modes, conversion, state
dicts, hooks and repr, each program run on ``torch.nn`` and on ``ember.nn`` and compared."""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember.autograd as ag
import ember.core as E
import ember.nn as enn

BOTH = pytest.mark.parametrize("nn, lib", [(torch.nn, torch), (enn, E)], ids=["torch", "ember"])


def _both(program):
    """``program(nn, lib)`` for torch and for Ember."""
    return program(torch.nn, torch), program(enn, E)


def _net(nn, lib):
    """A module with parameters, buffers (one non-persistent, one integer), a None
    parameter, nested children, a None child and a parameter tied between two children."""

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(lib.ones(3))
            self.register_buffer("count", lib.zeros(1, dtype=lib.int64))
            self.register_buffer("scratch", lib.zeros(2), persistent=False)
            self.register_parameter("missing", None)

        def forward(self, x):
            return x * self.scale

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = Block()
            self.gap = None
            self.inner = nn.Sequential(Block(), Block())
            self.inner[1].scale = self.first.scale  # tied
            self.register_module("last", Block())
            self.register_buffer("running", lib.ones(3))

        def forward(self, x):
            return self.last(self.inner(self.first(x))) + self.running

    return Net()


def _names(net):
    return {
        "modules": [n for n, _ in net.named_modules()],
        "children": [n for n, _ in net.named_children()],
        "parameters": [n for n, _ in net.named_parameters()],
        "all parameters": [n for n, _ in net.named_parameters(remove_duplicate=False)],
        "own parameters": [n for n, _ in net.named_parameters(recurse=False)],
        "buffers": [n for n, _ in net.named_buffers()],
        "prefixed": [n for n, _ in net.named_parameters(prefix="model")],
        "state": list(net.state_dict()),
        "metadata": dict(net.state_dict()._metadata),
        "count": len(list(net.parameters())),
        "dir": [n for n in dir(net) if n in ("first", "inner", "running", "gap")],
    }


def test_traversal_and_state_dict_keys_match_torch():
    t, e = _both(lambda nn, lib: _names(_net(nn, lib)))
    assert t == e


def test_tied_parameter_is_one_object():
    net = _net(enn, E)
    assert net.inner[1].scale is net.first.scale
    assert net.get_parameter("inner.1.scale") is net.first.scale
    assert net.get_buffer("first.count").dtype == E.int64


@BOTH
def test_modes_propagate(nn, lib):
    net = _net(nn, lib)
    assert net.eval() is net and not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    with pytest.raises(ValueError, match="boolean"):
        net.train("yes")


def _errors(nn, lib):
    """The exception type and message of each bad use."""
    out = {}

    def record(name, fn):
        try:
            fn()
        except Exception as ex:
            out[name] = (type(ex).__name__, str(ex).replace("torch.nn", "nn"))
        else:
            out[name] = None

    net = _net(nn, lib)
    record("tensor as parameter", lambda: setattr(net.first, "scale", lib.ones(3)))
    record("tensor as module", lambda: setattr(net, "first", lib.ones(3)))
    record("dotted buffer", lambda: net.register_buffer("a.b", lib.ones(1)))
    record("empty buffer", lambda: net.register_buffer("", lib.ones(1)))
    record("existing attribute", lambda: net.register_buffer("forward", lib.ones(1)))
    record("non-tensor buffer", lambda: net.register_buffer("z", 3))
    record("non-leaf parameter",
           lambda: net.register_parameter("p", nn.Parameter(lib.ones(2)) * 2))
    record("non-module", lambda: net.add_module("m", 3))
    record("dotted module", lambda: net.add_module("m.n", nn.Module()))
    record("missing submodule", lambda: net.get_submodule("first.nothing"))
    record("not a module", lambda: net.get_submodule("first.scale"))
    record("not a parameter", lambda: net.get_parameter("first.count"))
    record("not a buffer", lambda: net.get_buffer("first.scale"))
    record("missing attribute", lambda: net.nothing)
    record("init kwargs", lambda: nn.Module(x=1))
    record("no forward", lambda: nn.Module()(1))
    record("to int", lambda: net.to(lib.int32))
    record("before init", lambda: _half_built(nn, lib))
    record("not a mapping", lambda: net.load_state_dict([1]))
    return out


def _half_built(nn, lib):
    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(lib.ones(1))

    Early()


def test_errors_match_torch():
    t, e = _both(_errors)
    assert t == e


def _load_cases(nn, lib):
    out = {}
    net = _net(nn, lib)
    state = net.state_dict()
    state["extra"] = lib.ones(1)
    state["inner.0.bogus"] = lib.ones(1)
    del state["running"]
    keys = net.load_state_dict(state, strict=False)
    out["non-strict"] = (sorted(keys.missing_keys), sorted(keys.unexpected_keys))
    try:
        net.load_state_dict(state)
    except RuntimeError as ex:
        out["strict"] = str(ex)
    bad = net.state_dict()
    bad["first.scale"] = lib.ones(4)
    try:
        net.load_state_dict(bad)
    except RuntimeError as ex:
        out["size"] = str(ex)
    out["ok"] = repr(net.load_state_dict(net.state_dict()))
    return out


def test_load_state_dict_reports_as_torch():
    t, e = _both(_load_cases)
    assert t == e


def test_state_dict_values_round_trip_through_torch():
    tnet, enet = _net(torch.nn, torch), _net(enn, E)
    with torch.no_grad():
        for i, p in enumerate(tnet.parameters()):
            p.copy_(torch.arange(3.0) + i)
        tnet.running.fill_(7)
    enet.load_state_dict({k: E.tensor(v.numpy()) for k, v in tnet.state_dict().items()})
    for (k, tv), (k2, ev) in zip(tnet.state_dict().items(), enet.state_dict().items()):
        assert k == k2 and np.array_equal(tv.numpy(), ev.numpy()) and str(tv.dtype) == str(ev.dtype)
    back = _net(torch.nn, torch)
    back.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                          for k, v in enet.state_dict().items()})
    x = np.arange(3.0, dtype=np.float32)
    assert np.allclose(back(torch.tensor(x)).detach().numpy(),
                       enet(E.tensor(x)).detach().numpy())


def test_state_dict_detaches_unless_keep_vars():
    net = _net(enn, E)
    assert net.state_dict()["first.scale"].__class__ is E.Tensor
    assert net.state_dict(keep_vars=True)["first.scale"] is net.first.scale


@BOTH
def test_assign_loads_the_tensors_themselves(nn, lib):
    net = nn.Linear(2, 3)
    state = {"weight": lib.ones(3, 2), "bias": lib.zeros(3)}
    net.load_state_dict(state, assign=True)
    assert isinstance(net.weight, nn.Parameter) and net.weight.requires_grad
    assert net.weight.data_ptr() == state["weight"].data_ptr()


@BOTH
def test_meta_model_materialised_by_to_empty(nn, lib):
    with lib.device("meta"):
        net = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2))
    assert all(p.is_meta for p in net.parameters())
    weight = net[0].weight
    net.to_empty(device="cpu")
    # out of the meta device, parameters are new objects (torch cannot swap their data)
    assert net[0].weight is not weight and net[0].weight.device.type == "cpu"
    assert isinstance(net[0].weight, nn.Parameter) and net[0].weight.requires_grad
    for m in net:
        m.reset_parameters()
    assert net(lib.ones(1, 4)).shape == (1, 2)


@BOTH
def test_to_keeps_parameter_identity_and_casts_floats_only(nn, lib):
    net = _net(nn, lib)
    scale = net.first.scale
    net.first.scale.grad = lib.ones(3)
    net.double()
    assert net.first.scale is scale and scale.dtype == lib.float64
    assert scale.grad.dtype == lib.float64
    assert net.first.count.dtype == lib.int64
    net.to(lib.zeros(1, dtype=lib.float16))
    assert scale.dtype == lib.float16
    net.to("cpu", lib.float32)
    assert scale.dtype == lib.float32 and net.running.dtype == lib.float32


@BOTH
def test_zero_grad(nn, lib):
    net = nn.Linear(2, 2)
    net(lib.ones(1, 2)).sum().backward()
    net.zero_grad(set_to_none=False)
    assert net.weight.grad is not None and not net.weight.grad.any()
    net.zero_grad()
    assert net.weight.grad is None


def _hook_trace(nn, lib):
    trace = []
    net = nn.Linear(2, 2)
    with torch.no_grad() if lib is torch else ag.no_grad():
        net.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
        net.bias.zero_()
    h1 = net.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    net.register_forward_pre_hook(lambda m, args: trace.append("pre first"), prepend=True)
    net.register_forward_pre_hook(
        lambda m, args, kwargs: trace.append(("kwargs", sorted(kwargs))), with_kwargs=True)
    h2 = net.register_forward_hook(lambda m, args, out: out + 1)
    net.register_forward_hook(lambda m, args, kwargs, out: trace.append("post"),
                              with_kwargs=True)
    y1 = net(lib.ones(1, 2)).tolist()
    h1.remove()
    h2.remove()
    y2 = net(lib.ones(1, 2)).tolist()
    return trace, y1, y2


def test_forward_hooks_match_torch():
    t, e = _both(_hook_trace)
    assert t == e


def _always_called(nn, lib):
    seen = []

    class Broken(nn.Module):
        def forward(self, x):
            raise ValueError("broken")

    m = Broken()
    m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    with pytest.raises(ValueError):
        m(lib.ones(1))
    return seen


def test_always_called_hook_runs_when_forward_raises():
    assert _both(_always_called) == ([None], [None])


def _backward_hooks(nn, lib):
    seen = {}
    net = nn.Linear(3, 2)
    with torch.no_grad() if lib is torch else ag.no_grad():
        net.weight.copy_(lib.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, 3.0]]))
        net.bias.copy_(lib.tensor([0.1, -0.1]))

    def pre(m, grad_output):
        seen["pre"] = [g.tolist() for g in grad_output]
        return (grad_output[0] * 10,)

    def post(m, grad_input, grad_output):
        seen["grad_input"] = [g.tolist() for g in grad_input]
        seen["grad_output"] = [g.tolist() for g in grad_output]
        return (grad_input[0] + 1,)

    net.register_full_backward_pre_hook(pre)
    net.register_full_backward_hook(post)
    x = lib.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], requires_grad=True)
    (net(x) * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    seen["x.grad"] = x.grad.tolist()
    seen["weight.grad"] = net.weight.grad.tolist()
    return seen


def test_full_backward_hooks_match_torch():
    t, e = _both(_backward_hooks)
    assert t.keys() == e.keys()
    for k in t:
        assert np.allclose(np.array(t[k], dtype=float), np.array(e[k], dtype=float)), k


def _global_hooks(nn, lib):
    seen = []
    from importlib import import_module

    module = import_module(nn.__name__ + ".modules.module") if lib is torch else \
        import_module("ember.nn.modules.hooks")
    handle = module.register_module_forward_hook(
        lambda m, args, out: seen.append(type(m).__name__))
    try:
        nn.Sequential(nn.Identity(), nn.Flatten())(lib.ones(2, 2))
    finally:
        handle.remove()
    nn.Identity()(lib.ones(1))
    return seen


def test_global_forward_hook():
    assert _both(_global_hooks) == (["Identity", "Flatten", "Sequential"],) * 2


def _state_dict_hooks(nn, lib):
    seen = []
    net = nn.Linear(2, 2)
    net.register_state_dict_pre_hook(lambda m, prefix, keep_vars: seen.append(("pre", prefix)))
    net.register_state_dict_post_hook(
        lambda m, sd, prefix, meta: seen.append(("post", sorted(sd))))
    net.register_load_state_dict_pre_hook(
        lambda m, sd, prefix, *rest: seen.append(("load pre", sorted(sd))))
    net.register_load_state_dict_post_hook(
        lambda m, keys: seen.append(("load post", keys.missing_keys)))
    nn.Sequential(net).state_dict()
    net.load_state_dict({"weight": lib.ones(2, 2)}, strict=False)
    return seen


def test_state_dict_hooks_match_torch():
    t, e = _both(_state_dict_hooks)
    assert t == e


def _custom_load(nn, lib):
    class Renamed(nn.Module):
        """Loads an old checkpoint whose key was ``w`` (the override torch code writes)."""

        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(lib.zeros(2))

        def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
            if prefix + "w" in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
            super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

        def get_extra_state(self):
            return {"note": 1}

        def set_extra_state(self, state):
            self.note = state["note"]

    net = nn.Sequential(Renamed())
    keys = net.load_state_dict({"0.w": lib.ones(2), "0._extra_state": {"note": 5}})
    return net[0].weight.tolist(), net[0].note, repr(keys), list(net.state_dict())


def test_load_from_state_dict_override_and_extra_state():
    t, e = _both(_custom_load)
    assert t == e


def _reprs(nn, lib):
    class Custom(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(OrderedDict(fc=nn.Linear(2, 3), flat=nn.Flatten()))
            self.heads = nn.ModuleList([nn.Linear(3, 3) for _ in range(3)] + [nn.Identity()])
            self.table = nn.ModuleDict({"b": nn.Identity(), "a": nn.Unflatten(1, (2, 2))})
            self.plist = nn.ParameterList([nn.Parameter(lib.ones(2, 3)), lib.zeros(1)])
            self.pdict = nn.ParameterDict({"z": nn.Parameter(lib.ones(1)), "y": lib.ones(2)})
            self.none = None

        def extra_repr(self):
            return "custom=1\nsecond line"

    return repr(Custom()), repr(nn.ModuleList()), repr(nn.Sequential())


def test_repr_matches_torch():
    t, e = _both(_reprs)
    assert t == e


def _containers(nn, lib):
    out = {}
    seq = nn.Sequential(nn.Identity(), nn.Flatten(), nn.Identity())
    seq.append(nn.Linear(1, 1)).insert(1, nn.Unflatten(1, (1, 1)))
    out["seq"] = [type(m).__name__ for m in seq]
    del seq[0]
    out["renumbered"] = list(seq._modules)
    out["slice"] = [type(m).__name__ for m in seq[1:3]]
    out["sum"] = len(seq + seq)
    out["times"] = len(seq * 2)
    out["pop"] = type(seq.pop(0)).__name__
    ml = nn.ModuleList([nn.Identity()])
    ml += [nn.Flatten()]
    ml.extend([nn.Identity()]).append(nn.Flatten())
    ml.insert(0, nn.Linear(1, 1))
    del ml[1:3]
    out["list"] = [(k, type(m).__name__) for k, m in ml._modules.items()]
    md = nn.ModuleDict([("x", nn.Identity()), ("a", nn.Flatten())])
    md.update({"c": nn.Identity()})
    out["dict"] = list(md.keys()), "x" in md, len(md)
    pd = nn.ParameterDict({"b": lib.ones(1), "a": lib.ones(1)})
    pd["c"] = lib.zeros(2)
    out["pdict"] = list(pd), [type(v).__name__ for v in pd.values()]
    pl = nn.ParameterList([lib.ones(1)])
    pl.append(lib.zeros(2))
    out["plist"] = len(pl), [type(p).__name__ for p in pl], [n for n, _ in pl.named_parameters()]
    for bad in (lambda: seq[10], lambda: ml[-9], lambda: md.update([("a",)]),
                lambda: pd[1], lambda: pl(), lambda: nn.ModuleList(3)):
        try:
            bad()
        except Exception as ex:
            out.setdefault("errors", []).append(type(ex).__name__)
    return out


def test_containers_match_torch():
    t, e = _both(_containers)
    assert t == e


@BOTH
def test_sequential_forward_and_tied_gradients(nn, lib):
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.Identity(), lin)
    assert len(list(seq.parameters())) == 2
    seq(lib.ones(1, 2)).sum().backward()
    assert lin.weight.grad is not None


def test_parameter_behaves_as_torch():
    p = enn.Parameter(E.ones(2))
    assert p.requires_grad and p.is_leaf and type(p * 2) is E.Tensor
    assert repr(p) == repr(torch.nn.Parameter(torch.ones(2)))
    frozen = enn.Parameter(E.ones(2), requires_grad=False)
    assert repr(frozen) == repr(torch.nn.Parameter(torch.ones(2), requires_grad=False))
    assert enn.Parameter().shape == (0,)
    data = E.zeros(3)
    shared = enn.Parameter(data)
    with ag.no_grad():
        shared.add_(1)
    assert data.tolist() == [1.0, 1.0, 1.0]
    assert isinstance(enn.Buffer(E.ones(1)), enn.Buffer)
    assert not isinstance(E.ones(1), enn.Buffer)


def test_copy_and_pickle_keep_structure():
    lin = enn.Linear(2, 2)
    net = enn.Sequential(lin, enn.Flatten(), lin)
    net.register_buffer("steps", E.zeros(1, dtype=E.int64))
    for clone in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert list(clone.state_dict()) == list(net.state_dict())
        assert clone[2].weight is clone[0].weight
        assert clone[0].weight is not net[0].weight
        assert isinstance(clone[0].weight, enn.Parameter) and clone[0].weight.requires_grad
        assert clone[0].weight.tolist() == net[0].weight.tolist()


@BOTH
def test_lazy_linear_materialises_on_first_call(nn, lib):
    m = nn.LazyLinear(3)
    assert nn.parameter.is_lazy(m.weight)
    y = m(lib.ones(2, 5))
    assert type(m) is nn.Linear and m.weight.shape == (3, 5) and y.shape == (2, 3)
    lazy = nn.LazyLinear(3)
    lazy.load_state_dict(m.state_dict())
    assert lazy.weight.shape == (3, 5)


def test_apply_visits_children_first():
    order = []
    net = _net(enn, E)
    net.apply(lambda m: order.append(type(m).__name__))
    torder = []
    _net(torch.nn, torch).apply(lambda m: torder.append(type(m).__name__))
    assert order == torder
