"""The token classes of a ``.sched`` file, once, for every highlighter.

Two highlighters read this table: the Pygments lexer (``schedlang/cli/lexer.py``: the docs
site, ``pygmentize``) and the TextMate grammar of the editors
(``editors/vscode/syntaxes/schedlang.tmLanguage.json``, written by
``tools/gen_editors.py``).  Each maps a rule's *kind* to its own token type or scope, so
they cannot disagree about what a word or a number is.  Nothing here is retyped either:
the words come from the parser (``RESERVED``), the parameter types from lowering
(``PARAM_TYPES``), the names from the standard library (``SCHEDULES``, ``MATH``,
``CONSTANTS``), the calls of the run's clock (``CLOCK_CALLS``: ``on_tokens``, ``stages``, the
dotted batch presets) and the preset table (``PRESETS``), the number, duration and string
patterns from the grammar's own terminals.

The rules are tried in order *at the current position* and the first that matches wins
(Pygments' ``RegexLexer``).  A TextMate tokenizer instead takes the earliest match in the
rest of the line, the first rule on a tie; the two agree because some rule matches at every
position (``whitespace``, ``text`` and the catch-all ``error``) and no rule spans a line
break except ``whitespace``.  Each regex uses only what Python's ``re`` and Oniguruma (the
TextMate engine) read the same way: groups, classes, ``\\b``, fixed-length look-arounds.
Importing this module does not import Pygments.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..library import stdlib
from ..library.clock_calls import CLOCK_CALLS
from ..library.presets import PRESETS
from ..semantics.params import PARAM_TYPES
from ..syntax.parser import RESERVED, STATEMENT_WORDS, lark_parser

#: Word operators and literals, shown apart from the statement keywords.
WORD_OPERATORS = ("and", "or", "not")
LITERALS = ("true", "false")
KEYWORDS = tuple(sorted(RESERVED - set(WORD_OPERATORS) - set(LITERALS)))
#: The names that are values, not calls: the math constants and the step ``t``.
PSEUDO_NAMES = (*stdlib.CONSTANTS, "t")
#: The calls of the run's clock: dotted ones are shown as presets, the others as built-ins.
CLOCK_PRESETS = tuple(name for name in CLOCK_CALLS if "." in name)
CLOCK_BUILTINS = tuple(name for name in CLOCK_CALLS if "." not in name)


class Rule(NamedTuple):
    """One token class: its kind (the highlighters' key) and its regex."""

    kind: str
    regex: str


def terminal(name: str) -> str:
    """The regular expression of one of the grammar's terminals (``NUMBER``, ``DURATION``, ``STRING``)."""
    return lark_parser().get_terminal(name).pattern.to_regexp().replace("\n", r"\n")


def words(names, prefix: str = "", suffix: str = r"\b") -> str:
    """One regex for a list of words, longest first so no word stops inside a longer one."""
    ordered = sorted(set(names), key=lambda n: (-len(n), n))
    return prefix + "(?:" + "|".join(re.escape(n) for n in ordered) + ")" + suffix


#: A name that is not part of a dotted name (``x.linear`` is a field, not the built-in).
_ALONE = r"(?<![.\w])"
_NOT_DOTTED = r"\b(?!\.)"

RULES: tuple[Rule, ...] = (
    Rule("whitespace", r"[ \t\f\r\n]+"),
    Rule("comment", r"#[^\r\n]*"),
    Rule("string", terminal("STRING")),
    # Durations (500ba, 0.3dur) before plain numbers: the grammar gives them priority.
    Rule("duration", terminal("DURATION")),
    Rule("number", terminal("NUMBER")),
    Rule("keyword", words(KEYWORDS)),
    # `batch = ...`, `run = ...`: keywords only where a statement starts (a line's start, then
    # `=`); elsewhere (`param run: int`, `cosine(1, 0, run)`) they are names.
    Rule("keyword", words(STATEMENT_WORDS, prefix=r"(?<![^\n])", suffix=r"\b(?=[ \t]*=(?!=))")),
    Rule("word_operator", words(WORD_OPERATORS)),
    Rule("literal", words(LITERALS)),
    Rule("type", words(PARAM_TYPES)),
    Rule("preset", words([*PRESETS, *CLOCK_PRESETS], suffix=_NOT_DOTTED)),
    Rule("builtin", words([*stdlib.SCHEDULES, *stdlib.MATH, *CLOCK_BUILTINS], prefix=_ALONE,
                          suffix=_NOT_DOTTED)),
    Rule("pseudo", words(PSEUDO_NAMES, prefix=_ALONE, suffix=_NOT_DOTTED)),
    Rule("name", r"[A-Za-z_][A-Za-z0-9_]*"),
    Rule("operator", r">>|\*\*|<=|>=|==|!=|[-+*/<>=]"),
    Rule("punctuation", r"[()\[\],:.]"),
    Rule("error", r"\S"),
    Rule("text", r"."),
)

KINDS = tuple(rule.kind for rule in RULES)

__all__ = ["KEYWORDS", "KINDS", "LITERALS", "PSEUDO_NAMES", "RULES", "Rule", "WORD_OPERATORS", "terminal",
           "words"]
