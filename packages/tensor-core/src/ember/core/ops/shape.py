"""Views and reshapes: ``view``, ``reshape``, ``squeeze``, ``permute``, ``expand``, ``narrow``...

Where PyTorch returns a view these return one: ``make_view`` over the input's storage,
with the strides PyTorch reports, so in-place writes through it change the base. Where
PyTorch copies (``reshape`` of incompatible strides, ``ravel`` of a non-contiguous
tensor), so do these.

Primitives and the ``params`` they record (the forward's keyword arguments, plus
``shape``, the input's shape, where a VJP needs it):

    view, reshape   size (the output's), shape      reshape is the copying case
    squeeze         dims (the dims removed, ascending)
    unsqueeze       dim
    permute         dims (the permutation; transpose, t, mT and movedim record this)
    expand          size (the output's), shape
    narrow          dim, start, length, shape
    diagonal        offset, dim1, dim2, shape
    unfold          dimension, size, step, shape
    as_strided      size, stride, storage_offset, shape, input_stride, input_storage_offset
    view_dtype      dtype (not differentiable: never recorded)
    conj_physical   none (the conjugation in ``H``, ``mH`` and ``adjoint`` of complex tensors)
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import xp_of
from ..dispatch import grad_mode, hooks, register
from ..tensor import Size, Tensor, bump_version, make, make_view, wrap_dim
from .conversion import clone, contiguous
from .operands import _pretty, broadcast_shape, record

# ----------------------------------------------------------------------------- helpers


def restride(data: Any, shape: Sequence[int], strides: Sequence[int]) -> Any:
    """A view of ``data``'s memory from its first element with byte ``strides``.

    numpy and torch disagree on the strides of size-1 dims and on those of some views;
    this builds exactly the ones torch reports. Read-only input gives read-only output.
    """
    if data.__class__ is np.ndarray and (data.flags.c_contiguous or data.flags.f_contiguous):
        # Ten times faster than as_strided; numpy checks the view stays inside ``data``.
        try:
            return np.ndarray(shape, data.dtype, data, 0, strides)
        except (ValueError, TypeError, BufferError):
            pass
    return xp_of(data).lib.stride_tricks.as_strided(data, tuple(shape), tuple(strides))


def int_tuple(args: Sequence[Any], op: str, arg: str = "size") -> tuple[int, ...]:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(Size)`` all mean (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    try:
        return tuple(map(operator.index, args))
    except TypeError:
        i, bad = next((i, a) for i, a in enumerate(args) if not hasattr(a, "__index__"))
        raise TypeError(f"{op}(): argument '{arg}' must be tuple of ints, but found element of "
                        f"type {type(bad).__name__} at pos {i}") from None


def plain_sizes(args: Sequence[Any]) -> bool:
    """True when ``args`` (sizes, or one sequence of them) hold no negative but -1: numpy
    takes any negative size as the one to infer, torch only -1."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    return min(map(operator.index, args), default=0) >= -1


def infer_size(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    """Resolve one ``-1`` in ``shape`` for ``numel`` elements, with torch's errors."""
    infer = -1
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer >= 0:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
        else:
            known *= s
    if numel == known or (infer >= 0 and known > 0 and numel % known == 0):
        if infer < 0:
            return shape
        if known == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                               "because the unspecified dimension size -1 can be any value and "
                               "is ambiguous")
        return shape[:infer] + (numel // known,) + shape[infer + 1:]
    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")


def view_strides(old_shape: tuple[int, ...], old_strides: tuple[int, ...],
                 new_shape: tuple[int, ...], unit: int) -> tuple[int, ...] | None:
    """The strides of ``new_shape`` viewing the same memory, or None where no view can
    (torch's ``computeStride``); ``unit`` is the stride of one element (numpy: itemsize)."""
    if not old_shape:
        return (unit,) * len(new_shape)
    numel = 1
    for s in old_shape:
        numel *= s
    if numel == 0:
        if old_shape == new_shape:
            return old_strides
        return contiguous_strides(new_shape, unit)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    return tuple(new_strides) if view_d == -1 else None


def contiguous_strides(shape: Sequence[int], unit: int = 1) -> tuple[int, ...]:
    """Row-major strides as torch computes them (a size-0 dim counts as 1)."""
    strides = [unit] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * max(shape[i + 1], 1)
    return tuple(strides)


# ----------------------------------------------------------------------------- primitives

def _reshape_forward(x: Any, size: tuple[int, ...], shape: tuple[int, ...]) -> Any:
    return x.reshape(size)


def _expand_forward(x: Any, size: tuple[int, ...], shape: tuple[int, ...]) -> Any:
    return np.broadcast_to(x, size)


def _narrow_forward(x: Any, dim: int, start: int, length: int, shape: tuple[int, ...]) -> Any:
    return x[(slice(None),) * dim + (slice(start, start + length),)]


def diagonal_array(x: Any, offset: int, dim1: int, dim2: int) -> Any:
    """The writable strided view of ``x``'s diagonal (numpy's ``diagonal`` is read-only)."""
    shape, strides = x.shape, x.strides
    n1, n2 = shape[dim1], shape[dim2]
    length = max(min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2), 0)
    start = x
    if length > 0 and offset != 0:
        d, k = (dim2, offset) if offset > 0 else (dim1, -offset)
        start = x[(slice(None),) * d + (slice(k, None),)]
    keep = [i for i in range(x.ndim) if i != dim1 and i != dim2]
    return restride(start, [shape[i] for i in keep] + [length],
                    [strides[i] for i in keep] + [strides[dim1] + strides[dim2]])


