"""gelu and silu, torch.nn.functional's activations, as fused primitives: one pass over
the input forward, and one over the gradient and the input backward (``gelu_backward``,
``silu_backward``, torch's kernels of the same names, which autograd's formulas call);
native loops for sigmoid (``ember.sigmoid``, registered in ``unary``) and the fused
backwards of sigmoid and tanh from their outputs (``sigmoid_backward``, ``tanh_backward``).

Primitives ``gelu`` (operand the input, param ``approximate``: 'none' or 'tanh'), ``silu``
and its in-place ``silu_``; ``gelu_backward`` and ``silu_backward`` (operands the gradient
and the input; ``approximate`` for gelu's), which are not differentiable: autograd's
formulas call them for a first-order backward and compose Ember ops where a graph of the
gradient is built. Results are laid out as torch's TensorIterator lays them out (a dense
input's strides), with the input's dtype; float16 and bfloat16 compute in float32 and
round once, as torch's CPU kernels do. The formulas are torch's, term by term; their erf,
tanh and exp are accurate to about an ulp (torch's float32 gelu takes an erf off by up to
1.5e-7, and gives NaN at +inf where its float64 kernel, and these, give inf).

torch computes gelu for floating dtypes only; silu for complex ones too. This module's
functions are not installed at ember's top level (torch has no ``torch.gelu``): the nn
package gives them as ``ember.nn.functional.gelu`` and ``silu``.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

from .. import meta, native
from ..device import xp_of
from ..dispatch import REGISTRY, register
from ..function_modes import checks_itself, engaged, handle, overriding, spec_of
from ..tensor import Tensor
from . import special_functions as special
from .copying import check_writable, refuse_recorded_write
from .inplace import in_graph
from .operands import not_implemented, upcast
from .unary import SIGMOID

__all__ = ["gelu", "silu"]

# torch's constants (M_SQRT1_2, M_SQRT2 * M_2_SQRTPI * 0.5, M_2_SQRTPI * M_SQRT1_2 * 0.5)
_ALPHA = math.sqrt(0.5)
_BETA = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5
_KAPPA = 0.044715
_PDF = (2.0 / math.sqrt(math.pi)) * math.sqrt(0.5) * 0.5


# ----------------------------------------------------------------------------- reference

def _gelu(x: Any, *, approximate: str = "none") -> Any:
    (z,) = upcast(x)
    if approximate == "tanh":
        r = 0.5 * z * (1 + np.tanh(_BETA * (z + _KAPPA * (z * z * z))))
    else:
        r = z * 0.5 * (1 + special.erf(z * _ALPHA))
    return r.astype(x.dtype, copy=False)


def _gelu_backward(g: Any, x: Any, *, approximate: str = "none") -> Any:
    dy, z = upcast(g, x)
    if approximate == "tanh":
        square = z * z
        t = np.tanh(_BETA * (z + _KAPPA * (square * z)))
        left = 0.5 * z
        right = 1 + t
        r = dy * (0.5 * right + left * (1 - t * t) * (_BETA * (1 + 3 * _KAPPA * square)))
    else:
        cdf = 0.5 * (1 + special.erf(z * _ALPHA))
        r = dy * (cdf + z * (_PDF * np.exp(z * z * -0.5)))
    return r.astype(x.dtype, copy=False)


def _silu(x: Any) -> Any:
    (z,) = upcast(x)
    return (z / (1 + np.exp(-z))).astype(x.dtype, copy=False)


def _silu_backward(g: Any, x: Any) -> Any:
    dy, z = upcast(g, x)
    s = 1 / (1 + np.exp(-z))
    return (dy * s * (1 + z * (1 - s))).astype(x.dtype, copy=False)


def _silu_inplace(x: Any) -> Any:
    xp_of(x).copyto(x, _silu(x))
    return x


def _sigmoid_backward(g: Any, y: Any) -> Any:
    """torch's formula, from the output: ``g * (1 - y) * y`` (conjugated for complex);
    bfloat16 computes in float32, float16 in itself, rounding each step, as torch's kernel
    does."""
    dy, z = (g, y) if y.dtype == np.float16 else upcast(g, y)
    if z.dtype.kind == "c":
        return (dy * ((1 - z) * z).conj()).astype(y.dtype, copy=False)
    return (dy * (1 - z) * z).astype(y.dtype, copy=False)


def _tanh_backward(g: Any, y: Any) -> Any:
    """torch's formula, from the output: ``g * (1 - y * y)`` (conjugated for complex)."""
    dy, z = upcast(g, y)
    d = 1 - z * z
    return (dy * (d.conj() if d.dtype.kind == "c" else d)).astype(y.dtype, copy=False)


