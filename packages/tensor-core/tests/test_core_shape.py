"""Shape and view ops (ops/shape.py, transposing, strided, joining, splitting, rearranging) against torch.

Every result is compared on values, dtype and shape, and on strides, contiguity, object
identity and aliasing: where torch returns a view, Ember's result shares the input's
memory and a write through it changes the input and bumps the shared version counter;
where torch copies, nothing is shared. Where torch raises, Ember raises the same exception
type and leaves its inputs unchanged. A TorchDispatchMode checks the primitives each op
dispatches.
"""

import warnings

import ml_dtypes
import numpy as np
import pytest
import torch
from dispatch_oracle import Recorder, replay
from dispatch_oracle import same as same_bits
from torch_oracle import check, random_array

import ember.core as ember
from ember.core import meta

SHAPES = [(), (0,), (5,), (3, 4), (2, 3, 4), (1, 3, 1), (2, 0, 3)]
ALL_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
              "uint8", "bool", "complex64", "complex128"]


def make_pair(shape, dtype="float32", layout="c", seed=0):
    """The same data as an Ember and a torch tensor; layout 'c' contiguous, 't' a transposed
    view of a buffer, 's' every other element of the last dim."""
    rng = np.random.default_rng(seed)
    full = {"c": shape, "t": shape[::-1], "s": shape[:-1] + (2 * shape[-1],) if shape else ()}
    arr = np.asarray(random_array(full[layout], dtype, rng))
    t = torch.from_numpy(arr.copy())
    if dtype == "bfloat16":
        t, arr = t.to(torch.bfloat16), arr.astype(ml_dtypes.bfloat16)
    if layout == "t":
        perm = tuple(reversed(range(len(shape))))
        return ember.from_numpy(arr.transpose(perm)), t.permute(perm)
    if layout == "s":
        return ember.from_numpy(arr[..., ::2]), t[..., ::2]
    return ember.from_numpy(arr), t


def layouts(shapes):
    """(shape, layout) pairs: every shape contiguous, and non-contiguous where it can be."""
    out = []
    for s in shapes:
        out.append((s, "c"))
        if len(s) >= 2:
            out.append((s, "t"))
        if len(s) >= 1 and s[-1] > 1:
            out.append((s, "s"))
    return out


def storage_shared(e_out, e_in):
    return e_out.numel() > 0 and np.shares_memory(np.asarray(e_out), np.asarray(e_in))


def same(e_out, t_out, e_ins, t_ins):
    """``e_out`` matches ``t_out``: values, dtype, shape, strides, contiguity, identity with
    and aliasing of each input."""
    if isinstance(t_out, (tuple, list)):
        assert isinstance(e_out, tuple) == isinstance(t_out, tuple) and len(e_out) == len(t_out)
        for e, t in zip(e_out, t_out):
            same(e, t, e_ins, t_ins)
        return
    check(e_out, t_out)
    assert e_out.is_contiguous() == t_out.is_contiguous()
    if t_out.numel():  # numpy gives empty arrays zero strides; torch does not
        assert e_out.stride() == t_out.stride(), (e_out.stride(), t_out.stride())
    for e_in, t_in in zip(e_ins, t_ins):
        assert (e_out is e_in) == (t_out is t_in)
        t_alias = t_out.numel() > 0 and (
            t_out.untyped_storage().data_ptr() == t_in.untyped_storage().data_ptr())
        assert storage_shared(e_out, e_in) == t_alias, "view/copy semantics differ from torch"


def overlaps_without_broadcast(t):
    """Elements sharing memory through non-zero strides (unfold, as_strided): torch's in-place
    ops then read values they already wrote, an order no other library reproduces."""
    if any(st == 0 and n > 1 for n, st in zip(t.shape, t.stride())):
        return False  # broadcast: torch refuses the write, and Ember must too
    offsets = sum(np.arange(n).reshape([-1] + [1] * (t.dim() - 1 - i)) * st
                  for i, (n, st) in enumerate(zip(t.shape, t.stride())))
    return np.unique(offsets).size < t.numel()


def write_through(e_out, t_out, e_ins, t_ins):
    """Write into the result in both frameworks; the inputs and versions must follow."""
    if t_out.numel() == 0 or overlaps_without_broadcast(t_out):
        return
    op = "logical_not_" if t_out.dtype == torch.bool else "add_"
    args = () if op == "logical_not_" else (1,)
    try:
        getattr(t_out, op)(*args)
    except RuntimeError:  # expanded tensors refuse writes
        with pytest.raises(RuntimeError):
            getattr(e_out, op)(*args)
        return
    getattr(e_out, op)(*args)
    for e_in, t_in in zip(e_ins, t_ins):
        check(e_in, t_in)
        assert e_in._version == t_in._version


