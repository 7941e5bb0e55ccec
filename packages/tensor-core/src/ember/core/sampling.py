"""Random sampling: ``rand``, ``randn``, ``randint``, ``normal``, ``multinomial``... and the
in-place fills ``Tensor.uniform_``, ``normal_``, ``random_``...

Each dispatches a primitive of ``samplers`` with its generator's state as the
first operand and stores the state that comes back in the generator (on the meta device
it comes back unchanged). The in-place fills draw out of place and write the values back
(``copying.assign_inplace``). Arguments are checked here, before anything is drawn;
checks that read the values of tensor operands run in the primitives.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from . import dtypes as _dt
from .device import device
from .dispatch import Op
from .dtypes import LIMITS, demangled_type_name, scalar_type_name
from .factory_args import _is_index, _like, _number, _sizes, finish, parse_size, target
from .ops.copying import assign_inplace, check_writable, recorded_writes_refused_first
from .ops.operands import broadcast_shape, common_device, not_implemented, overflow_error
from .random import Generator, generator_for
from .samplers import (
    _UNIFORM_BITS,
    BERNOULLI,
    CAUCHY,
    EXPONENTIAL,
    GEOMETRIC,
    LOG_NORMAL,
    MULTINOMIAL,
    NORMAL,
    POISSON,
    RANDINT,
    RANDPERM,
    UNIFORM,
)
from .tensor import Tensor

__all__ = [
    "rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm", "normal",
    "bernoulli", "multinomial", "poisson",
]


# ----------------------------------------------------------------------------- functions

def _draw(op: Op, generator: Generator | None, d: device, operands: tuple[Any, ...],
          params: dict[str, Any]) -> Tensor:
    """The values of ``op`` on device ``d``, drawn from ``generator`` (or ``d``'s default),
    whose state then moves on."""
    gen = generator_for(generator, d)
    params["device"] = d
    values, gen._state = op.door((gen._state, *operands), params)
    return values  # type: ignore[no-any-return]


def _laid_out(params: dict[str, Any], strides: tuple[int, ...] | None) -> dict[str, Any]:
    """``params`` of a ``*_like`` sampler, with the layout of its input."""
    if strides is not None:
        params["strides"] = strides
    return params


def _need_float(kernel: str, dt: _dt.dtype, complex_ok: bool = True,
                shape: tuple[int, ...] | None = None) -> None:
    """torch's dtype refusal of ``kernel``. With ``shape``: the kernel is one of torch's
    elementwise loops, which choose their dtype only when there is an element to write,
    so an empty result of any dtype is no error."""
    category = dt.category
    if category == 2 or category == 3 and complex_ok:
        return  # (a float dtype: the hot path)
    refusal = _float_refusal(kernel, dt, complex_ok)
    if refusal is not None and not (shape is not None and 0 in shape):
        raise refusal


def _float_refusal(kernel: str, dt: _dt.dtype, complex_ok: bool = True
                   ) -> NotImplementedError | None:
    """torch's error where ``kernel`` has no loop for ``dt`` (None where it has one)."""
    if dt.category < 2 or (dt.category == 3 and not complex_ok):
        return not_implemented(kernel, dt)
    return None


def rand(*size: Any, generator: Generator | None = None, out: Tensor | None = None,
         dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False,
         pin_memory: bool = False, **kwargs: Any) -> Tensor:
    """torch.rand: samples uniform on ``[0, 1)`` of the given size."""
    shape = _sizes("rand", size, kwargs)
    dt, d = target(dtype, device)
    _need_float("check_uniform_bounds", dt)
    values = _draw(UNIFORM, generator, d, (), {"size": shape, "dtype": dt})
    return finish(values, requires_grad, out, "rand")


def randn(*size: Any, generator: Generator | None = None, out: Tensor | None = None,
          dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False,
          pin_memory: bool = False, **kwargs: Any) -> Tensor:
    """torch.randn: samples from the standard normal distribution of the given size."""
    shape = _sizes("randn", size, kwargs)
    dt, d = target(dtype, device)
    _need_float("normal_kernel_cpu", dt, shape=shape)
    values = _draw(NORMAL, generator, d, (0.0, 1.0), {"size": shape, "dtype": dt})
    return finish(values, requires_grad, out, "randn")


def rand_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None,
              layout: Any = None, device: Any = None, requires_grad: bool = False,
              memory_format: Any = None) -> Tensor:
    """torch.rand_like: ``rand`` with ``input``'s shape, dtype, device and layout unless
    given."""
    shape, dt, d, strides = _like("rand_like", input, dtype, device, memory_format)
    _need_float("check_uniform_bounds", dt)
    params = _laid_out({"size": shape, "dtype": dt}, strides)
    return finish(_draw(UNIFORM, generator, d, (), params), requires_grad)


