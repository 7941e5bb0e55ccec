"""Random sampling: values cannot match torch's, so these tests check what must hold.

Reproducibility under seeding, the dtypes and shapes torch gives for the same call, the
ranges of the values, distribution moments on large samples (tolerances of 6 standard
errors of the estimate, from the sample size), and the errors torch raises.
"""

import math
import warnings

import numpy as np
import pytest
import torch
from dispatch_oracle import Recorder
from torch_oracle import check_same_error

import ember.core as ember
from ember.core.dispatch import REGISTRY

N = 200_000
Z = 6.0  # standard errors allowed: a false alarm is ~1e-9 per check


def run(expr, m):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(expr, {"m": m, "np": np, "math": math})


def outcome(expr, m):
    try:
        return run(expr, m), None
    except Exception as exc:
        return None, type(exc)


def close_to(estimate, expected, standard_error):
    assert abs(estimate - expected) <= Z * standard_error, (estimate, expected, standard_error)


# --------------------------------------------------------------------------- seeding

SAMPLERS = [
    "m.rand(5, 3)", "m.randn(7)", "m.randint(0, 100, (6,))", "m.randperm(20)",
    "m.normal(0., 1., (4,))", "m.normal(m.zeros(4), 2.)", "m.bernoulli(m.full((8,), 0.5))",
    "m.multinomial(m.ones(10), 4)", "m.multinomial(m.ones(2, 5), 9, True)",
    "m.poisson(m.full((5,), 3.))", "m.rand_like(m.zeros(3))", "m.randn_like(m.zeros(3))",
    "m.randint_like(m.zeros(3), 10)", "m.zeros(6).uniform_(-2, 2)", "m.zeros(6).normal_()",
    "m.zeros(6).bernoulli_()", "m.zeros(6).random_(10)", "m.zeros(6).exponential_()",
    "m.zeros(6).geometric_(0.3)", "m.zeros(6).cauchy_()", "m.zeros(6).log_normal_()",
]


@pytest.mark.parametrize("expr", SAMPLERS)
def test_same_seed_same_values(expr):
    ember.manual_seed(1234)
    first = np.array(run(expr, ember))
    after = np.array(run(expr, ember))
    ember.manual_seed(1234)
    np.testing.assert_array_equal(np.array(run(expr, ember)), first)
    if first.size > 3:
        assert not np.array_equal(first, after), "a second draw repeated the first"


def test_generators_are_independent_streams():
    g1, g2 = ember.Generator().manual_seed(7), ember.Generator().manual_seed(7)
    a = ember.rand(10, generator=g1)
    ember.manual_seed(0)
    ember.rand(100)  # the default stream moves; explicit generators must not notice
    b = ember.rand(10, generator=g2)
    np.testing.assert_array_equal(np.array(a), np.array(b))
    g3 = ember.Generator().manual_seed(8)
    assert not np.array_equal(np.array(ember.rand(10, generator=g3)), np.array(a))


def test_explicit_generator_leaves_the_default_stream_alone():
    ember.manual_seed(5)
    expected = np.array(ember.rand(4))
    ember.manual_seed(5)
    ember.randn(100, generator=ember.Generator().manual_seed(1))
    np.testing.assert_array_equal(np.array(ember.rand(4)), expected)


def test_state_roundtrips():
    g = ember.Generator().manual_seed(3)
    ember.rand(3, generator=g)
    state = g.get_state()
    assert state.dtype is ember.uint8 and state.ndim == 1
    a = np.array(ember.randn(5, generator=g))
    other = ember.Generator().set_state(state)
    assert other.initial_seed() == 3
    np.testing.assert_array_equal(np.array(ember.randn(5, generator=other)), a)
    saved = ember.get_rng_state()
    b = np.array(ember.rand(5))
    ember.set_rng_state(saved)
    np.testing.assert_array_equal(np.array(ember.rand(5)), b)


def test_seeds_like_torch():
    for m in (ember, torch):
        g = m.Generator()
        assert g.initial_seed() == 67280421310721
        assert g.manual_seed(-1).initial_seed() == 2**64 - 1
        assert m.manual_seed(42) is m.default_generator and m.initial_seed() == 42
        s = m.seed()
        assert isinstance(s, int) and m.initial_seed() == s
        assert str(g.device) == "cpu"


def test_state_is_a_cpu_byte_tensor_that_draws_move_on():
    g = ember.Generator().manual_seed(9)
    state = g.get_state()
    assert state.dtype is ember.uint8 and state.device.type == "cpu" and state.shape == (48,)
    ember.rand(3, generator=g)
    assert not np.array_equal(g.get_state().numpy(), state.numpy())
    state.numpy()[:] = 0  # a copy: the generator's own state is out of reach
    assert g.initial_seed() == 9


