"""VJPs of elementwise, pointwise and conversion ops against torch, and by gradcheck.

One line per case: ``(id, fn(m, *inputs), input shapes, options)``; ``m`` is torch or
ember.core. Every case runs in float64 and float32 against ``torch.autograd.grad``, on
non-contiguous inputs, and through ``gradcheck`` (float64 finite differences).
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from autograd_oracle import (
    E,
    compare_grads,
    compare_value_grads,
    data_options,
    first,
    functional,
    inputs,
)

import ember.autograd

POS = {"low": 0.5, "high": 2.0}  # domain of log, sqrt, division...
UNIT = {"low": -0.9, "high": 0.9}  # domain of asin, atanh, erfinv...
NO_GRADCHECK = {"gradcheck": False}  # float32 inside, or not differentiable there (ties)
M, V = (3, 4), (4,)

CASES: list[tuple[str, Any, list[tuple[int, ...]], dict[str, Any]]] = [
    # ---------------------------------------------------------------- arithmetic, broadcasting
    ("add", lambda m, x, y: x + y, [M, V], {}),
    ("add_alpha", lambda m, x, y: m.add(x, y, alpha=2), [M, (3, 1)], {}),
    ("add_scalar", lambda m, x: x + 2, [M], {}),
    ("add_0d", lambda m, x, y: x + y, [(), (3,)], {}),
    ("sub", lambda m, x, y: x - y, [(2, 1, 4), (3, 1)], {}),
    ("rsub", lambda m, x: 2 - x, [M], {}),
    ("mul", lambda m, x, y: x * y, [M, V], {}),
    ("mul_empty", lambda m, x, y: x * y, [(0, 3), (1, 3)], {}),
    ("mul_mixed_dtype", lambda m, x, y: x * y.float(), [M, V], NO_GRADCHECK),
    ("div", lambda m, x, y: x / y, [M, V], POS),
    # rounding division: a zero gradient for both operands (DivBackward2)
    ("div_trunc", lambda m, x, y: m.div(x, y, rounding_mode="trunc") + x, [M, V], POS),
    ("div_floor", lambda m, x, y: m.div(x, y, rounding_mode="floor") + y, [M, V], POS),
    ("div_floor_scalar", lambda m, x: m.div(x, 0.3, rounding_mode="floor") * x, [M], {}),
    ("rdiv", lambda m, x: 2 / x, [M], POS),
    ("remainder", lambda m, x, y: m.remainder(x, y), [M, V], POS),
    ("fmod", lambda m, x, y: m.fmod(x, y), [M, V], POS),
    ("pow", lambda m, x, y: x ** y, [M, V], POS),
    ("pow_scalar", lambda m, x: x ** 3, [M], {}),
    ("pow_half", lambda m, x: x ** 0.5, [M], POS),
    ("pow_zero", lambda m, x: x ** 0, [M], {}),
    ("rpow", lambda m, x: 2 ** x, [M], {}),
    ("float_power", lambda m, x, y: m.float_power(x, y), [M, V], POS),
    ("maximum", lambda m, x, y: m.maximum(x, y), [M, V], {}),
    ("minimum", lambda m, x, y: m.minimum(x, y), [M, V], {}),
    ("maximum_ties", lambda m, x: m.maximum(x, x.detach()), [M], NO_GRADCHECK),
    ("fmax", lambda m, x, y: m.fmax(x, y), [M, V], {}),
    ("fmin", lambda m, x, y: m.fmin(x, y), [M, V], {}),
    ("atan2", lambda m, x, y: m.atan2(x, y), [M, V], {}),
    ("hypot", lambda m, x, y: m.hypot(x, y), [M, V], {}),
    ("copysign", lambda m, x, y: m.copysign(x, y), [M, V], {}),
    ("logaddexp", lambda m, x, y: m.logaddexp(x, y), [M, V], {}),
    ("logaddexp2", lambda m, x, y: m.logaddexp2(x, y), [M, V], {}),
    ("xlogy", lambda m, x, y: m.xlogy(x, y), [M, V], POS),
    ("addcmul", lambda m, x, y, z: m.addcmul(x, y, z, value=2), [M, M, V], {}),
    ("addcdiv", lambda m, x, y, z: m.addcdiv(x, y, z, value=0.5), [M, M, V], POS),
    ("lerp", lambda m, x, y: m.lerp(x, y, 0.3), [M, V], {}),
    ("lerp_tensor", lambda m, x, y, w: m.lerp(x, y, w), [M, M, V], {}),
    # ---------------------------------------------------------------- unary
    ("neg", lambda m, x: -x, [M], {}),
    ("abs", lambda m, x: x.abs(), [M], {}),
    ("sign", lambda m, x: x.sign() * x, [M], {}),
    ("sgn", lambda m, x: x.sgn() * x, [M], {}),
    ("floor", lambda m, x: x.floor() + x, [M], {}),
    ("ceil", lambda m, x: x.ceil() + x, [M], {}),
    ("trunc", lambda m, x: x.trunc() + x, [M], {}),
    ("round", lambda m, x: x.round() + x, [M], {}),
    ("frac", lambda m, x: x.frac(), [M], {}),
    ("exp", lambda m, x: x.exp(), [M], {}),
    ("exp_0d", lambda m, x: x.exp(), [()], {}),
    ("exp_empty", lambda m, x: x.exp(), [(0,)], {}),
    ("exp2", lambda m, x: x.exp2(), [M], {}),
    ("expm1", lambda m, x: x.expm1(), [M], {}),
    ("log", lambda m, x: x.log(), [M], POS),
    ("log2", lambda m, x: x.log2(), [M], POS),
    ("log10", lambda m, x: x.log10(), [M], POS),
    ("log1p", lambda m, x: x.log1p(), [M], POS),
    ("sqrt", lambda m, x: x.sqrt(), [M], POS),
    ("rsqrt", lambda m, x: x.rsqrt(), [M], POS),
    ("sin", lambda m, x: x.sin(), [M], {}),
    ("cos", lambda m, x: x.cos(), [M], {}),
    ("tan", lambda m, x: x.tan(), [M], UNIT),
    ("asin", lambda m, x: x.asin(), [M], UNIT),
    ("acos", lambda m, x: x.acos(), [M], UNIT),
    ("atan", lambda m, x: x.atan(), [M], {}),
    ("sinh", lambda m, x: x.sinh(), [M], {}),
    ("cosh", lambda m, x: x.cosh(), [M], {}),
    ("tanh", lambda m, x: x.tanh(), [M], {}),
    ("asinh", lambda m, x: x.asinh(), [M], {}),
    ("acosh", lambda m, x: x.acosh(), [M], {"low": 1.5, "high": 3.0}),
    ("atanh", lambda m, x: x.atanh(), [M], UNIT),
    ("sigmoid", lambda m, x: x.sigmoid(), [M], {}),
    ("erf", lambda m, x: x.erf(), [M], {}),
    ("erfc", lambda m, x: x.erfc(), [M], {}),
    ("erfinv", lambda m, x: x.erfinv(), [M], UNIT),
    ("lgamma", lambda m, x: x.lgamma(), [M], POS),
    ("digamma", lambda m, x: x.digamma(), [M], POS),
    ("digamma_negative", lambda m, x: x.digamma(), [M], {"low": -2.9, "high": -2.1}),
    ("reciprocal", lambda m, x: x.reciprocal(), [M], POS),
    ("square", lambda m, x: x.square(), [M], {}),
    ("relu", lambda m, x: x.relu(), [M], {}),
    ("sinc", lambda m, x: x.sinc(), [M], {}),
    ("deg2rad", lambda m, x: x.deg2rad(), [M], {}),
    ("rad2deg", lambda m, x: x.rad2deg(), [M], {}),
    ("logit", lambda m, x: x.logit(), [M], {"low": 0.1, "high": 0.9}),
    ("logit_eps", lambda m, x: x.logit(eps=0.3), [M], {"low": 0.1, "high": 0.9}),
    ("nan_to_num", lambda m, x: (x.log()).nan_to_num(), [M], {}),
    # ---------------------------------------------------------------- pointwise, conversion
    ("clamp", lambda m, x: x.clamp(-1, 1), [M], {}),
    ("clamp_min", lambda m, x: x.clamp(min=-0.5), [M], {}),
    ("clamp_tensors", lambda m, x, lo, hi: x.clamp(lo, hi), [M, V, (3, 1)], {}),
    ("clamp_tensor_min", lambda m, x, lo: x.clamp(min=lo), [M, V], {}),
    ("where", lambda m, x, y: m.where(x > 0, x, y), [M, V], {}),
    ("where_scalar", lambda m, x: m.where(x > 0, x, 0.0), [M], {}),
    ("softmax", lambda m, x: x.softmax(1), [M], {}),
    ("softmax_0d", lambda m, x: x.softmax(0), [()], {}),
    ("log_softmax", lambda m, x: x.log_softmax(0), [M], {}),
    ("layer_norm", lambda m, x, w, b: m.layer_norm(x, (4,), w, b), [M, V, V], {}),
    ("layer_norm_2d", lambda m, x, w: m.layer_norm(x, (3, 4), w), [(2, 3, 4), M], {}),
    ("layer_norm_bias", lambda m, x, b: m.layer_norm(x, (4,), None, b), [M, V], {}),
    ("layer_norm_rows", lambda m, x: m.layer_norm(x, (4,)), [(4,)], {}),
    ("native_layer_norm", lambda m, x, w: m.native_layer_norm(x, (4,), w, None, 0.1)[0],
     [M, V], {}),
    ("rms_norm", lambda m, x, w: m.rms_norm(x, (4,), w), [M, V], {}),
    ("gelu", lambda m, x: functional(m).gelu(x), [M], {"low": -4.0, "high": 4.0}),
    ("gelu_tanh", lambda m, x: functional(m).gelu(x, approximate="tanh"), [M],
     {"low": -4.0, "high": 4.0}),
    ("silu", lambda m, x: functional(m).silu(x), [M], {"low": -4.0, "high": 4.0}),
    ("silu_inplace", lambda m, x: functional(m).silu(x * 1, inplace=True), [M], {}),
    ("attention", lambda m, q, k, v: functional(m).scaled_dot_product_attention(q, k, v),
     [(2, 3, 4), (2, 5, 4), (2, 5, 3)], {}),
    # (value heads of another size take torch's math path: its flash kernel has no double
    # backward, which the forward-mode oracle needs)
    ("attention_causal_gqa", lambda m, q, k, v: functional(m).scaled_dot_product_attention(
        q, k, v, is_causal=True, enable_gqa=True), [(1, 4, 5, 4), (1, 2, 5, 4), (1, 2, 5, 3)],
     {}),
    ("attention_masked", lambda m, q, k, v: functional(m).scaled_dot_product_attention(
        q, k, v, attn_mask=m.tensor([[True, False, True], [False, False, False]])),
     [(2, 2, 4), (3, 4), (3, 4)], {}),
    ("batch_norm", lambda m, x, w, b: m.batch_norm(x, w, b, None, None, True, 0.1, 1e-5,
                                                   False), [(4, 3, 2), (3,), (3,)], {}),
    ("batch_norm_eval", lambda m, x, w: m.batch_norm(
        x, w, None, m.tensor([0.5, -1.0, 0.0], dtype=x.dtype),
        m.tensor([2.0, 0.5, 1.0], dtype=x.dtype), False, 0.1, 1e-5, False), [(4, 3, 2), (3,)],
     {}),
    ("group_norm", lambda m, x, w, b: m.group_norm(x, 2, w, b), [(2, 4, 3), (4,), (4,)], {}),
    # with p = 0 every element is kept: the one mask both frameworks draw alike
    ("native_dropout", lambda m, x: m.native_dropout(x, 0.0, True)[0] * x, [M], {}),
    ("embedding", lambda m, w: m.embedding(w, m.tensor([[1, 2, 2], [0, 1, 2]])), [M], {}),
    # padding and frequency scaling are torch's chosen gradients, not the derivative
    ("embedding_padded", lambda m, w: m.embedding(w, m.tensor([[1, 2, 2], [0, 1, 2]]), 2,
                                                  True), [M], NO_GRADCHECK),
    ("rms_norm_2d", lambda m, x: m.rms_norm(x, (3, 4), eps=0.1), [(2, 3, 4)], {}),
    ("nll_loss", lambda m, x: functional(m).nll_loss(x, m.tensor([1, 0, 3])), [M], {}),
    ("nll_loss_weighted", lambda m, x: functional(m).nll_loss(
        x, m.tensor([1, -100, 3]), m.arange(4, dtype=x.dtype) + 0.5, reduction="none"), [M], {}),
    ("nll_loss_1d", lambda m, x: functional(m).nll_loss(x, m.tensor(2), reduction="sum"), [V], {}),
    ("cross_entropy", lambda m, x: functional(m).cross_entropy(x, m.tensor([1, 0, 3])), [M], {}),
    ("cross_entropy_spatial", lambda m, x: functional(m).cross_entropy(
        x, m.tensor([[[1, 0], [3, -100]], [[0, 2], [1, 1]]]), m.arange(4, dtype=x.dtype) + 0.5),
     [(2, 4, 2, 2)], {}),
    ("cross_entropy_smoothing", lambda m, x: functional(m).cross_entropy(
        x, m.tensor([1, -100, 3]), m.arange(4, dtype=x.dtype) + 0.5, label_smoothing=0.2),
     [M], {}),
    ("cross_entropy_probabilities", lambda m, x, p: functional(m).cross_entropy(
        x, p.softmax(1), label_smoothing=0.1, reduction="none"), [M, M], {}),
    ("to_copy", lambda m, x: x.float() * 2, [M], NO_GRADCHECK),
    ("to_copy_double", lambda m, x: x.double() * 2, [M], {}),
    ("clone", lambda m, x: x.clone() * x, [M], {}),
    ("copy_", lambda m, x, y: (x * 1).copy_(y), [M, V], {}),
    ("complex", lambda m, x, y: m.complex(x, y) * 2, [M, M], NO_GRADCHECK),
    # torch's formula reads the result's sgn: it is the derivative only where abs >= 0
    ("polar", lambda m, x, y: m.polar(x, y) * (1 + 2j), [M, V], {**POS, **NO_GRADCHECK}),
]

IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_grad_matches_torch(case: Any, dtype: str) -> None:
    _, fn, shapes, opts = case
    compare_grads(fn, shapes, dtype, **data_options(opts))


@pytest.mark.parametrize("case", [c for c in CASES if all(len(s) > 1 for s in c[2])],
                         ids=[c[0] for c in CASES if all(len(s) > 1 for s in c[2])])
def test_grad_noncontiguous(case: Any) -> None:
    _, fn, shapes, opts = case
    compare_grads(fn, shapes, "float64", noncontiguous=True, **data_options(opts))


GRADCHECKED = [c for c in CASES if c[3].get("gradcheck", True)]


@pytest.mark.parametrize("case", GRADCHECKED, ids=[c[0] for c in GRADCHECKED])
def test_gradcheck(case: Any) -> None:
    _, fn, shapes, opts = case
    es, _ = inputs(shapes, "float64", **data_options(opts))
    assert ember.autograd.gradcheck(lambda *a: first(fn(E, *a)), es)


NAN = float("nan")
# torch's clamp bound gradients flow where x is strictly beyond the bound (a NaN x or bound
# gives them none); x's gradient where it lies within the bounds
CLAMP_NAN = [
    lambda m, x, lo: m.clamp(x, lo),
    lambda m, x, hi: m.clamp(x, None, hi),
    lambda m, x, lo: m.clamp(x, lo, m.full_like(x, 1.5)),
    lambda m, x, hi: m.clamp(x, m.full_like(x, 0.8), hi),
    lambda m, x, b: m.clamp(x, b, b * 0.5),
    lambda m, x, b: m.clamp(x, 0.6, 0.9) + b,
    lambda m, x, b: m.maximum(x, b),
    lambda m, x, b: m.minimum(x, b),
    lambda m, x, b: m.fmax(x, b),
]


@pytest.mark.parametrize("fn", CLAMP_NAN)
def test_nan_gradients_of_clamp_and_extremes(fn: Any) -> None:
    compare_value_grads(fn, [1.0, NAN, 0.5, 0.7], [0.7, 0.7, NAN, 0.7])


@pytest.mark.parametrize("x, y", [([0.0, -0.0, 1e-200, 0.0], [0.0, 0.0, 1e-200, -0.0]),
                                  ([1.0, float("inf")], [0.0, 0.0])])
def test_atan2_has_no_gradient_where_the_squares_sum_to_zero(x: Any, y: Any) -> None:
    compare_value_grads(lambda m, a, b: m.atan2(a, b), x, y)


def _grads_or_error(fn: Any, m: Any) -> Any:
    """``fn(m, leaf)``'s gradient for a float64 leaf (values as lists), or the error type."""
    x = m.tensor([1.5, -0.5], dtype=m.float64, requires_grad=True)
    try:
        fn(m, x).sum().backward()
    except Exception as e:
        return type(e)
    return None if x.grad is None else x.grad.tolist()


