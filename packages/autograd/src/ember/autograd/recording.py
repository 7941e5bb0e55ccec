"""Autograd's step of the dispatcher: it records each differentiable op as a node.

``step(op, args, params, below)`` runs when a differentiable op's operand requires grad
and grad mode is on: it runs the op beneath (the modes and the kernel) and makes the
outputs' ``grad_fn``. The node keeps what its formula declares it reads, no more: the
saved input tensors, the outputs when the formula reads them, and every input's
metadata. It is on the hot path of every op of a training step, so it is written flat.

In-place ops are recorded by what they compute: ``x.mul_(y)`` runs ``mul`` on ``x`` (on a
clone of it when the formula reads it, so that the saved value is the one before the
write), writes the value back into ``x`` (``copy_`` beneath autograd) and gives ``x`` the
value's history. For a view, its base gets a ``CopySlices`` node: the base with the view's
region replaced. ``copy_`` itself gives ``x`` a CopyBackwards node. Every view of a storage
written in place since the view's history was taken (its ``_gv`` behind the version) gets
a new history when next read (``renew``): its region of the base's history, as torch's.
"""

from __future__ import annotations

import gc
import itertools
import re
import sys
from typing import Any

from ember.core.dispatch import REGISTRY, Op, dispatch, grad_mode
from ember.core.dtypes import scalar_type_name
from ember.core.ops.operands import check_inplace_shape
from ember.core.tensor import (
    DEFAULT,
    NO_GRAD_MODE,
    Tensor,
    make,
    refuse_view_writes,
    refused_view_write,
)

from . import anomaly_mode
from .formula import NOT_IMPLEMENTED
from .formulas import FORMULAS, INPLACE_FORMULAS, Formula, missing_formula
from .graph import _PACKED, Node, NodeExtra, TensorMeta, saved_hooks, saved_operand

__all__ = ["step", "node_class", "synthetic_node", "set_formula", "history",
           "output_nr"]

_next_seq = itertools.count().__next__
_new = object.__new__
_by_op: dict[Op, Formula] = {}
_node_classes: dict[str, type[Node]] = {}
_COPY_ = REGISTRY["copy_"]
_TO_COPY = REGISTRY["to_copy"]
_CLONE = REGISTRY["clone"]
_WRITEBACK = {"writeback": True}
_NONE, _BOTH = (None,), (0, 1)


def node_class(name: str) -> type[Node]:
    """A Node subclass named like torch's (``type(y.grad_fn).__name__ == 'MulBackward0'``)."""
    cls = _node_classes.get(name)
    if cls is None:
        body: dict[str, Any] = {"__slots__": ()}
        if name in _AUTOGRAD_NAMESPACE:
            full = f"torch::autograd::{name}"
            body["name"] = lambda self: full
        cls = _node_classes[name] = type(name, (Node,), body)
    return cls


# nodes of torch's autograd itself, whose name() carries its C++ namespace
_AUTOGRAD_NAMESPACE = {"CopySlices"}


def formula_of(op: Op) -> Formula:
    f = _by_op.get(op)
    if f is not None:
        return f
    f = FORMULAS.get(op.name)
    if f is None:
        f = missing_formula(op.name)
    if f.node_class is None:
        f.node_class = node_class(f.default_name(op.name))
    _by_op[op] = f
    return f


def set_formula(op: Op, formula: Formula) -> None:
    """Make ``formula`` the VJP of ``op`` (a custom op's ``register_autograd``)."""
    FORMULAS[op.name] = formula
    formula.node_class = None
    _by_op.pop(op, None)


def edges(args: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]]:
    """``(next, metas, versions)``: per operand, where its gradient goes (``_edge``), its
    shape, dtype and device, and its version. Numbers get None in all three."""
    nxt: list[Any] = []
    metas: list[Any] = []
    versions: list[Any] = []
    for x in args:
        if isinstance(x, Tensor):
            vc = x._vc
            versions.append(0 if vc is None else vc[0])
            metas.append(_meta(x))
            nxt.append(_edge(x))
        else:
            versions.append(None)
            metas.append(None)
            nxt.append(None)
    return tuple(nxt), tuple(metas), tuple(versions)


def _alias(t: Tensor) -> Tensor:
    """The same storage and version counter, without ``t``'s grad_fn (no node->out cycle)."""
    a = make(t._data, t.dtype, t.device, t._row_major)
    a._vc = t._ensure_vc()
    return a


