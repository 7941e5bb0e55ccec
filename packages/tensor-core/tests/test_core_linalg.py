"""Products of tensors (matmul and its fixed-rank forms, addmm family, einsum, tensordot,
kron, cross, trace) compared with torch; where torch raises, Ember must raise the same
exception type (with torch's message substance for shape errors)."""

import re

import numpy as np
import pytest
import torch
from dispatch_oracle import Recorder, same
from torch_oracle import check, pair

import ember.core as ember

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "int8", "bool",
          "complex64", "complex128"]


def run(fn, operands):
    """Compare ``fn(ember, *e)`` with ``fn(torch, *t)``; when torch raises, Ember raises the
    same type, leaves its operands unchanged, and says the same about the shapes."""
    es, ts = zip(*operands) if operands else ((), ())
    before = [np.array(e).copy() for e in es]
    try:
        expected = fn(torch, *ts)
    except Exception as exc:  # the exception type torch raises is what Ember must raise
        with pytest.raises(type(exc)) as info:
            fn(ember, *es)
        for e, b in zip(es, before):
            assert np.array(e).tobytes() == b.tobytes()
        message = str(exc).split("\n")[0]
        if "shapes cannot be multiplied" in message or "size mismatch" in message:
            assert message in str(info.value)
        return
    check(fn(ember, *es), expected)


# ----------------------------------------------------------------------------- matmul