def _same_first(x: Any, *rest: Any, **params: Any) -> Any:
    return x


_unary_rule = meta.elementwise("same")
_binary_rule = meta.elementwise("promote")

GELU = register("gelu", _gelu, _unary_rule, "elementwise", arg_names=("self",))
SILU = register("silu", _silu, _unary_rule, "elementwise", arg_names=("self",))
SILU_ = register("silu_", _silu_inplace, _same_first, "elementwise", mutates=True,
                 functional=SILU, arg_names=("self",))
GELU_BACKWARD = register("gelu_backward", _gelu_backward, _binary_rule, "elementwise", False,
                         arg_names=("grad_output", "self"))
SILU_BACKWARD = register("silu_backward", _silu_backward, _binary_rule, "elementwise", False,
                         arg_names=("grad_output", "self"))
SIGMOID_BACKWARD = register("sigmoid_backward", _sigmoid_backward, _binary_rule, "elementwise",
                            False, arg_names=("grad_output", "output"))
TANH_BACKWARD = register("tanh_backward", _tanh_backward, _binary_rule, "elementwise", False,
                         arg_names=("grad_output", "output"))

# ----------------------------------------------------------------------------- native CPU

# One loop per op and dtype over the elements in memory order (contiguous or dense inputs),
# vectorised through glibc's SIMD erf, tanh and exp (libmvec), threaded only where each
# thread gets GRAIN elements (measured: fewer do not pay for the thread's start). float32's
# exp is one of its own, a quarter faster than glibc's vector expf: e^x as 2^n e^r with r in
# [-ln2/2, ln2/2] and e^r = 1 + r + r^2 p(r), p a least-squares fit of (e^r - 1 - r) / r^2 on
# Chebyshev nodes reweighted toward minimax (Lawson), within 1.03 ulp of e^x; 2^n applied in
# two halves, so that it never overflows itself; x clamped where e^x is 0 or inf anyway (NaN
# passes: its comparisons are false). An erf of the same kind, as accurate, was slower than
# glibc's: erf keeps glibc's (torch's float kernel uses Abramowitz and Stegun's 7.1.26, off
# by up to 1.5e-7, which glibc's is not).
_SOURCE = """
/* no floating-point traps are ever enabled: selects on compares may then be vectorised
   (AVX2 needs that to if-convert them) */
#pragma GCC optimize("no-trapping-math")
#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef VECTOR_MATH
#pragma omp declare simd notinbranch
float erff(float);
#pragma omp declare simd notinbranch
double erf(double);
#pragma omp declare simd notinbranch
double exp(double);
#pragma omp declare simd notinbranch
float tanhf(float);
#pragma omp declare simd notinbranch
double tanh(double);
#endif

typedef union { float f; int32_t i; } bits32;

static inline __attribute__((always_inline)) float exp_f32(float x) {
    float c = x < -104.0f ? -104.0f : x;
    c = c > 88.8f ? 88.8f : c;
    bits32 shifted = { c * 1.44269504f + 12582912.0f };  /* round(c / ln 2) in its low bits */
    float n = shifted.f - 12582912.0f;
    int32_t k = shifted.i - 0x4b400000;
    float r = fmaf(n, -1.42860677e-06f, fmaf(n, -0.693145752f, c));
    float p = fmaf(fmaf(fmaf(fmaf(0.00139411096f, r, 0.00836317521f), r, 0.0416663736f), r,
                        0.166665763f), r, 0.5f);
    p = fmaf(p, r * r, r) + 1.0f;
    int32_t half = k >> 1;
    bits32 low = { .i = (half + 127) << 23 }, high = { .i = (k - half + 127) << 23 };
    return p * low.f * high.f;
}

/* Each loop runs over blocks of BLOCK elements, the last one padded: every element takes
   the same vector code wherever it lies and however many threads share the work (the
   epilogues a compiler makes of a loop's remainder call other variants of erf and tanh,
   which round differently), so that results depend on neither. A thread takes GRAIN
   elements at least: fewer do not pay for its start. */
#define BLOCK 64
#define DRIVE(T, NAME, BLOCK_FN, OPERAND_DECL, OPERAND)                                      \\
void NAME(OPERAND_DECL const T *x, T *y, int64_t n, int mode, int threads) {                 \\
    int64_t blocks = n / BLOCK, most = n / GRAIN;                                            \\
    int team = most < threads ? (most > 1 ? (int)most : 1) : threads;                        \\
    _Pragma("omp parallel for num_threads(team) schedule(static) if(team > 1)")             \\
    for (int64_t b = 0; b < blocks; ++b)                                                     \\
        BLOCK_FN(OPERAND(b * BLOCK) x + b * BLOCK, y + b * BLOCK, mode);                     \\
    int64_t done = blocks * BLOCK, rest = n - done;                                          \\
    if (rest) {                                                                              \\
        T in[BLOCK] = {0}, grad[BLOCK] = {0}, out[BLOCK];                                    \\
        memcpy(in, x + done, rest * sizeof(T));                                              \\
        COPY_##OPERAND(grad, done, rest, T)                                                  \\
        BLOCK_FN(PADDED_##OPERAND(grad) in, out, mode);                                      \\
        memcpy(y + done, out, rest * sizeof(T));                                             \\
    }                                                                                        \\
}
#define NONE(offset)
#define GRAD(offset) g + offset,
#define COPY_NONE(grad, done, rest, T) (void)grad;
#define COPY_GRAD(grad, done, rest, T) memcpy(grad, g + done, rest * sizeof(T));
#define PADDED_NONE(grad)
#define PADDED_GRAD(grad) grad,
#define SIMD _Pragma("omp simd") for (int i = 0; i < BLOCK; ++i)
#define INLINE static inline __attribute__((always_inline))

#define KERNELS(T, SUFFIX, ERF, TANH, EXP)                                                   \\
INLINE void gelu_block_##SUFFIX(const T *x, T *y, int tanh_mode) {                           \\
    const T alpha = (T)ALPHA, beta = (T)BETA, kappa = (T)KAPPA;                            \\
    if (tanh_mode) {                                                                         \\
        SIMD { T v = x[i]; T inner = beta * (v + kappa * (v * v * v));                       \\
               y[i] = (T)0.5 * v * (1 + TANH(inner)); }                                      \\
    } else {                                                                                 \\
        SIMD { T v = x[i]; y[i] = v * (T)0.5 * (1 + ERF(v * alpha)); }                       \\
    }                                                                                        \\
}                                                                                            \\
INLINE void gelu_backward_block_##SUFFIX(const T *g, const T *x, T *y, int tanh_mode) {     \\
    const T alpha = (T)ALPHA, beta = (T)BETA, kappa = (T)KAPPA, pdf = (T)PDF;              \\
    if (tanh_mode) {                                                                         \\
        SIMD { T v = x[i]; T square = v * v;                                                 \\
               T t = TANH(beta * (v + kappa * (square * v)));                                \\
               T left = (T)0.5 * v; T right = 1 + t;                                         \\
               y[i] = g[i] * ((T)0.5 * right                                                 \\
                              + left * (1 - t * t) * (beta * (1 + 3 * kappa * square))); }   \\
    } else {                                                                                 \\
        SIMD { T v = x[i]; T cdf = (T)0.5 * (1 + ERF(v * alpha));                            \\
               y[i] = g[i] * (cdf + v * (pdf * EXP(v * v * (T)-0.5))); }                     \\
    }                                                                                        \\
}                                                                                            \\
INLINE void silu_block_##SUFFIX(const T *x, T *y, int unused) {                              \\
    (void)unused;                                                                            \\
    SIMD { T v = x[i]; y[i] = v / (1 + EXP(-v)); }                                           \\
}                                                                                            \\
INLINE void silu_backward_block_##SUFFIX(const T *g, const T *x, T *y, int unused) {        \\
    (void)unused;                                                                            \\
    SIMD { T v = x[i]; T s = 1 / (1 + EXP(-v)); y[i] = g[i] * s * (1 + v * (1 - s)); }       \\
}                                                                                            \\
INLINE void sigmoid_block_##SUFFIX(const T *x, T *y, int unused) {                           \\
    (void)unused;                                                                            \\
    SIMD { y[i] = 1 / (1 + EXP(-x[i])); }                                                    \\
}                                                                                            \\
/* the derivatives from the output: x is the forward's result here */                        \\
INLINE void sigmoid_backward_block_##SUFFIX(const T *g, const T *x, T *y, int unused) {     \\
    (void)unused;                                                                            \\
    SIMD { T v = x[i]; y[i] = g[i] * (1 - v) * v; }                                          \\
}                                                                                            \\
INLINE void tanh_backward_block_##SUFFIX(const T *g, const T *x, T *y, int unused) {        \\
    (void)unused;                                                                            \\
    SIMD { T v = x[i]; y[i] = g[i] * (1 - v * v); }                                          \\
}                                                                                            \\
DRIVE(T, gelu_##SUFFIX, gelu_block_##SUFFIX, , NONE)                                         \\
DRIVE(T, gelu_backward_##SUFFIX, gelu_backward_block_##SUFFIX, const T *g COMMA, GRAD)       \\
DRIVE(T, silu_##SUFFIX, silu_block_##SUFFIX, , NONE)                                         \\
DRIVE(T, silu_backward_##SUFFIX, silu_backward_block_##SUFFIX, const T *g COMMA, GRAD)       \\
DRIVE(T, sigmoid_##SUFFIX, sigmoid_block_##SUFFIX, , NONE)                                   \\
DRIVE(T, sigmoid_backward_##SUFFIX, sigmoid_backward_block_##SUFFIX, const T *g COMMA, GRAD) \\
DRIVE(T, tanh_backward_##SUFFIX, tanh_backward_block_##SUFFIX, const T *g COMMA, GRAD)
#define COMMA ,

KERNELS(float, f32, erff, tanhf, exp_f32)
KERNELS(double, f64, erf, tanh, exp)
"""
GRAIN = 4096  # the fewest elements a thread of the loops takes
_DEFINES = (f"#define ALPHA {_ALPHA!r}\n#define BETA {_BETA!r}\n#define KAPPA {_KAPPA!r}\n"
            f"#define PDF {_PDF!r}\n#define GRAIN {GRAIN}\n")
