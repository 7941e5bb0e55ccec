"""Products of tensors: matmul and its fixed-rank forms, addmm and friends, einsum,
tensordot, kron, cross, trace.

Primitives: ``matmul`` (mm, bmm, mv and dot are checked front doors to it), ``addmm``
(``beta * input + alpha * matmul(m1, m2)``; addmv and baddbmm record it too), ``addbmm``,
``vdot``, ``outer``, ``einsum``, ``tensordot`` (inner records it), ``kron``, ``cross`` and
``trace``. Work runs in BLAS through ``np.dot``/``np.matmul``. float16 and bfloat16 are
computed in float32 and rounded where torch's CPU kernels round: once per product (per batch
for addbmm, per pair for einsum); cross rounds each operation, as torch's kernel does.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..dispatch import register
from ..tensor import Tensor, make, wrap_dim
from .elementwise import mul
from .inplace import inplace
from .operands import as_array, broadcast_shape, record, write_out
from .pointwise import check_operand, common_device_of, promote

_F16, _BF16, _BOOL = _dt.float16, _dt.bfloat16, _dt.bool
_LOW_PRECISION = (np.dtype(np.float16), np.dtype(_BF16.np))
_CTYPE = {"float32": "float", "float64": "double", "float16": "c10::Half",
          "bfloat16": "c10::BFloat16", "complex64": "c10::complex<float>",
          "complex128": "c10::complex<double>", "int64": "long int", "int32": "int",
          "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}
# torch's message when a BLAS-backed op gets an ``out`` of another dtype
_OUT_DTYPE = "Expected out tensor to have dtype {expected}, but got {out} instead"
_DOT_OUT = "result dtype {out} does not match input dtype {expected}"
_PRETTY = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
           "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
           "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _up(*arrays: Any) -> tuple[Any, ...]:
    """float16/bfloat16 operands in float32 (the caller rounds the result once)."""
    if arrays[0].dtype in _LOW_PRECISION:
        return tuple(a.astype(np.float32) for a in arrays)
    return arrays


def _as_array(r: Any, dtype: Any) -> Any:
    # np.dot of two vectors returns a numpy scalar; tensors hold arrays
    if isinstance(r, np.generic):
        r = np.asarray(r)
    return r if r.dtype == dtype else r.astype(dtype)


def _product(x: Any, y: Any) -> Any:
    """matmul of arrays (any ranks >= 1), in their dtype's compute type."""
    if x.ndim > 2 and y.ndim <= 2:
        # folding the batch into rows lets one BLAS call do the work
        r = np.dot(x.reshape(-1, x.shape[-1]), y)
        return r.reshape(x.shape[:-1] + y.shape[1:])
    if x.ndim <= 2 and y.ndim <= 2:
        return np.dot(x, y)
    return np.matmul(x, y)


def _matmul(x: Any, y: Any) -> Any:
    dtype = x.dtype
    x, y = _up(x, y)
    return _as_array(_product(x, y), dtype)


MATMUL = register("matmul", _matmul, None, "library")


def _out(name: str, out: Tensor | None, res: Tensor, message: str = _OUT_DTYPE,
         names: Any = None) -> Tensor:
    """``out=`` of ops whose ``out`` must have the result's dtype (torch's ``message``)."""
    if out is None:
        return res
    if isinstance(out, Tensor) and out.dtype is not res.dtype:
        names = names or _c
        raise RuntimeError(f"{name}: " + message.format(out=names(out.dtype),
                                                        expected=names(res.dtype)))
    return write_out(name, out, res)


def _c(dt: _dt.dtype) -> str:
    return _CTYPE[dt.name]


def _p(dt: _dt.dtype) -> str:
    return _PRETTY[dt.name]


def _no_bool(name: str, dt: _dt.dtype, work: int = 1) -> None:
    """torch has no bool products; like torch, Ember lets them through when there is no
    ``work`` (an empty operand or result)."""
    if dt is _BOOL and work:
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")


def _mat(shape: tuple[int, ...]) -> str:
    return f"{math.prod(shape[:-1])}x{shape[-1]}"


