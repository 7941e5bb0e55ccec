"""Reverse-mode transforms: ``grad``, ``grad_and_value``, ``vjp``, ``jacrev``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import ember.core as E
from ember.autograd.differentiate import grad as _grad
from ember.core.tensor import Tensor

from .pytree import tree_flatten, tree_unflatten
from .tracing import (
    Transform,
    normalize_argnums,
    only_tensors,
    regroup,
    split_aux,
    watch_args,
)

__all__ = ["grad", "grad_and_value", "vjp", "jacrev"]


def _zeros_for(grads: tuple[Any, ...], anchors: list[Tensor]) -> list[Tensor]:
    """torch.func gives zeros (not None) for the inputs an output does not depend on."""
    return [E.zeros_like(a) if g is None else g for g, a in zip(grads, anchors)]


def _vjps(outputs: list[Tensor], cotangents: list[Tensor], anchors: list[Tensor],
          retain_graph: bool = True) -> list[Tensor]:
    live = [(o, c) for o, c in zip(outputs, cotangents) if o._requires_grad]
    if not live:
        return [E.zeros_like(a) for a in anchors]
    found = _grad([o for o, _ in live], anchors, [c for _, c in live], retain_graph=retain_graph,
                  create_graph=True, allow_unused=True)
    return _zeros_for(found, anchors)


def grad_and_value(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """``torch.func.grad_and_value``: a function returning ``(gradient, value)`` of ``func``.

    ``func`` must return a scalar tensor (or ``(scalar, aux)`` with ``has_aux``, and then
    the result is ``(gradient, (value, aux))``). ``argnums`` picks the positional
    arguments to differentiate (a tuple gives a tuple of gradients); each may be a pytree
    of tensors, and its gradient has the same structure.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        api = "grad_and_value(f)(*args)"
        positions, many = normalize_argnums(argnums, len(args))
        with Transform() as tr:
            call_args, anchors, specs = watch_args(args, positions)
            output, aux = split_aux(func(*call_args, **kwargs), has_aux, api)
            if not isinstance(output, Tensor):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output._data.ndim != 0:
                raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {output._data.ndim} dims. Maybe you wanted to "
                                   "use the vjp or jacrev APIs instead?")
            if output._requires_grad:
                found = _grad(output, anchors, create_graph=True, allow_unused=True)
                grads = _zeros_for(found, anchors)
            else:
                grads = [E.zeros_like(a) for a in anchors]
            result = tr.finish((regroup(grads, specs, many), output, aux))
        grads_tree, value, aux_value = result
        return (grads_tree, (value, aux_value)) if has_aux else (grads_tree, value)

    return wrapper


def grad(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """``torch.func.grad``: a function computing the gradient of ``func`` (a scalar function)
    with respect to the arguments ``argnums``; with ``has_aux``, ``(gradient, aux)``.

    Composable: ``grad(grad(f))`` is the second derivative; works inside ``no_grad``.
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        grads, value = inner(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``torch.func.vjp``: ``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` gives the
    vector-Jacobian products, one per primal (a tuple). ``cotangents`` has the structure
    of the output. With ``has_aux``: ``(output, vjp_fn, aux)``.
    """
    api = "vjp(f, *primals)"
    with Transform() as tr:
        call_args, anchors, specs = watch_args(primals, tuple(range(len(primals))))
        output, aux = split_aux(func(*call_args), has_aux, api)
        outputs, out_spec = only_tensors(output, api)
        if has_aux:
            _aux_tensors(aux)
        result = tr.finish((output, aux))

    def vjp_fn(cotangents: Any, retain_graph: bool = True, create_graph: bool | None = None
               ) -> tuple[Any, ...]:
        cots, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{cot_spec.pretty()}, primal output: {out_spec.pretty()}")
        with Transform() as inner:
            grads = _vjps(outputs, cots, anchors, retain_graph)
            return inner.finish(regroup(grads, specs, True))  # type: ignore[no-any-return]

    return (result[0], vjp_fn, result[1]) if has_aux else (result[0], vjp_fn)


def _aux_tensors(aux: Any) -> None:
    for x in tree_flatten(aux)[0]:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")


def jacrev(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *,
           has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable[..., Any]:
    """``torch.func.jacrev``: a function computing the Jacobian of ``func`` with respect to
    the arguments ``argnums`` by reverse mode (one VJP per output element).

    Each output leaf of shape ``o`` gets, per differentiated input of shape ``i``, a tensor
    of shape ``o + i`` (a tuple of them when ``argnums`` is a tuple). ``chunk_size`` is
    accepted for compatibility; rows are computed one at a time.
    """
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"jacrev: `chunk_size` should be greater than 0. Got {chunk_size}")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        api = "vjp(f, *primals)"
        positions, many = normalize_argnums(argnums, len(args))
        with Transform() as tr:
            call_args, anchors, specs = watch_args(args, positions)
            output, aux = split_aux(func(*call_args, **kwargs), has_aux, api)
            outputs, out_spec = only_tensors(output, api)
            if has_aux:
                _aux_tensors(aux)
            jacobians = [regroup(_jacobian_rows(o, anchors), specs, many) for o in outputs]
            result = tr.finish((tree_unflatten(jacobians, out_spec), aux))
        return result if has_aux else result[0]

    return wrapper


def _jacobian_rows(out: Tensor, anchors: list[Tensor]) -> list[Tensor]:
    """d out / d anchor for each anchor, shaped ``out.shape + anchor.shape``."""
    n = out._data.size
    rows: list[list[Tensor]] = [[] for _ in anchors]
    if out._requires_grad and n:
        basis = E.eye(n, dtype=out.dtype, device=out.device)
        for i in range(n):
            seed = basis[i].reshape(out._data.shape)
            for k, g in enumerate(_vjps([out], [seed], anchors)):
                rows[k].append(g)
    jac = []
    for a, r in zip(anchors, rows):
        shape = out._data.shape + a._data.shape
        jac.append(E.stack(r).reshape(shape) if r else E.zeros(shape, dtype=a.dtype,
                                                               device=a.device))
    return jac
