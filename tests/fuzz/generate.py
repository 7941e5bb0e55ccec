"""Random programs: inputs of every dtype and layout, then 1-5 steps drawn from the
catalogue, each written against the torch values the program holds so far (torch runs
alongside the generation, so that dims, sizes and indices fit), and for programs with
float64 leaves a backward of a reduction of a result."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch

from .catalogue import ENTRIES, Entry
from .gen import Gen, is_complex, is_float
from .inputs import DTYPES, LAYOUTS, Input, layout_fits, make_input
from .program import Program, Step, _compiled

# how often a step that raises in torch is kept (the rest are drawn again)
KEEP_ERRORS = 0.25


def _shapes(rng: np.random.Generator) -> list[tuple[int, ...]]:
    """Shapes of a program's inputs: one shape and its broadcasting relatives."""
    ndim = int(rng.choice([0, 1, 2, 2, 3, 3, 4]))
    shape = tuple(int(rng.integers(1, 5)) for _ in range(ndim))
    if ndim and rng.random() < 0.08:
        shape = tuple(0 if i == int(rng.integers(0, ndim)) else s for i, s in enumerate(shape))
    out = []
    for _ in range(int(rng.integers(1, 4))):
        r = rng.random()
        if r < 0.55 or not shape:
            out.append(shape)
        elif r < 0.7:
            out.append(shape[int(rng.integers(0, len(shape) + 1)):])
        elif r < 0.85:
            out.append(tuple(1 if rng.random() < 0.5 else s for s in shape))
        else:
            out.append(())
    return out


def _inputs(rng: np.random.Generator) -> tuple[Input, ...]:
    main_dtype = str(rng.choice(DTYPES))
    out = []
    for shape in _shapes(rng):
        dtype = main_dtype if rng.random() < 0.6 else str(rng.choice(DTYPES))
        layouts = [lay for lay in LAYOUTS if layout_fits(shape, lay)]
        layout = "contiguous" if rng.random() < 0.4 else str(rng.choice(layouts))
        grad = dtype in ("float64", "complex128") and rng.random() < 0.6
        out.append(make_input(rng, dtype, shape, layout, grad, special=rng.random() < 0.15))
    return tuple(out)


def _exec(code: str, ns: dict[str, Any]) -> bool:
    try:
        exec(_compiled(code), ns)
    except Exception:  # noqa: BLE001 - generation only asks whether torch accepts it
        return False
    return True


def _partial_overlap(ns: dict[str, Any], step: Step) -> bool:
    """Whether an operand of an in-place step shares memory with the tensor it writes
    without being that very view: torch refuses some such writes and leaves the others'
    results to the order it happens to visit elements in (unspecified)."""
    target = ns.get(step.args[0]) if step.args else None
    if not isinstance(target, torch.Tensor):
        return False
    ptr = target.untyped_storage().data_ptr()
    for name in step.args[1:]:
        other = ns.get(name)
        if isinstance(other, torch.Tensor) and other.untyped_storage().data_ptr() == ptr and \
                (other.shape, other.stride(), other.storage_offset()) != \
                (target.shape, target.stride(), target.storage_offset()):
            return True
    return False


def _overlaps_itself(ns: dict[str, Any], step: Step) -> bool:
    """Whether the tensor an in-place step writes has elements that share memory without
    an expanded (zero-stride) dim (``unfold``, ``as_strided``): torch accepts such writes
    and leaves their results to its traversal order (its documentation calls them
    undefined). Writes through expanded dims stay: torch refuses them."""
    target = ns.get(step.args[0]) if step.args else None
    if not isinstance(target, torch.Tensor) or target.numel() < 2:
        return False
    shape, strides = target.shape, target.stride()
    if any(s == 0 and n > 1 for n, s in zip(shape, strides)):
        return False
    offsets = np.zeros(1, np.int64)
    for n, s in zip(shape, strides):
        offsets = (offsets[:, None] + np.arange(n) * s).ravel()
    return len(np.unique(offsets)) < offsets.size


