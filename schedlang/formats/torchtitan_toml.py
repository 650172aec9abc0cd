"""torchtitan job TOML (``[lr_scheduler]``, ``[training] steps``, ``[optimizer] lr``) -> ``.sched``.

Read with ``tomllib`` (data only).  torchtitan's defaults fill what the file leaves
out (``steps = 10000``, ``lr = 8e-4``, ``warmup_steps = 200``, ...).  The same keys
meant different formulas over torchtitan's history (``docs/presets.md``), so the
option ``formula`` picks one: ``current`` (v0.1.0 on, the default),
``2025-03`` (2025-03-27 .. 2025-06-10, v0.0.2) or ``2024`` (to 2025-03-10).  A
file with the old ``[training] warmup_steps`` key can only be the 2024 formula
and is read as such; ``lr_min`` (renamed ``min_lr_factor`` on 2025-07-31) is the
same factor under both newer formulas.

Diagnostics point at the key in the file (``tomllib`` keeps no positions, so keys
are located by a line scan of ``[section]`` headers and ``key =`` lines).
"""

from __future__ import annotations

import re

import sympy as sp
import tomllib

from ..errors import SchedlangError, Source, Span, did_you_mean
from ..limits import MAX_CONFIG_DEPTH, MAX_DIGITS, check_size
from ..syntax import ir
from .common.format import Format, reader
from .common.numbers import exact
from .common.preset_call import PresetCall, number_text
from .common.proof import proven
from .common.source_text import comment_safe, header
from .common.statements import call, module, noted, number, run_stmt, schedule_stmt, string
from .common.statements import formula as written

FORMULAS = ("current", "2025-03", "2024")
DECAY_TYPES = ("linear", "sqrt", "cosine")
KEYS = {  # formula -> the [lr_scheduler] keys its torchtitan accepted
    "current": ("warmup_steps", "decay_ratio", "decay_type", "min_lr_factor", "lr_min", "total_steps"),
    "2025-03": ("warmup_steps", "decay_ratio", "decay_type", "lr_min"),
    "2024": (),
}
DEFAULT_STEPS, DEFAULT_LR, DEFAULT_WARMUP = 10_000, sp.Rational(8, 10_000), 200


class _Locator:
    """Spans of ``[section]`` keys found by scanning lines (enough for diagnostics)."""

    def __init__(self, source: Source):
        self.source = source
        self.keys: dict[tuple[str, str], Span] = {}
        self.sections: dict[str, Span] = {}
        section, offset = "", 0
        for line in source.text.splitlines(keepends=True):
            header = re.match(r"\s*\[\s*([A-Za-z0-9_.\-]+)\s*\]", line)
            if header:
                section = header.group(1)
                self.sections.setdefault(section, Span.at_offset(source, offset + header.start(1),
                                                                 len(section)))
            # ``warmup.steps = 10`` (a dotted key) is the key ``warmup`` of this section, a table
            key = re.match(r"\s*([A-Za-z0-9_\-]+)((?:\s*\.\s*[A-Za-z0-9_\-]+)*)\s*=\s*", line)
            if key and not header:
                value_at = offset + key.end()
                length = len(line[key.end():].split("#")[0].rstrip()) or 1
                parts = [section, key.group(1), *re.findall(r"[A-Za-z0-9_\-]+", key.group(2))]
                for depth in range(1, len(parts) - 1):  # each table a dotted key opens
                    inner = ".".join(p for p in parts[:depth] if p)
                    name = parts[depth]
                    self.keys.setdefault((inner, name), Span.at_offset(source, value_at, length))
                    self.keys.setdefault((inner, "@" + name),
                                         Span.at_offset(source, offset + key.start(1),
                                                        key.end(2) - key.start(1)))
                inner = ".".join(p for p in parts[:-1] if p)
                self.keys[(inner, parts[-1])] = Span.at_offset(source, value_at, length)
                self.keys.setdefault((inner, "@" + parts[-1]),
                                     Span.at_offset(source, offset + key.start(1), key.end(2) - key.start(1)))
            offset += len(line)

    def value(self, section, key):
        return self.keys.get((section, key))

    def key(self, section, key):
        return self.keys.get((section, "@" + key))


