"""The Tensor object itself: metadata, conversions, protocols, versions, devices."""

import copy
import math
import pickle
import threading

import numpy as np
import pytest
import torch
from torch_oracle import check, pair

import ember.core as ember


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 0, 4)])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "bfloat16", "complex64"])
def test_metadata_matches_torch(shape, dtype):
    e, t = pair(shape, dtype)
    assert e.shape == t.shape and e.size() == t.size()
    assert e.dim() == t.dim() and e.ndim == t.ndim and e.ndimension() == t.ndimension()
    assert e.numel() == t.numel() and e.nelement() == t.nelement()
    assert e.stride() == t.stride() and e.is_contiguous() == t.is_contiguous()
    assert e.element_size() == t.element_size() and e.nbytes == t.nbytes
    assert e.is_floating_point() == t.is_floating_point()
    assert e.is_complex() == t.is_complex() and e.is_signed() == t.is_signed()
    assert str(e.device) == str(t.device) and e.get_device() == t.get_device()
    assert e.is_cuda is False and e.is_leaf and e.grad is None and e.grad_fn is None
    for d in range(-len(shape), len(shape)):
        assert e.size(d) == t.size(d) and e.stride(d) == t.stride(d)


def test_size_is_a_tuple_like_torch_size():
    e = ember.zeros(2, 3, 4)
    assert e.shape == (2, 3, 4) and isinstance(e.shape, tuple)
    assert repr(e.shape) == repr(torch.zeros(2, 3, 4).shape)
    assert e.shape.numel() == 24 and e.shape[1:] == (3, 4)
    assert repr(e.shape[1:]) == "torch.Size([3, 4])"
    with pytest.raises(IndexError, match="Dimension out of range"):
        e.size(3)


def test_item_tolist_and_python_conversions():
    e, t = pair((2, 3), "float32")
    assert e.tolist() == t.tolist()
    for dtype in ["int64", "bool", "float64", "bfloat16", "float16"]:
        e1, t1 = pair((), dtype)
        assert e1.item() == t1.item() and type(e1.item()) is type(t1.item())
        assert float(e1) == float(t1) and int(e1) == int(t1) and bool(e1) == bool(t1)
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        ember.zeros(2).item()
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(ember.zeros(2))
    assert [1, 2, 3][ember.tensor(1)] == 2
    with pytest.raises(TypeError):
        [1, 2][ember.tensor(1.0)]


def test_len_iter_hash():
    e = ember.tensor([[1, 2], [3, 4]])
    assert len(e) == 2
    rows = list(e)
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4]]
    with pytest.raises(TypeError):
        len(ember.tensor(1.0))
    with pytest.raises(TypeError):
        iter(ember.tensor(1.0))
    a, b = ember.zeros(2), ember.zeros(2)
    assert len({a, b, a}) == 2  # hashed by identity, even though == is elementwise


def test_numpy_interop_shares_memory():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    e = ember.from_numpy(arr)
    arr[0, 0] = 100
    assert e[0, 0].item() == 100
    e.numpy()[1, 2] = -1
    assert arr[1, 2] == -1
    assert np.shares_memory(np.asarray(e), arr)
    assert np.asarray(e, dtype=np.float64).dtype == np.float64


def test_numpy_refuses_tensors_requiring_grad():
    e = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        e.numpy()
    assert e.detach().numpy().tolist() == [1.0, 1.0]


def test_dlpack_roundtrip_with_torch_and_numpy():
    e, t = pair((3, 4), "float32")
    back = ember.from_dlpack(t)
    check(back, t)
    t_from_e = torch.from_dlpack(e)
    check(e, t_from_e)
    assert np.from_dlpack(e).ctypes.data == e.data_ptr()


def test_version_counter_is_shared_by_views():
    base = ember.zeros(3, 4)
    view = base[1]
    assert base._version == view._version == 0
    view.add_(1)
    assert base._version == view._version == 1
    assert base[1].tolist() == [1.0] * 4
    base.mul_(2)
    assert view._version == 2 and view.tolist() == [2.0] * 4
    assert ember.zeros(2)._version == 0


