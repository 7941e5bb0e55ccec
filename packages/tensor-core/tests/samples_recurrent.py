"""Dispatch-table samples of recurrent.py: LSTM (with and without projections), GRU and RNN
(tanh, relu) layers over dense and packed rows in both directions, without biases, in
float64 and bfloat16, and their fused backwards (against torch's composition of the same
layer and its autograd), some gradients masked or the output's gradient absent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from dispatch_oracle import make
from recurrent_oracle import layer, operand_shapes, torch_layer

from ember.core.ops import recurrent

Sample = Callable[[Any, str], Any]

_FORWARD = {"lstm": recurrent.LSTM_LAYER, "gru": recurrent.GRU_LAYER,
            "rnn_tanh": recurrent.RNN_LAYER, "rnn_relu": recurrent.RNN_LAYER}
_BACKWARD = {"lstm": recurrent.LSTM_LAYER_BACKWARD, "gru": recurrent.GRU_LAYER_BACKWARD,
             "rnn_tanh": recurrent.RNN_LAYER_BACKWARD, "rnn_relu": recurrent.RNN_LAYER_BACKWARD}


def _operands(m: Any, d: str, kind: str, sizes: tuple[int, ...], dtype: str = "float32",
              **kw: Any) -> list[Any]:
    shapes = operand_shapes(kind, sum(sizes), sizes[0], 3, 4, **kw)
    return [None if s is None else make(m, d, s, dtype, seed=i, low=-1.0, high=1.0)
            for i, s in enumerate(shapes)]


def _params(kind: str, sizes: tuple[int, ...], reverse: bool) -> dict[str, Any]:
    params: dict[str, Any] = {"batch_sizes": sizes, "reverse": reverse}
    if kind.startswith("rnn"):
        params["nonlinearity"] = kind[4:]
    return params


def _forward(kind: str, sizes: tuple[int, ...], reverse: bool = False, **kw: Any) -> Sample:
    return lambda m, d: layer(m, kind, _operands(m, d, kind, sizes, **kw), sizes, reverse)


# each gradient the backward gives: the operand it belongs to (the bias: b_ih's)
_GRADS = {"lstm": (0, 1, 2, 3, 4, 5, 7), "gru": (0, 1, 2, 3, 4, 5), "rnn_tanh": (0, 1, 2, 3, 4),
          "rnn_relu": (0, 1, 2, 3, 4)}


def _backward(kind: str, sizes: tuple[int, ...], reverse: bool = False,
              mask: tuple[bool, ...] | None = None, output_grad: bool = True,
              **kw: Any) -> Sample:
    def sample(m: Any, d: str) -> Any:
        ops = _operands(m, d, kind, sizes, "float64", **kw)
        mask_ = mask or (True,) * len(_GRADS[kind])
        params = _params(kind, sizes, reverse)
        if m is torch:
            for o in ops:
                if o is not None:
                    o.requires_grad_(True)
            results = torch_layer(kind, ops, sizes, reverse)
        else:
            results = _FORWARD[kind](*ops, **params)
        grads = [make(m, d, tuple(r.shape), "float64", seed=20 + i)
                 for i, r in enumerate(results[:3 if kind == "lstm" else 2])]
        if m is torch:
            used = [(r, g) for i, (r, g) in enumerate(zip(results, grads))
                    if i or output_grad]
            wanted = [ops[i] for i, w in zip(_GRADS[kind], mask_) if w and ops[i] is not None]
            found = iter(torch.autograd.grad([r for r, _ in used], wanted,
                                             [g for _, g in used], allow_unused=True))
            # row-major, as torch's fused layer backward (mkldnn_rnn_layer_backward) gives
            # its gradients whatever its operands' layouts; autograd's follow the operands'
            return tuple(next(found).contiguous() if w and ops[i] is not None else None
                         for i, w in zip(_GRADS[kind], mask_))
        gy = grads[0] if output_grad else None
        if kind == "lstm":
            operands = (gy, grads[1], grads[2], ops[0], ops[3], ops[4], ops[7], results[3])
        else:
            operands = (gy, grads[1], ops[0], ops[2], ops[3], results[2])
        return _BACKWARD[kind](*operands, **params, output_mask=mask_)

    return sample


_PACKED = (3, 2, 2, 1)

SAMPLES: dict[str, list[Sample]] = {
    "lstm_layer": [
        _forward("lstm", (2, 2, 2)),
        _forward("lstm", _PACKED, reverse=True, proj=2),
        _forward("lstm", (1, 1), bias=False, dtype="float64"),
        _forward("lstm", (2, 2), dtype="bfloat16"),
    ],
    "gru_layer": [
        _forward("gru", (2, 2, 2), reverse=True),
        _forward("gru", _PACKED, bias=False),
        _forward("gru", (2, 1), dtype="bfloat16"),
    ],
    "rnn_layer": [
        _forward("rnn_tanh", (2, 2, 2)),
        _forward("rnn_relu", _PACKED, reverse=True),
        _forward("rnn_tanh", (3,), bias=False, dtype="float64"),
    ],
    "lstm_layer_backward": [
        _backward("lstm", (2, 2, 2)),
        _backward("lstm", _PACKED, reverse=True, proj=2),
        _backward("lstm", _PACKED, mask=(True, False, True, False, True, False, False),
                  output_grad=False),
    ],
    "gru_layer_backward": [
        _backward("gru", _PACKED, reverse=True),
        _backward("gru", (2, 2), mask=(False, True, True, False, False, False),
                  output_grad=False, bias=False),
    ],
    "rnn_layer_backward": [
        _backward("rnn_tanh", _PACKED),
        _backward("rnn_relu", (2, 2, 2), reverse=True, mask=(True, True, False, True, False)),
    ],
}
