"""The deprecated spellings of ``ember.amp`` that older scripts still call: ``ember.cpu.amp``
and ``ember.cuda.amp`` (autocast, custom_fwd/custom_bwd, GradScaler), each with torch's
FutureWarning."""

import warnings

import pytest

import ember


def test_cpu_amp_alias_warns_and_works():
    with pytest.warns(FutureWarning, match=r"`torch.cpu.amp.autocast\(args...\)` is deprecated"):
        region = ember.cpu.amp.autocast()
    with region:
        assert ember.mm(ember.randn(2, 2), ember.randn(2, 2)).dtype == ember.bfloat16
    with pytest.warns(FutureWarning):
        region = ember.cpu.amp.autocast(dtype=ember.float16, cache_enabled=False)
    assert region.fast_dtype == ember.float16 and region._cache_enabled is False


def test_cuda_amp_aliases_warn():
    with pytest.warns(FutureWarning, match=r"`torch.cuda.amp.autocast\(args...\)` is deprecated"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            region = ember.cuda.amp.autocast()
    assert region.device == "cuda" and region.fast_dtype == ember.float16
    assert region._enabled is ember.cuda_available()
    with pytest.warns(FutureWarning, match="custom_fwd"):
        fwd = ember.cuda.amp.custom_fwd(cast_inputs=ember.float32)
    assert callable(fwd)
    with pytest.warns(FutureWarning, match="custom_bwd"):
        ember.cuda.amp.custom_bwd(lambda ctx, g: g)
