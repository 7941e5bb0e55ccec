"""The optimizers' fused updates: torch's ``_fused_adam_``, ``_fused_adamw_`` and ``_fused_sgd_``.

Each is one primitive over lists of tensors (torch's ``Tensor[]`` arguments) that writes
its step into them (the dispatcher's ``writes``) and returns nothing; autograd records
none of them, as torch's have no derivative. Operands of ``_fused_adam_``/``_fused_adamw_``:
``self`` (the parameters), ``grads``, ``exp_avgs``, ``exp_avg_sqs``, ``max_exp_avg_sqs``
(empty without amsgrad), ``state_steps`` (read, not incremented: the caller counts), then
``lr`` (a number or a one-element tensor), ``grad_scale`` and ``found_inf`` (float32
tensors or None); params ``beta1``, ``beta2``, ``weight_decay``, ``eps``, ``amsgrad``,
``maximize``. ``_fused_sgd_``: ``self``, ``grads``, ``momentum_buffer_list`` (empty without
momentum), ``lr``, ``grad_scale``, ``found_inf``; params ``weight_decay``, ``momentum``,
``dampening``, ``nesterov``, ``maximize``, ``is_first_step``. A ``found_inf`` holding 1.0
skips the step; a ``grad_scale`` divides the gradients first, and they are written back
unscaled.

The arithmetic is torch 2.13's CPU kernels' (``FusedAdamKernel.cpp``, ``FusedSGDKernel.cpp``,
as its x86-64 build rounds them), element by element in the parameters' dtype (float16 and
bfloat16 in float32, rounded once when stored): the lerp of the first moment and SGD's
weight decay, momentum and step are fused multiply-adds, and so is one product of Adam's
second moment. The last ``n % (32 / element size)`` elements of each tensor are torch's
scalar remainder loop, whose compiler fused the other product of the second moment (and
of SGD's momentum): those elements follow it too. Adam's bias corrections are taken in
double from each tensor's step read as float, as torch reads it.

The reference kernels here are numpy/cupy (fused multiply-adds emulated exactly);
``fused_optimizers_native`` gives the CPU kernels, one C call per dtype over every tensor.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..device import xp_of
from ..dispatch import Op, register
from ..dtypes import scalar_type_name
from ..tensor import Tensor
from .copying import check_writable
from .geometry import writable_alias
from .operands import LOW_PRECISION, device_mismatch, not_implemented

_LOW = frozenset(LOW_PRECISION)
_F32 = np.dtype(np.float32)
_FLOATS = frozenset({_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64})
_NDARRAY = np.ndarray


# ----------------------------------------------------------------------------- exact fma

def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _to_odd(s: Any, err: Any) -> Any:
    """``s + err`` (``s`` its rounding to nearest) rounded to odd: ``s`` where exact or odd,
    else its neighbour toward ``err``."""
    xp = xp_of(s)
    bump = (err != 0) & ((s.view(np.int64) & 1) == 0) & xp.isfinite(s)
    return xp.where(bump, xp.nextafter(s, xp.copysign(xp.inf, err)), s)


def fma(a: Any, b: Any, c: Any) -> Any:
    """``a * b + c`` rounded once, as a fused multiply-add rounds it (float32 or float64
    arrays and scalars of one dtype): the exact sum rounded to odd in a wider format, then
    to nearest (Boldo and Melquiond's emulation; exact unless a product underflows or
    overflows float64's range)."""
    arr = next(x for x in (a, b, c) if not np.isscalar(x))
    xp = xp_of(arr)
    with np.errstate(all="ignore"):
        if arr.dtype == _F32:
            p = xp.asarray(a, np.float64) * xp.asarray(b, np.float64)  # exact
            s, e = _two_sum(p, xp.asarray(c, np.float64))
            return _to_odd(s, e).astype(np.float32)
        p = a * b
        big = a * 134217729.0  # Veltkamp's split into halves whose products are exact
        ah = big - (big - a)
        big = b * 134217729.0
        bh = big - (big - b)
        p_err = ((ah * bh - p) + ah * (b - bh) + (a - ah) * bh) + (a - ah) * (b - bh)
        high, low = _two_sum(c, p)
        s, e = _two_sum(low, p_err)
        r = high + _to_odd(s, e)
        return xp.where(xp.isfinite(r), r, a * b + c)  # infinities and nans as the product's


# ----------------------------------------------------------------------------- scalars

def _item(x: Any) -> float:
    """A number, or an array's first element (what torch's kernels read), as a float."""
    return float(x.reshape(-1)[0]) if hasattr(x, "reshape") else float(x)


def skipped(found_inf: Any) -> bool:
    """torch skips the whole step where ``found_inf`` holds exactly 1.0."""
    return found_inf is not None and _item(found_inf) == 1.0


def grad_scale_of(grad_scale: Any) -> float | None:
    return None if grad_scale is None else _item(grad_scale)


def remainders(arrays: list[Any]) -> list[int]:
    """How many last elements of each tensor torch's scalar remainder loop computes."""
    return [a.size % (32 // a.dtype.itemsize) for a in arrays]


def bias_corrections(state_steps: list[Any], lr: float, beta1: float, beta2: float
                     ) -> tuple[list[float], list[float]]:
    """Each tensor's step size ``lr / (1 - beta1**step)`` and ``sqrt(1 - beta2**step)``, in
    double from its step read as float, as torch's kernel takes them (once per distinct
    step: an optimizer's tensors mostly share theirs)."""
    values = [s.item() for s in state_steps]
    known: dict[Any, tuple[float, float]] = {}
    for value in set(values):
        step = float(np.float32(value))
        known[value] = (lr / (1 - math.pow(beta1, step)), math.sqrt(1 - math.pow(beta2, step)))
    if len(known) == 1:
        step_size, bc2_sqrt = known[values[0]]
        return [step_size] * len(values), [bc2_sqrt] * len(values)
    return [known[v][0] for v in values], [known[v][1] for v in values]


def decayed_lrs(state_steps: list[Any], lr: float, lr_decay: float) -> list[float]:
    """Adagrad's lr of each tensor, ``lr / (1 + (step - 1) * lr_decay)``, in double from its
    step."""
    return [lr / (1.0 + (_item(step) - 1.0) * lr_decay) for step in state_steps]


def _flat(a: Any, work: Any) -> Any:
    return a.reshape(-1).astype(work)


def _store(target: Any, value: Any) -> None:
    xp_of(target).copyto(target, value.reshape(target.shape), casting="unsafe")


# ----------------------------------------------------------------------------- Adam

def _adam_reference(adamw: bool) -> Any:
    def forward(self: list[Any], grads: list[Any], exp_avgs: list[Any], exp_avg_sqs: list[Any],
                max_exp_avg_sqs: list[Any], state_steps: list[Any], lr: Any, grad_scale: Any,
                found_inf: Any, *, beta1: float, beta2: float, weight_decay: float,
                eps: float, amsgrad: bool, maximize: bool) -> None:
        if skipped(found_inf):
            return
        lr = _item(lr)
        scale = grad_scale_of(grad_scale)
        step_sizes, bc2_sqrts = bias_corrections(state_steps, lr, beta1, beta2)
        for i, (p, tail) in enumerate(zip(self, remainders(self))):
            if p.size:
                _adam_tensor(p, grads[i], exp_avgs[i], exp_avg_sqs[i],
                             max_exp_avg_sqs[i] if amsgrad else None, tail, step_sizes[i],
                             bc2_sqrts[i], lr, beta1, beta2, weight_decay, eps, maximize,
                             adamw, scale)

    return forward


def _unscaled(g: Any, work: Any, scale: float | None, maximize: bool) -> Any:
    """The gradient in the ``work`` dtype, divided by ``scale`` (stored back into ``g``, as
    torch's kernels do) and negated where ``maximize``."""
    t = work.type
    G = _flat(g, work)
    if scale is not None:
        G = G / t(scale)
        _store(g, G)
    if maximize:
        G = G * t(-1)
    return G


def _adam_tensor(p: Any, g: Any, m: Any, v: Any, mx: Any, tail: int, step_size: float,
                 bc2_sqrt: float, lr: float, beta1: float, beta2: float, weight_decay: float,
                 eps: float, maximize: bool, adamw: bool, scale: float | None) -> None:
    work = _F32 if p.dtype in _LOW else p.dtype
    t, xp, rest = work.type, xp_of(p), slice(p.size - tail, None)
    G, P = _unscaled(g, work, scale, maximize), _flat(p, work)
    if weight_decay != 0:
        if adamw:
            P = P * t(1 - lr * weight_decay)
        else:
            G = fma(P, t(weight_decay), G)
    M = _flat(m, work)
    w = t(1 - beta1)  # exp_avg.lerp_(grad, 1 - beta1), from the nearer end
    M = fma(w, G - M, M) if abs(w) < 0.5 else fma(w - t(1), G - M, G)
    V = _flat(v, work)
    b2, c2 = t(beta2), t(1 - beta2)
    V, V_rest = fma(c2 * G, G, V * b2), fma(V[rest], b2, c2 * G[rest] * G[rest])
    V[rest] = V_rest
    _store(m, M)
    _store(v, V)
    if mx is not None:
        X = _flat(mx, work)
        X, X_rest = xp.maximum(V, X), X[rest]
        X[rest] = xp.where(X_rest < V[rest], V[rest], X_rest)  # std::max: a nan v is not taken
        _store(mx, X)
        V = X
    denom = xp.sqrt(V) / t(bc2_sqrt) + t(eps)
    _store(p, P + t(-step_size) * M / denom)


def _sgd_reference(self: list[Any], grads: list[Any], momentum_buffer_list: list[Any], lr: Any,
                   grad_scale: Any, found_inf: Any, *, weight_decay: float, momentum: float,
                   dampening: float, nesterov: bool, maximize: bool,
                   is_first_step: bool) -> None:
    if skipped(found_inf):
        return
    lr = _item(lr)
    scale = grad_scale_of(grad_scale)
    for i, (p, tail) in enumerate(zip(self, remainders(self))):
        if p.size:
            _sgd_tensor(p, grads[i], momentum_buffer_list[i] if momentum != 0 else None, tail,
                        lr, weight_decay, momentum, dampening, nesterov, maximize,
                        is_first_step, scale)


def _sgd_tensor(p: Any, g: Any, buf: Any, tail: int, lr: float, weight_decay: float,
                momentum: float, dampening: float, nesterov: bool, maximize: bool,
                first: bool, scale: float | None) -> None:
    work = _F32 if p.dtype in _LOW else p.dtype
    t, rest = work.type, slice(p.size - tail, None)
    G, P = _unscaled(g, work, scale, maximize), _flat(p, work)
    if weight_decay != 0:
        G = fma(P, t(weight_decay), G)
    if buf is not None:
        mom, kept = t(momentum), t(1 - dampening)
        if first:
            B = G
        else:
            B0 = _flat(buf, work)
            B, B_rest = fma(kept, G, B0 * mom), fma(B0[rest], mom, G[rest] * kept)
            B[rest] = B_rest
        _store(buf, B)
        G = fma(B, mom, G) if nesterov else B
    _store(p, fma(G, t(-lr), P))


def _adam_meta(*operands: Any, **params: Any) -> None:
    """The meta rule of an Adam step: it writes its operands, whose shapes stay. torch has
    one for a number lr only: its tensor-lr overload, as ``_fused_sgd_``, refuses meta
    tensors, and so do Ember's."""
    if not isinstance(operands[6], (int, float)):
        raise NotImplementedError("_fused_adam_/_fused_adamw_ with a tensor lr: no meta kernel "
                                  "(torch registers none for its tensor-lr overloads)")


def _sgd_meta(*operands: Any, **params: Any) -> None:
    raise NotImplementedError("_fused_sgd_: no meta kernel (torch registers none)")


_ADAM_NAMES = ("self", "grads", "exp_avgs", "exp_avg_sqs", "max_exp_avg_sqs", "state_steps",
               "lr", "grad_scale", "found_inf")
_SGD_NAMES = ("self", "grads", "momentum_buffer_list", "lr", "grad_scale", "found_inf")
FUSED_ADAM_ = register("_fused_adam_", _adam_reference(False), _adam_meta, "library", False,
                       writes=(0, 1, 2, 3, 4), arg_names=_ADAM_NAMES)
FUSED_ADAMW_ = register("_fused_adamw_", _adam_reference(True), _adam_meta, "library", False,
                        writes=(0, 1, 2, 3, 4), arg_names=_ADAM_NAMES)
FUSED_SGD_ = register("_fused_sgd_", _sgd_reference, _sgd_meta, "library", False,
                      writes=(0, 1, 2), arg_names=_SGD_NAMES)


# ----------------------------------------------------------------------------- checks

def _tensor_list(op: str, arg: str, value: Any) -> list[Tensor]:
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{op}(): argument '{arg}' must be tuple of Tensors, not "
                        f"{type(value).__name__}")
    if not all([isinstance(t, Tensor) for t in value]):
        i, t = next((i, t) for i, t in enumerate(value) if not isinstance(t, Tensor))
        raise TypeError(f"{op}(): expected Tensor as element {i} in argument '{arg}', but got "
                        f"{type(t).__name__}")
    return list(value)


def _optional(op: str, arg: str, value: Any) -> Tensor | None:
    if value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be Tensor or None, not "
                        f"{type(value).__name__}")
    return value


def _one_value(op: str, arg: str, t: Tensor) -> None:
    """torch reads ``t`` with ``item()``: one element only."""
    n = t._data.size
    if n != 1:
        raise RuntimeError(f"{op}: {arg}: a Tensor with {n} elements cannot be converted to "
                           "Scalar")


def _checked(op: str, lists: dict[str, list[Tensor]], sizes: dict[str, tuple[int, str]],
             lr: Any, grad_scale: Any, found_inf: Any, written: tuple[str, ...]) -> None:
    """torch's checks of a fused update, in its order (the lr, the scale tensors' dtypes,
    the lists' lengths, then each tensor's dtype), and Ember's of what torch's kernel
    assumes (one device, each tensor of its parameter's shape, memory it may write): all
    before anything is written. An optimizer step of a hundred tensors passes them in
    one loop over each list."""
    if not isinstance(lr, (Tensor, int, float)):
        raise TypeError(f"{op}(): argument 'lr' must be float or Tensor, not {type(lr).__name__}")
    params = lists["self"]
    scales = [t for t in (grad_scale, found_inf) if t is not None]
    first = next((t for ts in lists.values() for t in ts[:1]), None)
    if first is None:
        first = next((t for t in (lr, *scales) if isinstance(t, Tensor)), None)
    if first is None:
        raise NotImplementedError(f"{op}: there were no tensor arguments to this function (an "
                                  "empty list of Tensors and no other tensor argument)")
    if isinstance(lr, Tensor):
        _one_value(op, "lr", lr)
    for arg, t in (("grad_scale", grad_scale), ("found_inf", found_inf)):
        if t is not None:
            if t.dtype is not _dt.float32:
                raise RuntimeError(f"{op}: {arg}: expected scalar type Float but found "
                                   f"{scalar_type_name(t.dtype)}")
            if not t._data.size:
                raise RuntimeError(f"{op}: {arg} has no element to read")
    for arg, (n, why) in sizes.items():
        if len(lists[arg]) != n:
            raise RuntimeError(f"{op}: expected {n} tensors in {arg} ({why}), got "
                               f"{len(lists[arg])}")
    dev = first.device
    kernel = "fused_sgd_kernel" if op == "_fused_sgd_" else "fused_adam_kernel"
    for t in params + scales:
        if t.device is not dev:
            raise device_mismatch(op, dev, t.device)
        if t.dtype not in _FLOATS:
            raise not_implemented(kernel, t.dtype)
    like = [(p.dtype, p._data.shape, dev) for p in params]  # what each state tensor must be
    for arg, ts in lists.items():
        if arg == "state_steps":
            if [(t._data.size, t.device) for t in ts] != [(1, dev)] * len(ts):
                i, t = next((i, t) for i, t in enumerate(ts)
                            if t._data.size != 1 or t.device is not dev)
                _one_value(op, f"state_steps[{i}]", t)
                raise device_mismatch(op, dev, t.device)
        elif arg != "self" and ts and [(t.dtype, t._data.shape, t.device) for t in ts] != like:
            _refuse_state(op, arg, params, ts)
    for arg in written:
        if not all([d.__class__ is _NDARRAY and d.flags.writeable and 0 not in d.strides
                    for d in [t._data for t in lists[arg]]]):
            for t in lists[arg]:
                _writable(op, t)


def _refuse_state(op: str, arg: str, params: list[Tensor], ts: list[Tensor]) -> None:
    """The error for the first tensor of ``ts`` (the list ``arg``) that differs from its
    parameter in its dtype, shape or device."""
    for i, (p, t) in enumerate(zip(params, ts)):
        if t.dtype is not p.dtype:
            raise RuntimeError(f"{op}: {arg}[{i}]: expected scalar type "
                               f"{scalar_type_name(p.dtype)} but found "
                               f"{scalar_type_name(t.dtype)}")
        if t._data.shape != p._data.shape:
            raise RuntimeError(f"{op}: {arg}[{i}] has shape {tuple(t.shape)}, expected "
                               f"self[{i}]'s {tuple(p.shape)}")
        if t.device is not p.device:
            raise device_mismatch(op, p.device, t.device)


def _writable(op: str, t: Tensor) -> None:
    """A written tensor whose elements share memory is refused, as torch's in-place ops
    refuse it; one NumPy marked read-only only because it is a view that does (an
    expanded size-1 dim) gets a writable alias of its memory."""
    check_writable(op, t)
    data = t._data
    if data.__class__ is np.ndarray and not data.flags.writeable:
        alias = writable_alias(data)
        if alias is None:
            raise ValueError(f"{op}: assignment destination is read-only")
        t._data = alias


# ----------------------------------------------------------------------------- public

def _fused_adam_(self: Any, grads: Any, exp_avgs: Any, exp_avg_sqs: Any, max_exp_avg_sqs: Any,
                 state_steps: Any, *, lr: Any, beta1: float, beta2: float, weight_decay: float,
                 eps: float, amsgrad: bool, maximize: bool, grad_scale: Tensor | None = None,
                 found_inf: Tensor | None = None) -> None:
    """torch._fused_adam_: one Adam step of every parameter of ``self``, in place (L2 weight
    decay added to the gradient); ``state_steps`` give each one's step count."""
    _adam(FUSED_ADAM_, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
          lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf)


def _fused_adamw_(self: Any, grads: Any, exp_avgs: Any, exp_avg_sqs: Any, max_exp_avg_sqs: Any,
                  state_steps: Any, *, lr: Any, beta1: float, beta2: float, weight_decay: float,
                  eps: float, amsgrad: bool, maximize: bool, grad_scale: Tensor | None = None,
                  found_inf: Tensor | None = None) -> None:
    """torch._fused_adamw_: one AdamW step (decoupled weight decay) of every parameter of
    ``self``, in place."""
    _adam(FUSED_ADAMW_, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
          lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf)


def _adam(fused: Op, self: Any, grads: Any, exp_avgs: Any, exp_avg_sqs: Any,
          max_exp_avg_sqs: Any, state_steps: Any, lr: Any, beta1: float, beta2: float,
          weight_decay: float, eps: float, amsgrad: bool, maximize: bool, grad_scale: Any,
          found_inf: Any) -> None:
    op = fused.name
    lists = {arg: _tensor_list(op, arg, value) for arg, value in zip(
        _ADAM_NAMES[:6], (self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps))}
    grad_scale = _optional(op, "grad_scale", grad_scale)
    found_inf = _optional(op, "found_inf", found_inf)
    n = len(lists["self"])
    one_each = (n, f"one for each of the {n} tensors of self")
    sizes = {"grads": one_each, "exp_avgs": one_each, "exp_avg_sqs": one_each,
             "max_exp_avg_sqs": one_each if amsgrad else (0, "amsgrad is False"),
             "state_steps": one_each}
    written = ("self", "exp_avgs", "exp_avg_sqs") + ("max_exp_avg_sqs",) * bool(amsgrad) + (
        "grads",) * (grad_scale is not None)
    _checked(op, lists, sizes, lr, grad_scale, found_inf, written)
    params = {"beta1": float(beta1), "beta2": float(beta2), "weight_decay": float(weight_decay),
              "eps": float(eps), "amsgrad": bool(amsgrad), "maximize": bool(maximize)}
    fused.door((*lists.values(), lr, grad_scale, found_inf), params)


def _fused_sgd_(self: Any, grads: Any, momentum_buffer_list: Any, *, weight_decay: float,
                momentum: float, lr: Any, dampening: float, nesterov: bool, maximize: bool,
                is_first_step: bool, grad_scale: Tensor | None = None,
                found_inf: Tensor | None = None) -> None:
    """torch._fused_sgd_: one SGD step (momentum, dampening, Nesterov, weight decay) of every
    parameter of ``self``, in place; ``is_first_step`` starts the momentum buffers at the
    gradients."""
    op = FUSED_SGD_.name
    lists = {arg: _tensor_list(op, arg, value) for arg, value in zip(
        _SGD_NAMES[:3], (self, grads, momentum_buffer_list))}
    grad_scale = _optional(op, "grad_scale", grad_scale)
    found_inf = _optional(op, "found_inf", found_inf)
    n = len(lists["self"])
    one_each = (n, f"one for each of the {n} tensors of self")
    sizes = {"grads": one_each, "momentum_buffer_list": (0, "momentum is 0") if momentum == 0
             else one_each}
    written = ("self",) + ("momentum_buffer_list",) * (momentum != 0) + (
        "grads",) * (grad_scale is not None)
    _checked(op, lists, sizes, lr, grad_scale, found_inf, written)
    params = {"weight_decay": float(weight_decay), "momentum": float(momentum),
              "dampening": float(dampening), "nesterov": bool(nesterov),
              "maximize": bool(maximize), "is_first_step": bool(is_first_step)}
    FUSED_SGD_.door((*lists.values(), lr, grad_scale, found_inf), params)


FUNCTIONS = ["_fused_adam_", "_fused_adamw_", "_fused_sgd_"]
METHODS: dict[str, Any] = {}

from . import fused_optimizers_native  # noqa: E402,F401  (registers the CPU kernels)
