"""Time and peak memory of ``schedlang audit`` on long logs (run by hand, not by pytest).

    python benchmarks/bench_audit.py                  # 10**6 points: CSV, trainer_state.json, TensorBoard
    python benchmarks/bench_audit.py --points 100000  # quicker
    python benchmarks/bench_audit.py --only tensorboard  # one log

Each log holds one lr series of a warmup + cosine schedule, ``--points`` updates long, written
the way its tool writes it (a ``step,lr`` CSV with ``repr`` values; HF's ``trainer_state.json``
with ``json.dumps(indent=2, sort_keys=True)``; torch's ``SummaryWriter``).  For each: the audit
(``schedlang.audit``, CPU seconds, and tracemalloc's peak in a second run), against reading the same file with
the library alone and keeping what it read, as a script would (``csv.reader`` into a list,
``json.load``, TensorBoard's ``EventAccumulator`` with no sampling) and, for TensorBoard, its
event reader alone streaming the file (``LegacyEventFileLoader``, what the audit reads with,
keeping nothing: the cost of reading itself).  The audit runs twice there: as given (its series
listed from the first 10^5 events, then read) and with ``tag="lr"`` (one pass).  Each ratio
compares numbers measured in the same run.  No time is asserted.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import schedlang  # noqa: E402

FILE = """\
param total: int = 1000000 where total > 2000
schedule lr = warmup(linear, 2000) >> cosine(3e-4, 3e-5, total - 2000)
"""


def measured(work):
    """CPU seconds of one run, then tracemalloc's peak (MiB) of another (tracing slows Python
    several times over, so the two are not measured together)."""
    start = time.process_time()
    result = work()
    seconds = time.process_time() - start
    tracemalloc.start()
    try:
        work()
        return seconds, tracemalloc.get_traced_memory()[1] / 2**20, result
    finally:
        tracemalloc.stop()


def write_logs(folder: Path, points: int, schedule, with_tensorboard: bool):
    csv_path = folder / "lr.csv"
    with open(csv_path, "w") as handle:
        handle.write("step,lr\n")
        handle.writelines(f"{u},{schedule(u)!r}\n" for u in range(points))
    history = [{"epoch": u / points, "learning_rate": schedule(u), "loss": 1.0, "step": u + 1}
               for u in range(points)]
    state_path = folder / "trainer_state.json"
    state_path.write_text(json.dumps({"global_step": points, "log_history": history}, indent=2,
                                     sort_keys=True))
    del history
    logs = {"csv": (csv_path, lambda: list(csv.reader(open(csv_path)))),
            "hf-trainer-state": (state_path, lambda: json.load(open(state_path)))}
    if with_tensorboard:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
        from torch.utils.tensorboard import SummaryWriter

        with SummaryWriter(str(folder / "tb")) as writer:
            for u in range(points):
                writer.add_scalar("lr", schedule(u), u)
        logs["tensorboard"] = (folder / "tb", lambda: EventAccumulator(
            str(folder / "tb"), size_guidance={"scalars": 0}).Reload())
        logs["tensorboard --tag lr"] = (folder / "tb", lambda: _stream_events(folder / "tb"))
    return logs


def _stream_events(folder: Path) -> int:
    """TensorBoard's event reader alone over every event file: the scalars counted, none kept."""
    from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader

    count = 0
    for path in sorted(folder.rglob("*tfevents*")):
        for event in LegacyEventFileLoader(str(path)).Load():
            count += len(event.summary.value)
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--no-tensorboard", action="store_true")
    parser.add_argument("--only", default=None, help="one log: csv, hf-trainer-state or tensorboard")
    args = parser.parse_args()
    params = {"total": args.points}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sched = folder / "run.sched"
        sched.write_text(FILE)
        schedule = schedlang.load(sched, params)["lr"]
        logs = write_logs(folder, args.points, schedule, not args.no_tensorboard
                          and args.only in (None, "tensorboard"))
        print(f"{args.points:,} points | audit: CPU s, peak MiB | library alone: CPU s, peak MiB "
              "| time ratio")
        for name, (path, alone) in logs.items():
            if args.only is not None and name.split()[0] != args.only:
                continue
            tag = "lr" if name.endswith("--tag lr") else None
            seconds, peak, report = measured(lambda p=path, t=tag: schedlang.audit(sched, p, params=params,
                                                                                    tag=t))
            assert report.followed and report.matched == args.points, report.to_json()
            lib_seconds, lib_peak, _ = measured(alone)
            size = sum(f.stat().st_size for f in path.rglob("*")) if path.is_dir() else path.stat().st_size
            print(f"{name:<22} {size / 2**20:8.1f} MiB | {seconds:6.2f} s {peak:7.1f} MiB "
                  f"| {lib_seconds:6.2f} s {lib_peak:7.1f} MiB | {seconds / lib_seconds:5.2f}x",
                  flush=True)


if __name__ == "__main__":
    main()
