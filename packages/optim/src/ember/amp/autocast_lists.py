"""Autocast's op lists, as data: torch's lists by device type, mapped to Ember's ops.

torch registers a cast policy per ATen op and device type (aten/src/ATen/autocast_mode.h
and autocast_mode.cpp, torch 2.13): the CUDA lists (shared with XPU) and the CPU lists.
Ember applies them at two places:

* ``PRIMITIVES``: the dispatcher's autocast step casts the operands of these primitives
  (torch's op maps to one Ember primitive, or several public names share one primitive
  with the same policy);
* ``PUBLIC``: public functions whose torch op is one unit but whose Ember body is a
  composite of primitives, or several torch ops with different policies that share an
  Ember primitive (``mv`` and ``matmul`` both run the ``matmul`` primitive). They are
  cast at their public name, then run with autocast off inside, as torch runs a listed
  op below its autocast key. ``OPAQUE`` there means torch's op is in no list and its
  kernel casts nothing: Ember's composite runs in the dtypes it was given.

An op in no list runs as it is, with autocast still on for the primitives it runs.
"""

from __future__ import annotations

__all__ = ["LOWER", "FP32", "FP32_SET_OPT_DTYPE", "FP32_APPEND_DTYPE", "PROMOTE", "OPAQUE",
           "BANNED", "TORCH_CUDA", "TORCH_CPU", "PRIMITIVES", "PUBLIC", "BANNED_MESSAGE"]

LOWER = "lower_precision_fp"  # cast floating operands to the region's dtype
FP32 = "fp32"  # cast floating operands to float32
FP32_SET_OPT_DTYPE = "fp32_set_opt_dtype"  # run in float32 unless a dtype was given
FP32_APPEND_DTYPE = "fp32_append_dtype"  # norm: run in float32
PROMOTE = "promote"  # cast floating operands to the widest of them
OPAQUE = "opaque"  # no cast; the composite's primitives run without autocast
BANNED = "banned"  # raises (binary_cross_entropy under CUDA autocast)

BANNED_MESSAGE = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using "
    "torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast.")

# ---------------------------------------------------------------- torch's lists (ATen names)

TORCH_CUDA: dict[str, tuple[str, ...]] = {
    LOWER: (
        "_convolution", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d",
        "conv_transpose2d", "conv_transpose3d", "convolution", "prelu", "addmm", "addmv",
        "addr", "matmul", "einsum", "mm", "mv", "linalg_vecdot", "linear", "addbmm", "baddbmm",
        "bmm", "chain_matmul", "linalg_multi_dot", "_thnn_fused_lstm_cell",
        "_thnn_fused_gru_cell", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
        "_scaled_dot_product_flash_attention", "scaled_dot_product_attention",
        "cudnn_convolution", "cudnn_convolution_transpose", "_cudnn_rnn"),
    FP32: (
        "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
        "reciprocal", "rsqrt", "sinh", "tan", "pow", "softplus", "layer_norm",
        "native_layer_norm", "rms_norm", "group_norm", "frobenius_norm", "nuclear_norm",
        "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss", "nll_loss",
        "nll_loss2d", "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss",
        "huber_loss", "mse_loss", "margin_ranking_loss", "multilabel_margin_loss",
        "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
        "binary_cross_entropy_with_logits", "dist", "pdist", "cdist", "renorm", "logsumexp",
        "upsample_nearest1d", "_upsample_nearest_exact1d", "upsample_nearest2d",
        "_upsample_nearest_exact2d", "upsample_nearest3d", "_upsample_nearest_exact3d",
        "upsample_linear1d", "upsample_bilinear2d", "_upsample_bilinear2d_aa",
        "upsample_trilinear3d", "upsample_bicubic2d", "_upsample_bicubic2d_aa"),
    FP32_SET_OPT_DTYPE: (
        "prod", "softmax", "log_softmax", "cumprod", "cumsum", "linalg_vector_norm",
        "linalg_matrix_norm", "sum"),
    FP32_APPEND_DTYPE: ("norm",),
    PROMOTE: (
        "addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "vdot", "grid_sampler",
        "index_put", "tensordot", "scatter_add"),
    BANNED: ("binary_cross_entropy",),
}