def _diagonal_forward(x: Any, offset: int, dim1: int, dim2: int, shape: tuple[int, ...]) -> Any:
    return diagonal_array(x, offset, dim1, dim2)


def _unfold_forward(x: Any, dimension: int, size: int, step: int, shape: tuple[int, ...]) -> Any:
    if x.ndim == 0:
        return restride(x, (size,), (x.itemsize,))
    sizes, strides = list(x.shape), list(x.strides)
    stride = strides[dimension]
    sizes[dimension] = (sizes[dimension] - size) // step + 1
    strides[dimension] = stride * step
    return restride(x, sizes + [size], strides + [stride])


def _as_strided_forward(x: Any, size: tuple[int, ...], stride: tuple[int, ...],
                        storage_offset: int, **input_geometry: Any) -> Any:
    # ``x`` stands for the whole storage, from its first element.
    flat = x.reshape(-1)[storage_offset:]
    return restride(flat, size, [s * x.itemsize for s in stride])


def _as_strided_meta(x: meta.Spec, size: tuple[int, ...], **params: Any) -> meta.Spec:
    return meta.Spec(tuple(size), x.dtype)


VIEW = register("view", _reshape_forward, None, "view")
RESHAPE = register("reshape", _reshape_forward, None, "library")
VIEW_DTYPE = register("view_dtype", lambda x, dtype: x.view(dtype.np), None, "view",
                      differentiable=False)
SQUEEZE = register("squeeze", lambda x, dims: x.squeeze(dims), None, "view")
UNSQUEEZE = register("unsqueeze", lambda x, dim: np.expand_dims(x, dim), None, "view")
PERMUTE = register("permute", lambda x, dims: x.transpose(dims), None, "view")
EXPAND = register("expand", _expand_forward, None, "view")
NARROW = register("narrow", _narrow_forward, None, "view")
DIAGONAL = register("diagonal", _diagonal_forward, None, "view")
UNFOLD = register("unfold", _unfold_forward, None, "view")
AS_STRIDED = register("as_strided", _as_strided_forward, _as_strided_meta, "view")
CONJ_PHYSICAL = register("conj_physical", np.conjugate, None, "elementwise")


# ----------------------------------------------------------------------------- view, reshape

