"""Whole small programs written against the torch API, run with Ember and with PyTorch.

Each program takes the framework as its ``torch`` argument and returns named results; the
test runs it once with ``ember`` and once with real ``torch`` on the same input data and
asserts that every result has the same dtype, shape and values.
"""

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import ember

ROOT = Path(__file__).resolve().parent.parent
TOUR = ROOT / "examples" / "tensor_tour.py"

# float32 results go through different BLAS and summation orders in the two frameworks.
TOLERANCE = {"torch.float32": (1.3e-6, 1e-5), "torch.float64": (1e-7, 1e-7)}


def attention(torch: Any, data: dict[str, np.ndarray]) -> dict[str, Any]:
    """Single-head causal self-attention from primitives, as in a GPT block."""
    x = torch.from_numpy(data["x"])  # (batch, time, channels)
    w_qkv = torch.from_numpy(data["w_qkv"])  # (channels, 3 * channels)
    batch, time, channels = x.shape
    q, k, v = (x @ w_qkv).split(channels, dim=-1)
    scores = q @ k.transpose(-2, -1) * channels**-0.5
    causal = torch.ones(time, time).tril() == 0
    scores = scores.masked_fill(causal, float("-inf"))
    scores = scores - scores.amax(dim=-1, keepdim=True)
    weights = scores.exp() / scores.exp().sum(dim=-1, keepdim=True)
    out = weights @ v
    return {"weights": weights, "out": out, "row_sums": weights.sum(-1),
            "first_token_attends_to_itself": weights[:, 0, 0]}


def promotion(torch: Any, data: dict[str, np.ndarray]) -> dict[str, Any]:
    """Mixed dtypes: Python scalars, 0-d tensors and tensors of several dtypes."""
    ints = torch.from_numpy(data["ints"])  # int64
    small = ints.to(torch.int8)
    flags = ints > 0
    halves = torch.from_numpy(data["x"][0, 0]).to(torch.float16)
    return {
        "int_times_float": ints * 2.5,
        "int_div_int": ints / 3,
        "int_floordiv": torch.div(ints, 3, rounding_mode="floor"),
        "int8_plus_int64_0d": small + torch.tensor(1000),
        "int8_plus_uint8": small + torch.tensor([200], dtype=torch.uint8),
        "bool_plus_bool": flags + flags,
        "bool_times_int": flags * ints,
        "half_plus_double_0d": halves + torch.tensor(0.1, dtype=torch.float64),
        "half_plus_float_tensor": halves[:3] + torch.ones(3),
        "where_int_float": torch.where(flags, ints, 0.5),
        "comparison_chain": ((ints >= -1) & (ints < 2)) | (ints == 3),
    }


def reshaping(torch: Any, data: dict[str, np.ndarray]) -> dict[str, Any]:
    """Views, copies and in-place writes through views."""
    grid = torch.arange(24, dtype=torch.float64).reshape(2, 3, 4)
    swapped = grid.permute(2, 0, 1)
    flat = swapped.reshape(4, -1)
    column = grid[:, 1]
    column.mul_(-1)  # writes through the view into grid
    stacked = torch.stack([grid[0], grid[1]], dim=0)
    joined = torch.cat([grid, grid[:, :1] * 2], dim=1)
    clipped = grid.clone()
    clipped[clipped < 0] = 0
    return {"grid": grid, "flat": flat, "swapped_is_contiguous": swapped.is_contiguous(),
            "stacked": stacked, "joined": joined, "unsqueezed": grid.unsqueeze(1).shape,
            "clipped": clipped, "transposed_view": grid.transpose(0, 2).contiguous().view(-1)}


def normalization(torch: Any, data: dict[str, np.ndarray]) -> dict[str, Any]:
    """Layer norm, tanh-GELU and log-softmax from primitives."""
    x = torch.from_numpy(data["x"])
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    normed = (x - mean) / torch.sqrt(var + 1e-5)
    gelu = 0.5 * normed * (1 + torch.tanh(0.7978845608 * (normed + 0.044715 * normed**3)))
    log_probs = gelu - gelu.exp().sum(dim=-1, keepdim=True).log()
    return {"normed": normed, "gelu": gelu, "log_probs": log_probs,
            "clamped": gelu.clamp(min=-0.1, max=0.5), "sigmoid": torch.sigmoid(gelu)}


