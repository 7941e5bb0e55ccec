"""Recurrent layers: one layer of an LSTM, a GRU or an Elman RNN in one direction, run over
every time step by one primitive (torch's CPU runs its layers as ``mkldnn_rnn_layer``).

Rows and steps: the input is ``N`` packed rows, as ``PackedSequence.data`` holds them. Step
``t`` takes the ``batch_sizes[t]`` rows from ``sum(batch_sizes[:t])``: the first
``batch_sizes[t]`` sequences of the batch (the sizes do not increase); a dense ``(T, B, I)``
input is its ``T * B`` rows with ``batch_sizes == (B,) * T``. ``reverse`` runs the steps
from the last to the first. A sequence's state after its last step is its row of ``h_n``
(and ``c_n``); ``hx`` has the batch's ``B = batch_sizes[0]`` rows.

Primitives (G gates of H features each: 4 for the LSTM, 3 for the GRU, 1 for the RNN; ``P``
is an LSTM's ``proj_size``, else ``H``; biases may be None):

- ``lstm_layer`` (input (N, I), hx (B, P), cx (B, H), w_ih (4H, I), w_hh (4H, P), b_ih,
  b_hh (4H), w_hr (P, H) or None; params ``batch_sizes``, ``reverse``) ->
  ``(output (N, P), h_n, c_n, workspace)``; gates i, f, g, o as torch's:
  ``c' = f c + i g``, ``h' = o tanh(c')`` (times ``w_hr^T`` where projected);
- ``gru_layer`` (input, hx, w_ih (3H, I), w_hh (3H, H), b_ih, b_hh) -> ``(output, h_n,
  workspace)``; gates r, z, n: ``n = tanh(x_n + r (W_hn h + b_hn))``, ``h' = (h - n) z + n``;
- ``rnn_layer`` (input, hx, w_ih (H, I), w_hh (H, H), b_ih, b_hh; param ``nonlinearity``
  'tanh' or 'relu' besides) -> ``(output, h_n, workspace)``;
- ``lstm_layer_backward`` (grad_output or None, grad_hy, grad_cy, input, w_ih, w_hh, w_hr,
  workspace; params as the forward's and ``output_mask``) -> the gradients of input, hx, cx,
  w_ih, w_hh, the bias (b_ih's and b_hh's alike) and w_hr, None where the mask asks none;
  ``gru_layer_backward`` (grad_output, grad_hy, input, w_ih, w_hh, workspace) -> those of
  input, hx, w_ih, w_hh, b_ih, b_hh; ``rnn_layer_backward`` likewise -> input, hx, w_ih,
  w_hh, the bias.

The workspace (one flat array) is what the backward reads: per step, a block of (rows, b)
(one row per feature, one column per sequence), then (rows, N) matrices of what the weight
gradients multiply (their rows below). Inside the loop the states are feature-major (F, B):
the input's part of every step's gates is one matrix product before the loop, each step one
product with the recurrent weight (``w_hh @ h``, BLAS's fastest orientation at these
shapes) and one pass over its gates, and each weight's gradient one product after the
backward's loop. float16/bfloat16 compute in float32 (the workspace too) and round the
results once. The native loops (float32, float64) sit in ``recurrent_native``.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any

import numpy as np

from .. import meta
from ..device import xp_of
from ..dispatch import register
from .operands import LOW_PRECISION

__all__: list[str] = []

# The workspaces: the LSTM's blocks hold i, f, g, o, the cell state before the step and
# tanh of the one after (6H rows), its matrix the hidden state before the step (P rows) and,
# where projected, the unprojected one (H rows); the GRU's blocks r, z, n and
# W_hn h + b_hn (4H), its matrix the hidden state before; the RNN's blocks the state after
# the step (H), its matrix the state before.


def steps(batch_sizes: tuple[int, ...], reverse: bool) -> list[tuple[int, int]]:
    """``(first row, rows)`` of each step, in the order the layer runs them."""
    offsets = list(accumulate(batch_sizes, initial=0))
    order = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
    return [(offsets[t], batch_sizes[t]) for t in order]


def work_dtype(dtype: Any) -> Any:
    return np.dtype(np.float32) if dtype in LOW_PRECISION else dtype


def row_stride(n: int, itemsize: int) -> int:
    """The elements between two rows of an (R, n) matrix: ``n`` rounded up to a whole odd
    number of 64-byte lines, so that a block of its columns maps its rows to every cache set
    (rows a power of two bytes apart all share a few sets: a step's pass over its columns
    then misses the cache on every row)."""
    per_line = max(1, 64 // itemsize)
    lines = -(-n // per_line)
    return (lines | 1) * per_line


def matrix(xp: Any, rows: int, n: int, dtype: Any) -> Any:
    """An uninitialised (rows, n) array whose rows are ``row_stride`` elements apart."""
    dtype = np.dtype(dtype)
    return xp.empty((rows, row_stride(n, dtype.itemsize)), dtype)[:, :n]


def workspace_size(block_rows: int, matrix_rows: int, n: int, itemsize: int) -> int:
    return block_rows * n + matrix_rows * row_stride(n, itemsize)


def new_workspace(xp: Any, block_rows: int, matrix_rows: int, n: int, dtype: Any) -> Any:
    """A workspace of ``block_rows`` per step and ``matrix_rows`` (its matrices' padding
    zeroed: the result is the same for the same operands)."""
    dtype = np.dtype(dtype)
    ld = row_stride(n, dtype.itemsize)
    ws = xp.empty(workspace_size(block_rows, matrix_rows, n, dtype.itemsize), dtype)
    ws[block_rows * n:].reshape(matrix_rows, ld)[:, n:] = 0
    return ws


def block(ws: Any, rows: int, first: int, b: int) -> Any:
    """The (rows, b) block of the step whose rows start at ``first``."""
    return ws[rows * first:rows * (first + b)].reshape(rows, b)


def matrix_part(ws: Any, block_rows: int, start: int, rows: int, n: int) -> Any:
    """Rows ``start:start + rows`` of the workspace's (matrix rows, n) matrix."""
    ld = row_stride(n, ws.itemsize)
    offset = block_rows * n + start * ld
    return ws[offset:offset + rows * ld].reshape(rows, ld)[:, :n]


