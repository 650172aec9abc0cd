"""A small TextMate tokenizer, enough for the grammar ``tools/gen_editors.py`` writes.

A TextMate engine (VS Code's vscode-textmate, Sublime, TextMate) works line by line (each
line given with its ``\\n``): from the current position it searches every pattern of the
rule list, takes the match that starts earliest (the first pattern on a tie), gives it the
pattern's scope, and goes on from its end; text no pattern covers keeps the file's scope.
This implements exactly that for grammars made of top-level ``{"name", "match"}`` patterns,
and ``check_supported`` refuses any grammar that uses more (``begin``/``end``,
``captures``, ``include``, a repository), so the test cannot pass on a feature it does not
model.

Two regex engines: Python's ``re`` (always), and Oniguruma itself, the engine VS Code runs
(vscode-oniguruma is it compiled to WebAssembly), through ``ctypes`` when ``libonig`` is
installed; ``oniguruma()`` returns ``None`` otherwise.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re
from collections.abc import Callable

#: The keys this tokenizer understands.
GRAMMAR_KEYS = {"$schema", "comment", "name", "scopeName", "fileTypes", "patterns"}
PATTERN_KEYS = {"name", "match"}

#: search(line, pos) -> (start, end) of the first match at or after pos, or None.
Search = Callable[[str, int], "tuple[int, int] | None"]


def check_supported(grammar: dict) -> None:
    extra = set(grammar) - GRAMMAR_KEYS
    assert not extra, f"the grammar uses {sorted(extra)}: teach tests/textmate.py first"
    for pattern in grammar["patterns"]:
        assert set(pattern) == PATTERN_KEYS, f"unsupported pattern keys {sorted(set(pattern))}"


def python_search(regex: str) -> Search:
    compiled = re.compile(regex)
    assert compiled.fullmatch("") is None, f"{regex!r} matches the empty string"

    def search(line: str, pos: int):
        m = compiled.search(line, pos)
        return (m.start(), m.end()) if m else None

    return search


def tokenize(searches: list[tuple[Search, str]], text: str) -> list[tuple[int, int, str]]:
    """``(start, end, scope)`` of every token of ``text``, offsets into ``text``."""
    tokens, offset = [], 0
    for line in text.split("\n"):
        line_nl, pos = line + "\n", 0
        while pos < len(line_nl):
            best = None
            for search, scope in searches:
                span = search(line_nl, pos)
                if span and (best is None or span[0] < best[0][0]):
                    best = (span, scope)
            if best is None:
                break
            (start, end), scope = best
            assert end > start, f"empty match of {scope} at {offset + start}"
            tokens.append((offset + start, offset + min(end, len(line)), scope))
            pos = end
        offset += len(line) + 1
    return tokens


class _Region(ctypes.Structure):
    _fields_ = [("allocated", ctypes.c_int), ("num_regs", ctypes.c_int),
                ("beg", ctypes.POINTER(ctypes.c_int)), ("end", ctypes.POINTER(ctypes.c_int))]


class Oniguruma:
    """The real engine: compile a pattern as vscode-oniguruma does (UTF-8, Ruby syntax, capture groups)."""

    OPTION_CAPTURE_GROUP = 1 << 8  # ONIG_OPTION_CAPTURE_GROUP

    def __init__(self, lib: ctypes.CDLL):
        self.lib = lib
        lib.onig_new.restype = lib.onig_search.restype = ctypes.c_int
        lib.onig_region_new.restype = ctypes.POINTER(_Region)
        lib.onig_search.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                    ctypes.c_void_p, ctypes.POINTER(_Region), ctypes.c_uint]
        self.utf8 = ctypes.addressof(ctypes.c_char.in_dll(lib, "OnigEncodingUTF8"))
        self.syntax = ctypes.addressof(ctypes.c_char.in_dll(lib, "OnigSyntaxRuby"))
        encodings = (ctypes.c_void_p * 1)(self.utf8)
        lib.onig_initialize(encodings, 1)
        self.region = lib.onig_region_new()

    def compile(self, pattern: str) -> Search:
        data = pattern.encode("utf-8")
        source = ctypes.create_string_buffer(data, len(data))  # kept alive with the regex
        base = ctypes.addressof(source)
        reg, info = ctypes.c_void_p(), (ctypes.c_void_p * 3)()
        code = self.lib.onig_new(ctypes.byref(reg), ctypes.c_void_p(base), ctypes.c_void_p(base + len(data)),
                                 ctypes.c_uint(self.OPTION_CAPTURE_GROUP), ctypes.c_void_p(self.utf8),
                                 ctypes.c_void_p(self.syntax), info)
        if code != 0:
            buf = ctypes.create_string_buffer(256)
            self.lib.onig_error_code_to_str(buf, code, info)
            raise ValueError(f"Oniguruma refuses {pattern!r}: {buf.value.decode()}")
        lib, region = self.lib, self.region

        def search(line: str, pos: int):
            raw = line.encode("utf-8")
            buf = ctypes.create_string_buffer(raw, len(raw))
            base = ctypes.addressof(buf)
            start = len(line[:pos].encode("utf-8"))
            end_of_line = base + len(raw)
            found = lib.onig_search(reg, base, end_of_line, base + start, end_of_line, region, 0)
            assert source  # the pattern's bytes outlive the regex
            if found < 0:
                return None
            beg, end = region.contents.beg[0], region.contents.end[0]
            return len(raw[:beg].decode("utf-8")), len(raw[:end].decode("utf-8"))

        return search


def oniguruma() -> Oniguruma | None:
    name = ctypes.util.find_library("onig")
    return Oniguruma(ctypes.CDLL(name)) if name else None
