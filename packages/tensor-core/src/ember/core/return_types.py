"""torch.return_types: tuples with named fields, returned by ops with several results.

``sort(values=..., indices=...)`` unpacks like a tuple and also answers ``.values`` and
``.indices``; its repr is torch's, so printed programs read the same.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

__all__ = ["return_type", "max", "min", "sort", "topk", "kthvalue", "median", "nanmedian",
           "mode", "cummax", "cummin", "aminmax"]


def return_type(name: str, fields: tuple[str, ...]) -> Any:
    """A tuple subclass named ``name`` whose items are also the attributes ``fields``."""

    def __new__(cls: type[tuple[Any, ...]], *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        if kwargs:
            args = args + tuple(kwargs.pop(f) for f in fields[len(args):] if f in kwargs)
            if kwargs:
                raise TypeError(f"{name}() got unexpected keyword arguments {sorted(kwargs)}")
        if len(args) != len(fields):
            raise TypeError(f"{name}() takes {len(fields)} fields ({', '.join(fields)}), "
                            f"got {len(args)}")
        return tuple.__new__(cls, args)

    def __repr__(self: tuple[Any, ...]) -> str:
        items = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{items})"

    def __reduce__(self: tuple[Any, ...]) -> tuple[Any, ...]:
        return (type(self), tuple(self))

    namespace: dict[str, Any] = {
        "__slots__": (), "__new__": __new__, "__repr__": __repr__, "__str__": __repr__,
        "__reduce__": __reduce__, "__module__": __name__, "_fields": fields,
        "n_fields": len(fields), "n_sequence_fields": len(fields),
    }
    for i, f in enumerate(fields):
        namespace[f] = property(itemgetter(i), doc=f"Item {i} of the tuple.")
    return type(name, (tuple,), namespace)


_VALUES_INDICES = ("values", "indices")

max = return_type("max", _VALUES_INDICES)
min = return_type("min", _VALUES_INDICES)
sort = return_type("sort", _VALUES_INDICES)
topk = return_type("topk", _VALUES_INDICES)
kthvalue = return_type("kthvalue", _VALUES_INDICES)
median = return_type("median", _VALUES_INDICES)
nanmedian = return_type("nanmedian", _VALUES_INDICES)
mode = return_type("mode", _VALUES_INDICES)
cummax = return_type("cummax", _VALUES_INDICES)
cummin = return_type("cummin", _VALUES_INDICES)
aminmax = return_type("aminmax", ("min", "max"))
