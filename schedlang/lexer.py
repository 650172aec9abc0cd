"""A Pygments lexer for ``.sched`` files (alias ``sched``), for the docs site and any highlighter.

Pygments is optional (the ``dev`` extra): only Pygments imports this module, through the
``pygments.lexers`` entry point in ``pyproject.toml``; ``schedlang check`` never does.

Nothing here is retyped: the words come from the parser (``RESERVED``), the parameter
types from lowering (``PARAM_TYPES``), the names from the standard library
(``SCHEDULES``, ``MATH``, ``CONSTANTS``) and the preset table (``PRESETS``), and the
number and duration patterns from the grammar's own terminals, so the highlighter
cannot disagree with the language about what a word or a number is.
"""

from __future__ import annotations

from pygments.lexer import RegexLexer, words
from pygments.token import (
    Comment,
    Error,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
)

from . import stdlib
from .lower import PARAM_TYPES
from .parser import RESERVED, _lark
from .presets import PRESETS

#: Word operators and literals, shown apart from the statement keywords.
_WORD_OPERATORS = ("and", "or", "not")
_LITERALS = ("true", "false")
_KEYWORDS = tuple(sorted(RESERVED - set(_WORD_OPERATORS) - set(_LITERALS)))


def _terminal(name: str) -> str:
    """The regular expression of one of the grammar's terminals (``NUMBER``, ``DURATION``, ``STRING``)."""
    return _lark().get_terminal(name).pattern.to_regexp()


def _longest_first(names) -> list[str]:
    return sorted(set(names), key=lambda n: (-len(n), n))


class SchedlangLexer(RegexLexer):
    """Tokens of the schedlang grammar (``grammar/schedlang.lark``)."""

    name = "schedlang"
    aliases = ["sched", "schedlang"]
    filenames = ["*.sched"]
    mimetypes = ["text/x-schedlang"]
    url = "https://github.com/schedlang/schedlang"

    tokens = {
        "root": [
            (r"[ \t\f\r\n]+", Whitespace),
            (r"#[^\n]*", Comment.Single),
            (_terminal("STRING"), String.Double),
            # Durations (500ba, 0.3dur) before plain numbers: the grammar gives them priority.
            (_terminal("DURATION"), Number.Float),
            (_terminal("NUMBER"), Number),
            (words(_KEYWORDS, suffix=r"\b"), Keyword),
            (words(_WORD_OPERATORS, suffix=r"\b"), Operator.Word),
            (words(_LITERALS, suffix=r"\b"), Keyword.Constant),
            (words(PARAM_TYPES, suffix=r"\b"), Keyword.Type),
            (words(_longest_first(p for p in PRESETS), suffix=r"\b(?!\.)"), Name.Builtin),
            (words(_longest_first([*stdlib.SCHEDULES, *stdlib.MATH]), prefix=r"(?<![.\w])",
                   suffix=r"\b(?!\.)"), Name.Builtin),
            (words(_longest_first([*stdlib.CONSTANTS, "t"]), prefix=r"(?<![.\w])", suffix=r"\b(?!\.)"),
             Name.Builtin.Pseudo),
            (r"[A-Za-z_][A-Za-z0-9_]*", Name),
            (r">>|\*\*|<=|>=|==|!=|[-+*/<>=]", Operator),
            (r"[()\[\],:.]", Punctuation),
            (r"\S", Error),
            (r".", Text),
        ],
    }
