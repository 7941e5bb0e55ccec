"""torch.nn's recurrent layers: RNN (tanh or relu), LSTM (with an optional projection) and
GRU, multi-layer, bidirectional, over padded or packed batches; and the one-step cells
RNNCell, LSTMCell and GRUCell.

Each layer of each direction runs as one tensor-core primitive over all its steps
(``lstm_layer``, ``gru_layer``, ``rnn_layer``: the input's part of every step's gates in
one matrix product, then per step one product with the recurrent weight and one fused pass
over the gates); a cell is such a layer over one step. Between layers, dropout draws from
Ember's default generator in training. Parameters, their names and order, and the
initialisation U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) are torch's.
"""

from __future__ import annotations

import math
import numbers
import warnings
import weakref
from typing import Any

import ember.core as E
from ember.core.ops.recurrent import GRU_LAYER, LSTM_LAYER, RNN_LAYER

from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module
from .rnn_cells import GRUCell, LSTMCell, RNNCell, RNNCellBase, same_dtype

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_NAMES = {"LSTM": "LSTM", "GRU": "GRU", "RNN_TANH": "RNN", "RNN_RELU": "RNN"}


class RNNBase(Module):
    """torch.nn.RNNBase: the parameters and checks RNN, LSTM and GRU share (``mode``
    'LSTM', 'GRU', 'RNN_TANH' or 'RNN_RELU')."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        self._flat_weight_refs: list[Any] = []
        _check_settings(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                        proj_size)
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * directions
                shapes: list[tuple[int, ...]] = [(gate_size, layer_input_size),
                                                 (gate_size, real_hidden_size)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    shapes += [(gate_size,), (gate_size,)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    shapes.append((proj_size, hidden_size))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [name.format(layer, suffix) for name in names]
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(E.empty(shape, device=device, dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._init_flat_weights()
        self.reset_parameters()

    def _init_flat_weights(self) -> None:
        self._flat_weights: list[Any] = [getattr(self, name) if hasattr(self, name) else None
                                         for name in self._flat_weights_names]
        self._flat_weight_refs = [None if w is None else weakref.ref(w)
                                  for w in self._flat_weights]
        self.flatten_parameters()

    def __setattr__(self, attr: str, value: Any) -> None:
        names = self.__dict__.get("_flat_weights_names")
        if names is not None and attr in names:
            # keep _flat_weights up to date where a weight is assigned
            self._flat_weights[names.index(attr)] = value
        super().__setattr__(attr, value)

    def flatten_parameters(self) -> None:
        """torch's cuDNN weight compaction: nothing to do here (each layer reads its weights
        where they are)."""

    def _apply(self, fn: Any, recurse: bool = True) -> Module:
        self._flat_weight_refs = []
        ret = super()._apply(fn, recurse)
        self._init_flat_weights()
        return ret

    def reset_parameters(self) -> None:
        """Every weight and bias drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input: E.Tensor, batch_sizes: E.Tensor | None) -> None:
        """torch's checks of the input: the weights' dtype, 2 dims packed (3 padded), and
        ``input_size`` features."""
        weight = self._flat_weights[0]
        if input.dtype != weight.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). "
                f"Convert input: input.to({weight.dtype}), or convert model: "
                f"model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got "
                               f"{input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input: E.Tensor,
                                 batch_sizes: E.Tensor | None) -> tuple[int, int, int]:
        """(num_layers * num_directions, batch, proj_size or hidden_size)."""
        return (*self._state_rows(input, batch_sizes),
                self.proj_size if self.proj_size > 0 else self.hidden_size)

    def _state_rows(self, input: E.Tensor, batch_sizes: E.Tensor | None) -> tuple[int, int]:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        return self.num_layers * (2 if self.bidirectional else 1), mini_batch

    def check_hidden_size(self, hx: E.Tensor, expected_hidden_size: tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        """torch's RuntimeError where ``hx`` is not of the expected size."""
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def _weights_have_changed(self) -> bool:
        for ref, name in zip(self._flat_weight_refs, self._flat_weights_names):
            weight = getattr(self, name) if hasattr(self, name) else None
            if weight is not None and ref is not None and ref() is not weight:
                return True
        return False

    def check_forward_args(self, input: E.Tensor, hidden: Any,
                           batch_sizes: E.Tensor | None) -> None:
        """The input's checks, then the hidden state's size."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Any, permutation: E.Tensor | None) -> Any:
        """``hx`` with its batch (dim 1) in ``permutation``'s order."""
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def _update_flat_weights(self) -> None:
        if self._weights_have_changed():
            self._init_flat_weights()

    def __getstate__(self) -> dict[str, Any]:
        self._update_flat_weights()
        state = self.__dict__.copy()
        del state["_flat_weight_refs"]
        return state

    def __setstate__(self, d: dict[str, Any]) -> None:
        super().__setstate__(d)
        self._flat_weight_refs = [None if w is None else weakref.ref(w)
                                  for w in self._flat_weights]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """Each layer's and direction's parameters, in torch's order."""
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]

    # ------------------------------------------------------------------ running

    def _forward(self, input: Any, hx: Any, cells: bool) -> tuple[Any, Any]:
        """The layers over ``input`` (padded, unbatched or packed) from the state ``hx``
        (a tensor, or ``(h, c)`` where ``cells``): ``(output, state)`` as torch's."""
        self._update_flat_weights()
        name = _NAMES[self.mode]
        packed = isinstance(input, PackedSequence)
        unbatched = False
        if packed:
            input, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is not None:
                hx = self.permute_hidden(hx, sorted_indices)
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            if input.dim() not in (2, 3):
                tail = " tensor instead" if name == "RNN" else " instead"
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                                 + tail)
            unbatched = input.dim() == 2
            if unbatched:
                input = input.unsqueeze(0 if self.batch_first else 1)
            if hx is not None:
                hx = _batched_state(hx, unbatched, cells)
        rows = self._state_rows(input, batch_sizes)
        if hx is None:
            h = E.zeros(*rows, self.proj_size or self.hidden_size, dtype=input.dtype,
                        device=input.device)
            hx = (h, E.zeros(*rows, self.hidden_size, dtype=input.dtype,
                             device=input.device)) if cells else h
        if packed and cells:
            _packed_lstm_input(input, self._flat_weights[0])
        self.check_forward_args(input, hx, batch_sizes)
        if batch_sizes is not None:
            sizes = tuple(int(b) for b in batch_sizes.tolist())
            data = input
        else:
            if self.batch_first:
                input = input.transpose(0, 1)
            steps, batch = input.shape[0], input.shape[1]
            if steps == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            sizes = (batch,) * steps
            data = input.reshape(steps * batch, input.shape[2])
        h, c = (hx[0], hx[1]) if cells else (hx, None)
        out, h_n, c_n = self._stack(data, sizes, h, c)
        hidden: Any = (h_n, c_n) if cells else h_n
        if packed:
            return (PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices),
                    self.permute_hidden(hidden, unsorted_indices))
        out = out.view(len(sizes), sizes[0], out.shape[1])
        if self.batch_first:
            out = out.transpose(0, 1)
        if unbatched:
            out = out.squeeze(0 if self.batch_first else 1)
            hidden = tuple(s.squeeze(1) for s in hidden) if cells else h_n.squeeze(1)
        return out, hidden

    def _stack(self, x: E.Tensor, sizes: tuple[int, ...], h: E.Tensor,
               c: E.Tensor | None) -> tuple[E.Tensor, E.Tensor, E.Tensor | None]:
        """Every layer over the packed rows ``x``, from states ``h`` (and ``c``) of shape
        (num_layers * num_directions, batch, features)."""
        directions = 2 if self.bidirectional else 1
        per = len(self._all_weights[0])
        hs, cs = [], []
        for layer in range(self.num_layers):
            outs = []
            for direction in range(directions):
                k = layer * directions + direction
                weights = self._flat_weights[k * per:(k + 1) * per]
                out, h_n, c_n = self._layer(x, sizes, weights, h[k],
                                            None if c is None else c[k], direction == 1)
                outs.append(out)
                hs.append(h_n)
                cs.append(c_n)
            x = outs[0] if directions == 1 else E.cat(outs, 1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, E.stack(hs), None if c is None else E.stack(cs)

    def _layer(self, x: E.Tensor, sizes: tuple[int, ...], weights: list[Any], h: E.Tensor,
               c: E.Tensor | None, reverse: bool) -> tuple[Any, Any, Any]:
        """One layer in one direction: (output rows, h_n, c_n or None)."""
        w_ih, w_hh = weights[0], weights[1]
        b_ih, b_hh = (weights[2], weights[3]) if self.bias else (None, None)
        if self.mode == "LSTM":
            w_hr = weights[-1] if self.proj_size > 0 else None
            out, h_n, c_n, _ = LSTM_LAYER(x, h, c, w_ih, w_hh, b_ih, b_hh, w_hr,
                                          batch_sizes=sizes, reverse=reverse)
            return out, h_n, c_n
        if self.mode == "GRU":
            out, h_n, _ = GRU_LAYER(x, h, w_ih, w_hh, b_ih, b_hh, batch_sizes=sizes,
                                    reverse=reverse)
        else:
            out, h_n, _ = RNN_LAYER(x, h, w_ih, w_hh, b_ih, b_hh, batch_sizes=sizes,
                                    reverse=reverse, nonlinearity=self.mode[4:].lower())
        return out, h_n, None


def _check_settings(input_size: Any, hidden_size: Any, num_layers: int, bias: Any,
                    batch_first: Any, dropout: Any, proj_size: int) -> None:
    """torch's checks of RNNBase's arguments, in its order."""
    if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) \
            or not 0 <= dropout <= 1:  # type: ignore[operator]
        raise ValueError("dropout should be a number in range [0, 1] representing the "
                         "probability of an element being zeroed")
    if dropout > 0 and num_layers == 1:  # type: ignore[operator]
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                      "non-zero dropout expects num_layers greater than 1, but got "
                      f"dropout={dropout} and num_layers={num_layers}", stacklevel=4)
    for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                              ("input_size", input_size, int)):
        if not isinstance(value, kind):
            raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                            f"{type(value).__name__}")
    if input_size <= 0:
        raise ValueError("input_size must be greater than zero")
    if not isinstance(hidden_size, int):
        raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
    if hidden_size <= 0:
        raise ValueError("hidden_size must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable "
                         "projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


def _packed_lstm_input(input: E.Tensor, weight: E.Tensor) -> None:
    """torch's errors of a packed LSTM input that does not fit the first layer's input
    weight (its packed path checks them as the input's product with that weight)."""
    same_dtype(input, weight)
    if input.dim() == 2 and input.shape[1] != weight.shape[1]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x"
                           f"{input.shape[1]} and {weight.shape[1]}x{weight.shape[0]})")


