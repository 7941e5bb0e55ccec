"""The elementwise primitives save no more for backward than torch does: for each
differentiable binary and unary op, with each operand requiring grad or not."""

import pytest
from autograd_oracle import check_saved

UNARY = ["neg", "abs", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
         "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "atanh",
         "sigmoid", "erf", "erfc", "erfinv", "lgamma", "digamma", "reciprocal", "square", "relu",
         "sinc", "deg2rad", "rad2deg", "logit", "sign", "sgn", "floor", "ceil", "trunc", "frac",
         "round"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "fmax", "fmin", "atan2",
          "hypot", "copysign", "logaddexp", "logaddexp2", "xlogy", "remainder", "fmod"]
NUMBER_OTHER = ["add", "sub", "mul", "div", "pow", "copysign", "xlogy", "remainder", "fmod"]


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    check_saved(lambda m, x: getattr(m, name)(x * 1), [(3, 4)], low=0.1, high=0.9)


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("name", BINARY)
def test_binary(name, needs):
    check_saved(lambda m, x, y: getattr(m, name)(x, y), [(3, 4), (4,)], needs=needs,
                low=0.5, high=2.0)


@pytest.mark.parametrize("name", NUMBER_OTHER)
def test_binary_with_number(name):
    check_saved(lambda m, x: getattr(m, name)(x, 2.0), [(3, 4)], low=0.5, high=2.0)


@pytest.mark.parametrize("name", ["add_", "mul_", "div_", "pow_", "exp_", "sigmoid_", "tanh_"])
def test_inplace(name):
    arg = () if name in ("exp_", "sigmoid_", "tanh_") else (2.0,)
    check_saved(lambda m, x: getattr(x * 1, name)(*arg), [(3, 4)], low=0.5, high=2.0)
