"""Python configuration files followed as Python would run them, without running them.

OpenMMLab configs, DeepSpeed configs kept as a dict in a ``.py`` file and Keras training
scripts are Python.  Importing one must give the values Python builds, so this module
follows the module's statements in order over ``ast`` (nothing is executed: no ``eval``,
no ``exec``, no import) and computes what each statement does:

* assignment and reassignment (``LR = 0.1`` ... ``LR = 0.2``: the last one wins), chained
  and tuple targets, annotated assignment, ``del``;
* augmented assignment (``LR *= 10``; ``+=`` extends a list in place, as Python does);
* subscript assignment (``param_scheduler[0]['start_factor'] = 0.25``);
* ``.append`` / ``.extend`` / ``.insert`` / ``.update`` / ``.pop`` / ``.setdefault`` /
  ``.get`` / ``.copy`` on dicts and lists, ``copy.copy`` / ``copy.deepcopy``;
* ``if`` / ``elif`` / ``else`` and ``x if c else y`` whose test is computed here;
* literals, ``dict(...)`` / ``list(...)`` / ``tuple(...)`` / ``int`` / ``float`` / ``abs`` /
  ``min`` / ``max`` / ``round`` / ``len``, ``**`` unpacking in dicts, indexing and slicing;
* arithmetic as Python computes it: ints exactly, floats as binary floats
  (``5e-4 * 1024 / 512`` is the float Python gets, and the importers write that float as
  the shortest decimal that reads back as it, ``repr``), comparisons and ``and``/``or``/``not``;
* names assigned earlier (sharing, not copying: ``b = a; a['x'] = 1`` changes ``b`` too).

A name is looked up when its statement runs: ``LR = LR`` with no ``LR`` before is
"'LR' is used before it is assigned", as Python's ``NameError``.  What Python would raise
(``ZeroDivisionError``, a missing key) is an error at the expression.

A training script (``script=True``: the DeepSpeed and Keras entry points) is read as the
program Python runs: ``__name__`` is ``"__main__"``, a function of the file is followed into
its body when the file calls it (``main()``), and ``argparse`` parsers are read as data:
``parser.parse_args()`` gives the defaults (``args.lr``), a flag without one an error where it
is read, and a number option's default is a parameter of the imported file
(``common/symbols.py``).  ``@dataclass`` configs and ``SimpleNamespace(...)`` are read by
attribute.  ``import m`` / ``from m import *`` of a module file ``m.py`` beside the script is
read by this reader too (as Python finds it first, never run); a name after ``from m import *``
of a library that the file never assigns is unknown.  A class of the file whose base a format
reads (a Keras ``LearningRateSchedule``) is a ``Subclass``: its instances are built by following
its ``__init__``, and the format traces the rest (``trace``).

Everything else (loops, ``with``, calls to other functions, attributes of
objects) is *not followed*, and is allowed only where it cannot change what is imported:
a name such a statement (re)binds, and a dict or list it passes to a call or mentions,
reads as an error at that statement when the import needs it ("this for loop is not
followed, and it may change 'param_scheduler'").  Names a ``def``, ``class`` or ``lambda``
mentions are refused the same way (the function may run later).  ``exec``, ``eval``,
``globals``, ``vars``, ``setattr`` and the like can change any name: a file that mentions
them is refused.  A value that is not followed (``x = foo()``) is an error only when read.
Calls to classes a format names (Keras schedules and optimizers) are kept as a ``Call``
(its class path and arguments); such an object is taken as fixed once built (Keras keeps
its constructor arguments, ``get_config()``), so passing it to ``model.compile`` does not
change it; assigning to one of its attributes does (refused when read).

Bounded: the file is at most ``MAX_FILE_BYTES``; before ``ast.parse`` sees it, the
tokens are scanned for nesting deeper than ``MAX_NESTING`` (brackets, operator chains and
runs of unary minus signs: ``ast.parse`` would raise ``MemoryError`` or ``RecursionError``),
refused at the token; values made by following the file are counted against
``MAX_YAML_VALUES``; an int larger than ``MAX_DIGITS`` digits and a string longer than the
file are refused.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

from ....errors import SchedlangError, Source, Span
from ....limits import MAX_CONFIG_BASES, MAX_FILE_BYTES, MAX_YAML_DEPTH, MAX_YAML_VALUES, read_source_text
from ..numbers import PythonString
from ..symbols import Symbols
from ..yaml_source import Node
from .calls import EXITS, bind_arguments, namespace_attribute
from .evaluator import Evaluator
from .syntax import (
    ASSIGNED,
    MAX_CALL_DEPTH,
    PASSED,
    SCOPES,
    check_nesting,
    effects,
    own_nodes,
    root_name,
    scope_names,
)
from .values import (
    DYNAMIC,
    HINT,
    KINDS,
    Call,
    DataClass,
    Exit,
    Function,
    Imported,
    Instance,
    Item,
    MayExit,
    Namespace,
    NotFollowedError,
    Parser,
    Returned,
    Subclass,
    Unread,
    contents,
    short,
    truth,
)


class Module(Evaluator):
    """The module-level names of one Python file after following its statements.

    ``records(path)`` says which imported callables become ``Call``s (a format's classes);
    ``calls`` lists every ``Call`` built, in order, with the statement that built it.
    """

    def __init__(self, text: str, filename: str = "<string>", records=None, script: bool = False,
                 lazy_calls: bool = False, importer: Module | None = None, name: str = "__main__"):
        self.source = Source(text, filename)
        #: a recorded call's arguments kept as they are, each read only where the format needs it
        #: (``TrainingArguments(output_dir=f"...", ...)``: the schedule never reads ``output_dir``)
        self.lazy_calls = lazy_calls
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
        self.env: dict[str, Item] = {}
        self.late: dict[str, Span] = {}      # names a def / class / lambda mentions
        self.tainted: dict[int, tuple[object, SchedlangError]] = {}  # containers passed to what is not run
        self.calls: list[tuple[Item, ast.Call, str]] = []  # the format's calls (Call or Unread), paths
        self._recorded_nodes: set[tuple[int, int]] = set()
        self.budget = MAX_YAML_VALUES if importer is None else importer.budget
        #: a script's argparse defaults as parameters (``common/symbols.py``); a config has none
        self.symbols = Symbols() if script and importer is None else getattr(importer, "symbols", None)
        #: the script's own modules read so far (``import config``: one object however often it is
        #: imported) and the chain being imported (a cycle is refused), shared by every file read
        self.modules: dict[Path, Module] = importer.modules if importer is not None else {}
        self._importing: tuple[Path, ...] = (*importer._importing, Path(filename).resolve()) \
            if importer is not None else (Path(filename).resolve(),)
        self._assigned_at: dict[str, list[int]] = {}
        self._star_imports: list[tuple[str, int]] = []  # `from m import *`: (m, line)
        # the function being followed: its names (None at module level), the names it assigns,
        # its `global` names; every call followed, with its names and what it returned
        self.locals: dict[str, Item] | None = None
        self._local_names: set[str] = set()
        self._global_names: set[str] = set()
        self.frames: list[tuple[Function, dict[str, Item], Item]] = []
        self._enclosing: list[dict[str, Item]] = []
        self._calls_made = self._invocation = self._depth = 0
        if script:  # a training script is read as the program Python runs
            self.env["__name__"] = Item(name, self._span_at(1, 1))
        #: where the program ends (``sys.exit()``, ``raise``, ``assert False``), or may end (the
        #: same inside a statement not followed): what a reader finds nothing of was never built
        self.ended: SchedlangError | None = None
        self.ended_surely = True
        self._scan()
        try:
            self._run(self.tree.body)
        except MayExit as exc:  # what follows is marked unknown, an error where it is read
            self.ended, self.ended_surely = exc.error, False
        except Exit as exc:
            if not script:  # a config that raises when it is loaded gives nothing
                raise SchedlangError("loading this config stops here (Python runs nothing after this "
                                     "statement), so it gives no values", exc.error.span,
                                     hint="a config file is loaded whole") from None
            self.ended = exc.error
        except RecursionError:
            raise SchedlangError("the values of this file nest too deeply", self._span_at(1, 1)) from None

    # -- reading the result ------------------------------------------------------------------

    def get(self, name: str) -> Item | None:
        """The module-level ``name`` (None when the file never binds it), or the error of the
        statement that may have changed it."""
        item = self.env.get(name)
        if item is None:
            return None
        if name in self.late:
            raise SchedlangError(f"a function or class defined here mentions '{name}', and may change it "
                                 "when it runs; schedlang does not run it", self.late[name], hint=HINT)
        if isinstance(item, Unread):
            raise item.error
        self.check_untainted(item)
        return item

    def check_untainted(self, item: Item) -> None:
        """Refuse a value holding a dict or list that a statement not followed may have changed,
        or nesting deeper than ``MAX_YAML_DEPTH`` (what reads it afterwards may recurse)."""
        seen: set[int] = set()
        stack = [(item, 0)]
        while stack:
            current, depth = stack.pop()
            if isinstance(current, Unread):
                continue
            value = current.raw
            if isinstance(value, (dict, list, Call, Parser, Namespace)):
                if depth > MAX_YAML_DEPTH:
                    raise SchedlangError(f"this value nests more than {MAX_YAML_DEPTH} levels deep",
                                         item.span)
                if id(value) in seen:
                    continue
                seen.add(id(value))
                if id(value) in self.tainted:
                    raise self.tainted[id(value)][1]
                stack.extend((child, depth + 1) for child in contents(value))

    # -- statements -----------------------------------------------------------------------

    def _run(self, body: list[ast.stmt]) -> None:
        for index, stmt in enumerate(body):
            try:
                self._follow(stmt)
            except MayExit as exc:  # what follows may not run: it is not known either
                for rest in body[index + 1:]:
                    self._unknown_after(rest, exc.error)
                raise

    def _follow(self, stmt: ast.stmt) -> None:
        """One statement, or what it may change marked when it is not followed."""
        self._partial = False
        try:
            self._statement(stmt)
        except NotFollowedError as exc:
            self._not_followed(stmt, exc.error)
            self._record_inside(stmt)
            exit_node = self._exit_inside(stmt)
            if exit_node is not None:
                where = exc.error if exc.error.span is not None and exc.error.span.line == stmt.lineno \
                    else self._not_followed_error(stmt, exc.error.message)
                raise MayExit(SchedlangError(
                    f"{where.message}; it may end the script ({_exit_text(exit_node)} at line "
                    f"{exit_node.lineno}), so what follows it is not known here", where.span,
                    hint="decide it in the file (a value the file computes), or move the exit after "
                         "the schedule is built")) from None
            if self.locals is not None and any(isinstance(n, ast.Return) for n in own_nodes(stmt)):
                raise Returned(Unread(SchedlangError(  # what the function returns is not known
                    f"{exc.error.message}; it may return or raise, so what the function returns "
                    "is not known here", exc.error.span, hint=exc.error.hint))) from None
            return
        if self._partial:  # a part not followed (x = setup(cfg)) may have changed what it was given
            error = self._not_followed_error(stmt, "a part of it is not followed")
            self._changes(stmt, error)
            for node in ast.walk(stmt):  # (y := ...) inside a part not followed binds y
                if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                    self._bind(node.target.id, Unread(error))

    def _exit_inside(self, stmt: ast.stmt) -> ast.AST | None:
        """The first ``raise``, ``assert`` or exit call (``sys.exit()``, ...) that running ``stmt``
        may reach (a function it defines runs later, not here), or None."""
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        found = [n for n in own_nodes(stmt) if isinstance(n, (ast.Raise, ast.Assert))
                 or isinstance(n, ast.Call) and self._path(n.func) in EXITS]
        return min(found, key=lambda n: (n.lineno, n.col_offset), default=None)

    def _unknown_after(self, stmt: ast.stmt, error: SchedlangError) -> None:
        """A statement after a possible end of the program: every name it may bind, every dict or
        list it may change and every format call in it reads as ``error``, at that end."""
        bound, _, _ = effects(stmt, self._path)
        for name in bound:
            self._bind(name, Unread(error))
        self._changes(stmt, error)
        for node in ast.walk(stmt):
            path = self._path(node.func) if isinstance(node, ast.Call) else None
            if path is not None and self.records(path):
                self._recorded(node, Unread(error), path)

    def _statement(self, stmt: ast.stmt) -> None:
        self.visit(stmt)  # one visit_<Statement> below; the rest is generic_visit: not followed

    def visit_Assign(self, stmt: ast.Assign) -> None:
        value = self._value_or_unread(stmt.value)
        for target in stmt.targets:
            self._assign(target, value, stmt)

    def visit_AnnAssign(self, stmt: ast.AnnAssign) -> None:
        if stmt.value is not None:
            self._assign(stmt.target, self._value_or_unread(stmt.value), stmt)

    def visit_AugAssign(self, stmt: ast.AugAssign) -> None:
        self._augment(stmt)

    def visit_Expr(self, stmt: ast.Expr) -> None:
        if isinstance(stmt.value, ast.Constant):
            return  # a docstring
        self._eval(stmt.value)

    def visit_If(self, stmt: ast.If) -> None:
        try:
            test = self._eval(stmt.test)
        except NotFollowedError as exc:
            raise NotFollowedError(SchedlangError(
                f"this if is not followed: its test is not computed here ({exc.error.message})",
                self.span(stmt), hint=HINT)) from None
        self._run(stmt.body if truth(test, stmt.test, self) else stmt.orelse)
        self._partial = False  # its statements were each handled

    def visit_Import(self, stmt: ast.Import) -> None:
        for alias in stmt.names:
            name = alias.asname or alias.name.split(".")[0]
            path = alias.name if alias.asname else alias.name.split(".")[0]
            own = self._beside(alias.name, stmt)
            if own is not None:  # import config: the module file beside the script, read as it
                self._bind(name, Item(Namespace(own.env, kind=f"the module {alias.name}"), self.span(stmt)))
                continue
            self._bind(name, Item(Imported(path), self.span(stmt)))

    def visit_ImportFrom(self, stmt: ast.ImportFrom) -> None:
        module = "." * stmt.level + (stmt.module or "")
        own = self._beside(module, stmt) if stmt.level == 0 else None
        for alias in stmt.names:
            if own is not None:
                self._import_names(own, module, alias, stmt)
                continue
            if alias.name == "*":
                self._star_imports.append((module, stmt.lineno))
                raise NotFollowedError(self._not_followed_error(stmt, "a * import may bind any name"))
            self._bind(alias.asname or alias.name, Item(Imported(f"{module}.{alias.name}"),
                                                        self.span(stmt)))

    def _import_names(self, own: Module, module: str, alias: ast.alias, stmt: ast.ImportFrom) -> None:
        """``from config import *`` (its ``__all__``, else its names not starting with ``_``) or
        ``from config import LR``: the names of a module file of the script, bound here."""
        if alias.name != "*":
            if alias.name not in own.env:
                raise self._python_error(f"cannot import name '{alias.name}' from '{module}' "
                                         f"({own.source.filename}; Python raises ImportError)", stmt)
            self._bind(alias.asname or alias.name, own.env[alias.name].view(self.span(stmt)))
            return
        listed = own.env.get("__all__")
        if listed is not None:
            names = [item.value for item in self._iterate(listed, stmt)]
            if not all(isinstance(n, str) for n in names):
                raise self._python_error(f"__all__ of {module} holds a name that is not a string", stmt)
        else:
            names = [n for n in own.env if not n.startswith("_")]
        for name in names:
            if name not in own.env:
                raise self._python_error(f"module '{module}' has no attribute '{name}' (its __all__ names "
                                         "it; Python raises AttributeError)", stmt)
            self._bind(name, own.env[name].view(self.span(stmt)))

    def _beside(self, name: str, stmt: ast.stmt) -> Module | None:
        """The module ``name`` as Python finds it first when it runs a script: a file ``name.py``
        beside the script (``sys.path[0]``), read by this reader with the same bounds, never
        run; None when there is none (a library, or a dotted name), or in a config."""
        if self.symbols is None or "." in name or not name or self.source.filename.startswith("<"):
            return None
        path = (Path(self.source.filename).parent / f"{name}.py").resolve()
        if not path.is_file():
            return None
        if path in self._importing:
            raise SchedlangError(f"importing {name} here imports a module that is still being imported (a "
                                 "cycle: Python gives a partly run module)", self.span(stmt),
                                 hint="import the module's names in one direction only")
        if path not in self.modules:
            if len(self.modules) >= MAX_CONFIG_BASES:
                raise SchedlangError(f"more than {MAX_CONFIG_BASES} module files of the script",
                                     self.span(stmt))
            own = Module(read_source_text(path), str(path), self.records, script=True,
                         lazy_calls=self.lazy_calls, importer=self, name=name)
            self.modules[path] = own
            self.budget = own.budget
            self.calls.extend(own.calls)
            self.frames.extend(own.frames)
            self.tainted.update(own.tainted)
            for late, span in own.late.items():  # a function of it may change the name when it runs
                if late in own.env:
                    own.env[late] = Unread(SchedlangError(
                        f"a function or class defined in {name} mentions '{late}', and may change it when "
                        "it runs; schedlang does not run it", span, hint=HINT))
            if own.ended is not None:  # the script ends (or may end) while importing it
                error = SchedlangError(f"importing {name} ends the script: {own.ended.message}",
                                       own.ended.span, hint=own.ended.hint)
                raise (Exit if own.ended_surely else MayExit)(error)
        return self.modules[path]

    def visit_Delete(self, stmt: ast.Delete) -> None:
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                local = self.locals is not None and target.id not in self._global_names
                scope = self.locals if local else self.env
                if target.id not in scope:
                    raise self._python_error(f"'{target.id}' is not assigned (Python raises NameError)",
                                             target)
                del scope[target.id]
            elif isinstance(target, ast.Subscript):
                container, key = self._eval(target.value), self._index(target)
                self._delete_item(container, key, target)
            else:
                raise NotFollowedError(self._not_followed_error(stmt, "it deletes an attribute"))

    def visit_FunctionDef(self, stmt: ast.FunctionDef) -> None:
        self._define(stmt)

    def visit_ClassDef(self, stmt: ast.ClassDef) -> None:
        """A ``@dataclass`` config (``lr: float = 3e-4``): its fields and their defaults, computed
        now as Python computes them, so that ``TrainConfig(...)`` builds an instance read by
        attribute.  Any other class is not followed."""
        base = self._path(stmt.bases[0]) if len(stmt.bases) == 1 and not stmt.keywords else None
        if base is not None and self.records(base) and not stmt.decorator_list:
            self._subclass(stmt, base)
            return
        frozen = self._dataclass(stmt)
        fields: dict[str, Item | None] = {}
        defaulted = False
        for item in stmt.body:
            if isinstance(item, ast.Pass) or isinstance(item, ast.Expr) and isinstance(item.value,
                                                                                        ast.Constant):
                continue  # a docstring
            if isinstance(item, ast.FunctionDef) and item.name not in ("__init__", "__post_init__") \
                    and not item.decorator_list:
                continue  # a method: called only through the instance, which is not followed
            if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.simple):
                raise NotFollowedError(self._not_followed_error(
                    stmt, "a dataclass is followed when its body is annotated fields with defaults and "
                          "methods (no __init__ or __post_init__)"))
            if "ClassVar" in ast.unparse(item.annotation):
                continue  # not a field
            if item.value is None and defaulted:
                raise self._python_error(f"non-default argument '{item.target.id}' follows default argument "
                                         "(Python raises TypeError)", item)
            fields[item.target.id] = None if item.value is None else self._field(item.value)
            defaulted = defaulted or item.value is not None
        self._bind(stmt.name, Item(DataClass(stmt.name, fields, frozen), self.span(stmt)))
        self._note_late(stmt)

    def _subclass(self, stmt: ast.ClassDef, base: str) -> None:
        """``class CustomSchedule(keras.optimizers.schedules.LearningRateSchedule)``: kept as a
        ``Subclass`` (its ``__init__`` a function of the file, its defaults computed now), whose
        instances the format reads; a body other than methods and a docstring is not followed."""
        for item in stmt.body:
            method = isinstance(item, ast.FunctionDef) and not item.decorator_list
            if not (method or isinstance(item, ast.Pass)
                    or isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant)):
                raise NotFollowedError(self._not_followed_error(
                    stmt, f"a {base.rsplit('.', 1)[-1]} subclass is read when its body is methods"))
        init = next((f for f in stmt.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
        function = None
        if init is not None:
            saved = self.env.get(init.name), init.name in self.env
            self._define(init)  # its defaults computed at the class statement, as Python does
            function = self.lookup(init.name).raw
            if self.locals is not None:
                self.locals.pop(init.name, None)
            if saved[1]:
                self._bind(init.name, saved[0])
            else:
                self.env.pop(init.name, None)
        self._bind(stmt.name, Item(Subclass(stmt, base, function, self), self.span(stmt)))
        self._note_late(stmt)

    def _dataclass(self, stmt: ast.ClassDef) -> bool:
        """Whether ``@dataclass`` (or ``@dataclass(frozen=...)``) makes ``stmt`` a plain dataclass
        with no base class; its ``frozen=``.  Anything else is not followed."""
        decorators = stmt.decorator_list
        decorator = decorators[0] if len(decorators) == 1 else None
        call = decorator if isinstance(decorator, ast.Call) else None
        target = call.func if call is not None else decorator
        if target is None or self._path(target) != "dataclasses.dataclass" or stmt.bases or stmt.keywords \
                or call is not None and call.args:
            raise NotFollowedError(self._not_followed_error(stmt))
        frozen = False
        for keyword in call.keywords if call is not None else ():
            value = self._eval(keyword.value).value
            if keyword.arg == "frozen":
                frozen = bool(value)
            elif keyword.arg in ("init", "kw_only") and value is not (keyword.arg == "init"):
                raise NotFollowedError(self._not_followed_error(stmt, f"@dataclass({keyword.arg}={value})"))
        return frozen

    def _field(self, node: ast.expr) -> Item:
        """A field's default: the value, or ``field(default=...)``'s; a ``default_factory`` is not
        followed (an error where an instance needs it)."""
        if isinstance(node, ast.Call) and self._path(node.func) == "dataclasses.field":
            keywords = {k.arg: k.value for k in node.keywords}
            if "default" in keywords and not node.args:
                return self._field_value(keywords["default"])
            return Unread(SchedlangError("this field's default_factory is not followed (the file is read, "
                                         "never run)", self.span(node),
                                         hint="give the field a default= value"))
        return self._field_value(node)

    def _field_value(self, node: ast.expr) -> Item:
        item = self._value_or_unread(node)
        if not isinstance(item, Unread) and isinstance(item.raw, (dict, list)):
            raise self._python_error(f"mutable default {type(item.raw).__name__} for a field is not allowed: "
                                     "use default_factory (Python raises ValueError)", node)
        return item

    def visit_Return(self, stmt: ast.Return) -> None:
        if self.locals is None:  # ast.parse takes it; Python's compiler refuses the file
            raise self._python_error("'return' outside function: Python refuses to run this file "
                                     "(SyntaxError)", stmt)
        raise Returned(Item(None, self.span(stmt)) if stmt.value is None
                      else self._value_or_unread(stmt.value))

    def visit_Raise(self, stmt: ast.Raise) -> None:
        """``raise``: the program stops here (a ``try`` around it is not followed, so nothing
        catches it); nothing after it runs."""
        raise Exit(SchedlangError("the script ends here: this raise stops it, and Python runs nothing "
                                   "after it", self.span(stmt)))

    def visit_Assert(self, stmt: ast.Assert) -> None:
        """``assert test``: the program stops here when ``test`` is false (``python -O`` skips
        asserts; a training script is read as ``python`` runs it)."""
        try:
            test = self._eval(stmt.test)
        except NotFollowedError as exc:
            raise NotFollowedError(SchedlangError(
                f"this assert is not followed: its test is not computed here ({exc.error.message})",
                self.span(stmt), hint=HINT)) from None
        if not truth(test, stmt.test, self):
            raise Exit(SchedlangError("the script ends here: this assert fails (AssertionError), and "
                                       "Python runs nothing after it", self.span(stmt)))

    def visit_Nonlocal(self, stmt: ast.Nonlocal) -> None:
        raise NotFollowedError(self._not_followed_error(stmt, "a nonlocal name"))

    def visit_Pass(self, stmt: ast.Pass) -> None:
        pass

    def visit_Global(self, stmt: ast.Global) -> None:
        pass  # `global x` at module level changes nothing; in a function, _invoke reads it

    def generic_visit(self, node: ast.AST):
        if isinstance(node, ast.stmt):
            raise NotFollowedError(self._not_followed_error(node))
        return super().generic_visit(node)  # an expression: Evaluator's

    # -- functions of the file ------------------------------------------------------------------

    def _define(self, stmt: ast.FunctionDef) -> None:
        """``def f(...)``: bound to a ``Function`` (its defaults computed now, as Python does),
        followed when the file calls it.  The names its body may change are noted as a
        function's are (it may also run from where schedlang does not follow it)."""
        if stmt.decorator_list:
            raise NotFollowedError(self._not_followed_error(stmt, "a decorator may replace the function"))
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(stmt)):
            raise NotFollowedError(self._not_followed_error(stmt, "a generator"))
        arguments = stmt.args
        defaults: dict[str, Item] = {}
        positional = [*arguments.posonlyargs, *arguments.args]
        pairs = [*zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults),
                 *((a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None)]
        for argument, default in pairs:
            try:
                defaults[argument.arg] = self._eval(default)
            except NotFollowedError as exc:
                defaults[argument.arg] = Unread(exc.error)
        function = Function(stmt, defaults)
        function.enclosing = ([self.locals, *self._enclosing] if self.locals is not None else [])
        function.home = self  # its globals: the names of the file that defines it
        self._bind(stmt.name, Item(function, self.span(stmt)))
        self._note_late(stmt)

    def _note_late(self, stmt: ast.FunctionDef | ast.ClassDef) -> None:
        """The names a function's or a class's body may change when it runs (later, from where
        schedlang may not follow it): each reads as that error (``get``)."""
        _, _, late = effects(stmt, self._path)
        for name, node in late.items():
            self.late.setdefault(name, self.span(node))

    def _invoke(self, function: Function, node: ast.Call, args: list[Item], kwargs: dict[str, Item]) -> Item:
        """Follow a call to a function of the file into its body: its parameters bound as
        Python binds them, its statements followed, the value it returns."""
        if self._depth >= MAX_CALL_DEPTH:
            self._not(node, f"a call nested more than {MAX_CALL_DEPTH} deep")
        names = bind_arguments(self, function, node, args, kwargs)
        saved = (self.locals, self._local_names, self._global_names, self._enclosing, self._partial,
                 self._invocation)
        home = getattr(function, "home", self)  # a function of a module of the script: its names
        module_saved = (self.env, self.source, self._assigned_at, self._star_imports)
        self.env, self.source, self._assigned_at, self._star_imports = (
            home.env, home.source, home._assigned_at, home._star_imports)
        self._calls_made += 1
        self.locals, self._enclosing, self._invocation = names, function.enclosing, self._calls_made
        self._local_names, self._global_names = scope_names(function.node)
        self._depth += 1
        result = Item(None, self.span(node))
        try:
            self._run(function.node.body)
        except Returned as done:
            result = done.item
        finally:
            self._depth -= 1
            (self.locals, self._local_names, self._global_names, self._enclosing, self._partial,
             self._invocation) = saved
            self.env, self.source, self._assigned_at, self._star_imports = module_saved
        self.frames.append((function, names, result))
        return result if isinstance(result, Unread) else result.view(self.span(node))

    def _not_followed_error(self, stmt: ast.stmt, why: str = "") -> SchedlangError:
        kind = KINDS.get(type(stmt), "statement")
        return SchedlangError(f"this {kind} is not followed (the file is read, never run)"
                              + (f": {why}" if why else ""), self.span(stmt), hint=HINT)

    def _not_followed(self, stmt: ast.stmt, error: SchedlangError) -> None:
        """A statement not followed: every name it may bind reads as its error, and so does
        every dict or list it may change."""
        where = error if error.span is not None and error.span.line == stmt.lineno \
            else self._not_followed_error(stmt, error.message)
        bound, _, _ = effects(stmt, self._path)
        for name in bound:
            self._bind(name, Unread(SchedlangError(f"{where.message}, and it may change '{name}'",
                                                   where.span, hint=where.hint)))
        self._changes(stmt, where)

    def _changes(self, stmt: ast.stmt, error: SchedlangError) -> None:
        """Mark what ``stmt`` may change without being followed: a dict or list it assigns into,
        calls a method of or passes to a function of this file (a library's function is taken
        to receive the value, not to change it), and the names a def / class / lambda in it
        may change when it runs."""
        _, changed, late = effects(stmt, self._path)
        for name, how in changed.items():
            item = self.lookup(name)
            if item is None or isinstance(item, Unread):
                continue
            message = SchedlangError(f"{error.message}, and it may change '{name}'", error.span,
                                     hint=error.hint)
            # a format's object is fixed once built: calling its methods (trainer.train(),
            # sched.step() in a loop) leaves it alone; assigning into it does not
            if isinstance(item.raw, (dict, list, Parser, Namespace)) \
                    or how == ASSIGNED and isinstance(item.raw, Call):
                self._mark(item, message, calls=how != PASSED)
        for name, node in late.items():
            self.late.setdefault(name, self.span(node))

    def _mark(self, item: Item, error: SchedlangError, calls: bool = True) -> None:
        """Mark the dicts and lists of ``item`` (and its ``Call``s unless it was only handed
        to a function: a format's object is taken as fixed once built) as changed."""
        kinds = (dict, list, Call, Parser, Namespace) if calls else (dict, list, Parser, Namespace)
        stack = [item]
        while stack:
            current = stack.pop()
            if isinstance(current, Unread):
                continue
            value = current.raw
            if isinstance(value, kinds) and id(value) not in self.tainted:
                self.tainted[id(value)] = (value, error)
                stack.extend(contents(value))

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

    def _assign(self, target: ast.expr, value: Item, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            self._bind(target.id, value if isinstance(value, Unread) else self._named(target.id, value.view(
                value.span)))
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            self._unpack(target, value, stmt)
            return
        if isinstance(target, ast.Subscript):
            container = self._eval(target.value)
            key = self._index(target)
            if isinstance(value, Unread):
                self._mark(container, value.error)  # the container now holds what was not followed
            self._set_item(container, key, value, target)
            return
        if isinstance(target, ast.Attribute) and not isinstance(value, Unread):
            base = self._eval(target.value)
            if isinstance(base.value, Instance):  # self.warmup_steps = warmup_steps
                base = Item(base.value.namespace, base.span)
            if isinstance(base.value, Namespace):  # args.lr = 1e-3
                self._assignable(base.value, target)
                base.value.values[target.attr] = self._named(target.attr, value)
                return
        raise NotFollowedError(self._not_followed_error(stmt, "it assigns an attribute"))

    def _assignable(self, namespace: Namespace, target: ast.Attribute) -> None:
        if namespace.frozen:
            raise self._python_error(f"cannot assign to field '{target.attr}' of a frozen dataclass (Python "
                                     "raises FrozenInstanceError)", target)

    def _unpack(self, target: ast.Tuple | ast.List, value: Item, stmt: ast.stmt) -> None:
        """``a, b = ...``: one value to each name, as many as Python requires."""
        if any(isinstance(e, ast.Starred) for e in target.elts):
            raise NotFollowedError(self._not_followed_error(stmt, "a starred target"))
        if isinstance(value, Unread):
            for element in target.elts:
                self._assign(element, value, stmt)
            return
        items = self._iterate(value, target)
        if len(items) != len(target.elts):
            raise self._python_error(f"{len(target.elts)} names but {len(items)} values (Python raises "
                                     "ValueError)", target)
        for element, item in zip(target.elts, items):
            self._assign(element, item, stmt)

    def _augment(self, stmt: ast.AugAssign) -> None:
        target = stmt.target
        if isinstance(target, ast.Name):
            current = self.visit_Name(target)
            self._bind(target.id, self._named(target.id, self._binop(stmt.op, current, self._eval(stmt.value),
                                                                     stmt, inplace=True)))
            return
        if isinstance(target, ast.Subscript):
            container = self._eval(target.value)
            key = self._index(target)
            current = self._get_item(container, key, target)
            self._set_item(container, key, self._binop(stmt.op, current, self._eval(stmt.value), stmt,
                                                       inplace=True), target)
            return
        if isinstance(target, ast.Attribute):
            base = self._eval(target.value)
            if isinstance(base.value, Namespace):  # args.lr *= 2
                current = namespace_attribute(self, base, target)
                self._assignable(base.value, target)
                base.value.values[target.attr] = self._named(target.attr, self._binop(
                    stmt.op, current, self._eval(stmt.value), stmt, inplace=True))
                return
        raise NotFollowedError(self._not_followed_error(stmt, "it changes an attribute"))

    def _recorded(self, node: ast.Call, item: Item, path: str) -> None:
        key = (id(node), self._invocation)  # a function called twice builds twice
        if key not in self._recorded_nodes:
            self._recorded_nodes.add(key)
            self.calls.append((item, node, path))

    def _record_inside(self, stmt: ast.stmt) -> None:
        """The format's calls inside a statement not followed (``model.compile(optimizer=
        keras.optimizers.Adam(...))``): built from the names as they are, when the statement is
        a simple one; inside a loop, a function or a ``with`` block, an error if read."""
        simple = isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign))
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call) or (id(node), self._invocation) in self._recorded_nodes:
                continue
            path = self._path(node.func)
            if path is None or not self.records(path):
                continue
            if simple:
                self._recorded(node, self._value_or_unread(node), path)
            else:
                self._recorded(node, path=path, item=Unread(SchedlangError(
                    f"{short(path)}(...) is built inside a {KINDS.get(type(stmt), 'statement')}, which is "
                    "not followed (the file is read, never run)", self.span(node),
                    hint="build it at the top level of the file, from names assigned before")))

    def _path(self, node: ast.expr) -> str | None:
        """The imported dotted path ``node`` names, if it names one (no side effects)."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        item = self.lookup(node.id)
        if item is None and node.id in vars(builtins):
            return ".".join(["builtins", node.id, *reversed(parts)])
        if item is None or isinstance(item, Unread) or not isinstance(item.raw, Imported):
            return None
        return ".".join([item.raw.path, *reversed(parts)])

    def _scan(self) -> None:
        """One walk of the tree: refuse the names that can change any variable (``exec``,
        ``globals``, ...), and note where each name is bound anywhere in the file, so that
        "used before it is assigned" can say where."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Name):
                name = node.id
                if isinstance(node.ctx, ast.Store):
                    self._assigned_at.setdefault(name, []).append(node.lineno)
            elif isinstance(node, ast.Attribute) and node.attr.startswith("__"):
                name = node.attr
            else:
                continue
            if name in DYNAMIC:
                raise SchedlangError(f"'{name}' can change any name of the file behind its statements' "
                                     "backs; schedlang cannot follow it", self.span(node),
                                     hint="write the configuration with plain assignments")
        for lines in self._assigned_at.values():
            lines.sort()


