"""``__torch_function__`` at the public names: Tensor subclasses and TorchFunctionModes.

Every public function and Tensor method is installed through ``public(fn)``: a wrapper
with ``fn``'s own signature whose first line asks whether anything could override the
call. Nothing can until a TorchFunctionMode is entered or a Tensor subclass that keeps
``__torch_function__`` is defined (``engaged.count``); then ``handle`` does what torch
does: the innermost mode sees the call first (popped while its handler runs, so calling
``func`` inside reaches the next one), then the overriding tensor types among the
arguments, subclasses before their bases. ``Tensor.__torch_function__`` runs the call
with subclass handling off and returns the results as the subclass.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["TorchFunctionMode", "public", "handle", "spec_of", "checks_itself", "overriding",
           "has_torch_function",
           "handle_torch_function", "DisableTorchFunction", "DisableTorchFunctionSubclass",
           "disabled_torch_function_impl", "engaged", "is_public"]


class _Engaged:
    """How many things anywhere could override a public call: modes on any thread's stack
    and Tensor subclasses defined with a ``__torch_function__`` of their own or the
    default one. While 0, a public call costs one attribute read."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0


engaged = _Engaged()


class _State(threading.local):
    def __init__(self) -> None:
        self.modes: list[TorchFunctionMode] = []
        self.subclass_off = 0  # DisableTorchFunctionSubclass depth
        self.all_off = 0  # DisableTorchFunction depth


_state = _State()


def disabled_torch_function_impl(func: Callable[..., Any], types: Any, args: Any = (),
                                 kwargs: Any = None) -> Any:
    """The ``__torch_function__`` of subclasses that opt out (``Parameter``): never called,
    its types are not overloaded."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


class TorchFunctionMode:
    """torch.overrides.TorchFunctionMode: inside ``with mode:``, every public call goes to
    ``mode.__torch_function__(func, types, args, kwargs)`` first."""

    def __torch_function__(self, func: Callable[..., Any], types: tuple[type, ...],
                           args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
                           ) -> Any:
        raise NotImplementedError

    def __enter__(self) -> TorchFunctionMode:
        _state.modes.append(self)
        engaged.count += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        _state.modes.pop()
        engaged.count -= 1

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchFunctionMode:
        return cls(*args, **kwargs).__enter__()


class DisableTorchFunctionSubclass:
    """Inside the block, Tensor subclasses' ``__torch_function__`` is not consulted."""

    def __enter__(self) -> None:
        _state.subclass_off += 1

    def __exit__(self, *exc: Any) -> None:
        _state.subclass_off -= 1


class DisableTorchFunction:
    """Inside the block, neither subclasses nor modes see public calls."""

    def __enter__(self) -> None:
        _state.all_off += 1

    def __exit__(self, *exc: Any) -> None:
        _state.all_off -= 1


def _overrides(cls: type) -> bool:
    from .tensor import Tensor

    if cls is Tensor or not issubclass(cls, Tensor):
        return False
    return getattr(cls, "__torch_function__", None) is not _DISABLED


def _overloaded(relevant: list[Any]) -> list[Any]:
    """One argument per overriding type, subclasses before their bases, else in order."""
    found: list[Any] = []
    types: list[type] = []
    for a in relevant:
        t = type(a)
        if t in types or not _overrides(t):
            continue
        index = len(found)
        for i, seen in enumerate(types):
            if issubclass(t, seen):
                index = i
                break
        found.insert(index, a)
        types.insert(index, t)
    return found