MATMUL_SHAPES = [
    ((3,), (3,)), ((0,), (0,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)),
    ((0, 3), (3, 4)), ((2, 0), (0, 4)), ((2, 2, 3), (3, 4)), ((2, 2, 3), (3,)),
    ((3,), (2, 3, 4)), ((2, 2, 3), (2, 3, 4)), ((2, 1, 2, 3), (3, 3, 4)), ((1, 2, 3), (5, 3, 2)),
    ((4, 2, 3), (2, 3, 4)), ((3,), (4,)), ((2, 3), (4, 5)), ((2, 3), (4,)), ((3,), (4, 5)),
    ((2, 2, 3), (4, 5)), ((2, 2, 3), (4,)), ((3,), (2, 4, 5)), ((2, 2, 3), (3, 3, 5)),
    ((), (3,)), ((3, 4), ()),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul(shapes, dtype):
    a, b = shapes
    run(lambda L, x, y: L.matmul(x, y), [pair(a, dtype), pair(b, dtype, seed=1)])
    run(lambda L, x, y: x @ y, [pair(a, dtype), pair(b, dtype, seed=1)])
    run(lambda L, x, y: y.__rmatmul__(x), [pair(a, dtype), pair(b, dtype, seed=1)])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_matmul_non_contiguous(dtype):
    for a, b in [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((4,), (4, 5))]:
        run(lambda L, x, y: x @ y, [pair(a, dtype, noncontiguous=True),
                                   pair(b, dtype, seed=1, noncontiguous=True)])


@pytest.mark.parametrize("a,b", [("float32", "float64"), ("int64", "float32"),
                                 ("float16", "float32")])
def test_matmul_dtype_mismatch(a, b):
    for sa, sb in [((3,), (3,)), ((2, 3), (3, 4)), ((2, 2, 3), (2, 3, 4)), ((2, 3), (3,))]:
        run(lambda L, x, y: L.matmul(x, y), [pair(sa, a), pair(sb, b, seed=1)])


def test_matmul_rejects_non_tensors():
    x = ember.ones(3)
    with pytest.raises(TypeError):
        x @ 2
    with pytest.raises(TypeError):
        2 @ x
    with pytest.raises(TypeError):
        ember.matmul(x, [1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        ember.ones(2, 3) @ ember.ones(4, 5)


FIXED_RANK = {
    "mm": ((2, 3), (3, 4)), "bmm": ((2, 2, 3), (2, 3, 4)), "mv": ((2, 3), (3,)),
    "dot": ((3,), (3,)), "vdot": ((3,), (3,)), "inner": ((2, 3), (4, 3)), "outer": ((3,), (4,)),
    "ger": ((3,), (2,)), "kron": ((2, 3), (2, 1, 2)),
}
BAD_SHAPES = [((3,), (3, 4)), ((2, 3), (4,)), ((2, 3), (4, 5)), ((2, 2, 3), (3, 3, 4)),
              ((2, 2, 3), (2, 4, 4)), ((2, 3), (2, 3)), ((3,), (4,)), ((), (3,)), ((3,), ()),
              ((), ()), ((2, 3), (3, 2, 3))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(FIXED_RANK))
def test_fixed_rank_products(name, dtype):
    a, b = FIXED_RANK[name]
    run(lambda L, x, y: getattr(L, name)(x, y), [pair(a, dtype), pair(b, dtype, seed=1)])
    run(lambda L, x, y: getattr(x, name)(y), [pair(a, dtype), pair(b, dtype, seed=1)])
    for sa, sb in BAD_SHAPES:
        run(lambda L, x, y: getattr(L, name)(x, y), [pair(sa, dtype), pair(sb, dtype, seed=1)])


@pytest.mark.parametrize("name", list(FIXED_RANK))
@pytest.mark.parametrize("a,b", [("float32", "float64"), ("int64", "float32"), ("bool", "int8"),
                                 ("float16", "bfloat16")])
def test_fixed_rank_mixed_dtypes(name, a, b):
    sa, sb = FIXED_RANK[name]
    run(lambda L, x, y: getattr(L, name)(x, y), [pair(sa, a), pair(sb, b, seed=1)])
    run(lambda L, x, y: L.inner(x, y), [pair((), a), pair((2, 3), b, seed=1)])


def test_vdot_conjugates_first_argument():
    run(lambda L, x, y: L.vdot(x, y), [pair((5,), "complex64"), pair((5,), "complex64", seed=1)])
    run(lambda L, x, y: L.vdot(x, y), [pair((5,), "complex128"), pair((5,), "complex128", seed=1)])


# ----------------------------------------------------------------------------- addmm family

ADD_PRODUCT = {
    "addmm": [((2, 4), (2, 3), (3, 4)), ((4,), (2, 3), (3, 4)), ((), (2, 3), (3, 4)),
              ((2, 1), (2, 3), (3, 4)), ((3,), (2, 3), (3, 4)), ((1, 2, 4), (2, 3), (3, 4)),
              ((2, 4), (3,), (3, 4)), ((2, 4), (2, 3), (2, 4)), ((0, 4), (0, 3), (3, 4))],
    "addmv": [((2,), (2, 3), (3,)), ((), (2, 3), (3,)), ((1,), (2, 3), (3,)),
              ((3,), (2, 3), (3,)), ((2,), (2, 3), (4,)), ((2,), (3,), (3,))],
    "baddbmm": [((2, 2, 4), (2, 2, 3), (2, 3, 4)), ((4,), (2, 2, 3), (2, 3, 4)),
                ((2, 1, 4), (2, 2, 3), (2, 3, 4)), ((3, 2, 4), (2, 2, 3), (2, 3, 4)),
                ((2, 2, 4), (2, 2, 3), (3, 3, 4)), ((2, 4), (2, 3), (2, 3, 4))],
    "addbmm": [((2, 4), (5, 2, 3), (5, 3, 4)), ((4,), (5, 2, 3), (5, 3, 4)),
               ((), (1, 2, 3), (1, 3, 4)), ((2, 4), (5, 2, 3), (4, 3, 4)),
               ((2, 4), (5, 2, 3), (5, 2, 4)), ((1, 2, 4), (5, 2, 3), (5, 3, 4))],
}
COEFFICIENTS = [{}, {"beta": 0.5, "alpha": 2}, {"beta": 0}, {"alpha": -1}, {"beta": 2, "alpha": 0}]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(ADD_PRODUCT))
def test_add_product(name, dtype):
    for shapes in ADD_PRODUCT[name]:
        for kw in COEFFICIENTS:
            operands = [pair(s, dtype, seed=i) for i, s in enumerate(shapes)]
            run(lambda L, c, x, y: getattr(L, name)(c, x, y, **kw), operands)
        operands = [pair(s, dtype, seed=i) for i, s in enumerate(shapes)]
        run(lambda L, c, x, y: getattr(c, name)(x, y, alpha=3), operands)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "complex64"])
