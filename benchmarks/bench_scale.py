"""Check and print cost of long schedules (run on demand: ``python benchmarks/bench_scale.py``).

Issue 31 item 4 asks for check and print in linear time, trig pieces as cheap as linear
ones; issue 27 for a cheap lowering per batch stage.  Measured in one run (medians of
``REPEATS`` runs, 2 for the 10,000-piece files), each row as a time and as a ratio to a
baseline measured in the same run:

1. ``check``: ``schedlang.compile`` of the file (lowering, the checks, the reference
   module), what ``schedlang check`` does before it prints its summary;
2. ``print``: ``emit(program, "torch")``, the text of ``compile --target torch`` (the
   program compiled once beforehand).

Files: 1,000 and 10,000 pieces of ``linear`` and of ``cosine`` (distinct values and lengths,
the cosines continuous), 200 distinct cosines, and a cosine on the token clock across a
768-stage Megatron batch ramp (``megatron.rampup_batch_size(16, 16, 20000000,
global_batch_size=12304)``) against the same schedule on a constant batch.  A file
holds at most ``MAX_FILE_BYTES``: the 10,000-piece files join ten ``let`` blocks of 1,000 pieces
(written when a ``>>`` sequence held at most 1,000 segments; ``limits.MAX_SEGMENTS`` is now
10,000, and ``bench_build.py`` times one chain of 10,000), each
block ten copies of 100 distinct segments (every piece still has its own place, so every
piece is printed on its own).  The per-piece ratio of 10,000 to 1,000 pieces shows whether
the cost is linear (1.0); trig/linear per piece whether a cosine costs what a line does.

Not collected by pytest (the file name does not start with test_).  No assertion on time.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import schedlang  # noqa: E402
from schedlang.codegen.emit import emit  # noqa: E402

REPEATS = int(os.environ.get("REPEATS", "3"))


def segments(kind: str, count: int, seed: int) -> list[str]:
    """``count`` segments of ``kind`` with distinct values and lengths, each starting where the
    one before it ends (no jump warnings)."""
    rng = random.Random(seed)
    out, value = [], 1.0
    for _ in range(count):
        end, length = round(rng.uniform(0.01, 0.99), 4), rng.randint(100, 5000)
        out.append(f"{kind}({value}, {end}, {length})")
        value = end
    return out


def chain(kind: str, count: int) -> str:
    return "schedule lr = " + "\n  >> ".join(segments(kind, count, 1)) + "\n"


def long_chain(kind: str, blocks: int) -> str:
    """``blocks`` x 1,000 pieces: 100 distinct segments (back to their start value, so the
    copies join without a jump), ten copies a block, ``blocks`` blocks."""
    base = segments(kind, 99, 2)
    last = base[-1].split("(")[1].split(",")[1].strip()
    base.append(f"{kind}({last}, 1.0, 321)")
    lines = ["let base = " + "\n  >> ".join(base)]
    lines.append("let block = " + " >> ".join(["base"] * 10))
    lines.append("schedule lr = " + " >> ".join(["block"] * blocks))
    return "\n".join(lines) + "\n"


RAMP = """param seq_len: int = 4096
batch = {batch}
schedule lr = warmup(linear, 2000) >> cosine(3e-4, 3e-5, 100e9tok) >> constant(3e-5)
"""
RAMP_768 = RAMP.format(batch="megatron.rampup_batch_size(16, 16, 20000000, global_batch_size=12304)")
CONSTANT = RAMP.format(batch="12304")


def median(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(source: str, repeats: int = REPEATS) -> tuple[float, float, int]:
    """(check seconds, print seconds, pieces of the schedule)."""
    check = median(lambda: schedlang.compile(source), repeats)
    program = schedlang.compile(source)
    printed = median(lambda: emit(program, "torch", "bench"), repeats)
    expr = program["lr"].expr
    return check, printed, len(expr.args) if expr.is_Piecewise else 1


def main() -> None:
    rows = {}
    files = [("linear x 1,000", chain("linear", 1000), REPEATS),
             ("cosine x 1,000", chain("cosine", 1000), REPEATS),
             ("cosine x 200 distinct", chain("cosine", 200), REPEATS),
             ("linear x 10,000", long_chain("linear", 10), 2),
             ("cosine x 10,000", long_chain("cosine", 10), 2),
             ("constant batch", CONSTANT, REPEATS),
             ("768-stage batch ramp", RAMP_768, REPEATS)]
    for name, source, repeats in files:
        rows[name] = measure(source, repeats)
    base_check, base_print, base_pieces = rows["linear x 1,000"]
    print(f"{'file':24} {'pieces':>7} {'check s':>9} {'print s':>9} {'check/piece':>12} "
          f"{'print/piece':>12}   (per piece: ratio to linear x 1,000)")
    for name, (check, printed, pieces) in rows.items():
        check_ratio = (check / pieces) / (base_check / base_pieces)
        print_ratio = (printed / pieces) / (base_print / base_pieces)
        print(f"{name:24} {pieces:7d} {check:9.2f} {printed:9.2f} {check_ratio:12.2f} {print_ratio:12.2f}")
    ramp, constant = rows["768-stage batch ramp"], rows["constant batch"]
    stages = len(schedlang.compile(RAMP_768).clock.stages)
    print(f"768-stage ramp / constant batch: check {ramp[0] / constant[0]:.1f}x, print "
          f"{ramp[1] / constant[1]:.1f}x; per stage {1e3 * (ramp[0] - constant[0]) / stages:.1f} ms "
          f"check, {1e3 * (ramp[1] - constant[1]) / stages:.1f} ms print ({stages} stages)")


if __name__ == "__main__":
    main()
