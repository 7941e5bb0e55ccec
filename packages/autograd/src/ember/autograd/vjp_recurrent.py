"""VJPs of the recurrent layers (``lstm_layer``, ``gru_layer``, ``rnn_layer``).

A first-order backward runs the layer's fused backward primitive over the workspace its
forward kept. Where a graph is built (grad of grad, forward mode through the double VJP),
the layer's steps are run again with Ember ops from the saved operands and the same
gradients written with Ember ops step by step, so that they differentiate again (the
workspace is an output without a history).
"""

from __future__ import annotations

from typing import Any

import ember.core as E
from ember.core.dispatch import dispatch, grad_mode
from ember.core.ops.recurrent import (
    GRU_LAYER_BACKWARD,
    LSTM_LAYER_BACKWARD,
    RNN_LAYER_BACKWARD,
    steps,
)
from ember.core.tensor import Tensor

from .formula import Formula

Grads = tuple[Any, ...]


def _order(n: Any) -> list[tuple[int, int]]:
    return steps(n.params["batch_sizes"], n.params["reverse"])


def _or_zeros(g: Tensor | None, like: Tensor) -> Tensor:
    return E.zeros_like(like) if g is None else g


def _replaced(state: Tensor, rows: Tensor, b: int) -> Tensor:
    """``state`` with its first ``b`` rows (the step's sequences) replaced by ``rows``."""
    return rows if b == state.shape[0] else E.cat([rows, state[b:]])


def _sum(total: Tensor | None, term: Tensor) -> Tensor:
    return term if total is None else total + term


def _input_gates(x: Tensor, w_ih: Tensor, *biases: Tensor | None) -> Tensor:
    xg = x.matmul(w_ih.t())
    for b in biases:
        if b is not None:
            xg = xg + b
    return xg


def _in_row_order(pieces: list[tuple[int, Tensor]]) -> Tensor:
    return E.cat([p for _, p in sorted(pieces, key=lambda item: item[0])])


def _masked(n: Any, grads: Grads) -> Grads:
    return tuple(g if n.needs(i) else None for i, g in enumerate(grads))


# ----------------------------------------------------------------------------- LSTM

def lstm_layer(n: Any, g: Any) -> Grads:
    gy, ghy, gcy = g[0], g[1], g[2]
    if gy is None and ghy is None and gcy is None:
        return (None,) * 8
    if grad_mode.enabled:
        return _masked(n, _lstm_graph(n, gy, ghy, gcy))
    x, hx, cx, w_ih, w_hh, w_hr = (n.saved(i) for i in (0, 1, 2, 3, 4, 7))
    mask = (n.needs(0), n.needs(1), n.needs(2), n.needs(3), n.needs(4),
            n.needs(5) or n.needs(6), n.needs(7))
    gx, ghx, gcx, gw_ih, gw_hh, gb, gw_hr = dispatch(
        LSTM_LAYER_BACKWARD, (gy, _or_zeros(ghy, hx), _or_zeros(gcy, cx), x, w_ih, w_hh, w_hr,
                              n.result(3)), {**n.params, "output_mask": mask})
    return _masked(n, (gx, ghx, gcx, gw_ih, gw_hh, gb, gb, gw_hr))


def _lstm_graph(n: Any, gy: Tensor | None, ghy: Tensor | None, gcy: Tensor | None) -> Grads:
    x, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr = (n.saved(i) for i in range(8))
    xg = _input_gates(x, w_ih, b_ih, b_hh)
    h, c, kept = hx, cx, []
    for first, b in _order(n):
        before_h, before_c = h[:b], c[:b]
        i, f, gate, o = (xg[first:first + b] + before_h.matmul(w_hh.t())).chunk(4, 1)
        i, f, gate, o = i.sigmoid(), f.sigmoid(), gate.tanh(), o.sigmoid()
        after = f * before_c + i * gate
        t = after.tanh()
        raw = o * t
        kept.append((first, b, before_h, before_c, i, f, gate, o, t, raw))
        h = _replaced(h, raw if w_hr is None else raw.matmul(w_hr.t()), b)
        c = _replaced(c, after, b)
    dh, dc = _or_zeros(ghy, hx), _or_zeros(gcy, cx)
    pieces: list[tuple[int, Tensor]] = []
    dw_hh = dw_hr = None
    for first, b, before_h, before_c, i, f, gate, o, t, raw in reversed(kept):
        d = dh[:b] if gy is None else dh[:b] + gy[first:first + b]
        if w_hr is not None:
            dw_hr = _sum(dw_hr, d.t().matmul(raw))
            d = d.matmul(w_hr)
        total = dc[:b] + d * o * (1 - t * t)
        dpre = E.cat([total * gate * i * (1 - i), total * before_c * f * (1 - f),
                      total * i * (1 - gate * gate), d * t * o * (1 - o)], 1)
        pieces.append((first, dpre))
        dw_hh = _sum(dw_hh, dpre.t().matmul(before_h))
        dh = _replaced(dh, dpre.matmul(w_hh), b)
        dc = _replaced(dc, total * f, b)
    dxg = _in_row_order(pieces)
    db = dxg.sum(0)
    return (dxg.matmul(w_ih), dh, dc, dxg.t().matmul(x), dw_hh, db, db, dw_hr)


