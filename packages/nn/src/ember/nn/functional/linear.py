"""Linear maps: torch.nn.functional's linear (``x @ W^T + b``) and bilinear
(``x1^T A x2 + b``)."""

from __future__ import annotations

import ember.core as E
from ember.core import Tensor
from ember.core.dtypes import demangled_type_name
from ember.core.function_modes import public

__all__ = ["linear", "bilinear"]

@public
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """torch.nn.functional.linear: ``input @ weight.T + bias`` over the last dim of
    ``input`` (weight (out_features, in_features) or (in_features,), bias broadcasting to
    the result)."""
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                           f"{input.ndim}D and {weight.ndim}D")
    wt = weight.t()
    if bias is None:
        return input.matmul(wt)
    if input.ndim == 2:
        return E.addmm(bias, input, wt)
    if bias.ndim == 1 and input.is_contiguous():
        # torch folds the leading dims into one matrix product with the bias added in it
        flat = E.addmm(bias, input.reshape(-1, input.shape[-1]), wt)
        return flat.view(*input.shape[:-1], flat.shape[-1])
    return input.matmul(wt).add_(bias)


@public
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """torch.nn.functional.bilinear: ``y[..., o] = sum_ij input1[..., i] weight[o, i, j]
    input2[..., j] + bias[o]``; the inputs share their leading dims."""
    tensors = [("input1", input1), ("input2", input2), ("weight", weight)]
    if bias is not None:
        tensors.append(("bias", bias))
    if any(t.dtype != input1.dtype for _, t in tensors):
        raise RuntimeError("All tensors must have the same dtype, got "
                           + ", ".join(f"{n}: {demangled_type_name(t.dtype)}" for n, t in tensors))
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    if input1.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    for i, (a, b) in enumerate(zip(input1.shape[:-1], input2.shape[:-1])):
        if a != b:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: "
                               f"got {a} and {b}")
    for name, x, dim in (("input1", input1, 1), ("input2", input2, 2)):
        if x.size(-1) != weight.size(dim):
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got "
                               f"{x.size(-1)} but expected {weight.size(dim)}")
    out_features, in1, in2 = weight.shape
    if bias is not None and bias.size(0) != out_features:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.size(0)} but expected {out_features}")
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    # (B, i) @ (i, o*j) -> (B, o, j), then each row of it times x2: (B, o)
    left = x1.matmul(weight.permute(1, 0, 2).reshape(in1, out_features * in2))
    out = E.bmm(left.view(-1, out_features, in2), x2.unsqueeze(2)).squeeze(2)
    out = out.reshape(*input1.shape[:-1], out_features)
    return out if bias is None else out + bias