def _cast(work: Any, *arrays: Any) -> list[Any]:
    return [None if a is None else a.astype(work, copy=False) for a in arrays]


def _bias(xp: Any, work: Any, b_ih: Any, b_hh: Any) -> Any:
    """The two biases as one contiguous vector (the LSTM's and RNN's gates add both), or
    None."""
    if b_ih is None and b_hh is None:
        return None
    if b_ih is None or b_hh is None:
        return xp.ascontiguousarray(_cast(work, b_ih if b_hh is None else b_hh)[0])
    return xp.ascontiguousarray(b_ih.astype(work) + b_hh.astype(work))


def _state(xp: Any, s: Any, work: Any) -> Any:
    """A (B, F) state as the loop holds it: (F, B), row-major, its own copy."""
    return xp.array(s.T, dtype=work, order="C", copy=True)


def _rows(s: Any, dtype: Any) -> Any:
    """The (F, B) state back as a row-major (B, F) array of ``dtype``."""
    return xp_of(s).ascontiguousarray(s.T).astype(dtype, copy=False)


def _sigmoid(xp: Any, x: Any) -> Any:
    return 1 / (1 + xp.exp(-x))


def _input_grads(dg: Any, x: Any, w_ih: Any, want_input: bool, want_weight: bool,
                 dtype: Any) -> tuple[Any, Any]:
    """The input's gradient ``dg^T w_ih`` (N, I) and w_ih's ``dg x`` (G, I)."""
    xp = xp_of(dg)
    return (xp.matmul(dg.T, w_ih).astype(dtype, copy=False) if want_input else None,
            xp.matmul(dg, x).astype(dtype, copy=False) if want_weight else None)