def run(fn, e_ins, t_ins, write=True):
    """Compare ``fn(ember, *e_ins)`` with ``fn(torch, *t_ins)`` (see module docstring)."""
    before = [(np.array(e).copy(), e.shape, e.stride(), e._version) for e in e_ins]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = fn(torch, *t_ins)
        except Exception as exc:  # the type torch raises is the type Ember must raise
            with pytest.raises(type(exc)):
                fn(ember, *e_ins)
            for e, (data, shape, stride, version) in zip(e_ins, before):
                np.testing.assert_array_equal(np.array(e), data)
                assert (e.shape, e.stride(), e._version) == (shape, stride, version)
            return None
        actual = fn(ember, *e_ins)
    if isinstance(expected, torch.Tensor) and expected.is_conj():
        # torch's lazy conjugate view has no NumPy counterpart: Ember conjugates into a copy,
        # which is what torch's resolve_conj() gives.
        expected = expected.resolve_conj()
    same(actual, expected, e_ins, t_ins)
    if write:
        pairs = zip(actual, expected) if isinstance(expected, (tuple, list)) else [(actual,
                                                                                   expected)]
        for e_out, t_out in pairs:
            write_through(e_out, t_out, e_ins, t_ins)
    return actual


def lead(x):
    return x.shape[0] if x.dim() else 1


