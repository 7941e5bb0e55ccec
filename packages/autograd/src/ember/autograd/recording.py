"""The two hooks autograd installs into tensor-core's dispatch.

``record(op, inputs, params, out)`` runs after every op one of whose tensor inputs
requires grad: it makes the op's node (the outputs' ``grad_fn``). It is on the hot path
of every op in a training step, so it is written flat: one node object, one tuple of
edges, one tuple of input versions, no per-call dicts.

``inplace(self, result, op)`` runs before an in-place op writes ``result`` into ``self``:
it refuses leaves that require grad and moves ``self`` onto ``result``'s history (for a
view, its base gets a ``CopySlices`` node: the base with the view's region replaced).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from ember.core.dispatch import Op, grad_mode
from ember.core.tensor import Tensor, make

from . import anomaly_mode
from .formulas import FORMULAS, Formula, missing_formula
from .graph import Freed, Node, NodeExtra, TensorMeta, saved_hooks

__all__ = ["record", "inplace", "node_class"]

_next_seq = itertools.count().__next__
_new = object.__new__
_by_op: dict[Op, Formula] = {}
_node_classes: dict[str, type[Node]] = {}


def node_class(name: str) -> type[Node]:
    """A Node subclass named like torch's (``type(y.grad_fn).__name__ == 'MulBackward0'``)."""
    cls = _node_classes.get(name)
    if cls is None:
        cls = _node_classes[name] = type(name, (Node,), {"__slots__": ()})
    return cls


def _formula(op: Op) -> Formula:
    f = FORMULAS.get(op.name)
    if f is None:
        f = missing_formula(op.name)
    if f.node_class is None:
        f.node_class = node_class(f.default_name(op.name))
    _by_op[op] = f
    return f


