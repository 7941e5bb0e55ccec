"""VJPs of interpolation (``upsample_*``, ``_upsample_nearest_exact*``).

With no graph to build, each runs its op's backward primitive from the input's size and
the op's params (torch saves nothing else). Where a graph is built (grad of grad,
forward mode through the double VJP), the same gradient is written with Ember ops: an
interpolation is linear and separable, so its VJP is the gradient multiplied along each
resized dim by that dim's (out, in) interpolation matrix, whose own derivative is the
interpolation again.
"""

from __future__ import annotations

from typing import Any

import ember.core as E
from ember.core.dispatch import dispatch, grad_mode
from ember.core.ops.interpolation import BACKWARD_OPS, FORMS, Form, matrix
from ember.core.ops.interpolation_taps import opmath
from ember.core.tensor import Tensor

from .formula import Formula

Grads = tuple[Any, ...]


def _matrix(form: Form, size: int, out: int, params: dict[str, Any], scale: float | None,
            like: Tensor) -> Tensor:
    m = matrix(form, size, out, params.get("align_corners", False), scale,
               opmath(like.dtype.np))
    return E.from_numpy(m).to(like.device)


def _composite(form: Form, g: Tensor, size: tuple[int, ...],
               params: dict[str, Any]) -> Tensor:
    gz = g.float() if g.dtype in (E.float16, E.bfloat16) else g
    out = params["output_size"]
    for d, scale in enumerate(form.scales(params)):
        axis = 2 + d
        m = _matrix(form, size[axis], out[d], params, scale, gz)
        gz = (gz.transpose(axis, -1) @ m).transpose(axis, -1)
    return gz.to(g.dtype)


def _vjp(name: str) -> Any:
    form = FORMS[name]
    backward = BACKWARD_OPS[name]

    def vjp(n: Any, g: Tensor) -> Grads:
        size = tuple(n.inputs[0].shape)
        if not grad_mode.enabled:
            return (dispatch(backward, (g,), {**n.params, "input_size": size}),)
        return (_composite(form, g, size, n.params),)

    return vjp


def _node_name(name: str) -> str:
    """torch's node name: ``UpsampleNearestExact2DBackward0``, ``UpsampleBilinear2DAaBackward0``
    (a capital D)."""
    words = [w.capitalize() for w in name.split("_") if w]
    return "".join(w[:-1] + "D" if w[-2:] in ("1d", "2d", "3d") else w for w in words) + \
        "Backward0"


FORMULAS: dict[str, Formula] = {
    name: Formula(_vjp(name), (), name=_node_name(name)) for name in FORMS}