# -- what the formats read -------------------------------------------------------------------------


def to_node(item: Item, what: str = "value"):
    """A value as the YAML readers' ``Node`` (the DeepSpeed and Keras importers read those):
    every part is read here, so a part not followed is its error."""
    value = item.raw
    if isinstance(value, dict):
        return Node({str(k): to_node(v, str(k)) for k, v in value.items()}, item.span,
                    {str(k): item.keys.get(k, item.span) for k in value})
    if isinstance(value, list):
        return Node([to_node(v, what) for v in value], item.span)
    if isinstance(value, (Imported, Call)):
        raise SchedlangError(f"{what} is {value!r}, not a value a configuration holds", item.span)
    return Node(PythonString(value) if isinstance(value, str) else value, item.span)


def _exit_text(node: ast.AST) -> str:
    """How an exit reads in a message: ``raise``, ``assert``, ``sys.exit()``."""
    if isinstance(node, ast.Call):
        return f"{ast.unparse(node.func)}()"
    return "raise" if isinstance(node, ast.Raise) else "assert"


def _bindings(module: Module):
    """Every value the file names: its module-level names, then each followed call's names
    and what it returned (``"<main>"``)."""
    yield from module.env.items()
    for function, names, result in module.frames:
        yield from names.items()
        yield f"<the value {function.name}() returns>", result

