"""The allocator's thresholds: raised on glibc, left alone with EMBER_MALLOC=0."""

import platform

import pytest

from ember.core import allocator


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_glibc_thresholds_are_raised():
    assert allocator.tune() is True


def test_opting_out_leaves_the_allocator_alone(monkeypatch):
    monkeypatch.setenv("EMBER_MALLOC", "0")
    assert allocator.tune() is False