def randn_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None,
               layout: Any = None, device: Any = None, requires_grad: bool = False,
               memory_format: Any = None) -> Tensor:
    """torch.randn_like: ``randn`` with ``input``'s shape, dtype, device and layout unless
    given."""
    shape, dt, d, strides = _like("randn_like", input, dtype, device, memory_format)
    _need_float("normal_kernel_cpu", dt, shape=shape)
    params = _laid_out({"size": shape, "dtype": dt}, strides)
    return finish(_draw(NORMAL, generator, d, (0.0, 1.0), params), requires_grad)


def _int_arg(op: str, name: str, value: Any) -> int:
    if type(value) is int:
        return value
    if not _is_index(value):
        raise TypeError(f"{op}(): argument '{name}' must be int, not {type(value).__name__}")
    return int(value)


def _check_int_range(dt: _dt.dtype, low: int, high: int) -> None:
    """torch's bounds checks for drawing integers in ``[low, high)`` into dtype ``dt``."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    if dt.category == 3:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    if dt.category == 2:
        digits = 53 if dt is _dt.float64 else 24 if dt is _dt.float32 else \
            _UNIFORM_BITS[dt.name]
        for name, v in (("from", low), ("to - 1", high - 1)):
            if not -2**digits <= v <= 2**digits:
                warnings.warn(f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to "
                              f"precision limitations {demangled_type_name(dt)} can support "
                              "discrete uniform distribution only within this range.",
                              UserWarning, stacklevel=3)
        return
    lo, hi = LIMITS[dt]
    if not lo <= low <= hi:
        raise RuntimeError(f"from is out of bounds for {demangled_type_name(dt)}")
    if not lo <= high - 1 <= hi:
        raise RuntimeError(f"to - 1 is out of bounds for {demangled_type_name(dt)}")


def randint(low: Any = 0, high: Any = None, size: Any = None, *,
            generator: Generator | None = None, out: Tensor | None = None, dtype: Any = None,
            layout: Any = None, device: Any = None, requires_grad: bool = False,
            pin_memory: bool = False) -> Tensor:
    """torch.randint(low=0, high, size): integers uniform on ``[low, high)`` (int64)."""
    if size is None:  # randint(high, size)
        if high is None:
            raise TypeError("randint() missing required arguments 'high' and 'size'")
        low, high, size = 0, low, high
    elif high is None:  # randint(high, size=...)
        low, high = 0, low
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not "
                        f"{type(size).__name__}")
    low, high = _int_arg("randint", "low", low), _int_arg("randint", "high", high)
    shape = parse_size((size,), "randint")
    dt, d = target(dtype, device, _dt.int64)
    _check_int_range(dt, low, high)
    values = _draw(RANDINT, generator, d, (), {"size": shape, "dtype": dt, "low": low,
                                               "high": high})
    return finish(values, requires_grad, out, "randint")


def randint_like(input: Tensor, low: Any = 0, high: Any = None, *,
                 generator: Generator | None = None, dtype: Any = None, layout: Any = None,
                 device: Any = None, requires_grad: bool = False,
                 memory_format: Any = None) -> Tensor:
    """torch.randint_like(input, low=0, high): ``randint`` with ``input``'s shape, dtype,
    device and layout unless given."""
    if high is None:
        low, high = 0, low
    low, high = _int_arg("randint_like", "low", low), _int_arg("randint_like", "high", high)
    shape, dt, d, strides = _like("randint_like", input, dtype, device, memory_format)
    _check_int_range(dt, low, high)
    params = _laid_out({"size": shape, "dtype": dt, "low": low, "high": high}, strides)
    return finish(_draw(RANDINT, generator, d, (), params), requires_grad)


def randperm(n: int, *, generator: Generator | None = None, out: Tensor | None = None,
             dtype: Any = None, layout: Any = None, device: Any = None,
             requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """torch.randperm: a random permutation of ``0 .. n-1`` (int64 unless ``dtype``)."""
    n = _int_arg("randperm", "n", n)
    parse_size((n,), "randperm")
    dt, d = target(dtype, device, _dt.int64)
    if dt.category == 1 and n - 1 > LIMITS[dt][1]:
        raise overflow_error(dt)
    values = _draw(RANDPERM, generator, d, (), {"n": n, "dtype": dt})
    return finish(values, requires_grad, out, "randperm")


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *,
           generator: Generator | None = None, out: Tensor | None = None, dtype: Any = None,
           layout: Any = None, device: Any = None, pin_memory: bool = False,
           requires_grad: bool = False) -> Tensor:
    """torch.normal: samples with the given mean and std.

    ``normal(mean: Tensor, std: Tensor)``, ``normal(mean: Tensor, std=1.0)`` and
    ``normal(mean: float, std: Tensor)`` broadcast; ``normal(mean, std, size)`` takes floats.
    """
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        return _tensor_normal(mean, std, size, dtype, generator, out)
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments - got (float, "
                        "float): a size is needed when mean and std are numbers")
    mean, std = _number("normal", "mean", mean), _number("normal", "std", std)
    _check_std(std)
    shape = parse_size((size,), "normal")
    dt, d = target(dtype, device)
    _need_float("normal_kernel_cpu", dt, shape=shape)
    values = _draw(NORMAL, generator, d, (float(mean), float(std)), {"size": shape, "dtype": dt})
    return finish(values, requires_grad, out, "normal")


def _tensor_normal(mean: Any, std: Any, size: Any, dtype: Any, generator: Generator | None,
                   out: Tensor | None) -> Tensor:
    """``normal`` with a tensor mean or std: the broadcast shape, the first tensor's dtype."""
    if size is not None or dtype is not None:
        raise TypeError("normal(): size= and dtype= only go with float mean and std")
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    dt = tensors[0].dtype
    d = common_device("normal", *tensors)
    if not isinstance(mean, Tensor):
        mean = _number("normal", "mean", mean)
    if not isinstance(std, Tensor):
        std = _number("normal", "std", std)
        _check_std(std)
    shape = broadcast_shape("normal", _shape(mean), _shape(std))
    _need_float("normal_kernel_cpu", dt, shape=shape)
    if len(tensors) == 2 and dt.category < 2 and std.dtype.category >= 2:
        # torch scales an empty draw of mean's dtype by std in place
        raise RuntimeError(f"result type {scalar_type_name(std.dtype)} can't be cast to the "
                           f"desired output type {scalar_type_name(dt)}")
    values = _draw(NORMAL, generator, d, (mean, std), {"size": shape, "dtype": dt})
    return finish(values, False, out, "normal")