def _snapshot(ns: dict[str, Any], step: Step) -> Any:
    """A copy of the tensor an in-place step writes, to tell afterwards whether torch
    wrote part of it before raising."""
    target = ns.get(step.args[0]) if step.args else None
    return target.detach().clone() if isinstance(target, torch.Tensor) else None


def _half_written(ns: dict[str, Any], step: Step, before: Any) -> bool:
    """Whether a step torch refused changed the tensor it writes: torch's integer division
    by zero raises after writing the elements before the zero, where Ember's ops that
    raise write nothing."""
    after = ns.get(step.args[0])
    if before is None or not isinstance(after, torch.Tensor) or after.shape != before.shape:
        return False
    after = after.detach()
    same = (after == before) | ((after != after) & (before != before))
    return not bool(same.all())


def _replay(program: Program) -> dict[str, Any]:
    ns: dict[str, Any] = {"torch": torch, "np": np}
    exec(_compiled("\n".join(program.input_code())), ns)
    for step in program.steps:
        _exec(step.code(), ns)
    return ns


def _backward(rng: np.random.Generator, ns: dict[str, Any], steps: list[Step],
              k: int) -> Step | None:
    """A backward of a reduction of the latest result that requires grad."""
    for step in reversed(steps):
        v = ns.get(step.out)
        if isinstance(v, torch.Tensor) and v.requires_grad and (is_float(v) or is_complex(v)) \
                and not step.meta_only:
            # a complex result reaches a real loss through abs (its gradient then flows
            # through every formula in torch's complex convention)
            real = "{0}.abs()" if is_complex(v) else "{0}"
            if rng.random() < 0.5:
                tmpl = real + ".sum().backward()"
            else:
                tmpl = (f"({real} * torch.arange({{0}}.numel(), dtype={real}.dtype)"
                        ".reshape({0}.shape)).sum().backward()")
            return Step(f"{step.op}/backward", tmpl, (step.out,), f"v{k}")
    return None


def generate(rng: np.random.Generator, entries: list[Entry] | None = None) -> Program:
    """A random program; ``entries`` restricts the steps to some of the catalogue."""
    entries = entries or ENTRIES
    inputs = _inputs(rng)
    ns: dict[str, Any] = {"torch": torch, "np": np}
    program = Program(inputs, ())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(_compiled("\n".join(program.input_code())), ns)
        pool = [f"x{i}" for i in range(len(inputs))]
        steps: list[Step] = []
        for k in range(int(rng.integers(1, 6))):
            for _attempt in range(10):
                entry = entries[int(rng.integers(0, len(entries)))]
                built = entry.build(Gen(rng, ns, pool))
                if built is None:
                    continue
                step = Step(entry.op, built.template, built.args, f"v{k}", built.meta_only)
                overlap = entry.inplace and (_partial_overlap(ns, step)
                                             or _overlaps_itself(ns, step))
                before = _snapshot(ns, step) if entry.inplace else None
                if _exec(step.code(), ns):
                    if overlap:  # torch accepted a write whose result it leaves unspecified
                        ns = _replay(Program(inputs, tuple(steps)))
                        continue
                    steps.append(step)
                    value = ns.get(step.out)
                    if isinstance(value, torch.Tensor) and not step.meta_only:
                        pool.append(step.out)
                    break
                if before is not None and _half_written(ns, step, before):
                    ns = _replay(Program(inputs, tuple(steps)))
                    continue
                if rng.random() < KEEP_ERRORS:
                    ns.pop(step.out, None)
                    steps.append(step)
                    break
        if any(inp.requires_grad for inp in inputs) and rng.random() < 0.8:
            back = _backward(rng, ns, steps, len(steps))
            if back is not None:
                steps.append(back)
    return Program(inputs, tuple(steps))
