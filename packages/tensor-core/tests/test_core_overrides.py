"""The extension points at the door, against torch's: ``__torch_function__`` of Tensor
subclasses, TorchFunctionMode (at the public names) and TorchDispatchMode (at the
primitives), each program run in both frameworks."""

import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode as TorchTFMode
from torch.utils._python_dispatch import TorchDispatchMode as TorchTDMode

import ember.core as ember
from ember.core.dispatch_modes import TorchDispatchMode
from ember.core.function_modes import (
    DisableTorchFunctionSubclass,
    TorchFunctionMode,
    disabled_torch_function_impl,
)


def names_of(funcs):
    return [getattr(f, "__name__", str(f)) for f in funcs]


def modes(m):
    base = TorchTFMode if m is torch else TorchFunctionMode

    class Logging(base):
        def __init__(self):
            super().__init__()
            self.calls = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.calls.append((func, args, kwargs or {}))
            return func(*args, **(kwargs or {}))

    return Logging


def program(m):
    x = m.ones(2, 3)
    y = x + 1
    z = m.mul(y, x).sum(1)
    w = m.cat([z, z])
    x.add_(1)
    return w


def test_function_mode_sees_every_public_call_as_torch_does():
    seen = {}
    for m in (torch, ember):
        with modes(m)() as mode:
            out = program(m)
        seen[m] = mode.calls
        assert out.shape == (4,)
    names = {m: names_of(f for f, _, _ in calls) for m, calls in seen.items()}
    assert names[ember] == names[torch]
    # arguments as the caller gave them: defaults left out
    for (_, e_args, e_kw), (_, t_args, t_kw) in zip(seen[ember], seen[torch]):
        assert len(e_args) == len(t_args) and set(e_kw) == set(t_kw)


def test_a_public_function_with_a_parameter_of_its_own_name_reaches_the_mode():
    """F.pad takes a parameter ``pad``: the wrapper must hand the mode itself, not it."""
    from ember.core.function_modes import public

    @public
    def pad(input, pad, mode="constant"):
        return input + len(pad)

    x = ember.ones(2)
    with modes(ember)() as mode:
        out = pad(x, (1, 1))
    assert mode.calls[0][0] is pad and mode.calls[0][1][1] == (1, 1)
    assert out.tolist() == [3.0, 3.0]


def test_function_mode_can_change_results_and_modes_nest():
    class Double(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return out * 2 if func.__name__ == "add" else out

    inner = modes(ember)()
    with Double(), inner:
        out = ember.add(ember.ones(2), 1)
    np.testing.assert_array_equal(np.asarray(out), [4.0, 4.0])
    assert names_of(f for f, _, _ in inner.calls) == ["ones", "add"]


def subclass_program(m):
    class Tagged(m.Tensor):
        pass

    x = m.ones(2, 3).as_subclass(Tagged)
    outs = [x + 1, m.exp(x), x.sum(), x[0], x.t(), m.cat([x, x]), x.max(1)]
    return Tagged, outs


def test_subclass_results_keep_the_subclass_as_in_torch():
    for m in (torch, ember):
        cls, outs = subclass_program(m)
        kinds = []
        for out in outs:
            items = out if isinstance(out, tuple) else (out,)
            kinds.append([type(o) is cls for o in items])
        if m is torch:
            expected = kinds
    assert kinds == expected


def test_subclass_override_intercepts_and_parameter_like_subclasses_opt_out():
    class Intercepting(ember.Tensor):
        seen = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.seen.append(func.__name__)
            with DisableTorchFunctionSubclass():
                return func(*args, **(kwargs or {}))

    class OptOut(ember.Tensor):
        __torch_function__ = disabled_torch_function_impl

    x = ember.ones(2).as_subclass(Intercepting)
    out = x * 3
    assert Intercepting.seen == ["mul"] and type(out) is ember.Tensor
    y = ember.ones(2).as_subclass(OptOut)
    assert type(y + 1) is ember.Tensor


class _Log:
    """A dispatch mode logging primitive names, in either framework."""

    @staticmethod
    def make(m):
        base = TorchTDMode if m is torch else TorchDispatchMode

        class Log(base):
            def __init__(self):
                super().__init__()
                self.names = []
                self.kwargs = []

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.names.append(func.__name__.split(".")[0])
                self.kwargs.append(kwargs)
                return func(*args, **(kwargs or {}))

        return Log()


def test_dispatch_mode_handler_reaches_the_next_mode_then_the_kernel():
    outer, inner = _Log.make(ember), _Log.make(ember)
    with outer, inner:
        ember.ones(2) + 1
    assert inner.names == outer.names and "add" in inner.names


def test_dispatch_modes_see_casts_and_in_place_writes():
    log = _Log.make(ember)
    x = ember.ones(3, dtype=ember.int64)
    with log:
        x.float()
        x.add_(1)
        x.zero_()
    assert log.names == ["to_copy", "add_", "zero_"]  # as torch: aten.zero_ is its own op


def test_functions_and_methods_are_public_and_check_for_overrides():
    from ember.core import OP_MODULES
    from ember.core.function_modes import is_public

    missing = [name for mod in OP_MODULES for name in mod.FUNCTIONS
               if not is_public(getattr(ember, name))]
    assert missing == []
    methods = [name for mod in OP_MODULES for name, fn in mod.METHODS.items()
               if callable(fn) and not isinstance(fn, type)
               and not is_public(getattr(ember.Tensor, name))]
    assert methods == []


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_types_hold_the_overriding_subclasses(m):
    class Tagged(m.Tensor):
        pass

    base = TorchTFMode if m is torch else TorchFunctionMode
    seen = []

    class Types(base):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(types)
            return func(*args, **(kwargs or {}))

    x = m.ones(2).as_subclass(Tagged)
    with Types():
        x + m.ones(2)
    assert seen == [(), (Tagged,)]  # ones(2), then the add
