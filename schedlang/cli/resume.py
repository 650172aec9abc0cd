"""``schedlang resume``: the verdict of ``resume.check.resume_check`` as text or ``--json``."""

from __future__ import annotations

import sys

from ..errors import SchedlangError
from ..resume.check import ResumeVerdict, resume_check
from . import json_output
from .progress import progress


def run_command(state: str, new: str, was: str | None, params: dict, as_json: bool) -> int:
    """``schedlang resume``: exit 0 when ``new`` continues the run exactly, 1 when it does not,
    2 when that could not be decided (bad input raises ``SchedlangError``: 2 as well).

    Any other exception is a bug, reported as an error (exit 2): Python's own exit status for
    an uncaught exception is 1, which here would read as "does not continue"."""
    try:
        with progress(f"checking {new} against {state}"):
            verdict = resume_check(state, new, was=was, params=params)
    except SchedlangError:
        raise
    except Exception as exc:  # noqa: BLE001 - a crash must not exit 0 or 1
        raise SchedlangError(f"internal error while checking {state}: {type(exc).__name__}: "
                             f"{str(exc)[:300]}", hint="this is a bug in schedlang: please report it, "
                             "with what the checkpoint holds (not the file itself)") from None
    code = 0 if verdict.equivalent else 1 if verdict.different else 2
    for note in verdict.notes:
        print(f"warning: {note}", file=sys.stderr)
    if as_json:
        json_output.emit(json_document(state, new, was, verdict))
        return code
    for line in text_lines(state, new, was, verdict):
        print(line)
    return code


def text_lines(state: str, new: str, was: str | None, verdict: ResumeVerdict) -> list[str]:
    """The text report: every number says where it came from (the state, the optimizer's
    param groups, the original schedule, ``NEW``)."""
    origin = f"--was {was}" if verdict.original_from == "was" else "recovered from the state"
    lines = [f"state:    {state} ({verdict.described}; {verdict.kind})"]
    if verdict.key:
        lines.append(f"key:      {verdict.key} (where the scheduler state is in the checkpoint)")
    lines.append(f"original: {origin}" + (f": {_code(verdict.original_source)}"
                                          if verdict.original_from == "state" else ""))
    if verdict.state_params:
        shown = ", ".join(f"{k}={v}" for k, v in verdict.state_params.items())
        lines.append(f"params:   {shown} (saved in the state; the original's values)")
        lines.append(f"          a schedlang class built from {new} keeps its constructor's values "
                     "on load_state_dict, as compared here (load_state_dict(state, params=\"saved\") "
                     "keeps the saved ones: then give them with -D)")
    lines.append(f"step:     {verdict.step} (the first step the resumed run sets)")
    for name, count in (("samples", verdict.samples), ("tokens", verdict.tokens)):
        if count is not None:
            lines.append(f"{name + ':':<10}{count} (consumed before step {verdict.step}, "
                         "from the checkpoint)")
    if verdict.last_lr_from is not None:
        lines.append(f"last lr:  {verdict.last_lr!r} ({verdict.last_lr_from}: the lr last set)")
    else:
        lines.append(f"old lr:   {verdict.last_lr!r} (the original schedule at step {verdict.step}; "
                     "the state records no lr)")
    lines.append(f"new lr:   {verdict.new_lr!r} ({new} at step {verdict.step})")
    if verdict.clock is not None:
        lines.append(f"clock:    {verdict.clock}")
        lines += [f"          {line}" for line in verdict.time_map]
    lines += _restored_lines(verdict)
    if verdict.continues == "equivalent":
        lines.append(f"continues exactly: equal to the original at every step >= {verdict.step} "
                     f"(proven: {verdict.method})")
    elif verdict.continues == "different":
        ce = verdict.counterexample
        first = "first difference" if ce.earliest else "a difference (an earlier step was undecided)"
        after = (f", after the run's last step ({verdict.total - 1}: {verdict.total_from} is "
                 f"{verdict.total})" if verdict.after_end else "")
        lines.append(f"does not continue: {first} at step {ce.step}{after}: original {ce.a!r}, "
                     f"new {ce.b!r}")
    else:
        lines.append(f"unknown: {verdict.reason}")
    return lines