# One line per op and call form; each runs on every shape and layout (torch's errors for
# the shapes an op does not take are part of the comparison).
UNARY = {
    "view(-1)": lambda m, x: x.view(-1),
    "view(2,-1)": lambda m, x: x.view(2, -1),
    "view(size)": lambda m, x: x.view(x.shape),
    "view(list)": lambda m, x: x.view([x.numel(), 1]),
    "view(1,-1,1)": lambda m, x: x.view(1, -1, 1),
    "view(size=)": lambda m, x: x.view(size=(x.numel(),)),
    "view_as": lambda m, x: x.view_as(m.zeros(1, x.numel())),
    "reshape(-1)": lambda m, x: m.reshape(x, (-1,)),
    "reshape(shape=)": lambda m, x: m.reshape(x, shape=(x.numel(), -1)),
    "reshape(shape+1)": lambda m, x: x.reshape(*x.shape, 1),
    "reshape(1+shape)": lambda m, x: x.reshape((1,) + tuple(x.shape)),
    "reshape(rev)": lambda m, x: x.reshape(tuple(reversed(x.shape))),
    "reshape(-1,last)": lambda m, x: x.reshape(-1, x.shape[-1] if x.dim() else 1),
    "reshape_as": lambda m, x: x.reshape_as(m.zeros(x.numel(), 1)),
    "flatten": lambda m, x: m.flatten(x),
    "flatten(1)": lambda m, x: x.flatten(1),
    "flatten(0,1)": lambda m, x: x.flatten(0, 1),
    "flatten(-1,-1)": lambda m, x: x.flatten(-1, -1),
    "unflatten": lambda m, x: x.unflatten(-1, (1, -1)),
    "unflatten(fn)": lambda m, x: m.unflatten(x, 0, (lead(x), 1)),
    "ravel": lambda m, x: m.ravel(x),
    "squeeze": lambda m, x: m.squeeze(x),
    "squeeze(0)": lambda m, x: x.squeeze(0),
    "squeeze(-1)": lambda m, x: x.squeeze(-1),
    "squeeze((0,-1))": lambda m, x: x.squeeze((0, -1)),
    "squeeze(3)": lambda m, x: x.squeeze(3),
    "unsqueeze(0)": lambda m, x: m.unsqueeze(x, 0),
    "unsqueeze(1)": lambda m, x: x.unsqueeze(1),
    "unsqueeze(-1)": lambda m, x: x.unsqueeze(-1),
    "unsqueeze(-2)": lambda m, x: x.unsqueeze(-2),
    "unsqueeze(4)": lambda m, x: x.unsqueeze(4),
    "permute(rev)": lambda m, x: x.permute(*reversed(range(x.dim()))),
    "permute(fn)": lambda m, x: m.permute(x, tuple(range(x.dim()))[::-1]),
    "permute(dup)": lambda m, x: x.permute(0, 0),
    "transpose(0,-1)": lambda m, x: x.transpose(0, -1),
    "transpose(fn)": lambda m, x: m.transpose(x, 1, 0),
    "swapaxes": lambda m, x: m.swapaxes(x, 0, -1),
    "swapdims": lambda m, x: x.swapdims(-1, 0),
    "t": lambda m, x: m.t(x),
    "T": lambda m, x: x.T,
    "mT": lambda m, x: x.mT,
    "H": lambda m, x: x.H,
    "mH": lambda m, x: x.mH,
    "adjoint": lambda m, x: m.adjoint(x),
    "movedim": lambda m, x: m.movedim(x, 0, -1),
    "movedim(tuple)": lambda m, x: x.movedim((0, 1), (-1, 0)),
    "moveaxis": lambda m, x: m.moveaxis(x, -1, 0),
    "expand(new)": lambda m, x: x.expand(2, *x.shape),
    "expand(same)": lambda m, x: x.expand(*x.shape),
    "expand(-1)": lambda m, x: x.expand(3, *([-1] * x.dim())),
    "expand(ones)": lambda m, x: x.expand(*[4 if s == 1 else s for s in x.shape]),
    "expand(1,..)": lambda m, x: x.expand(1, *x.shape),
    "expand(bad)": lambda m, x: x.expand(7),
    "expand_as": lambda m, x: x.expand_as(m.zeros((2,) + tuple(x.shape))),
    "broadcast_to": lambda m, x: m.broadcast_to(x, (2, 1) + tuple(x.shape)),
    "narrow": lambda m, x: x.narrow(0, 1, 2),
    "narrow(neg)": lambda m, x: m.narrow(x, -1, -2, 1),
    "narrow(tensor)": lambda m, x: x.narrow(0, m.tensor(1), 1),
    "diagonal": lambda m, x: x.diagonal(),
    "diagonal(1)": lambda m, x: m.diagonal(x, 1),
    "diagonal(-1,0,-1)": lambda m, x: x.diagonal(-1, 0, -1),
    "diagonal(big)": lambda m, x: x.diagonal(5),
    "unfold": lambda m, x: x.unfold(0, 2, 1),
    "unfold(-1,2,2)": lambda m, x: x.unfold(-1, 2, 2),
    "unfold(0,1,3)": lambda m, x: x.unfold(0, 1, 3),
    "atleast_1d": lambda m, x: m.atleast_1d(x),
    "atleast_2d": lambda m, x: m.atleast_2d(x),
    "atleast_3d": lambda m, x: m.atleast_3d(x),
    "atleast_3d(list)": lambda m, x: m.atleast_3d([x, x]),
    "split(2)": lambda m, x: x.split(2),
    "split(2,-1)": lambda m, x: m.split(x, 2, -1),
    "split(list)": lambda m, x: m.split(x, [1, lead(x) - 1]),
    "tensor_split(3)": lambda m, x: x.tensor_split(3),
    "tensor_split(idx)": lambda m, x: m.tensor_split(x, [1, 3], dim=-1),
    "tensor_split(down)": lambda m, x: x.tensor_split([3, 1]),
    "tensor_split(t)": lambda m, x: x.tensor_split(m.tensor([1, 2])),
    "chunk(2)": lambda m, x: x.chunk(2),
    "chunk(3,-1)": lambda m, x: m.chunk(x, 3, -1),
    "unbind": lambda m, x: x.unbind(),
    "unbind(-1)": lambda m, x: m.unbind(x, -1),
    "hsplit": lambda m, x: m.hsplit(x, 1),
    "vsplit": lambda m, x: x.vsplit([1]),
    "dsplit": lambda m, x: m.dsplit(x, 1),
    "repeat": lambda m, x: x.repeat(*([2] * x.dim())),
    "repeat(lead)": lambda m, x: x.repeat(2, *([1] * x.dim())),
    "repeat(few)": lambda m, x: x.repeat(2),
    "tile": lambda m, x: m.tile(x, (2,)),
    "tile(method)": lambda m, x: x.tile(2, 1),
    "repeat_interleave": lambda m, x: m.repeat_interleave(x, 2),
    "repeat_interleave(dim)": lambda m, x: x.repeat_interleave(3, dim=0),
    "repeat_interleave(t)": lambda m, x: x.repeat_interleave(m.arange(lead(x)) % 3, dim=0),
    "repeat_interleave(t1)": lambda m, x: m.repeat_interleave(x, m.tensor([2]), dim=-1),
    "flip": lambda m, x: x.flip(0),
    "flip(fn)": lambda m, x: m.flip(x, (0, -1)),
    "flip([])": lambda m, x: m.flip(x, []),
    "flip(dup)": lambda m, x: x.flip(0, 0),
    "fliplr": lambda m, x: m.fliplr(x),
    "flipud": lambda m, x: x.flipud(),
    "roll": lambda m, x: x.roll(1),
    "roll(dim)": lambda m, x: m.roll(x, 2, 0),
    "roll(dims)": lambda m, x: x.roll((1, -1), (0, -1)),
    "roll(bad)": lambda m, x: x.roll((1, 2), 0),
    "rot90": lambda m, x: x.rot90(),
    "rot90(2)": lambda m, x: m.rot90(x, 2),
    "rot90(3)": lambda m, x: x.rot90(3, [0, -1]),
    "rot90(-1)": lambda m, x: x.rot90(-1, (-1, 0)),
    "rot90(0)": lambda m, x: x.rot90(0),
    "diag": lambda m, x: m.diag(x),
    "diag(1)": lambda m, x: x.diag(1),
    "diag(-2)": lambda m, x: m.diag(x, -2),
    "diag_embed": lambda m, x: m.diag_embed(x),
    "diag_embed(1,0,2)": lambda m, x: x.diag_embed(1, 0, 2),
    "diag_embed(-1,-1,0)": lambda m, x: m.diag_embed(x, -1, -1, 0),
    "tril": lambda m, x: m.tril(x),
    "tril(1)": lambda m, x: x.tril(1),
    "triu": lambda m, x: x.triu(),
    "triu(-1)": lambda m, x: m.triu(x, diagonal=-1),
    "as_strided": lambda m, x: x.as_strided((2, 2), (1, 2)),
    "as_strided(offset)": lambda m, x: m.as_strided(x, (2,), (3,), 1),
}
# torch measures as_strided against the whole buffer, which layout 's' hides from Ember's
# from_numpy input (its storage ends at the last element it can reach).
CONTIGUOUS_ONLY = {"as_strided", "as_strided(offset)"}


@pytest.mark.parametrize(("shape", "layout"), layouts(SHAPES))
@pytest.mark.parametrize("name", list(UNARY))
def test_against_torch(name, shape, layout):
    if name in CONTIGUOUS_ONLY and layout == "s":
        return
    e, t = make_pair(shape, "float32", layout)
    run(UNARY[name], [e], [t])


