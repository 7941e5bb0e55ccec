"""default_collate and default_convert against torch's on the same samples: the structure
(container types, keys, lengths), and every tensor's shape, dtype and values; the errors
with torch's types and messages; extending the collate map."""

from __future__ import annotations

import collections
import dataclasses
import types

import numpy as np
import pytest
import torch
import torch.utils.data as tdata
from torch.utils.data._utils.collate import collate as torch_collate

import ember.core as E
import ember.utils.data as D
from ember.utils.data.collate import collate, collate_tensor_fn, default_collate_fn_map

Point = collections.namedtuple("Point", ["x", "y"])


def assert_same(ours, theirs):
    """``ours`` (built by Ember) mirrors ``theirs`` (built by torch): tensors where torch
    has tensors, with the same shape, dtype and values, inside the same containers."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, E.Tensor), type(ours)
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert str(ours.dtype) == str(theirs.dtype)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    elif isinstance(theirs, np.ndarray):
        assert type(ours) is np.ndarray
        np.testing.assert_array_equal(ours, theirs)
    elif isinstance(theirs, collections.abc.Mapping):
        assert type(ours).__name__ == type(theirs).__name__
        assert list(ours) == list(theirs)
        for key in theirs:
            assert_same(ours[key], theirs[key])
    elif isinstance(theirs, (list, tuple)):
        assert type(ours).__name__ == type(theirs).__name__
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b)
    else:
        assert type(ours) is type(theirs) and ours == theirs


def on_both(make):
    """``make(tensor)`` built with Ember's tensor constructor and with torch's."""
    return make(E.tensor), make(torch.tensor)


BATCHES = {
    "tensors": lambda t: [t([1.0, 2.0, 3.0]) * i for i in range(4)],
    "0-d tensors": lambda t: [t(i) for i in range(3)],
    "int tensors 2-d": lambda t: [t([[i, i + 1]]) for i in range(3)],
    "bool tensors": lambda t: [t([True, False]), t([False, False])],
    "ints": lambda t: [0, 1, 2, 3],
    "floats": lambda t: [0.5, 1.5],
    "bools": lambda t: [True, False, True],
    "int then float": lambda t: [1, 2.5],
    "bool then int": lambda t: [True, 1],
    "strings": lambda t: ["a", "bc"],
    "bytes": lambda t: [b"a", b"b"],
    "numpy float32": lambda t: [np.arange(6, dtype=np.float32).reshape(2, 3) + i for i in range(3)],
    "numpy int16": lambda t: [np.array([i, -i], dtype=np.int16) for i in range(3)],
    "numpy uint8": lambda t: [np.array([i], dtype=np.uint8) for i in range(3)],
    "numpy bool": lambda t: [np.array([True, False]), np.array([False, True])],
    "numpy 0-d": lambda t: [np.array(3.0), np.array(4.0)],
    "numpy scalars f32": lambda t: [np.float32(1), np.float32(2)],
    "numpy scalars i64": lambda t: [np.int64(1), np.int64(2)],
    "numpy scalars bool": lambda t: [np.bool_(True), np.bool_(False)],
    "dicts": lambda t: [{"a": i, "b": t([i, i]), "c": "s"} for i in range(3)],
    "ordered dicts": lambda t: [collections.OrderedDict(z=i, a=float(i)) for i in range(2)],
    "mapping proxies": lambda t: [types.MappingProxyType({"k": i}) for i in range(2)],
    "named tuples": lambda t: [Point(i, t([i * 1.0])) for i in range(3)],
    "tuples": lambda t: [(i, t([i]), "x") for i in range(3)],
    "lists": lambda t: [[i, i + 1] for i in range(3)],
    "ranges": lambda t: [range(2), range(2)],
    "nested": lambda t: [{"pair": (t([i]), [i, {"deep": float(i)}])} for i in range(2)],
    "samples of TensorDataset": lambda t: [(t([i, i]), t(i % 2)) for i in range(4)],
}


@pytest.mark.parametrize("name", BATCHES)
def test_default_collate_is_torchs(name):
    ours, theirs = on_both(BATCHES[name])
    assert_same(D.default_collate(ours), tdata.default_collate(theirs))


def test_collate_stacks_along_a_new_first_dimension():
    batch = [E.randn(2, 3) for _ in range(5)]
    out = D.default_collate(batch)
    assert tuple(out.shape) == (5, 2, 3)
    np.testing.assert_array_equal(out.numpy(), np.stack([b.numpy() for b in batch]))


def test_collated_numpy_arrays_are_tensors_of_their_values():
    arrays = [np.random.default_rng(i).standard_normal((2, 2)) for i in range(3)]
    out = D.default_collate(arrays)
    assert out.dtype == E.float64
    np.testing.assert_array_equal(out.numpy(), np.stack(arrays))


def test_collate_keeps_a_mutable_mappings_type_and_extra_state():
    class Tagged(dict):
        tag = None

    first = Tagged(a=1)
    first.tag = "kept"
    out = D.default_collate([first, Tagged(a=2)])
    assert type(out) is Tagged and out.tag == "kept"
    assert out["a"].tolist() == [1, 2]


def test_collate_rebuilds_a_defaultdict():
    batch = [collections.defaultdict(list, a=i) for i in range(2)]
    ours = D.default_collate(batch)
    theirs = tdata.default_collate([collections.defaultdict(list, a=i) for i in range(2)])
    assert type(ours) is collections.defaultdict and ours.default_factory is list
    assert_same(dict(ours), dict(theirs))


@dataclasses.dataclass
class Sample:
    x: int


UNSUPPORTED = {
    "None": lambda t: [None, None],
    "object": lambda t: [object()],
    "set": lambda t: [{1, 2}, {3, 4}],
    "dataclass": lambda t: [Sample(1), Sample(2)],
    "numpy strings": lambda t: [np.array(["a"]), np.array(["b"])],
    "numpy objects": lambda t: [np.array([object()])],
}


@pytest.mark.parametrize("name", UNSUPPORTED)
def test_unsupported_types_raise_torchs_type_error(name):
    ours, theirs = on_both(UNSUPPORTED[name])
    with pytest.raises(TypeError) as expected:
        tdata.default_collate(theirs)
    with pytest.raises(TypeError) as got:
        D.default_collate(ours)
    assert got.type is expected.type
    assert str(got.value) == str(expected.value)


def test_tensors_of_different_sizes_raise_runtime_error():
    with pytest.raises(RuntimeError) as expected:
        tdata.default_collate([torch.zeros(2), torch.zeros(3)])
    with pytest.raises(RuntimeError) as got:
        D.default_collate([E.zeros(2), E.zeros(3)])
    assert str(got.value) == str(expected.value)


def test_sequences_of_different_lengths_raise_runtime_error():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        tdata.default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        D.default_collate([[1, 2], [3]])


CONVERTED = {
    "array": lambda t: np.array([1, 2], dtype=np.int32),
    "0-d array": lambda t: np.array(2.5),
    "numpy scalar": lambda t: np.float32(2),
    "numpy string scalar": lambda t: np.str_("a"),
    "string array": lambda t: np.array(["a", "b"]),
    "int": lambda t: 3,
    "string": lambda t: "s",
    "tensor": lambda t: t([1.0, 2.0]),
    "tuple": lambda t: (np.array([1]), 2),
    "named tuple": lambda t: Point(np.array(0), np.array([1.0])),
    "list": lambda t: [np.array([0, 1]), np.array([2, 3])],
    "dict": lambda t: {"a": np.zeros(2, dtype=np.float32), "b": [np.int64(1), "x"]},
    "range": lambda t: range(3),
}


@pytest.mark.parametrize("name", CONVERTED)
def test_default_convert_is_torchs(name):
    ours, theirs = on_both(CONVERTED[name])
    assert_same(D.default_convert(ours), tdata.default_convert(theirs))


def test_default_convert_shares_the_arrays_memory():
    array = np.zeros(3)
    out = D.default_convert(array)
    array[0] = 7.0
    assert out.tolist() == [7.0, 0.0, 0.0]


def test_default_convert_returns_a_tensor_itself():
    t = E.zeros(2)
    assert D.default_convert(t) is t


def test_collate_with_a_custom_map():
    def pad_and_stack(batch, *, collate_fn_map):
        width = max(int(b.shape[0]) for b in batch)
        return E.stack([E.cat([b, E.zeros(width - int(b.shape[0]))]) for b in batch])

    out = collate([{"x": E.ones(1)}, {"x": E.ones(3)}], collate_fn_map={E.Tensor: pad_and_stack})
    assert out["x"].tolist() == [[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]]


def test_collate_map_matches_subclasses_in_order():
    class Ticket(int):
        pass

    seen = []

    def tickets(batch, *, collate_fn_map):
        seen.append(batch)
        return "tickets"

    fn_map = {Ticket: tickets, **default_collate_fn_map}
    assert collate([Ticket(1), Ticket(2)], collate_fn_map=fn_map) == "tickets"
    assert collate([1, 2], collate_fn_map=fn_map).tolist() == [1, 2]
    assert seen == [[Ticket(1), Ticket(2)]]
    # torch's engine chooses the same way
    torch_map = {Ticket: tickets}
    assert torch_collate([Ticket(1)], collate_fn_map=torch_map) == "tickets"


def test_collate_without_a_map_recurses_into_containers_only():
    with pytest.raises(TypeError, match="found <class 'int'>"):
        collate([(1,), (2,)])


def test_collate_tensor_fn_stacks():
    assert collate_tensor_fn([E.ones(2), E.zeros(2)]).tolist() == [[1.0, 1.0], [0.0, 0.0]]
