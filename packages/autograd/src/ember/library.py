"""``ember.library``: users' own primitives, through the same door as Ember's.

``custom_op("mylib::numpy_sin", mutates_args=())`` turns a function of tensors into a
registered primitive: its tensor arguments are the operands, the others its params, so
it is dispatched (autograd, modes, meta) like a built-in op. ``register_fake`` gives its
meta rule (a function of meta tensors returning tensors like the result),
``register_autograd`` its backward (torch's ``backward(ctx, *grads)`` with
``setup_context(ctx, inputs, output)``), ``register_kernel`` a kernel for one device.
``Library(ns, "IMPL").impl(name, fn, "CPU")`` replaces a built-in primitive's kernel for
one device, and ``Library(ns, "DEF").define(schema)`` declares a new op by its schema.
``ember.library.ops.mylib.numpy_sin`` (``ember.ops``) is the registered op.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any

from ember.core.dispatch import REGISTRY, Op, dispatch, grad_mode, register
from ember.core.dispatch_modes import PrimitiveNames
from ember.core.tensor import Tensor, bump_version, make

from .autograd.formula import Formula
from .autograd.graph import modified_error
from .autograd.recording import set_formula

__all__ = ["custom_op", "CustomOpDef", "register_fake", "register_autograd", "register_kernel",
           "Library", "impl", "define", "opcheck", "ops", "get_ctx"]

_DEVICE_KEYS = {"cpu": "cpu", "cuda": "cuda", "meta": "meta"}


# ---------------------------------------------------------------------- calling convention

class _Signature:
    """Which arguments of an op are operands (tensors, or lists of them) and which are
    params, by name, in declaration order."""

    def __init__(self, names: Sequence[str], tensor_kinds: dict[str, str],
                 defaults: dict[str, Any], returns_many: bool):
        self.names = list(names)
        self.tensor_kinds = tensor_kinds  # name -> "one", "optional" or "list"
        self.defaults = defaults
        self.returns_many = returns_many

    @classmethod
    def of(cls, fn: Callable[..., Any]) -> _Signature:
        sig = inspect.signature(fn)
        kinds, defaults = {}, {}
        for p in sig.parameters.values():
            kind = _tensor_kind(p.annotation)
            if kind is not None:
                kinds[p.name] = kind
            if p.default is not p.empty:
                defaults[p.name] = p.default
        returns = str(sig.return_annotation)
        return cls(list(sig.parameters), kinds, defaults,
                   returns.startswith(("tuple", "Tuple", "typing.Tuple", "list", "List")))

    def split(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
              ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``(operands, params)`` of a call: tensor arguments flattened in order (a list
        argument contributes its tensors and its length to the params)."""
        if len(args) > len(self.names):
            raise TypeError(f"{name}() takes {len(self.names)} arguments but {len(args)} were "
                            "given")
        bound = dict(self.defaults)
        bound.update(zip(self.names, args))
        bound.update(kwargs)
        missing = [n for n in self.names if n not in bound]
        if missing:
            raise TypeError(f"{name}() missing required argument {missing[0]!r}")
        operands: list[Any] = []
        params: dict[str, Any] = {}
        for n in self.names:
            value = bound[n]
            kind = self.tensor_kinds.get(n)
            if kind == "list":
                params[f"{n}#len"] = len(value)
                operands.extend(value)
            elif kind is not None:
                operands.append(value)
            else:
                params[n] = value
        return tuple(operands), params

    def join(self, operands: Sequence[Any], params: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments of the user's function from an op call's operands and
        params (the inverse of ``split``)."""
        out: dict[str, Any] = {}
        rest = list(operands)
        for n in self.names:
            kind = self.tensor_kinds.get(n)
            if kind == "list":
                k = params[f"{n}#len"]
                out[n], rest = rest[:k], rest[k:]
            elif kind is not None:
                out[n] = rest.pop(0)
            else:
                out[n] = params[n]
        return out


def _tensor_kind(annotation: Any) -> str | None:
    text = annotation if isinstance(annotation, str) else getattr(
        annotation, "__name__", str(annotation))
    text = str(text).replace("typing.", "").replace("ember.core.tensor.", "")
    if re.fullmatch(r"(Optional\[Tensor\]|Tensor \| None|None \| Tensor)", text):
        return "optional"
    if re.fullmatch(r"(list|List|Sequence)\[Tensor\]", text):
        return "list"
    if text == "Tensor" or annotation is Tensor:
        return "one"
    return None


def _as_tensor(x: Any) -> Any:
    """A backend array seen as a Tensor (the user's functions take tensors)."""
    if x is None or isinstance(x, (int, float, bool, complex)):
        return x
    from ember.core.dtypes import from_numpy_dtype
    from ember.core.meta import MetaArray

    if x.__class__ is MetaArray:
        from ember.core.device import META

        return make(x, from_numpy_dtype(x.dtype), META)
    from ember.core.device import CPU, device

    dev = CPU if type(x).__module__.startswith("numpy") else device("cuda", x.device.id)
    return make(x, from_numpy_dtype(x.dtype), dev)


def _arrays(result: Any) -> Any:
    if isinstance(result, Tensor):
        return result._data
    if isinstance(result, (tuple, list)):
        return tuple(_arrays(r) for r in result)
    return result


def _kernel(signature: _Signature, fn: Callable[..., Any]) -> Callable[..., Any]:
    """An array-level kernel from a function of tensors: it runs beneath autograd, so
    the ops it calls are not recorded (as torch's kernels are not)."""

    def kernel(*arrays: Any, **params: Any) -> Any:
        kwargs = signature.join([_as_tensor(a) for a in arrays], params)
        previous = grad_mode.enabled
        grad_mode.enabled = False
        try:
            return _arrays(fn(**kwargs))
        finally:
            grad_mode.enabled = previous

    return kernel


# ---------------------------------------------------------------------- custom ops

class CustomOpDef:
    """What ``custom_op`` returns: callable as the function, and the place to register
    its fake (meta) rule, autograd formula and per-device kernels."""

    def __init__(self, name: str, fn: Callable[..., Any], mutates_args: Sequence[str] | str,
                 signature: _Signature | None = None):
        if "::" not in name:
            raise ValueError(f"custom_op: expected a name 'namespace::op', got {name!r}")
        if name in REGISTRY:
            raise RuntimeError(f"custom_op: an op named {name!r} is already registered")
        self.name = name
        self._fn = fn
        self._signature = signature or _Signature.of(fn)
        mutated = ([] if mutates_args == () else
                   list(self._signature.tensor_kinds) if mutates_args == "unknown"
                   else list(mutates_args))
        self._mutated = [n for n in mutated if n in self._signature.tensor_kinds]
        self._op = register(name, _kernel(self._signature, fn), None, "custom",
                            differentiable=True,
                            arg_names=tuple(n for n in self._signature.names
                                            if n in self._signature.tensor_kinds))
        self.__name__ = name.split("::")[1]
        self.__doc__ = fn.__doc__

    @property
    def op(self) -> Op:
        """The registered primitive (``ember.ops.<namespace>.<name>``)."""
        return self._op

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        operands, params = self._signature.split(self.name, args, kwargs)
        out = dispatch(self._op, operands, params or None)
        if self._mutated:
            kwargs_all = self._signature.join(operands, params or {})
            for n in self._mutated:
                target = kwargs_all[n]
                for t in target if isinstance(target, (list, tuple)) else [target]:
                    if isinstance(t, Tensor):
                        bump_version(t)
        return out

    def register_fake(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """The meta rule: ``fn`` gets meta tensors (and the other arguments) and returns
        tensors with the result's shape, dtype and strides (``empty_like`` and friends)."""
        self._op.meta = _kernel(self._signature, fn)
        self._op._resolve()
        return fn

    def register_kernel(self, device_types: str | Sequence[str],
                        fn: Callable[..., Any] | None = None) -> Any:
        """A kernel for these device types (a function of tensors, as the op's own)."""

        def install(f: Callable[..., Any]) -> Callable[..., Any]:
            for d in [device_types] if isinstance(device_types, str) else device_types:
                self._op.register_kernel(_DEVICE_KEYS[d.split(":")[0].lower()],
                                         _kernel(self._signature, f))
            return f

        return install if fn is None else install(fn)

    def register_autograd(self, backward: Callable[..., Any], *,
                          setup_context: Callable[..., Any] | None = None) -> None:
        """torch's ``backward(ctx, *grads)``, with ``setup_context(ctx, inputs, output)``
        run when the op is recorded (what it saves on ``ctx`` is what the node keeps)."""
        set_formula(self._op, _custom_formula(self, backward, setup_context))


def custom_op(name: str, fn: Callable[..., Any] | None = None, /, *,
              mutates_args: Sequence[str] | str, device_types: Any = None,
              schema: str | None = None) -> Any:
    """torch.library.custom_op: ``fn`` (type-annotated: ``Tensor`` arguments are the
    operands) as a registered primitive named ``name`` ("namespace::op")."""

    def make_op(f: Callable[..., Any]) -> CustomOpDef:
        signature = _parse_schema(schema)[1] if schema is not None else None
        op = CustomOpDef(name, f, mutates_args, signature)
        if device_types is not None:
            REGISTRY[name].kernels.clear()
            op.register_kernel(device_types, f)
        _custom[name] = op
        return op

    return make_op if fn is None else make_op(fn)


_custom: dict[str, CustomOpDef] = {}


def _lookup(target: Any) -> CustomOpDef:
    if isinstance(target, CustomOpDef):
        return target
    name = target.name if isinstance(target, Op) else str(target)
    if name not in _custom:
        raise RuntimeError(f"{name!r} is not an op defined with custom_op or Library.define")
    return _custom[name]


def register_fake(op: Any, fn: Callable[..., Any] | None = None) -> Any:
    """torch.library.register_fake(op, fn): the meta rule of a custom op."""
    target = _lookup(op)
    return target.register_fake if fn is None else target.register_fake(fn)


def register_autograd(op: Any, backward: Callable[..., Any], *,
                      setup_context: Callable[..., Any] | None = None) -> None:
    """torch.library.register_autograd: the backward of a custom op."""
    _lookup(op).register_autograd(backward, setup_context=setup_context)


def register_kernel(op: Any, device_types: str | Sequence[str],
                    fn: Callable[..., Any] | None = None) -> Any:
    """torch.library.register_kernel: a custom op's kernel for some device types."""
    return _lookup(op).register_kernel(device_types, fn)


class _Ctx:
    """The ``ctx`` of a custom op's ``setup_context`` and ``backward``."""

    def __init__(self, needs_input_grad: tuple[bool, ...]):
        self.needs_input_grad = needs_input_grad
        self._saved: tuple[Any, ...] = ()
        self._versions: tuple[Any, ...] = ()

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        self._saved = tensors
        self._versions = tuple(t._version if isinstance(t, Tensor) else None for t in tensors)

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        for t, v in zip(self._saved, self._versions):
            if isinstance(t, Tensor) and t._version != v:
                raise modified_error(t, v, t.grad_fn)
        return self._saved

    def mark_non_differentiable(self, *args: Tensor) -> None:
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


def _custom_formula(op: CustomOpDef, backward: Callable[..., Any],
                    setup_context: Callable[..., Any] | None) -> Formula:
    signature = op._signature

    def setup(node: Any, operands: tuple[Any, ...], outputs: Any) -> None:
        ctx = _Ctx(tuple(e is not None for e in node.next))
        if setup_context is not None:
            inputs = tuple(signature.join(operands, node.params or {}).values())
            setup_context(ctx, inputs, outputs)
        node._extra().metadata["ctx"] = ctx

    def vjp(node: Any, grads: Any) -> tuple[Any, ...]:
        ctx = node.extra.metadata["ctx"]
        grads = (grads,) if node.n_out == 1 else tuple(grads)
        result = backward(ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        # backward returns one gradient per argument of the op; the node has one edge
        # per tensor operand (list arguments: one per tensor)
        flat: list[Any] = []
        params = node.params or {}
        for n, g in zip(signature.names, result):
            kind = signature.tensor_kinds.get(n)
            if kind == "list":
                flat.extend(g if g is not None else [None] * params[f"{n}#len"])
            elif kind is not None:
                flat.append(g)
        return tuple(flat)

    ns, name = op.name.split("::")
    # the user's backward is written in torch's convention: the engine conjugates nothing
    return Formula(vjp, (), False, name=f"GeneratedBackwardFor_{ns}_{name}_defaultBackward",
                   setup=setup, conjugates=True)


# ---------------------------------------------------------------------- Library

_SCHEMA = re.compile(r"^\s*([\w.]+)\s*\((.*)\)\s*->\s*(.+)$")


def _parse_schema(schema: str) -> tuple[str, _Signature]:
    """``"name(Tensor x, float alpha=1.0) -> Tensor"`` as a name and a signature."""
    m = _SCHEMA.match(schema)
    if m is None:
        raise RuntimeError(f"could not parse the schema {schema!r}")
    name, args, returns = m.groups()
    names, kinds, defaults = [], {}, {}
    for part in filter(None, (a.strip() for a in args.split(","))):
        if part == "*":
            continue
        decl, _, default = part.partition("=")
        type_name, arg = decl.split()
        names.append(arg)
        if type_name.startswith("Tensor"):
            kinds[arg] = ("list" if type_name.startswith("Tensor[]") else
                          "optional" if type_name.endswith("?") else "one")
        if default:
            defaults[arg] = _literal(default.strip())
    return name, _Signature(names, kinds, defaults, returns.strip().startswith("("))


def _literal(text: str) -> Any:
    return {"True": True, "False": False, "None": None}.get(text) if text in (
        "True", "False", "None") else eval(text, {"__builtins__": {}})  # noqa: S307


class Library:
    """torch.library.Library(ns, kind): ``"DEF"`` or ``"FRAGMENT"`` to define ops in
    namespace ``ns`` (``define`` then ``impl``), ``"IMPL"`` to give existing ops kernels.
    ``_destroy()`` takes back what it registered."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = ""):
        if kind not in ("DEF", "IMPL", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._restore: list[tuple[Op, str, Any]] = []
        self._defined: list[str] = []

    def define(self, schema: str, alias_analysis: str = "", *, tags: Any = ()) -> str:
        """Declare ``ns::name`` from its schema; give it kernels with ``impl``."""
        if self.kind == "IMPL":
            raise RuntimeError("define() is not allowed on an IMPL Library")
        name, signature = _parse_schema(schema)
        qualified = f"{self.ns}::{name}"

        def undefined(*args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError(f"{qualified}: no kernel registered (use impl)")

        op = CustomOpDef(qualified, undefined, (), signature)
        _custom[qualified] = op
        self._defined.append(qualified)
        return name

    def impl(self, op_name: Any, fn: Callable[..., Any], dispatch_key: str = "",
             *, with_keyset: bool = False) -> None:
        """``fn`` (a function of tensors) as the kernel of ``op_name`` for
        ``dispatch_key``: "CPU", "CUDA", "Meta", or "CompositeExplicitAutograd" /
        "CompositeImplicitAutograd" (every device)."""
        key = (dispatch_key or self.dispatch_key or "CompositeImplicitAutograd").lower()
        name = op_name.name if isinstance(op_name, Op) else str(op_name).split(".")[0]
        qualified = f"{self.ns}::{name}"
        if qualified in _custom:
            target = _custom[qualified]
            op, signature = target.op, target._signature
        else:
            if name not in REGISTRY or self.ns not in ("aten", "ember"):
                raise RuntimeError(f"impl: no op {qualified!r} to give a kernel to")
            op = REGISTRY[name]
            signature = _Signature(list(_positional_names(op, fn)), {}, {}, False)
            signature.tensor_kinds = {n: "one" for n in signature.names}
        devices = ["cpu", "cuda", "meta"] if key.startswith("composite") else \
            [_DEVICE_KEYS[key]]
        for d in devices:
            self._restore.append((op, d, op.kernels.get(d)))
            op.register_kernel(d, _kernel(signature, fn) if qualified in _custom
                               else _builtin_kernel(fn))

    def _destroy(self) -> None:
        for op, device_type, previous in reversed(self._restore):
            op.register_kernel(device_type, previous)
        self._restore = []
        for name in self._defined:
            REGISTRY.pop(name, None)
            _custom.pop(name, None)
        self._defined = []


def _positional_names(op: Op, fn: Callable[..., Any]) -> list[str]:
    return [p.name for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _builtin_kernel(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A kernel for a built-in primitive from a function of tensors: it gets the
    primitive's operands as tensors and its params as keywords."""

    def kernel(*arrays: Any, **params: Any) -> Any:
        previous = grad_mode.enabled
        grad_mode.enabled = False
        try:
            return _arrays(fn(*[_as_tensor(a) for a in arrays], **params))
        finally:
            grad_mode.enabled = previous

    return kernel


def define(qualname: str, schema: str, *, lib: Library | None = None, tags: Any = ()) -> None:
    """torch.library.define("ns::name", "(Tensor x) -> Tensor")."""
    ns, name = qualname.split("::")
    (lib or Library(ns, "FRAGMENT")).define(f"{name}{schema}")


def impl(qualname: str, types: str | Sequence[str], func: Callable[..., Any] | None = None,
         *, lib: Library | None = None) -> Any:
    """torch.library.impl("ns::name", "cpu", fn): a kernel of a custom op."""

    def install(f: Callable[..., Any]) -> Callable[..., Any]:
        register_kernel(qualname, types, f)
        return f

    return install if func is None else install(func)


def get_ctx() -> Any:
    raise NotImplementedError("get_ctx: data-dependent output shapes are not supported by "
                              "Ember's fake tensors")


# ---------------------------------------------------------------------- opcheck, ops

def opcheck(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None, *,
            test_utils: Any = None, raise_exception: bool = True) -> dict[str, str]:
    """torch.library.opcheck: the op runs through the dispatcher, and its fake rule gives
    the real result's shapes, dtypes and strides."""
    target = _lookup(op)
    kwargs = kwargs or {}
    results: dict[str, str] = {}
    try:
        with PrimitiveNames() as seen:
            real = target(*args, **kwargs)
        if target.name not in seen.names:
            raise AssertionError(f"{target.name} was not dispatched")
        results["test_dispatch"] = "SUCCESS"
        fake = target(*[a.to("meta") if isinstance(a, Tensor) else a for a in args], **kwargs)
        for r, f in zip(_flat(real), _flat(fake)):
            if (tuple(r.shape), r.dtype, r.stride()) != (tuple(f.shape), f.dtype, f.stride()):
                raise AssertionError(f"{target.name}: the fake rule gives {tuple(f.shape)} "
                                     f"{f.dtype} {f.stride()}, the op {tuple(r.shape)} "
                                     f"{r.dtype} {r.stride()}")
        results["test_faketensor"] = "SUCCESS"
    except Exception as exc:
        if raise_exception:
            raise
        results.setdefault("test_dispatch", repr(exc))
        results.setdefault("test_faketensor", repr(exc))
    return results


def _flat(x: Any) -> list[Tensor]:
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for item in x for t in _flat(item)]
    return []


class _Namespace:
    """``ops.<ns>``: the ops of one namespace by name (``aten`` and ``ember``: the
    built-in primitives)."""

    def __init__(self, ns: str):
        self._ns = ns

    def __getattr__(self, name: str) -> Any:
        qualified = f"{self._ns}::{name}"
        if qualified in _custom:
            return _custom[qualified].op
        if self._ns in ("aten", "ember") and name in REGISTRY:
            return REGISTRY[name]
        raise AttributeError(f"'_OpNamespace' '{self._ns}' object has no attribute '{name}'")


class _Ops:
    """``ember.ops``: namespaces of registered ops."""

    def __getattr__(self, ns: str) -> _Namespace:
        if ns.startswith("__"):
            raise AttributeError(ns)
        return _Namespace(ns)


ops = _Ops()
