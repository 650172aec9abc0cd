"""``schedlang branch``: a cooldown branched from a trunk, and its certificate (SPEC §14).

WSD runs keep one stable trunk and branch a cooldown from a checkpoint.  Written by hand, a
branch can differ from the trunk before the checkpoint, jump at it, or reach its floor before
or after the run ends.  Here the branch is written once, in the language, as the trunk cut at
the branch point and cooled down from the value it holds there::

    schedule lr = (TRUNK) for C >> cooldown(SHAPE, N, F)
    run = C + N

and each claim of its certificate is a proof of the prover (``verify.equivalent`` over a
range of steps), never a sample:

1. the branch equals the trunk at every step before the branch point;
2. no jump: its value at the branch point is the trunk's, exactly;
3. it reaches ``F`` at step ``run`` (the run's end, the value a checkpoint written there
   holds) and holds it.

On the token (or sample) clock the branch point is the first step whose consumed-before count
reaches ``C`` (section 12's rule); the branch is cut at that step's count, so that the
cooldown's first step reads it at local 0 (no jump), and the run ends ``N`` after it.  A trunk
read after its step (OLMo-core in tokens) cut there ends with the value of the update before the
branch step; where its lr changes at the branch step (a batch change of OLMo-core's callback, a
warmup) the branch holds the trunk's exact value there for no step, ``>> constant(V) for 0tok >>``,
and cools down from it: the branch makes the trunk's own change at the branch step, as a step
branch does, and its value there is the lr the trunk's run gives at the first update after the
checkpoint.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import sympy as sp

from ..codegen.sched import text as sched_expr_text
from ..core.algebra import t
from ..errors import LINE_BREAK, SchedlangError
from ..formats import import_file
from ..formats.common.numbers import decimal_text
from ..library.stdlib import COOLDOWN_SHAPES, FRAMEWORK_SHAPE_NAMES
from ..limits import LimitError, decimal, read_source_text
from ..program import Program, Schedule, compile_declared
from ..syntax import ir
from ..syntax.fmt import format_source
from ..syntax.parser import parse

#: A branch point or a cooldown length: a whole number, in steps or with ``tok``/``sp``.
_LENGTH = re.compile(r"\s*([0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][+-]?[0-9]+)?)\s*(tok|sp)?\s*")
UNIT_NAMES = {None: "steps", "tok": "tokens", "sp": "samples"}


@dataclass(frozen=True)
class Length:
    """A count as given (``10e12tok``): whole, in steps (``unit`` None), tokens or samples."""

    amount: int
    unit: str | None
    text: str

    @property
    def literal(self) -> str:
        return f"{self.amount}{self.unit or ''}"


@dataclass(frozen=True)
class Claim:
    """One claim of the certificate and the prover's verdict on it (``verify.Verdict``)."""

    what: str
    verdict: object

    @property
    def proven(self) -> bool:
        return bool(self.verdict)


@dataclass
class Branch:
    """A branch and its certificate: ``source`` (the branch as a ``.sched`` file), the branch
    point (``step``, and the ``tokens`` / ``samples`` consumed before it where the file has a
    clock), the run's end (``run`` steps; ``run_tokens``, ``run_samples``), the values there and
    ``claims``, each proven, disproven or unknown; ``config``: the ``--format`` output."""

    trunk: str
    schedule: str
    source: str
    at: Length
    length: Length
    shape: str
    to: Fraction
    step: int
    run: int
    value_at_branch: float
    tokens: int | None = None
    samples: int | None = None
    run_tokens: int | None = None
    run_samples: int | None = None
    claims: list[Claim] = field(default_factory=list)
    program: Program | None = None
    config: str | None = None
    format: str | None = None
    config_claims: list[Claim] = field(default_factory=list)
    run_start_text: str = ""  # ``run = ...`` as the branch writes it
    params: dict = field(default_factory=dict)  # the values the trunk's parameters were given
    trunk_text: str = ""  # the trunk's .sched text (a config: as `schedlang import` reads it)

    @property
    def proven(self) -> bool:
        return all(c.proven for c in self.claims + self.config_claims)

    @property
    def disproven(self) -> bool:
        return any(c.verdict.different for c in self.claims + self.config_claims)


