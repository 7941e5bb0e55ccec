"""Lookups: torch.nn.functional's embedding (with ``max_norm`` renormalization),
embedding_bag (sums, means or maxima of bags of embeddings) and one_hot.

The rows come from tensor-core's ``embedding`` primitive (its backward adds each row's
gradient into the weight, skipping ``padding_idx``, divided by the index's frequency where
``scale_grad_by_freq``); a bag reduces its rows with ``index_add`` (sum, mean), or
(max) gathers each maximum from the first of its rows holding it, found outside the graph,
so that the maximum's gradient goes to that row alone, as torch's.
"""

from __future__ import annotations

import ember.core as E
from ember.autograd import no_grad
from ember.core import Tensor
from ember.core.dtypes import scalar_type_name
from ember.core.ops import embedding as core_embedding

__all__ = ["embedding", "embedding_bag", "one_hot"]

_INDEX_TYPES = (E.int64, E.int32)
_WEIGHT_TYPES = (E.float16, E.bfloat16, E.float32, E.float64)
def _type_name(t: Tensor) -> str:
    return f"torch.{scalar_type_name(t.dtype)}Tensor"


def _renorm_(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    """torch's ``embedding_renorm_``: each row ``input`` names whose ``norm_type``-norm
    exceeds ``max_norm`` scaled in place by ``max_norm / (norm + 1e-7)``."""
    if input.dtype not in _INDEX_TYPES:
        raise RuntimeError(f"Expected tensor for argument #2 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {_type_name(input)} "
                           f"instead (while checking arguments for embedding_renorm_)")
    with no_grad():
        table = weight.detach()
        rows = input.reshape(-1).unique()
        if rows.numel() and (int(rows[-1]) >= table.shape[0] or int(rows[0]) < 0):
            bad = int(rows[-1]) if int(rows[-1]) >= table.shape[0] else int(rows[0])
            raise IndexError(f"select(): index {bad} out of range for tensor of size "
                             f"{list(table.shape)} at dimension 0")
        picked = table.index_select(0, rows)
        norms = picked.norm(norm_type, 1, keepdim=True).double()
        scale = E.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        table.index_copy_(0, rows, picked * scale.to(table.dtype))


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """torch.nn.functional.embedding: the rows of ``weight`` (num_embeddings, dim) at the
    integer ``input``, shape ``input.shape + (dim,)``. ``padding_idx``'s row gets no
    gradient; ``max_norm`` first rescales, in place, the looked-up rows whose
    ``norm_type``-norm exceeds it; ``scale_grad_by_freq`` divides each row's gradient by its
    index's count in ``input``. ``sparse`` gradients come out dense (the same values)."""
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= weight.size(0):
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        _renorm_(weight, input, max_norm, norm_type)
    return core_embedding.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def _bag_inputs(input: Tensor, weight: Tensor, offsets: Tensor | None,
                per_sample_weights: Tensor | None, include_last_offset: bool
                ) -> tuple[Tensor, Tensor, Tensor | None, bool]:
    """torch's Python checks: 2-d inputs become bags of their rows."""
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) "
                         f"is not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {type(offsets)}")
        offsets = E.arange(0, input.numel(), input.shape[1], dtype=input.dtype,
                           device=input.device)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
        return input, offsets, per_sample_weights, False
    if input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        return input, offsets, per_sample_weights, include_last_offset
    raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                     f"{input.ndim}")