def view(self: Tensor, *shape: Any, size: Any = None, dtype: Any = None) -> Tensor:
    """Tensor.view(*shape) or view(dtype): the same storage seen with another shape or
    dtype. RuntimeError when the strides cannot express the shape (use ``reshape``)."""
    data = self._data
    if size is None and dtype is None and data.flags.c_contiguous:
        st = data.strides
        # A trailing size-1 dim with an odd stride changes torch's answer; rare, slow path.
        if not st or st[-1] == data.itemsize:
            try:
                arr = data.reshape(*shape)
            except (TypeError, ValueError):
                arr = None
            # numpy takes any negative size for -1; a shape that already holds -1 holds no other.
            if arr is not None and (arr.shape == shape or -1 in shape or plain_sizes(shape)):
                out = make_view(self, arr)
                if self._requires_grad:
                    record(VIEW, (self,), {"size": arr.shape, "shape": data.shape}, out)
                return out
    if dtype is not None or (len(shape) == 1 and isinstance(shape[0], _dt.dtype)):
        return _view_dtype(self, dtype if dtype is not None else shape[0])
    if size is not None:
        shape = (size,)
    if not shape:
        raise TypeError("view() received an invalid combination of arguments - got (), but "
                        "expected one of: (torch.dtype dtype) or (tuple of ints size)")
    target = infer_size(int_tuple(shape, "view"), data.size)
    strides = view_strides(data.shape, data.strides, target, data.itemsize)
    if strides is None:
        raise RuntimeError(
            f"view size is not compatible with input tensor's size and stride (at least one "
            f"dimension spans across two contiguous subspaces): view of shape {list(data.shape)} "
            f"with stride {list(self.stride())} as {list(target)}. Use .reshape(...) instead.")
    out = make_view(self, restride(data, target, strides))
    if self._requires_grad:
        record(VIEW, (self,), {"size": target, "shape": data.shape}, out)
    return out


def _view_dtype(self: Tensor, dtype: Any) -> Tensor:
    dt = _dt.to_dtype(dtype)
    old, new = self.dtype.itemsize, dt.itemsize
    data = self._data
    if old != new:
        what = f"to view {_pretty(self.dtype)} as {_pretty(dt)} (different element sizes)"
        if data.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if self.stride(-1) != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {self.stride(-1)}")
        if new > old:
            ratio = new // old
            if data.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got "
                                   f"{data.shape[-1]}")
            if self.storage_offset() % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, "
                                   f"but got {self.storage_offset()}")
            for d, s in enumerate(self.stride()[:-1]):
                if s % ratio:
                    raise RuntimeError(f"self.stride({d}) must be divisible by {ratio} {what}, "
                                       f"but got {s}")
    out = make_view(self, data.view(dt.np))
    out.dtype = dt
    return out


def view_as(self: Tensor, other: Tensor) -> Tensor:
    """Tensor.view_as(other): ``self.view(other.size())``."""
    return view(self, other._data.shape)


def reshape(input: Tensor, *shape_args: Any, shape: Any = None) -> Tensor:
    """torch.reshape(input, shape): a view when the strides allow one, else a copy."""
    data = input._data
    if shape is None and data.flags.c_contiguous:
        st = data.strides
        if not st or st[-1] == data.itemsize:
            try:
                arr = data.reshape(*shape_args)
            except (TypeError, ValueError):
                arr = None
            if arr is not None and (arr.shape == shape_args or -1 in shape_args
                                    or plain_sizes(shape_args)):
                out = make_view(input, arr)
                if input._requires_grad:
                    record(VIEW, (input,), {"size": arr.shape, "shape": data.shape}, out)
                return out
    if shape is not None:
        shape_args = (shape,)
    target = infer_size(int_tuple(shape_args, "reshape", "shape"), data.size)
    strides = view_strides(data.shape, data.strides, target, data.itemsize)
    if strides is not None:
        op, out = VIEW, make_view(input, restride(data, target, strides))
    else:
        op, out = RESHAPE, make(data.copy().reshape(target), input.dtype, input.device)
    if input._requires_grad:
        record(op, (input,), {"size": target, "shape": data.shape}, out)
    return out


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    """Tensor.reshape_as(other): ``self.reshape(other.size())``."""
    return reshape(self, other._data.shape)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """torch.flatten: merge dims ``start_dim..end_dim`` into one (a view when possible)."""
    shape = input._data.shape
    n = len(shape)
    if start_dim == 0 and end_dim == -1 and n > 1:
        return reshape(input, input._data.size)
    s = wrap_dim(start_dim, n, "flatten")
    e = wrap_dim(end_dim, n, "flatten")
    if n == 0:
        return reshape(input, 1)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    merged = 1
    for d in shape[s:e + 1]:
        merged *= d
    return reshape(input, *shape[:s], merged, *shape[e + 1:])


