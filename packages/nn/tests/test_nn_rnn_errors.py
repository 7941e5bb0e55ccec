"""The recurrent layers' and cells' errors against torch's: the constructors' checks, the
forward's checks of the input's dims, size and dtype and of the states' dims and sizes,
over padded, unbatched and packed inputs, and the cells' checks, each the same exception
type with the same message (where torch's packed LSTM reports a state's size from inside
its kernel, the same type with a message naming the state)."""

from __future__ import annotations

import re
import warnings

import pytest
import torch
from test_nn_rnn import CELLS, MODES, B, H, I, T, _rand

import ember.core as E
import ember.nn as enn
import ember.nn.utils.rnn as ernn

LIBS = {"torch": (torch, torch.nn.utils.rnn), "ember": (E, ernn)}


def _same_error(program, exact=True):
    """``program(nn, lib, rnn)`` raises under torch; under Ember the same type (and the
    same message where ``exact``)."""
    with pytest.raises(Exception) as expected:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program(torch.nn, *LIBS["torch"])
    match = re.escape(str(expected.value)) if exact else None
    with pytest.raises(type(expected.value), match=match) as got:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program(enn, *LIBS["ember"])
    assert type(got.value) is type(expected.value)
    return got.value


@pytest.mark.parametrize("build", [
    lambda nn: nn.LSTM(I, H, dropout=2), lambda nn: nn.LSTM(I, H, dropout=True),
    lambda nn: nn.LSTM(I, H, dropout="0.1"), lambda nn: nn.LSTM(I, 0),
    lambda nn: nn.LSTM(I, 4.0), lambda nn: nn.LSTM(0, H), lambda nn: nn.LSTM(2.0, H),
    lambda nn: nn.LSTM(I, H, num_layers=0), lambda nn: nn.LSTM(I, H, bias=1),
    lambda nn: nn.LSTM(I, H, batch_first=None), lambda nn: nn.LSTM(I, H, proj_size=-1),
    lambda nn: nn.LSTM(I, H, proj_size=H), lambda nn: nn.GRU(I, H, proj_size=1),
    lambda nn: nn.RNN(I, H, proj_size=1), lambda nn: nn.RNN(I, H, nonlinearity="gelu"),
    lambda nn: nn.RNN(I, H, 1, "sigmoid"), lambda nn: nn.RNNBase("TANH", I, H)])
def test_constructor_errors_match_torch(build):
    _same_error(lambda nn, lib, rnn: build(nn))


def _call(mode, shape, hx_shapes=None, dtype="float32", **kw):
    """A program calling a layer of ``mode`` on an input of ``shape`` and a state of
    ``hx_shapes`` (one shape, or two for the LSTM)."""
    def program(nn, lib, rnn):
        module = MODES[mode](nn, **kw)
        x = lib.tensor(_rand(shape, dtype))
        if hx_shapes is None:
            return module(x)
        if isinstance(hx_shapes[0], tuple):
            return module(x, tuple(lib.zeros(*s) for s in hx_shapes))
        return module(x, lib.zeros(*hx_shapes))
    return program


@pytest.mark.parametrize("program", [
    _call("lstm", (T,)), _call("gru", (1, T, B, I)), _call("rnn_tanh", (T,)),
    _call("lstm", (T, B, I + 1)), _call("gru", (T, B, I + 1)), _call("rnn_relu", (B, T, 1)),
    _call("lstm", (T, B, I), dtype="float64"), _call("gru", (T, B, I), dtype="float64"),
    _call("lstm", (T, B, I), ((1, B, H + 1), (1, B, H))),
    _call("lstm", (T, B, I), ((1, B, H), (1, B + 1, H))),
    _call("lstm_proj", (T, B, I), ((1, B, H), (1, B, H))),
    _call("lstm", (T, B, I), ((B, H), (1, B, H))), _call("lstm", (T, I), ((1, 1, H), (1, H))),
    _call("lstm", (T, I), ((2, H), (2, H))), _call("gru", (T, B, I), (2, B, H)),
    _call("gru", (T, B, I), (B, H)), _call("gru", (T, I), (1, 1, H)),
    _call("rnn_tanh", (T, B, I), (1, B + 1, H)), _call("rnn_tanh", (T, B, I), (B, H)),
    _call("gru", (T, B, I), (1, B, H), num_layers=2),
    _call("lstm", (0, B, I)), _call("gru", (0, I)), _call("rnn_tanh", (0, B, I)),
])
def test_forward_errors_match_torch(program):
    _same_error(program)


