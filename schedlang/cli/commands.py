"""``schedlang`` on the command line.

Every subcommand turns a ``SchedlangError`` into a caret diagnostic on stderr
and exit status 2; no user error ever shows a traceback.  Heavy imports
(torch, matplotlib) happen inside the subcommands that need them, so
``schedlang check`` stays quick and never imports torch.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import warnings
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

from .. import __version__, formats
from ..codegen.emit import TARGETS, emit
from ..errors import Diagnostic, SchedlangError, SchedlangWarning
from ..limits import MAX_EVAL_POINTS, LimitError, decimal, read_source, read_source_text
from ..program import compile_declared, load
from ..semantics.params import to_number
from . import audit as audit_command
from . import json_output, run_report, streams
from .analysis import summarise
from .arguments import CommandLine
from .axis import AXES, default_positions, require_clock, steps_at
from .difference_table import difference_table
from .output_file import check_output, write_atomically
from .progress import progress
from .ranges import EVAL_POINTS, eval_steps, plot_steps, step_number

EXIT_OK, EXIT_DIFFERENT, EXIT_ERROR = 0, 1, 2


def main(argv: list[str] | None = None) -> int:
    """The ``schedlang`` command: its exit status (``docs/cli.md``), under ``streams.guarded`` so
    that no failure, a lost standard output included, shows a traceback or ends with a verdict."""
    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    return streams.guarded(_main, argv, "--json" in argv,
                           lambda message: json_output.emit(json_output.internal_error(message)))


def _main(argv: list[str]) -> int:
    parser = _parser()
    _Parser.json_errors = "--json" in argv
    argv = _log_then_a_log(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    args.command_line = CommandLine(argv)
    try:
        return args.run(args) or EXIT_OK
    except SchedlangError as exc:
        located = args.command_line.locate(exc, getattr(args, "defines", []))
        print(str(located), file=sys.stderr)
        if getattr(args, "json", False):
            json_output.emit(json_output.error(located))
        return EXIT_ERROR


class _Parser(argparse.ArgumentParser):
    json_errors = False  # set by main when --json is on the command line

    def format_help(self):  # an epilog given as a function is read when help is asked for
        if callable(self.epilog):
            self.epilog = self.epilog()
        return super().format_help()

    def error(self, message):  # argparse's own usage errors: exit 2, no traceback either
        self.print_usage(sys.stderr)
        print(f"schedlang: error: {message}", file=sys.stderr)
        if _Parser.json_errors:
            json_output.emit(json_output.usage_error(message))
        raise SystemExit(EXIT_ERROR)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="schedlang", description="Exact, checked learning-rate schedules.")
    parser.add_argument("--version", action="version", version=f"schedlang {__version__}")
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)

    def command(name, run, help_text):
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(run=run)
        return sub

    def with_defines(sub):
        sub.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                         help="bind a parameter (repeatable)")
        return sub

    def with_json(sub):
        sub.add_argument("--json", action="store_true",
                         help="one JSON object on standard output, errors included (docs/cli.md)")
        return sub

    sub = with_json(with_defines(command("check", _check, "parse and check a .sched file; summarise it")))
    sub.add_argument("file")
    sub.add_argument("--strict", action="store_true", help="treat warnings as errors")

    def with_axis(sub):
        sub.add_argument("--axis", choices=AXES, default="steps",
                         help="what the x values count: steps, or the samples or tokens consumed "
                              "(a file with a batch schedule; --steps then gives their range; "
                              "docs/tokens.md)")
        return sub

    sub = with_json(with_defines(command("eval", _eval, "print schedule values at a range of steps")))
    sub.add_argument("file")
    sub.add_argument("--steps", default=None, metavar="START:STOP:STEP",
                     help=f"steps to show (STOP excluded); default: {EVAL_POINTS} evenly spaced steps from 0 "
                          "to the end of the longest schedule (docs/cli.md: default range)")
    sub.add_argument("--csv", action="store_true", help="comma-separated output")
    sub.add_argument("--schedule", action="append", metavar="NAME", help="only these schedules")
    with_axis(sub)

    sub = with_defines(command("plot", _plot, "plot the schedules of one or more files, overlaid"))
    sub.add_argument("files", nargs="+", metavar="FILE",
                     help="one or more .sched files: one panel per schedule name, the files overlaid in "
                          "it; with two files, a panel of their difference A - B under each")
    sub.add_argument("-o", "--output", help="image file (PNG, SVG, PDF); without it, plot in the terminal")
    sub.add_argument("--steps", default=None, metavar="START:STOP[:STEP]",
                     help="default: 0 to just past the end (docs/cli.md: default range)")
    sub.add_argument("--schedule", action="append", metavar="NAME",
                     help="only these schedules (repeatable; default: all)")
    sub.add_argument("--log", action="store_true",
                     help="logarithmic value axis (steps with values <= 0 are left out, with a note)")
    with_axis(sub)
    sub.add_argument("--logged", default=None, metavar="LOG",
                     help="draw what a run logged (any log schedlang audit reads) over one file's "
                          "schedule, aligned as audit aligns it, the first deviation marked")
    audit_command.series_arguments(sub)

    sub = command("fmt", _fmt, "rewrite .sched files in the canonical layout (comments kept)")
    sub.add_argument("files", nargs="+", metavar="FILE",
                     help="a .sched file, a directory (every .sched under it), or - (standard input "
                          "to standard output)")
    sub.add_argument("--check", action="store_true",
                     help="change nothing; list the files that would change and exit 1 if any")
    sub.add_argument("--diff", action="store_true", help="change nothing; print a unified diff")

    command("lsp", _lsp, "the language server for editors, on standard input and output "
                         '(needs pip install "schedlang[lsp]"; docs/editors.md)')

    sub = with_defines(command("compile", _compile, "write a standalone Python module"))
    sub.add_argument("file")
    sub.add_argument("--target", choices=TARGETS, default="python")
    sub.add_argument("-o", "--output", help="output file (default: standard output)")
    sub.add_argument("--class-name", default=None, help="scheduler class name (torch, cerebras)")

    sub = with_json(with_defines(command("verify", _verify,
                                         "prove two schedules equal, or show where they differ")))
    sub.add_argument("sides", nargs="*", action=_SideAction, default=None, metavar="FILE",
                     help="a .sched file (its 'lr' schedule, or its only one)")
    sub.add_argument("-e", dest="sides", action=_SideAction, metavar="EXPR",
                     help="a schedule given inline instead of a file (for either side)")
    sub.add_argument("--rtol", default="0", help="accept values within this relative tolerance")
    sub.add_argument("--steps", default=None, metavar="[START:]STOP",
                     help="compare only these steps (STOP excluded); default: the run's steps when "
                          "the files declare `run = N`, else every step")
    sub.add_argument("--schedule", default=None, metavar="NAME",
                     help="the schedule of each side to compare (default: lr, or the only one)")
    sub.add_argument("--axis", choices=AXES, default="steps",
                     help="compare as functions of the samples or tokens consumed: A placed on B's "
                          "batch schedule (docs/tokens.md)")

    sub = with_defines(command("show", _show, "print each schedule's formula"))
    sub.add_argument("file")
    sub.add_argument("--latex", action="store_true", help="LaTeX (sympy's printer) instead of text")

    sub = with_json(command("import", _import, "convert another framework's schedule configuration to "
                                               ".sched source"))
    sub.epilog = formats.help_text  # read on --help: building the parser loads no format
    sub.formatter_class = argparse.RawDescriptionHelpFormatter
    sub.add_argument("file", nargs="?", help="the configuration file, or - for standard input (then give "
                                             "--format)")
    sub.add_argument("--format", choices=formats.NAMES, default=None, metavar="FORMAT",
                     help="one of the formats below; default: guessed from the file's name and content")
    sub.add_argument("--lower", action="store_true",
                     help="write plain standard-library calls (linear, cosine, >>) instead of presets")
    sub.add_argument("-o", "--output", help="output .sched file (default: standard output)")
    sub.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                     help="an option of the format's reader (repeatable), e.g. formula=2024 for "
                          "torchtitan-toml, megatron=main for megatron-args")
    sub.add_argument("--flags", nargs=argparse.REMAINDER, default=None, metavar="FLAG",
                     help="SambaFlow flags instead of a file: everything after --flags (so it comes last)")

    sub = with_json(with_defines(command("resume", _resume, "check that a resumed run continues the "
                                                             "schedule of its checkpoint")))
    sub.add_argument("state", help="a saved scheduler state_dict, an HF Trainer checkpoint-N/ folder "
                                   "or a Lightning .ckpt (read as data: nothing in it runs)")
    sub.add_argument("new", help="the resumed run's schedule: a .sched file or a config schedlang "
                                 "import reads")
    sub.add_argument("--was", default=None, metavar="OLD",
                     help="the run's original schedule, where the state does not hold it")

    sub.add_argument("--branch", action="store_true",
                     help="NEW leaves OLD on purpose after the checkpoint: exit 0 when it equals OLD up to "
                          "its branch point and has no jump there (docs/runs.md)")

    sub = with_json(with_defines(command("branch", _branch, "branch a cooldown from a trunk, with its "
                                                             "certificate (docs/runs.md)")))
    sub.add_argument("trunk", help="the trunk: a .sched file or a config schedlang import reads")
    sub.add_argument("--at", required=True, metavar="C",
                     help="the branch point: a step, or tokens (10e12tok) or samples (4000sp) consumed")
    sub.add_argument("--cooldown", required=True, metavar="SHAPE:N",
                     help="the cooldown's shape (linear, cosine, sqrt, exp, megatron_exponential) and "
                          "length (steps, tok or sp), e.g. sqrt:5000")
    sub.add_argument("--to", required=True, metavar="F", help="the value the cooldown ends at")
    sub.add_argument("-o", "--output", help="write the branch (or --format's config) here "
                                            "(default: standard output, before the certificate)")
    sub.add_argument("--format", default=None,
                     choices=("megatron-args", "hf-args", "torchtitan-toml", "olmo-core-json"), metavar="FMT",
                     help="write the configuration the framework resumes with: megatron-args, hf-args, "
                          "torchtitan-toml or olmo-core-json")
    sub.add_argument("--schedule", default=None, metavar="NAME",
                     help="the trunk's schedule to branch (default: lr, or the only one)")

    audit_command.arguments(with_json(with_defines(command(
        "audit", _audit, "check that a run followed its file: the first update where its logged lr "
                         "left the schedule, and why"))))

    sub = with_defines(command("export", _export, "write a schedule in another system's config format"))
    sub.add_argument("file")
    sub.add_argument("--format", choices=formats.EXPORTS, default="cerebras-yaml", metavar="FORMAT",
                     help="a format that `schedlang import --help` lists with 'export too' (default: "
                          "cerebras-yaml)")
    sub.add_argument("-o", "--output", help="output file (default: standard output)")
    sub.add_argument("--into", metavar="ORIGINAL",
                     help="the config the written flags or keys go into (the one FILE was imported from): "
                          "lengths are written in its unit and the proof reads them back merged into it")
    sub.add_argument("--schedule", action="append", metavar="NAME",
                     help="export only these schedules (repeatable; default: all)")
    sub.add_argument("--no-verify", action="store_true",
                     help="skip reading the export back and proving it equal to the original")

    return parser


class _SideAction(argparse.Action):
    """Files and ``-e`` expressions into one list, in the order given (A then B)."""

    def __call__(self, parser, namespace, values, option_string=None):
        sides = list(getattr(namespace, "sides", None) or [])
        if option_string:
            sides.append(("expr", values))
        else:
            sides.extend(("file", v) for v in values)
        namespace.sides = sides


def defines(args) -> dict[str, str]:
    """``-D NAME=VALUE`` arguments, each checked here so an error points at the bad part."""
    command_line = getattr(args, "command_line", None) or CommandLine([])
    values = {}
    for item in args.defines:
        name, sep, value = item.partition("=")
        name_span, value_span = command_line.define_spans(item)
        if not sep or not name.strip():
            raise SchedlangError(f"-D expects NAME=VALUE, got {item!r}",
                                 command_line.value_span("-D", item), hint="e.g. -D total=10000")
        try:
            to_number(value, f"-D {name.strip()}")
        except SchedlangError as exc:
            raise exc.with_span(value_span) from None
        values[name.strip()] = value.strip()
    return values


def load_program(args):
    return load(args.file, defines(args))


def parse_steps(text: str | None, program, span_of=None, default: range | None = None) -> range:
    """``--steps START:STOP:STEP`` (or one step) as a range of at most ``MAX_EVAL_POINTS`` steps.

    ``span_of(start, length)`` locates part of the text on the command line, for carets;
    ``default`` is the range without ``--steps`` (``ranges.eval_steps(program)`` if not given).
    """
    default = default if default is not None else eval_steps(program)
    if text is None:
        return default
    span_of = span_of or (lambda start, length: None)
    parts = text.split(":")
    if len(parts) > 3:
        raise SchedlangError(f"--steps expects START:STOP:STEP, got {text!r}", span_of(0, len(text)),
                             hint="e.g. --steps 0:1000:100")
    numbers, offset = [], 0
    for part in parts:
        numbers.append(step_number(part, span_of(offset, max(len(part), 1))))
        offset += len(part) + 1
    if len(numbers) == 1:
        if numbers[0] is None:
            raise SchedlangError("--steps is empty", span_of(0, 1), hint="e.g. --steps 0:1000:100")
        return range(numbers[0], numbers[0] + 1)
    start = numbers[0] or 0
    stop = numbers[1] if numbers[1] is not None else default.stop
    step = numbers[2] if len(numbers) == 3 and numbers[2] is not None else 1
    if step <= 0:
        raise SchedlangError(f"--steps needs STEP > 0, got {text!r}",
                             span_of(offset - len(parts[-1]) - 1, max(len(parts[-1]), 1)))
    steps = range(start, stop, step)
    if len(steps) > MAX_EVAL_POINTS:
        raise SchedlangError(f"--steps {text} is {len(steps)} steps; schedlang shows at most "
                             f"{MAX_EVAL_POINTS}", span_of(0, len(text)),
                             hint=f"take a larger STEP, e.g. --steps {start}:{stop}:"
                                  f"{-(-(stop - start) // MAX_EVAL_POINTS)}")
    return steps


def _steps_locator(args):
    """``span_of`` for ``parse_steps``: part of the ``--steps`` value on the command line."""
    command_line = getattr(args, "command_line", None)
    if command_line is None or args.steps is None:
        return None
    return lambda start, length: command_line.value_span("--steps", args.steps, start, length)


def _check(args) -> int:
    with progress(f"checking {args.file}"):
        program = load_program(args)
        report = summarise(program)
    for warning in report.warnings:
        print(warning.render(), file=sys.stderr)
    if args.strict and report.warnings:
        # an exit 2, so an error (docs/cli.md): at the first warning, the count in the message
        first = report.warnings[0]
        raise SchedlangError(f"{len(report.warnings)} warning(s) with --strict; the first: {first.message}",
                             getattr(first, "span", None), hint="fix the warnings, or drop --strict")
    if args.json:
        json_output.emit(json_output.check(args.file, program, report))
    else:
        print(report.text)
    return EXIT_OK


def _eval(args) -> int:
    program = load_program(args)
    names = args.schedule or list(program.schedules)
    schedules = [program[n] for n in names]
    axis = args.axis
    require_clock(program, axis, args.file, _axis_span(args))
    positions = parse_steps(args.steps, program, _steps_locator(args),
                            default=default_positions([program], axis, eval_steps(program)))
    counts = axis != "steps"  # --axis samples|tokens: a row per position, with the step that trains it
    # Always the Python reference: the digits printed are the reference's at any length
    # (the torch path agrees to 1e-12, not bit for bit, and was no faster here).  Values are
    # computed and written a chunk of positions at a time: memory stays bounded for the largest
    # range (MAX_EVAL_POINTS positions), whatever the number of schedules.
    # Nothing is written before the first chunk is computed: an error (an unbound parameter)
    # leaves standard output empty, not a header or half a JSON document above it.
    out = sys.stdout
    with progress(f"evaluating {args.file} at {len(positions)} {axis}"):
        if args.json:
            json_output.stream_evaluate(out, args.file, positions, names, schedules, EVAL_CHUNK,
                                        axis=axis if counts else None,
                                        steps_at=lambda part: steps_at(program, axis, part))
            return EXIT_OK
        keys = [axis, "step"] if counts else ["step"]
        chunks = _chunks(program, axis, positions, schedules)
        if args.csv:
            out.write(",".join([*keys, *names]) + "\n")
            for chunk, steps, columns in chunks:
                out.writelines(",".join([*([str(x)] if counts else []), str(k),
                                         *(repr(c[i]) for c in columns)]) + "\n"
                               for i, (x, k) in enumerate(zip(chunk, steps)))
            return EXIT_OK
        last = steps_at(program, axis, positions[-1:])
        wide = max(len(f"{positions[-1]:,}") if len(positions) else 0, len(axis))
        width = max(len(str(last[-1])) if last else 4, 4)
        out.write((axis.rjust(wide) + "  " if counts else "") + "step".rjust(width)
                  + "".join(f"  {n:>14}" for n in names) + "\n")
        for chunk, steps, columns in chunks:
            out.writelines((f"{x:,}".rjust(wide) + "  " if counts else "") + str(k).rjust(width)
                           + "".join(f"  {c[i]:>14.8g}" for c in columns) + "\n"
                           for i, (x, k) in enumerate(zip(chunk, steps)))
    return EXIT_OK


#: Steps evaluated (and written) at a time by ``eval``.
EVAL_CHUNK = 1 << 16


def _chunks(program, axis: str, positions: range, schedules) -> Iterator[tuple]:
    """``(positions, their steps, [values of each schedule])`` a chunk of ``EVAL_CHUNK`` positions
    at a time, the first computed before this returns (so before anything is written)."""
    def computed(start: int):
        chunk = positions[start:start + EVAL_CHUNK]
        steps = steps_at(program, axis, chunk)
        return chunk, steps, [s.values(steps) for s in schedules]

    first = [computed(0)] if len(positions) else []
    return itertools.chain(first, map(computed, range(EVAL_CHUNK, len(positions), EVAL_CHUNK)))


def _axis_span(args):
    """Where ``--axis`` was typed: the caret of a count axis the file cannot give."""
    return args.command_line.value_span("--axis", args.axis)


def _plot(args) -> int:
    from .plot import plot  # lazy: each command imports what only it uses (check stays light)

    check_output(args.output, args.files + ([args.logged] if args.logged else []), _output_span(args))
    if args.logged:
        return _plot_logged(args)
    given = [f"--{name}" for name in ("tag", "group", "convention") if getattr(args, name) is not None]
    if given:
        option = given[0]
        raise SchedlangError(f"{option} picks the series of a log: it needs --logged LOG",
                             args.command_line.argument_span(option) if args.command_line else None,
                             hint="schedlang plot FILE --logged LOG " + option + " ...")
    programs = load_programs(args.files, defines(args))
    for path, program in zip(args.files, programs):
        require_clock(program, args.axis, path, _axis_span(args))
    # A picture needs many more points than a table: about one per pixel column.
    default = default_positions(programs, args.axis, plot_steps(*programs))
    steps = parse_steps(args.steps, programs[0], _steps_locator(args), default=default)
    with progress(f"plotting {' '.join(args.files)}"):
        out, notes = plot(list(zip(args.files, programs)), steps, output=args.output, log=args.log,
                          names=args.schedule, axis=args.axis)
    for note in notes:
        print(note, file=sys.stderr)
    if args.output:
        print(f"wrote {out}")
    else:
        print(out)
    return EXIT_OK


def _log_then_a_log(argv: list[str]) -> list[str]:
    """``plot FILE --log LOG``, as issue 38 spells the overlay, is ``plot FILE --logged LOG``:
    ``--log`` alone is the log-scale switch, so the argument after it is read as the log when it
    is neither an option nor a ``.sched`` file (a folder, a JSON, CSV or event file); a ``.sched``
    file there is left to argparse (docs/cli.md)."""
    if not argv or argv[0] != "plot" or "--logged" in argv or "--log" not in argv:
        return argv
    index = argv.index("--log")
    after = argv[index + 1] if index + 1 < len(argv) else None
    if after is None or after.startswith("-") or after.endswith(".sched"):
        return argv
    return [*argv[:index], "--logged", *argv[index + 1:]]


def _plot_logged(args) -> int:
    """``plot FILE --logged LOG``: one file, one schedule, the run's points over it."""
    if len(args.files) != 1:
        raise SchedlangError(f"--logged draws one file's schedule under a log; {len(args.files)} files "
                             "were given", args.command_line.argument_span(args.files[1])
                             if args.command_line else None, hint="schedlang plot FILE --logged LOG")
    if args.axis != "steps":
        raise SchedlangError("--logged draws the log at its updates: --axis steps only",
                             _axis_span(args), hint="leave out --axis")
    if args.schedule and len(args.schedule) > 1:
        raise SchedlangError(f"--logged compares one schedule; --schedule was given {len(args.schedule)} "
                             "times", args.command_line.value_span("--schedule", args.schedule[1])
                             if args.command_line else None,
                             hint=f"e.g. --schedule {args.schedule[0]}")
    from .plot import OVERLAY_POINTS  # lazy: as in _plot (check stays light)

    (program,) = load_programs(args.files, defines(args))
    report = audit_command.audited(program, args.logged, args, args.schedule[0] if args.schedule else None,
                                   OVERLAY_POINTS)
    steps = None
    if args.steps is not None:
        steps = parse_steps(args.steps, program, _steps_locator(args))
    with progress(f"plotting {args.files[0]} with {args.logged}"):
        out, notes = audit_command.picture(program, args.files[0], report, args.output, steps, args.log)
    for note in notes:
        print(note, file=sys.stderr)
    print(f"wrote {out}" if args.output else out)
    return EXIT_OK


