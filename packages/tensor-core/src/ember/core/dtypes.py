"""dtypes with PyTorch's names, and PyTorch's type promotion rules.

NumPy's promotion differs from PyTorch's (``int64 + 2.5`` is float64 there, float32
here; a 0-d float64 tensor does not upcast a float32 tensor here), so every op asks
this module for its result dtype and casts its inputs itself.
"""

from __future__ import annotations

import builtins
from functools import cache, lru_cache
from typing import Any

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
    "float32", "float64", "complex64", "complex128", "half", "float", "double", "short",
    "int", "long", "cfloat", "cdouble", "promote_types", "result_type", "can_cast",
    "get_default_dtype", "set_default_dtype", "finfo", "iinfo",
]

# Category ranks used by PyTorch's promotion: bool < integer < floating < complex.
_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type, e.g. ``ember.float32``. Compared by identity."""

    __slots__ = ("name", "np", "itemsize", "category", "is_signed", "_rank")

    def __init__(self, name: str, np_dtype: Any, category: builtins.int, rank: builtins.int):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.category = category
        self.is_signed = name not in ("bool", "uint8")
        self._rank = rank

    @property
    def is_floating_point(self) -> builtins.bool:
        return self.category == _FLOAT

    @property
    def is_complex(self) -> builtins.bool:
        return self.category == _COMPLEX

    def to_real(self) -> dtype:
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def to_complex(self) -> dtype:
        if self.category != _FLOAT:
            return self
        return complex128 if self is float64 else complex64

    def __repr__(self) -> str:
        # Printed as torch prints it: programs and doctests compare against this text.
        return "torch." + self.name

    def __reduce__(self) -> str:
        return self.name


bool = dtype("bool", np.bool_, _BOOL, 0)
uint8 = dtype("uint8", np.uint8, _INT, 1)
int8 = dtype("int8", np.int8, _INT, 1)
int16 = dtype("int16", np.int16, _INT, 2)
int32 = dtype("int32", np.int32, _INT, 3)
int64 = dtype("int64", np.int64, _INT, 4)
float16 = dtype("float16", np.float16, _FLOAT, 5)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT, 5)
float32 = dtype("float32", np.float32, _FLOAT, 6)
float64 = dtype("float64", np.float64, _FLOAT, 7)
complex64 = dtype("complex64", np.complex64, _COMPLEX, 8)
complex128 = dtype("complex128", np.complex128, _COMPLEX, 9)

half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

ALL_DTYPES = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
              complex64, complex128)
_FROM_NP = {d.np: d for d in ALL_DTYPES}
# torch's C++ ScalarType names: its error messages and legacy tensor types spell dtypes so
_SCALAR_TYPE_NAMES = {
    bool: "Bool", uint8: "Byte", int8: "Char", int16: "Short", int32: "Int", int64: "Long",
    float16: "Half", bfloat16: "BFloat16", float32: "Float", float64: "Double",
    complex64: "ComplexFloat", complex128: "ComplexDouble"}


# The C++ element types, spelled two ways because torch's messages differ by where they are
# made: c10's checked scalar conversion prints the type as its source writes it ("int64_t"),
# kernels print their ``scalar_t`` as the compiler demangles it ("long int").
_C_TYPE_NAMES = {
    bool: "bool", uint8: "uint8_t", int8: "int8_t", int16: "int16_t", int32: "int",
    int64: "int64_t", float16: "c10::Half", bfloat16: "c10::BFloat16", float32: "float",
    float64: "double", complex64: "c10::complex<float>", complex128: "c10::complex<double>"}
_DEMANGLED_TYPE_NAMES = {
    **_C_TYPE_NAMES, uint8: "unsigned char", int8: "signed char", int16: "short int",
    int64: "long int"}


_LEGACY_CLASSES = frozenset({float32, float64, float16, int64, int32, int16, int8, uint8})


def scalar_type_name(dt: dtype) -> str:
    """torch's C++ name of ``dt`` ("Float" for float32, "Long" for int64, ...), as torch's
    error messages and legacy tensor types (``torch.FloatTensor``) spell it."""
    return _SCALAR_TYPE_NAMES[dt]


def type_properties_name(dt: dtype, device_type: str = "cpu") -> str:
    """How torch's errors print a tensor's type (its ``DeprecatedTypeProperties``): the
    legacy class where one exists (``torch.FloatTensor``, ``torch.cuda.LongTensor``), else
    ``CPUBFloat16Type``, ``CUDABoolType``..."""
    if dt in _LEGACY_CLASSES:
        return ("torch." if device_type == "cpu" else f"torch.{device_type}.") + \
            f"{_SCALAR_TYPE_NAMES[dt]}Tensor"
    return f"{device_type.upper()}{_SCALAR_TYPE_NAMES[dt]}Type"


def c_type_name(dt: dtype) -> str:
    """The C++ type of ``dt`` as torch's scalar conversion errors spell it ("int64_t",
    "c10::Half"): "value cannot be converted to type int64_t without overflow"."""
    return _C_TYPE_NAMES[dt]


def demangled_type_name(dt: dtype) -> str:
    """The C++ type of ``dt`` as torch's kernels name their element type ("long int",
    "unsigned char", "c10::Half"): random_'s bounds, lerp's and the BLAS ops' dtype errors."""
    return _DEMANGLED_TYPE_NAMES[dt]


