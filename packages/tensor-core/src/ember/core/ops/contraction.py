"""Tensor products and contractions: outer (ger), kron, tensordot, inner, einsum and trace.

Primitives:

- ``outer`` (``x``, ``y``) and ``kron`` (``x``, ``y``): operands promoted to their common
  dtype first, as torch's composites of ``mul`` promote them;
- ``tensordot`` (``x``, ``y``; params ``dims_a``, ``dims_b``, non-negative): contracted
  dims of equal sizes (the wrapper first sums a contracted dim of size 1 out of the other
  operand, as torch does); inner dispatches it too;
- ``einsum`` (``x``, ``y``; params ``equation``, spelled out: ``"ij,jk->ik"``, and
  ``order``, every label of the whole einsum in torch's order: the output's, then the
  summed ones): one pairwise contraction of torch's einsum; labels not in the output are
  summed, size-1 dims broadcast. ``order`` is how torch aligns the operands, which decides
  the layout of its result. The public einsum runs torch's algorithm around it: diagonals
  for repeated labels, a label held by one operand alone summed out of it first, then the
  operands contracted left to right one pair at a time (so that each node keeps what
  torch's do); an einsum of one operand is a view or a sum;
- ``trace`` (``x``): integers and bool sum in int64.

Work runs in BLAS through the array module; float16 and bfloat16 are computed in float32
and rounded once per product, as torch's CPU kernels do. The meta rules lay results out as
torch does: kron and einsum follow the views, ``mul`` and ``bmm`` torch computes them with.
"""

from __future__ import annotations

import math
import operator
from typing import Any

from .. import dtypes as _dt
from .. import meta
from ..device import xp_of
from ..dispatch import dispatch, register
from ..tensor import Tensor, wrap_dim
from . import reduction, strided, transposing
from .binary import mul
from .conversion import cast
from .copying import write_out, write_out_exact
from .geometry import view_strides
from .operands import LOW_PRECISION, check_operand, common_device, promote, upcast
from .products import check_tensors, no_bool, result_array, scalar_type_error


def _outer(x: Any, y: Any) -> Any:
    return x[:, None] * y[None, :]