def edges(inputs: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """``(next, versions)``: an edge and the current version of each input."""
    if len(inputs) == 1:
        x = inputs[0]
        if x.__class__ is Tensor:  # the common unary case, inlined
            vc = x._vc
            if not x._requires_grad:
                return (None,), (0 if vc is None else vc[0],)
            fn = x.grad_fn
            if fn is None:
                return ((x, 0),), (0 if vc is None else vc[0],)
            m = x._ag
            return ((fn, 0 if m is None else m.output_nr),), (0 if vc is None else vc[0],)
    nxt: list[Any] = []
    versions: list[Any] = []
    for x in inputs:
        if isinstance(x, Tensor):
            vc = x._vc
            versions.append(0 if vc is None else vc[0])
            if x._requires_grad:
                fn = x.grad_fn
                if fn is None:
                    nxt.append((x, 0))
                else:
                    m = x._ag
                    nxt.append((fn, 0 if m is None else m.output_nr))
            else:
                nxt.append(None)
        else:
            versions.append(None)
            nxt.append(None)
    return tuple(nxt), tuple(versions)


def _alias(t: Tensor) -> Tensor:
    """The same storage and version counter, without ``t``'s grad_fn (no node->out cycle)."""
    a = make(t._data, t.dtype, t.device)
    a._vc = t._ensure_vc()
    return a


def record(op: Op, inputs: tuple[Any, ...], params: Any, out: Any) -> None:
    """Make ``out``'s grad_fn (tensor-core calls this when an input requires grad)."""
    if not grad_mode.enabled or grad_mode.inference:
        return
    f = _by_op.get(op)
    if f is None:
        if not op.differentiable:
            return
        f = _formula(op)
    if out.__class__ is not Tensor and isinstance(out, tuple):
        _record_multi(op, f, inputs, params, out)
        return
    if out.dtype.category < 2:
        return
    node = _op_node(op, f, inputs, params, 1)
    out._requires_grad = True
    out.grad_fn = node
    if f.saves_result:
        node.out = _alias(out)
        node.out_version = out._version
    else:
        node.out = None
    if saved_hooks.stack or anomaly_mode.state.enabled:
        _record_extras(node, f, (out,))


def _op_node(op: Op, f: Formula, inputs: tuple[Any, ...], params: Any, n_out: int) -> Node:
    """The node of one run of a registered op, linked to its inputs' nodes."""
    node = _new(f.node_class)
    node.op = op
    node.params = params
    node.inputs = inputs
    node.formula = f
    node.seq = _next_seq()
    node.n_out = n_out
    node.extra = None
    node.next, node.versions = edges(inputs)
    if f.variants:
        node.__class__ = node_class(f.name(node))  # type: ignore[misc,operator]
    return node


def _record_multi(op: Op, f: Formula, inputs: tuple[Any, ...], params: Any,
                  outs: tuple[Any, ...]) -> None:
    diff = [o is not None and o.dtype.category >= 2 for o in outs]
    if not any(diff):
        return
    node = _op_node(op, f, inputs, params, len(outs))
    for i, o in enumerate(outs):
        if diff[i]:
            o._requires_grad = True
            o.grad_fn = node
            if i:
                set_output_nr(o, i)
    if f.saves_result:
        node.out = tuple(_alias(o) if d else o for o, d in zip(outs, diff))
        node.out_version = tuple(o._version if d else None for o, d in zip(node.out, diff))
    else:
        node.out = None
    if saved_hooks.stack or anomaly_mode.state.enabled:
        _record_extras(node, f, outs)


def set_output_nr(t: Tensor, nr: int) -> None:
    m = t._ag
    if m is None:
        if nr:
            t._ag = TensorMeta(nr)
    else:
        m.output_nr = nr


def _record_extras(node: Node, f: Formula, outs: tuple[Any, ...]) -> None:
    """The slow path: pack saved tensors through saved_tensors_hooks, keep anomaly traces."""
    extra = node.extra = NodeExtra()
    if anomaly_mode.state.enabled:
        extra.trace = anomaly_mode.forward_trace()
    if not saved_hooks.stack:
        return
    pack, unpack = saved_hooks.stack[-1]
    packed: dict[int, Any] = {}
    inputs = node.inputs
    for i in f.saved(node) if callable(f.saved) else f.saved:
        if i < len(inputs) and isinstance(inputs[i], Tensor):
            packed[i] = (unpack, pack(inputs[i]))
    if f.saves_result:
        for i, o in enumerate(outs):
            if isinstance(o, Tensor) and o.dtype.category >= 2:
                packed[-1 - i] = (unpack, pack(o))
        node.out = (Freed(outs[0]) if node.n_out == 1 else
                    tuple(Freed(o) if isinstance(o, Tensor) else o for o in outs))
    extra.packed = packed
    # what is packed is all the formula may read: drop the references to the inputs
    node.inputs = tuple(Freed(x) if isinstance(x, Tensor) else x for x in inputs)


# ---------------------------------------------------------------------- in-place

def inplace(self: Tensor, result: Tensor, opname: str) -> None:
    """Before ``self`` is overwritten with ``result``: refuse, or move self's history."""
    if not grad_mode.enabled or grad_mode.inference:
        return
    if self._requires_grad and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if opname == "copy_":
        result = _copy_result(self, result)
    base = self._base
    if base is not None and (self.grad_fn is not None or not base._requires_grad):
        if base._requires_grad and base.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        _copy_slices(base, self, result)
    _rebase(self, result, opname)


def _rebase(self: Tensor, result: Tensor, opname: str) -> None:
    node = result.grad_fn
    if node is None:
        if not self._requires_grad:
            return
        # overwritten by a value without history: gradient stops here (zeros, as in torch)
        node = _overwrite_node(self, opname)
        nr = 0
    else:
        m = result._ag
        nr = 0 if m is None else m.output_nr
        if node.out is not None and node.n_out == 1 and node.out.__class__ is not Freed:
            # the node's output is now ``self``: check the version self will have after the write
            node.out = _alias(self)
            node.out_version = self._version + 1
    old = self.grad_fn
    self.grad_fn = node
    self._requires_grad = True
    set_output_nr(self, nr)
    m = self._ag
    if m is not None and m.retains_grad and old is not None and old.extra is not None:
        # retain_grad() follows the tensor onto its new history
        ref = old.extra.retains.pop(m.output_nr, None)
        if ref is not None:
            node._extra().retains[nr] = ref


def synthetic_node(name: str, formula: Any, inputs: tuple[Tensor, ...], params: Any = None
                   ) -> Node:
    """A node no registered op made (copy_, overwrites, CopySlices, dual anchors).

    ``formula`` maps the output gradient to ``inputs``; the first input's value is not
    kept (it is being overwritten, or only its history matters).
    """
    node = _new(node_class(name))
    node.op = None
    node.params = params
    node.inputs = (Freed(inputs[0]), *inputs[1:])
    node.formula = formula
    node.seq = _next_seq()
    node.n_out = 1
    node.extra = None
    node.out = None
    node.next, _ = edges(inputs)
    node.versions = (None,) * len(inputs)
    return node


def _copy_result(self: Tensor, result: Tensor) -> Tensor:
    """``self.copy_(src)``: the new value is src's, and self's old history gets zeros."""
    from .formulas import COPY

    node = synthetic_node("CopyBackwards", COPY, (self, result))
    alias = make(result._data, result.dtype, result.device)
    alias._requires_grad = True
    alias.grad_fn = node
    return alias


def _camel(opname: str) -> str:
    return "".join(p.capitalize() for p in re.split(r"_+", opname) if p)


def _overwrite_node(self: Tensor, opname: str) -> Node:
    from .formulas import OVERWRITE

    return synthetic_node(f"{_camel(opname)}Backward0", OVERWRITE, (self,))


def _copy_slices(base: Tensor, view: Tensor, result: Tensor) -> None:
    """Give ``base`` a history in which the view's region is replaced by ``result``."""
    from .formulas import COPY_SLICES
    from .views import region_index

    node = synthetic_node("CopySlices", COPY_SLICES, (base, result), region_index(base, view))
    base.grad_fn = node
    base._requires_grad = True
    set_output_nr(base, 0)