def _product(d: Any, states: Any, wanted: bool, dtype: Any) -> Any:
    """A recurrent weight's gradient: the gates' gradients times the states it multiplied."""
    return xp_of(d).matmul(d, states.T).astype(dtype, copy=False) if wanted else None


# ----------------------------------------------------------------------------- LSTM

def _lstm(x: Any, hx: Any, cx: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, w_hr: Any, *,
          batch_sizes: tuple[int, ...], reverse: bool) -> tuple[Any, Any, Any, Any]:
    xp, dtype = xp_of(x), x.dtype
    work = work_dtype(dtype)
    x, w_ih, w_hh, w_hr = _cast(work, x, w_ih, w_hh, w_hr)
    n, proj, hidden = x.shape[0], hx.shape[1], cx.shape[1]
    rows, extra = 6 * hidden, proj + (0 if w_hr is None else hidden)
    xg = xp.matmul(w_ih, x.T)
    ws = new_workspace(xp, rows, extra, n, work)
    before = matrix_part(ws, rows, 0, proj, n)
    raw = None if w_hr is None else matrix_part(ws, rows, proj, hidden, n)
    out = xp.empty((n, proj), work)
    h, c = _state(xp, hx, work), _state(xp, cx, work)
    bias = _bias(xp, work, b_ih, b_hh)
    for first, b in steps(batch_sizes, reverse):
        cols = slice(first, first + b)
        before[:, cols] = h[:, :b]
        pre = xg[:, cols] + xp.matmul(w_hh, h[:, :b])
        if bias is not None:
            pre += bias[:, None]
        g = block(ws, rows, first, b)
        g[:4 * hidden] = _sigmoid(xp, pre)
        g[2 * hidden:3 * hidden] = xp.tanh(pre[2 * hidden:3 * hidden])
        g[4 * hidden:5 * hidden] = c[:, :b]
        c[:, :b] = g[hidden:2 * hidden] * c[:, :b] + g[:hidden] * g[2 * hidden:3 * hidden]
        g[5 * hidden:] = xp.tanh(c[:, :b])
        new = g[3 * hidden:4 * hidden] * g[5 * hidden:]
        if raw is not None:
            raw[:, cols] = new
            new = xp.matmul(w_hr, new)
        h[:, :b] = new
        out[cols] = new.T
    return out.astype(dtype, copy=False), _rows(h, dtype), _rows(c, dtype), ws


def _lstm_backward(gy: Any, ghy: Any, gcy: Any, x: Any, w_ih: Any, w_hh: Any, w_hr: Any,
                   ws: Any, *, batch_sizes: tuple[int, ...], reverse: bool,
                   output_mask: tuple[bool, ...]) -> tuple[Any, ...]:
    xp, dtype, work = xp_of(ws), x.dtype, ws.dtype
    x, w_ih, w_hh, w_hr = _cast(work, x, w_ih, w_hh, w_hr)
    n, (gates, proj) = x.shape[0], w_hh.shape
    hidden = gates // 4
    rows = 6 * hidden
    dg = xp.empty((gates, n), work)
    dh, dc = _state(xp, ghy, work), _state(xp, gcy, work)
    dy = None if gy is None else gy.T.astype(work, copy=False)
    dproj = None if w_hr is None else xp.empty((proj, n), work)
    for first, b in reversed(steps(batch_sizes, reverse)):
        cols = slice(first, first + b)
        d = dh[:, :b]
        if dy is not None:
            d += dy[:, cols]
        if dproj is not None:
            dproj[:, cols] = d
            d = xp.matmul(w_hr.T, d)
        g = block(ws, rows, first, b)
        i, f, gate, o = (g[k * hidden:(k + 1) * hidden] for k in range(4))
        c_before, t = g[4 * hidden:5 * hidden], g[5 * hidden:]
        total = dc[:, :b] + d * o * (1 - t * t)
        dg[:hidden, cols] = total * gate * i * (1 - i)
        dg[hidden:2 * hidden, cols] = total * c_before * f * (1 - f)
        dg[2 * hidden:3 * hidden, cols] = total * i * (1 - gate * gate)
        dg[3 * hidden:, cols] = d * t * o * (1 - o)
        dc[:, :b] = total * f
        dh[:, :b] = xp.matmul(w_hh.T, dg[:, cols])
    grads = _input_grads(dg, x, w_ih, output_mask[0], output_mask[3], dtype)
    return (grads[0], _rows(dh, dtype) if output_mask[1] else None,
            _rows(dc, dtype) if output_mask[2] else None, grads[1],
            _product(dg, matrix_part(ws, rows, 0, proj, n), output_mask[4], dtype),
            dg.sum(1).astype(dtype, copy=False) if output_mask[5] else None,
            None if dproj is None or not output_mask[6] else
            _product(dproj, matrix_part(ws, rows, proj, hidden, n), True, dtype))


