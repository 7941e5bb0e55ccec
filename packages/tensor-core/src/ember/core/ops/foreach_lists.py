"""What every ``_foreach_*`` op does around its dispatch: parse torch's overloads (a tensor
list, a Python number, a list of numbers, a 0-d tensor), check the lists as torch does,
choose between the one-dispatch path and the per-tensor ops, allocate the results of the
out-of-place forms, and run the kernels of the per-tensor primitives on arrays.

On the CPU, torch's foreach kernels are its "slow path": the per-tensor op applied to each
tensor (or pair) in order. Ember's foreach ops are primitives that do the same in one
dispatch, calling each per-tensor primitive's kernel on the arrays, where that is exactly
what the per-tensor op would run: every tensor of one floating dtype and one device, each
pair of one shape, numbers that join as they are, nothing recorded by autograd
(``one_dispatch``). Anything else (mixed dtypes, integer or bool tensors, broadcasting,
tensors that require grad in grad mode, a forward-AD level) runs the per-tensor ops
themselves, as torch's slow path does; the in-place forms check every tensor first
(``checked_before_writes``), so that nothing is written when one of them would raise.

The primitives take tensor lists (and 0-d tensors) as operands and numbers as params
(``scalar``, ``scalars``, ``alpha``...), write into their written lists (the dispatcher's
``writes``) and return nothing: the in-place forms into ``self``, the out-of-place ones
into ``out``, the results this module allocates (torch's ``.out`` overloads), which the
public function returns at version 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import array_module, enter_device
from ..dispatch import Op, dual, grad_mode, register, steps
from ..factory_args import allocate
from ..result_layouts import is_row_major
from ..tensor import Tensor, make
from .copying import check_castable, check_overlap, check_writable
from .operands import broadcast_shape, check_inplace_shape

__all__ = ["FLOATS", "tensor_list", "nonempty", "same_lengths", "number", "number_list",
           "second_operand", "one_dispatch", "plain_numbers", "writable", "check_overlaps",
           "results", "meta_of", "fresh", "kernel_of", "into", "checked_before_writes",
           "register_pair", "Operand"]

FLOATS = frozenset({_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64})
_NDARRAY = np.ndarray
_NUMBERS = (bool, int, float, complex)
# the second operand of a binary foreach op: ("list", tensors), ("tensor", a 0-d tensor),
# ("scalar", a number) or ("scalars", a tuple of numbers)
Operand = tuple[str, Any]


# ----------------------------------------------------------------------------- parsing

def tensor_list(op: str, value: Any, position: int, arg: str = "self") -> list[Tensor]:
    """A ``Tensor[]`` argument (a list or tuple of Tensors), as torch's parser takes it."""
    if value.__class__ is not list and value.__class__ is not tuple:
        raise TypeError(f"{op}(): argument '{arg}' (position {position + 1}) must be tuple of "
                        f"Tensors, not {type(value).__name__}")
    if not all([isinstance(t, Tensor) for t in value]):
        i, t = next((i, t) for i, t in enumerate(value) if not isinstance(t, Tensor))
        raise TypeError(f"{op}(): expected Tensor as element {i} in argument {position}, but "
                        f"got {type(t).__name__}")
    return value if value.__class__ is list else list(value)


def nonempty(op: str, tensors: list[Tensor]) -> None:
    if not tensors:
        raise RuntimeError(f"{op}: Tensor list must have at least one tensor.")


def same_lengths(op: str, first: list[Any], *others: Sequence[Any]) -> None:
    """torch's check that the tensor lists of one call have one length."""
    for other in others:
        if len(other) != len(first):
            raise RuntimeError(f"{op}: Tensor lists must have the same number of tensors, got "
                               f"{len(first)} and {len(other)}")


def number(op: str, value: Any, arg: str, position: int) -> Any:
    """A ``Scalar`` argument as a Python number: numpy scalars and 0-d tensors that do not
    require grad are read as the number they hold, as torch's parser reads them."""
    if value.__class__ in _NUMBERS:
        return value
    if isinstance(value, np.generic) and (value.dtype.kind in "biufc"
                                          or value.dtype == _dt.bfloat16.np):
        return value.item()
    if isinstance(value, _NUMBERS):
        return value
    if isinstance(value, Tensor) and value._data.ndim == 0 and not value._requires_grad:
        return value.item()
    raise TypeError(f"{op}(): argument '{arg}' (position {position}) must be Number, not "
                    f"{type(value).__name__}")