def _matmul_check(x: tuple[int, ...], y: tuple[int, ...], a: _dt.dtype, b: _dt.dtype) -> None:
    """torch's errors for matmul of shapes ``x`` and ``y`` and dtypes ``a``, ``b``."""
    nx, ny = len(x), len(y)
    if nx == 0 or ny == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{nx}D and {ny}D")
    if a is not b:
        if nx == 1 and ny == 1:
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_p(a)} "
                               f"and {_p(b)}")
        if ny <= 2:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_c(a)} != "
                               f"{_c(b)}")
        raise RuntimeError(f"expected scalar type {_p(a)} but found {_p(b)}")
    if nx == 1 and ny == 1:
        if x[0] != y[0]:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{x[0]}] and src "
                               f"[{y[0]}] to have the same number of elements, but got {x[0]} "
                               f"and {y[0]} elements respectively")
        _no_bool("dot", a)
    elif ny == 1:
        if x[-1] != y[0]:
            rows = math.prod(x[:-1])
            raise RuntimeError(f"size mismatch, got input ({rows}), mat ({_mat(x)}), vec ({y[0]})")
        _no_bool("addmv_impl_cpu", a, math.prod(x))
    elif ny == 2:
        if x[-1] != y[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_mat(x)} and "
                               f"{y[0]}x{y[1]})")
        _no_bool("addmm_impl_cpu_", a, math.prod(x) * y[1])
    else:
        batch = broadcast_shape("matmul", x[:-2], y[:-2])
        if x[-1] != y[-2]:
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{math.prod(batch)}, {x[-1]}] but got: [{math.prod(batch)}, "
                               f"{y[-2]}].")
        _no_bool("bmm", a, math.prod(x) * math.prod(y))


def _record_matmul(input: Tensor, other: Tensor, res: Tensor) -> None:
    if input._requires_grad or other._requires_grad:
        record(MATMUL, (input, other), None, res)


def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.matmul: dot for vectors, matrix products otherwise, broadcasting batch dims.

    A 1-D first argument is a row vector and a 1-D second argument a column vector; the
    added dimension is removed from the result.
    """
    if input.__class__ is not Tensor or other.__class__ is not Tensor:
        check_operand("matmul", "input", input, numbers=False)
        check_operand("matmul", "other", other, numbers=False)
    x, y = input._data, other._data
    dt = input.dtype
    if (x.ndim == 2 and y.ndim == 2 and dt is other.dtype and x.shape[1] == y.shape[0]
            and dt.category >= 2 and dt.itemsize >= 4 and input.device is other.device):
        res = make(np.dot(x, y), dt, input.device)
    else:
        _matmul_check(x.shape, y.shape, dt, other.dtype)
        dev = common_device_of("matmul", [input, other])
        res = make(_matmul(as_array(input, dt, dev), as_array(other, dt, dev)), dt, dev)
    _record_matmul(input, other, res)
    return res if out is None else _out("matmul", out, res)


def _matmul_operator(self: Tensor, other: Any) -> Any:
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(self, other)


def _rmatmul_operator(self: Tensor, other: Any) -> Any:
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


def _fixed_rank(name: str, input: Tensor, other: Tensor, out: Tensor | None) -> Tensor:
    """mm/bmm/mv/dot after their own checks: the matmul primitive."""
    dev = common_device_of(name, [input, other])
    dt = input.dtype
    res = make(_matmul(as_array(input, dt, dev), as_array(other, dt, dev)), dt, dev)
    _record_matmul(input, other, res)
    if name == "dot":
        return _out(name, out, res, _DOT_OUT, _p)
    return _out(name, out, res)


def mm(input: Tensor, mat2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.mm: the product of two matrices (no broadcasting)."""
    check_operand("mm", "input", input, numbers=False)
    check_operand("mm", "mat2", mat2, numbers=False)
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return matmul(input, mat2) if out is None else _out("mm", out, matmul(input, mat2))


def _bmm_check(b1: Tensor, b2: Tensor) -> None:
    if b1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _no_bool("bmm", b1.dtype, b1._data.size * b2._data.size)
    if b1.dtype is not b2.dtype:
        raise RuntimeError(f"expected scalar type {_p(b1.dtype)} but found {_p(b2.dtype)}")
    (n, _, k), (n2, k2, _) = b1._data.shape, b2._data.shape
    if n != n2 or k != k2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{n}, {k}] but got: [{n2}, {k2}].")


