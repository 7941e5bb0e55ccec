"""torch.utils.data's collation: ``default_collate`` merges a list of samples into a batch
(tensors stacked along a new first dimension, numbers and NumPy arrays made tensors,
containers collated field by field), ``default_convert`` turns NumPy arrays into tensors
without batching. ``collate`` is the engine both share, driven by a map from element types
to collate functions that users may extend (``default_collate_fn_map``)."""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable
from typing import Any

import numpy as np

import ember.core as E

__all__ = ["default_collate", "default_convert", "collate", "default_collate_fn_map",
           "collate_tensor_fn", "collate_numpy_array_fn", "collate_numpy_scalar_fn",
           "collate_float_fn", "collate_int_fn", "collate_str_fn"]

CollateFnMap = dict[type | tuple[type, ...], Callable[..., Any]]

# NumPy dtype codes of byte strings, unicode strings and objects: such arrays are no tensors
_STRING_OR_OBJECT = re.compile(r"[SaUO]")

_UNSUPPORTED = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                "lists; found {}")


def _rebuilt_mapping(like: collections.abc.Mapping[Any, Any],
                     values: dict[Any, Any]) -> Any:
    """A mapping of ``like``'s type holding ``values``: a shallow copy updated (mutable
    mappings may carry more than their items), else the type built from a dict, else a dict."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)
            clone.update(values)
            return clone
        return type(like)(values)  # type: ignore[call-arg]
    except TypeError:
        return values


def _rebuilt_sequence(like: collections.abc.Sequence[Any], values: list[Any]) -> Any:
    """A sequence of ``like``'s type holding ``values`` (as ``_rebuilt_mapping``)."""
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, value in enumerate(values):
                clone[i] = value
            return clone
        return type(like)(values)  # type: ignore[call-arg]
    except TypeError:
        return values


def _is_numpy_value(data: Any) -> bool:
    """A NumPy array or scalar, other than a string scalar."""
    cls = type(data)
    return cls.__module__ == "numpy" and cls.__name__ not in ("str_", "string_")


def default_convert(data: Any) -> Any:
    """torch.utils.data.default_convert: every NumPy array (and NumPy scalar) in ``data``
    as a tensor, through Mappings, named tuples and Sequences; anything else unchanged.

    The DataLoader's collate function when automatic batching is off. Arrays of strings or
    objects stay arrays; plain tuples come back as lists.
    """
    if isinstance(data, E.Tensor):
        return data
    if _is_numpy_value(data):
        if isinstance(data, np.ndarray) and _STRING_OR_OBJECT.search(data.dtype.str):
            return data
        return E.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuilt_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a named tuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuilt_sequence(data, [default_convert(d) for d in data])
    return data


def collate(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """torch.utils.data._utils.collate.collate: merge the samples of ``batch``.

    The first sample's type picks the way: its exact type in ``collate_fn_map``, else the
    first key of the map it is an instance of; without one, Mappings are collated per key,
    named tuples and other Sequences per position (every sample must have the same length;
    a plain tuple gives a list). Each function of the map is called as
    ``fn(batch, collate_fn_map=collate_fn_map)``.
    """
    elem = batch[0]
    if collate_fn_map is not None:
        fn = collate_fn_map.get(type(elem))
        if fn is None:
            fn = next((f for kind, f in collate_fn_map.items() if isinstance(elem, kind)),
                      None)
        if fn is not None:
            return fn(batch, collate_fn_map=collate_fn_map)

    def each(samples: Any) -> Any:
        return collate(samples, collate_fn_map=collate_fn_map)

    # the samples of a field go on as a list, those of a position as a tuple (as in torch,
    # where a batch of strings comes back as it went in)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuilt_mapping(elem, {key: each([d[key] for d in batch]) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a named tuple
        return type(elem)(*(each(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [each(samples) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return columns
        return _rebuilt_sequence(elem, columns)
    raise TypeError(_UNSUPPORTED.format(type(elem)))


def collate_tensor_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Tensors: ``stack(batch, 0)``."""
    return E.stack(batch, 0)


def collate_numpy_array_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """NumPy arrays: as tensors, then collated as tensors (strings and objects refused)."""
    dtype = batch[0].dtype
    if _STRING_OR_OBJECT.search(dtype.str):
        raise TypeError(_UNSUPPORTED.format(dtype))
    return collate([E.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """NumPy scalars: one tensor of their dtype."""
    return E.as_tensor(batch)


def collate_float_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Python floats: a float64 tensor."""
    return E.tensor(batch, dtype=E.float64)


def collate_int_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Python ints (int64) and bools (bool): a tensor of torch's inferred dtype."""
    return E.tensor(batch)


def collate_str_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Strings and bytes: the batch as it is, a list."""
    return batch


default_collate_fn_map: CollateFnMap = {
    E.Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,  # memmap too, a subclass
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,  # no string scalars
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: Any) -> Any:
    """torch.utils.data.default_collate: a batch (a list of samples) merged into tensors
    with a new outer dimension of the batch's size.

    Tensors are stacked; NumPy arrays and scalars become tensors first; Python floats give a
    float64 tensor, ints int64 and bools bool; strings and bytes stay a list. A Mapping is
    collated per key, a named tuple per field, any other Sequence per position (a list
    back). Other types raise TypeError; samples of different sizes raise RuntimeError.
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