def branch(trunk, at, shape: str, n, to, *, schedule: str | None = None, params: dict | None = None,
           format: str | None = None) -> Branch:  # noqa: A002 - the CLI's name
    """The branch of ``trunk`` (a path: a ``.sched`` file or a config ``schedlang import`` reads)
    that leaves it at ``at`` (steps, or ``"10e12tok"`` / ``"4000sp"``) and cools down over ``n``
    (likewise) to ``to`` with ``shape`` (a ``cooldown`` shape), with ``run = at + n``; its
    certificate proven (``Branch.claims``).  ``format`` also writes the configuration that
    framework resumes with (``configs.FORMATS``), proven equal from the branch point to the
    run's end.

    Refused (``SchedlangError``, with the reason): a trunk whose value at the branch point
    cannot be known exactly (a parameter without a value, or one the prover cannot decide), a
    branch point past the trunk's run."""
    from ..verify import equivalent  # lazy: numpy (verify.float_scan)

    params = dict(params or {})
    shape = _shape(shape)
    at_length, n_length = _length(at, "the branch point"), _length(n, "the cooldown's length")
    to_value = _number(to)
    to_text = str(to).strip() if isinstance(to, str) else decimal_text(to_value)
    filename, text = _trunk_text(trunk)
    trunk_program = compile_declared(text, params, filename)
    trunk_schedule = trunk_program.main_schedule(schedule, "a branch needs one schedule (--schedule NAME)")
    _require_exact(trunk_schedule)
    step = _branch_step(trunk_program, at_length)
    trunk_run = trunk_program.run
    if trunk_run is not None and step > trunk_run:
        raise SchedlangError(f"the branch point (step {step}) is past the trunk's run, which ends at step "
                             f"{trunk_run}", hint="branch from a checkpoint the trunk's run writes: "
                                                  f"--at {trunk_run} or earlier")
    run_start = _count_at(trunk_program, step, n_length.unit)
    run = Length(run_start + n_length.amount, n_length.unit, "")
    cooldown = f"cooldown({shape}, {n_length.literal}, {to_text})"
    source, program = _branched(text, filename, params, trunk_program, trunk_schedule.name, step, at_length,
                                cooldown, run.literal)
    branched = program[trunk_schedule.name]
    jump = equivalent(branched, trunk_schedule, start=step, stop=step + 1)
    start = _value_text(trunk_schedule, step) if jump.different else None
    if start is not None:  # the cut ends with another value than the trunk's at the branch step
        source, program = _branched(text, filename, params, trunk_program, trunk_schedule.name, step,
                                    at_length, cooldown, run.literal, start=start)
        branched = program[trunk_schedule.name]
        jump = equivalent(branched, trunk_schedule, start=step, stop=step + 1)
    end = program.run
    value = trunk_schedule(step)
    result = Branch(filename, trunk_schedule.name, source, at_length, n_length, shape, to_value, step, end,
                    value, program=program, run_start_text=run.literal, params=params, trunk_text=text)
    clock = _clock(program)
    if clock is not None:
        result.samples, result.run_samples = clock.samples_at(step), clock.samples_at(end)
        if clock.seq_len is not None:
            result.tokens, result.run_tokens = clock.tokens_at(step), clock.tokens_at(end)
    if jump.unknown:
        raise SchedlangError(f"the trunk's value at step {step} cannot be known exactly: {jump.reason}",
                             hint="a branch is certified only where the prover decides the trunk's value")
    before = equivalent(branched, trunk_schedule, stop=step) if step else _NOTHING_BEFORE
    result.claims.append(Claim(f"equal to the trunk at every step before {step}", before))
    result.claims.append(Claim(f"no jump at step {step}: its value there is the trunk's ({value!r})", jump))
    floor = Schedule.from_sympy(sp.Rational(to_value.numerator, to_value.denominator))
    reached = equivalent(branched, floor, start=end)
    result.claims.append(Claim(f"reaches {to_text} at step {end}, the run's end, and holds it",
                               reached))
    if format is not None:
        from .configs import write_config  # lazy: the format modules load on use

        result.format = format
        result.config, result.config_claims = write_config(format, result, branched)
    return result