def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """torch.unflatten: split dim ``dim`` into ``sizes`` (one may be -1); always a view."""
    shape = input._data.shape
    if not shape:
        raise RuntimeError(f"unflatten: Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, len(shape), "unflatten")
    sizes = int_tuple((sizes,), "unflatten", "sizes")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        split = infer_size(sizes, shape[d])
    except RuntimeError:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({shape[d]}) in the input tensor") from None
    return view(input, shape[:d] + split + shape[d + 1:])


def ravel(input: Tensor) -> Tensor:
    """torch.ravel: a 1-D view of a contiguous tensor, else a flattened copy."""
    return view(contiguous(input), -1)


# ----------------------------------------------------------------------------- squeeze

def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """torch.squeeze: drop size-1 dims (all of them, or those among ``dim``); a view."""
    data = input._data
    shape = data.shape
    n = len(shape)
    if dim is None:
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
    elif isinstance(dim, (tuple, list)):
        seen: set[int] = set()
        for d in dim:
            w = wrap_dim(operator.index(d), n, "squeeze")
            if w in seen:
                raise RuntimeError(f"squeeze: dim {w} appears multiple times in the list of dims")
            seen.add(w)
        axes = tuple(sorted(d for d in seen if n and shape[d] == 1))
    else:
        d = wrap_dim(operator.index(dim), n, "squeeze")
        axes = (d,) if n and shape[d] == 1 else ()
    out = make_view(input, data.squeeze(axes) if axes else data)
    if input._requires_grad:
        record(SQUEEZE, (input,), {"dims": axes}, out)
    return out


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """torch.unsqueeze: a view with a size-1 dim inserted at ``dim``."""
    data = input._data
    n = data.ndim
    if not -n - 1 <= dim <= n:
        wrap_dim(dim, n + 1, "unsqueeze")
    if dim < 0:
        dim += n + 1
    shape, st = data.shape, data.strides
    new_shape = shape[:dim] + (1,) + shape[dim:]
    strides = st[:dim] + ((st[dim] * shape[dim]) if dim < n else data.itemsize,) + st[dim:]
    arr = data.reshape(new_shape) if data.flags.c_contiguous else None
    if arr is None or arr.strides != strides:
        arr = restride(data, new_shape, strides)
    out = make_view(input, arr)
    if input._requires_grad:
        record(UNSQUEEZE, (input,), {"dim": dim}, out)
    return out


# ----------------------------------------------------------------------------- permutations

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


def _mT(self: Tensor) -> Tensor:
    n = self._data.ndim
    if n == 0:
        return _deprecated_0d(self, "mT")
    if n < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got "
                           f"{n}-D tensor.")
    return _swap(self, n - 2, n - 1)


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


def _mH(self: Tensor) -> Tensor:
    n = self._data.ndim
    if n == 0:
        return _deprecated_0d(self, "mH")
    if n < 2:
        raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. Got "
                           f"{n}-D tensor.")
    return _conj(_swap(self, n - 2, n - 1))


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


# ----------------------------------------------------------------------------- expand

def expand(self: Tensor, *sizes: Any, size: Any = None) -> Tensor:
    """Tensor.expand(*sizes): a view with size-1 dims repeated (stride 0) and new leading
    dims; -1 keeps a size. Writes into the result are an error, as in torch."""
    if not sizes and size is None:
        raise TypeError('expand() missing 1 required positional arguments: "size"')
    target = int_tuple(sizes if size is None else (size,), "expand")
    data = self._data
    shape, st = data.shape, data.strides
    n, m = len(shape), len(target)
    if m < n:
        raise RuntimeError(f"expand({self.dtype}{{{list(shape)}}}, size={list(target)}): the "
                           f"number of sizes provided ({m}) must be greater or equal to the number "
                           f"of dimensions in the tensor ({n})")
    lead = m - n
    out_shape = list(target)
    strides = [0] * lead + list(st)
    overlap = False
    # Only new leading dims (the common ``expand(B, *x.shape)``): no existing dim to check.
    for i in range(m if target[lead:] != shape else lead):
        want = target[i]
        s = shape[i - lead] if i >= lead else 1
        if want == s:
            continue
        if want == -1:
            if i < lead:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            out_shape[i] = s
            continue
        if s != 1 or want < 0:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({s}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(target)}.  Tensor sizes: "
                f"{list(shape)}")
        strides[i] = 0
        overlap = overlap or want > 1
    if n:
        # A new leading dim of size 1 strides over the dims after it, as in torch.
        for i in range(lead - 1, -1, -1):
            if out_shape[i] == 1:
                strides[i] = out_shape[i + 1] * strides[i + 1]
    if m == n and tuple(out_shape) == shape:
        arr = data
    else:
        arr = restride(data, out_shape, strides)
        if overlap and arr.__class__ is np.ndarray:
            # Read-only, as numpy's broadcasts are: in-place writes then refuse, as torch's
            # do where elements share memory. (CuPy has no read-only arrays.)
            arr.flags.writeable = False
    out = make_view(self, arr)
    if self._requires_grad:
        record(EXPAND, (self,), {"size": tuple(out_shape), "shape": shape}, out)
    return out


