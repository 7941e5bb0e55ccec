"""ember.nn.utils.rnn against torch.nn.utils.rnn: PackedSequence (construction, fields,
conversions), pack_padded_sequence (batch_first, enforce_sorted), pad_packed_sequence
(batch_first, padding_value, total_length), pad_sequence (batch_first, padding_value,
padding_side), pack_sequence, unpad_sequence, unpack_sequence and invert_permutation give
torch's values, dtypes and gradients, and torch's errors."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.utils.rnn as trnn
from nn_oracle import check_close, to_numpy

import ember.autograd as ag
import ember.core as E
import ember.nn as enn
import ember.nn.utils.rnn as ernn

BOTH = [(torch, trnn), (E, ernn)]


def _rand(shape, dtype="float32", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _same(t, e, what="value"):
    """Same dtype, shape and values; floating within tolerance, others exactly."""
    if t is None or e is None:
        assert t is None and e is None, what
        return
    if t.dtype.is_floating_point:
        check_close(t, e, what)
        return
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], what
    np.testing.assert_array_equal(to_numpy(e), to_numpy(t), err_msg=what)


def _same_packed(t, e):
    assert isinstance(e, ernn.PackedSequence) and isinstance(e, tuple)
    for name, a, b in zip(t._fields, t, e):
        _same(a, b, name)


def _grads_agree(tleaves, eleaves, touts, eouts, seed=0):
    """Backward of random gradients of the outputs; the leaves' gradients agree."""
    rng = np.random.default_rng(seed)
    grads = [rng.standard_normal(tuple(o.shape)).astype(to_numpy(o).dtype) for o in touts]
    torch.autograd.backward(list(touts), [torch.tensor(g) for g in grads])
    ag.backward(list(eouts), [E.tensor(g) for g in grads])
    for i, (a, b) in enumerate(zip(tleaves, eleaves)):
        check_close(a.grad, b.grad, f"leaf {i} grad")


# ----------------------------------------------------------------------------- packing

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("lengths, enforce_sorted", [
    ([5, 3, 2, 2], True), ([3, 5, 1, 2], False), ([4, 4, 4, 4], True), ([1, 2, 2, 5], False)])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_pack_then_pad_matches_torch(lengths, enforce_sorted, batch_first, as_tensor, dtype):
    shape = (4, 6, 3) if batch_first else (6, 4, 3)
    x = _rand(shape, dtype)
    results, leaves = [], []
    for lib, rnn in BOTH:
        xs = lib.tensor(x).requires_grad_(True)
        lens = lib.tensor(lengths) if as_tensor else lengths
        packed = rnn.pack_padded_sequence(xs, lens, batch_first=batch_first,
                                          enforce_sorted=enforce_sorted)
        padded, out_lengths = rnn.pad_packed_sequence(packed, batch_first=batch_first,
                                                      padding_value=-2.5, total_length=7)
        results.append((packed, padded, out_lengths))
        leaves.append(xs)
    (tp, tpad, tlen), (ep, epad, elen) = results
    _same_packed(tp, ep)
    _same(tpad, epad, "padded")
    _same(tlen, elen, "lengths")
    _grads_agree([leaves[0]], [leaves[1]], [tp.data, tpad], [ep.data, epad])


@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_packed_sequence_defaults(batch_first):
    x = _rand((5, 3, 2))
    outs = []
    for lib, rnn in BOTH:
        packed = rnn.pack_padded_sequence(lib.tensor(x), [5, 2, 1])
        outs.append(rnn.pad_packed_sequence(packed, batch_first=batch_first))
    for a, b in zip(*outs):
        _same(a, b)


