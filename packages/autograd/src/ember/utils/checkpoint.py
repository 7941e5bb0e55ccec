"""``ember.utils.checkpoint``: trade compute for memory by recomputing a block in backward.

Both of torch's variants:

- reentrant (``use_reentrant=True``, torch's default when not given, with its warning):
  the block runs without recording; backward reruns it with recording on and
  backpropagates through the rerun (a nested backward).
- non-reentrant (``use_reentrant=False``): the block records its graph, but every tensor
  it would save is replaced by a ticket (``saved_tensors_hooks``); the first ticket
  redeemed in backward reruns the block once to recreate all of them, in order.

The RNG state is restored for the rerun, so dropout masks match (``preserve_rng_state``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import ember.core as E
from ember.autograd import Function, backward, enable_grad, no_grad
from ember.autograd.graph import saved_tensors_hooks
from ember.core.tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential"]


class _RngState:
    """The CPU generator's state at the block's first run, to rerun it identically."""

    def __init__(self, preserve: bool):
        self.state = E.get_rng_state() if preserve else None

    def __enter__(self) -> None:
        if self.state is not None:
            self.outer = E.get_rng_state()
            E.set_rng_state(self.state)

    def __exit__(self, *exc: Any) -> None:
        if self.state is not None:
            E.set_rng_state(self.outer)


class CheckpointFunction(Function):
    """The reentrant checkpoint: forward without a graph, backward by rerunning."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable[..., Any], preserve_rng_state: bool,
                *args: Any) -> Any:
        ctx.run_function = run_function
        ctx.rng = _RngState(preserve_rng_state)
        ctx.tensor_positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.others = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        args = list(ctx.others)
        detached = []
        for i, t in zip(ctx.tensor_positions, ctx.saved_tensors):
            d = t.detach()
            d.requires_grad_(t.requires_grad)
            args[i] = d
            detached.append(d)
        with ctx.rng, enable_grad():
            outputs = ctx.run_function(*args)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        backward([o for o, _ in pairs], [g for _, g in pairs])
        grads_in = iter(d.grad if isinstance(d, Tensor) else None for d in detached)
        return (None, None) + tuple(next(grads_in) if isinstance(a, Tensor) else None
                                    for a in args)


class _Recomputed:
    """The tensors the block saves, recreated on the first request in backward."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                 rng: _RngState):
        self.fn, self.args, self.kwargs, self.rng = fn, args, kwargs, rng
        self.values: list[Tensor] | None = None

    def get(self, index: int) -> Tensor:
        if self.values is None:
            values: list[Tensor] = []
            with self.rng, enable_grad(), saved_tensors_hooks(
                    lambda t: values.append(t.detach()), lambda _: None):
                self.fn(*self.args, **self.kwargs)
            self.values = values
        return self.values[index]


def _checkpoint_without_reentrant(function: Callable[..., Any], preserve_rng_state: bool,
                                  *args: Any, **kwargs: Any) -> Any:
    recomputed = _Recomputed(function, args, kwargs, _RngState(preserve_rng_state))
    count = [0]

    def pack(t: Tensor) -> int:
        count[0] += 1
        return count[0] - 1

    with saved_tensors_hooks(pack, recomputed.get):
        return function(*args, **kwargs)


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """Run ``function(*args)`` without keeping its intermediate tensors for backward; they
    are recomputed when backward needs them."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly. Starting in PyTorch 2.9, calling checkpoint without "
                      "use_reentrant will raise an exception. use_reentrant=False is "
                      "recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    if not use_reentrant:
        return _checkpoint_without_reentrant(function, preserve_rng_state, *args, **kwargs)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)
    return CheckpointFunction.apply(function, preserve_rng_state, *args)


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: bool | None
                          = None, **kwargs: Any) -> Any:
    """Checkpoint a sequence of functions (or a Sequential module) in ``segments`` chunks;
    the last chunk runs normally."""
    fns = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = len(fns) // segments
    end = -1

    def run(start: int, stop: int) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for fn in fns[start:stop + 1]:
                x = fn(x)
            return x

        return forward

    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(fns) - 1)(input)