def test_a_recorded_draw_replays_to_the_same_values_and_state():
    for call in ["m.rand(2, 3, generator=g)", "m.randn(4, dtype=m.float64, generator=g)",
                 "m.normal(m.zeros(3), m.ones(3), generator=g)", "m.randperm(6, generator=g)",
                 "m.zeros(5).exponential_(generator=g)",
                 "m.multinomial(m.ones(4), 2, generator=g)"]:
        g = ember.Generator().manual_seed(3)
        before = g.get_state().numpy()
        with Recorder() as recorder:
            eval(call, {"m": ember, "g": g})
        (draw,) = [c for c in recorder.calls if REGISTRY[c.op.name].kind == "random"]
        np.testing.assert_array_equal(draw.inputs[0], before)  # the state is the first operand
        values, state = draw.outputs
        np.testing.assert_array_equal(state, g.get_state().numpy())
        again = REGISTRY[draw.op.name].forward(before.copy(), *draw.inputs[1:], **draw.params)
        np.testing.assert_array_equal(again[0], values)
        np.testing.assert_array_equal(again[1], state)


def test_generators_used_in_turn_keep_their_streams():
    """More generators than the streams kept live: each still continues its own stream."""
    gens = [ember.Generator().manual_seed(s) for s in range(20)]
    turns = [[np.array(ember.rand(3, generator=g)) for g in gens] for _ in range(2)]
    for s in range(20):
        alone = ember.Generator().manual_seed(s)
        for turn in turns:
            np.testing.assert_array_equal(turn[s], np.array(ember.rand(3, generator=alone)))



@pytest.mark.parametrize("cached_half", [False, True])
def test_state_bytes_read_from_memory_match_the_public_state(cached_half):
    """The fast reader of a stream's state gives the bytes ``bits.state`` spells, and they
    decode back to the same stream."""
    from ember.core import random as rnd

    bits = np.random.PCG64(2024)
    stream = np.random.Generator(bits)
    stream.standard_normal(5)
    if cached_half:
        stream.integers(0, 9, 1, dtype=np.uint32)
    seed = (2024).to_bytes(8, "little")
    fast, public = rnd._pack(seed, bits), rnd._pack_public(seed, bits)
    np.testing.assert_array_equal(fast, public)
    assert not fast.flags.writeable
    again = rnd._decode(fast)
    assert again.bit_generator.state == bits.state
    np.testing.assert_array_equal(again.random(4), stream.random(4))

META_DRAWS = [
    "m.rand(3, device='meta')", "m.randn(2, 3, device='meta')",
    "m.randint(0, 5, (4,), device='meta')",
    "m.randperm(5, device='meta')", "m.normal(0., 1., (2,), device='meta')",
    "m.rand(3, device='meta', generator=g)", "m.rand_like(m.zeros(3, device='meta'))",
    "m.normal(m.zeros(3, device='meta'), 1.)", "m.bernoulli(m.full((3,), .5, device='meta'))",
    "m.multinomial(m.ones(4, device='meta'), 2)", "m.poisson(m.ones(3, device='meta'))",
    "m.zeros(3, device='meta').uniform_()", "m.zeros(3, device='meta').exponential_()",
    "m.zeros(3, device='meta').random_(5)", "m.zeros(3, device='meta').bernoulli_(0.5)",
]


@pytest.mark.parametrize("expr", META_DRAWS)
def test_meta_draws_leave_the_generators_alone(expr):
    for m in (ember, torch):
        g = m.Generator().manual_seed(1)
        states = m.get_rng_state(), g.get_state()
        out = eval(expr, {"m": m, "g": g})
        assert out.device.type == "meta"
        assert all(np.array_equal(a.numpy(), b.numpy())
                   for a, b in zip(states, (m.get_rng_state(), g.get_state())))


# --------------------------------------------------------------------------- dtypes, shapes

