"""Render ``docs/atlas.md``: every pair of namesake schedules across libraries, proven equal or not.

The families and each library's call are in ``atlas_pairs``; every verdict on the page
is computed here by ``schedlang.equivalent`` (none is written by hand), so the page
says what the prover says today: "= proven", "≠ from step k (a vs b)" with the
earliest differing step, or "unknown" with the prover's reason.
``tests/test_atlas.py`` regenerates the page and fails when the committed file
differs; ``python tools/gen_atlas.py`` writes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .atlas_pairs import FAMILIES, SYMBOLIC_PARAMS, Entry, Family

ATLAS = Path(__file__).resolve().parents[2] / "docs" / "atlas.md"

_VERDICTS: dict[tuple[str, str], Outcome] = {}


@dataclass(frozen=True)
class Outcome:
    status: str                  # "equivalent" | "different" | "unknown"
    step: int | None = None      # the earliest differing step
    a: float | None = None
    b: float | None = None
    reason: str = ""
    params: str = ""             # the parameter values of a counterexample found by search

    @property
    def cell(self) -> str:
        """The matrix cell: ``=``, ``≠ k`` or ``?``."""
        return {"equivalent": "=", "unknown": "?"}.get(self.status, f"≠ {self.step}")

    @property
    def text(self) -> str:
        """The verdict in words, the left value first."""
        if self.status == "equivalent":
            return "= proven"
        if self.status == "unknown":
            return f"unknown ({self.reason})"
        a, b = numbers(self.a, self.b)
        return f"≠ from step {self.step} ({a} vs {b})"


def verdict(a: str, b: str) -> Outcome:
    """``schedlang.equivalent(a, b)``, computed once per run for each pair of calls."""
    key = (a, b)
    if key not in _VERDICTS:
        import schedlang

        v = schedlang.equivalent(a, b)
        if v.status == "different":
            ce = v.counterexample
            chosen = ", ".join(f"{k} = {v}" for k, v in sorted((ce.params or {}).items()))
            _VERDICTS[key] = Outcome("different", ce.step, float(ce.a), float(ce.b), params=chosen)
        elif v.status == "equivalent":
            _VERDICTS[key] = Outcome("equivalent")
        else:
            _VERDICTS[key] = Outcome("unknown", reason=" ".join(str(v.reason).split()))
    return _VERDICTS[key]


def numbers(a: float, b: float) -> tuple[str, str]:
    """Both values with the fewest significant digits (at least 4) that tell them apart; when
    both are nonzero decimals, trailing zeros are kept so that they line up digit for digit."""
    for digits in range(4, 18):
        x, y = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if x != y:
            if a and b and "e" not in x + y:
                x, y = f"{a:#.{digits}g}", f"{b:#.{digits}g}"
            return x, y
    return repr(a), repr(b)


def describe(outcome: Outcome, family: Family) -> str:
    """The verdict, saying so when the first difference comes after the training run."""
    late = outcome.status == "different" and family.steps is not None and outcome.step >= family.steps
    return outcome.text + (f", after the last training step ({family.steps - 1})" if late else "")


def flipped(o: Outcome) -> Outcome:
    """The same verdict with the two sides swapped."""
    return Outcome(o.status, o.step, o.b, o.a, o.reason, o.params)


def classes(names: list[str], pairs: dict[tuple[str, str], Outcome]) -> list[list[str]]:
    """Libraries grouped so that every pair inside a group is proven equal, in page order.

    A group only grows by a library proven equal to *each* member (never by transitivity),
    so a group is exactly what the verdicts show."""
    def proven(a: str, b: str) -> bool:
        o = pairs.get((a, b)) or pairs[(b, a)]
        return o.status == "equivalent"

    groups: list[list[str]] = []
    for name in names:
        home = next((g for g in groups if all(proven(name, m) for m in g)), None)
        if home is None:
            groups.append([name])
        else:
            home.append(name)
    return groups


def primary(family: Family, library: str) -> Entry:
    return next(e for e in family.entries if e.library == library)


def _code(text: str) -> str:
    """Inline code inside a table cell (``|`` would end the cell)."""
    return "`" + text.replace("|", "\\|") + "`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_family(family: Family) -> list[str]:
    entries = family.entries
    reference = entries[0]
    out = [f"## {family.title}", "", f"The schedule: {family.canonical}.", ""]
    out += ["| library | call | vs `" + reference.library + "` | mapping, and why it differs |",
            "|---|---|---|---|"]
    for e in entries:
        result = "(reference)" if e is reference else describe(verdict(reference.call, e.call), family)
        out.append(f"| {e.library} | {_code(e.call)} | {_cell(result)} | {_cell(e.note)} |")
    out.append("")
    if family.absent:
        out += [f"No built-in schedule of this family: {family.absent}.", ""]

    names = [e.library for e in entries]
    out += ["Every pair (row vs column): `=` proven equal, `≠ k` different from step `k` on, "
            "`?` unknown.", ""]
    out.append("| | " + " | ".join(names) + " |")
    out.append("|---" * (len(names) + 1) + "|")
    for i, row in enumerate(entries):
        cells = []
        for j, col in enumerate(entries):
            if i == j:
                cells.append("·")
            else:
                first, second = (row, col) if i < j else (col, row)
                cells.append(verdict(first.call, second.call).cell)
        out.append(f"| **{row.library}** | " + " | ".join(cells) + " |")
    out.append("")

    pairs = {(a.library, b.library): verdict(a.call, b.call)
             for i, a in enumerate(entries) for b in entries[i + 1:]}
    groups = classes(names, pairs)
    for group in groups:
        if len(group) > 1:
            out += ["Proven equal, every pair: " + ", ".join(group) + ".", ""]
    lines = []
    for gi, first in enumerate(groups):
        for second in groups[gi + 1:]:
            outcomes = {pairs[(a, b)] if (a, b) in pairs else flipped(pairs[(b, a)])
                        for a in first for b in second}
            if len(outcomes) == 1:  # one verdict for all the pairs between two groups: say it once
                both = f"{' = '.join(first)} vs {' = '.join(second)}"
                lines.append(f"- {both}: {describe(outcomes.pop(), family)}")
                continue
            for a in first:
                for b in second:
                    o = pairs[(a, b)] if (a, b) in pairs else flipped(pairs[(b, a)])
                    lines.append(f"- {a} vs {b}: {describe(o, family)}")
    if lines:
        out += ["Not proven equal (the left side's value first):", "", *lines, ""]

    if family.symbolic:
        out += render_symbolic(family)
    if family.pitfalls:
        out += ["Pitfalls: mappings written by mistake or left at a library's defaults, each against "
                "that library's mapping above.", "",
                "| library | what changes | call | vs the mapping above | why |", "|---|---|---|---|---|"]
        for p in family.pitfalls:
            result = describe(verdict(primary(family, p.library).call, p.call), family)
            cells = [p.library, _cell(p.label), _code(p.call), _cell(result), _cell(p.note)]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return out


def program(call: str) -> str:
    """A symbolic row's call as a program that declares the parameters it uses."""
    return "\n".join([*SYMBOLIC_PARAMS, f"schedule lr = {call}"])


