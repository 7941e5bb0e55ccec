"""linear, bilinear, the convolutions (padding strings, conv_tbc) and
scaled_dot_product_attention of ember.nn.functional against torch.nn.functional: values
and input gradients in float32 and float64, leading dims, bias shapes, dtypes and errors."""

from __future__ import annotations

import pytest
from functional_oracle import DTYPES, compare, same_error


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", [
    [(4, 3), (5, 3)], [(4, 3), (5, 3), (5,)], [(2, 4, 3), (5, 3), (5,)], [(2, 2, 4, 3), (5, 3)],
    [(3,), (5, 3), (5,)], [(3,), (3,)], [(4, 3), (3,)], [(4, 3), (5, 3), (4, 5)],
    [(2, 4, 3), (5, 3), (4, 5)], [(0, 3), (5, 3), (5,)]])
def test_linear(shapes, dtype):
    compare(lambda m, *a: m.F.linear(*a), shapes, dtype)


def test_linear_non_contiguous_input():
    compare(lambda m, x, w, b: m.F.linear(x.transpose(0, 1), w, b), [(4, 2, 3), (5, 3), (5,)])


def test_linear_integers():
    compare(lambda m: m.F.linear(m.arange(6).view(2, 3), m.arange(15).view(5, 3),
                                 m.arange(5)), [])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", [
    [(4, 3), (4, 2), (5, 3, 2)], [(4, 3), (4, 2), (5, 3, 2), (5,)],
    [(2, 4, 3), (2, 4, 2), (5, 3, 2), (5,)], [(3,), (2,), (5, 3, 2), (5,)]])
def test_bilinear(shapes, dtype):
    compare(lambda m, *a: m.F.bilinear(*a), shapes, dtype)


@pytest.mark.parametrize("call", [
    lambda m: m.F.linear(m.ones(2, 3), m.ones(5, 4)),
    lambda m: m.F.linear(m.ones(2, 2, 3), m.ones(5, 4), m.ones(5)),
    lambda m: m.F.linear(m.ones(()), m.ones(5, 4)),
    lambda m: m.F.linear(m.ones(2, 3), m.ones(5, 3), m.ones(4)),
    lambda m: m.F.linear(m.ones(2, 2, 3), m.ones(5, 3), m.ones(4)),
    lambda m: m.F.linear(m.ones(2, 3), m.ones(5, 3, 1)),
    lambda m: m.F.linear(m.ones(2, 3), m.ones(3), m.ones(())),
    lambda m: m.F.linear(m.ones(2, 3, dtype=m.float64), m.ones(5, 3)),
    lambda m: m.F.bilinear(m.ones(2, 3), m.ones(2, 4), m.ones(5, 2, 4)),
    lambda m: m.F.bilinear(m.ones(2, 3), m.ones(2, 4), m.ones(5, 3, 3)),
    lambda m: m.F.bilinear(m.ones(2, 3), m.ones(3, 4), m.ones(5, 3, 4)),
    lambda m: m.F.bilinear(m.ones(2, 3), m.ones(2, 4), m.ones(5, 3, 4), m.ones(4)),
    lambda m: m.F.bilinear(m.ones(2, 3), m.ones(2, 2, 4), m.ones(5, 3, 4)),
    lambda m: m.F.bilinear(m.ones(()), m.ones(()), m.ones(5, 3, 4)),
    lambda m: m.F.bilinear(m.ones(2, 3, dtype=m.float64), m.ones(2, 4), m.ones(5, 3, 4)),
    lambda m: m.F.bilinear(m.ones(2, 3), m.ones(2, 4), m.ones(5, 3, 4),
                           m.ones(5, dtype=m.float64)),
])
def test_linear_errors(call):
    same_error(call)


def test_bilinear_weight_of_two_dims():
    # (IndexError, its message worded by Ember's Tensor.size)
    same_error(lambda m: m.F.bilinear(m.ones(2, 3), m.ones(2, 4), m.ones(5, 3)), exact=False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("kw", [{}, {"padding": "same"}, {"padding": "valid"},
                                {"padding": "same", "dilation": 2},
                                {"stride": 2, "padding": 1, "groups": 2}])
def test_conv(nd, kw, dtype):
    spatial = (7, 6, 5)[:nd]
    kernel = (3, 2, 3)[:nd]
    compare(lambda m, x, w, b: getattr(m.F, f"conv{nd}d")(x, w, b, **kw),
            [(2, 4, *spatial), (6, 2 if kw.get("groups") else 4, *kernel), (6,)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("kw", [{}, {"stride": 2, "padding": 1, "output_padding": 1},
                                {"groups": 2, "dilation": 2}])
def test_conv_transpose(nd, kw, dtype):
    spatial = (5, 4, 3)[:nd]
    kernel = (3, 2, 3)[:nd]
    compare(lambda m, x, w, b: getattr(m.F, f"conv_transpose{nd}d")(x, w, b, **kw),
            [(2, 4, *spatial), (4, 3, *kernel), (6 if kw.get("groups") else 3,)], dtype)


@pytest.mark.parametrize("call", [
    lambda m: m.F.conv2d(m.ones(1, 2, 5, 5), m.ones(3, 2, 3, 3), padding="foo"),
    lambda m: m.F.conv2d(m.ones(1, 2, 5, 5), m.ones(3, 2, 3, 3), padding="same", stride=2),
    lambda m: m.F.conv_transpose2d(m.ones(1, 2, 5, 5), m.ones(2, 3, 3, 3), padding="same"),
    lambda m: m.F.conv_transpose1d(m.ones(1, 2, 5), m.ones(2, 3, 3), padding="valid"),
    lambda m: m.F.conv1d(m.ones(1, 2, 5, 5), m.ones(3, 2, 3)),
])
def test_conv_errors(call):
    same_error(call)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pad", [0, 1, 2])
def test_conv_tbc(pad, dtype):
    compare(lambda m, x, w, b: m.F.conv_tbc(x, w, b, pad), [(7, 2, 3), (3, 3, 4), (4,)], dtype)


@pytest.mark.parametrize("shapes", [[(7, 2), (3, 3, 4), (4,)], [(7, 2, 3), (3, 3), (4,)],
                                    [(7, 2, 3), (3, 3, 4), (4, 1)], [(7, 2, 3), (3, 2, 4), (4,)],
                                    [(7, 2, 3), (3, 3, 4), (5,)]])
def test_conv_tbc_errors(shapes):
    same_error(lambda m: m.F.conv_tbc(*(m.ones(*s) for s in shapes)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"scale": 0.3}])
def test_scaled_dot_product_attention(kw, dtype):
    compare(lambda m, q, k, v: m.F.scaled_dot_product_attention(q, k, v, **kw),
            [(2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 7)], dtype)


def test_scaled_dot_product_attention_masks():
    compare(lambda m, q, k, v, mask: m.F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
            [(2, 5, 4), (2, 6, 4), (2, 6, 3), (5, 6)])
    compare(lambda m, q, k, v: m.F.scaled_dot_product_attention(
        q, k, v, attn_mask=m.ones(5, 6, dtype=m.bool).tril()), [(2, 5, 4), (2, 6, 4), (2, 6, 3)])