def load_programs(paths: list[str], params: dict) -> list:
    """Each file compiled with the ``-D`` values it declares; a value no file declares is an error."""
    programs, declared = [], set()
    for path in paths:
        program = compile_declared(read_source(path), params, path)
        declared |= set(program.params)
        programs.append(program)
    unknown = sorted(set(params) - declared)
    if unknown:
        raise SchedlangError(f"no file has a parameter '{unknown[0]}'")
    return programs


def _fmt(args) -> int:
    from . import formatting  # lazy: fmt's layout engine, only for `schedlang fmt`

    return formatting.run(args.files, check=args.check, diff=args.diff)


def _lsp(args) -> int:
    try:
        import pygls  # noqa: F401 - lazy: pygls (0.5 s), only for the language server
    except ImportError:
        print('schedlang lsp needs pygls: pip install "schedlang[lsp]"', file=sys.stderr)
        return EXIT_ERROR
    from .editor import server  # lazy: pygls, only for the language server

    return server.main()


def _compile(args) -> int:
    check_output(args.output, [args.file], _output_span(args))
    program = load_program(args)
    source_name = Path(args.file).name
    text = emit(program, args.target, source_name=source_name, class_name=args.class_name)
    if args.output:
        write_atomically(Path(args.output), text)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _verify(args) -> int:
    from . import verify_run  # lazy: the prover's front, only for `schedlang verify`

    sides = args.sides or []
    if len(sides) != 2:
        raise SchedlangError(f"verify compares two schedules, got {len(sides)}",
                             hint="schedlang verify A.sched B.sched, or -e 'EXPR' for either side")
    rtol = _rtol(args)
    params = defines(args)
    steps = verify_run.parse_range(args.steps, _steps_locator(args) or (lambda start, length: None))
    sources = [(text, "<-e>") if kind == "expr" else (read_source_text(text), text) for kind, text in sides]
    names = [text if kind == "file" else f"-e {text!r}" for kind, text in sides]
    with progress(f"verifying {names[0]} = {names[1]}") as shown:
        programs = verify_run.load_sides(sources, params, args.axis)
        schedules = [verify_run.pick(p, args.schedule) for p in programs]
        bindings, warnings = _bindings(args, params, schedules, names)
        span = verify_run.window(programs, steps)
        shown.update(f"proving {names[0]} = {names[1]}")
        verdict, after = verify_run.prove(*schedules, rtol, span)
    for warning in warnings:
        print(warning.render(), file=sys.stderr)
    if args.json:
        diagnostics = [json_output.diagnostic(w.message, w.span, w.hint) for w in warnings]
        sides_doc = [{"kind": kind, "text": text, "schedule": s.name}
                     for (kind, text), s in zip(sides, schedules)]
        json_output.emit(json_output.verify(sides_doc, verdict, bindings, diagnostics, span, after,
                                            args.axis))
        return EXIT_OK if verdict.equivalent else EXIT_ERROR if verdict.unknown else EXIT_DIFFERENT
    print(f"A: {names[0]}\nB: {names[1]}")
    if args.axis != "steps":
        print(f"on the {args.axis} axis: A placed on B's batch schedule, compared at B's steps")
    for binding in bindings:
        where = " and ".join(binding["sides"])
        print(f"-D {binding['name']}={binding['value']}: binds '{binding['name']}' in {where}"
              + ("" if len(binding["sides"]) == 2 else " only"))
    return _print_verdict(verdict, after, span, args, sources, params, schedules)


