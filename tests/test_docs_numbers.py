"""The numbers the docs quote are the ones the commands print.

docs/tokens.md once said 244,090 steps for ``examples/deepseek_v3.sched`` while ``schedlang check``
said 245,567 (issue 36): a quoted figure goes stale when the code or the example changes, and
nothing noticed. A doc quotes a command in two ways, and both are run here:

* a transcript: a ``$ schedlang ...`` line in a code block, then lines of its output (some may be
  left out): every line shown must be a line the command prints, and every file it names must
  exist (a transcript of a checkpoint the repository does not hold is not run);
* a figure in prose or in a bare output block, listed in ``QUOTED`` with the command that
  produces it, a pattern that finds the figure in the command's output, and how the doc writes
  it (``str.format`` of the pattern's groups, numbers as ints: ``{steps:,}`` writes 245,567).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

import pytest
from helpers import ROOT, run_cli


@dataclass(frozen=True)
class Quoted:
    doc: str              # the file that quotes it
    command: tuple        # the schedlang arguments that print it
    pattern: str          # finds the figure in the command's output (stdout, then stderr)
    written: str          # how the doc writes it: str.format of the pattern's groups
    cwd: str = ""         # where the command runs (the repository's root by default)

    @property
    def id(self) -> str:
        return f"{self.doc}: {' '.join(self.command)}"


QUOTED = [
    Quoted("docs/tokens.md", ("check", "examples/deepseek_v3.sched"),
           r"schedule lr: (?P<steps>\d+) steps, [\d,]+ \((?P<tokens>[\d.]+T)\) tokens",
           "{steps:,} steps and {tokens} tokens"),
    Quoted("docs/tokens.md", ("check", "examples/llama3_405b.sched"),
           r"segments start at steps .*, \d+ \([\d,]+ \((?P<end>[\d.]+T)\) tokens\)$",
           "the cosine counted in steps reaches its end at {end} tokens"),
    Quoted("docs/cli.md", ("check", "examples/gpt_pretrain.sched"), r"^schedule lr: .*$", "{0}"),
    Quoted("docs/cli.md", ("show", "examples/wsd.sched"), r"(?s)^lr \(.*?\n(?=\S)", "{0}"),
    Quoted("README.md", ("check", "tests/diagnostics/unknown_name_typo.sched"), r"(?s).*", "{0}"),
    Quoted("docs/import_export.md", ("import", "gpt_345m.sh"), r"(?s).*", "{0}",
           "tests/frameworks/configs/megatron"),
    Quoted("docs/import_export.md", ("import", "hf_auto_cosine.json"), r"(?s).*", "{0}",
           "tests/frameworks/configs/deepspeed"),
]


def _words(text: str) -> str:
    """Whitespace collapsed: a figure may be wrapped across lines of a paragraph."""
    return " ".join(text.split())


def _output(command, cwd: str = "") -> str:
    result = run_cli(*command, cwd=ROOT / cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result.stdout + result.stderr


def _value(text: str | None):
    return int(text) if text is not None and text.isdigit() else text


@pytest.mark.parametrize("quoted", QUOTED, ids=lambda q: q.id)
def test_a_quoted_figure_is_what_the_command_prints(quoted: Quoted):
    output = _output(quoted.command, quoted.cwd)
    match = re.search(quoted.pattern, output, re.MULTILINE)
    assert match, f"{quoted.id}: the output no longer has {quoted.pattern!r}:\n{output}"
    written = quoted.written.format(match.group(0), **{k: _value(v) for k, v in match.groupdict().items()})
    doc = (ROOT / quoted.doc).read_text(encoding="utf-8")
    assert _words(written) in _words(doc), (
        f"{quoted.doc} should quote what `schedlang {' '.join(quoted.command)}` prints: {written!r}")


def _transcripts() -> list[tuple[str, int, list[str], list[str]]]:
    """(doc, line, the command's arguments, the output lines the doc shows) for every
    ``$ schedlang`` line in a code block of README.md and docs/*.md."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        lines = path.read_text(encoding="utf-8").splitlines()
        fence = False
        for index, line in enumerate(lines):
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            if not (fence and line.startswith("$ schedlang ")):
                continue
            shown = []
            for after in lines[index + 1:]:
                if after.startswith("$ ") or after.lstrip().startswith("```"):
                    break
                if after.strip() and after.strip() != "...":
                    shown.append(after)
            found.append((str(path.relative_to(ROOT)), index + 1, shlex.split(line[len("$ schedlang "):]),
                          shown))
    return found


TRANSCRIPTS = [t for t in _transcripts()
               if all((ROOT / a).exists() for a in t[2] if re.search(r"\.(sched|pt|yaml|json|sh)$", a))]


def test_transcripts_are_found():
    assert len(TRANSCRIPTS) >= 3, TRANSCRIPTS  # docs/index.md's check and its two verifies


@pytest.mark.parametrize(("doc", "line", "args", "shown"), TRANSCRIPTS,
                         ids=[f"{t[0]}:{t[1]}" for t in TRANSCRIPTS])
def test_a_transcript_is_what_the_command_prints(doc, line, args, shown):
    printed = {text.rstrip() for text in _output(args).splitlines()}
    for text in shown:
        assert text.rstrip() in printed, (f"{doc}:{line}: `schedlang {shlex.join(args)}` no longer "
                                          f"prints {text!r}; it prints:\n" + "\n".join(sorted(printed)))

