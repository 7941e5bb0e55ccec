"""Hook handles, the hooks every module sees (``register_module_forward_hook``...) and the
full backward hooks of modules.

Module hooks live in ordered dicts keyed by the handle's id, as torch's do, so that a handle
removes its hook from the dict (and from the dicts that record its options) and
``prepend=True`` can move it to the front.

A full backward hook sees the gradients with respect to the module's inputs and outputs.
``BackwardHook`` routes the tensors that go in and come out through an identity node each:
the output's node records the gradients coming in (after the backward pre-hooks, which
may replace them), the input's node hands the gradients going out to the hooks, which may
replace them too.
"""

from __future__ import annotations

import itertools
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import ember.autograd as ag
import ember.core as E
from ember.autograd import Function

__all__ = ["RemovableHandle", "BackwardHook", "HookedCall", "register_module_forward_pre_hook",
           "register_module_forward_hook", "register_module_full_backward_pre_hook",
           "register_module_full_backward_hook", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]

_ids = itertools.count()


class RemovableHandle:
    """torch.utils.hooks.RemovableHandle: ``remove()`` takes the hook out of its dict."""

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(_ids)
        extras = () if extra_dict is None else (
            extra_dict if isinstance(extra_dict, list) else [extra_dict])
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def add_hook(hooks: OrderedDict[int, Any], hook: Callable[..., Any], prepend: bool = False,
             extra: Any = None) -> RemovableHandle:
    """Put ``hook`` into ``hooks`` (first with ``prepend``) and return its handle."""
    handle = RemovableHandle(hooks, extra_dict=extra)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


# ----------------------------------------------------------------------- global hooks

class _GlobalHooks:
    """The hooks of every module, checked by ``Module.__call__`` in one read (``any``)."""

    def __init__(self) -> None:
        self.forward_pre: OrderedDict[int, Any] = OrderedDict()
        self.forward: OrderedDict[int, Any] = OrderedDict()
        self.forward_always_called: OrderedDict[int, bool] = OrderedDict()
        self.backward_pre: OrderedDict[int, Any] = OrderedDict()
        self.backward: OrderedDict[int, Any] = OrderedDict()
        self.buffer_registration: OrderedDict[int, Any] = OrderedDict()
        self.module_registration: OrderedDict[int, Any] = OrderedDict()
        self.parameter_registration: OrderedDict[int, Any] = OrderedDict()

    def any_call_hooks(self) -> bool:
        return bool(self.forward_pre or self.forward or self.backward_pre or self.backward)


GLOBAL = _GlobalHooks()


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, args)`` before every module's forward."""
    return add_hook(GLOBAL.forward_pre, hook)


def register_module_forward_hook(hook: Callable[..., Any], *,
                                 always_call: bool = False) -> RemovableHandle:
    """``hook(module, args, output)`` after every module's forward."""
    handle = add_hook(GLOBAL.forward, hook, extra=GLOBAL.forward_always_called)
    if always_call:
        GLOBAL.forward_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_output)`` before every module's backward."""
    return add_hook(GLOBAL.backward_pre, hook)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_input, grad_output)`` after every module's backward."""
    return add_hook(GLOBAL.backward, hook)


def register_module_buffer_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, buffer)`` whenever a buffer is registered; may return a new one."""
    return add_hook(GLOBAL.buffer_registration, hook)


def register_module_module_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, submodule)`` whenever a submodule is registered."""
    return add_hook(GLOBAL.module_registration, hook)


