"""A differential fuzzer: short random programs of public tensor calls, run in Ember and in
torch from the same inputs, compared step by step (values, dtypes, shapes, strides and
contiguity, requires_grad, gradients, exceptions); failures shrink to short reproducers.
``python -m tests.fuzz --help``; docs/compatibility.md."""