def _prescan(source: Source) -> None:
    """Refuse, located, what ``tomllib`` would turn into a traceback or a huge number: arrays and
    inline tables nested deeper than ``MAX_CONFIG_DEPTH`` (``RecursionError``) and a number longer
    than ``MAX_DIGITS`` (a 5000-digit integer).  Strings and comments are skipped."""
    text, depth, position = source.text, 0, 0
    token = re.compile(r'"""|\'\'\'|"|\'|#|[\[{]|[\]}]|[0-9][0-9_]*')
    ends = {'"""': re.compile(r'(?:[^"\\]|\\.|"(?!""))*"""', re.S),
            "\'\'\'": re.compile(r"(?:.|\n)*?\'\'\'"), '"': re.compile(r'(?:[^"\\\n]|\\.)*"'),
            "\'": re.compile(r"[^\'\n]*\'"), "#": re.compile(r"[^\n]*")}
    while True:
        found = token.search(text, position)
        if found is None:
            return
        kind, position = found.group(0), found.end()
        if kind in ends:
            closed = ends[kind].match(text, position)
            position = closed.end() if closed else len(text)
        elif kind in "[{":
            depth += 1
            if depth > MAX_CONFIG_DEPTH:
                raise SchedlangError(f"the TOML nests more than {MAX_CONFIG_DEPTH} levels deep",
                                     Span.at_offset(source, found.start()),
                                     hint="a job config is a few tables of plain values")
        elif kind in "]}":
            depth = max(depth - 1, 0)
        elif sum(c.isdigit() for c in kind) > MAX_DIGITS:
            raise SchedlangError(f"this number has more than {MAX_DIGITS} digits; schedlang reads at most "
                                 f"{MAX_DIGITS}", Span.at_offset(source, found.start(), len(kind)),
                                 hint="write a long number with an exponent, e.g. 1.5e20")


def read(text: str, filename: str):
    source = Source(text, filename)
    check_size(text, filename)
    _prescan(source)
    try:
        data = tomllib.loads(text)
    except RecursionError:  # pragma: no cover - _prescan refuses the nesting first
        raise SchedlangError("the TOML nests too deeply", Span(source, 1, 1, 1, 2)) from None
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+), column (\d+)", str(exc))
        span = Span(source, int(found.group(1)), int(found.group(2)), int(found.group(1)),
                    int(found.group(2)) + 1) if found else None
        raise SchedlangError(f"not valid TOML: {str(exc).split(' (at')[0]}", span) from None
    return data, _Locator(source)


def _number(data, where: _Locator, section, key, default, whole=False):
    if key not in data.get(section, {}):
        return default
    value = data[section][key]
    number = exact(value) if not isinstance(value, str) else None
    if number is None or (whole and not number.is_Integer) or number < 0:
        want = "a whole number >= 0" if whole else "a number >= 0"
        raise SchedlangError(f"[{section}] {key} must be {want}, not {value!r}", where.value(section, key))
    return number


def source(text: str, filename: str = "<string>", style: str = "presets", options=None) -> ir.Module:
    data, where = read(text, filename)
    formula = _formula_option(options)
    for section in ("lr_scheduler", "training", "optimizer"):
        if not isinstance(data.get(section, {}), dict):
            raise SchedlangError(f"[{section}] must be a table", where.sections.get(section))
    sched = data.get("lr_scheduler", {})
    formula = _formula_of(data, where, formula)
    _check_keys(sched, where, formula)
    values = _values(data, where, formula)
    spans = _spans(data, where, formula, values)
    head = [header(filename, f"torchtitan job TOML, {formula} formula"),
            "# lr(t) is the lr of the optimizer step logged as step t + 1."]
    if "lr_min" in sched and formula == "current":
        head.append("# lr_min: the formula changed on 2025-06-11 (torchtitan v0.1.0) under this key; "
                    "import with formula=2025-03 for an older torchtitan.")
    section = where.sections.get("lr_scheduler")
    body = _preset(formula, values, spans, section) if style == "presets" \
        else _core(formula, values, spans, section)
    steps_at = where.value("training", "steps") if "steps" in data.get("training", {}) else None
    run = noted(run_stmt(number(values["training_steps"], spans["training_steps"]), steps_at),
                "[training] steps: the train loop's optimizer steps")
    return module(head, run, schedule_stmt("lr", body, section))


def _formula_option(options) -> str | None:
    """The option ``formula`` (None: not given), the only option there is."""
    options = dict(options or {})
    formula = options.pop("formula", None)
    if options:
        raise SchedlangError(f"torchtitan-toml has no option '{next(iter(options))}'",
                             hint="its option is formula=" + "|".join(FORMULAS))
    if formula is not None and formula not in FORMULAS:
        raise SchedlangError(f"unknown torchtitan formula '{formula}'", hint="one of " + ", ".join(FORMULAS))
    return formula


