"""Dim permutations: ``permute``, ``transpose``, ``t``, ``movedim``, ``T``, ``mT``, ``H``...

All are views with the dims reordered (``make_view`` over the input's storage); only
``H``, ``mH`` and ``adjoint`` of complex tensors copy, to conjugate.

Primitives and the ``params`` they record:

    permute         dims (the permutation; transpose, t, mT and movedim record this)
    conj_physical   none (the conjugation in ``H``, ``mH`` and ``adjoint`` of complex tensors)
"""

from __future__ import annotations

import operator
import warnings
from functools import partial
from typing import Any, NoReturn

import numpy as np

from ..dispatch import register
from ..tensor import Tensor, make, make_view, wrap_dim
from .geometry import int_tuple
from .operands import record
from .shape import metadata_inplace

PERMUTE = register("permute", lambda x, dims: x.transpose(dims), None, "view")
CONJ_PHYSICAL = register("conj_physical", np.conjugate, None, "elementwise")


def permute(input: Tensor, *dims_args: Any, dims: Any = None) -> Tensor:
    """torch.permute(input, dims): a view with the dims reordered."""
    if dims is None:
        if not dims_args:
            raise TypeError('permute() missing 1 required positional arguments: "dims"')
        dims = dims_args[0] if len(dims_args) == 1 and not isinstance(dims_args[0], int) \
            else dims_args
    data = input._data
    n = data.ndim
    try:
        arr = data.transpose(dims)
    except (ValueError, TypeError, IndexError):
        _permute_error(dims, n)
    out = make_view(input, arr)
    if input._requires_grad:
        record(PERMUTE, (input,), {"dims": tuple(operator.index(d) % n for d in dims)}, out)
    return out


def _permute_error(dims: Any, n: int) -> NoReturn:
    dims = int_tuple((dims,), "permute", "dims")
    if len(dims) != n:
        raise RuntimeError(f"permute(): number of dims don't match in permute: input.dim() = {n} "
                           f"is not equal to len(dims) = {len(dims)}")
    for d in dims:
        wrap_dim(d, n, "permute")
    raise RuntimeError(f"permute(): duplicate dims are not allowed (got {list(dims)})")


def _swap(input: Tensor, d0: int, d1: int) -> Tensor:
    """transpose of already-wrapped dims, recorded as a permutation."""
    data = input._data
    out = make_view(input, data.swapaxes(d0, d1) if data.ndim else data)
    if input._requires_grad:
        perm = list(range(data.ndim))
        if perm:
            perm[d0], perm[d1] = d1, d0
        record(PERMUTE, (input,), {"dims": tuple(perm)}, out)
    return out


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """torch.transpose: a view with ``dim0`` and ``dim1`` swapped."""
    n = input._data.ndim
    return _swap(input, wrap_dim(dim0, n, "transpose"), wrap_dim(dim1, n, "transpose"))


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """torch.swapaxes: alias of ``transpose``."""
    return transpose(input, axis0, axis1)


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """torch.swapdims: alias of ``transpose``."""
    return transpose(input, dim0, dim1)


def t(input: Tensor) -> Tensor:
    """torch.t: transpose of a tensor with at most 2 dims (0-D and 1-D come back as views)."""
    n = input._data.ndim
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return _swap(input, 0, n - 1 if n else 0)


def _T(self: Tensor) -> Tensor:
    n = self._data.ndim
    if n == 2:
        return _swap(self, 0, 1)
    if n == 0:
        warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity in "
                      "these cases.", UserWarning, stacklevel=2)
    else:
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their "
                      "shape is deprecated and it will throw an error in a future release. "
                      "Consider `x.mT` to transpose batches of matrices or "
                      "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions "
                      "of a tensor.", UserWarning, stacklevel=2)
    return permute(self, tuple(range(n - 1, -1, -1)))


def _matrix_transpose(name: str, conjugate: bool, self: Tensor) -> Tensor:
    """Tensor.mT (Tensor.mH with ``conjugate``): the last two dims swapped."""
    n = self._data.ndim
    if n == 0:
        return _deprecated_0d(self, name)
    if n < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. "
                           f"Got {n}-D tensor.")
    swapped = _swap(self, n - 2, n - 1)
    return _conj(swapped) if conjugate else swapped


def _conj(x: Tensor) -> Tensor:
    # torch sets a lazy conjugate bit on a view; NumPy has none, so complex tensors are
    # conjugated now, into a copy.
    if x.dtype.category != 3:
        return x
    out = make(np.conjugate(x._data), x.dtype, x.device)
    if x._requires_grad:
        record(CONJ_PHYSICAL, (x,), None, out)
    return out


def _deprecated_0d(self: Tensor, name: str) -> Tensor:
    warnings.warn(f"Tensor.{name} is deprecated on 0-D tensors. This function is the identity in "
                  "these cases.", UserWarning, stacklevel=3)
    return _conj(self)


def _H(self: Tensor) -> Tensor:
    n = self._data.ndim
    if n == 0:
        return _deprecated_0d(self, "H")
    if n != 2:
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{n}-D tensor." + (" For batches of matrices, consider using "
                                               "tensor.mH" if n > 2 else ""))
    return _conj(_swap(self, 0, 1))


def adjoint(input: Tensor) -> Tensor:
    """torch.adjoint: conjugate transpose of the last two dims."""
    n = input._data.ndim
    if n == 0:
        return _conj(input)
    if n < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {n}-D tensor.")
    return _conj(_swap(input, n - 2, n - 1))


def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    """torch.movedim: move dims ``source`` to positions ``destination``; a view."""
    n = input._data.ndim
    src = [wrap_dim(d, n, "movedim") for d in int_tuple((source,), "movedim", "source")]
    dst = [wrap_dim(d, n, "movedim") for d in int_tuple((destination,), "movedim", "destination")]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(src)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(dst)})")
    if n == 0:
        return permute(input, ())
    order = [-1] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    perm = tuple(o if o >= 0 else next(rest) for o in order)
    return permute(input, perm)


moveaxis = movedim


FUNCTIONS: list[str] = [
    "permute", "transpose", "swapaxes", "swapdims", "t", "adjoint", "movedim", "moveaxis",
]

METHODS: dict[str, Any] = {
    "permute": permute, "transpose": transpose, "swapaxes": swapaxes, "swapdims": swapdims,
    "t": t, "adjoint": adjoint, "movedim": movedim, "moveaxis": movedim,
    "T": property(_T), "H": property(_H),
    # partial, not a wrapper function: the 0-d deprecation warning points at the caller
    "mT": property(partial(_matrix_transpose, "mT", False)),
    "mH": property(partial(_matrix_transpose, "mH", True)),
    "t_": metadata_inplace(t, "t_"),
    "transpose_": metadata_inplace(transpose, "transpose_"),
    "swapaxes_": metadata_inplace(transpose, "swapaxes_"),
    "swapdims_": metadata_inplace(transpose, "swapdims_"),
}
