"""The backward graph: ``Node`` (a ``grad_fn``), leaf accumulators, hooks, saved tensors.

A node is made by autograd's dispatch step each time a differentiable op runs on inputs
that require grad. It keeps the op and its params, ``next`` (one edge per input:
``(node, output_nr)`` for a non-leaf, ``(leaf_tensor, 0)`` for a leaf that requires grad,
``None`` otherwise), each input's shape, dtype and device (``metas``), and only the
tensors its formula declares it reads (``args``: the saved input tensors, None for the
others, and the non-tensor operands as they were), each checked against the version it
had when the op ran. A node's output tensors are not referenced by the node (no cycles);
an output the formula needs is kept as an alias of its storage.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable
from typing import Any

from ember.core.dispatch import grad_mode
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
    """Stands in for a tensor input a node did not keep (or kept packed): its metadata."""

    __slots__ = ("_data", "shape", "dtype", "device")

    def __init__(self, shape: tuple[int, ...], dtype: Any, device: Any):
        self._data = self
        self.shape = shape
        self.dtype = dtype
        self.device = device

    @property
    def ndim(self) -> int:
        return len(self.shape)


def tensor_meta(t: Tensor) -> tuple[Any, Any, Any]:
    return (t._data.shape, t.dtype, t.device)


class SavedTensor:
    """``grad_fn._raw_saved_<name>``: one saved tensor, whose hooks can be replaced."""

    __slots__ = ("_node", "_key")

    def __init__(self, node: Node, key: int):
        self._node = node
        self._key = key

    def register_hooks(self, pack_hook: Callable[[Tensor], Any],
                       unpack_hook: Callable[[Any], Tensor]) -> None:
        """Pack the saved tensor now with ``pack_hook``; backward reads ``unpack_hook``'s."""
        node = self._node
        value = node.saved(self._key) if self._key >= 0 else node.result(-1 - self._key)
        extra = node._extra()
        if extra.packed is None:
            extra.packed = {}
        extra.packed[self._key] = (unpack_hook, pack_hook(value))
        if self._key >= 0:
            node.args = tuple(_PACKED if i == self._key else a for i, a in enumerate(node.args))
        else:
            node.out = _PACKED if node.n_out == 1 else tuple(
                _PACKED if i == -1 - self._key else o for i, o in enumerate(node.out))


class _Packed:
    """Marks a saved value that lives packed in ``node.extra.packed``."""

    __slots__ = ()


_PACKED = _Packed()


