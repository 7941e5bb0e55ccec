"""Grad modes: context managers, decorators (plain and generator functions), nesting,
thread locality, inference mode; and anomaly detection."""

from __future__ import annotations

import threading
import warnings
from typing import Any

import numpy as np
import pytest
import torch
from autograd_oracle import E, inputs

import ember.autograd as ag

MODES = [("no_grad", lambda m: m.no_grad()), ("enable_grad", lambda m: m.enable_grad()),
         ("set_grad_enabled_false", lambda m: m.set_grad_enabled(False)),
         ("inference_mode", lambda m: m.inference_mode()),
         ("inference_mode_false", lambda m: m.inference_mode(False))]


def _state(m: Any) -> tuple[bool, bool]:
    return m.is_grad_enabled(), m.is_inference_mode_enabled()


@pytest.mark.parametrize("outer", [None] + [m for _, m in MODES], ids=["plain"] + [n for n, _ in MODES])
@pytest.mark.parametrize("inner", [m for _, m in MODES], ids=[n for n, _ in MODES])
def test_nested_modes_match_torch(outer: Any, inner: Any) -> None:
    def observe(m: Any) -> list[tuple[bool, bool]]:
        seen = []
        if outer is None:
            with inner(m):
                seen.append(_state(m))
        else:
            with outer(m):
                seen.append(_state(m))
                with inner(m):
                    seen.append(_state(m))
                seen.append(_state(m))
        seen.append(_state(m))
        return seen

    assert observe(ag) == observe(torch)


def test_no_grad_stops_recording_and_enable_grad_resumes() -> None:
    (x,), _ = inputs([(3,)])
    with ag.no_grad():
        y = x * 2
        with ag.enable_grad():
            z = x * 2
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn is not None
    with ag.inference_mode():
        assert not (x * 2).requires_grad


@pytest.mark.parametrize("bare", [True, False])
def test_decorators(bare: bool) -> None:
    (x,), _ = inputs([(3,)])
    decorate = ag.no_grad if bare else ag.no_grad()

    @decorate
    def doubled(t: Any) -> Any:
        return t * 2

    @ag.inference_mode
    def inferred(t: Any) -> Any:
        assert ag.is_inference_mode_enabled()
        return t * 2

    @ag.set_grad_enabled(False)
    def disabled(t: Any) -> Any:
        return t * 2

    assert ag.is_grad_enabled()  # set_grad_enabled as a decorator does not act at definition
    for fn in (doubled, inferred, disabled):
        assert not fn(x).requires_grad
        assert ag.is_grad_enabled()
    assert doubled.__name__ == "doubled"


def test_generator_functions_run_their_body_in_the_mode() -> None:
    @ag.no_grad()
    def gen() -> Any:
        for _ in range(2):
            yield ag.is_grad_enabled()

    seen = []
    for inside in gen():
        seen.append((inside, ag.is_grad_enabled()))
    assert seen == [(False, True), (False, True)]


def test_set_grad_enabled_acts_immediately_and_restores_as_context() -> None:
    ag.set_grad_enabled(False)
    try:
        assert not ag.is_grad_enabled()
    finally:
        ag.set_grad_enabled(True)
    with ag.set_grad_enabled(False):
        assert not ag.is_grad_enabled()
    assert ag.is_grad_enabled()


def test_modes_are_thread_local() -> None:
    seen = {}

    def worker() -> None:
        seen["grad"] = ag.is_grad_enabled()
        (x,), _ = inputs([(2,)])
        seen["records"] = (x * 2).requires_grad

    with ag.no_grad():
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        assert not ag.is_grad_enabled()
    assert seen == {"grad": True, "records": True}


def test_exceptions_restore_the_mode() -> None:
    with pytest.raises(ValueError), ag.no_grad():
        raise ValueError
    assert ag.is_grad_enabled()


# ------------------------------------------------------------------------ anomaly mode

def test_anomaly_mode_names_the_backward_that_made_nan() -> None:
    x = E.tensor([0.0, 1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        detector = ag.detect_anomaly()
    with detector:
        assert ag.is_anomaly_enabled()
        z = (x / x).sum()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match=r"^Function 'DivBackward0' returned nan "
                                                   r"values in its 1th output.$"):
                z.backward()
        assert any("Traceback of forward call" in str(w.message) and "test_autograd_modes" in
                   str(w.message) for w in caught)
    assert not ag.is_anomaly_enabled()
    (x / x).sum().backward()  # no check outside
    assert np.isnan(np.array(x.grad)).any()


def test_set_detect_anomaly() -> None:
    ag.set_detect_anomaly(True, check_nan=False)
    try:
        assert ag.is_anomaly_enabled() and not ag.is_anomaly_check_nan_enabled()
    finally:
        ag.set_detect_anomaly(False)
    assert not ag.is_anomaly_enabled()
