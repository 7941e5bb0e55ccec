"""The public calls a program's steps are drawn from: functions, methods, operators,
in-place methods and setitem, each an Entry that, given the program's tensors so far,
writes one call with arguments that fit them (most of the time: sometimes not, so that
errors are compared too).

The entries are written by op family in the catalogue_* modules and joined here in a fixed
order (a seeded run draws its steps by position in ENTRIES). The names come from the op
modules' FUNCTIONS and METHODS (the elementwise families are taken from them whole); the
valid arguments follow the op tests' sample tables (packages/tensor-core/tests/samples_*.py).
``test_fuzz`` checks that the entries reach every primitive of
``ember.core.dispatch.REGISTRY`` or that NOT_REACHED says why not.
"""

from __future__ import annotations

from ember.core.dispatch import REGISTRY

from . import (
    catalogue_elementwise,
    catalogue_factories,
    catalogue_indexing,
    catalogue_pointwise,
    catalogue_products,
    catalogue_reductions,
    catalogue_shapes,
    catalogue_training,
)
from .entries import Entry

# Primitives no public call of the catalogue reaches, and why.
_NN = ("public as torch.nn.functional's, which the nn package gives Ember: the catalogue "
       "takes it with nn; its op tests compare it with torch meanwhile")
NOT_REACHED: dict[str, str] = {
    **{name: _NN for name in (
        "gelu", "gelu_backward", "silu", "silu_", "silu_backward", "nll_loss_forward",
        "nll_loss_backward", "nll_loss2d_forward", "nll_loss2d_backward",
        "_scaled_dot_product_flash_attention_for_cpu",
        "_scaled_dot_product_flash_attention_for_cpu_backward", "avg_pool2d",
        "avg_pool2d_backward", "avg_pool3d", "avg_pool3d_backward", "_adaptive_avg_pool2d",
        "_adaptive_avg_pool2d_backward", "adaptive_max_pool2d", "adaptive_max_pool2d_backward")},
    **{name + suffix: _NN for suffix in ("", "_backward") for name in (
        "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d",
        "_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d",
        "upsample_linear1d", "upsample_bilinear2d", "upsample_bicubic2d", "upsample_trilinear3d",
        "_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa", "_upsample_lanczos2d_aa",
        "_adaptive_avg_pool3d")},
    **{name: "max pooling's fused backward: a program reaches it only where a backward step "
             "follows a pooling of an input that requires grad, which the CI budget does not "
             "draw; the op tests and the dispatch table's samples compare it with torch"
       for name in ("max_pool2d_with_indices_backward", "max_pool3d_with_indices_backward")},
    **{name: "dropout's mask: random, and torch's generator draws other numbers; programs "
             "call dropout with p of 0 or 1 or without training, which draw none; the op "
             "tests compare it with torch"
       for name in ("native_dropout", "native_dropout_backward")},
    **{name: "an optimizer's fused update of lists of tensors, which the catalogue's programs "
             "of tensor ops do not make (the optim package's steps will); "
             "test_core_fused_optimizers compares it with torch's kernel"
       for name in ("_fused_adam_", "_fused_adamw_", "_fused_sgd_", "_fused_adagrad_")},
    **{name: "an optimizer's one-pass step over lists of tensors, which the catalogue's "
             "programs of tensor ops do not make (the optim package's default paths do): "
             "test_core_optimizer_steps compares it with its reference, the optimizer tests "
             "with torch's"
       for name in ("_fused_rmsprop_", "_fused_adadelta_", "_fused_adamax_", "_fused_nadam_",
                    "_fused_radam_", "_fused_asgd_", "_fused_rprop_")},
    **{name: "a multi-tensor op over lists of tensors, which the catalogue's programs of "
             "single tensors do not make (the optimizers' foreach paths do): test_core_foreach "
             "compares every op and overload with torch's"
       for name in REGISTRY if name.startswith("_foreach_")},
    **{name + suffix: "a recurrent layer over all time steps, which nn's RNN, LSTM and GRU "
                      "call and the catalogue's programs of tensor ops do not: "
                      "test_core_recurrent compares it with torch's composition, test_nn_rnn "
                      "the layers with torch's"
       for suffix in ("", "_backward") for name in ("lstm_layer", "gru_layer", "rnn_layer")},
    "_softmax_backward_data": "softmax's fused backward, run where no graph of the gradient is "
                              "built: the programs' backward steps reach log_softmax's, not "
                              "this one; test_core_native.py compares it with torch",
}

# Primitives whose public name is another one's (for the coverage check's second look).
REACHED_BY: dict[str, str] = {"nuclear_norm": "norm", "to_copy": "to", "div_trunc": "div",
                              "median_dim": "median", "nanmedian_dim": "nanmedian",
                              "view_dtype": "view", "getitem": "__getitem__",
                              "index": "__getitem__", "index_put_": "__setitem__",
                              "permute_": "t_", "alias": "as_subclass",
                              "div_trunc_": "div_", "exponential": "exponential_",
                              "geometric": "geometric_", "cauchy": "cauchy_",
                              "log_normal": "log_normal_", "uniform": "uniform_",
                              "max_all": "max", "min_all": "min", "take_along_dim": "gather",
                              "conj_physical": "adjoint", "native_layer_norm": "layer_norm",
                              "_fused_rms_norm": "rms_norm", "native_group_norm": "group_norm",
                              "_native_batch_norm_legit_functional": "batch_norm",
                              "_native_batch_norm_legit_no_training": "batch_norm",
                              "convolution": "conv2d",
                              "max_pool2d_with_indices": "max_pool2d",
                              "max_pool3d_with_indices": "max_pool3d",
                              "native_layer_norm_backward": "layer_norm",
                              "_fused_rms_norm_backward": "rms_norm",
                              "native_group_norm_backward": "group_norm",
                              "native_batch_norm_backward": "batch_norm",
                              "embedding_dense_backward": "embedding",
                              "convolution_backward": "conv_transpose1d",
                              "sigmoid_backward": "sigmoid", "tanh_backward": "tanh"}

# Primitives whose values cannot match torch's: their results are compared by shape, dtype
# and strides only, and are not used by later steps.
VALUES_NOT_COMPARED: dict[str, str] = {
    **{name: "a random op: Ember's generator does not draw torch's numbers"
       for name in ("uniform", "normal", "bernoulli", "exponential", "geometric", "cauchy",
                    "log_normal", "multinomial", "poisson", "randint", "randperm")},
    "empty": "uninitialized memory",
    "resize_": "a grown tensor's new elements are uninitialized",
}

ENTRIES: list[Entry] = [
    entry for family in (catalogue_elementwise, catalogue_pointwise, catalogue_reductions,
                         catalogue_shapes, catalogue_indexing, catalogue_products,
                         catalogue_factories, catalogue_training)
    for entry in family.FAMILY.entries]


def by_op() -> dict[str, list[Entry]]:
    out: dict[str, list[Entry]] = {}
    for e in ENTRIES:
        out.setdefault(e.op, []).append(e)
    return out


__all__ = ["ENTRIES", "Entry", "NOT_REACHED", "REACHED_BY", "VALUES_NOT_COMPARED", "by_op"]