def ended_before(module: Module, what: str) -> None:
    """Refuse a script in which ``what`` is never built because the program ends (or may end)
    before it, at the statement that ends it."""
    if module.ended is not None:
        raise SchedlangError(f"no {what} is built before this point: {module.ended.message}",
                             module.ended.span, hint=module.ended.hint or
                             f"build the {what} before the script exits")


def _unfollowed(module: Module, nodes: list[ast.AST], what: str) -> None:
    """Why the first of ``nodes`` (what the format looks for, written in the file) was not
    read: the function around it is never called, or the statement around it is not followed;
    the caret on it."""
    if not nodes:
        return
    node = min(nodes, key=lambda n: (n.lineno, n.col_offset))
    called = {id(function.node) for function, _, _ in module.frames}
    around = [f for f in ast.walk(module.tree) if isinstance(f, (*SCOPES[:2], ast.ClassDef, ast.Lambda))
              and f.lineno <= node.lineno <= (f.end_lineno or f.lineno) and f is not node
              and any(n is node for n in ast.walk(f))]
    uncalled = [f for f in around if isinstance(f, ast.FunctionDef) and id(f) not in called]
    if uncalled:
        raise SchedlangError(f"this {what} is built in {uncalled[-1].name}(), which this file never calls, "
                             "so it is not read (the file is read, never run)", module.span(node),
                             hint=f"call {uncalled[-1].name}() at the top level of the file or under "
                                  "`if __name__ == \"__main__\":`")
    why = "inside a function or class that is not followed" if around else \
        "inside a statement that is not followed (a loop, a with or try block, an if on a value not known)"
    raise SchedlangError(f"this {what} is built {why} (the file is read, never run)", module.span(node),
                         hint="build it with plain assignments, at the top level or in main()")


