"""Syntax tree to checked schedule: lowering (names, calls, ``>>``, ``for``), parameters and
their binding, what a number of steps may be, the closed-form check, where a fractional
duration comes from, and what ``schedlang check`` summarises.
May import: ``syntax``, ``core``, ``library``, ``errors``, ``limits``.
"""
