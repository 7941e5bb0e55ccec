"""Modules against torch's: the same weights (copied from the torch module through its
state dict), the same inputs, then outputs, input gradients, parameter gradients, state
dict keys, shapes and buffers, and ``repr`` compared.

    t, e = pair_modules(lambda nn: nn.Conv2d(3, 4, 3, padding=1))
    compare_modules(t, e, [np_input], train=True)

``pair_modules(build)`` calls ``build(torch.nn)`` and ``build(ember.nn)`` and loads the
torch module's state dict into Ember's (``state_dict`` keys and shapes must agree).
``compare_modules`` runs both on the same numpy inputs and checks everything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

import ember.autograd as ag
import ember.core as E
import ember.nn as enn

__all__ = ["pair_modules", "compare_modules", "to_ember", "to_numpy", "tolerance", "check_close"]

_TOL = {"float32": (1e-5, 1e-5), "float64": (1e-10, 1e-10), "float16": (1e-2, 1e-2),
        "bfloat16": (2e-2, 2e-2), "int64": (0, 0), "int32": (0, 0), "bool": (0, 0)}


def tolerance(dtype: Any) -> tuple[float, float]:
    """(rtol, atol) for a dtype name or numpy/torch/Ember dtype (exact for integer and
    bool dtypes, e.g. BatchNorm's ``num_batches_tracked``)."""
    return _TOL.get(str(dtype).split(".")[-1], (0.0, 0.0))


def to_numpy(t: Any) -> Any:
    if t is None:
        return None
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()
    return t.detach().numpy() if t.dtype is not E.bfloat16 else t.detach().float().numpy()


def to_ember(t: torch.Tensor) -> E.Tensor:
    """A torch tensor's values as an Ember tensor of the same dtype (no grad)."""
    if t.dtype == torch.bfloat16:
        return E.tensor(t.detach().float().numpy()).to(E.bfloat16)
    return E.tensor(t.detach().numpy().copy())


def check_close(t: Any, e: Any, what: str, rtol: float | None = None,
                atol: float | None = None) -> None:
    """Same dtype, shape and values (within the dtype's tolerance) of a torch result
    ``t`` and an Ember result ``e`` (tensors, or tuples/lists of them, or None)."""
    if isinstance(t, (tuple, list)):
        assert isinstance(e, (tuple, list)) and len(t) == len(e), what
        for i, (a, b) in enumerate(zip(t, e)):
            check_close(a, b, f"{what}[{i}]", rtol, atol)
        return
    if t is None or e is None:
        assert t is None and e is None, f"{what}: {t!r} vs {e!r}"
        return
    assert str(t.dtype).split(".")[-1] == str(e.dtype).split(".")[-1], \
        f"{what}: dtype {t.dtype} vs {e.dtype}"
    assert tuple(t.shape) == tuple(e.shape), f"{what}: shape {tuple(t.shape)} vs {tuple(e.shape)}"
    r, a = tolerance(t.dtype)
    np.testing.assert_allclose(to_numpy(e), to_numpy(t), rtol=r if rtol is None else rtol,
                               atol=a if atol is None else atol, err_msg=what)


def pair_modules(build: Callable[[Any], Any], dtype: str | None = None) -> tuple[Any, Any]:
    """``build(torch.nn)`` and ``build(ember.nn)``, the Ember one holding the torch one's
    parameters and buffers (optionally both cast to ``dtype`` first)."""
    t = build(torch.nn)
    e = build(enn)
    if dtype is not None:
        t.to(getattr(torch, dtype))
        e.to(getattr(E, dtype))
    tsd, esd = t.state_dict(), e.state_dict()
    assert list(tsd) == list(esd), f"state_dict keys: {list(tsd)} vs {list(esd)}"
    for k in tsd:
        assert tuple(tsd[k].shape) == tuple(esd[k].shape), f"{k}: shape"
    e.load_state_dict({k: to_ember(v) if isinstance(v, torch.Tensor) else v
                       for k, v in tsd.items()})
    return t, e


def _leaf(lib: Any, x: np.ndarray, grad: bool) -> Any:
    if lib is torch:
        t = torch.tensor(x)
    else:
        t = E.tensor(x)
    if grad and np.issubdtype(x.dtype, np.floating):
        t.requires_grad_(True)
    return t


def compare_modules(t: Any, e: Any, inputs: Sequence[np.ndarray], train: bool = True,
                    grad: bool = True, seed: int = 0, kwargs: dict[str, Any] | None = None,
                    rtol: float | None = None, atol: float | None = None) -> None:
    """Run both modules on ``inputs`` (numpy arrays; float ones require grad) in train or
    eval mode; compare outputs, then (``grad``) the gradients of the inputs and the
    parameters for one random output gradient, then buffers and repr."""
    t.train(train)
    e.train(train)
    kwargs = kwargs or {}
    tin = [_leaf(torch, x, grad) for x in inputs]
    ein = [_leaf(E, x, grad) for x in inputs]
    tout = t(*tin, **kwargs)
    eout = e(*ein, **kwargs)
    check_close(tout, eout, "output", rtol, atol)
    if grad:
        touts = [o for o in (tout if isinstance(tout, (tuple, list)) else [tout])
                 if isinstance(o, torch.Tensor) and o.requires_grad]
        eouts = [o for o in (eout if isinstance(eout, (tuple, list)) else [eout])
                 if isinstance(o, E.Tensor) and o.requires_grad]
        assert len(touts) == len(eouts), "outputs requiring grad"
        rng = np.random.default_rng(seed)
        tgrads, egrads = [], []
        for o in touts:
            g = rng.standard_normal(tuple(o.shape)).astype(to_numpy(o).dtype)
            tgrads.append(torch.tensor(g).to(o.dtype))
            egrads.append(E.tensor(g).to(getattr(E, str(o.dtype).split(".")[-1])))
        if touts:
            torch.autograd.backward(touts, tgrads)
            ag.backward(eouts, egrads)
        for i, (a, b) in enumerate(zip(tin, ein)):
            check_close(a.grad, b.grad, f"input {i} grad", rtol, atol)
        for (name, p), (name2, q) in zip(t.named_parameters(), e.named_parameters()):
            assert name == name2
            check_close(p.grad, q.grad, f"{name} grad", rtol, atol)
    for (name, b), (_, c) in zip(t.named_buffers(), e.named_buffers()):
        check_close(b, c, f"buffer {name}", rtol, atol)
    assert repr(t) == repr(e)