_P, _N, _I = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
_SIGNATURES = {f"{name}{suffix}": argtypes for suffix in ("_f32", "_f64")
               for name, argtypes in (("gelu", [_P, _P, _N, _I, _I]),
                                      ("gelu_backward", [_P, _P, _P, _N, _I, _I]),
                                      ("silu", [_P, _P, _N, _I, _I]),
                                      ("silu_backward", [_P, _P, _P, _N, _I, _I]),
                                      ("sigmoid", [_P, _P, _N, _I, _I]),
                                      ("sigmoid_backward", [_P, _P, _P, _N, _I, _I]),
                                      ("tanh_backward", [_P, _P, _P, _N, _I, _I]))}
_VECTOR_KERNELS = native.Kernels(_DEFINES + "#define VECTOR_MATH\n" + _SOURCE, _SIGNATURES)
_SCALAR_KERNELS: list[native.Kernels] = []
_SUFFIX = {np.dtype(np.float32): "_f32", np.dtype(np.float64): "_f64"}


def _native(name: str, dtype: Any) -> Any:
    """The native loop ``name`` for numpy ``dtype`` (float32, float64), or None."""
    suffix = _SUFFIX.get(dtype)
    if suffix is None:
        return None
    fn = _VECTOR_KERNELS(name + suffix)
    if fn is None:
        if not _SCALAR_KERNELS:  # a glibc before 2.35 has no vector erf and tanh
            _SCALAR_KERNELS.append(native.Kernels(_DEFINES + _SOURCE, _SIGNATURES))
        fn = _SCALAR_KERNELS[0](name + suffix)
    return fn