SHAPES_AND_DTYPES = [
    "m.rand(2, 3)", "m.rand((2, 3))", "m.rand([2, 3])", "m.rand(m.Size([2, 3]))",
    "m.rand(size=(2,))", "m.rand(0, 3)", "m.rand(())", "m.rand(2, dtype=m.float64)",
    "m.rand(2, dtype=m.float16)", "m.rand(2, dtype=m.bfloat16)", "m.rand(2, dtype=m.complex64)",
    "m.randn(3, 1)", "m.randn(2, dtype=m.complex128)", "m.randn(2, dtype=m.bfloat16)",
    "m.randn(2, requires_grad=True)", "m.rand(3, out=m.zeros(3))",
    "m.randint(10, (3,))", "m.randint(3, 10, (2, 2))", "m.randint(high=10, size=(3,))",
    "m.randint(10, size=(3,))", "m.randint(0, 10, (3,), dtype=m.float32)",
    "m.randint(0, 2, (3,), dtype=m.bool)", "m.randint(0, 10, (3,), dtype=m.uint8)",
    "m.randint(m.tensor(3), (2,))", "m.randint(0, 10, (0,))",
    "m.randint(0, 10, (3,), dtype=m.float32, requires_grad=True)",
    "m.randperm(5)", "m.randperm(0)", "m.randperm(5, dtype=m.float32)",
    "m.randperm(5, dtype=m.float64, requires_grad=True)",
    "m.rand_like(m.zeros(2, 3, dtype=m.float64))", "m.randn_like(m.zeros(2, dtype=m.float16))",
    "m.randint_like(m.zeros(2), 10)", "m.randint_like(m.zeros(2, dtype=m.int32), 3, 10)",
    "m.randint_like(m.zeros(2), high=10)", "m.randint_like(m.zeros(2), low=3, high=10)",
    "m.normal(m.zeros(2, 3), m.ones(3))", "m.normal(m.zeros(2, 3), 1.)", "m.normal(m.zeros(2))",
    "m.normal(0., m.ones(3))", "m.normal(0., 1., (2, 3))", "m.normal(0, 1, (2, 3))",
    "m.normal(0., 1., size=(2,), dtype=m.float64)", "m.normal(m.zeros(3), m.ones(2, 3))",
    "m.normal(m.zeros(2), m.zeros(2, dtype=m.float64))",
    "m.normal(m.zeros(2, dtype=m.float16), m.zeros(2, dtype=m.float64))",
    "m.normal(1., m.zeros(2, dtype=m.float64))", "m.normal(m.zeros(2, dtype=m.complex64), 1.)",
    "m.bernoulli(m.full((3,), 0.5))", "m.bernoulli(m.full((2, 3), 0.5, dtype=m.float64))",
    "m.bernoulli(m.zeros(3), 0.3)", "m.bernoulli(m.zeros(3, dtype=m.int64), 0.3)",
    "m.bernoulli(m.zeros(3), p=0.3)", "m.zeros(3).bernoulli(0.3)",
    "m.multinomial(m.tensor([0., 1, 2]), 2)", "m.multinomial(m.ones(2, 3), 2)",
    "m.multinomial(m.ones(0, 3), 2)", "m.multinomial(m.ones(3, dtype=m.float16), 2)",
    "m.multinomial(m.ones(3), 5, replacement=True)", "m.ones(3).multinomial(2)",
    "m.poisson(m.full((3,), 2.))", "m.poisson(m.full((2, 2), 2., dtype=m.float64))",
    "m.poisson(m.full((3,), 2., dtype=m.float16))",
    "m.zeros(3, dtype=m.int64).random_()", "m.zeros(3, dtype=m.bool).random_()",
    "m.zeros(3, dtype=m.int64).bernoulli_(0.5)", "m.zeros(3, dtype=m.bool).bernoulli_(0.5)",
    "m.zeros(3).bernoulli_(m.full((3,), 0.5))", "m.zeros(3).bernoulli_(m.full((1,), 0.5))",
    "m.zeros(3, dtype=m.int64).geometric_(0.5)", "m.zeros(3, dtype=m.complex64).uniform_()",
    "m.zeros(2).uniform_(m.tensor(1.), 2)", "m.zeros(2).normal_(m.tensor(1.), 2)",
    # 0-d draws
    "m.randint_like(m.tensor(-3.), 10)", "m.randint_like(m.tensor(1., dtype=m.float64), 10)",
    "m.randint(0, 5, ())", "m.tensor(0., dtype=m.float64).clone().random_(0, 5)",
    "m.tensor(3, dtype=m.int16).random_()", "m.rand(())", "m.randn(())",
    "m.bernoulli(m.tensor(0.5))", "m.poisson(m.tensor(2.))", "m.normal(m.tensor(0.), 1.)",
    # torch's elementwise kernels choose a dtype only when there is an element to write
    "m.randn(0, dtype=m.int64)", "m.randn(0, dtype=m.bool)", "m.zeros(0, dtype=m.int64).normal_()",
    "m.randn_like(m.zeros(0, 1, dtype=m.float64), dtype=m.int8)",
    "m.normal(1., 1., size=(0,), dtype=m.int64)", "m.normal(m.zeros(0, dtype=m.int64), 1.)",
    "m.normal(1., m.ones(0, dtype=m.int64))", "m.normal(m.zeros(0), m.ones(0, dtype=m.int64))",
    "m.zeros(0, dtype=m.int64).log_normal_()", "m.bernoulli(m.zeros(0, dtype=m.int64))",
]