# ---------------------------------------------------------------------- the step

def step(op: Op, args: tuple[Any, ...], params: Any, below: Any) -> Any:
    """Run ``op`` beneath autograd and record it (the dispatcher calls this when an
    operand requires grad, grad mode is on and ``op`` is differentiable; for a view op,
    also without grad mode: the views remember it)."""
    if not grad_mode.enabled:
        # a view of a tensor that requires grad requires grad (torch's views ask their base),
        # but has no history and passes no gradient on
        out = below(op, args, params)
        for view in out if out.__class__ is tuple else (out,):
            view._cm = NO_GRAD_MODE
            view._requires_grad = view.dtype.category >= 2
        return out
    if op.mutates:
        return _inplace(op, args, params, below)
    out = below(op, args, params)
    record(op, args, params, out)
    if op.view:
        _inherit_creation(args[0], out)
    return out


def _inherit_creation(parent: Tensor, out: Any) -> None:
    """A view of a view made in a way that refuses writes refuses them too (torch's
    propagate_creation_meta)."""
    if parent._base is None or parent._cm == DEFAULT:
        return
    for view in out if out.__class__ is tuple else (out,):
        if view._cm == DEFAULT:
            view._cm = parent._cm


def record(op: Op, args: tuple[Any, ...], params: Any, out: Any) -> None:
    """Make the node of ``op``'s run on ``args`` that gave ``out``."""
    if grad_mode.inference:
        return
    f = _by_op.get(op)
    if f is None:
        f = formula_of(op)
    if out.__class__ is not Tensor and isinstance(out, tuple):
        _record_multi(op, f, args, params, out)
        return
    if out.dtype.category < 2:
        if op is not _TO_COPY:  # a cast to an integer dtype leaves the graph, as torch's
            _refuse_integer_result(f, out.dtype)
        return
    node = _op_node(op, f, args, params, 1)
    out._requires_grad = True
    out._grad_fn = node
    keep = f.saves_result
    if callable(keep):
        keep = keep(node.next, args)
    if keep:
        alias = node.out = _alias(out)
        node.out_version = alias._vc[0]  # type: ignore[index]
    else:
        node.out = None
    if saved_hooks.stack or anomaly_mode.state.enabled:
        _record_extras(node, f, (out,))
    if f.setup is not None:
        f.setup(node, args, out)


def _op_node(op: Op, f: Formula, args: tuple[Any, ...], params: Any, n_out: int) -> Node:
    """The node of one run of a registered op, linked to its inputs' nodes. A plain tensor
    and at most one more operand (a training step's common case) take an inlined path."""
    node = _new(f.node_class)
    node.op = op
    node.params = params
    node.formula = f
    node.n_out = n_out
    node.extra = None
    n = len(args)
    x = args[0]
    if n <= 2 and x.__class__ is Tensor:
        meta, edge = _link(x)
        vc = x._vc
        version = 0 if vc is None else vc[0]
        y = args[1] if n == 2 else _NONE
        if y is _NONE:
            nxt: tuple[Any, ...] = (edge,)
            node.metas = (meta,)
            node.versions = (version,)
        elif y.__class__ is Tensor or isinstance(y, Tensor):  # (a subclass: a Parameter)
            meta_y, edge_y = _link(y)
            nxt = (edge, edge_y)
            node.metas = (meta, meta_y)
            vc = y._vc
            node.versions = (version, 0 if vc is None else vc[0])
        else:  # a number: kept, as numbers cost nothing to keep
            nxt = (edge, None)
            node.metas = (meta, None)
            node.versions = (version, None)
        saved = f.saved
        if callable(saved):
            saved = saved(nxt)
        if n == 1:
            node.args = args if saved else _NONE
        elif saved == _BOTH:
            node.args = args
        else:
            node.args = (x if 0 in saved else None,
                         y if 1 in saved or not isinstance(y, Tensor) else None)
    else:  # more operands, or a first one that is no plain tensor
        if f.scalar_first is not None and not isinstance(x, Tensor):
            f = node.formula = f.scalar_first
            node.__class__ = node_class(f.default_name(op.name))  # type: ignore[misc]
        nxt, metas, versions = edges(args)
        node.metas = metas
        node.versions = versions
        saved = f.saved
        if callable(saved):
            saved = saved(nxt)
        # the operands the formula reads, and the numbers (which cost nothing to keep)
        node.args = tuple(a if m is None or i in saved else None
                          for i, (a, m) in enumerate(zip(args, metas)))
    node.next = nxt
    # numbered after its inputs' nodes: renewing a view's history (``_edge``) makes one
    node.seq = _next_seq()
    if f.variants:
        node.__class__ = node_class(f.name(node))  # type: ignore[misc,operator]
    return node


