"""Autocast: regions where ops run in the dtype torch's policy lists pick for them.

The state is torch's, per thread: enabled and dtype per device type, whether the weight
cache is on, and the nesting depth of ``autocast`` regions (the cache is cleared when the
outermost one exits). While autocast is on for any device type on a thread, two hooks
see that thread's ops:

* the dispatcher's autocast step (``install_step("autocast", ...)``), for every
  primitive: it casts the operands of those in ``autocast_lists.PRIMITIVES`` for the
  device type of their first tensor operand, then runs the rest of the dispatch;
* a TorchFunctionMode, for the public functions in ``autocast_lists.PUBLIC``: their
  tensor arguments are cast and the function runs with autocast off inside, as torch
  runs a listed op below its autocast key.

Casts go through ``Tensor.to``, so autograd records them and gradients reach the
original tensors in their own dtype. Float32 leaves that require grad (weights) are cast
once per outermost region (torch's weight cache).
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import threading
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

import ember.core as E
from ember.core import Tensor
from ember.core import function_modes as _function_modes
from ember.core.device import device as _device
from ember.core.dispatch import disengage, engage, install_step
from ember.core.dispatch import state as _dispatch_state

from . import autocast_lists as lists

__all__ = ["autocast", "autocast_decorator", "is_autocast_available", "custom_fwd", "custom_bwd",
           "get_autocast_dtype", "set_autocast_dtype", "is_autocast_enabled",
           "set_autocast_enabled", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
           "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting",
           "get_autocast_cpu_dtype", "get_autocast_gpu_dtype", "set_autocast_cpu_dtype",
           "set_autocast_gpu_dtype", "is_autocast_cpu_enabled", "set_autocast_cpu_enabled"]

F = TypeVar("F", bound=Callable[..., Any])

_AVAILABLE = ("cpu", "cuda")
_DEFAULT_DTYPES = {"cpu": E.bfloat16, "cuda": E.float16}


# ---------------------------------------------------------------------- thread state

class _State(threading.local):
    """This thread's autocast state (torch keeps it thread-local too)."""

    def __init__(self) -> None:
        self.enabled = dict.fromkeys(_AVAILABLE, False)
        self.dtype: dict[str, Any] = dict(_DEFAULT_DTYPES)
        self.cache_enabled = True
        self.nesting = 0
        self.mode: _AutocastFunctionMode | None = None  # pushed while any type is enabled


_state = _State()

# torch's weight cache is one map for the process, guarded by a lock: id of the source
# -> (source, its cast); holding the source keeps its id from being reused
_cache: dict[int, tuple[Tensor, Tensor]] = {}
_cache_lock = threading.Lock()

# which device type's lists apply to tensors of a device type (tests point "cpu" at the
# CUDA lists to check them on a machine without CUDA)
_POLICY_OF = {"cpu": "cpu", "cuda": "cuda"}


def _device_type(device_type: Any, fn: str) -> str:
    if not isinstance(device_type, str):
        raise TypeError(f"{fn}(): argument 'device_type' (position 1) must be str, not "
                        f"{type(device_type).__name__}")
    return _device(device_type).type


def _sync() -> None:
    """Engage the dispatcher and the function mode while autocast is on for any device
    type on this thread, and disengage them when it is off for all."""
    st = _state
    on = any(st.enabled.values())
    if on and st.mode is None:
        st.mode = _AutocastFunctionMode()
        st.mode.__enter__()
        engage()
    elif not on and st.mode is not None:
        mode, st.mode = st.mode, None
        modes = _function_modes._state.modes
        if modes and modes[-1] is mode:
            mode.__exit__(None, None, None)
        elif mode in modes:  # a mode entered after it is still there: take it out by itself
            modes.remove(mode)
            _function_modes.engaged.count -= 1
        disengage()
    _dispatch_state.autocast = on


# ---------------------------------------------------------------------- torch's helpers

def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can run on ``device_type`` ('cpu' and 'cuda' in Ember)."""
    return _device_type(device_type, "_is_autocast_available") in _AVAILABLE


def get_autocast_dtype(device_type: str) -> Any:
    """The dtype autocast casts to on ``device_type`` in this thread."""
    dt = _state.dtype.get(_device_type(device_type, "get_autocast_dtype"))
    if dt is None:
        raise RuntimeError("unsupported scalarType")
    return dt


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    _state.dtype[_device_type(device_type, "set_autocast_dtype")] = dtype


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` (no argument: CUDA) in this thread."""
    if device_type is None:
        return _state.enabled["cuda"]
    return _state.enabled.get(_device_type(device_type, "is_autocast_enabled"), False)