def _formula_of(data: dict, where: _Locator, formula: str | None) -> str:
    """The formula the file is read with: the option's, else ``2024`` for a file with only the old
    ``[training] warmup_steps`` key, else ``current``; a file whose keys cannot be that formula's
    is refused."""
    sched = data.get("lr_scheduler", {})
    old_warmup = "warmup_steps" in data.get("training", {})
    if formula is None:
        formula = "2024" if old_warmup and not sched else "current"
    if old_warmup and formula != "2024":
        raise SchedlangError("[training] warmup_steps is the key of torchtitan before 2025-03-11",
                             where.key("training", "warmup_steps"),
                             hint="import with the option formula=2024, or move it to [lr_scheduler]")
    if formula == "2024" and sched:
        raise SchedlangError("torchtitan before 2025-03-11 had no [lr_scheduler] section",
                             where.sections.get("lr_scheduler"),
                             hint="choose formula=current or formula=2025-03")
    return formula


def _check_keys(sched: dict, where: _Locator, formula: str) -> None:
    """Every ``[lr_scheduler]`` key is one the formula's torchtitan accepted, and the floor is given
    under one name at most."""
    for key in sched:
        if key not in KEYS[formula]:
            hint = did_you_mean(key, KEYS[formula]) or "keys: " + ", ".join(KEYS[formula])
            if formula == "2025-03" and key in KEYS["current"]:
                hint = f"{key} came with the current formula; import with formula=current"
            raise SchedlangError(f"[lr_scheduler] {key} is not a key of torchtitan ({formula} formula)",
                                 where.key("lr_scheduler", key), hint=hint)
    if "min_lr_factor" in sched and "lr_min" in sched:
        raise SchedlangError("give min_lr_factor or its old name lr_min, not both",
                             where.key("lr_scheduler", "lr_min"))


def _values(data: dict, where: _Locator, formula: str) -> dict:
    """The preset's keywords: lr, steps and warmup (torchtitan's defaults where the file leaves
    them out), then the newer formulas' ``[lr_scheduler]`` keys the file gives."""
    lr = _number(data, where, "optimizer", "lr", DEFAULT_LR)
    steps = _number(data, where, "training", "steps", sp.Integer(DEFAULT_STEPS), whole=True)
    if steps == 0:
        raise SchedlangError("[training] steps must be positive", where.value("training", "steps"))
    warm_section = "training" if formula == "2024" else "lr_scheduler"
    warmup = _number(data, where, warm_section, "warmup_steps", sp.Integer(DEFAULT_WARMUP), whole=True)
    values = {"lr": lr, "training_steps": steps, "warmup_steps": warmup}
    if formula != "2024":
        values.update(_decay_values(data, where, formula))
    return values


def _spans(data: dict, where: _Locator, formula: str, values: dict) -> dict:
    """Each keyword's span: the value of the key it was read from, ``[lr_scheduler]`` for a
    default the file leaves out (None without that section either)."""
    sched = data.get("lr_scheduler", {})
    floor = "lr_min" if "lr_min" in sched else "min_lr_factor"
    keys = {"lr": ("optimizer", "lr"), "training_steps": ("training", "steps"),
            "warmup_steps": ("training" if formula == "2024" else "lr_scheduler", "warmup_steps"),
            "lr_min": ("lr_scheduler", floor), "min_lr_factor": ("lr_scheduler", floor)}
    out = {}
    for name in values:
        section, key = keys.get(name, ("lr_scheduler", name))
        found = key in data.get(section, {}) and where.value(section, key)
        out[name] = found or where.sections.get("lr_scheduler")
    return out


def _decay_values(data: dict, where: _Locator, formula: str) -> dict:
    """The ``[lr_scheduler]`` decay keys of the newer formulas, as given; the floor is ``lr_min``
    (2025-03) or ``min_lr_factor`` (current) whichever name the file used."""
    sched, values = data.get("lr_scheduler", {}), {}
    if "decay_ratio" in sched:
        values["decay_ratio"] = _number(data, where, "lr_scheduler", "decay_ratio", None)
    if "decay_type" in sched:
        kind = sched["decay_type"]
        if kind not in DECAY_TYPES:
            raise SchedlangError(f"[lr_scheduler] decay_type must be one of {', '.join(DECAY_TYPES)}, "
                                 f"not {kind!r}", where.value("lr_scheduler", "decay_type"),
                                 hint=did_you_mean(str(kind), DECAY_TYPES))
        values["decay_type"] = kind
    floor_key = "lr_min" if formula == "2025-03" else "min_lr_factor"
    for key in ("min_lr_factor", "lr_min"):
        if key in sched:
            values[floor_key] = _number(data, where, "lr_scheduler", key, None)
    if "total_steps" in sched:
        values["total_steps"] = _number(data, where, "lr_scheduler", "total_steps", None, whole=True)
    return values


