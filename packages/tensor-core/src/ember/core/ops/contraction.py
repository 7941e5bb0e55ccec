"""Tensor products and contractions: outer (ger), kron, tensordot, inner and trace (einsum
is in ``einsum_contraction``).

Primitives:

- ``outer`` (``x``, ``y``) and ``kron`` (``x``, ``y``): operands promoted to their common
  dtype first, as torch's composites of ``mul`` promote them;
- ``tensordot`` (``x``, ``y``; params ``dims_a``, ``dims_b``, non-negative): contracted
  dims of equal sizes (the wrapper first sums a contracted dim of size 1 out of the other
  operand, as torch does); inner dispatches it too;
- ``trace`` (``x``): integers and bool sum in int64.

Work runs in BLAS through the array module; float16 and bfloat16 are computed in float32
and rounded once per product, as torch's CPU kernels do. The meta rules lay results out as
torch does: outer and kron follow the views and the ``mul`` torch computes them with.
"""

from __future__ import annotations

import math
import operator
from typing import Any

from .. import dtypes as _dt
from .. import meta
from ..dispatch import dispatch, register
from ..tensor import Tensor, wrap_dim
from . import reduction
from .binary import mul
from .conversion import cast
from .copying import write_out, write_out_exact
from .geometry import view_strides
from .operands import (
    LOW_PRECISION,
    check_operand,
    common_device,
    not_implemented,
    upcast,
)
from .products import blas_product, check_tensors, no_bool, result_array

_BOOL = _dt.bool


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
    # numpy's tensordot without its ``dot``: the contracted dims moved together and
    # flattened, one matrix product (``blas_product``: nan * 0 stays nan over one element)
    dtype = x.dtype
    x, y = upcast(x, y)
    kept_a = [d for d in range(x.ndim) if d not in dims_a]
    kept_b = [d for d in range(y.ndim) if d not in dims_b]
    rows, cols = [x.shape[d] for d in kept_a], [y.shape[d] for d in kept_b]
    inner = math.prod(x.shape[d] for d in dims_a)
    a = x.transpose(kept_a + list(dims_a)).reshape(math.prod(rows), inner)
    b = y.transpose(list(dims_b) + kept_b).reshape(inner, math.prod(cols))
    return result_array(blas_product(a, b).reshape(rows + cols), dtype)


def _trace(x: Any) -> Any:
    integral = x.dtype.kind in "iub"
    acc = "int64" if integral else "float32" if x.dtype in LOW_PRECISION else None
    return result_array(x.trace(dtype=acc), "int64" if integral else x.dtype)


# ----------------------------------------------------------------------------- meta rules

def product_strides(shape: tuple[int, ...], operands: list[Any]) -> tuple[int, ...]:
    """The strides torch's ``mul`` of ``operands`` gives its result: TensorIterator's layout,
    row-major (size-0 dims counting as 1) where its dim order is the natural one."""
    strides = tuple(meta.elementwise_strides(shape, operands))
    natural = tuple(math.prod(shape[d + 1:]) for d in range(len(shape)))
    return meta.contiguous_strides(shape) if strides == natural else strides


def viewed_strides(shape: Any, strides: Any, new_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The element strides torch's ``view`` in ``new_shape`` gives a tensor of ``shape`` and
    element ``strides``; row-major where no view can (torch raises there)."""
    viewed = view_strides(tuple(shape), tuple(strides), new_shape, 1)
    return meta.contiguous_strides(new_shape) if viewed is None else viewed


def _viewed(x: Any, shape: tuple[int, ...]) -> Any:
    """A meta array like torch's view of ``x`` in ``shape``."""
    return meta.strided(shape, x.dtype, viewed_strides(x.shape, meta.element_strides(x), shape))


def _outer_meta(x: Any, y: Any) -> Any:
    # torch's outer is ``x.reshape(n, 1) * y``, laid out as that product is
    shape = (x.shape[0], y.shape[0])
    column = _viewed(x, (x.shape[0], 1))
    return meta.strided(shape, x.dtype, product_strides(shape, [column, y]))


def _kron_strides(x: Any, y: Any) -> tuple[int, ...]:
    """The element strides of torch's kron of arrays ``x`` and ``y``: its product of their
    views (``_kron_shapes``) laid out as ``mul`` lays it out, viewed in the result's shape.
    torch's RuntimeError where no view can (an operand transposed, say)."""
    a, b, shape = _kron_shapes(x.shape, y.shape)
    product = meta.broadcast_shapes(a, b)
    strides = product_strides(product, [_viewed(x, a), _viewed(y, b)])
    viewed = view_strides(product, strides, shape, 1)
    if viewed is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride "
                           "(at least one dimension spans across two contiguous subspaces). "
                           "Use .reshape(...) instead.")
    return viewed


