"""Dispatch-table samples of the activations (activations.py): gelu in both modes, silu and
its in-place form, and their fused backward kernels (and sigmoid's and tanh's), on row-major, transposed, 0-d and
empty inputs and the half types. torch has them as ``torch.nn.functional.gelu``/``silu``
and ``torch.ops.aten.gelu_backward``/``silu_backward``; Ember's module functions and
registered primitives stand beside them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from dispatch_oracle import make

from ember.core.dispatch import REGISTRY
from ember.core.ops import activations

Sample = Callable[[Any, str], Any]
B = (2, 3, 4)


def nn(m: Any) -> Any:
    """torch.nn.functional, or the module Ember's nn package takes gelu and silu from."""
    return torch.nn.functional if m is torch else activations


def kernel(m: Any, name: str) -> Any:
    """A backward kernel: torch's aten op, or Ember's primitive (called, it dispatches)."""
    return getattr(torch.ops.aten, name) if m is torch else REGISTRY[name]


def _gelu(approximate: str, shape: tuple[int, ...], dtype: str = "float32",
          transposed: bool = False) -> Sample:
    return lambda m, d: nn(m).gelu(make(m, d, shape, dtype, transposed=transposed),
                                   approximate=approximate)


def _gelu_backward(approximate: str, shape: tuple[int, ...], dtype: str = "float32",
                   transposed: bool = False) -> Sample:
    return lambda m, d: kernel(m, "gelu_backward")(
        make(m, d, shape, dtype, seed=1, transposed=transposed),
        make(m, d, shape, dtype, transposed=transposed), approximate=approximate)


def _output_backward(name: str) -> list[Sample]:
    """A backward from the forward's output (sigmoid's, tanh's): its gradient and output."""
    def pair(shape: tuple[int, ...], dtype: str = "float32", transposed: bool = False,
             row_major_grad: bool = False) -> Sample:
        return lambda m, d: kernel(m, name)(
            make(m, d, shape, dtype, seed=1, transposed=transposed and not row_major_grad),
            make(m, d, shape, dtype, transposed=transposed).tanh())

    return [pair((3, 4)), pair(B, transposed=True), pair(()), pair((0, 3)),
            pair((3, 4), "float16"), pair((3, 4), "bfloat16"), pair((3, 4), "float64"),
            pair((3, 4), "complex64"), pair((3, 4), transposed=True, row_major_grad=True)]


SAMPLES: dict[str, list[Sample]] = {
    "gelu": [
        _gelu("none", (3, 4)),
        _gelu("tanh", B, transposed=True),
        _gelu("none", ()),
        _gelu("tanh", (0, 3)),
        _gelu("none", (3, 4), "float16", transposed=True),
        _gelu("tanh", (3, 4), "bfloat16"),
        _gelu("none", B, "float64"),
    ],
    "silu": [
        lambda m, d: nn(m).silu(make(m, d, (3, 4))),
        lambda m, d: nn(m).silu(make(m, d, B, transposed=True)),
        lambda m, d: nn(m).silu(make(m, d, ())),
        lambda m, d: nn(m).silu(make(m, d, (0, 3))),
        lambda m, d: nn(m).silu(make(m, d, (3, 4), "bfloat16", transposed=True)),
        lambda m, d: nn(m).silu(make(m, d, (3, 4), "float64")),
        lambda m, d: nn(m).silu(make(m, d, (3, 4), "complex64")),
    ],
    "silu_": [
        lambda m, d: nn(m).silu(make(m, d, (3, 4)), inplace=True),
        lambda m, d: nn(m).silu(make(m, d, B, transposed=True), inplace=True),
        lambda m, d: nn(m).silu(make(m, d, (3, 4), "float16"), True),
    ],
    "gelu_backward": [
        _gelu_backward("none", (3, 4)),
        _gelu_backward("tanh", B, transposed=True),
        _gelu_backward("none", ()),
        _gelu_backward("none", (0, 3)),
        _gelu_backward("tanh", (3, 4), "bfloat16"),
        _gelu_backward("none", (3, 4), "float64", transposed=True),
        # a row-major gradient of a transposed input: laid out as both operands say
        lambda m, d: kernel(m, "gelu_backward")(make(m, d, (3, 4), seed=1),
                                                make(m, d, (3, 4), transposed=True)),
    ],
    "silu_backward": [
        lambda m, d: kernel(m, "silu_backward")(make(m, d, (3, 4), seed=1), make(m, d, (3, 4))),
        lambda m, d: kernel(m, "silu_backward")(make(m, d, B, seed=1, transposed=True),
                                                make(m, d, B, transposed=True)),
        lambda m, d: kernel(m, "silu_backward")(make(m, d, (), seed=1), make(m, d, ())),
        lambda m, d: kernel(m, "silu_backward")(make(m, d, (3, 4), "float16", seed=1),
                                                make(m, d, (3, 4), "float16")),
        lambda m, d: kernel(m, "silu_backward")(make(m, d, (3, 4), seed=1, transposed=True),
                                                make(m, d, (3, 4))),
    ],
    **{name: _output_backward(name) for name in ("sigmoid_backward", "tanh_backward")},
}
