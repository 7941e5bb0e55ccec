"""Random number generators: ``Generator``, the default generators, seeding and RNG state.

Every generator is a numpy PCG64 stream on the host, whatever its device: samples for a
CUDA tensor are drawn there and copied over, so a seed gives the same values on every
device. The samplers that draw from these streams are in ``sampling``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes as _dt
from .device import CPU, device
from .tensor import Tensor, make

__all__ = [
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
    "set_rng_state",
]


_DEFAULT_SEED = 67280421310721
_STATE_BYTES = 48  # seed (8), PCG64 state (16) and increment (16), cached uint32 (4 + 4)


class Generator:
    """torch.Generator: an independent, seedable stream of random numbers."""

    def __init__(self, device: Any = "cpu"):
        from .device import canonical
        from .device import device as _device

        dev = canonical(_device(device))
        if dev.type not in ("cpu", "cuda"):
            raise RuntimeError(f"{dev.type.upper()} device type not an accelerator.")
        self.device = dev
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        """Reset the stream to ``seed`` (any 64-bit integer; negatives wrap); returns self."""
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -2**63 <= seed < 2**64:
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed % 2**64
        self._rng = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self) -> int:
        """Reseed from the operating system's entropy; returns the new seed."""
        s = int(np.random.SeedSequence().entropy) % 2**64  # type: ignore[arg-type]
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed this stream was last reset to."""
        return self._seed

    def get_state(self) -> Tensor:
        """The whole state as a uint8 tensor, for ``set_state``."""
        st = self._rng.bit_generator.state
        raw = (self._seed.to_bytes(8, "little") + st["state"]["state"].to_bytes(16, "little")
               + st["state"]["inc"].to_bytes(16, "little")
               + int(st["has_uint32"]).to_bytes(4, "little")
               + int(st["uinteger"]).to_bytes(4, "little"))
        return make(np.frombuffer(raw, np.uint8).copy(), _dt.uint8, CPU)

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state taken with ``get_state``; returns self."""
        if not isinstance(new_state, Tensor) or new_state.dtype is not _dt.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = new_state._host().tobytes()
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(f"Expected an RNG state of size {_STATE_BYTES} but found the "
                               f"input RNG state size to be {len(raw)}")
        bits = np.random.PCG64()
        bits.state = {"bit_generator": "PCG64",
                      "state": {"state": int.from_bytes(raw[8:24], "little"),
                                "inc": int.from_bytes(raw[24:40], "little")},
                      "has_uint32": int.from_bytes(raw[40:44], "little"),
                      "uinteger": int.from_bytes(raw[44:48], "little")}
        self._seed = int.from_bytes(raw[:8], "little")
        self._rng = np.random.Generator(bits)
        return self

    def __repr__(self) -> str:
        return f"<ember.Generator device={self.device} initial_seed={self._seed}>"


# torch seeds its default CPU generator nondeterministically at startup.
default_generator = Generator()
default_generator.seed()
_cuda_generators: dict[int, Generator] = {}
_cuda_seed = [_DEFAULT_SEED]


def _cuda_default(dev: device) -> Generator:
    index = dev.index or 0
    gen = _cuda_generators.get(index)
    if gen is None:
        gen = _cuda_generators[index] = Generator(dev).manual_seed(_cuda_seed[0])
    return gen


def manual_seed(seed: int) -> Generator:
    """Seed every default generator (CPU and CUDA); returns the CPU one."""
    default_generator.manual_seed(seed)
    _cuda_seed[0] = default_generator.initial_seed()
    for gen in _cuda_generators.values():
        gen.manual_seed(_cuda_seed[0])
    return default_generator


def manual_seed_cuda(seed: int, index: int | None = None) -> None:
    """torch.cuda.manual_seed_all (or manual_seed for one device ``index``): seed the CUDA
    default generators only."""
    if index is None:
        _cuda_seed[0] = Generator().manual_seed(seed).initial_seed()
        for gen in _cuda_generators.values():
            gen.manual_seed(seed)
    else:
        _cuda_default(device("cuda", index)).manual_seed(seed)


def seed() -> int:
    """Seed the default generators nondeterministically; returns the seed."""
    s = default_generator.seed()
    manual_seed(s)
    return s


def initial_seed() -> int:
    """The default CPU generator's initial seed."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default CPU generator's state as a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default CPU generator's state from ``get_rng_state()``."""
    default_generator.set_state(new_state)


def _stream(generator: Generator | None, dev: device) -> np.random.Generator:
    if generator is None:
        return (default_generator if dev.type == "cpu" else _cuda_default(dev))._rng
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a torch.Generator, not {type(generator).__name__}")
    if generator.device.type != dev.type:
        raise RuntimeError(f"Expected a '{dev.type}' device type for generator but found "
                           f"'{generator.device.type}'")
    return generator._rng

