"""The arguments every reduction shares: ``dim`` and ``keepdim`` resolved as torch resolves
them, the dtypes reductions accumulate in, ``out=`` and named results, and the meta rule
of a reduction. Used by ``reduction``, ``minmax``, ``norms`` and ``scan``."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import xp_of
from ..tensor import Tensor, wrap_dim
from .copying import write_out
from .operands import check_operand, not_implemented

NP_F32 = np.dtype(np.float32)
NP_I64 = np.dtype(np.int64)
HALF = {_dt.float16.np, _dt.bfloat16.np}
# Typed Any: numpy's stubs cannot follow reductions whose keepdims is a runtime bool.
add_reduce: Any = np.add.reduce
Dims = tuple[int, ...] | None
SELF = ("self",)
_tuple_new = tuple.__new__

def dim_index(op: str, d: Any) -> int:
    try:
        return operator.index(d)
    except TypeError:
        raise TypeError(f"{op}(): argument 'dim' must be int or tuple of ints, not "
                        f"{type(d).__name__}") from None


def reduced_dims(op: str, dim: Any, ndim: int, empty_is_all: bool = True) -> Dims:
    """``dim`` (None, an int or a sequence) as a tuple of unique non-negative dims, or None
    for all dims (also for a 0-d input, which has nothing to reduce)."""
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        if not dim and empty_is_all:
            return None
        dims = tuple(wrap_dim(dim_index(op, d), ndim, op) for d in dim)
        for i, d in enumerate(dims):
            if d in dims[:i]:
                raise RuntimeError(f"{op}(): dim {d} appears multiple times in the list of dims")
    else:
        dims = (wrap_dim(dim_index(op, dim), ndim, op),)
    return None if ndim == 0 else dims


def one_dim(op: str, dim: Any, ndim: int) -> int:
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
    return wrap_dim(dim_index(op, dim), ndim, op)


def count_of(shape: tuple[int, ...], dims: Dims) -> int:
    if dims is None:
        return math.prod(shape)
    return math.prod(shape[d] for d in dims)


def row_major(r: Any) -> Any:
    """``r`` row-major (numpy lays reductions of a transposed input out transposed)."""
    return r if r.flags.c_contiguous else xp_of(r).ascontiguousarray(r)


def real_dtype(np_dtype: np.dtype) -> np.dtype:
    return np_dtype if np_dtype.kind != "c" else np.dtype(np_dtype.char.lower())


def check_input(op: str, input: Any) -> None:
    check_operand(op, "input", input, numbers=False)


def check_not_complex(kernel: str, input: Tensor) -> None:
    """Where torch has no complex kernel it raises NotImplementedError naming the kernel."""
    if input.dtype.category == 3:
        raise not_implemented(kernel, input.dtype)


def keepdim_of(keepdim: Any, ndim: int) -> bool:
    """A 0-d input reduces to 0-d whatever ``keepdim`` says, as in torch."""
    return bool(keepdim) and ndim > 0


def named(kind: Any, name: str, results: Sequence[Tensor], out: Any) -> Any:
    """``results`` as the torch.return_types tuple ``kind``, written into ``out`` first
    when it is given (a tuple of as many tensors)."""
    if out is not None:
        if not isinstance(out, (tuple, list)) or len(out) != len(results):
            raise TypeError(f"{name}(): argument 'out' must be tuple of {len(results)} Tensors")
        results = [write_out(name, o, r) for o, r in zip(out, results)]
    return _tuple_new(kind, tuple(results))


def with_out(res: Tensor, name: str, out: Tensor | None) -> Tensor:
    return res if out is None else write_out(name, out, res)


def reduction_rule(result: str, real: bool = False) -> Callable[..., meta.MetaArray]:
    """``meta.reduction(result)``; ``real``: complex inputs give their real dtype."""
    base = meta.reduction(result)
    if not real:
        return base

    def real_rule(x: Any, dim: Any = None, keepdim: bool = False, **params: Any
                  ) -> meta.MetaArray:
        out = base(x, dim, keepdim)
        return meta.empty(out.shape, real_dtype(out.dtype))

    return real_rule


def target_dtypes(x: Any, dtype: _dt.dtype | None, integers_widen: bool
                  ) -> tuple[Any, np.dtype, Any]:
    """(input cast as torch casts it, result numpy dtype, accumulation dtype)."""
    target = x.dtype
    if dtype is not None:
        target = dtype.np
        if x.dtype != target:
            x = x.astype(target)
    elif integers_widen and target.kind in "biu":
        target = NP_I64
    return x, target, (NP_F32 if target in HALF else target)


REAL_RULE = reduction_rule("same", True)