def _link(x: Tensor) -> tuple[tuple[Any, Any, Any], Any]:
    """``_meta(x)`` and ``_edge(x)``, in one call for a tensor that is no view and no
    promotion cast (a training step's operands)."""
    fn = x._grad_fn
    if x._base is not None or fn is not None and fn.op is _TO_COPY:
        return _meta(x), _edge(x)
    meta = (x._data.shape, x.dtype, x.device)
    if not x._requires_grad:
        return meta, None
    if fn is None:
        return meta, (x, 0)
    m = x._ag
    return meta, (fn, 0 if m is None else m.output_nr)


def _edge(x: Tensor) -> Any:
    """Where the gradient of operand ``x`` goes: its node and output number, ``(x, 0)`` for
    a leaf, None when it needs none."""
    if not x._requires_grad:
        return None
    if x._base is not None and x._gv >= 0:
        if x._gv != x._vc[0]:  # type: ignore[index]
            renew(x)
        elif x._cm == NO_GRAD_MODE and x._grad_fn is None:
            return None
    fn = x._grad_fn
    if fn is None:
        return (x, 0)
    if fn.op is _TO_COPY:
        src = _source(x)
        if src is not x:
            return _edge(src)
    m = x._ag
    return (fn, 0 if m is None else m.output_nr)


def _source(x: Tensor) -> Tensor:
    """The operand a wrapper's promotion cast ``x`` was made from (``cast``'s ``_cast_of``),
    else ``x``: torch's kernels promote inside, so its nodes link to, and describe, that
    operand."""
    fn = x._grad_fn
    if fn is not None and fn.op is _TO_COPY:
        return getattr(x, "_cast_of", x)  # type: ignore[no-any-return]
    return x


def _meta(x: Tensor) -> tuple[Any, Any, Any]:
    """The shape, dtype and device of the input whose gradient operand ``x`` passes on."""
    x = _source(x)
    return (x._data.shape, x.dtype, x.device)


def _refuse_integer_result(f: Formula, dt: Any) -> None:
    """torch's refusal of a history for an integer result, but for an op it records
    without a derivative (floor_divide), whose result leaves the graph."""
    if f.name != NOT_IMPLEMENTED:
        raise RuntimeError(f"Autograd not support dtype: {scalar_type_name(dt)}")


def _record_multi(op: Op, f: Formula, args: tuple[Any, ...], params: Any,
                  outs: tuple[Any, ...]) -> None:
    diff = [o is not None and o.dtype.category >= 2 for o in outs]
    if f.outputs is not None:
        diff = [d and i in f.outputs for i, d in enumerate(diff)]
    if not any(diff):
        # integer outputs only (values and indices of an integer tensor with a history):
        # refused, as a single output is
        first = next((o for o in outs if o is not None), None)
        if first is not None:
            _refuse_integer_result(f, first.dtype)
        return
    node = _op_node(op, f, args, params, len(outs))
    for i, o in enumerate(outs):
        if diff[i]:
            o._requires_grad = True
            o._grad_fn = node
            if i:
                set_output_nr(o, i)
    keep = f.saves_result
    if callable(keep):
        keep = keep(node.next, args)
    if keep:
        kept = keep if isinstance(keep, tuple) else range(len(outs))
        node.out = tuple(_alias(o) if i in kept and isinstance(o, Tensor) else None
                         for i, o in enumerate(outs))
        node.out_version = tuple(None if o is None else o._version for o in node.out)
    else:
        node.out = None
    if saved_hooks.stack or anomaly_mode.state.enabled:
        _record_extras(node, f, outs)
    if f.setup is not None:
        f.setup(node, args, outs)


# ---------------------------------------------------------------------- views

def history(t: Tensor) -> Any:
    """``t.grad_fn``: the node that made ``t``, renewed first for a view whose storage was
    written in place since its history was taken."""
    if t._base is not None and t._gv >= 0 and t._gv != t._vc[0]:  # type: ignore[index]
        renew(t)
    return t._grad_fn