def test_detach_shares_storage_and_version():
    a = ember.ones(3, requires_grad=True)
    d = a.detach()
    assert not d.requires_grad and d.data_ptr() == a.data_ptr()
    d.zero_()
    assert a.tolist() == [0.0, 0.0, 0.0] and a._version == 1


def test_data_attribute_read_and_write():
    a = ember.ones(3, requires_grad=True)
    assert not a.data.requires_grad and a.data.data_ptr() == a.data_ptr()
    a.data = ember.zeros(2, dtype=ember.float64)
    assert a.shape == (2,) and a.dtype is ember.float64 and a.requires_grad


def test_requires_grad_rules():
    with pytest.raises(RuntimeError, match="floating point"):
        ember.zeros(2, dtype=ember.int64).requires_grad_()
    with pytest.raises(RuntimeError, match="floating point"):
        ember.tensor([1, 2], requires_grad=True)
    a = ember.zeros(2)
    a.requires_grad = True
    assert a.requires_grad and a.is_leaf


def test_deepcopy_pickle_and_attributes():
    a = ember.arange(6.0).reshape(2, 3)
    a.tag = "kept"
    b = copy.deepcopy(a)
    assert b.tolist() == a.tolist() and b.data_ptr() != a.data_ptr() and b.tag == "kept"
    c = pickle.loads(pickle.dumps(a))
    assert c.tolist() == a.tolist() and c.dtype is a.dtype


def test_numpy_scalars_defer_to_tensor_operators():
    e = ember.tensor([1.0, 2.0])
    out = np.float32(2.0) * e
    assert isinstance(out, ember.Tensor) and out.tolist() == [2.0, 4.0]


def test_cuda_unavailable_without_error():
    assert ember.cuda_available() is False or ember.device_count() >= 1
    if not ember.cuda_available():
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            ember.zeros(2).to("cuda")


def test_device_objects():
    assert ember.device("cpu") == ember.device("cpu") == "cpu"
    assert repr(ember.device("cuda:1")) == repr(torch.device("cuda:1"))
    assert str(ember.device("cuda", 0)) == str(torch.device("cuda", 0))
    assert ember.device("cpu").type == "cpu" and ember.device("cuda:3").index == 3
    assert hash(ember.device("cpu")) == hash(ember.device("cpu"))
    with pytest.raises(RuntimeError):
        ember.device("tpu")
    assert ember.zeros(2).device == ember.device("cpu")


def test_grad_mode_is_thread_local():
    seen = []
    ember.grad_mode.enabled = False
    try:
        t = threading.Thread(target=lambda: seen.append(ember.grad_mode.enabled))
        t.start()
        t.join()
    finally:
        ember.grad_mode.enabled = True
    assert seen == [True]


@pytest.mark.parametrize("fmt", ["channels_last", "channels_last_3d", "contiguous_format",
                                 "preserve_format"])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 1, 4, 1), (2, 3, 2, 4, 5), (3, 4)])
def test_memory_formats_lay_tensors_out_as_torch(fmt, shape):
    """is_contiguous, contiguous, clone and to with a memory format: strides as torch's,
    the same tensor back where it is already so laid out, torch's error for a rank the
    format cannot take."""
    def programs(m):
        f = getattr(m, fmt)
        x = m.arange(math.prod(shape), dtype=m.float32).reshape(shape)
        calls = [lambda: x.is_contiguous(memory_format=f),
                 lambda: x.contiguous(memory_format=f),
                 lambda: x.clone(memory_format=f),
                 lambda: x.to(m.float64, memory_format=f),
                 lambda: x.to(memory_format=f).contiguous(memory_format=f)]
        if len(shape) > 2:
            calls.append(lambda: x.transpose(1, 2).contiguous(memory_format=f))
        return calls

    for ours, theirs in zip(programs(ember), programs(torch)):
        try:
            expected = theirs()
        except RuntimeError as error:
            with pytest.raises(RuntimeError, match=str(error)):
                ours()
            continue
        got = ours()
        if isinstance(expected, bool):
            assert got == expected
        else:
            check(got, expected)
            assert got.stride() == expected.stride()