@pytest.mark.parametrize("name", list(ADD_PRODUCT))
def test_add_product_inplace_and_out(name, dtype):
    c, x, y = ADD_PRODUCT[name][0]
    operands = [pair(s, dtype, seed=i) for i, s in enumerate((c, x, y))]
    run(lambda L, c, x, y: (getattr(c, name + "_")(x, y, beta=2), c), operands)
    for out_shape, out_dtype in [((0,), dtype), (c, dtype), ((0,), "float64")]:
        out = (ember.zeros(out_shape, dtype=getattr(ember, out_dtype)),
               torch.zeros(out_shape, dtype=getattr(torch, out_dtype)))
        ops = [pair(s, dtype, seed=i) for i, s in enumerate((c, x, y))] + [out]
        run(lambda L, c, x, y, o: (getattr(L, name)(c, x, y, out=o), o), ops)


def test_add_product_beta_zero_ignores_nan():
    nan = (ember.full((2, 4), float("nan")), torch.full((2, 4), float("nan")))
    run(lambda L, c, x, y: L.addmm(c, x, y, beta=0), [nan, pair((2, 3)), pair((3, 4), seed=1)])


@pytest.mark.parametrize("a,b", [("float32", "float64"), ("float64", "float32")])
def test_add_product_dtype_mismatch(a, b):
    run(lambda L, c, x, y: L.addmm(c, x, y), [pair((4,), a), pair((2, 3), b), pair((3, 4), b)])
    run(lambda L, c, x, y: L.addmm(c, x, y), [pair((4,), a), pair((2, 3), a), pair((3, 4), b)])
    run(lambda L, c, x, y: L.addmv(c, x, y), [pair((2,), a), pair((2, 3), b), pair((3,), b)])
    run(lambda L, c, x, y: L.baddbmm(c, x, y),
        [pair((4,), a), pair((2, 2, 3), b), pair((2, 3, 4), b)])


def test_add_product_coefficients_follow_the_dtype():
    ops = [pair((2, 4), "int64"), pair((2, 3), "int64", seed=1), pair((3, 4), "int64", seed=2)]
    run(lambda L, c, x, y: L.addmm(c, x, y, beta=0.5, alpha=1.9), ops)
    ops = [pair((2, 4), "uint8"), pair((2, 3), "uint8", seed=1), pair((3, 4), "uint8", seed=2)]
    run(lambda L, c, x, y: L.addmm(c, x, y, alpha=-1), ops)
    run(lambda L, c, x, y: L.addmm(c, x, y, alpha=1j),
        [pair((2, 4)), pair((2, 3), seed=1), pair((3, 4), seed=2)])


# ----------------------------------------------------------------------------- einsum

EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("i,i", [(3,), (3,)]),
    ("i,j->ij", [(3,), (2,)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]), ("ij->j", [(2, 3)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("...ij,...jk", [(5, 2, 3), (3, 4)]), ("...ij,...jk->...ik", [(5, 1, 2, 3), (4, 3, 4)]),
    ("...i->i", [(2, 3)]), ("i...->...", [(2, 3, 4)]), ("ba,ca", [(2, 3), (4, 3)]),
    ("aB,Ca", [(2, 3), (4, 2)]), ("i j , j k -> i k", [(2, 3), (3, 4)]),
    ("ij,ij->ij", [(2, 3), (1, 3)]), ("ij,jk->ik", [(2, 1), (3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("ij,k->k", [(2, 3), (3,)]),
    ("ij,jk->ik", [(2, 0), (0, 3)]), ("->", [()]), ("i,->i", [(3,), ()]),
    # errors
    ("ij,jk", [(2, 3), (4, 4)]), ("ij,jk", [(2, 3)]), ("ij", [(2, 3), (3, 4)]),
    ("ijk,jk", [(2, 3), (3, 4)]), ("ij->ii", [(2, 2)]), ("i1->i", [(2, 2)]),
    ("ij->k", [(2, 2)]), ("ii->i", [(2, 3)]), ("...ijk->...", [(2, 3)]),
    ("i->i->i", [(2,)]), ("......->", [(2, 3)]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32",
                                   "uint8", "bool", "complex64"])
@pytest.mark.parametrize("equation,shapes", EINSUM, ids=str)
def test_einsum(equation, shapes, dtype):
    operands = [pair(s, dtype, seed=i) for i, s in enumerate(shapes)]
    run(lambda L, *xs: L.einsum(equation, *xs), operands)
    run(lambda L, *xs: L.einsum(equation, list(xs)), operands)


def test_einsum_dtype_mismatch_and_non_contiguous():
    run(lambda L, x, y: L.einsum("ij,jk", x, y), [pair((2, 3)), pair((3, 4), "float64")])
    run(lambda L, x, y: L.einsum("ij,jk->ki", x, y),
        [pair((2, 3), noncontiguous=True), pair((3, 4), seed=1, noncontiguous=True)])
    run(lambda L, x, y: L.einsum("ij,jk", x, y), [pair((40, 50)), pair((50, 60), seed=1)])


# ----------------------------------------------------------------------------- tensordot

TENSORDOT = [
    ((2, 3, 4), (3, 4, 5), 2), ((2, 3, 4), (4, 5), 1), ((2, 3), (4, 5), 0),
    ((2, 3, 4), (4, 3), ([1, 2], [1, 0])), ((2, 3, 4), (4, 3), ((-1,), (0,))),
    ((2, 1), (3, 4), 1), ((2, 3), (1, 4), 1), ((2, 3, 4), (3, 5), 1), ((2, 3), (3, 4), -1),
    ((2, 3), (3, 4), 3), ((2, 3), (3, 4), ([1], [0, 1])), ((2, 3), (3, 4), ([2], [0])),
    ((3, 3), (3, 3), ([0, 0], [0, 1])), ((0, 3), (3, 2), 1), ((2, 3), (3, 4), (1, 0)),
    # contractions to one element: torch's dot, or a sum of the product where the operands
    # are not contiguous with their contracted dims moved together
    ((1, 1, 0), (1, 1, 0), 3), ((2,), (2,), 1), ((1, 2), (2, 1), 1), ((0,), (0,), 1),
    ((2, 2), (2, 2), ([1, 0], [1, 0])), ((1,), (1,), 1), ((2, 0), (0, 2), 1),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "bool",
                                   "complex64"])
@pytest.mark.parametrize("a,b,dims", TENSORDOT, ids=str)
def test_tensordot(a, b, dims, dtype):
    run(lambda L, x, y: L.tensordot(x, y, dims=dims), [pair(a, dtype), pair(b, dtype, seed=1)])


# a bool contraction to one element is refused by torch's dot (contiguous operands) but
# computed as a sum of the product otherwise
BOOL_TENSORDOTS = [
    lambda L: L.tensordot(L.tensor([False]).expand(2), L.tensor([False]).expand(2), 1),
    lambda L: L.tensordot(L.tensor([True, False, True, True])[::2], L.ones(2, dtype=L.bool), 1),
    lambda L: L.tensordot(L.ones(2, dtype=L.bool), L.ones(4, dtype=L.bool)[::2], 1),
    lambda L: L.tensordot(L.ones(1, 1, dtype=L.bool).expand(1, 2), L.ones(2, 1, dtype=L.bool), 1),
    lambda L: L.tensordot(L.ones(3, 2, dtype=L.bool).t(), L.ones(2, 3, dtype=L.bool), 2),
    lambda L: L.tensordot(L.ones(2, 3, dtype=L.bool), L.ones(3, 2, dtype=L.bool), 2),
    lambda L: L.inner(L.tensor([False]).expand(2), L.ones(2, dtype=L.bool)),
    lambda L: L.inner(L.ones(2, dtype=L.bool), L.ones(2, dtype=L.bool)),
]


@pytest.mark.parametrize("case", range(len(BOOL_TENSORDOTS)))
def test_bool_tensordot_as_the_kernel_torch_picks(case):
    run(lambda L: BOOL_TENSORDOTS[case](L), [])


def test_tensordot_dims_forms():
    ops = [pair((2, 3, 4)), pair((4, 5), seed=1)]
    run(lambda L, x, y: L.tensordot(x, y, dims=L.tensor(1)), ops)
    run(lambda L, x, y: L.tensordot(x, y, 1), ops)
    run(lambda L, x, y: L.tensordot(x, y, dims=1), [pair((2, 3, 4)), pair((4, 5), "float64")])


# ----------------------------------------------------------------------------- kron, cross, trace

@pytest.mark.parametrize("dtype", DTYPES)
def test_kron(dtype):
    for a, b in [((2, 3), (4,)), ((), (4,)), ((), ()), ((2,), (3, 2)), ((0, 2), (2, 2)),
                 ((2, 1, 2), (3, 2))]:
        run(lambda L, x, y: L.kron(x, y), [pair(a, dtype), pair(b, dtype, seed=1)])


# torch's kron multiplies views of its operands with dims added, so a 0-d operand promotes
# as a dimensioned one (two 0-d operands promote the same either way); viewing the product
# in the result's shape fails where an operand's dims are transposed
KRONS = [
    lambda L: L.kron(L.tensor([-8], dtype=L.int8), L.tensor(0)),
    lambda L: L.kron(L.tensor([3.0, -2.0], dtype=L.float16), L.tensor(0.0, dtype=L.float64)),
    lambda L: L.kron(L.ones(3, 2, dtype=L.bfloat16)[..., ::2], L.tensor(float("nan"))),
    lambda L: L.kron(L.tensor(1, dtype=L.uint8), L.tensor([True, False])),
    lambda L: L.kron(L.tensor(3.0, dtype=L.float16), L.tensor(0.5, dtype=L.float64)),
    lambda L: L.kron(L.tensor(3, dtype=L.int8), L.tensor(0.5)),
    lambda L: L.kron(L.tensor([[[-3, -7, -7]], [[1, -7, -5]]]),
                     L.tensor([[[2.5], [-2.0]]], dtype=L.float64).permute(1, 2, 0)),
    lambda L: L.kron(L.tensor([5.0, -2.0], dtype=L.float64), L.ones(3, 1, 4).permute(2, 1, 0)),
    lambda L: L.kron(L.ones(2, 3).t(), L.ones(2, 2)),
    lambda L: L.kron(L.ones(2, 3), L.ones(2, 2).t()),
    lambda L: L.kron(L.ones(2, 3).t(), L.ones(2, 2).t()),
    lambda L: L.kron(L.ones(1, 3).expand(2, 3), L.ones(2, 2)),
    lambda L: L.kron(L.zeros(0, 3).t(), L.ones(2, 2)),
    # a second operand whose size-1 dim strides otherwise than row-major (a row's mH)
    lambda L: L.kron(L.ones(1, 4, dtype=L.float16), L.tensor([[7.0, -3.0]]).mH),
]


@pytest.mark.parametrize("case", range(len(KRONS)))
def test_kron_promotes_and_views_as_torch(case):
    run(lambda L: KRONS[case](L), [])
    try:
        expected = KRONS[case](torch)
    except RuntimeError:  # refused alike: run checked it
        return
    assert KRONS[case](ember).stride() == expected.stride()


CROSS = [((3,), (3,), 0), ((2, 3), (2, 3), None), ((3, 3, 2), (3, 3, 2), None),
         ((2, 3), (1, 3), 1), ((1, 3), (3, 3), None), ((3, 1), (3, 3), None),
         ((4, 3, 5), (4, 3, 5), -2), ((2, 4), (2, 4), None), ((2, 4), (2, 4), 1),
         ((2, 3), (3,), 1), ((3,), (3,), 2), ((0, 3), (0, 3), 1)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("a,b,dim", CROSS, ids=str)
@pytest.mark.filterwarnings("ignore:Using torch.cross without specifying the dim arg")
def test_cross(a, b, dim, dtype):
    run(lambda L, x, y: L.cross(x, y, dim), [pair(a, dtype), pair(b, dtype, seed=1)])
    run(lambda L, x, y: x.cross(y, dim=dim), [pair(a, dtype), pair(b, dtype, seed=1)])


def test_cross_dtype_mismatch():
    run(lambda L, x, y: L.cross(x, y, dim=0), [pair((3,)), pair((3,), "float64")])


@pytest.mark.parametrize("dtype", DTYPES)
def test_trace(dtype):
    for shape in [(3, 3), (2, 4), (4, 2), (0, 3), (3,), (), (2, 2, 2)]:
        run(lambda L, x: L.trace(x), [pair(shape, dtype)])
        run(lambda L, x: x.trace(), [pair(shape, dtype)])
    run(lambda L, x: L.trace(x), [pair((4, 3), dtype, noncontiguous=True)])


def test_integer_products_wrap_like_torch():
    big = np.full((3, 3), 100, dtype=np.uint8)
    e, t = ember.from_numpy(big.copy()), torch.from_numpy(big.copy())
    check(e @ e, t @ t)
    check(ember.trace(e), torch.trace(t))
    check(ember.einsum("ij->", e), torch.einsum("ij->", t))


# ----------------------------------------------------------------------------- dispatcher seam

DISPATCHED = [
    ("matmul", lambda x, m, b: x @ m), ("matmul", lambda x, m, b: ember.mm(m, m)),
    ("matmul", lambda x, m, b: ember.bmm(b, b)),
    ("matmul", lambda x, m, b: ember.dot(x, x)), ("matmul", lambda x, m, b: ember.mv(m, x)),
    ("vdot", lambda x, m, b: ember.vdot(x, x)), ("outer", lambda x, m, b: ember.outer(x, x)),
    ("addmm", lambda x, m, b: ember.addmm(x, m, m, beta=2)),
    ("addmm", lambda x, m, b: ember.addmv(x, m, x)),
    ("addmm", lambda x, m, b: ember.baddbmm(m, b, b)),
    ("addbmm", lambda x, m, b: ember.addbmm(m, b, b)),
    ("einsum", lambda x, m, b: ember.einsum("ij,j->i", m, x)),
    ("tensordot", lambda x, m, b: ember.tensordot(m, m, 1)),
    ("tensordot", lambda x, m, b: ember.inner(m, m)),
    ("kron", lambda x, m, b: ember.kron(x, m)), ("cross", lambda x, m, b: ember.cross(x, x, 0)),
    ("trace", lambda x, m, b: ember.trace(m)),
]


@pytest.mark.parametrize("name,fn", DISPATCHED)
def test_dispatches_a_differentiable_primitive(name, fn):
    """Each product is one call of its primitive (which autograd records), whether or not
    its operands require grad."""
    x = ember.tensor([0.25, -0.5, 0.75])
    m = ember.tensor(np.arange(9.0, dtype=np.float32).reshape(3, 3))
    b = ember.tensor(np.arange(18.0, dtype=np.float32).reshape(2, 3, 3))
    for operands in ((x, m, b), (x.requires_grad_(), m.requires_grad_(), b.requires_grad_())):
        with Recorder() as recorder:
            out = fn(*operands)
        assert [c.op.name for c in recorder.calls] == [name]
        assert same(np.array(out.detach()), recorder.calls[0].outputs)
    assert ember.REGISTRY[name].differentiable


# ----------------------------------------------------------------------------- empty products

def _ones(m, shape, dtype):
    return m.ones(shape, dtype=getattr(m, dtype))


# torch's bmm returns at once when an operand is empty (an empty result, or zeros when only
# the contraction is empty), in batch2's dtype and without comparing dtypes; non-empty
# operands of two dtypes, and bool, are refused
@pytest.mark.parametrize("a, b", [
    ((1, 2, 0), (1, 0, 3)), ((1, 0, 2), (1, 2, 3)), ((1, 2, 2), (1, 2, 0)), ((0, 2, 2), (0, 2, 3)),
    ((1, 2, 2), (1, 2, 3)),
])
@pytest.mark.parametrize("da, db", [("float32", "float64"), ("int16", "int64"), ("bool", "bool"),
                                    ("bool", "int64"), ("int64", "bool")])
@pytest.mark.parametrize("fn", [lambda m, x, y: m.bmm(x, y), lambda m, x, y: m.matmul(x, y),
                                lambda m, x, y: x @ y.expand(3, -1, -1)[:1]])
def test_batched_products_of_empty_operands(fn, a, b, da, db):
    run(lambda m: fn(m, _ones(m, a, da), _ones(m, b, db)), [])


@pytest.mark.parametrize("equation, shapes, dtypes", [
    # a label one operand holds alone is summed out first: sum promotes integers to int64
    ("i,,jk->jk", [(2,), (), (3, 2)], ["uint8"] * 3),
    ("i,j->j", [(2,), (2,)], ["uint8", "uint8"]),
    (",j->", [(), (1,)], ["int64", "int8"]),
    (",i", [(), (2,)], ["int64", "int16"]),
    ("i,i->", [(2,), (2,)], ["int8", "uint8"]),
    ("jk,ijk->", [(0, 3), (2, 0, 3)], ["int16", "int16"]),
    ("ji,ij", [(3, 0), (0, 3)], ["float32", "int16"]),
    ("ijk,jki->", [(0, 2, 1), (2, 1, 0)], ["bool", "uint8"]),
    ("k,kij,->i", [(3,), (3, 1, 0), ()], ["bool", "bool", "float16"]),
    ("ij,i->j", [(2, 1), (2,)], ["bool", "float32"]),
])
def test_einsum_dtypes_follow_torchs_pairwise_steps(equation, shapes, dtypes):
    def fn(m):
        ops = [m.arange(int(np.prod(s)), dtype=m.int64).reshape(s).to(getattr(m, d)) * 7
               if d != "bool" else m.ones(s, dtype=m.bool) for s, d in zip(shapes, dtypes)]
        return m.einsum(equation, *ops)

    run(lambda m: fn(m), [])


# torch's baddbmm/addbmm read batch1's and batch2's sizes before checking their ranks (an
# IndexError for a missing dim); addmv checks the ranks first
@pytest.mark.parametrize("name", ["baddbmm", "addbmm", "addmv"])
@pytest.mark.parametrize("shapes", [
    [(1, 2), (2, 3), (3, 2)], [(2,), (2, 3, 3), (3, 0)], [(3, 2, 3), (3, 0, 3, 2), (2,)],
    [(2,), (), ()], [(2,), (2, 2, 2), (2,)], [(), (0, 0), ()], [(2, 3), (1, 2, 3, 4), (1, 4, 3)],
    [(2, 3), (1, 2, 4), (1, 4, 3)], [(3,), (), ()],
])
def test_add_products_of_wrong_ranks(name, shapes):
    run(lambda m: getattr(m, name)(*[m.ones(s) for s in shapes]), [])



@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "float16"])
@pytest.mark.parametrize("fn", [
    lambda L, m, v: L.matmul(m, v), lambda L, m, v: L.mv(m, v), lambda L, m, v: m @ v[:, None],
    lambda L, m, v: L.addmv(L.ones(3, dtype=m.dtype), m, v), lambda L, m, v: v @ m.t(),
    lambda L, m, v: L.ones(3, dtype=m.dtype).addmv_(m, v), lambda L, m, v: L.tensordot(m, v, 1),
    lambda L, m, v: L.inner(m, v), lambda L, m, v: L.matmul(m.expand(2, 3, 1), v),
    lambda L, m, v: L.einsum("ij,j->i", m, v),
])
def test_products_over_one_inner_element_keep_nan_times_zero(fn, dtype):
    """Over an inner dim of length 1 OpenBLAS's matrix-vector product skips a zero entry
    of the vector, giving 0 where torch gives nan * 0 = nan (and inf * 0)."""
    m = np.array([[np.nan], [np.inf], [-2.0]], dtype=dtype)
    v = np.zeros(1, dtype=dtype)
    ours = fn(ember, ember.from_numpy(m), ember.from_numpy(v))
    check(ours, fn(torch, torch.from_numpy(m), torch.from_numpy(v)))


@pytest.mark.parametrize("name", ["addmm", "baddbmm", "addbmm", "addmv"])
@pytest.mark.parametrize("rows", [0, 2])
@pytest.mark.parametrize("beta", [0.5, 0.0, 2])
def test_an_empty_inner_dim_scales_an_integer_input_by_beta_as_torch(name, rows, beta):
    """addmm, baddbmm and addbmm with no products scale input by beta in place where the
    result has elements: a float beta refuses an integer input; addmv takes another path."""
    lead = (1,) if name in ("baddbmm", "addbmm") else ()
    inp = {"addmm": (rows, 2), "baddbmm": (1, rows, 2), "addbmm": (rows, 2), "addmv": (rows,)}
    second = (*lead, 0) if name == "addmv" else (*lead, 0, 2)

    def call(L):
        i = L.int32
        return getattr(L, name)(L.ones(inp[name], dtype=i), L.ones((*lead, rows, 0), dtype=i),
                                L.ones(second, dtype=i), beta=beta)
    try:
        expected = call(torch)
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=re.escape(str(e))):
            call(ember)
        return
    check(call(ember), expected)


def test_addbmm_of_no_batch_scales_an_integer_input_by_a_float_beta_as_torch():
    """With no batch torch scales input by beta in place: a float beta refuses an integer
    input (0.0 zeroes it)."""
    for L in (ember, torch):
        empty = L.zeros(0, 4, 1, dtype=L.int8)
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type Char"):
            L.addbmm(L.ones(4, 4, dtype=L.int8), empty, empty.mT, beta=0.5)
        assert L.addbmm(L.ones(4, 4, dtype=L.int8), empty, empty.mT, beta=0.0).sum().item() == 0
