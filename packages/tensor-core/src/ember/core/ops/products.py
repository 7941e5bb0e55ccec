"""Matrix products: matmul and its fixed-rank forms (mm, bmm, mv, dot), vdot, addmm and
friends, and cross. Tensor products and contractions (outer, kron, tensordot, inner, einsum,
trace) are in contraction.py.

Primitives (operands of one dtype on one device: torch promotes none of these):

- ``matmul`` (``x``, ``y``): torch.matmul of any ranks >= 1, batch dims broadcast. mm, bmm,
  mv and dot are checked front doors to it; autograd names its node after the form torch
  decomposes the call into (MmBackward0, BmmBackward0, MvBackward0, DotBackward0);
- ``addmm`` (``input``, ``m1``, ``m2``; params ``beta``, ``alpha``): ``beta * input +
  alpha * matmul(m1, m2)``, ``input`` broadcast to the product (``beta == 0`` ignores it);
  addmv and baddbmm dispatch it too;
- ``addbmm`` (the same): ``beta * input + alpha * sum_i(m1[i] @ m2[i])``;
- ``vdot`` (``x``, ``y``) and ``cross`` (``x``, ``y``; param ``dim``, non-negative).

Work runs in BLAS through the arrays' ``dot``/``@``. float16 and bfloat16 are computed in
float32 and rounded where torch's CPU kernels round: once per product (per batch for
addbmm); cross rounds each operation, as torch's kernel does. Every result is row-major, as
torch's meta tensors say.
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
from ..dtypes import demangled_type_name, scalar_type_name
from ..function_modes import checks_itself, engaged, handle, overriding, spec_of
from ..tensor import Tensor, wrap_dim
from .conversion import cast
from .copying import write_out_exact
from .inplace import inplace
from .operands import (
    LOW_PRECISION,
    broadcast_shape,
    check_operand,
    common_device,
    not_implemented,
    overflow_error,
    upcast,
)

_BOOL = _dt.bool
_HALVES = frozenset(LOW_PRECISION)  # a set: quicker to ask on the hot path than a tuple
# torch's message when a BLAS-backed op gets an ``out`` of another dtype
_OUT_DTYPE = "Expected out tensor to have dtype {expected}, but got {out} instead"
_DOT_OUT = "result dtype {out} does not match input dtype {expected}"


def result_array(r: Any, dtype: Any) -> Any:
    """A product's result as an array of numpy ``dtype`` (numpy's product of two vectors is
    a numpy scalar; tensors hold arrays)."""
    if isinstance(r, np.generic):
        r = np.asarray(r)
    return r if r.dtype == dtype else r.astype(dtype)


# ----------------------------------------------------------------------------- kernels

def blas_product(x: Any, y: Any) -> Any:
    """``x.dot(y)`` of arrays of ranks 1 or 2: one BLAS call, quicker than ``@`` on small
    matrices; over an inner dim of length 1 numpy's matmul instead, as OpenBLAS's
    matrix-vector product skips a zero entry of its vector there (0 * nan would give 0,
    not torch's nan)."""
    return x.dot(y) if x.shape[-1] != 1 else x @ y


def _product(x: Any, y: Any) -> Any:
    """matmul of arrays (any ranks >= 1) in their dtype (an array, also for two vectors)."""
    nx, ny = x.ndim, y.ndim
    if nx <= 2 and ny <= 2:
        r = blas_product(x, y)
        # numpy's product of two vectors is a numpy scalar; tensors hold arrays
        return np.asarray(r) if nx + ny == 2 and isinstance(r, np.generic) else r
    if ny <= 2:
        # folding the batch into rows lets one BLAS call do the work
        rows = math.prod(x.shape[:-1])
        return blas_product(x.reshape(rows, x.shape[-1]), y).reshape(x.shape[:-1] + y.shape[1:])
    return x @ y


def _matmul(x: Any, y: Any) -> Any:
    dtype = x.dtype
    if dtype in _HALVES:
        # computed in float32 and rounded once, as torch's CPU kernels do
        return _product(x.astype(np.float32), y.astype(np.float32)).astype(dtype)
    if x.ndim == 2 and y.ndim == 2 and x.shape[1] != 1:
        return x.dot(y)  # the hot path, without a further call
    return _product(x, y)


def _addmm(input: Any, m1: Any, m2: Any, *, beta: Any, alpha: Any) -> Any:
    dtype = m1.dtype
    input, m1, m2 = upcast(input, m1, m2)
    r = _product(m1, m2)
    # a new (n, p) float array, which input broadcasts to, is scaled and added into in place
    # (numbers may promote an integer or bool product: a new array for those)
    into = r if r.dtype.kind in "fc" else None
    if alpha != 1:
        r = np.multiply(r, alpha, out=into)
    if beta != 0:
        r = np.add(r, input if beta == 1 else input * beta, out=into)
    return result_array(r, dtype)


def _addbmm(input: Any, b1: Any, b2: Any, *, beta: Any, alpha: Any) -> Any:
    n_batch, rows, inner = b1.shape
    if b1.dtype in LOW_PRECISION and n_batch:
        # torch adds the batches one addmm at a time, rounding to float16/bfloat16 in between
        r = _addmm(input, b1[0], b2[0], beta=beta, alpha=alpha)
        for i in range(1, n_batch):
            r = _addmm(r, b1[i], b2[i], beta=1, alpha=alpha)
        return r
    # the sum over batches of b1[i] @ b2[i] is one product over (batch, inner) jointly
    m1 = b1.transpose(1, 0, 2).reshape(rows, n_batch * inner)
    return _addmm(input, m1, b2.reshape(n_batch * inner, b2.shape[2]), beta=beta, alpha=alpha)


def _vdot(x: Any, y: Any) -> Any:
    dtype = x.dtype
    x, y = upcast(x, y)
    return result_array(xp_of(x).vdot(x, y), dtype)


def _cross(x: Any, y: Any, *, dim: int) -> Any:
    # in the tensor's own dtype: torch rounds each product of float16/bfloat16 there too
    return result_array(xp_of(x).cross(x, y, axis=dim), x.dtype)


# ----------------------------------------------------------------------------- meta rules

def _product_shape(x: tuple[int, ...], y: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of ``matmul`` of shapes ``x`` and ``y`` (ranks >= 1, checked)."""
    if len(y) == 1:
        return x[:-1]
    if len(x) == 1:
        return y[:-2] + y[-1:]
    return meta.broadcast_shapes(x[:-2], y[:-2]) + (x[-2], y[-1])


def _matmul_meta(x: Any, y: Any) -> Any:
    return meta.empty(_product_shape(x.shape, y.shape), x.dtype)


def _addmm_meta(input: Any, m1: Any, m2: Any, **params: Any) -> Any:
    return meta.empty(_product_shape(m1.shape, m2.shape), m1.dtype)


def _addbmm_meta(input: Any, b1: Any, b2: Any, **params: Any) -> Any:
    return meta.empty((b1.shape[1], b2.shape[2]), b1.dtype)


def _vdot_meta(x: Any, y: Any) -> Any:
    return meta.empty((), x.dtype)


def _cross_meta(x: Any, y: Any, *, dim: int) -> Any:
    return meta.empty(meta.broadcast_shapes(x.shape, y.shape), x.dtype)


MATMUL = register("matmul", _matmul, _matmul_meta, "library", arg_names=("self", "other"))
ADDMM = register("addmm", _addmm, _addmm_meta, "library", arg_names=("self", "mat1", "mat2"))
ADDBMM = register("addbmm", _addbmm, _addbmm_meta, "library",
                  arg_names=("self", "batch1", "batch2"))
VDOT = register("vdot", _vdot, _vdot_meta, "library", arg_names=("self", "other"))
CROSS = register("cross", _cross, _cross_meta, "library", arg_names=("self", "other"))


# ----------------------------------------------------------------------------- checks

def _out(name: str, out: Tensor | None, res: Tensor, message: str = _OUT_DTYPE,
         names: Callable[[_dt.dtype], str] = demangled_type_name) -> Tensor:
    """``out=`` of ops whose ``out`` must have the result's dtype (torch's ``message``)."""
    return res if out is None else write_out_exact(name, out, res, message, names)


def no_bool(name: str, dt: _dt.dtype, work: int = 1) -> None:
    """torch has no bool products; like torch, Ember lets them through when there is no
    ``work`` (an empty operand or result)."""
    if dt is _BOOL and work:
        raise not_implemented(name, dt)


def scalar_type_error(expected: _dt.dtype, found: _dt.dtype) -> RuntimeError:
    """torch's error for an operand whose dtype differs from the first operand's."""
    return RuntimeError(f"expected scalar type {scalar_type_name(expected)} but found "
                        f"{scalar_type_name(found)}")


def check_tensors(op: str, **operands: Any) -> None:
    """TypeError, in torch's words, for any of ``operands`` (by argument name) not a Tensor."""
    for name, value in operands.items():
        check_operand(op, name, value, numbers=False)


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
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                               f"{scalar_type_name(a)} and {scalar_type_name(b)}")
        if ny <= 2:
            raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                               f"{demangled_type_name(a)} != {demangled_type_name(b)}")
        if math.prod(x) and math.prod(y):
            no_bool("bmm", a)  # refused before the dtypes are compared
            raise scalar_type_error(a, b)
        # torch's bmm: an empty operand has nothing to compute, and no dtype is checked
    if nx == 1 and ny == 1:
        if x[0] != y[0]:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{x[0]}] and src "
                               f"[{y[0]}] to have the same number of elements, but got {x[0]} "
                               f"and {y[0]} elements respectively")
        no_bool("dot", a)
    elif ny == 1:
        if x[-1] != y[0]:
            rows = math.prod(x[:-1])
            raise RuntimeError(f"size mismatch, got input ({rows}), mat ({_mat(x)}), vec ({y[0]})")
        no_bool("addmv_impl_cpu", a, math.prod(x))
    elif ny == 2:
        if x[-1] != y[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_mat(x)} and "
                               f"{y[0]}x{y[1]})")
        no_bool("addmm_impl_cpu_", a, math.prod(x) * y[1])
    else:
        batch = broadcast_shape("matmul", x[:-2], y[:-2])
        if x[-1] != y[-2]:
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{math.prod(batch)}, {x[-1]}] but got: [{math.prod(batch)}, "
                               f"{y[-2]}].")
        no_bool("bmm", a, math.prod(x) * math.prod(y))