DTYPE_OPS = ["view(-1)", "reshape(rev)", "permute(rev)", "expand(new)", "narrow", "diagonal",
             "unfold", "split(2)", "unbind", "repeat", "repeat_interleave(dim)", "flip", "roll",
             "rot90", "tril", "triu", "diag_embed", "T", "H", "mH"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", DTYPE_OPS)
def test_every_dtype(name, dtype):
    e, t = make_pair((3, 4), dtype, "t")
    run(UNARY[name], [e], [t])


@pytest.mark.parametrize("layout", ["c", "t", "s", "expanded"])
@pytest.mark.parametrize("name", ["H", "mH", "adjoint"])
def test_conjugate_transposes_have_the_strides_of_torchs_views(name, layout):
    """torch's H, mH and adjoint of a complex tensor are lazy conjugate views; Ember's
    conjugated copy has their strides, a stepped input's gaps and an expanded one's zeros
    included."""
    if layout == "expanded":
        e, t = make_pair((1, 3), "complex64")
        e, t = e.expand(2, 3), t.expand(2, 3)
    else:
        e, t = make_pair((2, 3), "complex64", layout)
    ours, theirs = UNARY[name](ember, e), UNARY[name](torch, t)
    check(ours, theirs.resolve_conj())
    assert ours.stride() == theirs.stride()
    if layout == "expanded":  # its elements share memory: writes refuse, as torch's
        for v in (theirs, ours):
            with pytest.raises(RuntimeError, match="more than one element of the written"):
                v.addcdiv_(v.clone(), v.clone(), value=3)


ERRORS = [
    lambda m, x: x.movedim((0, 1), (1,)), lambda m, x: x.movedim((0, 0), (0, 1)),
    lambda m, x: x.movedim((0, 1), (1, 1)), lambda m, x: x.expand(-1, 3, 4),
    lambda m, x: m.broadcast_tensors(x, 3), lambda m, x: x.narrow(0, m.tensor(1.0), 1),
    lambda m, x: x.narrow(0, 0, -1), lambda m, x: x.unfold(0, -1, 1),
    lambda m, x: x.unfold(0, 2, 0), lambda m, x: x.as_strided((2, 2), (1,)),
    lambda m, x: x.as_strided((2, 2), (1, -2)), lambda m, x: x.as_strided((-1, 2), (1, 2)),
    lambda m, x: x.as_strided((2, 2), (1, 2), -1), lambda m, x: x.as_strided((4, 4), (4, 1)),
    lambda m, x: x.as_strided((0, 4), (4, 1), 12), lambda m, x: m.atleast_1d(3),
    lambda m, x: m.stack(iter([x, x])), lambda m, x: m.cat(x for x in [x]),
    lambda m, x: m.hstack(iter([x])), lambda m, x: x.repeat(-1, 2), lambda m, x: x.roll((), ()),
    lambda m, x: x.rot90(1, [0]), lambda m, x: x.rot90(1, [0, 0]), lambda m, x: x.rot90(1, [0, 2]),
    lambda m, x: x.rot90(1, [0, -2]), lambda m, x: x.reshape(-2, 6), lambda m, x: x.view(2, 2, 3),
    lambda m, x: x.reshape((2, -1, -1)), lambda m, x: x.view(x.shape, 1),
    lambda m, x: m.unflatten(x, 1, (5, -1)), lambda m, x: x.unflatten(0, ()),
    lambda m, x: x.flatten(1, 0), lambda m, x: x.permute(0), lambda m, x: x.permute(0, 2),
    lambda m, x: x.split([1, 1]), lambda m, x: x.diag_embed(0, 0, 0), lambda m, x: x.diagonal(0, 1, 1),
    lambda m, x: m.meshgrid(iter([x[0], x[0]]), indexing="ij"), lambda m, x: x.flip(),
    lambda m, x: x.narrow(1, 1, 2).view(m.float64), lambda m, x: x.permute(0, -3),
    lambda m, x: m.zeros(3, 5).narrow(1, 0, 4).view(m.float64), lambda m, x: x.permute(1, "a"),
    lambda m, x: m.broadcast_tensors(), lambda m, x: m.atleast_2d(),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_errors(fn):
    run(fn, *zip(make_pair((3, 4))))


def test_device_mismatch():
    # "meta" tensors stand in for a second device: numpy-backed here, data-free in torch.
    e, m = ember.zeros(2), ember.zeros(2, device="meta")
    for fn in (lambda lib, a, b: lib.cat([a, b]), lambda lib, a, b: lib.stack([a, b]),
               lambda lib, a, b: lib.meshgrid(a, b, indexing="ij")):
        with pytest.raises(RuntimeError):
            fn(torch, torch.zeros(2), torch.zeros(2, device="meta"))
        with pytest.raises(RuntimeError, match="device"):
            fn(ember, e, m)


def test_flip_keeps_a_non_dense_layout():
    # A transposed view of every other column: torch orders the copy's strides like the input's.
    e, t = make_pair((4, 6), "float32", "s")
    for fn in (lambda x: x.t().flip(0), lambda x: x.t().unsqueeze(1).flip(-1),
               lambda x: x.t().expand(2, 6, 4).permute(2, 0, 1).flip(1)):
        same(fn(e), fn(t), [e], [t])


# ----------------------------------------------------------------------------- view()

@pytest.mark.parametrize(("src", "dst"), [(torch.float32, torch.int32), (torch.float32,
                                          torch.float16), (torch.float32, torch.float64),
                                          (torch.int64, torch.complex64), (torch.uint8, torch.bool),
                                          (torch.bfloat16, torch.int16), (torch.int8, torch.int32)])
@pytest.mark.parametrize(("shape", "layout"), [((3, 4), "c"), ((3, 4), "t"), ((2, 6), "s"),
                                               ((3, 2), "c"), ((), "c"), ((8,), "c"), ((0,), "c")])
def test_view_dtype(src, dst, shape, layout):
    name = str(src).removeprefix("torch.")
    e, t = make_pair(shape, name, layout)
    run(lambda m, x: x.view(getattr(m, str(dst).removeprefix("torch."))), [e], [t])
    run(lambda m, x: x.view(dtype=getattr(m, str(dst).removeprefix("torch."))), [e], [t],
        write=False)


def test_view_dtype_is_outside_autograd():
    e = ember.ones(2, 3).requires_grad_()
    assert e.view(ember.int32).requires_grad is False
    assert e.view(ember.float32).grad_fn is None


def test_view_errors_name_the_problem():
    e = ember.zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"Use \.reshape\(\.\.\.\) instead"):
        e.t().view(12)
    with pytest.raises(RuntimeError, match=r"shape '\[3, 5\]' is invalid for input of size 12"):
        e.view(3, 5)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        e.view(-1, -1)
    with pytest.raises(RuntimeError, match="invalid shape dimension -2"):
        e.view(-2, 6)
    with pytest.raises(RuntimeError, match="ambiguous"):
        ember.zeros(0, 4).view(-1, 0)
    with pytest.raises(TypeError, match="tuple of ints"):
        e.view(2.0, 6)
    with pytest.raises(TypeError):
        e.view()


def test_view_of_size1_dims_with_odd_strides():
    # (1, 4).t() has shape (4, 1) and stride (1, 4): torch keeps the 4 in views of it.
    for make in (lambda m: m.zeros(1, 4).t(), lambda m: m.zeros(3, 4).t().narrow(0, 0, 1)
                 .narrow(1, 0, 1)):
        for fn in (lambda x: x.view(-1, 1), lambda x: x.view(-1), lambda x: x.unsqueeze(-1),
                   lambda x: x.reshape(1, -1, 1)):
            e, t = fn(make(ember)), fn(make(torch))
            assert e.shape == t.shape and e.stride() == t.stride()


def test_T_warns_like_torch_outside_2d():
    with pytest.warns(UserWarning, match="deprecated"):
        ember.zeros(2, 3, 4).T
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.zeros(2, 3).T


# ----------------------------------------------------------------------------- joining

CAT_CASES = [
    ([(3, 4), (2, 4)], 0), ([(3, 4), (3, 1)], 1), ([(2, 3, 4)] * 3, -1), ([(0, 4), (3, 4)], 0),
    ([(0,), (3, 4)], 1), ([(3, 4), (0,)], 0), ([(0,), (0,)], 0), ([(3, 4)], 1), ([(5,), (2,)], 0),
    ([(3, 4), (3,)], 0), ([(3, 4), (3, 5)], 0), ([(), ()], 0), ([(3, 4), (3, 4)], 2),
    ([(3, 4), (3, 4)], -3), ([(2, 0, 3), (2, 1, 3)], 1),
]
DTYPE_MIXES = [("float32", "float32"), ("float32", "int64"), ("int32", "bool"),
               ("float16", "bfloat16"), ("uint8", "int8"), ("float64", "complex64")]


def operands(shapes, dtypes, layout):
    pairs = [make_pair(s, dtypes[i % len(dtypes)], layout if len(s) >= 2 else "c", seed=i)
             for i, s in enumerate(shapes)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


@pytest.mark.parametrize("layout", ["c", "t"])
@pytest.mark.parametrize("dtypes", DTYPE_MIXES)
@pytest.mark.parametrize(("shapes", "dim"), CAT_CASES)
def test_cat(shapes, dim, dtypes, layout):
    es, ts = operands(shapes, dtypes, layout)
    run(lambda m, *xs: m.cat(xs, dim), es, ts)
    run(lambda m, *xs: m.concat(list(xs), dim=dim), es, ts, write=False)
    run(lambda m, *xs: m.concatenate(xs, axis=dim), es, ts, write=False)


STACK_CASES = [([(3, 4), (3, 4)], 0), ([(3, 4)] * 3, 2), ([(3, 4)] * 2, -1), ([(), ()], 0),
               ([(0, 2), (0, 2)], 1), ([(3, 4), (4, 3)], 0), ([(3, 4), (3, 4)], 3),
               ([(5,), (5,)], 1), ([(3,)], 0)]


@pytest.mark.parametrize("layout", ["c", "t"])
@pytest.mark.parametrize("dtypes", DTYPE_MIXES[:3])
@pytest.mark.parametrize(("shapes", "dim"), STACK_CASES)
def test_stack(shapes, dim, dtypes, layout):
    es, ts = operands(shapes, dtypes, layout)
    run(lambda m, *xs: m.stack(xs, dim), es, ts)


STACKERS = ["hstack", "vstack", "row_stack", "dstack", "column_stack"]
STACKER_SHAPES = [[(3,), (2,)], [(3,), (3,)], [(), ()], [(3, 4), (3, 2)], [(3, 4), (2, 4)],
                  [(2, 3, 4), (2, 3, 1)], [(3,), (3, 2)], [(4,)], [(3, 2, 2), (3,)]]


@pytest.mark.parametrize("shapes", STACKER_SHAPES)
@pytest.mark.parametrize("name", STACKERS)
def test_stackers(name, shapes):
    es, ts = operands(shapes, ["float32", "int64"], "t")
    run(lambda m, *xs: getattr(m, name)(xs), es, ts)


def test_joining_errors_and_out():
    e = ember.zeros(2, 2)
    with pytest.raises(TypeError, match="tuple of Tensors"):
        ember.cat(e)
    with pytest.raises(TypeError, match="element 1"):
        ember.cat([e, 3])
    with pytest.raises(ValueError, match="non-empty"):
        ember.cat([])
    with pytest.raises(RuntimeError, match="non-empty"):
        ember.stack([])
    with pytest.raises(RuntimeError, match="non-empty"):
        ember.hstack([])
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        ember.cat([e, ember.zeros(2, 3)])
    with pytest.raises(TypeError, match="can't be cast to the desired output type Long"):
        ember.cat([e, e], out=ember.zeros(4, 2, dtype=ember.int64))
    for name in ("cat", "stack", "hstack", "vstack"):
        out_e, out_t = ember.zeros(0), torch.zeros(0)
        a, b = make_pair((2, 3), seed=1), make_pair((2, 3), seed=2)
        assert getattr(ember, name)([a[0], b[0]], out=out_e) is out_e
        getattr(torch, name)([a[1], b[1]], out=out_t)
        check(out_e, out_t)
    e, t = make_pair((3, 4))
    for dtype in ("float32", "float64"):
        for name in ("tril", "triu", "diag"):
            out_e, out_t = ember.zeros(0, dtype=dtype), torch.zeros(0, dtype=getattr(torch, dtype))
            run(lambda m, x, o: getattr(m, name)(x, out=o), [e, out_e], [t, out_t])


# ----------------------------------------------------------------------------- splits

def test_split_errors():
    e, t = make_pair((3, 4))
    for fn in (lambda m, x: x.split([1, 1]), lambda m, x: x.split(0),
               lambda m, x: x.split(-1), lambda m, x: x.split([2, -1, 2]),
               lambda m, x: x.tensor_split(0), lambda m, x: x.tensor_split(m.tensor([1.0])),
               lambda m, x: x.tensor_split(m.tensor([[1]])), lambda m, x: x.chunk(0),
               lambda m, x: m.vsplit(x, 2), lambda m, x: m.hsplit(x, 3),
               lambda m, x: x.tensor_split(m.tensor(2), 1), lambda m, x: x.tensor_split(-1, 1),
               lambda m, x: x.tensor_split([-1], 1), lambda m, x: x.tensor_split([1, 5, 2], 1)):
        run(fn, [e], [t])
    run(lambda m, x: x.split(0), *zip(make_pair((0, 3))))
    run(lambda m, x: x.chunk(4), *zip(make_pair((0,))))
    run(lambda m, x: x.chunk(4), *zip(make_pair((5,))))


def test_repeat_interleave_forms():
    e, t = make_pair((3, 4))
    for fn in (lambda m, x: m.repeat_interleave(x, m.tensor([1, 2, 0]), dim=0),
               lambda m, x: m.repeat_interleave(x, m.tensor([1, 2]), dim=0),
               lambda m, x: m.repeat_interleave(x, m.tensor([1, -2, 1]), dim=0),
               lambda m, x: m.repeat_interleave(x, m.tensor([1.0, 2, 1]), dim=0),
               lambda m, x: m.repeat_interleave(x, m.tensor([[1]]), dim=0),
               lambda m, x: m.repeat_interleave(x, m.tensor(2)),
               lambda m, x: m.repeat_interleave(x, -1),
               lambda m, x: m.repeat_interleave(x, m.tensor([1, 2, 3], dtype=m.int32), dim=0),
               lambda m, x: m.repeat_interleave(x, 2, dim=0, output_size=6)):
        run(fn, [e], [t])
    for counts in ([1, 0, 3], [[1, 2]], [1.0, 2.0], [], 2):
        run(lambda m, c: m.repeat_interleave(c), [ember.tensor(counts)], [torch.tensor(counts)])


# ----------------------------------------------------------------------------- broadcasting

@pytest.mark.parametrize("shapes", [[(3, 4), (2, 1, 1)], [(3, 4), (4,)], [(2, 4), (3, 4)],
                                    [(3, 4)], [(), (0, 2)], [(1,), (5,), (2, 1)]])
def test_broadcast_tensors_and_shapes(shapes):
    es, ts = operands(shapes, ["float32", "int64"], "t")
    run(lambda m, *xs: m.broadcast_tensors(*xs), es, ts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = torch.broadcast_shapes(*shapes)
        except RuntimeError:
            with pytest.raises(RuntimeError):
                ember.broadcast_shapes(*shapes)
            return
    got = ember.broadcast_shapes(*shapes)
    assert got == expected and repr(got) == repr(expected)


def test_broadcast_shapes_forms():
    for shapes in ([], [2, (3, 1)], [(0,), (1,)], [(0,), (2,)]):
        try:
            expected = torch.broadcast_shapes(*shapes)
        except RuntimeError:
            with pytest.raises(RuntimeError):
                ember.broadcast_shapes(*shapes)
            continue
        assert ember.broadcast_shapes(*shapes) == expected
    with pytest.raises(ValueError):
        ember.broadcast_shapes((-1,), (2,))


@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("shapes", [[(3,), (2,)], [(3,), (2,), (4,)], [(), (2,)], [(3,)],
                                    [(0,), (2,)], [(2, 2), (2,)]])
def test_meshgrid(shapes, indexing):
    es, ts = operands(shapes, ["float32"], "c")
    run(lambda m, *xs: m.meshgrid(*xs, indexing=indexing), es, ts)
    run(lambda m, *xs: m.meshgrid(list(xs), indexing=indexing), es, ts, write=False)


def test_meshgrid_errors_and_default():
    a, b = ember.zeros(2), ember.zeros(3, dtype=ember.float64)
    with pytest.raises(RuntimeError, match="same dtype"):
        ember.meshgrid(a, b, indexing="ij")
    with pytest.raises(RuntimeError, match="indexing must be one of"):
        ember.meshgrid(a, a, indexing="foo")
    with pytest.raises(RuntimeError, match="non-empty"):
        ember.meshgrid()
    with pytest.warns(UserWarning, match="indexing"):
        grid = ember.meshgrid(a, ember.zeros(3))
    assert grid[0].shape == (2, 3)


# ----------------------------------------------------------------------------- in place

INPLACE = {
    "squeeze_": lambda x: x.squeeze_(), "squeeze_(0)": lambda x: x.squeeze_(0),
    "squeeze_((0,-1))": lambda x: x.squeeze_((0, -1)), "unsqueeze_": lambda x: x.unsqueeze_(1),
    "unsqueeze_(9)": lambda x: x.unsqueeze_(9), "t_": lambda x: x.t_(),
    "transpose_": lambda x: x.transpose_(0, -1), "swapaxes_": lambda x: x.swapaxes_(0, -1),
    "swapdims_": lambda x: x.swapdims_(-1, 0), "tril_": lambda x: x.tril_(),
    "triu_": lambda x: x.triu_(1),
}


@pytest.mark.parametrize(("shape", "layout"), layouts([(), (3,), (1, 3, 1), (3, 4), (2, 3, 4)]))
@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace(name, shape, layout):
    e, t = make_pair(shape, "float32", layout)
    fn = INPLACE[name]
    result = run(lambda m, x: fn(x), [e], [t], write=False)
    if result is not None:
        assert result is e
        same(e, t, [], [])
        assert e._version == t._version


def test_inplace_shape_change_leaves_other_views_alone():
    base = ember.zeros(1, 3, 1)
    view = base.view(3)
    base.squeeze_()
    base.unsqueeze_(0).t_()
    assert view.shape == (3,) and base.shape == (3, 1)
    base.add_(1)
    check(view, torch.ones(3))


# ----------------------------------------------------------------------------- the dispatcher

RECORDED = [
    (lambda x: x.view(12), "view", {"size": (12,)}),
    (lambda x: x.t().reshape(12), "reshape", {"size": (12,)}),
    (lambda x: x.reshape(4, 3), "view", {"size": (4, 3)}),
    (lambda x: x.t().view(4, 1, 3), "view", {"size": (4, 1, 3)}),
    (lambda x: x.view(ember.int32), "view_dtype", {"dtype": ember.int32}),
    (lambda x: x.permute(1, 0), "permute", {"dims": (1, 0)}),
    (lambda x: x.transpose(-1, 0), "permute", {"dims": (1, 0)}),
    (lambda x: x.unsqueeze(-1), "unsqueeze", {"dim": 2}),
    (lambda x: x.view(1, 3, 1, 4).squeeze(), "squeeze", {"dims": (0, 2)}),
    (lambda x: x.expand(2, 3, 4), "expand", {"size": (2, 3, 4)}),
    (lambda x: x.narrow(1, -2, 2), "narrow", {"dim": 1, "start": 2, "length": 2}),
    (lambda x: x.diagonal(1), "diagonal", {"offset": 1, "dim1": 0, "dim2": 1}),
    (lambda x: x.unfold(1, 2, 1), "unfold", {"dimension": 1, "size": 2, "step": 1}),
    (lambda x: ember.cat([x, x], -1), "cat", {"dim": 1}),
    (lambda x: ember.cat([x, ember.zeros(0), x.double()]), "cat", {"dim": 0}),
    (lambda x: ember.stack([x, x], -1), "stack", {"dim": 2}),
    (lambda x: x.split(3, 1), "split", {"dim": 1, "sizes": (3, 1)}),
    (lambda x: x.chunk(2), "split", {"dim": 0, "sizes": (2, 1)}),
    (lambda x: x.unbind(1), "unbind", {"dim": 1}),
    (lambda x: x.repeat(2, 1, 1), "repeat", {"repeats": (2, 1, 1)}),
    (lambda x: x.flip(-1), "flip", {"dims": (1,)}),
    (lambda x: x.roll(1, -1), "roll", {"shifts": (1,), "dims": (1,)}),
    (lambda x: x.roll(1), "roll", {"shifts": (1,), "dims": ()}),
    (lambda x: x.tril(1), "tril", {"diagonal": 1}),
    (lambda x: x.triu(), "triu", {"diagonal": 0}),
    (lambda x: ember.diag_embed(x), "diag_embed", {"offset": 0, "dim1": 1, "dim2": 2}),
    (lambda x: x.repeat_interleave(2, 0), "repeat_interleave", {"dim": 0, "output_size": None}),
    (lambda x: x.as_strided((2,), (5,), 1), "as_strided", {
        "size": (2,), "stride": (5,), "storage_offset": 1, "input_stride": (4, 1)}),
    (lambda x: x.to(ember.complex64).mH, "conj_physical", {}),
]


def _geometry(arrays):
    return [(a.shape, a.dtype, a.strides) for a in arrays]


@pytest.mark.parametrize(("fn", "name", "params"), RECORDED)
def test_dispatches_its_primitive(fn, name, params):
    x = ember.arange(12.0).view(3, 4)
    with Recorder() as recorder:
        out = fn(x)
    call = recorder.calls[-1]
    assert call.op.name == name and call.params == params
    outs = out if isinstance(out, tuple) else (out,)
    # The params are the forward's keywords: the call replays through the registry, and the
    # data-free meta rule gives the outputs' geometry from the operands' alone.
    assert same_bits(replay(call), call.outputs)
    operands = [meta.MetaArray(a.shape, a.dtype, a.strides) if isinstance(a, np.ndarray) else a
                for a in call.inputs]
    rule = call.op.meta(*operands, **params)
    assert _geometry(rule if isinstance(rule, tuple) else (rule,)) == _geometry(
        [o._data for o in outs])


def test_repeat_interleave_takes_its_counts_as_an_operand():
    x = ember.arange(12.0).view(3, 4)
    with Recorder() as recorder:
        out = x.repeat_interleave(ember.tensor([1, 0, 2]), dim=0)
    call = recorder.calls[-1]
    assert call.op.name == "repeat_interleave" and call.params == {"dim": 0, "output_size": None}
    np.testing.assert_array_equal(call.inputs[1], [1, 0, 2])
    assert same_bits(replay(call), call.outputs) and out.shape == (3, 4)


def test_no_history_without_grad():
    x = ember.ones(3, 4)
    for out in (x.view(12), x.t(), ember.cat([x, x]), *x.split(2), x.flip(0),
                x.expand(2, 3, 4)):
        assert out.grad_fn is None and not out.requires_grad


def test_inplace_view_ops_dispatch_their_inplace_primitive():
    x = ember.ones(1, 3, 4)
    with Recorder() as recorder:
        assert x.squeeze_(0) is x and x.t_() is x and x.unsqueeze_(1) is x
    assert x.shape == (4, 1, 3)
    assert [(c.op.name, c.params) for c in recorder.calls] == [
        ("squeeze_", {"dims": (0,)}), ("permute_", {"dims": (1, 0)}), ("unsqueeze_", {"dim": 1})]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "bool", "complex64", "int64"])
@pytest.mark.parametrize("shape,sizes", [
    ((1, 4), (4, 4)), ((1, 4), (-1, 4)), ((1, 4), (4, -1)), ((1, 4), (1, 4)), ((1, 4), (0, 4)),
    ((1, 4), (2, 1, 4)), ((1, 4), (3,)), ((1, 4), (4, 3)), ((1, 4), (-2, 4)),
    ((1, 4), (-1, 1, 4)), ((1, 4), ((4, 4),)), ((2, 2), (3, 3)), ((1, 2), (-2, 3)),
    ((3, 1), (-3, 3, -2)), ((1, 4), (2, -1, 4)), ((2,), (-2,))])
def test_expand_results_and_errors_match_torch(shape, sizes, dtype):
    """Sizes of the tensor's own rank take a short path; the checks run from the last dim,
    a negative size where a size-1 dim is repeated overflows torch's element count, and
    errors print the tensor's type as torch's do (``torch.FloatTensor``,
    ``CPUBFloat16Type``)."""
    results = []
    for m in (torch, ember):
        try:
            r = m.ones(*shape, dtype=getattr(m, dtype)).expand(*sizes)
            results.append((tuple(r.shape), tuple(r.stride())))
        except RuntimeError as error:
            results.append(str(error))
    assert results[0] == results[1]


@pytest.mark.parametrize("layout", ["permuted", "channels-last", "stepped", "expanded"])
@pytest.mark.parametrize("dim", [0, 1, 2, 3, 4, -1])
def test_stack_is_laid_out_as_torch_lays_it_out(layout, dim):
    """torch stacks along an existing dim as cat there (channels-last where every operand
    is) viewed with the dim split, and past the last dim as cat of the operands unsqueezed
    at the end: its strides, size-1 dims' too, are that layout's."""
    a = np.arange(8.0, dtype=np.float32).reshape(1, 2, 2, 2)
    make = {"permuted": lambda m: m.from_numpy(a[:, :1]).permute(0, 3, 1, 2),
            "channels-last": lambda m: m.from_numpy(a).permute(0, 2, 3, 1).contiguous()
            .permute(0, 3, 1, 2),
            "stepped": lambda m: m.from_numpy(a)[..., ::2],
            "expanded": lambda m: m.from_numpy(a[:, :1]).expand(3, 1, 2, 2)}[layout]
    got = []
    for m in (torch, ember):
        x = make(m)
        r = m.stack([x, x * 1, x], dim)
        got.append((tuple(r.shape), r.stride(), np.asarray(r).tolist()))
    assert got[0] == got[1]