def renew(view: Tensor) -> None:
    """torch's view + in-place rule: a write into a view's storage (through the base or
    another view) changed the base's history, so the view's history becomes "this region
    of the base" (``AsStridedBackward0``), taken from the base's history now."""
    from .formulas import VIEW_OF_BASE
    from .views import view_positions

    base = view._base
    assert base is not None and view._vc is not None
    if not base._requires_grad and view._grad_fn is None:
        view._gv = view._vc[0]
        return
    if view._cm:
        raise refused_view_write(view, output_nr(view), indirect=True)
    view._gv = view._vc[0]
    if base.dtype is not view.dtype:
        return
    node = synthetic_node("AsStridedBackward0", VIEW_OF_BASE, (base,),
                          {"index": view_positions(base, view)})
    view._grad_fn = node
    view._requires_grad = True
    set_output_nr(view, 0)


def _mark_views(root: Tensor, known: tuple[Tensor, ...]) -> None:
    """``root`` now requires grad: so do the views of it that exist (torch's views ask their
    base). Tensors sharing ``root``'s version counter are its views, the ``known`` tensors
    and saved aliases; only when there are more of them than ``known`` are they looked for
    among the referrers of the counter (a heap scan, paid at this write only)."""
    vc = root._vc
    holders = {id(t) for t in known if t._vc is vc}
    if sys.getrefcount(vc) - 2 <= len(holders):  # minus the name and the call's argument
        return
    for t in gc.get_referrers(vc):
        if isinstance(t, Tensor) and t._base is root and t._gv >= 0 and id(t) not in holders:
            t._requires_grad = t._requires_grad or t.dtype.category >= 2


def output_nr(t: Tensor) -> int:
    """Which output of its node ``t`` is (``Tensor.output_nr``)."""
    m = t._ag
    return 0 if m is None else m.output_nr  # type: ignore[no-any-return]


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
    args = node.args
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            packed[i] = (unpack, pack(saved_operand(a)))
    out = node.out
    if out is not None:
        if node.n_out == 1:
            packed[-1] = (unpack, pack(outs[0]))
            node.out = _PACKED
        else:  # the outputs the formula reads (indices too, as torch saves them)
            for i, o in enumerate(out):
                if o is not None:
                    packed[-1 - i] = (unpack, pack(outs[i]))
            node.out = tuple(None if o is None else _PACKED for o in out)
    extra.packed = packed
    # what is packed is all the formula may read: drop the references to the tensors
    node.args = tuple(_PACKED if isinstance(a, Tensor) else a for a in args)


# ---------------------------------------------------------------------- in-place

def _inplace(op: Op, args: tuple[Any, ...], params: Any, below: Any) -> Any:
    """An in-place op in the graph: computed out of place, written back, rebased. Every
    refusal comes before the write: a refused op leaves its operand unchanged."""
    self = args[0]
    if grad_mode.inference or op is _COPY_ and params is None and self.dtype.category < 2:
        # torch's copy_ gives an integer or bool tensor no history (its other in-place ops,
        # fill_ with a tensor among them, do)
        return below(op, args, params)
    root = self._base
    if root is None or self._gv < 0:  # a view outside autograd is the root of its history
        root = self
    else:
        refuse_view_writes(self)
        history(self)
    had_grad = root._requires_grad
    base = _check_writable_in_graph(self)
    if op is _COPY_:
        src = args[1]
        copying = params is None or not params.get("writeback")
        value = src
        node = _copy_node(self, src, params is not None and "fill" in params) if copying else None
    else:
        functional = op.functional
        assert functional is not None  # every differentiable in-place op names one
        src = self
        if functional.differentiable:
            f = formula_of(functional)
            saved = f.saved
            if not isinstance(saved, tuple):
                saved = saved(tuple(a if isinstance(a, Tensor) and a._requires_grad else None
                                    for a in args))
            if 0 in saved:
                src = dispatch(_CLONE, (self,), None)
        # else (an in-place comparison): a value without history, which overwrites self's
        value = dispatch(functional, (src, *args[1:]), params)
        if value._data.shape != self._data.shape:  # the operands broadcast beyond self
            check_inplace_shape(op.name, self._data.shape, value._data.shape)
        node = None
        if value._grad_fn is not None:
            own = INPLACE_FORMULAS.get(op.name)
            if own is not None:
                value._grad_fn.formula = own
        elif self._requires_grad or any(isinstance(a, Tensor) and a._requires_grad
                                        for a in args[1:]):
            # zeros to self's old history and the operands (torch's EqBackward1), given to
            # the value before a view's base takes it (CopySlices)
            node = _overwrite_node(self, op.name, args[1:])
    below(_COPY_, (self, value), _WRITEBACK)
    if node is not None:  # the new value is self's memory, with the node's history
        value = _alias(self)
        value._requires_grad = True
        value._grad_fn = node
    if base is not None and (value._requires_grad or base._requires_grad) and not (
            params is not None and params.get("metadata")):  # (an in-place view op's)
        _copy_slices(base, self, value)
    _rebase(self, value, op.name, () if op is _COPY_ else args[1:])
    if not had_grad and root._requires_grad:
        _mark_views(root, (root, self, value))
    return self


