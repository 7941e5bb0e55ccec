"""The torch-like top level: names programs use from ``torch`` itself."""

import subprocess
import sys

import torch

import ember


def test_cuda_namespace_answers_without_a_gpu():
    assert ember.cuda.is_available() == ember.cuda_available()
    assert ember.cuda.is_bf16_supported() is False  # CuPy has no bfloat16 arrays
    ember.cuda.manual_seed(0)
    ember.cuda.manual_seed_all(0)
    ember.cuda.synchronize()
    if not ember.cuda.is_available():
        assert ember.accelerator.is_available() is False
        assert ember.accelerator.current_accelerator() is None


def test_backend_flags_can_be_assigned():
    ember.backends.cuda.matmul.allow_tf32 = True
    ember.backends.cudnn.allow_tf32 = True
    assert ember.backends.cuda.matmul.allow_tf32 and ember.backends.cudnn.allow_tf32
    assert ember.backends.mps.is_available() is False


def test_autograd_is_installed_by_the_top_level_import():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    with ember.no_grad():
        assert not (x * 2).requires_grad


def test_top_level_names_of_widely_read_programs():
    for name in ["tensor", "from_numpy", "arange", "zeros", "ones", "randn", "randn_like",
                 "randint", "randperm", "multinomial", "topk", "tril", "cat", "stack", "flatten",
                 "exp", "log", "sin", "cos", "tanh", "pow", "sigmoid", "sum", "softmax", "float",
                 "long", "int64", "float16", "bfloat16", "float32", "device", "manual_seed",
                 "Generator", "no_grad", "Tensor", "LongTensor"]:
        assert hasattr(ember, name), name
        assert hasattr(torch, name), name


def test_numpy_floating_point_warnings_are_silenced_for_ember_ops_only():
    # torch makes inf and nan silently; a user's own NumPy calls keep warning
    code = ("import numpy as np, ember\n"
            "ember.log(ember.zeros(2)); ember.exp(ember.tensor([1e4])); ember.zeros(1) / 0\n"
            "np.log(np.zeros(1))\n")
    result = subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True,
                            text=True, check=True)
    warnings = [line for line in result.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warnings) == 1 and "<string>:3" in warnings[0], result.stderr
