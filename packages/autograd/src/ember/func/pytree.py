"""Pytrees: nested tuples, lists and dicts (and named tuples) of tensors, as torch.func
takes and returns them. ``tree_flatten`` gives the leaves and a ``TreeSpec`` that
``tree_unflatten`` rebuilds the structure from."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["TreeSpec", "LEAF", "tree_flatten", "tree_unflatten", "tree_map",
           "broadcast_prefix"]


class TreeSpec:
    """The structure of a pytree: the container type, its keys (dicts) and its children."""

    __slots__ = ("type", "context", "children", "num_leaves")

    def __init__(self, kind: type | None, context: Any, children: list[TreeSpec]):
        self.type = kind
        self.context = context
        self.children = children
        self.num_leaves: int = 1 if kind is None else sum(c.num_leaves for c in children)

    def is_leaf(self) -> bool:
        return self.type is None

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TreeSpec) and self.type is other.type
                and self.context == other.context and self.children == other.children)

    def __hash__(self) -> int:
        return hash((self.type, len(self.children)))

    def pretty(self) -> str:
        """The structure drawn with ``*`` for leaves, as torch's messages show it:
        ``(*, [*, *])``, ``{'a': *}``."""
        if self.type is None:
            return "*"
        items = [c.pretty() for c in self.children]
        if self.context is not None:
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.context, items)) + "}"
        if issubclass(self.type, list):
            return "[" + ", ".join(items) + "]"
        if len(items) == 1:
            return f"({items[0]},)"
        return "(" + ", ".join(items) + ")"

    def __repr__(self) -> str:
        if self.type is None:
            return "*"
        inner = ", ".join(repr(c) for c in self.children)
        return f"TreeSpec({self.type.__name__}, {self.context!r}, [{inner}])"


LEAF = TreeSpec(None, None, [])


def _children(tree: Any) -> tuple[type | None, Any, list[Any]]:
    kind = type(tree)
    if kind is tuple or kind is list:
        return kind, None, list(tree)
    if isinstance(tree, dict):
        keys = list(tree)
        return kind, keys, [tree[k] for k in keys]
    if isinstance(tree, tuple) and (hasattr(kind, "_fields") or hasattr(kind, "n_fields")):
        return kind, None, list(tree)  # named tuples, return_types (and C structseqs)
    return None, None, []


def tree_flatten(tree: Any) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree`` (depth first, dicts in key order) and its structure."""
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree: Any, leaves: list[Any]) -> TreeSpec:
    kind, context, children = _children(tree)
    if kind is None:
        leaves.append(tree)
        return LEAF
    return TreeSpec(kind, context, [_flatten(c, leaves) for c in children])


def tree_unflatten(leaves: list[Any], spec: TreeSpec) -> Any:
    """The tree of structure ``spec`` holding ``leaves`` (in ``tree_flatten``'s order)."""
    if len(leaves) != spec.num_leaves:
        raise ValueError(f"tree_unflatten: expected {spec.num_leaves} leaves, got {len(leaves)}")
    it = iter(leaves)
    return _build(spec, it)


def _build(spec: TreeSpec, it: Any) -> Any:
    kind = spec.type
    if kind is None:
        return next(it)
    children = [_build(c, it) for c in spec.children]
    if kind is tuple or kind is list:
        return kind(children)
    if issubclass(kind, dict):
        return kind(zip(spec.context, children))
    if hasattr(kind, "_fields"):
        return kind(*children)
    return kind(children)  # type: ignore[call-arg]  # a structseq takes one sequence


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``tree`` with every leaf replaced by ``fn(leaf)``."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix: Any, spec: TreeSpec) -> list[Any] | None:
    """One value per leaf of ``spec``: ``prefix`` is a tree whose leaves stand for whole
    subtrees of ``spec`` (vmap's ``in_dims``: ``0`` for every leaf, ``(0, None)`` per
    argument...). None when ``prefix`` does not fit ``spec``'s structure."""
    out: list[Any] = []
    return out if _broadcast(prefix, spec, out) else None


def _broadcast(prefix: Any, spec: TreeSpec, out: list[Any]) -> bool:
    kind, keys, children = _children(prefix)
    if kind is None:
        out.extend([prefix] * spec.num_leaves)
        return True
    if spec.type is None or len(children) != len(spec.children):
        return False
    if (keys is None) != (spec.context is None):  # a dict against a sequence
        return False
    if keys is not None:
        if set(keys) != set(spec.context):
            return False
        children = [prefix[k] for k in spec.context]
    return all(_broadcast(c, s, out) for c, s in zip(children, spec.children))
