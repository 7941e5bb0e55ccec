"""MultiheadAttention and F.multi_head_attention_forward against torch's: the same weights
give the same outputs, attention weights, input and parameter gradients and ``repr``
(float32 and float64) for self-, key-value-shared and separate q/k/v attention, kdim/vdim,
bool and float masks (2-D and 3-D attn_mask, key_padding_mask, both, is_causal),
need_weights and average_attn_weights, add_bias_kv, add_zero_attn, no bias, batch_first
both ways and unbatched inputs; static_k/static_v; the mask-type warnings; torch's
exception types; the initialisation; and dropout's statistics in training."""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest
import torch
from nn_oracle import check_close, compare_modules, pair_modules

import ember.autograd as ag
import ember.core as E
import ember.nn as enn
import ember.nn.functional as F

DTYPES = ["float32", "float64"]
N, L, S, EMBED, HEADS = 2, 5, 6, 8, 2


def _rand(shape, dtype="float32", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _attention(nn, route, call, masks=(), **mha):
    """A module around ``nn.MultiheadAttention(**mha)`` whose forward takes the tensors
    that ``route`` names ('self': x; 'kv': query and a shared key/value; 'qkv': three),
    then the masks named in ``masks`` (float ones detached unless named with a '+'), and
    passes ``call`` as keyword arguments."""

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiheadAttention(**mha)

        def forward(self, *inputs):
            count = {"self": 1, "kv": 2, "qkv": 3}[route]
            xs, given = inputs[:count], inputs[count:]
            q, k, v = {"self": lambda: (xs[0],) * 3, "kv": lambda: (xs[0], xs[1], xs[1]),
                       "qkv": lambda: xs}[route]()
            kw = dict(call)
            for name, m in zip(masks, given):
                kw[name.rstrip("+")] = m if name.endswith("+") else m.detach()
            return self.attn(q, k, v, **kw)

    return Attention()


def _inputs(route, dtype, batch_first=False, batched=True, kdim=EMBED, vdim=EMBED,
            tgt=L, src=S):
    def shape(length, width):
        if not batched:
            return (length, width)
        return (N, length, width) if batch_first else (length, N, width)

    if route == "self":
        return [_rand(shape(tgt, EMBED), dtype)]
    if route == "kv":
        return [_rand(shape(tgt, EMBED), dtype), _rand(shape(src, kdim), dtype, 1)]
    return [_rand(shape(tgt, EMBED), dtype), _rand(shape(src, kdim), dtype, 1),
            _rand(shape(src, vdim), dtype, 2)]


def _check(route, dtype="float32", call=None, masks=(), mask_values=(), train=False,
           batch_first=False, batched=True, kdim=None, vdim=None, **mha):
    mha = {"embed_dim": EMBED, "num_heads": HEADS, "batch_first": batch_first,
           "kdim": kdim, "vdim": vdim, **mha}
    t, e = pair_modules(lambda nn: _attention(nn, route, call or {}, masks, **mha), dtype)
    xs = _inputs(route, dtype, batch_first, batched, kdim or EMBED, vdim or EMBED,
                 src=L if route == "self" else S)
    compare_modules(t, e, xs + [np.asarray(m) for m in mask_values], train=train)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("route", ["self", "kv", "qkv"])
@pytest.mark.parametrize("need_weights, average", [(True, True), (True, False),
                                                   (False, True)])
def test_attention_routes(dtype, batch_first, route, need_weights, average):
    _check(route, dtype, {"need_weights": need_weights, "average_attn_weights": average},
           batch_first=batch_first)


@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_dropout_zero_in_both_modes(train, batch_first):
    _check("self", call={"need_weights": False}, train=train, batch_first=batch_first,
           dropout=0.0)
    _check("kv", call={"need_weights": True}, train=train, batch_first=batch_first,
           dropout=0.0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kdim, vdim", [(3, 5), (EMBED, 4), (6, EMBED)])
@pytest.mark.parametrize("need_weights", [True, False])
def test_kdim_vdim(dtype, kdim, vdim, need_weights):
    for batch_first in (False, True):
        _check("qkv", dtype, {"need_weights": need_weights}, kdim=kdim, vdim=vdim,
               batch_first=batch_first)


def _bool_mask(shape, seed=3):
    m = np.random.default_rng(seed).random(shape) < 0.3
    m[..., 0] = False  # every query keeps a key
    return m


def _float_mask(shape, seed=4):
    return np.where(_bool_mask(shape, seed), -np.inf,
                    np.random.default_rng(seed).standard_normal(shape)).astype("float32")


def _masks(route, kind, dtype):
    src = L if route == "self" else S
    values = {
        "attn2_bool": _bool_mask((L, src)),
        "attn2_float": _float_mask((L, src)).astype(dtype),
        "attn3_bool": _bool_mask((N * HEADS, L, src)),
        "attn3_float": _float_mask((N * HEADS, L, src)).astype(dtype),
        "kpm_bool": _bool_mask((N, src), 5),
        "kpm_float": _float_mask((N, src), 6).astype(dtype),
    }
    return values[kind]


MASK_CASES = [
    ("attn_mask",), ("key_padding_mask",), ("attn_mask", "key_padding_mask"),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("route", ["self", "kv"])
@pytest.mark.parametrize("attn_kind", ["attn2_bool", "attn2_float", "attn3_bool",
                                       "attn3_float"])
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_attn_masks(dtype, route, attn_kind, need_weights, batch_first):
    _check(route, dtype, {"need_weights": need_weights}, ("attn_mask",),
           [_masks(route, attn_kind, dtype)], batch_first=batch_first)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kpm_kind", ["kpm_bool", "kpm_float"])
@pytest.mark.parametrize("attn_kind", [None, "attn2", "attn3"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_key_padding_mask(dtype, kpm_kind, attn_kind, need_weights):
    kind = kpm_kind.split("_")[1]
    masks, values = ["key_padding_mask"], [_masks("kv", kpm_kind, dtype)]
    if attn_kind is not None:  # the same type as the padding mask (no warning)
        masks.append("attn_mask")
        values.append(_masks("kv", f"{attn_kind}_{kind}", dtype))
    _check("kv", dtype, {"need_weights": need_weights}, masks, values)
    _check("kv", dtype, {"need_weights": need_weights}, masks, values, batch_first=True)


def _causal(length, dtype="float32"):
    return np.triu(np.full((length, length), -np.inf), 1).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("with_kpm", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_is_causal(dtype, need_weights, with_kpm, batch_first):
    masks, values = ["attn_mask"], [_causal(L, dtype)]
    if with_kpm:
        masks.append("key_padding_mask")
        values.append(_masks("self", "kpm_float", dtype))
    _check("self", dtype, {"need_weights": need_weights, "is_causal": True}, masks, values,
           batch_first=batch_first)


def test_is_causal_is_a_hint():
    # without weights or padding the hint replaces the mask, in both frameworks
    _check("self", call={"need_weights": False, "is_causal": True}, masks=("attn_mask",),
           mask_values=[np.zeros((L, L), "float32")])


def test_float_mask_gradient():
    _check("self", "float64", {"need_weights": False}, ("attn_mask+",),
           [_rand((L, L), "float64", 7)])
    _check("self", "float64", {"need_weights": True}, ("attn_mask+", "key_padding_mask+"),
           [_rand((N * HEADS, L, L), "float64", 7), _rand((N, L), "float64", 8)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias_kv, zero_attn", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_bias_kv_and_zero_attn(dtype, bias_kv, zero_attn, need_weights, batch_first):
    mha = {"add_bias_kv": bias_kv, "add_zero_attn": zero_attn}
    _check("self", dtype, {"need_weights": need_weights}, batch_first=batch_first, **mha)
    _check("kv", dtype, {"need_weights": need_weights}, ("attn_mask", "key_padding_mask"),
           [_masks("kv", "attn3_bool", dtype), _masks("kv", "kpm_bool", dtype)],
           batch_first=batch_first, **mha)
    _check("qkv", dtype, {"need_weights": need_weights}, ("attn_mask",),
           [_masks("kv", "attn2_float", dtype)], batch_first=batch_first, kdim=3, vdim=5,
           **mha)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("route", ["self", "qkv"])
def test_no_bias(dtype, route):
    _check(route, dtype, {"need_weights": False}, bias=False)
    _check(route, dtype, {"need_weights": True}, bias=False, add_bias_kv=True,
           kdim=None if route == "self" else 3)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("route", ["self", "kv", "qkv"])
@pytest.mark.parametrize("need_weights, average", [(True, True), (True, False),
                                                   (False, True)])
@pytest.mark.parametrize("batch_first", [False, True])
def test_unbatched(dtype, route, need_weights, average, batch_first):
    call = {"need_weights": need_weights, "average_attn_weights": average}
    _check(route, dtype, call, batched=False, batch_first=batch_first)
    src = L if route == "self" else S
    _check(route, dtype, call, ("attn_mask", "key_padding_mask"),
           [_bool_mask((HEADS, L, src)), _bool_mask((src,), 9)], batched=False,
           batch_first=batch_first, add_zero_attn=True)


@pytest.mark.parametrize("need_weights", [True, False])
def test_fully_padded_sample(need_weights):
    # a sample whose keys are all padding: NaN through the weights' softmax, as torch's;
    # the fused attention gives such queries zero weights (torch's safe softmax)
    kpm = np.zeros((N, L), bool)
    kpm[0] = True
    t, e = pair_modules(lambda nn: _attention(nn, "self", {"need_weights": need_weights},
                                              ("key_padding_mask",), embed_dim=EMBED,
                                              num_heads=HEADS))
    x = _rand((L, N, EMBED))
    expected = t(torch.tensor(x), torch.tensor(kpm))
    got = e(E.tensor(x), E.tensor(kpm))
    assert np.isnan(got[0].detach().numpy()[:, 0]).all() == need_weights
    check_close(expected, got, "output")


def test_single_head_and_one_sample():
    for heads in (1, 4):
        t, e = pair_modules(lambda nn: _attention(nn, "self", {}, (), embed_dim=4,
                                                  num_heads=heads))
        compare_modules(t, e, [_rand((3, 1, 4))])


# ------------------------------------------------------------------ the functional form


def _functional_args(lib, dtype, separate, statics, bias_kv, static_len=7):
    """Arguments of multi_head_attention_forward (as torch or Ember tensors, weights
    requiring grad) built from the same numpy values."""
    def make(a):
        # scaled as the default initialisation's, so that float32 is well conditioned
        a = a / math.sqrt(a.shape[-1])
        return (torch.tensor(a) if lib is torch else E.tensor(a)).requires_grad_()

    w = {"in_proj_weight": None if separate else make(_rand((3 * EMBED, EMBED), dtype, 10)),
         "in_proj_bias": make(_rand((3 * EMBED,), dtype, 11)),
         "bias_k": make(_rand((1, 1, EMBED), dtype, 12)) if bias_kv else None,
         "bias_v": make(_rand((1, 1, EMBED), dtype, 13)) if bias_kv else None,
         "out_proj_weight": make(_rand((EMBED, EMBED), dtype, 14)),
         "out_proj_bias": make(_rand((EMBED,), dtype, 15))}
    if separate:
        w.update(q_proj_weight=make(_rand((EMBED, EMBED), dtype, 16)),
                 k_proj_weight=make(_rand((EMBED, 3), dtype, 17)),
                 v_proj_weight=make(_rand((EMBED, 5), dtype, 18)))
    if statics:
        w.update(static_k=make(_rand((N * HEADS, static_len, EMBED // HEADS), dtype, 19)),
                 static_v=make(_rand((N * HEADS, static_len, EMBED // HEADS), dtype, 20)))
    return w


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("separate", [False, True])
@pytest.mark.parametrize("statics", [False, True])
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("extras", [False, True])
def test_functional_forward(dtype, separate, statics, need_weights, extras):
    # extras: a zero key/value, a key padding mask, a 3-D float attn_mask and (without
    # static keys, which refuse it) bias_k/bias_v; torch checks the masks against the
    # key's length, so static keys then have that length
    width = 3 if separate else EMBED
    q, k, v = _rand((L, N, EMBED), dtype), _rand((S, N, width), dtype, 1), \
        _rand((S, N, 5 if separate else EMBED), dtype, 2)
    bias_kv = extras and not statics
    static_len = S if extras else 7
    src = (static_len if statics else S) + bias_kv
    kpm = _float_mask((N, src), 21).astype(dtype)
    attn = _float_mask((N * HEADS, L, src), 22).astype(dtype)
    results = []
    for lib, fn in ((torch, torch.nn.functional.multi_head_attention_forward),
                    (E, F.multi_head_attention_forward)):
        w = _functional_args(lib, dtype, separate, statics, bias_kv, static_len)
        qkv = [lib.tensor(a).requires_grad_() for a in (q, k, v)]
        masks = {"key_padding_mask": lib.tensor(kpm[:, :src - bias_kv]),
                 "attn_mask": lib.tensor(attn[..., :src - bias_kv])} if extras else {}
        out, weights = fn(*qkv, EMBED, HEADS, w.pop("in_proj_weight"), w.pop("in_proj_bias"),
                          w.pop("bias_k"), w.pop("bias_v"), extras, 0.0,
                          w.pop("out_proj_weight"), w.pop("out_proj_bias"), training=True,
                          need_weights=need_weights, use_separate_proj_weight=separate,
                          **masks, **w)
        total = out.sum() if weights is None else out.sum() + (weights * weights).sum()
        if lib is torch:
            total.backward()
        else:
            ag.backward(total)
        results.append((out, weights, [x.grad for x in qkv],
                        {n: x.grad for n, x in w.items()}))
    (to, tw, tg, tpg), (eo, ew, eg, epg) = results
    check_close(to, eo, "output")
    check_close(tw, ew, "weights")
    check_close(tg, eg, "input grads")
    for name in tpg:
        check_close(tpg[name], epg[name], f"{name} grad")


# ------------------------------------------------------------------ errors and warnings


def _same_error(program):
    """``program(nn, lib)`` raises under torch; under Ember it raises the same type."""
    with pytest.raises(Exception) as expected:
        program(torch.nn, torch)
    with pytest.raises(Exception) as got:
        program(enn, E)
    assert type(got.value) is type(expected.value), (expected.value, got.value)
    return expected.value, got.value


def _call(mha_kwargs, shapes, **call):
    """A program building MultiheadAttention(**mha_kwargs) and calling it on zeros of
    ``shapes`` (query, key, value, then masks named in ``call`` as ('shape', dtype))."""
    def program(nn, lib):
        m = nn.MultiheadAttention(**{k: getattr(lib, v) if k == "dtype" else v
                                     for k, v in mha_kwargs.items()})
        xs = [lib.zeros(s) for s in shapes]
        kw = {k: (lib.zeros(v[0], dtype=getattr(lib, v[1])) if isinstance(v, tuple) else v)
              for k, v in call.items()}
        return m(*xs, **kw)
    return program


ERRORS = [
    ({"embed_dim": 0, "num_heads": 2}, [], {}),
    ({"embed_dim": 8, "num_heads": -1}, [], {}),
    ({"embed_dim": 8, "num_heads": 3}, [], {}),
    ({"embed_dim": 8, "num_heads": 2}, [(5, 8), (5, 2, 8), (5, 2, 8)], {}),
    ({"embed_dim": 8, "num_heads": 2}, [(5, 2, 8), (5, 8), (5, 8)], {}),
    ({"embed_dim": 8, "num_heads": 2}, [(1, 5, 2, 8)] * 3, {}),
    ({"embed_dim": 8, "num_heads": 2}, [(5, 2, 6)] * 3, {}),
    ({"embed_dim": 8, "num_heads": 2}, [(5, 2, 8), (6, 2, 8), (7, 2, 8)], {}),
    ({"embed_dim": 8, "num_heads": 2, "kdim": 3}, [(5, 2, 8), (6, 2, 3), (7, 2, 8)], {}),
    ({"embed_dim": 8, "num_heads": 2, "kdim": 3}, [(5, 2, 8), (6, 2, 4), (6, 2, 8)], {}),
    ({"embed_dim": 8, "num_heads": 2}, [(5, 2, 8)] * 3,
     {"key_padding_mask": ((2, 5, 1), "bool")}),
    ({"embed_dim": 8, "num_heads": 2}, [(5, 2, 8)] * 3,
     {"key_padding_mask": ((3, 5), "bool")}),
    ({"embed_dim": 8, "num_heads": 2}, [(5, 2, 8)] * 3,
     {"key_padding_mask": ((2, 4), "bool")}),
    ({"embed_dim": 8, "num_heads": 2}, [(5, 2, 8)] * 3, {"attn_mask": ((5,), "bool")}),
    ({"embed_dim": 8, "num_heads": 2}, [(5, 2, 8)] * 3, {"attn_mask": ((4, 5), "bool")}),
    ({"embed_dim": 8, "num_heads": 2}, [(5, 2, 8)] * 3, {"attn_mask": ((2, 5, 5), "bool")}),
    ({"embed_dim": 8, "num_heads": 2}, [(5, 2, 8)] * 3, {"attn_mask": ((5, 5), "int64")}),
    ({"embed_dim": 8, "num_heads": 2}, [(5, 2, 8)] * 3,
     {"key_padding_mask": ((2, 5), "int32")}),
    ({"embed_dim": 8, "num_heads": 2}, [(5, 2, 8)] * 3, {"is_causal": True}),
    ({"embed_dim": 8, "num_heads": 2}, [(5, 8)] * 3, {"key_padding_mask": ((2, 5), "bool")}),
    ({"embed_dim": 8, "num_heads": 2}, [(5, 8)] * 3, {"attn_mask": ((3, 5, 5), "bool")}),
    ({"embed_dim": 8, "num_heads": 2}, [(5, 8)] * 3, {"attn_mask": ((5,), "bool")}),
    ({"embed_dim": 8, "num_heads": 2}, [(5, 2, 8), (6, 3, 8), (6, 3, 8)], {}),
    ({"embed_dim": 8, "num_heads": 2, "batch_first": True},
     [(2, 5, 8), (3, 6, 8), (3, 6, 8)], {"need_weights": False}),
    ({"embed_dim": 8, "num_heads": 2, "kdim": 4}, [(5, 2, 8), (6, 3, 4), (6, 3, 8)], {}),
    ({"embed_dim": 8, "num_heads": 2, "add_bias_kv": True},
     [(5, 2, 8), (6, 3, 8), (6, 3, 8)], {}),
    ({"embed_dim": 8, "num_heads": 2, "dtype": "float64"}, [(5, 2, 8)] * 3, {}),
]


@pytest.mark.parametrize("mha, shapes, call", ERRORS)
def test_errors(mha, shapes, call):
    _same_error(_call(mha, shapes, **call))


def test_functional_errors():
    def program(**changes):
        def run(nn, lib):
            fn = nn.functional.multi_head_attention_forward
            z = lambda *s: lib.zeros(s)  # noqa: E731
            args = {"in_proj_weight": z(24, 8), "in_proj_bias": z(24), "bias_k": None,
                    "bias_v": None, "out_proj_weight": z(8, 8), "out_proj_bias": z(8)}
            args.update({k: v(z) if callable(v) else v for k, v in changes.items()})
            return fn(z(5, 2, 8), z(6, 2, 8), z(6, 2, 8), 8, 2, args.pop("in_proj_weight"),
                      args.pop("in_proj_bias"), args.pop("bias_k"), args.pop("bias_v"),
                      False, 0.0, args.pop("out_proj_weight"), args.pop("out_proj_bias"),
                      **args)
        return run

    for changes in [
        {"in_proj_weight": None},
        {"use_separate_proj_weight": True},
        {"use_separate_proj_weight": True, "q_proj_weight": lambda z: z(8, 8),
         "k_proj_weight": lambda z: z(8, 8)},
        {"use_separate_proj_weight": True, "q_proj_weight": lambda z: z(8, 7),
         "k_proj_weight": lambda z: z(8, 8), "v_proj_weight": lambda z: z(8, 8)},
        {"use_separate_proj_weight": True, "q_proj_weight": lambda z: z(8, 8),
         "k_proj_weight": lambda z: z(8, 8), "v_proj_weight": lambda z: z(8, 8),
         "in_proj_bias": lambda z: z(27)},
        {"bias_k": lambda z: z(1, 1, 8)},
        {"bias_v": lambda z: z(1, 1, 8)},
        {"bias_k": lambda z: z(1, 1, 8), "bias_v": lambda z: z(1, 1, 8),
         "static_k": lambda z: z(4, 6, 4)},
        {"bias_k": lambda z: z(1, 1, 8), "bias_v": lambda z: z(1, 1, 8),
         "static_v": lambda z: z(4, 6, 4)},
        {"static_k": lambda z: z(3, 6, 4)},
        {"static_k": lambda z: z(4, 6, 3)},
        {"static_v": lambda z: z(5, 6, 4)},
        {"static_v": lambda z: z(4, 6, 5)},
        {"attn_mask": lambda z: z(1, 2, 5, 6)},
    ]:
        expected, got = _same_error(program(**changes))
        assert str(got) == str(expected)


def test_error_messages_name_torch_shapes():
    for mha, shapes, call in ERRORS[6:16] + ERRORS[-5:-2]:
        expected, got = _same_error(_call(mha, shapes, **call))
        assert str(got) == str(expected)
    # batch_first inputs are named as the (L, N, E) shapes torch's function sees
    expected, got = _same_error(_call({"embed_dim": 8, "num_heads": 2, "batch_first": True},
                                      [(2, 5, 8), (2, 6, 8), (2, 7, 8)]))
    assert str(got) == str(expected)


@pytest.mark.parametrize("kpm, attn", [("bool", "float32"), ("float32", "bool"),
                                       ("float64", "float32")])
def test_mismatched_mask_types_warn(kpm, attn):
    def run(nn, lib):
        m = nn.MultiheadAttention(8, 2)
        x = lib.zeros(5, 2, 8)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                m(x, x, x, key_padding_mask=lib.zeros(2, 5, dtype=getattr(lib, kpm)),
                  attn_mask=lib.zeros(5, 5, dtype=getattr(lib, attn)))
            except RuntimeError:
                pass  # torch's attention refuses a float64 mask on float32 queries
        return [str(w.message) for w in caught if "mismatched" in str(w.message)]

    expected = run(torch.nn, torch)
    assert expected and run(enn, E) == expected


# ------------------------------------------------------------------ module surface


def test_state_dict_keys_and_repr():
    for kw in [{}, {"kdim": 3, "vdim": 5}, {"add_bias_kv": True}, {"bias": False},
               {"add_bias_kv": True, "bias": False, "kdim": 4}]:
        t, e = pair_modules(lambda nn: nn.MultiheadAttention(8, 2, **kw))  # noqa: B023
        assert repr(t) == repr(e)
        assert [n for n, _ in t.named_parameters()] == [n for n, _ in e.named_parameters()]
        for name in ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight",
                     "in_proj_bias", "bias_k", "bias_v"):
            assert (getattr(t, name) is None) == (getattr(e, name) is None), name
        assert type(e.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
        assert isinstance(e.out_proj, enn.Linear)
        for attr in ("embed_dim", "kdim", "vdim", "_qkv_same_embed_dim", "num_heads",
                     "dropout", "batch_first", "head_dim", "add_zero_attn"):
            assert getattr(t, attr) == getattr(e, attr), attr


def test_initialisation():
    E.manual_seed(0)
    m = enn.MultiheadAttention(64, 4, add_bias_kv=True, kdim=32)
    for w, fan in ((m.q_proj_weight, 64 + 64), (m.k_proj_weight, 64 + 32),
                   (m.v_proj_weight, 64 + 64)):
        a = w.detach().numpy()
        bound = math.sqrt(6.0 / fan)
        assert np.abs(a).max() <= bound and np.abs(a).max() > 0.9 * bound
    m2 = enn.MultiheadAttention(64, 4)
    a = m2.in_proj_weight.detach().numpy()
    bound = math.sqrt(6.0 / (64 + 192))
    assert np.abs(a).max() <= bound and np.abs(a).max() > 0.9 * bound
    assert not m2.in_proj_bias.detach().numpy().any()
    assert not m2.out_proj.bias.detach().numpy().any()
    # the out projection keeps Linear's init: U(-1/sqrt(64), 1/sqrt(64))
    assert np.abs(m2.out_proj.weight.detach().numpy()).max() <= 1 / 8
    # bias_k (1, 1, E): xavier_normal_, std sqrt(2 / (fan_in + fan_out)) = sqrt(1 / E)
    draws = []
    for seed in range(16):
        E.manual_seed(seed)
        m3 = enn.MultiheadAttention(256, 1, add_bias_kv=True)
        draws += [m3.bias_k.detach().numpy(), m3.bias_v.detach().numpy()]
    assert abs(np.concatenate(draws).std() * math.sqrt(256) - 1) < 0.05


def test_merge_masks():
    for kpm, attn in [(True, False), (False, True), (True, True), (False, False)]:
        for attn_dims in (2, 3):
            results = []
            for nn, lib in ((torch.nn, torch), (enn, E)):
                m = nn.MultiheadAttention(8, 2, batch_first=True)
                q = lib.zeros(3, 4, 8)
                shape = (4, 4) if attn_dims == 2 else (6, 4, 4)
                a = lib.tensor(_float_mask(shape)) if attn else None
                k = lib.tensor(_float_mask((3, 4), 5)) if kpm else None
                results.append(m.merge_masks(a, k, q))
            (tm, tt), (em, et) = results
            assert tt == et
            check_close(tm, em, "merged mask")


def test_deepcopy_and_pickle_state():
    e = enn.MultiheadAttention(8, 2, kdim=3)
    c = copy.deepcopy(e)
    assert c.q_proj_weight is not e.q_proj_weight
    np.testing.assert_array_equal(c.k_proj_weight.detach().numpy(),
                                  e.k_proj_weight.detach().numpy())
    state = dict(e.__dict__)
    del state["_qkv_same_embed_dim"]
    fresh = enn.MultiheadAttention.__new__(enn.MultiheadAttention)
    fresh.__setstate__(state)
    assert fresh._qkv_same_embed_dim is True


# ------------------------------------------------------------------ dropout in training


def test_dropout_statistics_of_weights():
    E.manual_seed(1)
    m = enn.MultiheadAttention(16, 2, dropout=0.5)
    x = E.tensor(_rand((32, 4, 16)))
    m.eval()
    _, kept = m(x, x, x, average_attn_weights=False)
    m.train()
    out, dropped = m(x, x, x, average_attn_weights=False)
    assert tuple(out.shape) == (32, 4, 16) and tuple(dropped.shape) == (4, 2, 32, 32)
    k, d = kept.detach().numpy(), dropped.detach().numpy()
    zero = d == 0
    np.testing.assert_allclose(d[~zero], 2 * k[~zero], rtol=1e-5)
    assert abs(zero.mean() - 0.5) < 0.03
    # eval mode is deterministic; training draws new masks each call
    _, again = m(x, x, x, average_attn_weights=False)
    assert (again.detach().numpy() != d).any()


def test_dropout_statistics_of_fused_attention():
    E.manual_seed(2)
    m = enn.MultiheadAttention(8, 2, dropout=0.3)
    x = E.tensor(_rand((6, 2, 8)))
    m.eval()
    expected = m(x, x, x, need_weights=False)[0].detach().numpy()
    m.train()
    with ag.no_grad():
        draws = np.stack([m(x, x, x, need_weights=False)[0].numpy() for _ in range(3000)])
    assert not np.allclose(draws[0], expected)
    # dropout(p) / (1 - p) keeps the expectation: the mean of the draws tends to eval's
    np.testing.assert_allclose(draws.mean(0), expected, atol=0.06)