def number_list(op: str, tensors: list[Tensor], values: Sequence[Any], position: int
                ) -> tuple[Any, ...]:
    """A ``Scalar[]`` argument, one number for each tensor."""
    numbers = tuple([number(op, v, "scalars", position + 1) for v in values])
    if len(numbers) != len(tensors):
        raise RuntimeError(f"{op}: Tensor list must have same number of elements as scalar "
                           "list.")
    return numbers


def second_operand(op: str, tensors: list[Tensor], other: Any, tensor_overload: bool
                   ) -> Operand:
    """Which of torch's overloads ``other`` picks: a list holding a Tensor is a tensor list
    (each element must be one), a list of numbers (an empty one too) a scalar list, a
    Tensor the 0-d tensor overload (where ``tensor_overload``: else it must be a Number),
    anything else a Number."""
    if other.__class__ is list or other.__class__ is tuple:
        if other and any([isinstance(o, Tensor) for o in other]):
            others = tensor_list(op, other, 1, "other")
            same_lengths(op, tensors, others)
            return "list", others
        return "scalars", number_list(op, tensors, other, 1)
    if tensor_overload and isinstance(other, Tensor):
        ndim = other._data.ndim
        if ndim:
            raise RuntimeError(f"{op}: scalar tensor expected to be 0 dim but it has {ndim} "
                               f"dimensions and {other._data.size} elements.")
        return "tensor", other
    return "scalar", number(op, other, "scalar", 2)


# ----------------------------------------------------------------------------- the choice

def one_dispatch(tensors: Sequence[Tensor], shapes: Sequence[list[Tensor]] = (),
                 dtypes: frozenset[_dt.dtype] | None = FLOATS) -> Any:
    """The dtype the foreach primitive computes ``tensors`` in, or None where the per-tensor
    ops must run: unless every tensor has one dtype (one of ``dtypes``, None: any) and one
    device, each list of ``shapes`` has the first one's shapes, and autograd records none
    of them (nothing requires grad in grad mode, no forward-AD level is open)."""
    first = tensors[0]
    dt, dev = first.dtype, first.device
    if dtypes is not None and dt not in dtypes or dual.active:
        return None
    if [t for t in tensors if t.dtype is not dt or t.device is not dev]:
        return None
    if grad_mode.enabled and steps.autograd is not None and \
            any([t._requires_grad for t in tensors]):
        return None
    if shapes:
        sizes = [t._data.shape for t in shapes[0]]
        if any([[t._data.shape for t in ts] != sizes for ts in shapes[1:]]):
            return None
    return dt


def plain_numbers(values: Sequence[Any]) -> bool:
    """Numbers the primitive takes as they are: Python ints and floats (a bool or complex
    number promotes, which the per-tensor ops do)."""
    return all([v.__class__ is float or v.__class__ is int for v in values])


def writable(op: str, tensors: list[Tensor], like: str | None = None) -> bool:
    """Whether the primitive may write into every tensor's array as it is. A tensor whose
    elements share memory raises torch's error here (``op``'s, unless the per-tensor write
    ``like`` makes it, as zero_ does); one numpy marks read-only otherwise (an expanded
    size-1 dim) is left to the per-tensor op, which writes through an alias of it."""
    odd = [t for t in tensors if 0 in t._data.strides or
           t._data.__class__ is _NDARRAY and not t._data.flags.writeable]
    for t in odd:
        check_writable(op, t, like)
    return not odd


def check_overlaps(op: str, written: list[Tensor], read: Sequence[list[Tensor]]) -> None:
    """torch's refusal of a write into a tensor that a read tensor of its pair overlaps
    partly (the same tensor, or the same elements, may be read): looked at only where the
    two share a storage."""
    for ts in read:
        for t, o in zip(written, ts):
            if o is not t and (t if t._base is None else t._base) is (
                    o if o._base is None else o._base):
                check_overlap(op, t, (o,))


# ----------------------------------------------------------------------------- results

def meta_of(x: Any) -> Any:
    """A tensor's or an array's geometry as a MetaArray (what meta rules take); numbers as
    they are."""
    if isinstance(x, Tensor):
        x = x._data
    return meta.MetaArray(x.shape, x.dtype, x.strides) if hasattr(x, "strides") else x


