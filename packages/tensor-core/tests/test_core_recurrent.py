"""The recurrent layer primitives against torch's composition of the same layer
(``recurrent_oracle``): outputs and final states, and the fused backwards' gradients
against torch's autograd, over dense and packed rows in both directions, with and without
biases and projections, for strided operands, half types and empty batches; the native
passes over the gates against their numpy reference."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from recurrent_oracle import layer, operand_shapes, torch_layer
from torch_oracle import check

import ember.core as ember
from ember.core import native
from ember.core.ops import recurrent, recurrent_native

needs_native = pytest.mark.skipif(
    native._compiler() is None or os.environ.get("EMBER_NATIVE") == "0",
    reason="no C compiler: the reference runs")

KINDS = ["lstm", "lstm_proj", "gru", "rnn_tanh", "rnn_relu"]
SIZES = {"dense": (3, 3, 3, 3), "packed": (3, 3, 2, 1, 1), "one step": (2,)}
_BACKWARD = {"lstm": recurrent.LSTM_LAYER_BACKWARD, "gru": recurrent.GRU_LAYER_BACKWARD,
             "rnn": recurrent.RNN_LAYER_BACKWARD}
_FORWARD = {"lstm": recurrent.LSTM_LAYER, "gru": recurrent.GRU_LAYER, "rnn": recurrent.RNN_LAYER}
# each gradient the backward gives: the operand it belongs to (the bias: b_ih's)
_GRADS = {"lstm": (0, 1, 2, 3, 4, 5, 7), "gru": (0, 1, 2, 3, 4, 5), "rnn": (0, 1, 2, 3, 4)}


def _kind(kind):
    return "lstm" if kind.startswith("lstm") else kind


def _family(kind):
    return kind.split("_")[0]


def _arrays(kind, sizes, dtype="float64", bias=True, seed=0):
    shapes = operand_shapes(_kind(kind), sum(sizes), sizes[0], 5, 6,
                            proj=3 if kind == "lstm_proj" else 0, bias=bias)
    rng = np.random.default_rng(seed)
    return [None if s is None else rng.uniform(-1, 1, s).astype(dtype) for s in shapes]


def _both(arrays, dtype=None, laid_out=None):
    es, ts = [], []
    for a in arrays:
        if a is None:
            es.append(None)
            ts.append(None)
            continue
        e = ember.from_numpy(a.copy())
        if laid_out is not None and a.ndim == 2:
            e = laid_out(e)
        ts.append(torch.from_numpy(a.copy()))
        es.append(e)
    if dtype is not None:
        es = [None if e is None else e.to(getattr(ember, dtype)) for e in es]
        ts = [None if t is None else t.to(getattr(torch, dtype)) for t in ts]
    return es, ts


def _params(kind, sizes, reverse):
    params = {"batch_sizes": sizes, "reverse": reverse}
    if kind.startswith("rnn"):
        params["nonlinearity"] = kind[4:]
    return params


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("sizes", SIZES.values(), ids=SIZES.keys())
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_forward_and_backward_match_torch(kind, sizes, reverse, bias, dtype):
    es, ts = _both(_arrays(kind, sizes, dtype, bias))
    for t in ts:
        if t is not None:
            t.requires_grad_(True)
    expected = torch_layer(_kind(kind), ts, sizes, reverse)
    params = _params(kind, sizes, reverse)
    results = _FORWARD[_family(kind)](*es, **params)
    for a, b in zip(results, expected):
        check(a, b)
    rng = np.random.default_rng(1)
    grads = [rng.standard_normal(tuple(r.shape)).astype(dtype) for r in expected]
    wanted = [ts[i] for i in _GRADS[_family(kind)] if ts[i] is not None]
    found = iter(torch.autograd.grad(list(expected), wanted, [torch.from_numpy(g) for g in
                                                              grads]))
    eg = [ember.from_numpy(g) for g in grads]
    mask = tuple(es[i] is not None for i in _GRADS[_family(kind)])
    if _family(kind) == "lstm":
        operands = (*eg, es[0], es[3], es[4], es[7], results[3])
    else:
        operands = (*eg, es[0], es[2], es[3], results[2])
    got = _BACKWARD[_family(kind)](*operands, **params, output_mask=mask)
    for wanted_grad, grad in zip(mask, got):
        if wanted_grad:
            check(grad, next(found))
        else:
            assert grad is None


@pytest.mark.parametrize("kind", KINDS)
def test_strided_and_expanded_operands(kind):
    sizes = SIZES["packed"]
    arrays = _arrays(kind, sizes, "float32")
    for laid_out in (lambda t: t.t().contiguous().t(), lambda t: t[:1].expand(*t.shape),
                     lambda t: ember.stack([t, t], -1).reshape(t.shape[0], -1)[:, ::2]):
        es, _ = _both(arrays, laid_out=laid_out)
        ts = [None if e is None else torch.from_numpy(np.array(e)) for e in es]
        for a, b in zip(layer(ember, _kind(kind), es, sizes, True),
                        torch_layer(_kind(kind), ts, sizes, True)):
            check(a, b)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("kind", KINDS)
def test_half_types_compute_in_float32_and_round_once(kind, dtype):
    """As torch's fused kernels do: the results are float32's, rounded to the half type."""
    sizes = SIZES["packed"]
    es, ts = _both(_arrays(kind, sizes, "float32"), dtype)
    rounded = [None if t is None else t.float() for t in ts]
    results = layer(ember, _kind(kind), es, sizes, False)
    for a, b in zip(results, torch_layer(_kind(kind), rounded, sizes, False)):
        assert a.dtype == getattr(ember, dtype)
        check(a, b.to(getattr(torch, dtype)))
    workspace = _FORWARD[_family(kind)](*es, **_params(kind, sizes, False))[-1]
    assert workspace.dtype == ember.float32


@pytest.mark.parametrize("kind", KINDS)
def test_an_empty_batch(kind):
    sizes = (0, 0)
    es, ts = _both(_arrays(kind, sizes, "float32"))
    for a, b in zip(layer(ember, _kind(kind), es, sizes, False),
                    torch_layer(_kind(kind), ts, sizes, False)):
        check(a, b)


@needs_native
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", KINDS)
def test_native_passes_match_the_reference(kind, dtype):
    family = _family(kind)
    for name in ("_step", "_step_backward"):
        assert recurrent_native._loop(family + name, np.dtype(dtype)) is not None
    sizes = SIZES["packed"]
    es, _ = _both(_arrays(kind, sizes, dtype))
    arrays = [None if e is None else np.array(e) for e in es]
    params = _params(kind, sizes, True)
    forward = {"lstm": (recurrent_native._lstm_kernel, recurrent._lstm),
               "gru": (recurrent_native._gru_kernel, recurrent._gru),
               "rnn": (recurrent_native._rnn_kernel, recurrent._rnn)}[family]
    native, reference = (f(*arrays, **params) for f in forward)
    tol = 1e-6 if dtype == "float32" else 1e-14
    for a, b in zip(native, reference):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    grads = [np.random.default_rng(3).standard_normal(r.shape).astype(dtype)
             for r in native[:3 if family == "lstm" else 2]]
    ops = (arrays[0], arrays[3], arrays[4], arrays[7]) if family == "lstm" else \
        (arrays[0], arrays[2], arrays[3])
    backward = {"lstm": (recurrent_native._lstm_backward_kernel, recurrent._lstm_backward),
                "gru": (recurrent_native._gru_backward_kernel, recurrent._gru_backward),
                "rnn": (recurrent_native._rnn_backward_kernel, recurrent._rnn_backward)}[family]
    mask = (True,) * len(_GRADS[family])
    native_grads, reference_grads = (f(*grads, *ops, native[-1], **params, output_mask=mask)
                                     for f in backward)
    for a, b in zip(native_grads, reference_grads):
        if b is None:
            assert a is None
        else:
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
