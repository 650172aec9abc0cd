"""The differential fuzzer through the JAX target (``jax32``/``jax64``, see ``fuzzing/runner.py``).

A file of its own, collected after ``test_fuzz.py``: these checks run in this process
(a process that has started JAX must not fork, and ``check_isolated`` forks).
"""

import pytest
from fuzzing.generator import generate
from fuzzing.runner import check_program
from test_fuzz import _report

JAX_PROGRAMS = 16  # seeds 0 .. JAX_PROGRAMS-1 also through the JAX module (jit per schedule: ~1 s a program)


def test_fuzz_programs_agree_in_jax():
    """The module ``compile --target jax`` writes, under jit: int32/float32 and x64."""
    pytest.importorskip("jax")
    results = [check_program(generate(seed), budget=30.0, torch_checks=False, jax_checks=True)
               for seed in range(JAX_PROGRAMS)]
    assert sum(r.schedules for r in results) >= JAX_PROGRAMS
    assert not any(r.failures for r in results), _report(results)