TORCH_CPU: dict[str, tuple[str, ...]] = {
    LOWER: (
        "conv1d", "conv2d", "conv3d", "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm",
        "_addmm_activation", "addbmm", "linear", "_convolution", "matmul", "conv_tbc",
        "mkldnn_rnn_layer", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
        "prelu", "scaled_dot_product_attention", "_native_multi_head_attention"),
    FP32: (
        "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "quantile",
        "nanquantile", "stft", "cdist", "grid_sampler_2d", "_grid_sampler_2d_cpu_fallback",
        "grid_sampler_3d", "trace", "view_as_complex", "cholesky", "cholesky_inverse",
        "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr", "pinverse", "max_pool3d",
        "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d", "reflection_pad1d",
        "reflection_pad2d", "replication_pad1d", "replication_pad2d", "replication_pad3d",
        "mse_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d", "hinge_embedding_loss",
        "poisson_nll_loss", "smooth_l1_loss", "cross_entropy_loss", "l1_loss", "huber_loss",
        "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
        "ctc_loss", "kl_div", "multilabel_margin_loss", "binary_cross_entropy_with_logits",
        "fft_fft", "fft_ifft", "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft",
        "fft_irfft", "fft_rfft2", "fft_irfft2", "fft_rfftn", "fft_irfftn", "fft_hfft",
        "fft_ihfft", "linalg_cond", "linalg_matrix_rank", "linalg_solve", "linalg_cholesky",
        "linalg_svdvals", "linalg_eigvals", "linalg_eigvalsh", "linalg_inv",
        "linalg_householder_product", "linalg_tensorinv", "linalg_tensorsolve",
        "fake_quantize_per_tensor_affine", "geqrf", "_lu_with_info", "qr", "svd",
        "triangular_solve", "fractional_max_pool2d", "fractional_max_pool3d",
        "adaptive_max_pool3d", "multilabel_margin_loss_forward", "linalg_qr",
        "linalg_cholesky_ex", "linalg_svd", "linalg_eig", "linalg_eigh", "linalg_lstsq",
        "linalg_inv_ex"),
    PROMOTE: ("stack", "cat", "index_copy"),
}

# ---------------------------------------------------------------- Ember's primitives

_MATMULS = ("convolution", "matmul", "addmm", "addbmm", "einsum",
            "_scaled_dot_product_flash_attention_for_cpu")

_CUDA_FP32 = (
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
    "reciprocal", "rsqrt", "sinh", "tan", "pow",
    # torch.square is pow(x, 2) in torch, so it lands on the pow kernel
    "square",
    "native_layer_norm", "_fused_rms_norm", "native_group_norm", "nuclear_norm",
    "nll_loss_forward", "nll_loss2d_forward", "dist", "logsumexp",
    "upsample_nearest1d", "_upsample_nearest_exact1d", "upsample_nearest2d",
    "_upsample_nearest_exact2d", "upsample_nearest3d", "_upsample_nearest_exact3d",
    "upsample_linear1d", "upsample_bilinear2d", "_upsample_bilinear2d_aa",
    "upsample_trilinear3d", "upsample_bicubic2d", "_upsample_bicubic2d_aa")

PRIMITIVES: dict[str, dict[str, str]] = {
    "cuda": {
        **dict.fromkeys(_MATMULS, LOWER),
        # nn.LSTM/GRU/RNN run cuDNN's RNN, which autocast casts to float16
        **dict.fromkeys(("lstm_layer", "gru_layer", "rnn_layer"), LOWER),
        **dict.fromkeys(_CUDA_FP32, FP32),
        **dict.fromkeys(("prod", "softmax", "log_softmax", "cumprod", "cumsum", "sum"),
                        FP32_SET_OPT_DTYPE),
        "norm": FP32_APPEND_DTYPE,
        **dict.fromkeys(("addcdiv", "addcmul", "atan2", "cross", "vdot", "index_put",
                         "tensordot", "scatter_add"), PROMOTE),
    },
    "cpu": {
        **dict.fromkeys(_MATMULS, LOWER),
        # torch's tensordot is mm of reshaped operands: the mm is cast
        "tensordot": LOWER,
        # nn.LSTM runs mkldnn_rnn_layer (listed); torch's CPU RNN and GRU kernels decompose
        # into linear (listed) for RNN, into ops of no list for GRU
        "lstm_layer": LOWER,
        "rnn_layer": LOWER,
        **dict.fromkeys(("avg_pool3d", "polar", "prod", "trace", "max_pool3d_with_indices",
                         "_adaptive_avg_pool3d", "nll_loss_forward", "nll_loss2d_forward"),
                        FP32),
        **dict.fromkeys(("cat", "stack", "index_copy"), PROMOTE),
    },
}

