"""The backward engine: runs the graph from the outputs back to the leaves.

The graph is walked once to collect the nodes reachable from the outputs; since a node
is always created after the nodes of its inputs, sorting by creation number (newest
first) is a topological order, and the one torch's CPU engine follows. Gradients wait in
a buffer per node until the node runs; a leaf's gradient is accumulated as soon as the
last node feeding it has run (so post-accumulate hooks fire early, as in torch).

A formula may return a gradient of the broadcast shape, or of a promoted dtype: the
engine sums it down to the input's shape and casts it to the input's dtype.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Any

from ember.core import meta
from ember.core.creation import empty_strided
from ember.core.dispatch import REGISTRY, dispatch, grad_mode
from ember.core.tensor import Tensor, make

from . import anomaly_mode
from .graph import Node
from .vjp_elementwise import conj
from .zero_grads import ZERO, ZeroGrad, added, kept_zeros, materialized, zero_count

__all__ = ["execute", "sum_to_shape"]

_CLONE, _DETACH, _TO_COPY = REGISTRY["clone"], REGISTRY["detach"], REGISTRY["to_copy"]
_COMPLEX_INTO_REAL = (
    "Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex) to "
    "be true, but got false.  (Could this error message be improved?  If so, please report an "
    "enhancement request to PyTorch.)")


def sum_to_shape(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum ``g`` over the dims it was broadcast along so that it has ``shape``."""
    if g._data.ndim < len(shape):  # an input with extra leading 1s (setitem's value)
        g = g.reshape((1,) * (len(shape) - g._data.ndim) + g._data.shape)  # type: ignore[attr-defined]
    gshape = g._data.shape
    lead = len(gshape) - len(shape)
    if any(n != 1 and n != gshape[i + lead] for i, n in enumerate(shape)):
        raise RuntimeError(f"a gradient of shape {list(gshape)} does not broadcast to the input's "
                           f"shape {list(shape)}")
    dims = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape)
                                      if n == 1 and gshape[i + lead] != 1)
    if dims:
        g = g.sum(dims, keepdim=True)  # type: ignore[attr-defined]
    if lead:
        g = g.reshape(shape)  # type: ignore[attr-defined]
    return g


def _fit(g: Tensor, meta: tuple[Any, Any, Any], passes_complex: bool) -> Tensor:
    """``g`` in the shape, dtype and device ``meta`` gives of the input it flows to (see
    ``Formula.passes_complex``)."""
    shape, dtype, device = meta
    if g._data.shape != shape:
        g = sum_to_shape(g, shape)
    if g.dtype is not dtype or g.device is not device:
        if dtype.category < 2:
            # an integer tensor given a history by an in-place comparison (torch's engine
            # refuses the gradient too, with an internal assert)
            raise RuntimeError(f"a gradient of dtype {g.dtype} reached an input of dtype "
                               f"{dtype}: integer tensors have no gradient "
                               "(isDifferentiableType(grad.scalar_type()) failed)")
        if dtype.category < 3 and g.dtype.category == 3:
            if passes_complex:
                raise RuntimeError(_COMPLEX_INTO_REAL)
            # a real input's gradient is the real part (Ember has no real() op to record yet)
            g = make(g._data.real.copy(), g.dtype.to_real(), g.device)
        # a gradient of its own (not ``cast``: an operand's copy, which shares its counter)
        g = dispatch(_TO_COPY, (g,), {"dtype": dtype, "device": device})
    return g


