"""Results laid out as torch lays them out: the kernel step's layout fix-up.

An op's meta rule states the strides of its results (torch's: TensorIterator's layout for
elementwise results, ``empty_like``'s for copies, row-major for reductions, indexing and
the rest). NumPy lays most results out the same way, but not all: a reduction of a
transposed input comes out transposed, a kernel made of several numpy calls loses its
input's order, an empty result gets zero strides, and so on. The kernel step therefore
holds each new result to its rule: where numpy's strides differ, the result is copied
into an array with the rule's strides.

Consulting the rule costs more than a tiny op, so the kernel step asks first whether
numpy can have differed (``suspect``): for a non-empty row-major result of row-major
operands it cannot (both lay it out row-major), unless they broadcast through a size-1 dim
whose strides are not numpy's (``reorders``), and for a single ufunc on one array it
cannot either (numpy's K order of one operand is TensorIterator's), unless it has a
size-1 dim or two dims of one stride (``lone_differs``). Only ops flagged
``always`` (einsum: torch permutes its results of row-major operands) ask the rule on
every call.

The size-1 strides are looked at only where an operand is not known to be row-major (its
``Tensor._row_major`` bit unset: a view, an array numpy laid out by its operands' strides, a
copy of a non-contiguous tensor): a known row-major operand has numpy's strides there,
which are torch's too.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from .meta import DYNAMIC_COLUMN_MAJOR, MetaArray, strided
from .ops.geometry import refuse_writes, shares_elements
from .tensor import Tensor

if TYPE_CHECKING:
    from .dispatch import Op

__all__ = ["kind_of", "suspect", "lone_differs", "pair_differs", "is_row_major", "unit_strides_odd",
           "reorders", "conform", "laid_out", "ALWAYS", "ROW_MAJOR"]

_ndarray = np.ndarray

# ops whose result torch permutes even for row-major operands (their rule is consulted on
# every call; their kernels are large anyway)
ALWAYS = frozenset({"einsum"})
# ops whose rule gives a row-major result whatever their operands' layouts (torch's
# products allocate it so): only a result numpy did not lay out row-major is looked at,
# not their operands (a linear layer's transposed weight would ask the rule every call)
ROW_MAJOR = frozenset({"matmul", "addmm", "addbmm", "vdot"})


def kind_of(op: Op) -> str:
    """How the kernel step checks ``op``'s results: 'none' (a view, an in-place op, a random
    op, or no rule), 'dynamic' (no data-independent rule: only empty results are laid out,
    as torch's: row-major, column-major for ``DYNAMIC_COLUMN_MAJOR``), 'always', 'row-major'
    (``ROW_MAJOR``), 'ufunc' (the kernel is one numpy ufunc, or names the one it computes
    as, its ``ufunc``; the rule TensorIterator's) or
    'general'."""
    from .meta import DYNAMIC_RULES, ITERATOR_RULES

    if op.view or op.mutates or op.meta is None or op.kind == "random":
        return "none"  # random ops lay their values out by their params themselves
    if op.meta in DYNAMIC_RULES:
        return "dynamic"
    if op.name in ALWAYS:
        return "always"
    if op.name in ROW_MAJOR:
        return "row-major"
    kernel = op.table["cpu"]
    if isinstance(getattr(kernel, "ufunc", kernel), np.ufunc) and op.meta in ITERATOR_RULES:
        return "ufunc"  # a ufunc, or a kernel that lays its results out as one
    return "general"


def suspect(kind: str, args: tuple[Any, ...], out: Any) -> bool:
    """Whether numpy's layout of ``out`` (an array or a tuple of them) can differ from
    the rule's, for an op of ``kind`` (see ``kind_of``) on ``args``."""
    if kind == "none":
        return False
    if kind == "always":
        return True
    if kind == "dynamic":
        outs = out if out.__class__ is tuple else (out,)
        return any(o.__class__ is _ndarray and not o.size for o in outs)
    outs = out if out.__class__ is tuple else (out,)
    for o in outs:
        if o.__class__ is _ndarray and (not o.size or kind != "ufunc" and (
                not o.flags.c_contiguous or 1 in o.shape and unit_strides_odd(o))):
            return True
    if kind == "row-major":
        return False
    unknown = False  # an operand not known row-major (``Tensor._row_major``)
    if kind == "ufunc":
        tensors = [a for a in args if isinstance(a, Tensor) and a._data.ndim]
        if len(tensors) < 2:
            return bool(tensors) and lone_differs(tensors[0]._data)
        for a in tensors:
            if not a._row_major:
                if not a._data.flags.c_contiguous:
                    return True
                unknown = True
    else:
        for a in args:
            if isinstance(a, Tensor) and not a._row_major:
                d = a._data
                if not d.flags.c_contiguous or 1 in d.shape and unit_strides_odd(d):
                    return True  # (an index of a permuted view follows its size-1 strides)
                unknown = True
            elif a.__class__ in (tuple, list):  # a sequence of operands (cat, stack...)
                for t in a:
                    if isinstance(t, Tensor) and not t._data.flags.c_contiguous:
                        return True
    return unknown and out.__class__ is _ndarray and out.ndim > 2 and 1 in out.shape and \
        reorders(out, [a._data if isinstance(a, Tensor) else a for a in args])


def lone_differs(arr: Any) -> bool:
    """Whether a ufunc's result of ``arr`` alone can be laid out otherwise by numpy than
    by TensorIterator. NumPy gives a row-major ``arr`` a row-major result and orders the
    rest by stride, leaving size-1 dims out and keeping dims of one stride as they come;
    TensorIterator gives a dense ``arr``'s result its strides, size-1 dims' too, and sorts
    the dims of the rest with their size-1 dims, the shorter of two of one stride inside."""
    shape = arr.shape
    if 1 not in shape:  # only dims of one stride can differ (never in a row-major array)
        if arr.flags.c_contiguous:
            return False
        strides = arr.strides
        # (all zero: a number expanded, which both lay out row-major; some zero: an
        # expanded dim, which numpy moves outermost and TensorIterator leaves in place)
        return any(strides) and (len(set(strides)) < len(shape) or 0 in strides)
    if not any(arr.strides):
        return False
    return not arr.flags.c_contiguous or unit_strides_odd(arr)


def pair_differs(out: Any, x: Any, y: Any) -> bool:
    """Whether numpy's layout of ``out``, a ufunc's result of the row-major arrays ``x`` and
    ``y``, can differ from TensorIterator's: a 0-d one leaves the other alone
    (``lone_differs``), else a broadcast through a size-1 dim (``reorders``)."""
    if not x.ndim or not y.ndim:
        return lone_differs(y if x.ndim == 0 else x)
    return out.ndim > 2 and 1 in out.shape and reorders(out, (x, y))


def is_row_major(arr: Any) -> bool:
    """Whether ``arr`` is non-empty with the strides numpy gives a new row-major array (what
    ``Tensor._row_major`` says of a tensor's array)."""
    if not arr.size or not arr.flags.c_contiguous:
        return False
    return 1 not in arr.shape or not unit_strides_odd(arr)


def unit_strides_odd(arr: Any) -> bool:
    """Whether ``arr``, row-major, has size-1 dims with other strides than a new row-major
    array's (numpy's fancy indexing and some of its reshapes give them others)."""
    return arr.strides != _row_major_strides(arr.shape, arr.itemsize)


def reorders(out: Any, operands: Any) -> bool:
    """Whether TensorIterator can lay ``out``, the broadcast result of ``operands`` (row-major
    arrays and numbers), out other than numpy does. Operands of one shape it lays out
    row-major, else it sorts the dims by the operands' strides, a size-1 dim's too: with the
    row-major strides numpy gives a new array that order is row-major, but where an operand
    has other strides at a size-1 dim of ``out`` (a permuted, sliced or unfolded view's, a
    cast's of one), the sort can move the dims around that one (``add(x (2,1,1),
    x.unfold(2, 1, 2))`` is laid out (1, 2, 4, 1)). An operand decides a comparison of two
    dims only where it is not broadcast along either, so one of 0 or 1 dims decides none;
    a single deciding operand keeps the row-major order of the dims longer than 1."""
    arrays = [a for a in operands if a.__class__ is _ndarray and a.ndim > 1]
    if len(arrays) < 2 or len({getattr(o, "shape", ()) for o in operands}) < 2:
        return False
    return any(1 in a.shape and a.strides != _row_major_strides(a.shape, a.itemsize)
               for a in arrays)


@lru_cache(maxsize=512)
def _row_major_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """numpy's byte strides of a new row-major array."""
    strides = []
    for n in reversed(shape):
        strides.append(itemsize)
        itemsize *= n
    return tuple(reversed(strides))


def _meta(x: Any) -> Any:
    if isinstance(x, Tensor):
        d = x._data
        return MetaArray(d.shape, d.dtype, d.strides)
    if x.__class__ in (tuple, list):
        return x.__class__(_meta(v) for v in x)
    return x


def conform(op: Op, args: tuple[Any, ...], params: dict[str, Any] | None, out: Any) -> Any:
    """``out`` (an array or a tuple of them) with each array laid out as ``op``'s meta rule
    states for ``args``: the same array where numpy's strides are the rule's, else a copy
    with the rule's strides."""
    if op.layout == "dynamic":  # empty results, the only ones a rule can know
        if out.__class__ is tuple:
            return tuple([laid_out(o, _empty_layout(op, o)) for o in out])
        return laid_out(out, _empty_layout(op, out))
    rule: Callable[..., Any] = op.table["meta"]
    metas = [_meta(a) for a in args]
    try:
        expected = rule(*metas, **params) if params else rule(*metas)
    except (NotImplementedError, RuntimeError):
        # a rule that needs values for this call (a mask's count, repeat_interleave's
        # output size): numpy's layout stands
        return out
    if out.__class__ is tuple:
        wanted = expected if expected.__class__ in (tuple, list) else (expected,)
        return tuple([laid_out(o, w) for o, w in zip(out, wanted)])
    return laid_out(out, expected)


def _empty_layout(op: Op, out: Any) -> MetaArray:
    if op.meta == DYNAMIC_COLUMN_MAJOR:
        return strided(out.shape, out.dtype, (1, out.shape[0]))
    return MetaArray(out.shape, out.dtype)


def laid_out(arr: Any, want: Any) -> Any:
    """``arr`` with the strides of ``want`` (a MetaArray of its shape): itself where they
    are its own (or ``want`` is no MetaArray of that shape), else a copy. NumPy gives
    every new empty array zero strides; torch's are the layout's."""
    if arr.__class__ is not _ndarray or want.__class__ is not MetaArray or \
            arr.shape != want.shape or arr.strides == want.strides:
        return arr
    strides = want.strides
    if any(s < 0 for s in strides):
        return arr
    item = arr.itemsize
    span = 0 if not arr.size else 1 + sum((n - 1) * s // item for n, s in zip(arr.shape, strides))
    out = np.ndarray(arr.shape, arr.dtype, buffer=np.empty(span, arr.dtype), strides=strides)
    np.copyto(out, arr)
    if 0 in strides and shares_elements(arr.shape, strides):
        refuse_writes(out)  # (an expanded layout, a conjugate's of an expanded tensor)
    return out
