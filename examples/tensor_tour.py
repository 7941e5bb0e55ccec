"""A tour of Ember's tensors, written as a PyTorch program: only the import differs.

    python examples/tensor_tour.py

Swap the import for ``import torch`` and it prints the same (tests/test_programs.py checks).
"""

import ember as torch


def show(title: str, value: object) -> None:
    print(f"{title:<34} {value}")


def main() -> None:
    torch.manual_seed(0)

    # Tensors and dtypes: Python ints give int64, floats the default float32.
    counts = torch.tensor([[1, 2, 3], [4, 5, 6]])
    weights = torch.tensor([0.5, 0.25, 0.125])
    show("counts", counts)
    show("counts.dtype, weights.dtype", (counts.dtype, weights.dtype))
    show("shape, dim, numel", (tuple(counts.shape), counts.dim(), counts.numel()))

    # Type promotion follows PyTorch, not NumPy: a Python float never widens a tensor.
    show("int64 tensor * 2.5 -> dtype", (counts * 2.5).dtype)
    halves = torch.ones(3, dtype=torch.float16)
    show("float16 + float64 0-d -> dtype", (halves + torch.tensor(1.0, dtype=torch.float64)).dtype)
    show("int64 / int64 -> dtype", (counts / counts).dtype)
    show("promote_types(int8, uint8)", torch.promote_types(torch.int8, torch.uint8))

    # Broadcasting: (2, 3) against (3,) gives (2, 3).
    weighted = counts * weights
    show("counts * weights", weighted)
    column = torch.arange(2).reshape(2, 1)
    show("(2, 1) + (3,) -> shape", tuple((column + weights).shape))

    # Views share storage with their base: writing through one changes the other.
    grid = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    row = grid[1]
    row.mul_(10)
    show("grid after grid[1].mul_(10)", grid)
    show("grid.t().is_contiguous()", grid.t().is_contiguous())
    show("grid.view(2, 6)[0]", grid.view(2, 6)[0])

    # In-place ops end in an underscore and keep the tensor's dtype.
    acc = torch.zeros(3)
    acc.add_(weights).mul_(4).sub_(1)
    show("zeros(3).add_(w).mul_(4).sub_(1)", acc)

    # Indexing: integers, slices, masks and index tensors, as in PyTorch.
    show("grid[:, 1:3]", grid[:, 1:3])
    show("grid[grid > 50]", grid[grid > 50])
    show("grid[[0, 2], [1, 3]]", grid[torch.tensor([0, 2]), torch.tensor([1, 3])])
    masked = grid.clone()
    masked[masked < 5] = -1
    show("grid with values < 5 set to -1", masked[0])

    # Reductions: over everything, or along a dim (with keepdim), and their index forms.
    show("grid.sum()", grid.sum())
    show("grid.mean(dim=0)", grid.mean(dim=0))
    show("grid.amax(dim=1, keepdim=True)", grid.amax(dim=1, keepdim=True))
    best = grid.max(dim=1)
    show("grid.max(dim=1)", (best.values, best.indices))

    # Matrix products and a numerically stable softmax from primitives.
    queries = torch.randn(4, 8)
    keys = torch.randn(6, 8)
    scores = queries @ keys.t() / 8**0.5
    shifted = scores - scores.amax(dim=-1, keepdim=True)
    attention = shifted.exp() / shifted.exp().sum(dim=-1, keepdim=True)
    show("attention.shape", tuple(attention.shape))
    show("attention rows sum to 1", torch.allclose(attention.sum(-1), torch.ones(4)))

    # Seeds: the same seed gives the same numbers.
    torch.manual_seed(42)
    first = torch.rand(3)
    torch.manual_seed(42)
    show("manual_seed repeats rand(3)", torch.equal(first, torch.rand(3)))


if __name__ == "__main__":
    main()