class _Loops(dict):  # type: ignore[type-arg]
    """One op's native loops by numpy dtype, each looked up at its first use (None where
    there is none): a dict read on the hot path."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name

    def __missing__(self, dtype: Any) -> Any:
        fn = self[dtype] = _native(self.name, dtype)
        return fn


_GELU_LOOPS, _SILU_LOOPS = _Loops("gelu"), _Loops("silu")
_GELU_BACKWARD_LOOPS, _SILU_BACKWARD_LOOPS = _Loops("gelu_backward"), _Loops("silu_backward")
_SIGMOID_LOOPS = _Loops("sigmoid")
_SIGMOID_BACKWARD_LOOPS = _Loops("sigmoid_backward")
_TANH_BACKWARD_LOOPS = _Loops("tanh_backward")


def _dense(x: Any) -> bool:
    """Whether ``x``'s elements tile its memory exactly from its lowest address, in some
    order of its dims (positive strides): a loop over that memory visits each once."""
    flags = x.flags
    if flags.c_contiguous or flags.f_contiguous:
        return True
    expected = x.itemsize
    for stride, size in sorted((s, n) for n, s in zip(x.shape, x.strides) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _result(x: Any) -> Any:
    """A new array with the strides of the dense ``x`` (TensorIterator's layout of an
    elementwise result of operands laid out as ``x``)."""
    if x.flags.c_contiguous:
        return np.empty(x.shape, x.dtype)
    return np.ndarray(x.shape, x.dtype, np.empty(x.size, x.dtype), strides=x.strides)


def _gelu_kernel(x: Any, *, approximate: str = "none") -> Any:
    fn = _GELU_LOOPS[x.dtype]
    if fn is None or not x.size or not _dense(x):
        return _gelu(x, approximate=approximate)
    y = _result(x)
    fn(x, y, x.size, approximate == "tanh", native.get_num_threads())
    return y


def _unary_kernel(loops: _Loops, reference: Any) -> Any:
    """A mode-less activation's native loop (silu's, sigmoid's) over a dense input."""

    def kernel(x: Any) -> Any:
        fn = loops[x.dtype]
        if fn is None or not x.size or not _dense(x):
            return reference(x)
        y = _result(x)
        fn(x, y, x.size, 0, native.get_num_threads())
        return y

    return kernel