def _branched(text, filename, params, trunk_program, name, step, at, cooldown, run, start=None):
    """The branch's source and program.  The cut is written in the unit of the branch point: a
    step, or the count consumed before the branch step.  A trunk that counts samples (``on_samples``)
    can only be cut in samples, and one that counts tokens in tokens: a branch point in the other
    count is the same step written in the trunk's count (``S_k`` and ``T_k`` name the same step).

    ``start``: the trunk's exact value at the branch step, as text, for a trunk whose cut ends with
    another value.  A trunk read after its step (OLMo-core's ``units="tokens"``: update ``k`` reads
    the tokens through it) and cut at the tokens before the branch step ends with the value of the
    update before it; where the trunk's value changes at the branch step (the batch-size callback's
    factor at a batch change, a warmup) the cooldown would start from that earlier value.  The
    branch then holds ``constant(start) for 0`` (no step) before the cooldown, which starts from
    it: its value at the branch step is the trunk's, the lr the trunk's own run gives there."""
    units = [at.unit] + [u for u in ("sp", "tok") if at.unit is not None and u != at.unit]
    refused = None
    for unit in units:
        cut = f"{_count_at(trunk_program, step, unit)}{unit or ''}"
        tail = cooldown if start is None else f"constant({start}) for 0{unit or ''} >> {cooldown}"
        origin = f"{Path(filename).name} at {at.text}"
        source = _rewrite(text, filename, name, cut, tail, run, origin, cooldown)
        try:
            return source, compile_declared(source, params, filename)
        except SchedlangError as exc:
            if unit == "tok" and trunk_program.clock.seq_len is None:
                continue
            refused = refused or exc
    raise refused


class _NothingBefore:
    """The first claim of a branch at step 0: there is no step before it."""

    status, method, reason, counterexample = "equivalent", "no step before 0", None, None
    equivalent, different, unknown = True, False, False

    def __bool__(self) -> bool:
        return True


_NOTHING_BEFORE = _NothingBefore()


def _value_text(schedule: Schedule, step: int) -> str | None:
    """The schedule's exact value at ``step`` as an expression of the language; None where it is
    no number (the claim stays disproven)."""
    value = sp.simplify(schedule.expr.xreplace({t: sp.Integer(step)}))
    return sched_expr_text(value) if value.is_number and value.is_finite else None


def _shape(shape: str) -> str:
    if shape in COOLDOWN_SHAPES:
        return shape
    known = FRAMEWORK_SHAPE_NAMES.get(shape)
    hint = f"'{shape}' is cooldown's '{known}'" if known else "one of " + ", ".join(COOLDOWN_SHAPES)
    raise SchedlangError(f"unknown cooldown shape '{shape}'", hint=hint)


def _length(value, what: str) -> Length:
    """``1000``, ``"1000"``, ``"10e12tok"``, ``"4000sp"`` as an exact whole count."""
    text = str(value)
    match = _LENGTH.fullmatch(text) if not isinstance(value, bool) else None
    if match is None:
        raise SchedlangError(f"{what} must be a whole number of steps, or tokens (tok) or samples (sp): "
                             f"{text!r}", hint="e.g. 5000, 10e12tok or 4000sp")
    try:
        amount = decimal(match.group(1))
    except LimitError as exc:
        raise SchedlangError(f"{what}: {exc}", hint=exc.hint) from None
    unit = match.group(2)
    if amount.denominator != 1:
        raise SchedlangError(f"{what} must be whole, not {text.strip()}", hint="e.g. 5000 or 10e12tok")
    return Length(int(amount), unit, text.strip())


def _number(value) -> Fraction:
    try:
        return decimal(repr(value) if isinstance(value, float) else str(value))
    except (ValueError, LimitError):
        raise SchedlangError(f"the cooldown's end value must be a number, not {value!r}",
                             hint="e.g. --to 2.2e-5 or --to 0") from None


def _trunk_text(trunk) -> tuple[str, str]:
    """The trunk's ``.sched`` text: the file itself, or what ``schedlang import`` reads it as."""
    path = Path(trunk)
    if path.suffix == ".sched" or str(trunk) == "-":
        return str(path), read_source_text(path)
    if not path.is_file():
        raise SchedlangError(f"cannot read {path}: no such file")
    return str(path), import_file(path)