def expand_as(self: Tensor, other: Tensor) -> Tensor:
    """Tensor.expand_as(other): ``self.expand(other.size())``."""
    return expand(self, other._data.shape)


def broadcast_to(input: Tensor, size: Sequence[int]) -> Tensor:
    """torch.broadcast_to: ``input.expand(size)``."""
    return expand(input, size)


def broadcast_shapes(*shapes: Any) -> Size:
    """torch.broadcast_shapes: the shape all of ``shapes`` broadcast to."""
    norm = [int_tuple((s,), "broadcast_shapes", "shapes") if isinstance(s, (tuple, list))
            else (operator.index(s),) for s in shapes]
    ndim = max((len(s) for s in norm), default=0)
    out = [1] * ndim
    for idx, s in enumerate(norm):
        for i, size in enumerate(s, ndim - len(s)):
            if size < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            if size == out[i] or size == 1:
                continue
            if out[i] != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {size} at {i - ndim}! "
                    f"Mismatching argument at index {idx} had {tuple(s)}; but expected shape "
                    f"should be broadcastable to {out}")
            out[i] = size
    return Size(out)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """torch.broadcast_tensors: views of each tensor expanded to their common shape."""
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise TypeError(f"broadcast_tensors(): expected Tensor as element {i}, but got "
                            f"{type(x).__name__}")
    if not tensors:
        return ()
    shape = broadcast_shape("broadcast_tensors", *(x._data.shape for x in tensors))
    return tuple(x if x._data.shape == shape else expand(x, shape) for x in tensors)


# ----------------------------------------------------------------------------- slices of dims