def _unary_inplace_kernel(loops: _Loops, reference: Any) -> Any:
    """The same loop writing its input (``silu_``, ``sigmoid_``)."""

    def kernel(x: Any) -> Any:
        fn = loops[x.dtype]
        if fn is None or not x.size or not x.flags.writeable or not _dense(x):
            return reference(x)  # (numpy refuses a read-only x, as the dispatcher expects)
        fn(x, x, x.size, 0, native.get_num_threads())
        return x

    return kernel


def _takes_pair(g: Any, x: Any) -> bool:
    """Whether a native backward loop takes the gradient ``g`` and the input ``x``: one
    dtype, one shape and one dense layout."""
    return bool(x.size) and g.dtype == x.dtype and g.shape == x.shape and (
        g.flags.c_contiguous and x.flags.c_contiguous or g.strides == x.strides and _dense(x))


def _gelu_backward_kernel(g: Any, x: Any, *, approximate: str = "none") -> Any:
    fn = _GELU_BACKWARD_LOOPS[x.dtype]
    if fn is None or not _takes_pair(g, x):
        return _gelu_backward(g, x, approximate=approximate)
    y = _result(x)
    fn(g, x, y, x.size, approximate == "tanh", native.get_num_threads())
    return y


def _pair_kernel(loops: _Loops, reference: Any) -> Any:
    """A mode-less backward's native loop over the gradient and the forward's input
    (silu's) or output (sigmoid's, tanh's)."""

    def kernel(g: Any, x: Any) -> Any:
        fn = loops[x.dtype]
        if fn is None or not _takes_pair(g, x):
            return reference(g, x)
        out = _result(x)
        fn(g, x, out, x.size, 0, native.get_num_threads())
        return out

    return kernel


