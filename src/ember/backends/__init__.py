"""``ember.backends``: backend switches that programs assign to (``allow_tf32`` and friends).

CuPy decides TF32 use itself; these flags are kept so programs that set them run
unchanged, and read back what was set.
"""

from __future__ import annotations

from types import SimpleNamespace

from ember.core.device import cuda_available

cuda = SimpleNamespace(
    matmul=SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                           allow_bf16_reduced_precision_reduction=True),
    is_built=cuda_available,
    flash_sdp_enabled=lambda: False,
)
cudnn = SimpleNamespace(allow_tf32=True, enabled=True, benchmark=False, deterministic=False,
                        is_available=lambda: False)
mps = SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
