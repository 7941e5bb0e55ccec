"""``gradcheck`` and ``gradgradcheck``: formulas against central finite differences.

As torch's: for each differentiable input and output, the Jacobian from backward
(one vector-Jacobian product per output element) must match the numerical Jacobian
``(f(x + eps) - f(x - eps)) / 2 eps``, entry by entry within ``atol + rtol * |numerical|``.
Use float64 inputs: eps=1e-6 is too small a step for lower precisions.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import ember.core as E
from ember.core.tensor import Tensor

from .differentiate import grad

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck``/``gradgradcheck`` when a check fails."""


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _float_outputs(outputs: tuple[Any, ...]) -> list[Tensor]:
    return [o for o in outputs if isinstance(o, Tensor) and o.dtype.category >= 2]


def _values(func: Callable[..., Any], inputs: tuple[Any, ...]) -> list[np.ndarray]:
    # grad mode stays on: gradgradcheck's function differentiates inside
    outs = _float_outputs(_as_tuple(func(*inputs)))
    return [np.array(o.detach(), dtype=np.float64).ravel() for o in outs]


def _numerical(func: Callable[..., Any], inputs: tuple[Any, ...], diff: list[Tensor],
               eps: float) -> list[list[np.ndarray]]:
    """``J[out][inp]`` of shape (input numel, output numel), by central differences."""
    sizes = [v.size for v in _values(func, inputs)]
    jac = [[np.zeros((t._data.size, n)) for t in diff] for n in sizes]
    for k, t in enumerate(diff):
        data = t._data  # perturbed in place, as torch does through .data
        for e, idx in enumerate(np.ndindex(data.shape)):
            orig = data[idx].item()
            data[idx] = orig + eps
            plus = _values(func, inputs)
            data[idx] = orig - eps
            minus = _values(func, inputs)
            data[idx] = orig
            for j, (p, m) in enumerate(zip(plus, minus)):
                jac[j][k][e] = (p - m) / (2 * eps)
    return jac


def _analytical(outputs: list[Tensor], diff: list[Tensor]) -> list[list[np.ndarray]]:
    """``J[out][inp]`` of shape (input numel, output numel), one backward per output entry."""
    jac = []
    for o in outputs:
        n = o._data.size
        per_input = [np.zeros((t._data.size, n)) for t in diff]
        if o._requires_grad:
            for e in range(n):
                # row-major, so that reshape(-1) is a view to write the seed through
                seed = E.zeros_like(o, memory_format=E.contiguous_format)
                seed._data.reshape(-1)[e] = 1
                grads = grad(o, diff, seed, retain_graph=True, allow_unused=True)
                for k, g in enumerate(grads):
                    if g is not None:
                        per_input[k][:, e] = np.array(g, dtype=np.float64).ravel()
        jac.append(per_input)
    return jac


def _show(matrix: np.ndarray) -> str:
    return repr(E.tensor(matrix, dtype=E.float64))