# torch's formulas read each operand as it was passed, before its kernel promoted it: in
# its own dtype (a float16 quotient, a bool that refuses negation), or a number
SAVED_AS_PASSED = {
    "atan2_bool": lambda m, x: m.atan2(m.tensor([True, False]), x),
    "logaddexp_bool": lambda m, x: m.logaddexp(m.tensor([True, False]), x),
    "addcdiv_float16_divisor": lambda m, x: m.addcdiv(
        m.zeros(2, dtype=m.float16), x, m.tensor([2.5, -0.7], dtype=m.float16), value=0.5),
    "addcmul_float16_factor": lambda m, x: m.addcmul(
        m.zeros(2, dtype=m.float16), x, m.tensor([2.5, -0.7], dtype=m.float16), value=0.375),
    "addcdiv_integer_divisor": lambda m, x: m.addcdiv(m.zeros(2), x, m.tensor([2, 3])),
    "atan2_float16": lambda m, x: m.atan2(m.tensor([0.3, 1.7], dtype=m.float16), x),
    "remainder_of_a_number": lambda m, x: 2.0 % x,
    "remainder_by_a_number": lambda m, x: x % 0.7,
    "power_of_a_bool": lambda m, x: True ** x,
    "power_of_a_float": lambda m, x: 2.0 ** x,
    "power_of_a_float16_base": lambda m, x: m.pow(m.tensor([2.0, 3.0], dtype=m.float16), x),
}


