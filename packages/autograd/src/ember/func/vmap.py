"""``vmap``: map a function over a dimension of its inputs.

Batching is done by running the function once per index of the mapped dimension and
stacking the results (the torch.func semantics, without per-op batching rules). It is
exact for any function and composes with every transform (``vmap(grad(f))``,
``grad(vmap(f))``, nested ``vmap``), at the cost of one Python call per batch element.

Randomness: ``'different'`` draws independently per element; ``'same'`` replays the
default generators' state for each element; ``'error'`` raises when an element's call
advanced a default generator (an explicit ``generator=`` argument is not watched).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

import ember.core as E
import ember.core.random as _random
from ember.core.tensor import Tensor

from .pytree import TreeSpec, broadcast_prefix, tree_flatten, tree_unflatten

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0,
         randomness: str = "error", *, chunk_size: int | None = None) -> Callable[..., Any]:
    """``torch.func.vmap``: ``func`` mapped over dimension ``in_dims`` of its inputs.

    ``in_dims``: an int (every input), or a tuple with one entry per positional argument,
    each an int, None (not mapped) or a nested structure matching that argument.
    ``out_dims``: where the mapped dimension goes in each output (int, or a structure
    matching the outputs; None for an output that does not depend on the batch).
    Keyword arguments are passed through unmapped. ``chunk_size`` is accepted (the
    elements are processed one at a time anyway).
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    name = getattr(func, "__name__", repr(func))

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        where = f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>)"
        if not args:
            raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                             "inputs, or you are trying to vmap over a function with no inputs. "
                             "The latter is unsupported.")
        if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
            raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) "
                             "tuple matching the structure of inputs, got: "
                             f"{type(in_dims)}.")
        flat_args, args_spec = tree_flatten(args)
        dims = broadcast_prefix(in_dims, args_spec)
        if dims is None:
            raise ValueError(f"{where}: in_dims is not compatible with the structure of "
                             f"`inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but "
                             f"inputs has structure {args_spec}.")
        size = _batch_size(where, flat_args, dims)
        if size == 0:  # the output shapes come from one call on a zero stand-in element
            outputs = [func(*_zero_sample(flat_args, dims, args_spec), **kwargs)]
        else:
            samples = [_sample_args(flat_args, dims, b, args_spec) for b in range(size)]
            outputs = _run(func, samples, kwargs, randomness)
        return _stack(outputs, out_dims, size, name)

    return wrapped


def _batch_size(where: str, flat_args: list[Any], dims: list[Any]) -> int:
    sizes = []
    for x, d in zip(flat_args, dims):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(f"{where}: in_dim must be an int or None, got {type(d)}")
        if not isinstance(x, Tensor):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please use "
                             "None as the respective in_dim")
        ndim = x._data.ndim
        if not -ndim <= d < ndim:
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a "
                             f"Tensor of dimensionality {ndim} so expected in_dim to satisfy "
                             f"-{ndim} <= in_dim < {ndim}.")
        sizes.append(x._data.shape[d])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _sample_args(flat_args: list[Any], dims: list[Any], b: int, spec: TreeSpec) -> Any:
    return tree_unflatten([x if d is None else x.select(d, b) for x, d in zip(flat_args, dims)],
                          spec)


def _zero_sample(flat_args: list[Any], dims: list[Any], spec: TreeSpec) -> Any:
    def element(x: Any, d: Any) -> Any:
        if d is None:
            return x
        shape = x._data.shape[:d % x._data.ndim] + x._data.shape[d % x._data.ndim + 1:]
        return E.zeros(shape, dtype=x.dtype, device=x.device)

    return tree_unflatten([element(x, d) for x, d in zip(flat_args, dims)], spec)


def _generators() -> list[Any]:
    # the CUDA defaults are made on first use: one appearing mid-call also counts as use
    return _random.default_generators()


def _states() -> list[bytes]:
    return [g.get_state()._data.tobytes() for g in _generators()]


def _restore(states: list[bytes]) -> None:
    for g, raw in zip(_generators(), states):
        g.set_state(E.tensor(np.frombuffer(raw, np.uint8).copy()))


def _run(func: Callable[..., Any], samples: list[Any], kwargs: dict[str, Any],
         randomness: str) -> list[Any]:
    outs = []
    start = _states() if randomness != "different" else None
    for args in samples:
        if randomness == "same":
            _restore(start)  # type: ignore[arg-type]
        outs.append(func(*args, **kwargs))
        if randomness == "error" and _states() != start:
            raise RuntimeError("vmap: called random operation while in randomness error mode. "
                               "Please either use the 'same' or 'different' randomness flags on "
                               "vmap or perform the randomness operation out of vmap")
    return outs


def _stack(outputs: list[Any], out_dims: Any, size: int, name: str) -> Any:
    first, spec = tree_flatten(outputs[0])
    dims = broadcast_prefix(out_dims, spec)
    if dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims!r})(<inputs>): out_dims is not "
                         "compatible with the structure of `outputs`. out_dims has structure "
                         f"{tree_flatten(out_dims)[1]} but outputs has structure {spec}.")
    per_sample = [first] + [tree_flatten(o)[0] for o in outputs[1:]]
    stacked = []
    for i, d in enumerate(dims):
        column = [leaves[i] for leaves in per_sample]
        if d is None:
            _check_unbatched(column, name)
            stacked.append(column[0])
            continue
        for x in column:
            if not isinstance(x, Tensor):
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got "
                                 f"type {type(x)}. Did you mean to set out_dims= to None for "
                                 "output?")
        out = E.stack(column, d)
        if size == 0:
            out = out.narrow(d, 0, 0)
        stacked.append(out)
    return tree_unflatten(stacked, spec)


def _check_unbatched(column: list[Any], name: str) -> None:
    """An output with out_dim None must be the same for every element."""
    first = column[0]
    for x in column[1:]:
        if isinstance(x, Tensor) and isinstance(first, Tensor):
            same = x is first or (x._data.shape == first._data.shape
                                  and bool(np.array_equal(x._host(), first._host())))
        else:
            same = x is first or bool(x == first)
        if not same:
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when "
                             "out_dim is None")