SIGMOID_ = REGISTRY["sigmoid_"]
for _op, _kernel in (
        (GELU, _gelu_kernel), (GELU_BACKWARD, _gelu_backward_kernel),
        (SILU, _unary_kernel(_SILU_LOOPS, _silu)),
        (SILU_, _unary_inplace_kernel(_SILU_LOOPS, _silu_inplace)),
        (SILU_BACKWARD, _pair_kernel(_SILU_BACKWARD_LOOPS, _silu_backward)),
        (SIGMOID, _unary_kernel(_SIGMOID_LOOPS, SIGMOID.forward)),
        (SIGMOID_, _unary_inplace_kernel(_SIGMOID_LOOPS, SIGMOID_.forward)),
        (SIGMOID_BACKWARD, _pair_kernel(_SIGMOID_BACKWARD_LOOPS, _sigmoid_backward)),
        (TANH_BACKWARD, _pair_kernel(_TANH_BACKWARD_LOOPS, _tanh_backward))):
    _kernel.__name__ = _op.forward.__name__
    _op.register_kernel("cpu", _kernel)

# ----------------------------------------------------------------------------- public

_PARAMS = {mode: {"approximate": mode} for mode in ("none", "tanh")}
_FLOATING = 2  # a dtype category


def _input(name: str, input: Any) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def _refuse(kernel: str, input: Tensor) -> None:
    """torch's error for a dtype its CPU kernel is not built for (its meta kernel computes
    the result's dtype and layout for any dtype)."""
    if input.device.type != "meta":
        raise not_implemented(kernel, input.dtype)


@checks_itself
def gelu(input: Tensor, *, approximate: str = "none") -> Tensor:
    """torch.nn.functional.gelu: ``x * Φ(x)``, Φ the standard normal's CDF
    ``0.5 * (1 + erf(x / sqrt(2)))``; with ``approximate='tanh'``, Φ is taken as
    ``0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))``."""
    if engaged.count and overriding():
        return handle(gelu, _GELU_SPEC, (input,),  # type: ignore[no-any-return]
                      {"approximate": approximate})
    _input("gelu", input)
    if approximate.__class__ is not str:
        raise TypeError(f"gelu(): argument 'approximate' must be str, not "
                        f"{type(approximate).__name__}")
    params = _PARAMS.get(approximate)
    if params is None:
        raise RuntimeError("approximate argument must be either none or tanh.")
    if input.dtype.category != _FLOATING:
        _refuse("GeluKernelImpl", input)
    return GELU.door((input,), params)  # type: ignore[no-any-return]


@checks_itself
def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """torch.nn.functional.silu: ``x * sigmoid(x)``, computed as ``x / (1 + exp(-x))``;
    ``inplace=True`` writes the result into ``input`` and returns it."""
    if engaged.count and overriding():
        return handle(silu, _SILU_SPEC, (input, inplace), {})  # type: ignore[no-any-return]
    _input("silu", input)
    category = input.dtype.category
    if inplace:
        if input._requires_grad:
            refuse_recorded_write(input)  # autograd refuses before the op checks anything
        check_writable("silu_", input)
        if category < _FLOATING:
            _refuse("silu_cpu", input)
        return SILU_.door((input,), None)  # type: ignore[no-any-return]
    if category != _FLOATING:
        if category < _FLOATING:
            _refuse("silu_cpu", input)
        elif in_graph(input, ()):
            raise RuntimeError("silu does not support automatic differentiation for outputs "
                               "with complex dtype.")
    return SILU.door((input,), None)  # type: ignore[no-any-return]


_GELU_SPEC = spec_of(gelu)
_SILU_SPEC = spec_of(silu)

FUNCTIONS: list[str] = []
METHODS: dict[str, Any] = {}