class GraphTask:
    """The state of one backward pass."""

    __slots__ = ("buffers", "leaf_grads", "leaf_deps", "create_graph", "keep_graph",
                 "leaf_targets", "node_targets", "captured", "accumulate", "zeros")

    def __init__(self, create_graph: bool, keep_graph: bool, accumulate: bool):
        self.buffers: dict[Node, Any] = {}
        self.leaf_grads: dict[Tensor, Tensor | ZeroGrad | None] = {}
        self.leaf_deps: dict[Tensor, int] = {}
        self.create_graph = create_graph
        self.keep_graph = keep_graph
        self.accumulate = accumulate
        self.leaf_targets: dict[Tensor, list[int]] | None = None
        self.node_targets: dict[tuple[Node, int], list[int]] | None = None
        self.captured: list[Tensor | None] = []
        self.zeros = False  # whether a formula gave a ZeroGrad in this pass

    # ------------------------------------------------------------------ delivery
    def send(self, fn: Any, nr: int, g: Tensor | ZeroGrad | None) -> None:
        """Add ``g`` to what flows into output ``nr`` of node ``fn`` (or into leaf ``fn``)."""
        if isinstance(fn, Tensor):
            deps = self.leaf_deps
            if fn not in deps:
                return  # a leaf this pass does not want
            if g is not None:
                old = self.leaf_grads.get(fn)
                self.leaf_grads[fn] = g if old is None else added(old, g)
            left = deps[fn] - 1
            deps[fn] = left
            if left == 0:
                self.finish_leaf(fn)
            return
        if g is None:
            return
        buffers = self.buffers
        if fn.n_out == 1:
            old = buffers.get(fn)
            buffers[fn] = g if old is None else added(old, g)
        else:
            slots = buffers.get(fn)
            if slots is None:
                slots = buffers[fn] = [None] * fn.n_out
            old = slots[nr]
            slots[nr] = g if old is None else added(old, g)

    def finish_leaf(self, leaf: Tensor) -> None:
        got = self.leaf_grads.pop(leaf, None)
        if got is None:
            return
        g = got.materialize() if isinstance(got, ZeroGrad) else got
        m = leaf._ag
        acc = None
        if m is not None:
            if m.hooks:
                g = _run_tensor_hooks(m.hooks, g)
            acc = m.acc.extra if m.acc is not None else None
            if acc is not None and acc.prehooks:
                g = _run_prehooks(m.acc, (g,))[0]
        targets = self.leaf_targets
        if targets is not None:
            idx = targets.get(leaf)
            if idx is None:
                return
            if not self.accumulate:
                for i in idx:
                    self.captured[i] = g
                return
        accumulate_grad(leaf, g, self.create_graph)
        if m is not None:
            if m.post_hooks:
                for hook in tuple(m.post_hooks):
                    hook(leaf)
            if acc is not None and acc.hooks:
                for node_hook in tuple(acc.hooks):
                    node_hook((), (g,))

    # ------------------------------------------------------------------ running a node
    def run(self, node: Node, grads: Any) -> None:
        extra = node.extra
        if extra is not None and extra.prehooks:
            single = node.n_out == 1
            grads = _run_prehooks(node, (grads,) if single else tuple(grads))
            grads = grads[0] if single else list(grads)
        if anomaly_mode.state.enabled:
            grads_in = anomaly_mode.run_checked(node, _apply, grads)
        else:
            grads_in = _apply(node, grads)
        if extra is not None and extra.hooks:
            grads_in = _run_posthooks(node, extra.hooks, grads_in, grads)
        metas = node.metas
        for i, edge in enumerate(node.next):
            if edge is None:
                continue  # (a formula gives no gradient for the operands past its last edge)
            g = grads_in[i]
            if g is not None:
                m = metas[i]
                if g is ZERO:
                    g = ZeroGrad(m)
                    self.zeros = True
                elif g._data.shape != m[0] or g.dtype is not m[1] or g.device is not m[2]:
                    g = _fit(g, m, node.formula.passes_complex)
            self.send(edge[0], edge[1], g)
        if not self.keep_graph:
            node.release()

    def run_zeros(self, node: Node, grads: Any, skip: bool) -> None:
        """Run a node that some ``ZeroGrad`` reached: hooks and targets see zeros; a node
        whose output gradients are all zero, with no hook of its own and none of them
        changed by a tensor hook, passes zeros to its inputs without its formula."""
        zeros = materialized(node, grads)
        seen = zeros if node.extra is None else self.output_hooks(node, node.extra, zeros)
        if self.node_targets:
            _capture(self, node, seen)
        if skip:
            return
        kept = kept_zeros(node)
        extra = node.extra
        if kept is None or zero_count(node, grads) < node.n_out or (
                extra is not None and (extra.hooks or extra.prehooks)) or (
                seen is not zeros if node.n_out == 1 else
                any(a is not b for a, b in zip(seen, zeros))):
            self.run(node, seen)
        else:
            self.pass_zero(node, kept)

    def pass_zero(self, node: Node, kept: tuple[bool, ...]) -> None:
        """Run a node whose output gradients are all zero: its inputs' are zero too, kept
        as ``ZeroGrad`` where ``kept`` says torch's formula keeps its zero tensor."""
        node.unpack_saved()  # (its saved tensors are still checked, as torch runs it)
        for i, edge in enumerate(node.next):
            if edge is not None:
                zero = ZeroGrad(node.metas[i])
                self.send(edge[0], edge[1], zero if kept[i] else zero.materialize())
        if not self.keep_graph:
            node.release()

    def output_hooks(self, node: Node, extra: Any, grads: Any) -> Any:
        """The tensor hooks and retained grads of the node's outputs."""
        single = node.n_out == 1
        glist = [grads] if single else list(grads)
        for nr, hooks in extra.tensor_prehooks.items():
            if hooks and glist[nr] is not None:
                glist[nr] = _run_tensor_hooks(hooks, glist[nr])
        for nr, ref in extra.retains.items():
            t = ref()
            if t is not None and glist[nr] is not None:
                g = glist[nr]
                if t.grad is None:
                    t.grad = g if self.create_graph else _detached_copy(g)
                else:
                    t.grad = t.grad + g
        return glist[0] if single else glist


