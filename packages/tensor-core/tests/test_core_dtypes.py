"""dtypes and PyTorch's type promotion, compared with torch."""

import itertools

import numpy as np
import pytest
import torch
from torch_oracle import dtype_name

import ember.core as ember

ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
       "float64", "complex64", "complex128"]


@pytest.mark.parametrize("a,b", list(itertools.product(ALL, ALL)))
def test_promote_types(a, b):
    got = ember.promote_types(getattr(ember, a), getattr(ember, b))
    assert dtype_name(got) == dtype_name(torch.promote_types(getattr(torch, a), getattr(torch, b)))


@pytest.mark.parametrize("a,b", list(itertools.product(ALL, ALL)))
def test_can_cast(a, b):
    assert ember.can_cast(getattr(ember, a), getattr(ember, b)) == torch.can_cast(
        getattr(torch, a), getattr(torch, b))


SCALARS = [True, 3, 2.5, 1 + 2j]


def _operands(spec):
    """spec: ('t', dtype) dimensioned tensor, ('z', dtype) 0-d tensor, or a Python scalar."""
    if isinstance(spec, tuple):
        kind, dt = spec
        shape = (2,) if kind == "t" else ()
        return (ember.zeros(shape, dtype=getattr(ember, dt)),
                torch.zeros(shape, dtype=getattr(torch, dt)))
    return spec, spec


CASES = ([(("t", a), ("z", b)) for a, b in itertools.product(ALL, ALL)]
         + [(("t", a), s) for a in ALL for s in SCALARS]
         + [(("z", a), s) for a in ALL for s in SCALARS])


@pytest.mark.parametrize("x,y", CASES)
def test_result_type(x, y):
    ex, tx = _operands(x)
    ey, ty = _operands(y)
    if torch.result_type(tx, ty) == torch.complex32:
        # NumPy has no complex32 (ComplexHalf), so Ember promotes float16 + complex to complex64
        assert ember.result_type(ex, ey) is ember.complex64
        return
    assert dtype_name(ember.result_type(ex, ey)) == dtype_name(torch.result_type(tx, ty))


def test_default_dtype_roundtrip():
    assert ember.get_default_dtype() is ember.float32
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.tensor([1.5]).dtype is ember.float64
        assert (ember.tensor([1, 2]) + 2.5).dtype is ember.float64
    finally:
        ember.set_default_dtype(ember.float32)
    assert (ember.tensor([1, 2]) + 2.5).dtype is ember.float32
    with pytest.raises(TypeError):
        ember.set_default_dtype(ember.int64)


def test_aliases_and_properties():
    assert ember.float is ember.float32 and ember.double is ember.float64
    assert ember.long is ember.int64 and ember.int is ember.int32 and ember.half is ember.float16
    assert ember.cfloat is ember.complex64
    for name in ALL:
        e, t = getattr(ember, name), getattr(torch, name)
        assert repr(e) == repr(t)
        assert e.is_floating_point == t.is_floating_point
        assert e.is_complex == t.is_complex
        assert e.is_signed == t.is_signed
        assert e.itemsize == t.itemsize


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_finfo(name):
    e, t = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
    for field in ("eps", "max", "min", "tiny", "resolution", "bits"):
        assert getattr(e, field) == getattr(t, field), field


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo(name):
    e, t = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
    assert (e.min, e.max, e.bits) == (t.min, t.max, t.bits)


def test_numpy_dtype_mapping_rejects_unsupported():
    with pytest.raises(TypeError, match="float128|longdouble|supported"):
        ember.from_numpy(np.zeros(2, dtype=np.longdouble) if np.dtype(np.longdouble).itemsize > 8
                         else np.zeros(2, dtype="U1"))