def _preset(formula: str, values: dict, spans: dict, section) -> ir.Call:
    """``torchtitan.NAME(key=value, ...)``, each value at its key (``decay_type`` a string of
    ``DECAY_TYPES``, checked by ``_decay_values``)."""
    name = {"current": "lr_scheduler", "2025-03": "lr_scheduler_v2025_03",
            "2024": "linear_warmup_linear_decay"}[formula]
    given = {k: string(v, spans[k]) if isinstance(v, str) else number(v, spans[k])
             for k, v in values.items()}
    return call(f"torchtitan.{name}", span=section, **given)


def _decay(floor, p: str, kind: str) -> str:
    """The decay's formula, of the names ``LR``, ``FLOOR`` and ``REST`` (``1 - FLOOR``)."""
    shape = {"linear": f"1 - {p}", "sqrt": f"1 - sqrt({p})", "cosine": f"(1 + cos(pi * {p})) / 2"}[kind]
    if floor == 0:
        return f"LR * ({shape})"
    return f"LR * (FLOOR + REST * ({shape}))"


def _core(formula: str, values: dict, spans: dict, section) -> ir.Node:
    """The same schedule in core syntax: ``_core_text``'s formula, each name the number it holds."""
    held: dict = {}
    return written(_core_text(formula, values, spans, held), section, **held)


def _core_text(formula: str, values: dict, spans: dict, held: dict) -> str:
    """Warmup, stable and decay as segments in local ``t``: a formula (``statements.formula``) of
    the names it puts in ``held``, each number at the key it is computed from."""
    lr, warm = values["lr"], values["warmup_steps"]
    total = values.get("total_steps", values["training_steps"])
    kind = values.get("decay_type", "linear")
    floor_key = "min_lr_factor" if "min_lr_factor" in values else "lr_min"
    floor = values.get(floor_key, sp.Integer(0))
    total_at = spans.get("total_steps", spans["training_steps"])
    held.update(LR=number(lr, spans["lr"]), FLOOR=number(floor, spans.get(floor_key)),
                REST=number(1 - floor, spans.get(floor_key)))

    def warm_at(value):
        return number(value, spans["warmup_steps"])

    if formula == "2024":
        held.update(W=warm_at(warm), W1=warm_at(warm + 1), N=number(max(1, total - warm), total_at))
        return " >> ".join(["(LR * (t + 1) / W1 for W)"] * bool(warm) + ["LR * (1 - t / N)"])
    if formula == "current":
        warm = min(warm, total)
    ratio = values.get("decay_ratio")
    decay = total - warm if ratio is None else min(sp.Integer(round(int(total) * float(ratio))),
                                                   total - warm)
    decay_at = spans.get("decay_ratio", total_at)
    pieces = []
    held.update(W=warm_at(warm), W1=warm_at(warm + 1), D=number(decay, decay_at),
                D1=number(decay + 1, decay_at))
    if formula == "current":
        stable = total + 1 - warm - decay
        if warm:
            pieces.append("(LR * (t + 1) / W for W)")
        if decay == 0:
            return " >> ".join([*pieces, "constant(LR)"])
        p = "(t + 1) / D"
    else:
        stable = total - warm - decay
        if warm:
            pieces.append("(LR * (t + 1) / W1 for W)")
        p = "(t + 1) / D1"
    if stable:
        held["S"] = number(stable, total_at)
        pieces.append("constant(LR, S)")
    return " >> ".join([*pieces, _decay(floor, p, kind)])


# -- the writer (``schedlang export --format torchtitan-toml``) ------------------------------------

#: ``torchtitan.lr_scheduler`` keyword -> the job TOML's (section, key).
_WRITTEN = {"lr": ("optimizer", "lr"), "training_steps": ("training", "steps"),
            "warmup_steps": ("lr_scheduler", "warmup_steps"), "decay_ratio": ("lr_scheduler", "decay_ratio"),
            "decay_type": ("lr_scheduler", "decay_type"), "min_lr_factor": ("lr_scheduler", "min_lr_factor"),
            "total_steps": ("lr_scheduler", "total_steps")}


