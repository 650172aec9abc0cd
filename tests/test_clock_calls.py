"""The calls of the run's clock are ``library/`` rows (issue 40, item 2): ``on_samples``,
``on_tokens``, ``stages``, the frameworks' batch presets and OLMo-core's lr factor, each a
``clock_calls.ClockCall`` that lowering, ``semantics.names``, completion, hover, the builder and
the highlighters (``test_lexer``, ``test_editors``) read."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from fuzzing.generator import Generator
from helpers import ROOT

import schedlang
from schedlang import build as sb
from schedlang.cli.editor import completion, hover
from schedlang.cli.editor.document import Document
from schedlang.core.clock import Clock
from schedlang.errors import SchedlangError
from schedlang.library.clock_calls import CLOCK_CALLS, ClockCall, Role
from schedlang.program import Program
from schedlang.semantics import lower
from schedlang.semantics.names import LANGUAGE_NAMES

UNDOTTED = [name for name in CLOCK_CALLS if "." not in name]


def test_every_row_is_lowered_by_its_role():
    """Lowering dispatches on the row's role (``call_<role>``); a batch schedule's or a
    schedule read off one has its argument reader (``_read_<name>``), and its function its docs."""
    assert {r.value for r in Role if not hasattr(lower.Lowerer, f"call_{r.value}")} == set()
    readers = [c.name for c in CLOCK_CALLS.values() if c.role is not Role.ON_CLOCK
               and not hasattr(lower.Lowerer, "_read_" + c.name.replace(".", "_"))]
    assert readers == []
    assert [c.name for c in CLOCK_CALLS.values() if not c.doc] == []
    assert all(isinstance(c, ClockCall) for c in CLOCK_CALLS.values())
    assert {n for n, c in CLOCK_CALLS.items() if c.role is Role.ON_CLOCK} == {"on_samples", "on_tokens"}


def test_the_lowering_parts_share_no_table():
    """The five files of lowering import one another's classes only: the calls they dispatch
    are ``library/``'s rows (no ``ON_CLOCK`` / ``BATCH_CALLS`` table is imported across them)."""
    parts = sorted((ROOT / "schedlang" / "semantics").glob("lower*.py"))
    assert len(parts) == 5
    crossing = []
    for path in parts:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lower"):
                crossing += [f"{path.name}: {a.name}" for a in node.names if a.name.isupper()]
    assert crossing == []
    tables = {"ON_CLOCK", "BATCH_CALLS", "BATCH_SCHEDULES", "CALL_SIGNATURES"}
    imported = [f"{p.relative_to(ROOT)}: {a.name}" for p in (ROOT / "schedlang").rglob("*.py")
                for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
                if isinstance(node, ast.ImportFrom) for a in node.names if a.name in tables]
    assert imported == []


def test_names_holds_every_call_of_the_clock():
    """Generated text (``to_source``, the importers' parameters) never takes one of their names."""
    assert [n for n in UNDOTTED if n not in LANGUAGE_NAMES] == []
    assert {"megatron", "olmo_core"} <= LANGUAGE_NAMES


def test_a_megatron_import_never_writes_param_on_samples():
    from schedlang.formats import from_megatron_args

    text = from_megatron_args("ON_SAMPLES=1000\npython pretrain_gpt.py --lr 1e-3 --train-iters $ON_SAMPLES "
                              "--lr-decay-style cosine --min-lr 1e-5")
    assert "param on_samples_: int = 1000" in text and "param on_samples:" not in text
    assert schedlang.compile(text)["lr"](1000) == pytest.approx(1e-5)


@pytest.mark.parametrize("name", UNDOTTED)
@pytest.mark.parametrize("statement, column", [("param {}: int = 10", 7), ("let {} = 3", 5),
                                               ("def {}(x) = x", 5), ("schedule {} = 1", 10)])
def test_a_statement_named_after_a_call_of_the_clock_is_refused_at_it(name, statement, column):
    source = f"param n: int = 10\n{statement.format(name)}\nschedule lr = linear(1, 0, n)\n"
    with pytest.raises(SchedlangError, match=f"'{name}' is the language's {name}\\(\\.\\.\\.\\)") as info:
        schedlang.compile(source, filename="clock.sched")
    assert (info.value.span.line, info.value.span.column) == (2, column)
    assert f"{name}_" in info.value.hint


def test_the_builder_refuses_the_name_too():
    with pytest.raises(SchedlangError, match="'on_samples' is the language's on_samples") as info:
        sb.linear(1, 0, sb.param("on_samples", int, default=10))
    assert Path(info.value.span.source.filename).name == Path(__file__).name


def test_completion_offers_each_row_with_its_signature_and_docs():
    items = {i.label: i for i in completion.complete(Document("schedule lr = "), 1, 15)}
    for name in UNDOTTED:
        assert items[name].detail.startswith(CLOCK_CALLS[name].signature()), name
        assert CLOCK_CALLS[name].signature() in items[name].documentation
    dotted = {i.label: i for i in completion.complete(Document("batch = megatron."), 1, 18)}
    assert "rampup_batch_size" in dotted and "batch = ... only" in dotted["rampup_batch_size"].detail
    assert dotted["rampup_batch_size"].documentation.startswith("```schedlang\nmegatron.rampup_batch_size(")


