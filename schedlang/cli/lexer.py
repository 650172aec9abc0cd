"""A Pygments lexer for ``.sched`` files (alias ``sched``), for the docs site and any highlighter.

Pygments is optional (the ``dev`` extra): only Pygments imports this module, through the
``pygments.lexers`` entry point in ``pyproject.toml``; ``schedlang check`` never does.

Nothing here is retyped: the rules and their order are ``schedlang.cli.highlight.RULES`` (the
words from the parser, the standard library and the presets, the number and duration
patterns from the grammar's own terminals), the table the editors' TextMate grammar is
generated from too; this module only says which Pygments token each kind of rule makes.
"""

from __future__ import annotations

from pygments.lexer import RegexLexer
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

from .highlight import RULES

#: The Pygments token of each kind of ``highlight.RULES``.
TOKENS = {
    "whitespace": Whitespace,
    "comment": Comment.Single,
    "string": String.Double,
    "duration": Number.Float,
    "number": Number,
    "keyword": Keyword,
    "word_operator": Operator.Word,
    "literal": Keyword.Constant,
    "type": Keyword.Type,
    "preset": Name.Builtin,
    "builtin": Name.Builtin,
    "pseudo": Name.Builtin.Pseudo,
    "name": Name,
    "operator": Operator,
    "punctuation": Punctuation,
    "error": Error,
    "text": Text,
}


class SchedlangLexer(RegexLexer):
    """Tokens of the schedlang grammar (``grammar/schedlang.lark``)."""

    name = "schedlang"
    aliases = ["sched", "schedlang"]
    filenames = ["*.sched"]
    mimetypes = ["text/x-schedlang"]
    url = "https://github.com/schedlang/schedlang"

    tokens = {"root": [(rule.regex, TOKENS[rule.kind]) for rule in RULES]}