def _shape(x: Any) -> tuple[int, ...]:
    return x._data.shape if isinstance(x, Tensor) else ()


def _check_std(std: float) -> None:
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def _check_p(p: Any) -> float:
    p = float(_number("bernoulli", "p", p))
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return p


def bernoulli(input: Tensor, p: Any = None, *, generator: Generator | None = None,
              out: Tensor | None = None) -> Tensor:
    """torch.bernoulli: 1 with probability ``input`` (or ``p``), else 0; ``input``'s dtype."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if p is None:
        _need_float("bernoulli_tensor_cpu_p_", input.dtype, complex_ok=False,
                    shape=input._data.shape)
        prob: Any = input
    else:
        prob = _check_p(p)
    params = {"size": input._data.shape, "dtype": input.dtype}
    return finish(_draw(BERNOULLI, generator, input.device, (prob,), params), False, out,
                  "bernoulli")


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None, out: Tensor | None = None) -> Tensor:
    """torch.multinomial: ``num_samples`` category indices drawn from each row of weights."""
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    num_samples = _int_arg("multinomial", "num_samples", num_samples)
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if input.dtype.category != 2:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{scalar_type_name(input.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > input._data.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    params = {"num_samples": num_samples, "replacement": bool(replacement)}
    return finish(_draw(MULTINOMIAL, generator, input.device, (input,), params), False, out,
                  "multinomial")


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """torch.poisson: a Poisson sample for each rate in ``input`` (same dtype)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    _need_float("poisson_cpu", input.dtype, complex_ok=False)
    return _draw(POISSON, generator, input.device, (input,), {})


