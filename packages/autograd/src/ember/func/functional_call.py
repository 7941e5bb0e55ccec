"""``functional_call``: a module's forward with some of its parameters and buffers
replaced by given tensors, leaving the module as it was afterwards.

Works on any object with torch's Module protocol (``named_parameters``,
``named_buffers``, ``get_submodule``, the ``_parameters``/``_buffers`` dicts), so this
package needs no nn: the tensors are swapped into those dicts for the call and the
originals put back, even when the call raises.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["functional_call"]


def _tied_names(module: Any) -> dict[str, list[str]]:
    """Each parameter or buffer name -> every name the same tensor is registered under."""
    by_tensor: dict[int, list[str]] = {}
    for name, t in [*module.named_parameters(remove_duplicate=False),
                    *module.named_buffers(remove_duplicate=False)]:
        by_tensor.setdefault(id(t), []).append(name)
    return {n: names for names in by_tensor.values() for n in names}


def _merged(dicts: Any) -> dict[str, Any]:
    if isinstance(dicts, Mapping):
        return dict(dicts)
    if not isinstance(dicts, Sequence):
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(dicts)}")
    merged: dict[str, Any] = {}
    for d in dicts:
        for key in d:
            if key in merged:
                raise ValueError(f"{key} appeared in multiple dictionaries; behavior of "
                                 "functional call is ambiguous")
        merged.update(d)
    return merged


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """torch.func.functional_call: call ``module(*args, **kwargs)`` with the parameters
    and buffers named in ``parameter_and_buffer_dicts`` replaced. ``tie_weights``: a
    tensor given for one of several tied names replaces all of them. ``strict``: every
    parameter and buffer must be given, and nothing else."""
    values = _merged(parameter_and_buffer_dicts)
    tied = _tied_names(module)
    if tie_weights:
        for name in list(values):
            for alias in tied.get(name, ()):
                given = values.setdefault(alias, values[name])
                if given is not values[name]:
                    raise ValueError(f"functional_call got multiple values for keys {alias} "
                                     f"and {name}, which are tied. Consider using "
                                     "tie_weights=False")
    if strict:
        expected = set(tied)
        missing = sorted(expected - set(values))
        unexpected = sorted(set(values) - expected)
        if missing or unexpected:
            parts = []
            if unexpected:
                parts.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected))
            if missing:
                parts.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing))
            raise RuntimeError("Error(s) in reparametrizing for " + type(module).__name__
                               + ":\n\t" + "\n\t".join(parts))
    saved = []
    try:
        for name, value in values.items():
            owner_path, _, leaf = name.rpartition(".")
            owner = module.get_submodule(owner_path)
            store = owner._parameters if leaf in owner._parameters else \
                owner._buffers if leaf in owner._buffers else None
            if store is None:
                saved.append((owner, None, leaf, owner.__dict__.get(leaf, _ABSENT)))
                owner.__dict__[leaf] = value
            else:
                saved.append((owner, store, leaf, store[leaf]))
                store[leaf] = value
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for owner, store, leaf, old in reversed(saved):
            if store is not None:
                store[leaf] = old
            elif old is _ABSENT:
                del owner.__dict__[leaf]
            else:
                owner.__dict__[leaf] = old


_ABSENT = object()
