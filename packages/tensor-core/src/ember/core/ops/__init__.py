"""Ember's primitives, one module per family; each lists its top-level FUNCTIONS and METHODS."""