def _restored_lines(verdict: ResumeVerdict) -> list[str]:
    """What the framework that loads the state runs (SPEC §14): its rule, the saved values that
    win over NEW's, whether the restored run follows NEW, and how to make NEW take effect."""
    rule = verdict.restored
    if rule is None:
        return []
    flag = f" ({rule.flag})" if rule.flag else ""
    lines = [f"rule:     {rule.framework}{flag}: {rule.rule}"]
    lines += [f"wins:     {win}" for win in rule.wins]
    if verdict.follows == "refused":
        lines.append(f"restored: {rule.framework} stops at load: {rule.refused}")
    elif verdict.follows == "different":
        ce = verdict.run_counterexample
        lines.append(f"restored: does not follow NEW: first difference at step {ce.step}: restored "
                     f"run {ce.a!r}, new {ce.b!r}")
    elif verdict.follows == "equivalent":
        lines.append(f"restored: follows NEW at every step >= {verdict.step}")
    elif verdict.follows == "unknown":
        lines.append("restored: unknown: whether the restored run follows NEW could not be decided")
    else:
        lines.append("restored: not checked (see the warning)")
    if rule.fix and verdict.follows in ("different", "refused"):
        lines.append(f"fix:      {rule.fix}")
    return lines


def _code(source: str) -> str:
    """Recovered source on one line, without the comments an importer writes above it."""
    return " ".join(line.strip() for line in source.splitlines()
                    if line.strip() and not line.lstrip().startswith("#"))


def json_document(state: str, new: str, was: str | None, verdict: ResumeVerdict) -> dict:
    """``schedlang resume --json`` (``docs/cli.md``, "Machine-readable output")."""
    ce = verdict.counterexample
    counterexample = None if ce is None else {
        "step": ce.step, "original": ce.a, "new": ce.b, "original_exact": ce.a_exact,
        "new_exact": ce.b_exact, "earliest": ce.earliest}
    return {"schema": json_output.schema("resume"), "state": state, "kind": verdict.kind,
            "scheduler": verdict.described, "new": new, "was": was,
            "original_from": verdict.original_from,
            "original": verdict.original_source if verdict.original_from == "state" else None,
            "step": verdict.step, "last_lr": verdict.last_lr, "new_lr": verdict.new_lr,
            "verdict": verdict.status, "method": verdict.method, "reason": verdict.reason,
            "counterexample": counterexample, "checkpoint": verdict.extra, "notes": list(verdict.notes),
            "key": verdict.key, "last_lr_from": verdict.last_lr_from, "samples": verdict.samples,
            "tokens": verdict.tokens, "state_params": {k: str(v) for k, v in verdict.state_params.items()},
            "total": verdict.total, "after_end": verdict.after_end,
            "clock": verdict.clock, "time_map": list(verdict.time_map),
            "continues": verdict.continues, **_restored_json(verdict)}


def _restored_json(verdict: ResumeVerdict) -> dict:
    """The framework's rule and what the restored run does (``docs/cli.md``)."""
    rule, ce = verdict.restored, verdict.run_counterexample
    if rule is None:
        return {"framework": None, "rule": None, "flag": None, "restored_run": None, "follows": None,
                "run_counterexample": None, "wins": [], "fix": None, "refused": None}
    return {"framework": rule.framework, "rule": rule.rule, "flag": rule.flag, "restored_run": rule.run,
            "follows": verdict.follows,
            "run_counterexample": None if ce is None else {"step": ce.step, "restored": ce.a, "new": ce.b},
            "wins": [{"name": w.name, "saved": w.saved, "new": w.new} for w in rule.wins],
            "fix": rule.fix, "refused": rule.refused}