@pytest.mark.parametrize("name", list(CLOCK_CALLS))
def test_hover_and_signature_help_read_the_row(name):
    text = f"let x = {name}("
    found = hover.hover(Document(text), 1, len(text) - 1)  # on the name's last letter
    assert found is not None and CLOCK_CALLS[name].signature() in found.markdown
    signature = completion.signature(Document(text), 1, len(text) + 1)
    assert signature is not None and signature.label == CLOCK_CALLS[name].signature()


def test_an_item_of_stages_is_where_its_error_is():
    """``stages``' function raises about one threshold; lowering puts it at that item."""
    source = ("param seq_len: int = 4\nbatch = stages(8, [16, 32], [100tok, 50tok])\n"
              "schedule lr = constant(1, 1000tok)\n")
    with pytest.raises(SchedlangError, match="not above the threshold before it") as info:
        schedlang.compile(source)
    assert (info.value.span.line, info.value.span.column) == (2, 38)
    with pytest.raises(SchedlangError, match="2 batch sizes after the first but 1 thresholds") as info:
        schedlang.compile(source.replace(", 50tok", ""))
    assert (info.value.span.line, info.value.span.column) == (2, 9)


def test_rebind_seq_len_lowers_once(monkeypatch):
    """Segments are placed on the clock after binding: ``rebind(seq_len=...)`` reuses the
    lowering (issue 40, item 4).  Counted on ``Lowerer.run``, the one walk of a file."""
    runs = []
    original = lower.Lowerer.run
    monkeypatch.setattr(lower.Lowerer, "run", lambda self: runs.append(1) or original(self))
    program = schedlang.compile("param seq_len: int = 4\nbatch = stages(8, [16], [400tok])\n"
                                "schedule lr = linear(1, 0, 100) >> cosine(1, 0, 1000tok)\n")
    again = program.rebind({"seq_len": 8})
    assert again.clock.seq_len == 8 and again["lr"](100) == 1
    assert len(runs) == 1


#: Files whose walk itself reads the batch schedule or ``seq_len``: a placed chain inside an
#: expression, a ``let``, a ``def`` (and its argument), a schedule read by name, and OLMo-core's
#: lr factor, which follows the batch; each with the parameters a rebind changes.
READ_BY_THE_WALK = {
    "expression": ("schedule lr = 2 * (linear(1, 0, 100) >> cosine(1, 0, 1000tok))\n", ("seq_len", "big")),
    "let": ("let warm = linear(0, 1, 100tok) >> constant(1, 200)\n"
            "schedule lr = warm >> cosine(1, 0, 500tok)\nschedule wd = 0.1 * warm\n", ("seq_len", "big")),
    "def": ("def f(x) = linear(x, 0, 100) >> cosine(x, 0, 1000tok)\n"
            "schedule lr = f(1) + f(2)\nschedule wd = f(0.5)\n", ("seq_len", "big")),
    "def argument": ("def f(s) = s * 3\nschedule lr = f(constant(1, 100) >> linear(1, 0, 600tok))\n",
                     ("seq_len", "big")),
    "by name": ("schedule a = constant(1, 100) >> linear(1, 0, 600tok)\nschedule b = a * 2\n",
                ("seq_len", "big")),
    "olmo_core.batch_size_lr_factor": (
        'schedule lr = olmo_core.CosWithWarmup(lr=1, units="tokens", t_max=4000, warmup=128)'
        ' * olmo_core.batch_size_lr_factor(units="tokens")\n', ("seq_len", "first")),
}


def _clocked(body: str) -> str:
    if "olmo_core" in body:
        return ("param seq_len: int = 4\nparam first: int = 16\nbatch = olmo_core.batch_size_schedule("
                'batch_sizes=[first, 64, 128], schedule=[0, 800, 2000], units="tokens")\n' + body)
    return "param seq_len: int = 4\nparam big: int = 16\nbatch = stages(8, [big], [400tok])\n" + body


@pytest.mark.parametrize("case", list(READ_BY_THE_WALK))
def test_a_rebind_the_walk_read_lowers_nothing_again(monkeypatch, case):
    """Where the walk itself placed a chain (inside an expression, a ``let``, a ``def``) or read
    the batch (OLMo-core's lr factor), ``rebind`` computes again only the values that read the
    clock (``ClockLowering.recorded_value``): the file is not lowered again and no built-in or
    preset is called again (their values are the walk's).  What it gives is what lowering the
    file with those values gives."""
    body, changed = READ_BY_THE_WALK[case]
    source = _clocked(body)
    program = schedlang.compile(source)
    for name in changed:
        for factor in (2, 0.5):
            values = {**program.values, name: int(program.values[name] * factor)}
            runs, builtins = [], []
            run, builtin = lower.Lowerer.run, lower.Lowerer.call_builtin
            monkeypatch.setattr(lower.Lowerer, "run", lambda self: runs.append(1) or run(self))
            monkeypatch.setattr(lower.Lowerer, "call_builtin",
                                lambda self, *a: builtins.append(1) or builtin(self, *a))
            again = program.rebind({name: values[name]})
            monkeypatch.undo()
            assert not runs and not builtins, (name, factor)
            lowered = Program(lower.lower(program._lowered.module, given=values), values)
            assert again.clock.table == lowered.clock.table != program.clock.table
            assert [s.expr for s in again] == [s.expr for s in lowered]
            assert [s.expr for s in again] != [s.expr for s in program]