class Node:
    """``torch.autograd.graph.Node``: the backward function that produced a tensor."""

    __slots__ = ("op", "params", "args", "metas", "versions", "next", "seq", "formula", "out",
                 "out_version", "n_out", "extra", "__weakref__")

    op: Any
    params: Any
    args: tuple[Any, ...]
    metas: tuple[Any, ...]
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
        """One ``(node, output_nr)`` per differentiable input, as torch lists them: the
        floating-point tensor operands (every operand of an arithmetic op, whose numbers
        torch wraps as tensors); leaves appear as their AccumulateGrad."""
        edges = self.next
        listed = getattr(self.formula, "listed", None)
        if listed is not None:
            edges = tuple(edges[i] for i in listed if i < len(edges))
        else:
            edges = tuple(e for e, m in zip(edges, self.metas)
                          if m is not None and m[1].category >= 2)
        return tuple((None, 0) if e is None else
                     (accumulator(e[0]), 0) if isinstance(e[0], Tensor) else e
                     for e in edges)

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
        """Operand ``i`` as the op saw it, for the formula: a saved tensor (raises if freed or
        modified since) or a non-tensor operand."""
        versions = self.versions
        if versions is None:
            raise freed_error()
        x = self.args[i]
        if x is None:
            if self.metas[i] is not None:
                raise RuntimeError(f"{self.name()}: its formula reads input {i}, which it does "
                                   "not declare it saves")
            return None
        if x.__class__ is _Packed:
            return self._unpack(i)
        v = versions[i]
        if v is None:
            return x
        x = saved_operand(x)
        vc = x._vc
        if (0 if vc is None else vc[0]) != v:
            raise modified_error(x, v, x._grad_fn)
        return x

    def unpack_saved(self) -> None:
        """Check every saved tensor before the formula runs, as torch unpacks them all when
        its node runs: one written in place since raises even where the formula's branch
        for these values does not read it. Packed ones are unpacked where they are read."""
        versions = self.versions
        if versions is None:
            return  # freed: the formula's reads raise
        for x, v in zip(self.args, versions):
            if v is not None and x is not None and x.__class__ is not _Packed:
                vc = x._vc
                if (0 if vc is None else vc[0]) != v:
                    x = saved_operand(x)
                    raise modified_error(x, v, x._grad_fn)
        out = self.out
        if out is None or out.__class__ is _Packed:
            return
        if self.n_out == 1:
            v = self.out_version
            vc = out._vc
            if v is not None and (0 if vc is None else vc[0]) != v:
                raise modified_error(out, v, self)
            return
        versions = self.out_version
        for alias, v in zip(out, versions):
            if alias is not None and alias.__class__ is not _Packed and v is not None \
                    and alias._version != v:
                raise modified_error(alias, v, self)

    @property
    def inputs(self) -> tuple[Any, ...]:
        """Each operand: the saved tensor, or its metadata (shape, dtype, device) where the
        node did not keep it, or the non-tensor operand."""
        return tuple(a if m is None or (a is not None and a.__class__ is not _Packed)
                     else Freed(*m) for a, m in zip(self.args, self.metas))

    def needs(self, i: int) -> bool:
        """Whether input ``i`` gets a gradient from this node."""
        return self.next[i] is not None

    def result(self, i: int = 0) -> Tensor:
        """Output ``i`` (in the graph, as this node's output), for formulas that need it."""
        if self.versions is None:
            raise freed_error()
        if self.n_out == 1:
            alias, version = self.out, self.out_version
        else:
            alias, version = self.out[i], self.out_version[i]
        if alias is None:
            raise RuntimeError(f"{self.name()}: its formula reads output {i}, which it does not "
                               "declare it saves")
        if alias.__class__ is _Packed:
            return self._unpack(-1 - i)
        vc = alias._vc
        if version is not None and (0 if vc is None else vc[0]) != version:
            raise modified_error(alias, version, self)
        if alias.dtype.category < 2 or not grad_mode.enabled:
            # no backward of the backward to link it into (create_graph=False)
            return alias  # type: ignore[no-any-return]
        out = make(alias._data, alias.dtype, alias.device, alias._row_major)
        out._vc = alias._vc
        out._requires_grad = True
        out._grad_fn = self
        if i:
            out._ag = TensorMeta(i)
        return out

    def _unpack(self, key: int) -> Any:
        assert self.extra is not None and self.extra.packed is not None
        unpack, packed = self.extra.packed[key]
        return unpack(packed)

    def release(self) -> None:
        """Free what the formula would read (after a backward without retain_graph):
        reading a saved value afterwards raises."""
        self.versions = None
        self.out = None
        self.args = tuple([None if isinstance(a, Tensor) else a for a in self.args])
        extra = self.extra
        if extra is not None:
            extra.packed = None

    # ------------------------------------------------------------------ saved, by name
    def __getattr__(self, name: str) -> Any:
        # torch's nodes answer ``_saved_self``, ``_saved_other``, ``_saved_result``,
        # ``_raw_saved_self``, ``_saved_self_sym_sizes`` and their params (``_saved_dim``)
        raw = name.startswith("_raw_saved_")
        if not (raw or name.startswith("_saved_")):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        key = name[11:] if raw else name[7:]
        found = _saved_key(self, key)
        if found is not None:
            index, kept = found
            if not kept:
                return None
            if raw:
                return SavedTensor(self, index)
            return self.result(-1 - index) if index < 0 else self.saved(index)
        if not raw:
            if key.endswith("_sym_sizes"):
                found = _saved_key(self, key[:-10])
                if found is not None and found[0] >= 0:
                    return self.metas[found[0]][0]
            params = self.params
            if isinstance(params, dict) and key in params:
                return params[key]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


def saved_operand(x: Tensor) -> Tensor:
    """What a node saves of operand ``x``: the tensor a wrapper promoted, where ``x`` is
    its promoted copy (torch saves operands before its kernels promote them)."""
    return getattr(x, "_cast_of", x)


def _saved_key(node: Node, key: str) -> tuple[int, bool] | None:
    """``(index, kept)`` for a torch name of an operand (index ``-1 - k`` for output ``k``,
    ``result``): whether the node keeps it; None for a name it does not have."""
    if key == "result" or (key.startswith("result") and key[6:].isdigit()):
        if not node.formula.saves_result:
            return None
        return -1 - int(key[6:] or 0), node.out is not None
    op = node.op
    names = op.arg_names if op is not None else ()
    if key not in names:
        return None
    i = names.index(key)
    if i >= len(node.args):
        return None
    # a non-tensor operand (a Python number) is always kept
    return i, node.metas[i] is None or node.args[i] is not None


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
        # torch's words for the node: its name without "Backward0" (DivBackward2 is Div2)
        where = f", which is output 0 of {re.sub(r'Backward(0$)?', '', producer.name())},"
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
