"""The state of following one Python file, declared in one place: every attribute the reader's
parts read (``Evaluator`` the expressions, ``Calling`` the calls, ``Containers`` the dicts and
lists, ``Statements`` and ``Definitions`` the statements; ``literal.Module`` joins them), set
up here, and the few helpers each of them uses: spans, errors, the budget, the names in scope."""

from __future__ import annotations

import ast
from pathlib import Path

from ....errors import SchedlangError, Source, Span
from ....limits import MAX_FILE_BYTES, MAX_YAML_VALUES
from ..symbols import Symbol, Symbols
from .syntax import check_nesting
from .values import HINT, KINDS, Function, Item, NotFollowedError


class FileState(ast.NodeVisitor):
    """One file being followed: its text and tree, its names, the function being followed, the
    calls recorded; no part of the reader sets an attribute this class does not declare."""

    #: the file: its text (spans point into it) and its syntax tree
    source: Source
    tree: ast.Module
    #: ``records(path)``: whether a call to the imported ``path`` is a format's class, kept as a ``Call``
    records: object
    #: a recorded call's arguments kept as they are, each read only where the format needs it
    #: (``TrainingArguments(output_dir=f"...", ...)``: the schedule never reads ``output_dir``)
    lazy_calls: bool
    #: the module-level names; the names a def / class / lambda mentions (it may change them when
    #: it runs); the containers passed to what is not followed, with the error reading one raises
    env: dict[str, Item]
    late: dict[str, Span]
    tainted: dict[int, tuple[object, SchedlangError]]
    #: every format call built, in order (``Call`` or ``Unread``, the call node, the class path),
    #: and the (node, invocation) pairs already recorded (a function called twice builds twice)
    calls: list[tuple[Item, ast.Call, str]]
    _recorded_nodes: set[tuple[int, int]]
    #: the values left to make (``MAX_YAML_VALUES`` for the script and its modules together)
    budget: int
    #: a script's argparse defaults as parameters (``common/symbols.py``); a config has none
    symbols: Symbols | None
    #: the script's own modules read so far (``import config``: one object however often it is
    #: imported) and the chain being imported (a cycle is refused), shared by every file read
    modules: dict[Path, FileState]
    _importing: tuple[Path, ...]
    #: the lines binding each name anywhere in the file ("used before it is assigned" says where);
    #: the ``from m import *`` statements followed so far, (m, line)
    _assigned_at: dict[str, list[int]]
    _star_imports: list[tuple[str, int]]
    #: the function being followed: its names (None at module level), the names it assigns, its
    #: ``global`` names, the names of the functions around it; every call followed, with its names
    #: and what it returned; the calls made, the current one's number, how deep they nest
    locals: dict[str, Item] | None
    _local_names: set[str]
    _global_names: set[str]
    _enclosing: list[dict[str, Item]]
    frames: list[tuple[Function, dict[str, Item], Item]]
    _calls_made: int
    _invocation: int
    _depth: int
    #: a part of the statement being followed was not (``x = setup(cfg)``): it may have changed
    #: what it was given
    _partial: bool
    #: where the program ends (``sys.exit()``, ``raise``, ``assert False``), or may end (the same
    #: inside a statement not followed): what a reader finds nothing of was never built
    ended: SchedlangError | None
    ended_surely: bool

    def __init__(self, text: str, filename: str, records, script: bool, lazy_calls: bool,
                 importer: FileState | None, name: str):
        self.source = Source(text, filename)
        if len(text.encode("utf-8", "replace")) > MAX_FILE_BYTES:
            raise SchedlangError(f"this file is over {MAX_FILE_BYTES} bytes", self._span_at(1, 1))
        check_nesting(self.source)
        try:
            self.tree = ast.parse(text, filename)
        except SyntaxError as exc:
            line, col = exc.lineno or 1, exc.offset or 1
            where = Span(self.source, line, col, line, col + 1)
            raise SchedlangError(f"not valid Python: {exc.msg}", where) from None
        except (MemoryError, RecursionError):  # the token scan refuses what it can see first
            raise SchedlangError("this file nests too deeply to read", self._span_at(1, 1)) from None
        self.records = records or (lambda path: False)
        self.lazy_calls = lazy_calls
        self.env = {}
        self.late = {}
        self.tainted = {}
        self.calls = []
        self._recorded_nodes = set()
        self.budget = MAX_YAML_VALUES if importer is None else importer.budget
        self.symbols = Symbols() if script and importer is None else getattr(importer, "symbols", None)
        self.modules = importer.modules if importer is not None else {}
        self._importing = (*importer._importing, Path(filename).resolve()) \
            if importer is not None else (Path(filename).resolve(),)
        self._assigned_at = {}
        self._star_imports = []
        self.locals = None
        self._local_names = set()
        self._global_names = set()
        self.frames = []
        self._enclosing = []
        self._calls_made = self._invocation = self._depth = 0
        self._partial = False
        if script:  # a training script is read as the program Python runs
            self.env["__name__"] = Item(name, self._span_at(1, 1))
        self.ended = None
        self.ended_surely = True

    def _bind(self, name: str, item: Item) -> None:
        if self.locals is not None and name not in self._global_names:
            self.locals[name] = item
        else:
            self.env[name] = item

    def lookup(self, name: str) -> Item | None:
        """``name`` as the statement being followed sees it: the function's own names first,
        then those of the functions around it, then the module's."""
        if self.locals is not None and name not in self._global_names:
            if name in self.locals or name in self._local_names:
                return self.locals.get(name)
            for names in self._enclosing:
                if name in names:
                    return names[name]
        return self.env.get(name)

    def _named(self, name: str, item: Item) -> Item:
        """What binding ``name`` holds: a value computed from argparse defaults becomes a ``let`` of
        that name (``steps = 50_000 // args.batch_size``), so the imported file reads as the script."""
        if isinstance(item.raw, Symbol):
            return Item(item.raw.owner.let(name, item.raw), item.span)
        return item

    def _spend(self, count: int, node: ast.AST) -> None:
        self.budget -= count
        if self.budget < 0:
            raise SchedlangError(f"following this file makes more than {MAX_YAML_VALUES} values",
                                 self.span(node), hint="a configuration is a few hundred values")

    def span(self, node: ast.AST) -> Span:
        end_line = getattr(node, "end_lineno", None) or node.lineno
        end_col = getattr(node, "end_col_offset", None)
        if end_line != node.lineno or end_col is None or end_col <= node.col_offset:
            end_col = node.col_offset + 1
        return Span(self.source, node.lineno, node.col_offset + 1, node.lineno, end_col + 1)

    def _span_at(self, line: int, col: int) -> Span:
        return Span(self.source, line, col, line, col + 1)

    def _python_error(self, message: str, node: ast.AST, hint: str | None = None) -> SchedlangError:
        return SchedlangError(message, self.span(node), hint=hint)

    def _not(self, node: ast.AST, what: str) -> None:
        raise NotFollowedError(SchedlangError(f"{what} is not followed (the file is read, never run)",
                                          self.span(node), hint=HINT))

    def _not_followed_error(self, stmt: ast.stmt, why: str = "") -> SchedlangError:
        kind = KINDS.get(type(stmt), "statement")
        return SchedlangError(f"this {kind} is not followed (the file is read, never run)"
                              + (f": {why}" if why else ""), self.span(stmt), hint=HINT)
