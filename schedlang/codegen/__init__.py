"""One generator per target, each a sympy printer subclass in its own module."""