def set_autocast_enabled(device_type: Any, enabled: Any = None) -> None:
    """``set_autocast_enabled(device_type, enabled)``, or ``(enabled)`` for CUDA."""
    if enabled is None:
        device_type, enabled, position = "cuda", device_type, 1
    else:
        position = 2
        device_type = _device_type(device_type, "set_autocast_enabled")
    if not isinstance(enabled, bool):
        raise TypeError(f"set_autocast_enabled(): argument 'enabled' (position {position}) "
                        f"must be bool, not {type(enabled).__name__}")
    if device_type not in _AVAILABLE:
        raise RuntimeError(f"unknown device type for autocast: {device_type}")
    _state.enabled[device_type] = enabled
    _sync()


def is_autocast_cache_enabled() -> bool:
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop the cached casts of weights."""
    with _cache_lock:
        _cache.clear()


def autocast_increment_nesting() -> int:
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    _state.nesting -= 1
    return _state.nesting


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def get_autocast_cpu_dtype() -> Any:
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _state.dtype["cpu"]


def get_autocast_gpu_dtype() -> Any:
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return _state.dtype["cuda"]


def set_autocast_cpu_dtype(dtype: Any) -> None:
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    _state.dtype["cpu"] = dtype


def set_autocast_gpu_dtype(dtype: Any) -> None:
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    _state.dtype["cuda"] = dtype


def is_autocast_cpu_enabled() -> bool:
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return _state.enabled["cpu"]


def set_autocast_cpu_enabled(enabled: bool) -> None:
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


# ---------------------------------------------------------------------- the region

def autocast_decorator(autocast_instance: autocast, func: F) -> F:
    """``func`` run inside ``autocast_instance``."""
    @functools.wraps(func)
    def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
        with autocast_instance:
            return func(*args, **kwargs)

    return decorate_autocast  # type: ignore[return-value]


class autocast:  # noqa: N801 - torch's name
    """torch.autocast: a context manager or decorator in which ops run in the dtype
    torch's autocast lists choose for them (``dtype``: the lower precision one, by default
    float16 on CUDA and bfloat16 on CPU). Regions nest; ``enabled=False`` turns autocast
    off inside; the state is this thread's."""

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(self.device):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{self.device}'")
        self._cache_enabled = (is_autocast_cache_enabled() if cache_enabled is None
                               else cache_enabled)
        if enabled:
            enabled = self._check_dtype()
        self._enabled = enabled

    def _check_dtype(self) -> bool:
        """Whether the region can be enabled: torch warns and disables it otherwise."""
        supported = (E.bfloat16, E.float16)
        if self.device == "cuda":
            if not E.cuda_available():
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                              "autocast.", stacklevel=3)
                return False
            if self.fast_dtype == E.bfloat16:
                # CuPy has no bfloat16 arrays (ember.cuda.is_bf16_supported() is False)
                raise RuntimeError("Current CUDA Device does not support bfloat16. Please "
                                   "switch dtype to float16.")
            return True
        if self.fast_dtype not in supported:
            name = self.device.upper()
            warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                          f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                          + ", ".join(map(str, supported)) + " currently.", stacklevel=3)
            return False
        return True

    def __enter__(self) -> autocast:
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        _state.dtype[self.device] = self.fast_dtype
        set_autocast_enabled(self.device, self._enabled)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        _state.dtype[self.device] = self.prev_fastdtype
        set_autocast_cache_enabled(self.prev_cache_enabled)

    def __call__(self, func: F) -> F:
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                f"Did you mean to use autocast as a context manager? For example:\n"
                f"    with torch.autocast(device_type=...):\n"
                f"        output = model(input)")
        return autocast_decorator(self, func)


# ---------------------------------------------------------------------- casting

def _eligible(t: Any, device_type: str) -> bool:
    """torch's is_eligible: a floating tensor of the region's device type, not float64."""
    return (isinstance(t, Tensor) and t.device.type == device_type and t.is_floating_point()
            and t.dtype is not E.float64)