def bmm(input: Tensor, mat2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.bmm: batched matrix product of (b, n, m) and (b, m, p) tensors."""
    check_operand("bmm", "input", input, numbers=False)
    check_operand("bmm", "mat2", mat2, numbers=False)
    _bmm_check(input, mat2)
    return _fixed_rank("bmm", input, mat2, out)


def _mv_check(mat: Tensor, vec: Tensor, rows: int | None = None) -> None:
    if mat.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {mat.ndim}, {vec.ndim}")
    if mat.dtype is not vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_p(mat.dtype)} and {_p(vec.dtype)}")
    (n, k), (k2,) = mat._data.shape, vec._data.shape
    if k != k2 or (rows is not None and rows not in (1, n)):
        raise RuntimeError(f"size mismatch, got input ({n if rows is None else rows}), mat "
                           f"({n}x{k}), vec ({k2})")
    _no_bool("addmv_impl_cpu", mat.dtype, mat._data.size)


def mv(input: Tensor, vec: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.mv: matrix (n, m) times vector (m,)."""
    check_operand("mv", "input", input, numbers=False)
    check_operand("mv", "vec", vec, numbers=False)
    _mv_check(input, vec)
    return _fixed_rank("mv", input, vec, out)


def _dot_check(input: Tensor, other: Tensor) -> None:
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    _matmul_check(input._data.shape, other._data.shape, input.dtype, other.dtype)


def dot(input: Tensor, tensor: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.dot: the inner product of two 1-D tensors (a 0-d tensor)."""
    check_operand("dot", "input", input, numbers=False)
    check_operand("dot", "tensor", tensor, numbers=False)
    _dot_check(input, tensor)
    return _fixed_rank("dot", input, tensor, out)


def _vdot(x: Any, y: Any) -> Any:
    dtype = x.dtype
    x, y = _up(x, y)
    return _as_array(np.vdot(x, y), dtype)


VDOT = register("vdot", _vdot, None, "library")


def vdot(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.vdot: ``sum(conj(input) * other)`` of two 1-D tensors."""
    check_operand("vdot", "input", input, numbers=False)
    check_operand("vdot", "other", other, numbers=False)
    _dot_check(input, other)
    dev = common_device_of("vdot", [input, other])
    dt = input.dtype
    res = make(_vdot(as_array(input, dt, dev), as_array(other, dt, dev)), dt, dev)
    if input._requires_grad or other._requires_grad:
        record(VDOT, (input, other), None, res)
    return _out("vdot", out, res, _DOT_OUT, _p)


# ----------------------------------------------------------------------------- addmm family

def _addmm(input: Any, m1: Any, m2: Any, *, beta: Any, alpha: Any) -> Any:
    dtype = m1.dtype
    input, m1, m2 = _up(input, m1, m2)
    r = _product(m1, m2)
    if alpha != 1:
        r = r * alpha
    if beta != 0:
        r = r + (input if beta == 1 else input * beta)
    return _as_array(r, dtype)


def _addbmm(input: Any, b1: Any, b2: Any, *, beta: Any, alpha: Any) -> Any:
    n_batch, rows, inner = b1.shape
    if b1.dtype in _LOW_PRECISION and n_batch:
        # torch adds the batches one addmm at a time, rounding to float16/bfloat16 in between
        r = _addmm(input, b1[0], b2[0], beta=beta, alpha=alpha)
        for i in range(1, n_batch):
            r = _addmm(r, b1[i], b2[i], beta=1, alpha=alpha)
        return r
    # the sum over batches of b1[i] @ b2[i] is one product over (batch, inner) jointly
    m1 = b1.transpose(1, 0, 2).reshape(rows, n_batch * inner)
    return _addmm(input, m1, b2.reshape(n_batch * inner, b2.shape[2]), beta=beta, alpha=alpha)


ADDMM = register("addmm", _addmm, None, "library")
ADDBMM = register("addbmm", _addbmm, None, "library")


def _coefficient(op: str, value: Any, dt: _dt.dtype) -> Any:
    """``beta``/``alpha`` as torch uses them: converted to the tensor dtype (ints truncate and
    wrap, complex is an error for real tensors), kept a Python number."""
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, complex) and dt.category < 3:
        if value.imag != 0:
            raise RuntimeError(f"{op}: value cannot be converted to type {_c(dt)} without "
                               "overflow")
        value = value.real
    if dt.category == 1:
        bits = 8 * dt.itemsize
        v = int(value) % (1 << bits)
        return v - (1 << bits) if dt.is_signed and v >= 1 << (bits - 1) else v
    return value


def _expand_check(src: tuple[int, ...], target: tuple[int, ...], dt: _dt.dtype) -> None:
    """``src`` must broadcast to ``target`` without growing (torch's expand errors)."""
    if len(src) > len(target):
        raise RuntimeError(f"expand(torch.{_p(dt)}Tensor{{{list(src)}}}, size={list(target)}): "
                           f"the number of sizes provided ({len(target)}) must be greater or "
                           f"equal to the number of dimensions in the tensor ({len(src)})")
    for i in range(1, len(src) + 1):
        s, t = src[-i], target[-i]
        if s != t and s != 1:
            raise RuntimeError(f"The expanded size of the tensor ({t}) must match the existing "
                               f"size ({s}) at non-singleton dimension {len(target) - i}.  Target "
                               f"sizes: {list(target)}.  Tensor sizes: {list(src)}")


def _add_product(op: Any, name: str, input: Tensor, m1: Tensor, m2: Tensor, target: tuple[int, ...],
                 beta: Any, alpha: Any, out: Tensor | None) -> Tensor:
    """``beta * input + alpha * product`` after the front door checked ``m1`` and ``m2``."""
    dt = m1.dtype
    if input.dtype is not dt:
        raise RuntimeError(f"{name}: self and mat2 must have the same dtype, but got "
                           f"{_p(input.dtype)} and {_p(dt)}")
    _expand_check(input._data.shape, target, dt)
    dev = common_device_of(name, [input, m1, m2])
    params = {"beta": _coefficient(name, beta, dt), "alpha": _coefficient(name, alpha, dt)}
    r = op.forward(as_array(input, dt, dev), as_array(m1, dt, dev), as_array(m2, dt, dev),
                   **params)
    if r.shape != target:  # beta == 0 skips input, whose shape may be the broadcast one
        r = np.broadcast_to(r, target).copy()
    res = make(r, dt, dev)
    if input._requires_grad or m1._requires_grad or m2._requires_grad:
        record(op, (input, m1, m2), params, res)
    return _out(name, out, res)


def _check_tensors(op: str, **operands: Any) -> None:
    for name, value in operands.items():
        check_operand(op, name, value, numbers=False)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1,
          out: Tensor | None = None) -> Tensor:
    """torch.addmm: ``beta * input + alpha * (mat1 @ mat2)``; input broadcasts to the result.

    With ``beta=0`` input is ignored (its NaNs do not propagate).
    """
    _check_tensors("addmm", input=input, mat1=mat1, mat2=mat2)
    for arg, t in (("mat1", mat1), ("mat2", mat2)):
        if t.ndim != 2:
            raise RuntimeError(f"{arg} must be a matrix, got {t.ndim}-D tensor")
    _matmul_check(mat1._data.shape, mat2._data.shape, mat1.dtype, mat2.dtype)
    target = (mat1._data.shape[0], mat2._data.shape[1])
    return _add_product(ADDMM, "addmm", input, mat1, mat2, target, beta, alpha, out)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1,
          out: Tensor | None = None) -> Tensor:
    """torch.addmv: ``beta * input + alpha * (mat @ vec)``."""
    _check_tensors("addmv", input=input, mat=mat, vec=vec)
    rows = input._data.shape[0] if input.ndim == 1 else None
    if input.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    _mv_check(mat, vec, rows)
    if input.dtype is not mat.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_p(input.dtype)}, {_p(mat.dtype)}, and {_p(vec.dtype)}")
    return _add_product(ADDMM, "addmv", input, mat, vec, (mat._data.shape[0],), beta, alpha,
                        out)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1,
            out: Tensor | None = None) -> Tensor:
    """torch.baddbmm: ``beta * input + alpha * bmm(batch1, batch2)``."""
    _check_tensors("baddbmm", input=input, batch1=batch1, batch2=batch2)
    _bmm_check(batch1, batch2)
    (n, rows, _), cols = batch1._data.shape, batch2._data.shape[2]
    return _add_product(ADDMM, "baddbmm", input, batch1, batch2, (n, rows, cols), beta, alpha,
                        out)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1,
           out: Tensor | None = None) -> Tensor:
    """torch.addbmm: ``beta * input + alpha * sum_i(batch1[i] @ batch2[i])``."""
    _check_tensors("addbmm", input=input, batch1=batch1, batch2=batch2)
    if batch1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    (n, rows, k), (n2, k2, cols) = batch1._data.shape, batch2._data.shape
    if n != n2:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {n} and {n2}")
    if k != k2:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({rows}x{k} and {k2}x{cols})")
    if batch1.dtype is not batch2.dtype:
        raise RuntimeError(f"expected scalar type {_p(batch1.dtype)} but found "
                           f"{_p(batch2.dtype)}")
    _no_bool("addmm_impl_cpu_", batch1.dtype, rows * cols * k * n)
    return _add_product(ADDBMM, "addbmm", input, batch1, batch2, (rows, cols), beta, alpha, out)


