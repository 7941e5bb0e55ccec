"""Dispatch-table samples of fused_optimizers.py and fused_adagrad.py: Adam, AdamW, SGD and
Adagrad steps over lists of tensors of odd sizes (the written tensors are the samples'
results), with amsgrad, a gradient scale, a tensor lr, momentum and half types (torch has
meta kernels for Adam's steps with a number lr only, and Ember's meta rules refuse alike).
Their tensors are 1-d: torch's kernels read every tensor as its memory in order, which only
row-major tensors of one layout make right (test_core_fused_optimizers covers the layouts)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatch_oracle import make

Sample = Callable[[Any, str], Any]
_SIZES = ((3,), (1,), (17,))


def _adam(name: str, dtype: str = "float32", amsgrad: bool = False, scaled: bool = False,
          tensor_lr: bool = False) -> Sample:
    def sample(m: Any, d: str) -> Any:
        params = [make(m, d, s, dtype, seed=i) for i, s in enumerate(_SIZES)]
        grads = [make(m, d, s, dtype, seed=10 + i) for i, s in enumerate(_SIZES)]
        exp_avgs = [make(m, d, s, dtype, seed=20 + i, low=-0.1, high=0.1)
                    for i, s in enumerate(_SIZES)]
        exp_avg_sqs = [make(m, d, s, dtype, seed=30 + i, low=0.0, high=0.1)
                       for i, s in enumerate(_SIZES)]
        maxes = [make(m, d, s, dtype, seed=40 + i, low=0.0, high=0.2)
                 for i, s in enumerate(_SIZES)] if amsgrad else []
        steps = [m.full((), float(i + 2), device=d) for i in range(len(_SIZES))]
        lr = m.full((), 1e-2, device=d) if tensor_lr else 1e-2
        scale = {"grad_scale": m.full((), 4.0, device=d)} if scaled else {}
        getattr(m, name)(params, grads, exp_avgs, exp_avg_sqs, maxes, steps, lr=lr, beta1=0.9,
                         beta2=0.999, weight_decay=0.1, eps=1e-8, amsgrad=amsgrad,
                         maximize=False, **scale)
        return params + grads + exp_avgs + exp_avg_sqs + maxes

    return sample


def _sgd(dtype: str = "float32", momentum: float = 0.9, first: bool = False,
         scaled: bool = False) -> Sample:
    def sample(m: Any, d: str) -> Any:
        params = [make(m, d, s, dtype, seed=i) for i, s in enumerate(_SIZES)]
        grads = [make(m, d, s, dtype, seed=10 + i) for i, s in enumerate(_SIZES)]
        buffers = [make(m, d, s, dtype, seed=20 + i) for i, s in enumerate(_SIZES)
                   ] if momentum else []
        scale = {"grad_scale": m.full((), 4.0, device=d)} if scaled else {}
        m._fused_sgd_(params, grads, buffers, weight_decay=0.01, momentum=momentum, lr=0.1,
                      dampening=0.1, nesterov=True, maximize=False, is_first_step=first,
                      **scale)
        return params + grads + buffers

    return sample


def _adagrad(dtype: str = "float32", scaled: bool = False, tensor_lr: bool = False) -> Sample:
    def sample(m: Any, d: str) -> Any:
        params = [make(m, d, s, dtype, seed=i) for i, s in enumerate(_SIZES)]
        grads = [make(m, d, s, dtype, seed=10 + i) for i, s in enumerate(_SIZES)]
        sums = [make(m, d, s, dtype, seed=20 + i, low=0.0, high=0.1)
                for i, s in enumerate(_SIZES)]
        steps = [m.full((), float(i + 2), device=d) for i in range(len(_SIZES))]
        lr = m.full((), 1e-2, device=d) if tensor_lr else 1e-2
        scale = {"grad_scale": m.full((), 4.0, device=d)} if scaled else {}
        m._fused_adagrad_(params, grads, sums, steps, lr=lr, lr_decay=0.01, weight_decay=0.1,
                          eps=1e-10, maximize=False, **scale)
        return params + grads + sums

    return sample


SAMPLES: dict[str, list[Sample]] = {
    "_fused_adam_": [_adam("_fused_adam_"), _adam("_fused_adam_", "float64", amsgrad=True),
                     _adam("_fused_adam_", "bfloat16", scaled=True)],
    "_fused_adamw_": [_adam("_fused_adamw_"), _adam("_fused_adamw_", tensor_lr=True),
                      _adam("_fused_adamw_", "float16", amsgrad=True)],
    "_fused_sgd_": [_sgd(), _sgd("float64", first=True), _sgd(momentum=0.0, scaled=True)],
    "_fused_adagrad_": [_adagrad(), _adagrad("float64", scaled=True), _adagrad(tensor_lr=True)],
}
