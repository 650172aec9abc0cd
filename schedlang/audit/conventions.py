"""Which update a logged value belongs to, by the convention of the logger that wrote it.

Updates are counted from 0: update ``u`` is the ``u``-th ``optimizer.step()``, and the file's
schedule at step ``u`` is the lr it should use (a torch scheduler built before training sets
``f(0)`` for the first update and ``f(u)`` after ``u`` calls of ``scheduler.step()``).  A
value logged at the logger's step ``n`` is the lr of update ``n + offset``.  Each row was
read from the framework's code and confirmed by running it (``tests/test_audit_conventions.py``
writes the logs with the real trainers); docs/audit.md shows the same table.
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import SchedlangError, did_you_mean


class Convention(NamedTuple):
    name: str
    offset: int
    what: str


CONVENTIONS = {c.name: c for c in (
    Convention("hf", -1, "transformers >= 4.51: the lr logged at global_step N is the one update "
               "N-1 used (read before lr_scheduler.step(), PR #36973)"),
    Convention("hf-before-4.51", 0, "transformers < 4.51: the lr logged at global_step N is the "
               "one update N uses (read after lr_scheduler.step())"),
    Convention("lightning", 0, "Lightning's LearningRateMonitor: logged on_train_batch_start, "
               "before the optimizer steps, at the count of updates done: the lr update N uses "
               "(once per micro-batch under accumulation, at the same step)"),
    Convention("megatron", 0, "Megatron's training log: the line for iteration N is printed "
               "after opt_param_scheduler.step(), so it shows the lr of the next update, N"),
    Convention("step", 0, "the value logged at step N is the lr update N used (a loop that logs "
               "get_last_lr() before scheduler.step())"),
)}


def find_convention(name: str) -> Convention:
    try:
        return CONVENTIONS[name]
    except KeyError:
        raise SchedlangError(f"--convention {name!r}: not a logger convention",
                             hint=did_you_mean(name, CONVENTIONS) or "one of " + ", ".join(CONVENTIONS)) \
            from None