def _print_verdict(verdict, after, span, args, sources, params: dict, schedules) -> int:
    """``verify``'s verdict as text, with the values around a difference; the exit status."""
    from . import verify_run  # lazy: the prover's front, only for `schedlang verify`

    within = "" if span.text == "at every step" else f" {span.text}"
    if verdict.equivalent:
        print(f"equivalent{within} (proven: {verdict.method})")
        if after is not None:
            print(f"after the run: a difference at {after}, which the run does not train")
        return EXIT_OK
    if verdict.unknown:
        print(f"unknown{within}: {verdict.reason}")
        return EXIT_ERROR
    ce = verdict.counterexample
    first = "first difference" if ce.earliest else "a difference (an earlier step could not be decided)"
    print(f"different{within}: {first} at {ce} (found by: {verdict.method})")
    if ce.params:
        programs = verify_run.load_sides(sources, {**params, **ce.params}, args.axis)
        schedules = [verify_run.pick(p, args.schedule) for p in programs]
    table = difference_table(schedules, ce.step)
    if table:
        print(table)
    return EXIT_DIFFERENT


def _bindings(args, params: dict, schedules, names) -> tuple[list[dict], list]:
    """Which side(s) each ``-D`` binds; a warning for a side that does not declare it (the
    value then means nothing there), an error when neither does."""
    bindings, warnings = [], []
    command_line = getattr(args, "command_line", None)
    for name, value in params.items():
        sides = [label for label, s in zip("AB", schedules) if name in s.program.params]
        item = next((d for d in args.defines if d.partition("=")[0].strip() == name), None)
        span = command_line.define_spans(item)[0] if command_line and item else None
        if not sides:
            raise SchedlangError(f"neither schedule has a parameter '{name}'", span)
        bindings.append({"name": name, "value": value, "sides": sides})
        if len(sides) == 1:
            other = "B" if sides == ["A"] else "A"
            warnings.append(Diagnostic(
                f"-D {name}={value} binds '{name}' in {sides[0]} only: {other} ({names['AB'.index(other)]}) "
                f"declares no parameter '{name}'", span,
                hint=f"if {other} means the same quantity under another name, bind that too"))
    return bindings, warnings


