"""Views and reshapes: ``view``, ``reshape``, ``flatten``, ``squeeze``, ``expand``...

Where PyTorch returns a view these return one: ``make_view`` over the input's storage,
with the strides PyTorch reports, so in-place writes through it change the base. Where
PyTorch copies (``reshape`` of incompatible strides, ``ravel`` of a non-contiguous
tensor), so do these. Dim permutations live in ``transposing``, views of part of a
tensor (``narrow``, ``diagonal``...) in ``strided``.

Primitives and the ``params`` they record (the forward's keyword arguments, plus
``shape``, the input's shape, where a VJP needs it):

    view, reshape   size (the output's), shape      reshape is the copying case
    squeeze         dims (the dims removed, ascending)
    unsqueeze       dim
    expand          size (the output's), shape
    view_dtype      dtype (not differentiable: never recorded)
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..dispatch import grad_mode, hooks, register
from ..dtypes import scalar_type_name
from ..tensor import Size, Tensor, bump_version, make, make_view, wrap_dim
from .conversion import clone, contiguous
from .geometry import infer_size, int_tuple, plain_sizes, restride, view_strides
from .operands import broadcast_shape, record


def _reshape_forward(x: Any, size: tuple[int, ...], shape: tuple[int, ...]) -> Any:
    return x.reshape(size)


def _expand_forward(x: Any, size: tuple[int, ...], shape: tuple[int, ...]) -> Any:
    return np.broadcast_to(x, size)


VIEW = register("view", _reshape_forward, None, "view")
RESHAPE = register("reshape", _reshape_forward, None, "library")
VIEW_DTYPE = register("view_dtype", lambda x, dtype: x.view(dtype.np), None, "view",
                      differentiable=False)
SQUEEZE = register("squeeze", lambda x, dims: x.squeeze(dims), None, "view")
UNSQUEEZE = register("unsqueeze", lambda x, dim: np.expand_dims(x, dim), None, "view")
EXPAND = register("expand", _expand_forward, None, "view")


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
        what = (f"to view {scalar_type_name(self.dtype)} as {scalar_type_name(dt)} (different "
                "element sizes)")
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

def metadata_inplace(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
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
    "reshape", "flatten", "unflatten", "ravel", "squeeze", "unsqueeze", "broadcast_to",
    "broadcast_tensors", "broadcast_shapes", "atleast_1d", "atleast_2d", "atleast_3d",
]

METHODS: dict[str, Any] = {
    "view": view, "view_as": view_as, "reshape": reshape, "reshape_as": reshape_as,
    "flatten": flatten, "unflatten": unflatten, "ravel": ravel, "squeeze": squeeze,
    "unsqueeze": unsqueeze, "expand": expand, "expand_as": expand_as,
    "broadcast_to": broadcast_to,
    "squeeze_": metadata_inplace(squeeze, "squeeze_"),
    "unsqueeze_": metadata_inplace(unsqueeze, "unsqueeze_"),
}
