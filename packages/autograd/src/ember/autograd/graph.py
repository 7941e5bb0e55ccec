"""The backward graph: ``Node`` (a ``grad_fn``), leaf accumulators, hooks, saved tensors.

A node is made by the record hook each time a differentiable op runs on inputs that
require grad. It keeps the op, its params, the inputs as given (read lazily by the
formula, each checked against the version it had when the op ran) and ``next``: one
edge per input, ``(node, output_nr)`` for a non-leaf, ``(leaf_tensor, 0)`` for a leaf
that requires grad, ``None`` otherwise. A node's output tensors are not referenced by the
node (no cycles); an output the formula needs is kept as an alias of its storage.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable
from typing import Any

from ember.core.tensor import Tensor, make

__all__ = ["Node", "AccumulateGrad", "RemovableHandle", "saved_tensors_hooks",
           "disable_saved_tensors_hooks"]


class RemovableHandle:
    """Returned by ``register_hook`` and friends; ``remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "_fn")

    def __init__(self, hooks: list[Any], fn: Any):
        self._hooks = hooks
        self._fn = fn

    def remove(self) -> None:
        hooks = self._hooks
        for i, f in enumerate(hooks):
            if f is self._fn:
                del hooks[i]
                return

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


class NodeExtra:
    """What few nodes carry: hooks, retained grads, packed saved tensors, anomaly trace."""

    __slots__ = ("hooks", "prehooks", "tensor_prehooks", "retains", "metadata", "packed",
                 "trace", "parent")

    def __init__(self) -> None:
        self.hooks: list[Callable[..., Any]] = []
        self.prehooks: list[Callable[..., Any]] = []
        # tensor hooks of the node's outputs, by output number; retained grads likewise
        self.tensor_prehooks: dict[int, list[Callable[..., Any]]] = {}
        self.retains: dict[int, weakref.ref[Tensor]] = {}
        self.metadata: dict[str, Any] = {}
        self.packed: dict[int, Any] | None = None
        self.trace: list[str] | None = None
        self.parent: Node | None = None


class Freed:
    """Stands in for an input after its node was freed: keeps only what the engine reads."""

    __slots__ = ("_data", "shape", "dtype", "device")

    def __init__(self, t: Tensor):
        self._data = self
        self.shape = t._data.shape
        self.dtype = t.dtype
        self.device = t.device


class Node:
    """``torch.autograd.graph.Node``: the backward function that produced a tensor."""

    __slots__ = ("op", "params", "inputs", "versions", "next", "seq", "formula", "out",
                 "out_version", "n_out", "extra", "__weakref__")

    op: Any
    params: Any
    inputs: tuple[Any, ...]
    versions: tuple[Any, ...] | None
    next: tuple[Any, ...]
    seq: int
    formula: Any
    out: Any
    out_version: Any
    n_out: int
    extra: NodeExtra | None

    # ------------------------------------------------------------------ torch API
    def name(self) -> str:
        """The node's name as torch spells it, e.g. ``'MulBackward0'``."""
        return type(self).__name__

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        """One ``(node, output_nr)`` per input; leaves appear as their AccumulateGrad."""
        return tuple((None, 0) if e is None else
                     (accumulator(e[0]), 0) if isinstance(e[0], Tensor) else e
                     for e in self.next)

    @property
    def metadata(self) -> dict[str, Any]:
        return self._extra().metadata

    def _sequence_nr(self) -> int:
        return self.seq

    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after the node; may return new grad_inputs."""
        hooks = self._extra().hooks
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before the node; may return new grad_outputs."""
        hooks = self._extra().prehooks
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    # ------------------------------------------------------------------ internals
    def _extra(self) -> NodeExtra:
        extra = self.extra
        if extra is None:
            extra = self.extra = NodeExtra()
        return extra

    def saved(self, i: int) -> Any:
        """Input ``i`` as the op saw it, for the formula; raises if freed or modified since."""
        versions = self.versions
        if versions is None:
            raise freed_error()
        x = self.inputs[i]
        if x.__class__ is Freed:
            return self._unpack(i)
        v = versions[i]
        if v is not None:
            vc = x._vc
            if (0 if vc is None else vc[0]) != v:
                raise modified_error(x, v, x.grad_fn)
        return x

    def result(self, i: int = 0) -> Tensor:
        """Output ``i`` (in the graph, as this node's output), for formulas that need it."""
        if self.versions is None:
            raise freed_error()
        if self.n_out == 1:
            alias, version = self.out, self.out_version
        else:
            alias, version = self.out[i], self.out_version[i]
        if alias.__class__ is Freed:
            return self._unpack(-1 - i)
        if version is not None and alias._version != version:
            raise modified_error(alias, version, self)
        if alias.dtype.category < 2:
            return alias  # type: ignore[no-any-return]
        out = make(alias._data, alias.dtype, alias.device)
        out._vc = alias._vc
        out._requires_grad = True
        out.grad_fn = self
        if i:
            out._ag = TensorMeta(i)
        return out

    def _unpack(self, key: int) -> Any:
        assert self.extra is not None and self.extra.packed is not None
        unpack, packed = self.extra.packed[key]
        return unpack(packed)

    def release(self) -> None:
        """Free what the formula would read (after a backward without retain_graph).

        Reading a saved value afterwards raises; inputs are replaced by their metadata,
        except small non-view ones (not worth the allocation: they hold no other memory).
        """
        self.versions = None
        self.out = None
        inputs = self.inputs
        for x in inputs:
            if isinstance(x, Tensor) and (x._base is not None or x._data.nbytes > _KEEP_BYTES):
                self.inputs = tuple([Freed(x) if isinstance(x, Tensor) else x for x in inputs])
                return


