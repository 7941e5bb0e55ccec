"""torch.nn.utils.stateless: ``functional_call`` (``ember.func.functional_call``)."""

from ember.func import functional_call

__all__ = ["functional_call"]