def render_symbolic(family: Family) -> list[str]:
    """The same mappings for every parameter value, each against the reference (not every pair:
    a proof for all values costs more than one for numbers)."""
    reference, *rest = family.symbolic
    out = ["For every peak, warmup and total (`" + "`, `".join(SYMBOLIC_PARAMS) + "`), each against "
           f"`{reference.call}`:", "", "| library | call | for every value |", "|---|---|---|"]
    reasons: list[str] = []
    for e in rest:
        outcome = verdict(program(reference.call), program(e.call))
        if outcome.status == "unknown":
            reasons += [outcome.reason] if outcome.reason not in reasons else []
            text = f"unknown ({reasons.index(outcome.reason) + 1})"
        elif outcome.status == "different":
            text = f"{outcome.text} with {outcome.params}"
        else:
            text = outcome.text
        out.append(f"| {e.library} | {_code(e.call)} | {_cell(text)} |")
    out.append("")
    for i, reason in enumerate(reasons):
        out += [f"({i + 1}) The prover: {reason}.  The rows above decide these libraries at one "
                "setting of the numbers.", ""]
    return out


def render() -> str:
    out = [
        "# Parity atlas",
        "",
        "<!-- Generated by `python tools/gen_atlas.py` from tests/anchors/atlas_pairs.py; do not edit. -->",
        "",
        "The same schedule in every library that has it: for each family, one schedule",
        "(peak `1e-3`, warmup 100 steps, 1000 steps in all, unless the family says otherwise)",
        "written with each library's preset under that library's own keywords, with the mapping",
        "that comes closest, and every pair compared by `schedlang.equivalent`",
        "([how the prover works](verify.md)).  A verdict is either a proof (`= proven`: equal at",
        "every step `t >= 0`, past the end of training included) or the earliest step where the",
        "two differ, with both values; `unknown` is what the prover cannot decide yet.  Nothing",
        "on this page is written by hand except the calls and the notes: the verdicts are",
        "recomputed by `tests/test_atlas.py`, which fails when this page is stale.",
        "",
        "Every preset equals its library's real code at every step (the conformance tests,",
        "[cookbook](cookbook.md)), so a difference here is a difference between the libraries.",
        "Step `t` is the value used by the `t`-th optimizer step, from 0 (SPEC §1); a run of",
        "1000 steps uses `t = 0 .. 999`, so a difference from step 1000 on never reaches training.",
        "",
    ]
    for family in FAMILIES:
        out += render_family(family)
    return "\n".join(out).rstrip() + "\n"
