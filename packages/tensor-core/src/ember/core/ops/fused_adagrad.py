"""torch's ``_fused_adagrad_``: one Adagrad step of a list of parameters, in place.

Operands: ``self`` (the parameters), ``grads``, ``state_sums``, ``state_steps`` (read, not
incremented: the caller counts), then ``lr`` (a number or a one-element tensor),
``grad_scale`` and ``found_inf`` (float32 tensors or None); params ``lr_decay``,
``weight_decay``, ``eps``, ``maximize``. A ``found_inf`` holding 1.0 skips the step; a
``grad_scale`` divides the gradients first, and they are written back unscaled.

The arithmetic is torch 2.13's CPU kernel's (``FusedAdagradKernel.cpp``), element by
element in the parameters' dtype, bit for bit in float32 and float64 (float16 and bfloat16
are computed in float32 and rounded once when stored; a few elements then differ from
torch's by one ulp of the low precision): the weight decay and the sum of squares are
fused multiply-adds, the step is ``param - clr * grad / std`` with
``clr = lr / (1 + (step - 1) * lr_decay)`` taken in double from each tensor's step and
rounded to the dtype. Its scalar remainder loop rounds alike, so no element is special.
The reference kernel here is numpy/cupy (fused multiply-adds emulated exactly);
``fused_optimizers_native`` gives the CPU kernel.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from ..device import xp_of
from ..dispatch import register
from ..tensor import Tensor
from .fused_optimizers import (
    _F32,
    _LOW,
    _checked,
    _flat,
    _item,
    _optional,
    _store,
    _tensor_list,
    _unscaled,
    decayed_lrs,
    fma,
    grad_scale_of,
    skipped,
)
from .fused_optimizers_native import adagrad_kernel
from .operands import not_implemented

_FLOATS = frozenset({_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64})
_NAMES = ("self", "grads", "state_sums", "state_steps", "lr", "grad_scale", "found_inf")


def _reference(self: list[Any], grads: list[Any], state_sums: list[Any], state_steps: list[Any],
               lr: Any, grad_scale: Any, found_inf: Any, *, lr_decay: float,
               weight_decay: float, eps: float, maximize: bool) -> None:
    if skipped(found_inf):
        return
    scale = grad_scale_of(grad_scale)
    for p, g, s, clr in zip(self, grads, state_sums,
                            decayed_lrs(state_steps, _item(lr), lr_decay)):
        if p.size:
            _adagrad_tensor(p, g, s, clr, weight_decay, eps, maximize, scale)



def _adagrad_tensor(p: Any, g: Any, s: Any, clr: float, weight_decay: float, eps: float,
                    maximize: bool, scale: float | None) -> None:
    work = _F32 if p.dtype in _LOW else p.dtype
    t = work.type
    G, P = _unscaled(g, work, scale, maximize), _flat(p, work)
    if weight_decay != 0:
        G = fma(P, t(weight_decay), G)
    S = fma(G, G, _flat(s, work))
    _store(s, S)
    std = xp_of(S).sqrt(S) + t(eps)
    _store(p, P - t(clr) * G / std)


def _meta(*operands: Any, **params: Any) -> None:
    raise NotImplementedError("_fused_adagrad_: no meta kernel (torch registers none)")


FUSED_ADAGRAD_ = register("_fused_adagrad_", _reference, _meta, "library", False,
                          writes=(0, 1, 2), arg_names=_NAMES)


def _fused_adagrad_(self: Any, grads: Any, state_sums: Any, state_steps: Any, *, lr: Any,
                    lr_decay: float, weight_decay: float, eps: float, maximize: bool,
                    grad_scale: Tensor | None = None, found_inf: Tensor | None = None) -> None:
    """torch._fused_adagrad_: one Adagrad step (L2 weight decay added to the gradient) of
    every parameter of ``self``, in place; ``state_steps`` give each one's step count."""
    op = FUSED_ADAGRAD_.name
    lists = {arg: _tensor_list(op, arg, value) for arg, value in zip(
        _NAMES[:4], (self, grads, state_sums, state_steps))}
    grad_scale = _optional(op, "grad_scale", grad_scale)
    found_inf = _optional(op, "found_inf", found_inf)
    for p in lists["self"]:
        if p.dtype not in _FLOATS:
            raise not_implemented("fused_adagrad_kernel", p.dtype)
    n = len(lists["self"])
    one_each = (n, f"one for each of the {n} tensors of self")
    sizes = {"grads": one_each, "state_sums": one_each, "state_steps": one_each}
    written = ("self", "state_sums") + ("grads",) * (grad_scale is not None)
    _checked(op, lists, sizes, lr, grad_scale, found_inf, written)
    params = {"lr_decay": float(lr_decay), "weight_decay": float(weight_decay),
              "eps": float(eps), "maximize": bool(maximize)}
    FUSED_ADAGRAD_.door((*lists.values(), lr, grad_scale, found_inf), params)


FUNCTIONS = ["_fused_adagrad_"]
METHODS: dict[str, Any] = {}

FUSED_ADAGRAD_.register_kernel("cpu", adagrad_kernel(_reference))