def _relevant(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The tensors among the arguments, one level into lists and tuples (``cat([a, b])``)."""
    from .tensor import Tensor

    out = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(x for x in a if isinstance(x, Tensor))
    return out


def has_torch_function(relevant_args: Any) -> bool:
    """torch.overrides.has_torch_function: a mode is active or an argument overrides."""
    st = _state
    if st.all_off:
        return False
    if st.modes:
        return True
    if st.subclass_off:
        return False
    return bool(_overloaded(list(relevant_args)))


def handle_torch_function(public_api: Callable[..., Any], relevant_args: Any, *args: Any,
                          **kwargs: Any) -> Any:
    """torch.overrides.handle_torch_function: call the modes and overriding types."""
    return _dispatch(public_api, list(relevant_args), args, kwargs)


def _dispatch(func: Callable[..., Any], relevant: list[Any], args: tuple[Any, ...],
              kwargs: dict[str, Any]) -> Any:
    st = _state
    overloaded = [] if st.subclass_off else _overloaded(relevant)
    types = tuple(type(a) for a in overloaded)
    if st.modes:
        mode = st.modes.pop()
        try:
            ret = mode.__torch_function__(func, types, args, kwargs)
        finally:
            st.modes.append(mode)
        if ret is not NotImplemented:
            return ret
    for a in overloaded:
        ret = type(a).__torch_function__(func, types, args, kwargs)
        if ret is not NotImplemented:
            return ret
    name = getattr(func, "__qualname__", getattr(func, "__name__", repr(func)))
    raise TypeError(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {[type(a) for a in overloaded]}")


_DISABLED = disabled_torch_function_impl


# ---------------------------------------------------------------------- public names

class _Spec:
    """How to give a mode the call as the user made it: positional arguments equal to
    their defaults are dropped from the end, keyword-only ones at their default left out."""

    __slots__ = ("impl", "positional", "defaults", "kwonly")

    def __init__(self, impl: Callable[..., Any], positional: int, defaults: tuple[Any, ...],
                 kwonly: dict[str, Any]):
        self.impl = impl
        self.positional = positional
        self.defaults = defaults
        self.kwonly = kwonly


def handle(func: Callable[..., Any], spec: _Spec, args: tuple[Any, ...],
           kwargs: dict[str, Any]) -> Any:
    """A public call while something could override it: the modes and overriding types,
    or ``spec.impl`` when none of them is there (run with the check off, so that an impl
    that does the check itself does not come back here)."""
    st = _state
    relevant = _relevant(args, kwargs)
    if st.all_off or (not st.modes and (st.subclass_off or not _overloaded(relevant))):
        st.all_off += 1
        try:
            return spec.impl(*args, **kwargs)
        finally:
            st.all_off -= 1
    n = len(args)
    first_default = spec.positional - len(spec.defaults)
    while first_default <= n - 1 < spec.positional and \
            args[n - 1] is spec.defaults[n - 1 - first_default]:
        n -= 1
    kwargs = {k: v for k, v in kwargs.items()
              if k not in spec.kwonly or v is not spec.kwonly[k]}
    return _dispatch(func, relevant, args[:n], kwargs)


_PUBLIC_ATTR = "__ember_public__"


def is_public(fn: Any) -> bool:
    return getattr(fn, _PUBLIC_ATTR, False)


def spec_of(fn: Callable[..., Any]) -> _Spec:
    """How ``handle`` calls ``fn`` and gives modes its arguments."""
    sig = inspect.signature(fn)
    positional = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    defaults = tuple(p.default for p in positional if p.default is not p.empty)
    kwonly = {p.name: p.default for p in sig.parameters.values()
              if p.kind is p.KEYWORD_ONLY and p.default is not p.empty}
    return _Spec(fn, len(positional), defaults, kwonly)


def overriding() -> bool:
    """Whether a public call must go to ``handle`` (once ``engaged.count`` is nonzero):
    not while ``handle`` itself runs the implementation."""
    return not _state.all_off


def checks_itself(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``fn`` as doing the torch-function check in its own first line, as the
    generated elementwise functions do
    (``if engaged.count and overriding(): return handle(...)``)."""
    setattr(fn, _PUBLIC_ATTR, True)
    return fn


def public(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` behind the torch-function check (a wrapper whose check costs one attribute
    read). A wrapper with ``fn``'s signature passes the arguments on without repacking;
    where ``fn`` takes ``*args`` or ``**kwargs``, whose forwarding with keywords would
    build a dict on every call, the wrapper passes the caller's arguments as they came."""
    if is_public(fn):
        return fn
    sig = inspect.signature(fn)
    name = fn.__name__ if fn.__name__.isidentifier() else "public"
    namespace: dict[str, Any] = {"__name__": getattr(fn, "__module__", __name__),
                                 "_ember_impl": fn, "_ember_engaged": engaged,
                                 "_ember_handle": handle, "_ember_spec": spec_of(fn)}
    kinds = {p.kind for p in sig.parameters.values()}
    if inspect.Parameter.VAR_POSITIONAL in kinds or inspect.Parameter.VAR_KEYWORD in kinds:
        source = (f"def {name}(*args, **kwargs):\n"
                  f"    if _ember_engaged.count:\n"
                  f"        return _ember_handle(_ember_self, _ember_spec, args, kwargs)\n"
                  f"    return _ember_impl(*args, **kwargs)\n")
    else:
        source = _mirroring(name, sig, namespace)
    exec(source, namespace)  # noqa: S102 - generated from the signature above only
    # the wrapper names itself so, not by ``name``, which a parameter may shadow (F.pad's)
    wrapper = namespace["_ember_self"] = namespace[name]
    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
    wrapper.__doc__ = fn.__doc__
    wrapper.__module__ = getattr(fn, "__module__", __name__)
    wrapper.__wrapped__ = fn
    setattr(wrapper, _PUBLIC_ATTR, True)
    return wrapper  # type: ignore[no-any-return]


def _mirroring(name: str, sig: inspect.Signature, namespace: dict[str, Any]) -> str:
    """The source of a wrapper with the signature ``sig`` (whose defaults it puts in
    ``namespace``), passing its arguments on as they are named."""
    params, call, packed_args, packed_kwargs = [], [], [], []
    star = False
    for i, p in enumerate(sig.parameters.values()):
        default = ""
        if p.default is not p.empty:
            namespace[f"_ember_d{i}"] = p.default
            default = f"=_ember_d{i}"
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            params.append(f"{p.name}{default}")
            call.append(p.name)
            packed_args.append(p.name)
        else:
            if not star:
                params.append("*")
                star = True
            params.append(f"{p.name}{default}")
            call.append(f"{p.name}={p.name}")
            packed_kwargs.append(f"{p.name!r}: {p.name}")
    return (f"def {name}({', '.join(params)}):\n"
            f"    if _ember_engaged.count:\n"
            f"        return _ember_handle(_ember_self, _ember_spec, ({', '.join(packed_args)}"
            f"{',' if packed_args else ''}), {{{', '.join(packed_kwargs)}}})\n"
            f"    return _ember_impl({', '.join(call)})\n")


def subclass_defined(cls: type) -> None:
    """Called for each new Tensor subclass: one that overrides engages the check."""
    if _overrides(cls):
        engaged.count += 1