# ----------------------------------------------------------------------------- GRU

def _gru(x: Any, hx: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, *,
         batch_sizes: tuple[int, ...], reverse: bool) -> tuple[Any, Any, Any]:
    xp, dtype = xp_of(x), x.dtype
    work = work_dtype(dtype)
    x, w_ih, w_hh, b_ih, b_hh = _cast(work, x, w_ih, w_hh, b_ih, b_hh)
    n, hidden = x.shape[0], hx.shape[1]
    rows = 4 * hidden
    xg = xp.matmul(w_ih, x.T)
    if b_ih is not None:
        xg += b_ih[:, None]
    ws = new_workspace(xp, rows, hidden, n, work)
    before = matrix_part(ws, rows, 0, hidden, n)
    out = xp.empty((n, hidden), work)
    h = _state(xp, hx, work)
    for first, b in steps(batch_sizes, reverse):
        cols = slice(first, first + b)
        before[:, cols] = h[:, :b]
        hg = xp.matmul(w_hh, h[:, :b])
        if b_hh is not None:
            hg += b_hh[:, None]
        g = block(ws, rows, first, b)
        g[:2 * hidden] = _sigmoid(xp, xg[:2 * hidden, cols] + hg[:2 * hidden])
        g[3 * hidden:] = hg[2 * hidden:]
        g[2 * hidden:3 * hidden] = xp.tanh(xg[2 * hidden:, cols] + g[:hidden] * g[3 * hidden:])
        new = g[2 * hidden:3 * hidden]
        h[:, :b] = (h[:, :b] - new) * g[hidden:2 * hidden] + new
        out[cols] = h[:, :b].T
    return out.astype(dtype, copy=False), _rows(h, dtype), ws


def _gru_backward(gy: Any, ghy: Any, x: Any, w_ih: Any, w_hh: Any, ws: Any, *,
                  batch_sizes: tuple[int, ...], reverse: bool,
                  output_mask: tuple[bool, ...]) -> tuple[Any, ...]:
    xp, dtype, work = xp_of(ws), x.dtype, ws.dtype
    x, w_ih, w_hh = _cast(work, x, w_ih, w_hh)
    n, hidden = x.shape[0], w_hh.shape[1]
    rows = 4 * hidden
    before = matrix_part(ws, rows, 0, hidden, n)
    dxg, dhg = xp.empty((3 * hidden, n), work), xp.empty((3 * hidden, n), work)
    dh = _state(xp, ghy, work)
    dy = None if gy is None else gy.T.astype(work, copy=False)
    for first, b in reversed(steps(batch_sizes, reverse)):
        cols = slice(first, first + b)
        d = dh[:, :b]
        if dy is not None:
            d += dy[:, cols]
        g = block(ws, rows, first, b)
        r, z, new, hn = (g[k * hidden:(k + 1) * hidden] for k in range(4))
        dn = d * (1 - z) * (1 - new * new)
        dr = dn * hn * r * (1 - r)
        dz = d * (before[:, cols] - new) * z * (1 - z)
        dxg[:hidden, cols], dxg[hidden:2 * hidden, cols], dxg[2 * hidden:, cols] = dr, dz, dn
        dhg[:hidden, cols], dhg[hidden:2 * hidden, cols] = dr, dz
        dhg[2 * hidden:, cols] = dn * r
        dh[:, :b] = d * z + xp.matmul(w_hh.T, dhg[:, cols])
    grads = _input_grads(dxg, x, w_ih, output_mask[0], output_mask[2], dtype)
    return (grads[0], _rows(dh, dtype) if output_mask[1] else None, grads[1],
            _product(dhg, before, output_mask[3], dtype),
            dxg.sum(1).astype(dtype, copy=False) if output_mask[4] else None,
            dhg.sum(1).astype(dtype, copy=False) if output_mask[5] else None)


