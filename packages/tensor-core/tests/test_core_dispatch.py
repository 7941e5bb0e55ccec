"""The dispatcher's table test: every registered primitive has samples; each replays
through the registry to bit-identical outputs and gives torch's shapes, dtypes and
strides on the meta device. See ``dispatch_oracle`` for what a sample is."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import numpy as np
import pytest
import torch
from dispatch_oracle import LAYOUTS, Recorder, inputs_laid_out, meta_geometry, replay, same

import ember.core as ember
from ember.core.dispatch import REGISTRY
from ember.core.result_layouts import is_row_major


def _collect() -> dict[str, list]:
    samples: dict[str, list] = {}
    here = Path(__file__).parent
    for info in pkgutil.iter_modules([str(here)]):
        if info.name.startswith("samples_"):
            for name, entries in importlib.import_module(info.name).SAMPLES.items():
                samples.setdefault(name, []).extend(entries)
    return samples


SAMPLES = _collect()
OPS = sorted(REGISTRY)


def test_every_op_has_samples():
    missing = [name for name in OPS if not SAMPLES.get(name)]
    assert not missing, f"ops without samples in samples_*.py: {missing}"
    unknown = sorted(set(SAMPLES) - set(REGISTRY))
    assert not unknown, f"samples for ops not in the registry: {unknown}"


@pytest.mark.parametrize("name", OPS)
def test_replay(name):
    for i, sample in enumerate(SAMPLES.get(name, ())):
        with Recorder() as recorder:
            sample(ember, "cpu")
        ran = [c.op.name for c in recorder.calls]
        assert name in ran, f"sample {i} of {name} dispatched {ran}, not {name}"
        for call in recorder.calls:
            assert same(replay(call), call.outputs), (
                f"sample {i} of {name}: {call.op.name}({call.params}) does not replay")


@pytest.mark.parametrize("name", OPS)
def test_meta_matches_torch(name):
    for i, sample in enumerate(SAMPLES.get(name, ())):
        try:
            expected = sample(torch, "meta")
        except Exception as exc:  # torch cannot run it on meta: Ember must refuse alike
            with pytest.raises(Exception) as refused:
                sample(ember, "meta")
            assert refused.type is type(exc), f"sample {i} of {name}: {refused.value!r}"
            continue
        want = meta_geometry(expected)
        real = meta_geometry(sample(torch, "cpu"))
        if want != real:
            # torch's meta registration disagrees with its own CPU kernel (copysign and
            # floor division of a transposed operand, for one): the CPU result is what
            # meta tensors are meant to predict
            want = real
        actual = sample(ember, "meta")
        assert meta_geometry(actual) == want, f"sample {i} of {name}"


# where torch's result is no kernel's layout: ``mH`` of a complex tensor is a conjugate view
# in torch (its conj bit set, nothing copied), a conj_physical copy in Ember, laid out as
# torch lays out its copies; torch's CPU has no ``_fused_rms_norm_backward``, and its meta rule
# is a decomposition into elementwise ops, whose gradient follows a permuted input where the
# fused kernel's is row-major (as torch's layer norm backward's is)
_NOT_KERNEL_LAYOUTS = {("conj_physical", 0, "stepped"), ("conj_physical", 0, "expanded"),
                       ("_fused_rms_norm_backward", 0, "permuted"),
                       ("_fused_rms_norm_backward", 1, "permuted")}


@pytest.mark.parametrize("name", OPS)
def test_result_layouts_match_torch(name):
    """The CPU kernel's results have the strides of the op's meta rule and of torch's CPU
    results, on the samples with their operands row-major, permuted, stepped and
    expanded (where torch raises, the sample says nothing of layouts)."""
    for layout in LAYOUTS:
        with inputs_laid_out(layout):
            for i, sample in enumerate(SAMPLES.get(name, ())):
                if (name, i, layout) in _NOT_KERNEL_LAYOUTS:
                    continue
                try:
                    expected = _geometry(sample(torch, "cpu"))
                except Exception:
                    continue
                where = f"sample {i} of {name}, inputs {layout}"
                result = sample(ember, "cpu")
                assert _geometry(result) == expected, where
                assert not _row_major_bits_that_lie(result), where
                if layout in ("as written", "permuted"):  # dense inputs keep their strides
                    try:                                  # on the meta device
                        sample(torch, "meta")
                    except Exception:  # no data-independent rule (nonzero...)
                        continue
                    rule = _geometry(sample(ember, "meta"))
                    assert [g[:2] for g in rule] == [g[:2] for g in expected], where


def _geometry(x):
    """Shape, strides and ``is_contiguous()`` of each tensor of a result."""
    return [(tuple(v.shape), tuple(v.stride()), v.is_contiguous()) for v in _all_tensors(x)]


def _row_major_bits_that_lie(x):
    """The tensors of a result whose row-major bit is set though their array is not laid
    out so (the kernel step trusts the bit instead of reading the array's layout)."""
    return [t for t in _all_tensors(x) if t._row_major and not is_row_major(t._data)]


def _all_tensors(x):
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for item in x for t in _all_tensors(item)]
    return []


@pytest.mark.cuda
@pytest.mark.parametrize("name", OPS)
def test_cuda_matches_cpu(name):
    if not ember.cuda_available():
        pytest.skip("no CUDA device")
    from torch_oracle import check

    for sample in SAMPLES.get(name, ()):
        try:
            expected = sample(ember, "cpu")
        except Exception as exc:
            with pytest.raises(Exception) as refused:
                sample(ember, "cuda")
            assert refused.type is type(exc)
            continue
        actual = sample(ember, "cuda")
        for a, e in zip(_tensors(actual), _tensors(expected)):
            assert a.device.type == "cuda"
            check(a.cpu(), torch.from_numpy(np.array(e)), rtol=1e-5, atol=1e-6)


def _tensors(x):
    if isinstance(x, ember.Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for item in x for t in _tensors(item)]
    return []