# ---------------------------------------------------------------- public names

# paths from the ember top level ("nn.functional.mse_loss"); Tensor methods with the
# same policy are found by name beside them ("Tensor.softmax")
_LOSSES = ("poisson_nll_loss", "cosine_embedding_loss", "hinge_embedding_loss", "kl_div",
           "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss", "margin_ranking_loss",
           "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
           "multi_margin_loss", "binary_cross_entropy_with_logits", "nll_loss")
_F = "nn.functional."

# matrix products and convolutions at their public names: their wrappers check that the
# operands share a dtype before the primitive (and its autocast step) sees them, so
# bfloat16 activations meeting float32 weights must be cast there
_PRODUCTS = tuple(p for n in ("addmm", "addbmm", "baddbmm", "bmm", "mm", "matmul")
                  for p in (n, "Tensor." + n)) + (
    "Tensor.__matmul__", "Tensor.__rmatmul__", "einsum", "conv1d", "conv2d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "convolution",
    "nn.functional.conv_transpose1d", "nn.functional.conv_transpose2d",
    "nn.functional.conv_transpose3d")

PUBLIC: dict[str, dict[str, str]] = {
    "cuda": {
        **dict.fromkeys(_PRODUCTS, LOWER),
        **{_F + n: LOWER for n in ("linear", "prelu", "scaled_dot_product_attention")},
        **dict.fromkeys(("mv", "addmv", "Tensor.mv", "Tensor.addmv"), LOWER),
        **{_F + n: FP32 for n in (*_LOSSES, "softplus", "cosine_similarity", "pdist")},
        _F + "binary_cross_entropy": BANNED,
        # their wrappers check dtypes before the primitive: norm (fp32_append_dtype) and
        # nuclear_norm refuse float16, the norms' weights must match their input
        **dict.fromkeys(("layer_norm", "group_norm", "rms_norm", "norm", "Tensor.norm"), FP32),
        **dict.fromkeys((_F + "softmax", _F + "log_softmax", "softmax", "log_softmax",
                         "Tensor.softmax", "Tensor.log_softmax"), FP32_SET_OPT_DTYPE),
        **dict.fromkeys(("dot", "Tensor.dot", _F + "bilinear", _F + "grid_sample",
                         "index_put", "Tensor.index_put", "scatter_add", "Tensor.scatter_add",
                         "cross", "Tensor.cross", "tensordot"), PROMOTE),
    },
    "cpu": {
        **dict.fromkeys(_PRODUCTS, LOWER),
        **{_F + n: LOWER for n in ("linear", "prelu", "scaled_dot_product_attention")},
        # its wrapper takes float32 and float64 only
        "polar": FP32,
        # torch's CPU lists have neither mv, addmv nor dot: only matmul, mm...
        **dict.fromkeys(("mv", "addmv", "dot", "Tensor.mv", "Tensor.addmv", "Tensor.dot",
                         _F + "bilinear"), OPAQUE),
        **{_F + n: FP32 for n in (*_LOSSES, "cross_entropy", "ctc_loss", "binary_cross_entropy",
                                  "grid_sample", "adaptive_max_pool3d", "max_unpool2d",
                                  "max_unpool3d", "fractional_max_pool2d",
                                  "fractional_max_pool3d")},
        # F.pad: fp32 for the reflect and replicate modes (see autocast_mode._pad_policy)
        _F + "pad": "pad",
        **dict.fromkeys(("cat", "stack", "index_copy", "Tensor.index_copy"), PROMOTE),
    },
}