# ----------------------------------------------------------------------------- in place

def _fill(self: Tensor, name: str, op: Op, generator: Generator | None,
          operands: tuple[Any, ...] = (), refusal: Exception | None = None,
          **params: Any) -> Tensor:
    """``self`` filled with the values ``op`` draws for its shape and dtype. ``refusal``:
    the error of torch's elementwise loop for self's dtype, raised after the check of the
    written memory and only where there is an element to write (the loop chooses its dtype
    then)."""
    check_writable(name, self)  # before drawing: a refused write leaves the generator alone
    if refusal is not None and self._data.size:
        raise refusal
    params.update(size=self._data.shape, dtype=self.dtype)
    return assign_inplace(self, _draw(op, generator, self.device, operands, params), name)


def _continuous_refusal(what: str, name: str, dt: _dt.dtype) -> RuntimeError | None:
    """torch's error for a continuous distribution drawn into a dtype that is not a real
    floating one (None for one that is)."""
    if dt.category == 2:
        return None
    spelled = demangled_type_name(dt) if name == "cauchy_" else scalar_type_name(dt)
    return RuntimeError(f"{what} distribution is a continuous probability distribution. "
                        f"dtype must be a floating point but you specified {spelled}")


def uniform_(self: Tensor, *bounds: Any, generator: Generator | None = None,
             **named: Any) -> Tensor:
    """Tensor.uniform_(from=0, to=1): fill with samples uniform on ``[from, to)``."""
    low, high = _bounds("uniform_", bounds, named, 0.0, 1.0)
    dt = self.dtype
    _need_float("check_uniform_bounds", dt)
    low, high = float(_number("uniform_", "from", low)), float(_number("uniform_", "to", high))
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={low:g} > to={high:g}")
    limit = LIMITS[dt.to_real()][1]
    for name, v in (("from", low), ("to", high)):
        if not -limit <= v <= limit:
            raise RuntimeError(f"{name} is out of bounds for {demangled_type_name(dt.to_real())}")
    return _fill(self, "uniform_", UNIFORM, generator, low=low, high=high)


def _bounds(name: str, args: tuple[Any, ...], named: dict[str, Any], first: Any,
            second: Any) -> tuple[Any, Any]:
    """Positional or ``from=``/``to=`` bounds (``from`` cannot be a Python parameter)."""
    if len(args) > 2 or set(named) - {"from", "to"}:
        raise TypeError(f"{name}() takes at most 2 bounds: from, to")
    values = list(args) + [first, second][len(args):]
    values[0] = named.get("from", values[0])
    values[1] = named.get("to", values[1])
    return values[0], values[1]


def normal_(self: Tensor, mean: Any = 0.0, std: Any = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    """Tensor.normal_(mean=0, std=1): fill with normal samples."""
    mean, std = float(_number("normal_", "mean", mean)), float(_number("normal_", "std", std))
    _check_std(std)
    _need_float("normal_kernel_cpu", self.dtype, shape=self._data.shape)
    return _fill(self, "normal_", NORMAL, generator, (mean, std))


def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Generator | None = None) -> Tensor:
    """Tensor.bernoulli_(p=0.5): fill with 1 with probability ``p`` (a float or a tensor
    broadcastable to self), else 0. torch checks nothing of a tensor ``p`` where self is
    empty, and checks self's dtype, then p's shape, then p's dtype where it is not."""
    if not isinstance(p, Tensor):
        return _fill(self, "bernoulli_", BERNOULLI, generator, (_check_p(p),),
                     _float_refusal("bernoulli_scalar_cpu_", self.dtype, complex_ok=False)
                     if self.dtype.category == 3 else None)
    check_writable("bernoulli_", self)
    if not self._data.size:
        return _fill(self, "bernoulli_", BERNOULLI, generator, (0.0,))  # p is not read
    if self.dtype.category == 3:
        raise not_implemented("bernoulli_tensor_cpu_self_", self.dtype)
    shape, p_shape = self._data.shape, p._data.shape
    if len(p_shape) > len(shape) or any(
            a != b and a != 1 for a, b in zip(p_shape[::-1], shape[::-1])):
        raise RuntimeError(f"bernoulli_: p of shape {list(p_shape)} cannot be expanded "
                           f"to the shape {list(shape)} of self")
    _need_float("bernoulli_tensor_cpu_p_", p.dtype, complex_ok=False)
    return _fill(self, "bernoulli_", BERNOULLI, generator, (p,))