def register_module_parameter_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, param)`` whenever a parameter is registered."""
    return add_hook(GLOBAL.parameter_registration, hook)


# ----------------------------------------------------------------------- backward hooks

class _Identity(Function):
    """The tensors given, unchanged: a node in the graph where the hooks attach."""

    @staticmethod
    def forward(ctx: Any, *tensors: Any) -> Any:
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        return grads


def _grad_tensors(value: Any) -> list[int]:
    """Positions of the tensors requiring grad in a flat tuple."""
    return [i for i, v in enumerate(value) if isinstance(v, E.Tensor) and v.requires_grad]


def _routed(values: tuple[Any, ...], at: list[int]) -> tuple[tuple[Any, ...], Any]:
    """``values`` with the tensors at positions ``at`` through one identity node, and that
    node."""
    outs = _Identity.apply(*[values[i] for i in at])
    routed = list(values)
    for i, t in zip(at, outs):
        routed[i] = t
    return tuple(routed), outs[0].grad_fn


class BackwardHook:
    """The full backward hooks and pre-hooks of one call of ``module``."""

    def __init__(self, module: Any, hooks: list[Any], pre_hooks: list[Any]) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.n_inputs = 0
        self.input_at: list[int] = []
        self.output_at: list[int] = []
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_outputs = 0

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        self.n_inputs = len(args)
        self.input_at = _grad_tensors(args)
        if not self.input_at or not self.hooks:
            return args
        routed, node = _routed(args, self.input_at)
        node.register_hook(self._input_hook)
        return routed

    def setup_output_hook(self, result: Any) -> Any:
        single = isinstance(result, E.Tensor)
        values = (result,) if single else result
        if not isinstance(values, tuple):
            return result
        self.n_outputs = len(values)
        self.output_at = _grad_tensors(values)
        if not self.output_at:
            return result
        routed, node = _routed(values, self.output_at)
        node.register_prehook(self._output_hook)
        return routed[0] if single else routed

    def _full(self, grads: tuple[Any, ...], at: list[int], n: int) -> tuple[Any, ...]:
        full = [None] * n
        for i, g in zip(at, grads):
            full[i] = g
        return tuple(full)

    def _output_hook(self, grad_outputs: tuple[Any, ...]) -> Any:
        grads = self._full(grad_outputs, self.output_at, self.n_outputs)
        for hook in self.pre_hooks:
            result = hook(self.module, grads)
            if result is not None:
                grads = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                if len(grads) != self.n_outputs:
                    raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                       f"grad_output, got {len(grads)}, but expected "
                                       f"{self.n_outputs}")
        self.grad_outputs = grads
        if not self.input_at:  # no input needs grad: the hooks run now, with no grad_input
            for hook in self.hooks:
                if hook(self.module, (None,) * self.n_inputs, grads) is not None:
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
        return tuple(grads[i] for i in self.output_at)

    def _input_hook(self, grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> Any:
        grads = self._full(grad_inputs, self.input_at, self.n_inputs)
        for hook in self.hooks:
            result = hook(self.module, grads, self.grad_outputs)
            if result is None:
                continue
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            if len(result) != self.n_inputs:
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                   f"got {len(result)}, but expected {self.n_inputs}")
            grads = result
        return tuple(grads[i] for i in self.input_at)


class HookedCall:
    """The hook half of ``Module``: registering forward and backward hooks, and the call
    that runs them (``Module.__call__`` takes it when any hook is registered)."""

    _forward_hooks: OrderedDict[int, Any]
    _forward_hooks_with_kwargs: OrderedDict[int, Any]
    _forward_hooks_always_called: OrderedDict[int, Any]
    _forward_pre_hooks: OrderedDict[int, Any]
    _forward_pre_hooks_with_kwargs: OrderedDict[int, Any]
    _backward_hooks: OrderedDict[int, Any]
    _backward_pre_hooks: OrderedDict[int, Any]
    _is_full_backward_hook: bool | None
    forward: Callable[..., Any]

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` (with_kwargs: ``hook(module, args, kwargs)``) before
        forward; it may return new args (and kwargs)."""
        handle = add_hook(self._forward_pre_hooks, hook, prepend,
                          extra=self._forward_pre_hooks_with_kwargs)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False, always_call: bool = False
                              ) -> RemovableHandle:
        """``hook(module, args, output)`` (with_kwargs: ``hook(module, args, kwargs,
        output)``) after forward; it may return a new output. ``always_call``: run it even
        when forward raises."""
        handle = add_hook(self._forward_hooks, hook, prepend,
                          extra=[self._forward_hooks_with_kwargs,
                                 self._forward_hooks_always_called])
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook: Callable[..., Any],
                                        prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` when the gradients of the outputs are known; it
        may return new ones."""
        return add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable[..., Any],
                                    prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` when the gradients of the inputs are
        known; it may return new grad_input."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward "
                               "hooks on a single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        return add_hook(self._backward_hooks, hook, prepend)

    def _call_with_hooks(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        for hook_id, hook in (*GLOBAL.forward_pre.items(), *self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(f"forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        backward_hooks = [*GLOBAL.backward.values(), *self._backward_hooks.values()]
        backward_pre_hooks = [*GLOBAL.backward_pre.values(), *self._backward_pre_hooks.values()]
        bw_hook = None
        if (backward_hooks or backward_pre_hooks) and ag.is_grad_enabled():
            bw_hook = BackwardHook(self, backward_hooks, backward_pre_hooks)
            args = bw_hook.setup_input_hook(args)
        forward_hooks = (*GLOBAL.forward.items(), *self._forward_hooks.items())
        try:
            result = self.forward(*args, **kwargs)
        except Exception:
            for hook_id, hook in forward_hooks:
                if hook_id in GLOBAL.forward_always_called or \
                        hook_id in self._forward_hooks_always_called:
                    try:
                        self._run_forward_hook(hook_id, hook, args, kwargs, None)
                    except Exception as e:
                        warnings.warn("global module forward hook with ``always_call=True`` "
                                      f"raised an exception that was silenced as another error "
                                      f"was raised in forward: {e}", stacklevel=2)
            raise
        for hook_id, hook in forward_hooks:
            hook_result = self._run_forward_hook(hook_id, hook, args, kwargs, result)
            if hook_result is not None:
                result = hook_result
        if bw_hook is not None:
            if not isinstance(result, (E.Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a "
                              f"Tensor or a tuple of Tensors but received {type(result)}",
                              stacklevel=2)
            result = bw_hook.setup_output_hook(result)
        return result

    def _run_forward_hook(self, hook_id: int, hook: Callable[..., Any], args: Any,
                          kwargs: Any, result: Any) -> Any:
        if hook_id in self._forward_hooks_with_kwargs:
            return hook(self, args, kwargs, result)
        return hook(self, args, result)