# ----------------------------------------------------------------------------- GRU

def gru_layer(n: Any, g: Any) -> Grads:
    gy, ghy = g[0], g[1]
    if gy is None and ghy is None:
        return (None,) * 6
    if grad_mode.enabled:
        return _masked(n, _gru_graph(n, gy, ghy))
    x, hx, w_ih, w_hh = (n.saved(i) for i in range(4))
    mask = tuple(n.needs(i) for i in range(6))
    grads = dispatch(GRU_LAYER_BACKWARD, (gy, _or_zeros(ghy, hx), x, w_ih, w_hh, n.result(2)),
                     {**n.params, "output_mask": mask})
    return tuple(grads)


def _gru_graph(n: Any, gy: Tensor | None, ghy: Tensor | None) -> Grads:
    x, hx, w_ih, w_hh, b_ih, b_hh = (n.saved(i) for i in range(6))
    xg = _input_gates(x, w_ih, b_ih)
    h, kept = hx, []
    for first, b in _order(n):
        before = h[:b]
        xr, xz, xn = xg[first:first + b].chunk(3, 1)
        hr, hz, hn = _input_gates(before, w_hh, b_hh).chunk(3, 1)
        r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
        new = (xn + r * hn).tanh()
        kept.append((first, b, before, r, z, new, hn))
        h = _replaced(h, (before - new) * z + new, b)
    dh = _or_zeros(ghy, hx)
    pieces: list[tuple[int, Tensor]] = []
    dw_hh = db_hh = None
    for first, b, before, r, z, new, hn in reversed(kept):
        d = dh[:b] if gy is None else dh[:b] + gy[first:first + b]
        dn = d * (1 - z) * (1 - new * new)
        dr = dn * hn * r * (1 - r)
        dz = d * (before - new) * z * (1 - z)
        dhg = E.cat([dr, dz, dn * r], 1)
        pieces.append((first, E.cat([dr, dz, dn], 1)))
        dw_hh = _sum(dw_hh, dhg.t().matmul(before))
        db_hh = _sum(db_hh, dhg.sum(0))
        dh = _replaced(dh, d * z + dhg.matmul(w_hh), b)
    dxg = _in_row_order(pieces)
    return (dxg.matmul(w_ih), dh, dxg.t().matmul(x), dw_hh, dxg.sum(0), db_hh)


# ----------------------------------------------------------------------------- RNN

def rnn_layer(n: Any, g: Any) -> Grads:
    gy, ghy = g[0], g[1]
    if gy is None and ghy is None:
        return (None,) * 6
    if grad_mode.enabled:
        return _masked(n, _rnn_graph(n, gy, ghy))
    x, hx, w_ih, w_hh = (n.saved(i) for i in range(4))
    mask = (n.needs(0), n.needs(1), n.needs(2), n.needs(3), n.needs(4) or n.needs(5))
    gx, ghx, gw_ih, gw_hh, gb = dispatch(
        RNN_LAYER_BACKWARD, (gy, _or_zeros(ghy, hx), x, w_ih, w_hh, n.result(2)),
        {**n.params, "output_mask": mask})
    return _masked(n, (gx, ghx, gw_ih, gw_hh, gb, gb))


def _rnn_graph(n: Any, gy: Tensor | None, ghy: Tensor | None) -> Grads:
    x, hx, w_ih, w_hh, b_ih, b_hh = (n.saved(i) for i in range(6))
    relu = n.params["nonlinearity"] == "relu"
    xg = _input_gates(x, w_ih, b_ih, b_hh)
    h, kept = hx, []
    for first, b in _order(n):
        before = h[:b]
        pre = xg[first:first + b] + before.matmul(w_hh.t())
        new = pre.relu() if relu else pre.tanh()
        kept.append((first, b, before, new))
        h = _replaced(h, new, b)
    dh = _or_zeros(ghy, hx)
    pieces: list[tuple[int, Tensor]] = []
    dw_hh = None
    for first, b, before, new in reversed(kept):
        d = dh[:b] if gy is None else dh[:b] + gy[first:first + b]
        dpre = E.where(new > 0, d, 0.0) if relu else d * (1 - new * new)
        pieces.append((first, dpre))
        dw_hh = _sum(dw_hh, dpre.t().matmul(before))
        dh = _replaced(dh, dpre.matmul(w_hh), b)
    dxg = _in_row_order(pieces)
    db = dxg.sum(0)
    return (dxg.matmul(w_ih), dh, dxg.t().matmul(x), dw_hh, db, db)


FORMULAS: dict[str, Formula] = {
    "lstm_layer": Formula(lstm_layer, tuple(range(8)), (3,), outputs=(0, 1, 2)),
    "gru_layer": Formula(gru_layer, tuple(range(6)), (2,), outputs=(0, 1)),
    "rnn_layer": Formula(rnn_layer, tuple(range(6)), (2,), outputs=(0, 1)),
}
