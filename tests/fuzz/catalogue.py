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

from . import (
    catalogue_elementwise,
    catalogue_factories,
    catalogue_indexing,
    catalogue_pointwise,
    catalogue_products,
    catalogue_reductions,
    catalogue_shapes,
)
from .entries import Entry

# Primitives no public call of the catalogue reaches, and why.
NOT_REACHED: dict[str, str] = {}

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
                              "conj_physical": "adjoint"}

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
                         catalogue_factories)
    for entry in family.FAMILY.entries]


def by_op() -> dict[str, list[Entry]]:
    out: dict[str, list[Entry]] = {}
    for e in ENTRIES:
        out.setdefault(e.op, []).append(e)
    return out


__all__ = ["ENTRIES", "Entry", "NOT_REACHED", "REACHED_BY", "VALUES_NOT_COMPARED", "by_op"]
