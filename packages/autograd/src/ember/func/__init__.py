"""ember.func: composable function transforms with torch.func's API.

``grad``, ``grad_and_value``, ``vjp``, ``jacrev`` (reverse mode), ``jvp``, ``jacfwd``,
``hessian`` (forward mode, through the double-VJP identity of ``forward_ad``) and
``vmap`` (a loop over the mapped dimension). They nest: ``grad(grad(f))``,
``jacfwd(jacrev(f))``, ``vmap(grad(f))``, ``grad(vmap(f))``. ``functional_call`` runs a
module with parameters given as tensors, so that they can differentiate a model.
"""

from __future__ import annotations

from .forward import hessian, jacfwd, jvp
from .functional_call import functional_call
from .reverse import grad, grad_and_value, jacrev, vjp
from .vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "jvp", "jacfwd", "hessian", "vmap",
           "functional_call"]
