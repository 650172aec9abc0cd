"""Syntax tree to checked schedule: lowering (names, calls, ``>>``, ``for``), parameters and
their binding, what a number of steps may be, the closed-form check, where a fractional
duration comes from.  Nothing here runs generated code: what ``schedlang check`` reports
from values (``cli.analysis``) and the overflow probe (``runtime.reference``) live later.
May import: ``syntax``, ``core``, ``library``, ``errors``, ``limits``.
"""
