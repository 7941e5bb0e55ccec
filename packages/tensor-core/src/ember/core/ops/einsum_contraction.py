"""einsum, as torch computes it.

Primitive ``einsum`` (``x``, ``y``; params ``equation``, spelled out: ``"ij,jk->ik"``, and
``order``, every label of the whole einsum in torch's order: the output's, then the summed
ones): one pairwise contraction of torch's einsum; labels not in the output are summed,
size-1 dims broadcast. ``order`` is how torch aligns the operands, which decides the layout
of its result. The public einsum runs torch's algorithm around it: diagonals for repeated
labels, a label held by one operand alone summed out of it first, then the operands
contracted left to right one pair at a time (so that each node keeps what torch's do); an
einsum of one operand is a view or a sum.

Work runs in BLAS through the array module; float16 and bfloat16 are computed in float32
and rounded once per product, as torch's CPU kernels do. The meta rule lays results out as
the ``mul`` and ``bmm`` torch computes them with, and the views around them.
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes as _dt
from .. import meta
from ..device import xp_of
from ..dispatch import dispatch, register
from ..tensor import Tensor
from . import reduction, strided, transposing
from .contraction import product_strides, viewed_strides
from .conversion import cast
from .operands import check_operand, common_device, upcast
from .products import no_bool, result_array, scalar_type_error


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




# ----------------------------------------------------------------------------- meta rule

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
        strides = list(product_strides(tuple(sizes), sides))
    kept = [d for d, label in enumerate(order) if label in out]
    shape = tuple(sizes[d] for d in kept)
    if out != order[:len(out)] or len(out) == len(order):
        # torch keeps every dim of a contraction it goes on with
        return meta.strided(shape, x.dtype, [strides[d] for d in kept])
    # the last one: torch views the result without the summed dims
    return meta.strided(shape, x.dtype, viewed_strides(sizes, strides, shape))


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
    viewed = viewed_strides(bmm, meta.contiguous_strides(bmm), tuple(sizes))
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


EINSUM = register("einsum", _einsum, _einsum_meta, "library")


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
    if contracts:
        # torch's bmm: bool is refused before dtypes are compared, and neither is checked
        # when an operand is empty (the result has the second one's dtype)
        no_bool("bmm", x.dtype, x._data.size * y._data.size)
        if x.dtype is not y.dtype:
            if x._data.size and y._data.size:
                raise scalar_type_error(x.dtype, y.dtype)
            x = cast(x, y.dtype)
    elif x.dtype is not y.dtype:
        # torch's operands all have every label's dim (size 1 where missing): none is 0-d,
        # so a 0-d operand here promotes as a dimensioned one (int64 with int8 is int64)
        dt = _dt.promote_types(x.dtype, y.dtype)
        x, y = cast(x, dt), cast(y, dt)
    return dispatch(EINSUM, (x, y), params)  # type: ignore[no-any-return]


FUNCTIONS = ["einsum"]
METHODS: dict[str, Any] = {}