def _rtol(args):
    """``--rtol``: a number >= 0, written like 1e-9 (or a fraction 1/1000)."""
    span = args.command_line.value_span("--rtol", args.rtol) if hasattr(args, "command_line") else None
    try:
        rtol = decimal(args.rtol)
    except LimitError as exc:
        raise SchedlangError(f"--rtol: {exc}", span, hint=exc.hint) from None
    except ValueError:
        try:
            rtol = Fraction(args.rtol.strip()) if len(args.rtol) <= 100 else None
        except (ValueError, ZeroDivisionError):
            rtol = None
    if rtol is None or rtol < 0:
        raise SchedlangError(f"--rtol expects a number >= 0, got {args.rtol!r}", span,
                             hint="e.g. --rtol 1e-9") from None
    return rtol


def _show(args) -> int:
    from . import show  # lazy: only for `schedlang show`

    program = load_program(args)
    run = run_report.describe(program)
    if run is not None:
        print(f"% {run}" if args.latex else run)
    for schedule in program:
        length = "forever" if schedule.duration is None else f"{schedule.duration} steps"
        if args.latex:
            print(f"% {schedule.name} ({length})")
            print(show.latex(schedule.name, schedule.expr))
        else:
            print(f"{schedule.name} ({length}):")
            print(show.text(schedule.expr))
    return EXIT_OK


