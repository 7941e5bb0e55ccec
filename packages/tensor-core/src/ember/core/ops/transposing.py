"""Dim permutations: ``permute``, ``transpose``, ``t``, ``movedim``, ``T``, ``mT``, ``H``...

All are views with the dims reordered; only ``H``, ``mH`` and ``adjoint`` of complex
tensors copy, to conjugate.

Primitives (operand ``self``) and their params:

    permute         dims (the permutation; transpose, mT and movedim dispatch it too)
    t               dims: ``t``'s own (torch's aten::t, whose node is TBackward0)
    permute_        dims: the in-place form (``t_``, ``transpose_``...), see shape.py
    conj_physical   none (the conjugation in ``H``, ``mH`` and ``adjoint`` of complex tensors:
                    a copy with the strides of the view torch returns)
"""

from __future__ import annotations

import warnings
from functools import partial
from typing import Any

import numpy as np

from ..dispatch import dispatch, register
from ..function_modes import checks_itself, engaged, handle, overriding, spec_of
from ..meta import MetaArray
from ..tensor import Tensor, wrap_dim
from .geometry import int_tuple
from .shape import Params, metadata_inplace


def _permute(x: Any, *, dims: tuple[int, ...]) -> Any:
    return x.transpose(dims)


def _permute_meta(x: MetaArray, *, dims: tuple[int, ...]) -> MetaArray:
    return MetaArray([x.shape[d] for d in dims], x.dtype, [x.strides[d] for d in dims], x.offset)


PERMUTE = register("permute", _permute, _permute_meta, "view", view=True, arg_names=("self",))
T = register("t", _permute, _permute_meta, "view", view=True, arg_names=("self",))
PERMUTE_ = register("permute_", _permute, _permute_meta, "view", differentiable=False,
                    mutates=True, functional=PERMUTE, arg_names=("self",))


def _conj_meta(x: MetaArray) -> MetaArray:
    # torch's H, mH and adjoint are lazy conjugate views of their input: the copy that
    # stands for one has its strides, gaps and zero strides included
    return MetaArray(x.shape, x.dtype, x.strides)


CONJ_PHYSICAL = register("conj_physical", np.conjugate, _conj_meta, "elementwise",
                         arg_names=("self",))

_IDENTITY = [{"dims": tuple(range(n))} for n in range(2)]
_SWAP_2D = {"dims": (1, 0)}


def _permutation(dims: Any, n: int) -> Params:
    """The params of ``permute(dims)``, with torch's errors."""
    dims = int_tuple((dims,), "permute", "dims")
    if len(dims) != n:
        raise RuntimeError(f"permute(): number of dims don't match in permute: input.dim() = {n} "
                           f"is not equal to len(dims) = {len(dims)}")
    wrapped = tuple(wrap_dim(d, n, "permute") for d in dims)
    if len(set(wrapped)) != n:
        raise RuntimeError(f"permute(): duplicate dims are not allowed (got {list(dims)})")
    return {"dims": wrapped}


def permute(input: Tensor, *dims_args: Any, dims: Any = None) -> Tensor:
    """torch.permute(input, dims): a view with the dims reordered."""
    if dims is None:
        if not dims_args:
            raise TypeError('permute() missing 1 required positional arguments: "dims"')
        dims = dims_args[0] if len(dims_args) == 1 and not isinstance(dims_args[0], int) \
            else dims_args
    return dispatch(PERMUTE, (input,),
                    _permutation(dims, input._data.ndim))


def _swap(n: int, d0: int, d1: int) -> Params:
    """The params of a transpose of already-wrapped dims: a permutation."""
    if n == 2 and d0 != d1:
        return _SWAP_2D
    perm = list(range(n))
    if perm:
        perm[d0], perm[d1] = d1, d0
    return {"dims": tuple(perm)}


def _transpose_params(input: Tensor, dim0: int, dim1: int) -> Params:
    n = input._data.ndim
    return _swap(n, wrap_dim(dim0, n, "transpose"), wrap_dim(dim1, n, "transpose"))


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """torch.transpose: a view with ``dim0`` and ``dim1`` swapped."""
    return dispatch(PERMUTE, (input,),
                    _transpose_params(input, dim0, dim1))


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """torch.swapaxes: alias of ``transpose``."""
    return transpose(input, axis0, axis1)


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """torch.swapdims: alias of ``transpose``."""
    return transpose(input, dim0, dim1)


def _t_params(input: Tensor) -> Params:
    n = input._data.ndim
    if n == 2:
        return _SWAP_2D
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return _IDENTITY[n]


def t(input: Tensor) -> Tensor:
    """torch.t: transpose of a tensor with at most 2 dims (0-D and 1-D come back as views)."""
    if engaged.count and overriding():
        return handle(t, _T_SPEC, (input,), {})
    if input._data.ndim == 2:
        return T.door((input,), _SWAP_2D)
    return T.door((input,), _t_params(input))


_T_SPEC = spec_of(checks_itself(t))


def _T(self: Tensor) -> Tensor:
    n = self._data.ndim
    if n == 2:
        return dispatch(PERMUTE, (self,), _SWAP_2D)
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


def _last_two(self: Tensor) -> Tensor:
    n = self._data.ndim
    return dispatch(PERMUTE, (self,), _swap(n, n - 2, n - 1))


def _matrix_transpose(name: str, conjugate: bool, self: Tensor) -> Tensor:
    """Tensor.mT (Tensor.mH with ``conjugate``): the last two dims swapped."""
    n = self._data.ndim
    if n == 0:
        return _deprecated_0d(self, name)
    if n < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. "
                           f"Got {n}-D tensor.")
    swapped = _last_two(self)
    return _conj(swapped) if conjugate else swapped


def _conj(x: Tensor) -> Tensor:
    # torch sets a lazy conjugate bit on a view; NumPy has none, so complex tensors are
    # conjugated now, into a copy.
    if x.dtype.category != 3:
        return x
    return dispatch(CONJ_PHYSICAL, (x,), None)


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
    return _conj(_last_two(self))


def adjoint(input: Tensor) -> Tensor:
    """torch.adjoint: conjugate transpose of the last two dims."""
    n = input._data.ndim
    if n == 0:
        return _conj(input)
    if n < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {n}-D tensor.")
    return _conj(_last_two(input))


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
        return dispatch(PERMUTE, (input,), _IDENTITY[0])
    order = [-1] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    return dispatch(PERMUTE, (input,),
                    {"dims": tuple(o if o >= 0 else next(rest) for o in order)})


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
    "t_": metadata_inplace(PERMUTE_, _t_params, "t_"),
    "transpose_": metadata_inplace(PERMUTE_, _transpose_params, "transpose_"),
    "swapaxes_": metadata_inplace(PERMUTE_, _transpose_params, "swapaxes_"),
    "swapdims_": metadata_inplace(PERMUTE_, _transpose_params, "swapdims_"),
}
