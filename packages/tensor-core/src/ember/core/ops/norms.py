"""Norms: ``norm`` (vector p-norms, Frobenius and nuclear), ``dist``, and the vector norm
that ``linalg.vector_norm`` can share.

Installed through ``reduction.py``, whose helpers these build on.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import xp_of
from ..dispatch import dispatch, register
from ..dtypes import scalar_type_name
from ..tensor import Tensor, wrap_dim
from .binary import check_bool_sub
from .conversion import cast
from .operands import _LinAlgError, broadcast_shape, device_mismatch
from .reduction_args import (
    HALF,
    NP_F32,
    REAL_RULE,
    SELF,
    Dims,
    add_reduce,
    check_input,
    dim_index,
    keepdim_of,
    real_dtype,
    reduced_dims,
    row_major,
    with_out,
)


def _norm_forward(x: Any, dim: Dims = None, keepdim: bool = False, p: float = 2.0) -> Any:
    w = x.astype(NP_F32) if x.dtype in HALF else x
    a = np.abs(w) if w.dtype.kind == "c" or p != 2.0 else w
    if p == 2.0:
        r = np.sqrt(add_reduce(a * a, dim, None, None, keepdim))
    elif p == 1.0:
        r = add_reduce(a, dim, None, None, keepdim)
    elif p == math.inf:
        r = a.max(axis=dim, keepdims=keepdim)
    elif p == -math.inf:
        r = a.min(axis=dim, keepdims=keepdim)
    elif p == 0.0:
        r = add_reduce(a != 0, dim, a.dtype, None, keepdim)
    else:
        with np.errstate(divide="ignore", over="ignore"):  # 0 ** -p is inf, as torch has it
            r = add_reduce(a ** p, dim, None, None, keepdim) ** (1.0 / p)
    return row_major(r.astype(real_dtype(x.dtype), copy=False))


def _nuclear_norm_forward(x: Any, dim: tuple[int, int], keepdim: bool = False) -> Any:
    xp = xp_of(x)
    w = x.astype(NP_F32) if x.dtype in HALF else x
    try:
        r = xp.linalg.svd(xp.moveaxis(w, dim, (-2, -1)), compute_uv=False).sum(-1)
    except np.linalg.LinAlgError:  # (LAPACK fails on the inputs torch's LAPACK fails on)
        raise _LinAlgError("linalg.svd: The algorithm failed to converge because the input "
                           "matrix contained non-finite values.") from None
    if keepdim:
        r = xp.expand_dims(r, tuple(sorted(dim)))
    return row_major(r.astype(real_dtype(x.dtype), copy=False))


def _nuclear_norm_rule(x: Any, dim: tuple[int, int], keepdim: bool = False) -> Any:
    """torch sums the singular values of the input with ``dim`` moved last, then (keepdim)
    unsqueezes and permutes back: the kept dims are strided as that view is."""
    batch = [i for i in range(x.ndim) if i not in dim]
    shape = [x.shape[i] for i in batch]
    dt = real_dtype(x.dtype)
    if not keepdim:
        return meta.empty(shape, dt)
    moved_strides = (*meta.contiguous_strides((*shape, 1)), 1)
    out_shape, out_strides = [1] * x.ndim, [1] * x.ndim
    for k, i in enumerate((*batch, *dim)):
        out_shape[i] = (*shape, 1, 1)[k]
        out_strides[i] = moved_strides[k]
    return meta.strided(out_shape, dt, out_strides)


NORM = register("norm", _norm_forward, REAL_RULE, "reduction", arg_names=SELF)


def _dist_forward(x: Any, y: Any, *, p: float) -> Any:
    return _norm_forward(x - y, p=p)  # torch's dist: the norm of the difference


def _dist_rule(x: Any, y: Any, *, p: float) -> Any:
    return meta.empty((), real_dtype(x.dtype))


DIST = register("dist", _dist_forward, _dist_rule, "reduction", arg_names=("self", "other"))
NUCLEAR_NORM = register("nuclear_norm", _nuclear_norm_forward, _nuclear_norm_rule, "library",
                        arg_names=SELF)


def _norm_input(op: str, input: Tensor, dtype: Any) -> Tensor:
    """Refuse integer inputs; cast to ``dtype`` (torch allows no narrowing)."""
    check_input(op, input)
    if input.dtype.category < 2:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(input.dtype)}")
    if dtype is None:
        return input
    dt = _dt.to_dtype(dtype)
    if dt.category < 2:
        raise RuntimeError(f"{op}: dtype should be floating point or complex, but got "
                           f"{scalar_type_name(dt)}")
    if _dt.promote_types(input.dtype, dt) is not dt:
        raise RuntimeError(f"{op}: the dtype of the input ({scalar_type_name(input.dtype)}) "
                           f"should be convertible without narrowing to the specified dtype "
                           f"({scalar_type_name(dt)})")
    return cast(input, dt)


def vector_norm(input: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None, out: Tensor | None = None) -> Tensor:
    """torch.linalg.vector_norm: ``sum(|x|^ord)^(1/ord)`` over ``dim`` (all by default);
    ord may be inf, -inf or 0 (the count of non-zeros)."""
    input = _norm_input("linalg.vector_norm", input, dtype)
    p = float(ord)
    dims = reduced_dims("linalg.vector_norm", dim, input._data.ndim)
    if (p < 0 or p == math.inf) and input._data.size == 0:  # no identity
        what = f"{p:g}"
        if dims is None:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {what} norm on an empty "
                               "tensor because the operation does not have an identity")
        for d in dims:
            if input._data.shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {what} norm on the "
                                   f"dimension {d}because this dimension is empty and the "
                                   "operation does not have an identity")
    params = {"dim": dims, "keepdim": keepdim_of(keepdim, input._data.ndim), "p": p}
    return with_out(dispatch(NORM, (input,), params), "linalg.vector_norm", out)


def _nuclear_norm(input: Tensor, dim: tuple[Any, ...], keepdim: bool, dtype: Any,
                  out: Tensor | None) -> Tensor:
    input = _norm_input("linalg.matrix_norm", input, dtype)
    if input._data.dtype in HALF:
        raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got "
                           f"{scalar_type_name(input.dtype)}")
    ndim = input._data.ndim
    if ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dim)}")
    d0, d1 = (wrap_dim(dim_index("linalg.matrix_norm", d), ndim, "linalg.matrix_norm")
              for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    params = {"dim": (d0, d1), "keepdim": bool(keepdim)}
    return with_out(dispatch(NUCLEAR_NORM, (input,), params), "linalg.matrix_norm", out)


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         out: Tensor | None = None, dtype: Any = None) -> Tensor:
    """torch.norm: a vector p-norm over ``dim`` (all dims by default), the Frobenius norm
    ('fro', the same as p=2) or the nuclear norm ('nuc', over two dims)."""
    if not isinstance(p, str):
        return vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype, out=out)
    dims = None if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    if p == "fro" and (dims is None or len(dims) <= 2):
        return vector_norm(input, 2.0, dim, keepdim, dtype=dtype, out=out)
    if p not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    # 'fro' gets here only with more than two dims, which the matrix norm refuses
    return _nuclear_norm(input, tuple(range(input._data.ndim)) if dims is None else dims,
                         keepdim, dtype, out)


def dist(input: Tensor, other: Tensor, p: Any = 2) -> Tensor:
    """torch.dist: the p-norm of ``input - other`` (broadcast)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"dist(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    check_input("dist", input)
    check_bool_sub(input, other)  # torch's dist is the norm of ``input - other``
    dt = _dt.result_type(input, other)
    if dt.category < 2:
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {scalar_type_name(dt)} instead.")
    if input.device is not other.device:
        raise device_mismatch("dist", input.device, other.device)
    shape = broadcast_shape("dist", input._data.shape, other._data.shape)
    p = float(p)
    if (p < 0 or p == math.inf) and 0 in shape:  # torch's norm of the difference: no identity
        raise RuntimeError(f"linalg.vector_norm cannot compute the {p:g} norm on an empty "
                           "tensor because the operation does not have an identity")
    return dispatch(DIST, (cast(input, dt), cast(other, dt)),  # type: ignore[no-any-return]
                    {"p": p})

FUNCTIONS = ["norm", "dist"]
METHODS: dict[str, Callable[..., Any]] = {name: globals()[name] for name in FUNCTIONS}
