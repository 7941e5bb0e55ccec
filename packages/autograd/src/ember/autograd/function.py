"""``ember.autograd.Function``: user-defined ops with a hand-written backward.

As in torch, ``ctx`` is the backward node itself: an instance of ``<Name>Backward``,
made for each ``apply``, which becomes the ``grad_fn`` of the outputs. Both styles are
supported: ``forward(ctx, *args)``, and ``forward(*args)`` with
``setup_context(ctx, inputs, output)``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import ember.core as E
from ember.core.dispatch import grad_mode
from ember.core.tensor import DEFAULT, Tensor, make

from .formulas import Formula
from .grad_mode import no_grad
from .graph import _PACKED, Node, freed_error, modified_error, saved_hooks
from .recording import _next_seq, edges, node_class, set_output_nr

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]


class FunctionCtx:
    """What ``forward``/``setup_context`` may tell ``backward`` through ``ctx``."""

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Save tensors for ``backward`` (read back as ``ctx.saved_tensors``)."""
        self.to_save = tensors

    def mark_dirty(self, *args: Tensor) -> None:
        """Declare inputs that ``forward`` modified in place (and returns)."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args: Tensor) -> None:
        """Declare outputs that get no gradient (e.g. indices)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` gets zeros (default) or None for outputs without a gradient."""
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The node of one ``Function.apply``: calls the Function's ``backward``."""

    _forward_cls: type[Function]

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        """The tensors given to ``save_for_backward``, checked for in-place modification."""
        if self.versions is None:
            raise freed_error()
        out: list[Tensor | None] = []
        entry: Any
        for i, entry in enumerate(self._saved):
            if entry is None:
                out.append(None)
                continue
            t, version, output_nr = entry
            if t is _PACKED:
                assert self.extra is not None and self.extra.packed is not None
                unpack, packed = self.extra.packed[i]
                out.append(unpack(packed))
                continue
            if t._version != version:
                raise modified_error(t, version, self if output_nr is not None else t._grad_fn)
            if output_nr is not None:
                t = _as_output(t, self, output_nr)
            out.append(t)
        return tuple(out)

    saved_variables = saved_tensors

    def release(self) -> None:
        Node.release(self)
        self._saved = ()


def _as_output(alias: Tensor, node: Node, nr: int) -> Tensor:
    t = make(alias._data, alias.dtype, alias.device, alias._row_major)
    t._vc = alias._vc
    if alias.dtype.category >= 2:
        t._requires_grad = True
        t._grad_fn = node
        set_output_nr(t, nr)
    return t


def _function_vjp(ctx: Any, grads: Any) -> tuple[Any, ...]:
    grads = (grads,) if ctx.n_out == 1 else tuple(grads)
    if ctx.materialize_grads:
        grads = tuple(E.zeros(shape, dtype=dt, device=dev) if g is None else g
                      for g, (shape, dt, dev) in zip(grads, ctx._out_meta))
    result = ctx._forward_cls.backward(ctx, *grads)
    if not isinstance(result, tuple):
        result = (result,)
    expected = len(ctx.metas)
    if len(result) != expected:
        if len(result) > expected and all(r is None for r in result[expected:]):
            result = result[:expected]
        else:
            raise RuntimeError(f"function {ctx.name()} returned an incorrect number of gradients "
                               f"(expected {expected}, got {len(result)})")
    return result


_FUNCTION_FORMULA = Formula(_function_vjp, passes_complex=True, conjugates=True)


class FunctionMeta(type):
    """Gives each Function subclass its backward node class, ``<Name>Backward``."""

    def __init__(cls, name: str, bases: tuple[type, ...], attrs: dict[str, Any]):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class of custom autograd ops.

    Subclasses define ``forward`` and ``backward`` as staticmethods and are called through
    ``apply``::

        class Exp(Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, grad):
                y, = ctx.saved_tensors
                return grad * y

        y = Exp.apply(x)
    """

    _backward_cls: type[BackwardCFunction]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method.")

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` (without recording) and make its outputs' ``grad_fn``."""
        ctx: Any = object.__new__(cls._backward_cls)
        ctx.materialize_grads = True
        ctx.to_save = ()
        ctx.dirty_tensors = ()
        ctx.non_differentiable = ()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        recording = grad_mode.enabled and not grad_mode.inference and any(ctx.needs_input_grad)
        with no_grad():
            if cls.setup_context is not Function.setup_context:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        if not recording:
            return outputs
        return _connect(ctx, args, outputs)


