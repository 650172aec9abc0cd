"""``schedlang branch``: a cooldown branched from a trunk (``branch.certificate``), its
certificate as text or ``--json``, and ``resume --branch``'s verdict (``branch.resume``)."""

from __future__ import annotations

import sys

from ..branches import branch
from ..branches.certificate import UNIT_NAMES, Branch
from ..branches.resume import resume_branch
from ..errors import SchedlangError
from . import json_output
from .output_file import check_output, write_atomically
from .progress import progress
from .resume import json_document as resume_json
from .resume import text_lines as resume_lines


def run_command(args, params: dict, output_span=None) -> int:
    """Exit 0 when every claim is proven, 1 when one is disproven, 2 when one is unknown (a
    refused trunk raises ``SchedlangError``: 2 as well)."""
    shape, sep, length = args.cooldown.partition(":")
    if not sep:
        raise SchedlangError(f"--cooldown takes SHAPE:N, not {args.cooldown!r}",
                             hint="e.g. --cooldown sqrt:5000 or --cooldown linear:4.8e12tok")
    check_output(args.output, [args.trunk], output_span)
    with progress(f"branching {args.trunk} at {args.at}"):
        result = branch(args.trunk, args.at, shape.strip(), length.strip(), args.to,
                        schedule=args.schedule, params=params, format=args.format)
    text = result.config if result.config is not None else result.source
    code = 0 if result.proven else 1 if result.disproven else 2
    if args.output:
        write_atomically(args.output, text)
    if args.json:
        json_output.emit(json_document(result, args.output))
        return code
    if not args.output:
        sys.stdout.write(text + ("" if text.endswith("\n") else "\n") + "\n")
    for line in text_lines(result, args.output):
        print(line)
    return code


def text_lines(result: Branch, output: str | None) -> list[str]:
    """The certificate, one claim a line with the prover's verdict."""
    lines = [f"branch:  {result.trunk} ({result.schedule}) at {result.at.text}: step {result.step}"
             + _counts(result.tokens, result.samples, "consumed before it"),
             f"run:     {result.run} steps" + _counts(result.run_tokens, result.run_samples, "by its end")
             + f" (run = {result.run_start_text})"]
    if output:
        lines.append(f"wrote:   {output}" + (f" ({result.format})" if result.format else ""))
    lines.append("certificate:")
    for claim in result.claims + result.config_claims:
        lines.append(f"  {'ok ' if claim.proven else 'NO ' if claim.verdict.different else '?  '}"
                     f"{claim.what}: {claim.verdict}")
    if result.format == "hf-args":
        lines.append("note: the Trainer loads the checkpoint's base_lrs over learning_rate: resume from a "
                     "checkpoint whose learning_rate is this one")
    return lines


def _counts(tokens, samples, what: str) -> str:
    parts = [f"{count} {name}" for count, name in ((tokens, "tokens"), (samples, "samples"))
             if count is not None]
    return f" ({', '.join(parts)} {what})" if parts else ""


def json_document(result: Branch, output: str | None) -> dict:
    """``schedlang branch --json`` (``docs/cli.md``, "Machine-readable output")."""
    def claim(c):
        ce = c.verdict.counterexample
        return {"claim": c.what, "verdict": c.verdict.status, "method": c.verdict.method,
                "reason": c.verdict.reason, "step": None if ce is None else ce.step}

    return {"schema": json_output.schema("branch"), "trunk": result.trunk, "schedule": result.schedule,
            "at": result.at.text, "at_unit": UNIT_NAMES[result.at.unit], "step": result.step,
            "tokens": result.tokens, "samples": result.samples, "shape": result.shape,
            "length": result.length.text, "to": str(result.to), "run": result.run,
            "run_tokens": result.run_tokens, "run_samples": result.run_samples,
            "value_at_branch": result.value_at_branch, "proven": result.proven,
            "claims": [claim(c) for c in result.claims], "format": result.format,
            "config_claims": [claim(c) for c in result.config_claims],
            "source": result.source, "config": result.config, "output": output}


def resume_branch_command(state: str, new: str, was: str | None, params: dict, as_json: bool) -> int:
    """``schedlang resume --branch``: exit 0 when NEW leaves OLD only after the checkpoint with no
    jump (or does not leave it), 1 at a jump (its step and both values), 2 when undecided."""
    with progress(f"checking {new} as a branch of the run in {state}"):
        verdict = resume_branch(state, new, was=was, params=params)
    code = 0 if verdict.accepted else 1 if verdict.status == "jump" else 2
    if as_json:
        doc = resume_json(state, new, was, verdict.resume)
        doc.update({"schema": json_output.schema("resume"), "branch": {
            "verdict": verdict.status, "branch_point": verdict.branch_point, "jump_step": verdict.jump_step,
            "old": verdict.old, "new": verdict.new, "reason": verdict.reason}})
        json_output.emit(doc)
        return code
    lines = [line for line in resume_lines(state, new, was, verdict.resume)
             if not line.startswith(("does not continue", "continues exactly"))]
    if verdict.status == "continues":
        lines.append(f"branch:   none: NEW continues OLD exactly from step {verdict.resume.step}")
    elif verdict.status == "branch":
        ce = verdict.resume.counterexample
        lines.append(f"branch:   at step {verdict.branch_point}: NEW equals OLD at every step from "
                     f"{verdict.resume.step} to {verdict.branch_point} (no jump there) and leaves it from "
                     f"step {ce.step} (OLD {ce.a!r}, NEW {ce.b!r})")
    elif verdict.status == "jump":
        lines.append(f"jump:     at step {verdict.jump_step}: {verdict.reason}")
    else:
        lines.append(f"unknown: {verdict.reason}")
    for line in lines:
        print(line)
    return code
