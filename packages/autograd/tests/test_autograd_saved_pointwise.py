"""The pointwise primitives with several operands save no more for backward than torch does:
clamp, where, lerp, addcmul, addcdiv, nan_to_num, float_power and complex, with each tensor
operand requiring grad or not, and their in-place forms."""

from itertools import product

import pytest
import torch
from autograd_oracle import E, check_saved


def _needs(n: int) -> list[tuple[bool, ...]]:
    """Every choice of which of ``n`` tensor operands require grad (at least one)."""
    return [needs for needs in product((True, False), repeat=n) if any(needs)]


TENSORS = {
    # name: (fn(m, *inputs), input shapes)
    "clamp": (lambda m, x, lo, hi: m.clamp(x, lo, hi), [(3, 4), (4,), (3, 1)]),
    "clamp_min": (lambda m, x, lo: m.clamp_min(x, lo), [(3, 4), (4,)]),
    "clamp_max": (lambda m, x, hi: m.clamp(x, max=hi), [(3, 4), (3, 1)]),
    "where": (lambda m, x, y: m.where(x > 1, x, y), [(3, 4), (4,)]),
    "lerp": (lambda m, x, e: m.lerp(x, e, 0.3), [(3, 4), (4,)]),
    "lerp_tensor": (lambda m, x, e, w: m.lerp(x, e, w), [(3, 4), (3, 4), (4,)]),
    "addcmul": (lambda m, x, a, b: m.addcmul(x, a, b, value=2), [(3, 4), (3, 4), (4,)]),
    "addcdiv": (lambda m, x, a, b: m.addcdiv(x, a, b, value=2), [(3, 4), (3, 4), (4,)]),
    "float_power": (lambda m, x, y: m.float_power(x, y), [(3, 4), (4,)]),
    "complex": (lambda m, x, y: m.complex(x, y), [(3, 4), (3, 4)]),
}
CASES = [(name, needs) for name, (_, shapes) in TENSORS.items() for needs in _needs(len(shapes))]


@pytest.mark.parametrize("name,needs", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_tensor_operands(name, needs):
    fn, shapes = TENSORS[name]
    check_saved(fn, shapes, needs=needs, low=0.5, high=2.0)


ONE_TENSOR = {
    "clamp": lambda m, x: m.clamp(x, -1, 1.5),
    "clamp_min": lambda m, x: m.clamp_min(x, 0.75),
    "clip": lambda m, x: m.clip(x, max=1.0),
    "where_number": lambda m, x: m.where(x > 1, x, 0.0),
    "where_numbers_first": lambda m, x: m.where(x > 1, 0.0, x),
    "nan_to_num": lambda m, x: m.nan_to_num(x.log()),
    "float_power_number": lambda m, x: m.float_power(x, 2),
    "float_power_base": lambda m, x: m.float_power(2, x),
    "float_power_float32": lambda m, x: m.float_power(x.float(), 3),
}


@pytest.mark.parametrize("name", list(ONE_TENSOR))
def test_number_operands(name):
    check_saved(ONE_TENSOR[name], [(3, 4)], low=0.5, high=2.0)


INPLACE = {
    "clamp_": lambda m, x, y: (x * 1).clamp_(0.75, 1.5),
    "clamp_tensor_": lambda m, x, y: (x * 1).clamp_(min=y),
    "nan_to_num_": lambda m, x, y: (x * 1).nan_to_num_(),
    "lerp_": lambda m, x, y: (x * 1).lerp_(y, 0.25),
    "lerp_tensor_": lambda m, x, y: (x * 1).lerp_(y, y),
    "addcmul_": lambda m, x, y: (x * 1).addcmul_(y, y, value=0.5),
    "addcdiv_": lambda m, x, y: (x * 1).addcdiv_(y, y, value=0.5),
    "float_power_": lambda m, x, y: (x * 1).float_power_(y),
}


@pytest.mark.parametrize("needs", _needs(2))
@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace(name, needs):
    check_saved(INPLACE[name], [(3, 4), (4,)], needs=needs, low=0.5, high=2.0)


def test_addcdiv_checks_its_divisor_whatever_needs_a_gradient():
    """torch saves addcdiv's divisor even where only ``self`` needs a gradient, and its
    backward refuses a divisor written in place since."""
    for m in (E, torch):
        x = m.tensor(2.0, dtype=m.float64, requires_grad=True)
        divisor = m.tensor(-6, dtype=m.int64)
        y = x.addcdiv(m.tensor(-3.0, dtype=m.float64), divisor)
        divisor.bitwise_right_shift_(3)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()