# ----------------------------------------------------------------------------- matmul

# ``@`` checks for __torch_function__ overrides itself, to keep the hot path of tiny products
# free of the generic wrapper's call; torch.matmul runs through it
@checks_itself
def _matmul_operator(self: Tensor, other: Any) -> Any:
    """``self @ other``: torch.matmul of two tensors; NotImplemented for anything else (so
    that Python asks the other operand)."""
    if engaged.count and overriding():
        return handle(_matmul_operator, _OPERATOR_SPEC, (self, other), {})
    if not isinstance(other, Tensor):
        return NotImplemented
    x, y = self._data, other._data
    dt = self.dtype
    # two matrices that fit, of one non-bool dtype on one device, have nothing to refuse
    if not (x.ndim == 2 and y.ndim == 2 and dt is other.dtype and x.shape[1] == y.shape[0]
            and dt is not _BOOL and self.device is other.device):
        _matmul_check(x.shape, y.shape, dt, other.dtype)
        common_device("matmul", self, other)
        if dt is not other.dtype:  # an empty batched product: in mat2's dtype, as torch's
            self = cast(self, other.dtype)
    return MATMUL.door((self, other), None)


_OPERATOR_SPEC = spec_of(_matmul_operator)


def _rmatmul_operator(self: Tensor, other: Any) -> Any:
    if not isinstance(other, Tensor):
        return NotImplemented
    return _matmul_operator(other, self)