_KEEP_BYTES = 4096


class AccumulateGrad(Node):
    """The node standing for a leaf tensor: its gradient is accumulated into ``.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor):
        self.variable = variable
        self.next = ()
        self.extra = None
        self.seq = -1

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        return ()


class TensorMeta:
    """A tensor's autograd extras (``Tensor._ag``), made only when one is needed."""

    __slots__ = ("output_nr", "hooks", "post_hooks", "retains_grad", "acc")

    def __init__(self, output_nr: int = 0):
        self.output_nr = output_nr
        self.hooks: list[Callable[..., Any]] | None = None
        self.post_hooks: list[Callable[..., Any]] | None = None
        self.retains_grad = False
        self.acc: AccumulateGrad | None = None


def meta(t: Tensor) -> TensorMeta:
    m = t._ag
    if m is None:
        m = t._ag = TensorMeta()
    return m  # type: ignore[no-any-return]


def accumulator(leaf: Tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node (one per leaf, so ``next_functions`` compare by identity)."""
    m = meta(leaf)
    if m.acc is None:
        m.acc = AccumulateGrad(leaf)
    return m.acc


# ---------------------------------------------------------------------- errors

_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors "
          "after they have already been freed). Saved intermediate values of the graph are freed "
          "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
          "backward through the graph a second time or if you need to access saved tensors after "
          "calling backward.")


def freed_error() -> RuntimeError:
    return RuntimeError(_FREED)


def tensor_type_name(t: Any) -> str:
    """torch's legacy type name of a tensor, e.g. ``torch.FloatTensor``."""
    from ember.core.ops.conversion import type as tensor_type

    return tensor_type(t)  # type: ignore[no-any-return]


def modified_error(t: Tensor, expected: int, producer: Node | None) -> RuntimeError:
    where = ""
    if producer is not None:
        where = f", which is output 0 of {re.sub(r'Backward[0-9]*$', '', producer.name())},"
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{tensor_type_name(t)} {list(t._data.shape)}]{where} is at version "
        f"{t._version}; expected version {expected} instead. Hint: enable anomaly detection to "
        "find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False).")


# ---------------------------------------------------------------------- saved tensors hooks

class _SavedHooks(threading.local):
    def __init__(self) -> None:
        self.stack: list[tuple[Callable[..., Any], Callable[..., Any]]] = []
        self.disabled: str | None = None


saved_hooks = _SavedHooks()


class saved_tensors_hooks:
    """Pack/unpack hooks for the tensors saved for backward.

    Inside the block, each tensor an op saves is passed to ``pack_hook`` when the op runs
    and the formula gets ``unpack_hook(packed)`` back during backward::

        with ember.autograd.graph.saved_tensors_hooks(lambda t: t.numpy(), ember.tensor):
            y = x.exp()
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor | None]):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        if saved_hooks.disabled is not None:
            raise RuntimeError(saved_hooks.disabled)
        saved_hooks.stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc: Any) -> None:
        saved_hooks.stack.pop()


class disable_saved_tensors_hooks:
    """Inside the block, using ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``."""

    def __init__(self, error_message: str):
        self.error_message = error_message
        self.prev: str | None = None

    def __enter__(self) -> None:
        self.prev = saved_hooks.disabled
        saved_hooks.disabled = self.error_message

    def __exit__(self, *exc: Any) -> None:
        saved_hooks.disabled = self.prev