def _check_bag_types(input: Tensor, weight: Tensor, offsets: Tensor,
                     per_sample_weights: Tensor | None, include_last_offset: bool) -> None:
    """torch's ``embedding_bag`` checks of types and offsets, in its order."""
    for name, t in (("indices", input), ("offsets", offsets)):
        if t.dtype not in _INDEX_TYPES:
            raise RuntimeError(f"Expected tensor for argument #1 '{name}' to have one of the "
                               f"following scalar types: Long, Int; but got {_type_name(t)} "
                               f"instead (while checking arguments for embedding_bag)")
    if input.dtype != offsets.dtype:
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have the same type as "
                           f"tensor for argument #1 'offsets'; but type {_type_name(input)} "
                           f"does not equal {_type_name(offsets)} (while checking arguments "
                           f"for embedding_bag)")
    if weight.dtype not in _WEIGHT_TYPES:
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have one of the "
                           f"following scalar types: Half, BFloat16, Float, Double; but got "
                           f"{_type_name(weight)} instead (while checking arguments for "
                           f"embedding_bag)")
    if offsets.numel():
        first, last = int(offsets[0]), int(offsets[-1])
        if first != 0:
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                               f"mini-batch has to start from position 0. However, got {first}")
        if last > input.shape[0]:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length "
                               f"{input.shape[0]} but got offsets[-1] of {last}")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type as "
                           f"tensor for argument #1 'per_sample_weights'; but type "
                           f"{_type_name(weight)} does not equal "
                           f"{_type_name(per_sample_weights)} (while checking arguments for "
                           f"embedding_bag)")
    if include_last_offset and offsets.numel() < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean",
                  sparse: bool = False, per_sample_weights: Tensor | None = None,
                  include_last_offset: bool = False, padding_idx: int | None = None
                  ) -> Tensor:
    """torch.nn.functional.embedding_bag: the sum, mean or max (``mode``) of each bag of
    embeddings, without the (indices, dim) rows of ``embedding`` being the result. A 2-d
    ``input`` is one bag per row; a 1-d one is cut into bags at ``offsets`` (with
    ``include_last_offset``, its last entry ends the last bag). ``per_sample_weights``
    (mode 'sum') scales each row; ``padding_idx`` rows take no part (an empty bag gives
    zeros)."""
    input, offsets, per_sample_weights, include_last_offset = _bag_inputs(
        input, weight, offsets, per_sample_weights, include_last_offset)
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                               f"through {num - 1}, but got {padding_idx}")
        padding_idx %= num
    _check_bag_types(input, weight, offsets, per_sample_weights, include_last_offset)
    _check_range(input, num, mode)
    return _reduce_bags(input, weight, offsets, mode, per_sample_weights,
                        include_last_offset, -1 if padding_idx is None else padding_idx,
                        scale_grad_by_freq)


def _check_range(input: Tensor, num: int, mode: str) -> None:
    bad = ((input < 0) | (input >= num)).nonzero()
    if bad.numel():
        at = int(bad[0, 0])
        value = int(input[at])
        if mode == "max":
            raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but "
                               f"found idx to be {value}")
        raise RuntimeError(f"Index {at} of input takes value {value} which is not in the valid "
                           f"range [0, {num})")


def _reduce_bags(input: Tensor, weight: Tensor, offsets: Tensor, mode: str,
                 per_sample_weights: Tensor | None, include_last_offset: bool,
                 padding_idx: int, scale_grad_by_freq: bool) -> Tensor:
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    dim = weight.shape[1]
    if bags <= 0:  # (in the graph, as torch's)
        return weight[:0].clone()
    starts = offsets.long()
    bag = E.searchsorted(starts, E.arange(input.shape[0], device=input.device),
                         right=True) - 1
    # the rows that take part: not padding, nor past the last offset of
    # ``include_last_offset``, which ends the last bag
    used: Tensor | None = None if padding_idx < 0 else input.ne(padding_idx)
    if include_last_offset and int(starts[-1]) < input.shape[0]:
        before_end = bag.lt(bags)
        used = before_end if used is None else used & before_end
    if used is not None:
        taken = used.nonzero().squeeze(1)
        bag = bag.index_select(0, taken)
        input = input.index_select(0, taken)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.index_select(0, taken)
    rows = core_embedding.embedding(weight, input, padding_idx, scale_grad_by_freq)
    if mode == "max":
        return _bag_max(rows, bag, bags)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    out = weight.new_zeros((bags, dim)).index_add(0, bag, rows)
    if mode == "mean":
        counts = E.bincount(bag, minlength=bags)
        out = out / counts.clamp(min=1).unsqueeze(1).to(out.dtype)
    return out


def _bag_max(rows: Tensor, bag: Tensor, bags: int) -> Tensor:
    """Each bag's elementwise maximum of its rows (zeros for an empty bag), taken from the
    first row holding it, as torch's loop takes it (and sends its gradient)."""
    n, dim = rows.shape
    spread = bag.unsqueeze(1).expand(n, dim)
    with no_grad():
        best = rows.new_zeros((bags, dim)).scatter_reduce(0, spread, rows, "amax",
                                                          include_self=False)
        order = E.arange(n, device=rows.device).unsqueeze(1).expand(n, dim)
        holding = E.where(rows == best.index_select(0, bag), order, n)
        first = E.full((bags, dim), n, dtype=E.int64, device=rows.device).scatter_reduce(
            0, spread, holding, "amin")
    picked = rows.gather(0, first.clamp(max=max(n - 1, 0))) if n else rows.new_zeros(
        (bags, dim)).index_add(0, bag, rows)
    return E.where(first < n, picked, 0.0)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """torch.nn.functional.one_hot: an int64 tensor of shape ``tensor.shape +
    (num_classes,)``, 1 at each value of the int64 ``tensor`` and 0 elsewhere
    (``num_classes`` -1: one more than the largest value)."""
    if tensor.dtype != E.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return E.zeros(*tensor.shape, num_classes, dtype=E.int64, device=tensor.device)
    if int(tensor.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(tensor.max()) + 1
    elif int(tensor.max()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = E.arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()