def results(rule: Callable[..., Any], operands: Sequence[Sequence[Any]], dt: _dt.dtype,
            elementwise: bool = True) -> list[Tensor]:
    """New tensors of dtype ``dt`` for an out-of-place foreach op, one for each tensor of
    ``operands[0]``, on its device, laid out as the per-tensor op's meta ``rule`` lays out
    its result of the operands at that position (arrays or numbers). An ``elementwise``
    result of row-major arrays of one shape is row-major, as TensorIterator lays it out,
    without asking the rule."""
    first = operands[0]
    dev = first[0].device
    arrays = [[o._data if isinstance(o, Tensor) else o for o in ts] for ts in operands]
    out = []
    for row in zip(*arrays):
        x = row[0]
        shaped = [a for a in row if hasattr(a, "shape") and a.shape]
        if elementwise and all([a.flags.c_contiguous and a.shape == x.shape for a in shaped]
                               ) and (x.shape or not shaped):
            # (numpy gives an empty array zero strides; torch's are row-major)
            shape, strides = x.shape, None if x.size else meta.contiguous_strides(x.shape)
        else:
            want = rule(*[meta_of(a) for a in row])
            shape, strides = want.shape, meta.element_strides(want)
        out.append(_empty(dev, shape, dt, strides))
    return out


def _empty(dev: Any, shape: tuple[int, ...], dt: _dt.dtype, strides: tuple[int, ...] | None
           ) -> Tensor:
    if dev.type == "meta":
        arr: Any = meta.MetaArray(shape, dt.np) if strides is None else \
            meta.strided(shape, dt.np, strides)
        return make(arr, dt, dev)
    xp = array_module(dev)
    if dev.type == "cuda" and dev.index is not None:
        with enter_device(dev):
            arr = allocate(xp, shape, dt.np, strides)
    else:
        arr = allocate(xp, shape, dt.np, strides)
    return make(arr, dt, dev, arr.__class__ is _NDARRAY and is_row_major(arr))


def fresh(tensors: list[Tensor]) -> list[Tensor]:
    """Results the primitive wrote, at version 0 as a functional op's new tensors are."""
    for t in tensors:
        t._vc = None
    return tensors


# ----------------------------------------------------------------------------- kernels

def kernel_of(op: Op, arr: Any) -> Callable[..., Any]:
    """The kernel the dispatcher runs ``op`` with on ``arr``'s device."""
    return op.table["cpu" if arr.__class__ is _NDARRAY else "cuda"]


def into(compute: Callable[..., Any]) -> Callable[..., None]:
    """``write(out, *operands, **params)``: ``compute``'s result written into ``out`` (a new
    array of its shape and dtype): a ufunc computes into it directly."""
    if isinstance(compute, np.ufunc):
        def write(out: Any, *operands: Any, **params: Any) -> None:
            compute(*operands, out=out, **params)
    else:
        def write(out: Any, *operands: Any, **params: Any) -> None:
            out[...] = compute(*operands, **params)

    return write


def _written(*operands: Any, **params: Any) -> None:
    """The meta rule of a foreach primitive: it writes tensors the wrapper has checked (and
    allocated), whose geometry stays."""


def register_pair(name: str, inplace: Callable[..., Any] | None,
                  functional: Callable[..., Any] | None, arity: int
                  ) -> tuple[Op | None, Op | None]:
    """Register ``_foreach_<name>_`` (writes its first operand) and ``_foreach_<name>`` (writes
    its last, ``out``, after ``arity`` operands), where their forwards are given. Neither
    is differentiable: a call autograd records runs the per-tensor ops instead."""
    op_ = None if inplace is None else register(
        f"_foreach_{name}_", inplace, _written, "library", False, writes=(0,))
    op = None if functional is None else register(
        f"_foreach_{name}", functional, _written, "library", False, writes=(arity,))
    return op_, op


# ----------------------------------------------------------------------------- slow path

def checked_before_writes(op: str, tensors: list[Tensor], operands: Sequence[Sequence[Any]],
                          result_dtype: Callable[..., _dt.dtype] | None,
                          like: str | None = None) -> None:
    """The checks of an in-place foreach op that runs the per-tensor ops, made for every
    tensor before the first one is written: its memory (as the per-tensor write ``like``
    checks it), the shape its operands (tensors at the same position of ``operands``)
    broadcast to, and the cast of ``result_dtype(tensor, *operands)`` into its dtype."""
    for i, t in enumerate(tensors):
        row = [ts[i] for ts in operands]
        check_writable(op, t, like)
        shapes = [o._data.shape for o in row if isinstance(o, Tensor)]
        if shapes and any([s != t._data.shape for s in shapes]):
            check_inplace_shape(op, t._data.shape, broadcast_shape(op, t._data.shape, *shapes))
        if result_dtype is not None:
            check_castable(op, result_dtype(t, *row), t.dtype)
