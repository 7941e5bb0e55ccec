"""Native CPU loops of the one-pass optimizer steps (``fused_steps``), generated from each
step's statements: one C call per dtype updates every tensor of the lists (float32, and
float64; float16 and bfloat16 through float32 copies), its elements cut into the chunks
the threads take in turn (``fused_optimizers_native.PRELUDE``).

A step's element loop is specialised to each combination of its flags (so that a centred
RMSprop reads no gradient average it does not have); an absent list's pointers stand in
as the parameters' (never read nor written where the flag is off). Every operation is
rounded apart (the prelude turns contraction off) but the ``fma`` the statements write,
which are ``fmaf``/``fma``: the reference kernel's bits.
"""

from __future__ import annotations

import ctypes
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import native
from .fused_optimizers_native import PRELUDE, launch
from .fused_steps import Step

_MACROS = r"""
#define where(c, a, b) ((c) ? (a) : (b))
#define maximum(a, b) (isnan(a) ? (a) : isnan(b) ? (b) : (a) > (b) ? (a) : (b))
#define sign(x) (((x) > 0) - ((x) < 0))
#define clamp(x, lo, hi) ((x) < (lo) ? (lo) : (x) > (hi) ? (hi) : (x))
"""
_TYPES = (("float", "f32", "sqrtf", "fmaf", "fabsf"), ("double", "f64", "sqrt", "fma", "fabs"))


def _c_function(step: Step, T: str, S: str, sqrt: str, fma_: str, fabs: str) -> str:
    """``<name>_<S>``: the step over ``n`` tensors in type ``T``."""
    ops, flags = step.operands, step.flag_names
    aliases = [o.alias for o in ops]
    temps = sorted({t for _, t, _ in step.statements} - set(aliases))
    span = f"{step.name}_span_{S}"

    def expr(e: str) -> str:
        return e.replace("sqrt(", f"{sqrt}(").replace("fma(", f"{fma_}(").replace(
            "absolute(", f"{fabs}(")

    body = [f"    const {T} {name} = consts[{j}];" for j, name in enumerate(step.number_names)]
    body += [f"    const {T} {name} = kt[{j}];" for j, name in enumerate(step.per_tensor_names)]
    body += ["    _Pragma(\"omp simd\")", "    for (int64_t i = from; i < to; ++i) {"]
    body += [f"        {T} {a} = {a}_[i];" for a in aliases]
    body += [f"        {T} {t} = 0;" for t in temps]
    for flag, target, e in step.statements:
        cond = "" if not flag else f"if ({flag.replace('&', ' && ')}) "
        body.append(f"        {cond}{target} = {expr(e)};")
    for o in ops:
        if o.written:
            cond = f"if ({o.when}) " if o.when else ""
            body.append(f"        {cond}{o.alias}_[i] = {o.alias};")
    body.append("    }")
    params = ", ".join([f"{T} *restrict {a}_" for a in aliases] + [f"const {T} *consts",
                                                                     f"const {T} *kt"]
                       + [f"const int {f}" for f in flags])
    lines = [f"INLINE void {span}(int64_t from, int64_t to, {params}) {{", *body, "}", ""]
    tables = ", ".join(f"void **a{i}" for i in range(len(ops)))
    nc, nk = max(len(step.number_names), 1), max(len(step.per_tensor_names), 1)
    lines += [f"void {step.name}_{S}({tables}, const int64_t *counts, const double *k, "
              "int64_t n, const double *cd, const int *f, int threads) {",
              f"    const int scaled = 0; const {T} scale = 1;",
              f"    {T} consts[{nc}];",  # (not ``c``: the chunk counter of CHUNKS)
              f"    for (int j = 0; j < {nc}; ++j) consts[j] = j < {len(step.number_names)} ? "
              f"({T})cd[j] : 0;"]
    lines += [f"    const int {name} = f[{j}];" for j, name in enumerate(flags)]
    calls = []
    for values in itertools.product((0, 1), repeat=len(flags)):
        test = " && ".join(f"{'' if v else '!'}{name}" for name, v in zip(flags, values))
        args = ", ".join(["from", "to", *[f"{a}_t" for a in aliases], "consts", "kt",
                          *map(str, values)])
        calls.append(f"if ({test or '1'}) {{ {span}({args}); }}")
    setup = [f"{T} kt[{nk}];",
             f"for (int j = 0; j < {nk}; ++j) kt[j] = j < {len(step.per_tensor_names)} ? "
             f"({T})k[t * {len(step.per_tensor_names)} + j] : 0;",
             f"{T} *gt = 0;"]
    for i, o in enumerate(ops):
        table = f"({T} *)a{i}[t]"
        pointer = f"{o.when} ? {table} : ({T} *)a0[t]" if o.when else table
        setup.append(f"{T} *{o.alias}_t = {pointer};")
    lines.append("    CHUNKS(" + " else ".join(calls) + ", " + " ".join(setup) + ")")
    lines += ["}", ""]
    return "\n".join(lines)


def _source(steps: list[Step]) -> str:
    return PRELUDE + _MACROS + "\n".join(
        _c_function(step, *types) for step in steps for types in _TYPES)


_P, _TABLE, _I64, _I = ctypes.c_void_p, native.POINTERS, ctypes.c_int64, ctypes.c_int


def _signature(step: Step) -> list[Any]:
    return [_TABLE] * len(step.operands) + [_P, _P, _I64, _P, _P, _I]


def _kernel(step: Step, kernels: native.Kernels) -> Callable[..., None]:
    """The CPU kernel of ``step``'s primitive: the native loop where it is built, else the
    reference."""
    n_lists = len(step.operands)

    def kernel(*operands: Any, **params: Any) -> None:
        if kernels(f"{step.name}_f32") is None:
            return step.reference(*operands, **params)
        flags = step.flags(params)
        present = [i for i, o in enumerate(step.operands) if o.when is None or flags[o.when]]
        params_list = operands[0]
        own = step.tensor_numbers(list(operands[n_lists:]), params, len(params_list))
        per_tensor = np.array([own[k] for k in step.per_tensor_names], np.float64).T.copy() \
            if step.per_tensor_names else np.zeros((len(params_list), 0))
        numbers = step.numbers(params)
        consts = np.array([numbers[k] for k in step.number_names] or [0.0], np.float64)
        flag_values = np.array([int(flags[k]) for k in step.flag_names] or [0], np.int32)

        def call(fn: Any, arrays: list[list[Any]], members: list[int]) -> None:
            tables: list[Any] = [()] * n_lists
            for i, values in zip(present, arrays):
                tables[i] = values
            counts = np.array([a.size for a in arrays[0]] + [0] * len(arrays[0]), np.int64)
            fn(*tables, counts, np.ascontiguousarray(per_tensor[members]).reshape(-1),
               len(arrays[0]), consts, flag_values, native.get_num_threads())

        launch(kernels, step.name, [operands[i] for i in present],
               [step.operands[i].written for i in present], call)
        return None

    return kernel


def install(steps: list[Step]) -> native.Kernels:
    """Register the native loops of ``steps``' primitives (compiled at their first call);
    the functions ``<name>_f32`` and ``<name>_f64`` of the returned kernels."""
    kernels = native.Kernels(_source(steps), {
        f"{step.name}_{S}": _signature(step) for step in steps for _, S, *_ in _TYPES})
    for step in steps:
        step.op[0].register_kernel("cpu", _kernel(step, kernels))
    return kernels
