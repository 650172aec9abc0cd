"""The editors' TextMate grammar (editors/vscode/): current, and tokenizing every ``.sched`` as Pygments does.

``tools/gen_editors.py`` writes the grammar from ``schedlang.cli.highlight.RULES``, the table the
Pygments lexer is built from.  Here the grammar is applied the way a TextMate engine applies it
(``tests/textmate.py``: earliest match per line, first pattern on a tie) with Python's ``re``
and, where ``libonig`` is installed, with Oniguruma itself, the engine VS Code runs: every
character of every ``.sched`` in the repository is covered, the hand-written lines get the
expected scopes, and every token has the boundaries and the class of the Pygments token.
"""

import json
import sys
from pathlib import Path

import pytest
import textmate
from helpers import ROOT, SCHED_FILES, expected_error_at

sys.path.insert(0, str(ROOT / "tools"))
import gen_editors as G  # noqa: E402

STALE = "editors/vscode is stale: run `python tools/gen_editors.py` and commit editors/"
GRAMMAR = json.loads(G.GRAMMAR.read_text(encoding="utf-8"))
ONIGURUMA = textmate.oniguruma()
ENGINES = ["re", pytest.param("oniguruma", marks=pytest.mark.skipif(
    ONIGURUMA is None, reason="libonig is not installed (apt-get install libonig5)"))]


def _rules(engine: str):
    compile_ = textmate.python_search if engine == "re" else ONIGURUMA.compile
    return [(compile_(p["match"]), p["name"]) for p in GRAMMAR["patterns"]]


RULES = {"re": _rules("re")}


def rules(engine: str):
    if engine not in RULES:
        RULES[engine] = _rules(engine)
    return RULES[engine]


def read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:  # the corpus's not-UTF-8 file: nothing to highlight
        assert "not valid UTF-8" in path.with_suffix(".txt").read_text(encoding="utf-8")
        return None


def scopes(text: str, engine: str = "re") -> dict[str, str]:
    """The scope of each word's first occurrence."""
    first: dict[str, str] = {}
    for a, b, scope in textmate.tokenize(rules(engine), text):
        first.setdefault(text[a:b], scope)
    return first


def test_committed_files_are_current():
    assert not G.stale(), f"{STALE}: {[str(p.relative_to(ROOT)) for p in G.stale()]}"


def test_grammar_uses_only_what_the_tokenizer_models():
    textmate.check_supported(GRAMMAR)
    assert GRAMMAR["scopeName"] == "source.schedlang"
    assert all(p["name"].endswith(".schedlang") for p in GRAMMAR["patterns"])


def test_the_extension_starts_the_language_server():
    """``main`` is the generated extension.js: it starts ``schedlang lsp`` with the client library
    package.json depends on, reads the settings package.json declares and registers its command."""
    package = json.loads((G.VSCODE / "package.json").read_text(encoding="utf-8"))
    script = (G.VSCODE / package["main"]).read_text(encoding="utf-8")
    assert package["activationEvents"] == ["onLanguage:schedlang"]
    assert "vscode-languageclient" in package["dependencies"]
    # vscode-languageclient 11 needs VS Code 1.91 or later
    assert tuple(int(x) for x in package["engines"]["vscode"].lstrip("^").split(".")[:2]) >= (1, 91)
    assert 'require("vscode-languageclient/node")' in script and "TransportKind.stdio" in script
    for setting, spec in package["contributes"]["configuration"]["properties"].items():
        assert f'"{setting.split(".", 1)[1]}"' in script, setting
        assert spec["description"]
    assert spec["default"] == ["lsp"]
    [command] = package["contributes"]["commands"]
    assert f'registerCommand("{command["command"]}"' in script
    assert "client.stop()" in script and "deactivate" in script


def test_package_json():
    package = json.loads((G.VSCODE / "package.json").read_text(encoding="utf-8"))
    for field in ("name", "displayName", "description", "version", "publisher", "engines"):
        assert package[field], field
    assert package["engines"]["vscode"].startswith("^")
    assert package["categories"][0] == "Programming Languages"
    [language] = package["contributes"]["languages"]
    assert language["id"] == "schedlang" and language["extensions"] == [".sched"]
    [grammar] = package["contributes"]["grammars"]
    assert grammar == {"language": "schedlang", "scopeName": GRAMMAR["scopeName"],
                       "path": "./syntaxes/schedlang.tmLanguage.json"}
    for path in (language["configuration"], grammar["path"]):
        assert (G.VSCODE / path).is_file(), path
    configuration = json.loads((G.VSCODE / language["configuration"]).read_text(encoding="utf-8"))
    assert configuration["comments"] == {"lineComment": "#"}
    assert ["(", ")"] in configuration["brackets"] and ["[", "]"] in configuration["brackets"]
    assert {p["open"] for p in configuration["autoClosingPairs"]} == {"(", "[", '"'}


