"""Forward-mode AD (``torch.autograd.forward_ad``): dual tensors and their tangents.

Tangents are not carried op by op. ``make_dual`` gives the primal an *anchor*: a view
whose ``grad_fn`` is an identity node, so the ops that follow are recorded by the usual
reverse-mode graph. ``unpack_dual(y)`` then computes ``J·t`` over that graph with the
double-VJP identity: ``u -> Jᵀu`` is linear in ``u``, and its own VJP against ``t`` is
``J·t``. Both VJPs run on the VJP formula table (recorded with ``create_graph=True``),
so every op with a VJP formula has a forward derivative, and no second table can drift
from the first. ``ember.func.jvp`` and ``jacfwd`` use the same machinery (``anchor``,
``Linearized``).

Limits, beside torch's: a dual tensor and the results computed from it report
``requires_grad=True`` (the graph is what carries the tangent); tangents take the dtype
of the tensor they belong to; complex tensors raise NotImplementedError (the VJP table
does not conjugate yet); an in-place write into a tensor that an earlier op saved
makes ``unpack_dual`` of what follows raise (as ``backward`` would), where torch's eager
tangents do not mind.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, NamedTuple

from ember.core.dispatch import disengage, dual, engage, grad_mode
from ember.core.tensor import Tensor, make, make_view

from .differentiate import grad as _grad
from .formulas import Formula
from .grad_mode import _DecoratorContextManager
from .graph import Node, TensorMeta
from .recording import synthetic_node

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]

_IDENTITY = Formula(lambda n, g: (g,))


class _Transforms(threading.local):
    """How many ``ember.func`` transforms are running on this thread (they nest)."""

    def __init__(self) -> None:
        self.depth = 0


transforms = _Transforms()


# ---------------------------------------------------------------------- anchors

def anchor(t: Tensor, name: str = "AliasBackward0", view: bool = False) -> Tensor:
    """A tensor with ``t``'s storage whose ``grad_fn`` is an identity node: the point
    derivatives are taken with respect to.

    The node passes gradients on to ``t``'s own history (when ``t`` requires grad), so an
    enclosing backward still reaches ``t``; it is never a leaf, so nothing accumulates into
    ``.grad`` and "does this result depend on a real leaf" stays a simple graph search.
    ``view=True`` makes it a view of ``t`` (``make_dual``'s result is one, as in torch).
    """
    if view:
        out = make_view(t, t._data)
    else:
        out = make(t._data, t.dtype, t.device, t._row_major)
        out._vc = t._ensure_vc()
    node = synthetic_node(name, _IDENTITY, (t,))
    out._requires_grad = True
    out._grad_fn = node
    return out


def _cotangent_anchor(like: Tensor) -> Tensor:
    """A cotangent ``u`` for ``like``, differentiable and tied to nothing else.

    ``Jᵀu`` is linear in ``u``, so its derivative is the same at every ``u``; ones rather
    than zeros because some formulas work in log space (``logcumsumexp`` takes
    ``log|g|``), whose derivative at 0 is not finite.
    """
    ones = make(like.device.xp.ones(like._data.shape, like.dtype.np), like.dtype, like.device)
    return anchor(ones)


def reaches(t: Tensor, found: Any) -> bool:
    """Whether ``t``'s graph has an edge into something ``found(fn)`` accepts (a Node or a
    leaf Tensor), ``t.grad_fn`` itself included."""
    start = t._grad_fn
    if start is None:
        return False
    if found(start):
        return True
    seen = {start}
    stack = [start]
    while stack:
        for e in stack.pop().next:
            if e is None:
                continue
            fn = e[0]
            if found(fn):
                return True
            if fn not in seen and not isinstance(fn, Tensor):
                seen.add(fn)
                stack.append(fn)
    return False


def _is_leaf(fn: Any) -> bool:
    return isinstance(fn, Tensor)


def reaches_leaf(t: Tensor) -> bool:
    """Whether ``t`` depends on a leaf that requires grad (its result must stay differentiable)."""
    return reaches(t, _is_leaf)


class Linearized:
    """The Jacobian-vector products of ``outputs`` with respect to the anchors ``inputs``.

    Built once per forward graph: ``vjps[k] = J_kᵀ u`` for differentiable cotangents
    ``u`` (recorded); ``push(tangents)`` is then ``Σ_k J_k t_k`` for each output, the VJP of
    those records against the tangents. Several pushes (``jacfwd``'s columns) share it.
    """

    def __init__(self, outputs: list[Any], inputs: list[Tensor]):
        self.outputs = outputs
        self.live = [i for i, o in enumerate(outputs)
                     if isinstance(o, Tensor) and o._requires_grad]
        for t in [outputs[i] for i in self.live] + inputs:
            if t.dtype.category == 3:
                # the engine takes a real input's gradient as the real part unrecorded
                # (no real() op yet), which would silently zero these products
                raise NotImplementedError("forward-mode AD of complex tensors is not "
                                          f"supported yet (got a {t.dtype} tensor)")
        self.cotangents = [_cotangent_anchor(outputs[i]) for i in self.live]
        if self.live:
            self.vjps: tuple[Any, ...] = _grad([outputs[i] for i in self.live], inputs,
                                               self.cotangents, retain_graph=True,
                                               create_graph=True, allow_unused=True)
        else:
            self.vjps = (None,) * len(inputs)

    def push(self, tangents: list[Tensor | None], create_graph: bool) -> list[Tensor | None]:
        """Each output's tangent (None for outputs that do not depend on the inputs)."""
        result: list[Tensor | None] = [None] * len(self.outputs)
        if not self.live:
            return result
        pairs = [(g, t) for g, t in zip(self.vjps, tangents)
                 if g is not None and t is not None and g._requires_grad]
        found: Any = (None,) * len(self.live)
        if pairs:
            # Always recorded: inside a dual level the record hook records ops on dual
            # tensors even with grad off, so a graph-free result is had by detaching.
            found = _grad([g for g, _ in pairs], self.cotangents, [t for _, t in pairs],
                          retain_graph=True, create_graph=True, allow_unused=True)
        for i, g in zip(self.live, found):
            out = self.outputs[i]
            if g is None:
                g = make(out.device.xp.zeros(out._data.shape, out.dtype.np), out.dtype,
                         out.device)
            elif not create_graph and g._requires_grad:
                g = g.detach()
            result[i] = g
        return result


# ---------------------------------------------------------------------- dual levels

class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal and its tangent (None if it has none)."""

    primal: Tensor
    tangent: Tensor | None


class _Level:
    """The one active dual level: its anchors with their tangents."""

    def __init__(self) -> None:
        self.tangents: dict[Node, Tensor] = {}  # anchor node -> tangent
        self.anchors: list[Tensor] = []  # one alias per anchor node: the grad target
        self.touches_memo: weakref.WeakKeyDictionary[Node, bool] = weakref.WeakKeyDictionary()

    def touches(self, fn: Any) -> bool:
        """Whether the history ``fn`` (a node or None) depends on a dual tensor of this level."""
        if fn is None:
            return False
        memo = self.touches_memo
        known = memo.get(fn)
        if known is not None:
            return known
        anchors = self.tangents
        seen = {fn}
        stack = [fn]
        hit = False
        while stack and not hit:
            node = stack.pop()
            if node in anchors or memo.get(node):
                hit = True
                break
            for e in node.next:
                if e is not None and not isinstance(e[0], Tensor) and e[0] not in seen:
                    if memo.get(e[0]) is False:
                        continue
                    seen.add(e[0])
                    stack.append(e[0])
        if not hit:  # nothing below any visited node reaches an anchor
            for node in seen:
                memo[node] = False
        memo[fn] = hit
        return hit


_level: _Level | None = None


def in_dual_level() -> bool:
    """Whether a dual level is active (results of ``ember.func`` transforms then keep their
    graph: it carries their tangents)."""
    return _level is not None


def step(op: Any, args: tuple[Any, ...], params: Any, below: Any) -> Any:
    """The dispatcher's forward-AD step, while a level is active: ops on dual tensors are
    recorded even under ``no_grad`` (forward AD ignores it, as in torch); ``below`` is
    autograd's step and what follows it."""
    level = _level
    if level is None or grad_mode.enabled or grad_mode.inference:
        return below(op, args, params)
    for x in args:
        if isinstance(x, Tensor) and x._requires_grad and level.touches(x._grad_fn):
            grad_mode.enabled = True
            try:
                return below(op, args, params)
            finally:
                grad_mode.enabled = False
    return below(op, args, params)


def enter_dual_level() -> int:
    """Open a dual level (only one at a time, as in torch) and return its number, 0."""
    global _level
    if _level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _level = _Level()
    dual.active = True
    engage()
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the dual level: every tangent made in it is forgotten."""
    global _level
    current = _level
    if current is None or level not in (None, 0):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one "
                           "that was created. This is not supported.")
    dual.active = False
    disengage()
    _level = None


class dual_level(_DecoratorContextManager):
    """Context manager (and decorator) for a dual level: inside it, ``make_dual`` attaches
    tangents and ``unpack_dual`` reads them; on exit all tangents are cleared::

        with ember.autograd.forward_ad.dual_level():
            x = make_dual(primal, tangent)
            jvp = unpack_dual(f(x)).tangent
    """

    def __enter__(self) -> int:  # type: ignore[override]
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()


def _active(level: int | None, what: str) -> _Level:
    if _level is None or level not in (None, 0):
        raise RuntimeError(f"Trying to {what} for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    return _level


def check_primal(primal: Tensor) -> None:
    """torch's error for a primal that cannot carry a tangent."""
    if primal.dtype.category < 2:
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{primal.dtype}")


def check_tangent(primal: Tensor, tangent: Tensor) -> None:
    """torch's errors for a (primal, tangent) pair of the wrong dtypes or sizes."""
    check_primal(primal)
    if tangent.dtype.category < 2:
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tangent._data.shape != primal._data.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than that "
                           "of the original Tensor, this is not supported. Tensor is of size "
                           f"{list(primal._data.shape)} while the given forward gradient is of "
                           f"size {list(tangent._data.shape)}.")


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` carrying ``tangent`` as its forward gradient (inside a dual level).

    ``tangent`` must have ``tensor``'s shape; both must be floating point or complex.
    """
    lvl = _active(level, "create a dual Tensor")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        bad = tangent if isinstance(tensor, Tensor) else tensor
        raise TypeError(f"make_dual(): expected Tensors, got {type(bad).__name__}")
    check_tangent(tensor, tangent)
    if tangent.device is not tensor.device:
        raise RuntimeError(f"make_dual: the tangent is on {tangent.device} but the primal is on "
                           f"{tensor.device}; expected the same device.")
    if lvl.touches(tensor._grad_fn):
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           "gradient at the same level 0 is not supported.")
    dual = anchor(tensor, "ViewBackward0", view=True)
    # stays on the anchor node if dual is later written in place
    target = make(dual._data, dual.dtype, dual.device, dual._row_major)
    target._vc = dual._vc
    target._requires_grad = True
    target._grad_fn = dual._grad_fn
    lvl.tangents[dual._grad_fn] = tangent
    lvl.anchors.append(target)
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor``: the tangent is ``J·t`` of the ops that made
    ``tensor`` from the level's dual tensors, None if it depends on none of them."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"unpack_dual(): argument 'tensor' must be Tensor, not "
                        f"{type(tensor).__name__}")
    lvl = _level
    if lvl is None or level not in (None, 0):
        return UnpackedDualTensor(tensor, None)
    fn = tensor._grad_fn
    if not lvl.touches(fn):
        return UnpackedDualTensor(make_view(tensor, tensor._data), None)
    m = tensor._ag
    known = lvl.tangents.get(fn) if m is None or m.output_nr == 0 else None
    keep = grad_mode.enabled and reaches_leaf(tensor)
    if known is not None:
        tangent: Tensor | None = known
    else:
        tangents = [lvl.tangents[a._grad_fn] for a in lvl.anchors]
        create = grad_mode.enabled and (keep or transforms.depth > 0
                                        or any(t._requires_grad for t in tangents))
        tangent = Linearized([tensor], lvl.anchors).push(list(tangents), create)[0]
    return UnpackedDualTensor(_primal_of(tensor, keep), tangent)


def _primal_of(tensor: Tensor, keep_history: bool) -> Tensor:
    """A view of ``tensor``: with its reverse-mode history when that leads to a leaf that
    requires grad, else without history (so it carries no tangent either)."""
    primal = make_view(tensor, tensor._data)
    if keep_history:
        primal._requires_grad = True
        primal._grad_fn = tensor._grad_fn
        m = tensor._ag
        if m is not None and m.output_nr:
            primal._ag = TensorMeta(m.output_nr)
    return primal