# ----------------------------------------------------------------------------- RNN

def _rnn(x: Any, hx: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, *,
         batch_sizes: tuple[int, ...], reverse: bool, nonlinearity: str) -> tuple[Any, Any, Any]:
    xp, dtype = xp_of(x), x.dtype
    work = work_dtype(dtype)
    x, w_ih, w_hh = _cast(work, x, w_ih, w_hh)
    n, hidden = x.shape[0], hx.shape[1]
    xg = xp.matmul(w_ih, x.T)
    bias = _bias(xp, work, b_ih, b_hh)
    ws = new_workspace(xp, hidden, hidden, n, work)
    before = matrix_part(ws, hidden, 0, hidden, n)
    out = xp.empty((n, hidden), work)
    h = _state(xp, hx, work)
    for first, b in steps(batch_sizes, reverse):
        cols = slice(first, first + b)
        before[:, cols] = h[:, :b]
        pre = xg[:, cols] + xp.matmul(w_hh, h[:, :b])
        if bias is not None:
            pre += bias[:, None]
        new = block(ws, hidden, first, b)
        new[...] = xp.maximum(pre, 0) if nonlinearity == "relu" else xp.tanh(pre)
        h[:, :b] = new
        out[cols] = new.T
    return out.astype(dtype, copy=False), _rows(h, dtype), ws


def _rnn_backward(gy: Any, ghy: Any, x: Any, w_ih: Any, w_hh: Any, ws: Any, *,
                  batch_sizes: tuple[int, ...], reverse: bool, nonlinearity: str,
                  output_mask: tuple[bool, ...]) -> tuple[Any, ...]:
    xp, dtype, work = xp_of(ws), x.dtype, ws.dtype
    x, w_ih, w_hh = _cast(work, x, w_ih, w_hh)
    n, hidden = x.shape[0], w_hh.shape[1]
    dg = xp.empty((hidden, n), work)
    dh = _state(xp, ghy, work)
    dy = None if gy is None else gy.T.astype(work, copy=False)
    for first, b in reversed(steps(batch_sizes, reverse)):
        cols = slice(first, first + b)
        d = dh[:, :b]
        if dy is not None:
            d += dy[:, cols]
        new = block(ws, hidden, first, b)
        # torch's relu passes no gradient where it gave 0
        dg[:, cols] = d * (new > 0) if nonlinearity == "relu" else d * (1 - new * new)
        dh[:, :b] = xp.matmul(w_hh.T, dg[:, cols])
    grads = _input_grads(dg, x, w_ih, output_mask[0], output_mask[2], dtype)
    return (grads[0], _rows(dh, dtype) if output_mask[1] else None, grads[1],
            _product(dg, matrix_part(ws, hidden, 0, hidden, n), output_mask[3], dtype),
            dg.sum(1).astype(dtype, copy=False) if output_mask[4] else None)


# ----------------------------------------------------------------------------- registration

def _workspace(block_rows: int, matrix_rows: int, x: Any) -> Any:
    dtype = work_dtype(meta._np(x.dtype))
    return meta.empty((workspace_size(block_rows, matrix_rows, x.shape[0], dtype.itemsize),),
                      dtype)