def _cached_cast(to: Any, t: Any, device_type: str) -> Any:
    """``t.to(to)`` when eligible; float32 weights cast to the region's dtype once."""
    if not _eligible(t, device_type) or t.dtype is to:
        return t
    st = _state
    if (to is st.dtype[device_type] and t.dtype is E.float32 and t.requires_grad
            and t.is_leaf and t._base is None and st.cache_enabled):
        with _cache_lock:
            hit = _cache.get(id(t))
            if hit is not None and hit[0] is t:
                return hit[1]
            cast = t.to(to)
            _cache[id(t)] = (t, cast)
            return cast
    return t.to(to)


_TYPED_SCALARS = {np.dtype(d.np) for d in (E.float16, E.bfloat16, E.float32)}


def _cast_all(values: Any, to: Any, device_type: str) -> Any:
    """Cast the eligible tensors of ``values`` (a tuple), one level into lists and tuples.

    A wrapper gives a primitive a Python-number operand as a NumPy scalar of the result
    dtype it computed (``pow(2.0, x)``): those follow the tensors they were typed by."""
    out = []
    for v in values:
        if v.__class__ is list or v.__class__ is tuple:
            v = v.__class__(_cached_cast(to, x, device_type) for x in v)
        elif isinstance(v, np.generic) and v.dtype in _TYPED_SCALARS:
            v = np.dtype(to.np).type(v)
        else:
            v = _cached_cast(to, v, device_type)
        out.append(v)
    return tuple(out)


def _tensors(values: Any) -> list[Tensor]:
    out: list[Tensor] = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif v.__class__ is list or v.__class__ is tuple:
            out.extend(x for x in v if isinstance(x, Tensor))
    return out


def _promote_type(values: Any, device_type: str) -> Any:
    """torch's promote_type: the region's dtype, float32 when any eligible tensor is."""
    lower = _state.dtype[device_type]
    current = lower
    for t in _tensors(values):
        if not (isinstance(t, Tensor) and t.device.type == device_type and t.is_floating_point()):
            continue
        nxt = t.dtype
        if nxt is E.float64:
            continue
        if current is E.float32 or nxt is E.float32:
            current = E.float32
        elif not (current is lower and nxt is lower):
            raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return current


def _first_tensor(values: Any) -> Tensor | None:
    for v in values:
        if isinstance(v, Tensor):
            return v
        if v.__class__ is list or v.__class__ is tuple:
            for x in v:
                if isinstance(x, Tensor):
                    return x
    return None


def _region_of(values: Any) -> str | None:
    """The device type whose enabled region applies to an op on ``values``."""
    t = _first_tensor(values)
    if t is None:
        return None
    dev = t.device.type
    return dev if _state.enabled.get(dev, False) else None


# ---------------------------------------------------------------------- the dispatcher step

def _primitive_policies() -> dict[str, dict[str, str]]:
    """Primitive name -> {device type of the lists: policy}."""
    by_name: dict[str, dict[str, str]] = {}
    for dev, table in lists.PRIMITIVES.items():
        for name, policy in table.items():
            by_name.setdefault(name, {})[dev] = policy
    return by_name


_BY_PRIMITIVE = _primitive_policies()


def _autocast_step(op: Any, args: tuple[Any, ...], params: dict[str, Any] | None,
                   below: Callable[..., Any]) -> Any:
    """The dispatcher's autocast step: cast the operands of a listed primitive."""
    entry = _BY_PRIMITIVE.get(op.name)
    if entry is None:
        return below(op, args, params)
    dev = _region_of(args)
    policy = None if dev is None else entry.get(_POLICY_OF[dev])
    if policy is None or dev is None:
        return below(op, args, params)
    return below(op, _cast_operands(policy, args, params, dev), params)


def _cast_operands(policy: str, args: tuple[Any, ...], params: dict[str, Any] | None,
                   dev: str) -> tuple[Any, ...]:
    if policy == lists.LOWER:
        return _cast_all(args, _state.dtype[dev], dev)
    if policy == lists.FP32:
        return _cast_all(args, E.float32, dev)
    if policy == lists.PROMOTE:
        return _cast_all(args, _promote_type(args, dev), dev)
    # fp32_set_opt_dtype, fp32_append_dtype: the op in float32 unless a dtype was given
    if (params is not None and params.get("dtype") is not None) or not _eligible(args[0], dev):
        return args
    return (_cached_cast(E.float32, args[0], dev), *args[1:])


