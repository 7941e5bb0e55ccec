"""``ember.autograd.backward`` and ``ember.autograd.grad``: argument checks, then the engine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ember.core as E
from ember.core.tensor import Tensor

from .engine import execute

__all__ = ["backward", "grad"]


def _tensors(value: Any) -> tuple[Tensor, ...]:
    if isinstance(value, Tensor):
        return (value,)
    return tuple(value)


def _grads_for(outputs: tuple[Tensor, ...], grads: Any) -> list[Tensor]:
    """The seed gradient of each output: given, or ones for a scalar output."""
    if grads is None:
        given: tuple[Any, ...] = (None,) * len(outputs)
    elif isinstance(grads, Tensor):
        given = (grads,)
    else:
        given = tuple(grads)
    if len(given) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(given)} gradients")
    seeds = []
    for i, (out, g) in enumerate(zip(outputs, given)):
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn")
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out.dtype.category == 3:
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   f"but got {out.dtype}")
            g = E.ones_like(out, memory_format=E.contiguous_format)
        else:
            if not isinstance(g, Tensor):
                raise TypeError(f"gradients can be either Tensors or None, but got "
                                f"{type(g).__name__}")
            if g._data.shape != out._data.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{g.shape!r} and output[{i}] has a shape of {out.shape!r}.")
            if g.dtype is not out.dtype:
                g = g.to(out.dtype)  # type: ignore[attr-defined]
        seeds.append(g)
    return seeds


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables: Any = None, inputs: Any = None) -> None:
    """Compute the gradients of ``tensors`` and accumulate them into the leaves' ``.grad``.

    ``grad_tensors``: the gradient of each tensor (may be None for scalars).
    ``retain_graph``: keep the saved tensors for another backward (default: create_graph).
    ``create_graph``: record the backward itself, for higher-order derivatives.
    ``inputs``: accumulate into these tensors only (leaves or not).
    """
    if grad_variables is not None:
        grad_tensors = grad_variables
    outputs = _tensors(tensors)
    targets = None
    if inputs is not None:
        targets = _tensors(inputs)
        if not targets:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    seeds = _grads_for(outputs, grad_tensors)
    keep = create_graph if retain_graph is None else retain_graph
    execute(outputs, seeds, keep, create_graph, targets, accumulate=True)


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False
         ) -> tuple[Tensor | None, ...]:
    """The gradients of ``outputs`` with respect to ``inputs`` (nothing is accumulated).

    ``grad_outputs``: the vector in the vector-Jacobian product, one per output (None for
    scalar outputs). ``allow_unused``: return None for inputs the outputs do not depend on
    (else an error); ``materialize_grads``: zeros instead of None. ``is_grads_batched``:
    the first dimension of each grad_output indexes a batch of vectors.
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outs = _tensors(outputs)
    targets = _tensors(inputs)
    if not targets:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    for t in targets:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    keep = create_graph if retain_graph is None else retain_graph
    if is_grads_batched:
        return _batched(outs, targets, grad_outputs, keep, create_graph, allow_unused,
                        materialize_grads)
    seeds = _grads_for(outs, grad_outputs)
    found = execute(outs, seeds, keep, create_graph, targets, accumulate=False)
    return _finish(found, targets, allow_unused, materialize_grads)


def _finish(found: Sequence[Tensor | None], targets: tuple[Tensor, ...], allow_unused: bool,
            materialize: bool) -> tuple[Tensor | None, ...]:
    result = []
    for i, (g, t) in enumerate(zip(found, targets)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
            if materialize:
                g = E.zeros_like(t)
        result.append(g)
    return tuple(result)


def _batched(outs: tuple[Tensor, ...], targets: tuple[Tensor, ...], grad_outputs: Any,
             keep: bool, create_graph: bool, allow_unused: bool, materialize: bool
             ) -> tuple[Tensor | None, ...]:
    """One vector-Jacobian product per row of the grad_outputs, stacked."""
    batch = _tensors(grad_outputs)
    n = batch[0]._data.shape[0]
    rows = []
    for b in range(n):
        seeds = _grads_for(outs, [g[b] for g in batch])
        found = execute(outs, seeds, True if b < n - 1 else keep, create_graph, targets,
                        accumulate=False)
        rows.append(_finish(found, targets, allow_unused, materialize))
    return tuple(None if rows[0][i] is None else E.stack([r[i] for r in rows])  # type: ignore[attr-defined]
                 for i in range(len(targets)))
