"""Text to ``ir.Module``: the lark grammar, an inline transformer, and error translation.

The LALR parser runs the transformer as it reduces, so building the tree uses
no recursion and a deeply nested input becomes a clean error instead of a
``RecursionError``.  Lark's exceptions are translated here, once, into
``SchedlangError`` with the expected tokens named in words.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import lark
from lark import Token, Transformer, v_args

from ..errors import SchedlangError, Source, Span, split_lines
from ..limits import MAX_LIST_ITEMS, MAX_NESTING, LimitError, check_size, decimal
from . import ir

#: The words of the language (SPEC section 2): never names, even where the grammar could tell.
RESERVED = frozenset("param let def schedule where if then else for jump and or not true false".split())
#: The words that are keywords only where a statement starts (SPEC §2): ``param run: int`` stays a name.
STATEMENT_WORDS = frozenset({"batch", "run"})
BOM = "\ufeff"
_LONE_CR = re.compile(r"\r(?!\n)")

# What each terminal means to a person reading an error.
_TERMINAL_WORDS = {
    "NUMBER": "a number", "DURATION": "a duration like 500ba", "STRING": 'a "string"',
    "NAME": "a name", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'",
    "COMMA": "','", "EQUAL": "'='", "COLON": "':'", "DOT": "'.'", "SEQ": "'>>'", "POW": "'**'",
    "MUL_OP": "'*' or '/'", "ADD_OP": "'+' or '-'", "COMP_OP": "a comparison",
    "IF": "'if'", "FOR": "'for'", "JUMP": "'jump'", "OR": "'or'", "AND": "'and'", "NOT": "'not'",
    "TRUE": "'true'", "FALSE": "'false'", "THEN": "'then'", "ELSE": "'else'",
    "PARAM": "'param'", "LET": "'let'", "DEF": "'def'", "SCHEDULE": "'schedule'",
    "WHERE": "'where'", "BATCH": "'batch'", "RUN": "'run'", "$END": "the end of the file",
}


def grammar_text() -> str:
    """The grammar, from the installed package or, in a source checkout, from grammar/."""
    here = Path(__file__).resolve().parents[1]
    for path in (here / "_grammar" / "schedlang.lark", here.parent / "grammar" / "schedlang.lark"):
        if path.is_file():
            return path.read_text(encoding="utf-8")
    from importlib import resources  # lazy: a package that is not plain files (a zip)

    return resources.files("schedlang").joinpath("_grammar", "schedlang.lark").read_text(encoding="utf-8")


def parse(text: str | bytes, filename: str = "<string>") -> ir.Module:
    """Parse the text of a .sched file (a leading UTF-8 byte order mark is dropped)."""
    _check_size(text, filename)
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            source = Source(text.decode("utf-8", errors="replace"), filename)
            raise SchedlangError(
                f"the file is not valid UTF-8 (byte 0x{text[exc.start]:02x} at offset {exc.start})",
                Span.at_offset(source, exc.start),
                hint="save the file as UTF-8 text", code="not-utf8") from None
    # Editors on Windows write a BOM; it is not part of the text, and columns count without it.
    text = text.removeprefix(BOM)
    source = Source(text, filename)
    if not _has_code(text):
        raise SchedlangError(
            "the file has no schedule in it", Span.at_offset(source, 0),
            hint="write an expression such as `warmup(linear, 500) >> cosine(1e-3, 1e-4, 5000)`, "
                 "or `schedule lr = ...`", code="empty-file")
    try:
        with _LOCK:
            _BUILDER.reset(source)
            return lark_parser().parse(lark_text(text))
    except lark.exceptions.UnexpectedCharacters as exc:
        error = _unexpected_character(source, exc)
        error.code = "syntax"
        raise error from None
    except lark.exceptions.UnexpectedToken as exc:
        error = _unexpected_token(source, exc)
        error.code = "syntax"
        raise error from None
    except lark.exceptions.UnexpectedEOF as exc:
        raise SchedlangError("the file ends in the middle of an expression",
                             Span.at_offset(source, len(text)),
                             hint=f"expected {_expected_words(exc.expected)}", code="syntax") from None


def lark_text(text: str) -> str:
    """``text`` as lark reads it: lark counts lines at LF only, so a lone CR (a line break to
    editors, Python and ``errors.LINE_BREAK``) becomes LF, the same length: every offset and
    column stays, and a comment ends at a lone CR as it does in an editor."""
    return _LONE_CR.sub("\n", text)


def _check_size(text: str | bytes, filename: str) -> None:
    """Refuse a huge file before the parser spends seconds (and memory) on it."""
    check_size(text, filename)


def _has_code(text: str) -> bool:
    return any(line.split("#", 1)[0].strip() for line in split_lines(text))


#: The parsers the package builds from the grammar, by name: the tree builder's (``parse``)
#: and ``fmt``'s (every token kept).  ``tools/gen_parser_tables.py`` writes their LALR
#: tables into ``syntax/tables.py``.
PARSERS = {
    "parse": {"parser": "lalr", "maybe_placeholders": True},
    "fmt": {"parser": "lalr", "keep_all_tokens": True, "maybe_placeholders": True},
}


def tables_key(text: str) -> str:
    """What the shipped tables were computed from: the grammar's text and lark's version (its
    serialized form is lark's own, and may change between versions)."""
    return hashlib.sha256(f"{lark.__version__}\n{text}".encode()).hexdigest()


def make_parser(name: str, **runtime) -> lark.Lark:
    """The parser ``PARSERS[name]``, with ``runtime`` options (a transformer, lexer callbacks).

    Building the LALR tables from the grammar costs about 0.1 s of CPU each, most of what a
    one-line ``schedlang check`` spends beyond importing sympy; the tables are shipped instead,
    computed ahead (``syntax/tables.py``: plain literals, read as Python code of the package,
    never unpickled from a shared directory as lark's ``cache=True`` would).  When the grammar
    or lark's version is not the one they were computed from (an edited grammar, before
    ``python tools/gen_parser_tables.py`` is run), they are built from the grammar as before.
    """
    text = grammar_text()
    from . import tables  # lazy: 70 kB of literals, only when a parser is built

    entry = tables.TABLES.get(name) if tables.KEY == tables_key(text) else None
    if entry is not None:
        return lark.Lark._load_from_dict(entry["data"], entry["memo"], **runtime)
    return lark.Lark(text, **PARSERS[name], **runtime)


@functools.lru_cache(maxsize=1)
def lark_parser() -> lark.Lark:
    """The language's one lark parser (its grammar's terminals, which ``cli/highlight`` reads
    too), built on first use."""
    # lark binds the inline transformer when the parser is built, so one parser and
    # one builder serve every call; the builder is pointed at each new source in turn.
    return make_parser("parse", transformer=_BUILDER)


def _unexpected_character(source: Source, exc) -> SchedlangError:
    char = source.text[exc.pos_in_stream] if exc.pos_in_stream < len(source.text) else ""
    span = Span.at_offset(source, exc.pos_in_stream)
    if char == "'":
        return SchedlangError("strings use double quotes", span,
                              hint='write "triangular", not \'triangular\'')
    if char == "%":
        return SchedlangError("there is no '%' operator", span,
                              hint="write t - n * floor(t / n) for the remainder of t by n")
    if char in "=!<>":
        return SchedlangError(f"unexpected '{char}'", span, hint="comparisons are == != < <= > >=")
    shown = repr(char) if char.strip() else f"character U+{ord(char):04X}" if char else "character"
    return SchedlangError(f"unexpected {shown}", span,
                          hint=f"expected {_expected_words(exc.allowed or [])}")


def _unexpected_token(source: Source, exc: lark.exceptions.UnexpectedToken) -> SchedlangError:
    token = exc.token
    expected = _expected_words(exc.expected)
    if token.type == "$END":
        return SchedlangError("the file ends in the middle of an expression",
                              Span.at_offset(source, len(source.text)), hint=f"expected {expected}")
    suffixed = _number_suffix(source, token)
    if suffixed is not None:
        return suffixed
    span = _token_span(source, token)
    shown = f"'{token.value}'"
    message = f"unexpected {shown}"
    hint = f"expected {expected}"
    if token.type in ("PARAM", "LET", "DEF", "SCHEDULE") and "$END" in exc.expected:
        message = f"unexpected {shown} after a bare expression"
        hint = ("a bare expression must be the whole file; name it with `schedule lr = ...` "
                "to add other statements")
    elif (_STATEMENT_KEYWORDS & set(exc.expected) and token.type not in _STATEMENT_KEYWORDS
          and not source.line(token.line)[:token.column - 1].strip()):
        # `param total: int = 100` then `linear(...)`: an expression where a statement may start
        line = source.line(token.line)[token.column - 1:].split("#", 1)[0].strip()
        shown_line = line if len(line) <= 60 else line[:57] + "..."
        message = "an expression on its own after other statements"
        hint = (f"name it: `schedule lr = {shown_line}` (a bare expression means `schedule lr = ...` "
                "only when it is the whole file)")
    elif token.type == "NAME" and token.value in ("then", "else", "where"):
        message = f"'{token.value}' here is out of place"
    elif (token.type in ("NAME", "JUMP") and token.value == "jump") or _AFTER_JUMP.search(source.text, 0,
                                                                                token.start_pos):
        # `jump` is a word only right after `>>`; elsewhere the lexer reads a name
        message = "'jump' here is out of place"
        hint = "`jump` comes right after `>>`: `a >> jump b` says the jump into b is meant"
    elif token.type == "EQUAL" and "COMP_OP" in exc.expected:
        hint = "use == to compare; = only binds names"
    return SchedlangError(message, span, hint=hint)


#: The units a number may carry (the grammar's DURATION terminal says the same).
UNITS = ("dur", "ba", "ep", "sp", "tok")
#: Magnitude suffixes people write in numbers (``1.2M`` parameters, ``2T`` tokens): none is
#: part of the language, and each is told by the power of ten it means.
_MAGNITUDES = {"k": 3, "K": 3, "M": 6, "B": 9, "G": 9, "T": 12}
_NUMBER_BEFORE = re.compile(r"(?<![\w.])(\d[\d_]*(\.[\d_]*)?|\.\d[\d_]*)([eE][+-]?\d+)?\Z")


def _number_suffix(source: Source, token: Token) -> SchedlangError | None:
    """``1.2M``, ``12ktok``, ``10steps``: letters right after a number (the lexer reads a number,
    then a name) are a suffix the language does not know; the error says what to write."""
    text = str(token.value)
    if not text[:1].isalpha():
        return None
    before = _NUMBER_BEFORE.search(source.text, 0, token.start_pos)
    if before is None:
        return None
    number = before.group(0)
    end = _token_span(source, token)
    span = Span.at_offset(source, before.start(), len(number)).to(end)
    shown = f"'{number}{text}'"
    magnitude, unit = text[:1], text[1:]
    if magnitude in _MAGNITUDES and (not unit or unit in UNITS):
        forms = [form + unit for form in _with_power(number, _MAGNITUDES[magnitude])]
        return SchedlangError(f"{shown}: '{magnitude}' is not a number suffix in schedlang", span,
                              hint=f"write {' or '.join(forms)}")
    return SchedlangError(f"{shown}: a number directly followed by '{text}'", span,
                          hint=f"a number takes only the units {', '.join(UNITS)} (500ba, 100e9tok); "
                               "put an operator between a number and a name (2 * x)")


def _with_power(number: str, power: int) -> list[str]:
    """``1.2`` times ``10**6`` written out (``1_200_000``, where it is short) and with an
    exponent (``1.2e6``)."""
    mantissa, _, exponent = number.lower().partition("e")
    forms = [f"{mantissa}e{int(exponent or 0) + power}"]
    try:
        value = decimal(number) * 10 ** power
    except ValueError:  # too long for the language anyway (LimitError is a ValueError)
        return forms
    if value and 1e-6 <= abs(value) < 1e18:
        whole, _, fraction = format(Decimal(value.numerator) / Decimal(value.denominator), "f").partition(".")
        forms.insert(0, f"{int(whole):_}" + (f".{fraction.rstrip('0')}" if fraction.strip("0") else ""))
    return forms


_STATEMENT_KEYWORDS = {"PARAM", "LET", "DEF", "SCHEDULE"}
_AFTER_JUMP = re.compile(r"(?<![\w.])jump\s*\Z")


def _expected_words(expected) -> str:
    words = sorted({_TERMINAL_WORDS.get(name, f"'{name.lower()}'") for name in expected})
    if not words:
        return "something else"
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _token_span(source: Source, token: Token) -> Span:
    end_line = token.end_line or token.line
    end_column = token.end_column or token.column + len(str(token))
    return Span(source, token.line, token.column, end_line, end_column)


def _text(source: Source, span: Span) -> str:
    """The text of a span on one line (``...`` for a longer one)."""
    if span.end_line != span.line:
        return "..."
    text = source.line(span.line)[span.column - 1:span.end_column - 1]
    return text if len(text) <= 40 else "..."


def _number(text: str, span: Span) -> Fraction:
    try:
        return decimal(text)
    except LimitError as exc:
        raise SchedlangError(str(exc), span, hint=exc.hint) from None


def _count(items, what: str) -> None:
    """Refuse a list or call longer than ``MAX_LIST_ITEMS`` before anything is built from it."""
    if len(items) > MAX_LIST_ITEMS:
        raise SchedlangError(f"{what} has {len(items)} items; schedlang takes at most {MAX_LIST_ITEMS}",
                             items[MAX_LIST_ITEMS].span,
                             hint="a schedule with this many pieces is surely generated: use a "
                                  "formula (step, multistep, exp) or a coarser table")


def _not_reserved(token, what: str, span: Span) -> None:
    """``schedule if = ...`` parses (the lexer reads a name there) but the word is not a name."""
    if str(token) in RESERVED:
        raise SchedlangError(f"'{token}' is a word of the language and cannot be {what}", span,
                             hint=f"pick another name, e.g. '{token}_' or 'my_{token}'")


@v_args(inline=True)
class _Builder(Transformer):
    """Builds ``ir`` nodes as the parser reduces; tracks nesting depth as it goes."""

    def reset(self, source: Source) -> None:
        self.source = source
        self.depth: dict[int, int] = {}

    # -- helpers ---------------------------------------------------------------------

    def _span(self, *parts) -> Span:
        spans = [p if isinstance(p, Span) else _token_span(self.source, p) if isinstance(p, Token)
                 else p.span for p in parts if p is not None]
        return spans[0].to(spans[-1])

    def _made(self, node, *children):
        depth = 1 + max((self.depth.get(id(c), 0) for c in children), default=0)
        if depth > MAX_NESTING:
            raise SchedlangError(f"this expression nests more than {MAX_NESTING} levels deep", node.span,
                                 hint="split it into `let` definitions")
        self.depth[id(node)] = depth
        return node

    # -- atoms -----------------------------------------------------------------------

    def number(self, tok):
        span = self._span(tok)
        return ir.Number(span, _number(str(tok), span), str(tok))

    def duration(self, tok):
        text = str(tok)
        for unit in UNITS:
            if text.endswith(unit):
                span = self._span(tok)
                return ir.Duration(span, _number(text[: -len(unit)], span), unit, text)
        raise AssertionError(text)  # pragma: no cover - the grammar admits only these units

    def string(self, tok):
        return ir.String(self._span(tok), str(tok)[1:-1])

    def true(self, tok):
        return ir.Bool(self._span(tok), True)

    def false(self, tok):
        return ir.Bool(self._span(tok), False)

    def name(self, *parts):
        for part in parts:
            _not_reserved(part, "used as a name", self._span(part))
        return ir.Name(self._span(*parts), ".".join(str(p) for p in parts))

    def paren(self, lpar, expr, rpar):
        # Parentheses add no node, but they do count towards the nesting limit.
        wrapper = ir.Number(self._span(lpar), 0, "(")  # a throwaway key for the depth table
        self._made(wrapper, expr)
        depth = self.depth.pop(id(wrapper))
        self.depth.pop(id(expr), None)  # the node is replaced: no entry may outlive it
        expr = replace(expr, parens=expr.parens + 1)  # kept for ``unparse``, which writes them back
        self.depth[id(expr)] = depth
        return expr

    def _no_bare_if(self, node, op: str, rest) -> None:
        """``if c then a else b for n`` reads as if ``for n`` belonged to ``b``, but it applies to
        the whole ``if`` (and so does ``>> x``): the parentheses must say which is meant."""
        if isinstance(node, ir.If) and not node.parens:
            other = _text(self.source, node.other.span)
            raise SchedlangError(f"`{op}` after `if ... else ...` would apply to the whole `if`",
                                 self._span(node, rest),
                                 hint=f"write `(if ... else {other}) {op} ...` for the whole `if`, or "
                                      f"`if ... else ({other} {op} ...)` for the else branch only")

    def list_(self, lsqb, *rest):
        items = tuple(i for i in rest[:-1] if i is not None)
        _count(items, "this list")
        return self._made(ir.List(self._span(lsqb, rest[-1]), items), *items)  # to its `]`

    def arguments(self, *args):
        return [a for a in args if a is not None]

    def keyword(self, name, value):
        # Not checked for reserved words: it names the callee's argument (`scale(schedule=...)`).
        return ir.Keyword(self._span(name, value), str(name), value)

    def call(self, func, lpar, arguments, rpar):
        arguments = arguments or []
        _count(arguments, "this call")
        positional, keywords = [], []
        for arg in arguments:
            if isinstance(arg, ir.Keyword):
                if any(k.name == arg.name for k in keywords):
                    raise SchedlangError(f"keyword '{arg.name}' is given twice", arg.span)
                keywords.append(arg)
            elif keywords:
                raise SchedlangError("a positional argument follows a keyword argument", arg.span,
                                     hint="put positional arguments first")
            else:
                positional.append(arg)
        node = ir.Call(self._span(func, rpar), func, tuple(positional), tuple(keywords))  # to its `)`
        return self._made(node, *positional, *(k.value for k in keywords))

    # -- operators -------------------------------------------------------------------

    def binop(self, left, op, right):
        return self._made(ir.BinOp(self._span(left, right), str(op), left, right), left, right)

    def unary(self, op, operand):
        return self._made(ir.Unary(self._span(op, operand), str(op), operand), operand)

    def compare(self, *parts):
        operands, ops = parts[0::2], tuple(str(op) for op in parts[1::2])
        return self._made(ir.Compare(self._span(parts[0], parts[-1]), tuple(operands), ops), *operands)

    def and_(self, left, op, right):
        return self._made(ir.BoolOp(self._span(left, right), "and", left, right), left, right)

    def or_(self, left, op, right):
        return self._made(ir.BoolOp(self._span(left, right), "or", left, right), left, right)

    def not_(self, op, operand):
        return self._made(ir.Not(self._span(op, operand), operand), operand)

    def if_expr(self, kw, cond, then, other):
        return self._made(ir.If(self._span(kw, other), cond, then, other), cond, then, other)

    def hold_for(self, body, kw, steps):
        self._no_bare_if(body, "for", steps)
        return self._made(ir.For(self._span(body, steps), body, steps), body, steps)

    def seq(self, first, op, *rest):  # ``a >> b`` or ``a >> jump b``
        then = rest[-1]
        self._no_bare_if(first, ">>", then)
        node = ir.Seq(self._span(first, then), first, then, jump=len(rest) == 2)
        if isinstance(first, ir.Seq):
            # ``a >> b >> c`` is a list of segments (lowering flattens it), not nesting:
            # only ``then`` adds a level (``MAX_SEGMENTS`` bounds the length).
            self.depth[id(first)] = self.depth.get(id(first), 1) - 1
        return self._made(node, first, then)

    # -- statements ------------------------------------------------------------------

    def param(self, name, type_, default, where):
        _not_reserved(name, "a parameter name", self._span(name))
        return ir.Param(self._span(name, where or default or type_), str(name), str(type_),
                        self._span(type_), default, where)

    def let(self, name, value):
        _not_reserved(name, "a let name", self._span(name))
        return ir.Let(self._span(name, value), str(name), value)

    def def_(self, name, *rest):
        *params, body = rest
        params = [p for p in params if p is not None]
        _not_reserved(name, "a function name", self._span(name))
        seen = set()
        for p in params:
            _not_reserved(p, "a parameter name", self._span(p))
            if str(p) in seen:
                raise SchedlangError(f"parameter '{p}' appears twice", self._span(p))
            seen.add(str(p))
        return ir.Def(self._span(name, body), str(name), tuple(str(p) for p in params), body)

    def schedule(self, name, value):
        _not_reserved(name, "a schedule name", self._span(name))
        return ir.ScheduleDecl(self._span(name, value), str(name), value)

    def batch(self, keyword, value):
        return ir.BatchDecl(self._span(keyword, value), value)

    def run(self, keyword, value):
        return ir.RunDecl(self._span(keyword, value), value)

    def program(self, *statements):
        return ir.Module(statements[0].span.to(statements[-1].span), tuple(statements))

    def bare_program(self, expr):
        return ir.Module(expr.span, (ir.ScheduleDecl(expr.span, "lr", expr),))


# lark names the callback of rule `def` after the rule; `def` is a Python keyword.
setattr(_Builder, "def", _Builder.def_)
_BUILDER = _Builder()
_LOCK = threading.Lock()