# ---------------------------------------------------------------------- public names

def _resolve(path: str) -> Any:
    import ember.nn.functional as nn_functional

    if path.startswith("nn.functional."):
        return getattr(nn_functional, path.removeprefix("nn.functional."), None)
    if path.startswith("Tensor."):
        return getattr(Tensor, path.removeprefix("Tensor."), None)
    return getattr(E, path, None)


@functools.cache
def _public_policies() -> dict[Any, dict[str, str]]:
    """Public function -> {device type of the lists: policy}, resolved on first use."""
    by_fn: dict[Any, dict[str, str]] = {}
    for dev, table in lists.PUBLIC.items():
        for path, policy in table.items():
            fn = _resolve(path)
            if fn is not None:
                by_fn.setdefault(fn, {})[dev] = policy
    return by_fn


@functools.cache
def _signature(fn: Any) -> inspect.Signature:
    return inspect.signature(fn)


def _pad_policy(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    mode = _signature(fn).bind(*args, **kwargs).arguments.get("mode", "constant")
    return lists.FP32 if mode in ("reflect", "replicate") else None


class _AutocastFunctionMode(_function_modes.TorchFunctionMode):
    """Casts the arguments of the public functions in ``autocast_lists.PUBLIC``."""

    def __torch_function__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        entry = _public_policies().get(func)
        if entry is None or not _dispatch_state.autocast:
            return func(*args, **kwargs)
        dev = _region_of((*args, *kwargs.values()))
        policy = None if dev is None else entry.get(_POLICY_OF[dev])
        if policy == "pad":
            policy = _pad_policy(func, args, kwargs)
        if policy is None or dev is None:
            return func(*args, **kwargs)
        return _run_public(policy, func, args, kwargs, dev)


def _run_public(policy: str, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                dev: str) -> Any:
    if policy == lists.BANNED:
        raise RuntimeError(lists.BANNED_MESSAGE)
    if policy == lists.FP32_SET_OPT_DTYPE:
        bound = _signature(func).bind(*args, **kwargs)
        if bound.arguments.get("dtype") is None and _eligible(_first_tensor(args), dev):
            bound.arguments["dtype"] = E.float32
        args, kwargs = bound.args, bound.kwargs
    elif policy != lists.OPAQUE:
        to = {lists.LOWER: _state.dtype[dev], lists.FP32: E.float32}.get(policy)
        if to is None:  # promote
            to = _promote_type((*args, *kwargs.values()), dev)
        args = _cast_all(args, to, dev)
        kwargs = dict(zip(kwargs, _cast_all(tuple(kwargs.values()), to, dev), strict=True))
    st = _dispatch_state
    prev, st.autocast = st.autocast, False  # torch runs a listed op below its autocast key
    try:
        return func(*args, **kwargs)
    finally:
        st.autocast = prev


install_step("autocast", _autocast_step)


# ---------------------------------------------------------------------- custom functions

def _cast(value: Any, device_type: str, dtype: Any) -> Any:
    """``value`` with its eligible tensors cast to ``dtype``, into mappings and iterables."""
    if isinstance(value, Tensor):
        return value.to(dtype) if _eligible(value, device_type) else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        cast = (_cast(v, device_type, dtype) for v in value)
        return type(value)(cast) if isinstance(value, (list, tuple)) else cast
    return value


def _check_device_type(device_type: Any) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd: Callable[..., Any] | None = None, *, device_type: str,
               cast_inputs: Any = None) -> Any:
    """Decorate the ``forward`` of a custom autograd Function: with ``cast_inputs`` it
    runs, inside an enabled region, on its floating tensors cast to that dtype with
    autocast off; without, it runs in the region's state (which ``custom_bwd`` repeats)."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        in_region = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if not in_region:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs),
                       **_cast(kwargs, device_type, cast_inputs))

    return decorate_fwd


def custom_bwd(bwd: Callable[..., Any] | None = None, *, device_type: str) -> Any:
    """Decorate the ``backward`` of a custom autograd Function: it runs in the autocast
    state its ``forward`` (decorated with ``custom_fwd``) ran in."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                      dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
