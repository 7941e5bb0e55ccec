"""Views and reshapes: ``view``, ``reshape``, ``flatten``, ``squeeze``, ``expand``...

Where torch returns a view these return one: a view primitive, whose forward returns a
numpy (or cupy) view of its operand's array with the strides torch reports and whose
meta rule gives those strides and the byte offset, so in-place writes through it change
the base. Where torch copies (``reshape`` of incompatible strides, ``ravel`` of a
non-contiguous tensor), so do these. Dim permutations live in ``transposing``, views of
part of a tensor (``narrow``, ``diagonal``...) in ``strided``.

Primitives (operand ``self``) and their params:

    view            size (the output's)
    reshape         size                the copying case of ``reshape``: row-major
    view_dtype      dtype               not differentiable
    squeeze         dims (the size-1 dims removed, ascending)
    unsqueeze       dim
    expand          size (the output's); read-only where elements repeat
    squeeze_, unsqueeze_                the in-place forms: ``self`` takes the view's shape
                                        and strides (not differentiable themselves: in a
                                        graph ``self`` takes the view's history)
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from .. import dtypes as _dt
from .. import meta
from ..dispatch import Op, dispatch, register
from ..dtypes import scalar_type_name, type_properties_name
from ..function_modes import checks_itself, engaged, handle, overriding, spec_of
from ..meta import MetaArray
from ..tensor import Size, Tensor, refuse_view_writes, wrap_dim
from .conversion import contiguous
from .copying import COPY_
from .geometry import (
    expanded_strides,
    infer_size,
    int_tuple,
    plain_size,
    refuse_writes,
    restride,
    shares_elements,
    unsqueezed,
    view_strides,
)
from .inplace import in_graph
from .operands import broadcast_shape

Params = dict[str, Any]


# ----------------------------------------------------------------------------- primitives

def _view(x: Any, *, size: tuple[int, ...]) -> Any:
    """``x`` seen with ``size`` (one entry may be -1), or torch's error where the strides
    cannot express it."""
    if 1 not in size and 0 not in size:
        # with no size-1 or empty dim, a view's strides are forced by the memory: numpy's
        # are torch's whenever numpy finds one (it copies where none exists)
        try:
            out = x.reshape(size)
        except ValueError:
            infer_size(size, x.size)  # torch's error for a size that does not fit
            raise
        owner = x.base
        if out.base is (x if owner is None else owner) and (
                -1 not in size or (1 not in out.shape and 0 not in out.shape)):
            return out
    if x.flags.c_contiguous:
        st = x.strides
        # numpy's reshape gives torch's strides, but for a trailing size-1 dim with an odd
        # stride, which changes torch's answer
        if not st or st[-1] == x.itemsize:
            try:
                return x.reshape(size)
            except ValueError:
                infer_size(size, x.size)
                raise
    target = infer_size(size, x.size)
    return restride(x, target, _view_strides_or_raise(x, target))


def _view_strides_or_raise(x: Any, target: tuple[int, ...]) -> tuple[int, ...]:
    strides = view_strides(x.shape, x.strides, target, x.itemsize)
    if strides is None:
        item = x.itemsize
        raise RuntimeError(
            f"view size is not compatible with input tensor's size and stride (at least one "
            f"dimension spans across two contiguous subspaces): view of shape {list(x.shape)} "
            f"with stride {[s // item for s in x.strides]} as {list(target)}. Use "
            ".reshape(...) instead.")
    return strides


def _view_meta(x: MetaArray, *, size: tuple[int, ...]) -> MetaArray:
    target = infer_size(size, x.size)
    return MetaArray(target, x.dtype, _view_strides_or_raise(x, target), x.offset)


def _reshape(x: Any, *, size: tuple[int, ...]) -> Any:
    return x.copy().reshape(size)


def _reshape_meta(x: MetaArray, *, size: tuple[int, ...]) -> MetaArray:
    return meta.empty(size, x.dtype)


def _view_dtype(x: Any, *, dtype: _dt.dtype) -> Any:
    return x.view(dtype.np)


def _view_dtype_meta(x: MetaArray, *, dtype: _dt.dtype) -> MetaArray:
    # byte strides stay; the last dim counts elements of the new size
    item = dtype.itemsize
    if not x.shape or item == x.itemsize:
        return MetaArray(x.shape, dtype.np, x.strides, x.offset)
    shape = x.shape[:-1] + (x.shape[-1] * x.itemsize // item,)
    return MetaArray(shape, dtype.np, x.strides[:-1] + (item,), x.offset)


def _squeeze(x: Any, *, dims: tuple[int, ...]) -> Any:
    return x.squeeze(dims) if dims else x.view()


def _squeeze_meta(x: MetaArray, *, dims: tuple[int, ...]) -> MetaArray:
    keep = [i for i in range(x.ndim) if i not in dims]
    return MetaArray([x.shape[i] for i in keep], x.dtype, [x.strides[i] for i in keep], x.offset)


def _unsqueeze(x: Any, *, dim: int) -> Any:
    shape, strides = unsqueezed(x.shape, x.strides, dim, x.itemsize)
    if x.flags.c_contiguous:
        arr = x.reshape(shape)
        if arr.strides == strides:
            return arr
    return restride(x, shape, strides)


def _unsqueeze_meta(x: MetaArray, *, dim: int) -> MetaArray:
    shape, strides = unsqueezed(x.shape, x.strides, dim, x.itemsize)
    return MetaArray(shape, x.dtype, strides, x.offset)


def _expand(x: Any, *, size: tuple[int, ...]) -> Any:
    shape = x.shape
    if size == shape:
        return x.view()
    strides = expanded_strides(shape, x.strides, size)
    arr = restride(x, size, strides)
    return refuse_writes(arr) if shares_elements(size, strides) else arr


def _expand_meta(x: MetaArray, *, size: tuple[int, ...]) -> MetaArray:
    return MetaArray(size, x.dtype, expanded_strides(x.shape, x.strides, size), x.offset)


_SELF = ("self",)
VIEW = register("view", _view, _view_meta, "view", view=True, arg_names=_SELF)
RESHAPE = register("reshape", _reshape, _reshape_meta, "library", arg_names=_SELF)
VIEW_DTYPE = register("view_dtype", _view_dtype, _view_dtype_meta, "view", differentiable=False,
                      view=True, arg_names=_SELF)
SQUEEZE = register("squeeze", _squeeze, _squeeze_meta, "view", view=True, arg_names=_SELF)
UNSQUEEZE = register("unsqueeze", _unsqueeze, _unsqueeze_meta, "view", view=True,
                     arg_names=_SELF)
EXPAND = register("expand", _expand, _expand_meta, "view", view=True, arg_names=_SELF)
SQUEEZE_ = register("squeeze_", _squeeze, _squeeze_meta, "view", differentiable=False,
                    mutates=True, functional=SQUEEZE, arg_names=_SELF)
UNSQUEEZE_ = register("unsqueeze_", _unsqueeze, _unsqueeze_meta, "view", differentiable=False,
                      mutates=True, functional=UNSQUEEZE, arg_names=_SELF)


# ----------------------------------------------------------------------------- view, reshape

def view(self: Tensor, *shape: Any, size: Any = None, dtype: Any = None) -> Tensor:
    """Tensor.view(*shape) or view(dtype): the same storage seen with another shape or
    dtype. RuntimeError when the strides cannot express the shape (use ``reshape``)."""
    if engaged.count and overriding():
        return handle(view, _VIEW_SPEC, (self, *shape),
                      {"size": size, "dtype": dtype})
    if size is None and dtype is None:
        # plain ints (one may be -1): the primitive infers and checks the size itself
        for s in shape:
            if s.__class__ is not int or s < -1:
                break
        else:
            if shape:
                return VIEW.door((self,), {"size": shape})
    if dtype is not None or (len(shape) == 1 and isinstance(shape[0], _dt.dtype)):
        return _to_dtype_view(self, dtype if dtype is not None else shape[0])
    if size is not None:
        shape = (size,)
    if not shape:
        raise TypeError("view() received an invalid combination of arguments - got (), but "
                        "expected one of: (torch.dtype dtype) or (tuple of ints size)")
    return dispatch(VIEW, (self,), {"size": infer_size(int_tuple(shape, "view"),
                                                       self._data.size)})


_VIEW_SPEC = spec_of(checks_itself(view))


def _to_dtype_view(self: Tensor, dtype: Any) -> Tensor:
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
    return dispatch(VIEW_DTYPE, (self,), {"dtype": dt})


def view_as(self: Tensor, other: Tensor) -> Tensor:
    """Tensor.view_as(other): ``self.view(other.size())``."""
    return view(self, other._data.shape)


def reshape(input: Tensor, *shape_args: Any, shape: Any = None) -> Tensor:
    """torch.reshape(input, shape): a view when the strides allow one, else a row-major
    copy."""
    if engaged.count and overriding():
        return handle(reshape, _RESHAPE_SPEC, (input, *shape_args),
                      {"shape": shape})
    data = input._data
    if shape is None:
        size = shape_args[0] if len(shape_args) == 1 and shape_args[0].__class__ is tuple \
            else shape_args
        if data.flags.c_contiguous and plain_size(size, data.size):
            return VIEW.door((input,), {"size": size})
    else:
        shape_args = (shape,)
    target = infer_size(int_tuple(shape_args, "reshape", "shape"), data.size)
    viewable = view_strides(data.shape, data.strides, target, data.itemsize) is not None
    return dispatch(VIEW if viewable else RESHAPE,
                    (input,), {"size": target})


_RESHAPE_SPEC = spec_of(checks_itself(reshape))


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

def _squeeze_params(input: Tensor, dim: Any = None) -> Params:
    shape = input._data.shape
    n = len(shape)
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    elif isinstance(dim, (tuple, list)):
        seen: set[int] = set()
        for d in dim:
            w = wrap_dim(operator.index(d), n, "squeeze")
            if w in seen:
                raise RuntimeError(f"squeeze: dim {w} appears multiple times in the list of dims")
            seen.add(w)
        dims = tuple(sorted(d for d in seen if n and shape[d] == 1))
    else:
        d = wrap_dim(operator.index(dim), n, "squeeze")
        dims = (d,) if n and shape[d] == 1 else ()
    return {"dims": dims}


def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """torch.squeeze: drop size-1 dims (all of them, or those among ``dim``); a view."""
    return dispatch(SQUEEZE, (input,), _squeeze_params(input, dim))


def _unsqueeze_params(input: Tensor, dim: int) -> Params:
    n = input._data.ndim
    if not -n - 1 <= dim <= n:
        wrap_dim(dim, n + 1, "unsqueeze")
    return {"dim": dim + n + 1 if dim < 0 else dim}


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """torch.unsqueeze: a view with a size-1 dim inserted at ``dim``."""
    return dispatch(UNSQUEEZE, (input,),
                    _unsqueeze_params(input, dim))


# ----------------------------------------------------------------------------- expand

def expand(self: Tensor, *sizes: Any, size: Any = None) -> Tensor:
    """Tensor.expand(*sizes): a view with size-1 dims repeated (stride 0) and new leading
    dims; -1 keeps a size. Writes into the result are an error, as in torch."""
    if not sizes and size is None:
        raise TypeError('expand() missing 1 required positional arguments: "size"')
    if size is None:  # x.expand(4, 4) or x.expand(shape): ints checked here
        first = sizes[0]
        target = first if len(sizes) == 1 and (
            first.__class__ is tuple or first.__class__ is Size) else sizes
        for n in target:
            if n.__class__ is not int:
                target = int_tuple(sizes, "expand")
                break
    else:
        target = int_tuple((size,), "expand")
    shape = self._data.shape
    n, m = len(shape), len(target)
    if m == n:  # the common call: each size kept, or a size-1 dim repeated
        for want, s in zip(target, shape):
            if want != s and (s != 1 or want < 0):
                break  # (-1, or a mismatch: checked below)
        else:
            return EXPAND.door((self,), {"size": tuple(target)})  # type: ignore[no-any-return]
    if m < n:
        raise RuntimeError(f"expand({type_properties_name(self.dtype, self.device.type)}"
                           f"{{{list(shape)}}}, size={list(target)}): the "
                           f"number of sizes provided ({m}) must be greater or equal to the number "
                           f"of dimensions in the tensor ({n})")
    lead = m - n
    out = list(target)
    negative = False
    # torch checks from the last dim; only new leading dims (the common
    # ``expand(B, *x.shape)``): no existing dim to check
    for i in range(m - 1 if target[lead:] != shape else lead - 1, -1, -1):
        want = target[i]
        s = shape[i - lead] if i >= lead else 1
        if want == s:
            continue
        if want == -1:
            if i < lead:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            out[i] = s
        elif s != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({s}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(target)}.  Tensor sizes: "
                f"{list(shape)}")
        elif want < 0:
            negative = True  # torch accepts it there, then multiplies the sizes
    if negative:
        raise RuntimeError("numel: integer multiplication overflow")
    return EXPAND.door((self,), {"size": tuple(out)})  # type: ignore[no-any-return]


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

_METADATA_WRITEBACK = {"writeback": True, "metadata": True}


def _check_rebasable(self: Tensor) -> None:
    """autograd's refusals of an in-place op, checked before ``self`` changes shape (it
    takes the view's history only after)."""
    refuse_view_writes(self)
    if self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    base = self._base
    if base is not None and base._requires_grad and base.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