def export(source, filename="<string>", params=None, verify=True, schedules=None, *, read,
           into=None) -> str:
    """The job TOML's schedule keys for one ``torchtitan.lr_scheduler`` call (the current formula),
    or the one proven equal to the file's lr (``common/by_proof``): ``[optimizer] lr``,
    ``[training] steps`` (the run) and the ``[lr_scheduler]`` table, every key written, since
    torchtitan's defaults (``lr = 8e-4``, ``steps = 10000``, ``warmup_steps = 200``) are not the
    preset's.  ``into`` (the job TOML the file came from): that file with its ``[lr_scheduler]``
    table replaced and its ``lr`` and ``steps`` set, its other lines kept, proven so."""
    call = PresetCall(source, filename, params, "torchtitan-toml",
                      'torchtitan.lr_scheduler(lr=8e-4, training_steps=10000, warmup_steps=200, '
                      'decay_type="cosine")', writes=("torchtitan.lr_scheduler",))
    if call.name != "torchtitan.lr_scheduler":
        raise SchedlangError(f"{call.name} is an older torchtitan's formula; the export writes the current "
                             "one", call.node.span, hint="write the lr as torchtitan.lr_scheduler(...)")
    values = {"lr": sp.Integer(1), "warmup_steps": sp.Integer(200)}  # the preset's defaults
    for name in _WRITTEN:
        node = call.given.get(name)
        if node is not None:
            values[name] = node.value if isinstance(node, ir.String) else call.number(name)
    run = call.run()
    if "training_steps" not in values:
        if run is None:
            raise SchedlangError("torchtitan's [training] steps is the run's length: the file gives none",
                                 call.node.span, hint="give training_steps=N, or declare `run = N`")
        values["training_steps"] = sp.Integer(run)
    written: dict[str, dict[str, str]] = {"optimizer": {}, "training": {}, "lr_scheduler": {}}
    for name, value in values.items():
        section, key = _WRITTEN[name]
        written[section][key] = f'"{value}"' if isinstance(value, str) else number_text(value)
    text = _merged(into.text, written) if into is not None else _alone(written)
    head = [f"# torchtitan job TOML keys written by schedlang from {comment_safe(str(filename))}:"]
    head.append(f"# proved merged into {comment_safe(into.filename)} ([lr_scheduler] replaced, lr and steps "
                "set)." if into is not None else
                "# proved alone, every other key at torchtitan's default; put them in your job TOML.")
    if call.found is not None:
        head.append(f"# the file's lr is {comment_safe(call.found)}, proven.")
    text = "\n".join(head) + "\n" + text
    if verify:
        proven(call.program, text, read, into.filename if into is not None else filename, params=params,
               schedules=["lr"], into=into.filename if into is not None else None)
    return text


def _alone(written: dict[str, dict[str, str]]) -> str:
    return "\n".join(f"[{section}]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items())
                     for section, keys in written.items())


def _merged(original: str, written: dict[str, dict[str, str]]) -> str:
    """``original`` with the keys of ``written`` in place: its ``[lr_scheduler]`` table's keys all
    removed (the export states the schedule in full), its ``[optimizer] lr`` and ``[training]
    steps`` lines replaced, the written keys put under each section's header (a missing section
    added at the end); every other line as it was."""
    lines, section, placed = [], "", set()
    for line in original.splitlines(keepends=True):
        header = re.match(r"\s*\[\s*([A-Za-z0-9_.\-]+)\s*\]", line)
        if header:
            section = header.group(1)
            lines.append(line if line.endswith("\n") else line + "\n")
            if section in written and section not in placed:
                placed.add(section)
                lines += [f"{k} = {v}\n" for k, v in written[section].items()]
            continue
        key = re.match(r"\s*([A-Za-z0-9_\-]+)\s*=", line)
        if key and section in written and (section == "lr_scheduler" or key.group(1) in written[section]):
            continue
        lines.append(line)
    for section, keys in written.items():
        if section not in placed:
            lines.append(f"\n[{section}]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items()))
    return "".join(lines)


# -- the declaration (``formats/__init__.py`` lists this module) ----------------------------------


FORMAT = Format("torchtitan-toml", "torchtitan job TOML ([lr_scheduler])", (".toml",),
                lambda text, suffix: True, reader("torchtitan-toml", None, source, takes_options=True),
                writer=export)