def _lstm_rule(x: Any, hx: Any, cx: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any,
               w_hr: Any, **params: Any) -> tuple[Any, Any, Any, Any]:
    (n, proj), hidden = (x.shape[0], hx.shape[1]), cx.shape[1]
    extra = proj + (0 if w_hr is None else hidden)
    return (meta.empty((n, proj), x.dtype), meta.empty(hx.shape, x.dtype),
            meta.empty(cx.shape, x.dtype), _workspace(6 * hidden, extra, x))


def _gru_rule(x: Any, hx: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any,
              **params: Any) -> tuple[Any, Any, Any]:
    hidden = hx.shape[1]
    return (meta.empty((x.shape[0], hidden), x.dtype), meta.empty(hx.shape, x.dtype),
            _workspace(4 * hidden, hidden, x))


def _rnn_rule(x: Any, hx: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any,
              **params: Any) -> tuple[Any, Any, Any]:
    hidden = hx.shape[1]
    return (meta.empty((x.shape[0], hidden), x.dtype), meta.empty(hx.shape, x.dtype),
            _workspace(hidden, hidden, x))


def _grads_rule(output_mask: tuple[bool, ...], dtype: Any, *shapes: Any) -> tuple[Any, ...]:
    return tuple(meta.empty(shape, dtype) if wanted else None
                 for wanted, shape in zip(output_mask, shapes))


def _lstm_backward_rule(gy: Any, ghy: Any, gcy: Any, x: Any, w_ih: Any, w_hh: Any, w_hr: Any,
                        ws: Any, *, output_mask: tuple[bool, ...], **params: Any) -> Any:
    mask = output_mask[:6] + (output_mask[6] and w_hr is not None,)
    return _grads_rule(mask, x.dtype, x.shape, ghy.shape, gcy.shape, w_ih.shape,
                       w_hh.shape, w_hh.shape[:1], None if w_hr is None else w_hr.shape)


def _gru_backward_rule(gy: Any, ghy: Any, x: Any, w_ih: Any, w_hh: Any, ws: Any, *,
                       output_mask: tuple[bool, ...], **params: Any) -> Any:
    return _grads_rule(output_mask, x.dtype, x.shape, ghy.shape, w_ih.shape, w_hh.shape,
                       w_hh.shape[:1], w_hh.shape[:1])


def _rnn_backward_rule(gy: Any, ghy: Any, x: Any, w_ih: Any, w_hh: Any, ws: Any, *,
                       output_mask: tuple[bool, ...], **params: Any) -> Any:
    return _grads_rule(output_mask, x.dtype, x.shape, ghy.shape, w_ih.shape, w_hh.shape,
                       w_hh.shape[:1])


_LAYER = ("input", "hx")
_WEIGHTS = ("w_ih", "w_hh", "b_ih", "b_hh")
LSTM_LAYER = register("lstm_layer", _lstm, _lstm_rule, "library",
                      arg_names=(*_LAYER, "cx", *_WEIGHTS, "w_hr"))
GRU_LAYER = register("gru_layer", _gru, _gru_rule, "library", arg_names=(*_LAYER, *_WEIGHTS))
RNN_LAYER = register("rnn_layer", _rnn, _rnn_rule, "library", arg_names=(*_LAYER, *_WEIGHTS))
LSTM_LAYER_BACKWARD = register(
    "lstm_layer_backward", _lstm_backward, _lstm_backward_rule, "library", False,
    arg_names=("grad_output", "grad_hy", "grad_cy", "input", "w_ih", "w_hh", "w_hr",
               "workspace"))
GRU_LAYER_BACKWARD = register(
    "gru_layer_backward", _gru_backward, _gru_backward_rule, "library", False,
    arg_names=("grad_output", "grad_hy", "input", "w_ih", "w_hh", "workspace"))
RNN_LAYER_BACKWARD = register(
    "rnn_layer_backward", _rnn_backward, _rnn_backward_rule, "library", False,
    arg_names=("grad_output", "grad_hy", "input", "w_ih", "w_hh", "workspace"))

FUNCTIONS: list[str] = []
METHODS: dict[str, Any] = {}

from . import recurrent_native  # noqa: E402,F401