# ----------------------------------------------------------------------------- outer, kron

def _outer(x: Any, y: Any) -> Any:
    return np.multiply.outer(x, y)


def _kron(x: Any, y: Any) -> Any:
    return np.kron(x, y)


OUTER = register("outer", _outer, None, "elementwise")
KRON = register("kron", _kron, None, "library")


def outer(input: Tensor, vec2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.outer (alias ger): ``input[i] * vec2[j]`` of two 1-D tensors, with promotion."""
    _check_tensors("outer", input=input, vec2=vec2)
    for arg, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {arg}, but got {t.ndim}-D")
    return _promoted(OUTER, "outer", input, vec2, out)


ger = outer


def kron(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.kron: the Kronecker product (the lower-rank operand gets leading 1-dims)."""
    _check_tensors("kron", input=input, other=other)
    return _promoted(KRON, "kron", input, other, out)


def _promoted(op: Any, name: str, input: Tensor, other: Tensor, out: Tensor | None) -> Tensor:
    (x, y), dt, dev, rg = promote(name, (input, other))
    res = make(_as_array(op.forward(x, y), dt.np), dt, dev)
    if rg:
        record(op, (input, other), None, res)
    return res if out is None else write_out(name, out, res)


# ----------------------------------------------------------------------------- tensordot, inner

def _tensordot(x: Any, y: Any, *, dims_a: tuple[int, ...], dims_b: tuple[int, ...]) -> Any:
    dtype = x.dtype
    x, y = _up(x, y)
    for da, db in zip(dims_a, dims_b):
        # a contracted dim of size 1 broadcasts: the other side sums over it first
        if x.shape[da] != y.shape[db]:
            if y.shape[db] == 1:
                x = x.sum(axis=da, keepdims=True)
            else:
                y = y.sum(axis=db, keepdims=True)
    return _as_array(np.tensordot(x, y, axes=(list(dims_a), list(dims_b))), dtype)


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
    _no_bool("addmm_impl_cpu_", a.dtype, a._data.size * b._data.size)
    dev = common_device_of(name, [a, b])
    params = {"dims_a": dims_a, "dims_b": dims_b}
    res = make(_tensordot(as_array(a, a.dtype, dev), as_array(b, a.dtype, dev), **params),
               a.dtype, dev)
    if a._requires_grad or b._requires_grad:
        record(TENSORDOT, (a, b), params, res)
    return _out(name, out, res, "Expected the output tensor to have dtype {expected}, but got an "
                "output tensor with dtype {out}", _p)


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Tensor | None = None) -> Tensor:
    """torch.tensordot: contract the last ``dims`` dims of ``a`` with the first of ``b``, or
    the dims listed in ``dims = (dims_a, dims_b)``."""
    _check_tensors("tensordot", a=a, b=b)
    dims_a, dims_b = _tensordot_dims(a, b, dims)
    return _contract("tensordot", a, b, dims_a, dims_b, out)