def from_numpy_dtype(np_dtype: np.dtype) -> dtype:
    """The ember dtype of a numpy dtype; TypeError for ones Ember does not support."""
    try:
        return _FROM_NP[np_dtype]
    except KeyError:
        d = np.dtype(np_dtype)
        if d in _FROM_NP:
            return _FROM_NP[d]
        if d.kind == "u":  # uint16/32/64: torch's nearest is int64
            return int64
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{d.name}. The only supported types are: "
            "float64, float32, float16, bfloat16, complex64, complex128, int64, int32, int16, "
            "int8, uint8, and bool.") from None


def to_dtype(obj: object) -> dtype:
    """Accept an ember dtype, a numpy dtype/type, or a Python type (float, int, bool)."""
    if obj.__class__ is dtype:
        return obj  # type: ignore[return-value]
    # Python types name torch's double-precision types, whatever the default dtype.
    if obj is builtins.float:
        return float64
    if obj is builtins.int:
        return int64
    if obj is builtins.bool:
        return bool
    if obj is builtins.complex:
        return complex128
    if isinstance(obj, str):
        d = globals().get(obj.removeprefix("torch.").removeprefix("ember."))
        if d.__class__ is dtype:
            return d  # type: ignore[return-value]
        raise TypeError(f"invalid dtype string {obj!r}")
    try:
        return from_numpy_dtype(np.dtype(obj))  # type: ignore[call-overload]
    except TypeError:
        raise TypeError(f"expected a dtype, got {obj!r} ({type(obj).__name__})") from None


# ---------------------------------------------------------------------------- promotion

# The lattice PyTorch uses. bfloat16 and float16 promote to float32 together; uint8 and
# int8 to int16.
_order = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
          complex64, complex128)


