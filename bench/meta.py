"""Meta tensors: shape evaluation without data, Ember against PyTorch.

Times the meta device's answers (no memory is touched): a softmax over a (64, 1024,
1024) tensor, a layer norm written from primitives over it, a matmul of (64, 1024, 1024)
by (1024, 4096), and an ``empty(10**6, 10**6)`` allocation.

    python bench/meta.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from overhead import compare_us  # noqa: E402


def cases(lib: object) -> dict[str, Callable[[], object]]:
    big = lib.empty(64, 1024, 1024, device="meta")  # type: ignore[attr-defined]
    w = lib.empty(1024, 4096, device="meta")  # type: ignore[attr-defined]

    def layer_norm() -> object:
        mu = big.mean(-1, keepdim=True)  # type: ignore[attr-defined]
        var = ((big - mu) ** 2).mean(-1, keepdim=True)  # type: ignore[operator]
        return (big - mu) / lib.sqrt(var + 1e-5)  # type: ignore[attr-defined,operator]

    return {
        "softmax (64,1024,1024)": lambda: big.softmax(-1),  # type: ignore[attr-defined]
        "layer norm (primitives)": layer_norm,
        "matmul by (1024,4096)": lambda: big @ w,  # type: ignore[operator]
        "empty(10**6, 10**6)": lambda: lib.empty(10**6, 10**6, device="meta"),  # type: ignore[attr-defined]
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (noisier)")
    args = parser.parse_args()
    number, repeat = (200, 3) if args.quick else (2000, 7)

    import torch

    import ember

    ours, theirs = cases(ember), cases(torch)
    print(f"{'meta op':<26}{'ember us':>10}{'torch us':>10}{'ratio':>8}")
    for name in ours:
        e, t = compare_us(ours[name], theirs[name], number, repeat)
        print(f"{name:<26}{e:>10.2f}{t:>10.2f}{e / t:>8.2f}")


if __name__ == "__main__":
    main()
