"""Forward-mode transforms: ``jvp``, ``jacfwd``, ``hessian``.

Jacobian-vector products come from ``forward_ad.Linearized`` (the double-VJP identity
over the recorded graph): one forward run of the function, then one product per tangent.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import ember.core as E
from ember.autograd.forward_ad import Linearized, check_primal, check_tangent
from ember.core.tensor import Tensor

from .pytree import tree_flatten, tree_unflatten
from .reverse import jacrev
from .tracing import Transform, normalize_argnums, only_tensors, regroup, split_aux, watch_args

__all__ = ["jvp", "jacfwd", "hessian"]


def _zeros(like: Tensor) -> Tensor:
    return E.zeros_like(like)


def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> Any:
    """``torch.func.jvp``: ``(func(*primals), J·tangents)``, the Jacobian of ``func`` at
    ``primals`` applied to ``tangents`` (tuples of the same structure). With ``has_aux``:
    ``(output, jvp_out, aux)``.
    """
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    if not isinstance(tangents, tuple):
        raise RuntimeError(f"{api}: Expected tangents to be a tuple. E.g. it should be valid "
                           "to call f(*primals).")
    flat_p, p_spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{api}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure {p_spec} and "
                           f"tangents with structure {t_spec}")
    if not flat_p:
        raise RuntimeError(f"{api}: Expected primals to contain at least one Tensor.")
    for name, flat in (("primals", flat_p), ("tangents", flat_t)):
        for x in flat:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"{api}: Expected {name} to only contain Tensors, got "
                                   f"{type(x)}")
    for p, t in zip(flat_p, flat_t):
        check_tangent(p, t)
    with Transform() as tr:
        call_args, anchors, _ = watch_args(primals, tuple(range(len(primals))), check_primal)
        output, aux = split_aux(func(*call_args), has_aux, api)
        outputs, out_spec = only_tensors(output, api)
        pushed = Linearized(outputs, anchors).push(flat_t, create_graph=True)
        out_tangents = [_zeros(o) if t is None else t for o, t in zip(outputs, pushed)]
        result = tr.finish((output, tree_unflatten(out_tangents, out_spec), aux))
    return result if has_aux else result[:2]


def jacfwd(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False,
           *, randomness: str = "error") -> Callable[..., Any]:
    """``torch.func.jacfwd``: a function computing the Jacobian of ``func`` with respect to
    the arguments ``argnums`` by forward mode (one JVP per input element).

    Same result structure as ``jacrev``: per output leaf of shape ``o`` and differentiated
    input of shape ``i``, a tensor of shape ``o + i``.
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        api = "jvp(f, primals, tangents)"
        positions, many = normalize_argnums(argnums, len(args))
        with Transform() as tr:
            call_args, anchors, specs = watch_args(args, positions, check_primal)
            output, aux = split_aux(func(*call_args, **kwargs), has_aux, api)
            outputs, out_spec = only_tensors(output, api)
            columns = _jacobian_columns(outputs, anchors)
            jacobians = [regroup(cols, specs, many) for cols in columns]
            result = tr.finish((tree_unflatten(jacobians, out_spec), aux))
        return result if has_aux else result[0]

    return wrapper


def _jacobian_columns(outputs: list[Tensor], anchors: list[Tensor]) -> list[list[Tensor]]:
    """``[out][k]``: d out / d anchors[k], shaped ``out.shape + anchor.shape``."""
    lin = Linearized(outputs, anchors)
    result: list[list[Tensor]] = [[] for _ in outputs]
    for k, a in enumerate(anchors):
        n = a._data.size
        columns: list[list[Tensor]] = [[] for _ in outputs]
        if n and lin.live:
            basis = E.eye(n, dtype=a.dtype, device=a.device)
            tangents: list[Tensor | None] = [None] * len(anchors)
            for j in range(n):
                tangents[k] = basis[j].reshape(a._data.shape)
                for i, t in enumerate(lin.push(tangents, create_graph=True)):
                    if t is not None:
                        columns[i].append(t)
        for i, out in enumerate(outputs):
            shape = out._data.shape + a._data.shape
            cols = columns[i]
            result[i].append(E.stack(cols, out._data.ndim).reshape(shape) if cols else
                             E.zeros(shape, dtype=out.dtype, device=out.device))
    return result


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """``torch.func.hessian``: the Hessian of a scalar ``func`` with respect to ``argnums``,
    computed as ``jacfwd(jacrev(func))`` (forward over reverse)."""
    return jacfwd(jacrev(func, argnums), argnums)