def sampling_filters(torch: Any, data: dict[str, np.ndarray]) -> dict[str, Any]:
    """Top-k and nucleus (top-p) filtering of next-token logits, as in text generation."""
    logits = torch.from_numpy(data["logits"])  # (batch, vocab)
    top_values, top_indices = torch.topk(logits, k=5, dim=-1)
    top_k = logits.masked_fill(logits < top_values[:, -1:], float("-inf"))
    sorted_logits, order = torch.sort(logits, dim=-1, descending=True)
    cumulative = torch.cumsum(torch.softmax(sorted_logits, dim=-1), dim=-1)
    remove = cumulative > 0.9
    remove[:, 1:] = remove[:, :-1].clone()  # keep the token that crosses the threshold
    remove[:, 0] = False
    top_p = logits.masked_fill(remove.scatter(1, order, remove), float("-inf"))
    greedy = logits.argmax(dim=-1)
    return {"top_values": top_values, "top_indices": top_indices, "top_k": top_k,
            "order": order, "cumulative": cumulative, "top_p": top_p, "greedy": greedy,
            "greedy_logits": torch.gather(logits, 1, greedy.unsqueeze(1)),
            "greedy_counts": torch.bincount(greedy, minlength=logits.shape[-1]),
            "kept_per_row": (top_p > float("-inf")).sum(dim=-1)}


PROGRAMS = [attention, promotion, reshaping, normalization, sampling_filters]


def input_data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal((2, 5, 8)).astype(np.float32),
            "w_qkv": (rng.standard_normal((8, 24)) / 8**0.5).astype(np.float32),
            "ints": rng.integers(-4, 5, size=(3, 4)).astype(np.int64),
            "logits": (rng.standard_normal((4, 16)) * 2).astype(np.float32)}


def assert_same(name: str, ours: Any, theirs: Any) -> None:
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, ember.Tensor), f"{name}: expected a Tensor, got {type(ours)}"
        assert str(ours.dtype) == str(theirs.dtype), f"{name}: {ours.dtype} != {theirs.dtype}"
        assert tuple(ours.shape) == tuple(theirs.shape), f"{name}: shape {tuple(ours.shape)}"
        expected = theirs.detach().numpy()
        rtol, atol = TOLERANCE.get(str(theirs.dtype), (0.0, 0.0))
        np.testing.assert_allclose(np.asarray(ours), expected, rtol=rtol, atol=atol,
                                   err_msg=name)
    elif isinstance(theirs, torch.Size):
        assert isinstance(ours, tuple) and tuple(ours) == tuple(theirs), f"{name}: {ours!r}"
    else:
        assert type(ours) is type(theirs) and ours == theirs, f"{name}: {ours!r} != {theirs!r}"


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda program: program.__name__)
def test_program_matches_torch(program: Any) -> None:
    ours = program(ember, input_data())
    theirs = program(torch, input_data())
    assert ours.keys() == theirs.keys()
    for name in theirs:
        assert_same(name, ours[name], theirs[name])


def run_tour(framework: str) -> subprocess.CompletedProcess:
    # The tour says `import ember as torch`; aliasing `ember` to torch runs it on PyTorch.
    alias = "import sys, torch; sys.modules['ember'] = torch; " if framework == "torch" else ""
    code = f"{alias}import runpy; runpy.run_path({str(TOUR)!r}, run_name='__main__')"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)


def test_tensor_tour_prints_what_torch_prints() -> None:
    ours, theirs = run_tour("ember"), run_tour("torch")
    assert theirs.returncode == 0, f"the tour is not a valid PyTorch program:\n{theirs.stderr}"
    assert ours.returncode == 0, ours.stderr
    assert len(theirs.stdout.splitlines()) >= 20, theirs.stdout
    assert ours.stdout.splitlines() == theirs.stdout.splitlines()
