"""Random sampling: ``rand``, ``randn``, ``randint``, ``normal``, ``multinomial``... and the
in-place fills ``Tensor.uniform_``, ``normal_``, ``random_``...; they draw from the streams of
``random``'s generators through ``sampling_primitives``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import dtypes as _dt
from .device import array_module
from .dtypes import LIMITS, demangled_type_name, scalar_type_name
from .factory_args import _is_index, _like, _number, _sizes, finish, parse_size, target
from .ops.operands import (
    assign_inplace,
    broadcast_shape,
    not_implemented,
    overflow_error,
    record,
)
from .random import Generator, _stream
from .sampling_primitives import (
    _UNIFORM_BITS,
    BERNOULLI,
    NORMAL,
    POISSON,
    _bernoulli,
    _cauchy,
    _exponential,
    _geometric,
    _log_normal,
    _multinomial,
    _normal,
    _poisson,
    _randint,
    _randperm,
    _uniform,
)
from .tensor import Tensor, make

__all__ = [
    "rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm", "normal",
    "bernoulli", "multinomial", "poisson",
]


# ----------------------------------------------------------------------------- functions

def _record(op: Any, inputs: tuple[Any, ...], out: Tensor) -> Tensor:
    if any(isinstance(x, Tensor) and x._requires_grad for x in inputs):
        record(op, inputs, None, out)
    return out


def _need_float(kernel: str, dt: _dt.dtype, complex_ok: bool = True) -> None:
    if dt.category < 2 or (dt.category == 3 and not complex_ok):
        raise not_implemented(kernel, dt)


def rand(*size: Any, generator: Generator | None = None, out: Tensor | None = None,
         dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False,
         pin_memory: bool = False, **kwargs: Any) -> Tensor:
    """torch.rand: samples uniform on ``[0, 1)`` of the given size."""
    shape = _sizes("rand", size, kwargs)
    dt, d, xp = target(dtype, device)
    _need_float("check_uniform_bounds", dt)
    return finish(_uniform(_stream(generator, d), shape, dt), dt, d, xp, requires_grad, out,
                  "rand")


def randn(*size: Any, generator: Generator | None = None, out: Tensor | None = None,
          dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False,
          pin_memory: bool = False, **kwargs: Any) -> Tensor:
    """torch.randn: samples from the standard normal distribution of the given size."""
    shape = _sizes("randn", size, kwargs)
    dt, d, xp = target(dtype, device)
    _need_float("normal_kernel_cpu", dt)
    return finish(_normal(_stream(generator, d), shape, dt), dt, d, xp, requires_grad, out,
                  "randn")


def rand_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None,
              layout: Any = None, device: Any = None, requires_grad: bool = False,
              memory_format: Any = None) -> Tensor:
    """torch.rand_like: ``rand`` with ``input``'s shape, dtype and device unless given."""
    shape, dt, d, xp = _like("rand_like", input, dtype, device)
    _need_float("check_uniform_bounds", dt)
    return finish(_uniform(_stream(generator, d), shape, dt), dt, d, xp, requires_grad)


def randn_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None,
               layout: Any = None, device: Any = None, requires_grad: bool = False,
               memory_format: Any = None) -> Tensor:
    """torch.randn_like: ``randn`` with ``input``'s shape, dtype and device unless given."""
    shape, dt, d, xp = _like("randn_like", input, dtype, device)
    _need_float("normal_kernel_cpu", dt)
    return finish(_normal(_stream(generator, d), shape, dt), dt, d, xp, requires_grad)


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
        raise not_implemented("random_kernel_cpu", dt)
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
    dt, d, xp = target(dtype, device, _dt.int64)
    _check_int_range(dt, low, high)
    return finish(_randint(_stream(generator, d), shape, dt, low, high), dt, d, xp,
                  requires_grad, out, "randint")


def randint_like(input: Tensor, low: Any = 0, high: Any = None, *,
                 generator: Generator | None = None, dtype: Any = None, layout: Any = None,
                 device: Any = None, requires_grad: bool = False,
                 memory_format: Any = None) -> Tensor:
    """torch.randint_like(input, low=0, high): ``randint`` with ``input``'s shape and dtype."""
    if high is None:
        low, high = 0, low
    low, high = _int_arg("randint_like", "low", low), _int_arg("randint_like", "high", high)
    shape, dt, d, xp = _like("randint_like", input, dtype, device)
    _check_int_range(dt, low, high)
    return finish(_randint(_stream(generator, d), shape, dt, low, high), dt, d, xp,
                  requires_grad)