@pytest.mark.parametrize("expr", SHAPES_AND_DTYPES)
def test_dtype_shape_and_flags_match_torch(expr):
    e, t = run(expr, ember), run(expr, torch)
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype) == str(t.dtype)
    assert e.requires_grad == t.requires_grad


ERRORS = [
    "m.rand(2, 3, dtype=m.int64)", "m.rand(-1)", "m.rand()", "m.rand(2, 3.0)",
    "m.rand(2, generator=1)", "m.randn(2, dtype=m.int32)", "m.rand_like(m.zeros(2, dtype=m.int64))",
    "m.randn_like(m.zeros(2, dtype=m.int64))", "m.randint(5, 5, (3,))", "m.randint(6, 5, (3,))",
    "m.randint(0, 300, (3,), dtype=m.uint8)", "m.randint(-1, 3, (3,), dtype=m.uint8)",
    "m.randint(10, 3)", "m.randint(10)", "m.randint(0, 10.5, (3,))", "m.randint(0.5, 10, (3,))",
    "m.randint(0, 10, (3,), requires_grad=True)", "m.randperm(-1)",
    "m.randperm(300, dtype=m.uint8)", "m.randperm(5, requires_grad=True)",
    "m.normal(0., 1., (2, 3), dtype=m.int64)", "m.normal(m.zeros(2, dtype=m.int64), 1.)",
    "m.normal(m.zeros(2), -1.)", "m.normal(m.zeros(2), -m.ones(2))",
    "m.normal(m.zeros(2), m.ones(3))", "m.normal(0., 1.)", "m.normal(m.zeros(2), 1, size=(3,))",
    "m.normal(m.zeros(0, dtype=m.int64), m.ones(0))", "m.normal(m.zeros(2, dtype=m.int64), m.ones(2))",
    "m.zeros(0, dtype=m.int64).uniform_()", "m.rand_like(m.zeros(0), dtype=m.int64)",
    "m.poisson(m.zeros(0, dtype=m.int64))",
    "m.bernoulli(m.full((3,), 2.))", "m.bernoulli(m.full((3,), -0.5))",
    "m.bernoulli(m.full((3,), float('nan')))", "m.bernoulli(m.zeros(3), 1.3)",
    "m.bernoulli(m.ones(3, dtype=m.int64))", "m.bernoulli(m.ones(3, dtype=m.bool))",
    "m.poisson(m.full((3,), -2.))", "m.poisson(m.full((3,), 2, dtype=m.int64))",
    "m.multinomial(m.tensor([0., 1, 2]), 4)", "m.multinomial(m.tensor([0., 1, 2]), 0)",
    "m.multinomial(m.tensor([0., 0, 0]), 1)", "m.multinomial(m.tensor([0., -1, 2]), 1)",
    "m.multinomial(m.tensor([0., float('nan'), 2]), 1)",
    "m.multinomial(m.tensor([0., float('inf'), 2]), 1)", "m.multinomial(m.tensor(1.), 1)",
    "m.multinomial(m.ones(2, 2, 2), 1)", "m.multinomial(m.ones(2, 0), 2)",
    "m.multinomial(m.ones(3, dtype=m.int64), 2)",
    "m.multinomial(m.tensor([[1., 0, 0], [0, 0, 0]]), 1)",
    "m.Generator().manual_seed(2**64)", "m.Generator().manual_seed(-2**63 - 1)",
    "m.Generator().manual_seed(1.5)", "m.Generator().manual_seed('1')",
    "m.Generator().set_state(m.zeros(3))", "m.Generator().set_state(m.zeros(3, dtype=m.uint8))",
    "m.Generator(device='meta')",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_match_torch(expr):
    _, t_err = outcome(expr, torch)
    assert t_err is not None, f"torch accepted {expr}"
    with pytest.raises(t_err):
        run(expr, ember)


INPLACE_ERRORS = [
    ("float32", "uniform_(2, 1)"), ("int64", "uniform_()"), ("float32", "uniform_(0, math.inf)"),
    ("float16", "uniform_(-1e5, 1e5)"), ("float32", "normal_(0, -1)"), ("int64", "normal_()"),
    ("float32", "bernoulli_(1.5)"), ("float32", "bernoulli_(m.full((4,), 1.5))"),
    ("float32", "bernoulli_(m.full((2, 4), 0.5))"), ("float32", "bernoulli_(m.full((3,), 0.5))"),
    ("float32", "random_(0)"),
    ("int8", "random_(200)"), ("int8", "random_(-129, 0)"), ("bool", "random_(0, 3)"),
    ("complex64", "random_()"), ("float32", "exponential_(0)"), ("float32", "exponential_(-1)"),
    ("int64", "exponential_()"), ("float32", "geometric_(0)"), ("float32", "geometric_(1)"),
    ("float32", "geometric_(1.5)"), ("bool", "geometric_(0.5)"), ("float32", "cauchy_(0, -1)"),
    ("int64", "cauchy_()"), ("float32", "log_normal_(1, 0)"), ("float32", "log_normal_(1, -1)"),
    ("int64", "log_normal_()"),
]


@pytest.mark.parametrize("dtype, call", INPLACE_ERRORS)
def test_inplace_errors_match_torch_and_leave_self_unchanged(dtype, call):
    _, t_err = outcome(f"m.full((4,), 1, dtype=m.{dtype}).{call}", torch)
    assert t_err is not None
    x = ember.full((4,), 1, dtype=getattr(ember, dtype))
    before = np.array(x).copy()
    with pytest.raises(t_err):
        eval(f"x.{call}", {"x": x, "m": ember, "math": math})
    np.testing.assert_array_equal(np.array(x), before)
    assert x._version == 0


# torch checks an in-place sampler's arguments, then the written memory, then (in its
# elementwise loop, which runs only where self has an element) the dtype; normal_ checks
# the dtype before the memory, cauchy_ even of an empty tensor
SAMPLER_CHECK_ORDER = [  # (self, the call, a phrase of torch's first error)
    ("m.zeros(1, dtype=m.int64).expand(2)", "exponential_(-1)", "expects lambda > 0.0"),
    ("m.zeros(1, dtype=m.int64).expand(2)", "exponential_()", "more than one element"),
    ("m.zeros(2, dtype=m.complex64)", "exponential_()", "continuous probability distribution"),
    ("m.zeros(1, dtype=m.bool).expand(2)", "geometric_(2)", "expects p to be in (0, 1)"),
    ("m.zeros(1, dtype=m.bool).expand(2)", "geometric_(0.5)", "more than one element"),
    ("m.zeros(2, dtype=m.complex64)", "geometric_(0.5)", '"geometric_cpu" not implemented'),
    ("m.zeros(1, dtype=m.int64).expand(2)", "log_normal_(0, -1)", "expects std > 0.0"),
    ("m.zeros(1, dtype=m.int64).expand(2)", "log_normal_()", "more than one element"),
    ("m.zeros(1, dtype=m.int64).expand(2)", "normal_(0, -1)", "expects std >= 0.0"),
    ("m.zeros(1, dtype=m.int64).expand(2)", "normal_()", '"normal_kernel_cpu" not implemented'),
    ("m.zeros(2, dtype=m.int64)", "cauchy_(0, -1)", "expects sigma > 0.0"),
    ("m.zeros(0, dtype=m.int64)", "cauchy_()", "continuous probability distribution"),
    ("m.zeros(2, dtype=m.complex64)", "bernoulli_(3.0)", "expects p to be in [0, 1]"),
    ("m.zeros(1, dtype=m.complex64).expand(2)", "bernoulli_()", "more than one element"),
    ("m.zeros(2, dtype=m.complex64)", "bernoulli_(0.5)", '"bernoulli_scalar_cpu_" not'),
    ("m.zeros(1).expand(2)", "bernoulli_(m.zeros(3, dtype=m.int64))", "more than one element"),
    ("m.zeros(2, dtype=m.complex64)", "bernoulli_(m.zeros(3))", '"bernoulli_tensor_cpu_self_"'),
    ("m.zeros(2)", "bernoulli_(m.zeros(3, dtype=m.int64))", "expand"),
    ("m.zeros(2)", "bernoulli_(m.zeros(2, dtype=m.int64))", '"bernoulli_tensor_cpu_p_" not'),
    ("m.zeros(1, dtype=m.complex64).expand(2)", "random_()", "more than one element"),
    ("m.zeros(2, dtype=m.complex64)", "random_()", '"random_kernel_cpu" not implemented'),
    ("m.zeros(0, dtype=m.complex64)", "random_(0, 2)", "check_random_bounds"),
]


@pytest.mark.parametrize("tensor, call, phrase", SAMPLER_CHECK_ORDER)
def test_inplace_samplers_check_in_torchs_order(tensor, call, phrase):
    check_same_error(lambda m: run(f"{tensor}.{call}", m), phrase)


@pytest.mark.parametrize("dtype", ["int64", "bool", "complex64"])
@pytest.mark.parametrize("call", ["exponential_()", "geometric_(0.3)", "log_normal_()",
                                  "bernoulli_(0.5)", "bernoulli_(m.zeros(3, dtype=m.int64))",
                                  "normal_()", "random_()"])
def test_inplace_samplers_of_empty_tensors_refuse_no_dtype(dtype, call):
    # torch's loops pick their dtype only with an element to write (nothing of p is read)
    for m in (torch, ember):
        x = m.zeros(0, 1, dtype=getattr(m, dtype))
        out = eval(f"x.{call}", {"m": m, "x": x})
        assert out is x and tuple(x.shape) == (0, 1)


# --------------------------------------------------------------------------- in place

INPLACE = ["uniform_()", "normal_()", "bernoulli_()", "random_()", "exponential_()",
           "geometric_(0.5)", "cauchy_()", "log_normal_()"]


@pytest.mark.parametrize("call", INPLACE)
def test_inplace_samplers_write_through_views_and_bump_the_version(call):
    base = ember.zeros(4, 6)
    view = base[:, 1:3]
    out = eval(f"view.{call}", {"view": view})
    assert out is view and view._version == 1 and base._version == 1  # one shared counter
    assert np.array_equal(base.numpy()[:, 1:3], np.array(view))
    assert (base.numpy()[:, 0] == 0).all() and (base.numpy()[:, 3:] == 0).all()
    t = torch.zeros(4, 6)
    assert str(eval(f"t.{call}", {"t": t}).dtype) == str(view.dtype)


def test_inplace_samplers_accept_torch_keywords():
    x = ember.zeros(1000)
    x.uniform_(**{"from": 2, "to": 3})
    assert 2 <= x.min().item() and x.max().item() < 3
    x.random_(**{"from": 5, "to": 7})
    assert set(np.unique(np.array(x))) == {5.0, 6.0}
    x.random_(5, None)
    assert 5 <= x.min().item() and x.max().item() <= 2**24


# --------------------------------------------------------------------------- ranges

def test_value_ranges():
    ember.manual_seed(0)
    for dt in ["float16", "bfloat16", "float32", "float64"]:
        u = np.array(ember.rand(N, dtype=getattr(ember, dt)).float())
        assert u.min() >= 0 and u.max() < 1, dt
    assert set(np.unique(np.array(ember.randint(-3, 4, (N,))))) == set(range(-3, 4))
    big = np.array(ember.randint(-2**63, 2**63 - 1, (N,)))
    assert big.min() < -2**61 and big.max() > 2**61
    assert sorted(np.array(ember.randperm(1000)).tolist()) == list(range(1000))
    assert set(np.unique(np.array(ember.bernoulli(ember.full((1000,), 0.5))))) == {0.0, 1.0}
    g = np.array(ember.zeros(N).geometric_(0.3))
    assert g.min() >= 1 and (g == np.round(g)).all()
    assert np.array(ember.zeros(N).exponential_()).min() > 0
    assert np.array(ember.zeros(N).log_normal_()).min() > 0
    for dt, top in [("int8", 127), ("uint8", 255), ("bool", 1), ("float16", 2**11)]:
        r = np.array(ember.zeros(N, dtype=getattr(ember, dt)).random_()).astype(np.float64)
        assert r.min() == 0 and r.max() == top, dt
    full = np.array(ember.zeros(N, dtype=ember.int64).random_())
    assert full.min() >= 0 and full.max() > 2**62


def test_multinomial_never_draws_zero_probability_categories():
    ember.manual_seed(0)
    p = ember.tensor([[0., 1, 0, 3, 0], [2, 0, 0, 0, 1]])
    with_replacement = np.array(ember.multinomial(p, 5000, replacement=True))
    assert set(np.unique(with_replacement[0])) == {1, 3}
    assert set(np.unique(with_replacement[1])) == {0, 4}
    for _ in range(200):
        picks = np.array(ember.multinomial(p, 2))
        assert set(picks[0]) == {1, 3} and set(picks[1]) == {0, 4}
    # more samples than positive categories: torch draws the zero ones last
    picks = np.array(ember.multinomial(p, 4))
    assert set(picks[0, :2]) == {1, 3} and len(set(picks[0])) == 4


@pytest.mark.parametrize("shape", [(0,), (0, 0), (3, 0), (0, 3)])
@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_without_categories_or_rows(shape, replacement):
    """A 1-d input is one row even without categories (whose sum is not positive); a 2-d
    input without rows draws nothing, as torch."""
    def draw(m):
        return m.multinomial(m.zeros(shape, dtype=m.float64) + 0.1, 2, replacement)

    try:
        expected = draw(torch)
    except RuntimeError as e:
        check_same_error(draw, str(e))
        return
    got = draw(ember)
    assert tuple(got.shape) == tuple(expected.shape) and got.dtype == ember.int64


# --------------------------------------------------------------------------- moments

def _mean_and_sd(x):
    x = np.array(x, dtype=np.float64)
    return x.mean(), x.std()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_uniform_and_normal_moments(dtype):
    ember.manual_seed(1)
    dt = getattr(ember, dtype)
    m, s = _mean_and_sd(ember.rand(N, dtype=dt).float())
    close_to(m, 0.5, math.sqrt(1 / 12 / N))
    close_to(s * s, 1 / 12, math.sqrt(1 / 180 / N))  # var of (u - 1/2)^2 is 1/180
    m, s = _mean_and_sd(ember.zeros(N, dtype=dt).uniform_(-2, 6).float())
    close_to(m, 2.0, math.sqrt(64 / 12 / N))
    m, s = _mean_and_sd(ember.randn(N, dtype=dt).float())
    close_to(m, 0.0, 1 / math.sqrt(N))
    close_to(s * s, 1.0, math.sqrt(2 / N) + 0.01 * (dtype in ("float16", "bfloat16")))
    m, s = _mean_and_sd(ember.normal(3.0, 0.5, (N,), dtype=dt).float())
    close_to(m, 3.0, 0.5 / math.sqrt(N) + 0.01 * (dtype == "bfloat16"))
    m, s = _mean_and_sd(ember.zeros(N, dtype=dt).normal_(-1.0, 2.0).float())
    close_to(s * s, 4.0, 4 * math.sqrt(2 / N) + 0.05 * (dtype in ("float16", "bfloat16")))


def test_complex_normal_has_unit_variance_split_evenly():
    ember.manual_seed(2)
    z = np.array(ember.randn(N, dtype=ember.complex64))
    close_to(np.mean(np.abs(z) ** 2), 1.0, math.sqrt(1 / N))
    close_to(np.var(z.real), 0.5, 0.5 * math.sqrt(2 / N))


def test_tensor_normal_broadcasts_mean_and_std():
    ember.manual_seed(3)
    mean = ember.from_numpy(np.array([[-5.0], [5.0]]))
    std = ember.from_numpy(np.full(N, 2.0))
    rows = np.array(ember.normal(mean, std))
    assert rows.shape == (2, N)
    close_to(rows[0].mean(), -5.0, 2 / math.sqrt(N))
    close_to(rows[1].mean(), 5.0, 2 / math.sqrt(N))
    close_to(rows[0].var(), 4.0, 4 * math.sqrt(2 / N))
    scaled = np.array(ember.normal(1.0, ember.from_numpy(np.array([0.0, 3.0]).repeat(N))))
    assert (scaled[:N] == 1.0).all()
    close_to(scaled[N:].var(), 9.0, 9 * math.sqrt(2 / N))


@pytest.mark.parametrize("p", [0.1, 0.5, 0.93])
def test_bernoulli_rates(p):
    ember.manual_seed(4)
    se = math.sqrt(p * (1 - p) / N)
    close_to(np.array(ember.bernoulli(ember.full((N,), p))).mean(), p, se)
    close_to(np.array(ember.zeros(N).bernoulli_(p)).mean(), p, se)
    close_to(np.array(ember.bernoulli(ember.zeros(N, dtype=ember.int64), p)).mean(), p, se)
    probs = ember.from_numpy(np.tile([0.0, p, 1.0], N // 3))
    draws = np.array(ember.zeros(len(probs)).bernoulli_(probs)).reshape(-1, 3)
    assert (draws[:, 0] == 0).all() and (draws[:, 2] == 1).all()
    close_to(draws[:, 1].mean(), p, math.sqrt(p * (1 - p) / (N // 3)))


def test_poisson_exponential_geometric_cauchy_lognormal_moments():
    ember.manual_seed(5)
    lam = 3.5
    close_to(np.array(ember.poisson(ember.full((N,), lam))).mean(), lam, math.sqrt(lam / N))
    close_to(np.array(ember.zeros(N).exponential_(2.0)).mean(), 0.5, 0.5 / math.sqrt(N))
    p = 0.25
    g = np.array(ember.zeros(N, dtype=ember.float64).geometric_(p))
    close_to(g.mean(), 1 / p, math.sqrt((1 - p) / p**2 / N))
    c = np.array(ember.zeros(N, dtype=ember.float64).cauchy_(2.0, 0.5))
    close_to(np.median(c), 2.0, math.pi * 0.5 / (2 * math.sqrt(N)))  # sample median's SE
    ln = np.log(np.array(ember.zeros(N, dtype=ember.float64).log_normal_(1.0, 0.5)))
    close_to(ln.mean(), 1.0, 0.5 / math.sqrt(N))
    close_to(ln.std() ** 2, 0.25, 0.25 * math.sqrt(2 / N))


def test_randint_and_randperm_are_uniform():
    ember.manual_seed(6)
    draws = np.array(ember.randint(0, 10, (N,)))
    counts = np.bincount(draws, minlength=10)
    p = 0.1
    for c in counts:
        close_to(c / N, p, math.sqrt(p * (1 - p) / N))
    firsts = np.array([np.array(ember.randperm(5))[0] for _ in range(5000)])
    for c in np.bincount(firsts, minlength=5):
        close_to(c / 5000, 0.2, math.sqrt(0.2 * 0.8 / 5000))


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_frequencies(replacement):
    ember.manual_seed(7)
    weights = np.array([1.0, 2.0, 0.0, 5.0])
    p = weights / weights.sum()
    rows = 20_000
    first = np.array(ember.multinomial(ember.from_numpy(np.tile(weights, (rows, 1))), 2,
                                       replacement=replacement))[:, 0]
    for k in range(4):
        close_to((first == k).mean(), p[k], math.sqrt(p[k] * (1 - p[k]) / rows) + 1e-12)
    if replacement:
        many = np.array(ember.multinomial(ember.from_numpy(weights), N, replacement=True))
        for k in range(4):
            close_to((many == k).mean(), p[k], math.sqrt(p[k] * (1 - p[k]) / N) + 1e-12)


# --------------------------------------------------------------------------- devices

@pytest.mark.cuda
@pytest.mark.skipif(not ember.cuda_available(), reason="needs a CUDA device")
def test_cuda_sampling_follows_the_cuda_generator():
    ember.manual_seed(11)
    a = ember.rand(5, device="cuda")
    assert a.device.type == "cuda"
    ember.manual_seed(11)
    np.testing.assert_array_equal(a.cpu().numpy(), ember.rand(5, device="cuda").cpu().numpy())
    g = ember.Generator(device="cuda").manual_seed(3)
    assert ember.randn(3, device="cuda", generator=g).device.type == "cuda"
    with pytest.raises(RuntimeError, match="device type for generator"):
        ember.rand(2, device="cuda", generator=ember.Generator())
    x = ember.zeros(4, device="cuda").uniform_(1, 2)
    assert x.device.type == "cuda" and (x.cpu().numpy() >= 1).all()


EXACT_ERRORS = [
    "m.zeros(2, dtype=m.complex64).random_(0, 5)", "m.zeros(2, dtype=m.complex64).random_(5)",
    "m.randint_like(m.zeros(2, dtype=m.complex128), 10)", "m.zeros(2, dtype=m.complex64).random_()",
    "m.poisson(m.tensor([1., float('nan')]))",
]


@pytest.mark.parametrize("expr", EXACT_ERRORS)
def test_error_types_are_torchs_exactly(expr):
    """Where torch raises RuntimeError, NotImplementedError (its subclass) is no match."""
    _, t_err = outcome(expr, torch)
    _, e_err = outcome(expr, ember)
    assert e_err is t_err is not None


def test_poisson_rates_beyond_int64_give_torchs_overflowed_draw():
    rates = [1e18, 9.2e18, 1e19, math.inf]
    for dtype in ("float32", "float64"):
        e = ember.poisson(ember.tensor(rates, dtype=getattr(ember, dtype)))
        t = torch.poisson(torch.tensor(rates, dtype=getattr(torch, dtype)))
        np.testing.assert_array_equal(np.array(e)[2:], t.numpy()[2:])
        np.testing.assert_allclose(np.array(e)[:2], t.numpy()[:2], rtol=1e-6)
