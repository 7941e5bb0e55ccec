"""Tensor products and contractions: outer (ger), kron, tensordot, inner, einsum and trace.

Each is one primitive (inner records tensordot). Work runs in BLAS through numpy;
float16 and bfloat16 are computed in float32 and rounded once per product (per pair of
operands for einsum), as torch's CPU kernels do.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..dispatch import Op, register
from ..tensor import Tensor, make, wrap_dim
from .binary import mul
from .linalg import check_tensors, no_bool, result_array, scalar_type_error
from .operands import (
    LOW_PRECISION,
    as_array,
    check_operand,
    common_device,
    promote,
    record,
    upcast,
    wrap,
    write_out_exact,
)


def _outer(x: Any, y: Any) -> Any:
    return np.multiply.outer(x, y)


def _kron(x: Any, y: Any) -> Any:
    return np.kron(x, y)


OUTER = register("outer", _outer, None, "elementwise")
KRON = register("kron", _kron, None, "library")


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


def _promoted(op: Op, input: Tensor, other: Tensor, out: Tensor | None) -> Tensor:
    """``op`` on its two operands promoted to their common dtype, as torch's outer and kron."""
    (x, y), dt, dev, rg = promote(op.name, (input, other))
    return wrap(op, op.forward(x, y), dt, dev, (input, other), None, rg, out)


def _tensordot(x: Any, y: Any, *, dims_a: tuple[int, ...], dims_b: tuple[int, ...]) -> Any:
    dtype = x.dtype
    x, y = upcast(x, y)
    for da, db in zip(dims_a, dims_b):
        # a contracted dim of size 1 broadcasts: the other side sums over it first
        if x.shape[da] != y.shape[db]:
            if y.shape[db] == 1:
                x = x.sum(axis=da, keepdims=True)
            else:
                y = y.sum(axis=db, keepdims=True)
    return result_array(np.tensordot(x, y, axes=(list(dims_a), list(dims_b))), dtype)


TENSORDOT = register("tensordot", _tensordot, None, "library")


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
    dev = common_device(name, a, b)
    params = {"dims_a": dims_a, "dims_b": dims_b}
    res = make(_tensordot(as_array(a, a.dtype, dev), as_array(b, a.dtype, dev), **params),
               a.dtype, dev)
    if a._requires_grad or b._requires_grad:
        record(TENSORDOT, (a, b), params, res)
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


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _einsum(*operands: Any, equation: str) -> Any:
    lhs, out = equation.split("->")
    terms = lhs.split(",")
    dtype = operands[0].dtype
    # integers summed within one operand accumulate in int64, as torch's sum does
    wide = dtype.kind in "biu" and _sums_alone(terms, out, [a.shape for a in operands])
    result_dtype = np.dtype(np.int64) if wide else dtype
    arrays = _einsum_expand(terms, list(operands))
    if wide:
        arrays = [a.astype(np.int64) for a in arrays]
    # left to right, one pair at a time, rounding in between as torch's bmm chain does
    acc_term, acc = terms[0], arrays[0]
    for i in range(1, len(arrays)):
        later = "".join(terms[i + 1:]) + out
        keep = "".join(c for c in dict.fromkeys(acc_term + terms[i]) if c in later)
        x, y = upcast(acc, arrays[i])
        big = x.size > 4096 or y.size > 4096
        acc = result_array(np.einsum(f"{acc_term},{terms[i]}->{keep}", x, y, optimize=big),
                        result_dtype)
        acc_term = keep
    if acc_term != out or len(arrays) == 1:
        (x,) = upcast(acc)
        acc = result_array(np.einsum(f"{acc_term}->{out}", x), result_dtype)
    return acc


EINSUM = register("einsum", _einsum, None, "library")