@pytest.mark.parametrize("engine", ENGINES)
def test_scopes_of_hand_written_lines(engine):
    text = ('param n: int = 10 where n > 0  # steps\n'
            'let half = 0.5 * n\n'
            'def f(x) = if x >= 1.5e-3 and not false then min(x, pi) else t / e\n'
            'schedule lr = warmup(linear, 5) >> torch.StepLR(0.1, step_size=2ep) for 500ba\n'
            'schedule s = cosine(1, 0, n) >> x.linear >> "a string" @\n')
    got = scopes(text, engine)
    expected = {
        "param": "keyword.control", "where": "keyword.control", "let": "keyword.control",
        "def": "keyword.control", "if": "keyword.control", "then": "keyword.control",
        "else": "keyword.control", "schedule": "keyword.control", "for": "keyword.control",
        "and": "keyword.operator.word", "not": "keyword.operator.word",
        "false": "constant.language.boolean", "int": "storage.type",
        "10": "constant.numeric", "0.5": "constant.numeric", "1.5e-3": "constant.numeric",
        "2ep": "constant.numeric.duration", "500ba": "constant.numeric.duration",
        "# steps": "comment.line.number-sign", '"a string"': "string.quoted.double",
        "warmup": "support.function.builtin", "linear": "support.function.builtin",
        "min": "support.function.builtin", "cosine": "support.function.builtin",
        "torch.StepLR": "support.function.preset",
        "pi": "support.constant", "t": "support.constant", "e": "support.constant",
        "n": "variable.other", "half": "variable.other", "step_size": "variable.other",
        "x": "variable.other", ">>": "keyword.operator", ">=": "keyword.operator", "*": "keyword.operator",
        "(": "punctuation", ",": "punctuation", ".": "punctuation", "@": "invalid.illegal",
    }
    assert {word: got[word] for word in expected} == {w: f"{s}.schedlang" for w, s in expected.items()}
    # `batch` and `run` start their statements; elsewhere they are names
    statements = "param run: int = 1\nbatch = 8\nrun = run\nschedule lr = cosine(1, 0, run)\n"
    found = [s for a, b, s in textmate.tokenize(rules(engine), statements)
             if statements[a:b] in ("run", "batch")]
    assert found == ["variable.other.schedlang", "keyword.control.schedlang", "keyword.control.schedlang",
                     "variable.other.schedlang", "variable.other.schedlang"]
    # the calls of the run's clock are library rows like the built-ins and presets (issue 40)
    clock = ("param seq_len: int = 4\nbatch = megatron.step_batch_size_schedule(\"0:16 2.4B:320\")\n"
             "schedule a = on_tokens(linear(1, 0, 8)) >> on_samples(constant(0)) >> stages(1, [], [])\n")
    assert {w: scopes(clock, engine)[w] for w in ("megatron.step_batch_size_schedule", "on_tokens",
                                                   "on_samples", "stages")} == {
        "megatron.step_batch_size_schedule": "support.function.preset.schedlang",
        "on_tokens": "support.function.builtin.schedlang", "on_samples": "support.function.builtin.schedlang",
        "stages": "support.function.builtin.schedlang"}
    # `x.linear`: a field of x, not the built-in (the token after `.` is a plain name).
    tokens = [(text[a:b], s) for a, b, s in textmate.tokenize(rules(engine), text)]
    assert tokens[tokens.index((".", "punctuation.schedlang")) + 1] == ("linear", "variable.other.schedlang")


def _pygments_scope_prefix():
    from pygments.token import Comment, Error, Keyword, Name, Number, Operator, Punctuation, String

    # Most specific first: the first entry that contains a Pygments token gives its scope.
    return [(Comment, "comment."), (String, "string."), (Number, "constant.numeric."),
            (Keyword.Constant, "constant.language."), (Keyword.Type, "storage.type."),
            (Keyword, "keyword."), (Operator, "keyword.operator."),
            (Name.Builtin.Pseudo, "support.constant."), (Name.Builtin, "support.function."),
            (Name, "variable."), (Punctuation, "punctuation."), (Error, "invalid.")]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("path", SCHED_FILES, ids=[str(p.relative_to(ROOT)) for p in SCHED_FILES])
def test_every_sched_file(path, engine):
    text = read(path)
    if text is None:
        return
    tokens = textmate.tokenize(rules(engine), text)
    covered = set()
    for a, b, _ in tokens:
        covered.update(range(a, b))
    gaps = {text[i] for i in range(len(text)) if i not in covered}
    assert all(c.isspace() for c in gaps), f"{path}: not covered: {gaps}"
    invalid = [a for a, _, scope in tokens if scope.startswith("invalid.")]
    if invalid:  # only a file of the diagnostics corpus, written to fail on that character
        line = text.count("\n", 0, invalid[0]) + 1
        assert (line, invalid[0] - (text.rfind("\n", 0, invalid[0]) + 1) + 1) == expected_error_at(path)

    pytest.importorskip("pygments")
    from schedlang.cli.lexer import SchedlangLexer

    prefixes = _pygments_scope_prefix()
    expected = []
    for start, kind, value in SchedlangLexer(stripnl=False, ensurenl=False).get_tokens_unprocessed(text):
        if value.isspace():  # Whitespace, and Text for the odd space (\v, no-break): left unscoped
            continue
        prefix = next(p for t, p in prefixes if kind in t)
        expected.append((start, start + len(value), prefix, str(kind)))
    got = [(a, b, scope) for a, b, scope in tokens]
    assert [e[:2] for e in expected] == [(a, b) for a, b, _ in got], f"{path}: token boundaries differ"
    wrong = [(text[a:b], kind, scope) for (a, b, prefix, kind), (_, _, scope) in zip(expected, got)
             if not scope.startswith(prefix)]
    assert not wrong, f"{path}: TextMate scope disagrees with the Pygments token: {wrong}"