def _connect(ctx: Any, args: tuple[Any, ...], outputs: Any) -> Any:
    """Make ``ctx`` the grad_fn of the outputs and keep what backward will read."""
    single = not isinstance(outputs, tuple)
    outs = (outputs,) if single else outputs
    ctx.op = None
    ctx.params = None
    ctx.formula = _FUNCTION_FORMULA
    ctx.extra = None
    ctx.out = None
    ctx.next, ctx.metas, ctx.versions = edges(args)
    ctx.seq = _next_seq()  # after edges: renewing a view's history makes a node
    ctx.args = tuple(None if isinstance(a, Tensor) else a for a in args)
    dirty = {id(t) for t in ctx.dirty_tensors}
    frozen = {id(t) for t in ctx.non_differentiable}
    inputs = {id(a) for a in args if isinstance(a, Tensor)}
    wrapped: list[Any] = []
    meta: list[Any] = []
    for o in outs:
        if not isinstance(o, Tensor):
            wrapped.append(o)
            continue
        nr = len(meta)
        meta.append((o._data.shape, o.dtype, o.device))
        if id(o) in dirty:
            if o._requires_grad and o._grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
        elif id(o) in inputs:
            # an input returned as is: the output is a new tensor over the same storage
            alias = make(o._data, o.dtype, o.device, o._row_major)
            alias._vc = o._ensure_vc()
            alias._base = o if o._base is None or o._gv < 0 else o._base
            alias._gv = alias._vc[0]
            alias._cm = DEFAULT
            o = alias
        if id(o) not in frozen and o.dtype.category >= 2:
            o._grad_fn = ctx
            o._requires_grad = True
            set_output_nr(o, nr)
        wrapped.append(o)
    ctx.n_out = len(meta)
    ctx._out_meta = tuple(meta)
    ctx._saved = _save(ctx, wrapped)
    return wrapped[0] if single else tuple(wrapped)


def _save(ctx: Any, outputs: list[Any]) -> tuple[Any, ...]:
    """Each saved tensor with its version; outputs kept as aliases (no node<->output cycle)."""
    out_nr = {id(o): i for i, o in enumerate(o for o in outputs if isinstance(o, Tensor))}
    saved: list[Any] = []
    packed: dict[int, Any] = {}
    pack = saved_hooks.stack[-1] if saved_hooks.stack else None
    for i, t in enumerate(ctx.to_save):
        if t is None:
            saved.append(None)
            continue
        if not isinstance(t, Tensor):
            raise TypeError("save_for_backward can only save variables, but argument "
                            f"{i} is of type {type(t).__name__}")
        nr = out_nr.get(id(t))
        if pack is not None:
            packed[i] = (pack[1], pack[0](t))
            saved.append((_PACKED, None, nr))
            continue
        if nr is not None:
            alias = make(t._data, t.dtype, t.device, t._row_major)
            alias._vc = t._ensure_vc()
            t = alias
        saved.append((t, t._version, nr))
    if packed:
        ctx._extra().packed = packed
    ctx.to_save = ()
    return tuple(saved)


def _delayed_error_vjp(node: Any, grads: Any) -> Any:
    raise RuntimeError("trying to differentiate twice a function that was marked with "
                       "@once_differentiable")


_DELAYED = Formula(_delayed_error_vjp)


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a Function's ``backward`` that is not itself differentiable: it runs without
    recording, and differentiating its result raises."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        if not grad_mode.enabled:
            return outputs
        grads_in = tuple(a for a in args if isinstance(a, Tensor) and a._requires_grad)
        if not grads_in:
            return outputs
        node = object.__new__(node_class("DelayedError"))
        node.op = node.params = node.out = node.extra = None
        node.formula = _DELAYED
        node.n_out = 1
        node.next, node.metas, node.versions = edges(grads_in)
        node.seq = _next_seq()
        node.args = (None,) * len(grads_in)
        single = not isinstance(outputs, tuple)
        result = []
        for o in (outputs,) if single else outputs:
            if isinstance(o, Tensor) and o.dtype.category >= 2:
                o = make(o._data, o.dtype, o.device, o._row_major)
                o._requires_grad = True
                o._grad_fn = node
            result.append(o)
        return result[0] if single else tuple(result)

    return wrapper
