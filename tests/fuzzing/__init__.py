"""Differential fuzzing of schedlang (see docs/testing.md).

* ``generator``: seeded, grammar-based generator of valid ``.sched`` programs.
* ``exact``: an evaluator of ``Schedule.expr`` with exact rationals and 50-digit
  mpmath, independent of ``schedlang.core.exact_eval`` (which is under test).
* ``runner``: evaluates one program every way schedlang offers and compares.
* ``pairs``: pairs of programs equal by construction / perturbed, for
  ``schedlang.equivalent``'s soundness property.

Used by ``tests/test_fuzz.py``, ``tests/test_equivalent_soundness.py`` and
``tools/fuzz.py``.
"""
