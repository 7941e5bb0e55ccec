"""The transformer layers against torch.nn's: TransformerEncoderLayer,
TransformerDecoderLayer, TransformerEncoder, TransformerDecoder and Transformer with the
same weights give the same outputs, input and parameter gradients and ``repr`` (float32
and float64) for batch_first both ways, norm_first both ways, activations 'relu', 'gelu'
and callables, no bias, bool and float masks, key padding masks, causal hints (given and
detected) and unbatched inputs; the inference path over padded batches (nested tensors in
torch); the layer clones, initialisation, warnings and torch's exception types; and
dropout in training."""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest
import torch
from nn_oracle import check_close, compare_modules, pair_modules, to_ember
from torch.nn.modules.transformer import _detect_is_causal_mask as torch_detect

import ember.autograd as ag
import ember.core as E
import ember.nn as enn
from ember.nn.modules.transformer import _detect_is_causal_mask

DTYPES = ["float32", "float64"]
D, HEADS, FF = 8, 2, 16
N, S, T = 2, 5, 4


def _rand(shape, dtype="float32", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _seq(length, dtype, batch_first, batched=True, seed=0):
    if not batched:
        return _rand((length, D), dtype, seed)
    return _rand((N, length, D) if batch_first else (length, N, D), dtype, seed)


def _causal(length, dtype="float32"):
    return np.triu(np.full((length, length), -np.inf), 1).astype(dtype)


def _bool_mask(shape, seed=3):
    m = np.random.default_rng(seed).random(shape) < 0.3
    m[..., 0] = False  # every query keeps a key
    return m


def _float_mask(shape, dtype, seed=4):
    return np.where(_bool_mask(shape, seed), -np.inf,
                    np.random.default_rng(seed).standard_normal(shape)).astype(dtype)


def _wrapped(nn, build, names, call):
    """A module around ``build(nn)`` whose forward takes its tensors positionally, passes
    the trailing ones as the keyword arguments ``names`` (masks, detached) and ``call``."""

    class Wrapped(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = build(nn)

        def forward(self, *inputs):
            count = len(inputs) - len(names)
            kw = {n: m.detach() for n, m in zip(names, inputs[count:])}
            return self.inner(*inputs[:count], **kw, **call)

    return Wrapped()


def _check(build, tensors, masks=None, call=None, dtype="float32", train=False):
    masks = masks or {}
    t, e = pair_modules(lambda nn: _wrapped(nn, build, list(masks), call or {}), dtype)
    compare_modules(t, e, list(tensors) + [np.asarray(m) for m in masks.values()],
                    train=train)


def _encoder_layer(batch_first=False, norm_first=False, activation="relu", **kw):
    return lambda nn: nn.TransformerEncoderLayer(D, HEADS, FF, 0.0, activation,
                                                 batch_first=batch_first,
                                                 norm_first=norm_first, **kw)


def _decoder_layer(batch_first=False, norm_first=False, activation="relu", **kw):
    return lambda nn: nn.TransformerDecoderLayer(D, HEADS, FF, 0.0, activation,
                                                 batch_first=batch_first,
                                                 norm_first=norm_first, **kw)


ACTIVATIONS = ["relu", "gelu", "module", "function"]


def _activation(nn, kind):
    """The activation named ``kind`` for ``nn`` (torch.nn or ember.nn): a string, a module
    (shown in the repr) or a function."""
    if kind == "module":
        return nn.GELU(approximate="tanh")
    if kind == "function":
        return nn.functional.silu
    return kind


# ------------------------------------------------------------------ encoder layer


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_encoder_layer(dtype, batch_first, norm_first, activation):
    def build(nn):
        return _encoder_layer(batch_first, norm_first, _activation(nn, activation))(nn)
    _check(build, [_seq(S, dtype, batch_first)], dtype=dtype)


@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_encoder_layer_modes_and_bias(train, bias):
    _check(_encoder_layer(True, False, bias=bias), [_seq(S, "float32", True)], train=train)
    _check(_encoder_layer(False, True, bias=bias, layer_norm_eps=1e-3),
           [_seq(S, "float32", False)], train=train)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["bool", "float"])
@pytest.mark.parametrize("which", ["mask", "padding", "both", "mask3d"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_masks(dtype, kind, which, norm_first):
    def mask(shape, seed):
        return _bool_mask(shape, seed) if kind == "bool" else _float_mask(shape, dtype, seed)

    masks = {}
    if which in ("mask", "both"):
        masks["src_mask"] = mask((S, S), 3)
    if which == "mask3d":
        masks["src_mask"] = mask((N * HEADS, S, S), 3)
    if which in ("padding", "both"):
        masks["src_key_padding_mask"] = mask((N, S), 5)
    for batch_first in (False, True):
        _check(_encoder_layer(batch_first, norm_first), [_seq(S, dtype, batch_first)],
               masks, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("with_padding", [False, True])
def test_encoder_layer_is_causal(dtype, with_padding):
    masks = {"src_mask": _causal(S, dtype)}
    if with_padding:
        masks["src_key_padding_mask"] = _float_mask((N, S), dtype, 5)
    _check(_encoder_layer(True, True, "gelu"), [_seq(S, dtype, True)], masks,
           {"is_causal": True}, dtype=dtype)


@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_layer_unbatched(batch_first):
    _check(_encoder_layer(batch_first), [_seq(S, "float32", batch_first, batched=False)])
    _check(_encoder_layer(batch_first, True), [_seq(S, "float32", batch_first, False)],
           {"src_mask": _bool_mask((S, S)), "src_key_padding_mask": _bool_mask((S,), 7)})


def test_encoder_layer_attributes():
    for activation in ("relu", "gelu"):
        t, e = pair_modules(_encoder_layer(activation=activation))
        assert t.activation_relu_or_gelu == e.activation_relu_or_gelu
        assert e.activation is (enn.functional.relu if activation == "relu"
                                else enn.functional.gelu)
    for make in (lambda nn: nn.GELU(approximate="tanh"), lambda nn: nn.functional.silu,
                 lambda nn: nn.ReLU(), lambda nn: nn.GELU(), lambda nn: nn.functional.gelu,
                 lambda nn: nn.ReLU6()):
        codes = [nn.TransformerEncoderLayer(D, HEADS, FF, activation=make(nn))
                 .activation_relu_or_gelu for nn in (torch.nn, enn)]
        assert codes[0] == codes[1]
    e = enn.TransformerEncoderLayer(D, HEADS)
    assert e.norm_first is False and e.self_attn.batch_first is False
    assert [n for n, _ in e.named_parameters()] == \
        [n for n, _ in torch.nn.TransformerEncoderLayer(D, HEADS).named_parameters()]


# ------------------------------------------------------------------ decoder layer


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_decoder_layer(dtype, batch_first, norm_first, activation):
    def build(nn):
        return _decoder_layer(batch_first, norm_first, _activation(nn, activation))(nn)
    _check(build, [_seq(T, dtype, batch_first), _seq(S, dtype, batch_first, seed=1)],
           dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["bool", "float"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_layer_masks(dtype, kind, norm_first, batch_first):
    def mask(shape, seed):
        return _bool_mask(shape, seed) if kind == "bool" else _float_mask(shape, dtype, seed)

    masks = {"tgt_mask": mask((T, T), 3), "memory_mask": mask((T, S), 4),
             "tgt_key_padding_mask": mask((N, T), 5),
             "memory_key_padding_mask": mask((N, S), 6)}
    _check(_decoder_layer(batch_first, norm_first),
           [_seq(T, dtype, batch_first), _seq(S, dtype, batch_first, seed=1)], masks,
           dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_decoder_layer_causal_and_unbatched(dtype):
    _check(_decoder_layer(True, True, "gelu"),
           [_seq(T, dtype, True), _seq(S, dtype, True, seed=1)],
           {"tgt_mask": _causal(T, dtype)}, {"tgt_is_causal": True}, dtype=dtype)
    _check(_decoder_layer(False, False, bias=False),
           [_seq(T, dtype, False, False), _seq(S, dtype, False, False, 1)],
           {"tgt_mask": _causal(T, dtype), "memory_key_padding_mask": _bool_mask((S,), 8)},
           {"tgt_is_causal": True}, dtype=dtype)


# ------------------------------------------------------------------ stacks


def _encoder(batch_first=False, norm_first=False, norm=True, layers=2, **kw):
    def build(nn):
        layer = nn.TransformerEncoderLayer(D, HEADS, FF, 0.0, batch_first=batch_first,
                                           norm_first=norm_first)
        return nn.TransformerEncoder(layer, layers, nn.LayerNorm(D) if norm else None, **kw)
    return build


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("norm", [False, True])
def test_encoder(dtype, batch_first, norm_first, norm):
    build = _encoder(batch_first, norm_first, norm, enable_nested_tensor=False)
    _check(build, [_seq(S, dtype, batch_first)], dtype=dtype)
    _check(build, [_seq(S, dtype, batch_first)],
           {"mask": _float_mask((S, S), dtype),
            "src_key_padding_mask": _float_mask((N, S), dtype, 5)},
           dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("is_causal", [None, True, False])
def test_encoder_causal_mask_detected(dtype, is_causal):
    # None detects the causal mask; True uses it as the hint; False uses it as a mask
    _check(_encoder(True, True, enable_nested_tensor=False), [_seq(S, dtype, True)],
           {"mask": _causal(S, dtype)}, {"is_causal": is_causal}, dtype=dtype)


def test_detect_is_causal_mask():
    cases = [(_causal(S), None, None), (_causal(S), None, S), (_causal(S), None, S + 1),
             (_float_mask((S, S), "float32"), None, None), (_causal(S), False, None),
             (None, True, None), (None, None, None), (_causal(S) == 0, None, None)]
    for mask, hint, size in cases:
        t = torch_detect(None if mask is None else torch.tensor(mask), hint, size)
        e = _detect_is_causal_mask(None if mask is None else E.tensor(mask), hint, size)
        assert t == e, (mask, hint, size)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm", [False, True])
def test_decoder(dtype, batch_first, norm):
    def build(nn):
        layer = nn.TransformerDecoderLayer(D, HEADS, FF, 0.0, batch_first=batch_first)
        return nn.TransformerDecoder(layer, 2, nn.LayerNorm(D) if norm else None)
    tensors = [_seq(T, dtype, batch_first), _seq(S, dtype, batch_first, seed=1)]
    _check(build, tensors, dtype=dtype)
    _check(build, tensors, {"tgt_mask": _causal(T, dtype),
                            "memory_key_padding_mask": _bool_mask((N, S))}, dtype=dtype)


def test_layers_are_deep_copies():
    layer = enn.TransformerEncoderLayer(D, HEADS, FF)
    enc = enn.TransformerEncoder(layer, 3, enable_nested_tensor=False)
    assert len(enc.layers) == 3 and enc.num_layers == 3
    weights = [m.linear1.weight for m in enc.layers]
    assert len({id(w) for w in weights} | {id(layer.linear1.weight)}) == 4
    for w in weights:
        np.testing.assert_array_equal(w.detach().numpy(), layer.linear1.weight.detach().numpy())
    with ag.no_grad():
        enc.layers[0].linear1.weight.add_(1.0)
    assert not np.array_equal(enc.layers[0].linear1.weight.detach().numpy(),
                              enc.layers[1].linear1.weight.detach().numpy())
    dec = enn.TransformerDecoder(enn.TransformerDecoderLayer(D, HEADS, FF), 2)
    assert dec.layers[0].multihead_attn is not dec.layers[1].multihead_attn


# ------------------------------------------------------------------ the whole transformer


def _transformer(batch_first=False, norm_first=False, **kw):
    return lambda nn: nn.Transformer(D, HEADS, 2, 2, FF, 0.0, batch_first=batch_first,
                                     norm_first=norm_first, **kw)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer(dtype, batch_first, norm_first):
    tensors = [_seq(S, dtype, batch_first), _seq(T, dtype, batch_first, seed=1)]
    build = _transformer(batch_first, norm_first)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # enable_nested_tensor's, in both
        _check(build, tensors, dtype=dtype)
        _check(build, tensors, {
            "src_mask": _float_mask((S, S), dtype), "tgt_mask": _causal(T, dtype),
            "memory_mask": _bool_mask((T, S)), "src_key_padding_mask": _bool_mask((N, S), 5),
            "tgt_key_padding_mask": _bool_mask((N, T), 6),
            "memory_key_padding_mask": _bool_mask((N, S), 7)}, dtype=dtype)
        _check(build, tensors, {"tgt_mask": _causal(T, dtype)},
               {"tgt_is_causal": True}, dtype=dtype)


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_transformer_options(activation):
    tensors = [_seq(S, "float32", True), _seq(T, "float32", True, seed=1)]

    def build(nn):
        return nn.Transformer(D, HEADS, 1, 2, FF, 0.0, _activation(nn, activation),
                              layer_norm_eps=1e-4, batch_first=True, bias=False)
    _check(build, tensors, train=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check(_transformer(), [_seq(S, "float32", False, False),
                                _seq(T, "float32", False, False, 1)],
               {"tgt_mask": _causal(T)})


def test_transformer_custom_encoder_decoder():
    def build(nn):
        encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(D, HEADS, FF, 0.0, batch_first=True), 1,
            enable_nested_tensor=False)
        decoder = nn.TransformerDecoder(
            nn.TransformerDecoderLayer(D, HEADS, FF, 0.0, batch_first=True), 1)
        return nn.Transformer(D, HEADS, custom_encoder=encoder, custom_decoder=decoder,
                              batch_first=True)
    _check(build, [_seq(S, "float32", True), _seq(T, "float32", True, seed=1)])


def test_transformer_initialisation():
    E.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = enn.Transformer(32, 4, 1, 1, 64)
    for name, p in m.named_parameters():
        a = p.detach().numpy()
        if p.dim() > 1:
            fan_out, fan_in = a.shape[0], a.shape[1]
            bound = math.sqrt(6.0 / (fan_in + fan_out))
            assert np.abs(a).max() <= bound and np.abs(a).max() > 0.8 * bound, name
    attn = m.encoder.layers[0].self_attn
    assert not attn.in_proj_bias.detach().numpy().any()
    assert (m.encoder.norm.weight.detach().numpy() == 1).all()
    assert m.d_model == 32 and m.nhead == 4 and m.batch_first is False


def test_generate_square_subsequent_mask():
    for args in [(1,), (4,), (0,)]:
        check_close(torch.nn.Transformer.generate_square_subsequent_mask(*args),
                    enn.Transformer.generate_square_subsequent_mask(*args), "mask")
    check_close(torch.nn.Transformer.generate_square_subsequent_mask(3, dtype=torch.float64),
                enn.Transformer.generate_square_subsequent_mask(3, dtype=E.float64), "mask")
    # a static method, callable on an instance too
    assert enn.Transformer.__dict__["generate_square_subsequent_mask"].__class__ is \
        staticmethod


# ------------------------------------------------------------------ inference on padded batches


@pytest.mark.parametrize("padding", [
    [[False, False, False, True, True], [False] * 5],
    [[True] * 5, [False, False, True, True, True]],
    [[False, True, False, True, True], [False] * 5],  # not left aligned
])
@pytest.mark.parametrize("mask_check", [True, False])
@pytest.mark.parametrize("norm", [False, True])
def test_encoder_inference_on_padded_batch(padding, mask_check, norm):
    t, e = pair_modules(_encoder(True, False, norm, mask_check=mask_check))
    t.eval()
    e.eval()
    x = _seq(S, "float32", True)
    kpm = np.array(padding)
    with torch.no_grad():
        expected = t(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm))
    with ag.no_grad():
        got = e(E.tensor(x), src_key_padding_mask=E.tensor(kpm))
    check_close(expected, got, "output")
    # with gradients wanted, no position is dropped
    expected = t(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm))
    got = e(E.tensor(x), src_key_padding_mask=E.tensor(kpm))
    check_close(expected, got, "output with grad")


def test_nested_tensor_warnings():
    def layer(nn, **kw):
        return nn.TransformerEncoderLayer(D, HEADS, FF, **kw)

    def silu_layer(nn):
        return layer(nn, activation=nn.functional.silu, batch_first=True)

    cases = [lambda nn: layer(nn), lambda nn: layer(nn, batch_first=True, norm_first=True),
             lambda nn: layer(nn, batch_first=True, bias=False), silu_layer,
             lambda nn: nn.TransformerEncoderLayer(D, 1, FF, batch_first=True),
             lambda nn: layer(nn, batch_first=True)]
    for build in cases:
        messages = []
        for nn in (torch.nn, enn):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                enc = nn.TransformerEncoder(build(nn), 1)
            messages.append(([str(w.message) for w in caught], enc.use_nested_tensor))
        assert messages[0] == messages[1]
    e = enn.TransformerEncoder(layer(enn, batch_first=True), 1, enable_nested_tensor=False)
    assert e.enable_nested_tensor is False and e.use_nested_tensor is False


def test_mismatched_mask_types_warn():
    def run(nn, lib):
        layer = nn.TransformerEncoderLayer(D, HEADS, FF, 0.0)
        x = lib.zeros(S, N, D)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            layer(x, src_mask=lib.zeros(S, S), src_key_padding_mask=lib.zeros(N, S,
                                                                              dtype=lib.bool))
        return [str(w.message) for w in caught if "mismatched" in str(w.message)]

    expected = run(torch.nn, torch)
    assert expected and run(enn, E) == expected


# ------------------------------------------------------------------ errors


def _same_error(program):
    with pytest.raises(Exception) as expected:
        program(torch.nn, torch)
    with pytest.raises(Exception) as got:
        program(enn, E)
    assert type(got.value) is type(expected.value), (expected.value, got.value)
    assert str(got.value) == str(expected.value)


def _quiet(build):
    def program(nn, lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return build(nn, lib)
    return program


@pytest.mark.parametrize("program", [
    lambda nn, lib: nn.TransformerEncoderLayer(D, HEADS, activation="tanh"),
    lambda nn, lib: nn.TransformerDecoderLayer(D, HEADS, activation="swish"),
    lambda nn, lib: nn.TransformerEncoderLayer(D, 3),
    lambda nn, lib: nn.Transformer(D, HEADS, 1, 1, FF)(lib.zeros(S, N, D),
                                                       lib.zeros(T, N + 1, D)),
    lambda nn, lib: nn.Transformer(D, HEADS, 1, 1, FF, batch_first=True)(
        lib.zeros(N, S, D), lib.zeros(N + 1, T, D)),
    lambda nn, lib: nn.Transformer(D, HEADS, 1, 1, FF)(lib.zeros(S, N, D),
                                                       lib.zeros(T, N, D + 2)),
    lambda nn, lib: nn.Transformer(D, HEADS, 1, 1, FF)(lib.zeros(S, N, D + 2),
                                                       lib.zeros(T, N, D)),
    lambda nn, lib: nn.TransformerEncoderLayer(D, HEADS, FF)(lib.zeros(S, N, D + 1)),
    lambda nn, lib: nn.TransformerEncoderLayer(D, HEADS, FF)(lib.zeros(S, N, D),
                                                             is_causal=True),
    lambda nn, lib: nn.TransformerEncoderLayer(D, HEADS, FF)(
        lib.zeros(S, N, D), src_mask=lib.zeros(S, S, dtype=lib.int64)),
    lambda nn, lib: nn.TransformerEncoderLayer(D, HEADS, FF)(
        lib.zeros(S, N, D), src_mask=lib.zeros(S + 1, S)),
    lambda nn, lib: nn.TransformerDecoderLayer(D, HEADS, FF)(lib.zeros(T, N, D),
                                                             lib.zeros(S, N + 1, D)),
    lambda nn, lib: nn.TransformerDecoderLayer(D, HEADS, FF)(
        lib.zeros(T, N, D), lib.zeros(S, N, D), memory_mask=lib.zeros(T, T)),
    lambda nn, lib: nn.TransformerEncoder(nn.TransformerEncoderLayer(D, HEADS, FF), 1)(
        lib.zeros(S, N, D), mask=lib.zeros(S, S, dtype=lib.int32)),
])
def test_errors(program):
    _same_error(_quiet(program))


# ------------------------------------------------------------------ dropout in training


def test_dropout_in_training():
    E.manual_seed(0)
    layer = enn.TransformerEncoderLayer(16, 2, 32, dropout=0.5, batch_first=True)
    x = E.tensor(_rand((4, 10, 16)))
    layer.eval()
    first = layer(x).detach().numpy()
    np.testing.assert_array_equal(layer(x).detach().numpy(), first)
    layer.train()
    a, b = layer(x), layer(x)
    assert tuple(a.shape) == (4, 10, 16)
    assert not np.allclose(a.detach().numpy(), first)
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    # post-norm: every token's features keep LayerNorm's zero mean and unit variance
    np.testing.assert_allclose(a.detach().numpy().mean(-1), 0, atol=1e-5)
    # gradients flow through the dropped paths
    ag.backward(a.sum())
    assert layer.linear1.weight.grad is not None
    assert np.isfinite(layer.self_attn.in_proj_weight.grad.numpy()).all()


def test_dropout_modules_share_p():
    t = torch.nn.TransformerDecoderLayer(D, HEADS, FF, dropout=0.3)
    e = enn.TransformerDecoderLayer(D, HEADS, FF, dropout=0.3)
    assert repr(t) == repr(e)
    for name in ("dropout", "dropout1", "dropout2", "dropout3"):
        assert getattr(e, name).p == 0.3
    assert e.self_attn.dropout == 0.3 and e.multihead_attn.dropout == 0.3


def test_deepcopy_keeps_values():
    t, e = pair_modules(_decoder_layer(True, True, "gelu"))
    c = copy.deepcopy(e)
    x, m = _seq(T, "float32", True), _seq(S, "float32", True, seed=1)
    check_close(t(torch.tensor(x), torch.tensor(m)), c(to_ember(torch.tensor(x)),
                                                       to_ember(torch.tensor(m))), "copy")
