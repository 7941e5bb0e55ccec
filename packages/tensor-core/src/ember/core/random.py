"""Random number generators: ``Generator``, the default generators, seeding and RNG state.

Every generator is a numpy PCG64 stream on the host, whatever its device: samples for a
CUDA tensor are drawn there and copied over, so a seed gives the same values on every
device. A generator's state is a CPU uint8 tensor (the bytes ``get_state`` returns) that
the sampling primitives of ``samplers`` take as their first operand and
return advanced, so that a recorded call replays to the same values: the samplers of
``sampling`` pass it in and store what comes back.

Decoding the bytes into a numpy stream on every draw would cost more than the draw, so
``stream_of`` keeps the live stream of each state array ``advanced`` last produced. State
arrays are read-only: one that is in the cache still holds the bytes its stream is at.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Callable
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
# seed (8), cached uint32 flag (4) and value (4), PCG64 state (16) and increment (16), all
# little-endian: after the seed, the order numpy keeps them in memory
_LAYOUT = struct.Struct("<8sII16s16s")
_STATE_BYTES = _LAYOUT.size
_LIVE_STREAMS = 16  # generators used in turn before one of them has to decode its state


# ----------------------------------------------------------------------------- state bytes

_live: dict[int, tuple[np.ndarray, np.random.Generator]] = {}


def _pack_public(seed: bytes, bits: np.random.BitGenerator) -> np.ndarray:
    """The state bytes of ``bits`` under ``seed`` (8 bytes), read through the ``state``
    dict, as a read-only array."""
    st = bits.state
    inner = st["state"]
    return np.frombuffer(_LAYOUT.pack(
        seed, st["has_uint32"], st["uinteger"], inner["state"].to_bytes(16, "little"),
        inner["inc"].to_bytes(16, "little")), np.uint8)


# numpy's PCG64 keeps a ``pcg64_state`` (a pointer to the 128-bit state and increment, then
# the cached-draw flag and value) at its ``state_address``. Copying the bytes through views
# of that memory costs a fifth of building the ``state`` dict; ``_pack_reader`` checks the
# layout first.
_views: dict[int, tuple[np.random.BitGenerator, np.ndarray, np.ndarray]] = {}
_POINTER = ctypes.sizeof(ctypes.c_void_p)


def _memory(address: int, n: int) -> np.ndarray:
    return np.ctypeslib.as_array((ctypes.c_uint8 * n).from_address(address))


def _pack_raw(seed: bytes, bits: np.random.BitGenerator) -> np.ndarray:
    address = bits.ctypes.state_address
    hit = _views.get(address)
    if hit is None or hit[0] is not bits:  # the entry keeps ``bits``: no address reuse
        pcg = ctypes.c_void_p.from_address(address).value
        if not pcg:
            raise ValueError("PCG64 holds no state pointer")
        hit = _views[address] = (bits, _memory(address + _POINTER, 8), _memory(pcg, 32))
        if len(_views) > 4 * _LIVE_STREAMS:
            del _views[next(iter(_views))]
    return np.frombuffer(seed + hit[1].tobytes() + hit[2].tobytes(), np.uint8)


def _pack_reader() -> Callable[[bytes, np.random.BitGenerator], np.ndarray]:
    """``_pack_raw`` where this numpy lays PCG64 out as expected (checked on a stream with
    a cached draw), else ``_pack_public``."""
    bits = np.random.PCG64(0x9E3779B97F4A7C15)
    np.random.Generator(bits).integers(0, 7, 3, dtype=np.uint32)  # caches half a draw
    seed = bytes(range(8))
    try:
        if bytes(_pack_raw(seed, bits)) == bytes(_pack_public(seed, bits)):
            return _pack_raw
    except (AttributeError, TypeError, ValueError):
        pass
    finally:
        _views.clear()
    return _pack_public


_pack = _pack_reader()


def _keep(state: np.ndarray, stream: np.random.Generator) -> np.ndarray:
    """Remember ``stream`` as the live stream of ``state`` (the oldest one goes)."""
    _live[id(state)] = (state, stream)
    if len(_live) > _LIVE_STREAMS:
        del _live[next(iter(_live))]
    return state


def _decode(state: np.ndarray) -> np.random.Generator:
    _, has_uint32, uinteger, pcg, inc = _LAYOUT.unpack(state.tobytes())
    bits = np.random.PCG64(0)
    bits.state = {"bit_generator": "PCG64",
                  "state": {"state": int.from_bytes(pcg, "little"),
                            "inc": int.from_bytes(inc, "little")},
                  "has_uint32": has_uint32, "uinteger": uinteger}
    return np.random.Generator(bits)


def stream_of(state: np.ndarray) -> np.random.Generator:
    """The numpy stream at ``state`` (the bytes of a generator's state). Drawing from it
    uses it up: the caller passes it to ``advanced`` afterwards."""
    hit = _live.pop(id(state), None)  # the entry holds the array: its id is not reused
    return _decode(state) if hit is None else hit[1]


def advanced(stream: np.random.Generator, state: np.ndarray) -> np.ndarray:
    """The state bytes ``stream`` is at after drawing from ``state`` (same seed)."""
    return _keep(_pack(state.tobytes()[:8], stream.bit_generator), stream)


def seeded_state(seed: int) -> Tensor:
    """The state tensor of a stream freshly seeded with ``seed`` (0 <= seed < 2**64)."""
    stream = np.random.Generator(np.random.PCG64(seed))
    state = _keep(_pack(seed.to_bytes(8, "little"), stream.bit_generator), stream)
    return make(state, _dt.uint8, CPU)


# ----------------------------------------------------------------------------- Generator

class Generator:
    """torch.Generator: an independent, seedable stream of random numbers."""

    def __init__(self, device: Any = "cpu"):
        from .device import canonical
        from .device import device as _device

        dev = canonical(_device(device))
        if dev.type not in ("cpu", "cuda"):
            raise RuntimeError(f"{dev.type.upper()} device type not an accelerator.")
        self.device = dev
        self._state = seeded_state(_DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        """Reset the stream to ``seed`` (any 64-bit integer; negatives wrap); returns self."""
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -2**63 <= seed < 2**64:
            raise ValueError("Overflow when unpacking long long")
        self._state = seeded_state(seed % 2**64)
        return self

    def seed(self) -> int:
        """Reseed from the operating system's entropy; returns the new seed."""
        s = int(np.random.SeedSequence().entropy) % 2**64  # type: ignore[arg-type]
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed this stream was last reset to."""
        return int.from_bytes(self._state._data[:8].tobytes(), "little")

    def get_state(self) -> Tensor:
        """The whole state as a uint8 tensor (a copy), for ``set_state``."""
        return make(self._state._data.copy(), _dt.uint8, CPU)

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state taken with ``get_state``; returns self."""
        if not isinstance(new_state, Tensor) or new_state.dtype is not _dt.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = new_state._host().tobytes()
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(f"Expected an RNG state of size {_STATE_BYTES} but found the "
                               f"input RNG state size to be {len(raw)}")
        self._state = make(np.frombuffer(raw, np.uint8), _dt.uint8, CPU)
        return self

    def __repr__(self) -> str:
        return f"<ember.Generator device={self.device} initial_seed={self.initial_seed()}>"


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


def default_generators() -> list[Generator]:
    """The default generators made so far: the CPU one, then one per CUDA device used."""
    return [default_generator, *_cuda_generators.values()]


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


def generator_for(generator: Generator | None, dev: device) -> Generator:
    """The generator a random op on device ``dev`` draws from: ``generator``, checked, or
    the device's default (the CPU one for meta tensors, which draw nothing)."""
    if generator is None:
        return default_generator if dev.type != "cuda" else _cuda_default(dev)
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a torch.Generator, not {type(generator).__name__}")
    if generator.device.type != dev.type and dev.type != "meta":
        raise RuntimeError(f"Expected a '{dev.type}' device type for generator but found "
                           f"'{generator.device.type}'")
    return generator
