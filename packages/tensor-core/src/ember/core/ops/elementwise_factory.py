"""How elementwise primitives are made: ``binary_op`` and ``unary_op`` register a primitive
(its kernel, a NumPy ufunc that CuPy arrays also answer, and its broadcasting rule), its
in-place variant, and build the public function and method with torch's dtype checks,
flat for speed.

A primitive's operands arrive promoted: tensors of the computation dtype (cast by
``to_copy`` where they were not) and Python numbers, which the kernel treats as weakly
typed. Its in-place variant (``add_``) writes into its first operand, which keeps its own
dtype (the result is cast into it, as torch casts a computation's result into ``out``).

binary.py and unary.py hold the primitives made here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import meta
from ..device import xp_of
from ..dispatch import Op, register
from ..function_modes import checks_itself, engaged, handle, overriding, spec_of
from ..tensor import Tensor
from .conversion import cast
from .copying import (
    check_castable,
    check_overlap,
    check_writable,
    refuse_recorded_write,
    write_out,
    write_out_exact,
)
from .operands import (
    LIMITS,
    broadcast_error,
    broadcast_shape,
    check_inplace_shape,
    not_implemented,
    prep_binary,
)

_BF16 = _dt.bfloat16
_F16 = _dt.float16
_BF16_NP = _BF16.np
_KIND = "bifc"  # a dtype's category as a letter: bool, int, float, complex
_ALL = "bifc"
_NDARRAY = np.ndarray
_NUMBERS = (int, float, bool, complex)
Refusals = dict[str, tuple[type[Exception], str]]
# torch's error when ``out`` must have the result's dtype exactly
SAME_OUT = "Found dtype {out} but expected {expected}"


def wrap_int(value: int, dt: _dt.dtype) -> int:
    """A Python int converted to an integer dtype the way torch converts scalars: wrapping."""
    lo, hi = LIMITS[dt]
    if lo <= value <= hi:
        return value
    span = hi - lo + 1
    return int((value - lo) % span + lo)  # int() for the type checker: LIMITS holds floats too


def _same_first(x: Any, *rest: Any, **params: Any) -> Any:
    """The meta rule of an in-place op: its first operand, unchanged."""
    return x


# ----------------------------------------------------------------------------- kernels

def _binary_kernel(forward: Callable[..., Any], result: str) -> Callable[..., Any]:
    """The registered kernel: ``forward`` on promoted operands (a Python number among them
    is weakly typed), its result in the dtype torch gives (the operands' own, or bool). A
    NumPy ufunc gives exactly that itself and is the kernel."""
    if isinstance(forward, np.ufunc):
        return forward
    to_bool = result == "bool"

    def kernel(x: Any, y: Any) -> Any:
        r = forward(x, y)
        dt = np.bool_ if to_bool else (y if x.__class__ in _NUMBERS else x).dtype
        if r.dtype != dt:
            r = r.astype(dt)
        return r

    kernel.__name__ = getattr(forward, "__name__", "kernel")
    return kernel


_HALVES = (np.dtype(np.float16), np.dtype(_BF16_NP))
_F32 = np.float32


def _number_in_float(ufunc: np.ufunc) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The kernel and in-place kernel of ``ufunc`` (mul, true division) as torch's CPU
    kernels compute a float16 or bfloat16 tensor with a number as second operand: in
    float, the number read in float (``original_scalar_value``) where numpy would round
    it to the tensor's dtype first (``bf16 * ln 2`` is off by an ulp in 4 of 10 cases)."""
    f16, bf16 = _HALVES
    plain_inplace = _binary_inplace_kernel(ufunc, ufunc)

    def kernel(x: Any, y: Any) -> Any:
        if y.__class__ is float or y.__class__ is int:
            dt = x.dtype
            if dt is f16 or dt is bf16:
                # computed in float32 by the ufunc itself: its result is laid out from x's
                return ufunc(x, _F32(y), dtype=_F32).astype(dt)
        return ufunc(x, y)

    def inplace(x: Any, y: Any) -> Any:
        if y.__class__ is float or y.__class__ is int:
            dt = x.dtype
            if dt is f16 or dt is bf16:
                ufunc(x, _F32(y), out=x, dtype=_F32, casting="unsafe")
                return x
        return plain_inplace(x, y)

    kernel.__name__ = inplace.__name__ = ufunc.__name__
    kernel.ufunc = ufunc  # type: ignore[attr-defined]  # (its results are laid out as ufunc's)
    return kernel, inplace


def _binary_inplace_kernel(forward: Callable[..., Any], kernel: Callable[..., Any]
                           ) -> Callable[..., Any]:
    """``x op= y`` into ``x``'s memory: the ufunc with ``out=`` where ``forward`` is one,
    else the kernel's result copied in."""
    if isinstance(forward, np.ufunc):
        def inplace(x: Any, y: Any) -> Any:
            try:
                forward(x, y, x)
            except TypeError:
                # NumPy's same_kind casting refuses some casts the wrapper allowed (int64
                # into uint8, which torch wraps); it refuses before it writes
                forward(x, y, x, casting="unsafe")
            return x
    else:
        def inplace(x: Any, y: Any) -> Any:
            r = kernel(x, y)
            if r.shape != x.shape:  # copyto would drop the result's leading 1s, as out= does not
                raise ValueError("the result does not fit the written-to tensor")
            xp_of(x).copyto(x, r, casting="unsafe")
            return x

    return inplace


def _unary_kernel(forward: Callable[..., Any], result: str) -> Callable[..., Any]:
    """As ``_binary_kernel``, for one operand ('real': complex gives its real dtype)."""
    if isinstance(forward, np.ufunc):
        return forward
    to_bool, to_real = result == "bool", result == "real"

    def kernel(x: Any, **params: Any) -> Any:
        r = forward(x, **params)
        dt = np.bool_ if to_bool else x.dtype
        if to_real and dt.kind == "c":
            dt = dt.type(0).real.dtype
        if r.dtype != dt:
            r = r.astype(dt)
        return r

    kernel.__name__ = getattr(forward, "__name__", "kernel")
    return kernel


def _unary_inplace_kernel(forward: Callable[..., Any], kernel: Callable[..., Any]
                          ) -> Callable[..., Any]:
    if forward is np.negative:
        def inplace(x: Any) -> Any:
            # NumPy 2.4's negative, in place through a stride of 32 or 64 bytes (a diagonal,
            # every 8th float64), writes other elements' negations: out of place there
            if x.flags.c_contiguous:
                forward(x, x)
            else:
                x[...] = forward(x)
            return x
    elif isinstance(forward, np.ufunc):
        def inplace(x: Any) -> Any:
            forward(x, x)
            return x
    else:
        def inplace(x: Any, **params: Any) -> Any:  # type: ignore[misc]
            xp_of(x).copyto(x, kernel(x, **params), casting="unsafe")
            return x

    return inplace


def _inplace_op(op: Op, kernel: Callable[..., Any], differentiable: bool | None = None) -> Op:
    return register(op.name + "_", kernel, _same_first, "elementwise",
                    op.differentiable if differentiable is None else differentiable,
                    mutates=True, functional=op, arg_names=op.arg_names)


def check_inplace_target(op: str, self: Tensor, other: Any, leaves: bool = True) -> None:
    """The checks torch makes of an in-place write into ``self`` before its dtype checks:
    autograd's refusals (``leaves``: of leaves that require grad, and views of them), then
    memory that elements of ``self`` share, then ``other``'s shape against ``self``'s (the
    slow path of the in-place methods: the fast one has no dtype check to come first)."""
    if leaves:
        refuse_recorded_write(self, other)
    check_writable(op, self)
    if other.__class__ is Tensor or isinstance(other, Tensor):
        shape = other._data.shape
        if shape != self._data.shape:
            check_inplace_shape(op, self._data.shape, shape)


# ----------------------------------------------------------------------------- binary

def binary_op(name: str, forward: Callable[..., Any], result: str = "promote",
              differentiable: bool = True, allowed: str = _ALL, kernel: str | None = None,
              scalars: str = "any", refusals: Refusals | None = None, inplace: bool = False,
              number_in_float: bool = False,
              overwrites: bool = False, writes_leaves: bool = False,
              scale: Callable[..., Any] | None = None,
              arg_names: tuple[str, str] = ("self", "other"),
              rule: Callable[..., Any] | None = None
              ) -> tuple[Op, Callable[..., Tensor], Callable[..., Tensor] | None]:
    """Register a broadcasting binary primitive and build its public function.

    ``result``: 'promote' keeps the promoted dtype, 'float' turns integer results into the
    default float (true division), 'bool' gives a mask. ``allowed``: the dtype kinds torch
    computes the op for ('b'ool, 'i'nt, 'f'loat, 'c'omplex), checked on the promoted dtype;
    others raise torch's NotImplementedError naming ``kernel``, or the error ``refusals`` gives
    for that kind. ``scalars``: which operands may be Python numbers: 'any', 'other' (input
    must be a Tensor) or 'none'. ``inplace``: also register ``name_`` and build the method;
    ``overwrites``: autograd records ``name_`` of a non-differentiable op as an overwrite of
    ``self`` (torch's comparisons in place: zero gradients, its refusals of leaves);
    ``writes_leaves``: torch records nothing of ``name_``, not even its refusal of leaves.
    ``scale``: the in-place method takes ``alpha`` (``add_``, ``sub_``), and
    ``scale(self, other, alpha)`` gives ``alpha * other``. ``arg_names``: the operands'
    names in torch's schema (``grad_fn._saved_<name>``). ``rule``: the meta rule, where
    it is not ``meta.elementwise(result)``.

    Returns ``(op, function, in-place method or None)``.
    """
    if number_in_float:
        assert isinstance(forward, np.ufunc)
        computed, computed_inplace = _number_in_float(forward)
    else:
        computed = _binary_kernel(forward, result)
        computed_inplace = _binary_inplace_kernel(forward, computed)
    op = register(name, computed, rule or meta.elementwise(result), "elementwise", differentiable,
                  arg_names=arg_names)
    kernel_name = kernel or f"{name}_cpu"
    scalars_checked, tensor_first = scalars != "any", scalars == "other"
    tensors_only = scalars == "none"
    accepted = tuple(kind in allowed for kind in _KIND)  # by dtype category
    to_float = result == "float"

    result_dtype = _dt.bool if result == "bool" else None

    def resolve(input: Any, other: Any, into: _dt.dtype | None = None
                ) -> tuple[Any, Any, _dt.dtype]:
        """The operands promoted and checked, and the dtype the op computes in. ``into``:
        the dtype an in-place op writes into, whose cast check comes first in torch (before
        the kernel's dtype check)."""
        if scalars_checked and not (input.__class__ is Tensor and (
                tensor_first or other.__class__ is Tensor)):
            _check_scalars(name, scalars, input, other)
        x, y, dt, dev = prep_binary(name, input, other)
        if number_in_float and (dt is _BF16 or dt is _F16) and other.__class__ is Tensor and \
                other.dtype is not dt and other._data.ndim == 0 and \
                other.device.type == "cpu" and not other._requires_grad:
            # torch's kernels read a wider 0-d CPU tensor beside a half tensor as a number in
            # float (``original_scalar_value``), not rounded to half first: a float16 0.5
            # times a float32 65536 is 32768, not inf
            y = float(np.float32(other.item()))
        category = dt.category
        if category == 1 and not to_float and (y.__class__ is int or x.__class__ is int):
            # Python ints wrap into integer dtypes (uint8 - 1 is uint8 255), as in torch
            if x.__class__ is int:
                x = wrap_int(x, dt)
            if y.__class__ is int:
                y = wrap_int(y, dt)
        elif dt is _BF16:
            # ml_dtypes scalars are not weakly typed: a number joins as a bfloat16 scalar
            # (a second one of mul and div stays a number, which their kernels read in float)
            if x.__class__ in _NUMBERS:
                x = _BF16_NP.type(x)
            if y.__class__ in _NUMBERS and not number_in_float:
                y = _BF16_NP.type(y)
        if into is not None:
            # the result type torch checks: the float a true division of integers gives, or
            # the promoted dtype where the kernel will refuse it
            floats = to_float and category < 2 and accepted[category]
            check_castable(name + "_", result_dtype or (
                _dt.get_default_dtype() if floats else dt), into)
        if not accepted[category]:
            if isinstance(x, Tensor) and isinstance(y, Tensor) and not (
                    refusals and _KIND[category] in refusals):
                # torch's iterator checks the shapes before its kernel refuses the dtype (an
                # op's own refusals come before both)
                broadcast_shape(name, x._data.shape, y._data.shape)
            check_allowed(kernel_name, allowed, dt, refusals)
        if to_float and category < 2:
            # each tensor is cast from its own dtype, as torch casts its operands (through
            # their promoted integer dtype, an int64 -5 beside uint8 would wrap to 251)
            dt = _dt.get_default_dtype()
            if isinstance(x, Tensor):
                x = cast(input, dt, dev)
            if isinstance(y, Tensor):
                y = cast(other, dt, dev)
        return x, y, dt

    # dtypes a tensor operand of which needs no cast and no check (the hot path), with a
    # tensor of the same dtype, or (``with_numbers``) with a Python int or float; torch
    # computes ``input + alpha * other`` (``scale``) with the product, a complex one, even
    # for alpha 1, so complex operands of those ops take the path that scales
    plain = frozenset(d for d in _dt.ALL_DTYPES if accepted[d.category] and
                      (not to_float or d.category >= 2) and (scale is None or d.category < 3))
    with_numbers = frozenset() if scalars == "none" else frozenset(
        d for d in plain if d.category >= 2 and d is not _BF16)
    numbers_first = with_numbers if scalars == "any" else frozenset()  # ``1 - x``

    def scaled(input: Any, other: Any, alpha: Any) -> tuple[Any, Any]:
        """The operands promoted, ``other`` times alpha (which torch checks first) where
        that product is computed, as in torch."""
        if alpha.__class__ is not int or alpha != 1:
            x, y, _ = resolve(input, scale(input, other, alpha))  # type: ignore[misc]
            return x, y
        x, y, dt = resolve(input, other)
        return (x, scale(x, y, 1)) if dt.category == 3 else (x, y)  # type: ignore[misc]

    def mismatch(x: Any, y: Any) -> RuntimeError:
        return broadcast_error(name, *[a._data if isinstance(a, Tensor) else a for a in (x, y)])

    if scale is None:
        def fn(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
            if engaged.count and overriding():
                return handle(fn, spec, (input, other), {"out": out})  # type: ignore[no-any-return]
            if input.__class__ is Tensor and ((
                    other.__class__ is Tensor and input.dtype is other.dtype
                    and input.dtype in plain and input.device is other.device) or (
                    (other.__class__ is float or other.__class__ is int)
                    and input.dtype in with_numbers)) or other.__class__ is Tensor and (
                    input.__class__ is float or input.__class__ is int) and (
                    other.dtype in numbers_first):
                x, y = input, other
            else:
                x, y, _ = resolve(input, other)
            try:
                res = op.door((x, y), None)
            except ValueError:
                raise mismatch(x, y) from None
            return res if out is None else write_out(name, out, res, (input, other))
    else:
        def fn(input: Any, other: Any, *, alpha: Any = 1,  # type: ignore[misc]
               out: Tensor | None = None) -> Tensor:
            if engaged.count and overriding():
                return handle(fn, spec, (input, other),  # type: ignore[no-any-return]
                              {"alpha": alpha, "out": out})
            if alpha.__class__ is int and alpha == 1 and (input.__class__ is Tensor and ((
                    other.__class__ is Tensor and input.dtype is other.dtype
                    and input.dtype in plain and input.device is other.device) or (
                    (other.__class__ is float or other.__class__ is int)
                    and input.dtype in with_numbers)) or other.__class__ is Tensor and (
                    input.__class__ is float or input.__class__ is int)
                    and other.dtype in numbers_first):
                x, y = input, other
            else:
                x, y = scaled(input, other, alpha)
            try:
                res = op.door((x, y), None)
            except ValueError:
                raise mismatch(x, y) from None
            return res if out is None else write_out(name, out, res, (input, other))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}(input, other): elementwise, with broadcasting and type promotion."
    spec = spec_of(checks_itself(fn))
    if not inplace:
        return op, fn, None
    op_ = _inplace_op(op, computed_inplace, overwrites or None)

    def method(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
        if engaged.count and overriding():
            return handle(method, method_spec, (self, other),  # type: ignore[no-any-return]
                          {"alpha": alpha})
        if other.__class__ is Tensor or isinstance(other, Tensor):
            # torch's overlap check, on the operand as given; views of one storage share
            # their root: other storages cost this identity test
            b, s = other._base, self._base
            if (other if b is None else b) is (self if s is None else s):
                check_overlap(name + "_", self, (other,))
        alpha_given = alpha.__class__ is not int or alpha != 1
        if alpha_given:
            if scale is None:
                raise TypeError(f"{name}_() got an unexpected keyword argument 'alpha'")
            other = scale(self, other, alpha)
        if self.__class__ is Tensor and other.__class__ is Tensor and self.dtype is other.dtype \
                and self.dtype in plain and self.device is other.device:
            y = other
        else:
            if tensors_only and not isinstance(other, Tensor):
                raise _not_tensor(name + "_", "other", 1, other)  # torch parses arguments first
            check_inplace_target(name + "_", self, other, not writes_leaves)
            _, y, dt = resolve(self, other, self.dtype)
            if scale is not None and not alpha_given and dt.category == 3:
                y = scale(self, y, 1)  # torch's complex product, even by 1
        data = self._data
        if data.__class__ is not _NDARRAY and 0 in data.strides:
            check_writable(name + "_", self)  # NumPy refuses writes into expanded arrays itself
        # ``y`` is in the computation dtype; a wider one than self's is cast into self
        try:
            return op_.door((self, y), None)  # type: ignore[no-any-return]
        except ValueError:  # NumPy checks before it writes: self is unchanged
            if isinstance(y, Tensor) and y._data.shape != data.shape:
                check_inplace_shape(name + "_", data.shape, y._data.shape)
            check_writable(name + "_", self)
            raise

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In-place ``{name}``."
    method_spec = spec_of(checks_itself(method))
    return op, fn, method


def _shape(x: Any) -> tuple[int, ...]:
    return x._data.shape if isinstance(x, Tensor) else ()


def _check_scalars(name: str, scalars: str, input: Any, other: Any) -> None:
    """TypeError where torch takes only Tensors (subclasses such as Parameter pass)."""
    if not isinstance(input, Tensor):
        raise _not_tensor(name, "input", 1, input)
    if scalars == "none" and not isinstance(other, Tensor):
        raise _not_tensor(name, "other", 2, other)


def _not_tensor(name: str, arg: str, position: int, value: Any) -> TypeError:
    """torch's argument parser's error for a number where it takes only a Tensor."""
    return TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                     f"{type(value).__name__}")


def check_allowed(kernel: str, allowed: str, dt: _dt.dtype, refusals: Refusals | None) -> None:
    """torch's error when ``dt``'s kind is not in ``allowed``: the one ``refusals`` gives for
    that kind, else NotImplementedError naming ``kernel``."""
    kind = _KIND[dt.category]
    if kind in allowed:
        return
    if refusals and kind in refusals:
        error, message = refusals[kind]
        raise error(message)
    raise not_implemented(kernel, dt)


# ----------------------------------------------------------------------------- unary

def unary_op(name: str, forward: Callable[..., Any], result: str = "same",
             differentiable: bool = True, allowed: str = _ALL, kernel: str | None = None,
             refusals: Refusals | None = None, exact_out: str | None = None,
             inplace: bool = False, writes_leaves: bool = False,
             rule: Callable[..., Any] | None = None
             ) -> tuple[Op, Callable[..., Tensor], Callable[..., Tensor] | None]:
    """Register a unary primitive. ``result``: 'same', 'float' (ints compute in the default
    float), 'bool' or 'real' (complex gives its real dtype, as abs does). ``allowed``,
    ``kernel`` and ``refusals``: as for ``binary_op``, checked on the input dtype.
    ``exact_out``: torch's error when ``out`` must have the result's dtype exactly.
    ``inplace``: also register ``name_`` and build the method; ``writes_leaves``: as for
    ``binary_op``. ``rule``: the meta rule, where not the elementwise one.

    Returns ``(op, function, in-place method or None)``.
    """
    computed = _unary_kernel(forward, result)
    op = register(name, computed, rule or meta.elementwise(result), "elementwise",
                  differentiable, arg_names=("self",))
    kernel_name = kernel or f"{name}_cpu"
    accepted = tuple(kind in allowed for kind in _KIND)  # by dtype category
    to_float = result == "float"
    result_of = {"bool": lambda dt: _dt.bool, "real": _dt.dtype.to_real}.get(result)

    def resolve(input: Tensor) -> tuple[Tensor, _dt.dtype]:
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        dt = input.dtype
        if not accepted[dt.category]:
            check_allowed(kernel_name, allowed, dt, refusals)
        if to_float and dt.category < 2:
            dt = _dt.get_default_dtype()
            return cast(input, dt), dt
        return input, dt

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        if engaged.count and overriding():
            return handle(fn, spec, (input,), {"out": out})  # type: ignore[no-any-return]
        x, _ = resolve(input)
        res = op.door((x,), None)
        if out is None:
            return res  # type: ignore[no-any-return]
        check_overlap(name, out, (input,))
        if exact_out is None:
            return write_out(name, out, res)
        return write_out_exact(name, out, res, exact_out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}(input): elementwise."
    spec = spec_of(checks_itself(fn))
    if not inplace:
        return op, fn, None
    op_ = _inplace_op(op, _unary_inplace_kernel(forward, computed))

    def method(self: Tensor) -> Tensor:
        if engaged.count and overriding():
            return handle(method, method_spec, (self,), {})  # type: ignore[no-any-return]
        if not isinstance(self, Tensor):
            resolve(self)  # raises torch's TypeError
        if self._requires_grad and not writes_leaves:
            refuse_recorded_write(self)  # autograd refuses before the op checks anything
        if refusals and not accepted[self.dtype.category] and \
                _KIND[self.dtype.category] in refusals:
            check_allowed(kernel_name, allowed, self.dtype, refusals)  # the op's own checks
        check_writable(name + "_", self)  # then the written memory, before the kernel's dtype
        dt = self.dtype
        if to_float and dt.category < 2:
            dt = _dt.get_default_dtype()  # an integer result type: can't be cast into self
        check_castable(name + "_", dt if result_of is None else result_of(dt), self.dtype)
        if not accepted[self.dtype.category]:
            check_allowed(kernel_name, allowed, self.dtype, refusals)
        return op_.door((self,), None)  # type: ignore[no-any-return]

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In-place ``{name}``."
    method_spec = spec_of(checks_itself(method))
    return op, fn, method
