"""What nodes saved, read by torch's names (``grad_fn._saved_self``...), as the saved
tensors tutorial reads them, against torch."""

import numpy as np
import torch
from autograd_oracle import TOP


def both(fn):
    data = np.random.default_rng(0).standard_normal(5)
    return [fn(m, m.tensor(data, requires_grad=True)) for m in (TOP, torch)]


def test_saved_self_is_the_input_and_saved_result_a_new_view_of_the_output():
    for m in (TOP, torch):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.pow(2)
        assert y.grad_fn._saved_self is x
        assert y.grad_fn._saved_exponent == 2
        z = x.exp()
        assert z.grad_fn._saved_result is not z
        np.testing.assert_array_equal(np.asarray(z.grad_fn._saved_result.detach()),
                                      np.asarray(z.detach()))


def test_unsaved_operands_read_as_none_and_sizes_as_tuples():
    e, t = both(lambda m, x: (x * m.ones(5)).grad_fn._saved_self)
    assert e is None and t is None
    e, t = both(lambda m, x: x.sum().grad_fn._saved_self_sym_sizes)
    assert tuple(e) == tuple(t) == (5,)


def test_raw_saved_tensors_take_hooks():
    for m in (TOP, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x.pow(2)
        packed = []
        y.grad_fn._raw_saved_self.register_hooks(lambda t: packed.append(t) or "p",
                                                 lambda p: packed[0] * 10)
        y.sum().backward()
        np.testing.assert_allclose(np.asarray(x.grad), [20.0, 40.0])


def test_a_number_minus_a_tensor_is_torchs_rsub_node():
    """``1 - x`` is torch's rsub.Scalar: RsubBackward1, listing the tensor alone."""
    names = [[type(f).__name__ if f is not None else None for f, _ in
              [(y.grad_fn, 0), *y.grad_fn.next_functions]]
             for y in both(lambda m, x: 1 - x)]
    assert names[0] == names[1] == ["RsubBackward1", "AccumulateGrad"]
