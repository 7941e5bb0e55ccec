"""Formula cases of the recurrent layer primitives (``lstm_layer``, ``gru_layer``,
``rnn_layer``) in the structural table's format: each layer's output and final states,
flattened into one tensor, against torch's composition of the same layer (tensor-core's
``recurrent_oracle``), over dense and packed rows in both directions."""

from __future__ import annotations

from typing import Any

from autograd_oracle import E  # noqa: F401  (puts tensor-core's tests on the path)
from recurrent_oracle import layer, operand_shapes


def _case(name: str, kind: str, sizes: tuple[int, ...], reverse: bool = False, proj: int = 0,
          bias: bool = True) -> tuple[str, Any, list[tuple[int, ...]], dict[str, Any]]:
    shapes = operand_shapes(kind, sum(sizes), sizes[0], 2, 3, proj, bias)

    def fn(m: Any, *tensors: Any) -> Any:
        given = iter(tensors)
        operands = [None if s is None else next(given) for s in shapes]
        return m.cat([r.reshape(-1) for r in layer(m, kind, operands, sizes, reverse)])

    return name, fn, [s for s in shapes if s is not None], {}


CASES = [
    _case("lstm_layer", "lstm", (2, 2, 2)),
    _case("lstm_layer_packed_reverse_projected", "lstm", (2, 2, 1), reverse=True, proj=2),
    _case("gru_layer", "gru", (2, 2, 1), bias=False),
    _case("gru_layer_reverse", "gru", (2, 2), reverse=True),
    _case("rnn_layer_tanh", "rnn_tanh", (2, 1, 1), reverse=True),
    _case("rnn_layer_relu", "rnn_relu", (2, 2), bias=False),
]