@pytest.mark.parametrize("name", list(SAVED_AS_PASSED))
def test_formulas_read_operands_as_passed(name: str) -> None:
    fn = SAVED_AS_PASSED[name]
    assert _grads_or_error(fn, E) == _grads_or_error(fn, torch)


def test_a_number_remainder_by_a_tensor_has_no_derivative_as_torch() -> None:
    ours = (2.0 % E.tensor([1.5], requires_grad=True)).grad_fn
    theirs = (2.0 % torch.tensor([1.5], requires_grad=True)).grad_fn
    assert ours.name() == theirs.name() == "torch::autograd::NotImplemented"
    assert len(ours.next_functions) == len(theirs.next_functions) == 1


def test_float_power_reads_its_operands_in_float64():
    """torch's float_power is pow of float64 casts: -2**31 in float32 less one is odd in
    float64 (the gradient at a base of -0.0 is +inf), even in float32."""
    grads = []
    for L in (E, torch):
        base = L.tensor(-0.0, dtype=L.float64, requires_grad=True)
        exponent = L.tensor([[1.0], [0.0], [3.0], [-2147483648.0]], dtype=L.float32)
        (L.float_power(base, exponent) * L.arange(4.0, dtype=L.float64).reshape(4, 1)).sum(
            ).backward()
        grads.append(base.grad.item())
    assert grads[0] == grads[1] == float("inf")