def randperm(n: int, *, generator: Generator | None = None, out: Tensor | None = None,
             dtype: Any = None, layout: Any = None, device: Any = None,
             requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """torch.randperm: a random permutation of ``0 .. n-1`` (int64 unless ``dtype``)."""
    n = _int_arg("randperm", "n", n)
    parse_size((n,), "randperm")
    dt, d, xp = target(dtype, device, _dt.int64)
    if dt.category == 1 and n - 1 > LIMITS[dt][1]:
        raise overflow_error(dt)
    return finish(_randperm(_stream(generator, d), n, dt), dt, d, xp, requires_grad, out,
                  "randperm")


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *,
           generator: Generator | None = None, out: Tensor | None = None, dtype: Any = None,
           layout: Any = None, device: Any = None, pin_memory: bool = False,
           requires_grad: bool = False) -> Tensor:
    """torch.normal: samples with the given mean and std.

    ``normal(mean: Tensor, std: Tensor)``, ``normal(mean: Tensor, std=1.0)`` and
    ``normal(mean: float, std: Tensor)`` broadcast; ``normal(mean, std, size)`` takes floats.
    """
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if size is not None or dtype is not None:
            raise TypeError("normal(): size= and dtype= only go with float mean and std")
        ref = mean if isinstance(mean, Tensor) else std
        dt, d = ref.dtype, ref.device
        _need_float("normal_kernel_cpu", dt)
        mean_v = mean._host() if isinstance(mean, Tensor) else _number("normal", "mean", mean)
        if isinstance(std, Tensor):
            std_v = std._host()
            if (std_v < 0).any():
                raise RuntimeError("normal expects all elements of std >= 0.0")
        else:
            std_v = _number("normal", "std", std)
            _check_std(std_v)
        shape = broadcast_shape("normal", np.shape(mean_v), np.shape(std_v))
        res = finish(_normal(_stream(generator, d), shape, dt, mean_v, std_v), dt, d,
                     array_module(d), False, out, "normal")
        return _record(NORMAL, (mean, std), res)
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments - got (float, "
                        "float): a size is needed when mean and std are numbers")
    mean, std = _number("normal", "mean", mean), _number("normal", "std", std)
    _check_std(std)
    shape = parse_size((size,), "normal")
    dt, d, xp = target(dtype, device)
    _need_float("normal_kernel_cpu", dt)
    return finish(_normal(_stream(generator, d), shape, dt, float(mean), float(std)), dt, d, xp,
                  requires_grad, out, "normal")


def _check_std(std: float) -> None:
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def _check_p(p: Any) -> float:
    p = float(_number("bernoulli", "p", p))
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return p


