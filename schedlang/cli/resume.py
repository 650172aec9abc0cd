"""``schedlang resume``: the verdict of ``resume.check.resume_check`` as text or ``--json``."""

from __future__ import annotations

import sys

from ..resume.check import ResumeVerdict, resume_check
from . import json_output
from .progress import progress


def run_command(state: str, new: str, was: str | None, params: dict, as_json: bool) -> int:
    """``schedlang resume``: exit 0 when ``new`` continues the run exactly, 1 when it does not,
    2 when that could not be decided (bad input raises ``SchedlangError``: 2 as well)."""
    with progress(f"checking {new} against {state}"):
        verdict = resume_check(state, new, was=was, params=params)
    code = 0 if verdict.equivalent else 1 if verdict.different else 2
    for note in verdict.notes:
        print(f"warning: {note}", file=sys.stderr)
    if as_json:
        json_output.emit(json_document(state, new, was, verdict))
        return code
    origin = f"--was {was}" if verdict.original_from == "was" else "recovered from the state"
    print(f"state:    {state} ({verdict.described}; {verdict.kind})")
    print(f"original: {origin}" + (f": {verdict.original_source.strip()}"
                                   if verdict.original_from == "state" else ""))
    print(f"step:     {verdict.step} (the first step the resumed run sets)")
    print(f"last lr:  {verdict.last_lr!r} (the lr the state last set)")
    print(f"new lr:   {verdict.new_lr!r} ({new} at step {verdict.step})")
    if verdict.equivalent:
        print(f"continues exactly: equal to the original at every step >= {verdict.step} "
              f"(proven: {verdict.method})")
    elif verdict.different:
        ce = verdict.counterexample
        first = "first difference" if ce.earliest else "a difference (an earlier step was undecided)"
        print(f"does not continue: {first} at step {ce.step}: original {ce.a!r}, new {ce.b!r}")
    else:
        print(f"unknown: {verdict.reason}")
    return code


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
            "counterexample": counterexample, "checkpoint": verdict.extra, "notes": list(verdict.notes)}