def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.matmul: dot for vectors, matrix products otherwise, broadcasting batch dims.

    A 1-D first argument is a row vector and a 1-D second argument a column vector; the
    added dimension is removed from the result.
    """
    check_operand("matmul", "input", input, numbers=False)
    check_operand("matmul", "other", other, numbers=False)
    res = _matmul_operator(input, other)
    return res if out is None else _out("matmul", out, res)


def _fixed_rank(name: str, input: Tensor, other: Tensor, out: Tensor | None) -> Tensor:
    """bmm/mv/dot after their own checks: the matmul primitive."""
    common_device(name, input, other)
    res = dispatch(MATMUL, (input, other))
    if name == "dot":
        return _out(name, out, res, _DOT_OUT, scalar_type_name)
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
    (n, _, k), (n2, k2, _) = b1._data.shape, b2._data.shape
    if n != n2 or k != k2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{n}, {k}] but got: [{n2}, {k2}].")
    # torch returns at once when an operand is empty (an empty result, or zeros): no dtype
    # is checked then, and the result has batch2's dtype
    no_bool("bmm", b1.dtype, b1._data.size * b2._data.size)
    if b1.dtype is not b2.dtype and b1._data.size and b2._data.size:
        raise scalar_type_error(b1.dtype, b2.dtype)


def bmm(input: Tensor, mat2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.bmm: batched matrix product of (b, n, m) and (b, m, p) tensors."""
    check_operand("bmm", "input", input, numbers=False)
    check_operand("bmm", "mat2", mat2, numbers=False)
    _bmm_check(input, mat2)
    if input.dtype is not mat2.dtype:
        input = cast(input, mat2.dtype)
    return _fixed_rank("bmm", input, mat2, out)