def _kron_meta(x: Any, y: Any) -> Any:
    return meta.strided(_kron_shapes(x.shape, y.shape)[2], x.dtype, _kron_strides(x, y))


def _tensordot_meta(x: Any, y: Any, *, dims_a: tuple[int, ...], dims_b: tuple[int, ...]
                    ) -> Any:
    shape = tuple(n for d, n in enumerate(x.shape) if d not in dims_a) + \
        tuple(n for d, n in enumerate(y.shape) if d not in dims_b)
    return meta.empty(shape, x.dtype)


def _trace_meta(x: Any) -> Any:
    return meta.empty((), "int64" if x.dtype.kind in "iub" else x.dtype)


_SELF_OTHER = ("self", "other")
OUTER = register("outer", _outer, _outer_meta, "elementwise", arg_names=("self", "vec2"))
KRON = register("kron", _kron, _kron_meta, "library", arg_names=_SELF_OTHER)
TENSORDOT = register("tensordot", _tensordot, _tensordot_meta, "library", arg_names=_SELF_OTHER)
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
    _kron_strides(input._data, other._data)  # torch's view of the product may fail
    return _promoted(KRON, input, other, out)


def _promoted(op: Any, input: Tensor, other: Tensor, out: Tensor | None) -> Tensor:
    """``op`` on its two operands in their promoted dtype: torch's outer and kron multiply
    views of them with dims added, so neither is a 0-d operand that promotes weakly (two
    0-d tensors promote the same either way)."""
    dt = _dt.promote_types(input.dtype, other.dtype)
    dev = common_device(op.name, input, other)
    res = dispatch(op, (cast(input, dt, dev), cast(other, dt, dev)))
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
    common_device(name, a, b)
    for da, db in zip(dims_a, dims_b):
        # a contracted dim of size 1 broadcasts: torch sums the other side over it first
        if sb[db] == 1 and sa[da] != 1:
            a = reduction.sum(a, da, keepdim=True, dtype=a.dtype)
        elif sa[da] == 1 and sb[db] != 1:
            b = reduction.sum(b, db, keepdim=True, dtype=b.dtype)
    if a.dtype is _BOOL:
        _check_bool_contraction(a._data, b._data, dims_a, dims_b)
    res = dispatch(TENSORDOT, (a, b), {"dims_a": dims_a, "dims_b": dims_b})
    if out is None:
        return res
    return write_out_exact(name, out, res, "Expected the output tensor to have dtype {expected}, "
                           "but got an output tensor with dtype {out}")


def _check_bool_contraction(a: Any, b: Any, dims_a: tuple[int, ...], dims_b: tuple[int, ...]
                            ) -> None:
    """torch's refusals of a bool contraction, by the kernel its tensordot picks: one to a
    single element (every dim kept of size 1) is a ``dot`` of the operands with their
    contracted dims moved together where both are then contiguous (refused, even empty),
    else a sum of their product (which bool has); any other is a matrix product, refused
    where it has work."""
    kept_a = [d for d in range(a.ndim) if d not in dims_a]
    kept_b = [d for d in range(b.ndim) if d not in dims_b]
    if math.prod(a.shape[d] for d in kept_a) == 1 and math.prod(b.shape[d] for d in kept_b) == 1:
        if a.transpose(kept_a + list(dims_a)).flags.c_contiguous and \
                b.transpose(list(dims_b) + kept_b).flags.c_contiguous:
            raise not_implemented("dot", _BOOL)
        return
    no_bool("addmm_impl_cpu_", _BOOL, a.size * b.size)


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


# ----------------------------------------------------------------------------- trace

def trace(input: Tensor) -> Tensor:
    """torch.trace: the sum of a matrix's main diagonal (integers sum in int64)."""
    check_operand("trace", "input", input, numbers=False)
    no_bool("trace", input.dtype)
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return dispatch(TRACE, (input,))  # type: ignore[no-any-return]


FUNCTIONS = ["inner", "outer", "ger", "tensordot", "kron", "trace"]
# torch has no Tensor.einsum or Tensor.tensordot
METHODS = {name: globals()[name] for name in FUNCTIONS if name != "tensordot"}