@pytest.mark.parametrize("case", list(READ_BY_THE_WALK))
def test_another_clock_or_the_measured_form_lowers_nothing_again(monkeypatch, case):
    """``on_clock`` (resume, ``verify --axis tokens``) and the measured form of a file whose walk
    read the clock place it without lowering it again, as lowering it on that clock does."""
    program = schedlang.compile(_clocked(READ_BY_THE_WALK[case][0]))
    other = Clock(((0, 3), (20, 5)), 4)
    runs = []
    run = lower.Lowerer.run
    monkeypatch.setattr(lower.Lowerer, "run", lambda self: runs.append(1) or run(self))
    assert program.measured_forms()[0]
    ends: list = []
    measured = program._lowered.placed(program.values, measured=ends)
    try:
        placed = [s.expr for s in program.on_clock(other)]
    except SchedlangError as exc:  # OLMo-core's factor follows its own batch schedule only
        placed = str(exc)
    assert not runs
    monkeypatch.undo()
    module, lowered_ends = program._lowered.module, []
    lowered = lower.lower(module, given=program.values, measured=lowered_ends)
    assert [s.expr for s, _ in measured.schedules.values()] == [s.expr for s, _ in lowered.schedules.values()]
    assert ends == lowered_ends
    try:
        walked = [s.expr for s in Program(lower.lower(module, clock=other), {})]
    except SchedlangError as exc:
        walked = str(exc)
    assert placed == walked


@pytest.mark.parametrize("seed", range(6))
def test_the_fuzzer_s_clocked_chains_inside_a_statement_rebind_as_compiled(monkeypatch, seed):
    """The fuzzer's programs on the token or sample clock, their chain put inside an expression,
    a ``let`` and a ``def``'s argument: a rebind of ``seq_len`` lowers nothing again and gives
    what compiling with it gives (the error too, where the new value is refused)."""
    head, _, chain = Generator(seed).clocked().source.rpartition("schedule lr = ")
    chain = chain.strip()
    runs = []
    run = lower.Lowerer.run
    for body in (f"schedule lr = 0.5 * ({chain})\n",
                 f"let w = {chain}\nschedule lr = w\nschedule v = 2 * w\n",
                 f"def f(s) = s + 1\nschedule lr = f({chain})\n"):
        program = schedlang.compile(head + body)
        for seq_len in (program.values["seq_len"] * 2, max(1, program.values["seq_len"] // 3)):
            monkeypatch.setattr(lower.Lowerer, "run", lambda self: runs.append(1) or run(self))
            try:
                again = [s.expr for s in program.rebind({"seq_len": seq_len})]
            except SchedlangError as exc:
                again = str(exc)
            monkeypatch.undo()
            assert not runs
            try:
                compiled = [s.expr for s in schedlang.compile(head + body, params={"seq_len": seq_len})]
            except SchedlangError as exc:
                compiled = str(exc)
            assert again == compiled


def test_placing_again_is_what_compiling_with_the_values_gives(monkeypatch):
    """``rebind``, ``on_clock`` (``resume``, ``verify --axis tokens``) and the measured form place
    the walk of the file again (``Lowered.placed``), never lower it; what they give is what
    compiling with those values, or on that clock, gives."""
    source = ("param seq_len: int = 4\nbatch = stages(8, [16], [400tok])\n"
              "schedule lr = linear(1, 0, 100) >> cosine(1, 0, 1000tok)\n"
              "schedule wd = constant(0.1, 300tok) >> linear(0.1, 0, 50)\n")
    program = schedlang.compile(source)
    runs = []
    original = lower.Lowerer.run
    monkeypatch.setattr(lower.Lowerer, "run", lambda self: runs.append(1) or original(self))
    again = program.rebind({"seq_len": 8})
    other = Clock(((0, 3), (20, 5)), 4)
    placed = program.on_clock(other)
    forms, ends = program.measured_forms()
    assert not runs
    fresh = schedlang.compile(source, params={"seq_len": 8})
    assert [s.expr for s in again] == [s.expr for s in fresh]
    assert again.clock.table == fresh.clock.table and again.clock.table != program.clock.table
    assert placed.clock is other and placed["lr"].expr != program["lr"].expr
    assert forms and ends
    monkeypatch.undo()
    walked = Program(lower.lower(program._lowered.module, clock=other), {})  # the walk on that clock
    assert [s.expr for s in placed] == [s.expr for s in walked]
