"""Random numbers: ``Generator``, ``manual_seed`` and the sampling functions."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "default_generator"]


class Generator:
    """torch.Generator: an independent, seedable stream (numpy's PCG64 underneath)."""

    def __init__(self, device: Any = "cpu"):
        self.device = device
        self._seed = 67280421310721
        self._rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._rng = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self) -> int:
        s = int(np.random.SeedSequence().entropy) % (2**63)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (every sampling function without ``generator=``)."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()