def _check_writable_in_graph(self: Tensor) -> Tensor | None:
    """torch's refusals of in-place writes into leaves that require grad (and views of
    them); the base whose history a write into a view changes, if any."""
    if self._requires_grad and self._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    base = self._base
    if base is None or self._gv < 0 or not (self._grad_fn is not None
                                             or not base._requires_grad):
        return None
    if base._requires_grad and base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    return base


def _rebase(self: Tensor, value: Tensor, opname: str, reads: tuple[Any, ...] = ()) -> None:
    """``self`` now holds ``value``: it takes value's history. ``reads``: the op's other
    operands, which a value without history (an in-place comparison's) still depends on."""
    node = value._grad_fn
    if node is None:
        if not self._requires_grad and not any(
                isinstance(a, Tensor) and a._requires_grad for a in reads):
            return
        # overwritten by a value without history: gradient stops here (zeros to self's old
        # history and to the operands, as torch's eq_ formula gives)
        node = _overwrite_node(self, opname, reads)
        nr = 0
    else:
        m = value._ag
        nr = 0 if m is None else m.output_nr
        if node.out is not None and node.n_out == 1 and node.out.__class__ is Tensor:
            # the node's output is now ``self``: it checks the version self has after the write
            node.out = _alias(self)
            node.out_version = self._version
    old = self._grad_fn
    self._grad_fn = node
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
    node.formula = formula
    node.n_out = 1
    node.extra = None
    node.out = None
    node.next, node.metas, _ = edges(inputs)
    node.seq = _next_seq()
    node.args = (None, *inputs[1:])
    node.versions = (None,) * len(inputs)
    return node


def _copy_node(self: Tensor, src: Tensor, fill: bool) -> Node:
    """``self.copy_(src)``'s node (``self.fill_(src)``'s, for a 0-d src): the gradient goes
    to ``src`` (summed to its shape), and self's old history gets zeros."""
    from .formulas import COPY, FILL

    node = synthetic_node("FillBackward3" if fill else "CopyBackwards", FILL if fill else COPY,
                          (self, src))
    node.args = (None, None)  # the formula reads no values
    return node


def _camel(opname: str) -> str:
    return "".join(p.capitalize() for p in re.split(r"_+", opname) if p)


# fill.Scalar and fill.Tensor are FillBackward0 and 1: fill_'s nodes are 2 and 3
_FUNCTIONAL_OVERLOADS = {"fill_": 2}


def _overwrite_node(self: Tensor, opname: str, operands: tuple[Any, ...] = ()) -> Node:
    """The node of ``self`` overwritten by a value without history (``operands``: the op's
    others, those that require grad get zeros too)."""
    reads = tuple(a for a in operands if isinstance(a, Tensor) and a._requires_grad)
    from .formulas import OVERWRITE

    # torch's overload number: 1 for an op of two tensors (eq_.Tensor), else 0 (eq_.Scalar),
    # after those of its functional form where torch differentiates that too
    overload = int(any(isinstance(a, Tensor) for a in operands)) + _FUNCTIONAL_OVERLOADS.get(
        opname, 0)
    node = synthetic_node(f"{_camel(opname)}Backward{overload}", OVERWRITE, (self, *reads))
    node.args = (None,) * (1 + len(reads))  # the formula reads no values
    return node


def _copy_slices(base: Tensor, view: Tensor, value: Tensor) -> None:
    """Give ``base`` a history in which the view's region is replaced by ``value``."""
    from .formulas import COPY_SLICES
    from .views import region_index

    node = synthetic_node("CopySlices", COPY_SLICES, (base, value), region_index(base, view))
    node.args = (None, None)
    base._grad_fn = node
    base._requires_grad = True
    set_output_nr(base, 0)