def _apply(node: Node, grads: Any) -> Any:
    """The node's formula on the gradients of its outputs, its saved tensors checked first
    (conjugated around a formula written without conjugates: ``Formula.conjugates``)."""
    node.unpack_saved()
    f = node.formula
    if f.conjugates:
        return f.vjp(node, grads)
    if node.n_out == 1:
        if grads is None or grads.dtype.category != 3:
            return f.vjp(node, grads)
        return tuple([_conj(x) for x in f.vjp(node, _conj(grads))])
    if not any(g is not None and g.dtype.category == 3 for g in grads):
        return f.vjp(node, grads)
    return tuple([_conj(x) for x in f.vjp(node, [_conj(g) for g in grads])])


def _conj(g: Any) -> Any:
    return g if g is None else conj(g)


def _detached_copy(g: Tensor) -> Tensor:
    """A copy of ``g`` out of the graph (the grad it stores must not alias a formula's)."""
    if g._requires_grad:
        g = dispatch(_DETACH, (g,), None)
    return dispatch(_CLONE, (g,), None)  # type: ignore[no-any-return]


def accumulate_grad(leaf: Tensor, g: Tensor, create_graph: bool) -> None:
    """``leaf.grad += g``: the first gradient is stored (never aliasing ``g``) laid out as
    torch's AccumulateGrad lays it out, later ones added."""
    old = leaf.grad
    if old is None:
        stored = dispatch(_CLONE, (g,), None) if create_graph else _detached_copy(g)
        leaf.grad = _obeying_layout(leaf, stored)
    elif create_graph or old._requires_grad:
        leaf.grad = old + g
    else:
        old.add_(g)  # type: ignore[attr-defined]


def _obeying_layout(leaf: Tensor, g: Tensor) -> Tensor:
    """``g`` laid out as torch's layout contract for ``.grad`` says: with ``leaf``'s strides
    where ``leaf`` is dense and non-overlapping, else row-major (a copy where ``g``'s
    layout differs: a formula's gradient follows the layout of the ops it ran, not the
    leaf's)."""
    shape = leaf._data.shape
    data = g._data
    if data.shape != shape or g.device.type == "meta" or (
            data.flags.c_contiguous and leaf._data.flags.c_contiguous):
        return g
    strides = leaf.stride()
    want = strides if meta.is_non_overlapping_and_dense(shape, strides) else \
        meta.contiguous_strides(shape)
    if meta.same_layout(shape, g.stride(), want):
        return g
    out = empty_strided(shape, want, dtype=g.dtype, device=g.device)
    return out.copy_(g)  # type: ignore[no-any-return]


def _run_tensor_hooks(hooks: list[Any], g: Tensor) -> Tensor:
    for hook in tuple(hooks):
        r = hook(g)
        if r is not None:
            g = r
    return g


def _run_prehooks(node: Node, grads: tuple[Any, ...]) -> tuple[Any, ...]:
    assert node.extra is not None
    for hook in tuple(node.extra.prehooks):
        r = hook(grads)
        if r is not None:
            grads = tuple(r)
    return grads


def _run_posthooks(node: Node, hooks: list[Any], grads_in: Any, grads: Any) -> Any:
    outs = (grads,) if node.n_out == 1 else tuple(grads)
    grads_in = tuple(grads_in)
    for hook in tuple(hooks):
        r = hook(grads_in, outs)
        if r is not None:
            grads_in = tuple(r)
    return grads_in


def _root_edge(t: Tensor) -> tuple[Any, int]:
    fn = t.grad_fn
    if fn is None:
        return t, 0
    m = t._ag
    return fn, 0 if m is None else m.output_nr


