"""torch.nn's one-step recurrent cells: RNNCell, LSTMCell and GRUCell, each one step of the
recurrent layers' primitive (batched (N, input_size) or unbatched (input_size) inputs)."""

from __future__ import annotations

import math
from typing import Any

import ember.core as E
from ember.core.dtypes import scalar_type_name
from ember.core.ops.recurrent import GRU_LAYER, LSTM_LAYER, RNN_LAYER

from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def same_dtype(input: E.Tensor, weight: E.Tensor) -> None:
    """torch's error of a product of the input (or a state) with a weight of another
    dtype."""
    if input.dtype != weight.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{scalar_type_name(input.dtype)} and {scalar_type_name(weight.dtype)}")


class RNNCellBase(Module):
    """torch.nn.RNNCellBase: ``weight_ih`` (chunks * hidden_size, input_size),
    ``weight_hh`` (chunks * hidden_size, hidden_size) and the biases, all drawn from
    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gates = num_chunks * hidden_size
        self.weight_ih = Parameter(E.empty((gates, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(E.empty((gates, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(E.empty(gates, device=device, dtype=dtype))
            self.bias_hh = Parameter(E.empty(gates, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        """Every weight and bias drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, name: str, input: E.Tensor) -> tuple[E.Tensor, bool]:
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        batched = input.dim() == 2
        return (input if batched else input.unsqueeze(0)), batched

    def _state(self, input: E.Tensor, hx: E.Tensor | None, batched: bool) -> E.Tensor:
        if hx is None:
            return E.zeros(input.size(0), self.hidden_size, dtype=input.dtype,
                           device=input.device)
        return hx if batched else hx.unsqueeze(0)

    def _check(self, input: E.Tensor, *states: E.Tensor) -> None:
        """torch's checks of a cell's input and states, in its order."""
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} "
                               f"expected {self.input_size}")
        for label, hx in enumerate(states):
            if input.size(0) != hx.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden"
                                   f"{label} batch size {hx.size(0)}")
            if hx.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got "
                                   f"{hx.size(1)}, expected {self.hidden_size}")
        same_dtype(input, self.weight_ih)
        for hx in states:
            same_dtype(hx, self.weight_hh)

    def _one_step(self, input: E.Tensor) -> dict[str, Any]:
        return {"batch_sizes": (input.size(0),), "reverse": False}


def _checked_hidden(name: str, hx: E.Tensor | None) -> None:
    if hx is not None and hx.dim() not in (1, 2):
        raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")


class RNNCell(RNNCellBase):
    """torch.nn.RNNCell: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: E.Tensor, hx: E.Tensor | None = None) -> E.Tensor:
        input, batched = self._batched("RNNCell", input)
        _checked_hidden("RNNCell", hx)
        h = self._state(input, hx, batched)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        self._check(input, h)
        _, h, _ = RNN_LAYER(input, h, self.weight_ih, self.weight_hh, self.bias_ih,
                            self.bias_hh, nonlinearity=self.nonlinearity,
                            **self._one_step(input))
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """torch.nn.LSTMCell: gates ``i, f, g, o`` from ``x W_ih^T + b_ih + h W_hh^T + b_hh``;
    ``c' = f c + i g``, ``h' = o tanh(c')``; returns ``(h', c')``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: E.Tensor, hx: tuple[E.Tensor, E.Tensor] | None = None
                ) -> tuple[E.Tensor, E.Tensor]:
        input, batched = self._batched("LSTMCell", input)
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
            h, c = (hx[0], hx[1]) if batched else (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        else:
            h = c = self._state(input, None, batched)
        self._check(input, h, c)
        _, h, c, _ = LSTM_LAYER(input, h, c, self.weight_ih, self.weight_hh, self.bias_ih,
                                self.bias_hh, None, **self._one_step(input))
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """torch.nn.GRUCell: gates ``r, z`` and ``n = tanh(x W_in^T + b_in + r (h W_hn^T +
    b_hn))``; ``h' = (1 - z) n + z h``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: E.Tensor, hx: E.Tensor | None = None) -> E.Tensor:
        input, batched = self._batched("GRUCell", input)
        _checked_hidden("GRUCell", hx)
        h = self._state(input, hx, batched)
        self._check(input, h)
        _, h, _ = GRU_LAYER(input, h, self.weight_ih, self.weight_hh, self.bias_ih,
                            self.bias_hh, **self._one_step(input))
        return h if batched else h.squeeze(0)