_HF_SCRIPT = "this script with --format hf-args (it reads transformers' scheduler functions)"
#: Schedulers a training script builds with a framework's code, which no format here reads from
#: a script (their configs are imported instead): the module each comes from, the format to use.
_SCRIPT_SCHEDULERS = {"timm.scheduler": "its command line or args.yaml with --format timm-args",
                      "torch.optim.lr_scheduler": "a config that names it (mmengine, Composer, Cerebras)",
                      "transformers": _HF_SCRIPT, "transformers.optimization": _HF_SCRIPT}


def script_schedule(module: Module) -> None:
    """Refuse, with the caret on the call, a script whose scheduler is a framework's factory or
    class called in Python (``create_scheduler_v2(optimizer, ...)``): nothing reads that call."""
    for node in ast.walk(module.tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        for statement in ast.walk(module.tree):
            if not isinstance(statement, (ast.Import, ast.ImportFrom)):
                continue
            for alias in statement.names:
                origin = (statement.module or "") if isinstance(statement, ast.ImportFrom) else alias.name
                bound = alias.asname or alias.name
                if origin in _SCRIPT_SCHEDULERS and (bound == name or bound == root_name(node.func)) \
                        and ("sched" in name.lower() or name.endswith("LR")):
                    raise SchedlangError(f"this script builds its schedule by calling {origin}'s {name}(), "
                                         "which schedlang does not follow into that library",
                                         module.span(node), hint=f"import {_SCRIPT_SCHEDULERS[origin]}")



__all__ = ["Call", "Imported", "Instance", "Item", "Module", "Unread", "ended_before", "script_schedule",
           "to_node"]