def _require_exact(schedule: Schedule) -> None:
    free = sorted(str(s) for s in schedule.expr.free_symbols if str(s) != "t")
    if free:
        raise SchedlangError(f"the trunk's value at the branch point cannot be known exactly: it uses the "
                             f"parameter '{free[0]}', which has no value",
                             hint=f"give it one: -D {free[0]}=VALUE (params= in Python)")


def _clock(program: Program):
    try:
        return program.clock
    except SchedlangError:
        return None


def _branch_step(program: Program, at: Length) -> int:
    """The branch point's step: ``at`` itself in steps, else the first step whose
    consumed-before count reaches it (section 12)."""
    if at.unit is None:
        return at.amount
    if _clock(program) is None or (at.unit == "tok" and program.clock.seq_len is None):
        needs = "batch schedule" if at.unit == "sp" or _clock(program) is None else "seq_len"
        raise SchedlangError(f"a branch point in {UNIT_NAMES[at.unit]} needs the trunk's {needs}",
                             hint="declare `batch = ...` (and `param seq_len` for tokens), or a step")
    if at.unit == "tok":
        return program.step_at(tokens=at.amount)
    return program.step_at(samples=at.amount)


def _count_at(program: Program, step: int, unit: str | None) -> int:
    """What ``unit`` counts before ``step``: the step itself, or the samples / tokens consumed."""
    if unit is None:
        return step
    if unit == "tok":
        return program.tokens_at(step)
    return program.samples_at(step)


def _rewrite(text: str, filename: str, name: str, cut: str, cooldown: str, run: str, origin: str,
             named: str | None = None) -> str:
    """The trunk file with its schedule ``name`` cut at ``cut`` and cooled down, and ``run = ...``
    (replacing the trunk's own), in the canonical layout; every other line kept."""
    def branched(body: str, node) -> str:
        if not isinstance(node, (ir.Name, ir.Call)):  # `a >> b for C` would cut `b` alone
            body = f"({body})"
        return f"{body} for {cut} >> {cooldown}"

    comment = f"branch of {origin}: {named or cooldown} (schedlang branch)"
    return rewritten(text, filename, name, branched, run, comment)


def _value_extent(text: str, statement: int, end: int) -> tuple[int, int]:
    """Where a schedule's value is in ``text``: from after the ``=`` of its statement to the end
    of its span, widened over the parentheses a span leaves out (``(a >> b) for C >> c`` spans
    from ``a``; a comment holds no parenthesis the parser kept)."""
    start = text.index("=", statement) + 1
    while text[start] in " \t":
        start += 1
    depth = text.count("(", start, end) - text.count(")", start, end)
    while depth > 0 and end < len(text):
        if text[end] == ")":
            depth -= 1
        end += 1
    return start, end


def rewritten(text: str, filename: str, name: str, value, run: str | None = None,
              comment: str | None = None) -> str:
    """``text`` with the schedule ``name``'s value replaced by ``value(its text, its node)``, with
    ``run = run`` (replacing the file's own) and a ``# comment`` above the schedule when given, in
    the canonical layout; every other line kept."""
    module = parse(text, filename)
    starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1

    decl = next(s for s in module.statements if isinstance(s, ir.ScheduleDecl) and s.name == name)
    start, end = _value_extent(text, offset(decl.span.line, decl.span.column),
                               offset(decl.value.span.end_line, decl.value.span.end_column))
    edits = [(start, end, value(text[start:end], decl.value))]
    at = offset(decl.span.line, 1)
    if run is not None:
        runs = [s for s in module.statements if isinstance(s, ir.RunDecl)]
        if runs:
            span = runs[0].span
            edits.append((offset(span.line, span.column), offset(span.end_line, span.end_column),
                          f"run = {run}"))
        else:
            edits.append((at, at, f"run = {run}\n"))
    if comment is not None:
        edits.append((at, at, f"# {comment}\n"))
    for start, end, new in sorted(edits, key=lambda e: e[0], reverse=True):
        text = text[:start] + new + text[end:]
    try:
        return format_source(text, filename)
    except SchedlangError:  # pragma: no cover - the layout engine refuses: keep the plain text
        return text