def metadata_inplace(op_: Op, params_of: Callable[..., Params], name: str
                     ) -> Callable[..., Tensor]:
    """``squeeze_``, ``t_``...: ``self`` takes the shape and strides of the view
    ``op_.functional`` gives with the params ``params_of(self, *args)`` (same storage).

    In a graph the view is recorded first and then written back into ``self`` with
    ``copy_``, through which autograd gives ``self`` the view's history; a view's base keeps
    its own (no element changed), as in torch.
    """
    view_op = op_.functional
    if view_op is None:
        raise ValueError(f"{op_.name}: an in-place view op needs its view op as functional")

    def method(self: Tensor, *args: Any) -> Tensor:
        params = params_of(self, *args)
        if not in_graph(self, ()):
            return dispatch(op_, (self,), params)
        _check_rebasable(self)
        value = dispatch(view_op, (self,), params)
        dispatch(op_, (self,), params)
        return dispatch(COPY_, (self, value), _METADATA_WRITEBACK)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place ``{view_op.name}``: changes ``self``'s shape and strides."
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
    "squeeze_": metadata_inplace(SQUEEZE_, _squeeze_params, "squeeze_"),
    "unsqueeze_": metadata_inplace(UNSQUEEZE_, _unsqueeze_params, "unsqueeze_"),
}