def _mv_check(mat: Tensor, vec: Tensor, rows: int | None = None) -> None:
    if mat.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {mat.ndim}, {vec.ndim}")
    if mat.dtype is not vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{scalar_type_name(mat.dtype)} and {scalar_type_name(vec.dtype)}")
    (n, k), (k2,) = mat._data.shape, vec._data.shape
    if k != k2 or (rows is not None and rows not in (1, n)):
        raise RuntimeError(f"size mismatch, got input ({n if rows is None else rows}), mat "
                           f"({n}x{k}), vec ({k2})")
    no_bool("addmv_impl_cpu", mat.dtype, mat._data.size)


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


def vdot(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.vdot: ``sum(conj(input) * other)`` of two 1-D tensors."""
    check_operand("vdot", "input", input, numbers=False)
    check_operand("vdot", "other", other, numbers=False)
    _dot_check(input, other)
    common_device("vdot", input, other)
    return _out("vdot", out, dispatch(VDOT, (input, other)), _DOT_OUT, scalar_type_name)


# ----------------------------------------------------------------------------- addmm family

def _coefficient(op: str, value: Any, dt: _dt.dtype) -> Any:
    """``beta``/``alpha`` as torch uses them: converted to the tensor dtype (ints truncate and
    wrap, complex is an error for real tensors), kept a Python number."""
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, complex) and dt.category < 3:
        if value.imag != 0:
            # torch converts the coefficient to the kernel's accumulation type: float for halves
            acc = _dt.float32 if dt.np in LOW_PRECISION else dt
            raise RuntimeError(f"{op}: {overflow_error(acc)}")
        value = value.real
    if dt.category == 1:
        bits = 8 * dt.itemsize
        v = int(value) % (1 << bits)
        return v - (1 << bits) if dt.is_signed and v >= 1 << (bits - 1) else v
    return value


def _expand_check(src: tuple[int, ...], target: tuple[int, ...], dt: _dt.dtype) -> None:
    """``src`` must broadcast to ``target`` without growing (torch's expand errors)."""
    if len(src) > len(target):
        raise RuntimeError(f"expand(torch.{scalar_type_name(dt)}Tensor{{{list(src)}}}, "
                           f"size={list(target)}): the number of sizes provided ({len(target)}) "
                           f"must be greater or equal to the number of dimensions in the tensor "
                           f"({len(src)})")
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
                           f"{scalar_type_name(input.dtype)} and {scalar_type_name(dt)}")
    _expand_check(input._data.shape, target, dt)
    dev = common_device(name, input, m1, m2)
    no_products = ((m1._data.shape[-1] == 0 and math.prod(target) > 0)
                   or (name == "addbmm" and m1._data.shape[0] == 0))
    if (no_products and name != "addmv" and beta.__class__ is float and beta != 0
            and input.dtype.category < 2):
        # an empty inner dim under a non-empty result, or addbmm's empty batch: torch scales a
        # copy of input by beta in place, and an integer tensor refuses a float factor
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{scalar_type_name(input.dtype)}")
    params = {"beta": _coefficient(name, beta, dt), "alpha": _coefficient(name, alpha, dt)}
    # a 0-d CPU input joins a CUDA product as torch lets it
    return _out(name, out, dispatch(op, (cast(input, dt, dev), m1, m2), params))


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1,
          out: Tensor | None = None) -> Tensor:
    """torch.addmm: ``beta * input + alpha * (mat1 @ mat2)``; input broadcasts to the result.

    With ``beta=0`` input is ignored (its NaNs do not propagate).
    """
    check_tensors("addmm", input=input, mat1=mat1, mat2=mat2)
    for arg, t in (("mat1", mat1), ("mat2", mat2)):
        if t.ndim != 2:
            raise RuntimeError(f"{arg} must be a matrix, got {t.ndim}-D tensor")
    _matmul_check(mat1._data.shape, mat2._data.shape, mat1.dtype, mat2.dtype)
    target = (mat1._data.shape[0], mat2._data.shape[1])
    return _add_product(ADDMM, "addmm", input, mat1, mat2, target, beta, alpha, out)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1,
          out: Tensor | None = None) -> Tensor:
    """torch.addmv: ``beta * input + alpha * (mat @ vec)``."""
    check_tensors("addmv", input=input, mat=mat, vec=vec)
    rows = input._data.shape[0] if input.ndim == 1 else None
    if input.ndim > 1 or mat.ndim == 0:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    _mv_check(mat, vec, rows)
    if input.dtype is not mat.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{scalar_type_name(input.dtype)}, {scalar_type_name(mat.dtype)}, and "
                           f"{scalar_type_name(vec.dtype)}")
    return _add_product(ADDMM, "addmv", input, mat, vec, (mat._data.shape[0],), beta, alpha,
                        out)