def _batched_state(hx: Any, unbatched: bool, cells: bool) -> Any:
    """A given state checked against the input's batching (torch's errors) and given a
    batch dim of 1 where the input has none."""
    want = 2 if unbatched else 3
    kind = "unbatched 2-D" if unbatched else "batched 3-D"
    if cells:
        if hx[0].dim() != want or hx[1].dim() != want:
            raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                               f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
        return (hx[0].unsqueeze(1), hx[1].unsqueeze(1)) if unbatched else hx
    if hx.dim() != want:
        raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                           f"{hx.dim()}-D tensor")
    return hx.unsqueeze(1) if unbatched else hx


class RNN(RNNBase):
    """torch.nn.RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu,
    ``nonlinearity='relu'``) per layer; returns ``(output, h_n)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input: Any, hx: E.Tensor | None = None) -> tuple[Any, E.Tensor]:
        return self._forward(input, hx, cells=False)


class LSTM(RNNBase):
    """torch.nn.LSTM: gates ``i, f, g, o`` from ``x_t W_ih^T + b_ih + h_{t-1} W_hh^T +
    b_hh``; ``c_t = f c_{t-1} + i g``, ``h_t = o tanh(c_t)`` (times ``W_hr^T`` where
    ``proj_size > 0``); returns ``(output, (h_n, c_n))``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: E.Tensor,
                               batch_sizes: E.Tensor | None) -> tuple[int, int, int]:
        """(num_layers * num_directions, batch, hidden_size)."""
        return (*self._state_rows(input, batch_sizes), self.hidden_size)

    def check_forward_args(self, input: E.Tensor, hidden: Any,  # type: ignore[override]
                           batch_sizes: E.Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx: Any, permutation: E.Tensor | None) -> Any:
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input: Any, hx: tuple[E.Tensor, E.Tensor] | None = None) -> Any:
        return self._forward(input, hx, cells=True)


class GRU(RNNBase):
    """torch.nn.GRU: gates ``r, z`` and ``n = tanh(x_t W_in^T + b_in + r (h_{t-1} W_hn^T +
    b_hn))``; ``h_t = (1 - z) n + z h_{t-1}``; returns ``(output, h_n)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Any, hx: E.Tensor | None = None) -> tuple[Any, E.Tensor]:
        return self._forward(input, hx, cells=False)
