"""Reference pages generated from the code, so the docs cannot drift from it.

``docs/stdlib.md`` is ``stdlib_markdown()``; a test regenerates it and fails
when the committed file differs (run ``python -m schedlang.cli.docgen`` to update).
The built-ins come from ``stdlib.SCHEDULES``, the math functions from the rows of
``core.functions.FUNCTIONS``, the constants from ``stdlib.CONSTANTS`` and the calls of the run's
clock from ``clock_calls.CLOCK_CALLS``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.functions import FUNCTIONS
from ..library import stdlib
from ..library.clock_calls import CLOCK_CALLS, Role

INTRO = """\
# The standard library

Generated from `schedlang/library/stdlib.py` by `python -m schedlang.cli.docgen`; do not edit.

Values are absolute; `n`, `every`, `period`, `up`, `down` and `times` are durations in
steps (positive whole numbers once parameters are bound). A finite schedule holds its
end value `f(n)` from step `n` on unless something follows it with `>>`. `t` below is
the local step of the segment.

| call | duration | meaning |
|---|---|---|
"""

MATH_INTRO = f"""
## Math functions and constants

`{" ".join(f.name for f in FUNCTIONS)}`, constants `{"` and `".join(stdlib.CONSTANTS)}`.
`exp(x)` with one argument is the math function; `exp(v0, rate, n)` the schedule.
`min`/`max` take two or more arguments; `clamp(x, lo, hi)` is `min(max(x, lo), hi)`.
`floor`/`ceil` of a ratio of whole numbers are computed exactly in integer arithmetic.
"""

DURATIONS = {
    "constant": "∞, or n", "linear": "n", "cosine": "n", "poly": "n", "exp": "∞", "step": "∞",
    "multistep": "∞", "piecewise": "∞", "warmup": "n (only before `>>`)",
    "cooldown": "n (only after `>>`)", "inverse_sqrt": "∞",
    "cosine_restarts": "∞", "cyclic": "∞", "onecycle": "n", "repeat": "∞, or times × its length",
    "cycle": "∞", "stretch": "its length × factor", "rsqrt_decay": "∞", "noam": "∞",
}


CLOCK_INTRO = """
## The run's clock

The calls of the run's batch schedule and of the sample and token clocks (SPEC §12,
[tokens.md](tokens.md)); their names are the language's (no `param`, `let`, `def` or
`schedule` takes one).

| call | where it goes | meaning |
|---|---|---|
"""

#: Where a call of each role goes.
CLOCK_PLACES = {Role.ON_CLOCK: "a schedule", Role.BATCH: "`batch = ...`",
                Role.FROM_BATCH: "a schedule (with that batch schedule)"}


PICTURES_INTRO = """
## Pictures

Each built-in drawn by schedlang itself (`python tools/gen_pictures.py`) from the first
call of its row in the boundary table `tests/test_stdlib_values.py`; the
[gallery](gallery.md#standard-library) shows the call.
"""


def stdlib_markdown() -> str:
    rows, pictures = [], []
    for name, builtin in stdlib.SCHEDULES.items():
        doc = " ".join(builtin.doc.split()).replace("``", "`")
        rows.append(f"| `{builtin.signature()}` | {DURATIONS.get(name, '')} | {doc} |")
        pictures.append(f"### `{name}`\n\n![{name}](img/stdlib-{name}.png)\n")
    clock = [f"| `{call.signature()}` | {CLOCK_PLACES[call.role]} | "
             f"{' '.join(call.doc.split()).replace('``', '`')} |" for call in CLOCK_CALLS.values()]
    return (INTRO + "\n".join(rows) + "\n" + MATH_INTRO + CLOCK_INTRO + "\n".join(clock) + "\n"
            + PICTURES_INTRO + "\n" + "\n".join(pictures))


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[2]
    (root / "docs" / "stdlib.md").write_text(stdlib_markdown(), encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