def _sums_alone(terms: list[str], out: str, shapes: list[tuple[int, ...]]) -> bool:
    """Whether torch sums a label out of one operand by itself (a label not in the output that
    only one operand holds, or holds with a size other than 1): that sum promotes integers."""
    for label in set("".join(terms)) - set(out):
        holders = [dict(zip(t, s))[label] for t, s in zip(terms, shapes) if label in t]
        if len(holders) == 1 or sum(size != 1 for size in holders) == 1:
            return True
    return False


def _contracts_across(terms: list[str], out: str, shapes: list[tuple[int, ...]]) -> bool:
    """Whether a label is summed over two or more operands (a product, run by bmm in torch)."""
    return any(sum(dict(zip(t, s)).get(label, 1) != 1 for t, s in zip(terms, shapes)) > 1
               for label in set("".join(terms)) - set(out))


def _einsum_expand(terms: list[str], arrays: list[Any]) -> list[Any]:
    """Expand the size-1 dims that broadcast against another operand's (numpy won't)."""
    sizes: dict[str, int] = {}
    for term, arr in zip(terms, arrays):
        for label, size in zip(term, arr.shape):
            if sizes.get(label, 1) == 1:
                sizes[label] = size
    out = []
    for term, arr in zip(terms, arrays):
        target = tuple(sizes[label] for label in term)
        out.append(arr if target == arr.shape else np.broadcast_to(arr, target))
    return out


def _einsum_equation(equation: str, shapes: list[tuple[int, ...]]) -> str:
    """Check ``equation`` against the operand shapes, as torch does, and spell it out in
    full: an explicit output, and letters in place of ellipses."""
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
    fill = spare[:ellipsis_rank]
    lhs_terms = [head + "".join(fill[ellipsis_rank - rank:]) + tail for head, rank, tail in spelled]
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
        out = head + ("".join(fill) if dots else "") + tail
    else:
        out = "".join(fill) + "".join(sorted(c for c in set(labels) if labels.count(c) == 1))
    return ",".join(lhs_terms) + "->" + out


def _einsum_check_sizes(equation: str, shapes: list[tuple[int, ...]]) -> None:
    """torch's errors for labels whose sizes disagree (size 1 broadcasts)."""
    terms = equation.split("->")[0].split(",")
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
    eq = _einsum_equation(equation, [t._data.shape for t in operands])
    dt = operands[0].dtype
    for t in operands[1:]:
        if t.dtype is not dt:
            raise scalar_type_error(dt, t.dtype)
    shapes = [t._data.shape for t in operands]
    _einsum_check_sizes(eq, shapes)
    lhs, rhs = eq.split("->")
    if _contracts_across(lhs.split(","), rhs, shapes):
        no_bool("bmm", dt, math.prod(math.prod(s) for s in shapes))
    dev = common_device("einsum", *operands)
    r = _einsum(*[as_array(t, dt, dev) for t in operands], equation=eq)
    res = make(r, _dt.from_numpy_dtype(r.dtype), dev)
    if any(t._requires_grad for t in operands):
        record(EINSUM, operands, {"equation": eq}, res)
    return res


def _trace(x: Any) -> Any:
    acc = np.int64 if x.dtype.kind in "iub" else np.float32 if x.dtype in LOW_PRECISION else None
    r = np.trace(x, dtype=acc)
    return result_array(r, np.int64 if x.dtype.kind in "iub" else x.dtype)


TRACE = register("trace", _trace, None, "reduction")


def trace(input: Tensor) -> Tensor:
    """torch.trace: the sum of a matrix's main diagonal (integers sum in int64)."""
    check_operand("trace", "input", input, numbers=False)
    no_bool("trace", input.dtype)
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    r = _trace(input._data)
    res = make(r, _dt.from_numpy_dtype(r.dtype), input.device)
    if input._requires_grad:
        record(TRACE, (input,), None, res)
    return res


FUNCTIONS = ["inner", "outer", "ger", "einsum", "tensordot", "kron", "trace"]
# torch has no Tensor.einsum or Tensor.tensordot
METHODS = {name: globals()[name] for name in FUNCTIONS if name not in ("einsum", "tensordot")}