def _sizes_read(batch1: Tensor, dims1: tuple[int, ...], batch2: Tensor, dim2: int) -> None:
    """torch's baddbmm/addbmm read these sizes before checking ranks: a tensor without
    them is its IndexError, as ``Tensor.size(dim)`` gives it."""
    for t, d in [(batch1, d) for d in dims1] + [(batch2, dim2)]:
        if t.ndim == 0:
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        wrap_dim(d, t.ndim)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1,
            out: Tensor | None = None) -> Tensor:
    """torch.baddbmm: ``beta * input + alpha * bmm(batch1, batch2)``."""
    check_tensors("baddbmm", input=input, batch1=batch1, batch2=batch2)
    _sizes_read(batch1, (0, 1), batch2, 2)
    _bmm_check(batch1, batch2)
    (n, rows, _), cols = batch1._data.shape, batch2._data.shape[2]
    return _add_product(ADDMM, "baddbmm", input, batch1, batch2, (n, rows, cols), beta, alpha,
                        out)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1,
           out: Tensor | None = None) -> Tensor:
    """torch.addbmm: ``beta * input + alpha * sum_i(batch1[i] @ batch2[i])``."""
    check_tensors("addbmm", input=input, batch1=batch1, batch2=batch2)
    _sizes_read(batch1, (1,), batch2, 2)
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
        raise scalar_type_error(batch1.dtype, batch2.dtype)
    no_bool("addmm_impl_cpu_", batch1.dtype, rows * cols * k * n)
    return _add_product(ADDBMM, "addbmm", input, batch1, batch2, (rows, cols), beta, alpha, out)


# ----------------------------------------------------------------------------- cross

def cross(input: Tensor, other: Tensor, dim: int | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """torch.cross: the 3-vector cross product along ``dim`` (default: the first dim of input
    with size 3); same-rank inputs broadcast."""
    check_tensors("cross", input=input, other=other)
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input.dtype is not other.dtype:
        raise scalar_type_error(input.dtype, other.dtype)
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
    no_bool("cross", input.dtype)
    common_device("cross", input, other)
    return _out("cross", out, dispatch(CROSS, (input, other), {"dim": dim}))


FUNCTIONS = [
    "matmul", "mm", "bmm", "mv", "dot", "vdot", "addmm", "addmv", "addbmm", "baddbmm", "cross",
]


def _methods() -> dict[str, Any]:
    g = globals()
    methods: dict[str, Any] = {n: g[n] for n in FUNCTIONS}
    for n in ("addmm", "addmv", "addbmm", "baddbmm"):
        methods[n + "_"] = inplace(g[n], n + "_")
    methods["__matmul__"] = _matmul_operator
    methods["__rmatmul__"] = _rmatmul_operator
    return methods


METHODS = _methods()