def execute(roots: Sequence[Tensor], grads: Sequence[Tensor], keep_graph: bool,
            create_graph: bool, inputs: Sequence[Tensor] | None = None,
            accumulate: bool = True) -> list[Tensor | None]:
    """Run backward from ``roots`` seeded with ``grads``.

    ``inputs=None``: accumulate into every leaf reached. With ``inputs``: only the
    nodes leading to them run; ``accumulate=True`` adds into their ``.grad``
    (``backward(inputs=...)``), ``False`` returns their gradients (``autograd.grad``).
    """
    task = GraphTask(create_graph, keep_graph, accumulate)
    edges = [_root_edge(t) for t in roots]
    deps = task.leaf_deps
    nodes = _collect(edges, deps)
    nodes.sort(key=_seq, reverse=True)
    run = None
    if inputs is not None:
        _set_targets(task, inputs)
        run = _needed(task, nodes)
        # only the nodes that run deliver to leaves, and only target leaves are wanted
        targets: dict[Tensor, list[int]] = task.leaf_targets  # type: ignore[assignment]
        deps.clear()
        for node in run:
            for e in node.next:
                if e is not None and e[0] in targets and isinstance(e[0], Tensor):
                    deps[e[0]] = deps.get(e[0], 0) + 1
        for fn, _ in edges:
            if isinstance(fn, Tensor) and fn in targets:
                deps[fn] = deps.get(fn, 0) + 1

    prev = grad_mode.enabled
    grad_mode.enabled = create_graph
    try:
        for (fn, nr), g in zip(edges, grads):
            task.send(fn, nr, g)
        buffers = task.buffers
        node_targets = task.node_targets
        for node in nodes:
            g = buffers.pop(node, None)
            skip = run is not None and node not in run
            if g is None:
                if not skip:
                    # no gradient reached it (a formula gave None): torch still runs the
                    # node, whose saved tensors are checked as it unpacks them
                    node.unpack_saved()
                    for e in node.next:
                        if e is not None and isinstance(e[0], Tensor):
                            task.send(e[0], 0, None)
                    if not keep_graph:
                        node.release()
                continue
            if task.zeros and zero_count(node, g):
                task.run_zeros(node, g, skip)
                continue
            if node.extra is not None:
                g = task.output_hooks(node, node.extra, g)
            if node_targets:
                _capture(task, node, g)
            if not skip:
                task.run(node, g)
        if inputs is not None and accumulate:
            # backward(inputs=[non_leaf]) accumulates into the non-leaf's .grad
            done: set[int] = set()
            for t, found in zip(inputs, task.captured):
                if found is None or t.grad_fn is None or id(t) in done:
                    continue
                if t._ag is None or not t._ag.retains_grad:  # else its retain hook did it
                    done.add(id(t))
                    accumulate_grad(t, found, create_graph)
    finally:
        grad_mode.enabled = prev
    return task.captured


def _capture(task: GraphTask, node: Node, g: Any) -> None:
    """Record the gradients of the non-leaf targets that are outputs of ``node``."""
    glist = (g,) if node.n_out == 1 else g
    for nr, gi in enumerate(glist):
        idx = task.node_targets.get((node, nr))  # type: ignore[union-attr]
        if idx is not None and gi is not None:
            for i in idx:
                task.captured[i] = gi


_seq = attrgetter("seq")


def _collect(edges: list[tuple[Any, int]], deps: dict[Tensor, int]) -> list[Node]:
    """The nodes reachable from ``edges``; counts into ``deps`` the edges into each leaf."""
    seen: set[Node] = set()
    stack: list[Node] = []
    for fn, _ in edges:
        if isinstance(fn, Tensor):
            deps[fn] = deps.get(fn, 0) + 1
        elif fn not in seen:
            seen.add(fn)
            stack.append(fn)
    nodes = list(stack)
    while stack:
        for e in stack.pop().next:
            if e is None:
                continue
            fn = e[0]
            if fn in seen:
                continue
            if isinstance(fn, Tensor):
                deps[fn] = deps.get(fn, 0) + 1
            else:
                seen.add(fn)
                stack.append(fn)
                nodes.append(fn)
    return nodes


def _set_targets(task: GraphTask, inputs: Sequence[Tensor]) -> None:
    leaves: dict[Tensor, list[int]] = {}
    by_node: dict[tuple[Node, int], list[int]] = {}
    for i, t in enumerate(inputs):
        fn, nr = _root_edge(t)
        if isinstance(fn, Tensor):
            leaves.setdefault(fn, []).append(i)
        else:
            by_node.setdefault((fn, nr), []).append(i)
    task.leaf_targets = leaves
    task.node_targets = by_node
    task.captured = [None] * len(inputs)


def _needed(task: GraphTask, nodes: list[Node]) -> set[Node]:
    """The nodes on a path to one of the targets (they run; the others are skipped)."""
    leaves = task.leaf_targets
    assert leaves is not None and task.node_targets is not None
    wanted_outputs = task.node_targets
    needed: set[Node] = set()
    for node in reversed(nodes):  # oldest first: a node's inputs are decided before it
        for e in node.next:
            if e is None:
                continue
            fn = e[0]
            if isinstance(fn, Tensor):
                if fn in leaves:
                    break
            elif fn in needed or e in wanted_outputs:
                break
        else:
            continue
        needed.add(node)
    return needed
