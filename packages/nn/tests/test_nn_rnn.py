"""The recurrent layers against torch.nn's: RNN (tanh, relu), LSTM (with and without
projections) and GRU with the same weights give the same outputs, final states, input,
state and parameter gradients and ``repr`` (float32 and float64) for every combination of
layers, directions, batch_first and bias; with initial states; unbatched; over packed
batches (sorted and not); with dropout between layers; grad of grad. The cells RNNCell,
LSTMCell and GRUCell likewise, one step and chained. Then parameter names and order,
``_flat_weights``, ``all_weights``, the initialisation, conversions, pickling and
functional calls (the errors are ``test_nn_rnn_errors``)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from nn_oracle import check_close, compare_modules, pair_modules, to_numpy

import ember.autograd as ag
import ember.core as E
import ember.nn as enn
import ember.nn.utils.rnn as ernn

DTYPES = ["float32", "float64"]
T, B, I, H, P = 4, 3, 3, 4, 2

MODES = {
    "rnn_tanh": lambda nn, **kw: nn.RNN(I, H, **kw),
    "rnn_relu": lambda nn, **kw: nn.RNN(I, H, nonlinearity="relu", **kw),
    "lstm": lambda nn, **kw: nn.LSTM(I, H, **kw),
    "lstm_proj": lambda nn, **kw: nn.LSTM(I, H, proj_size=P, **kw),
    "gru": lambda nn, **kw: nn.GRU(I, H, **kw),
}


def _rand(shape, dtype="float32", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _leaf(lib, x):
    return None if x is None else lib.tensor(x).requires_grad_(True)


def _state_shapes(mode, layers=1, directions=1, batch=B):
    """The initial state's arrays' shapes for a mode: one, or (h, c) for the LSTM."""
    rows = layers * directions
    h = (rows, batch, P if mode == "lstm_proj" else H)
    return (h, (rows, batch, H)) if mode.startswith("lstm") else h


def _state(mode, dtype, seed=7, **kw):
    shapes = _state_shapes(mode, **kw)
    if isinstance(shapes[0], tuple):
        return tuple(_rand(s, dtype, seed + i) for i, s in enumerate(shapes))
    return _rand(shapes, dtype, seed)


def _tensors(out):
    """The tensors of a result (output, h or (h, c), PackedSequences as their fields)."""
    if isinstance(out, (tuple, list)):
        return [t for item in out for t in _tensors(item)]
    return [] if out is None else [out]


def _same(t, e, what):
    """Floating tensors within tolerance, integer ones (batch sizes, indices) exactly."""
    if t is None or not t.dtype.is_floating_point:
        assert (t is None) == (e is None), what
        if t is not None:
            assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], what
            np.testing.assert_array_equal(to_numpy(e), to_numpy(t), err_msg=what)
        return
    check_close(t, e, what)


def run_both(t, e, x, hx=None, pack=None, train=False, seed=0):
    """Run the paired modules on input ``x`` (an array) and initial state ``hx`` (None, an
    array, or a pair of arrays), packed first where ``pack = (lengths, batch_first,
    enforce_sorted)``; compare every result, then the gradients of the input, the states
    and the parameters for random gradients of every floating output."""
    t.train(train)
    e.train(train)
    results, leaves = [], []
    for lib, rnn, module in ((torch, torch.nn.utils.rnn, t), (E, ernn, e)):
        xs = _leaf(lib, x)
        state = None if hx is None else (
            tuple(_leaf(lib, h) for h in hx) if isinstance(hx, tuple) else _leaf(lib, hx))
        inp = xs if pack is None else rnn.pack_padded_sequence(
            xs, pack[0], batch_first=pack[1], enforce_sorted=pack[2])
        out = module(inp, state) if state is not None else module(inp)
        results.append(out)
        leaves.append([xs, *_tensors(state)])
    touts, eouts = (_tensors(r) for r in results)
    assert len(touts) == len(eouts)
    for i, (a, b) in enumerate(zip(touts, eouts)):
        _same(a, b, f"result {i}")
    rng = np.random.default_rng(seed)
    pairs = [(a, b) for a, b in zip(touts, eouts) if a.requires_grad]
    assert all(b.requires_grad for _, b in pairs)
    grads = [rng.standard_normal(tuple(a.shape)).astype(to_numpy(a).dtype) for a, _ in pairs]
    torch.autograd.backward([a for a, _ in pairs], [torch.tensor(g) for g in grads])
    ag.backward([b for _, b in pairs], [E.tensor(g) for g in grads])
    for i, (a, b) in enumerate(zip(*leaves)):
        check_close(a.grad, b.grad, f"leaf {i} grad")
    for (name, p), (name2, q) in zip(t.named_parameters(), e.named_parameters()):
        assert name == name2
        check_close(p.grad, q.grad, f"{name} grad")
    assert repr(t) == repr(e)
    return results


# ----------------------------------------------------------------------------- layers

GRID = list(itertools.product(MODES, [1, 2], [False, True], [False, True], [True, False]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode, layers, bidirectional, batch_first, bias", GRID,
                         ids=["-".join(map(str, c)) for c in GRID])
def test_layer_matches_torch(mode, layers, bidirectional, batch_first, bias, dtype):
    t, e = pair_modules(lambda nn: MODES[mode](nn, num_layers=layers, bias=bias,
                                               bidirectional=bidirectional,
                                               batch_first=batch_first), dtype)
    x = _rand((B, T, I) if batch_first else (T, B, I), dtype)
    run_both(t, e, x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["rnn_tanh", "gru"])
def test_compare_modules_covers_single_state_layers(mode, dtype):
    t, e = pair_modules(lambda nn: MODES[mode](nn, num_layers=2, bidirectional=True), dtype)
    compare_modules(t, e, [_rand((T, B, I), dtype), _state(mode, dtype, layers=2,
                                                           directions=2)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bidirectional", [False, True])
def test_initial_states_get_gradients(mode, bidirectional, dtype):
    directions = 2 if bidirectional else 1
    t, e = pair_modules(lambda nn: MODES[mode](nn, num_layers=2,
                                               bidirectional=bidirectional), dtype)
    run_both(t, e, _rand((T, B, I), dtype),
             _state(mode, dtype, layers=2, directions=directions))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
def test_unbatched_input(mode, batch_first, with_state):
    t, e = pair_modules(lambda nn: MODES[mode](nn, num_layers=2, bidirectional=True,
                                               batch_first=batch_first))
    hx = None
    if with_state:
        hx = _state(mode, "float32", layers=2, directions=2, batch=1)
        hx = tuple(h[:, 0] for h in hx) if isinstance(hx, tuple) else hx[:, 0]
    run_both(t, e, _rand((T, I)), hx)


@pytest.mark.parametrize("mode", MODES)
def test_empty_batch(mode):
    t, e = pair_modules(lambda nn: MODES[mode](nn, num_layers=2, bidirectional=True))
    run_both(t, e, _rand((T, 0, I)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("lengths, enforce_sorted", [([4, 3, 1], True), ([2, 4, 2], False),
                                                     ([1, 1, 1], True), ([3, 1, 4], False)])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_input(mode, lengths, enforce_sorted, bidirectional, dtype):
    t, e = pair_modules(lambda nn: MODES[mode](nn, num_layers=2,
                                               bidirectional=bidirectional), dtype)
    run_both(t, e, _rand((T, B, I), dtype), pack=(lengths, False, enforce_sorted))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("batch_first", [False, True])
def test_packed_input_with_initial_states(mode, batch_first):
    directions = 2
    t, e = pair_modules(lambda nn: MODES[mode](nn, num_layers=2, bidirectional=True,
                                               batch_first=batch_first), "float64")
    x = _rand((B, T, I) if batch_first else (T, B, I), "float64")
    run_both(t, e, x, _state(mode, "float64", layers=2, directions=directions),
             pack=([2, 4, 3], batch_first, False))


def test_packed_output_round_trips_through_pad_packed_sequence():
    t, e = pair_modules(lambda nn: nn.LSTM(I, H, num_layers=2, bidirectional=True))
    results = run_both(t, e, _rand((T, B, I)), pack=([3, 4, 1], False, False))
    (tp, _), (ep, _) = results
    tout, tlen = torch.nn.utils.rnn.pad_packed_sequence(tp, padding_value=-1.0)
    eout, elen = ernn.pad_packed_sequence(ep, padding_value=-1.0)
    check_close(tout, eout, "padded output")
    assert elen.tolist() == tlen.tolist() == [3, 4, 1]
    assert isinstance(ep, ernn.PackedSequence)


def test_packed_input_of_an_lstm_with_projections_and_dropout_in_eval():
    t, e = pair_modules(lambda nn: nn.LSTM(I, H, num_layers=3, proj_size=P, dropout=0.5,
                                           bidirectional=True))
    run_both(t, e, _rand((T, B, I)), pack=([4, 4, 2], False, True))


# ----------------------------------------------------------------------------- dropout

@pytest.mark.parametrize("mode", MODES)
def test_dropout_of_one_zeroes_the_next_layers_input_as_torch(mode):
    t, e = pair_modules(lambda nn: MODES[mode](nn, num_layers=3, dropout=1.0))
    run_both(t, e, _rand((T, B, I)), train=True)


@pytest.mark.parametrize("mode", MODES)
def test_dropout_acts_in_training_only(mode):
    t, e = pair_modules(lambda nn: MODES[mode](nn, num_layers=2, dropout=0.5))
    run_both(t, e, _rand((T, B, I)), train=False)
    x = E.tensor(_rand((T, B, I)))
    e.train()
    E.manual_seed(3)
    first = e(x)[0]
    E.manual_seed(3)
    again = e(x)[0]
    e.eval()
    plain = e(x)[0]
    np.testing.assert_array_equal(first.detach().numpy(), again.detach().numpy())
    assert np.abs(first.detach().numpy() - plain.detach().numpy()).max() > 1e-3


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
def test_dropout_between_layers_is_ember_dropout_of_each_layers_output(mode):
    """A 2-layer module in training is its first layer, F.dropout of its output from the
    default generator, then its second layer."""
    full = MODES[mode](enn, num_layers=2, dropout=0.4, bidirectional=True)
    first = MODES[mode](enn, bidirectional=True)
    second = type(full)(2 * (P if mode == "lstm_proj" else H), H, bidirectional=True,
                        **({"nonlinearity": full.nonlinearity} if mode.startswith("rnn")
                           else {}))
    with ag.no_grad():
        for name, p in full.named_parameters():
            layer = first if "_l0" in name else second
            getattr(layer, name.replace("_l1", "_l0")).copy_(p)
    x = E.tensor(_rand((T, B, I)))
    full.train()
    E.manual_seed(11)
    got = full(x)[0]
    E.manual_seed(11)
    middle = enn.functional.dropout(first(x)[0].reshape(T * B, -1), 0.4, True)
    want = second(middle.reshape(T, B, -1))[0]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6,
                               atol=1e-6)


def test_dropout_on_a_single_layer_warns_as_torch():
    for nn in (torch.nn, enn):
        with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater "
                                             "than 1, but got dropout=0.5 and num_layers=1"):
            nn.LSTM(I, H, dropout=0.5)


# ----------------------------------------------------------------------------- higher order

@pytest.mark.parametrize("mode", MODES)
def test_grad_of_grad_matches_torch(mode):
    t, e = pair_modules(lambda nn: MODES[mode](nn, num_layers=2, bidirectional=True),
                        "float64")
    x = _rand((T, B, I), "float64")
    grads = []
    for lib, module in ((torch, t), (E, e)):
        xs = lib.tensor(x).requires_grad_(True)
        out = module(xs)[0]
        (gx,) = (torch.autograd.grad if lib is torch else ag.grad)(
            (out * out).sum(), xs, create_graph=True)
        second = (gx * gx).sum()
        params = list(module.parameters())
        grads.append((torch.autograd.grad if lib is torch else ag.grad)(second, [xs, *params]))
    for i, (a, b) in enumerate(zip(*grads)):
        check_close(a, b, f"second-order grad {i}")


# ----------------------------------------------------------------------------- cells

CELLS = {
    "rnn_tanh": lambda nn, **kw: nn.RNNCell(I, H, **kw),
    "rnn_relu": lambda nn, **kw: nn.RNNCell(I, H, nonlinearity="relu", **kw),
    "lstm": lambda nn, **kw: nn.LSTMCell(I, H, **kw),
    "gru": lambda nn, **kw: nn.GRUCell(I, H, **kw),
}


def _cell_state(cell, dtype, batch=B):
    if cell == "lstm":
        return _rand((batch, H), dtype, 5), _rand((batch, H), dtype, 6)
    return _rand((batch, H), dtype, 5)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("bias", [True, False])
def test_cell_matches_torch(cell, bias, dtype):
    t, e = pair_modules(lambda nn: CELLS[cell](nn, bias=bias), dtype)
    compare_modules(t, e, [_rand((B, I), dtype)])
    run_both(t, e, _rand((B, I), dtype), _cell_state(cell, dtype))


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("with_state", [False, True])
def test_unbatched_cell(cell, with_state):
    t, e = pair_modules(lambda nn: CELLS[cell](nn))
    state = None
    if with_state:
        state = _cell_state(cell, "float32", 1)
        state = tuple(s[0] for s in state) if isinstance(state, tuple) else state[0]
    run_both(t, e, _rand((I,)), state)


@pytest.mark.parametrize("cell", CELLS)
def test_cells_chained_over_steps_accumulate_gradients(cell):
    t, e = pair_modules(lambda nn: CELLS[cell](nn), "float64")
    xs = _rand((T, B, I), "float64")
    grads = []
    for lib, module in ((torch, t), (E, e)):
        x = lib.tensor(xs).requires_grad_(True)
        state, total = None, 0
        for step in range(T):
            state = module(x[step], state) if state is not None else module(x[step])
            h = state[0] if cell == "lstm" else state
            total = total + (h * (step + 1)).sum()
        total.backward() if lib is torch else ag.backward([total])
        grads.append([x.grad, *(p.grad for p in module.parameters())])
    for i, (a, b) in enumerate(zip(*grads)):
        check_close(a, b, f"grad {i}")


def test_cell_of_an_empty_batch():
    t, e = pair_modules(lambda nn: nn.LSTMCell(I, H))
    run_both(t, e, _rand((0, I)))


# ----------------------------------------------------------------------------- parameters

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bias", [True, False])
def test_parameter_names_order_and_flat_weights(mode, bias):
    t = MODES[mode](torch.nn, num_layers=2, bidirectional=True, bias=bias)
    e = MODES[mode](enn, num_layers=2, bidirectional=True, bias=bias)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert e._flat_weights_names == t._flat_weights_names
    assert e._all_weights == t._all_weights
    assert [w is p for w, p in zip(e._flat_weights, e.parameters())] == [True] * len(
        e._flat_weights)
    assert [[tuple(w.shape) for w in ws] for ws in e.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in t.all_weights]
    assert all(a is getattr(e, n) for ws, names in zip(e.all_weights, e._all_weights)
               for a, n in zip(ws, names))


@pytest.mark.parametrize("build, hidden", [
    (lambda nn: nn.LSTM(5, 64, num_layers=2, bidirectional=True, proj_size=8), 64),
    (lambda nn: nn.GRU(5, 100), 100), (lambda nn: nn.RNN(5, 49), 49),
    (lambda nn: nn.LSTMCell(5, 64), 64), (lambda nn: nn.GRUCell(3, 81), 81)])
def test_initialisation_is_torchs(build, hidden):
    bound = 1 / math.sqrt(hidden)
    for p in build(enn).parameters():
        w = p.detach().numpy()
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
        if w.size > 500:
            assert abs(w.std() - bound / math.sqrt(3)) < 0.08 * bound / math.sqrt(3)
        assert len(np.unique(w)) > 0.99 * w.size and p.requires_grad


def test_flatten_parameters_is_a_no_op_that_exists():
    e = enn.LSTM(I, H)
    before = [w.detach().numpy().copy() for w in e._flat_weights]
    assert e.flatten_parameters() is None
    assert all((a == w.detach().numpy()).all() for a, w in zip(before, e._flat_weights))


def test_conversion_and_assignment_keep_flat_weights_current():
    t, e = pair_modules(lambda nn: nn.GRU(I, H, num_layers=2))
    t.double()
    e.double()
    assert all(w.dtype == E.float64 for w in e._flat_weights)
    run_both(t, e, _rand((T, B, I), "float64"))
    for m, lib in ((t, torch), (e, E)):
        m.weight_hh_l1 = type(m.weight_hh_l1)(lib.zeros(3 * H, H, dtype=lib.float64))
    assert e._flat_weights[e._flat_weights_names.index("weight_hh_l1")] is e.weight_hh_l1
    run_both(t, e, _rand((T, B, I), "float64"))


def test_factory_kwargs_give_dtype():
    for build in (lambda: enn.LSTM(I, H, dtype=E.float64), lambda: enn.GRUCell(I, H,
                                                                            dtype=E.float64)):
        assert all(p.dtype == E.float64 for p in build().parameters())


def test_state_dict_loads_between_frameworks_both_ways():
    t, e = pair_modules(lambda nn: nn.LSTM(I, H, num_layers=2, proj_size=P,
                                           bidirectional=True))
    back = torch.nn.LSTM(I, H, num_layers=2, proj_size=P, bidirectional=True)
    back.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in
                          e.state_dict().items()})
    run_both(back, e, _rand((T, B, I)))


def test_pickle_and_deepcopy_keep_the_flat_weights_the_parameters():
    import copy
    import pickle

    e = enn.LSTM(I, H, num_layers=2, bidirectional=True)
    x = E.tensor(_rand((T, B, I)))
    want = e(x)[0].detach().numpy()
    for clone in (pickle.loads(pickle.dumps(e)), copy.deepcopy(e)):
        assert all(w is p for w, p in zip(clone._flat_weights, clone.parameters()))
        np.testing.assert_array_equal(clone(x)[0].detach().numpy(), want)


def test_functional_call_runs_the_given_weights_as_torch():
    import torch.func

    import ember.nn.utils.stateless as stateless

    t, e = pair_modules(lambda nn: nn.GRU(I, H, num_layers=2))
    x = _rand((T, B, I))
    params = {name: _rand(tuple(p.shape), seed=i) for i, (name, p) in
              enumerate(t.named_parameters())}
    want = torch.func.functional_call(t, {k: torch.tensor(v) for k, v in params.items()},
                                      (torch.tensor(x),))
    got = stateless.functional_call(e, {k: E.tensor(v) for k, v in params.items()},
                                    (E.tensor(x),))
    check_close(want, got, "functional_call")
    run_both(t, e, x)  # the module's own weights again
    assert e._flat_weights[0] is e.weight_ih_l0 and t._flat_weights[0] is t.weight_ih_l0
