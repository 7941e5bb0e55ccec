"""torch.nn.utils.rnn: batches of sequences of different lengths for the recurrent layers.

A ``PackedSequence`` holds the steps of its sequences one after another: step ``t`` is the
``batch_sizes[t]`` sequences still running at ``t``, longest first, each step's rows in
the batch's (sorted) order; ``sorted_indices`` maps that order to the batch's.
Packing and padding gather and scatter rows with ``index_select`` and ``index_copy``, so
autograd differentiates them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np

import ember.core as E
from ember.core import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    """torch.nn.utils.rnn.PackedSequence: the data of a packed batch of sequences and its
    ``batch_sizes`` (int64, on the CPU); ``sorted_indices`` (and its inverse,
    ``unsorted_indices``) where the batch was sorted by length to pack it. Made by
    ``pack_padded_sequence`` and ``pack_sequence``, not by hand."""

    def __new__(cls, data: Any, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never "
                "be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data.to(*args, **kwargs)`` with the indices moved to its device (``self`` where
        the data does not change)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        moved = [None if t is None else t.to(data.device)
                 for t in (self.sorted_indices, self.unsorted_indices)]
        return type(self)(data, self.batch_sizes, *moved)

    def cuda(self, device: Any = None, non_blocking: bool = False) -> PackedSequence:
        """The sequence with its data on a CUDA device."""
        target = "cuda" if device is None else device if not isinstance(device, int) \
            else f"cuda:{device}"
        return self.to(device=target, non_blocking=non_blocking)

    def cpu(self) -> PackedSequence:
        """The sequence with its data on the CPU."""
        return self.to(device="cpu")

    def pin_memory(self) -> PackedSequence:
        """The sequence with its data and indices in pinned memory."""
        pinned = [None if t is None else t.pin_memory()
                  for t in (self.sorted_indices, self.unsorted_indices)]
        return type(self)(self.data.pin_memory(), self.batch_sizes, *pinned)

    def double(self) -> PackedSequence:
        return self.to(dtype=E.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=E.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=E.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=E.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=E.int32)

    def short(self) -> PackedSequence:
        return self.to(dtype=E.int16)

    def char(self) -> PackedSequence:
        return self.to(dtype=E.int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=E.uint8)

    @property
    def is_cuda(self) -> bool:
        """Whether the data is on a CUDA device."""
        return bool(self.data.is_cuda)

    def is_pinned(self) -> bool:
        """Whether the data is in pinned memory."""
        return bool(self.data.is_pinned())


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """torch.nn.utils.rnn.invert_permutation: the permutation that undoes ``permutation``
    (None for None)."""
    if permutation is None:
        return None
    output = E.empty_like(permutation, memory_format=E.contiguous_format)
    output.scatter_(0, permutation, E.arange(0, permutation.numel(), device=permutation.device))
    return output


def _step_rows(batch_sizes: np.ndarray, batch: int, steps: int, batch_first: bool) -> Any:
    """The row of each packed element in the padded batch flattened to (steps * batch) rows
    (time-major) or (batch * steps) rows (batch-first)."""
    t = np.repeat(np.arange(len(batch_sizes)), batch_sizes)
    j = np.concatenate([np.arange(b) for b in batch_sizes]) if len(batch_sizes) else t
    return j * steps + t if batch_first else t * batch + j


def _lengths_tensor(lengths: Any) -> Tensor:
    if not isinstance(lengths, Tensor):
        return E.as_tensor(lengths, dtype=E.int64, device="cpu")
    return lengths.to(dtype=E.int64)


def _pack_padded(input: Tensor, lengths: Tensor, batch_first: bool) -> tuple[Tensor, Tensor]:
    """The packed rows and batch sizes of a (T, B, *) input (B, T, * where ``batch_first``)
    whose sequence ``b`` has ``lengths[b]`` steps, longest first."""
    if lengths.ndim != 1 or lengths.device.type != "cpu":
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.ndim}D {lengths.device} Long tensor")
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch, steps = (input.shape[0], input.shape[1]) if batch_first else \
        (input.shape[1], input.shape[0])
    values = np.asarray(lengths.tolist(), dtype=np.int64)
    if len(values) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(values)} (batch_size={batch})")
    if values[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if np.any(values[1:] > values[:-1]):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
            "to sidestep this requirement if you do not need ONNX exportability.")
    if values[0] > steps:
        raise RuntimeError(f"pack_padded_sequence: a sequence's length ({values[0]}) exceeds "
                           f"the input's {steps} steps")
    batch_sizes = (values[None, :] > np.arange(values[0])[:, None]).sum(1)
    rows = _step_rows(batch_sizes, batch, steps, batch_first)
    flat = input.reshape(batch * steps, *input.shape[2:])
    data = flat.index_select(0, E.as_tensor(rows, device=input.device))
    return data, E.as_tensor(batch_sizes, dtype=E.int64)


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """torch.nn.utils.rnn.pack_padded_sequence: pack a padded batch (T, B, *) (B, T, * where
    ``batch_first``) of sequences of ``lengths``; they must be sorted longest first unless
    ``enforce_sorted=False``, which sorts them (and records the order)."""
    lengths = _lengths_tensor(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = E.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack_padded(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """torch.nn.utils.rnn.pad_packed_sequence: the padded batch (T, B, *) (B, T, * where
    ``batch_first``; T is ``total_length`` where given) of a packed sequence, and each
    sequence's length, in the batch's original order."""
    batch_sizes = np.asarray(sequence.batch_sizes.tolist(), dtype=np.int64)
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and "
                             f"max sequence length being {steps}")
        steps = total_length
    data = sequence.data
    batch = int(batch_sizes[0]) if len(batch_sizes) else 0
    rows = _step_rows(batch_sizes, batch, steps, batch_first)
    padded = E.full((batch * steps, *data.shape[1:]), padding_value, dtype=data.dtype,
                    device=data.device)
    padded = padded.index_copy(0, E.as_tensor(rows, device=data.device), data)
    shape = (batch, steps) if batch_first else (steps, batch)
    padded = padded.view(*shape, *data.shape[1:])
    lengths = E.as_tensor((batch_sizes[None, :] > np.arange(batch)[:, None]).sum(1),
                          dtype=E.int64)
    unsorted = sequence.unsorted_indices
    if unsorted is not None:
        return padded.index_select(0 if batch_first else 1, unsorted), lengths[unsorted.cpu()]
    return padded, lengths


def pad_sequence(sequences: Any, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """torch.nn.utils.rnn.pad_sequence: stack sequences (L_i, *) into a (T, B, *) batch
    (B, T, * where ``batch_first``) padded with ``padding_value`` at the end of each (at the
    start where ``padding_side='left'``); the result has the first sequence's dtype."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    if any(s.ndim == 0 for s in sequences):
        raise RuntimeError("pad_sequence: expected each sequence to have at least one "
                           "dimension, but got a 0-d tensor")
    longest = max(s.shape[0] for s in sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    dims = (len(sequences), longest) if batch_first else (longest, len(sequences))
    out = E.full((*dims, *first.shape[1:]), padding_value, dtype=first.dtype,
                 device=first.device)
    for i, seq in enumerate(sequences):
        length = seq.shape[0]
        start = longest - length if padding_side == "left" else 0
        if batch_first:
            out.select(0, i).narrow(0, start, length).copy_(seq)
        else:
            out.narrow(0, start, length).select(1, i).copy_(seq)
    return out


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor,
                   batch_first: bool = False) -> list[Tensor]:
    """torch.nn.utils.rnn.unpad_sequence: the sequences of a padded batch, each cut to its
    length (a time-major batch is transposed in place first, as torch's is)."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    idx = E.arange(padded_sequences.shape[1], device=lengths.device)
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """torch.nn.utils.rnn.pack_sequence: pack a list of sequences (L_i, *), longest first
    unless ``enforce_sorted=False``."""
    lengths = E.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """torch.nn.utils.rnn.unpack_sequence: the list of sequences a PackedSequence holds, in
    the batch's original order."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
