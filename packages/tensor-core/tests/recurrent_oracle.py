"""The recurrent layer primitives written with torch ops, the oracle of their tests: one
layer of an LSTM, a GRU or an RNN in one direction over packed rows (step ``t`` the
``batch_sizes[t]`` rows from ``sum(batch_sizes[:t])``, the first sequences of the batch),
torch's cell formulas step by step.

``layer(m, kind, operands, batch_sizes, reverse)`` runs the Ember primitive (``m`` is
ember.core) or this composition (``m`` is torch) on the operands of ``kind`` ('lstm',
'gru', 'rnn_tanh', 'rnn_relu'): the forward's results without the workspace.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any

import torch
import torch.nn.functional as F

from ember.core.ops import recurrent

__all__ = ["layer", "torch_layer", "operand_shapes"]


def _order(batch_sizes: tuple[int, ...], reverse: bool) -> list[tuple[int, int]]:
    offsets = list(accumulate(batch_sizes, initial=0))
    order = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
    return [(offsets[t], batch_sizes[t]) for t in order]


def _replaced(state: Any, rows: Any, b: int) -> Any:
    return torch.cat([rows, state[b:]])


def torch_layer(kind: str, operands: list[Any], batch_sizes: tuple[int, ...],
                reverse: bool) -> tuple[Any, ...]:
    """The layer composed of torch ops: ``(output, h_n)``, and ``c_n`` for the LSTM."""
    if kind == "lstm":
        x, h, c, w_ih, w_hh, b_ih, b_hh, w_hr = operands
    else:
        (x, h, w_ih, w_hh, b_ih, b_hh), c = operands, None
    xg = F.linear(x, w_ih, b_ih)
    outs = {}
    for first, b in _order(batch_sizes, reverse):
        before = h[:b]
        hg = F.linear(before, w_hh, b_hh)
        step = xg[first:first + b]
        if kind == "lstm":
            i, f, g, o = (step + hg).chunk(4, 1)
            c_new = f.sigmoid() * c[:b] + i.sigmoid() * g.tanh()
            new = o.sigmoid() * c_new.tanh()
            if w_hr is not None:
                new = F.linear(new, w_hr)
            c = _replaced(c, c_new, b)
        elif kind == "gru":
            xr, xz, xn = step.chunk(3, 1)
            hr, hz, hn = hg.chunk(3, 1)
            r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
            n = (xn + r * hn).tanh()
            new = (before - n) * z + n
        else:
            pre = step + hg
            new = pre.relu() if kind == "rnn_relu" else pre.tanh()
        outs[first] = new
        h = _replaced(h, new, b)
    out = torch.cat([outs[k] for k in sorted(outs)])
    return (out, h, c) if kind == "lstm" else (out, h)


def layer(m: Any, kind: str, operands: list[Any], batch_sizes: tuple[int, ...],
          reverse: bool) -> tuple[Any, ...]:
    """Ember's primitive (``m`` ember.core) or torch's composition (``m`` torch)."""
    if m is torch:
        return torch_layer(kind, operands, batch_sizes, reverse)
    params: dict[str, Any] = {"batch_sizes": batch_sizes, "reverse": reverse}
    if kind == "lstm":
        return tuple(recurrent.LSTM_LAYER(*operands, **params)[:3])
    if kind == "gru":
        return tuple(recurrent.GRU_LAYER(*operands, **params)[:2])
    return tuple(recurrent.RNN_LAYER(*operands, nonlinearity=kind[4:], **params)[:2])


def operand_shapes(kind: str, n: int, batch: int, features: int, hidden: int,
                   proj: int = 0, bias: bool = True) -> list[tuple[int, ...] | None]:
    """The shapes of a layer's operands (None for an absent bias or projection)."""
    gates = {"lstm": 4, "gru": 3}.get(kind, 1) * hidden
    out = proj or hidden
    biases: list[tuple[int, ...] | None] = [(gates,), (gates,)] if bias else [None, None]
    if kind == "lstm":
        return [(n, features), (batch, out), (batch, hidden), (gates, features), (gates, out),
                *biases, (proj, hidden) if proj else None]
    return [(n, features), (batch, hidden), (gates, features), (gates, hidden), *biases]