def test_packing_keeps_trailing_dims_and_integer_data():
    x = np.arange(4 * 3 * 2 * 2).reshape(4, 3, 2, 2)
    outs = [rnn.pack_padded_sequence(lib.tensor(x), [4, 2, 1]) for lib, rnn in BOTH]
    _same_packed(*outs)
    padded = [rnn.pad_packed_sequence(p, padding_value=7) for (_, rnn), p in zip(BOTH, outs)]
    for a, b in zip(*padded):
        _same(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence_and_unpack_sequence(enforce_sorted, dtype):
    lengths = [4, 3, 3, 1] if enforce_sorted else [2, 4, 1, 3]
    arrays = [_rand((n, 2), dtype, n) for n in lengths]
    results, leaves = [], []
    for lib, rnn in BOTH:
        seqs = [lib.tensor(a).requires_grad_(True) for a in arrays]
        packed = rnn.pack_sequence(seqs, enforce_sorted=enforce_sorted)
        results.append((packed, rnn.unpack_sequence(packed)))
        leaves.append(seqs)
    (tp, tseqs), (ep, eseqs) = results
    _same_packed(tp, ep)
    assert len(tseqs) == len(eseqs)
    for a, b in zip(tseqs, eseqs):
        _same(a, b, "unpacked")
    _grads_agree(leaves[0], leaves[1], tseqs, eseqs)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
@pytest.mark.parametrize("padding_value", [0.0, -1.5])
def test_pad_sequence_matches_torch(batch_first, padding_side, padding_value):
    arrays = [_rand((n, 3, 2), "float64", n) for n in (2, 5, 1, 5)]
    results, leaves = [], []
    for lib, rnn in BOTH:
        seqs = [lib.tensor(a).requires_grad_(True) for a in arrays]
        results.append(rnn.pad_sequence(seqs, batch_first=batch_first,
                                        padding_value=padding_value,
                                        padding_side=padding_side))
        leaves.append(seqs)
    _same(*results)
    _grads_agree(leaves[0], leaves[1], [results[0]], [results[1]])


def test_pad_sequence_takes_the_first_dtype_iterables_and_a_tensor():
    for make in (lambda lib: [lib.ones(2, dtype=lib.float64), lib.arange(3)],
                 lambda lib: (lib.full((n,), float(n)) for n in (1, 3)),
                 lambda lib: lib.arange(6.0).reshape(2, 3),
                 lambda lib: [lib.ones(2, 4), lib.zeros(3, 1)]):
        _same(*[rnn.pad_sequence(make(lib)) for lib, rnn in BOTH])


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence_matches_torch(batch_first):
    x = _rand((3, 5, 2) if batch_first else (5, 3, 2))
    outs = []
    inputs = []
    for lib, rnn in BOTH:
        padded = lib.tensor(x)
        outs.append(rnn.unpad_sequence(padded, lib.tensor([5, 2, 3]), batch_first=batch_first))
        inputs.append(padded)
    for a, b in zip(*outs):
        _same(a, b)
    # a time-major batch is transposed in place, as torch's
    assert tuple(inputs[1].shape) == tuple(inputs[0].shape)


def test_invert_permutation():
    for perm in ([2, 0, 1], [0], [3, 1, 0, 2]):
        _same(*[rnn.invert_permutation(lib.tensor(perm)) for lib, rnn in BOTH])
    assert ernn.invert_permutation(None) is None


# ----------------------------------------------------------------------------- PackedSequence

def test_packed_sequence_fields_and_construction():
    for lib, rnn in BOTH:
        data, sizes = lib.tensor([1.0, 2.0, 3.0]), lib.tensor([2, 1])
        direct = rnn.PackedSequence(data, sizes)
        from_pair = rnn.PackedSequence((data, sizes))
        assert direct._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
        assert direct.sorted_indices is None and direct.unsorted_indices is None
        assert from_pair.data is data and from_pair.batch_sizes is sizes
        order = rnn.PackedSequence(data, sizes, lib.tensor([1, 0]))
        assert order.unsorted_indices.tolist() == [1, 0]
        data_, sizes_, sorted_, unsorted_ = order
        assert data_ is data and sizes_ is sizes and sorted_ is order.sorted_indices
    assert repr(ernn.PackedSequence(E.tensor([1.0]), E.tensor([1]))) == repr(
        trnn.PackedSequence(torch.tensor([1.0]), torch.tensor([1])))
    assert enn.utils.rnn.PackedSequence is ernn.PackedSequence


def test_packed_sequence_conversions():
    for lib, rnn in BOTH:
        packed = rnn.pack_sequence([lib.ones(3, 2), lib.ones(2, 2)], enforce_sorted=False)
        assert packed.to(lib.float32) is packed
        assert packed.float() is packed and packed.cpu() is packed
        for method, dtype in (("double", lib.float64), ("half", lib.float16),
                              ("long", lib.int64), ("int", lib.int32), ("short", lib.int16),
                              ("char", lib.int8), ("byte", lib.uint8)):
            converted = getattr(packed, method)()
            assert type(converted) is rnn.PackedSequence and converted.data.dtype == dtype
            assert converted.batch_sizes is packed.batch_sizes
            assert converted.sorted_indices.tolist() == packed.sorted_indices.tolist()
        moved = packed.to(lib.float64)
        assert moved.data.dtype == lib.float64
        assert not packed.is_cuda and not packed.is_pinned()


# ----------------------------------------------------------------------------- errors

def _same_error(program):
    with pytest.raises(Exception) as expected:
        program(torch, trnn)
    with pytest.raises(type(expected.value), match=re.escape(str(expected.value))) as got:
        program(E, ernn)
    assert type(got.value) is type(expected.value)


@pytest.mark.parametrize("program", [
    lambda lib, rnn: rnn.pack_padded_sequence(lib.zeros(4, 3, 2), [4, 2, 3]),
    lambda lib, rnn: rnn.pack_padded_sequence(lib.zeros(4, 3, 2), [4, 2]),
    lambda lib, rnn: rnn.pack_padded_sequence(lib.zeros(4, 3, 2), [4, 2, 0]),
    lambda lib, rnn: rnn.pack_padded_sequence(lib.zeros(4, 3, 2), [4, 2, -1]),
    lambda lib, rnn: rnn.pack_padded_sequence(lib.zeros(0, 3, 2), [0, 0, 0]),
    lambda lib, rnn: rnn.pack_padded_sequence(lib.zeros(4, 3, 2), lib.tensor([[4, 2, 1]])),
    lambda lib, rnn: rnn.pack_padded_sequence(lib.zeros(3, 4, 2), [4, 2, 3],
                                              batch_first=True),
    lambda lib, rnn: rnn.pack_sequence([lib.ones(2), lib.ones(3)]),
    lambda lib, rnn: rnn.pad_packed_sequence(
        rnn.pack_padded_sequence(lib.zeros(4, 3, 2), [4, 2, 1]), total_length=3),
    lambda lib, rnn: rnn.pad_sequence([]),
    lambda lib, rnn: rnn.pad_sequence(5),
    lambda lib, rnn: rnn.pad_sequence([lib.ones(2, 3), lib.ones(3, 2)]),
    lambda lib, rnn: rnn.pad_sequence([lib.ones(2, 3)], padding_side="middle"),
    lambda lib, rnn: rnn.PackedSequence(lib.ones(3)),
    lambda lib, rnn: rnn.unpad_sequence(lib.zeros(3, 2, 1), lib.tensor([3, 2]),
                                        batch_first=True),
])
def test_errors_match_torch(program):
    _same_error(program)


def test_zero_dimensional_sequences_are_refused():
    with pytest.raises(RuntimeError):
        trnn.pad_sequence([torch.ones(()), torch.ones(3)])
    with pytest.raises(RuntimeError, match="at least one dimension"):
        ernn.pad_sequence([E.ones(()), E.ones(3)])


def test_lengths_past_the_padded_steps_are_refused():
    """torch reads past its input here; Ember refuses."""
    with pytest.raises(RuntimeError, match=r"length \(5\) exceeds the input's 4 steps"):
        ernn.pack_padded_sequence(E.zeros(4, 3, 2), [5, 2, 1])