def _probabilities(p: Tensor) -> np.ndarray:
    _need_float("bernoulli_tensor_cpu_p_", p.dtype, complex_ok=False)
    values = p._host()
    if not ((values >= 0) & (values <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    return values


def bernoulli(input: Tensor, p: Any = None, *, generator: Generator | None = None,
              out: Tensor | None = None) -> Tensor:
    """torch.bernoulli: 1 with probability ``input`` (or ``p``), else 0; ``input``'s dtype."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    prob = _probabilities(input) if p is None else _check_p(p)
    d = input.device
    res = finish(_bernoulli(_stream(generator, d), prob, input._data.shape, input.dtype),
                 input.dtype, d, array_module(d), False, out, "bernoulli")
    return _record(BERNOULLI, (input,), res)


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
    k = input._data.shape[-1]
    if not replacement and num_samples > k:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    probs = input._host().astype(np.float64).reshape(-1, k)
    if not (np.isfinite(probs) & (probs >= 0)).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if probs.shape[0] and (probs.sum(axis=1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    d = input.device
    picks = _multinomial(_stream(generator, d), probs, num_samples, bool(replacement))
    shape = (*input._data.shape[:-1], num_samples)
    return finish(picks.reshape(shape).astype(np.int64, copy=False), _dt.int64, d, array_module(d),
                  False, out, "multinomial")


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """torch.poisson: a Poisson sample for each rate in ``input`` (same dtype)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    _need_float("poisson_cpu", input.dtype, complex_ok=False)
    rates = input._host()
    if (rates < 0).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    d = input.device
    res = finish(_poisson(_stream(generator, d), rates, input.dtype), input.dtype, d,
                 array_module(d), False)
    return _record(POISSON, (input,), res)


# ----------------------------------------------------------------------------- in place

def _fill(self: Tensor, host: np.ndarray, name: str) -> Tensor:
    d = self.device
    return assign_inplace(self, make(host if d.type == "cpu" else d.xp.asarray(host),
                                     self.dtype, d), name)


def _need_real_float(what: str, name: str, dt: _dt.dtype) -> None:
    if dt.category != 2:
        spelled = demangled_type_name(dt) if name == "cauchy_" else scalar_type_name(dt)
        raise RuntimeError(f"{what} distribution is a continuous probability distribution. "
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
    rng = _stream(generator, self.device)
    return _fill(self, _uniform(rng, self._data.shape, dt, low, high), "uniform_")


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
    _need_float("normal_kernel_cpu", self.dtype)
    mean, std = float(_number("normal_", "mean", mean)), float(_number("normal_", "std", std))
    _check_std(std)
    rng = _stream(generator, self.device)
    return _fill(self, _normal(rng, self._data.shape, self.dtype, mean, std), "normal_")


def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Generator | None = None) -> Tensor:
    """Tensor.bernoulli_(p=0.5): fill with 1 with probability ``p`` (a float or a tensor
    broadcastable to self), else 0."""
    if isinstance(p, Tensor):
        prob: Any = _probabilities(p)
        shape = self._data.shape
        if prob.ndim > len(shape) or any(
                a != b and a != 1 for a, b in zip(prob.shape[::-1], shape[::-1])):
            raise RuntimeError(f"bernoulli_: p of shape {list(prob.shape)} cannot be expanded "
                               f"to the shape {list(self._data.shape)} of self")
    else:
        prob = _check_p(p)
    rng = _stream(generator, self.device)
    return _fill(self, _bernoulli(rng, prob, self._data.shape, self.dtype), "bernoulli_")


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
        if dt.category == 3:
            raise not_implemented("random_kernel_cpu", dt)
        if dt.category == 2:
            high = 2 ** (53 if dt is _dt.float64 else 24 if dt is _dt.float32
                         else _UNIFORM_BITS[dt.name]) + 1
        else:
            high = LIMITS[dt][1] + 1
    high = _int_arg("random_", "to", high)
    _check_int_range(dt, low, high)
    rng = _stream(generator, self.device)
    return _fill(self, _randint(rng, self._data.shape, dt, low, high), "random_")


def exponential_(self: Tensor, lambd: float = 1.0, *,
                 generator: Generator | None = None) -> Tensor:
    """Tensor.exponential_(lambd=1): fill with samples of density ``lambd * exp(-lambd x)``."""
    _need_real_float("Exponential", "exponential_", self.dtype)
    lambd = float(_number("exponential_", "lambd", lambd))
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    rng = _stream(generator, self.device)
    return _fill(self, _exponential(rng, self._data.shape, self.dtype, lambd), "exponential_")


def geometric_(self: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """Tensor.geometric_(p): fill with the number of trials up to the first success."""
    if self.dtype.category in (0, 3):
        raise not_implemented("geometric_cpu", self.dtype)
    p = float(_number("geometric_", "p", p))
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    rng = _stream(generator, self.device)
    return _fill(self, _geometric(rng, self._data.shape, self.dtype, p), "geometric_")


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    """Tensor.cauchy_(median=0, sigma=1): fill with Cauchy samples."""
    _need_real_float("Cauchy", "cauchy_", self.dtype)
    median = float(_number("cauchy_", "median", median))
    sigma = float(_number("cauchy_", "sigma", sigma))
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    rng = _stream(generator, self.device)
    return _fill(self, _cauchy(rng, self._data.shape, self.dtype, median, sigma), "cauchy_")


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *,
                generator: Generator | None = None) -> Tensor:
    """Tensor.log_normal_(mean=1, std=2): fill with ``exp`` of normal(mean, std) samples."""
    _need_float("log_normal_cpu", self.dtype, complex_ok=False)
    mean, std = float(_number("log_normal_", "mean", mean)), float(_number("log_normal_", "std",
                                                                             std))
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    rng = _stream(generator, self.device)
    return _fill(self, _log_normal(rng, self._data.shape, self.dtype, mean, std), "log_normal_")


# sampling's names are exported through __all__ (ember.core re-exports it), not FUNCTIONS.
FUNCTIONS: list[str] = []

METHODS = {
    "uniform_": uniform_, "normal_": normal_, "bernoulli_": bernoulli_, "random_": random_,
    "exponential_": exponential_, "geometric_": geometric_, "cauchy_": cauchy_,
    "log_normal_": log_normal_, "bernoulli": bernoulli, "multinomial": multinomial,
}