def random_(self: Tensor, *bounds: Any, generator: Generator | None = None,
            **named: Any) -> Tensor:
    """Tensor.random_(from=0, to=None): fill with integers uniform on ``[from, to)``; with
    no ``to``, up to the dtype's largest value (``2**mantissa`` for floats)."""
    if len(bounds) == 1 and not named:
        low, high = 0, bounds[0]  # random_(to)
    else:
        low, high = _bounds("random_", bounds, named, 0, None)
    dt = self.dtype
    low = _int_arg("random_", "from", low)
    if high is None:
        if dt.category == 3:  # no bounds to check: torch's loop refuses an element
            return _fill(self, "random_", RANDINT, generator,
                         refusal=not_implemented("random_kernel_cpu", dt), low=low, high=low + 1)
        if dt.category == 2:
            high = 2 ** (53 if dt is _dt.float64 else 24 if dt is _dt.float32
                         else _UNIFORM_BITS[dt.name]) + 1
        else:
            high = LIMITS[dt][1] + 1
    high = _int_arg("random_", "to", high)
    _check_int_range(dt, low, high)
    return _fill(self, "random_", RANDINT, generator, low=low, high=high)


def exponential_(self: Tensor, lambd: float = 1.0, *,
                 generator: Generator | None = None) -> Tensor:
    """Tensor.exponential_(lambd=1): fill with samples of density ``lambd * exp(-lambd x)``."""
    lambd = float(_number("exponential_", "lambd", lambd))
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _fill(self, "exponential_", EXPONENTIAL, generator,
                 refusal=_continuous_refusal("Exponential", "exponential_", self.dtype),
                 lambd=lambd)


def geometric_(self: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """Tensor.geometric_(p): fill with the number of trials up to the first success."""
    p = float(_number("geometric_", "p", p))
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    dt = self.dtype
    refusal = not_implemented("geometric_cpu", dt) if dt.category in (0, 3) else None
    return _fill(self, "geometric_", GEOMETRIC, generator, refusal=refusal, p=p)


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    """Tensor.cauchy_(median=0, sigma=1): fill with Cauchy samples."""
    median = float(_number("cauchy_", "median", median))
    sigma = float(_number("cauchy_", "sigma", sigma))
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    refusal = _continuous_refusal("Cauchy", "cauchy_", self.dtype)
    if refusal is not None:  # torch checks it before its loop, even of an empty tensor
        raise refusal
    return _fill(self, "cauchy_", CAUCHY, generator, median=median, sigma=sigma)


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *,
                generator: Generator | None = None) -> Tensor:
    """Tensor.log_normal_(mean=1, std=2): fill with ``exp`` of normal(mean, std) samples."""
    mean = float(_number("log_normal_", "mean", mean))
    std = float(_number("log_normal_", "std", std))
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _fill(self, "log_normal_", LOG_NORMAL, generator,
                 refusal=_float_refusal("log_normal_cpu", self.dtype, complex_ok=False),
                 mean=mean, std=std)


# sampling's names are exported through __all__ (ember.core re-exports it), not FUNCTIONS.
FUNCTIONS: list[str] = []

# autograd records the fills (zero gradients): it refuses leaves before their checks
_FILLS: dict[str, Callable[..., Tensor]] = {
    "uniform_": uniform_, "normal_": normal_, "bernoulli_": bernoulli_, "random_": random_,
    "exponential_": exponential_, "geometric_": geometric_, "cauchy_": cauchy_,
    "log_normal_": log_normal_}
METHODS = {name: recorded_writes_refused_first(fill) for name, fill in _FILLS.items()}
METHODS.update({"bernoulli": bernoulli, "multinomial": multinomial})