def _import(args) -> int:
    """Import a configuration; what the importer tolerated (``SchedlangWarning``) goes to stderr."""
    return _warning_on_stderr(_import_quietly, args)


def _warning_on_stderr(command, args) -> int:
    """``command(args)``, each ``SchedlangWarning`` it gave printed on stderr as errors are."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SchedlangWarning)
        try:
            return command(args)
        finally:
            for warning in caught:
                if issubclass(warning.category, SchedlangWarning):
                    print(str(warning.message), file=sys.stderr)
                else:
                    print(warnings.formatwarning(warning.message, warning.category, warning.filename,
                                                 warning.lineno), end="", file=sys.stderr)


def _import_quietly(args) -> int:
    style = "core" if args.lower else "presets"
    check_output(args.output, [args.file], _output_span(args))
    if args.flags is not None:
        if args.file is not None or args.format not in (None, "sambaflow"):
            raise SchedlangError("--flags takes SambaFlow flags instead of a file",
                                 hint="schedlang import --flags --lr_schedule ... --learning_rate ...")
        text = formats.from_sambaflow(args.flags, "<flags>", style)
    elif args.file is None:
        raise SchedlangError("give a file to import (or - for standard input, or --flags ...)")
    else:
        options = {}
        for item in args.option:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise SchedlangError(f"--option {item!r}: expected KEY=VALUE")
            options[key.strip()] = value.strip()
        text = formats.import_file(args.file, args.format, style, options=options or None)
    if args.json:
        if args.flags is not None or args.format or args.file == "-":
            fmt = "sambaflow" if args.flags is not None else args.format
        else:  # what import_file guessed, from the name and the keys
            fmt = formats.guess_format(Path(args.file), read_source_text(args.file))
        doc = json_output.imported(args.file, fmt, style, text, args.output)
        if args.output:
            write_atomically(Path(args.output), text)
        json_output.emit(doc)
        return EXIT_OK
    _write(args.output, text)
    return EXIT_OK


def _resume(args) -> int:
    from .resume import run_command  # lazy: resume reads formats (check loads no format module)

    if args.branch:
        from .branch import resume_branch_command  # lazy: resume reads formats

        return resume_branch_command(args.state, args.new, args.was, defines(args), args.json)
    return run_command(args.state, args.new, args.was, defines(args), args.json)


def _branch(args) -> int:
    from .branch import run_command  # lazy: branch reads formats and the prover

    return run_command(args, defines(args), _output_span(args))


def _audit(args) -> int:
    return audit_command.run_command(args, defines(args))


def _export(args) -> int:
    """Export a file; what the writer says of its numbers (``SchedlangWarning``) goes to stderr."""
    return _warning_on_stderr(_export_quietly, args)


def _export_quietly(args) -> int:
    from ..formats import export as export_format  # lazy: the writers, only for `schedlang export`

    check_output(args.output, [args.file], _output_span(args))
    path = Path(args.file)
    text = export_format.export(read_source(path), str(path), format=args.format, params=defines(args),
                  verify=not args.no_verify, schedules=args.schedule, into=args.into)
    _write(args.output, text)
    if not args.no_verify:  # what the proof read: JSON carries no comment to say it (docs/import_export.md)
        if args.into:
            print(f"note: proved merged into {args.into} (its other keys or flags kept)", file=sys.stderr)
        else:
            print(f"note: proved alone, every other key or flag at {args.format}'s defaults; "
                  "--into ORIGINAL proves it merged into your config", file=sys.stderr)
    return EXIT_OK


def _output_span(args):
    """Where ``-o``/``--output``'s value is on the command line, for a caret."""
    command_line = getattr(args, "command_line", None)
    if command_line is None or not getattr(args, "output", None):
        return None
    return command_line.value_span("-o", args.output) or command_line.value_span("--output", args.output)


def _write(output: str | None, text: str) -> None:
    if output:
        write_atomically(Path(output), text)
        print(f"wrote {output}", file=sys.stderr)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
