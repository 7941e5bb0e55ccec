"""What every transform does around the function it transforms.

A transform anchors the inputs it differentiates (``forward_ad.anchor``: an identity
node over each, so derivatives are taken at that point while an enclosing transform or
backward still sees through it), runs the function with grad enabled (``torch.func``
transforms work inside ``no_grad``), differentiates with ``create_graph=True`` (so an
enclosing transform can differentiate the result again), and at the end detaches what
nobody outside can differentiate: results keep their graph only when the caller had
grad enabled and another transform or dual level encloses this one, or the result
depends on a leaf that requires grad.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.autograd.forward_ad import anchor, in_dual_level, reaches_leaf, transforms
from ember.core.dispatch import grad_mode
from ember.core.tensor import Tensor

from .pytree import TreeSpec, tree_flatten, tree_unflatten

__all__ = ["Transform", "normalize_argnums", "watch_args", "regroup", "split_aux",
           "only_tensors", "differentiable_leaves"]


class Transform:
    """One call of a transform: grad on inside, and ``finish`` for what it returns."""

    __slots__ = ("outer_grad", "outer_inference")

    def __init__(self) -> None:
        self.outer_grad = True
        self.outer_inference = False

    def __enter__(self) -> Transform:
        # a transform's result must not depend on the caller's grad mode (torch.func's rule),
        # so inference_mode and no_grad are both lifted inside
        self.outer_grad = grad_mode.enabled
        self.outer_inference = grad_mode.inference
        grad_mode.enabled = True
        grad_mode.inference = False
        transforms.depth += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        grad_mode.enabled = self.outer_grad
        grad_mode.inference = self.outer_inference
        transforms.depth -= 1

    def finish(self, tree: Any) -> Any:
        """``tree`` with each tensor detached unless the caller can still differentiate it."""
        nested = transforms.depth > 1 or in_dual_level()

        def release(x: Any) -> Any:
            if not isinstance(x, Tensor) or not x._requires_grad:
                return x
            if self.outer_grad and (nested or reaches_leaf(x)):
                return x
            return x.detach()

        leaves, spec = tree_flatten(tree)
        return tree_unflatten([release(x) for x in leaves], spec)


def normalize_argnums(argnums: Any, n_args: int) -> tuple[tuple[int, ...], bool]:
    """``(positions, as_tuple)``: the positional arguments to differentiate, in order."""
    many = isinstance(argnums, tuple)
    nums = argnums if many else (argnums,)
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in nums):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if not nums:
        raise RuntimeError("argnums must be non-empty")
    for i in nums:
        if not -n_args <= i < n_args:
            raise RuntimeError(f"Got argnum={i}, but only {n_args} positional inputs")
    positions = tuple(i % n_args for i in nums)
    if len(set(positions)) != len(positions):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return positions, many


def differentiable_leaves(tree: Any, check: Callable[[Tensor], None]) -> tuple[list[Tensor],
                                                                              TreeSpec]:
    """The tensors of an input pytree (anything else is a ValueError, as in torch)."""
    leaves, spec = tree_flatten(tree)
    for x in leaves:
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        check(x)
    return leaves, spec


def require_float(x: Tensor) -> None:
    if x.dtype.category < 2:
        raise RuntimeError("only Tensors of floating point dtype can require gradients")


def watch_args(args: tuple[Any, ...], positions: tuple[int, ...],
               check: Callable[[Tensor], None] = require_float
               ) -> tuple[list[Any], list[Tensor], list[TreeSpec]]:
    """``(call_args, anchors, specs)``: the arguments with the differentiated ones replaced
    by anchors (all of them, flat, in argnums order), and each one's structure."""
    call_args = list(args)
    anchors: list[Tensor] = []
    specs: list[TreeSpec] = []
    for i in positions:
        leaves, spec = differentiable_leaves(args[i], check)
        watched = [anchor(x) for x in leaves]
        call_args[i] = tree_unflatten(watched, spec)
        anchors.extend(watched)
        specs.append(spec)
    return call_args, anchors, specs


def regroup(flat: list[Any], specs: list[TreeSpec], many: bool) -> Any:
    """Per-anchor results back in the arguments' structures (a tuple when argnums was)."""
    out = []
    start = 0
    for spec in specs:
        out.append(tree_unflatten(flat[start:start + spec.num_leaves], spec))
        start += spec.num_leaves
    return tuple(out) if many else out[0]


def split_aux(out: Any, has_aux: bool, api: str) -> tuple[Any, Any]:
    """``(output, aux)`` of a function called with ``has_aux``."""
    if not has_aux:
        return out, None
    if not isinstance(out, tuple) or len(out) != 2:
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    return out[0], out[1]


def only_tensors(tree: Any, api: str) -> tuple[list[Tensor], TreeSpec]:
    """The leaves of a function's output, which must all be tensors."""
    leaves, spec = tree_flatten(tree)
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(x)}")
    return leaves, spec