def _fail(message: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(message)
    return False


def gradcheck(func: Callable[..., Any], inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_grad_dtypes: bool = False, fast_mode: bool = False) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against finite differences.

    Returns True when they match; otherwise raises GradcheckError (or returns False with
    ``raise_exception=False``). ``fast_mode`` compares one random projection ``v^T J u``
    instead of whole Jacobians; ``nondet_tol`` bounds how much two backward runs may differ.
    """
    tupled = _as_tuple(inputs)
    diff = [t for t in tupled if isinstance(t, Tensor) and t._requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    for i, t in enumerate(tupled):
        if isinstance(t, Tensor) and t._requires_grad and t.dtype not in (E.float64,
                                                                          E.complex128):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          "point or complex. This check will likely fail if all the inputs are "
                          "not of double precision floating point or complex. ", stacklevel=2)
    outputs = _float_outputs(_as_tuple(func(*tupled)))
    if check_grad_dtypes:
        for o in outputs:
            if o._requires_grad:
                for t, g in zip(diff, grad(o, diff, E.ones_like(o), retain_graph=True,
                                           allow_unused=True)):
                    if g is not None and g.dtype is not t.dtype:
                        return _fail("Gradient has dtype mismatch", raise_exception)
    if fast_mode:
        return _fast_check(func, tupled, diff, outputs, eps, atol, rtol, raise_exception)
    numerical = _numerical(func, tupled, diff, eps)
    analytical = _analytical(outputs, diff)
    for j, (num_j, ana_j) in enumerate(zip(numerical, analytical)):
        for k, (num, ana) in enumerate(zip(num_j, ana_j)):
            if not np.allclose(ana, num, rtol, atol):
                return _fail(f"Jacobian mismatch for output {j} with respect to input {k},\n"
                             f"numerical:{_show(num)}\nanalytical:{_show(ana)}\n",
                             raise_exception)
    again = _analytical(outputs, diff)
    for ana_j, again_j in zip(analytical, again):
        for ana, rerun in zip(ana_j, again_j):
            if not np.allclose(ana, rerun, 0.0, nondet_tol):
                return _fail("Backward is not reentrant, i.e., running backward with same input "
                             "and grad_output multiple times gives different values, although "
                             "analytical gradient matches numerical gradient.The tolerance for "
                             f"nondeterminism was {nondet_tol}.", raise_exception)
    return True


def _fast_check(func: Callable[..., Any], inputs: tuple[Any, ...], diff: list[Tensor],
                outputs: list[Tensor], eps: float, atol: float, rtol: float,
                raise_exception: bool) -> bool:
    """Compare ``v^T J u`` for random ``u`` (an input) and ``v`` (an output), pair by pair."""
    rng = np.random.default_rng(0)
    vs = [rng.uniform(-1, 1, o._data.shape) for o in outputs]
    for k, t in enumerate(diff):
        u = rng.uniform(-1, 1, t._data.shape)
        saved = t._data.copy()
        t._data[...] = saved + eps * u
        plus = _values(func, inputs)
        t._data[...] = saved - eps * u
        minus = _values(func, inputs)
        t._data[...] = saved
        for j, (o, v) in enumerate(zip(outputs, vs)):
            numerical = float(((plus[j] - minus[j]) / (2 * eps)) @ v.ravel())
            analytical = 0.0
            if o._requires_grad:
                (g,) = grad(o, t, E.tensor(v, dtype=o.dtype), retain_graph=True,
                            allow_unused=True)
                if g is not None:
                    analytical = float(np.array(g, dtype=np.float64).ravel() @ u.ravel())
            if not np.isclose(analytical, numerical, rtol, atol):
                return _fail(f"Jacobian mismatch for output {j} with respect to input {k},\n"
                             f"numerical:{numerical}\nanalytical:{analytical}\n(fast mode: "
                             "v^T J u for random u and v)", raise_exception)
    return True


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_grad_dtypes: bool = False, fast_mode: bool = False) -> bool:
    """Check second derivatives: ``gradcheck`` of the vector-Jacobian product of ``func``.

    ``grad_outputs`` (random in [-1, 1) when not given) are differentiated too.
    """
    tupled = _as_tuple(inputs)
    outputs = _float_outputs(_as_tuple(func(*tupled)))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        seeds: Sequence[Any] = [E.tensor(rng.uniform(-1, 1, o._data.shape), dtype=o.dtype,
                                         requires_grad=True) for o in outputs]
    else:
        seeds = _as_tuple(grad_outputs)
    n_seeds = len(seeds)

    def vjp(*args: Any) -> tuple[Tensor, ...]:
        input_args, seed_args = args[:-n_seeds], args[-n_seeds:]
        outs = _float_outputs(_as_tuple(func(*input_args)))
        wanted = [a for a in input_args if isinstance(a, Tensor) and a._requires_grad]
        pairs = [(o, s) for o, s in zip(outs, seed_args) if o._requires_grad]
        grads = grad([o for o, _ in pairs], wanted, [s for _, s in pairs], create_graph=True,
                     allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(vjp, tupled + tuple(seeds), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode)
