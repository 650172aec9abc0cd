"""``schedlang fmt``: canonical, idempotent, comments kept, never a change of meaning.

Every ``.sched`` in the repository is already in the canonical layout (``fmt --check``
passes); a scrambled copy of each (the same tokens and comments, random spacing and line
breaks) formats back to exactly that layout, and compiles to schedules that
``schedlang.equivalent`` proves equal to the original's.
"""

import io
import random
import sys
from pathlib import Path

import pytest
from helpers import ROOT

import schedlang
from schedlang.cli import main
from schedlang.syntax.fmt import _tokens, _tree, format_source

SCHED_FILES = sorted(p for p in ROOT.rglob("*.sched")
                     if not any(part.startswith(".") for part in p.relative_to(ROOT).parts))


def _parses(path: Path) -> bool:
    try:
        schedlang.syntax.parser.parse(path.read_bytes(), str(path))
        return True
    except schedlang.SchedlangError:
        return False


PARSING = [p for p in SCHED_FILES if _parses(p)]
NOT_PARSING = [p for p in SCHED_FILES if p not in PARSING]


def _ids(paths):
    return [str(p.relative_to(ROOT)) for p in paths]


def scramble(text: str, seed: int) -> str:
    """The same tokens and comments with random whitespace: a trailing comment stays on its
    token's line, an own-line comment stays on a line of its own."""
    rng = random.Random(seed)
    tree, comments = _tree(text)
    items = sorted([(t.start_pos, 0, t) for t in _tokens(tree)] + [(c.start_pos, 1, c) for c in comments],
                   key=lambda item: item[0])
    out, previous, last_line = [], None, None
    for _, is_comment, item in items:
        blank = last_line is not None and item.line - last_line > 1  # kept by fmt: keep it here
        at_line_start = not out or out[-1].endswith("\n")
        if blank:
            out.append("\n" if at_line_start else "\n\n")
        elif is_comment:
            own_line = previous is None or previous.end_line != item.line
            out.append(("" if at_line_start else "\n") if own_line else rng.choice([" ", "\t", "   "]))
        elif out:
            out.append(rng.choice(["", " ", "\t"]) if at_line_start else
                       rng.choice([" ", "  ", "\n", " \n\t ", "\r\n"]))
        out.append(str(item) + ("\n" if is_comment else ""))
        previous, last_line = item, item.end_line
    return "".join(out)


def test_the_repository_has_sched_files():
    assert len(PARSING) >= 40 and any(p.parent.name == "examples" for p in PARSING)


@pytest.mark.parametrize("path", PARSING, ids=_ids(PARSING))
def test_every_sched_file_is_formatted(path):
    text = path.read_bytes().decode("utf-8")
    assert format_source(text, str(path)) == text, f"run: schedlang fmt {path.relative_to(ROOT)}"


@pytest.mark.parametrize("path", PARSING, ids=_ids(PARSING))
def test_scrambled_file_formats_back_and_means_the_same(path):
    text = path.read_bytes().decode("utf-8").removeprefix("\ufeff")
    for seed in range(2):
        messy = scramble(text, seed)
        assert format_source(messy) == text
        assert format_source(format_source(messy)) == format_source(messy)
    try:
        original = schedlang.compile(text, filename=str(path))
    except schedlang.SchedlangError as exc:  # the diagnostics corpus: the same error, moved
        with pytest.raises(schedlang.SchedlangError) as info:
            schedlang.compile(messy)
        assert info.value.message.split(":")[0] == exc.message.split(":")[0]
        return
    scrambled = schedlang.compile(messy)
    assert list(scrambled.schedules) == list(original.schedules)
    for name, schedule in original.schedules.items():
        if schedule.is_bound:
            verdict = schedlang.equivalent(schedule, scrambled[name])
            assert verdict, (name, verdict)


@pytest.mark.parametrize("path", NOT_PARSING, ids=_ids(NOT_PARSING))
def test_files_that_do_not_parse_get_the_compilers_diagnostic(path, capsys):
    assert main(["fmt", "--check", str(path.relative_to(ROOT))]) == 2
    err = capsys.readouterr().err
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.load(path.relative_to(ROOT))
    assert err.startswith(str(info.value).splitlines()[0])


def test_fmt_check_passes_on_the_whole_repository(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["fmt", "--check", *map(str, _ids(PARSING))]) == 0
    assert capsys.readouterr().out == ""