def inner(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.inner: contract the last dims of both (a product when either is 0-d)."""
    _check_tensors("inner", input=input, other=other)
    if input.ndim == 0 or other.ndim == 0:
        return mul(input, other, out=out)
    if input._data.shape[-1] != other._data.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(input._data.shape)} and {list(other._data.shape)}")
    return _contract("inner", input, other, [input.ndim - 1], [other.ndim - 1], out)


# ----------------------------------------------------------------------------- einsum

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
        x, y = _up(acc, arrays[i])
        big = x.size > 4096 or y.size > 4096
        acc = _as_array(np.einsum(f"{acc_term},{terms[i]}->{keep}", x, y, optimize=big),
                        result_dtype)
        acc_term = keep
    if acc_term != out or len(arrays) == 1:
        (x,) = _up(acc)
        acc = _as_array(np.einsum(f"{acc_term}->{out}", x), result_dtype)
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
            raise RuntimeError(f"expected scalar type {_p(dt)} but found {_p(t.dtype)}")
    shapes = [t._data.shape for t in operands]
    _einsum_check_sizes(eq, shapes)
    lhs, rhs = eq.split("->")
    if _contracts_across(lhs.split(","), rhs, shapes):
        _no_bool("bmm", dt, math.prod(math.prod(s) for s in shapes))
    dev = common_device_of("einsum", list(operands))
    r = _einsum(*[as_array(t, dt, dev) for t in operands], equation=eq)
    res = make(r, _dt.from_numpy_dtype(r.dtype), dev)
    if any(t._requires_grad for t in operands):
        record(EINSUM, operands, {"equation": eq}, res)
    return res


# ----------------------------------------------------------------------------- cross, trace

def _cross(x: Any, y: Any, *, dim: int) -> Any:
    # in the tensor's own dtype: torch rounds each product of float16/bfloat16 there too
    return _as_array(np.cross(x, y, axis=dim), x.dtype)


def _trace(x: Any) -> Any:
    acc = np.int64 if x.dtype.kind in "iub" else np.float32 if x.dtype in _LOW_PRECISION else None
    r = np.trace(x, dtype=acc)
    return _as_array(r, np.int64 if x.dtype.kind in "iub" else x.dtype)


CROSS = register("cross", _cross, None, "library")
TRACE = register("trace", _trace, None, "reduction")


def cross(input: Tensor, other: Tensor, dim: int | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """torch.cross: the 3-vector cross product along ``dim`` (default: the first dim of input
    with size 3); same-rank inputs broadcast."""
    _check_tensors("cross", input=input, other=other)
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {_p(input.dtype)} but found {_p(other.dtype)}")
    sa, sb = input._data.shape, other._data.shape
    shape = broadcast_shape("cross", sa, sb)
    if dim is None:
        dim = next((i for i, s in enumerate(sa) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    dim = wrap_dim(dim, len(shape))
    if sa[dim] != 3 or sb[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{sa[dim]} and {sb[dim]}")
    _no_bool("cross", input.dtype)
    dev = common_device_of("cross", [input, other])
    dt = input.dtype
    res = make(_cross(as_array(input, dt, dev), as_array(other, dt, dev), dim=dim), dt, dev)
    if input._requires_grad or other._requires_grad:
        record(CROSS, (input, other), {"dim": dim}, res)
    return _out("cross", out, res)


def trace(input: Tensor) -> Tensor:
    """torch.trace: the sum of a matrix's main diagonal (integers sum in int64)."""
    check_operand("trace", "input", input, numbers=False)
    _no_bool("trace", input.dtype)
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    r = _trace(input._data)
    res = make(r, _dt.from_numpy_dtype(r.dtype), input.device)
    if input._requires_grad:
        record(TRACE, (input,), None, res)
    return res


# ----------------------------------------------------------------------------- exports

FUNCTIONS = [
    "matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv",
    "addbmm", "baddbmm", "einsum", "tensordot", "kron", "cross", "trace",
]


def _methods() -> dict[str, Any]:
    g = globals()
    methods: dict[str, Any] = {n: g[n] for n in FUNCTIONS if n not in ("einsum", "tensordot")}
    for n in ("addmm", "addmv", "addbmm", "baddbmm"):
        methods[n + "_"] = inplace(g[n], n + "_")
    methods["__matmul__"] = _matmul_operator
    methods["__rmatmul__"] = _rmatmul_operator
    return methods


METHODS = _methods()