@cache
def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` cast to safely (torch.promote_types)."""
    if a is b:
        return a
    if a.category == _COMPLEX or b.category == _COMPLEX:
        real = promote_types(a.to_real(), b.to_real())
        return complex128 if real is float64 else complex64
    if {a, b} == {float16, bfloat16}:
        return float32
    if {a, b} == {uint8, int8}:
        return int16
    if a.category != b.category:
        return a if a.category > b.category else b
    return a if a._rank >= b._rank else b


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    # Mirrors c10's combine_categories: the lower-priority group only counts when it is of a
    # higher category (a 0-d float64 tensor does not upcast a float32 tensor).
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.category == _COMPLEX:
        return higher
    if lower.category == _COMPLEX:
        return higher.to_complex() if higher.category == _FLOAT else lower
    if higher.category == _FLOAT:
        return higher
    if higher is bool or lower.category == _FLOAT:
        return promote_types(higher, lower)
    return higher


@lru_cache(maxsize=4096)
def _result_from_groups(dim: dtype | None, zero: dtype | None, wrapped: dtype | None) -> dtype:
    out = _combine_categories(dim, _combine_categories(zero, wrapped))
    return out if out is not None else _default[0]


def scalar_dtype(value: object) -> dtype:
    """The dtype a Python scalar takes as an operand (a 'wrapped number' in PyTorch)."""
    t = type(value)
    if t is builtins.float:
        return _default[0]
    if t is builtins.int:
        return int64
    if t is builtins.bool:
        return bool
    if t is builtins.complex:
        return _default[0].to_complex()
    if isinstance(value, np.generic):
        return from_numpy_dtype(value.dtype)
    raise TypeError(f"expected a Tensor or a Python number, got {t.__name__}")


_scalar_results: dict[tuple[dtype, type], dtype] = {}


def scalar_result(dt: dtype, value: object) -> dtype:
    """Result dtype of ``tensor_of_dt op python_scalar`` (cached: it is on every op's hot path)."""
    key = (dt, type(value))
    r = _scalar_results.get(key)
    if r is None:
        r = _scalar_results[key] = _result_from_groups(dt, None, scalar_dtype(value))
    return r


def result_type(*operands: object) -> dtype:
    """torch.result_type: promotion across tensors and Python scalars.

    Dimensioned tensors take priority over 0-d tensors, which take priority over Python
    scalars; a lower group only counts when its category (bool < int < float < complex)
    is higher.
    """
    dim = zero = wrapped = None
    for op in operands:
        dt = getattr(op, "dtype", None)
        if dt.__class__ is dtype and hasattr(op, "_data"):
            if op.ndim:  # type: ignore[attr-defined]
                dim = dt if dim is None else promote_types(dim, dt)
            else:
                zero = dt if zero is None else promote_types(zero, dt)
        else:
            sd = scalar_dtype(op)
            wrapped = sd if wrapped is None else promote_types(wrapped, sd)
    return _result_from_groups(dim, zero, wrapped)


def can_cast(from_: dtype, to: dtype) -> builtins.bool:
    """torch.can_cast: False when the cast would lower the category (float -> int, ...)."""
    return from_.category <= to.category


# ---------------------------------------------------------------------------- defaults

_default = [float32]


def get_default_dtype() -> dtype:
    """The dtype of float tensors made from Python floats (float32 unless changed)."""
    return _default[0]


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (float32 or float64, as in torch)."""
    d = to_dtype(d)
    if d.category != _FLOAT:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default[0] = d
    _result_from_groups.cache_clear()
    _scalar_results.clear()


def default_complex() -> dtype:
    return _default[0].to_complex()


class finfo:
    """torch.finfo: machine limits of a floating dtype."""

    def __init__(self, type: dtype | None = None):
        d = to_dtype(type) if type is not None else _default[0]
        if d.category < _FLOAT:
            raise TypeError(f"finfo expects a floating point dtype, got {d}")
        info = ml_dtypes.finfo(d.np) if d is bfloat16 else np.finfo(d.np)
        self.dtype = d.name
        self.bits = info.bits
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.tiny)
        self.resolution = 10.0 ** -builtins.int(info.precision)

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, "
                f"eps={self.eps}, smallest_normal={self.tiny}, tiny={self.tiny}, "
                f"dtype={self.dtype})")


class iinfo:
    """torch.iinfo: limits of an integer dtype."""

    def __init__(self, type: dtype):
        d = to_dtype(type)
        if d.category != _INT and d is not bool:
            raise TypeError(f"iinfo expects an integer dtype, got {d}")
        info = np.iinfo(d.np) if d is not bool else np.iinfo(np.uint8)
        self.dtype = d.name
        self.bits = info.bits
        self.max = builtins.int(info.max) if d is not bool else 1
        self.min = builtins.int(info.min)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


# (lowest, highest) finite value of each real dtype, for torch's overflow checks
LIMITS = {
    d: ((0, 1) if d is bool else
        (iinfo(d).min, iinfo(d).max) if d.category == _INT else
        (-finfo(d).max, finfo(d).max))
    for d in ALL_DTYPES if d.category < _COMPLEX}