def _packed(mode, feature=I, lengths=(3, 2), hx_shapes=None, dtype="float32"):
    def program(nn, lib, rnn):
        module = MODES[mode](nn)
        seqs = [lib.tensor(_rand((n, feature), dtype, n)) for n in lengths]
        packed = rnn.pack_sequence(seqs)
        if hx_shapes is None:
            return module(packed)
        if isinstance(hx_shapes[0], tuple):
            return module(packed, tuple(lib.zeros(*s) for s in hx_shapes))
        return module(packed, lib.zeros(*hx_shapes))
    return program


@pytest.mark.parametrize("program", [
    _packed("lstm", I + 1), _packed("lstm", dtype="float64"), _packed("gru", I + 1),
    _packed("rnn_tanh", dtype="float64"), _packed("gru", hx_shapes=(1, 3, H)),
    _packed("rnn_relu", hx_shapes=(1, 2, H + 1))])
def test_packed_input_errors_match_torch(program):
    _same_error(program)


@pytest.mark.parametrize("hx_shapes", [((1, 2, H + 1), (1, 2, H)), ((1, 2, H), (1, 3, H))])
def test_packed_lstm_state_errors_name_the_state(hx_shapes):
    """torch's packed LSTM reports a wrong state's size from inside its kernel (as a wrong
    number of parameters, or a broadcast); Ember raises the same type naming the state."""
    error = _same_error(_packed("lstm", hx_shapes=hx_shapes), exact=False)
    assert re.match(r"Expected hidden\[[01]\] size \(1, 2, 4\), got \[1, [23], [45]\]",
                    str(error))


def _cell_call(cell, shape, state=None, dtype="float32", **kw):
    def program(nn, lib, rnn):
        module = CELLS[cell](nn, **kw)
        x = lib.tensor(_rand(shape, dtype))
        if state is None:
            return module(x)
        if isinstance(state[0], tuple):
            return module(x, tuple(lib.zeros(*s) for s in state))
        return module(x, lib.zeros(*state))
    return program


@pytest.mark.parametrize("program", [
    _cell_call("lstm", (B, I + 1)), _cell_call("lstm", (B, I), ((B + 1, H), (B, H))),
    _cell_call("lstm", (B, I), ((B, H + 1), (B, H))), _cell_call("lstm", (B, I),
                                                                 ((B, H), (B, H + 2))),
    _cell_call("lstm", (B, I), dtype="float64"), _cell_call("lstm", (1, B, I)),
    _cell_call("lstm", (B, I), ((1, B, H), (B, H))), _cell_call("lstm", (I,), ((B, H), (B, H))),
    _cell_call("gru", (B, I), (B, H + 1)), _cell_call("gru", (B, I), (B + 1, H)),
    _cell_call("gru", (B, I), (1, B, H)), _cell_call("gru", (2, B, I)),
    _cell_call("rnn_tanh", (B, I + 1)), _cell_call("rnn_relu", (B, I), (B + 1, H)),
    _cell_call("rnn_tanh", (B, I), dtype="float64"), _cell_call("rnn_tanh", (1, 1, I)),
])
def test_cell_errors_match_torch(program):
    _same_error(program)


def test_cell_with_an_unknown_nonlinearity_raises_as_torch():
    def program(nn, lib, rnn):
        cell = nn.RNNCell(I, H, nonlinearity="gelu")  # accepted, as torch's
        return cell(lib.zeros(B, I))
    _same_error(program)


def test_the_layer_input_must_match_the_weights_dtype_message():
    with pytest.raises(ValueError, match=re.escape(
            "RNN input dtype (torch.float64) does not match weight dtype (torch.float32). "
            "Convert input: input.to(torch.float32), or convert model: model.to(torch.float64)"
    )):
        enn.GRU(I, H)(E.zeros(T, B, I, dtype=E.float64))