def narrow(input: Tensor, dim: int, start: Any, length: int) -> Tensor:
    """torch.narrow: elements ``start..start+length`` of dim ``dim``; a view. ``start`` may
    be a 0-d integer tensor."""
    data = input._data
    n = data.ndim
    if n == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if isinstance(start, Tensor) and (start._data.ndim or start.dtype.category != 1):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    start = operator.index(start)
    length = operator.index(length)
    d = wrap_dim(dim, n, "narrow")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    size = data.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if start > size - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    out = make_view(input, data[(slice(None),) * d + (slice(start, start + length),)])
    if input._requires_grad:
        record(NARROW, (input,), {"dim": d, "start": start, "length": length,
                                  "shape": data.shape}, out)
    return out


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """torch.diagonal: a view of the diagonal of dims ``dim1``/``dim2`` (moved last)."""
    data = input._data
    n = data.ndim
    d1 = wrap_dim(dim1, n, "diagonal")
    d2 = wrap_dim(dim2, n, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    out = make_view(input, diagonal_array(data, offset, d1, d2))
    if input._requires_grad:
        record(DIAGONAL, (input,), {"offset": offset, "dim1": d1, "dim2": d2,
                                    "shape": data.shape}, out)
    return out


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Tensor.unfold: a view of all slices of length ``size`` (``step`` apart) along
    ``dimension``, in a new last dim."""
    data = self._data
    n = data.ndim
    d = wrap_dim(dimension, n, "unfold")
    dim_size = data.shape[d] if n else 1
    if size > dim_size:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {dim_size} but size is "
                           f"{size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    out = make_view(self, _unfold_forward(data, d, size, step, data.shape))
    if self._requires_grad:
        record(UNFOLD, (self,), {"dimension": d, "size": size, "step": step,
                                 "shape": data.shape}, out)
    return out


def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int],
               storage_offset: int | None = None) -> Tensor:
    """torch.as_strided: a view of ``input``'s storage with the given sizes, strides (in
    elements) and storage offset (default: ``input``'s own)."""
    size = int_tuple((size,), "as_strided")
    stride = int_tuple((stride,), "as_strided", "stride")
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    offset = input.storage_offset() if storage_offset is None else operator.index(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    root = input._base if input._base is not None else input
    storage = _storage_array(root._data)
    item = input.dtype.itemsize
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed > storage.size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {item} requiring a storage size of "
                           f"{needed * item} are out of bounds for storage of size "
                           f"{storage.size * item}")
    out = make_view(input, restride(storage[offset:], size, [s * item for s in stride]))
    if input._requires_grad:
        record(AS_STRIDED, (input,), {
            "size": size, "stride": stride, "storage_offset": offset, "shape": input._data.shape,
            "input_stride": input.stride(), "input_storage_offset": input.storage_offset()}, out)
    return out


def _storage_array(root: Any) -> Any:
    """The root tensor's memory as a 1-D array from its first element to its last."""
    if root.flags.c_contiguous:
        return root.reshape(-1)
    extent = 1 + sum((n - 1) * s for n, s in zip(root.shape, root.strides)) // root.itemsize
    return restride(root, (extent if root.size else 0,), (root.itemsize,))


# ----------------------------------------------------------------------------- atleast_nd

def _atleast(n: int) -> Callable[..., Any]:
    def one(x: Tensor) -> Tensor:
        if not isinstance(x, Tensor):
            raise TypeError(f"atleast_{n}d(): expected Tensor, got {type(x).__name__}")
        nd = x._data.ndim
        if nd >= n:
            return x
        if nd == 0:
            return reshape(x, (1,) * n)
        if nd == 1 and n == 3:
            return unsqueeze(unsqueeze(x, 0), -1)
        return unsqueeze(x, 0 if n == 2 else -1)

    def fn(*tensors: Any) -> Any:
        if len(tensors) == 1:
            if not isinstance(tensors[0], (list, tuple)):
                return one(tensors[0])
            tensors = tuple(tensors[0])
        return tuple(one(x) for x in tensors)

    fn.__name__ = fn.__qualname__ = f"atleast_{n}d"
    fn.__doc__ = (f"torch.atleast_{n}d: each tensor viewed with at least {n} dims (tensors with "
                  "enough dims come back as they are).")
    return fn


atleast_1d = _atleast(1)
atleast_2d = _atleast(2)
atleast_3d = _atleast(3)


# ----------------------------------------------------------------------------- in-place forms

def _metadata_inplace(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    """``squeeze_``, ``t_``...: ``self`` takes the view's shape and strides (same storage).

    In a graph the op is recorded on a clone and autograd's in-place hook rebases ``self``
    onto the result, exactly as for ``add_``, so tensors the graph saved stay valid.
    """

    def method(self: Tensor, *args: Any) -> Tensor:
        arr = fn(self.detach(), *args)._data
        if self._requires_grad and hooks.record is not None and grad_mode.enabled:
            result = fn(clone(self), *args)
            if hooks.inplace is not None:
                hooks.inplace(self, result, name)
        self._data = arr
        bump_version(self)
        return self

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place form of ``{fn.__name__}``: changes ``self``'s shape and strides."
    return method


FUNCTIONS: list[str] = [
    "reshape", "flatten", "unflatten", "ravel", "squeeze", "unsqueeze", "permute", "transpose",
    "swapaxes", "swapdims", "t", "adjoint", "movedim", "moveaxis", "broadcast_to",
    "broadcast_tensors", "broadcast_shapes", "narrow", "diagonal", "as_strided", "atleast_1d",
    "atleast_2d", "atleast_3d",
]

METHODS: dict[str, Any] = {
    "view": view, "view_as": view_as, "reshape": reshape, "reshape_as": reshape_as,
    "flatten": flatten, "unflatten": unflatten, "ravel": ravel, "squeeze": squeeze,
    "unsqueeze": unsqueeze, "permute": permute, "transpose": transpose, "swapaxes": swapaxes,
    "swapdims": swapdims, "t": t, "adjoint": adjoint, "movedim": movedim, "moveaxis": movedim,
    "expand": expand, "expand_as": expand_as, "broadcast_to": broadcast_to, "narrow": narrow,
    "diagonal": diagonal, "unfold": unfold, "as_strided": as_strided,
    "T": property(_T), "mT": property(_mT), "H": property(_H), "mH": property(_mH),
    "squeeze_": _metadata_inplace(squeeze, "squeeze_"),
    "unsqueeze_": _metadata_inplace(unsqueeze, "unsqueeze_"),
    "t_": _metadata_inplace(t, "t_"),
    "transpose_": _metadata_inplace(transpose, "transpose_"),
    "swapaxes_": _metadata_inplace(transpose, "swapaxes_"),
    "swapdims_": _metadata_inplace(transpose, "swapdims_"),
}