def _kron_shapes(x: tuple[int, ...], y: tuple[int, ...]
                 ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """kron as torch computes it: the operands of shapes ``x`` and ``y`` (the lower-rank
    one with leading 1-dims) viewed with their dims interleaved with size-1 dims, so that
    their product, viewed in the result's shape, is the result. Returns the two views'
    shapes and the result's."""
    rank = max(len(x), len(y))
    sa = (1,) * (rank - len(x)) + tuple(x)
    sb = (1,) * (rank - len(y)) + tuple(y)
    return (tuple(v for s in sa for v in (s, 1)), tuple(v for s in sb for v in (1, s)),
            tuple(p * q for p, q in zip(sa, sb)))


def _kron(x: Any, y: Any) -> Any:
    a, b, shape = _kron_shapes(x.shape, y.shape)
    return (x.reshape(a) * y.reshape(b)).reshape(shape)


def _tensordot(x: Any, y: Any, *, dims_a: tuple[int, ...], dims_b: tuple[int, ...]) -> Any:
    dtype = x.dtype
    x, y = upcast(x, y)
    return result_array(xp_of(x).tensordot(x, y, axes=(dims_a, dims_b)), dtype)


def _einsum(x: Any, y: Any, *, equation: str, order: str) -> Any:
    # ``order`` decides only the layout torch gives the result, which the meta rule follows
    dtype = x.dtype
    x, y = upcast(*_broadcast_labels(equation.split("->")[0].split(","), (x, y)))
    big = x.size > 4096 or y.size > 4096
    return result_array(xp_of(x).einsum(equation, x, y, optimize=big), dtype)


def _broadcast_labels(terms: list[str], arrays: tuple[Any, ...]) -> list[Any]:
    """The arrays with their size-1 dims expanded to the size another operand gives the same
    label (numpy's einsum does not broadcast labels)."""
    sizes: dict[str, int] = {}
    for term, arr in zip(terms, arrays):
        for label, size in zip(term, arr.shape):
            if sizes.get(label, 1) == 1:
                sizes[label] = size
    out = []
    for term, arr in zip(terms, arrays):
        target = tuple(sizes[label] for label in term)
        out.append(arr if target == arr.shape else xp_of(arr).broadcast_to(arr, target))
    return out


def _trace(x: Any) -> Any:
    integral = x.dtype.kind in "iub"
    acc = "int64" if integral else "float32" if x.dtype in LOW_PRECISION else None
    return result_array(x.trace(dtype=acc), "int64" if integral else x.dtype)


# ----------------------------------------------------------------------------- meta rules

def _product_strides(shape: tuple[int, ...], operands: list[Any]) -> tuple[int, ...]:
    """The strides torch's ``mul`` of ``operands`` gives its result: TensorIterator's layout,
    row-major (size-0 dims counting as 1) where its dim order is the natural one."""
    strides = tuple(meta.elementwise_strides(shape, operands))
    natural = tuple(math.prod(shape[d + 1:]) for d in range(len(shape)))
    return meta.contiguous_strides(shape) if strides == natural else strides


def _view(shape: Any, strides: Any, new_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The element strides torch's ``view`` in ``new_shape`` gives a tensor of ``shape`` and
    element ``strides``; row-major where no view can (torch raises there)."""
    viewed = view_strides(tuple(shape), tuple(strides), new_shape, 1)
    return meta.contiguous_strides(new_shape) if viewed is None else viewed


def _viewed(x: Any, shape: tuple[int, ...]) -> Any:
    """A meta array like torch's view of ``x`` in ``shape``."""
    return meta.strided(shape, x.dtype, _view(x.shape, meta.element_strides(x), shape))


def _outer_meta(x: Any, y: Any) -> Any:
    # torch's outer is ``x.reshape(n, 1) * y``, laid out as that product is
    shape = (x.shape[0], y.shape[0])
    column = _viewed(x, (x.shape[0], 1))
    return meta.strided(shape, x.dtype, _product_strides(shape, [column, y]))


def _kron_meta(x: Any, y: Any) -> Any:
    a, b, shape = _kron_shapes(x.shape, y.shape)
    product = meta.broadcast_shapes(a, b)
    strides = _product_strides(product, [_viewed(x, a), _viewed(y, b)])
    # where the product cannot be viewed so (one operand transposed, say), torch raises;
    # Ember computes the product, row-major
    return meta.strided(shape, x.dtype, _view(product, strides, shape))


def _tensordot_meta(x: Any, y: Any, *, dims_a: tuple[int, ...], dims_b: tuple[int, ...]
                    ) -> Any:
    shape = tuple(n for d, n in enumerate(x.shape) if d not in dims_a) + \
        tuple(n for d, n in enumerate(y.shape) if d not in dims_b)
    return meta.empty(shape, x.dtype)


def _einsum_meta(x: Any, y: Any, *, equation: str, order: str) -> Any:
    """torch's pairwise contraction: both operands aligned to ``order`` (a label one lacks
    is a dim of size 1); a ``mul`` when no label of size != 1 in both is summed, else a
    ``bmm`` viewed and permuted back; the result viewed without the dims not in the output
    (each of size 1 by then)."""
    lhs, out = equation.split("->")
    tx, ty = lhs.split(",")
    left, right = _aligned(x, tx, order), _aligned(y, ty, order)
    summed = []
    for d, label in enumerate(order):
        summed.append(label not in out and left[d][0] != 1 and right[d][0] != 1)
        if label not in out and not summed[d]:
            # of size 1 in both: torch sums a label one operand holds alone out of it first
            left[d], right[d] = (1, left[d][1]), (1, right[d][1])
    if any(summed):
        sizes, strides = _bmm_layout(left, right, summed)
    else:
        sizes = [r if l == 1 else l for (l, _), (r, _) in zip(left, right)]
        sides = [meta.strided([s for s, _ in side], x.dtype, [t for _, t in side])
                 for side in (left, right)]
        strides = list(_product_strides(tuple(sizes), sides))
    kept = [d for d, label in enumerate(order) if label in out]
    shape = tuple(sizes[d] for d in kept)
    if out != order[:len(out)] or len(out) == len(order):
        # torch keeps every dim of a contraction it goes on with
        return meta.strided(shape, x.dtype, [strides[d] for d in kept])
    # the last one: torch views the result without the summed dims
    return meta.strided(shape, x.dtype, _view(sizes, strides, shape))


def _aligned(x: Any, term: str, order: str) -> list[tuple[int, int]]:
    """(size, element stride) of ``x`` (labelled ``term``) at each label of ``order``, as
    torch aligns an einsum operand: a missing label is a dim of size 1 and stride 1."""
    own = dict(zip(term, zip(x.shape, meta.element_strides(x))))
    return [own.get(label, (1, 1)) for label in order]


def _bmm_layout(left: list[tuple[int, int]], right: list[tuple[int, int]], summed: list[bool]
                ) -> tuple[list[int], list[int]]:
    """Sizes and strides of torch's ``sumproduct_pair`` result (summed dims kept, of size 1):
    ``bmm`` of the (both, left only, summed) by (both, summed, right only) dims; torch takes
    the right operand as the left one when all its own dims come before the left's."""
    both, alone, rest = _classes(left, right, summed)
    if alone and rest and rest[-1] < alone[0]:
        left, right = right, left
        both, alone, rest = _classes(left, right, summed)
    sums = [d for d, s in enumerate(summed) if s]
    dims = both + alone + sums + rest
    sizes = [left[d][0] for d in both + alone] + [1] * len(sums) + [right[d][0] for d in rest]
    bmm = (math.prod(left[d][0] for d in both), math.prod(left[d][0] for d in alone),
           math.prod(right[d][0] for d in rest))
    viewed = _view(bmm, meta.contiguous_strides(bmm), tuple(sizes))
    at = {d: i for i, d in enumerate(dims)}
    return [sizes[at[d]] for d in range(len(left))], [viewed[at[d]] for d in range(len(left))]


def _classes(left: list[tuple[int, int]], right: list[tuple[int, int]], summed: list[bool]
             ) -> tuple[list[int], list[int], list[int]]:
    """The dims not summed that both operands hold (size != 1), that the left one alone
    holds, and the rest (the right one's, and those of size 1 in both)."""
    both: list[int] = []
    alone: list[int] = []
    rest: list[int] = []
    for d, ((l, _), (r, _)) in enumerate(zip(left, right)):
        if not summed[d]:
            (both if l != 1 and r != 1 else alone if l != 1 else rest).append(d)
    return both, alone, rest


def _trace_meta(x: Any) -> Any:
    return meta.empty((), "int64" if x.dtype.kind in "iub" else x.dtype)


_SELF_OTHER = ("self", "other")
OUTER = register("outer", _outer, _outer_meta, "elementwise", arg_names=("self", "vec2"))
KRON = register("kron", _kron, _kron_meta, "library", arg_names=_SELF_OTHER)
TENSORDOT = register("tensordot", _tensordot, _tensordot_meta, "library", arg_names=_SELF_OTHER)
EINSUM = register("einsum", _einsum, _einsum_meta, "library")
TRACE = register("trace", _trace, _trace_meta, "reduction", arg_names=("self",))


# ----------------------------------------------------------------------------- outer, kron

def outer(input: Tensor, vec2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.outer (alias ger): ``input[i] * vec2[j]`` of two 1-D tensors, with promotion."""
    check_tensors("outer", input=input, vec2=vec2)
    for arg, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {arg}, but got {t.ndim}-D")
    return _promoted(OUTER, input, vec2, out)


ger = outer


def kron(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.kron: the Kronecker product (the lower-rank operand gets leading 1-dims)."""
    check_tensors("kron", input=input, other=other)
    return _promoted(KRON, input, other, out)


def _promoted(op: Any, input: Tensor, other: Tensor, out: Tensor | None) -> Tensor:
    """``op`` on its two operands promoted to their common dtype, as torch's outer and kron."""
    operands, _, _ = promote(op.name, (input, other))
    res = dispatch(op, tuple(operands))
    return res if out is None else write_out(op.name, out, res)


# ----------------------------------------------------------------------------- tensordot

def _dims_list(value: Any) -> list[int]:
    if isinstance(value, Tensor):
        value = value.tolist()
    if isinstance(value, int):
        raise TypeError(f"tensordot(): argument 'dims_self' (position 3) must be tuple of ints, "
                        f"not {type(value).__name__}")
    return [operator.index(v) for v in value]


def _tensordot_dims(a: Tensor, b: Tensor, dims: Any) -> tuple[list[int], list[int]]:
    if isinstance(dims, Tensor):
        dims = dims.item() if dims.ndim == 0 else dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    if not isinstance(dims, (list, tuple)) or len(dims) != 2:
        raise TypeError("tensordot(): argument 'dims' must be int or a pair of lists of ints, "
                        f"not {dims!r}")
    da, db = _dims_list(dims[0]), _dims_list(dims[1])
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    return da, db


def _contract(name: str, a: Tensor, b: Tensor, given_a: list[int], given_b: list[int],
              out: Tensor | None) -> Tensor:
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    dims_a = tuple(wrap_dim(d, a.ndim) for d in given_a)
    dims_b = tuple(wrap_dim(d, b.ndim) for d in given_b)
    for dims in (dims_a, dims_b):
        if len(set(dims)) != len(dims):
            dup = next(d for d in dims if dims.count(d) > 1)
            raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
    sa, sb = a._data.shape, b._data.shape
    for i, (da, db) in enumerate(zip(dims_a, dims_b)):
        if sa[da] != sb[db] and sa[da] != 1 and sb[db] != 1:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa[da]} "
                               f"in dim {given_a[i]} and second has size {sb[db]} in dim "
                               f"{given_b[i]}")
    no_bool("addmm_impl_cpu_", a.dtype, a._data.size * b._data.size)
    common_device(name, a, b)
    for da, db in zip(dims_a, dims_b):
        # a contracted dim of size 1 broadcasts: torch sums the other side over it first
        if sb[db] == 1 and sa[da] != 1:
            a = reduction.sum(a, da, keepdim=True, dtype=a.dtype)
        elif sa[da] == 1 and sb[db] != 1:
            b = reduction.sum(b, db, keepdim=True, dtype=b.dtype)
    res = dispatch(TENSORDOT, (a, b), {"dims_a": dims_a, "dims_b": dims_b})
    if out is None:
        return res
    return write_out_exact(name, out, res, "Expected the output tensor to have dtype {expected}, "
                           "but got an output tensor with dtype {out}")


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Tensor | None = None) -> Tensor:
    """torch.tensordot: contract the last ``dims`` dims of ``a`` with the first of ``b``, or
    the dims listed in ``dims = (dims_a, dims_b)``."""
    check_tensors("tensordot", a=a, b=b)
    dims_a, dims_b = _tensordot_dims(a, b, dims)
    return _contract("tensordot", a, b, dims_a, dims_b, out)