LAYOUT_CASES = [
    # spacing
    ("warmup(linear,500)>>cosine( 1e-3,1e-4 ,500 )", "warmup(linear, 500) >> cosine(1e-3, 1e-4, 500)\n"),
    ("schedule lr=-t*2**-3+poly(1,0,10,power = 2)",
     "schedule lr = -t * 2 ** -3 + poly(1, 0, 10, power=2)\n"),
    ("schedule lr = if not t<3 and t>=1 then 1 else 2",
     "schedule lr = if not t < 3 and t >= 1 then 1 else 2\n"),
    ("param  p :int=3 where p>0\ndef f( a,b )=a*b\nschedule lr=f(p,2)",
     "param p: int = 3 where p > 0\ndef f(a, b) = a * b\nschedule lr = f(p, 2)\n"),
    ("schedule lr = torch . StepLR(lr = 1, step_size = 10) for 20ba",
     "schedule lr = torch.StepLR(lr=1, step_size=10) for 20ba\n"),
    # `batch` and `run` statements, and `run` as a name
    ("param run:int=9\nbatch=  8\nrun =run*2\nschedule lr=cosine(1,0,run)",
     "param run: int = 9\nbatch = 8\nrun = run * 2\nschedule lr = cosine(1, 0, run)\n"),
    # parentheses are kept; a trailing comma goes when the list fits on one line
    ("schedule lr = ((1)) + piecewise([1, 2,], [5,])", "schedule lr = ((1)) + piecewise([1, 2], [5])\n"),
    # blank lines: kept between statements, one at most, none at the ends; CRLF becomes LF
    ("\n\n# a\r\n\r\n\r\n\r\nparam p: int = 1\r\nschedule lr = p\r\n\r\n",
     "# a\n\nparam p: int = 1\nschedule lr = p\n"),
    # trailing comments are aligned on consecutive lines
    ("param a: int = 1 # one\nparam long_name: float = 2 # two\n\nschedule lr = a # three\n",
     "param a: int = 1            # one\nparam long_name: float = 2  # two\n\nschedule lr = a  # three\n"),
]


@pytest.mark.parametrize("source, expected", LAYOUT_CASES)
def test_layout(source, expected):
    assert format_source(source) == expected
    assert format_source(expected) == expected


def test_long_statements_break_at_segments_then_arguments():
    long = ("schedule lr = warmup(linear, 1000) >> constant(peak_learning_rate, total - 1000 - cooldown) "
            ">> linear(peak_learning_rate, 0, cooldown)")
    source = "param peak_learning_rate: float = 1\nparam total: int = 9000\nlet cooldown = 100\n" + long
    formatted = format_source(source)
    assert formatted.endswith("schedule lr = warmup(linear, 1000)\n"
                              "    >> constant(peak_learning_rate, total - 1000 - cooldown)\n"
                              "    >> linear(peak_learning_rate, 0, cooldown)\n")
    args = ", ".join(f"{i}000" for i in range(1, 40))
    formatted = format_source(f"schedule lr = piecewise([{args}, 40000], [{args}])")
    lines = formatted.splitlines()
    assert lines[0] == "schedule lr = piecewise(" and lines[-1] == ")"
    assert lines[1] == "    [" and lines[2] == "        1000,"
    assert all(len(line) <= 100 for line in lines)
    assert schedlang.equivalent(schedlang.compile(formatted)["lr"],
                                f"piecewise([{args}, 40000], [{args}])")


def test_comments_stay_where_they_were():
    source = ("# header\n\n"
              "# about peak\n"
              "param peak: float = 1e-3   # the top\n"
              "let tab = piecewise([1, 2, # two\n  3],\n"
              "  # milestones\n"
              "  [10, 20])\n"
              "schedule lr = warmup(linear, 10)  # ramp\n"
              "  >> constant(peak)\n"
              "# footer\n")
    assert format_source(source) == (
        "# header\n\n"
        "# about peak\n"
        "param peak: float = 1e-3  # the top\n"
        "let tab = piecewise(\n"
        "    [\n"
        "        1,\n"
        "        2,  # two\n"
        "        3,\n"
        "    ],\n"
        "    # milestones\n"
        "    [10, 20],\n"
        ")\n"
        "schedule lr = warmup(linear, 10)  # ramp\n"
        "    >> constant(peak)\n"
        "# footer\n")


def test_byte_order_mark_is_kept():
    assert format_source("\ufeffcosine(1,0,10)") == "\ufeffcosine(1, 0, 10)\n"


def test_long_sequences_do_not_recurse():
    source = "schedule lr = " + " >> ".join(["constant(1, 2)"] * 999) + " >> constant(1)"
    formatted = format_source(source)
    assert formatted.count("\n    >> constant(1, 2)") == 998


def test_cli_rewrites_checks_diffs_and_reads_stdin(tmp_path, capsys, monkeypatch):
    messy, tidy = tmp_path / "messy.sched", tmp_path / "sub" / "tidy.sched"
    tidy.parent.mkdir()
    messy.write_text("cosine(1,0,10)\n")
    tidy.write_text("cosine(1, 0, 10)\n")
    assert main(["fmt", "--check", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == f"{messy}\n" and "1 file(s) would be reformatted" in captured.err
    assert main(["fmt", "--diff", str(messy)]) == 1
    assert "-cosine(1,0,10)\n+cosine(1, 0, 10)\n" in capsys.readouterr().out
    assert messy.read_text() == "cosine(1,0,10)\n"
    assert main(["fmt", str(messy), str(tidy)]) == 0
    assert capsys.readouterr().err == f"reformatted {messy}\n"
    assert messy.read_text() == "cosine(1, 0, 10)\n"
    assert main(["fmt", "--check", str(tmp_path)]) == 0
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"linear(1,0,5)>>constant(0)  # c")))
    assert main(["fmt", "-"]) == 0
    assert capsys.readouterr().out == "linear(1, 0, 5) >> constant(0)  # c\n"


def test_cli_reports_a_file_that_does_not_parse_and_goes_on(tmp_path, capsys):
    bad, good = tmp_path / "bad.sched", tmp_path / "good.sched"
    bad.write_text("schedule lr = cosine(1, 0,\n")
    good.write_text("cosine(1,0,10)")
    assert main(["fmt", str(bad), str(good)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2:1: error: the file ends in the middle of an expression" in err
    assert good.read_text() == "cosine(1, 0, 10)\n"