@pytest.mark.parametrize("eps", [None, 0.0])
def test_logit_gradient_is_positive_infinity_at_both_zeros(eps):
    """torch's kernel gives g * inf at 0 and 1, -0.0 included."""
    grads = []
    for L in (E, torch):
        x = L.tensor([-0.0, 0.0, 1.0, 0.25, 2.0], dtype=L.float64, requires_grad=True)
        L.logit(x, eps=eps).sum().backward()
        grads.append(x.grad.tolist())
    assert str(grads[0]) == str(grads[1])


def test_alpha_scaled_bfloat16_add_backward_reads_its_bfloat16_number():
    """The primitive multiplies by alpha as a bfloat16 number, which the formula reads."""
    grads = []
    for L in (E, torch):
        x = L.tensor([-0.0]).to(L.bfloat16)
        y = L.tensor(-1.0, dtype=L.float64, requires_grad=True)
        x.add_(y, alpha=2).sum().backward()
        grads.append(y.grad.item())
    assert grads[0] == grads[1] == 2.0


def test_division_by_a_wider_0d_tensor_rounds_its_gradient_as_torch():
    """torch's divisor gradient is -g * ((x / y) / y), each step in x's float16."""
    grads = []
    for L in (E, torch):
        y = L.tensor(2.3687, dtype=L.float64, requires_grad=True)
        x = L.tensor([[1.0], [0.0], [3.0], [-3.0]], dtype=L.float16)
        (L.true_divide(x, y) * L.arange(4, dtype=L.float16).reshape(4, 1)).sum().backward()
        grads.append(y.grad.item())
    assert grads[0] == grads[1]
