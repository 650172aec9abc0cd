"""Tests of ``schedlang.formats``, one file per format (``test_<format>.py``) and ``test_common.py``
for what every format shares: the table, the guesser, the shared path, the recipe."""
