"""The dispatcher: the one door every tensor operation goes through.

Every primitive is an ``Op`` registered once: its name (shared by autograd's formula
table, the compiler and ONNX export), its reference forward written against the array
module ``xp`` (numpy or cupy, by the operands' arrays), its shape/dtype/stride rule
(the kernel of the meta device) and, beside them, faster kernels per device type. A
public function parses its arguments, promotes and broadcasts, then calls
``dispatch(op, args, params)``: ``args`` are the operands (Tensors, Python numbers or
None), ``params`` the static keyword arguments of the forward. Calling
``op.forward(*arrays, **params)`` with a recorded call's operands reproduces its outputs.

``dispatch`` runs the steps in torch's order:

1. autocast (installed by the optim layer; absent until then),
2. forward-mode AD and 3. autograd (installed by ember.autograd): they record the op
   and run the rest below them,
4. the TorchDispatchModes of this thread, innermost first: they see the primitive with
   its operands as Tensors, including the ops backward runs,
5. the kernel: ``op.kernels[device type]`` or the reference forward (the meta rule on the
   meta device), its arrays wrapped into Tensors.

When nothing beyond autograd is engaged anywhere (no mode, no autocast, no dual level:
``engaged.count == 0``), ``dispatch`` goes straight to autograd and the kernel, and the
kernel step of an op on plain CPU tensors runs without lookups (``Op.run``): the fast
door, the same steps with nothing to skip. Both are generated for each op on its first
call (``kernel_runners``), not at import.

Kernels return an array, or a tuple of arrays, of exactly the result's dtype. A view op
(``op.view``) returns views of its first operand's array; an in-place op
(``op.mutates``) writes into its first operand's array and returns it (or a new array to
replace it, for ``resize_``), and the dispatcher bumps that tensor's version. An op that
writes several operands (``op.writes``: torch's ``Tensor(a!)[]`` arguments, as the
optimizers' fused updates take them) may take tensor lists among its operands (lists of
Tensors, given to its kernel as lists of their arrays); its kernel writes into those
operands' arrays and returns nothing, and the dispatcher bumps every written tensor's
version (``kernel_runners.written_runner``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .kernel_runners import cpu_runner, general_runner, written_runner
from .meta import DYNAMIC_RULES, dynamic_rule
from .result_layouts import kind_of
from .tensor import Tensor

__all__ = ["Op", "register", "REGISTRY", "grad_mode", "dispatch", "state", "engaged", "dual",
           "install_step", "run_kernel", "engage", "disengage"]

def _meta_rule(op: Op) -> Callable[..., Any]:
    rule = op.meta
    if rule in DYNAMIC_RULES:
        return dynamic_rule(op.name)
    if callable(rule):
        return rule

    def missing(*args: Any, **params: Any) -> Any:
        raise NotImplementedError(f"{op.name}: no shape rule is registered for the meta device")

    return missing


def _missing_runner(args: tuple[Any, ...], params: Any) -> Any:
    raise RuntimeError("op is not resolved")


class Op:
    """One primitive: its name, reference forward, meta rule, kind and kernels by device.

    ``op(*args, **params)`` dispatches it (what a TorchDispatchMode's ``func`` does).
    """

    __slots__ = ("name", "forward", "meta", "kind", "differentiable", "kernels", "view",
                 "mutates", "writes", "functional", "device_param", "arg_names", "table",
                 "layout", "run", "door", "__weakref__")

    def __init__(self, name: str, forward: Callable[..., Any],
                 meta: Callable[..., Any] | str | None, kind: str, differentiable: bool,
                 view: bool = False, mutates: bool = False, functional: Op | None = None,
                 device_param: bool = False, arg_names: tuple[str, ...] = (),
                 writes: tuple[int, ...] = ()):
        self.name = name
        self.forward = forward
        self.meta = meta
        self.kind = kind
        self.differentiable = differentiable
        self.view = view
        self.mutates = mutates
        self.writes = writes
        self.functional = functional
        self.device_param = device_param
        self.arg_names = arg_names
        # Faster kernels by device type ("cpu", "cuda", "meta"), registered beside the
        # reference forward, never as a branch inside it.
        self.kernels: dict[str, Callable[..., Any]] = {}
        self.table: dict[str, Callable[..., Any]] = {}
        self.layout = "none"
        self.run: Callable[..., Any] = _missing_runner
        self.door: Callable[..., Any] = _missing_runner
        self._resolve()

    def _resolve(self) -> None:
        kernels = self.kernels
        meta_rule = _meta_rule(self)
        self.table = {"cpu": kernels.get("cpu", self.forward),
                      "cuda": kernels.get("cuda", self.forward),
                      "meta": kernels.get("meta", meta_rule)}
        # how the kernel step holds the op's results to its rule's layout
        self.layout = kind_of(self)
        self.run = self._first_run
        self.door = self._first_door

    def _generate(self) -> None:
        """Generate the op's kernel step and door, on its first call: generating them for
        every op at import would take most of the import."""
        if self.writes:  # tensor lists among its operands: no path for one to three tensors
            self.run = written_runner(self)
            self.door = _general_door(self)
            return
        self.run = cpu_runner(self, general_runner(self), None)
        self.door = cpu_runner(self, _general_door(self), _DOOR_NAMES)

    def _first_run(self, args: tuple[Any, ...], params: dict[str, Any] | None) -> Any:
        self._generate()
        return self.run(args, params)

    def _first_door(self, args: tuple[Any, ...], params: dict[str, Any] | None) -> Any:
        self._generate()
        return self.door(args, params)

    def register_kernel(self, device_type: str, kernel: Callable[..., Any] | None) -> None:
        """Use ``kernel`` for this op on ``device_type`` (None: back to the reference)."""
        if device_type not in ("cpu", "cuda", "meta"):
            raise ValueError(f"{self.name}: unknown device type {device_type!r}")
        if kernel is None:
            self.kernels.pop(device_type, None)
        else:
            self.kernels[device_type] = kernel
        self._resolve()

    def __call__(self, *args: Any, **params: Any) -> Any:
        return self.door(args, params or None)

    # torch's OpOverload answers these; dispatch modes written for torch read them
    @property
    def __name__(self) -> str:  # type: ignore[override]
        return self.name

    @property
    def overloadpacket(self) -> Op:
        return self

    @property
    def default(self) -> Op:
        return self

    def __repr__(self) -> str:
        return f"ember.ops.{self.name}"

    __str__ = __repr__


REGISTRY: dict[str, Op] = {}


def register(name: str, forward: Callable[..., Any], meta: Callable[..., Any] | str | None = None,
             kind: str = "library", differentiable: bool = True, *, view: bool = False,
             mutates: bool = False, functional: Op | None = None, device_param: bool = False,
             arg_names: tuple[str, ...] = (), writes: tuple[int, ...] = ()) -> Op:
    """Register a primitive once; a second registration under one name is a bug.

    ``meta`` is its shape/dtype/stride rule: the kernel of the meta device, taking and
    returning ``meta.MetaArray``s; ``meta.DYNAMIC`` where the output shape depends on
    values (the meta device then raises NotImplementedError, as torch's does). ``view``:
    its outputs are views of its first operand. ``mutates``: it writes into its first
    operand (``functional`` is the op computing the same value out of place).
    ``device_param``: the device comes from ``params["device"]`` (factories, moves between
    devices, random ops). ``arg_names``: the operands' names in torch's schema (``self``,
    ``other``...), for ``grad_fn._saved_<name>``. ``writes``: the positions of the operands
    it writes in place (Tensors, tensor lists or None; its other operands may be tensor
    lists too); it returns nothing, and autograd does not record it (torch's fused
    optimizer updates have no derivative either).
    """
    if name in REGISTRY:
        raise RuntimeError(f"op {name!r} is registered twice")
    if writes and (differentiable or mutates or view):
        raise ValueError(f"{name}: an op with written operands (writes) is neither "
                         "differentiable, nor a view, nor a mutates op")
    op = Op(name, forward, meta, kind, differentiable, view, mutates, functional, device_param,
            arg_names, writes)
    REGISTRY[name] = op
    return op


# ---------------------------------------------------------------------- thread state

class _GradMode(threading.local):
    """Thread-local grad mode; read by the autograd step, set by no_grad and friends."""

    def __init__(self) -> None:
        self.enabled = True
        self.inference = False


grad_mode = _GradMode()


class _Engaged:
    """How many things anywhere make the dispatcher take its full path: TorchDispatchModes
    on any thread's stack, autocast regions, dual levels. While 0, an op costs one read
    of it beyond autograd and the kernel."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0


engaged = _Engaged()


class _State(threading.local):
    """What this thread's dispatcher must do beyond autograd and the kernel: its
    TorchDispatchModes, autocast, and ``below``, the depth of calls made under autograd's
    step (a mode's handler that calls ``func`` re-enters there, at the modes)."""

    def __init__(self) -> None:
        self.below = 0
        self.modes: list[Any] = []
        self.autocast = False


state = _State()


class _Dual:
    """Whether a forward-AD dual level is open (one at a time, process-wide, as in torch)."""

    __slots__ = ("active",)

    def __init__(self) -> None:
        self.active = False


dual = _Dual()


class _Steps:
    """The steps higher layers install: ``fn(op, args, params, below)``, where ``below``
    runs the rest of the dispatch and returns the op's outputs."""

    __slots__ = ("autocast", "forward_ad", "autograd", "record")

    def __init__(self) -> None:
        self.autocast: Callable[..., Any] | None = None
        self.forward_ad: Callable[..., Any] | None = None
        self.autograd: Callable[..., Any] | None = None
        # ``record(op, args, params, out)``: the autograd step's record of an op that is no
        # view and writes nothing, after its kernel gave ``out`` (for such an op the step is
        # the kernel, then the record: the door makes both calls itself); installing the
        # autograd step removes it
        self.record: Callable[..., Any] | None = None


steps = _Steps()
_autograd: Callable[..., Any] | None = None


def install_step(name: str, fn: Callable[..., Any] | None) -> None:
    """Install (or with None remove) the ``autocast``, ``forward_ad`` or ``autograd`` step, or
    the autograd step's ``record`` (see ``_Steps``)."""
    global _autograd
    if name not in _Steps.__slots__:
        raise ValueError(f"unknown dispatch step {name!r}")
    setattr(steps, name, fn)
    if name == "autograd":
        _autograd = fn
        steps.record = None


def engage() -> None:
    """Something the dispatcher must see beyond autograd is now active (a mode entered,
    autocast on, a dual level opened)."""
    engaged.count += 1


def disengage() -> None:
    engaged.count -= 1


# ---------------------------------------------------------------------- the door

def dispatch(op: Op, args: tuple[Any, ...], params: dict[str, Any] | None = None) -> Any:
    """Run ``op`` on ``args`` (Tensors, numbers, None) with static ``params``: every step.

    ``op.door(args, params)`` is the same call without the lookup; the elementwise
    wrappers on the hot path make it so."""
    return op.door(args, params)


def _requires_grad(args: tuple[Any, ...]) -> bool:
    for a in args:
        if isinstance(a, Tensor) and a._requires_grad:
            return True
    return False


def _full(op: Op, args: tuple[Any, ...], params: dict[str, Any] | None) -> Any:
    """Every step: autocast, forward AD, autograd, then the modes and the kernel."""
    st = state
    if st.below:  # re-entered from a mode's handler under autograd: modes and kernel only
        return _below_autograd(op, args, params)
    if st.autocast and steps.autocast is not None:
        return steps.autocast(op, args, params, _after_autocast)
    return _after_autocast(op, args, params)


def _after_autocast(op: Op, args: tuple[Any, ...], params: dict[str, Any] | None) -> Any:
    if dual.active and steps.forward_ad is not None:
        return steps.forward_ad(op, args, params, _autograd_step)
    return _autograd_step(op, args, params)


def _autograd_step(op: Op, args: tuple[Any, ...], params: dict[str, Any] | None) -> Any:
    if _autograd is not None and op.differentiable and (grad_mode.enabled or op.view) and \
            _requires_grad(args):
        return _autograd(op, args, params, _below)
    return _below_autograd(op, args, params)


def _below(op: Op, args: tuple[Any, ...], params: dict[str, Any] | None) -> Any:
    """What autograd's step runs beneath it on the full path (re-entry skips autograd)."""
    st = state
    st.below += 1
    try:
        return _below_autograd(op, args, params)
    finally:
        st.below -= 1


def _below_autograd(op: Op, args: tuple[Any, ...], params: dict[str, Any] | None) -> Any:
    modes = state.modes
    if not modes:
        return op.run(args, params)
    mode = modes.pop()  # the handler's own calls reach the next mode (still engaged)
    try:
        types = tuple({type(a): None for a in (_listed(args) if op.writes else args)
                       if isinstance(a, Tensor) and a.__class__ is not Tensor})
        return mode.__torch_dispatch__(op, types, args, {} if params is None else dict(params))
    finally:
        modes.append(mode)


def _listed(args: tuple[Any, ...]) -> list[Any]:
    """The operands with the tensors of tensor lists among them."""
    return [t for a in args for t in (a if a.__class__ is list or a.__class__ is tuple else (a,))]


def run_kernel(op: Op, args: tuple[Any, ...], params: dict[str, Any] | None) -> Any:
    """Step 5: the kernel of the operands' device on their arrays, outputs as Tensors."""
    return op.run(args, params)


def _graded(op: Op, args: tuple[Any, ...], params: dict[str, Any] | None) -> Any:
    """An operand requires grad: autograd's step when it applies (to views without grad
    mode too: they remember it), else the kernel."""
    if _autograd is not None and op.differentiable and (grad_mode.enabled or op.view):
        return _autograd(op, args, params, run_kernel)
    return op.run(args, params)


def _general_door(op: Op) -> Callable[..., Any]:
    def door(args: tuple[Any, ...], params: dict[str, Any] | None) -> Any:
        if engaged.count:
            return _full(op, args, params)
        if _requires_grad(args):
            return _graded(op, args, params)
        return op.run(args, params)

    return door


# what the generated doors call (see kernel_runners.cpu_runner)
_DOOR_NAMES = {"engaged": engaged, "_full": _full, "_graded": _graded, "grad_mode": grad_mode,
               "_steps": steps}