def inner(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.inner: contract the last dims of both (a product when either is 0-d)."""
    check_tensors("inner", input=input, other=other)
    if input.ndim == 0 or other.ndim == 0:
        return mul(input, other, out=out)
    if input._data.shape[-1] != other._data.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(input._data.shape)} and {list(other._data.shape)}")
    return _contract("inner", input, other, [input.ndim - 1], [other.ndim - 1], out)


# ----------------------------------------------------------------------------- einsum

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def einsum(equation: str, *operands: Any) -> Tensor:
    """torch.einsum: sums of products named by subscripts, e.g. ``einsum('ij,jk->ik', a, b)``.

    Operands come as varargs or as one list; ellipses broadcast, as do dims of size 1.
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' must be str, not {type(equation).__name__}")
    for i, t in enumerate(operands):
        check_operand("einsum", f"operands[{i}]", t, numbers=False)
    shapes = [t._data.shape for t in operands]
    terms, out, contracted = _einsum_equation(equation, shapes)
    _einsum_check_sizes(terms, shapes)
    dev = common_device("einsum", *operands)
    ops, labels = [], []
    for t, term in zip(operands, terms):
        x, term = _diagonals(cast(t, t.dtype, dev), term)
        ops.append(x)
        labels.append(term)
    if len(ops) == 1:
        return _reduce_alone(ops[0], labels[0], out + contracted, len(out))
    return _contract_pairs(ops, labels, out, contracted)


def _einsum_equation(equation: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str, str]:
    """Check ``equation`` against the operand shapes, as torch does, and spell it out:
    letters in place of ellipses. Returns each operand's labels, the output's, and the
    labels summed, in the order torch sums them (ellipsis dims first, then by letter)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    arrow_at = eq.find("->")
    for index, ch in enumerate(eq):
        if not (ch.isascii() and ch.isalpha() or ch in ".," or index - arrow_at in (0, 1)):
            raise RuntimeError(f"einsum(): invalid subscript given at index {index} in the "
                               "equation string, subscripts must be in [a-zA-Z]")
    spare = [c for c in _LETTERS if c not in eq]
    ellipsis_rank = 0
    spelled = []
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        head, dots, tail = term.partition("...")
        if "." in head + tail or (dots == "" and "." in term):
            raise RuntimeError(f"einsum(): found '.' for operand {i} for which an ellipsis was "
                               "already found")
        n = len(head) + len(tail)
        if dots and n > len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) is more "
                               f"than the number of dimensions ({len(shape)}) for operand {i}")
        if not dots and n != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) does "
                               f"not match the number of dimensions ({len(shape)}) for operand "
                               f"{i} and no ellipsis was given")
        rank = len(shape) - n if dots else 0
        ellipsis_rank = max(ellipsis_rank, rank)
        spelled.append((head, rank, tail))
    # ellipsis dims align from the right, like broadcasting
    fill = "".join(spare[:ellipsis_rank])
    lhs_terms = [head + fill[ellipsis_rank - rank:] + tail for head, rank, tail in spelled]
    labels = "".join(h + t for h, _, t in spelled)
    if arrow:
        head, dots, tail = rhs.partition("...")
        for ch in head + tail:
            if (head + tail).count(ch) > 1:
                raise RuntimeError(f"einsum(): output subscript {ch} appears more than once in "
                                   "the output")
            if ch not in labels:
                raise RuntimeError(f"einsum(): output subscript {ch} does not appear in the "
                                   "equation for any input operand")
        out = head + (fill if dots else "") + tail
    else:
        out = fill + "".join(sorted(c for c in set(labels) if labels.count(c) == 1))
    summed = "".join(c for c in fill if c not in out) + "".join(sorted(set(labels) - set(out)))
    return lhs_terms, out, summed


def _einsum_check_sizes(terms: list[str], shapes: list[tuple[int, ...]]) -> None:
    """torch's errors for labels whose sizes disagree (size 1 broadcasts)."""
    sizes: dict[str, int] = {}
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        own: dict[str, int] = {}
        for label, size in zip(term, shape):
            if own.setdefault(label, size) != size:
                raise RuntimeError(f"einsum(): subscript {label} is repeated for operand {i} but "
                                   f"the sizes don't match, {own[label]} != {size}")
            seen = sizes.get(label)
            if seen is None or seen == 1:
                sizes[label] = size
            elif size != seen and size != 1:
                raise RuntimeError(f"einsum(): subscript {label} has size {size} for operand {i} "
                                   f"which does not broadcast with previously seen size {seen}")


def _diagonals(x: Tensor, term: str) -> tuple[Tensor, str]:
    """``x`` with the diagonal taken for each repeated label of ``term`` (torch moves it to
    the label's first dim), and its labels."""
    seen = ""
    for label in term:
        first = seen.find(label)
        if first < 0:
            seen += label
        else:
            x = transposing.movedim(strided.diagonal(x, 0, first, len(seen)), -1, first)
    return x, seen


def _reduce_alone(x: Tensor, term: str, order: str, n_out: int) -> Tensor:
    """The einsum of one operand: a view of it in the output's order, or the sum of that view
    over the labels not in the output."""
    x = transposing.permute(x, tuple(term.index(label) for label in order))
    if len(order) == n_out:
        return x
    return reduction.sum(x, tuple(range(n_out, len(order))))


def _size(x: Tensor, term: str, label: str) -> int:
    at = term.find(label)
    return 1 if at < 0 else x._data.shape[at]


def _contract_pairs(ops: list[Tensor], terms: list[str], out: str, contracted: str) -> Tensor:
    """torch's contraction of several operands, left to right: a label to sum is summed in
    the pair that holds its last operand of size != 1 (out of one operand alone first, when
    only one of the pair holds it so)."""
    order = out + contracted
    holders = {c: sum(_size(x, t, c) != 1 for x, t in zip(ops, terms)) for c in contracted}
    acc, acc_term = ops[0], terms[0]
    for x, term in zip(ops[1:], terms[1:]):
        summed, alone_acc, alone_x = "", "", ""
        for c in contracted:
            in_acc, in_x = _size(acc, acc_term, c) != 1, _size(x, term, c) != 1
            if in_acc and in_x:
                holders[c] -= 1
                if holders[c] == 1:
                    summed += c
                    holders[c] = 0
            elif holders[c] == 1 and (in_acc or in_x):
                if in_acc:
                    alone_acc += c
                else:
                    alone_x += c
                holders[c] = 0
        if alone_acc:
            acc, acc_term = _sum_labels(acc, acc_term, alone_acc, order)
        if alone_x:
            x, term = _sum_labels(x, term, alone_x, order)
        keep = "".join(c for c in order if c in out and (c in acc_term or c in term)
                       or holders.get(c) and (_size(acc, acc_term, c) != 1 or
                                              _size(x, term, c) != 1))
        acc = _pair(acc, x, {"equation": f"{acc_term},{term}->{keep}", "order": order},
                    bool(summed))
        acc_term = keep
    return acc


def _sum_labels(x: Tensor, term: str, labels: str, order: str) -> tuple[Tensor, str]:
    """``x`` summed over ``labels`` (kept, of size 1), its dims first put in ``order`` as
    torch aligns them, and its labels."""
    own = "".join(c for c in order if c in term)
    if own != term:
        x = transposing.permute(x, tuple(term.index(c) for c in own))
    return reduction.sum(x, tuple(own.index(c) for c in labels), keepdim=True), own


def _pair(x: Tensor, y: Tensor, params: dict[str, str], contracts: bool) -> Tensor:
    """One einsum of two operands: a product over summed labels (torch's bmm: one dtype),
    else an elementwise product (torch's mul: promoted)."""
    if x.dtype is not y.dtype:
        if contracts:
            raise scalar_type_error(x.dtype, y.dtype)
        dt = _dt.result_type(x, y)
        x, y = cast(x, dt), cast(y, dt)
    if contracts:
        no_bool("bmm", x.dtype, x._data.size * y._data.size)
    return dispatch(EINSUM, (x, y), params)  # type: ignore[no-any-return]


# ----------------------------------------------------------------------------- trace

def trace(input: Tensor) -> Tensor:
    """torch.trace: the sum of a matrix's main diagonal (integers sum in int64)."""
    check_operand("trace", "input", input, numbers=False)
    no_bool("trace", input.dtype)
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return dispatch(TRACE, (input,))  # type: ignore[no-any-return]


FUNCTIONS = ["inner", "outer", "ger", "einsum", "tensordot", "kron", "trace"]
# torch has no Tensor.einsum or Tensor.tensordot
METHODS = {name: globals()[name] for name in FUNCTIONS if name not in ("einsum", "tensordot")}
